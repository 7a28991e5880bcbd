"""Entry point of the Triton frontend: a Python file's `@triton.jit` kernels, one IR
function per launch the file makes of them (or per kernel it never launches).

The rest of the file belongs to the Python frontend; `merged` puts the two together,
leaving out what the Python frontend said about the kernels and about the launch lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from aiscan.algebra import as_expression
from aiscan.frontends.triton import dtypes
from aiscan.frontends.triton.autotune import autotune_configs
from aiscan.frontends.triton.helpers import called_helpers
from aiscan.frontends.triton.kernel import KernelBinding, lower_kernel
from aiscan.frontends.triton.launch import Launch, find_launches
from aiscan.frontends.triton.pointers import pointer_parameters
from aiscan.frontends.triton.tiles import Pointer, Tile
from aiscan.ir.nodes import Branch, Function, Loop, Module, Node, Statement, Unknown, UnknownKind
from aiscan.ir.symbols import size_symbol
from aiscan.span import Span

__all__ = ["TritonKernels", "has_triton_kernels", "lower_triton_kernels", "merged"]


@dataclass(frozen=True, slots=True)
class TritonKernels:
    """The launches of a file's kernels, and what the Python frontend must leave to them."""

    functions: tuple[Function, ...]
    kernel_names: frozenset[str]
    launch_lines: frozenset[int]
    """Lines of the host wrappers the Triton frontend read (launches, grids)."""


def has_triton_kernels(text: str) -> bool:
    """A cheap test before parsing: only files that mention `triton` can have kernels."""
    return "triton" in text and "jit" in text


def lower_triton_kernels(text: str, path: str, configs: str = "first") -> TritonKernels:
    """The IR of every launch of every `@triton.jit` kernel in `text` (already checked to
    parse by the Python frontend); `configs`: an autotuned kernel's first config, or
    `all`."""
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    module = wrapper.module
    kernels = {
        s.name.value: s
        for s in module.body
        if isinstance(s, cst.FunctionDef) and any(_is_jit(d.decorator) for d in s.decorators)
    }
    if not kernels:
        return TritonKernels((), frozenset(), frozenset())
    autotuned = {
        name: found
        for name, kernel in kernels.items()
        if (found := autotune_configs(kernel, module, positions, path)) is not None
    }
    launches = find_launches(module, positions, path, kernels, autotuned, configs)
    helpers = called_helpers(kernels)
    functions: list[Function] = []
    for name, kernel in kernels.items():
        own = [launch for launch in launches if launch.kernel == name]
        if not own and name in helpers:
            continue  # inlined where it is called
        bindings = [_launched(kernel, launch, kernels) for launch in own] or [
            _unlaunched(kernel, path, positions[kernel].start.line, kernels)
        ]
        for binding in bindings:
            functions.append(lower_kernel(kernel, positions, path, module, binding, kernels))
    lines = frozenset(line for launch in launches for line in launch.lines)
    return TritonKernels(tuple(functions), frozenset(kernels), lines)


def _is_jit(decorator: cst.BaseExpression) -> bool:
    if isinstance(decorator, cst.Call):
        decorator = decorator.func
    if isinstance(decorator, cst.Attribute):
        return decorator.attr.value == "jit" and _root(decorator) == "triton"
    return isinstance(decorator, cst.Name) and decorator.value == "jit"


def _root(node: cst.BaseExpression) -> str | None:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _unlaunched(
    kernel: cst.FunctionDef, path: str, line: int, jitted: Mapping[str, cst.FunctionDef]
) -> KernelBinding:
    """No launch in the file: every size, stride and block constant a symbol of its own
    name, the grid a symbol per axis, pointers float32 (said on the kernel's line)."""
    pointers = pointer_parameters(kernel, jitted)
    values: dict[str, Tile | Pointer] = {}
    strides: set[str] = set()
    for param in kernel.params.params:
        name = param.name.value
        if name in pointers:
            values[name] = Pointer(name, dtypes.FLOAT32, Tile((), index=as_expression(0)))
        else:
            values[name] = Tile((), index=size_symbol(name))
            if name.startswith("stride"):
                strides.add(name)
    notes = []
    if pointers:
        notes.append(
            Unknown(
                UnknownKind.ASSUMPTION,
                f"no launch of `{kernel.name.value}` in this file: grid and block sizes are "
                f"symbols; pointers {', '.join(sorted(pointers))} taken as float32",
                Span(path, line),
            )
        )
    return KernelBinding(kernel.name.value, values, None, frozenset(strides), tuple(notes))


