"""What reading an expression deals in: its values, the scope it reads names in, and the
`ExpressionReader` interface through which the readers of calls, subscripts and layers ask
the evaluator (`evaluator.py`) for sub-expressions.

Every reader imports this module and none of them imports the evaluator, which imports them:
the package's imports go one way. A value is None where the reader could not understand the
expression; it then says so in a located `Unknown`, and that work is not counted, never
guessed.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

import libcst as cst
import sympy

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.constructions import Builder
from aiscan.frontends.python.names import SourceNames
from aiscan.frontends.python.symbols import MAX_INTEGER, MAX_INTEGER_BITS
from aiscan.frontends.python.values import (
    Apply,
    ArrayValue,
    Integer,
    Leaf,
    Select,
    Shape,
    coordinate,
)
from aiscan.ir.nodes import ElementType, Function, Unknown, UnknownKind
from aiscan.span import Span

if TYPE_CHECKING:
    from aiscan.frontends.python.autocast import Autocast
    from aiscan.frontends.python.layers import Layer, ModuleList, Submodule

__all__ = [
    "ALLOCATIONS",
    "ARITHMETIC",
    "CONFIGURATION_REASON",
    "FREE",
    "REDUCTIONS",
    "SLICE_REASON",
    "SPECIAL",
    "TOO_LARGE",
    "Allocation",
    "Binding",
    "ExpressionReader",
    "Opaque",
    "Scope",
    "SliceObject",
    "Summarize",
    "Summary",
    "Value",
    "as_boolean",
    "leaf_for",
    "literal_mismatch",
    "number_literal",
    "string_literal",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


SPECIAL = _words(
    "sqrt cbrt exp exp2 expm1 log log2 log10 log1p power pow sin cos tan arcsin "
    "arccos arctan arctan2 asin acos atan atan2 sinh cosh tanh arcsinh arccosh "
    "arctanh asinh acosh atanh erf erfc gamma lgamma hypot reciprocal_sqrt rsqrt "
    "sigmoid "
)
# Comparisons, sign changes, rounding and selection: 0 FLOPs by MODEL.md.
FREE = _words(
    "abs absolute fabs negative positive floor ceil trunc rint round sign maximum "
    "minimum fmax fmin where clip copysign greater less greater_equal less_equal "
    "equal not_equal logical_and logical_or logical_not isnan isfinite relu "
)
ARITHMETIC = {
    "add": "add",
    "subtract": "sub",
    "multiply": "mul",
    "divide": "div",
    "true_divide": "div",
    "sub": "sub",
    "mul": "mul",
    "div": "div",
}
REDUCTIONS = {
    "sum": "sum",
    "prod": "prod",
    "max": "max",
    "min": "min",
    "amax": "max",
    "amin": "min",
    "nansum": "sum",
    "mean": "mean",
}
ALLOCATIONS = {
    "empty": False,
    "ndarray": False,  # `np.ndarray(shape, dtype)`: uninitialized, as `np.empty`
    "zeros": False,
    "ones": True,
    "full": True,
    "empty_like": False,
    "zeros_like": True,
    "ones_like": True,
    "full_like": True,
}


@dataclass(frozen=True, slots=True)
class Allocation:
    """`np.empty/zeros/ones/full(...)`: a new array; `fills` when NumPy writes every element.

    `np.zeros` gets pages the OS zeroes on first touch (calloc), so it writes nothing;
    `zeros_like`, `ones` and `full` do write.
    """

    shape: Shape
    element: ElementType
    fills: bool
    text: str
    build: Builder | None = None
    """What a library constructor writes into the new array (`np.eye`, `np.concatenate`,
    `np.linalg.solve`: `library_calls.py`); such an allocation may be used in an
    expression, as a temporary array the reader asks the lowering to compute first."""


@dataclass(frozen=True, slots=True)
class Opaque:
    """A name whose shape or dtype is unknown; using it as a value says so."""

    name: str
    reason: str
    is_parameter: bool = False
    infer: bool = False
    """A parameter whose shape (or dtype) the body's evidence may supply (`inference.py`)."""
    element: ElementType | None = None
    """The dtype the annotation gives (`npt.NDArray[np.float32]`), if any."""
    shape: Shape | None = None
    """The shape the annotation gives (`Float[Array, "n"]`), if any."""
    annotated_array: bool = False
    """The annotation says it is an array (`np.ndarray`): at least one axis."""


Value = ArrayValue | Integer | Allocation
Binding = ArrayValue | Integer | Opaque


