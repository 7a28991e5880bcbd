"""AIS011 shared-bank-conflict: a warp's shared-memory access hits one bank several times."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from aiscan.analysis.gpu_memory import BANKS, bank_conflicts
from aiscan.errors import Severity
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule

__all__ = ["SharedBankConflict"]


class SharedBankConflict(Rule):
    """## What it does
    Flags an access to a CUDA `__shared__` array whose warp touches distinct 4-byte words
    of the same bank: with a power-of-two row length, `tile[threadIdx.x][j]` in a
    `tile[32][32]` puts all 32 lanes in one bank. The message gives how many ways the
    access conflicts. Lanes reading one word (a broadcast) do not conflict.

    ## Why is this bad?
    Shared memory has 32 banks of 4 bytes, each serving one word per cycle; an n-way
    conflict serves the warp in n passes, so a column read of `tile[32][32]` takes 32
    times as long as a row read. One padding element per row (`tile[32][33]`) puts the
    column in 32 different banks.

    ## Example
    ```cuda
    __shared__ float tile[32][32];
    out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];   // 32-way
    ```
    Use instead `__shared__ float tile[32][33];`.

    ## Options
    None.

    ## References
    - NVIDIA, CUDA C++ Programming Guide, "Shared Memory" (compute capability 5.x and later).
    """

    code = "AIS011"
    name = "shared-bank-conflict"
    severity = Severity.WARNING

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        seen: set[tuple[int, int, str]] = set()
        for _, region in context.nests():
            for conflict in bank_conflicts(region.region, context.sizes):
                access = conflict.access
                key = (access.span.line, access.span.column, access.text)
                if key in seen:
                    continue
                seen.add(key)
                yield self.finding(
                    access.span,
                    f"`{access.text}`: {conflict.ways}-way bank conflict: a warp's "
                    f"{conflict.lanes} lanes touch {conflict.ways} distinct words of one of the "
                    f"{BANKS} banks, served in {conflict.ways} passes (pad the row by one "
                    "element)",
                    (("reference", access.text), ("ways", str(conflict.ways))),
                )
