"""Views: `transpose`, `swapaxes`, `moveaxis`, `flip` and `reshape` as index maps.

A NumPy view moves no data and computes nothing: it only changes which element a
coordinate names. Here a view is a `Leaf` whose `index` is rewritten, so the operations
that read it count their own work and traffic at the right elements. A view of a computed
elementwise expression is pushed into its operands (`(a - b).T` is `a.T - b.T`).

`reshape` (and `ravel`) of an array whose extents split (`(n*m,)` to `(n, m)`) keeps the
index affine; merging axes (`(n, m)` to `(n*m,)`) needs `floor` and `mod`, which the
analysis bounds by the domain (the count of elements, exact for a reshape, but flagged).
NumPy copies when a reshape cannot be a view (a transposed array merged); aiscan treats
every reshape as a view: the copy's traffic is not counted (docs/python.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst
import sympy

from aiscan.frontends.python.constructions import Construction
from aiscan.frontends.python.expressions import Allocation, number_literal
from aiscan.frontends.python.shape_lists import shape_list
from aiscan.frontends.python.shapes import same_extent, shape_text
from aiscan.frontends.python.symbols import is_size_symbol
from aiscan.frontends.python.values import (
    Apply,
    ArrayValue,
    Contract,
    Integer,
    Leaf,
    Scalar,
    Shape,
    coordinate,
    substituted,
)
from aiscan.ir.nodes import UnknownKind

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import ExpressionReader

__all__ = [
    "VIEWS",
    "element_at",
    "flipped",
    "permuted",
    "read_view",
    "reshaped",
    "resolve_shape",
    "shape_assigned",
    "through_operands",
]

VIEWS = frozenset(
    {"reshape", "ravel", "flatten", "transpose", "swapaxes", "moveaxis", "flip", "fliplr", "flipud"}
)
"""Functions (`np.reshape(x, s)`) and methods (`x.reshape(s)`) read here; `flatten` is
the one copy among them (`ravel` is a view, as NumPy makes it for a contiguous array)."""

ViewOf = Callable[[Leaf], "Leaf | str"]


def _remapped(leaf: Leaf, mapping: dict[sympy.Symbol, sympy.Expr], shape: Shape) -> Leaf:
    """`leaf` seen with its view coordinates replaced by `mapping` (all at once)."""
    index = tuple(substituted(e, mapping, simultaneous=True) if mapping else e for e in leaf.index)
    return replace(leaf, shape=tuple(shape), index=index)


def element_at(leaf: Leaf, at: sympy.Expr) -> Leaf:
    """`A[at]`: the element (or row) of `leaf`'s first axis at `at`, a view one rank down
    (what `for v in A` binds at each pass)."""
    mapping = {coordinate(0): at} | {
        coordinate(d): coordinate(d - 1) for d in range(1, len(leaf.shape))
    }
    return replace(_remapped(leaf, mapping, leaf.shape[1:]), text=f"{leaf.text}[{at}]")


def sliced(leaf: Leaf, axis: int, start: sympy.Expr, extent: sympy.Expr) -> Leaf:
    """`leaf[..., start:start + extent, ...]` along `axis` (a part of a split)."""
    mapping = {coordinate(axis): coordinate(axis) + start}
    shape = tuple(extent if d == axis else e for d, e in enumerate(leaf.shape))
    return _remapped(leaf, mapping, shape)


def permuted(leaf: Leaf, axes: Sequence[int]) -> Leaf:
    """`transpose(axes)`: the view's axis `d` is the base's axis `axes[d]`."""
    mapping = {coordinate(axes[d]): coordinate(d) for d in range(len(axes))}
    return _remapped(leaf, mapping, tuple(leaf.shape[a] for a in axes))


def flipped(leaf: Leaf, axes: Sequence[int]) -> Leaf:
    """`flip(axis)`: coordinate `c` of a flipped axis of extent `n` is base `n - 1 - c`."""
    mapping = {coordinate(a): leaf.shape[a] - 1 - coordinate(a) for a in axes}
    return _remapped(leaf, mapping, leaf.shape)


def resolve_shape(old: Shape, new: Sequence[sympy.Expr]) -> Shape | str:
    """The new shape with one `-1` solved from the element count; a reason when it cannot
    be (two `-1`s, or a count the other extents do not divide)."""
    unknown = [d for d, e in enumerate(new) if e == -1]
    if len(unknown) > 1:
        return "more than one extent is -1"
    if any(e.is_number and (e < -1 or (e == 0 and unknown)) for e in new):
        return "an extent is negative, or zero beside a -1"  # NumPy raises
    total = sympy.Mul(*old)
    if not unknown:
        if not same_extent(total, sympy.Mul(*new)):
            return f"{shape_text(old)} has {total} elements, not {sympy.Mul(*new)}"
        return tuple(new)
    known = sympy.Mul(*(e for e in new if e != -1))
    solved = _lowest_terms(total, known)
    denominator = sympy.fraction(solved)[1]
    if denominator != 1 or not solved.is_polynomial():
        return f"the extents do not divide the {total} elements of {shape_text(old)}"
    return tuple(sympy.expand(solved) if e == -1 else e for e in new)


def _may_be_equal(first: sympy.Expr, second: sympy.Expr) -> bool:
    """Whether two element counts in sizes could be equal: their difference is not a
    number and not a polynomial whose terms all have one sign (sizes are positive)."""
    gap = sympy.expand(first - second)
    if gap.is_number:
        return bool(gap == 0)
    coefficients = [c for c, _ in _terms(gap)]
    one_sign = all(c > 0 for c in coefficients) or all(c < 0 for c in coefficients)
    return not (coefficients and one_sign)


def _terms(expr: sympy.Expr) -> list[tuple[sympy.Expr, sympy.Expr]]:
    """(coefficient, monomial) pairs of a polynomial in its symbols; [] for anything else."""
    if not expr.is_polynomial():
        return []
    return [term.as_coeff_Mul() for term in sympy.Add.make_args(expr)]


def reshaped(leaf: Leaf, new: Shape, assume_equal: bool = False) -> Leaf | str:
    """`reshape` in C order as a view: axes are matched in groups of equal element count;
    a group of one base axis (a split) gets an affine index, a merge `floor` and `mod`.
    With `assume_equal` (counts NumPy requires equal, not provably so), axes that do not
    match form one last group."""
    old = leaf.shape
    mapping: dict[sympy.Symbol, sympy.Expr] = {}
    i = j = 0
    while i < len(old) or j < len(new):
        if i < len(old) and old[i] == 1:
            mapping[coordinate(i)] = sympy.Integer(0)
            i += 1
            continue
        if j < len(new) and new[j] == 1:
            j += 1
            continue
        if i >= len(old) or j >= len(new):
            return f"cannot match the axes of {shape_text(old)} with {shape_text(new)}"
        olds, news = [i], [j]
        while not same_extent(_product(old, olds), _product(new, news)):
            grown = _grow(old, new, olds, news)
            if grown is None and assume_equal:
                olds, news = list(range(i, len(old))), list(range(j, len(new)))
                break
            if grown is None:
                return f"cannot match the axes of {shape_text(old)} with {shape_text(new)}"
        i, j = olds[-1] + 1, news[-1] + 1
        linear = sum(
            (coordinate(k) * _product(new, news[p + 1 :]) for p, k in enumerate(news)),
            sympy.Integer(0),
        )
        for p, axis in enumerate(olds):
            stride = _product(old, olds[p + 1 :])
            value = linear if stride == 1 else sympy.floor(linear / stride)
            if p > 0:
                value = sympy.Mod(value, old[axis])
            mapping[coordinate(axis)] = value
    return _remapped(leaf, mapping, new)


def _grow(old: Shape, new: Shape, olds: list[int], news: list[int]) -> bool | None:
    """Add the next axis to the side whose element count divides the other's."""
    ratio = _lowest_terms(_product(new, news), _product(old, olds))
    numerator, denominator = sympy.fraction(ratio)
    if denominator == 1 and olds[-1] + 1 < len(old):
        olds.append(olds[-1] + 1)
        return True
    if numerator == 1 and news[-1] + 1 < len(new):
        news.append(news[-1] + 1)
        return True
    if not ratio.is_number and news[-1] + 1 < len(new) and _divides_later(new, news):
        # `n_embd` into `(n_head, n_embd/n_head)`: the next new axis completes the count.
        news.append(news[-1] + 1)
        return True
    if not ratio.is_number and olds[-1] + 1 < len(old) and _divides_later(old, olds):
        olds.append(olds[-1] + 1)  # `(n_head, n_embd/n_head)` merged into `n_embd`
        return True
    if denominator != 1 and numerator != 1 and ratio.free_symbols:
        # `R**i` against `R**K`: which divides depends on a loop variable; a coarser group
        # of equal count is still the same C-order reshape.
        for axes, shape in ((news, new), (olds, old)):
            if axes[-1] + 1 < len(shape):
                axes.append(axes[-1] + 1)
                return True
    return None


