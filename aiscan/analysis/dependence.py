"""Chains of dependent floating-point operations carried from one loop iteration to the next.

An iteration that needs the value the previous one computed cannot start its operations
before that value exists: a sum `s += a[i]*b[i]` that C forbids the compiler to reassociate
(no `-ffast-math`), a recurrence `x[i] = f(x[i-1])`, a Gauss-Seidel sweep. Such a loop runs
at most one iteration per latency of the operations on the chain, whatever the bandwidth:
the part of the ECM model's in-core analysis (Kerncraft with OSACA) that a roofline needs.

A chain is found within one assignment, through the loop that directly encloses it: the
value it stores is an input of the next iteration's execution (a scalar updated in place,
an element whose index does not move with the loop, or the element `d` iterations back).
Chains that run through several statements are not followed (the bound stays a lower
bound on time, never above it).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, expand, is_poly
from aiscan.analysis.flops import executions
from aiscan.analysis.walk import Placed, placed_statements
from aiscan.ir.nodes import ChainInput, Dataflow, Loop, Node
from aiscan.ir.symbols import loop_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["DEFAULT_CFLAGS", "CompilerFlags", "DependenceChain", "compiler_flags", "find_chains"]

DEFAULT_CFLAGS = "-O3"
_REASSOCIATING = frozenset(
    {"-ffast-math", "-Ofast", "-fassociative-math", "-funsafe-math-optimizations"}
)
_RECIPROCAL = frozenset(
    {"-ffast-math", "-Ofast", "-freciprocal-math", "-funsafe-math-optimizations"}
)
_FMA_TARGETS = ("-march=", "-mcpu=", "-mfma")
_ADDS = frozenset({"add", "add-fusable"})


@dataclass(frozen=True, slots=True)
class CompilerFlags:
    """What the compiler may do to a chain of floating-point operations.

    `reassociate`: split a sum or product into partial ones (`-ffast-math`, `-Ofast`,
    `-fassociative-math`), which breaks an accumulator's chain and puts one add of a sum on
    a recurrence's. `reciprocal`: a division by a value off the chain becomes a multiply by
    its reciprocal (`-freciprocal-math`, in `-ffast-math`). `contract`: fuse a multiply
    and the add of its product into one FMA; GCC does so by default where the target has
    FMA instructions, so it is assumed with an `-march`/`-mcpu`/`-mfma` flag and not
    without one (an x86-64 baseline target has none), and never with `-ffp-contract=off`
    or an ISO `-std=c..` mode."""

    text: str
    reassociate: bool
    contract: bool
    reciprocal: bool = False


def compiler_flags(text: str | None) -> CompilerFlags:
    """Read a command line's flags (`"-O3 -march=native -ffast-math"`); the default is
    `-O3`, which allows contraction on an FMA target and no reassociation."""
    text = DEFAULT_CFLAGS if text is None or not text.strip() else text.strip()
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    reassociate = any(w in _REASSOCIATING for w in words) and "-fno-fast-math" not in words
    iso = any(w.startswith("-std=c") for w in words)
    contract = (
        any(w.startswith(_FMA_TARGETS) for w in words)
        and "-ffp-contract=off" not in words
        and "-mno-fma" not in words
        and not (iso and "-ffp-contract=fast" not in words)
    )
    reciprocal = any(w in _RECIPROCAL for w in words) and "-fno-fast-math" not in words
    return CompilerFlags(text, reassociate, contract, reciprocal)


@dataclass(frozen=True, slots=True)
class DependenceChain:
    """One loop-carried chain: `operations` are the ones one iteration waits for, in order,
    after contraction (`fma`, `add`, `mul`, `div`, `special`), and `distance` how many
    iterations apart the producer and its consumer are (distance-d chains interleave d)."""

    line: int
    loop_line: int
    loop_var: str
    kind: str
    """`accumulator` (a value updated in place) or `recurrence` (x[i] from x[i - d])."""
    variable: str
    operations: tuple[str, ...]
    distance: int
    iterations: sympy.Expr
    """Executions of the statement: iterations of the chain, all threads together."""
    precision: str


def find_chains(body: tuple[Node, ...], flags: CompilerFlags) -> tuple[DependenceChain, ...]:
    """The loop-carried chains of a region's statements under the compiler's flags."""
    placed = placed_statements(body)
    chains = []
    for entry in placed:
        flow = entry.statement.dataflow
        if flow is None or not entry.loops:
            continue
        loop = entry.loops[-1]
        for found in _carried(flow, loop, entry, placed):
            kind, distance, operations = found
            if kind == "accumulator" and flags.reassociate and set(operations) <= _ADDS | {"mul"}:
                continue  # the compiler may split it into independent partial sums
            chains.append(
                DependenceChain(
                    entry.statement.span.line,
                    loop.span.line,
                    loop.var,
                    kind,
                    flow.target,
                    _compiled(operations, flags),
                    distance,
                    executions(entry),
                    _precision(entry),
                )
            )
    return tuple(chains)


def _carried(
    flow: Dataflow, loop: Loop, entry: Placed, placed: Sequence[Placed]
) -> list[tuple[str, int, tuple[str, ...]]]:
    """(kind, distance, operations) for each input that the statement's own earlier
    executions produced."""
    found = []
    for leaf in flow.inputs:
        if leaf.name != flow.target or leaf.is_scalar != flow.is_scalar or not leaf.operations:
            continue
        if flow.is_scalar:
            if not _set_before_in_iteration(flow.target, loop, entry, placed):
                found.append(("accumulator", 1, leaf.operations))
            continue
        carried = _distance(leaf, flow, loop)
        if carried is not None:
            found.append((*carried, leaf.operations))
    return found


def _set_before_in_iteration(
    name: str, loop: Loop, entry: Placed, placed: Sequence[Placed]
) -> bool:
    """Is the scalar assigned earlier in the same iteration (`t = a[i]; t += b[i]`)? Its
    value then comes from that assignment, not from the previous iteration."""
    for other in placed:
        if other.order >= entry.order or loop not in other.loops:
            continue
        flow = other.statement.dataflow
        if flow is not None and flow.is_scalar and flow.target == name:
            return True
    return False


def _distance(leaf: ChainInput, flow: Dataflow, loop: Loop) -> tuple[str, int] | None:
    """How many iterations of `loop` back the element `leaf` reads was stored: the same
    element every iteration (an accumulator), or `x[i - d]` read where `x[i]` is stored."""
    if leaf.index is None or flow.index is None or len(leaf.index) != len(flow.index):
        return None
    var = loop_symbol(loop.var)
    distances = set()
    moves = False
    for read, written in zip(leaf.index, flow.index, strict=True):
        gap, slope = expand(read - written), expand(written)
        if not (is_poly(gap) and is_poly(slope)) or slope.degree(var) > 1:
            return None
        coefficient = slope.coeff(var)
        offset = gap.constant_value()
        rate = coefficient.constant_value() if is_poly(coefficient) else None
        if offset is None or rate is None:
            return None  # a gap or a slope that depends on other variables: not followed
        moves = moves or rate != 0
        if rate == 0:
            if offset != 0:
                return None  # another element in every iteration
            continue
        distance = Fraction(-offset) / (rate * loop.step)
        if distance.denominator != 1 or distance < 1:
            return None
        distances.add(int(distance))
    if not moves:
        return "accumulator", 1
    if len(distances) != 1:
        return None
    return "recurrence", distances.pop()


def _compiled(operations: tuple[str, ...], flags: CompilerFlags) -> tuple[str, ...]:
    """The chain as the compiler may emit it: a multiply and the add of its product as one
    FMA where it fuses them; a run of adds as one add and a division as a multiply where
    it may reassociate and use reciprocals (the shortest chain it could make: a bound)."""
    result: list[str] = []
    for operation in operations:
        if operation == "add-fusable" and flags.contract:
            if result and result[-1] == "mul":
                result.pop()
            result.append("fma")
            continue
        operation = "add" if operation == "add-fusable" else operation
        if operation == "div" and flags.reciprocal:
            operation = "mul"
        if operation == "add" and flags.reassociate and result and result[-1] == "add":
            continue
        result.append(operation)
    return tuple(result)


def _precision(entry: Placed) -> str:
    floats = [a.element.precision for a in entry.statement.accesses if a.element.is_float]
    return floats[0] if floats else "fp64"
