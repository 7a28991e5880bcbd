"""The expression evaluator: libcst expressions to array-expression trees, shapes and dtypes
propagated.

It dispatches on the node's kind, and a call or a subscript to the reader of that form
(`calls.py`, `views.py`, `selections.py`, `gathers.py`, `grids.py`, `histograms.py`,
`summaries.py`), handing itself over as the `ExpressionReader` those readers know
(`expressions.py`): they read sub-expressions through it and never import it back.
Anything it cannot understand becomes a located `Unknown` saying which name and why, and
the expression's value is None: its work is then not counted, never guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import libcst as cst
import sympy

from aiscan.errors import Diagnostic, Severity
from aiscan.frontends.python import dtypes, grids, histograms
from aiscan.frontends.python.calls import read_call
from aiscan.frontends.python.constructions import Builder, Construction
from aiscan.frontends.python.expressions import (
    SLICE_REASON,
    TOO_LARGE,
    Allocation,
    Binding,
    Opaque,
    Scope,
    SliceObject,
    Value,
    as_boolean,
    leaf_for,
    literal_mismatch,
    number_literal,
)
from aiscan.frontends.python.gathers import NOT_A_GATHER, pointer_range, read_gather
from aiscan.frontends.python.inference import additive_leaves
from aiscan.frontends.python.list_indices import listed_as_slice
from aiscan.frontends.python.names import SourceNames
from aiscan.frontends.python.selections import NOT_A_MASK, read_selection, select_elementwise
from aiscan.frontends.python.settings import SETTINGS_REASON
from aiscan.frontends.python.shapes import broadcast_shapes, same_extent, shape_text, slice_view
from aiscan.frontends.python.summaries import (
    has_control_flow,
    read_summarized_call,
    read_summarized_parts,
)
from aiscan.frontends.python.symbols import (
    MAX_INTEGER,
    MAX_INTEGER_BITS,
    data_symbol,
    size_symbol,
)
from aiscan.frontends.python.values import (
    Apply,
    ArrayValue,
    Contract,
    Integer,
    Leaf,
    Reduce,
    Scalar,
    Select,
    Shape,
    coordinate,
    substituted,
)
from aiscan.frontends.python.views import computed_first, permuted, through_operands
from aiscan.ir.arithmetic import literal_power_multiplies
from aiscan.ir.nodes import ElementType, Unknown, UnknownKind
from aiscan.span import Span

if TYPE_CHECKING:
    from aiscan.frontends.python.autocast import Autocast

__all__ = ["Evaluator"]

_OPERATORS = {
    "Add": "add",
    "Subtract": "sub",
    "Multiply": "mul",
    "Divide": "div",
    "FloorDivide": "div",
}
_BITWISE = frozenset({"BitAnd", "BitOr", "BitXor"})
_CONSTANTS = frozenset(
    {"numpy.pi", "numpy.e", "numpy.inf", "numpy.nan", "math.pi", "math.e", "math.inf", "math.tau"}
)


class Evaluator:
    """Reads the expressions of one function; unknowns found go to `self.unknowns`."""

    def __init__(self, names: SourceNames, scope: Scope) -> None:
        self.names = names
        self.scope = scope
        self.unknowns: list[Unknown] = []
        self.free: dict[sympy.Symbol, str] = {}
        self.divisible: set[tuple[sympy.Expr, sympy.Expr]] = set()
        """Pairs of sizes the code asserts divide (`assert a % b == 0`): `a // b` is exact."""
        """Extents named by us (`A_d0`, of array `A`), which another operand may determine."""
        self.equations: dict[sympy.Symbol, sympy.Expr] = {}
        """What a mismatch says a free extent must be, for `FunctionLowering` to retry."""
        self.rank_hints: dict[str, int] = {}
        """Inferred arrays a mismatch says have more axes than their evidence gave."""
        self.pending: list[tuple[Leaf, Allocation]] = []
        """Constructed arrays the statement being read uses as operands (`np.linalg.
        cholesky(A) + B`): the lowering computes them first, as NumPy calls them first."""
        self.constructed = 0
        self.errors: list[Diagnostic] = []
        """Code NumPy would reject (extents that differ as literals): located errors."""
        self.inferred: set[str] = set()
        """Parameters whose shapes come from the code (a call may say they are arrays)."""
        self.size_hints: set[str] = set()
        """Inferred parameters a helper call takes as a size (`pressure_poisson(nit, ...)`
        with `nit` an `int` of the helper): the caller's parameter is a size too."""
        self.trailing: set[str] = set()
        """Inferred vectors the code gives no rank (they meet arrays in arithmetic): against
        a longer shape they broadcast along its last axis, as a bias does."""
        self.call_names: dict[str, tuple[int, int]] = {}
        """Names given to summarized calls (`conv2d_L45`), by where the call is."""
        self.framework: str | None = None
        """The array library the function runs in (`torch`: `x.transpose(0, 1)` swaps
        two axes, `x.size(0)` is an extent), as `frameworks.py` decides it."""
        self.autocast: Autocast | None = None
        """The `torch.autocast` region the statement being read is in (`autocast.py`)."""
        self.factory_element: ElementType = dtypes.FLOAT64
        """The dtype array constructors give where none is passed: NumPy's float64;
        PyTorch's default dtype in a function that runs in PyTorch (`torch.ones(d)`)."""
        self.masks: dict[str, Shape] = {}
        self.pointer_lengths: dict[tuple[str, str], sympy.Symbol] = {}
        """`len_L<line>` of each data-dependent range `P[e]:P[e + 1]` (`gathers.py`)."""
        """Boolean masks (by their text) of the masked store being read (`r[r > 0] = 1.0 /
        r[r > 0]`): a selection by one of them is the element at hand."""

    def meet_layer(self, extent: sympy.Expr, size: sympy.Expr) -> None:
        """A layer of `size` features applied to an inferred parameter whose last axis the
        code named otherwise (`B, T, C = x.size()` before `self.c_attn(x)` of `n_embd`
        features): the layer says what that extent is, for `FunctionLowering` to retry."""
        if extent == size or not isinstance(extent, sympy.Symbol) or extent in self.equations:
            return
        for name in self.inferred:
            binding = self.scope.names.get(name)
            if isinstance(binding, Leaf) and binding.shape and binding.shape[-1] == extent:
                self.equations[extent] = size
                return

    def unify(self, a: Shape, b: Shape) -> None:
        """Two shapes that should agree (broadcast or contract): record free extents.

        Shapes of different ranks are compared only when the shorter is all extents we
        named for one array: that array then has as many axes as the longer shape."""
        if len(a) != len(b):
            short, long = (a, b) if len(a) < len(b) else (b, a)
            owners = {self.free.get(e) for e in short}
            if len(owners) == 1 and None not in owners:
                (owner,) = owners
                assert owner is not None
                if owner in self.trailing:
                    a, b = short, long[len(long) - len(short) :]
                else:
                    self.rank_hints[owner] = max(self.rank_hints.get(owner, 0), len(long))
                    return
            elif len(short) == 1 and not any(s in self.free for s in short[0].free_symbols):
                # A known vector (a stated `--shape` bias) broadcasts along the last axis, as
                # NumPy aligns them: it may fix the free extent there. (A known matrix met
                # by a 3-D tensor is a submodule's intermediate, not a broadcast.)
                a, b = short, long[len(long) - len(short) :]
            else:
                return
        for x, y in zip(a, b, strict=True):
            if x == y or x == 1 or y == 1:
                continue
            for side in (x, y):
                # `B_d0 - 2` against `n - 2`: the free extent is what makes them equal.
                unknowns = [s for s in side.free_symbols if s in self.free]
                if len(unknowns) != 1 or unknowns[0] in self.equations:
                    continue
                symbol = unknowns[0]
                solved = sympy.expand(symbol - (x - y) / sympy.diff(x - y, symbol))
                linear = (x - y).is_polynomial(symbol) and sympy.degree(x - y, symbol) == 1
                if linear and symbol not in solved.free_symbols:
                    self.equations[symbol] = solved
                    break

    # ---- entry points -------------------------------------------------------------------

    def value(self, node: cst.BaseExpression) -> Value | None:
        method: Callable[[cst.BaseExpression], Value | None] | None = getattr(
            self, f"_{type(node).__name__}", None
        )
        if method is None:
            return self.unsupported(node, f"`{self.names.text(node)}` is not understood")
        return method(node)

    def array(self, node: cst.BaseExpression) -> ArrayValue | None:
        """The value as an array expression (integers become weak int scalars)."""
        result = self.value(node)
        if isinstance(result, Integer):
            return Scalar(dtypes.PYTHON_INT, True, result.text, constant=True)
        if isinstance(result, Allocation):
            return self.materialize(result, node)
        return result

    def materialize(self, allocation: Allocation, node: cst.CSTNode) -> Leaf | None:
        """A constructed array used as an operand: a temporary `_c1`, ... built first
        (`np.ones((n, n))` in `np.tril(np.ones((n, n)))`: every element written)."""
        if allocation.build is None and allocation.fills:
            allocation = replace(allocation, build=_filled(allocation))
        if allocation.build is None:
            self.unsupported(node, "an allocation used inside an expression")
            return None
        self.constructed += 1
        name = f"_c{self.constructed}"
        leaf = leaf_for(name, allocation.shape, allocation.element, self.span(node))
        self.pending.append((leaf, allocation))
        return leaf

    def integer(self, node: cst.BaseExpression) -> sympy.Expr | None:
        """An integer expression in sizes and loop variables, or None (with an unknown)."""
        result = self.value(node)
        if isinstance(result, Integer) and result.value is not None:
            return result.value
        if isinstance(result, Integer):
            self.note(
                UnknownKind.DATA_DEPENDENT_BOUND,
                node,
                f"`{self.names.text(node)}` {result.unknown_because}",
            )
        elif isinstance(result, (Leaf, Apply)) and result.shape and result.element == dtypes.BOOL:
            self.note(
                UnknownKind.DATA_DEPENDENT_BOUND,
                node,
                f"boolean mask `{self.names.text(node)}` selects a data-dependent number of "
                "elements: a mask is modeled (a named fraction) as the only index "
                "(`x[mask]`, `A[mask] = value`), not beside other indices",
            )
        elif result is not None:
            self.note(
                UnknownKind.NON_AFFINE_INDEX,
                node,
                f"`{self.names.text(node)}` is not an integer expression",
            )
        return None

    def span(self, node: cst.CSTNode) -> Span:
        return self.names.span(node)

    def note(self, kind: UnknownKind, node: cst.CSTNode, message: str) -> None:
        self.unknowns.append(Unknown(kind, message, self.span(node)))

    def reject(self, node: cst.CSTNode, message: str) -> None:
        """Code NumPy raises on: a located error, and the statement is not counted."""
        self.errors.append(Diagnostic(self.span(node), Severity.ERROR, message))
        self.note(UnknownKind.UNKNOWN_SHAPE, node, f"{message}; not counted")

    def unsupported(self, node: cst.CSTNode, message: str) -> Value | None:
        """Say what is not understood; the value is then None."""
        self.note(UnknownKind.UNSUPPORTED, node, f"{message}; its work is not counted")
        return None

    # ---- atoms --------------------------------------------------------------------------

    def _Integer(self, node: cst.Integer) -> Value:
        value = number_literal(node)
        if value is None:
            return Integer(None, node.value, TOO_LARGE)
        return Integer(sympy.Integer(value), node.value)

    def _Float(self, node: cst.Float) -> Value:
        return Scalar(dtypes.PYTHON_FLOAT, True, node.value, constant=True)

    def _Imaginary(self, node: cst.Imaginary) -> Value:
        return Scalar(dtypes.COMPLEX128, True, node.value, constant=True)

    def _self_attribute(self, node: cst.Attribute) -> Value | None:
        """`self.N`, `self.A`: bound like names (`self.N` a size, `self.A` an array)."""
        key = f"self.{node.attr.value}"
        binding = self.scope.names.get(key)
        if binding is None:
            self.note(
                UnknownKind.UNKNOWN_SHAPE,
                node,
                f"`{key}` is not set where this method can see it: its shape and dtype "
                "are unknown; its work is not counted",
            )
            return None
        return self._usable(binding, node)

    def _usable(self, binding: Value | Opaque, node: cst.CSTNode) -> Value | None:
        """A name's value, or None with the reason noted where it could not be analyzed."""
        if isinstance(binding, Opaque):
            self.note(
                UnknownKind.UNKNOWN_SHAPE,
                node,
                f"`{binding.name}`: {binding.reason}; its work is not counted",
            )
            return None
        return binding

    def _Name(self, node: cst.Name) -> Value | None:
        if node.value in ("True", "False"):
            return Scalar(dtypes.BOOL, True, node.value, constant=True)
        binding = self.scope.names.get(node.value)
        if binding is None:
            canonical = self.names.canonical(node)
            if canonical in _CONSTANTS:
                return Scalar(dtypes.PYTHON_FLOAT, True, node.value, constant=True)
            self.note(
                UnknownKind.UNKNOWN_SHAPE,
                node,
                f"`{node.value}` is not defined in this function: its shape and dtype "
                "are unknown; its work is not counted",
            )
            return None
        return self._usable(binding, node)

    def _Attribute(self, node: cst.Attribute) -> Value | None:
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            return self._self_attribute(node)
        owner = self.scope.names.get(node.value.value) if isinstance(node.value, cst.Name) else None
        if _self_attribute(node.value):  # `self.params.dim` after `self.params = params`
            owner = self.scope.names.get(self.names.text(node.value))
        if isinstance(owner, Opaque) and owner.reason == SETTINGS_REASON:
            # `config.n_embd`: a configuration object's size (`settings.py`).
            return Integer(size_symbol(node.attr.value), self.names.text(node))
        canonical = self.names.canonical(node)
        if canonical in _CONSTANTS:
            return Scalar(dtypes.PYTHON_FLOAT, True, self.names.text(node), constant=True)
        attribute = node.attr.value
        if attribute in ("T", "mT"):
            base = self.array(node.value)
            if base is None:
                return None
            rank = len(base.shape)
            # `.mT` swaps the last two axes only; `.T` reverses them all.
            axes = tuple(range(rank))[::-1]
            if attribute == "mT" and rank >= 2:
                axes = (*range(rank - 2), rank - 1, rank - 2)
            text = self.names.text(node)
            result = through_operands(base, lambda leaf: permuted(leaf, axes), text)
            if isinstance(result, str):
                return self.unsupported(node, f"`{text}`: {result}")
            return result
        if attribute in ("real",):
            return self.value(node.value)
        if attribute in ("size", "ndim"):
            # `x.size` is the product of the extents, `x.ndim` their number: sizes.
            base = self.array(node.value)
            if base is None:
                return None
            if isinstance(base, Select):
                # Its count is the named p * N, but NumPy computes the selection for it.
                return self.unsupported(
                    node,
                    f"`{self.names.text(node)}` of a boolean selection (a data-dependent count)",
                )
            count = sympy.Mul(*base.shape) if attribute == "size" else len(base.shape)
            return Integer(sympy.sympify(count), self.names.text(node))
        if (
            attribute in ("min", "max", "eps", "tiny")
            and isinstance(node.value, cst.Call)
            and self.names.canonical(node.value.func) == "numpy.finfo"
        ):
            return Scalar(dtypes.PYTHON_FLOAT, True, self.names.text(node), constant=True)
        bound = self.scope.names.get(self.names.text(node))
        if isinstance(bound, Integer):
            return bound  # `config.n_embd` of a Flax module's configuration: a size
        return self.unsupported(node, f"attribute `{self.names.text(node)}`")

    # ---- operators ----------------------------------------------------------------------

    def _BinaryOperation(self, node: cst.BinaryOperation) -> Value | None:
        operator = type(node.operator).__name__
        left, right = self.value(node.left), self.value(node.right)
        if left is None or right is None:
            return None
        text = self.names.text(node)
        if isinstance(left, Integer) and isinstance(right, Integer) and operator != "Divide":
            if operator == "FloorDivide" and (left.value, right.value) in self.divisible:
                return Integer(left.value / right.value, text)  # type: ignore[operator]
            return _integer_operator(operator, left, right, text)
        # `i / 2` on two ints is true division: CPython converts both to float and divides,
        # a float division of a data value (1 FLOP), not integer index math (`i // 2` is).
        left_array = self._as_array(left, node.left)
        right_array = self._as_array(right, node.right)
        if left_array is None or right_array is None:
            return None
        if operator == "MatrixMultiply":
            return self.contract_matmul(left_array, right_array, node)
        if operator == "Power":
            return self.power(left_array, node.right, text, node)
        if operator in _OPERATORS:
            return self.elementwise(
                _OPERATORS[operator], operator.lower(), (left_array, right_array), node
            )
        if operator in _BITWISE:
            # `a & b` on masks (and integer arrays): bitwise, 0 FLOPs (MODEL.md).
            return self.elementwise("free", "logical", (left_array, right_array), node)
        return self.unsupported(node, f"operator `{text}`")

    def power(
        self, base: ArrayValue, exponent: cst.BaseExpression, text: str, node: cst.CSTNode
    ) -> ArrayValue | None:
        """`x**p` for a literal integer 2 <= p <= 16 is `p - 1` multiplies of one evaluated
        base (`(a - b)**2` subtracts once), as compilers and XLA expand it; NumPy itself
        calls `square` or `power` (the eager view's temporary says so). `x**0.5` is a sqrt,
        `x**-1` a divide, any other exponent a special `power`."""
        literal = number_literal(exponent)
        multiplies = literal_power_multiplies(literal)
        if multiplies is not None and multiplies >= 1:
            name = "square" if multiplies == 1 else "power"
            return self.elementwise("mul", name, (base,), node, text, repeat=multiplies)
        if literal == 0.5:
            return self.elementwise("special", "sqrt", (base,), node, text)
        if literal == -1:
            one = Scalar(dtypes.PYTHON_INT, True, "1", constant=True)
            return self.elementwise("div", "reciprocal", (one, base), node, text)
        if literal == 1:
            return base
        power = self.array(exponent)
        if power is None:
            return None
        return self.elementwise("special", "power", (base, power), node, text)

    def _UnaryOperation(self, node: cst.UnaryOperation) -> Value | None:
        operand = self.value(node.expression)
        if operand is None:
            return None
        operator = type(node.operator).__name__
        if isinstance(operand, Integer):
            if operator == "Minus":
                value = None if operand.value is None else -operand.value
                return Integer(value, self.names.text(node))
            return operand
        array = self._as_array(operand, node.expression)
        if array is None:
            return None
        if operator == "Plus":
            return array
        return self.elementwise("free", "negative", (array,), node)

    def _Comparison(self, node: cst.Comparison) -> Value | None:
        if _identity_with_none(node):  # `targets is not None`: a Python bool, no work
            return Scalar(dtypes.BOOL, True, self.names.text(node), constant=True)
        operands: list[ArrayValue] = []
        for part in (node.left, *(c.comparator for c in node.comparisons)):
            value = self.array(part)
            if value is None:
                return None
            operands.append(value)
        return as_boolean(self.elementwise("free", "compare", tuple(operands), node))

    def _BooleanOperation(self, node: cst.BooleanOperation) -> Value | None:
        left, right = self.array(node.left), self.array(node.right)
        if left is None or right is None:
            return None
        return self.elementwise("free", "logical", (left, right), node)

    def _as_array(self, value: Value, node: cst.CSTNode) -> ArrayValue | None:
        if isinstance(value, Integer):
            return Scalar(
                dtypes.PYTHON_INT,
                True,
                value.text,
                constant=value.value is not None and value.value.is_number,
            )
        if isinstance(value, Allocation):
            return self.materialize(value, node)
        return value

    def _taken_equal(self, a: Shape, b: Shape) -> Shape | None:
        """`a` and `b` broadcast with each differing pair of extents taken equal, where every
        such pair holds an extent this function inferred (`A_d0`); None otherwise. The
        extent with fewer inferred names is kept."""
        if len(a) != len(b):
            return None
        shape: list[sympy.Expr] = []
        for x, y in zip(a, b, strict=True):
            if x == y or y == 1:
                shape.append(x)
            elif x == 1:
                shape.append(y)
            else:
                free = [sum(1 for s in e.free_symbols if s in self.free) for e in (x, y)]
                if not any(free):
                    return None
                shape.append(x if free[0] <= free[1] else y)
        return tuple(shape)

    def elementwise(
        self,
        op: str,
        name: str,
        operands: Sequence[ArrayValue],
        node: cst.CSTNode,
        text: str | None = None,
        repeat: int = 1,
    ) -> ArrayValue | None:
        """A ufunc: broadcast the shapes, promote the dtypes, fold constant scalars."""
        if any(isinstance(o, Select) for o in operands):
            return select_elementwise(self, op, name, operands, node, text, repeat)
        shape: Shape = ()
        for operand in operands:
            merged = broadcast_shapes(shape, operand.shape)
            if merged is None:
                self.unify(shape, operand.shape)
                shapes = " and ".join(shape_text(o.shape) for o in operands)
                if literal_mismatch(shape, operand.shape):
                    self.reject(
                        node,
                        f"`{self.names.text(node)}`: shapes {shapes} do not broadcast "
                        "(NumPy raises a ValueError)",
                    )
                    return None
                taken = self._taken_equal(shape, operand.shape)
                if taken is not None:
                    # Inferred extents the code never names equal (`H - k2 - k3 + 4` against
                    # `H`): NumPy raises unless they are, so they are, as for a store.
                    self.note(
                        UnknownKind.ASSUMPTION,
                        node,
                        f"`{self.names.text(node)}`: shapes {shapes} taken to broadcast "
                        "(NumPy raises where they differ)",
                    )
                    shape = taken
                    continue
                self.note(
                    UnknownKind.UNKNOWN_SHAPE,
                    node,
                    f"`{self.names.text(node)}`: shapes {shapes} do not broadcast",
                )
                return None
            shape = merged
        element, weak = operands[0].element, operands[0].weak
        for operand in operands[1:]:
            element = dtypes.promote(element, weak, operand.element, operand.weak)
            weak = weak and operand.weak
        if op in ("div", "special") and not element.is_float:
            element = dtypes.FLOAT64  # true division and transcendental functions give floats
        text = text or self.names.text(node)
        if all(isinstance(o, Scalar) and o.constant for o in operands):
            return Scalar(element, weak, text, constant=True)
        return Apply(op, name, tuple(operands), element, shape, text, self.span(node), weak, repeat)

    # ---- subscripts ---------------------------------------------------------------------

    def _Subscript(self, node: cst.Subscript) -> Value | None:
        if isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
            return self._shape_entry(node)
        if grids.is_grid(self, node):
            return grids.whole_grid(self, node)
        if histograms.is_histogram(self, node.value):
            assert isinstance(node.value, cst.Call)
            item = node.slice[0].slice if len(node.slice) == 1 else None
            part = number_literal(item.value) if isinstance(item, cst.Index) else None
            if part not in (0, 1):
                return self.unsupported(node, f"`{self.names.text(node)}`: not `[0]` or `[1]`")
            return histograms.histogram_part(self, node.value, int(part or 0))
        base = self.value(node.value)
        if base is None:
            return None
        if isinstance(base, Leaf | Allocation):
            gathered = grids.gather_by_grid(self, base, node)
            if gathered is not False:
                return gathered  # type: ignore[return-value]
        if isinstance(base, Allocation) and base.shape:
            # `jnp.arange(0, t)[None]`, `torch.arange(0, d, 2)[: d // 2]`: the array is
            # built first, then viewed.
            base = self.materialize(base, node) or base
        computed = isinstance(base, Apply | Reduce | Contract | Select)
        if computed and base.shape and _new_axes_only(node):
            # `(A * A).sum(axis=1)[:, None]`: NumPy computes the value into an array, which
            # the index then views with new axes.
            base = computed_first(self, base, node) or base  # type: ignore[arg-type]
        if not isinstance(base, Leaf):
            return self.unsupported(node, f"indexing the computed value `{self.names.text(node)}`")
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            mask = self.names.text(node.slice[0].slice.value)
            shape = self.masks.get(mask)
            if shape is not None and all(map(same_extent, shape, base.shape)):
                return base  # `r[r > 0]` inside `r[r > 0] = ...`: the selected element
            selection = read_selection(self, base, node.slice[0].slice.value, node)
            if selection is not NOT_A_MASK:
                return selection  # type: ignore[return-value]
            gather = read_gather(self, base, node.slice[0].slice.value, node)
            if gather is not NOT_A_GATHER:
                return gather  # type: ignore[return-value]
        listed = listed_as_slice(node.slice)
        if isinstance(listed, str):
            return self.unsupported(node, f"`{self.names.text(node)}`: {listed}")
        if listed is not None:  # `x[:, [-1], :]`: a copy of the positions the list names
            rows = self.view(base, listed, node)
            return None if rows is None else self.elementwise("free", "copy", (rows,), node)
        return self.view(base, node.slice, node)

    def _shape_entry(self, node: cst.Subscript) -> Value | None:
        assert isinstance(node.value, cst.Attribute)
        base = self.value(node.value.value)
        if base is None:
            return None
        index = (
            self.integer(node.slice[0].slice.value)
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
            else None
        )
        shape = base.shape if not isinstance(base, Integer | Allocation) else ()
        if index is None or not index.is_Integer or not -len(shape) <= int(index) < len(shape):
            return self.unsupported(node, f"`{self.names.text(node)}`")
        return Integer(shape[int(index)], self.names.text(node))

    def view(
        self, base: Leaf, elements: Sequence[cst.SubscriptElement], node: cst.CSTNode
    ) -> ArrayValue | None:
        """`A[i, j]`, `a[1:-1, :-2]`, `b[None, :]`, `x[..., 0]`: a view or an element."""
        items: list[cst.BaseSlice] = [e.slice for e in elements]
        item: cst.BaseSlice | None
        has_ellipsis = any(
            isinstance(i, cst.Index) and isinstance(i.value, cst.Ellipsis) for i in items
        )
        consumed = sum(
            1
            for i in items
            if not _is_newaxis(i)
            and not (isinstance(i, cst.Index) and isinstance(i.value, cst.Ellipsis))
        )
        if consumed > len(base.shape):
            self.unsupported(
                node,
                f"`{self.names.text(node)}` has too many indices "
                f"for shape {shape_text(base.shape)}",
            )
            return None
        expanded: list[cst.BaseSlice | None] = []
        for item in items:
            if isinstance(item, cst.Index) and isinstance(item.value, cst.Ellipsis):
                expanded += [None] * (len(base.shape) - consumed)
            else:
                expanded.append(item)
        if not has_ellipsis:
            expanded += [None] * (len(base.shape) - consumed)
        # Each view dimension maps to: (base dimension or None for a new axis, offset, step).
        substitutions: dict[sympy.Symbol, sympy.Expr] = {}
        shape: list[sympy.Expr] = []
        base_dim = 0
        for item in expanded:
            if item is not None and _is_newaxis(item):
                shape.append(sympy.Integer(1))
                continue
            extent = base.shape[base_dim]
            placeholder = coordinate(base_dim)
            named = self._slice_object(item)
            if item is None or isinstance(item, cst.Slice) or named is not None:
                if named is not None:
                    sliced: _Sliced | None = _slice_of(extent, named.lower, named.upper, named.step)
                else:
                    assert item is None or isinstance(item, cst.Slice)
                    sliced = self._slice(item, extent)
                if sliced is None:
                    return None
                view_coordinate = coordinate(len(shape))
                substitutions[placeholder] = sliced.offset + sliced.step * view_coordinate
                shape.append(sliced.length)
            else:
                assert isinstance(item, cst.Index)
                position = self._gathered(item.value, node) or self.integer(item.value)
                if position is None:
                    return None
                if position.is_number and position < 0:
                    position = extent + position
                substitutions[placeholder] = position
            base_dim += 1
        # Base placeholders are renamed all at once so view and base coordinates never mix.
        index = tuple(substituted(e, substitutions, simultaneous=True) for e in base.index)
        return Leaf(
            base.array, base.element, tuple(shape), index, self.names.text(node), self.span(node)
        )

    def _gathered(self, index: cst.BaseExpression, node: cst.CSTNode) -> sympy.Expr | None:
        """An element of an array as the index (`G[k, neigh_idx[a, b]]`): one element along
        that axis, so shapes and FLOPs stay exact, at an address the data decides (an
        indirect access, its footprint bounded by its executions, said at the line)."""
        if not isinstance(index, cst.Subscript):
            return None
        errors, unknowns = len(self.errors), len(self.unknowns)
        value = self.value(index)
        element = value.element if isinstance(value, Leaf) else None
        if not isinstance(value, Leaf) or value.shape or element in (dtypes.BOOL, None):
            del self.errors[errors:], self.unknowns[unknowns:]  # read again as an integer
            return None
        text = self.names.text(index)
        self.note(
            UnknownKind.INDIRECT_ACCESS,
            node,
            f"`{self.names.text(node)}`: the index `{text}` is read from data: one element "
            "along that axis (shape and FLOPs exact), its address unknown; its footprint is "
            f"bounded by its executions (the reads of `{text}` itself are not counted)",
        )
        return data_symbol(text)

    def _slice_object(self, item: cst.BaseSlice | None) -> SliceObject | None:
        """The `slice(...)` a name in an index is bound to (`a[s]`), if it is one."""
        if not (isinstance(item, cst.Index) and isinstance(item.value, cst.Name)):
            return None
        name = item.value.value
        found = self.scope.slices.get(name)
        binding = self.scope.names.get(name)
        return found if isinstance(binding, Opaque) and binding.reason == SLICE_REASON else None

    def slice_object(self, node: cst.Call) -> SliceObject | None:
        """`slice(stop)`, `slice(start, stop)`, `slice(start, stop, step)` with integer
        bounds (`None` for an open end) and a literal step; None with a note otherwise."""
        arguments = [a.value for a in node.args if a.keyword is None and not a.star]
        if not 1 <= len(arguments) <= 3 or len(arguments) != len(node.args):
            self.unsupported(node, f"`{self.names.text(node)}`")
            return None
        if len(arguments) == 1:
            arguments = [cst.Name("None"), arguments[0]]
        lower, upper, *step = (None if _is_none(a) else a for a in arguments)
        read = self._slice_parts(lower, upper, step[0] if step else None)
        return None if read is None else SliceObject(*read)

    def _slice(self, item: cst.Slice | None, extent: sympy.Expr) -> _Sliced | None:
        if item is None:
            return _Sliced(extent, sympy.Integer(0), 1)
        pointed = pointer_range(self, item, item)
        if pointed is not None:  # `A_col[A_row[i]:A_row[i + 1]]`: a named length
            return _Sliced(pointed[0], pointed[1], 1)
        read = self._slice_parts(item.lower, item.upper, item.step)
        return None if read is None else _slice_of(extent, *read)

    def _slice_parts(
        self,
        lower: cst.BaseExpression | None,
        upper: cst.BaseExpression | None,
        step: cst.BaseExpression | None,
    ) -> tuple[sympy.Expr | None, sympy.Expr | None, int] | None:
        """A slice's integer bounds (None for an open end) and literal step, whether written
        `a[lo:hi:st]` or `slice(lo, hi, st)`; None, with a note, otherwise."""
        bounds: list[sympy.Expr | None] = []
        for bound in (lower, upper):
            if bound is None:
                bounds.append(None)
                continue
            value = self.integer(bound)
            if value is None:
                return None
            bounds.append(value)
        if step is None:
            return bounds[0], bounds[1], 1
        literal = number_literal(step)
        if not isinstance(literal, int) or literal == 0:
            self.note(
                UnknownKind.NON_AFFINE_INDEX, step, "slice step must be a nonzero integer literal"
            )
            return None
        return bounds[0], bounds[1], literal

    # ---- calls --------------------------------------------------------------------------

    def _Call(self, node: cst.Call) -> Value | None:
        return read_call(self, node)

    def inline_parts(
        self, node: cst.Call, definition: cst.FunctionDef, count: int
    ) -> list[Value | None] | None:
        """`a, b = f(...)` with `f` returning a tuple of `count` values: each value, the
        helper's work instantiated once (a summarized helper) or each part inlined on its
        own (a helper inlined reads no value twice, so no part repeats another's work).
        None when `f` does not return such a tuple (the caller says so)."""
        name = definition.name.value
        if name in self.scope.inlining:
            return None
        bound = self._arguments(node, definition)
        if bound is None:
            return None
        if has_control_flow(definition):
            return read_summarized_parts(self, node, definition, bound, count)
        returned = _returned_tuple(definition)
        if returned is None or len(returned.elements) != count:
            return None
        caller = self.scope
        values: list[Value | None] = []
        for part in range(count):
            names: dict[str, Binding] = {
                k: v for k, v in caller.names.items() if isinstance(v, Integer)
            }
            names.update(bound)
            self.scope = Scope(
                names, caller.helpers, (*caller.inlining, name), summarize=caller.summarize
            )
            try:
                values.append(self._inline_body(node, definition, part))
            finally:
                self.scope = caller
        return values

    def inline(self, node: cst.Call, definition: cst.FunctionDef) -> Value | None:
        """A call to a function of the same module, instantiated with its arguments: its
        assignments and `return` read as one expression of the caller's values (so
        `relu(linear(x, w, b))` counts both). A helper with loops or branches is summarized
        once and its work instantiated at the call instead (`summaries.py`); recursion is an
        unknown."""
        name = definition.name.value
        if name in self.scope.inlining:
            self.note(
                UnknownKind.UNKNOWN_CALL,
                node,
                f"recursive call to `{name}`: its work is not counted",
            )
            return None
        bound = self._arguments(node, definition)
        if bound is None:
            return None
        self._arrays_passed(node, definition, bound)
        if has_control_flow(definition):
            return read_summarized_call(self, node, definition, bound)
        caller = self.scope
        names: dict[str, Binding] = {
            k: v for k, v in caller.names.items() if isinstance(v, Integer)
        }
        names.update(bound)
        inner = Scope(
            names,
            caller.helpers,
            (*caller.inlining, name),
            summarize=caller.summarize,
        )
        self.scope = inner
        try:
            return self._inline_body(node, definition)
        finally:
            self.scope = caller

    def _arrays_passed(
        self, node: cst.Call, definition: cst.FunctionDef, bound: dict[str, ArrayValue | Integer]
    ) -> None:
        """The caller's un-annotated parameters that reach, through `+`/`-`, an argument the
        helper's code makes an array (`relu(x + y)` with `relu` mapping `np.maximum` over
        its `x`): arrays of that rank, learned for the caller's next lowering."""
        summarize = self.scope.summarize
        if summarize is None or not self.inferred:
            return
        scalars = [p for p, v in bound.items() if not isinstance(v, Integer) and not v.shape]
        if not scalars:
            return
        summary = summarize(definition.name.value, {}, {})
        if isinstance(summary, str):
            return
        taken = dict(summary.parameters)
        parameters = [p.name.value for p in definition.params.params]
        for position, argument in enumerate(node.args):
            name = argument.keyword.value if argument.keyword is not None else None
            if name is None and position < len(parameters):
                name = parameters[position]
            binding = taken.get(name or "")
            if name in scalars and isinstance(binding, Leaf) and binding.shape:
                for leaf in additive_leaves(argument.value, self.inferred):
                    hinted = self.rank_hints.get(leaf, 0)
                    self.rank_hints[leaf] = max(hinted, len(binding.shape))

    def _arguments(
        self, node: cst.Call, definition: cst.FunctionDef
    ) -> dict[str, ArrayValue | Integer] | None:
        """The call's value for each parameter of `definition` (defaults included)."""
        parameters = [p.name.value for p in definition.params.params]
        bound: dict[str, ArrayValue | Integer] = {}
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if len(positional) > len(parameters) or any(a.star for a in node.args):
            self.unsupported(node, f"the arguments of `{self.names.text(node)}`")
            return None
        for parameter, argument in zip(parameters, positional, strict=False):
            value = self.value(argument.value)
            if value is None or isinstance(value, Allocation):
                return None
            bound[parameter] = value
        for argument in node.args:
            if argument.keyword is not None and argument.keyword.value in parameters:
                value = self.value(argument.value)
                if value is None or isinstance(value, Allocation):
                    return None
                bound[argument.keyword.value] = value
        for declared in definition.params.params:
            if declared.name.value not in bound and declared.default is not None:
                value = self.value(declared.default)
                if value is None or isinstance(value, Allocation):
                    return None
                bound[declared.name.value] = value
        if len(bound) != len(parameters):
            self.unsupported(node, f"`{self.names.text(node)}`: missing arguments")
            return None
        return bound

    def _inline_body(
        self, node: cst.Call, definition: cst.FunctionDef, part: int | None = None
    ) -> Value | None:
        body = definition.body.body if isinstance(definition.body, cst.IndentedBlock) else ()
        for statement in body:
            assert isinstance(statement, cst.SimpleStatementLine)  # else summarized (`inline`)
            for small in statement.body:
                if isinstance(small, cst.Return):
                    if part is not None and isinstance(small.value, cst.Tuple):
                        return self.value(small.value.elements[part].value)
                    if small.value is None or isinstance(small.value, cst.Tuple):
                        return self.unsupported(
                            node, f"the value `{definition.name.value}` returns"
                        )
                    return self.value(small.value)
                if (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                ):
                    value = self.value(small.value)
                    if value is None or isinstance(value, Allocation):
                        return None
                    self.scope.names[small.targets[0].target.value] = value
                elif isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
                    continue  # a docstring
                else:
                    return self.unsupported(
                        node, f"`{self.names.text(small)}` in `{definition.name.value}`"
                    )
        return self.unsupported(node, f"`{definition.name.value}` returns nothing")

    def contract_matmul(
        self, a: ArrayValue, b: ArrayValue, node: cst.CSTNode, text: str | None = None
    ) -> ArrayValue | None:
        """`a @ b` for 1-d and 2-d operands, and stacks of matrices with equal batch shapes."""
        ra, rb = len(a.shape), len(b.shape)
        if ra == 0 or rb == 0:
            guessed = [o for o in (a, b) if isinstance(o, Leaf) and o.array in self.inferred]
            if any(not o.shape for o in guessed):
                # NumPy's `@` rejects a 0-d operand: an element of an un-annotated array
                # here (`G[k, E - w, i] @ dH[a, b, i]`) means it has more axes than the
                # indices say, which nothing else in the code tells.
                self.note(
                    UnknownKind.UNKNOWN_SHAPE,
                    node,
                    f"`{self.names.text(node)}`: `@` of an element of an un-annotated array, "
                    "which NumPy rejects on a scalar: the array has more axes than its "
                    "indices say; counted as a product of scalars",
                )
            return self.elementwise("mul", "multiply", (a, b), node, text)
        if self.framework in ("torch", "jax") and ra != rb and min(ra, rb) >= 2:
            # Model code multiplies stacks with the same batch axes (`q @ k.mT`): an
            # inferred operand of fewer axes has as many as the other (an assumption).
            # NumPy code broadcasts a matrix against a stack (`A3 @ C4`): not there.
            self.unify(a.shape, b.shape)
        batch = "abcdefgh"[: max(ra, rb) - 2] if max(ra, rb) > 2 else ""
        left = (batch[len(batch) - (ra - 2) :] if ra > 2 else "") + ("ik" if ra >= 2 else "k")
        right = (batch[len(batch) - (rb - 2) :] if rb > 2 else "") + ("kj" if rb >= 2 else "k")
        out = batch + ("i" if ra >= 2 else "") + ("j" if rb >= 2 else "")
        return self.contract((a, b), (left, right), out, node, text)

    def contract(
        self,
        operands: Sequence[ArrayValue],
        labels: Sequence[str],
        out: str,
        node: cst.CSTNode,
        text: str | None = None,
    ) -> ArrayValue | None:
        if any(isinstance(o, Select) for o in operands):
            if len(operands) == 2 and tuple(labels) == ("k", "k") and not out:
                # `x[m] @ y[m]`, `np.dot(x[m], y[m])`: the sum of the products, 2k - 1.
                product = self.elementwise("mul", "dot", operands, node, text)
                return None if product is None else self.reduce("sum", product, None, False, node)
            self.unsupported(node, f"`{self.names.text(node)}` on a boolean selection")
            return None
        cast = self.autocast_operands(operands, node, "lower_precision_fp")
        if cast is None:
            return None
        operands = cast
        extents: dict[str, sympy.Expr] = {}
        differ: list[str] = []
        for operand, letters in zip(operands, labels, strict=True):
            if len(letters) != len(operand.shape):
                self.note(
                    UnknownKind.UNKNOWN_SHAPE,
                    node,
                    f"`{self.names.text(node)}`: operand `{operand.text}` has shape "
                    f"{shape_text(operand.shape)}, not {len(letters)} dimensions",
                )
                return None
            for letter, extent in zip(letters, operand.shape, strict=True):
                known = extents.setdefault(letter, extent)
                if not same_extent(known, extent):
                    # Every pair is matched at once: a lowering learns them in one round.
                    self.unify((known,), (extent,))
                    differ.append(f"extents {known} and {extent} of index `{letter}` differ")
        if differ:
            self.note(UnknownKind.UNKNOWN_SHAPE, node, f"`{self.names.text(node)}`: {differ[0]}")
            return None
        element, weak = operands[0].element, operands[0].weak
        for operand in operands[1:]:
            element = dtypes.promote(element, weak, operand.element, operand.weak)
            weak = weak and operand.weak
        shape = tuple(extents[letter] for letter in out)
        return Contract(
            tuple(operands),
            tuple(labels),
            out,
            tuple(extents.items()),
            element,
            shape,
            text or self.names.text(node),
            self.span(node),
        )

    def autocast_operands(
        self, operands: Sequence[ArrayValue], node: cst.CSTNode, policy: str
    ) -> list[ArrayValue] | None:
        """`operands` as an operation of autocast's `policy` list gets them inside a
        `torch.autocast` region (`autocast.py`): `lower_precision_fp` casts each floating
        input that is neither float64 nor already the region's dtype to it, `fp32` casts
        float16 and bfloat16 inputs to float32 (CUDA only); each cast is an `astype` of
        its own, a kernel in the eager view, as PyTorch runs it."""
        region = self.autocast
        if region is None or (policy == "fp32" and not region.fp32_ops):
            return list(operands)
        target = region.element if policy == "lower_precision_fp" else dtypes.FLOAT32
        sources: tuple[ElementType, ...] = (dtypes.FLOAT16, dtypes.BFLOAT16)
        if policy == "lower_precision_fp":
            sources += (dtypes.FLOAT32,)
        found: list[ArrayValue] = []
        for operand in operands:
            if isinstance(operand, Scalar) or operand.element not in sources:
                found.append(operand)
                continue
            if operand.element == target:
                found.append(operand)
                continue
            text = f"{operand.text}.to(torch.{target.name})"
            copied = self.elementwise("free", "astype", (operand,), node, text)
            if copied is None:
                return None
            found.append(replace(copied, element=target))
        return found

    def reduce(
        self,
        kind: str,
        operand: ArrayValue,
        axes: tuple[int, ...] | None,
        keepdims: bool,
        node: cst.CSTNode,
    ) -> ArrayValue | None:
        rank = len(operand.shape)
        chosen = (
            tuple(range(rank))
            if axes is None
            else tuple(sorted(a + rank if a < 0 else a for a in axes))
        )
        if any(not 0 <= a < rank for a in chosen):
            self.note(
                UnknownKind.UNKNOWN_SHAPE,
                node,
                f"`{self.names.text(node)}`: axis out of range for shape "
                f"{shape_text(operand.shape)}",
            )
            return None
        if isinstance(operand, Select) and chosen != tuple(range(rank)):
            # Every axis of a selection is `k - 1` combines of its `k = p * N` elements, as
            # below; along some axes only, the rows' lengths are the data's.
            self.unsupported(
                node,
                f"`{self.names.text(node)}`: a reduction along some axes of a boolean selection",
            )
            return None
        shape = tuple(
            sympy.Integer(1) if d in chosen else extent
            for d, extent in enumerate(operand.shape)
            if keepdims or d not in chosen
        )
        text = self.names.text(node)
        element = dtypes.reduction_element(kind, operand.element)
        total = Reduce(
            "sum" if kind == "mean" else kind,
            operand,
            chosen,
            keepdims,
            element,
            shape,
            text,
            self.span(node),
        )
        if kind != "mean":
            return total
        count = sympy.Mul(*(operand.shape[a] for a in chosen)) if chosen else sympy.Integer(1)
        divisor = Scalar(dtypes.PYTHON_INT, True, str(count), constant=True)
        return self.elementwise("div", "divide", (total, divisor), node, text)