def _divides_later(new: Shape, news: list[int]) -> bool:
    """The next axis of `new` is a quotient (`n_embd/n_head`): a split's second part."""
    return bool(sympy.fraction(_lowest_terms(new[news[-1] + 1]))[1] != 1)


def _lowest_terms(numerator: sympy.Expr, denominator: sympy.Expr | int = 1) -> sympy.Expr:
    """`sympy.cancel(numerator / denominator)`. Extents are mostly monomials (`n_embd`,
    `n_embd/n_head`, `4*d`), whose quotient sympy writes in lowest terms as it makes it;
    `cancel` (a fifth of a model class's lowering) is asked only about the others."""
    quotient = numerator / denominator
    if _monomial(numerator) and _monomial(sympy.sympify(denominator)):
        return quotient
    return sympy.cancel(quotient)


def _monomial(expr: sympy.Expr) -> bool:
    """A rational times powers, to integer exponents, of symbols and other atoms that are
    not sums or products (`floor(n/2)`)."""
    for factor in sympy.Mul.make_args(expr):
        if factor.is_Pow:
            base = factor.base
            if not factor.exp.is_Integer or base.is_Add or base.is_Mul or base.is_Pow:
                return False
        elif not (factor.is_Rational or factor.is_Symbol or factor.is_Function):
            return False
    return True


