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

from dataclasses import replace

import libcst as cst
import sympy

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.arguments import _dtype_argument, _keyword, _positional
from aiscan.frontends.python.expressions import Allocation, ExpressionReader, Value, leaf_for
from aiscan.frontends.python.framework_calls import dropout_value, flax_layer_norm
from aiscan.frontends.python.layers import Layer, ModuleList, Submodule
from aiscan.frontends.python.modules import range_count, read_submodule
from aiscan.frontends.python.names import SourceNames
from aiscan.frontends.python.summaries import read_submodule_call
from aiscan.frontends.python.symbols import size_symbol
from aiscan.frontends.python.values import (
    Apply,
    ArrayValue,
    Integer,
    Leaf,
    Scalar,
    coordinate,
)
from aiscan.frontends.python.views import permuted
from aiscan.ir.nodes import ElementType, UnknownKind

__all__ = [
    "FLAX_CALLS",
    "FLAX_LAYERS",
    "FLAX_MODULE",
    "attend",
    "call_flax_layer",
    "causal_mask",
    "field_defaults",
    "field_sizes",
    "inline_layer",
    "inline_submodule",
    "is_flax_module",
    "read_flax_layer",
    "read_flax_submodule",
    "read_submodule_list",
]

FLAX_MODULE = "flax.linen.Module"
FLAX_LAYERS = frozenset(f"flax.linen.{n}" for n in ("Dense", "LayerNorm", "Dropout", "Embed"))
"""The `flax.linen` constructors read here, by qualified name."""


def read_flax_layer(
    reader: ExpressionReader, node: cst.Call, canonical: str, element: ElementType
) -> Layer | None:
    """The layer `nn.<Kind>(...)` builds; None (noted) when its features are not a size."""
    kind = canonical.rpartition(".")[2]
    sizes: tuple[sympy.Expr, ...] = ()
    if kind == "Embed":
        return _read_embed(reader, node, element)
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


def _read_embed(reader: ExpressionReader, node: cst.Call, element: ElementType) -> Layer | None:
    """`nn.Embed(num_embeddings, features)`: a table of `(num_embeddings, features)`."""
    arguments = _positional(node)
    sizes: list[sympy.Expr] = []
    for position, keyword in enumerate(("num_embeddings", "features")):
        found = _keyword(node, keyword) or (
            arguments[position] if position < len(arguments) else None
        )
        value = reader.value(found) if found is not None else None
        if not isinstance(value, Integer) or value.value is None:
            text = reader.names.text(found) if found is not None else f"no {keyword}"
            reader.unsupported(node, f"`{text}` is not a size of `nn.Embed`")
            return None
        sizes.append(value.value)
    return Layer("flax.Embed", tuple(sizes), False, element)


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
    if layer.kind == "flax.Embed":
        return _embed(reader, node, name, layer, x)
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


def _embed(
    reader: ExpressionReader, node: cst.Call, name: str, layer: Layer, x: ArrayValue
) -> Value | None:
    """`self.wte(idx)`: `jnp.take(embedding, idx, axis=0)`, a gather of one row per index
    (0 FLOPs; `idx` and the rows read, the result written). Which rows is data: they are
    counted as distinct per index, an upper bound where indices repeat, said on the line."""
    if not isinstance(x, Leaf):
        return reader.unsupported(node, f"`{reader.names.text(node)}` of a computed index")
    count, features = layer.sizes
    span = reader.span(node)
    rank = len(x.shape)
    row = sum((coordinate(d) * sympy.Mul(*x.shape[d + 1 :]) for d in range(rank)), sympy.Integer(0))
    text = reader.names.text(node)
    rows = Leaf(
        f"{name}.embedding",
        layer.element,
        (*x.shape, features),
        (row, coordinate(rank)),
        text,
        span,
    )
    positions = replace(x, shape=(*x.shape, sympy.Integer(1)))  # each index, for its row
    reader.note(
        UnknownKind.DATA_DEPENDENT_BOUND,
        node,
        f"gathered: `{text}` reads one row of `{name}.embedding` ({count} rows) per index "
        f"of `{x.array}`: counted as distinct rows (an upper bound where they repeat)",
    )
    gathered = reader.elementwise("free", "take", (rows, positions), node, text)
    if isinstance(gathered, Apply):
        return replace(gathered, element=layer.element)  # the table's elements
    return gathered


