"""The GPU memory model, one for every GPU launch (CUDA and Triton alike): what a warp's
access costs between L2 and the SMs in 32-byte sectors, whether shared-memory accesses
conflict in their banks, and which re-reads the L2 holds at the given sizes.

A launch is a loop nest over its grid (`Region.gpu_launch`), so the model reads only the IR:
- **Warps.** CUDA: 32 consecutive threads of a block, `threadIdx.x` fastest (the loops
  `threadIdx_x`, `_y`, `_z`, with the block's extents). Triton: a block's lanes (the loops
  `ax0`, `ax1`, ...) with the warp along the axis the access is contiguous in (Triton's
  coalescing pass orders each load's and store's layout by its pointer's contiguity), else
  the fastest axis `ax0`. Each access is costed for the first warp of a block at the
  origin of everything else (the other loop variables 0): its base is taken to be
  sector-aligned, its lanes all active.
- **Sectors.** A warp's access moves the distinct 32-byte sectors its lanes touch: 32
  consecutive 4-byte elements 4 sectors, one element per row of a row-major matrix (a
  column walk) a sector per lane, one address (a broadcast) one sector. The L2 → SM bytes
  are every lane's execution times its share of its warp's sectors.
- **Banks.** Shared memory has 32 banks of 4 bytes; lanes of one warp that touch distinct
  words of one bank serialize (`tile[32][32]` read down a column: 32-way), the same word is
  a broadcast (`tile[32][33]` puts a column in 32 banks).
- **L2 capacity**: `analysis.gpu_dram`, for CUDA launches at given sizes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from aiscan.algebra import SYMPY, ZERO, to_sympy
from aiscan.analysis.traffic import Traffic, streaming_traffic
from aiscan.analysis.walk import placed_statements
from aiscan.ir.nodes import Access, Branch, Loop, Node, Region, Statement
from aiscan.ir.symbols import is_size_symbol, loop_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = [
    "BANKS",
    "SECTOR_BYTES",
    "WARP_LANES",
    "AtomicUpdates",
    "BankConflict",
    "WarpAccess",
    "atomic_updates",
    "bank_conflicts",
    "sector_traffic",
    "shared_wavefront_bytes",
    "warp_accesses",
]

SECTOR_BYTES = 32
"""What the L2 moves to an SM, and an L2 miss from DRAM: a 32-byte sector (CUDA C++ Best
Practices Guide, "Coalesced Access to Global Memory")."""
WARP_LANES = 32
BANKS = 32
"""Shared-memory banks, each 4 bytes wide (CUDA C++ Programming Guide, "Shared Memory")."""
BANK_BYTES = 4

_LARGE = 1 << 20
"""A size not given, in a stride: taken large (every row of a matrix in sectors of its own,
the large-size branch), as the CPU cache model takes a growing working set not to fit."""
_CUDA_LANES = ("threadIdx_x", "threadIdx_y", "threadIdx_z")


@dataclass(frozen=True, slots=True)
class WarpAccess:
    """One global access of a launch as a warp makes it."""

    access: Access
    lanes: int
    """Active lanes of the warp (32, fewer in a block of fewer threads)."""
    sectors: int
    """Distinct 32-byte sectors the warp touches in one execution of the access."""

    @property
    def bytes_per_lane(self) -> Fraction:
        return Fraction(self.sectors * SECTOR_BYTES, self.lanes)

    @property
    def coalesced(self) -> bool:
        """No more sectors than the warp's elements packed end to end would fill."""
        packed = math.ceil(self.lanes * self.access.element.width_bytes / SECTOR_BYTES)
        return self.sectors <= packed


@dataclass(frozen=True, slots=True)
class BankConflict:
    """A shared-memory access whose warp hits `ways` distinct words in one bank."""

    access: Access
    ways: int
    lanes: int


def _lane_loops(loops: tuple[Loop, ...], cuda: bool) -> list[Loop]:
    if cuda:
        by_name = {loop.var: loop for loop in loops}
        return [by_name[v] for v in _CUDA_LANES if v in by_name]
    lanes = [loop for loop in loops if loop.var.startswith("ax") and loop.var[2:].isdigit()]
    return sorted(lanes, key=lambda loop: int(loop.var[2:]))


