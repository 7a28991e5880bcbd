"""`torch.nn` layers as `nn.Module` code builds them: in `__init__`, then called in `forward`.

`self.fc1 = nn.Linear(d, 4 * d)` in `__init__` is a layer whose parameters are a weight
`(4*d, d)` and a bias `(4*d,)`, in the sizes the constructor's arguments name (an
`__init__` parameter passed as a size is a size symbol of that name). `self.fc1(x)` in
another method is `F.linear(x, self.fc1.weight, self.fc1.bias)`, each parameter an array
of the module (it escapes: the jit view reads it). `nn.LayerNorm(d)`, `nn.RMSNorm(d)`,
`nn.GELU()`, `nn.SiLU()`, `nn.ReLU()`, `nn.Dropout(p)` and `nn.Softmax(dim)` likewise call
their functional kernels (`framework_calls.py`).
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst
import sympy

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.arguments import _keyword, _positional
from aiscan.frontends.python.expressions import Allocation, ExpressionReader, Value, leaf_for
from aiscan.frontends.python.framework_calls import (
    activation,
    conv_geometry,
    conv_value,
    dropout_value,
    group_norm_value,
    linear_value,
    norm_value,
    softmax_value,
)
from aiscan.frontends.python.layers import Layer, ModuleList, Submodule
from aiscan.frontends.python.summaries import read_submodule_call
from aiscan.frontends.python.symbols import size_symbol
from aiscan.frontends.python.values import Apply, ArrayValue, Integer, Leaf, coordinate
from aiscan.ir.nodes import ElementType, UnknownKind

__all__ = [
    "LAYERS",
    "call_layer",
    "own_method",
    "range_count",
    "read_layer",
    "read_module_list",
    "read_submodule",
    "submodule_of",
]

LAYERS = frozenset(
    f"torch.nn.{name}"
    for name in (
        "Linear", "LayerNorm", "RMSNorm", "GELU", "SiLU", "ReLU", "Dropout", "Softmax", "Embedding",
        "Conv1d", "Conv2d", "Sequential", "GroupNorm",
    )
)  # fmt: skip
"""The `torch.nn` constructors read here, by qualified name."""


def read_submodule(reader: ExpressionReader, node: cst.Call, definition: cst.ClassDef) -> Submodule:
    """The submodule `Class(...)` builds: the integer sizes its constructor is given."""
    init = next(
        (
            s
            for s in definition.body.body
            if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"
        ),
        None,
    )
    sizes: list[tuple[sympy.Expr, sympy.Expr]] = []
    if init is None:
        return Submodule(definition.name.value, ())
    parameters = [p.name.value for p in init.params.params][1:]  # after `self`
    given: dict[str, cst.BaseExpression] = {}
    for position, argument in enumerate(node.args):
        if argument.keyword is not None:
            given[argument.keyword.value] = argument.value
        elif not argument.star and position < len(parameters):
            given[parameters[position]] = argument.value
    before = len(reader.unknowns)
    for parameter, argument_node in given.items():
        value = reader.value(argument_node)
        if isinstance(value, Integer) and value.value is not None:
            sizes.append((size_symbol(parameter), value.value))
    del reader.unknowns[before:]  # a flag or a configuration object: nothing to say here
    return Submodule(definition.name.value, tuple(sizes))


def read_module_list(
    reader: ExpressionReader, node: cst.Call, classes: dict[str, cst.ClassDef]
) -> ModuleList | None:
    """The list `nn.ModuleList(...)` builds: empty, or a comprehension of one class of this
    file over `range(n)`; None (noted) for any other argument."""
    arguments = _positional(node)
    if not arguments:
        return ModuleList(None, None)
    built = arguments[0]
    if (
        len(arguments) == 1
        and isinstance(built, cst.ListComp)
        and built.for_in.inner_for_in is None
        and not built.for_in.ifs
    ):
        element = submodule_of(reader, built.elt, classes)
        count = range_count(reader, built.for_in.iter)
        if element is not None and count is not None:
            return ModuleList(element, count)
    reader.unsupported(node, f"`{reader.names.text(node)}`: only `[Class(...) for _ in range(n)]`")
    return None


def submodule_of(
    reader: ExpressionReader, node: cst.BaseExpression, classes: dict[str, cst.ClassDef]
) -> Submodule | None:
    """`Block(config)` with `Block` a class of this file: the submodule it builds."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        definition = classes.get(node.func.value)
        if definition is not None:
            return read_submodule(reader, node, definition)
    return None


def range_count(reader: ExpressionReader, node: cst.BaseExpression) -> sympy.Expr | None:
    """`range(n)`: its size `n`; None for any other iterable."""
    if not (
        isinstance(node, cst.Call)
        and reader.names.canonical(node.func) == "builtins.range"
        and len(node.args) == 1
    ):
        return None
    value = reader.value(node.args[0].value)
    return value.value if isinstance(value, Integer) else None