def attend(reader: ExpressionReader, node: cst.Call, name: str, layer: Layer) -> Value | None:
    """`self.wte.attend(x)`: `x @ embedding.T`, the tied output projection of a language
    model (Flax's `Embed.attend`)."""
    arguments = _positional(node)
    if len(arguments) != 1 or len(node.args) != 1:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: one array argument")
    x = reader.array(arguments[0])
    if x is None:
        return None
    table = leaf_for(f"{name}.embedding", layer.sizes, layer.element, reader.span(node))
    if x.shape:
        reader.unify((x.shape[-1],), (layer.sizes[1],))
    return reader.contract_matmul(x, permuted(table, (1, 0)), node)


def causal_mask(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`nn.make_causal_mask(x, dtype=bool)`: `x.shape[:-1] + (1, T, T)` of `dtype`
    (float32 by default), `T = x.shape[-1]`; comparisons, so no FLOPs, every element
    written."""
    arguments = _positional(node)
    x = reader.array(arguments[0]) if len(arguments) == 1 else None
    if x is None or not x.shape:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: one array argument")
    element = _dtype_argument(reader, node) if _keyword(node, "dtype") else dtypes.FLOAT32
    if element is None:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: its dtype")
    t = x.shape[-1]
    shape = (*x.shape[:-1], sympy.Integer(1), t, t)
    return Allocation(shape, element, True, reader.names.text(node))


FLAX_CALLS = {"flax.linen.make_causal_mask": causal_mask}
"""`flax.linen` functions read here, by qualified name."""


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


def is_flax_module(definition: cst.ClassDef, names: SourceNames) -> bool:
    """A class deriving `flax.linen.Module` (however `nn` was imported)."""
    return any(names.canonical(base.value) == FLAX_MODULE for base in definition.bases)


def read_flax_submodule(
    reader: ExpressionReader, node: cst.Call, definition: cst.ClassDef
) -> Submodule:
    """`SelfAttention(self.config.num_heads, dropout_rate=...)`: a Flax module of this file,
    built as the dataclass it is (arguments bind its fields in order, or by name; `name=`
    and `parent=` are Flax's own). Each `int` field given a size pairs with it; a
    configuration object's fields are the same size symbols in every class already."""
    fields = _field_defaults(definition)
    given: dict[str, cst.BaseExpression] = {}
    positional = [a for a in node.args if a.keyword is None and not a.star]
    for (field, _, _), argument in zip(fields, positional, strict=False):
        given[field] = argument.value
    given.update((a.keyword.value, a.value) for a in node.args if a.keyword is not None)
    sizes: list[tuple[sympy.Expr, sympy.Expr]] = []
    before = len(reader.unknowns)
    for field, kind, _ in fields:
        found = given.get(field)
        value = reader.value(found) if kind == "int" and found is not None else None
        if isinstance(value, Integer) and value.value is not None:
            sizes.append((size_symbol(field), value.value))
    del reader.unknowns[before:]  # a flag, a dtype, a rate: nothing to say here
    return Submodule(definition.name.value, tuple(sizes))


def _read_user_module(
    reader: ExpressionReader, node: cst.Call, definition: cst.ClassDef
) -> Submodule:
    """`Class(...)` of a module class of this file, Flax (fields) or torch (`__init__`)."""
    if is_flax_module(definition, reader.names):
        return read_flax_submodule(reader, node, definition)
    return read_submodule(reader, node, definition)


def inline_submodule(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`Block(self.config, name=str(i))(x, mask)` under `@nn.compact`: a user module made
    and called on the spot, instantiated as `self.block(x, mask)` would be."""
    assert isinstance(node.func, cst.Call) and isinstance(node.func.func, cst.Name)
    definition = reader.scope.classes[node.func.func.value]
    submodule = _read_user_module(reader, node.func, definition)
    return read_submodule_call(reader, node, submodule.class_name, submodule.sizes)


def read_submodule_list(reader: ExpressionReader, node: cst.ListComp) -> ModuleList | None:
    """`[Block(config) for _ in range(n_layer)]` (one `for` over a `range` of one size, no
    `if`): `n_layer` instances of `Block`; None for any other list."""
    made, loop = node.elt, node.for_in
    if loop.inner_for_in is not None or loop.ifs or not isinstance(made, cst.Call):
        return None
    if not (isinstance(made.func, cst.Name) and made.func.value in reader.scope.classes):
        return None
    count = range_count(reader, loop.iter)
    if count is None:
        return None
    definition = reader.scope.classes[made.func.value]
    return ModuleList(_read_user_module(reader, made, definition), count)


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
