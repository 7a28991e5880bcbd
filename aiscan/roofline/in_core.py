"""The in-core ceiling (the seeds' P_max): the peak a loop's mix of operations can reach.

A device's dense peak counts a fused multiply-add as two FLOPs done in one issue slot. An add
or a multiply with no partner to fuse with fills the same slot with one FLOP, so a loop of
adds alone reaches half the peak. Divisions and special functions (sqrt, exp, ...) run on
their own units; where the device file gives their throughput (with a source), each is a
ceiling of its own, and where it does not, they are left out of the ceiling and flagged, so
the ceiling stays an upper bound.

Pairing is counted, not proven from the dataflow: a loop with `a` adds (and subtractions) and
`m` multiplies issues at least `max(a, m)` add/multiply/FMA instructions, whichever of them
fuse. The ceiling is therefore optimistic, as a roofline ceiling must be.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY
from aiscan.analysis.flops import FlopCounts
from aiscan.analysis.intensity import finite_value, leading_limit, substitute_sizes
from aiscan.roofline.devices import Peak

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["InCoreCeiling", "Limiter", "in_core_ceiling"]


class Limiter(StrEnum):
    FMA = "fma"
    """Adds and multiplies pair into FMAs: the full peak."""
    UNPAIRED = "unpaired adds and multiplies"
    DIVISION = "divisions"
    SPECIAL = "special functions"
    UNKNOWN = "unknown"
    """The mix depends on a symbol that is not a size (a branch fraction): no ceiling."""


@dataclass(frozen=True, slots=True)
class InCoreCeiling:
    """The applicable peak of one kernel on one device and precision.

    `flops_per_s` is None when the mix cannot be evaluated (`limiter` is then UNKNOWN);
    `notes` say which operations the ceiling leaves out for want of a throughput figure.
    """

    flops_per_s: float | None
    fraction_of_peak: float | None
    limiter: Limiter
    divide_ops_per_s: float | None
    special_ops_per_s: float | None
    notes: tuple[str, ...]


def in_core_ceiling(
    flops: FlopCounts,
    peak: Peak | None,
    peak_flops_per_s: float,
    *,
    sizes: Mapping[str, int] | None = None,
) -> InCoreCeiling:
    """The in-core ceiling of `flops` under the FMA peak `peak_flops_per_s`.

    `peak` carries the division and special-function throughputs of that precision, if the
    device file gives them. The mix is taken at `sizes`, or as every size grows together.
    """
    divide_rate = None if peak is None else peak.divide_ops_per_s
    special_rate = None if peak is None else peak.special_ops_per_s
    notes = []
    missing = "no throughput in the device file; left out of the ceiling, an upper bound"
    if flops.div != 0 and divide_rate is None:
        notes.append(f"divisions: {missing}")
    if flops.special != 0 and special_rate is None:
        notes.append(f"special functions: {missing}")
    if flops.total == 0:
        return InCoreCeiling(
            peak_flops_per_s, 1.0, Limiter.FMA, divide_rate, special_rate, tuple(notes)
        )
    counts = (flops.add + flops.sub, flops.mul, flops.div, flops.special)
    shares = [_share(count, flops.total, sizes) for count in counts]
    if any(s is None for s in shares):
        notes.append("the mix of operations depends on a symbol that is not a size")
        return InCoreCeiling(None, None, Limiter.UNKNOWN, divide_rate, special_rate, tuple(notes))
    adds, multiplies, divisions, specials = (s or 0.0 for s in shares)
    slots = max(adds, multiplies)  # FMA-unit instructions per FLOP, whichever pairs fuse
    # Seconds per FLOP on each unit; the slowest unit sets the ceiling.
    times = {
        Limiter.UNPAIRED: slots / (peak_flops_per_s / 2),
        Limiter.DIVISION: divisions / divide_rate if divide_rate else 0.0,
        Limiter.SPECIAL: specials / special_rate if special_rate else 0.0,
    }
    limiter = max(times, key=lambda k: times[k])
    ceiling = min(peak_flops_per_s, 1 / times[limiter]) if times[limiter] else peak_flops_per_s
    if limiter is Limiter.UNPAIRED and ceiling >= peak_flops_per_s:
        limiter = Limiter.FMA
    return InCoreCeiling(
        ceiling,
        ceiling / peak_flops_per_s,
        limiter,
        divide_rate,
        special_rate,
        tuple(notes),
    )


def _share(count: sympy.Expr, total: sympy.Expr, sizes: Mapping[str, int] | None) -> float | None:
    """`count / total` at the sizes, or as the sizes grow; None if a symbol remains."""
    if count == 0:
        return 0.0
    ratio = count / total
    at_sizes = substitute_sizes(ratio, sizes) if sizes else ratio
    value = finite_value(at_sizes)
    if value is None and at_sizes.free_symbols:
        value = finite_value(leading_limit(at_sizes))
    return value
