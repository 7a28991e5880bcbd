"""`isl_boxes.box_counter`: a parametric set that is a box with affine bounds counts in
Python what isl counts with the set fixed at each point, on every set the fixtures' exact
counts make, at grid points, small sizes and sizes where some loop does not run."""

from __future__ import annotations

from itertools import product

import islpy as isl
import pytest
from exact_count_calls import COUNTED, sized_counts

from aiscan.analysis import polyhedral
from aiscan.analysis.isl_boxes import box_counter

NO_BOXES = {"c/strided_domains.c", "cuda/transpose_tiled.cu", "python/tiles.py"}
"""Their sets over the sizes are not boxes with affine bounds, or are not made at all."""


@pytest.mark.parametrize("path", COUNTED)
def test_a_box_counts_what_isl_counts_at_each_point(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    boxes = others = 0
    for references, sizes in sized_counts(path, monkeypatch):
        sets = polyhedral._parametric_sets(references, tuple(sizes), ())
        if sets is None:
            continue
        for parametric in sets:
            if parametric is None:
                continue
            counter = box_counter(parametric)
            if counter is None:
                others += 1
                continue
            boxes += 1
            for values in product((0, 1, 2, 3, 5, 12), repeat=len(sizes)):
                expected = polyhedral._count(polyhedral._fixed(parametric, list(values)))
                assert counter(list(values)) == expected, (parametric, values)
    assert (boxes > 0) == (path not in NO_BOXES), (boxes, others)


def test_only_a_box_is_counted_in_python() -> None:
    box = isl.Set("[P0, P1] -> { A[e0, e1] : 0 <= e0 < P1 and 2 <= e1 <= P0 + 1 }")
    counter = box_counter(box)
    assert counter is not None
    assert counter([4, 3]) == 12 and counter([0, 3]) == 0 and counter([4, 0]) == 0
    assert box_counter(isl.Set("[P0] -> { A[e0, e1] : 0 <= e1 < e0 < P0 }")) is None
    assert box_counter(isl.Set("[P0] -> { A[e0] : 0 <= e0 < P0 and e0 mod 2 = 0 }")) is None
    assert box_counter(isl.Set("[P0] -> { A[e0] : 0 <= e0 < P0 and P0 mod 2 = 0 }")) is None
    empty = box_counter(isl.Set("[P0] -> { A[e0] : 0 <= e0 < P0 and e0 > P0 }"))
    assert empty is not None and empty([7]) == 0
