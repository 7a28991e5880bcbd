"""isl refusing an operation on a set is no internal error of the file's analysis.

A 2-by-2 tiled transpose-add made isl's coalescing fail its own consistency check
("original tableau does not correspond to original basic map"), and `aiscan analyze`
printed `internal error while analyzing` for the file. Coalescing only merges a set's
pieces, so the pieces count the same points; any other operation isl refuses leaves the
exact counts out and the caller's bound stands.
"""

from __future__ import annotations

import islpy as isl
import pytest

from aiscan.analysis import polyhedral
from aiscan.pipeline import PipelineOptions, analyze_text

TILED_TRANSPOSE = """\
#define MIN(a, b) ((a) < (b) ? (a) : (b))
void f(int n, double *restrict a) {
  for (int ii = 0; ii < n; ii += 2)
  for (int jj = 0; jj < n; jj += 2)
  for (int i = ii; i < MIN(ii + 2, n); i++)
  for (int j = jj; j < MIN(jj + 2, n); j++)
    a[i * n + j] = a[j * n + i] + a[i * n + j];
}
"""


def test_a_tiled_transpose_counts_exactly() -> None:
    result = analyze_text(TILED_TRANSPOSE, "k.c", PipelineOptions())
    assert not [d for d in result.diagnostics if d.severity.name == "ERROR"]
    assert result.analysis is not None
    (function,) = result.analysis.functions
    traffic = function.traffic["compulsory"]
    assert str(traffic.total(True)) == "16*n**2"  # every element read first, then written
    assert traffic.exact
    assert str(function.flops.add) == "n**2"


def test_an_operation_isl_refuses_leaves_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(references: object) -> None:
        raise isl.Error("call to isl_set_lexmin failed")

    monkeypatch.setattr(polyhedral, "_exact_counts", refused)
    # Tiles of 3: a nest no memo of the analysis holds from the test above.
    result = analyze_text(TILED_TRANSPOSE.replace("2", "3"), "k.c", PipelineOptions())
    assert result.analysis is not None
    assert not [d for d in result.diagnostics if d.severity.name == "ERROR"]
    (function,) = result.analysis.functions
    assert not function.traffic["compulsory"].exact  # a bound, and said so
    assert "footprint-bound" in [u.kind.value for u in function.unknowns]
