"""NumPy library functions beyond ufuncs and contractions: each written out as NumPy runs it.

Statistics (`std`, `var`, `cov`), `outer` and `ufunc.outer`, the vector and matrix norms,
`triu`/`tril`, constructors that allocate and fill (`eye`, `arange`, `linspace`, `diag`,
`concatenate` and the stacks, `repeat`, `tile`) and the LAPACK drivers (`linalg.solve`,
`linalg.cholesky`, `linalg.inv`). Each becomes the value tree of the operations NumPy's own
implementation performs, so the fused and eager views count them like user code; a
constructor is an `Allocation` whose `build` says what it writes; a LAPACK driver writes out
the textbook algorithm as IR loops, its count stated as a convention (docs/python.md).
An argument form not modeled here is a located note, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst
import sympy

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.arguments import _dtype_node, _keyword, _positional
from aiscan.frontends.python.constructions import Construction
from aiscan.frontends.python.expressions import Allocation, Value, leaf_for, number_literal
from aiscan.frontends.python.shapes import same_extent
from aiscan.frontends.python.symbols import loop_symbol
from aiscan.frontends.python.values import (
    Apply,
    ArrayValue,
    Contract,
    Integer,
    Leaf,
    Reduce,
    Scalar,
    Shape,
    coordinate,
    substituted,
)
from aiscan.ir.arithmetic import operator_flops
from aiscan.ir.nodes import (
    Access,
    ElementType,
    FlopTally,
    Loop,
    Node,
    Statement,
    UnknownKind,
)

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import ExpressionReader
    from aiscan.frontends.python.nests import Namer
    from aiscan.span import Span

__all__ = [
    "LIBRARY",
    "METHODS",
    "count_arguments",
    "read_library_call",
    "read_library_method",
]


def count_arguments(reader: ExpressionReader, node: cst.Call) -> None:
    """An unmodeled call's computed arguments are still computed, as Python evaluates them
    before the call (`mystery(x @ w + b)`): each becomes a temporary whose work and traffic
    are counted. Only the call itself, and what uses its result, are unknown."""
    for argument in node.args:
        expression = argument.value
        if argument.star or not isinstance(
            expression, cst.BinaryOperation | cst.UnaryOperation | cst.Call | cst.Subscript
        ):
            continue
        value = reader.value(expression)
        if not isinstance(value, Apply | Reduce | Contract) or not value.shape:
            continue

        def build(leaf: Leaf, namer: Namer, span: Span, value: ArrayValue = value) -> Construction:
            return Construction(((leaf, value),), arguments=(leaf.array,))

        text = reader.names.text(expression)
        reader.materialize(Allocation(value.shape, value.element, False, text, build), expression)


def read_library_call(reader: ExpressionReader, node: cst.Call, canonical: str) -> Value | None:
    """The value of a call to one of `LIBRARY`'s functions (`canonical` is its key)."""
    before = len(reader.unknowns)
    return _said(reader, node, LIBRARY[canonical](reader, node), before)


def read_library_method(reader: ExpressionReader, node: cst.Call, base: ArrayValue) -> Value | None:
    """`x.std(...)`, `x.var(...)`: the same as `np.std(x, ...)`."""
    assert isinstance(node.func, cst.Attribute)
    before = len(reader.unknowns)
    value = _moment(reader, node, base, _positional(node), node.func.attr.value == "std")
    return _said(reader, node, value, before)


def _said(
    reader: ExpressionReader, node: cst.Call, value: Value | None, before: int
) -> Value | None:
    """`value`; where it is None and nothing said why (a missing argument), say so."""
    if value is None and len(reader.unknowns) == before:
        reader.unsupported(node, f"`{reader.names.text(node)}`: missing or unread arguments")
    return value


# ---- argument reading ------------------------------------------------------------------


def _argument(
    node: cst.Call, position: int, name: str, offset: int = 0
) -> cst.BaseExpression | None:
    """The argument NumPy names `name`, at `position` among the positional ones."""
    keyword = _keyword(node, name)
    if keyword is not None:
        return keyword
    positional = _positional(node)
    return positional[position - offset] if len(positional) > position - offset else None


def _unmodeled_keywords(
    reader: ExpressionReader, node: cst.Call, known: Sequence[str], positional: int
) -> bool:
    """Say so (and return True) when the call passes an argument this module does not read."""
    extra = [
        a.keyword.value for a in node.args if a.keyword is not None and a.keyword.value not in known
    ]
    if len(_positional(node)) > positional or extra or any(a.star for a in node.args):
        what = ", ".join(f"`{e}=`" for e in extra) or "its further positional arguments"
        reader.unsupported(node, f"`{reader.names.text(node)}`: {what} not modeled")
        return True
    return False


def _operands(reader: ExpressionReader, node: cst.Call, count: int) -> list[ArrayValue] | None:
    """Exactly `count` positional array operands and no keyword (noted otherwise)."""
    if _unmodeled_keywords(reader, node, (), count):
        return None
    arguments = _positional(node)
    if len(arguments) != count:
        reader.unsupported(node, f"`{reader.names.text(node)}`: {count} operand(s) expected")
        return None
    values = [reader.array(argument) for argument in arguments]
    return None if any(v is None for v in values) else [v for v in values if v is not None]


def _operand(reader: ExpressionReader, node: cst.BaseExpression | None) -> ArrayValue | None:
    return reader.array(node) if node is not None else None


def _size(reader: ExpressionReader, node: cst.BaseExpression) -> sympy.Expr | None:
    """A size argument: an integer expression in the program's sizes (noted otherwise)."""
    value = reader.value(node)
    if isinstance(value, Integer) and value.value is not None:
        return value.value
    if value is not None:
        reader.unsupported(node, f"`{reader.names.text(node)}` is not a known integer size")
    return None


def _literal_int(reader: ExpressionReader, node: cst.BaseExpression, what: str) -> int | None:
    value = number_literal(node)
    if isinstance(value, int):
        return value
    reader.unsupported(node, f"`{reader.names.text(node)}`: {what} must be an integer literal")
    return None


