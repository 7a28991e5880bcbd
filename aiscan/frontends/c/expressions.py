"""C expressions to FLOP tallies, array accesses and affine index expressions.

`ExpressionReader` walks one expression with the current scope: it counts floating-point
operators by kind (integer index arithmetic is not a FLOP), records array reads in
evaluation order, and turns index and bound expressions into sympy, or says why it cannot.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pycparser import c_ast

from aiscan.algebra import SYMPY, ZERO, constant, expand, normal
from aiscan.frontends.c.literals import integer_literal
from aiscan.frontends.c.text import source_text
from aiscan.frontends.c.types import CType, TypeResolver, element_type_named
from aiscan.ir.arithmetic import literal_power_multiplies, operator_flops
from aiscan.ir.nodes import (
    Access,
    ChainInput,
    Dataflow,
    ElementType,
    FlopTally,
    Unknown,
    UnknownKind,
)
from aiscan.ir.symbols import MAX_INTEGER_BITS, loop_symbol, size_symbol
from aiscan.span import Span

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["Evaluation", "ExpressionReader", "Scope", "Variable"]


def _literal_power(name: str, arguments: list[c_ast.Node]) -> int | None:
    """Multiplies of `pow(x, p)` for a literal integer exponent 1..16 (`3`, `3.0`)."""
    if name not in ("pow", "powf", "powl") or len(arguments) != 2:
        return None
    exponent = arguments[1]
    if not isinstance(exponent, c_ast.Constant) or exponent.type not in (
        "int",
        "double",
        "float",
    ):
        return None
    text = exponent.value.rstrip("fFlLuU")
    try:
        value: float = int(text, 0) if exponent.type == "int" else float(text)
    except ValueError:
        return None
    return literal_power_multiplies(value)


SPECIAL_FUNCTIONS = frozenset(
    name + suffix
    for name in [
        "sqrt",
        "cbrt",
        "exp",
        "exp2",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "pow",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "erf",
        "erfc",
        "tgamma",
        "lgamma",
        "hypot",
        "cexp",
        "csqrt",
        "cabs",
    ]
    for suffix in ("", "f", "l")
)
# Conversions, comparisons and sign changes: 0 FLOPs by MODEL.md.
INTEGER_MIN_MAX = {
    "min": "Min",
    "max": "Max",
    "MIN": "Min",
    "MAX": "Max",
    "imin": "Min",
    "imax": "Max",
}
"""Two-argument integer `min`/`max` as code defines them (a macro expands to `?:`, which
`affine` reads too; a function of these names is taken to mean just that)."""

FREE_FUNCTIONS = frozenset(
    name + suffix
    for name in [
        "fabs",
        "fmin",
        "fmax",
        "floor",
        "ceil",
        "round",
        "trunc",
        "copysign",
        "creal",
        "cimag",
        "conj",
        "abs",
        "labs",
    ]
    for suffix in ("", "f", "l")
)
_FMA = frozenset({"fma", "fmaf", "fmal"})
_ARITHMETIC = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
_COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!=", "&&", "||"})
_WORD = re.compile(r"\w+")

_INT = element_type_named(["int"])
_DOUBLE = element_type_named(["double"])
_FLOAT = element_type_named(["float"])


@dataclass(slots=True)
class Variable:
    """A name in scope; scalars live in registers, arrays and pointers in memory."""

    name: str
    ctype: CType
    is_loop_var: bool = False
    is_parameter: bool = False
    integer_value: sympy.Expr | None = None
    """For an integer local: its current affine value, or None once it varies."""
    pointer_base: tuple[str, sympy.Expr] | None = None
    """For a local pointer set to `X + e`: the array it points into and the offset."""
    pointer_varies: bool = False
    """For a pointer moved in ways not followed (in a branch, by a variable amount): where
    it points is unknown, so its accesses are indirect, never one element."""

    def copy(self) -> Variable:
        return Variable(
            self.name,
            self.ctype,
            self.is_loop_var,
            self.is_parameter,
            self.integer_value,
            self.pointer_base,
            self.pointer_varies,
        )


@dataclass
class Scope:
    variables: dict[str, Variable] = field(default_factory=dict)

    def lookup(self, name: str) -> Variable | None:
        return self.variables.get(name)

    def copy(self) -> Scope:
        return Scope({name: v.copy() for name, v in self.variables.items()})


_NO_FLOPS = FlopTally()


@dataclass(slots=True)
class Evaluation:
    """What evaluating one expression costs, and its value's element type.

    One is built for every node read; slots and a shared zero tally keep that cheap."""

    element: ElementType | None = None
    flops: FlopTally = _NO_FLOPS
    accesses: list[Access] = field(default_factory=list)
    special_calls: list[str] = field(default_factory=list)
    unknowns: list[Unknown] = field(default_factory=list)
    leaves: list[ChainInput] = field(default_factory=list)
    """The floating-point values this value is computed from, each with the operations
    on its way here (for dependence chains); `absorb` leaves them alone."""
    top: str = ""
    """The operation that produced the value (`mul`, `add`...), or empty."""
    stored: Dataflow | None = None
    """For an assignment of a floating-point value: what it stores and reads."""

    def through(self, operation: str | None) -> list[ChainInput]:
        """The leaves, one operation further on their way (None: unchanged)."""
        if operation is None:
            return list(self.leaves)
        return [leaf.then(operation) for leaf in self.leaves]

    def absorb(self, other: Evaluation) -> None:
        self.flops = self.flops + other.flops
        self.accesses += other.accesses
        self.special_calls += other.special_calls
        self.unknowns += other.unknowns


class ExpressionReader:
    """Reads expressions of one function; `span_of` turns pycparser coords into spans."""

    def __init__(
        self,
        scope: Scope,
        types: TypeResolver,
        span_of: Callable[[c_ast.Node], Span],
        known_functions: dict[str, int],
        not_inlined: Mapping[int, str] | None = None,
    ) -> None:
        self.scope = scope
        self.types = types
        self.span_of = span_of
        self.known_functions = known_functions
        self.not_inlined = not_inlined or {}
        """Calls to functions of the file left in place by the inliner: why, by `id`."""

    # ---- values -------------------------------------------------------------------------

    def value(self, node: c_ast.Node | None) -> Evaluation:
        """Evaluate `node` as an rvalue: reads it performs, FLOPs it costs, its type."""
        if node is None:
            return Evaluation()
        method = getattr(self, f"_value_{type(node).__name__}", None)
        if method is None:
            return Evaluation()
        result: Evaluation = method(node)
        if result.leaves and (result.element is None or not result.element.is_float):
            result.leaves = []  # an integer or a pointer: no floating-point chain
        return result

    def _value_Constant(self, node: c_ast.Constant) -> Evaluation:
        if node.type in ("double", "float", "long double"):
            is_single = node.value.lower().endswith("f")
            return Evaluation(_FLOAT if is_single else _DOUBLE)
        return Evaluation(_INT)

    def _value_ID(self, node: c_ast.ID) -> Evaluation:
        variable = self.scope.lookup(node.name)
        if variable is None:
            return Evaluation(_INT)
        if not variable.ctype.is_scalar:
            return Evaluation(None)
        return Evaluation(variable.ctype.element, leaves=[ChainInput(node.name, None, True, ())])

    def _value_ArrayRef(self, node: c_ast.ArrayRef) -> Evaluation:
        return self.reference(node, is_write=False)

    def _value_StructRef(self, node: c_ast.StructRef) -> Evaluation:
        ctype = self.lvalue_type(node)
        if ctype is not None and ctype.is_scalar and not self._is_register(node):
            return self.reference(node, is_write=False)
        return Evaluation(ctype.element if ctype is not None else None)

    def _value_Cast(self, node: c_ast.Cast) -> Evaluation:
        result = self.value(node.expr)
        ctype = self.types.resolve(node.to_type)
        result.element = ctype.element if ctype.is_scalar else None
        return result

    def _value_UnaryOp(self, node: c_ast.UnaryOp) -> Evaluation:
        if node.op == "*":
            return self.reference(node, is_write=False)
        if node.op in ("sizeof", "&"):
            inner = Evaluation()
            if node.op == "&" and isinstance(node.expr, c_ast.ArrayRef):
                inner = self._index_reads(node.expr)
            inner.element = _INT if node.op == "sizeof" else None
            return inner
        if node.op in ("++", "--", "p++", "p--"):
            if self.shift_pointer(node.expr, 1 if "+" in node.op else -1):
                return Evaluation()
            return self.update(node.expr, "+" if "+" in node.op else "-", Evaluation(_INT))
        result = self.value(node.expr)
        if node.op == "!":
            result.element = _INT
        return result

    def _value_BinaryOp(self, node: c_ast.BinaryOp) -> Evaluation:
        left = self.value(node.left)
        right = self.value(node.right)
        result = Evaluation()
        result.absorb(left)
        result.absorb(right)
        if node.op in _COMPARISONS:
            result.element = _INT
            return result
        element = _promote(left.element, right.element)
        result.element = element
        if node.op in _ARITHMETIC and element is not None and element.is_float:
            flops = _operator_flops(node.op, left.element, right.element)
            result.flops = result.flops + _per_lane(flops, element)
            result.leaves = [
                *left.through(_on_path(node.op, left.top, right.top)),
                *right.through(_on_path(node.op, right.top, left.top)),
            ]
            result.top = _ARITHMETIC[node.op]
        return result

    def _value_TernaryOp(self, node: c_ast.TernaryOp) -> Evaluation:
        result = self.value(node.cond)
        then, other = self.value(node.iftrue), self.value(node.iffalse)
        result.absorb(then)
        result.absorb(other)
        result.element = _promote(then.element, other.element)
        result.leaves = [*then.leaves, *other.leaves]
        if not (then.flops.is_zero() and other.flops.is_zero()):
            result.unknowns.append(
                Unknown(
                    UnknownKind.BRANCH_FRACTION,
                    "both arms of `?:` counted on every execution (an upper bound)",
                    self.span_of(node),
                )
            )
        return result

    def _value_FuncCall(self, node: c_ast.FuncCall) -> Evaluation:
        result = Evaluation()
        arguments = list(node.args.exprs) if node.args is not None else []
        evaluated = [self.value(a) for a in arguments]
        for argument in evaluated:
            result.absorb(argument)
        name = node.name.name if isinstance(node.name, c_ast.ID) else source_text(node.name)
        element = next((a.element for a in evaluated if a.element is not None), _DOUBLE)
        multiplies = _literal_power(name, arguments)
        if multiplies is not None:
            # `pow(x, 3)`: p - 1 multiplies, as compilers emit it (MODEL.md).
            result.flops = result.flops + FlopTally(mul=multiplies)
            result.element = _FLOAT if name == "powf" else element
            result.leaves = evaluated[0].through("mul") if multiplies else []
        elif name in SPECIAL_FUNCTIONS:
            result.flops = result.flops + FlopTally(special=1)
            result.special_calls.append(name)
            result.element = _FLOAT if name.endswith("f") and name != "erf" else element
            result.leaves = [leaf for a in evaluated for leaf in a.through("special")]
            result.top = "special"
        elif name in _FMA:
            result.flops = result.flops + _per_lane(FlopTally(add=1, mul=1), element)
            result.element = element
            result.leaves = [leaf for a in evaluated for leaf in a.through("fma")]
            result.top = "fma"
        elif name in FREE_FUNCTIONS or (
            name in INTEGER_MIN_MAX and len(arguments) == 2 and self.affine(node) is not None
        ):
            result.element = element
            result.leaves = [leaf for a in evaluated for leaf in a.leaves]
        else:
            result.unknowns.append(
                Unknown(UnknownKind.UNKNOWN_CALL, self._not_counted(node, name), self.span_of(node))
            )
            result.element = None
        return result

    def _not_counted(self, node: c_ast.FuncCall, name: str) -> str:
        """Why a call's work is not counted: not inlined (and why), through a function
        pointer, or to a function without a body here."""
        where = self.known_functions.get(name)
        reason = self.not_inlined.get(id(node))
        if reason is not None:
            defined = f"defined at line {where} of this file" if where else "defined"
            return (
                f"call to `{name}` ({defined}) not inlined: {reason}; its work and traffic "
                "are not counted here"
            )
        if isinstance(node.name, c_ast.ID) and self.scope.lookup(name) is not None:
            return (
                f"call through the function pointer `{name}`: its target is not known, its "
                "work and traffic are not counted"
            )
        if not isinstance(node.name, c_ast.ID):
            return (
                f"call through `{name}`: its target is not known, its work and traffic are "
                "not counted"
            )
        if where:
            return (
                f"call to `{name}` (defined at line {where} of this file) not inlined: its "
                "work and traffic are not counted here"
            )
        return f"call to unknown function `{name}`: its work and traffic are not counted"

    def _value_Assignment(self, node: c_ast.Assignment) -> Evaluation:
        return self.assign(node)

    def _value_ExprList(self, node: c_ast.ExprList) -> Evaluation:
        result = Evaluation()
        for expr in node.exprs:
            part = self.value(expr)
            result.absorb(part)
            result.element = part.element
            result.leaves, result.top = part.leaves, part.top
        return result

    def _value_InitList(self, node: c_ast.InitList) -> Evaluation:
        return self._value_ExprList(c_ast.ExprList(node.exprs))

    def _value_CompoundLiteral(self, node: c_ast.CompoundLiteral) -> Evaluation:
        return self.value(node.init)

    # ---- assignments --------------------------------------------------------------------

    def assign(self, node: c_ast.Assignment) -> Evaluation:
        """`lhs = rhs` or `lhs op= rhs`: the right side, then the read-modify-write of lhs."""
        rhs = self.value(node.rvalue)
        moved = self._pointer_move(node)
        if moved is not None and self.shift_pointer(node.lvalue, moved):
            return rhs
        if node.op == "=":
            result = rhs
            store = self._store(node.lvalue, rhs)
            result.absorb(store)
            result.stored = self._dataflow(node.lvalue, store, rhs.element, result.leaves)
            return result
        operator = node.op[:-1]
        return self.update(node.lvalue, operator, rhs)

    def update(self, target: c_ast.Node, operator: str, rhs: Evaluation) -> Evaluation:
        """Read-modify-write of `target` with `operator` (compound assignment, `++`)."""
        result = Evaluation()
        result.absorb(rhs)
        current = self.value(target)
        result.absorb(current)
        element = _promote(current.element, rhs.element)
        floating = current.element is not None and current.element.is_float
        if operator in _ARITHMETIC and floating:
            result.flops = result.flops + _operator_flops(operator, current.element, rhs.element)
            result.leaves = [
                *current.through(_on_path(operator, current.top, rhs.top)),
                *rhs.through(_on_path(operator, rhs.top, current.top)),
            ]
            result.top = _ARITHMETIC[operator]
        result.element = element
        if isinstance(target, c_ast.ID):
            self._track_integer(target.name, None)
        store = self._store(target, Evaluation(element), evaluate_address=False)
        result.absorb(store)
        if floating and operator in _ARITHMETIC:
            result.stored = self._dataflow(target, store, element, result.leaves)
        return result

    def _dataflow(
        self,
        target: c_ast.Node,
        store: Evaluation,
        element: ElementType | None,
        leaves: list[ChainInput],
    ) -> Dataflow | None:
        """What a floating-point assignment stores (a scalar or one array element) and the
        values it is computed from."""
        if element is None or not element.is_float:
            return None
        if isinstance(target, c_ast.ID):
            variable = self.scope.lookup(target.name)
            if variable is None or not variable.ctype.is_scalar:
                return None
            return Dataflow(target.name, None, True, tuple(leaves))
        written = [a for a in store.accesses if a.is_write]
        if len(written) != 1:
            return None
        return Dataflow(written[0].array, written[0].index, False, tuple(leaves))

    def _store(
        self, target: c_ast.Node, rhs: Evaluation, *, evaluate_address: bool = True
    ) -> Evaluation:
        if isinstance(target, c_ast.ID):
            variable = self.scope.lookup(target.name)
            if variable is not None and variable.ctype.is_scalar:
                self._track_integer(target.name, None)
            elif variable is not None and not variable.ctype.is_scalar:
                variable.pointer_base = None
            return Evaluation()
        if isinstance(target, c_ast.StructRef) and self._is_register(target):
            return Evaluation()
        result = self.reference(target, is_write=True)
        if not evaluate_address:
            # The address was computed (and its index reads counted) by the read before.
            result.accesses = [a for a in result.accesses if a.is_write]
        return result

    def shift_pointer(self, target: c_ast.Node, amount: sympy.Expr | int) -> bool:
        """`p++`, `p += 2` on a pointer: it now points `amount` elements further."""
        if not isinstance(target, c_ast.ID):
            return False
        variable = self.scope.lookup(target.name)
        if variable is None or variable.ctype.is_scalar or variable.pointer_varies:
            return False
        base, offset = variable.pointer_base or (target.name, ZERO)
        variable.pointer_base = (base, expand(offset + amount))
        return True

    def _pointer_move(self, node: c_ast.Assignment) -> sympy.Expr | None:
        """How far `p += e`, `p -= e` or `p = p + e` moves the pointer `p` (affine `e`)."""
        target = node.lvalue
        if not isinstance(target, c_ast.ID) or self._is_scalar_name(target.name):
            return None
        amount: c_ast.Node | None = None
        sign = 1
        if node.op in ("+=", "-="):
            amount, sign = node.rvalue, (1 if node.op == "+=" else -1)
        elif (
            node.op == "="
            and isinstance(node.rvalue, c_ast.BinaryOp)
            and node.rvalue.op in "+-"
            and isinstance(node.rvalue.left, c_ast.ID)
            and node.rvalue.left.name == target.name
        ):
            amount, sign = node.rvalue.right, (1 if node.rvalue.op == "+" else -1)
        value = self.affine(amount) if amount is not None else None
        return None if value is None else sign * value

    def _is_scalar_name(self, name: str) -> bool:
        variable = self.scope.lookup(name)
        return variable is None or variable.ctype.is_scalar

    def _is_register(self, node: c_ast.StructRef) -> bool:
        """`s.x` on a local struct value is a register; `p->x` goes to memory."""
        return (
            node.type == "."
            and isinstance(node.name, c_ast.ID)
            and ((v := self.scope.lookup(node.name.name)) is not None and v.ctype.is_scalar)
        )

    def _track_integer(self, name: str, value: sympy.Expr | None) -> None:
        variable = self.scope.lookup(name)
        if variable is not None and not variable.is_loop_var:
            variable.integer_value = value

    def declare_value(self, name: str, init: c_ast.Node | None) -> Evaluation:
        """The initializer of a new local `name`, and what it tells about integers/pointers."""
        result = self.value(init)
        variable = self.scope.lookup(name)
        if variable is not None and init is not None:
            self._remember(variable, init)
            element = variable.ctype.element
            if variable.ctype.is_scalar and element is not None and element.is_float:
                result.stored = Dataflow(name, None, True, tuple(result.leaves))
        return result

    def assign_integer_or_pointer(self, node: c_ast.Assignment) -> None:
        """After `x = e` on an integer or pointer local, remember e (affine) for later indexing."""
        if node.op != "=" or not isinstance(node.lvalue, c_ast.ID):
            return
        if self._pointer_move(node) is not None:
            return  # `p = p + 1`: moved by `assign` already
        variable = self.scope.lookup(node.lvalue.name)
        if variable is not None and not variable.is_loop_var:
            self._remember(variable, node.rvalue)

    def _remember(self, variable: Variable, value: c_ast.Node) -> None:
        """An integer's affine value, or where a pointer points, for later indices."""
        element = variable.ctype.element
        if variable.ctype.is_scalar and element is not None and not element.is_float:
            variable.integer_value = self.affine(value)
        elif not variable.ctype.is_scalar:
            variable.pointer_base = self._pointer_target(value)
            if variable.pointer_base is not None:
                variable.pointer_varies = False

    def _pointer_target(self, node: c_ast.Node) -> tuple[str, sympy.Expr] | None:
        if isinstance(node, c_ast.Cast):
            return self._pointer_target(node.expr)
        if isinstance(node, c_ast.ID):
            return self._array_base(node.name, ZERO)
        if (
            isinstance(node, c_ast.UnaryOp)
            and node.op == "&"
            and isinstance(node.expr, c_ast.ArrayRef)
            and isinstance(node.expr.name, c_ast.ID)
        ):
            offset = self.affine(node.expr.subscript)
            return None if offset is None else self._array_base(node.expr.name.name, offset)
        if isinstance(node, c_ast.BinaryOp) and node.op in "+-":
            base, offset_node = node.left, node.right
            if isinstance(node.right, c_ast.ID) and node.op == "+" and self._is_memory(node.right):
                base, offset_node = node.right, node.left
            if isinstance(base, c_ast.ID):
                offset = self.affine(offset_node)
                if offset is None:
                    return None
                return self._array_base(base.name, offset if node.op == "+" else -offset)
        return None

    def _array_base(self, name: str, offset: sympy.Expr) -> tuple[str, sympy.Expr] | None:
        variable = self.scope.lookup(name)
        if variable is None or variable.ctype.is_scalar or variable.pointer_varies:
            return None
        if variable.pointer_base is not None:
            base, inner = variable.pointer_base
            return base, inner + offset
        return name, offset

    def _is_memory(self, node: c_ast.ID) -> bool:
        variable = self.scope.lookup(node.name)
        return variable is not None and not variable.ctype.is_scalar

    # ---- references ---------------------------------------------------------------------

    def reference(self, node: c_ast.Node, *, is_write: bool) -> Evaluation:
        """An array element access: `A[i][j]`, `p[i*n + k]`, `*p`, `*(p + i)`, `s->x[i]`,
        `*p++` (the element at `p`, then `p` moves on) and `*++p` (moves, then the element)."""
        if (
            isinstance(node, c_ast.UnaryOp)
            and node.op == "*"
            and isinstance(node.expr, c_ast.UnaryOp)
            and node.expr.op in ("++", "--", "p++", "p--")
            and isinstance(node.expr.expr, c_ast.ID)
            and not self._is_scalar_name(node.expr.expr.name)
        ):
            step = 1 if "+" in node.expr.op else -1
            pointer = node.expr.expr
            if not node.expr.op.startswith("p"):
                self.shift_pointer(pointer, step)
            plain = c_ast.UnaryOp("*", pointer, node.coord)
            result = self.reference(plain, is_write=is_write)
            text = source_text(node)
            result.accesses = [replace(a, text=text) for a in result.accesses]
            if node.expr.op.startswith("p"):
                self.shift_pointer(pointer, step)
            return result
        base, subscripts = _unwind(node)
        result = Evaluation()
        for subscript in subscripts:
            result.absorb(self.value(subscript))
        name, ctype = self._base_of(base)
        span = self.span_of(node)
        text = source_text(node)
        if ctype is None:
            result.unknowns.append(
                Unknown(
                    UnknownKind.UNSUPPORTED,
                    f"cannot tell what `{text}` refers to; its traffic is not counted",
                    span,
                )
            )
            return result
        if len(subscripts) < ctype.depth:
            result.element = None  # a row pointer, not an element
            return result
        element = ctype.element
        if element is None:
            result.unknowns.append(
                Unknown(
                    UnknownKind.UNSUPPORTED,
                    f"element type of `{text}` is unknown; its traffic is not counted",
                    span,
                )
            )
            return result
        index = self._index(name, subscripts)
        if index is None:
            result.unknowns.append(
                Unknown(
                    UnknownKind.INDIRECT_ACCESS,
                    f"`{text}`: index is data-dependent or not affine; its footprint is bounded "
                    "by its number of executions",
                    span,
                )
            )
        variable = self.scope.lookup(name)
        array = variable.pointer_base[0] if variable and variable.pointer_base else name
        extents = (
            ctype.extents[: len(subscripts)]
            if variable is None or not variable.pointer_base
            else ()
        )
        result.accesses.append(Access(array, index, element, is_write, span, text, extents))
        result.element = element
        if not is_write and element.is_float:
            result.leaves = [ChainInput(array, index, False, ())]
        return result

    def _index_reads(self, node: c_ast.ArrayRef) -> Evaluation:
        _, subscripts = _unwind(node)
        result = Evaluation()
        for subscript in subscripts:
            result.absorb(self.value(subscript))
        return result

    def _base_of(self, base: c_ast.Node) -> tuple[str, CType | None]:
        if isinstance(base, c_ast.ID):
            variable = self.scope.lookup(base.name)
            return base.name, variable.ctype if variable is not None else None
        if isinstance(base, c_ast.StructRef):
            return source_text(base), self.lvalue_type(base)
        return source_text(base), None

    def lvalue_type(self, node: c_ast.StructRef) -> CType | None:
        if isinstance(node.name, c_ast.ID):
            variable = self.scope.lookup(node.name.name)
            owner = variable.ctype if variable is not None else None
        elif isinstance(node.name, c_ast.StructRef):
            owner = self.lvalue_type(node.name)
        else:
            owner = None
        if owner is None:
            return None
        if node.type == "->":
            owner = owner.deref()
        return self.types.field(owner, node.field.name)

    def _index(self, name: str, subscripts: list[c_ast.Node]) -> tuple[sympy.Expr, ...] | None:
        index: list[sympy.Expr] = []
        for subscript in subscripts:
            expr = self.affine(subscript)
            if expr is None:
                return None
            index.append(expr)
        variable = self.scope.lookup(name)
        if variable is not None and variable.pointer_varies:
            return None
        if variable is not None and variable.pointer_base is not None:
            offset = variable.pointer_base[1]
            if not index:
                index = [offset]
            else:
                index[0] = index[0] + offset
        return tuple(expand(e) for e in index) if index else (ZERO,)

    # ---- affine expressions -------------------------------------------------------------

    def affine(self, node: c_ast.Node | None) -> sympy.Expr | None:
        """An integer expression over loop variables and sizes, or None if data-dependent."""
        if node is None:
            return None
        if isinstance(node, c_ast.Constant):
            if node.type in ("int", "long", "unsigned int", "unsigned long"):
                value = integer_literal(node.value)
                return None if value is None else constant(value)
            if node.type == "char":
                return None
            return None
        if isinstance(node, c_ast.ID):
            variable = self.scope.lookup(node.name)
            if variable is None:
                return size_symbol(node.name)
            if variable.is_loop_var:
                return loop_symbol(node.name)
            element = variable.ctype.element
            if not variable.ctype.is_scalar or element is None or element.is_float:
                return None
            if variable.integer_value is not None:
                return variable.integer_value
            if variable.is_parameter:
                return size_symbol(node.name)
            return None
        if isinstance(node, c_ast.Cast):
            return self.affine(node.expr)
        if isinstance(node, c_ast.StructRef) and not isinstance(node.name, c_ast.ArrayRef):
            # `g->n`, `s.len`: a size held in a struct; named `g_n`, `s_len` (sympy-parsable).
            ctype = self.lvalue_type(node)
            element = ctype.element if ctype is not None else None
            if ctype is not None and (not ctype.is_scalar or element is None or element.is_float):
                return None
            return size_symbol("_".join(_WORD.findall(source_text(node))))
        if isinstance(node, c_ast.UnaryOp):
            inner = self.affine(node.expr)
            if inner is None:
                return None
            if node.op == "-":
                return -inner
            if node.op == "+":
                return inner
            return None
        if isinstance(node, c_ast.BinaryOp):
            left, right = self.affine(node.left), self.affine(node.right)
            if left is None or right is None:
                return None
            return _integer_operator(node.op, left, right)
        if isinstance(node, c_ast.TernaryOp):
            return self._min_max_select(node)
        if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID):
            chosen = INTEGER_MIN_MAX.get(node.name.name)
            arguments = list(node.args.exprs) if node.args is not None else []
            if chosen is None or len(arguments) != 2:
                return None
            values = [self.affine(a) for a in arguments]
            if values[0] is None or values[1] is None:
                return None
            return normal(getattr(sympy, chosen)(values[0], values[1]))
        return None

    def _min_max_select(self, node: c_ast.TernaryOp) -> sympy.Expr | None:
        """`a < b ? a : b` is `Min(a, b)`, `a > b ? a : b` is `Max(a, b)` (as a `MIN` macro
        expands, and tiled loops bound their tiles: `ii + BS < n ? ii + BS : n`); other
        selections are not affine."""
        condition = node.cond
        if not isinstance(condition, c_ast.BinaryOp) or condition.op not in ("<", "<=", ">", ">="):
            return None
        parts = [
            self.affine(n) for n in (condition.left, condition.right, node.iftrue, node.iffalse)
        ]
        if any(p is None for p in parts):
            return None
        left, right, then, other = (expand(p) for p in parts if p is not None)
        if (then, other) == (left, right):
            smaller_first = condition.op in ("<", "<=")
        elif (then, other) == (right, left):
            smaller_first = condition.op in (">", ">=")
        else:
            return None
        return normal(sympy.Min(left, right) if smaller_first else sympy.Max(left, right))


