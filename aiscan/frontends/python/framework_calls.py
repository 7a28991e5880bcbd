"""The operators ML code calls in PyTorch and JAX, each as the one kernel the framework runs.

`F.softmax(x, -1)` is one kernel: it reads `x` once and writes `y` once, where the same
softmax written by hand is five NumPy calls. Each operator here is an entry keyed by its
qualified name (`torch.nn.functional.softmax`, `torch.softmax`, `jax.nn.softmax`, and the
tensor method `x.softmax`), built as IR loops over its operands: the FLOPs by MODEL.md's
conventions (a reduction of `n` elements is `n - 1` adds; `exp`, `erf`, `tanh`, `rsqrt`
special, reported apart) and the eager traffic of one kernel (the operands read, the
result written; an operand that is an expression is computed into its own temporary
first, as Python evaluates arguments). The counts of each operator are in docs/python.md.

Where the framework's semantics are NumPy's (`torch.exp`, `jnp.sum`), `names.py` maps the
name onto NumPy's and `calls.py` reads it; what PyTorch spells differently (`transpose`
swaps two axes, `x.size(k)`, `.float()`, `dim=`/`keepdim=`) is read here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import libcst as cst
import sympy

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.arguments import _dtype_node, _keyword, _positional
from aiscan.frontends.python.constructions import Construction
from aiscan.frontends.python.expressions import (
    Allocation,
    ExpressionReader,
    Value,
    leaf_for,
    number_literal,
)
from aiscan.frontends.python.layers import ConvGeometry
from aiscan.frontends.python.nests import Namer, broadcast_coordinates
from aiscan.frontends.python.shapes import broadcast_shapes, same_extent, shape_text
from aiscan.frontends.python.symbols import loop_symbol
from aiscan.frontends.python.values import (
    ADDMM,
    ArrayValue,
    Integer,
    Leaf,
    Scalar,
    Shape,
    coordinate,
    substituted,
)
from aiscan.frontends.python.views import (
    computed_first,
    permuted,
    read_view,
    reshaped,
    through_operands,
)
from aiscan.ir.nodes import (
    Access,
    ElementType,
    FlopTally,
    Loop,
    Node,
    Region,
    Statement,
    UnknownKind,
)
from aiscan.span import Span

__all__ = [
    "FRAMEWORK_CALLS",
    "TENSOR_METHODS",
    "activation",
    "conv_geometry",
    "conv_value",
    "dropout_value",
    "flax_layer_norm",
    "group_norm_value",
    "linear_value",
    "norm_value",
    "read_tensor_method",
    "softmax_value",
]

Reader = Callable[[ExpressionReader, cst.Call], Value | None]
OnTensor = Callable[["ExpressionReader", "_Call"], Value | None]


# ---- arguments ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Call:
    """A call, or a method call whose tensor is the first argument (`x.softmax(-1)` is
    `torch.softmax(x, -1)`)."""

    node: cst.Call
    base: ArrayValue | None = None

    def argument(self, position: int, *names: str) -> cst.BaseExpression | None:
        """The argument passed by one of `names`, or at `position` among the positional
        ones (counting a method's tensor as the first)."""
        for name in names:
            found = _keyword(self.node, name)
            if found is not None:
                return found
        positional = _positional(self.node)
        at = position - 1 if self.base is not None else position
        return positional[at] if 0 <= at < len(positional) else None

    def first(self, reader: ExpressionReader, *names: str) -> ArrayValue | None:
        """The tensor operated on: the method's, or the first argument."""
        if self.base is not None:
            return self.base
        return _array(reader, self.argument(0, *names))


def _argument(node: cst.Call, position: int, *names: str) -> cst.BaseExpression | None:
    return _Call(node).argument(position, *names)


def _is_none(node: cst.BaseExpression | None) -> bool:
    return node is None or (isinstance(node, cst.Name) and node.value == "None")


def _flag(node: cst.BaseExpression | None, default: bool) -> bool | None:
    """`True`/`False` literals; None for anything else (not decidable here)."""
    if node is None:
        return default
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def _axis(
    reader: ExpressionReader, node: cst.BaseExpression | None, rank: int, call: cst.Call
) -> int | None:
    """A literal axis (`dim=-1`) within `rank`, made non-negative; None (noted) otherwise."""
    value = number_literal(node) if node is not None else None
    if node is None:
        reader.unsupported(call, f"`{reader.names.text(call)}`: no dim given (an implicit dim)")
        return None
    if not isinstance(value, int) or not -rank <= value < rank:
        reader.unsupported(
            call,
            f"`{reader.names.text(call)}`: {reader.names.text(node)} is not a literal axis of "
            f"a rank-{rank} operand",
        )
        return None
    return value % rank


def _array(reader: ExpressionReader, node: cst.BaseExpression | None) -> ArrayValue | None:
    return reader.array(node) if node is not None else None


# ---- one kernel over rows ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Counts:
    """FLOPs of a kernel along one axis (its rows): per element, then per row."""

    element: FlopTally = field(default_factory=FlopTally)
    element_specials: tuple[str, ...] = ()
    combines: int = 0
    """Sums along the row: each `n - 1` adds."""
    row: FlopTally = field(default_factory=FlopTally)
    row_specials: tuple[str, ...] = ()


Dispatches = tuple[tuple[str, tuple[str, ...]], ...]
"""An operator as JAX runs it eagerly, one primitive at a time: each dispatch's result and
what it reads, by name: `x` the operand, `out` the result, `r...` an array of one element
per row (a reduction's), `m...` a boolean one per row, `t...` an array of `x`'s shape,
`p1`, `p2` the kernel's other operands (a norm's scale and bias).
Traced from JAX's own jaxprs (`scripts/count_jax.py` lists them)."""


def _kernel(
    reader: ExpressionReader,
    node: cst.Call,
    operands: Sequence[ArrayValue],
    axis: int | None,
    counts: _Counts,
    *,
    reduces: bool = False,
    keepdim: bool = False,
    element: ElementType | None = None,
    dispatches: Dispatches = (),
) -> Value | None:
    """One kernel on `operands[0]`'s shape (the others broadcast to it), along `axis`
    (None: elementwise): each element read once, the result written once. `reduces`: the
    result drops `axis` (kept as 1 with `keepdim`), written once per row. `dispatches`:
    the eager view's calls, where the framework runs the kernel as several."""
    x = operands[0]
    shape = x.shape
    text = reader.names.text(node)
    for other in operands[1:]:
        if broadcast_shapes(shape, other.shape) != shape:
            reader.unify(shape[len(shape) - len(other.shape) :], other.shape)
            reader.note(
                UnknownKind.UNKNOWN_SHAPE,
                node,
                f"`{text}`: operand `{other.text}` of shape {shape_text(other.shape)} does not "
                f"broadcast to {shape_text(shape)}; its work is not counted",
            )
            return None
    out_shape: Shape = shape
    if reduces and axis is not None:
        kept = [sympy.Integer(1) if d == axis else e for d, e in enumerate(shape)]
        out_shape = tuple(kept if keepdim else (e for d, e in enumerate(shape) if d != axis))
    result = element or x.element

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        stores, reads = _operand_leaves(operands, namer, span)
        nodes = _row_nodes(namer, span, text, shape, reads, leaf, axis, counts, reduces)
        arguments = tuple(w.array for w, _ in stores)
        calls = _dispatched(namer, span, text, shape, reads, leaf, axis, dispatches)
        return Construction(
            tuple(stores), tuple(nodes), library=False, arguments=arguments, dispatches=calls
        )

    return Allocation(out_shape, result, False, text, build)


def _dispatched(
    namer: Namer,
    span: Span,
    text: str,
    shape: Shape,
    reads: Sequence[Leaf],
    out: Leaf,
    axis: int | None,
    dispatches: Dispatches,
) -> tuple[Region, ...]:
    """Each dispatch of `dispatches` as an eager call: a pass over `x`'s shape reading its
    operands and writing its result (a row array once per row), no FLOPs (the kernel's
    nodes count them)."""
    if not dispatches:
        return ()
    rows = tuple(e for d, e in enumerate(shape) if d != axis)
    x = reads[0]
    arrays: dict[str, Leaf] = {"x": x, "out": out}
    arrays.update({f"p{k}": leaf for k, leaf in enumerate(reads[1:], 1)})
    for name, _ in dispatches:
        if name not in arrays:
            width = dtypes.BOOL if name.startswith("m") else x.element
            extents = rows if name[0] in "rm" else shape
            arrays[name] = leaf_for(namer.fresh("_d"), extents, width, span)
    per_row = {n for n in arrays if n[0] in "rm"} | ({"out"} if out.shape != shape else set())
    calls = []
    for name, operands in dispatches:
        # loop names of their own: the kernel's nodes keep the names they had
        variables = [loop_symbol(namer.fresh("_p")) for _ in shape]
        accesses = tuple(
            _pass_access(arrays[a], a in per_row, variables, axis, span, a == name)
            for a in (*operands, name)
        )
        statement = Statement(span, f"{text} ({name})", FlopTally(), accesses)
        calls.append(Region("nest", (_nest(variables, shape, [statement], span),), span))
    return tuple(calls)


def _pass_access(
    leaf: Leaf,
    row: bool,
    variables: Sequence[sympy.Symbol],
    axis: int | None,
    span: Span,
    write: bool,
) -> Access:
    """`leaf` at a dispatch's coordinates; one element per row (`row`) at the reduced axis's
    0 (kept with keepdims) or without it."""
    coords: list[sympy.Expr] = list(variables)
    if row:
        kept = [sympy.Integer(0) if d == axis else v for d, v in enumerate(variables)]
        coords = kept if len(leaf.shape) == len(variables) else [v for v in kept if v != 0]
    return _access(leaf, coords, leaf.shape, span, write)


def _access(
    leaf: Leaf, coords: Sequence[sympy.Expr], shape: Shape, span: Span, write: bool = False
) -> Access:
    """`leaf` read (or written) at the kernel's coordinates, broadcast as NumPy does."""
    at = broadcast_coordinates(coords, shape, leaf.shape)
    bindings = {coordinate(d): c for d, c in enumerate(at)}
    index = tuple(substituted(e, bindings) for e in leaf.index)
    return Access(leaf.array, index, leaf.element, write, span, leaf.text)


def _row_nodes(
    namer: Namer,
    span: Span,
    text: str,
    shape: Shape,
    reads: Sequence[Leaf],
    out: Leaf,
    axis: int | None,
    counts: _Counts,
    reduces: bool,
) -> list[Node]:
    variables = [loop_symbol(namer.fresh("_i")) for _ in shape]
    accesses = [_access(r, variables, shape, span) for r in reads]
    if not reduces:
        accesses.append(_access(out, variables, shape, span, write=True))
    each = Statement(span, text, counts.element, tuple(accesses), counts.element_specials)
    if axis is None:
        return [_nest(variables, shape, [each], span)]
    n = shape[axis]
    row: list[Node] = [Loop(variables[axis].name, sympy.Integer(0), 1, n, (each,), span)]
    if counts.combines:
        adds = Statement(span, f"{text} (row sums)", FlopTally(add=counts.combines))
        combine = loop_symbol(namer.fresh("_k"))
        row.append(Loop(combine.name, sympy.Integer(0), 1, sympy.expand(n - 1), (adds,), span))
    written: tuple[Access, ...] = ()
    if reduces:
        kept = [sympy.Integer(0) if d == axis else v for d, v in enumerate(variables)]
        coords = kept if len(out.shape) == len(shape) else [v for v in kept if v != 0]
        bindings = {coordinate(d): c for d, c in enumerate(coords)}
        index = tuple(substituted(e, bindings) for e in out.index)
        written = (Access(out.array, index, out.element, True, span, out.text),)
    if not counts.row.is_zero() or counts.row_specials or written:
        row.append(Statement(span, f"{text} (per row)", counts.row, written, counts.row_specials))
    outer = [v for d, v in enumerate(variables) if d != axis]
    extents = tuple(e for d, e in enumerate(shape) if d != axis)
    return [_nest(outer, extents, row, span)] if outer else row


def _nest(variables: Sequence[sympy.Symbol], shape: Shape, body: list[Node], span: Span) -> Node:
    nodes: list[Node] = body
    for variable, extent in zip(reversed(variables), reversed(shape), strict=True):
        nodes = [Loop(variable.name, sympy.Integer(0), 1, extent, tuple(nodes), span)]
    assert len(nodes) == 1
    return nodes[0]


# ---- operators ---------------------------------------------------------------------------


def _along(
    counts: _Counts,
    dim_names: tuple[str, ...],
    position: int,
    default: int | None = None,
    dispatches: Dispatches = (),
) -> OnTensor:
    """softmax-like kernels: `(x, dim)`; `default` the axis when none is passed (JAX's -1)."""

    def read(reader: ExpressionReader, call: _Call) -> Value | None:
        node = call.node
        x = call.first(reader, "input", "x", "a")
        if x is None or not x.shape:
            return (
                None
                if x is None
                else reader.unsupported(node, f"`{reader.names.text(node)}` of a scalar")
            )
        axis_node = call.argument(position, *dim_names)
        if _is_none(axis_node) and default is not None:
            axis: int | None = default % max(len(x.shape), 1)
        else:
            axis = _axis(reader, axis_node, len(x.shape), node)
        element = _dtype_argument(reader, node)
        if axis is None or element is False:
            return None
        typed = element if isinstance(element, ElementType) else _autocast_fp32(reader, x)
        return _kernel(reader, node, [x], axis, counts, element=typed, dispatches=dispatches)

    return read


def _autocast_fp32(reader: ExpressionReader, x: ArrayValue) -> ElementType | None:
    """softmax and log_softmax in a CUDA autocast region (`fp32_set_opt_dtype`): a float16
    or bfloat16 input is read as it is and the result is float32, one kernel."""
    region = reader.autocast
    lower = (dtypes.FLOAT16, dtypes.BFLOAT16)
    if region is not None and region.fp32_ops and x.element in lower:
        return dtypes.FLOAT32
    return None


def _dtype_argument(reader: ExpressionReader, node: cst.Call) -> ElementType | bool:
    """`dtype=` (the result's and the computation's), or True when absent; False (noted)
    when it is not a known dtype."""
    found = _keyword(node, "dtype")
    if _is_none(found):
        return True
    assert found is not None
    element = _dtype_node(reader, found)
    if element is None:
        reader.unsupported(found, f"`{reader.names.text(found)}` is not a known dtype")
        return False
    return element


_SOFTMAX = _Counts(FlopTally(sub=1, div=1, special=1), ("exp",), combines=1)
"""max (comparisons), `x - max`, `exp`, the row sum, the divide: `3n - 1` + `n` exp."""
_LOG_SOFTMAX = _Counts(
    FlopTally(sub=2, special=1),
    ("exp",),
    combines=1,
    row=FlopTally(special=1),
    row_specials=("log",),
)
"""`x - max - log(sum(exp(x - max)))`: `3n - 1` + `n` exp and one log per row."""
_LOGSUMEXP = _Counts(
    FlopTally(sub=1, special=1),
    ("exp",),
    combines=1,
    row=FlopTally(add=1, special=1),
    row_specials=("log",),
)
"""`max + log(sum(exp(x - max)))`: `2n` + `n` exp and one log per row."""


_JAX_SOFTMAX: Dispatches = (
    ("r1", ("x",)),  # reduce_max
    ("r2", ("r1",)),  # max(-inf, .)
    ("t1", ("x", "r2")),
    ("t2", ("t1",)),
    ("r3", ("t2",)),  # reduce_sum
    ("out", ("t2", "r3")),
)
"""`jax.nn.softmax` (a plain function in JAX 0.10): six dispatches."""
_JAX_LOGSUMEXP: Dispatches = (
    ("r1", ("x",)),  # reduce_max
    ("r2", ("r1",)),  # max(-inf, .)
    ("m1", ("r2",)),  # is_finite
    ("r3", ()),  # broadcast 0.0
    ("r4", ("m1", "r3", "r2")),  # select_n
    ("t1", ("x", "r4")),
    ("t2", ("t1",)),
    ("r5", ("t2",)),  # reduce_sum
    ("r6", ("r5",)),  # sign
    ("r7", ("r5",)),  # abs
    ("r8", ("r7",)),  # log
    ("out", ("r8", "r4")),
)
"""`jax.nn.logsumexp`: twelve dispatches, all but three on one element per row."""
_JAX_GELU_TANH: Dispatches = (
    ("t1", ("x",)),  # integer_pow 3
    ("t2", ("t1",)),
    ("t3", ("x", "t2")),
    ("t4", ("t3",)),
    ("t5", ("t4",)),  # tanh
    ("t6", ("t5",)),
    ("t7", ("t6",)),
    ("out", ("x", "t7")),
)
"""`jax.nn.gelu(x)` (tanh form): eight dispatches."""
_JAX_GELU_ERF: Dispatches = (
    ("t1", ("x",)),  # 0.5 * x
    ("t2", ("x",)),  # -x
    ("t3", ("t2",)),  # * sqrt(1/2)
    ("t4", ("t3",)),  # erfc
    ("out", ("t1", "t4")),
)
"""`jax.nn.gelu(x, approximate=False)`: `0.5 * x * erfc(-x * sqrt(1/2))`, five dispatches."""


def _logsumexp(reader: ExpressionReader, call: _Call) -> Value | None:
    node = call.node
    x = call.first(reader, "input", "a")
    if x is None:
        return None
    axis = _axis(reader, call.argument(1, "dim", "axis"), len(x.shape), node)
    keepdim = _flag(call.argument(2, "keepdim", "keepdims"), False)
    if axis is None or keepdim is None:
        return None
    cast = reader.autocast_operands([x], node, "fp32")
    if cast is None:
        return None
    jax = (reader.names.canonical(node.func) or "").startswith("jax.")
    return _kernel(
        reader, node, cast, axis, _LOGSUMEXP, reduces=True, keepdim=keepdim,
        dispatches=_JAX_LOGSUMEXP if jax else (),
    )  # fmt: skip


def _parameter(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`nn.Parameter(torch.ones(d))`: the tensor it wraps, as a module's state."""
    data = _argument(node, 0, "data")
    return None if data is None else reader.value(data)


def _normalized(
    reader: ExpressionReader, node: cst.Call, x: ArrayValue, shape_node: cst.BaseExpression | None
) -> bool:
    """`normalized_shape` must be the last axis (`(d,)`, `[d]`, `d`, `x.shape[-1:]`)."""
    if shape_node is None:
        return True
    if isinstance(shape_node, cst.Attribute) and shape_node.attr.value == "shape":
        owner = reader.array(shape_node.value)  # `self.weight.shape`: a vector's extent
        if owner is None or len(owner.shape) != 1:
            reader.unsupported(node, f"`{reader.names.text(node)}`: its normalized shape")
            return False
        if x.shape:
            reader.unify((x.shape[-1],), owner.shape)
        return True
    items = shape_node.elements if isinstance(shape_node, cst.Tuple | cst.List) else None
    if items is not None and len(items) != 1:
        reader.unsupported(node, f"`{reader.names.text(node)}`: normalizing over several axes")
        return False
    value = reader.value(items[0].value if items is not None else shape_node)
    if isinstance(value, Integer) and value.value is not None and x.shape:
        reader.unify((x.shape[-1],), (value.value,))
    return True


def _norm(rms: bool) -> Reader:
    """`F.layer_norm(x, (d,), weight, bias, eps)`, `F.rms_norm(x, (d,), weight, eps)`: one
    kernel over the last axis. layer_norm as `native_layer_norm` decomposes it: mean
    (`n - 1` adds, 1 div), variance of `x - mean` (`n` sub, `n` mul, `n - 1` adds, 1 div),
    `rsqrt(var + eps)` (1 add, 1 special), `(x - mean) * rstd` (`n` sub, `n` mul), then
    `* weight` and `+ bias` (`n` each): `8n + 1` per row with both. rms_norm: `x * x` (`n`
    mul), its mean (`n - 1` adds, 1 div), `rsqrt(ms + eps)`, `x * rstd`, `* weight`."""

    def read(reader: ExpressionReader, node: cst.Call) -> Value | None:
        x = _array(reader, _argument(node, 0, "input", "x"))
        if x is None or not x.shape:
            return None if x is None else reader.unsupported(node, "a norm of a scalar")
        if not _normalized(reader, node, x, _argument(node, 1, "normalized_shape")):
            return None
        weight_node = _argument(node, 2, "weight")
        bias_node = None if rms else _argument(node, 3, "bias")
        extras: list[ArrayValue | None] = []
        for extra in (weight_node, bias_node):
            value = None if _is_none(extra) else _array(reader, extra)
            if value is None and not _is_none(extra):
                return None
            extras.append(value)
        return norm_value(reader, node, x, extras[0], extras[1], rms=rms)

    return read


def norm_value(
    reader: ExpressionReader,
    node: cst.Call,
    x: ArrayValue,
    weight: ArrayValue | None,
    bias: ArrayValue | None,
    *,
    rms: bool,
) -> Value | None:
    """layer_norm (or rms_norm) of `x` over its last axis, with the parameters given."""
    if not x.shape:
        return reader.unsupported(node, "a norm of a scalar")
    operands = [x, *(p for p in (weight, bias) if p is not None)]
    if not rms:  # layer_norm is on autocast's `fp32` list; rms_norm is on none
        cast = reader.autocast_operands(operands, node, "fp32")
        if cast is None:
            return None
        operands = cast
    scaled, shifted = int(weight is not None), int(bias is not None)
    if rms:
        counts = _Counts(
            FlopTally(mul=2 + scaled), combines=1, row=FlopTally(add=1, div=1, special=1),
            row_specials=("rsqrt",),
        )  # fmt: skip
    else:
        counts = _Counts(
            FlopTally(sub=2, mul=2 + scaled, add=shifted), combines=2,
            row=FlopTally(add=1, div=2, special=1), row_specials=("rsqrt",),
        )  # fmt: skip
    return _kernel(reader, node, operands, len(x.shape) - 1, counts)


def _group_norm(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`F.group_norm(x, G, weight, bias, eps)`."""
    x = _array(reader, _argument(node, 0, "input"))
    groups = reader.value(_argument(node, 1, "num_groups") or cst.Name("None"))
    if x is None:
        return None
    if (
        not isinstance(groups, Integer)
        or groups.value is None
        or (groups.value.is_number and groups.value <= 0)
    ):
        return reader.unsupported(node, f"`{reader.names.text(node)}`: its number of groups")
    extras: list[ArrayValue | None] = []
    for extra in (_argument(node, 2, "weight"), _argument(node, 3, "bias")):
        value = None if _is_none(extra) else _array(reader, extra)
        if value is None and not _is_none(extra):
            return None
        extras.append(value)
    return group_norm_value(reader, node, x, groups.value, extras[0], extras[1])


def group_norm_value(
    reader: ExpressionReader,
    node: cst.Call,
    x: ArrayValue,
    groups: sympy.Expr,
    weight: ArrayValue | None,
    bias: ArrayValue | None,
) -> Value | None:
    """group_norm of `x` `(N, C, *S)`: layer_norm's FLOPs (`_norm`) over each group of
    `n = C/G * prod(S)` elements, the weight and bias per channel; one kernel (PyTorch's
    `native_group_norm`) reading `x`, the weight and the bias and writing `y`."""
    text = reader.names.text(node)
    if len(x.shape) < 2:
        return reader.unsupported(
            node, f"`{text}`: an input of rank {len(x.shape)}, not (N, C, ...)"
        )
    batch, channels, *extents = x.shape
    for extra in (weight, bias):
        if extra is not None and len(extra.shape) != 1:
            return reader.unsupported(
                node, f"`{text}`: a weight or bias of shape {shape_text(extra.shape)}"
            )
        if extra is not None and not same_extent(extra.shape[0], channels):
            reader.note(
                UnknownKind.ASSUMPTION,
                node,
                f"`{text}`: its {channels} channels taken as the {extra.shape[0]} of "
                f"`{extra.text}` (PyTorch requires it)",
            )
    cast = reader.autocast_operands(
        [o for o in (x, weight, bias) if o is not None], node, "fp32"
    )  # group_norm is on autocast's fp32 list
    if cast is None:
        return None
    per_group = sympy.cancel(channels / groups)
    size = sympy.Mul(per_group, *extents)
    scaled, shifted = int(weight is not None), int(bias is not None)

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        stores, reads = _operand_leaves(cast, namer, span)
        image, *params = reads
        n, g = loop_symbol(namer.fresh("_i")), loop_symbol(namer.fresh("_g"))
        inner = [loop_symbol(namer.fresh("_i")) for _ in (per_group, *extents)]
        at = (n, g * per_group + inner[0], *inner[1:])
        accesses = [_access(image, at, image.shape, span)]
        accesses += [_access(p, (g * per_group + inner[0],), p.shape, span) for p in params]
        accesses.append(_access(leaf, at, leaf.shape, span, write=True))
        each = Statement(span, text, FlopTally(sub=2, mul=2 + scaled, add=shifted), tuple(accesses))
        body: list[Node] = [_nest(inner, (per_group, *extents), [each], span)]
        for _ in range(2):  # the sums of the mean and of the variance
            k = loop_symbol(namer.fresh("_k"))
            adds = Statement(span, f"{text} (group sums)", FlopTally(add=1))
            body.append(Loop(k.name, sympy.Integer(0), 1, sympy.expand(size - 1), (adds,), span))
        body.append(
            Statement(
                span, f"{text} (per group)", FlopTally(add=1, div=2, special=1), (), ("rsqrt",)
            )
        )
        nodes = (_nest([n, g], (batch, groups), body, span),)
        return Construction(
            tuple(stores), nodes, library=False, arguments=tuple(s.array for s, _ in stores)
        )

    return Allocation(x.shape, cast[0].element, False, text, build)


def flax_layer_norm(
    reader: ExpressionReader,
    node: cst.Call,
    x: ArrayValue,
    scale: ArrayValue | None,
    bias: ArrayValue | None,
) -> Value | None:
    """Flax's `nn.LayerNorm` over the last axis, as it computes it (`use_fast_variance`):
    `x * x` (`n` mul), mean and mean of squares (`n - 1` adds and a divide each),
    `var = mean2 - mean**2` (1 mul, 1 sub; the `max(0, .)` free), `rsqrt(var + eps)` (1 add,
    1 special), `* scale` (`n` mul), `x - mean` (`n` sub), their product (`n` mul), `+ bias`
    (`n` add): `7n + 3` per row with both. Eagerly, one dispatch per primitive."""
    if not x.shape:
        return reader.unsupported(node, "a norm of a scalar")
    operands = [x, *(p for p in (scale, bias) if p is not None)]
    counts = _Counts(
        FlopTally(mul=2 + int(scale is not None), sub=1, add=int(bias is not None)),
        combines=2, row=FlopTally(add=1, div=2, mul=1, sub=1, special=1), row_specials=("rsqrt",),
    )  # fmt: skip
    scaled = "p1" if scale is not None else ""
    shifted = f"p{len(operands) - 1}" if bias is not None else ""
    dispatches: list[tuple[str, tuple[str, ...]]] = [
        ("t1", ("x",)),  # square
        ("r1", ("x",)),  # reduce_sum
        ("r2", ("r1",)),  # / n: the mean
        ("r3", ("t1",)),
        ("r4", ("r3",)),  # the mean of squares
        ("r5", ("r2",)),  # square
        ("r6", ("r4", "r5")),  # var
        ("r7", ("r6",)),  # max(0, .)
        ("t2", ("x", "r2")),  # x - mean
        ("r8", ("r7",)),  # + eps
        ("r9", ("r8",)),  # rsqrt
    ]
    factor = "r9"
    if scaled:
        dispatches.append(("t3", ("r9", scaled)))
        factor = "t3"
    dispatches.append(("t4" if shifted else "out", ("t2", factor)))
    if shifted:
        dispatches.append(("out", ("t4", shifted)))
    axis = len(x.shape) - 1
    return _kernel(reader, node, operands, axis, counts, dispatches=tuple(dispatches))


_GELU_ERF = _Counts(FlopTally(mul=3, add=1, special=1), ("erf",))
"""`0.5 * x * (1 + erf(x * sqrt(1/2)))`: 3 mul, 1 add, 1 erf."""
_GELU_TANH = _Counts(FlopTally(mul=6, add=2, special=1), ("tanh",))
"""`0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))`: 6 mul, 2 add, 1 tanh."""
_JAX_GELU_ERF_COUNTS = _Counts(FlopTally(mul=3, special=1), ("erfc",))
"""JAX's exact gelu, `0.5 * x * erfc(-x * sqrt(1/2))`: 3 mul (the negation is free), 1 erfc."""
_SILU = _Counts(FlopTally(mul=1, special=1), ("sigmoid",))
"""`x * sigmoid(x)`: 1 mul, 1 sigmoid (a special, as `torch.sigmoid` is)."""
_ONE_SPECIAL = {name: _Counts(FlopTally(special=1), (name,)) for name in ("sigmoid", "tanh")}
_FREE = _Counts()
"""relu: comparisons only, 0 FLOPs (MODEL.md), one kernel."""


def _gelu(jax: bool) -> Reader:
    """`F.gelu(x, approximate="none" | "tanh")`; `jax.nn.gelu(x, approximate=True)`, whose
    default is the tanh form."""

    def read(reader: ExpressionReader, node: cst.Call) -> Value | None:
        x = _array(reader, _argument(node, 0, "input", "x"))
        if x is None:
            return None
        form = _argument(node, 1, "approximate")
        if jax:
            tanh = _flag(form, True)
        else:
            text = reader.names.text(form).strip("'\"") if form is not None else "none"
            tanh = {"none": False, "tanh": True}.get(text)
        if tanh is None:
            return reader.unsupported(node, f"`{reader.names.text(node)}`: approximate form")
        if jax:
            counts, dispatches = (
                (_GELU_TANH, _JAX_GELU_TANH) if tanh else (_JAX_GELU_ERF_COUNTS, _JAX_GELU_ERF)
            )
            return _kernel(reader, node, [x], None, counts, dispatches=dispatches)
        return _kernel(reader, node, [x], None, _GELU_TANH if tanh else _GELU_ERF)

    return read


_ACTIVATIONS = {
    "GELU": _GELU_ERF,
    "SiLU": _SILU,
    "ReLU": _FREE,
    "Sigmoid": _ONE_SPECIAL["sigmoid"],
    "Tanh": _ONE_SPECIAL["tanh"],
}


def activation(
    reader: ExpressionReader, node: cst.Call, x: ArrayValue, kind: str, option: str
) -> Value | None:
    """The kernel of `nn.GELU(approximate=option)`, `nn.SiLU()`, `nn.ReLU()`... on `x`."""
    counts = _GELU_TANH if kind == "GELU" and option == "tanh" else _ACTIVATIONS.get(kind)
    if counts is None:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: layer `{kind}`")
    return _kernel(reader, node, [x], None, counts)


def softmax_value(
    reader: ExpressionReader, node: cst.Call, x: ArrayValue, dim: str
) -> Value | None:
    """`nn.Softmax(dim)(x)`."""
    value = number_literal(cst.parse_expression(dim)) if dim else None
    rank = len(x.shape)
    if not isinstance(value, int) or not -rank <= value < rank:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: softmax dim `{dim}`")
    return _kernel(reader, node, [x], value % rank, _SOFTMAX, element=_autocast_fp32(reader, x))


def _elementwise(counts: _Counts) -> Reader:
    def read(reader: ExpressionReader, node: cst.Call) -> Value | None:
        x = _array(reader, _argument(node, 0, "input", "x"))
        return None if x is None else _kernel(reader, node, [x], None, counts)

    return read


def _dropout(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`F.dropout(x, p, training)`: counted as in evaluation, where it returns `x` itself
    (no FLOPs, no traffic); a note says so, since `F.dropout`'s default is training."""
    x = _array(reader, _argument(node, 0, "input", "x"))
    return None if x is None else dropout_value(reader, node, x)


def dropout_value(reader: ExpressionReader, node: cst.Call, x: ArrayValue) -> Value:
    reader.note(
        UnknownKind.ASSUMPTION,
        node,
        f"`{reader.names.text(node)}`: dropout counted as in evaluation (returns its input: "
        "no FLOPs, no traffic); in training it also draws a mask and scales",
    )
    return x


def _linear(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`F.linear(x, w, b)`: `x @ w.T + b` (`w` is `(out, in)`), the bias added by a second
    call (eager), as `matmul` then `add`."""
    x = _array(reader, _argument(node, 0, "input"))
    w = _array(reader, _argument(node, 1, "weight"))
    if x is None or w is None:
        return None
    bias_node = _argument(node, 2, "bias")
    bias = None if _is_none(bias_node) else _array(reader, bias_node)
    if bias is None and not _is_none(bias_node):
        return None
    return linear_value(reader, node, x, w, bias)


def linear_value(
    reader: ExpressionReader,
    node: cst.Call,
    x: ArrayValue,
    w: ArrayValue,
    bias: ArrayValue | None,
) -> Value | None:
    """`x @ w.T (+ bias)`."""
    if len(w.shape) != 2:
        return reader.unsupported(
            node, f"`{reader.names.text(node)}`: a weight of rank {len(w.shape)}"
        )
    transposed = _permuted(reader, node, w, (1, 0))
    if transposed is None:
        return None
    product = reader.contract_matmul(x, transposed, node)
    if product is None or bias is None:
        return product
    cast = reader.autocast_operands([bias], node, "lower_precision_fp")  # linear's bias too
    if cast is None:
        return None
    # PyTorch runs a linear layer with a bias as one `addmm`: the product is never stored.
    name = ADDMM if reader.framework == "torch" else "add"
    return reader.elementwise("add", name, (product, *cast), node)


def _permuted(
    reader: ExpressionReader, node: cst.CSTNode, value: ArrayValue, axes: Sequence[int]
) -> ArrayValue | None:
    result = through_operands(value, lambda leaf: permuted(leaf, axes), reader.names.text(node))
    if isinstance(result, str):
        reader.unsupported(node, f"`{reader.names.text(node)}`: {result}")
        return None
    return result


def _baddbmm(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`torch.baddbmm(input, b1, b2)` (beta = alpha = 1): `input + b1 @ b2`."""
    if _keyword(node, "beta") is not None or _keyword(node, "alpha") is not None:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: beta and alpha")
    values = [_array(reader, _argument(node, i)) for i in range(3)]
    if any(v is None for v in values):
        return None
    base, left, right = (v for v in values if v is not None)
    product = reader.contract_matmul(left, right, node)
    cast = reader.autocast_operands([base], node, "lower_precision_fp")  # baddbmm's input too
    if product is None or cast is None:
        return None
    return reader.elementwise("add", "add", (*cast, product), node)


def _axis_pairs(node: cst.BaseExpression) -> tuple[list[list[int]], list[list[int]]] | None:
    """`((ca, cb), (ba, bb))` of literal axes: the contracting and the batch axes of each
    operand; None when not literal."""

    def axes(item: cst.BaseExpression) -> list[int] | None:
        if not isinstance(item, cst.Tuple | cst.List):
            return None
        found = [number_literal(e.value) for e in item.elements]
        return (
            [a for a in found if isinstance(a, int)]
            if all(isinstance(a, int) for a in found)
            else None
        )

    if not isinstance(node, cst.Tuple | cst.List) or len(node.elements) != 2:
        return None
    groups: list[list[list[int]]] = []
    for group in node.elements:
        if not isinstance(group.value, cst.Tuple | cst.List) or len(group.value.elements) != 2:
            return None
        sides = [axes(e.value) for e in group.value.elements]
        if sides[0] is None or sides[1] is None or len(sides[0]) != len(sides[1]):
            return None
        groups.append([sides[0], sides[1]])
    return groups[0], groups[1]


def _dot_general(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`jax.lax.dot_general(a, b, ((ca, cb), (ba, bb)))`: a contraction over the paired
    axes `ca`/`cb`, batched over `ba`/`bb`; the result's axes are the batch axes, then
    `a`'s free axes, then `b`'s, as XLA orders them."""
    a, b = (_array(reader, _argument(node, i, n)) for i, n in ((0, "lhs"), (1, "rhs")))
    numbers_node = _argument(node, 2, "dimension_numbers")
    if a is None or b is None or numbers_node is None:
        return None
    numbers = _axis_pairs(numbers_node)
    ra, rb = len(a.shape), len(b.shape)
    if numbers is None:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: dimension numbers")
    (ca, cb), (ba, bb) = numbers
    pairs = list(zip(ca + ba, cb + bb, strict=True))
    if any(not (0 <= i < ra and 0 <= j < rb) for i, j in pairs):
        return reader.unsupported(node, f"`{reader.names.text(node)}`: axes out of range")
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    left = [next(letters) for _ in range(ra)]
    right = [next(letters) for _ in range(rb)]
    for i, j in pairs:
        right[j] = left[i]
    batch = [left[i] for i in ba]
    contracted = {left[i] for i in ca}
    free_a = [c for c in left if c not in contracted and c not in batch]
    free_b = [c for c in right if c not in contracted and c not in batch]
    out = "".join(batch + free_a + free_b)
    return reader.contract((a, b), ("".join(left), "".join(right)), out, node)


def _masked_fill(reader: ExpressionReader, call: _Call) -> Value | None:
    """`torch.masked_fill(x, mask, value)`: a select (0 FLOPs), as `where(mask, value, x)`."""
    x = call.first(reader, "input")
    mask, fill = (_array(reader, call.argument(i, name)) for i, name in ((1, "mask"), (2, "value")))
    if x is None or mask is None or fill is None:
        return None
    return reader.elementwise("free", "where", (mask, fill, x), call.node)


def _sdpa(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale)`:
    the reference algorithm's FLOPs (scores `2E - 1` each, the scale, softmax, `p @ v`),
    over the causal half where `is_causal` (key `j <= i`, as the iteration really runs),
    with the traffic of a fused attention kernel (FlashAttention, memory-efficient
    attention): q, k, v read once, the output written once, the scores never stored. An
    `attn_mask` is read once per element; a float mask adds to each score (1 FLOP per
    pair), a boolean one selects (0)."""
    values = [_array(reader, _argument(node, i, name)) for i, name in enumerate("qkv")]
    if any(v is None for v in values):
        return None
    cast = reader.autocast_operands(
        [x for x in values if x is not None], node, "lower_precision_fp"
    )
    if cast is None:
        return None
    q, k, v = cast
    text = reader.names.text(node)
    mask_node = _argument(node, 3, "attn_mask")
    causal = _flag(_argument(node, 5, "is_causal"), False)
    dropout_node = _argument(node, 4, "dropout_p") or cst.Integer("0")
    dropout = number_literal(dropout_node)
    if dropout is None:  # `dropout_p=self.dropout if self.training else 0`
        reader.note(
            UnknownKind.ASSUMPTION,
            node,
            f"`{text}`: dropout_p `{reader.names.text(dropout_node)}` taken as 0, as in "
            "evaluation; in training the kernel also draws a mask",
        )
        dropout = 0
    mask = None if _is_none(mask_node) else _array(reader, mask_node)
    if causal is None or dropout != 0 or (mask is not None and causal):
        return reader.unsupported(node, f"`{text}`: dropout, or a non-literal is_causal")
    if mask is None and not _is_none(mask_node):
        return None
    if mask is not None:  # a float mask is cast as q, k and v are; a boolean one is not
        masks = reader.autocast_operands([mask], node, "lower_precision_fp")
        if masks is None:
            return None
        (mask,) = masks
    for operand in (k, v):
        if len(operand.shape) != len(q.shape):
            reader.unify(operand.shape, q.shape)  # an inferred k or v has q's rank
    if not (len(q.shape) == len(k.shape) == len(v.shape) >= 2):
        return reader.unsupported(node, f"`{text}`: q, k and v of different ranks")
    batch = q.shape[:-2]
    (length, width), (keys, key_width), (values_, out_width) = (
        q.shape[-2:],
        k.shape[-2:],
        v.shape[-2:],
    )
    pairs = (
        (key_width, width),
        (values_, keys),
        *zip(k.shape[:-2], batch, strict=True),
        *zip(v.shape[:-2], batch, strict=True),
    )
    differ = [(a, b) for a, b in pairs if not same_extent(a, b)]
    for a, b in differ:
        reader.unify((a,), (b,))  # all at once: one more lowering learns them
    if differ:
        a, b = differ[0]
        return reader.unsupported(node, f"`{text}`: extents {a} and {b} differ")
    if causal and not same_extent(length, keys):
        reader.unify((keys,), (length,))  # an inferred key length: causal self-attention
        return reader.unsupported(node, f"`{text}`: is_causal with {length} queries, {keys} keys")
    scores = (*batch, length, keys)
    if mask is not None and broadcast_shapes(scores, mask.shape) != scores:
        reader.unify(mask.shape, scores[len(scores) - len(mask.shape) :])
        return reader.unsupported(
            node, f"`{text}`: attn_mask of shape {shape_text(mask.shape)} against the scores"
        )
    element = q.element
    reader.note(
        UnknownKind.ASSUMPTION,
        node,
        f"`{text}`: traffic of a fused attention kernel (FlashAttention): q, k, v read once, "
        "the output written once, the scores never stored"
        + ("; the causal half of the scores counted (key <= query)" if causal else ""),
    )
    operands = (q, k, v) if mask is None else (q, k, v, mask)

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        stores, reads = _operand_leaves(operands, namer, span)
        nodes, pairs = _attention(namer, span, text, reads, leaf, causal)
        quoted = sympy.expand(2 * pairs * (width + out_width))
        return Construction(
            tuple(stores), (nodes,), (("scaled_dot_product_attention", quoted),),
            arguments=tuple(w.array for w, _ in stores),
        )  # fmt: skip

    return Allocation((*batch, length, out_width), element, False, text, build)


def _operand_leaves(
    operands: Sequence[ArrayValue], namer: Namer, span: Span
) -> tuple[list[tuple[Leaf, ArrayValue]], list[Leaf]]:
    """What a one-kernel operator reads: each array operand as it is, or, for one computed
    at the call (`F.softmax(x @ w)`), the temporary it is stored into first (the stores,
    returned too); scalars are read from registers."""
    stores: list[tuple[Leaf, ArrayValue]] = []
    reads: list[Leaf] = []
    for operand in operands:
        if isinstance(operand, Scalar):
            continue
        if isinstance(operand, Leaf):
            reads.append(operand)
            continue
        work = leaf_for(namer.fresh("_a"), operand.shape, operand.element, span)
        stores.append((work, operand))
        reads.append(work)
    return stores, reads


def _attention(
    namer: Namer, span: Span, text: str, reads: Sequence[Leaf], out: Leaf, causal: bool
) -> tuple[Node, sympy.Expr]:
    """The loops of one attention: per query row `i`, the scores against its keys, the
    softmax, and `p @ v`; and the number of (query, key) pairs."""
    q, k, v, *masks = reads
    batch = [loop_symbol(namer.fresh("_i")) for _ in q.shape[:-2]]
    i, j, e = (loop_symbol(namer.fresh(p)) for p in ("_i", "_j", "_e"))
    length, width = q.shape[-2:]
    keys = i + 1 if causal else k.shape[-2]
    out_width = v.shape[-1]

    def at(leaf: Leaf, *last: sympy.Expr) -> Access:
        return _access(leaf, (*batch, *last), leaf.shape, span)

    def loop(var: sympy.Symbol, trip: sympy.Expr, body: list[Node]) -> Loop:
        return Loop(var.name, sympy.Integer(0), 1, sympy.expand(trip), tuple(body), span)

    def adds(trip: sympy.Expr) -> Loop:
        return loop(
            loop_symbol(namer.fresh("_k")), trip - 1, [Statement(span, text, FlopTally(add=1))]
        )

    products = Statement(span, f"{text} (q k)", FlopTally(mul=1), (at(q, i, e), at(k, j, e)))
    scores = (*q.shape[:-1], k.shape[-2])
    masked = tuple(_access(m, (*batch, i, j), scores, span) for m in masks)
    additive = int(any(m.element.is_float for m in masks))  # a float mask is added
    softmax = Statement(
        span,
        f"{text} (scale, mask, softmax)",
        FlopTally(add=additive, mul=1, sub=1, div=1, special=1),
        masked,
        ("exp",),
    )
    weighted = Statement(span, f"{text} (p v)", FlopTally(mul=1), (at(v, j, e),))
    write = _access(out, (*batch, i, e), out.shape, span, write=True)
    row: list[Node] = [
        loop(j, keys, [loop(e, width, [products]), adds(width), softmax]),
        adds(keys),
        loop(
            e,
            out_width,
            [loop(j, keys, [weighted]), adds(keys), Statement(span, text, FlopTally(), (write,))],
        ),
    ]
    pairs = length * (length + 1) / 2 if causal else length * k.shape[-2]
    for extent in q.shape[:-2]:
        pairs = pairs * extent
    return _nest([*batch, i], (*q.shape[:-2], length), row, span), sympy.expand(pairs)


# ---- convolutions ------------------------------------------------------------------------


def conv_geometry(
    reader: ExpressionReader, node: cst.Call, spatial: int, stride_at: int | None
) -> ConvGeometry | None:
    """`stride=`, `padding=`, `groups=` (or positional from `stride_at`, F.conv's order)
    as sizes; `dilation` other than 1 and string paddings are not modeled (noted)."""
    text = reader.names.text(node)

    def given(position: int, name: str) -> cst.BaseExpression | None:
        found = _keyword(node, name)
        if found is None and stride_at is not None:
            positional = _positional(node)
            at = stride_at + position
            found = positional[at] if at < len(positional) else None
        return found

    def per_axis(found: cst.BaseExpression | None, default: int) -> tuple[sympy.Expr, ...] | None:
        if found is None:
            return (sympy.Integer(default),) * spatial
        items = (
            [e.value for e in found.elements]
            if isinstance(found, cst.Tuple | cst.List)
            else [found] * spatial
        )
        values = [reader.value(item) for item in items]
        sizes = [v.value for v in values if isinstance(v, Integer) and v.value is not None]
        if len(sizes) != spatial or len(values) != spatial:
            reader.unsupported(found, f"`{text}`: `{reader.names.text(found)}` is not a size")
            return None
        return tuple(sizes)

    dilation = per_axis(given(2, "dilation"), 1)
    if dilation is None or any(d != 1 for d in dilation):
        if dilation is not None:
            reader.unsupported(node, f"`{text}`: dilation other than 1")
        return None
    stride, padding = per_axis(given(0, "stride"), 1), per_axis(given(1, "padding"), 0)
    groups = per_axis(given(3, "groups"), 1)
    if stride is None or padding is None or groups is None:
        return None
    if any(v.is_number and v <= 0 for v in (*stride, groups[0])):
        reader.unsupported(node, f"`{text}`: a stride or groups that is not positive")
        return None
    return ConvGeometry(stride, padding, groups[0])


def _conv(spatial: int) -> Reader:
    """`F.conv1d(x, w, bias, stride, padding, dilation, groups)` and `F.conv2d`."""

    def read(reader: ExpressionReader, node: cst.Call) -> Value | None:
        x = _array(reader, _argument(node, 0, "input"))
        w = _array(reader, _argument(node, 1, "weight"))
        bias_node = _argument(node, 2, "bias")
        bias = None if _is_none(bias_node) else _array(reader, bias_node)
        if x is None or w is None or (bias is None and not _is_none(bias_node)):
            return None
        geometry = conv_geometry(reader, node, spatial, 3)
        return None if geometry is None else conv_value(reader, node, x, w, bias, geometry)

    return read


def conv_value(
    reader: ExpressionReader,
    node: cst.Call,
    x: ArrayValue,
    w: ArrayValue,
    bias: ArrayValue | None,
    geometry: ConvGeometry,
) -> Value | None:
    """A convolution of `x` `(N, C_in, *L)` by `w` `(C_out, C_in/groups, *k)`: one eager
    kernel (a contraction, as cuDNN runs it) that reads `x`, `w` (and the bias) and writes
    `y` `(N, C_out, *L_out)`, `L_out = floor((L + 2p - k)/s) + 1` per axis. Each output is
    a dot of `K = C_in/groups * prod(k)` products: `K` mul, `K - 1` adds, 1 more add with a
    bias; `2*N*C_out*prod(L_out)*K` is quoted, FlopCounterMode's figure."""
    text = reader.names.text(node)
    spatial = len(geometry.stride)
    if len(x.shape) != spatial + 2 or len(w.shape) != spatial + 2:
        return reader.unsupported(
            node, f"`{text}`: input and weight of rank {spatial + 2} (a batch, channels, axes)"
        )
    batch, channels, *lengths = x.shape
    outs, per_group, *kernel = w.shape
    if not same_extent(channels, per_group * geometry.groups):
        reader.note(
            UnknownKind.ASSUMPTION,
            node,
            f"`{text}`: its {channels} input channels taken as the weight's {per_group}"
            + (f" per group times {geometry.groups} groups" if geometry.groups != 1 else "")
            + " (PyTorch requires it)",
        )
    if bias is not None and (len(bias.shape) != 1 or not same_extent(bias.shape[0], outs)):
        reader.unify(bias.shape, (outs,))
        return reader.unsupported(node, f"`{text}`: a bias of shape {shape_text(bias.shape)}")
    cast = reader.autocast_operands(
        [o for o in (x, w, bias) if o is not None], node, "lower_precision_fp"
    )
    if cast is None:
        return None
    out_lengths = tuple(
        sympy.floor((length + 2 * p - k) / s) + 1
        for length, p, k, s in zip(lengths, geometry.padding, kernel, geometry.stride, strict=True)
    )
    out_shape = (batch, outs, *out_lengths)
    window = sympy.Mul(per_group, *kernel)
    quoted = sympy.expand(2 * batch * outs * sympy.Mul(*out_lengths) * window)

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        stores, reads = _operand_leaves(cast, namer, span)
        image, weights, *biases = reads
        # the input read whole once (the padding is zeros the kernel makes, never read)
        every = [loop_symbol(namer.fresh("_i")) for _ in image.shape]
        read_x = Statement(
            span, f"{text} (input)", FlopTally(), (_access(image, every, image.shape, span),)
        )
        outer = [loop_symbol(namer.fresh("_o")) for _ in out_shape]
        taps = [loop_symbol(namer.fresh("_c")) for _ in w.shape[1:]]
        weight_at = _access(weights, (outer[1], *taps), weights.shape, span)
        product = Statement(span, f"{text} (products)", FlopTally(mul=1), (weight_at,))
        adds = Statement(span, f"{text} (sums)", FlopTally(add=1))
        combine = loop_symbol(namer.fresh("_k"))
        sums = Loop(combine.name, sympy.Integer(0), 1, sympy.expand(window - 1), (adds,), span)
        written = [_access(leaf, outer, leaf.shape, span, write=True)]
        written += [_access(b, (outer[1],), b.shape, span) for b in biases]
        result = Statement(span, f"{text} (output)", FlopTally(add=len(biases)), tuple(written))
        body = [_nest(taps, tuple(w.shape[1:]), [product], span), sums, result]
        nodes = (_nest(every, image.shape, [read_x], span), _nest(outer, out_shape, body, span))
        return Construction(
            tuple(stores), nodes, ((f"conv{spatial}d", quoted),),
            arguments=tuple(s.array for s, _ in stores),
        )  # fmt: skip

    return Allocation(out_shape, cast[0].element, False, text, build)


# ---- losses ------------------------------------------------------------------------------


_NLL_REDUCTIONS = ("mean", "sum", "none")


def _cross_entropy(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`F.cross_entropy(logits, target)` with one class index per row of an `(N, C)`
    input: PyTorch runs it as two kernels, `log_softmax` over the classes (written whole),
    then `nll_loss` on its result (`_nll_losses`)."""
    x = _array(reader, _argument(node, 0, "input"))
    target = _array(reader, _argument(node, 1, "target"))
    if x is None or target is None:
        return None
    if len(x.shape) != 2:
        return reader.unsupported(
            node, f"`{reader.names.text(node)}`: an input of rank {len(x.shape)}, not (N, C)"
        )
    if not _loss_options(reader, node, ("label_smoothing",)):
        return None
    cast = reader.autocast_operands([x], node, "fp32")  # cross_entropy is on autocast's fp32 list
    if cast is None:
        return None
    logp = _kernel(reader, node, cast, 1, _LOG_SOFTMAX)
    stored = reader.materialize(logp, node) if isinstance(logp, Allocation) else None
    return None if stored is None else _nll_losses(reader, node, stored, target)


def _nll_loss(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`F.nll_loss(logp, target)`: one kernel (`_nll_losses`)."""
    logp = _array(reader, _argument(node, 0, "input"))
    target = _array(reader, _argument(node, 1, "target"))
    if logp is None or target is None:
        return None
    if len(logp.shape) != 2:
        return reader.unsupported(
            node, f"`{reader.names.text(node)}`: an input of rank {len(logp.shape)}, not (N, C)"
        )
    if not _loss_options(reader, node, ()):
        return None
    return _nll_losses(reader, node, logp, target)


def _loss_options(reader: ExpressionReader, node: cst.Call, zero: tuple[str, ...]) -> bool:
    """Class weights and the `zero` options (`label_smoothing`) other than 0 are not
    modeled (noted); `ignore_index` is an assumption: no target is taken to equal it."""
    text = reader.names.text(node)
    weight = _keyword(node, "weight")
    if not _is_none(weight):
        reader.unsupported(node, f"`{text}`: class weights")
        return False
    for name in zero:
        given = _keyword(node, name)
        if given is not None and number_literal(given) != 0:
            reader.unsupported(node, f"`{text}`: {name} `{reader.names.text(given)}`")
            return False
    ignore = _keyword(node, "ignore_index")
    if ignore is not None:
        reader.note(
            UnknownKind.ASSUMPTION,
            node,
            f"`{text}`: every target taken as a class (none equal to ignore_index "
            f"`{reader.names.text(ignore)}`): the sum's adds are an upper bound where some are",
        )
    return True


def _nll_losses(
    reader: ExpressionReader, node: cst.Call, logp: ArrayValue, target: ArrayValue
) -> Value | None:
    """`nll_loss` of `logp` `(N, C)` at one class per row, `target` `(N,)` (int64, as
    PyTorch requires of class indices): each row's entry at its target is read (one element
    a row: `N` distinct elements, whichever the classes), negated (free), and summed
    (`N - 1` adds) then divided by `N` for `reduction="mean"` (the default); `"none"`
    writes the `N` negated entries. Its kernel reads the targets and the picked entries
    and writes the result (the dispatch logger counts `logp` whole, as it counts every
    operand)."""
    text = reader.names.text(node)
    reduction_node = _keyword(node, "reduction")
    reduction = (
        reader.names.text(reduction_node).strip("'\"") if reduction_node is not None else "mean"
    )
    if reduction not in _NLL_REDUCTIONS:
        return reader.unsupported(node, f"`{text}`: reduction `{reduction}`")
    if len(target.shape) != 1 or not isinstance(target, Leaf):
        return reader.unsupported(
            node, f"`{text}`: a target of shape {shape_text(target.shape)}, not one class a row"
        )
    rows = logp.shape[0]
    if not same_extent(target.shape[0], rows):
        reader.unify(target.shape, (rows,))
        return reader.unsupported(node, f"`{text}`: {target.shape[0]} targets for {rows} rows")
    classes = replace(target, element=dtypes.INT64)
    if target.element != dtypes.INT64:
        reader.note(
            UnknownKind.ASSUMPTION,
            node,
            f"`{text}`: `{target.text}` read as int64 class indices (PyTorch requires them)",
        )
    out_shape: Shape = (rows,) if reduction == "none" else ()

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        stores, reads = _operand_leaves((logp, classes), namer, span)
        picked, indices = reads
        i = loop_symbol(namer.fresh("_i"))
        # the entry at row i's class: one element of row i (column 0 stands for it)
        accesses = [
            _access(picked, (i, sympy.Integer(0)), picked.shape, span),
            _access(indices, (i,), indices.shape, span),
        ]
        if reduction == "none":
            accesses.append(_access(leaf, (i,), leaf.shape, span, write=True))
        pick = Statement(span, f"{text} (pick)", FlopTally(), tuple(accesses))
        nodes: list[Node] = [_nest([i], (rows,), [pick], span)]
        if reduction != "none":
            k = loop_symbol(namer.fresh("_k"))
            adds = Statement(span, f"{text} (sum)", FlopTally(add=1))
            nodes.append(Loop(k.name, sympy.Integer(0), 1, sympy.expand(rows - 1), (adds,), span))
            write = _access(leaf, (), (), span, write=True)
            divide = FlopTally(div=int(reduction == "mean"))
            nodes.append(Statement(span, f"{text} (result)", divide, (write,)))
        arguments = tuple(w.array for w, _ in stores)
        return Construction(tuple(stores), tuple(nodes), library=False, arguments=arguments)

    return Allocation(out_shape, logp.element, False, text, build)


_ON_TENSORS: dict[str, OnTensor] = {
    "torch.softmax": _along(_SOFTMAX, ("dim",), 1),
    "torch.log_softmax": _along(_LOG_SOFTMAX, ("dim",), 1),
    "torch.logsumexp": _logsumexp,
    "torch.masked_fill": _masked_fill,
    "jax.nn.softmax": _along(_SOFTMAX, ("axis",), 1, default=-1, dispatches=_JAX_SOFTMAX),
    "jax.nn.log_softmax": _along(_LOG_SOFTMAX, ("axis",), 1, default=-1),
}
"""The operators that are also tensor methods (`x.softmax(-1)`), read from a `_Call`."""


def _function(read: OnTensor) -> Reader:
    return lambda reader, node: read(reader, _Call(node))


FRAMEWORK_CALLS: dict[str, Reader] = {
    **{name: _function(read) for name, read in _ON_TENSORS.items()},
    "torch.nn.functional.softmax": _function(_ON_TENSORS["torch.softmax"]),
    "torch.nn.functional.log_softmax": _function(_ON_TENSORS["torch.log_softmax"]),
    "jax.nn.logsumexp": _function(_logsumexp),
    "jax.scipy.special.logsumexp": _function(_logsumexp),
    "torch.nn.Parameter": _parameter,
    "torch.nn.functional.layer_norm": _norm(rms=False),
    "torch.layer_norm": _norm(rms=False),
    "torch.nn.functional.rms_norm": _norm(rms=True),
    "torch.nn.functional.group_norm": _group_norm,
    "torch.group_norm": _group_norm,
    "torch.rms_norm": _norm(rms=True),
    "torch.nn.functional.gelu": _gelu(jax=False),
    "jax.nn.gelu": _gelu(jax=True),
    "torch.nn.functional.silu": _elementwise(_SILU),
    "jax.nn.silu": _elementwise(_SILU),
    "jax.nn.swish": _elementwise(_SILU),
    "torch.nn.functional.relu": _elementwise(_FREE),
    "jax.nn.relu": _elementwise(_FREE),
    "torch.nn.functional.sigmoid": _elementwise(_ONE_SPECIAL["sigmoid"]),
    "jax.nn.sigmoid": _elementwise(_ONE_SPECIAL["sigmoid"]),
    "torch.nn.functional.tanh": _elementwise(_ONE_SPECIAL["tanh"]),
    "torch.nn.functional.dropout": _dropout,
    "torch.dropout": _dropout,
    "torch.nn.functional.linear": _linear,
    "torch.baddbmm": _baddbmm,
    "jax.lax.dot_general": _dot_general,
    "torch.nn.functional.scaled_dot_product_attention": _sdpa,
    "torch.nn.functional.conv1d": _conv(1),
    "torch.conv1d": _conv(1),
    "torch.nn.functional.conv2d": _conv(2),
    "torch.conv2d": _conv(2),
    "torch.nn.functional.cross_entropy": _cross_entropy,
    "torch.nn.functional.nll_loss": _nll_loss,
}
"""Framework operators by qualified name (what `names.py` resolves a call to)."""


# ---- tensor methods (PyTorch) ------------------------------------------------------------


def _method_call(
    read: OnTensor,
) -> Callable[[ExpressionReader, cst.Call, ArrayValue], Value | None]:
    """A method read as the function with the tensor as first argument (`x.softmax(-1)`)."""
    return lambda reader, node, base: read(reader, _Call(node, base))


def _transpose(reader: ExpressionReader, node: cst.Call, base: ArrayValue) -> Value | None:
    """`x.transpose(a, b)`: PyTorch swaps two axes (NumPy's takes a permutation)."""
    rank = len(base.shape)
    axes = [number_literal(a) for a in _positional(node)]
    if len(axes) != 2 or not all(isinstance(a, int) and -rank <= a < rank for a in axes):
        return reader.unsupported(node, f"`{reader.names.text(node)}`: two literal axes")
    first, second = (int(a) % rank for a in axes if a is not None)
    order = list(range(rank))
    order[first], order[second] = order[second], order[first]
    return _permuted(reader, node, base, order)


def _permute(reader: ExpressionReader, node: cst.Call, base: ArrayValue) -> Value | None:
    """`x.permute(0, 2, 1, 3)` (or a tuple): NumPy's `transpose(axes)`."""
    arguments = _positional(node)
    if len(arguments) == 1 and isinstance(arguments[0], cst.Tuple | cst.List):
        arguments = [e.value for e in arguments[0].elements]
    rank = len(base.shape)
    axes = [number_literal(a) for a in arguments]
    if sorted(int(a) % rank for a in axes if isinstance(a, int)) != list(range(rank)):
        return reader.unsupported(
            node, f"`{reader.names.text(node)}`: not a permutation of {rank} axes"
        )
    return _permuted(reader, node, base, [int(a) % rank for a in axes if isinstance(a, int)])


def _view(reader: ExpressionReader, node: cst.Call, base: ArrayValue) -> Value | None:
    """`x.view(b, n, h, d)`: a reshape (a view; PyTorch raises where it cannot be one)."""
    if not isinstance(base, Leaf) or not base.shape:
        what = "a scalar" if not base.shape else "a computed value"
        return reader.unsupported(node, f"`{reader.names.text(node)}` of {what}")
    return read_view(reader, node, "reshape", base, _positional(node))


def _size(reader: ExpressionReader, node: cst.Call, base: ArrayValue) -> Value | None:
    """`x.size(k)`: the extent of axis `k`, as `x.shape[k]`."""
    arguments = _positional(node)
    if len(arguments) != 1:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: only `size(k)` is read")
    axis = number_literal(arguments[0])
    rank = len(base.shape)
    if not isinstance(axis, int) or not -rank <= axis < rank:
        return reader.unsupported(
            node, f"`{reader.names.text(node)}`: axis of a rank-{rank} tensor"
        )
    return Integer(base.shape[axis], reader.names.text(node))


def _cast_to(
    element: ElementType | None,
) -> Callable[[ExpressionReader, cst.Call, ArrayValue], Value | None]:
    """`.float()`, `.half()`, `.bfloat16()`, `.double()`; `.to(dtype)` / `.type(dtype)`
    (element None): a copy in the new dtype (none when it is already that dtype)."""

    def read(reader: ExpressionReader, node: cst.Call, base: ArrayValue) -> Value | None:
        target = element
        if target is None:
            found = _argument(node, 0, "dtype")
            target = _dtype_node(reader, found) if found is not None else None
            if target is None:
                return base  # `.to(device)`, `.to("cuda")`: a move, not a conversion
        if target == base.element:
            return base
        copied = reader.elementwise("free", "astype", (base,), node)
        return None if copied is None else _retyped(copied, target)

    return read


def _type_as(reader: ExpressionReader, node: cst.Call, base: ArrayValue) -> Value | None:
    """`x.type_as(y)`: `x` in `y`'s dtype (llama2.c's `self._norm(x.float()).type_as(x)`):
    a copy where the dtypes differ, `x` itself where they agree."""
    arguments = _positional(node)
    if len(arguments) != 1:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: one tensor argument")
    other = reader.array(arguments[0])
    if other is None:
        return None
    if other.element == base.element:
        return base
    copied = reader.elementwise("free", "astype", (base,), node)
    return None if copied is None else _retyped(copied, other.element)


def _pow(reader: ExpressionReader, node: cst.Call, base: ArrayValue) -> Value | None:
    """`x.pow(2)`: `x ** 2` (one multiply an element; other exponents as `**` reads them)."""
    arguments = _positional(node)
    if len(arguments) != 1:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: one exponent")
    return reader.power(base, arguments[0], reader.names.text(node), node)


def _flatten(reader: ExpressionReader, node: cst.Call, base: ArrayValue) -> Value | None:
    """`x.flatten(start_dim, end_dim)`: the axes from `start_dim` to `end_dim` merged, a view
    of a contiguous tensor as PyTorch makes it (`torch.stack([r, i], dim=-1).flatten(3)`
    views the stacked tensor); NumPy's `flatten` is a copy to one axis."""
    text = reader.names.text(node)
    rank = len(base.shape)
    start_node, end_node = _argument(node, 0, "start_dim"), _argument(node, 1, "end_dim")
    start = number_literal(start_node) if start_node is not None else 0
    end = number_literal(end_node) if end_node is not None else -1
    if not isinstance(start, int) or not isinstance(end, int) or not rank:
        return reader.unsupported(node, f"`{text}`: literal start_dim and end_dim")
    start, end = start % rank, end % rank
    if start > end:
        return reader.unsupported(node, f"`{text}`: start_dim after end_dim")
    merged = sympy.Mul(*base.shape[start : end + 1])
    new = (*base.shape[:start], merged, *base.shape[end + 1 :])
    result = through_operands(base, lambda leaf: reshaped(leaf, new), text)
    if isinstance(result, str) and not isinstance(base, Leaf):
        stored = computed_first(reader, base, node, text=text, library=False)
        result = "not stored" if stored is None else reshaped(stored, new)
    if isinstance(result, str):
        return reader.unsupported(node, f"`{text}`: {result}")
    return result


def _expand(reader: ExpressionReader, node: cst.Call, base: ArrayValue) -> Value | None:
    """`x[:, :, :, None, :].expand(b, t, h, r, d)` (llama2.c's `repeat_kv`): a view whose
    axes of extent 1 are broadcast to the sizes given (-1 keeps an axis)."""
    text = reader.names.text(node)
    arguments = _positional(node)
    if len(arguments) == 1 and isinstance(arguments[0], (cst.Tuple, cst.List)):
        arguments = [e.value for e in arguments[0].elements]
    if not isinstance(base, Leaf) or len(arguments) != len(base.shape):
        return reader.unsupported(node, f"`{text}`: a tensor and one size per axis")
    shape: list[sympy.Expr] = []
    index = base.index
    for axis, (argument, old) in enumerate(zip(arguments, base.shape, strict=True)):
        value = reader.value(argument)
        if not isinstance(value, Integer) or value.value is None:
            return reader.unsupported(node, f"`{reader.names.text(argument)}` is not a size")
        if value.value == -1 or same_extent(value.value, old):
            shape.append(old)
            continue
        if old != 1:
            return reader.unsupported(node, f"`{text}`: expands an axis of extent {old}")
        index = tuple(i.subs(coordinate(axis), 0) for i in index)
        shape.append(value.value)
    return replace(base, shape=tuple(shape), index=index, text=text)


def _broadcast_axes(leaf: Leaf) -> bool:
    """Whether a view repeats elements along an axis (`expand`): its coordinate is unused."""
    used = set().union(*(sympy.sympify(i).free_symbols for i in leaf.index))
    return any(e != 1 and coordinate(d) not in used for d, e in enumerate(leaf.shape))


def _reshape(reader: ExpressionReader, node: cst.Call, base: ArrayValue) -> Value | None:
    """`x.reshape(...)`: a view where PyTorch can make one; of an expanded tensor whose
    repeated axis it merges (`repeat_kv`), a copy, as PyTorch makes it."""
    result = read_view(reader, node, "reshape", base, _positional(node))
    if result is None or not (isinstance(base, Leaf) and _broadcast_axes(base)):
        return result
    if result.shape == base.shape:
        return result
    return reader.elementwise("free", "copy", [result], node)


def _retyped(value: ArrayValue, element: ElementType) -> ArrayValue:
    if isinstance(value, Scalar):
        return Scalar(element, False, value.text, value.constant)
    return replace(value, element=element)


def _same(reader: ExpressionReader, node: cst.Call, base: ArrayValue) -> Value | None:
    """`.contiguous()`, `.detach()`: the tensor itself (a copy of a non-contiguous view is
    not counted, as a reshape's is not)."""
    return base


def _elementwise_method(
    op: str, name: str
) -> Callable[[ExpressionReader, cst.Call, ArrayValue], Value | None]:
    def read(reader: ExpressionReader, node: cst.Call, base: ArrayValue) -> Value | None:
        return reader.elementwise(op, name, (base,), node)

    return read


TENSOR_METHODS: dict[str, Callable[[ExpressionReader, cst.Call, ArrayValue], Value | None]] = {
    "softmax": _method_call(_ON_TENSORS["torch.softmax"]),
    "log_softmax": _method_call(_ON_TENSORS["torch.log_softmax"]),
    "logsumexp": _method_call(_logsumexp),
    "masked_fill": _method_call(_masked_fill),
    "transpose": _transpose,
    "permute": _permute,
    "view": _view,
    "size": _size,
    "float": _cast_to(dtypes.FLOAT32),
    "half": _cast_to(dtypes.FLOAT16),
    "bfloat16": _cast_to(dtypes.BFLOAT16),
    "double": _cast_to(dtypes.FLOAT64),
    "to": _cast_to(None),
    "type": _cast_to(None),
    "type_as": _type_as,
    "expand": _expand,
    "reshape": _reshape,
    "flatten": _flatten,
    "pow": _pow,
    "contiguous": _same,
    "detach": _same,
    "exp": _elementwise_method("special", "exp"),
    "sqrt": _elementwise_method("special", "sqrt"),
    "rsqrt": _elementwise_method("special", "rsqrt"),
    "tanh": _elementwise_method("special", "tanh"),
    "sigmoid": _elementwise_method("special", "sigmoid"),
    "relu": _elementwise_method("free", "relu"),
    "abs": _elementwise_method("free", "abs"),
}
"""PyTorch `Tensor` methods whose meaning is not NumPy's, or that NumPy lacks."""


def read_tensor_method(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`x.method(...)` on a PyTorch tensor, `TENSOR_METHODS[method]`."""
    assert isinstance(node.func, cst.Attribute)
    base = reader.array(node.func.value)
    if base is None:
        return None
    return TENSOR_METHODS[node.func.attr.value](reader, node, base)
