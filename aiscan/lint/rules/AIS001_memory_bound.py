"""AIS001 memory-bound: a loop nest whose intensity sits below the device's ridge."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, ClassVar

from aiscan.algebra import SYMPY
from aiscan.errors import Severity
from aiscan.lint.context import LintContext
from aiscan.lint.figures import flops_rate, intensity_text
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule
from aiscan.roofline.placement import CrossoverKind, Placement, growing_symbols
from aiscan.roofline.units import format_si

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["MemoryBound"]


class MemoryBound(Rule):
    """## What it does
    Flags a loop nest whose arithmetic intensity lies below the ridge point of a target
    device by more than `ridge-factor`, so that memory bandwidth, not the FLOP rate, limits
    it. Needs a target device (`--device`, or `devices` in the configuration); without one
    it says nothing.

    The verdict is the placement `aiscan analyze` prints for the same nest and device (the
    same traffic model or view, threads and roofs), so the two never disagree. With sizes
    (`--size`, `sizes` in the configuration, or `#define`s in the source) loop code is
    placed by the `cache` traffic model at every level of the device's hierarchy
    (docs/model.md), and the message names the level that bounds the nest. Without sizes
    the cache model knows only the large-size traffic (every growing working set taken not
    to fit), and the message says so: "at large sizes". A size-dependent verdict that
    crosses the ridge is not reported.

    ## Why is this bad?
    A memory-bound nest cannot run faster than `AI × bandwidth`, however well its arithmetic
    is vectorized: on an H100 SXM (fp64 34 TFLOP/s, 3.35 TB/s) daxpy's AI of 1/12 caps it at
    0.28 TFLOP/s, under 1% of peak. Optimizing the arithmetic is wasted effort; raising
    the intensity (fusing loops, blocking for reuse, narrower element types) is what helps.

    Being memory-bound is a property, not a defect: a stream such as `y[i] = 2*y[i]` or a
    sum such as `np.sum(x)` cannot be anything else. So the finding is a note, the
    placement shown as information, and it fails `aiscan check` only when `fail-on`
    selects it. The rules that name a fix (AIS002 fusion, AIS003 temporaries, AIS004
    stride, AIS009 the block to use) are warnings.

    ## Example
    ```c
    for (size_t i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];   // 2n FLOPs, 24n bytes: AI 1/12
    ```
    Fuse it with the loops that produce `x` or consume `y`, so each element does more work
    per trip to memory.

    ## Options
    - `ridge-factor` (default 1): report when AI < ridge / ridge-factor; 10 reports only
      nests ten times or more below the ridge.

    ## References
    - S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual performance
      model for multicore architectures", CACM 52(4), 2009.
    - `aiscan devices show NAME` for the peaks and bandwidths used, with their sources.
    """

    code = "AIS001"
    name = "memory-bound"
    severity = Severity.NOTE
    options: ClassVar[Mapping[str, float]] = {"ridge-factor": 1.0}
    needs_devices = True

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        factor = options["ridge-factor"]
        for _, region in context.nests():
            if region.flops.total == 0 or region.unknowns:
                continue
            for device, placement in zip(context.devices, context.placements(region), strict=True):
                if isinstance(placement, str):
                    continue
                verdict = _below(placement, factor)
                if verdict is None:
                    continue
                if verdict == "at every size" and placement.model == "cache":
                    # The cache model without sizes knows only the large-size traffic, as
                    # `analyze` says beside the same verdict.
                    verdict = (
                        "at large sizes (working sets that grow with the sizes taken not to "
                        "fit; --size decides smaller ones)"
                    )
                yield self.finding(
                    region.region.span,
                    _message(placement, factor, verdict, dict(context.sizes)),
                    _details(placement, context.write_allocate_on(device)),
                )


def _below(placement: Placement, factor: float) -> str | None:
    """How the nest is surely below ridge/factor: `at the given sizes`, `at every size`."""
    threshold = placement.ridge_flops_per_byte / factor
    if placement.intensity is None:
        return None
    if placement.intensity_flops_per_byte is not None:
        if placement.intensity_flops_per_byte < threshold:
            return "" if not placement.intensity.free_symbols else "at the given sizes"
        return None
    # Size-dependent without sizes: sure only with one growing size, never crossing.
    if len(growing_symbols(placement.intensity)) != 1:
        return None
    if placement.crossover.kind != CrossoverKind.NEVER:
        return None
    limit = placement.intensity_limit
    if limit is None or not limit.is_number or not bool(limit < sympy.Float(threshold)):
        return None
    return "at every size"


def _message(placement: Placement, factor: float, verdict: str, sizes: dict[str, int]) -> str:
    below = "below" if factor == 1 else f"more than {factor:g}× below"
    attainable = placement.attainable_flops_per_s or placement.attainable_limit_flops_per_s
    where = f" {verdict}" if verdict else ""
    intensity = intensity_text(placement.intensity, sizes)
    level = f" at {placement.bound_level}" if placement.bound_level else ""
    text = (
        f"memory-bound{level} on {placement.device}{where}: AI {intensity} is {below} the ridge "
        f"{placement.ridge_flops_per_byte:.4g} F/B "
        f"({_ridge_text(placement)})"
    )
    if placement.bytes_upper_bound:
        text += "; bytes are an upper bound, so AI is a lower bound"
    if attainable is not None:
        share = attainable / placement.peak_flops_per_s
        bound = "at most " if verdict.startswith(("at every size", "at large sizes")) else ""
        text += f"; attainable {bound}{flops_rate(attainable)}, {share:.2%} of peak"
    return text


def _ridge_text(placement: Placement) -> str:
    """What the ridge divides: the nest's in-core ceiling where its mix gives one (an
    unpaired multiply reaches half the FMA peak), else the device's peak, by bandwidth."""
    bandwidth = format_si(placement.bandwidth_bytes_per_s, "B/s")
    ceiling = placement.in_core
    if ceiling is not None and ceiling.flops_per_s is not None and ceiling.fraction_of_peak != 1:
        rate = flops_rate(ceiling.flops_per_s)
        return f"in-core ceiling {rate} / {bandwidth}: {ceiling.limiter.value}"
    return f"{placement.precision} peak {flops_rate(placement.peak_flops_per_s)} / {bandwidth}"


def _details(placement: Placement, write_allocate: bool) -> tuple[tuple[str, str], ...]:
    return (
        ("device", placement.device),
        ("FLOPs", str(placement.flops)),
        (f"bytes ({placement.model})", str(placement.bytes_moved)),
        ("write-allocate", "yes" if write_allocate else "no"),
        ("AI", str(placement.intensity)),
        ("ridge", f"{placement.ridge_flops_per_byte:.4g} F/B"),
        ("peak", flops_rate(placement.peak_flops_per_s)),
        ("bandwidth", format_si(placement.bandwidth_bytes_per_s, "B/s")),
    )
