"""The host wrappers around kernels: `kernel[grid](args..., BLOCK=...)` and what fixes its
sizes (`M, K = a.shape`, `n = x.numel()`), dtypes (`torch.empty_like(x)`,
`dtype=torch.float16`) and grid (a tuple, or `lambda meta: (triton.cdiv(n,
meta["BLOCK"]),)`).

The wrapper is read in order, statement by statement, never run. An integer it cannot
derive becomes a size named after the variable that holds it, so the counts stay exact in
that name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst
from libcst.metadata import CodeRange

from aiscan.algebra import SYMPY, as_expression
from aiscan.frontends.triton import dtypes
from aiscan.frontends.triton.autotune import Config, Configs, selection_note
from aiscan.frontends.triton.spans import span_of
from aiscan.frontends.triton.tiles import cdiv
from aiscan.ir.nodes import ElementType, Unknown, UnknownKind
from aiscan.ir.symbols import size_symbol
from aiscan.span import Span

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["Argument", "Launch", "Tensor", "find_launches"]

_ALLOCATIONS = frozenset({"empty", "zeros", "ones", "full", "rand", "randn", "empty_strided"})
_LIKE = frozenset({"empty_like", "zeros_like", "ones_like", "rand_like", "randn_like", "full_like"})


@dataclass(frozen=True, slots=True)
class Tensor:
    """A torch tensor of the host code: its name, and its dtype where the code gives it."""

    name: str
    element: ElementType | None


@dataclass(frozen=True, slots=True)
class Argument:
    """What the launch passes for one parameter: a tensor, an integer, or (an un-annotated
    wrapper parameter) either, the kernel's use deciding."""

    tensor: Tensor | None = None
    index: sympy.Expr | None = None


@dataclass(frozen=True, slots=True)
class Launch:
    kernel: str
    label: str
    span: Span
    grid: tuple[sympy.Expr, ...] | None
    positional: tuple[Argument, ...]
    keywords: Mapping[str, Argument]
    strides: frozenset[str]
    lines: frozenset[int]
    notes: tuple[Unknown, ...] = ()

    def argument(self, name: str, position: int) -> Argument | None:
        if name in self.keywords:
            return self.keywords[name]
        return self.positional[position] if position < len(self.positional) else None

    def default(self, node: cst.BaseExpression) -> Argument | None:
        if isinstance(node, cst.Integer):
            return Argument(index=as_expression(int(node.value, 0)))
        return None


@dataclass
class _Wrapper:
    """The host function as read so far."""

    name: str
    path: str
    positions: Mapping[cst.CSTNode, CodeRange]
    values: dict[str, Argument] = field(default_factory=dict)
    grids: dict[str, cst.BaseExpression] = field(default_factory=dict)
    strides: set[str] = field(default_factory=set)
    lines: set[int] = field(default_factory=set)

    def read_lines(self, node: cst.CSTNode) -> None:
        where = self.positions[node]
        self.lines.update(range(where.start.line, where.end.line + 1))


def find_launches(
    module: cst.Module,
    positions: Mapping[cst.CSTNode, CodeRange],
    path: str,
    kernels: Mapping[str, cst.FunctionDef],
    autotuned: Mapping[str, Configs] | None = None,
    chosen: str = "first",
) -> list[Launch]:
    """Every `kernel[grid](...)` in the file's top-level functions, in order; a kernel
    with autotune configs launched once per config `chosen` (the first, or all)."""
    autotuned = autotuned or {}
    launches: list[Launch] = []
    for statement in module.body:
        if not isinstance(statement, cst.FunctionDef) or statement.name.value in kernels:
            continue
        wrapper = _Wrapper(statement.name.value, path, positions)
        for param in statement.params.params:
            name = param.name.value
            element = _annotated_dtype(param.annotation)
            wrapper.values[name] = Argument(Tensor(name, element), size_symbol(name))
        for small in _simple_statements(statement.body):
            launches.extend(_read(small, wrapper, kernels, autotuned, chosen))
    return launches


_JAXTYPING: Mapping[str, str] = {
    "Float16": "float16",
    "BFloat16": "bfloat16",
    "Float32": "float32",
    "Float64": "float64",
    "Int8": "int8",
    "Int32": "int32",
    "Int64": "int64",
}


def _annotated_dtype(annotation: cst.Annotation | None) -> ElementType | None:
    """The dtype a jaxtyping annotation gives a tensor parameter (`Float16[Tensor, "M
    K"]`, quoted or not)."""
    if annotation is None:
        return None
    node = annotation.annotation
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        try:
            node = cst.parse_expression(text) if isinstance(text, str) else node
        except cst.ParserSyntaxError:
            return None
    if not isinstance(node, cst.Subscript):
        return None
    head = node.value
    name = head.attr.value if isinstance(head, cst.Attribute) else getattr(head, "value", None)
    found = _JAXTYPING.get(name) if isinstance(name, str) else None
    return dtypes.dtype_named(found) if found is not None else None


