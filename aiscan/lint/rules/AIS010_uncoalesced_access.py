"""AIS010 uncoalesced-access: a warp touches more 32-byte sectors than its data fills."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from aiscan.analysis.gpu_memory import SECTOR_BYTES, warp_accesses
from aiscan.errors import Severity
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule

__all__ = ["UncoalescedAccess"]


class UncoalescedAccess(Rule):
    """## What it does
    Flags a global load or store of a GPU kernel (CUDA or Triton) whose warp touches more
    32-byte sectors than its 32 lanes' elements would fill packed end to end: in CUDA, an
    address that is not contiguous in `threadIdx.x` (`out[x*n + y]` with `x` from
    `threadIdx.x`: a column walk, a sector per thread); in Triton, a block that no
    `tl.arange` axis walks contiguously (Triton lays each load's lanes along the
    contiguous axis when there is one, so only a block with none is flagged). The message
    gives the sectors per warp against the packed figure.

    ## Why is this bad?
    The L2 serves an SM in 32-byte sectors. Thirty-two consecutive floats are four
    sectors; thirty-two floats a row apart are thirty-two sectors, eight times the bytes
    from L2 for the same data, and as many separate memory transactions. The naive
    transpose moves 4.5 times the L2 bytes of the tiled one (4.8 times on an H100).

    ## Example
    ```cuda
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    out[x * n + y] = in[y * n + x];   // the store walks a column: 32 sectors a warp
    ```
    Use instead a shared-memory tile: read rows into `tile[32][33]`, write rows out of it
    transposed (both global accesses then contiguous in `threadIdx.x`).

    ## Options
    None.

    ## References
    - NVIDIA, CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory".
    - docs/model.md, "GPU memory": how warps and sectors are counted.
    """

    code = "AIS010"
    name = "uncoalesced-access"
    severity = Severity.WARNING

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        seen: set[tuple[int, int, str]] = set()
        for _, region in context.nests():
            for warp in warp_accesses(region.region, context.sizes):
                access = warp.access
                key = (access.span.line, access.span.column, access.text)
                if warp.coalesced or key in seen:
                    continue
                seen.add(key)
                width = access.element.width_bytes
                packed = -(-warp.lanes * width // SECTOR_BYTES)
                yield self.finding(
                    access.span,
                    f"`{access.text}`: a warp's access touches {warp.sectors} sectors of "
                    f"{SECTOR_BYTES} bytes where its {warp.lanes} lanes' {width}-byte elements "
                    f"fill {packed}; {warp.bytes_per_lane} bytes from L2 per element used",
                    (
                        ("reference", access.text),
                        ("sectors per warp", str(warp.sectors)),
                        ("sectors packed", str(packed)),
                    ),
                )