def _product(shape: Shape, axes: Sequence[int]) -> sympy.Expr:
    return sympy.expand(sympy.Mul(*(shape[a] for a in axes)))


def through_operands(value: ArrayValue, view: ViewOf, text: str) -> ArrayValue | str:
    """A view of `value`: of an array, directly; of an elementwise expression, of each
    operand that has the expression's full shape (scalars are unchanged). A broadcast
    operand, a reduction or a contraction: a reason why not."""
    if isinstance(value, Scalar) or not value.shape:
        return value
    if isinstance(value, Leaf):
        result = view(value)
        return result if isinstance(result, str) else replace(result, text=text)
    if isinstance(value, Apply):
        operands: list[ArrayValue] = []
        for operand in value.operands:
            if operand.shape and operand.shape != value.shape:
                return f"`{operand.text}` is broadcast in `{value.text}`"
            inner = through_operands(operand, view, operand.text) if operand.shape else operand
            if isinstance(inner, str):
                return inner
            operands.append(inner)
        shape = next((o.shape for o in operands if o.shape), value.shape)
        return replace(value, operands=tuple(operands), shape=shape, text=text)
    return f"a view of the computed value `{value.text}`"


def read_view(
    reader: ExpressionReader,
    node: cst.Call,
    function: str,
    base: ArrayValue,
    arguments: Sequence[cst.BaseExpression],
) -> ArrayValue | None:
    """`function` applied to `base` (the array argument or the method's object), with the
    other `arguments`; a located unknown when the shape or the axes are not literal."""
    rank = len(base.shape)
    text = reader.names.text(node)
    view: ViewOf | None = None
    if function in ("reshape", "ravel", "flatten"):
        if _keyword(node, "order") is not None:
            return _unsupported(reader, node, f"`{text}`: only the default C order is modeled")
        extents = _extents(reader, node, arguments) if function == "reshape" else [sympy.S(-1)]
        if extents is None:
            return None
        extents = _exact_quotients(reader, node, base.shape, extents)
        new = resolve_shape(base.shape, extents)
        assumed = False
        if isinstance(new, str) and -1 not in extents:
            _learn_from_reshape(reader, base.shape, extents)
            if _may_be_equal(sympy.Mul(*base.shape), sympy.Mul(*extents)):
                # NumPy raises unless the counts agree: the code that runs has them equal.
                total, wanted = sympy.Mul(*base.shape), sympy.Mul(*extents)
                reader.note(
                    UnknownKind.ASSUMPTION,
                    node,
                    f"`{text}`: {wanted} elements taken equal to the {total} of "
                    f"{shape_text(base.shape)}, as NumPy requires",
                )
                new, assumed = tuple(extents), True
        if (
            isinstance(new, str)
            and new.startswith("the extents do not divide")
            and reader.framework == "torch"
        ):
            # `xq.reshape(xq.shape[:-1] + (-1, 2))` of an extent `d`: `d/2`, as the reshape
            # requires it to divide (llama2.c's rotary embedding of an even head size).
            known = sympy.Mul(*(e for e in extents if e != -1))
            solved = _lowest_terms(sympy.Mul(*base.shape), known)
            if sympy.fraction(solved)[1] != 1:
                reader.note(
                    UnknownKind.ASSUMPTION,
                    node,
                    f"`{text}`: its -1 taken as {solved}, since the reshape needs the other "
                    "extents to divide the element count",
                )
            new, assumed = tuple(solved if e == -1 else e for e in extents), True
        if isinstance(new, str):
            return _unsupported(reader, node, f"`{text}`: {new}")
        if isinstance(base, Contract):
            squeezed = _squeezed(base, new, text)
            if squeezed is not None:
                return squeezed
        shape = new
        view = lambda leaf: reshaped(leaf, shape, assumed)  # noqa: E731
    elif function in ("transpose", "swapaxes", "moveaxis"):
        axes = _permutation(node, function, arguments, rank)
        if axes is None:
            return _unsupported(reader, node, f"`{text}`: the axes must be integer literals")
        view = lambda leaf: permuted(leaf, axes)  # noqa: E731
    else:
        flips = _flip_axes(node, function, arguments, rank)
        if flips is None:
            return _unsupported(reader, node, f"`{text}`: the axis must be an integer literal")
        view = lambda leaf: flipped(leaf, flips)  # noqa: E731
    result = through_operands(base, view, text)
    if isinstance(result, str) and reader.framework == "jax" and not isinstance(base, Leaf):
        # JAX computes the value into an array of its own, then views it: `jnp.einsum(...)
        # .reshape(B, T, C)` merges the axes of the einsum's result.
        stored = computed_first(reader, base, node, text=text, library=False)
        result = "not stored" if stored is None else view(stored)
    if isinstance(result, str) and function in ("reshape", "ravel") and isinstance(base, Contract):
        # `np.reshape(A @ B, (n,))`: NumPy computes the product into a new array first.
        made = computed_first(reader, base, node)
        result = result if made is None else view(made)
    if isinstance(result, str):
        return _unsupported(reader, node, f"`{text}`: {result}")
    if function == "flatten":
        return reader.elementwise("free", "copy", [result], node)
    return result