@dataclass(frozen=True, slots=True)
class _Sliced:
    length: sympy.Expr
    offset: sympy.Expr
    step: int


def _slice_of(
    extent: sympy.Expr, lower: sympy.Expr | None, upper: sympy.Expr | None, step: int
) -> _Sliced:
    view = slice_view(extent, lower, upper, step)
    return _Sliced(view.length, view.offset, view.step)


def _is_newaxis(item: cst.BaseSlice) -> bool:
    if not isinstance(item, cst.Index):
        return False
    if isinstance(item.value, cst.Name):
        return item.value.value == "None"
    return isinstance(item.value, cst.Attribute) and item.value.attr.value == "newaxis"


_MAX_DEGREE = 64


def _integer_operator(operator: str, left: Integer, right: Integer, text: str) -> Integer:
    a, b = left.value, right.value
    if a is None or b is None:
        return Integer(None, text, (left if a is None else right).unknown_because)
    if operator == "Power":
        return _integer_power(a, b, text)
    result = _integer_arithmetic(operator, a, b)
    return Integer(None, text) if result is None else _bounded(result, text)


def _integer_power(base: sympy.Expr, exponent: sympy.Expr, text: str) -> Integer:
    """`base ** exponent` for a non-negative literal exponent, bounded before it is computed;
    a symbolic exponent (`R**K`, `R**(K - i - 1)` in an FFT's reshapes) stays a power of a
    positive base, exact as written."""
    if not exponent.is_number and (base.is_positive or (base.is_Integer and int(base) > 1)):
        return Integer(sympy.Pow(base, exponent), text)
    if not exponent.is_Integer or int(exponent) < 0:
        return Integer(None, text)
    power = int(exponent)
    if base.is_Integer:
        magnitude = abs(int(base))
        if magnitude > 1 and (magnitude.bit_length() - 1) * power >= MAX_INTEGER_BITS:
            return Integer(None, text, TOO_LARGE)
    elif power > _MAX_DEGREE:
        return Integer(None, text, f"has a degree over {_MAX_DEGREE}")
    return _bounded(base**power, text)