def _axes(
    reader: ExpressionReader, node: cst.BaseExpression | None
) -> tuple[int, ...] | bool | None:
    """`axis=`: None for all axes, a tuple of literals, or False (noted) when not literal."""
    if node is None or (isinstance(node, cst.Name) and node.value == "None"):
        return None
    items = [e.value for e in node.elements] if isinstance(node, cst.Tuple) else [node]
    values = [number_literal(item) for item in items]
    if all(isinstance(v, int) for v in values):
        return tuple(int(v) for v in values if v is not None)
    reader.note(
        UnknownKind.UNKNOWN_SHAPE,
        node,
        f"`{reader.names.text(node)}`: axis must be an integer literal or a tuple of them; "
        "its work is not counted",
    )
    return False


def _flag(reader: ExpressionReader, node: cst.BaseExpression | None, default: bool) -> bool | None:
    if node is None:
        return default
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    reader.unsupported(node, f"`{reader.names.text(node)}`: a flag must be True or False")
    return None


def _float_element(element: ElementType) -> ElementType:
    return element if element.is_float else dtypes.FLOAT64


# ---- statistics ------------------------------------------------------------------------


def _std(reader: ExpressionReader, node: cst.Call) -> Value | None:
    return _numpy_moment(reader, node, std=True)


def _var(reader: ExpressionReader, node: cst.Call) -> Value | None:
    return _numpy_moment(reader, node, std=False)


def _numpy_moment(reader: ExpressionReader, node: cst.Call, std: bool) -> Value | None:
    arguments = _positional(node)
    operand = _operand(reader, arguments[0] if arguments else None)
    if operand is None:
        return None
    return _moment(reader, node, operand, arguments[1:], std)


def _moment(
    reader: ExpressionReader,
    node: cst.Call,
    operand: ArrayValue,
    rest: list[cst.BaseExpression],
    std: bool,
) -> Value | None:
    """NumPy's `_var`: the mean (sum, divide), `x - mean`, its square, their sum, a divide
    by `count - ddof`; `std` is the sqrt of that. Per result over `n` elements: `n - 1`
    adds and 1 divide for the mean, `n` subtracts, `n` multiplies, `n - 1` adds, 1 divide,
    and for `std` 1 sqrt (special)."""
    if len(rest) > 1 or _unmodeled_keywords(
        reader, node, ("axis", "ddof", "keepdims"), len(_positional(node))
    ):
        if len(rest) > 1:
            reader.unsupported(node, f"`{reader.names.text(node)}`: positional dtype or out")
        return None
    axes = _axes(reader, _keyword(node, "axis") or (rest[0] if rest else None))
    if axes is False:
        return None
    assert axes is not True
    keepdims = _flag(reader, _keyword(node, "keepdims"), False)
    ddof_node = _keyword(node, "ddof")
    ddof = sympy.Integer(0) if ddof_node is None else _size(reader, ddof_node)
    if keepdims is None or ddof is None:
        return None
    rank = len(operand.shape)
    chosen = tuple(range(rank)) if axes is None else axes
    text = reader.names.text(node)
    mean = _named_mean(reader, node, operand, chosen)
    if mean is None:
        return None
    centered = reader.elementwise(
        "sub", "subtract", (operand, mean), node, f"{operand.text} - mean"
    )
    if centered is None:
        return None
    squared = reader.elementwise("mul", "square", (centered,), node, f"({centered.text})**2")
    if squared is None:
        return None
    total = reader.reduce("sum", squared, chosen, keepdims, node)
    if total is None:
        return None
    total = replace(total, text=f"sum of {squared.text}")
    count = sympy.Mul(*(operand.shape[a] for a in _normalized(chosen, rank))) - ddof
    divisor = Scalar(dtypes.PYTHON_INT, True, str(count), constant=True)
    name = "std" if std else "var"
    variance = reader.elementwise("div", "divide", (total, divisor), node, f"{name}: divide")
    if variance is None or not std:
        return replace(variance, text=text) if variance is not None else None
    return reader.elementwise("special", "sqrt", (variance,), node, text)


def _named_mean(
    reader: ExpressionReader, node: cst.Call, operand: ArrayValue, axes: tuple[int, ...]
) -> ArrayValue | None:
    """`mean(operand, axes, keepdims=True)`, its sum and divide named for the eager view."""
    mean = reader.reduce("mean", operand, axes, True, node)
    if not isinstance(mean, Apply) or not isinstance(mean.operands[0], Reduce):
        return mean
    total = replace(mean.operands[0], text=f"sum of {operand.text}")
    return replace(mean, operands=(total, *mean.operands[1:]), text=f"mean of {operand.text}")


def _normalized(axes: tuple[int, ...], rank: int) -> tuple[int, ...]:
    return tuple(a + rank if a < 0 else a for a in axes)


