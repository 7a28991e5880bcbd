"""The value of a Python expression as the frontend understands it: a small array-expression tree.

Explicit element reads (`A[i, j]`) and whole-array expressions (`a * x + y`) are the same
tree; a rank-0 tree is scalar code. `nests.py` turns a tree into IR loops (fused view) and
`eager.py` splits it into the calls NumPy makes (eager view).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache

import sympy

from aiscan import substitution
from aiscan.frontends.python.symbols import loop_symbol
from aiscan.ir.nodes import ElementType, Unknown
from aiscan.span import Span

__all__ = [
    "ADDMM",
    "Apply",
    "ArrayValue",
    "Contract",
    "Integer",
    "Leaf",
    "Reduce",
    "Scalar",
    "Select",
    "Shape",
    "coordinate",
    "substituted",
]

Shape = tuple[sympy.Expr, ...]

ADDMM = "addmm"
"""The `Apply.name` of a bias add PyTorch fuses into its matrix product (`F.linear`): the
eager view makes the two one call (`eager.py`)."""


@cache
def coordinate(dim: int) -> sympy.Symbol:
    """Placeholder for a view's `dim`-th coordinate inside `Leaf.index`; never reaches the IR."""
    return loop_symbol(f"_aiscan_c{dim}")


def substituted(
    expression: sympy.Expr,
    bindings: Mapping[sympy.Symbol, sympy.Expr],
    *,
    simultaneous: bool = False,
) -> sympy.Expr:
    """`expand(expression.subs(bindings))`, remembered: index expressions repeat a lot."""
    if expression.is_Symbol:
        # Most indices are one coordinate: substituting it is a lookup (when the result
        # is not itself substituted further, as `subs` does one binding after another).
        value = bindings.get(expression, expression)
        if value.is_Integer or (value.is_Symbol and (value is expression or value not in bindings)):
            return value
    if simultaneous and isinstance(expression, sympy.Basic):
        # Only the bindings of symbols the expression has: a helper's copier binds every
        # name of the call (tens), and `subs` walks the expression once per binding.
        # Simultaneously, a binding of an absent symbol changes nothing. The keys are
        # symbols, so the kept ones are found from the fewer of the two sides (`subs`
        # orders a dict's bindings itself: their order here changes nothing).
        free = expression.free_symbols
        if len(free) < len(bindings):
            kept = tuple((s, bindings[s]) for s in free if s in bindings)
        else:
            kept = tuple((s, v) for s, v in bindings.items() if s in free)
        return _substituted_renaming(expression, kept, simultaneous)
    return _substituted_renaming(expression, tuple(bindings.items()), simultaneous)


@lru_cache(maxsize=1 << 16)
def _substituted_renaming(
    expression: sympy.Expr,
    bindings: tuple[tuple[sympy.Symbol, sympy.Expr], ...],
    simultaneous: bool,
) -> sympy.Expr:
    """`_substituted`, with the bindings that rename a symbol to a fresh one of the same
    kind (a view's coordinate to a nest's new loop variable) applied after the others.

    The others (numbers) give an expression that recurs from nest to nest, remembered;
    the renaming is then a rebuild of its sums, products and powers, and of each `Mod`,
    `floor` and `ceiling` as it stands. sympy's evaluation cannot tell two symbols of the
    same assumptions apart, so a `Mod` left as it is with the one is left with the
    other: the same expression `subs` gives, without its evaluation asking the
    assumptions of every new argument again (a `Mod` of a rotary embedding's index
    took 15 ms, a quarter of a hover on a PyTorch attention block). Remembered as a
    whole too: an edit lowers its statements again with the same names."""
    split = _as_renaming(expression, bindings)
    if split is None:
        return _substituted(expression, bindings, simultaneous)
    names, others = split
    base = _substituted(expression, others, simultaneous) if others else sympy.expand(expression)
    try:
        return _renamed(base, names, {})
    except _NotRenamed:
        return _substituted(expression, bindings, simultaneous)


def _as_renaming(
    expression: sympy.Expr, bindings: tuple[tuple[sympy.Symbol, sympy.Expr], ...]
) -> tuple[dict[sympy.Symbol, sympy.Symbol], tuple[tuple[sympy.Symbol, sympy.Expr], ...]] | None:
    """The bindings that rename a symbol (a bijection onto symbols of the same class and
    assumptions, none of them already in the expression or a key) and the others, all
    numbers; None where the bindings are not of that shape."""
    names = {
        key: value
        for key, value in bindings
        if getattr(value, "is_Symbol", False) and value is not key
    }
    if not names or not isinstance(expression, sympy.Basic):
        return None
    others = tuple((key, value) for key, value in bindings if key not in names)
    fresh = set(names.values())
    same_kind = all(
        type(value) is type(key) and value.assumptions0 == key.assumptions0
        for key, value in names.items()
    )
    if (
        len(fresh) != len(names)
        or not same_kind
        or not fresh.isdisjoint(expression.free_symbols)
        or not fresh.isdisjoint(key for key, _ in bindings)
        or not all(getattr(value, "is_Number", False) for _, value in others)
    ):
        return None
    return names, others