def shape_assigned(
    reader: ExpressionReader, base: Leaf, value: cst.BaseExpression, node: cst.CSTNode
) -> Leaf | None:
    """`x.shape = (n, m)`: NumPy's in-place reshape, the same buffer under a new shape
    (NumPy raises where that would need a copy), read as `x = x.reshape(n, m)`."""
    listed = isinstance(value, cst.Tuple | cst.List)
    items = [e.value for e in value.elements] if listed else [value]  # type: ignore[attr-defined]
    extents = []
    for item in items:
        extent = reader.value(item)
        if not isinstance(extent, Integer) or extent.value is None:
            _unsupported(reader, item, f"`{reader.names.text(item)}` is not an integer extent")
            return None
        extents.append(extent.value)
    text = reader.names.text(node)
    new = resolve_shape(base.shape, extents)
    result = new if isinstance(new, str) else reshaped(base, new)
    if isinstance(result, str):
        _unsupported(reader, node, f"`{text}`: {result}")
        return None
    return replace(result, text=text)


def computed_first(
    reader: ExpressionReader,
    value: ArrayValue,
    node: cst.CSTNode,
    *,
    text: str | None = None,
    library: bool = True,
) -> Leaf | None:
    """`value` computed into a temporary array (its last call writing it), which a view
    then reads; `library` as `Construction` takes it."""

    def build(leaf: Leaf, namer: object, span: object) -> Construction:
        return Construction(((leaf, value),), library=library)

    made = Allocation(value.shape, value.element, False, text or value.text, build)
    return reader.materialize(made, node)


def _exact_quotients(
    reader: ExpressionReader, node: cst.Call, old: Shape, extents: Sequence[sympy.Expr]
) -> list[sympy.Expr]:
    """`x.view(B, T, n_head, C // n_head)`: a floor division among the extents is exact when
    dropping the floor makes the counts equal, as the reshape requires them to be."""
    if not any(e.has(sympy.floor) for e in extents):
        return list(extents)
    exact = [e.replace(sympy.floor, lambda inner: inner) for e in extents]
    if not _identically_zero(sympy.Mul(*exact) - sympy.Mul(*old)):
        return list(extents)
    reader.note(
        UnknownKind.ASSUMPTION,
        node,
        f"`{reader.names.text(node)}`: its floor divisions taken as exact, since the "
        "reshape needs its element count equal to the input's",
    )
    return exact