def _integer_operator(op: str, left: sympy.Expr, right: sympy.Expr) -> sympy.Expr | None:
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if op == "/" and right != 0:
        return normal(sympy.floor(left / right))
    if op == "%" and right != 0:
        return normal(sympy.Mod(left, right))
    if op in ("<<", ">>") and right.is_Integer and 0 <= int(right) < MAX_INTEGER_BITS:
        # A wider shift (or a negative one) is undefined for every C integer type.
        scale = constant(2 ** int(right))
        return left * scale if op == "<<" else normal(sympy.floor(left / scale))
    return None


def _unwind(node: c_ast.Node) -> tuple[c_ast.Node, list[c_ast.Node]]:
    """`A[i][j]` -> (A, [i, j]); `*(p + i)` -> (p, [i]); `*p` -> (p, [0])."""
    subscripts: list[c_ast.Node] = []
    while isinstance(node, c_ast.ArrayRef):
        subscripts.insert(0, node.subscript)
        node = node.name
    if isinstance(node, c_ast.UnaryOp) and node.op == "*":
        inner = node.expr
        if isinstance(inner, c_ast.BinaryOp) and inner.op == "+":
            return inner.left, [inner.right, *subscripts]
        return inner, [c_ast.Constant("int", "0"), *subscripts]
    return node, subscripts


