"""AIS002 unfused-nests: adjacent loop nests that re-read the same arrays."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, expand
from aiscan.analysis.intensity import intensity
from aiscan.analysis.kernel import RegionAnalysis, analyze_module
from aiscan.errors import Severity
from aiscan.ir.nodes import Function, Loop, Module, Node, Region, Statement
from aiscan.lint.certainty import surely_positive
from aiscan.lint.context import LintContext
from aiscan.lint.figures import bytes_text, intensity_text
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["UnfusedNests"]


class UnfusedNests(Rule):
    """## What it does
    Flags a loop nest that reads arrays the loop nest just before it also touches, when
    fusing the two is certainly legal and would lower the compulsory traffic. The message
    gives the bytes and the intensity before and after fusion, computed by analyzing the
    fused nest.

    Fusion is judged legal only in the plain case: both nests have the same loop headers
    (variables, starts, steps, trip counts), are perfectly nested with straight-line
    bodies, every statement stores to one array element, and every array that either nest
    writes is accessed at one and the same index throughout both. Anything else (scalar
    reductions, branches, different bounds, shifted indices, unknowns) keeps it silent.

    ## Why is this bad?
    Between two nests the cache starts cold again for large arrays: an array read by both
    crosses the memory bus twice. One fused loop reads it once, which raises the intensity
    of a memory-bound kernel and with it the attainable FLOP rate.

    ## Example
    ```c
    for (int i = 0; i < n; i++) a[i] = buf[i] + b[i];
    for (int i = 0; i < n; i++) c[i] = buf[i] + d[i];  // 48n bytes, AI 1/24
    ```
    Use instead:
    ```c
    for (int i = 0; i < n; i++) { a[i] = buf[i] + b[i]; c[i] = buf[i] + d[i]; }  // 40n, 1/20
    ```

    ## Options
    None.

    ## References
    - K. Kennedy, J. R. Allen, "Optimizing Compilers for Modern Architectures", ch. 8
      (loop fusion), Morgan Kaufmann, 2001.
    """

    code = "AIS002"
    name = "unfused-nests"
    severity = Severity.WARNING

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        write_allocate = context.analysis.write_allocate
        for function in context.analysis.functions:
            regions = function.regions
            for first, second in itertools.pairwise(regions):
                fused = _fused_region(first, second)
                if fused is None:
                    continue
                shared = _shared_arrays(first.region, second.region)
                module = Module(
                    context.path,
                    context.analysis.module.language,
                    (Function(function.function.name, fused.span, (fused,)),),
                )
                options_at_sizes = dataclasses.replace(
                    context.analysis_options, sizes=dict(context.sizes)
                )
                merged = analyze_module(module, options_at_sizes).functions[0].regions[0]
                apart = expand(
                    first.traffic["compulsory"].total(write_allocate)
                    + second.traffic["compulsory"].total(write_allocate)
                )
                together = merged.traffic["compulsory"].total(write_allocate)
                if not surely_positive(apart - together, context.sizes):
                    continue
                flops = merged.flops.total
                before = intensity(flops, apart).expr if flops != 0 else None
                after = merged.intensity["compulsory"].expr if flops != 0 else None
                sizes = dict(context.sizes)
                first_lines = first.region.span.lines()
                message = (
                    f"this loop nest re-reads {', '.join(shared)} after the nest at lines "
                    f"{first_lines}; fused, compulsory traffic falls from "
                    f"{bytes_text(apart)} to {bytes_text(together)}"
                )
                if before is not None and after is not None:
                    message += (
                        f" and AI rises from {intensity_text(before, sizes)} to "
                        f"{intensity_text(after, sizes)}"
                    )
                yield self.finding(
                    second.region.span,
                    message,
                    (
                        ("other nest", f"lines {first_lines}"),
                        ("shared arrays", ", ".join(shared)),
                        ("bytes apart", str(apart)),
                        ("bytes fused", str(together)),
                        ("FLOPs", str(flops)),
                    ),
                )


def _fused_region(first: RegionAnalysis, second: RegionAnalysis) -> Region | None:
    """The two nests as one, when fusing them is certainly legal; else None."""
    a, b = first.region, second.region
    if a.kind != "nest" or b.kind != "nest" or a.eager_calls or b.eager_calls:
        return None
    if first.unknowns or second.unknowns:
        return None
    chain_a, chain_b = _perfect_chain(a.body), _perfect_chain(b.body)
    if chain_a is None or chain_b is None:
        return None
    loops_a, body_a = chain_a
    loops_b, body_b = chain_b
    if len(loops_a) != len(loops_b) or not all(map(_same_header, loops_a, loops_b)):
        return None
    if not _fusion_legal(body_a, body_b) or not _shared_arrays(a, b):
        return None
    body: tuple[Node, ...] = (*body_a, *body_b)
    for loop in reversed(loops_a):
        body = (dataclasses.replace(loop, body=body),)
    return Region("nest", body, a.span.through(b.span))


def _perfect_chain(body: tuple[Node, ...]) -> tuple[list[Loop], list[Statement]] | None:
    loops: list[Loop] = []
    while len(body) == 1 and isinstance(body[0], Loop):
        loops.append(body[0])
        body = body[0].body
    if not loops or not all(isinstance(node, Statement) for node in body):
        return None
    return loops, [node for node in body if isinstance(node, Statement)]


def _same_header(x: Loop, y: Loop) -> bool:
    return (
        x.var == y.var
        and x.step == y.step
        and expand(x.start - y.start) == 0
        and expand(x.trip - y.trip) == 0
        and not x.unknowns
        and not y.unknowns
    )


def _fusion_legal(first: Sequence[Statement], second: Sequence[Statement]) -> bool:
    statements = [*first, *second]
    # One array store per statement: no scalar carried from one nest into the other.
    if any(sum(a.is_write for a in s.accesses) != 1 or s.unknowns for s in statements):
        return False
    accesses = [a for s in statements for a in s.accesses]
    if any(a.index is None for a in accesses):
        return False
    written = {a.array for a in accesses if a.is_write}
    for array in written:
        indices = {tuple(expand(e) for e in a.index or ()) for a in accesses if a.array == array}
        if len(indices) != 1:
            return False
    return True


def _shared_arrays(first: Region, second: Region) -> list[str]:
    """Arrays the second nest reads that the first nest touched."""
    touched = {a.array for s in _statements(first.body) for a in s.accesses}
    read = [a.array for s in _statements(second.body) for a in s.accesses if not a.is_write]
    return sorted(set(read) & touched)


def _statements(body: tuple[Node, ...]) -> Iterator[Statement]:
    for node in body:
        if isinstance(node, Statement):
            yield node
        elif isinstance(node, Loop):
            yield from _statements(node.body)
