"""`polyhedral._in_compact_time`: the references' program positions renumbered by rank
before an exact count give the same counts (the order of every two instances is kept),
and two views of one nest that differ only in other arrays' references share one count."""

from __future__ import annotations

from collections import defaultdict

import pytest
from exact_count_calls import COUNTED, counted_references

from aiscan.analysis.polyhedral import PolyReference, _exact_counts, _in_compact_time


@pytest.mark.parametrize("path", COUNTED)
def test_compact_positions_count_what_the_positions_as_given_count(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = counted_references(path, monkeypatch)
    assert asked
    for references in asked:
        as_given = _exact_counts(references)  # the time space as the traffic wrote it
        assert _exact_counts(_in_compact_time(references)) == as_given


def test_the_jit_view_of_a_solve_shares_the_compulsory_views_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `np.linalg.solve(A, B)`: the jit view leaves the local LU's reads out, which moves
    # the positions of `return`'s references in their statements (0, 2, 3 -> 0, 1, 2).
    asked = counted_references("python/library.py", monkeypatch)
    by_array: dict[str, list[tuple[PolyReference, ...]]] = defaultdict(list)
    for references in asked:
        if len(references) >= 8:  # the LU's arrays, not the small nests'
            by_array[references[0].access.array].append(references)
    returned = by_array["return"]
    assert len(returned) >= 3
    as_given = {
        tuple((r.access, r.loop_positions, r.order, r.offset) for r in refs) for refs in returned
    }
    assert len({_in_compact_time(refs) for refs in returned}) < len(as_given)


def test_positions_keep_their_order_within_a_time_dimension_and_a_statement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = counted_references("python/library.py", monkeypatch)
    references = max(asked, key=len)  # the LU's: 11 references in six statements
    compact = _in_compact_time(references)

    def constants(refs: tuple[PolyReference, ...], level: int) -> list[int]:
        """What each reference holds at the time dimension `2 * level`."""
        return [(*r.loop_positions, r.order)[level] for r in refs if len(r.loops) >= level]

    depth = max(len(r.loops) for r in references)
    for level in range(depth + 1):
        pairs = list(zip(constants(references, level), constants(compact, level), strict=True))
        assert all((a < b) == (c < d) for a, c in pairs for b, d in pairs)
    for statement in {r.order for r in references}:
        offsets = [
            (r.offset, c.offset)
            for r, c in zip(references, compact, strict=True)
            if r.order == statement
        ]
        assert all((a < b) == (c < d) for a, c in offsets for b, d in offsets)
        assert sorted(c for _, c in offsets) == list(range(len(offsets)))
