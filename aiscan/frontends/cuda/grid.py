"""One launch of a kernel as IR: the C lowering's grid loops given the launch's trips,
the loops of axes the launch does not use removed, grid-stride loops taken out of their
axis' loops, shared-memory accesses set apart, atomics to one address said."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from aiscan.algebra import SYMPY, normal, to_sympy
from aiscan.frontends.cuda.launches import AXES, Launch
from aiscan.frontends.cuda.translation import KernelText
from aiscan.ir.nodes import (
    Access,
    Branch,
    FlopTally,
    Function,
    GpuLaunch,
    Loop,
    Node,
    Region,
    Statement,
    Unknown,
    UnknownKind,
)
from aiscan.ir.substitution import substituted
from aiscan.ir.symbols import loop_symbol, size_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["launched"]

_BLOCK_VARS = tuple(f"blockIdx_{a}" for a in AXES)
_THREAD_VARS = tuple(f"threadIdx_{a}" for a in AXES)
GRID_VARS = frozenset(_BLOCK_VARS + _THREAD_VARS)
_THREAD_NAME = re.compile(r"\bthreadIdx_[xyz]\b")


def launched(function: Function, kernel: KernelText, launch: Launch | None) -> Function:
    """`function` (the kernel as the C frontend lowered it) for one launch, or for none:
    the grid and block of the axes the kernel reads stay symbols, the others are 1."""
    one = sympy.Integer(1)
    mapping: dict[Any, Any] = {}
    grid: list[Any] = []
    block: list[Any] = []
    for index, axis in enumerate(AXES):
        for kind, chosen in (("gridDim", grid), ("blockDim", block)):
            name = f"{kind}_{axis}"
            if launch is not None:
                value = to_sympy((launch.grid if kind == "gridDim" else launch.block)[index])
            else:
                value = to_sympy(size_symbol(name)) if axis in kernel.axes else one
            chosen.append(normal(value))
            mapping[to_sympy(size_symbol(name))] = value
    if launch is not None:
        for position, value in launch.arguments:
            index = int(position)
            if (
                index < len(kernel.parameters)
                and kernel.parameters[index] in kernel.size_parameters
            ):
                name = kernel.parameters[index]
                if to_sympy(value) != to_sympy(size_symbol(name)):
                    mapping[to_sympy(size_symbol(name))] = to_sympy(value)
    given = launch.template_arguments if launch is not None else ()
    for index, (name, default) in enumerate(kernel.template_parameters):
        value = given[index] if index < len(given) else default
        if value is not None:
            mapping[to_sympy(size_symbol(name))] = to_sympy(value)
    regions = tuple(
        _region(
            r,
            kernel,
            mapping,
            GpuLaunch(
                kernel.name,
                tuple(grid),
                tuple(block),
                _origin(launch),
                tuple(sorted({line for line, _, _ in kernel.atomics})),
            ),
        )
        for r in function.regions
    )
    unknowns = list(function.unknowns)
    if launch is None:
        symbols = [
            f"{kind}_{axis}"
            for kind in ("gridDim", "blockDim")
            for axis in AXES
            if axis in kernel.axes
        ]
        unknowns.append(
            Unknown(
                UnknownKind.ASSUMPTION,
                f"no launch of `{kernel.name}` (none in the file, no --launch): the grid and the "
                f"block are the symbols {', '.join(symbols) or 'of no axis'}; guarded counts "
                "assume the grid covers the range it guards",
                kernel.span,
            )
        )
    unknowns += _atomic_notes(regions, kernel)
    name = kernel.name if launch is None else f"{kernel.name} ({launch.origin})"
    return replace(function, name=name, regions=regions, unknowns=tuple(unknowns))


def _origin(launch: Launch | None) -> str:
    return "no launch" if launch is None else launch.origin


def _region(
    region: Region, kernel: KernelText, mapping: Mapping[Any, Any], record: GpuLaunch
) -> Region:
    body = tuple(substituted(n, mapping) for n in region.body)
    body = _unwrapped(body)
    body = _grid_strides_hoisted(body, kernel)
    main = _kept(body, kernel.shared, shared_side=False)
    shared = _kept(body, kernel.shared, shared_side=True)
    return replace(
        region,
        body=main,
        gpu_launch=True,
        useful=main,
        shared_memory=shared if kernel.shared else (),
        launch=record,
    )


def _unwrapped(body: tuple[Node, ...]) -> tuple[Node, ...]:
    """Grid loops of one iteration (an axis the launch leaves at 1) removed, their
    variable 0 in what they held."""
    result: list[Node] = []
    for node in body:
        if isinstance(node, Loop) and node.var in GRID_VARS:
            inner = _unwrapped(node.body)
            if node.trip == 1:
                zero = {to_sympy(loop_symbol(node.var)): sympy.Integer(0)}
                result.extend(substituted(n, zero) for n in inner)
                continue
            result.append(replace(node, body=inner))
        else:
            result.append(node)
    return tuple(result)


def _grid_strides_hoisted(body: tuple[Node, ...], kernel: KernelText) -> tuple[Node, ...]:
    """A grid-stride loop (`translation.py` made it `for (i = 0; i < n; i++)`) runs over
    its range once for all the blocks and threads of its axis together: it leaves their
    loops (a block-stride loop, its threads' loop), and the statements before and after
    it keep them (in that order)."""
    strides = dict(kernel.grid_strides)
    if not strides:
        return body
    chain: list[Loop] = []
    inner = body
    while len(inner) == 1 and isinstance(inner[0], Loop) and inner[0].var in GRID_VARS:
        chain.append(inner[0])
        inner = inner[0].body
    pieces: list[Node] = []
    pending: list[Node] = []

    def flush() -> None:
        if pending:
            pieces.extend(_wrapped(tuple(pending), chain, ()))
            pending.clear()

    for node in inner:
        leaves = strides.get(node.span.line) if isinstance(node, Loop) else None
        if leaves is None:
            pending.append(node)
            continue
        flush()
        pieces.extend(_wrapped((node,), chain, leaves))
    flush()
    return tuple(pieces)


def _wrapped(
    nodes: tuple[Node, ...], chain: list[Loop], leaves: tuple[str, ...]
) -> tuple[Node, ...]:
    for loop in reversed(chain):
        if loop.var in leaves:
            continue
        nodes = (replace(loop, body=nodes),)
    return nodes


def _kept(body: tuple[Node, ...], shared: frozenset[str], *, shared_side: bool) -> tuple[Node, ...]:
    """`body` with only its accesses to shared arrays (`shared_side`) or only the others;
    the arithmetic stays with the global side, and loops and branches left empty go (a
    branch that only stores to shared memory is counted there, not named here)."""
    result: list[Node] = []
    for node in body:
        if isinstance(node, Loop):
            inner = _kept(node.body, shared, shared_side=shared_side)
            if inner:
                result.append(replace(node, body=inner))
        elif isinstance(node, Branch):
            then_body = _kept(node.then_body, shared, shared_side=shared_side)
            else_body = _kept(node.else_body, shared, shared_side=shared_side)
            condition = _only(node.condition, shared, shared_side)
            work = not condition.flops.is_zero() or bool(condition.unknowns)
            if then_body or else_body or condition.accesses or (work and not shared_side):
                result.append(
                    replace(node, condition=condition, then_body=then_body, else_body=else_body)
                )
        else:
            kept = _only(node, shared, shared_side)
            work = not kept.flops.is_zero() or bool(kept.unknowns)
            if kept.accesses or (work and not shared_side):
                result.append(kept)
    return tuple(result)


def _only(statement: Statement, shared: frozenset[str], shared_side: bool) -> Statement:
    accesses = tuple(a for a in statement.accesses if (a.array in shared) == shared_side)
    if not shared_side:
        return replace(statement, accesses=accesses)
    return replace(statement, accesses=accesses, flops=FlopTally(), special_calls=(), unknowns=())


def _atomic_notes(regions: tuple[Region, ...], kernel: KernelText) -> list[Unknown]:
    """An `atomicAdd` whose target does not depend on the block or the thread, made by
    every thread (no condition on the thread picks some): every thread updates one
    address, and the atomic unit, not bandwidth, bounds the launch. One thread of each
    block (`if (threadIdx.x == 0)`, a block-reduced sum) is not said."""
    notes: list[Unknown] = []
    grid_symbols = {to_sympy(loop_symbol(v)) for v in GRID_VARS}
    for line, array, function in kernel.atomics:
        writes = [
            (a, conditions)
            for r in regions
            for a, conditions in _accesses(r.body, ())
            if a.is_write and a.array == array and a.span.line == line
        ]
        if not writes:
            continue
        write, conditions = writes[0]
        if write.index is None:
            continue
        if any(to_sympy(i).free_symbols & grid_symbols for i in write.index):
            continue
        if any(_THREAD_NAME.search(condition) for condition in conditions):
            continue
        notes.append(
            Unknown(
                UnknownKind.ATOMIC_CONTENTION,
                f"{function} to one address ({write.text}) from every thread: the atomic "
                "unit serializes these updates, so atomic throughput, not bandwidth, bounds "
                "this launch and its roofline time is optimistic",
                write.span,
            )
        )
    return notes


def _accesses(
    body: tuple[Node, ...], conditions: tuple[str, ...]
) -> list[tuple[Access, tuple[str, ...]]]:
    """Every access under `body`, with the conditions of the branches around it."""
    found: list[tuple[Access, tuple[str, ...]]] = []
    for node in body:
        if isinstance(node, Loop):
            found += _accesses(node.body, conditions)
        elif isinstance(node, Branch):
            inside = (*conditions, node.condition.text)
            found += [(a, conditions) for a in node.condition.accesses]
            found += _accesses(node.then_body, inside)
            found += _accesses(node.else_body, inside)
        else:
            found += [(a, conditions) for a in node.accesses]
    return found