class _NotRenamed(Exception):
    """A node the renaming does not rebuild (its evaluation may read more than
    assumptions): the substitution is made whole instead."""


def _renamed(
    expression: sympy.Basic,
    names: Mapping[sympy.Symbol, sympy.Symbol],
    memo: dict[sympy.Basic, sympy.Basic],
) -> sympy.Basic:
    if expression.is_Symbol:
        return names.get(expression, expression)
    if not expression.args:
        return expression
    found = memo.get(expression)
    if found is not None:
        return found
    arguments = tuple(_renamed(a, names, memo) for a in expression.args)
    if all(new is old for new, old in zip(arguments, expression.args, strict=True)):
        result = expression
    elif expression.is_Add or expression.is_Mul or expression.is_Pow:
        result = expression.func(*arguments)  # sorted and combined as `xreplace` does
    elif expression.func in _KEPT:
        result = expression.func(*arguments, evaluate=False)
    else:
        raise _NotRenamed
    memo[expression] = result
    return result


_KEPT = (sympy.Mod, sympy.floor, sympy.ceiling)


@lru_cache(maxsize=1 << 16)
def _substituted(
    expression: sympy.Expr,
    bindings: tuple[tuple[sympy.Symbol, sympy.Expr], ...],
    simultaneous: bool,
) -> sympy.Expr:
    replaced = substitution.substituted(expression, dict(bindings), simultaneous=simultaneous)
    return sympy.expand(replaced)


@dataclass(frozen=True, slots=True)
class Leaf:
    """Elements of an array in memory, seen through a view (slices, `None`, `.T`).

    `index` gives the base array's index for view coordinates `coordinate(0..rank-1)`.
    """

    array: str
    element: ElementType
    shape: Shape
    index: tuple[sympy.Expr, ...]
    text: str
    span: Span

    @property
    def weak(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class Scalar:
    """A value in a register: a literal or a scalar variable. Python scalars are weak."""

    element: ElementType
    weak: bool
    text: str
    constant: bool = False
    """A literal or a constant expression of literals (folded: no FLOPs)."""

    @property
    def shape(self) -> Shape:
        return ()


@dataclass(frozen=True, slots=True)
class Apply:
    """An elementwise operator or ufunc; `op` is add/sub/mul/div/special/free."""

    op: str
    name: str
    operands: tuple[ArrayValue, ...]
    element: ElementType
    shape: Shape
    text: str
    span: Span
    weak: bool = False
    repeat: int = 1
    """How many times `op` is applied per element: `x**3` is one operand, 2 multiplies."""


@dataclass(frozen=True, slots=True)
class Reduce:
    """`sum`/`prod`/`max`/`min` over `axes` of the operand: `count - 1` combining operations."""

    kind: str
    operand: ArrayValue
    axes: tuple[int, ...]
    keepdims: bool
    element: ElementType
    shape: Shape
    text: str
    span: Span

    @property
    def weak(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class Contract:
    """An einsum: products of the operands summed over the labels not in `out`.

    `@`, `dot`, `matmul`, `inner`, `tensordot` and `einsum` all become this.
    """

    operands: tuple[ArrayValue, ...]
    labels: tuple[str, ...]
    out: str
    extents: tuple[tuple[str, sympy.Expr], ...]
    element: ElementType
    shape: Shape
    text: str
    span: Span

    @property
    def weak(self) -> bool:
        return False

    def extent(self, label: str) -> sympy.Expr:
        return dict(self.extents)[label]


@dataclass(frozen=True, slots=True)
class Integer:
    """An integer scalar: an affine expression in sizes and loop variables, or unknown."""

    value: sympy.Expr | None
    text: str
    unknown_because: str = "is an integer whose value varies"
    """Why `value` is None, said after the integer's text where a value is needed."""

    @property
    def shape(self) -> Shape:
        return ()


@dataclass(frozen=True, slots=True)
class Select:
    """A boolean selection `x[mask]`: the elements of `operand` where `mask` holds, packed
    into a new array of a data-dependent length (NumPy's boolean indexing).

    `operand` is an elementwise tree over the full shape `mask.shape + rest` (`x[m] * 2.0`
    is the selection of `x * 2.0`: one element of it per selected element); the selection
    has shape `(fraction * prod(mask.shape), *rest)`, `fraction` the named share of the
    mask's elements that hold (`unknown` says so, where the selection is read).
    """

    operand: Leaf | Apply
    mask: Leaf | Apply
    fraction: sympy.Symbol
    unknown: Unknown
    element: ElementType
    shape: Shape
    text: str
    span: Span

    @property
    def weak(self) -> bool:
        return False

    @property
    def mask_text(self) -> str:
        return self.mask.text


ArrayValue = Leaf | Scalar | Apply | Reduce | Contract | Select
