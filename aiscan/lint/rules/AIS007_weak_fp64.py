"""AIS007 weak-fp64: fp64 arithmetic capped by a device whose fp64 peak is a sliver of fp32."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import ClassVar

from aiscan.errors import Severity
from aiscan.lint.context import LintContext
from aiscan.lint.figures import flops_rate, ratio_text
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule
from aiscan.roofline.placement import Bound, CrossoverKind, Placement

__all__ = ["WeakFp64"]


class WeakFp64(Rule):
    """## What it does
    Flags a double-precision loop nest that is compute-bound on a target device whose fp64
    peak is less than `max-fp64-ratio` of its fp32 peak (consumer and inference GPUs such
    as the L4 run fp64 at 1/64 of fp32). Needs a target device. Silent when the nest is
    memory-bound there, since the fp64 peak then does not limit it, and when the device
    file lacks either peak.

    ## Why is this bad?
    Once the nest is compute-bound it runs at the fp64 peak, a small fraction of what the
    chip does in fp32. If the algorithm tolerates single precision (or mixed precision
    with fp64 accumulation), the same nest can run many times faster.

    ## Example
    ```c
    double sum = 0.0;                       // n^3 fp64 multiply-adds: compute-bound
    for (k = 0; k < n; k++) sum += A[i*n + k] * B[k*n + j];
    ```
    Use instead `float` data, with a `double` accumulator if accuracy needs it, on such a
    device; or run fp64 work on a device built for it.

    ## Options
    - `max-fp64-ratio` (default 0.125): report when fp64 peak / fp32 peak is below this.

    ## References
    - NVIDIA L4 Tensor Core GPU datasheet (2023): FP64 0.473 TFLOPS, FP32 30.3 TFLOPS.
    - `aiscan devices show NAME` for each device's peaks and their sources.
    """

    code = "AIS007"
    name = "weak-fp64"
    severity = Severity.WARNING
    options: ClassVar[Mapping[str, float]] = {"max-fp64-ratio": 0.125}
    needs_devices = True

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        for _, region in context.nests():
            if region.precision != "fp64" or region.flops.total == 0 or region.unknowns:
                continue
            for device in context.devices:
                fp64, fp32 = device.peak("fp64"), device.peak("fp32")
                if fp64 is None or fp32 is None:
                    continue
                ratio = fp64.dense_flops_per_s / fp32.dense_flops_per_s
                if ratio >= options["max-fp64-ratio"]:
                    continue
                placement = context.place(region, device, "fp64")
                if placement is None:
                    continue
                when = _compute_bound(placement)
                if when is None:
                    continue
                yield self.finding(
                    region.region.span,
                    f"fp64 nest compute-bound on {device.key}{when}: its fp64 peak "
                    f"{flops_rate(fp64.dense_flops_per_s)} is {ratio_text(ratio)} of its fp32 "
                    f"peak {flops_rate(fp32.dense_flops_per_s)} (ridge "
                    f"{placement.ridge_flops_per_byte:.3g} F/B)",
                    (
                        ("device", device.key),
                        ("fp64 peak", flops_rate(fp64.dense_flops_per_s)),
                        ("fp32 peak", flops_rate(fp32.dense_flops_per_s)),
                        ("AI", str(placement.intensity)),
                        ("ridge (fp64)", f"{placement.ridge_flops_per_byte:.4g} F/B"),
                    ),
                )


def _compute_bound(placement: Placement) -> str | None:
    """'' when compute-bound outright, ' from n ≥ N' above a crossover, None otherwise."""
    if placement.bound == Bound.COMPUTE:
        return ""
    crossover = placement.crossover
    if (
        placement.bound == Bound.DEPENDS_ON_SIZE
        and crossover.kind == CrossoverKind.AT
        and crossover.compute_bound_above
        and crossover.first_integer_size is not None
    ):
        names = " = ".join(crossover.size_names)
        return f" from {names} ≥ {crossover.first_integer_size}"
    return None
