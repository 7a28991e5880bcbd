"""isl's counts at grid points, kept by what they count, so that an unchanged nest is not
counted again after an edit.

An exact count (`polyhedral.exact_counts`) interpolates isl's counts at a grid of sizes,
and those counts are most of its cost: 48 nests of about 25 points each were 2.7 s of the
3.7 s analysis of `torch_llama.py`. The in-process memo of `polyhedral` keys them on the
references as the IR holds them, source spans included, so an edit above a nest (a line
added) makes every count below it new. Here they are keyed by what the counts read: the
arrays, subscripts and stores, the loops' variables and bounds, the program positions, the
branch conditions, and the sizes with their kinds; the same nest gives the same counts
wherever it stands. The editor's server collects what each analysis learned and hands it
to the next one (`aiscan.lsp.worker`), whose child process starts without it otherwise;
a scan with its result cache keeps them there, one entry per nest (`stored_in`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiscan.analysis.polyhedral import PolyReference
    from aiscan.cache import ResultCache

__all__ = [
    "Counts",
    "adopt",
    "keep",
    "known",
    "learned",
    "nest_key",
    "recall",
    "remember",
    "stored_in",
]

Counts = tuple[int, int, int]
"""Distinct elements touched, written and first touched by a read, at one point."""
Entries = dict[str, dict[tuple[int, ...], Counts]]
"""Counts by nest key, then by the point (the sizes' values in the key's order)."""

LIMIT = 4096
"""Nests kept before the memo starts over (a long editor session's bound)."""

_KNOWN: Entries = {}
_LEARNED: Entries = {}
"""The points counted here since the last `learned()`: what to hand on."""
_UNSAVED: set[str] = set()
"""Nests with points counted here that the store has not been given."""
_STORE: ResultCache | None = None
"""Where a scan with its result cache keeps counts between runs (`stored_in`)."""
KIND = "isl-counts"
"""The result cache's kind for a nest's counts."""


def nest_key(references: Sequence[PolyReference], sizes: Sequence[Any]) -> str:
    """What the counts of `references` at values of `sizes` read, as text: equal texts
    have equal counts (two symbols of one name but other assumptions are told apart by
    their kinds). Every expression prints the same way each time it is printed."""
    parts: list[str] = []
    symbols: set[Any] = set(sizes)
    for reference in references:
        access = reference.access
        assert access.index is not None  # `_sizes` refuses an indirect reference
        loops = [
            (loop.var, _text(loop.start), loop.step, _text(loop.trip)) for loop in reference.loops
        ]
        parts.append(
            repr(
                (
                    access.array,
                    [_text(e) for e in access.index],
                    access.is_write,
                    loops,
                    reference.loop_positions,
                    reference.order,
                    reference.offset,
                    [_text(g) for g in reference.guards],
                )
            )
        )
        for expr in (*access.index, *reference.guards):
            symbols |= expr.free_symbols
        for loop in reference.loops:
            symbols |= loop.start.free_symbols | loop.trip.free_symbols
    kinds = sorted(f"{s.name}:{_kind(s)}" for s in symbols)
    order = [s.name for s in sizes]
    return _without_lines("\n".join([repr(order), repr(kinds), *parts]))


@lru_cache(maxsize=8192)
def _text(expr: Any) -> str:
    """`str(expr)`, remembered: a nest's references repeat their loops' bounds, and sympy's
    printer was a fifth of an exact count's time in a hover on an LU solve."""
    return str(expr)


_LINE_NAME = re.compile(r"\b\w*_L\d+\w*")


def _without_lines(key: str) -> str:
    """`key` with each name that holds a line (`trip_L12`, a helper's `rotate_L72__i25`,
    an inlined call's array `forward_L102_q`) renamed by where it first appears: a nest
    that a line added above it moved keeps its key. Renamed one to one, the counts are
    the same (two arrays or symbols stay two)."""
    names: dict[str, str] = {}
    return _LINE_NAME.sub(lambda m: names.setdefault(m.group(), f"<{len(names)}>"), key)


def _kind(symbol: Any) -> str:
    """A symbol's assumptions as text: the exact type's kind, or sympy's assumptions."""
    from aiscan.algebra import is_poly

    if is_poly(symbol):
        var = symbol.var()
        return f"poly {var[1] if var is not None else symbol}"
    # A Dummy prints as its name alone: its index tells two of one name apart.
    dummy = getattr(symbol, "dummy_index", "")
    return f"sympy {type(symbol).__name__}{dummy} {sorted(symbol.assumptions0.items())}"


def known(key: str, point: tuple[int, ...]) -> Counts | None:
    return _KNOWN.get(key, {}).get(point)


def _points(key: str) -> dict[tuple[int, ...], Counts]:
    """The nest's known points, to add to (the memo starts over past `LIMIT` nests)."""
    if key not in _KNOWN and len(_KNOWN) >= LIMIT:
        _KNOWN.clear()
    return _KNOWN.setdefault(key, {})


def remember(key: str, point: tuple[int, ...], counts: Counts) -> None:
    _points(key)[point] = counts
    _LEARNED.setdefault(key, {})[point] = counts
    if _STORE is not None:
        _UNSAVED.add(key)


@contextmanager
def stored_in(store: ResultCache) -> Iterator[None]:
    """Keep counts in `store` (a scan's result cache) meanwhile, in this process and the
    workers it forks: a file edited since the last scan does not count the nests the edit
    left as they were (`aiscan check` in a pre-commit hook). A cache without a directory
    (`--no-cache`) keeps none."""
    global _STORE
    _STORE = store if store.directory is not None else None
    _UNSAVED.clear()
    try:
        yield
    finally:
        _STORE = None
        _UNSAVED.clear()


def recall(key: str, sizes: int) -> None:
    """Read the nest's counts from the store, where this process has none: a malformed
    entry (points of another length, anything but integers) is a miss."""
    if _STORE is None or key in _KNOWN:
        return
    payload = _STORE.get(_STORE.shared_key(KIND, key))
    points = _read_points(payload, sizes) if payload is not None else None
    if points:
        adopt({key: points})


def _read_points(payload: Mapping[str, Any], sizes: int) -> dict[tuple[int, ...], Counts] | None:
    rows = payload.get("points")
    if not isinstance(rows, list):
        return None
    points: dict[tuple[int, ...], Counts] = {}
    for row in rows:
        if not isinstance(row, list) or len(row) != sizes + 3:
            return None
        if not all(type(value) is int and value >= 0 for value in row):
            return None
        points[tuple(row[:sizes])] = (row[sizes], row[sizes + 1], row[sizes + 2])
    return points


def keep(key: str) -> None:
    """Give the store the nest's counts, where this process counted some of them."""
    if _STORE is None or key not in _UNSAVED:
        return
    _UNSAVED.discard(key)
    rows = [[*point, *counts] for point, counts in _KNOWN.get(key, {}).items()]
    _STORE.put(_STORE.shared_key(KIND, key), {"points": rows})


def learned() -> Entries:
    """The points counted since the last call (and forgets them as news)."""
    found = {key: dict(points) for key, points in _LEARNED.items()}
    _LEARNED.clear()
    return found


def adopt(entries: Mapping[str, Mapping[tuple[int, ...], Counts]]) -> None:
    """Take counts another process made (they are not news here)."""
    for key, points in entries.items():
        _points(key).update(points)


def merged(batches: Iterable[Mapping[str, Mapping[tuple[int, ...], Counts]]]) -> Entries:
    """Several processes' `learned()` as one set of entries."""
    total: Entries = {}
    for batch in batches:
        for key, points in batch.items():
            total.setdefault(key, {}).update(points)
    return total
