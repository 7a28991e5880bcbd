"""Flax `linen` layers as Flax code builds them: in `setup()`, or inline under `@nn.compact`.

`self.c_fc = nn.Dense(4 * n_embd)` in `setup` (or `nn.Dense(4 * C, name="c_fc")(x)` in a
compact `__call__`) is a layer whose kernel is `(d_in, features)` and bias `(features,)`,
`d_in` the last extent of the input it is called on (Flax infers it there). `self.c_fc(x)`
is then `x @ kernel + bias`, each parameter an array of the module (`c_fc.kernel`).
`nn.LayerNorm()` normalizes the last axis as Flax computes it (mean and mean of squares,
`var = mean2 - mean**2`, `(x - mean) * (rsqrt(var + eps) * scale) + bias`), and
`nn.Dropout(rate)` is counted as in evaluation. The torch layers are `modules.py`'s; both
build a `modules.Layer`.

A Flax module is a dataclass: its `int` fields (`num_heads: int`) are sizes named as the
fields are, and so are the `int` fields of a configuration dataclass it holds
(`config: GPTConfig`, then `self.config.n_embd` or `config.n_embd` is the size `n_embd`).
"""

from __future__ import annotations

import libcst as cst
import sympy

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.calls import _keyword, _positional
from aiscan.frontends.python.expressions import ExpressionReader, Value, leaf_for
from aiscan.frontends.python.framework_calls import dropout_value, flax_layer_norm
from aiscan.frontends.python.modules import Layer
from aiscan.frontends.python.names import SourceNames
from aiscan.frontends.python.symbols import size_symbol
from aiscan.frontends.python.values import Integer, Leaf, Scalar
from aiscan.ir.nodes import ElementType, UnknownKind

__all__ = [
    "FLAX_LAYERS",
    "FLAX_MODULE",
    "call_flax_layer",
    "field_defaults",
    "field_sizes",
    "inline_layer",
    "read_flax_layer",
]

FLAX_MODULE = "flax.linen.Module"
FLAX_LAYERS = frozenset(f"flax.linen.{n}" for n in ("Dense", "LayerNorm", "Dropout"))
"""The `flax.linen` constructors read here, by qualified name."""


def read_flax_layer(
    reader: ExpressionReader, node: cst.Call, canonical: str, element: ElementType
) -> Layer | None:
    """The layer `nn.<Kind>(...)` builds; None (noted) when its features are not a size."""
    kind = canonical.rpartition(".")[2]
    sizes: tuple[sympy.Expr, ...] = ()
    if kind == "Dense":
        arguments = _positional(node)
        found = _keyword(node, "features") or (arguments[0] if arguments else None)
        value = reader.value(found) if found is not None else None
        if not isinstance(value, Integer) or value.value is None:
            text = reader.names.text(found) if found is not None else "no features"
            reader.unsupported(node, f"`{text}` is not a size of `nn.Dense`")
            return None
        sizes = (value.value,)
    bias = _flag(reader, _keyword(node, "use_bias"))
    scale = _flag(reader, _keyword(node, "use_scale"))
    if bias is None or scale is None:
        reader.unsupported(node, f"`{reader.names.text(node)}`: use_bias/use_scale not literal")
        return None
    return Layer(f"flax.{kind}", sizes, bias, element, "scale" if scale else "")


def _flag(reader: ExpressionReader, node: cst.BaseExpression | None) -> bool | None:
    """A literal flag (True when absent, Flax's default), or a `bool` field's literal
    default (`self.use_proj_bias`, an assumption at the call); None otherwise."""
    if node is None:
        return True
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    bound = reader.scope.names.get(reader.names.text(node))
    if isinstance(bound, Scalar) and bound.element == dtypes.BOOL and bound.constant:
        reader.note(
            UnknownKind.ASSUMPTION,
            node,
            f"`{reader.names.text(node)}` taken at its field's default, {bound.text}",
        )
        return bound.text == "True"
    return None