def _on_path(operator: str, own_top: str, other_top: str) -> str | None:
    """The operation a value passes through as one operand of `operator`: an add of a
    product can fuse with the product's multiply into one FMA (`add-fusable`)."""
    kind = _ARITHMETIC.get(operator)
    if kind in ("add", "sub"):
        return "add-fusable" if "mul" in (own_top, other_top) else "add"
    return kind


def _promote(a: ElementType | None, b: ElementType | None) -> ElementType | None:
    """C's usual arithmetic conversions, reduced to: the float side wins, the wider wins."""
    if a is None or b is None:
        return a or b
    if a.is_float != b.is_float:
        return a if a.is_float else b
    if a.is_complex != b.is_complex:
        return a if a.is_complex else b
    return a if a.width_bytes >= b.width_bytes else b


def _per_lane(flops: FlopTally, element: ElementType | None) -> FlopTally:
    """An operation on a vector element (`half2`) is one per lane."""
    lanes = element.lanes if element is not None else 1
    if lanes == 1:
        return flops
    return FlopTally(*(lanes * getattr(flops, k) for k in ("add", "sub", "mul", "div", "special")))


def _operator_flops(op: str, a: ElementType | None, b: ElementType | None) -> FlopTally:
    a_complex = a is not None and a.is_complex
    b_complex = b is not None and b.is_complex
    return operator_flops(_ARITHMETIC[op], a_complex or b_complex, a_complex and b_complex)
