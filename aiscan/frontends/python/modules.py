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

from dataclasses import dataclass

import libcst as cst
import sympy

from aiscan.frontends.python.calls import _keyword, _positional
from aiscan.frontends.python.expressions import ExpressionReader, Value, leaf_for
from aiscan.frontends.python.framework_calls import (
    activation,
    dropout_value,
    linear_value,
    norm_value,
    softmax_value,
)
from aiscan.frontends.python.values import Integer, Leaf
from aiscan.ir.nodes import ElementType

__all__ = ["LAYERS", "Layer", "call_layer", "read_layer"]

LAYERS = frozenset(
    f"torch.nn.{name}"
    for name in ("Linear", "LayerNorm", "RMSNorm", "GELU", "SiLU", "ReLU", "Dropout", "Softmax")
)
"""The `torch.nn` constructors read here, by qualified name."""


@dataclass(frozen=True, slots=True)
class Layer:
    """What a constructor built: its kind, its parameters' extents, and their dtype."""

    kind: str
    sizes: tuple[sympy.Expr, ...]
    bias: bool
    element: ElementType
    option: str = ""
    """`GELU(approximate="tanh")`'s form, `Softmax(dim=...)`'s axis (as written)."""


def read_layer(
    reader: ExpressionReader, node: cst.Call, canonical: str, element: ElementType
) -> Layer | None:
    """The layer `torch.nn.<Kind>(...)` builds; None (noted) when its sizes are not sizes."""
    kind = canonical.rpartition(".")[2]
    arguments = _positional(node)
    count = {"Linear": 2, "LayerNorm": 1, "RMSNorm": 1}.get(kind, 0)
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
    flag = _keyword(node, "bias") or _keyword(node, "elementwise_affine")
    bias = not (isinstance(flag, cst.Name) and flag.value == "False")
    option_node = _keyword(node, "approximate") or _keyword(node, "dim")
    if option_node is None and kind == "Softmax" and arguments:
        option_node = arguments[0]
    option = reader.names.text(option_node).strip("'\"") if option_node is not None else ""
    return Layer(kind, tuple(sizes), bias, element, option)


def call_layer(reader: ExpressionReader, node: cst.Call, name: str, layer: Layer) -> Value | None:
    """`self.fc1(x)`: the layer's kernel on `x` and the layer's parameters."""
    arguments = _positional(node)
    if len(arguments) != 1 or len(node.args) != 1:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: one tensor argument")
    x = reader.array(arguments[0])
    if x is None:
        return None
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
    if layer.kind == "Dropout":
        return dropout_value(reader, node, x)
    if layer.kind == "Softmax":
        return softmax_value(reader, node, x, layer.option)
    return activation(reader, node, x, layer.kind, layer.option)