@dataclass(frozen=True, slots=True)
class Summary:
    """A helper lowered once, in its own size names, with what a call site needs."""

    function: Function
    parameters: tuple[tuple[str, Binding], ...]
    """Each parameter as the body saw it: a `Leaf` (an array; extents in the helper's
    sizes), an `Integer` (a size) or a `Scalar`; `Opaque` where nothing typed it."""
    returns: tuple[Binding | None, ...]
    """What each `return` hands back, in the order they appear."""
    notes: tuple[Unknown, ...]
    """The helper's function-level unknowns that hold at every call (its parameters'
    assumptions do not: the call's arguments replace them)."""
    fixed: frozenset[sympy.Symbol]
    """Module constants: the same size at every call, never replaced."""
    inferred: frozenset[str] = frozenset()
    """Parameters whose shape the helper's code gave (no annotation): a call may say more."""
    merged: frozenset[str] = frozenset()
    """Inferred parameters whose leading axes are one extent: any rank fits them, so a call
    of another rank lowers the helper again at that rank (a vector included)."""
    parts: tuple[tuple[Binding | None, ...], ...] = ()
    """What each `return a, b` hands back, part by part (for `x, y = f(...)`)."""


Summarize = Callable[
    [str, Mapping[str, tuple[ElementType, bool]], Mapping[str, int]], "Summary | str"
]
"""The frontend's summary of a helper by name, with dtypes and ranks for some parameters (the
caller's arguments'), or why there is none (recursion)."""


@dataclass
class Scope:
    names: dict[str, Binding] = field(default_factory=dict)
    helpers: dict[str, cst.FunctionDef] = field(default_factory=dict)
    """The module's top-level functions, inlined where they are called."""
    inlining: tuple[str, ...] = ()
    """Helpers being inlined now (a call to one of them is recursion)."""
    slices: dict[str, SliceObject] = field(default_factory=dict)
    """Names bound to `slice(...)` objects, usable as indices (`s = slice(1, n - 1)`)."""
    summarize: Summarize | None = None
    """The summary of a helper with loops or branches (`summaries.py`), from the frontend."""
    layers: dict[str, Layer | Submodule | ModuleList] = field(default_factory=dict)
    """`self.fc1 = nn.Linear(d, 4 * d)`: the `torch.nn` layers a module built (`modules.py`),
    its user submodules (`self.attn = CausalSelfAttention(config)`) and lists of them."""
    classes: dict[str, cst.ClassDef] = field(default_factory=dict)
    """The module's top-level classes, by name: a call of one in `__init__` is a submodule."""
    grids: dict[str, tuple[Leaf, sympy.Expr]] = field(default_factory=dict)
    """`I, J = np.mgrid[...]`: each part as bound, and the integer it holds (`grids.py`)."""
    dtypes: dict[str, ElementType] = field(default_factory=dict)
    """Names that stand for a dtype (a Flax module's `dtype: Any = jnp.float32` field, as
    `self.dtype`), by their text."""
    shapes: dict[str, tuple[sympy.Expr, ...]] = field(default_factory=dict)
    """Names bound to a list of extents (`shape = [d if ... for i, d in enumerate(x.shape)]`),
    for the reshape that uses them (`shape_lists.py`)."""

    def copy(self) -> Scope:
        return Scope(
            dict(self.names),
            self.helpers,
            self.inlining,
            dict(self.slices),
            self.summarize,
            dict(self.layers),
            self.classes,
            dict(self.grids),
            dict(self.dtypes),
            dict(self.shapes),
        )


@dataclass(frozen=True, slots=True)
class SliceObject:
    """`slice(start, stop, step)` with its bounds read where it is made."""

    lower: sympy.Expr | None
    upper: sympy.Expr | None
    step: int


def as_boolean(result: ArrayValue | None) -> ArrayValue | None:
    """A comparison's value (`x < y`, `np.less(x, y)`, `np.logical_and(a, b)`): a bool
    array, one byte an element (a scalar comparison stays what it was)."""
    if isinstance(result, Select) and isinstance(result.operand, Apply):
        operand = replace(result.operand, element=dtypes.BOOL)
        return replace(result, operand=operand, element=dtypes.BOOL)
    if isinstance(result, Apply):
        return replace(result, element=dtypes.BOOL)
    return result