def _embedding(
    reader: ExpressionReader, node: cst.Call, indices: ArrayValue, weight: Leaf
) -> Value | None:
    """`self.wte(idx)`: a gather, one row of the weight per index (PyTorch's `embedding`
    kernel reads the indices, as int64, and the rows, and writes the result). Which rows
    is data: counted as distinct per index, an upper bound where indices repeat."""
    if not isinstance(indices, Leaf) or not indices.shape:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: a tensor of indices")
    text = reader.names.text(node)
    rank = len(indices.shape)
    position = sympy.Integer(0)
    for axis, extent in enumerate(indices.shape):
        position = position * extent + coordinate(axis)
    shape = (*indices.shape, weight.shape[1])
    rows = Leaf(
        weight.array, weight.element, shape, (position, coordinate(rank)), text, weight.span
    )
    index = replace(indices, element=dtypes.INT64, shape=(*indices.shape, 1))
    reader.note(
        UnknownKind.DATA_DEPENDENT_BOUND,
        node,
        f"`{text}` gathers one row of `{weight.array}` per index of `{indices.text}` (taken as "
        "int64): counted as distinct rows (an upper bound where indices repeat)",
    )
    gathered = reader.elementwise("free", "take", (rows, index), node, text)
    if isinstance(gathered, Apply):
        return replace(gathered, element=weight.element)
    return gathered


def own_method(class_name: str, method: cst.FunctionDef) -> tuple[str, Submodule] | None:
    """`self._norm` in the methods after `_norm` (llama2.c's `RMSNorm`): a call of the
    module's own method, summarized once and instantiated per call as a submodule's
    `forward` is; None for `__init__`/`setup` and `forward` (not helpers)."""
    name = method.name.value
    if name in ("__init__", "setup", "forward", "__call__"):
        return None
    return f"self.{name}", Submodule(class_name, (), name)


def read_layer(
    reader: ExpressionReader, node: cst.Call, canonical: str, element: ElementType
) -> Layer | None:
    """The layer `torch.nn.<Kind>(...)` builds; None (noted) when its sizes are not sizes."""
    kind = canonical.rpartition(".")[2]
    if kind in ("Conv1d", "Conv2d"):
        return _conv_layer(reader, node, kind, element)
    if kind == "Sequential":
        return _sequential(reader, node, element)
    arguments = _positional(node)
    count = {"Linear": 2, "LayerNorm": 1, "RMSNorm": 1, "Embedding": 2, "GroupNorm": 2}.get(kind, 0)
    sizes: list[sympy.Expr] = []
    for argument in arguments[:count]:
        value = reader.value(argument)
        if not isinstance(value, Integer) or value.value is None:
            reader.unsupported(
                argument, f"`{reader.names.text(argument)}` is not a size of `{kind}`"
            )
            return None
        sizes.append(value.value)
    if len(sizes) != count:
        reader.unsupported(node, f"`{reader.names.text(node)}`: its sizes")
        return None
    flag = (
        _keyword(node, "bias") or _keyword(node, "elementwise_affine") or _keyword(node, "affine")
    )
    bias = not (isinstance(flag, cst.Name) and flag.value == "False")
    option_node = _keyword(node, "approximate") or _keyword(node, "dim")
    if option_node is None and kind == "Softmax" and arguments:
        option_node = arguments[0]
    option = reader.names.text(option_node).strip("'\"") if option_node is not None else ""
    return Layer(kind, tuple(sizes), bias, element, option)


def _sequential(reader: ExpressionReader, node: cst.Call, element: ElementType) -> Layer | None:
    """`nn.Sequential(nn.Linear(d, h), nn.GELU(), nn.Linear(h, d))`: each `torch.nn` layer
    built as it would be alone; None (noted) for any other element (a user module)."""
    parts: list[Layer] = []
    for argument in node.args:
        built = argument.value
        kind = reader.names.canonical(built.func) if isinstance(built, cst.Call) else None
        if argument.keyword is not None or argument.star or kind not in LAYERS:
            reader.unsupported(
                built, f"`{reader.names.text(built)}` in `nn.Sequential`: only `torch.nn` layers"
            )
            return None
        assert isinstance(built, cst.Call) and kind is not None
        part = read_layer(reader, built, kind, element)
        if part is None:
            return None
        parts.append(part)
    return Layer("Sequential", (), False, element, parts=tuple(parts))