def _launched(
    kernel: cst.FunctionDef, launch: Launch, jitted: Mapping[str, cst.FunctionDef]
) -> KernelBinding:
    """The kernel's parameters as the launch passes them."""
    pointers = pointer_parameters(kernel, jitted)
    values: dict[str, Tile | Pointer] = {}
    strides: set[str] = set(launch.strides)
    notes: list[Unknown] = list(launch.notes)
    assumed: list[str] = []
    for position, param in enumerate(kernel.params.params):
        name = param.name.value
        argument = launch.argument(name, position)
        if argument is None and param.default is not None:
            argument = launch.default(param.default)
        if argument is None:
            values[name] = Tile((), index=size_symbol(name))
            continue
        if argument.tensor is not None and (name in pointers or argument.index is None):
            element = argument.tensor.element
            if element is None:
                element = dtypes.FLOAT32
                assumed.append(f"{argument.tensor.name} (for {name})")
            values[name] = Pointer(argument.tensor.name, element, Tile((), index=as_expression(0)))
        elif name in pointers:
            values[name] = Pointer(name, dtypes.FLOAT32, Tile((), index=as_expression(0)))
            assumed.append(name)
        elif argument.index is None:
            values[name] = Tile((), index=size_symbol(name))
        else:
            values[name] = Tile((), index=argument.index)
            if name.startswith("stride") and argument.index is not None:
                strides |= {str(s) for s in argument.index.free_symbols}
    if assumed:
        notes.append(
            Unknown(
                UnknownKind.ASSUMPTION,
                f"dtype of {', '.join(assumed)} not given by the host code: taken as float32",
                launch.span,
            )
        )
    return KernelBinding(launch.label, values, launch.grid, frozenset(strides), tuple(notes))


def merged(python: Module, triton: TritonKernels) -> Module:
    """The Python frontend's module with the kernels replaced by their launches, and its
    unknowns on the launch lines (calls it cannot read) left to the Triton frontend."""
    if not triton.kernel_names:
        return python
    kept = []
    for function in python.functions:
        if function.name in triton.kernel_names:
            continue
        kept.append(_without_lines(function, triton.launch_lines))
    diagnostics = tuple(d for d in python.diagnostics if d.span.line not in triton.launch_lines)
    return replace(python, functions=(*kept, *triton.functions), diagnostics=diagnostics)


def _without_lines(function: Function, lines: frozenset[int]) -> Function:
    if not lines:
        return function
    regions = tuple(
        replace(r, body=tuple(_strip(n, lines) for n in r.body)) for r in function.regions
    )
    unknowns = tuple(u for u in function.unknowns if u.span.line not in lines)
    return replace(function, regions=regions, unknowns=unknowns)


def _strip(node: Node, lines: frozenset[int]) -> Node:
    if isinstance(node, Loop):
        return replace(
            node,
            body=tuple(_strip(n, lines) for n in node.body),
            unknowns=_kept(node.unknowns, lines),
        )
    if isinstance(node, Branch):
        return replace(
            node,
            then_body=tuple(_strip(n, lines) for n in node.then_body),
            else_body=tuple(_strip(n, lines) for n in node.else_body),
        )
    assert isinstance(node, Statement)
    kept = _kept(node.unknowns, lines)
    return node if kept == node.unknowns else replace(node, unknowns=kept)


def _kept(unknowns: Iterable[Unknown], lines: frozenset[int]) -> tuple[Unknown, ...]:
    return tuple(u for u in unknowns if u.span.line not in lines)