def _simple_statements(block: cst.BaseSuite) -> Iterator[cst.BaseSmallStatement]:
    body = block.body if isinstance(block, cst.IndentedBlock) else ()
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            yield from statement.body
        elif isinstance(statement, cst.If | cst.With):
            yield from _simple_statements(statement.body)


def _read(
    small: cst.BaseSmallStatement,
    wrapper: _Wrapper,
    kernels: Mapping[str, cst.FunctionDef],
    autotuned: Mapping[str, Configs],
    chosen: str,
) -> list[Launch]:
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        _assign(small.targets[0].target, small.value, wrapper)
        return []
    if isinstance(small, cst.AnnAssign) and small.value is not None:
        _assign(small.target, small.value, wrapper)
        return []
    value = small.value if isinstance(small, cst.Expr | cst.Return) else None
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Subscript):
        target = value.func.value
        if isinstance(target, cst.Name) and target.value in kernels:
            configs = autotuned.get(target.value)
            if configs is None:
                return [_launch(value, target.value, wrapper)]
            note = selection_note(configs, chosen)
            used = configs.configs if chosen == "all" else configs.configs[:1]
            if not used:
                return [_launch(value, target.value, wrapper, None, note)]
            return [_launch(value, target.value, wrapper, c, note) for c in used]
    return []


def _assign(target: cst.BaseExpression, value: cst.BaseExpression, wrapper: _Wrapper) -> None:
    if isinstance(target, cst.Tuple) and _is_shape(value):
        # `M, K = a.shape`: each a size of its own name.
        for element in target.elements:
            if isinstance(element.value, cst.Name):
                wrapper.values[element.value.value] = Argument(
                    index=size_symbol(element.value.value)
                )
        return
    if not isinstance(target, cst.Name):
        return
    name = target.value
    if isinstance(value, cst.Lambda | cst.Tuple):
        wrapper.grids[name] = value
        wrapper.read_lines(value)
        if isinstance(value, cst.Lambda):
            return
    tensor = _tensor(value, name, wrapper)
    if tensor is not None:
        wrapper.values[name] = Argument(tensor)
        return
    index = _integer(value, wrapper, {})
    if index is None or _reads_tensor(value):
        # `n = x.numel()`, `BLOCK = triton.next_power_of_2(n)`: a size of this name.
        index = size_symbol(name)
        wrapper.read_lines(value)
    wrapper.values[name] = Argument(index=index)