class ExpressionReader(Protocol):
    """What a reader of one form (a call, a subscript, a view, a layer) asks of the evaluator
    that hands it a node: values of sub-expressions, the algebra of shapes and dtypes, and
    where to say what it cannot read.

    The evaluator (`evaluator.py`) passes itself as this, so the readers below it never
    import it back: the package imports in one direction."""

    names: SourceNames
    scope: Scope
    unknowns: list[Unknown]
    free: dict[sympy.Symbol, str]
    """Extents named by us (`A_d0`, of array `A`), which another operand may determine."""
    rank_hints: dict[str, int]
    """Inferred arrays a mismatch says have more axes than their evidence gave."""
    pending: list[tuple[Leaf, Allocation]]
    """Constructed arrays the statement being read uses as operands, computed first."""
    inferred: set[str]
    """Parameters whose shapes come from the code (a call may say they are arrays)."""
    size_hints: set[str]
    """Inferred parameters a helper call takes as a size."""
    call_names: dict[str, tuple[int, int]]
    """Names given to summarized calls (`conv2d_L45`), by where the call is."""
    framework: str | None
    """The array library the function runs in (`frameworks.py`)."""
    autocast: Autocast | None
    """The `torch.autocast` region the statement being read is in (`autocast.py`)."""
    factory_element: ElementType
    """The dtype array constructors give where none is passed (NumPy's float64, PyTorch's
    default dtype in a function that runs in PyTorch)."""
    pointer_lengths: dict[tuple[str, str], sympy.Symbol]
    """`len_L<line>` of each data-dependent range `P[e]:P[e + 1]` (`gathers.py`)."""

    def value(self, node: cst.BaseExpression) -> Value | None: ...

    def array(self, node: cst.BaseExpression) -> ArrayValue | None: ...

    def integer(self, node: cst.BaseExpression) -> sympy.Expr | None: ...

    def materialize(self, allocation: Allocation, node: cst.CSTNode) -> Leaf | None: ...

    def span(self, node: cst.CSTNode) -> Span: ...

    def note(self, kind: UnknownKind, node: cst.CSTNode, message: str) -> None: ...

    def unsupported(self, node: cst.CSTNode, message: str) -> Value | None: ...

    def unify(self, a: Shape, b: Shape) -> None: ...

    def meet_layer(self, extent: sympy.Expr, size: sympy.Expr) -> None: ...

    def elementwise(
        self,
        op: str,
        name: str,
        operands: Sequence[ArrayValue],
        node: cst.CSTNode,
        text: str | None = None,
        repeat: int = 1,
    ) -> ArrayValue | None: ...

    def power(
        self, base: ArrayValue, exponent: cst.BaseExpression, text: str, node: cst.CSTNode
    ) -> ArrayValue | None: ...

    def contract(
        self,
        operands: Sequence[ArrayValue],
        labels: Sequence[str],
        out: str,
        node: cst.CSTNode,
        text: str | None = None,
    ) -> ArrayValue | None: ...

    def contract_matmul(
        self, a: ArrayValue, b: ArrayValue, node: cst.CSTNode, text: str | None = None
    ) -> ArrayValue | None: ...

    def reduce(
        self,
        kind: str,
        operand: ArrayValue,
        axes: tuple[int, ...] | None,
        keepdims: bool,
        node: cst.CSTNode,
    ) -> ArrayValue | None: ...

    def autocast_operands(
        self, operands: Sequence[ArrayValue], node: cst.CSTNode, policy: str
    ) -> list[ArrayValue] | None: ...

    def inline(self, node: cst.Call, definition: cst.FunctionDef) -> Value | None: ...


SLICE_REASON = "is a `slice` object, usable only as an index"
CONFIGURATION_REASON = "is a module's configuration, read only for its sizes"


def number_literal(node: cst.BaseExpression) -> int | float | None:
    """The number a literal (possibly negated) spells, read without evaluating code; None
    for anything else, and for an integer of `MAX_INTEGER` or more.

    A plain literal's text is read by `int` and `float`, which read what CPython's parser
    accepted as Python does, and spare `ast.literal_eval`'s closures (cyclic garbage)."""
    value: int | float | None
    if isinstance(node, (cst.Integer, cst.Float)):
        try:  # `1_000`, `0x1F`, `0o17`; `1e-3`, `.5`, `1_0.5`
            value = int(node.value, 0) if isinstance(node, cst.Integer) else float(node.value)
        except ValueError:  # e.g. over Python's limit on decimal digits
            value = _literal(node.value)
    elif isinstance(node, cst.UnaryOperation):
        value = _literal(cst.Module([]).code_for_node(node).strip())
    else:
        return None
    if isinstance(value, int) and abs(value) >= MAX_INTEGER:
        return None
    return value


def string_literal(node: cst.SimpleString) -> str:
    """The text a string literal spells, as `str(node.evaluated_value)` gives it.

    A plain, `u` or `r` string without a backslash or a carriage return spells exactly
    the text between its quotes; only the others need libcst's `ast.literal_eval`, a parse
    and a compile each (jaxtyping dimension strings alone are one per parameter)."""
    raw = node.raw_value
    prefix = node.prefix.lower()
    escapes = prefix != "r" and "\\" in raw
    if prefix in ("", "u", "r") and not escapes and "\r" not in raw:
        return raw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an invalid escape in the user's code: not ours
        return str(node.evaluated_value)


@lru_cache(maxsize=4096)
def _literal(text: str) -> int | float | None:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, (int, float)) else None


TOO_LARGE = f"is 2**{MAX_INTEGER_BITS} or more: larger than any size or index"


def literal_mismatch(a: Shape, b: Shape) -> tuple[sympy.Expr, sympy.Expr] | None:
    """The first pair of right-aligned extents that are different integer literals, neither
    1: shapes NumPy rejects for certain (symbols that might be equal are not a mismatch)."""
    for x, y in zip(reversed(a), reversed(b), strict=False):
        if x.is_Integer and y.is_Integer and x != y and x != 1 and y != 1:
            return x, y
    return None


def leaf_for(name: str, shape: Shape, element: ElementType, span: Span) -> Leaf:
    """A whole array named `name` (rank-0 arrays are element 0 of a one-element array)."""
    index = tuple(coordinate(d) for d in range(len(shape))) or (sympy.Integer(0),)
    return Leaf(name, element, shape, index, name, span)