def call_flax_layer(
    reader: ExpressionReader, node: cst.Call, name: str, layer: Layer
) -> Value | None:
    """`self.c_fc(x)` (or `nn.Dense(f)(x)`): the layer's kernel on `x` and its parameters;
    Dropout's `deterministic=` and a call's `rngs=` are the layer's business, not work."""
    arguments = _positional(node)
    if not arguments or (len(arguments) > 1 and layer.kind != "flax.Dropout"):
        return reader.unsupported(node, f"`{reader.names.text(node)}`: one array argument")
    x = reader.array(arguments[0])
    if x is None:
        return None
    if layer.kind == "flax.Dropout":
        return dropout_value(reader, node, x)
    if not x.shape:
        return reader.unsupported(node, f"`{reader.names.text(node)}` of a scalar")
    span = reader.span(node)
    width = x.shape[-1]

    def parameter(part: str, shape: tuple[sympy.Expr, ...]) -> Leaf:
        return leaf_for(f"{name}.{part}", shape, layer.element, span)

    if layer.kind == "flax.Dense":
        (features,) = layer.sizes
        product = reader.contract_matmul(x, parameter("kernel", (width, features)), node)
        if product is None or not layer.bias:
            return product
        return reader.elementwise("add", "add", (product, parameter("bias", (features,))), node)
    scale = parameter("scale", (width,)) if layer.option == "scale" else None
    bias = parameter("bias", (width,)) if layer.bias else None
    return flax_layer_norm(reader, node, x, scale, bias)


def inline_layer(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`nn.Dense(4 * C, name="c_fc")(x)` under `@nn.compact`: a submodule made and called
    on the spot, its parameters named by `name=` (else by kind and line), float32 (Flax's
    `param_dtype`)."""
    assert isinstance(node.func, cst.Call)
    made = node.func
    canonical = reader.names.canonical(made.func)
    assert canonical in FLAX_LAYERS
    layer = read_flax_layer(reader, made, canonical, dtypes.FLOAT32)
    if layer is None:
        return None
    given = _keyword(made, "name")
    if isinstance(given, cst.SimpleString):
        name = given.evaluated_value if isinstance(given.evaluated_value, str) else ""
    else:
        name = ""
    name = name or f"{canonical.rpartition('.')[2]}_L{reader.span(node).line}"
    return call_flax_layer(reader, node, f"self.{name}", layer)  # module state: it escapes


def field_sizes(node: cst.ClassDef, classes: dict[str, cst.ClassDef]) -> dict[str, Integer]:
    """A Flax module's dataclass fields as sizes: `num_heads: int` is `self.num_heads`,
    `config: GPTConfig` makes each `int` field of GPTConfig `self.config.<f>` and, for a
    method's `config = self.config`, `config.<f>`."""
    found: dict[str, Integer] = {}
    for field, annotation in _fields(node):
        if annotation == "int":
            found[f"self.{field}"] = Integer(size_symbol(field), f"self.{field}")
        elif annotation in classes:
            for inner, kind in _fields(classes[annotation]):
                if kind == "int":
                    for owner in (f"self.{field}", field):
                        found[f"{owner}.{inner}"] = Integer(size_symbol(inner), inner)
    return found


def field_defaults(
    node: cst.ClassDef, classes: dict[str, cst.ClassDef], names: SourceNames
) -> tuple[dict[str, Scalar], dict[str, ElementType]]:
    """Fields whose defaults a layer's arguments use: `bool` ones with a literal default
    (`use_bias: bool = True`, read by `use_bias=self.use_proj_bias`), and ones defaulting
    to a dtype (`dtype: Any = jnp.float32`), by their text (`self.x`, `self.config.x`,
    `config.x`)."""
    flags: dict[str, Scalar] = {}
    kinds: dict[str, ElementType] = {}
    owners = [(node, ("self",))] + [
        (classes[kind], (f"self.{field}", field))
        for field, kind, _ in _field_defaults(node)
        if kind in classes
    ]
    for owner, prefixes in owners:
        for field, _, default in _field_defaults(owner):
            keys = [f"{p}.{field}" for p in prefixes]
            if isinstance(default, cst.Name) and default.value in ("True", "False"):
                flags.update({k: Scalar(dtypes.BOOL, True, default.value, True) for k in keys})
                continue
            canonical = names.canonical(default) if default is not None else None
            element = dtypes.dtype_qualified(canonical) if canonical else None
            if element is not None:
                kinds.update(dict.fromkeys(keys, element))
    return flags, kinds


def _fields(node: cst.ClassDef) -> list[tuple[str, str]]:
    """`name: annotation` statements of a class body (its dataclass fields)."""
    return [(name, kind) for name, kind, _ in _field_defaults(node)]


def _field_defaults(node: cst.ClassDef) -> list[tuple[str, str, cst.BaseExpression | None]]:
    """`name: annotation = default` statements of a class body (its dataclass fields)."""
    fields: list[tuple[str, str, cst.BaseExpression | None]] = []
    for statement in node.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                annotation = small.annotation.annotation
                text = annotation.value if isinstance(annotation, cst.Name) else ""
                fields.append((small.target.value, text, small.value))
    return fields