def _is_shape(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "shape"


def _reads_tensor(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value in ("numel", "size", "stride", "dim")
    return isinstance(node, cst.Subscript) and _is_shape(node.value)


def _tensor(node: cst.BaseExpression, name: str, wrapper: _Wrapper) -> Tensor | None:
    """A torch allocation (`torch.empty(..., dtype=torch.float16)`, `torch.empty_like(x)`)
    or a tensor method that keeps its dtype (`x.contiguous()`)."""
    if not isinstance(node, cst.Call):
        if isinstance(node, cst.Name):
            found = wrapper.values.get(node.value)
            return found.tensor if found is not None and found.index is None else None
        return None
    func = node.func
    if not isinstance(func, cst.Attribute):
        return None
    method = func.attr.value
    given = _keyword_dtype(node)
    if method in _LIKE and node.args:
        source = node.args[0].value
        like = wrapper.values.get(source.value) if isinstance(source, cst.Name) else None
        element = given or (like.tensor.element if like is not None and like.tensor else None)
        return Tensor(name, element)
    if method in _ALLOCATIONS and isinstance(func.value, cst.Name) and func.value.value == "torch":
        return Tensor(name, given)
    if method in ("contiguous", "clone", "view", "reshape") and isinstance(func.value, cst.Name):
        found = wrapper.values.get(func.value.value)
        if found is not None and found.tensor is not None:
            return Tensor(name, found.tensor.element)
    if method == "to" and node.args:
        element = _dtype(node.args[0].value)
        return Tensor(name, element) if element is not None else None
    return None


def _keyword_dtype(node: cst.Call) -> ElementType | None:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "dtype":
            return _dtype(arg.value)
    return None


def _dtype(node: cst.BaseExpression) -> ElementType | None:
    if isinstance(node, cst.Attribute):
        return dtypes.dtype_named(node.attr.value)
    return None


def _integer(
    node: cst.BaseExpression, wrapper: _Wrapper, meta: Mapping[str, Argument]
) -> sympy.Expr | None:
    """An integer of the host code: a literal, a size, arithmetic on them, `triton.cdiv`,
    a tensor's `numel()`, `shape[i]`, `size(i)`, `stride(i)`, `meta["BLOCK"]`."""
    if isinstance(node, cst.Integer):
        return as_expression(int(node.value.replace("_", ""), 0))
    if isinstance(node, cst.Name):
        found = wrapper.values.get(node.value)
        return found.index if found is not None else None
    if isinstance(node, cst.BinaryOperation):
        left, right = _integer(node.left, wrapper, meta), _integer(node.right, wrapper, meta)
        if left is None or right is None:
            return None
        if isinstance(node.operator, cst.Add):
            return left + right
        if isinstance(node.operator, cst.Subtract):
            return left - right
        if isinstance(node.operator, cst.Multiply):
            return left * right
        if isinstance(node.operator, cst.FloorDivide):
            return sympy.floor(sympy.sympify(left) / right)
        return None
    if isinstance(node, cst.Subscript):
        return _subscripted(node, wrapper, meta)
    if isinstance(node, cst.Call):
        return _called(node, wrapper, meta)
    return None


def _subscripted(
    node: cst.Subscript, wrapper: _Wrapper, meta: Mapping[str, Argument]
) -> sympy.Expr | None:
    (element,) = node.slice if len(node.slice) == 1 else (None,)
    item = element.slice if element is not None else None
    if not isinstance(item, cst.Index):
        return None
    if isinstance(node.value, cst.Name) and isinstance(item.value, cst.SimpleString):
        key = item.value.evaluated_value
        found = meta.get(key) if isinstance(key, str) else None
        return found.index if found is not None else None
    if _is_shape(node.value) and isinstance(item.value, cst.Integer):
        owner = node.value.value  # type: ignore[attr-defined]
        if isinstance(owner, cst.Name):
            return size_symbol(f"{owner.value}_shape{item.value.value}")
    return None


def _called(node: cst.Call, wrapper: _Wrapper, meta: Mapping[str, Argument]) -> sympy.Expr | None:
    func = node.func
    if not isinstance(func, cst.Attribute):
        return None
    method = func.attr.value
    args = [_integer(a.value, wrapper, meta) for a in node.args]
    if method == "cdiv" and len(args) == 2 and None not in args:
        first, second = args
        assert first is not None and second is not None
        return cdiv(first, second)
    owner = func.value.value if isinstance(func.value, cst.Name) else None
    if owner is None or owner in ("triton", "torch", "tl"):
        return None
    if method == "numel" and not node.args:
        return size_symbol(f"{owner}_numel")
    if method in ("size", "stride") and len(node.args) == 1:
        axis = node.args[0].value
        if isinstance(axis, cst.Integer):
            symbol = size_symbol(f"{owner}_{'shape' if method == 'size' else 'stride'}{axis.value}")
            if method == "stride":
                wrapper.strides.add(str(symbol))
            return symbol
    return None


def _launch(
    call: cst.Call,
    kernel: str,
    wrapper: _Wrapper,
    config: Config | None = None,
    note: Unknown | None = None,
) -> Launch:
    assert isinstance(call.func, cst.Subscript)
    span = _span(call, wrapper)
    wrapper.read_lines(call)
    keywords = {
        a.keyword.value: _argument(a.value, wrapper) for a in call.args if a.keyword is not None
    }
    if config is not None:
        tuned = {k: Argument(index=as_expression(v)) for k, v in config.values.items()}
        keywords = {**tuned, **keywords}
    positional = tuple(_argument(a.value, wrapper) for a in call.args if a.keyword is None)
    grid, notes = _grid(call.func, keywords, wrapper, span)
    if note is not None:
        notes = (*notes, note)
    label = f"{kernel} (launched in {wrapper.name}, line {span.line}"
    label += f", {config.describe()})" if config is not None else ")"
    return Launch(
        kernel,
        label,
        span,
        grid,
        positional,
        keywords,
        frozenset(wrapper.strides),
        frozenset(wrapper.lines),
        notes,
    )


def _argument(node: cst.BaseExpression, wrapper: _Wrapper) -> Argument:
    if isinstance(node, cst.Name) and node.value in wrapper.values:
        return wrapper.values[node.value]
    tensor = _tensor(node, node.value if isinstance(node, cst.Name) else "tensor", wrapper)
    if tensor is not None:
        return Argument(tensor)
    return Argument(index=_integer(node, wrapper, {}))


def _grid(
    subscript: cst.Subscript,
    keywords: Mapping[str, Argument],
    wrapper: _Wrapper,
    span: Span,
) -> tuple[tuple[sympy.Expr, ...] | None, tuple[Unknown, ...]]:
    (element,) = subscript.slice if len(subscript.slice) == 1 else (None,)
    item = element.slice if element is not None else None
    node = item.value if isinstance(item, cst.Index) else None
    if isinstance(node, cst.Name) and node.value in wrapper.grids:
        node = wrapper.grids[node.value]
    if isinstance(node, cst.Lambda):
        node = node.body
    extents: list[sympy.Expr] = []
    elements = node.elements if isinstance(node, cst.Tuple | cst.List) else ()
    for entry in elements:
        value = _integer(entry.value, wrapper, keywords)
        if value is None:
            break
        extents.append(value)
    if elements and len(extents) == len(elements):
        return tuple(extents), ()
    unknown = Unknown(
        UnknownKind.ASSUMPTION,
        "launch grid not read (expected a tuple or `lambda meta: (...)` of sizes): one "
        "symbol per grid axis",
        span,
    )
    return None, (unknown,)


def _span(node: cst.CSTNode, wrapper: _Wrapper) -> Span:
    return span_of(wrapper.path, wrapper.positions[node])