def _active(
    offsets: list[int],
    lanes: list[Loop],
    guards: tuple[Any, ...] | None,
    sizes: Mapping[str, int],
) -> list[int]:
    """The offsets of the lanes a guard on the thread alone lets through (`if
    (threadIdx.x == 0)`: one lane, which costs its warp a whole sector; the same in every
    block); all of them where a guard is not decided, or turns every lane away. Guards
    that read the block or other loops (a stencil's borders) are taken to hold, as the
    model takes every warp full."""
    names = frozenset(loop.var for loop in lanes)
    lane_symbols = {to_sympy(_loop(loop)) for loop in lanes}
    loop_symbols = {s for g in guards or () for s in g.free_symbols if not is_size_symbol(s)}
    if not guards or not loop_symbols <= lane_symbols:
        return offsets
    extents = [max(1, _value(loop.trip, sizes, names)) for loop in lanes]
    kept = []
    for lane, offset in enumerate(offsets):
        values = _lane_values(lane, lanes, extents)
        decided = [_holds(guard, values, sizes) for guard in guards]
        if None in decided:
            return offsets
        if all(decided):
            kept.append(offset)
    return kept or offsets


def _holds(guard: Any, values: Mapping[Any, Any], sizes: Mapping[str, int]) -> bool | None:
    """A guard at one lane (other loop variables 0, sizes not given large)."""
    rest: dict[Any, int] = {}
    for symbol in guard.free_symbols - set(values):
        if symbol.name in sizes:
            rest[symbol] = sizes[symbol.name]
        elif is_size_symbol(symbol):
            rest[symbol] = _LARGE
        else:
            rest[symbol] = 0
    decided = guard.subs({**values, **rest})
    if decided in (sympy.true, sympy.false):
        return bool(decided)
    return None


def _lane_values(lane: int, lanes: list[Loop], extents: list[int]) -> dict[Any, Any]:
    """The lane loops' variables at one lane of the warp (the first loop fastest)."""
    values: dict[Any, Any] = {}
    rest = lane
    for loop, extent in zip(lanes, extents, strict=True):
        values[to_sympy(_loop(loop))] = to_sympy(loop.start) + (rest % extent) * loop.step
        rest //= extent
    return values


def _value(expr: Any, sizes: Mapping[str, int], zero: frozenset[str] = frozenset()) -> int:
    """`expr` with sizes given (others large), the names in `zero` and other loop
    variables 0: an integer."""
    converted = to_sympy(expr)
    values: dict[Any, int] = {}
    for symbol in converted.free_symbols:
        if symbol.name in sizes:
            values[symbol] = sizes[symbol.name]
        elif is_size_symbol(symbol) and symbol.name not in zero:
            values[symbol] = _LARGE
        else:
            values[symbol] = 0
    value = converted.subs(values) if values else converted
    try:
        return int(value)
    except (TypeError, ValueError):
        return _LARGE


def _offset(access: Access) -> Any | None:
    """The element offset of an access from the start of its array: the last subscript is
    contiguous; declared extents give the others' strides, undeclared ones are far."""
    if access.index is None:
        return None
    index = [to_sympy(i) for i in access.index]
    offset = index[-1]
    stride: Any = sympy.Integer(1)
    extents = list(access.extents) if len(access.extents) == len(index) else []
    for dimension in range(len(index) - 2, -1, -1):
        extent = extents[dimension + 1] if extents else None
        stride = stride * (to_sympy(extent) if extent is not None else sympy.Integer(_LARGE))
        offset = offset + index[dimension] * stride
    return sympy.expand(offset)