def _conv_layer(
    reader: ExpressionReader, node: cst.Call, kind: str, element: ElementType
) -> Layer | None:
    """`nn.Conv2d(c_in, c_out, k, stride=, padding=, groups=, bias=)`: the channels and the
    kernel's extents (`k` an int for every axis, or one per axis) as sizes."""
    spatial = int(kind[-2])
    arguments = _positional(node)
    given = [
        arguments[at] if at < len(arguments) else _keyword(node, name)
        for at, name in enumerate(("in_channels", "out_channels", "kernel_size"))
    ]
    if any(g is None for g in given):
        reader.unsupported(node, f"`{reader.names.text(node)}`: its channels and kernel size")
        return None
    *channels, kernel = (g for g in given if g is not None)
    items = [e.value for e in kernel.elements] if isinstance(kernel, cst.Tuple) else [kernel]
    sizes: list[sympy.Expr] = []
    for argument in [*channels, *(items * spatial if len(items) == 1 else items)]:
        value = reader.value(argument)
        if not isinstance(value, Integer) or value.value is None:
            reader.unsupported(
                argument, f"`{reader.names.text(argument)}` is not a size of `{kind}`"
            )
            return None
        sizes.append(value.value)
    geometry = conv_geometry(reader, node, spatial, 3)
    if geometry is None or len(sizes) != spatial + 2:
        return None
    flag = _keyword(node, "bias")
    bias = not (isinstance(flag, cst.Name) and flag.value == "False")
    return Layer(kind, tuple(sizes), bias, element, geometry=geometry)


def call_layer(
    reader: ExpressionReader, node: cst.Call, name: str, layer: Layer | Submodule
) -> Value | None:
    """`self.fc1(x)`: the layer's kernel on `x` and the layer's parameters; a submodule's
    `forward` instantiated at the call (`summaries.py`)."""
    if isinstance(layer, Submodule):
        return read_submodule_call(reader, node, layer.class_name, layer.sizes, layer.method)
    arguments = _positional(node)
    if len(arguments) != 1 or len(node.args) != 1:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: one tensor argument")
    x = reader.array(arguments[0])
    if x is None:
        return None
    return _applied(reader, node, name, layer, x)


def _applied(
    reader: ExpressionReader, node: cst.Call, name: str, layer: Layer, x: ArrayValue
) -> Value | None:
    """`layer` on `x`; a `Sequential`'s layers in order, each result stored (its own
    kernel's output) before the next reads it, its parameters named as PyTorch names them
    (`self.net.0.weight`)."""
    if layer.kind == "Sequential":
        value: Value | None = x
        for position, part in enumerate(layer.parts):
            if isinstance(value, Allocation):
                value = reader.materialize(value, node)
            if value is None or isinstance(value, Integer):
                return None
            value = _applied(reader, node, f"{name}.{position}", part, value)
        return value
    span = reader.span(node)

    def parameter(part: str, shape: tuple[sympy.Expr, ...]) -> Leaf:
        return leaf_for(f"{name}.{part}", shape, layer.element, span)

    if layer.kind == "Linear":
        fan_in, fan_out = layer.sizes
        if x.shape:
            reader.meet_layer(x.shape[-1], fan_in)
        weights = parameter("weight", (fan_out, fan_in))
        biases = parameter("bias", (fan_out,)) if layer.bias else None
        return linear_value(reader, node, x, weights, biases)
    if layer.kind in ("LayerNorm", "RMSNorm"):
        (width,) = layer.sizes
        rms = layer.kind == "RMSNorm"
        weight = parameter("weight", (width,)) if layer.bias or rms else None
        bias = parameter("bias", (width,)) if layer.bias and not rms else None
        if x.shape:
            reader.meet_layer(x.shape[-1], width)
            reader.unify((x.shape[-1],), (width,))
        return norm_value(reader, node, x, weight, bias, rms=rms)
    if layer.geometry is not None:  # Conv1d, Conv2d
        fan_in, fan_out, *kernel = layer.sizes
        per_group = sympy.cancel(fan_in / layer.geometry.groups)
        weights = parameter("weight", (fan_out, per_group, *kernel))
        biases = parameter("bias", (fan_out,)) if layer.bias else None
        return conv_value(reader, node, x, weights, biases, layer.geometry)
    if layer.kind == "GroupNorm":
        groups, channels = layer.sizes
        if groups.is_number and groups <= 0:
            return reader.unsupported(node, f"`{reader.names.text(node)}`: {groups} groups")
        weight = parameter("weight", (channels,)) if layer.bias else None
        bias = parameter("bias", (channels,)) if layer.bias else None
        return group_norm_value(reader, node, x, groups, weight, bias)
    if layer.kind == "Embedding":
        return _embedding(reader, node, x, parameter("weight", layer.sizes))
    if layer.kind == "Dropout":
        return dropout_value(reader, node, x)
    if layer.kind == "Softmax":
        return softmax_value(reader, node, x, layer.option)
    return activation(reader, node, x, layer.kind, layer.option)