def _cov(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """NumPy's `cov` of the rows of `m` (variables in rows, `rowvar=True`): a copy of `m`,
    the row means, `X - mean`, `X @ X.T`, times `1 / (n - ddof)` (NumPy multiplies by the
    reciprocal: 1 divide, then a multiply per result). `ddof` is 1 unless `bias=True`."""
    arguments = _positional(node)
    if _unmodeled_keywords(reader, node, ("rowvar", "bias", "ddof"), 1):
        return None
    m = _operand(reader, arguments[0] if arguments else None)
    rowvar = _flag(reader, _keyword(node, "rowvar"), True)
    bias = _flag(reader, _keyword(node, "bias"), False)
    if m is None or rowvar is None or bias is None:
        return None
    ddof_node = _keyword(node, "ddof")
    ddof = sympy.Integer(0 if bias else 1) if ddof_node is None else _size(reader, ddof_node)
    if ddof is None:
        return None
    if len(m.shape) not in (1, 2):
        return reader.unsupported(node, f"`{reader.names.text(node)}` of a {len(m.shape)}-d array")
    text = reader.names.text(node)
    element = _float_element(m.element)
    axis = 1 if (rowvar and len(m.shape) == 2) else 0
    samples = m.shape[axis]

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        # `X = array(m)`, then `X -= X.mean(axis)[:, None]` in place.
        mean = _named_mean(reader, node, leaf, (axis,))
        assert mean is not None  # the axis is in range
        centered = Apply("sub", "subtract", (leaf, mean), element, leaf.shape, "X - mean", span)
        return Construction(((leaf, m), (leaf, centered)))

    centered = reader.materialize(Allocation(m.shape, element, False, "X = array(m)", build), node)
    if centered is None:
        return None
    labels = ("ik", "jk") if axis == 1 else ("ki", "kj")
    if len(m.shape) == 1:
        labels, out = ("k", "k"), ""
    else:
        out = "ij"
    product = reader.contract((centered, centered), labels, out, node, "dot(X, X.T)")
    if product is None:
        return None
    fact = Scalar(dtypes.PYTHON_INT, True, str(samples - ddof))
    one = Scalar(dtypes.PYTHON_INT, True, "1", constant=True)
    scale = reader.elementwise("div", "true_divide", (one, fact), node, f"1 / ({fact.text})")
    if scale is None:
        return None
    return reader.elementwise("mul", "multiply", (product, scale), node, text)


# ---- outer products and norms ----------------------------------------------------------


def _expanded(value: ArrayValue, count: int) -> ArrayValue | None:
    """`value` with `count` trailing axes of extent 1 (`a[..., None]`), for any expression
    of views, scalars, ufuncs and reductions; None for a contraction."""
    ones = (sympy.Integer(1),) * count
    if isinstance(value, Scalar) or count == 0:
        return value
    if isinstance(value, Leaf):
        return replace(value, shape=value.shape + ones)  # coordinates past the rank unused
    if isinstance(value, Apply):
        operands: list[ArrayValue] = []
        for operand in value.operands:
            wider = _expanded(operand, count) if operand.shape else operand
            if wider is None:
                return None
            operands.append(wider)
        return replace(value, operands=tuple(operands), shape=value.shape + ones)
    if isinstance(value, Reduce):
        inner = _expanded(value.operand, count)
        if inner is None:
            return None
        return replace(value, operand=inner, shape=value.shape + ones)
    return None


def _outer_of(op: str, name: str) -> Callable[[ExpressionReader, cst.Call], Value | None]:
    def read(reader: ExpressionReader, node: cst.Call) -> Value | None:
        return _outer(reader, node, op, name)

    return read


def _outer(reader: ExpressionReader, node: cst.Call, op: str, name: str) -> Value | None:
    """`np.outer(a, b)` (1-d operands) and `np.<ufunc>.outer(a, b)`: the ufunc applied to
    `a[..., None, ...]` and `b`, one operation per element of the `a.shape + b.shape` result."""
    operands = _operands(reader, node, 2)
    if operands is None:
        return None
    a, b = operands
    if name == "outer" and (len(a.shape) > 1 or len(b.shape) > 1):
        return reader.unsupported(
            node, f"`{reader.names.text(node)}`: np.outer flattens operands of rank over 1"
        )
    wide = _expanded(a, len(b.shape))
    if wide is None:
        return reader.unsupported(node, f"`{reader.names.text(node)}` of a contraction")
    return reader.elementwise(op, name, (wide, b), node)


def _norm(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`np.linalg.norm` as NumPy computes it (real operands):
    - no `axis`, `ord` None or `'fro'` (or 2 of a vector): `sqrt(dot(x.ravel(), x.ravel()))`,
      `n` multiplies, `n - 1` adds, 1 sqrt;
    - along `axis`: `ord` None/2: `sqrt(sum(x*x))`; 1: `sum(abs(x))`; `inf`/`-inf`:
      `max`/`min` of `abs(x)` (0 FLOPs); another number `p`: `sum(abs(x)**p)**(1/p)`;
    - a matrix, no `axis`: `ord` 1 is `max(sum(abs(x), axis=0))`, `inf` `max(sum(abs(x),
      axis=1))`. The spectral and nuclear norms (`ord` 2, -2, 'nuc' of a matrix: an SVD)
      and complex operands are noted as not modeled."""
    arguments = _positional(node)
    if _unmodeled_keywords(reader, node, ("ord", "axis", "keepdims"), 3):
        return None
    x = _operand(reader, arguments[0] if arguments else None)
    if x is None:
        return None
    text = reader.names.text(node)
    if x.element.is_complex:
        return reader.unsupported(node, f"`{text}`: the norm of a complex array")
    order = _order(reader, _argument(node, 1, "ord"))
    if order is False:
        return None
    axes = _axes(reader, _argument(node, 2, "axis"))
    keepdims = _flag(reader, _keyword(node, "keepdims"), False)
    if axes is False or keepdims is None:
        return None
    assert axes is not True
    rank = len(x.shape)
    if axes is None and (order is None or order == "fro" or (order == 2 and rank == 1)):
        if rank not in (1, 2) and order is not None:
            return reader.unsupported(node, f"`{text}`: ord of a {rank}-d array")
        if keepdims:
            axes = tuple(range(rank))
        else:
            letters = "abcdefgh"[:rank]
            squares = reader.contract((x, x), (letters, letters), "", node, "dot(x, x)")
            return reader.elementwise("special", "sqrt", (squares,), node) if squares else None
    if axes is None and rank == 2:
        if order in (1, "inf"):
            summed_axis, max_axis = (0, 1) if order == 1 else (1, 0)
            magnitudes = reader.elementwise("free", "abs", (x,), node, "abs(x)")
            if magnitudes is None:
                return None
            sums = reader.reduce("sum", magnitudes, (summed_axis,), True, node)
            if sums is None:
                return None
            return reader.reduce("max", sums, (max_axis,), keepdims, node)
        return reader.unsupported(node, f"`{text}`: this matrix norm (an SVD) is not modeled")
    chosen = tuple(range(rank)) if axes is None else axes
    if len(chosen) != 1 and not (order is None or order == "fro"):
        return reader.unsupported(node, f"`{text}`: this matrix norm is not modeled")
    return _vector_norm(reader, node, x, order, chosen, keepdims)


def _order(reader: ExpressionReader, node: cst.BaseExpression | None) -> object:
    """`ord=`: None, a number, `"inf"`, `"-inf"` or `"fro"`; False (noted) otherwise."""
    if node is None or (isinstance(node, cst.Name) and node.value == "None"):
        return None
    if isinstance(node, cst.SimpleString) and node.raw_value in ("fro", "nuc"):
        return node.raw_value
    canonical = reader.names.canonical(node)
    if canonical == "numpy.inf":
        return "inf"
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and reader.names.canonical(node.expression) == "numpy.inf"
    ):
        return "-inf"
    value = number_literal(node)
    if value is not None:
        return value
    reader.unsupported(node, f"`ord={reader.names.text(node)}`: the order must be a literal")
    return False


def _vector_norm(
    reader: ExpressionReader,
    node: cst.Call,
    x: ArrayValue,
    order: object,
    axes: tuple[int, ...],
    keepdims: bool,
) -> Value | None:
    if order in (None, 2, 2.0, "fro"):
        product = reader.elementwise("mul", "multiply", (x, x), node, "x * x")
        if product is None:
            return None
        squares = reader.reduce("sum", product, axes, keepdims, node)
        return reader.elementwise("special", "sqrt", (squares,), node) if squares else None
    magnitudes = reader.elementwise("free", "abs", (x,), node, "abs(x)")
    if magnitudes is None:
        return None
    if order in ("inf", "-inf"):
        return reader.reduce("max" if order == "inf" else "min", magnitudes, axes, keepdims, node)
    if order in (1, 1.0):
        return reader.reduce("sum", magnitudes, axes, keepdims, node)
    if not isinstance(order, (int, float)) or order == 0:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: this order")
    p = Scalar(dtypes.PYTHON_FLOAT, True, str(order), constant=True)
    powered = reader.elementwise("special", "power", (magnitudes, p), node, f"abs(x)**{order}")
    if powered is None:
        return None
    total = reader.reduce("sum", powered, axes, keepdims, node)
    if total is None:
        return None
    root = Scalar(dtypes.PYTHON_FLOAT, True, f"1/{order}", constant=True)
    return reader.elementwise("special", "power", (total, root), node)


def _triangle(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`np.triu(A, k)`, `np.tril(A, k)` (`torch.triu(A, diagonal=k)`): a masked copy
    (`where(mask, A, 0)`), 0 FLOPs; it reads `A` and writes a new array of its shape."""
    arguments = _positional(node)
    if _unmodeled_keywords(reader, node, ("k", "diagonal"), 2):
        return None
    a = _operand(reader, arguments[0] if arguments else None)
    if a is None:
        return None
    if len(a.shape) < 2:
        return reader.unsupported(node, f"`{reader.names.text(node)}` of a 1-d array")
    name = reader.names.canonical(node.func) or "triu"
    return reader.elementwise("free", name.rpartition(".")[2], (a,), node)


# ---- constructors ----------------------------------------------------------------------


def _window(leaf: Leaf, shape: Shape, index: Sequence[sympy.Expr], text: str) -> Leaf:
    """A view of `leaf`'s array: `shape`, with base index `index` in view coordinates."""
    return Leaf(leaf.array, leaf.element, tuple(shape), tuple(index), text, leaf.span)


def _dtype(reader: ExpressionReader, node: cst.Call, default: ElementType) -> ElementType | None:
    """The `dtype=` argument, `default` when absent; None (noted) when not a known dtype."""
    found = _keyword(node, "dtype")
    if found is None:
        return default
    element = _dtype_node(reader, found)
    if element is None:
        reader.note(
            UnknownKind.UNKNOWN_SHAPE,
            found,
            f"`{reader.names.text(found)}` is not a known NumPy dtype; its work is not counted",
        )
        return None
    return element


def _eye(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`np.eye(N, M=None, k=0)`, `np.identity(n)`: zeros (first touch later, as `np.zeros`)
    and one write per diagonal element."""
    arguments = _positional(node)
    identity = (reader.names.canonical(node.func) or "").endswith("identity")
    known = ("dtype",) if identity else ("M", "k", "dtype")
    if _unmodeled_keywords(reader, node, known, 1 if identity else 3):
        return None
    rows = _size(reader, arguments[0]) if arguments else None
    columns_node = None if identity else _argument(node, 1, "M")
    columns = rows
    if columns_node is not None and not (
        isinstance(columns_node, cst.Name) and columns_node.value == "None"
    ):
        columns = _size(reader, columns_node)
    offset_node = None if identity else _argument(node, 2, "k")
    offset = 0 if offset_node is None else _literal_int(reader, offset_node, "k")
    element = _dtype(reader, node, dtypes.FLOAT64)
    if rows is None or columns is None or offset is None or element is None:
        return None
    if not same_extent(rows, columns) and offset != 0:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: k of a non-square eye")
    if not same_extent(rows, columns):
        return reader.unsupported(node, f"`{reader.names.text(node)}`: a non-square eye")
    length = sympy.expand(rows - abs(offset))
    text = reader.names.text(node)

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        t = coordinate(0)
        diagonal = _window(leaf, (length,), (t + max(0, -offset), t + max(0, offset)), text)
        return Construction(((diagonal, Scalar(leaf.element, False, "1", constant=True)),))

    return Allocation((rows, columns), element, False, text, build)


def _arange(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`np.arange(stop)`, `(start, stop)`, `(start, stop, step)` with integer sizes and a
    literal step: one write per element. NumPy fills by index arithmetic, not counted as
    FLOPs (a float `dtype=` fills `start + i*step` the same way)."""
    arguments = _positional(node)
    if _unmodeled_keywords(reader, node, ("dtype", "device"), 3) or not arguments:
        return None  # `device=` (PyTorch's `torch.arange`) places the array: no work
    bounds = [_size(reader, a) for a in arguments[:2]]
    step = 1 if len(arguments) < 3 else _literal_int(reader, arguments[2], "the step")
    element = _dtype(reader, node, dtypes.INT64)
    if any(b is None for b in bounds) or step is None or step == 0 or element is None:
        return None
    start, stop = (sympy.Integer(0), bounds[0]) if len(bounds) == 1 else bounds
    assert start is not None and stop is not None
    distance = stop - start if step > 0 else start - stop
    length = sympy.expand(distance if abs(step) == 1 else sympy.ceiling(distance / abs(step)))
    text = reader.names.text(node)

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        return Construction(((leaf, Scalar(leaf.element, False, text, constant=True)),))

    return Allocation((length,), element, True, text, build)


def _linspace(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`np.linspace(start, stop, num)` as NumPy computes it: `step = (stop - start) /
    (num - 1)` once, `arange(num)` written, then `y * step + start`: per element 1 multiply
    and 1 add (the last element, set to `stop`, is rewritten: no new traffic)."""
    arguments = _positional(node)
    if _unmodeled_keywords(reader, node, ("num", "dtype"), 3) or len(arguments) < 2:
        return None
    start, stop = (reader.array(a) for a in arguments[:2])
    count_node = _argument(node, 2, "num")
    count = sympy.Integer(50) if count_node is None else _size(reader, count_node)
    result = _dtype(reader, node, dtypes.FLOAT64)
    if start is None or stop is None or count is None or result is None:
        return None
    if start.shape or stop.shape:
        return reader.unsupported(node, f"`{reader.names.text(node)}` with array endpoints")
    text = reader.names.text(node)
    delta = reader.elementwise("sub", "subtract", (stop, start), node, "stop - start")
    divisor = Scalar(dtypes.PYTHON_INT, True, str(count - 1), constant=bool(count.is_number))
    step = delta and reader.elementwise("div", "divide", (delta, divisor), node, "step")
    if step is None:
        return None

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        scaled = Apply("mul", "multiply", (leaf, step), result, leaf.shape, "y * step", span)
        shifted = Apply("add", "add", (scaled, start), result, leaf.shape, "y + start", span)
        index = Scalar(dtypes.INT64, False, f"arange({count})", constant=True)
        return Construction(((leaf, index), (leaf, shifted)))

    return Allocation((count,), result, True, text, build)


def _diag(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`np.diag(v, k)` of a vector: a zeroed square matrix with `v` copied onto diagonal
    `k`; `np.diag(A, k)` of a matrix: its diagonal, a view (no copy, no traffic)."""
    arguments = _positional(node)
    if _unmodeled_keywords(reader, node, ("k",), 2):
        return None
    v = _operand(reader, arguments[0] if arguments else None)
    offset_node = _argument(node, 1, "k")
    offset = 0 if offset_node is None else _literal_int(reader, offset_node, "k")
    if v is None or offset is None:
        return None
    text = reader.names.text(node)
    if len(v.shape) == 2:
        if not isinstance(v, Leaf):
            return reader.unsupported(node, f"`{text}`: the diagonal of a computed matrix")
        rows, columns = v.shape
        length = sympy.expand(columns - offset if offset >= 0 else rows + offset)
        if not same_extent(rows, columns):
            return reader.unsupported(node, f"`{text}`: the diagonal of a non-square matrix")
        t = coordinate(0)
        at = {coordinate(0): t + max(0, -offset), coordinate(1): t + max(0, offset)}
        index = tuple(substituted(e, at, simultaneous=True) for e in v.index)
        return Leaf(v.array, v.element, (length,), index, text, reader.span(node))
    if len(v.shape) != 1:
        return reader.unsupported(node, f"`{text}`: np.diag of a {len(v.shape)}-d array")
    side = sympy.expand(v.shape[0] + abs(offset))
    vector = v

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        t = coordinate(0)
        diagonal = _window(leaf, v.shape, (t + max(0, -offset), t + max(0, offset)), text)
        return Construction(((diagonal, vector),))

    return Allocation((side, side), v.element, False, text, build)


def _sequence(reader: ExpressionReader, node: cst.Call) -> list[ArrayValue] | None:
    """The arrays of the literal tuple or list a joining function takes."""
    arguments = _positional(node)
    sequence = arguments[0] if arguments else None
    if not isinstance(sequence, (cst.Tuple, cst.List)) or not sequence.elements:
        reader.unsupported(node, f"`{reader.names.text(node)}`: not a literal tuple of arrays")
        return None
    values = [reader.array(e.value) for e in sequence.elements]
    if any(v is None for v in values):
        return None
    return [v for v in values if v is not None]


def _join(kind: str) -> Callable[[ExpressionReader, cst.Call], Value | None]:
    """`np.concatenate(seq, axis)`, `np.stack(seq, axis)`, `np.hstack(seq)` (axis 1, or 0 for
    vectors) and `np.vstack(seq)` (axis 0; vectors become rows, as a stack)."""

    def read(reader: ExpressionReader, node: cst.Call) -> Value | None:
        takes_axis = kind in ("concatenate", "stack")
        known = ("axis", "dim") if takes_axis else ()  # `torch.cat(seq, dim=1)`
        if _unmodeled_keywords(reader, node, known, 2 if takes_axis else 1):
            return None
        axis_node = (_keyword(node, "dim") or _argument(node, 1, "axis")) if takes_axis else None
        axis = 0 if axis_node is None else _literal_int(reader, axis_node, "axis")
        values = _sequence(reader, node)
        if values is None or axis is None:
            return None
        vectors = all(len(v.shape) == 1 for v in values)
        if kind == "hstack" and not vectors:
            axis = 1
        stacked = kind == "stack" or (kind == "vstack" and vectors)
        return _joined(reader, node, values, axis, stacked)

    return read


def _joined(
    reader: ExpressionReader,
    node: cst.Call,
    values: list[ArrayValue],
    axis: int,
    stacked: bool = False,
) -> Value | None:
    """`concatenate` along `axis` (or `stack` on a new one): a new array, each operand
    copied into its slab (read once, written once; 0 FLOPs)."""
    text = reader.names.text(node)
    rank = len(values[0].shape)
    if rank == 0 or any(len(v.shape) != rank for v in values):
        return reader.unsupported(node, f"`{text}`: operands of different or zero rank")
    out_rank = rank + 1 if stacked else rank
    where = axis + out_rank if axis < 0 else axis
    if not 0 <= where < out_rank:
        return reader.unsupported(node, f"`{text}`: axis {axis} out of range")
    first = values[0].shape
    for value in values[1:]:
        for d, (x, y) in enumerate(zip(first, value.shape, strict=True)):
            if (stacked or d != where) and not same_extent(x, y):
                return reader.unsupported(
                    node, f"`{text}`: extents {x} and {y} differ (NumPy raises)"
                )
    element, weak = values[0].element, values[0].weak
    for value in values[1:]:
        element = dtypes.promote(element, weak, value.element, value.weak)
        weak = weak and value.weak
    if stacked:
        shape = (*first[:where], sympy.Integer(len(values)), *first[where:])
    else:
        total = sympy.expand(sum((v.shape[where] for v in values), sympy.Integer(0)))
        shape = (*first[:where], total, *first[where + 1 :])
    parts = tuple(values)

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        stores: list[tuple[Leaf, ArrayValue]] = []
        offset = sympy.Integer(0)
        for position, value in enumerate(parts):
            view = [coordinate(d) for d in range(rank)]
            if stacked:
                view.insert(where, sympy.Integer(position))
            else:
                view[where] = offset + view[where]
                offset = sympy.expand(offset + value.shape[where])
            stores.append((_window(leaf, value.shape, view, f"{text} part {position}"), value))
        return Construction(tuple(stores))

    return Allocation(shape, element, False, text, build)


def _copies(kind: str) -> Callable[[ExpressionReader, cst.Call], Value | None]:
    """`np.repeat(a, r)` (each element `r` times, `axis` None or 0) and `np.tile(a, r)` (`a`
    `r` times end to end) of a 1-d `a`, `r` an integer: a new array of `n*r` (0 FLOPs);
    `np.repeat(A, r, axis=d)` of an n-d `A` along `d`."""
    count_name = "repeats" if kind == "repeat" else "reps"

    def read(reader: ExpressionReader, node: cst.Call) -> Value | None:
        known = (count_name, "axis") if kind == "repeat" else (count_name,)
        if _unmodeled_keywords(reader, node, known, len(known) + 1):
            return None
        arguments = _positional(node)
        a = _operand(reader, arguments[0] if arguments else None)
        count_node = _argument(node, 1, count_name)
        axis_node = _argument(node, 2, "axis") if kind == "repeat" else None
        if a is None or count_node is None:
            return None
        axis = None if axis_node is None else number_literal(axis_node)
        if kind == "repeat" and isinstance(axis, int) and len(a.shape) > 1:
            return _repeated_along(reader, node, a, count_node, axis)
        if (
            len(a.shape) != 1
            or isinstance(count_node, (cst.Tuple, cst.List))
            or (axis_node is not None and number_literal(axis_node) not in (0, -1))
        ):
            return reader.unsupported(
                node, f"`{reader.names.text(node)}`: only a 1-d `a` and an integer count"
            )
        count = _size(reader, count_node)
        if count is None:
            return None
        (n,) = a.shape
        text = reader.names.text(node)
        content = _expanded(a, 1) if kind == "repeat" else a
        assert content is not None  # `a` is 1-d
        shape = (n, count) if kind == "repeat" else (count, n)

        def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
            index = (coordinate(0) * shape[1] + coordinate(1),)
            return Construction(((_window(leaf, shape, index, text), content),))

        return Allocation((sympy.expand(n * count),), a.element, False, text, build)

    return read


def _repeated_along(
    reader: ExpressionReader,
    node: cst.Call,
    a: ArrayValue,
    count_node: cst.BaseExpression,
    axis: int,
) -> Value | None:
    """`np.repeat(A, r, axis=d)` of an n-d `A`: each element `r` times along axis `d`, a new
    array (0 FLOPs); `A` read once, the result written once."""
    text = reader.names.text(node)
    rank = len(a.shape)
    d = axis + rank if axis < 0 else axis
    if not 0 <= d < rank or isinstance(count_node, cst.Tuple | cst.List):
        return reader.unsupported(node, f"`{text}`: the axis or the count is not modeled")
    count = _size(reader, count_node)
    if count is None:
        return None
    content = _axis_inserted(a, d + 1)
    if content is None:
        return reader.unsupported(node, f"`{text}`: a repeat of a computed value")
    shape = (*a.shape[: d + 1], count, *a.shape[d + 1 :])
    new_shape = (*a.shape[:d], sympy.expand(a.shape[d] * count), *a.shape[d + 1 :])

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        index = [coordinate(k) for k in range(d)]
        index.append(coordinate(d) * count + coordinate(d + 1))
        index += [coordinate(k + 1) for k in range(d + 1, rank)]
        return Construction(((_window(leaf, shape, index, text), content),))

    return Allocation(new_shape, a.element, False, text, build)


def _axis_inserted(value: ArrayValue, position: int) -> ArrayValue | None:
    """`value` with a unit axis at `position` (broadcast where it is stored); None where
    that is not a view (a computed value with an axis inside)."""
    if position == len(value.shape):
        return _expanded(value, 1)
    if not isinstance(value, Leaf):
        return None
    at = {coordinate(k): coordinate(k + 1) for k in range(position, len(value.shape))}
    index = tuple(substituted(e, at, simultaneous=True) for e in value.index)
    shape = (*value.shape[:position], sympy.Integer(1), *value.shape[position:])
    return replace(value, shape=shape, index=index)


# ---- LAPACK drivers --------------------------------------------------------------------


class _Kernel:
    """Writes a textbook algorithm as IR loops over arrays in memory."""

    def __init__(self, namer: Namer, span: Span, element: ElementType) -> None:
        self.namer = namer
        self.span = span
        self.element = element

    def flops(self, *kinds: str) -> FlopTally:
        """One each of `kinds` between two elements (complex ones count as MODEL.md says)."""
        complex_ = self.element.is_complex
        total = FlopTally()
        for kind in kinds:
            total = total + operator_flops(kind, complex_, complex_)
        return total

    def variable(self) -> sympy.Symbol:
        return loop_symbol(self.namer.fresh("_la"))

    def loop(
        self, var: sympy.Symbol, start: sympy.Expr, trip: sympy.Expr, body: list[Node]
    ) -> Loop:
        return Loop(var.name, sympy.expand(start), 1, sympy.expand(trip), tuple(body), self.span)

    def update(
        self, target: _Element, reads: Sequence[_Element], operation: str, kinds: Sequence[str]
    ) -> Statement:
        """`target op= f(reads)`: reads the target and `reads`, writes the target.
        `kinds` are the arithmetic operators it applies (`sqrt` is a special call)."""
        text = operation.format(*(_element_text(e) for e in (target, *reads)))
        accesses = [
            Access(array, index, self.element, False, self.span, text)
            for array, index in (target, *reads)
        ]
        accesses.append(Access(target[0], target[1], self.element, True, self.span, text))
        special = tuple(k for k in kinds if k == "sqrt")
        flops = self.flops(*(k for k in kinds if k != "sqrt")) + FlopTally(special=len(special))
        return Statement(self.span, text, flops, tuple(accesses), special)

    def multiply_subtract(self, target: _Element, left: _Element, right: _Element) -> Statement:
        return self.update(target, (left, right), "{} -= {} * {}", ("mul", "sub"))

    def divide(self, target: _Element, by: _Element) -> Statement:
        return self.update(target, (by,), "{} /= {}", ("div",))


_Element = tuple[str, tuple[sympy.Expr, ...]]
"""An array element the kernel touches: the array's name and its index."""


def _element_text(element: _Element) -> str:
    return f"{element[0]}[{', '.join(str(i) for i in element[1])}]"


def _lu(kernel: _Kernel, work: str, n: sympy.Expr) -> list[Node]:
    """Gaussian elimination with partial pivoting in place (Golub & Van Loan, Alg. 3.4.1):
    `n(n-1)/2` divides and `(n-1)n(2n-1)/6` multiply-subtract pairs, `2n^3/3 - n^2/2 - n/6`
    FLOPs. The pivot search compares (0 FLOPs); row swaps are not counted as traffic."""
    p, i, j = kernel.variable(), kernel.variable(), kernel.variable()
    eliminate = kernel.multiply_subtract((work, (i, j)), (work, (i, p)), (work, (p, j)))
    multiplier = kernel.divide((work, (i, p)), (work, (p, p)))
    rows = kernel.loop(
        i, p + 1, n - p - 1, [multiplier, kernel.loop(j, p + 1, n - p - 1, [eliminate])]
    )
    return [kernel.loop(p, sympy.Integer(0), n - 1, [rows])]


def _substitute(kernel: _Kernel, work: str, x: Leaf, n: sympy.Expr) -> list[Node]:
    """`L y = b` (unit lower, `n^2 - n` FLOPs) then `U x = y` (`n^2`) for every column of
    `x` (LAPACK getrs): `2n^2 - n` FLOPs per right-hand side."""
    columns = x.shape[1] if len(x.shape) == 2 else None
    c = kernel.variable() if columns is not None else None

    def at(row: sympy.Expr) -> tuple[sympy.Expr, ...]:
        bindings = {coordinate(0): row}
        if c is not None:
            bindings[coordinate(1)] = c
        return tuple(substituted(e, bindings) for e in x.index)

    i, j = kernel.variable(), kernel.variable()
    forward = kernel.multiply_subtract((x.array, at(i)), (work, (i, j)), (x.array, at(j)))
    r = n - 1 - i  # back substitution runs the rows from the last
    back = kernel.multiply_subtract((x.array, at(r)), (work, (r, j)), (x.array, at(j)))
    divide = kernel.divide((x.array, at(r)), (work, (r, r)))
    body: list[Node] = [
        kernel.loop(i, sympy.Integer(1), n - 1, [kernel.loop(j, sympy.Integer(0), i, [forward])]),
        kernel.loop(i, sympy.Integer(0), n, [kernel.loop(j, n - i, i, [back]), divide]),
    ]
    if c is None or columns is None:
        return body
    return [kernel.loop(c, sympy.Integer(0), columns, body)]


def _square(reader: ExpressionReader, node: cst.Call, a: ArrayValue) -> sympy.Expr | None:
    text = reader.names.text(node)
    if len(a.shape) != 2:
        reader.unsupported(node, f"`{text}`: a stack of matrices (rank {len(a.shape)})")
        return None
    if not same_extent(a.shape[0], a.shape[1]):
        reader.unify((a.shape[0],), (a.shape[1],))
        reader.unsupported(
            node, f"`{text}`: the matrix is not square ({a.shape[0]} by {a.shape[1]})"
        )
        return None
    return a.shape[0]


def _one_matrix(reader: ExpressionReader, node: cst.Call) -> tuple[ArrayValue, sympy.Expr] | None:
    """The square matrix operand of `inv(A)`, `cholesky(A)`, and its extent."""
    operands = _operands(reader, node, 1)
    if operands is None:
        return None
    n = _square(reader, node, operands[0])
    return (operands[0], n) if n is not None else None


def _real_equivalent(figure: sympy.Expr, element: ElementType) -> sympy.Expr:
    """LAPACK's operation counts in real FLOPs: a complex multiply-add is 4 times a real one."""
    return sympy.expand(4 * figure if element.is_complex else figure)


def _convention(reader: ExpressionReader, node: cst.Call, what: str, element: ElementType) -> None:
    complex_ = " (operations on complex elements, each counted by MODEL.md's complex rules)"
    reader.note(
        UnknownKind.ASSUMPTION,
        node,
        f"`{reader.names.text(node)}`: {what}{complex_ if element.is_complex else ''}; "
        "a convention (docs/python.md)",
    )


def _solve(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`np.linalg.solve(A, b)` (LAPACK gesv): `A` copied and LU-factored in place, `b`
    copied into the result and solved through both triangles."""
    operands = _operands(reader, node, 2)
    if operands is None:
        return None
    a, b = operands
    n = _square(reader, node, a)
    if n is None:
        return None
    if len(b.shape) not in (1, 2) or not same_extent(b.shape[0], n):
        return reader.unsupported(
            node, f"`{reader.names.text(node)}`: b's shape does not match an {n} by {n} matrix"
        )
    element = _float_element(dtypes.promote(a.element, a.weak, b.element, b.weak))
    k = b.shape[1] if len(b.shape) == 2 else sympy.Integer(1)
    figure = _real_equivalent(sympy.Rational(2, 3) * n**3 + 2 * n**2 * k, element)
    _convention(
        reader,
        node,
        "counted as LU with partial pivoting and two triangular solves (LAPACK getrf + "
        f"getrs): 2n^3/3 - n^2/2 - n/6 + (2n^2 - n) per right-hand side; quoted as {figure}",
        element,
    )
    return _factor_and_solve(reader, node, a, b, n, element, ("linalg.solve (LU)", figure))


def _inv(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`np.linalg.inv(A)`: NumPy calls gesv with the identity as right-hand side."""
    matrix = _one_matrix(reader, node)
    if matrix is None:
        return None
    a, n = matrix
    element = _float_element(a.element)
    identity = Scalar(element, False, "identity", constant=True)
    figure = _real_equivalent(sympy.Rational(8, 3) * n**3, element)
    _convention(
        reader,
        node,
        "counted as NumPy runs it, LU (getrf) then n solves against the identity (getrs): "
        f"8n^3/3 - 3n^2/2 - n/6; quoted as {figure}",
        element,
    )
    square = (n, n)
    return _factor_and_solve(
        reader, node, a, identity, n, element, ("linalg.inv (LU)", figure), square
    )


def _factor_and_solve(
    reader: ExpressionReader,
    node: cst.Call,
    a: ArrayValue,
    b: ArrayValue,
    n: sympy.Expr,
    element: ElementType,
    convention: tuple[str, sympy.Expr],
    shape: Shape | None = None,
) -> Value:
    text = reader.names.text(node)

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        kernel = _Kernel(namer, span, element)
        work = namer.fresh("_lu")
        factors = leaf_for(work, (n, n), element, span)
        nodes = _lu(kernel, work, n) + _substitute(kernel, work, leaf, n)
        return Construction(((factors, a), (leaf, b)), tuple(nodes), (convention,))

    return Allocation(shape or b.shape, element, False, text, build)


def _cholesky(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`np.linalg.cholesky(A)` (LAPACK potrf on a copy of `A`): the column Cholesky of
    Golub & Van Loan (Alg. 4.2.1 order), `n^3/3 + n^2/2 + n/6` operations of which `n` are
    sqrt (special), quoted as `n^3/3`."""
    matrix = _one_matrix(reader, node)
    if matrix is None:
        return None
    a, n = matrix
    element = _float_element(a.element)
    figure = _real_equivalent(n**3 / 3, element)
    _convention(
        reader,
        node,
        "counted as the textbook Cholesky (LAPACK potrf): n^3/3 + n^2/2 + n/6 with n sqrt; "
        f"quoted as {figure}",
        element,
    )
    text = reader.names.text(node)

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        kernel = _Kernel(namer, span, element)
        name = leaf.array
        j, i, k = kernel.variable(), kernel.variable(), kernel.variable()
        diagonal = kernel.multiply_subtract((name, (j, j)), (name, (j, k)), (name, (j, k)))
        root = kernel.update((name, (j, j)), (), "{0} = sqrt({0})", ("sqrt",))
        below = kernel.multiply_subtract((name, (i, j)), (name, (i, k)), (name, (j, k)))
        scale = kernel.divide((name, (i, j)), (name, (j, j)))
        column = kernel.loop(
            j,
            sympy.Integer(0),
            n,
            [
                kernel.loop(k, sympy.Integer(0), j, [diagonal]),
                root,
                kernel.loop(
                    i, j + 1, n - j - 1, [kernel.loop(k, sympy.Integer(0), j, [below]), scale]
                ),
            ],
        )
        return Construction(((leaf, a),), (column,), (("linalg.cholesky", figure),))

    return Allocation((n, n), element, False, text, build)


LIBRARY: dict[str, Callable[[ExpressionReader, cst.Call], Value | None]] = {
    "numpy.std": _std,
    "numpy.var": _var,
    "numpy.cov": _cov,
    "numpy.outer": _outer_of("mul", "outer"),
    "numpy.multiply.outer": _outer_of("mul", "multiply.outer"),
    "numpy.add.outer": _outer_of("add", "add.outer"),
    "numpy.subtract.outer": _outer_of("sub", "subtract.outer"),
    "numpy.divide.outer": _outer_of("div", "divide.outer"),
    "numpy.linalg.norm": _norm,
    "numpy.triu": _triangle,
    "numpy.tril": _triangle,
    "numpy.eye": _eye,
    "numpy.identity": _eye,
    "numpy.arange": _arange,
    "numpy.linspace": _linspace,
    "numpy.diag": _diag,
    "numpy.concatenate": _join("concatenate"),
    "numpy.hstack": _join("hstack"),
    "numpy.vstack": _join("vstack"),
    "numpy.stack": _join("stack"),
    "numpy.repeat": _copies("repeat"),
    "numpy.tile": _copies("tile"),
    "numpy.linalg.solve": _solve,
    "numpy.linalg.inv": _inv,
    "numpy.linalg.cholesky": _cholesky,
}
"""Functions this module models, by canonical name (`jnp.`, `cupy.`... map onto these)."""

METHODS = frozenset({"std", "var"})