def _warp(offset: Any, lanes: list[Loop], sizes: Mapping[str, int], cuda: bool) -> list[int] | None:
    """The element offsets of one warp's lanes, or None when no lane loop is around."""
    if not lanes:
        return None
    if not cuda:  # Triton: the warp along the contiguous axis, where one is
        unit = [
            loop
            for loop in lanes
            if _value(sympy.diff(offset, to_sympy(_loop(loop))), sizes) in (1, -1)
        ]
        if unit:
            lanes = [unit[0], *(loop for loop in lanes if loop is not unit[0])]
    names = frozenset(loop.var for loop in lanes)
    extents = [max(1, _value(loop.trip, sizes, names)) for loop in lanes]
    count = min(WARP_LANES, math.prod(extents))
    if offset.has(sympy.floor, sympy.ceiling, sympy.Mod):
        # `partial[threadIdx.x / 32]`: not linear in the lanes, so each lane's offset is
        # the index at that lane (a warp's 32 lanes read one word: a broadcast).
        return [
            _value(offset.subs(_lane_values(lane, lanes, extents)), sizes) for lane in range(count)
        ]
    coefficients = [
        _value(sympy.diff(offset, to_sympy(_loop(loop))), sizes) * loop.step for loop in lanes
    ]
    offsets = []
    for lane in range(count):
        position, rest = 0, lane
        for extent, coefficient in zip(extents, coefficients, strict=True):
            position += (rest % extent) * coefficient
            rest //= extent
        offsets.append(position)
    return offsets


def _loop(loop: Loop) -> Any:
    return loop_symbol(loop.var)


