"""A footprint that is a box is counted as the product of its ranges (`polyhedral._count`),
the number isl finds by visiting its points; any other set is isl's to count."""

from __future__ import annotations

import islpy as isl
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.analysis import polyhedral


def _isl_count(text: str) -> int:
    return int(isl.Set(text).coalesce().count_val().to_python())


def test_a_windows_footprint_is_a_box() -> None:
    window = "{ A[e0, e1, e2] : 0 <= e0 <= 13 and 2 <= e1 <= 8 and 0 <= e2 <= 10 }"
    assert polyhedral._box_size(isl.Set(window)) == 14 * 7 * 11 == _isl_count(window)


def test_other_sets_are_not_boxes() -> None:
    for text in (
        "{ A[i, j] : 0 <= i <= 9 and 0 <= j <= i }",  # a triangle
        "{ A[i] : 0 <= i <= 20 and exists k : i = 2k }",  # a stride
        "{ A[i] : 0 <= i <= 3 or 6 <= i <= 8 }",  # two ranges
    ):
        points = isl.Set(text).coalesce()
        assert polyhedral._box_size(points) is None
        assert polyhedral._count(isl.Set(text)) == _isl_count(text)
    assert polyhedral._box_size(isl.Set("{ A[i] : 1 = 0 }")) == 0


_RANGE = st.tuples(st.integers(-4, 6), st.integers(0, 6))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_RANGE, min_size=1, max_size=4),
    st.sampled_from(["", "triangle", "stride", "union", "shifted"]),
)
def test_every_count_is_isls(ranges: list[tuple[int, int]], shape: str) -> None:
    """Boxes, and boxes cut, strided or joined to another: the count is isl's, whichever
    path it takes."""
    names = [f"e{k}" for k in range(len(ranges))]
    bounds = [
        f"{low} <= {n} <= {low + width}" for n, (low, width) in zip(names, ranges, strict=True)
    ]
    first = names[0]
    if shape == "triangle" and len(names) > 1:
        bounds.append(f"{names[1]} <= {first} + {ranges[1][0]}")
    elif shape == "stride":
        bounds.append(f"exists k : {first} = 2k")
    body = " and ".join(bounds)
    if shape == "union":  # one more plane, apart from the box
        rest = " and ".join(bounds[1:]) or "true"
        body = f"({body}) or ({first} = {ranges[0][0] + ranges[0][1] + 2} and {rest})"
    if shape == "shifted" and len(names) > 1:
        body += f" and {names[1]} >= {first} - 100"  # a constraint that cuts nothing
    text = f"{{ A[{', '.join(names)}] : {body} }}"
    assert polyhedral._count(isl.Set(text)) == _isl_count(text)