def _bounded(value: sympy.Expr, text: str) -> Integer:
    if any(abs(number) >= MAX_INTEGER for number in value.atoms(sympy.Integer)):
        return Integer(None, text, TOO_LARGE)
    return Integer(value, text)


def _integer_arithmetic(operator: str, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
    if operator == "Add":
        return a + b
    if operator == "Subtract":
        return a - b
    if operator == "Multiply":
        return a * b
    if operator == "FloorDivide" and b != 0:
        return sympy.floor(a / b)
    if operator == "Modulo" and b != 0:
        return sympy.Mod(a, b)
    return None


def _filled(allocation: Allocation) -> Builder:
    """`np.ones`, `np.full`: the fill stored into every element of the new array."""

    fill = Scalar(allocation.element, False, allocation.text, constant=True)
    return lambda leaf, namer, span: Construction(((leaf, fill),), library=False)


def _self_attribute(node: cst.BaseExpression) -> bool:
    """`self.params`: an attribute of the module itself."""
    return (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == "self"
    )


def _identity_with_none(node: cst.Comparison) -> bool:
    """`x is None`, `x is not None`: an identity test against None."""
    if len(node.comparisons) != 1:
        return False
    (comparison,) = node.comparisons
    return isinstance(comparison.operator, cst.Is | cst.IsNot) and (
        _is_none(node.left) or _is_none(comparison.comparator)
    )


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _returned_tuple(definition: cst.FunctionDef) -> cst.Tuple | None:
    """The tuple a helper of simple statements returns (`return KE, PE`), if it does."""
    body = definition.body.body if isinstance(definition.body, cst.IndentedBlock) else ()
    for statement in body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Return):
                return small.value if isinstance(small.value, cst.Tuple) else None
    return None


def _new_axes_only(node: cst.Subscript) -> bool:
    """`[:, None]`, `[None, :]`, `[..., None]`: full slices and new axes, at least one new."""
    items = [e.slice for e in node.slice]
    full = all(
        _is_newaxis(i)
        or (isinstance(i, cst.Slice) and i.lower is None and i.upper is None and i.step is None)
        or (isinstance(i, cst.Index) and isinstance(i.value, cst.Ellipsis))
        for i in items
    )
    return full and any(_is_newaxis(i) for i in items)