def _identically_zero(difference: sympy.Expr) -> bool:
    """`simplify(difference) == 0`, where it can be told for less: a difference that is not
    0 at some sizes is no identity, so `simplify` cannot make it 0 (a view of a view:
    `b*t*width - b*heads*t*floor(width/heads)` at width 7, heads 2); a rational function of
    the sizes (`C/n_head*n_head*B*T - B*T*C`) is 0 exactly when its numerator expands to
    0. These took a quarter of lowering `torch_llama.py`; anything else is `simplify`'s."""
    if _nonzero_at_some_sizes(difference):
        return False
    if all(_rational_part(node) for node in sympy.preorder_traversal(difference)):
        numerator, _ = sympy.fraction(sympy.together(difference))
        return bool(sympy.expand(numerator) == 0)
    return bool(sympy.simplify(difference) == 0)


_PROBE_SIZES = (7, 11, 13, 17, 19, 23, 29, 31)
"""Distinct primes, so that no quotient of two sizes is an integer by chance."""


def _nonzero_at_some_sizes(difference: sympy.Expr) -> bool:
    """Whether `difference` is a number other than 0 with its symbols, each a positive
    integer and nothing more (a size), set to distinct primes."""
    symbols = sorted(difference.free_symbols, key=lambda s: s.name)
    if not symbols or len(symbols) > len(_PROBE_SIZES):
        return False
    if any(s.assumptions0 != _SIZE_FACTS for s in symbols):
        return False
    probes = map(sympy.Integer, _PROBE_SIZES[: len(symbols)])
    value = difference.xreplace(dict(zip(symbols, probes, strict=True)))
    return bool(value.is_Rational and value != 0)


_SIZE_FACTS = sympy.Symbol("size", positive=True, integer=True).assumptions0


def _rational_part(node: sympy.Basic) -> bool:
    """A symbol, a rational number, a sum, a product or an integer power."""
    if node.is_Pow:
        return bool(node.exp.is_Integer)
    return bool(node.is_Symbol or node.is_Rational or node.is_Add or node.is_Mul)


def _learn_from_reshape(
    reader: ExpressionReader, old: Shape, extents: Sequence[sympy.Expr]
) -> None:
    """A reshape that does not fit an array whose extents we named (`A_d0`) tells what they
    are: as many axes as the new shape has extents other than 1, matched in order
    (`np.reshape(A, (NR, NQ, 1, NP))` makes A `(NR, NQ, NP)`); the function is then
    lowered again. Extents that vary with a loop (`R**i`) tell nothing of the array's."""
    if any(not is_size_symbol(s) for e in extents for s in sympy.sympify(e).free_symbols):
        return
    wanted = tuple(e for e in extents if e != 1)
    given = tuple(e for e in old if e != 1)
    if len(wanted) == len(given):
        reader.unify(given, wanted)  # only extents we named are solved for
        return
    owners = {reader.free.get(e) for e in old}
    if len(owners) == 1 and None not in owners:
        (owner,) = owners
        assert owner is not None
        reader.rank_hints[owner] = max(reader.rank_hints.get(owner, 0), len(wanted))


def _squeezed(value: Contract, new: Shape, text: str) -> Contract | None:
    """A reshape of a contraction that only drops unit axes of its result (`(NR, NQ, 1, NP)`
    to `(NR, NQ, NP)`): the same contraction without those output labels (their operand
    axes, of extent 1, read at 0)."""
    kept = [d for d, e in enumerate(value.shape) if e != 1]
    if tuple(value.shape[d] for d in kept) != tuple(new) or len(kept) == len(value.shape):
        return None
    dropped = {value.out[d] for d in range(len(value.shape)) if d not in kept}
    operands: list[ArrayValue] = []
    labels: list[str] = []
    for operand, letters in zip(value.operands, value.labels, strict=True):
        keep = [p for p, letter in enumerate(letters) if letter not in dropped]
        if len(keep) != len(letters):
            inner = through_operands(operand, _reshaping(operand.shape, keep), operand.text)
            if isinstance(inner, str):
                return None
            operand = inner
        operands.append(operand)
        labels.append("".join(letters[p] for p in keep))
    out = "".join(letter for letter in value.out if letter not in dropped)
    extents = tuple((k, e) for k, e in value.extents if k not in dropped)
    return replace(
        value,
        operands=tuple(operands),
        labels=tuple(labels),
        out=out,
        extents=extents,
        shape=tuple(new),
        text=text,
    )


