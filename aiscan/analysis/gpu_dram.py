"""Main-memory bytes of a GPU launch with the device's L2: the compulsory traffic plus
the re-reads the L2 cannot hold at the given sizes.

The layer conditions of the CPU cache model (`analysis.cache_model`) decide one cache, the
L2 in 32-byte sectors, on the grid-as-loops nest with the sizes put in: blocks (programs)
in launch order (`blockIdx.x`, `pid_0` fastest; a Triton launch's grid loops are put in
that order first, grouped program ids unmerged, `analysis.program_order`), one at a time,
the whole L2 theirs, half of it usable (the safety factor: the H100's L2 is two
partitions, and data read by SMs on both sides is held in both). Decided only at given
sizes, every size bound. A grid whose guards turn iterations away (a ragged last block)
gets a bound: the footprints take no guard into account.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from aiscan.algebra import SYMPY, to_sympy
from aiscan.analysis.cache_model import SAFETY_FACTOR, CacheLevelSpec, LevelTraffic, miss_traffic
from aiscan.analysis.gpu_memory import SECTOR_BYTES
from aiscan.analysis.program_order import in_launch_order
from aiscan.analysis.walk import placed_statements
from aiscan.ir.nodes import Branch, Loop, Node, Region
from aiscan.ir.substitution import substituted
from aiscan.ir.symbols import is_size_symbol, loop_symbol, size_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["dram_traffic", "l2_spec"]


def l2_spec(capacity_bytes: float, safety_factor: float | None = None) -> CacheLevelSpec:
    """A device's L2 as the model sees it: the whole capacity, 32-byte sectors, half of it
    usable unless the device file says otherwise (the module docstring)."""
    factor = float(SAFETY_FACTOR) if safety_factor is None else safety_factor
    return CacheLevelSpec("L2", capacity_bytes, SECTOR_BYTES, factor)


def dram_traffic(
    region: Region, l2: CacheLevelSpec, main_memory: str, sizes: Mapping[str, int]
) -> LevelTraffic | None:
    """Main-memory bytes of a GPU launch: its compulsory traffic plus the re-reads `l2`
    cannot hold at `sizes` (the module docstring); None unless `sizes` bind every size
    the launch has, since which reuses fit is a question of numbers."""
    if not region.gpu_launch:
        return None
    ordered = region.body if region.launch is not None else in_launch_order(region, sizes)
    if ordered is None:
        return None
    mapping = {to_sympy(size_symbol(name)): value for name, value in sizes.items()}
    body = _unrolled(tuple(substituted(node, mapping) for node in ordered))
    if _has_sizes(body):
        return None
    traffic = miss_traffic(body, l2, main_memory, write_allocate=False, sizes=sizes)
    if not _guards_vacuous(body):
        # The layer conditions' footprints take no guard into account: a grid that
        # overshoots its range (a ragged last block) makes them a bound.
        traffic = replace(traffic, exact=False)
    return traffic


def _unrolled(body: tuple[Node, ...]) -> tuple[Node, ...]:
    """Loops of one iteration (a grid of one block at these sizes) replaced by their body
    at that iteration: the footprints then see no variable that cannot move."""
    result: list[Node] = []
    for node in body:
        if isinstance(node, Loop):
            inner = _unrolled(node.body)
            if to_sympy(node.trip) == 1:
                at = {to_sympy(loop_symbol(node.var)): to_sympy(node.start)}
                result.extend(substituted(n, at) for n in inner)
            else:
                result.append(replace(node, body=inner))
        elif isinstance(node, Branch):
            result.append(
                replace(
                    node, then_body=_unrolled(node.then_body), else_body=_unrolled(node.else_body)
                )
            )
        else:
            result.append(node)
    return tuple(result)


def _guards_vacuous(body: tuple[Node, ...]) -> bool:
    """Every branch around a statement is taken by every iteration of its loops (the
    guards of a grid that fits its range exactly): affine conditions checked at the
    corners of the loops' numeric box."""
    for placed in placed_statements(body):
        if not placed.branches:
            continue
        guards = placed.guards
        if guards is None or any(not _holds_everywhere(g, placed.loops) for g in guards):
            return False
    return True


def _holds_everywhere(guard: Any, loops: tuple[Loop, ...]) -> bool:
    guard = to_sympy(guard)
    if guard is sympy.true:
        return True
    if isinstance(guard, sympy.And):
        return all(_holds_everywhere(g, loops) for g in guard.args)
    if not isinstance(guard, sympy.core.relational.Relational) or isinstance(
        guard, (sympy.Eq, sympy.Ne)
    ):
        return False
    gap = sympy.expand(guard.lhs - guard.rhs)  # the condition is `gap < 0`, `gap >= 0`, ...
    low = high = gap
    for loop in reversed(loops):
        var = to_sympy(loop_symbol(loop.var))
        first, last = to_sympy(loop.start), to_sympy(loop.start + loop.step * (loop.trip - 1))
        if not (first.is_number and last.is_number):
            return False
        # Affine (`Branch.guard`): its extremes over a box are at the corners.
        low = sympy.Min(low.subs(var, first), low.subs(var, last))
        high = sympy.Max(high.subs(var, first), high.subs(var, last))
    if not (low.is_number and high.is_number):
        return False
    if isinstance(guard, sympy.StrictLessThan):
        return bool(high < 0)
    if isinstance(guard, sympy.LessThan):
        return bool(high <= 0)
    if isinstance(guard, sympy.StrictGreaterThan):
        return bool(low > 0)
    return bool(low >= 0)  # GreaterThan


def _has_sizes(body: tuple[Node, ...]) -> bool:
    for placed in placed_statements(body):
        parts = [p for loop in placed.loops for p in (loop.start, loop.trip)]
        parts += [i for a in placed.statement.accesses for i in a.index or ()]
        if any(is_size_symbol(s) for p in parts for s in to_sympy(p).free_symbols):
            return True
    return False
