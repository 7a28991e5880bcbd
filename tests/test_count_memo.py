"""isl's counts kept by what they count (`count_memo`): a nest that an edit moved is not
counted again, a nest that an edit changed is, and the editor's children hand them on."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from aiscan.analysis import count_memo, polyhedral
from aiscan.lsp import worker
from aiscan.lsp.document import settings_for
from aiscan.options import PipelineOptions
from aiscan.pipeline import analyze_text

# A triangular solve: x's first reads and writes are no box, so isl counts them.
LOWER = """\
void lower(int n, double *restrict x, const double *restrict L)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            x[i] -= L[i * n + j] * x[j];
}
"""
COMPULSORY = "4*n**2 + 12*n - 8"
"""L's strict lower triangle, x read and written whole (doubles): 8*n*(n - 1)/2 + 8*n + 8*n."""


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """An empty memo, and every count isl makes from now on (the in-process memo of the
    references, which an edit's new spans miss anyway, emptied)."""
    monkeypatch.setattr(count_memo, "_KNOWN", {})
    monkeypatch.setattr(count_memo, "_LEARNED", {})
    polyhedral._counts_cached.cache_clear()
    made: list[Any] = []
    original = polyhedral._counts_at

    def counting(references: Any, sizes: Any) -> Any:
        made.append(sizes)
        return original(references, sizes)

    monkeypatch.setattr(polyhedral, "_counts_at", counting)
    return made


def _compulsory(text: str) -> str:
    result = analyze_text(text, "lower.c", PipelineOptions())
    assert result.analysis is not None
    (region,) = result.analysis.functions[0].regions
    return str(region.traffic["compulsory"].total(False))


def test_a_nest_an_edit_moved_is_not_counted_again(fresh: list[Any]) -> None:
    assert _compulsory(LOWER) == COMPULSORY
    assert len(fresh) == 12  # the grid and the held-out sizes, in n
    learned = count_memo.learned()
    assert [len(points) for points in learned.values()] == [12]
    # Another process (the editor's next child) with what the first one learned.
    count_memo._KNOWN.clear()
    count_memo.adopt(learned)
    polyhedral._counts_cached.cache_clear()
    fresh.clear()
    assert _compulsory("// an edit above\n\n" + LOWER) == COMPULSORY
    assert fresh == []
    assert count_memo.learned() == {}


def test_a_nest_an_edit_changed_is_counted_again(fresh: list[Any]) -> None:
    assert _compulsory(LOWER) == COMPULSORY
    before = count_memo.learned()
    fresh.clear()
    wider = LOWER.replace("j < i;", "j <= i;")
    assert _compulsory(wider) == "4*n**2 + 20*n"  # the diagonal too: 8*n more of L
    after = count_memo.learned()
    assert len(fresh) == sum(len(points) for points in after.values()) == 13  # n = 1 too
    assert before.keys().isdisjoint(after.keys())


def test_the_key_tells_sizes_of_other_kinds_apart() -> None:
    from aiscan.algebra import symbol

    result = analyze_text(LOWER, "lower.c", PipelineOptions())
    assert result.analysis is not None
    (region,) = result.analysis.functions[0].regions
    statement = region.region.body[0].body[0].body[0]  # type: ignore[union-attr]
    outer = region.region.body[0]
    inner = outer.body[0]  # type: ignore[union-attr]
    reference = polyhedral.PolyReference(statement.accesses[0], (outer, inner), (0, 0), 0, 0)
    size = symbol("n", "size")
    other = symbol("n", "trip")
    assert count_memo.nest_key([reference], [size]) != count_memo.nest_key([reference], [other])
    assert count_memo.nest_key([reference], [size]) == count_memo.nest_key([reference], [size])


def test_the_editors_next_child_starts_with_the_counts(tmp_path: Path) -> None:
    """Two analyses in two children (the first killed, as a newer edit kills the analysis
    it replaces): the second counts nothing the first counted."""
    path = str(tmp_path / "lower.c")
    settings = settings_for(path)

    async def analyze() -> tuple[dict[str, Any], dict[str, Any]]:
        pool = worker.AnalysisPool()
        try:
            await pool.view(LOWER, path, settings, 60.0)
            (first,) = pool._idle
            learned_first = first.learned
            pool._kill(pool._idle.pop())
            await pool.view("// an edit above\n\n" + LOWER, path, settings, 60.0)
            (second,) = pool._idle
            assert second is not first
            return learned_first, second.learned
        finally:
            pool.close()

    first, second = asyncio.run(analyze())
    assert [len(points) for points in first.values()] == [12]
    assert second == {}