def _reshaping(shape: Shape, keep: Sequence[int]) -> ViewOf:
    """The view keeping only the axes `keep` of `shape` (the others have extent 1)."""
    kept = tuple(shape[p] for p in keep)
    return lambda leaf: reshaped(leaf, kept)


def _unsupported(reader: ExpressionReader, node: cst.CSTNode, message: str) -> ArrayValue | None:
    """Say what is not modeled; the value is then None."""
    reader.note(UnknownKind.UNSUPPORTED, node, f"{message}; its work is not counted")
    return None


def _keyword(node: cst.Call, name: str) -> cst.BaseExpression | None:
    return next(
        (a.value for a in node.args if a.keyword is not None and a.keyword.value == name), None
    )


def _extents(
    reader: ExpressionReader, node: cst.Call, arguments: Sequence[cst.BaseExpression]
) -> list[sympy.Expr] | None:
    """`reshape(2, -1)`, `reshape((n, m))`, `reshape(-1)`, `newshape=`/`shape=`."""
    given = _keyword(node, "shape") or _keyword(node, "newshape")
    items: Sequence[cst.BaseExpression] = [given] if given is not None else arguments
    if len(items) == 1 and isinstance(items[0], (cst.Tuple, cst.List)):
        items = [e.value for e in items[0].elements]
    elif len(items) == 1 and not isinstance(items[0], (cst.Integer, cst.UnaryOperation)):
        listed = shape_list(reader, items[0])  # `x.shape[:-1] + (-1, 2)`, a named list
        if listed is not None:
            return listed
    extents: list[sympy.Expr] = []
    for item in items:
        value = reader.value(item)
        if not isinstance(value, Integer) or value.value is None:
            _unsupported(
                reader, item, f"`{reader.names.text(item)}` is not an integer extent of a reshape"
            )
            return None
        extents.append(value.value)
    return extents if extents else None


def _literal_ints(nodes: Sequence[cst.BaseExpression]) -> list[int] | None:
    values = [number_literal(n) for n in nodes]
    if not all(isinstance(v, int) for v in values):
        return None
    return [int(v) for v in values if v is not None]


def _permutation(
    node: cst.Call, function: str, arguments: Sequence[cst.BaseExpression], rank: int
) -> tuple[int, ...] | None:
    given = _keyword(node, "axes")
    items: Sequence[cst.BaseExpression] = [given] if given is not None else arguments
    if len(items) == 1 and isinstance(items[0], (cst.Tuple, cst.List)):
        items = [e.value for e in items[0].elements]
    numbers = _literal_ints(items)
    if numbers is None or (function != "transpose" and len(numbers) != 2):
        return None
    numbers = [a + rank if a < 0 else a for a in numbers]
    if any(not 0 <= a < rank for a in numbers):
        return None
    if function == "swapaxes":
        axes = list(range(rank))
        axes[numbers[0]], axes[numbers[1]] = axes[numbers[1]], axes[numbers[0]]
        return tuple(axes)
    if function == "moveaxis":
        axes = [a for a in range(rank) if a != numbers[0]]
        axes.insert(numbers[1], numbers[0])
        return tuple(axes)
    if not numbers:
        return tuple(reversed(range(rank)))
    if sorted(numbers) != list(range(rank)):
        return None
    return tuple(numbers)


def _flip_axes(
    node: cst.Call, function: str, arguments: Sequence[cst.BaseExpression], rank: int
) -> tuple[int, ...] | None:
    if function == "flipud":
        return (0,) if rank >= 1 else None
    if function == "fliplr":
        return (1,) if rank >= 2 else None
    given = _keyword(node, "axis") or (arguments[0] if arguments else None)
    if given is None or (isinstance(given, cst.Name) and given.value == "None"):
        return tuple(range(rank))
    items = [e.value for e in given.elements] if isinstance(given, cst.Tuple) else [given]
    numbers = _literal_ints(items)
    if numbers is None:
        return None
    axes = tuple(a + rank if a < 0 else a for a in numbers)
    return axes if all(0 <= a < rank for a in axes) else None
