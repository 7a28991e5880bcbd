"""AIS012 atomic-contention: every thread or program of a launch updates one address."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from aiscan.errors import Severity
from aiscan.ir.nodes import UnknownKind
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule

__all__ = ["AtomicContention"]


class AtomicContention(Rule):
    """## What it does
    Flags a GPU atomic whose address does not depend on the block or the thread (CUDA:
    `atomicAdd(out, sum)` in every thread) or on the program (Triton: `tl.atomic_add` to
    one scalar from every program).

    ## Why is this bad?
    Updates to one address serialize in the L2's atomic unit: the launch is bound by
    atomic throughput, not by bandwidth, and its roofline time is optimistic. On an H100
    a grid-stride f64 dot product with one `atomicAdd` per thread reached 0.5 to 1.3 TB/s
    where a vector add reaches 2.3 to 2.6.

    ## Example
    ```cuda
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        sum += x[i] * y[i];
    atomicAdd(out, sum);   // one atomic per thread, all to out[0]
    ```
    Use instead a reduction within the block (warp shuffles, then shared memory) and one
    atomic per block, or a second kernel over the partial sums.

    ## Options
    None.

    ## References
    - NVIDIA, CUDA C++ Programming Guide, "Atomic Functions".
    - docs/cuda.md and docs/triton.md: atomics.
    """

    code = "AIS012"
    name = "atomic-contention"
    severity = Severity.WARNING

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        seen: set[tuple[int, int]] = set()
        for function in context.analysis.functions:
            for unknown in function.unknowns:
                key = (unknown.span.line, unknown.span.column)
                if unknown.kind is not UnknownKind.ATOMIC_CONTENTION or key in seen:
                    continue
                seen.add(key)
                yield self.finding(unknown.span, unknown.message)