def warp_accesses(region: Region, sizes: Mapping[str, int]) -> tuple[WarpAccess, ...]:
    """Every global access of a launch inside its lane loops, with its warp's sectors
    (`sizes` decide strides in sizes; sizes not given are taken large)."""
    if not region.gpu_launch:
        return ()
    cuda = region.launch is not None
    found: dict[tuple[str, int, int, str], WarpAccess] = {}
    for placed in placed_statements(region.body):
        lanes = _lane_loops(placed.loops, cuda)
        for access in placed.statement.accesses:
            key = _key(access)
            if key in found:
                continue
            offset = _offset(access)
            offsets = None if offset is None else _warp(offset, lanes, sizes, cuda)
            if offsets is None:
                continue
            if cuda and placed.branches:
                offsets = _active(offsets, lanes, placed.guards, sizes)
            width = access.element.width_bytes
            sectors = {(o * width) // SECTOR_BYTES for o in offsets}
            found[key] = WarpAccess(access, len(offsets), len(sectors))
    return tuple(found.values())


def sector_traffic(
    region: Region, sizes: Mapping[str, int], streaming: Traffic | None = None
) -> Traffic:
    """L2 → SM bytes in sectors: the streaming model with each access's width replaced by
    its lanes' share of their warp's sectors. Accesses outside lane loops keep their width
    (one program's scalar, a grid-stride loop's element); an indirect one too, and the
    figure is then flagged as not exact."""
    warps = {_key(w.access): w for w in warp_accesses(region, sizes)}
    exact = all(
        a.index is not None for p in placed_statements(region.body) for a in p.statement.accesses
    )
    if streaming is not None and all(
        w.bytes_per_lane == w.access.element.width_bytes for w in warps.values()
    ):
        # Every warp packs its elements into whole sectors (the common case, and every
        # Triton fixture): the sectors are the streaming bytes already counted.
        return Traffic("sectors", streaming.read_bytes, streaming.write_bytes, ZERO, exact)
    # Widths are integers: every width is scaled by the warps' common lane count, and the
    # total divided by it (a broadcast of 8 bytes is a quarter byte a lane).
    scale = math.lcm(*(w.lanes for w in warps.values())) if warps else 1

    def width(access: Access) -> int:
        warp = warps.get(_key(access))
        if warp is None:
            return access.element.width_bytes * scale
        return warp.sectors * SECTOR_BYTES * (scale // warp.lanes)

    body = tuple(_rewidthed(node, width) for node in region.body)
    scaled = streaming_traffic(body)
    factor = sympy.Rational(1, scale)
    return Traffic(
        "sectors",
        sympy.expand(to_sympy(scaled.read_bytes) * factor),
        sympy.expand(to_sympy(scaled.write_bytes) * factor),
        ZERO,
        exact,
    )


def _key(access: Access) -> tuple[str, int, int, str]:
    return (access.text, access.span.line, access.span.column, str(access.index))


def _rewidthed(node: Node, width: Callable[[Access], int]) -> Node:
    if isinstance(node, Loop):
        return replace(node, body=tuple(_rewidthed(n, width) for n in node.body))
    if isinstance(node, Branch):
        condition = _rewidthed(node.condition, width)
        assert isinstance(condition, Statement)
        return replace(
            node,
            condition=condition,
            then_body=tuple(_rewidthed(n, width) for n in node.then_body),
            else_body=tuple(_rewidthed(n, width) for n in node.else_body),
        )
    if not node.accesses:
        return node
    accesses = tuple(
        replace(a, element=replace(a.element, width_bytes=width(a))) for a in node.accesses
    )
    return replace(node, accesses=accesses)


def bank_conflicts(region: Region, sizes: Mapping[str, int]) -> tuple[BankConflict, ...]:
    """Shared-memory accesses (CUDA `__shared__` arrays) whose warp touches distinct words
    of one bank: `ways` of them, served one after another."""
    found: dict[tuple[str, int, int, str], BankConflict] = {}
    for placed in placed_statements(region.shared_memory):
        lanes = _lane_loops(placed.loops, cuda=True)
        for access in placed.statement.accesses:
            offset = _offset(access)
            offsets = None if offset is None else _warp(offset, lanes, sizes, cuda=True)
            if offsets is None or _key(access) in found:
                continue
            ways = _bank_ways(offsets, access.element.width_bytes)
            if ways > 1:
                found[_key(access)] = BankConflict(access, ways, len(offsets))
    return tuple(found.values())


def shared_wavefront_bytes(
    region: Region, conflicts: tuple[BankConflict, ...]
) -> sympy.Expr | None:
    """Shared-memory bytes as the banks serve them: every access at its width times the
    ways it conflicts (a 32-way conflict costs 32 passes), so that the figure beside
    `shared` says what the conflicts cost. None where no access conflicts."""
    if not conflicts:
        return None
    ways = {_key(c.access): c.ways for c in conflicts}

    def width(access: Access) -> int:
        return access.element.width_bytes * ways.get(_key(access), 1)

    body = tuple(_rewidthed(node, width) for node in region.shared_memory)
    return streaming_traffic(body).total(False)


@dataclass(frozen=True, slots=True)
class AtomicUpdates:
    """One atomic update of a launch and how many times the launch makes it."""

    access: Access
    count: sympy.Expr


def atomic_updates(region: Region) -> tuple[AtomicUpdates, ...]:
    """The atomic updates of a launch (`GpuLaunch.atomic_lines`), each counted as the
    streaming model counts its write: once per execution, guards counted exactly."""
    lines = set(region.launch.atomic_lines) if region.launch is not None else set()
    found: list[AtomicUpdates] = []
    for placed in placed_statements(region.body):
        for access in placed.statement.accesses:
            if access.is_write and access.span.line in lines:
                lines.discard(access.span.line)
                chosen = _key(access)

                def width(other: Access, chosen: tuple[str, int, int, str] = chosen) -> int:
                    return 1 if other.is_write and _key(other) == chosen else 0

                body = tuple(_rewidthed(node, width) for node in region.body)
                found.append(AtomicUpdates(access, streaming_traffic(body).write_bytes))
    return tuple(found)


def _bank_ways(offsets: list[int], width: int) -> int:
    """The most distinct words one bank serves to one pass of a warp's access. Elements
    wider than a bank are served a 128-byte pass at a time (8-byte ones by half-warps),
    and those passes are not conflicts."""
    group = max(1, WARP_LANES * BANK_BYTES // max(width, BANK_BYTES))
    worst = 1
    for start in range(0, len(offsets), group):
        words: dict[int, set[int]] = {}
        for offset in offsets[start : start + group]:
            first = offset * width // BANK_BYTES
            for word in range(first, first + max(1, width // BANK_BYTES)):
                words.setdefault(word % BANKS, set()).add(word)
        worst = max(worst, *(len(w) for w in words.values()))
    return worst
