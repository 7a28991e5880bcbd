"""One `@triton.jit` kernel, for one launch, lowered to the IR.

A launch is a loop nest over the grid (`pid_0`, `pid_1`, ... for `tl.program_id`), and
every block operation a loop nest over its block's axes (`ax0` the last axis, see
`tiles.py`) inside it: a load or a store is one access per lane, under its mask as a
guard; arithmetic on data is its FLOPs per lane, on every lane (masked-off lanes execute
too); the same arithmetic under the lanes' validity goes to the region's `useful` body, for
the masked-in FLOPs. `tl.dot` is a contraction of 2 FLOPs per multiply-add of its block
shape. Whatever the lowering does not understand is a located unknown, never a zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import libcst as cst
from libcst.metadata import CodeRange

from aiscan.algebra import SYMPY, as_expression
from aiscan.frontends.triton import blocks, calls, dtypes, emission, helpers, operations
from aiscan.frontends.triton.layout import with_stride_dimensions
from aiscan.frontends.triton.masks import lane_loops
from aiscan.frontends.triton.programs import ProgramGrid, mentions
from aiscan.frontends.triton.spans import span_of
from aiscan.frontends.triton.tiles import (
    Pointer,
    Tile,
    broadcast_shapes,
    reshaped,
    without_axis,
)
from aiscan.ir.nodes import (
    Access,
    ElementType,
    FlopTally,
    Function,
    Loop,
    Node,
    Region,
    Statement,
    Unknown,
    UnknownKind,
)
from aiscan.ir.symbols import loop_symbol
from aiscan.span import Span

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["KernelBinding", "KernelLowering", "Value", "lower_kernel"]

Value = Tile | Pointer


@dataclass(frozen=True, slots=True)
class KernelBinding:
    """What one launch (or its absence) fixes about a kernel's parameters."""

    label: str
    values: Mapping[str, Value]
    grid: tuple[sympy.Expr, ...] | None
    """The launch grid's extents; None without a launch (then one symbol per axis used)."""
    strides: frozenset[str]
    """Size symbols that are strides of a tensor (`stride_am`, `a.stride(0)`)."""
    notes: tuple[Unknown, ...] = ()


@dataclass
class _Frame:
    """The statements of one loop body (or the kernel's): executed and useful."""

    executed: list[Node] = field(default_factory=list)
    useful: list[Node] = field(default_factory=list)


class _Opaque(Exception):
    """An operand could not be derived; its cause is already reported."""


class KernelLowering:
    def __init__(
        self,
        kernel: cst.FunctionDef,
        positions: Mapping[cst.CSTNode, CodeRange],
        path: str,
        module: cst.Module,
        binding: KernelBinding,
        jitted: Mapping[str, cst.FunctionDef] | None = None,
    ) -> None:
        self.kernel = kernel
        self.jitted: Mapping[str, cst.FunctionDef] = jitted or {}
        """The file's `@triton.jit` functions: helpers a call inlines."""
        self.inlining: list[str] = []
        self.returns: list[helpers.Returned] = []
        self.positions = positions
        self.path = path
        self.module = module
        self.binding = binding
        self.env: dict[str, Value] = dict(binding.values)
        self.frames: list[_Frame] = [_Frame()]
        self.grid = ProgramGrid(binding.grid)
        self.notes: list[Unknown] = []
        self.overrunning: set[sympy.Expr] = set()
        self.tf32: str | None = None
        self.skipped: set[cst.CSTNode] = set()

    def note(
        self, node: cst.CSTNode, message: str, kind: UnknownKind = UnknownKind.ASSUMPTION
    ) -> None:
        """A located remark on the launch that changes no count."""
        self.notes.append(Unknown(kind, message, self.span(node)))

    # ---- positions and text --------------------------------------------------------

    def span(self, node: cst.CSTNode) -> Span:
        return span_of(self.path, self.positions[node])

    def text(self, node: cst.CSTNode) -> str:
        return " ".join(self.module.code_for_node(node).split())

    def unknown(self, kind: UnknownKind, message: str, node: cst.CSTNode) -> _Opaque:
        """Record a located unknown (as a statement of the body) and return the exception
        that stops the value's derivation."""
        span = self.span(node)
        found = Unknown(kind, message, span)
        self.frames[-1].executed.append(
            Statement(span, self.text(node), FlopTally(), unknowns=(found,))
        )
        return _Opaque()

    # ---- the kernel ------------------------------------------------------------------

    def lower(self) -> Function:
        body = self.kernel.body
        self.block(body.body if isinstance(body, cst.IndentedBlock) else ())
        (frame,) = self.frames
        grid = self.grid.loops((*frame.executed, *frame.useful))
        span = self.span(self.kernel)
        executed = emission.inside(tuple(frame.executed), grid, span)
        useful = emission.inside(tuple(frame.useful), grid, span)
        executed = with_stride_dimensions(executed, self.binding.strides)
        order = tuple(
            Loop(name, start, 1, trip, (), span) for name, start, trip in self.grid.launch_order()
        )
        region = Region(
            "nest",
            executed,
            span,
            tf32=self.tf32,
            gpu_launch=True,
            useful=useful,
            launch_order=order,
        )
        notes = (*self.binding.notes, *self.notes)
        return Function(self.binding.label, span, (region,), notes)

    def block(self, statements: Sequence[cst.BaseStatement]) -> None:
        for statement in statements:
            if statement in self.skipped:
                continue
            try:
                self._statement(statement)
            except _Opaque:
                continue

    def _statement(self, statement: cst.BaseStatement) -> None:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if small in self.skipped:
                    continue
                try:
                    self._small(small)
                except _Opaque:
                    continue
        elif isinstance(statement, cst.For):
            self._for(statement)
        else:
            kind = type(statement).__name__.lower()
            raise self.unknown(
                UnknownKind.UNSUPPORTED,
                f"`{kind}` in a Triton kernel is not analyzed: its work is not counted",
                statement,
            )

    def _small(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Assign):
            if any(isinstance(t.target, cst.Tuple) for t in small.targets):
                values = self._values(small.value)
                for target in small.targets:
                    self._bind_all(target.target, values)
                return
            value = self.value(small.value)
            for target in small.targets:
                self._bind(target.target, value)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self._bind(small.target, self.value(small.value))
        elif isinstance(small, cst.AugAssign):
            combined = self._binary(
                small.target, small.value, _AUGMENTED[type(small.operator)], small
            )
            self._bind(small.target, combined)
        elif isinstance(small, cst.Expr):
            if isinstance(small.value, cst.SimpleString | cst.ConcatenatedString):
                return  # a docstring
            self.value(small.value)
        elif isinstance(small, cst.Return) and small.value is not None and self.inlining:
            self.returns[-1] = self._values(small.value)
        elif (isinstance(small, cst.Return) and small.value is None) or isinstance(small, cst.Pass):
            return
        else:
            raise self.unknown(
                UnknownKind.UNSUPPORTED,
                f"`{self.text(small)}` in a Triton kernel is not analyzed",
                small,
            )

    def _bind(self, target: cst.BaseExpression, value: Value) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = value
            return
        raise self.unknown(
            UnknownKind.UNSUPPORTED, f"assignment to `{self.text(target)}` is not analyzed", target
        )

    def _values(self, node: cst.BaseExpression) -> helpers.Returned:
        """A tuple's values (`m, l = helper(...)`, `return m, l`), or one value."""
        if isinstance(node, cst.Tuple):
            return tuple(self.value(e.value) for e in node.elements)
        helper = self._helper(node)
        if helper is not None:
            assert isinstance(node, cst.Call)
            return helpers.inline(self, node, helper)
        return (self.value(node),)

    def _bind_all(self, target: cst.BaseExpression, values: helpers.Returned) -> None:
        if isinstance(target, cst.Tuple) and len(target.elements) == len(values):
            for element, value in zip(target.elements, values, strict=True):
                self._bind(element.value, value)
        elif len(values) == 1:
            self._bind(target, values[0])
        else:
            raise self.unknown(
                UnknownKind.UNSUPPORTED,
                f"assignment of {len(values)} values to `{self.text(target)}` is not analyzed",
                target,
            )

    def _helper(self, node: cst.BaseExpression) -> cst.FunctionDef | None:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            return self.jitted.get(node.func.value)
        return None

    # ---- loops ------------------------------------------------------------------------

    def _for(self, node: cst.For) -> None:
        call = node.iter
        name = calls.called_name(call) if isinstance(call, cst.Call) else None
        if (
            not isinstance(node.target, cst.Name)
            or not isinstance(call, cst.Call)
            or name not in ("range", "tl.range", "tl.static_range")
            or node.orelse is not None
        ):
            raise self.unknown(
                UnknownKind.UNSUPPORTED,
                f"loop `for {self.text(node.target)} in {self.text(node.iter)}` is not "
                "analyzed (expected `range`, `tl.range` or `tl.static_range`)",
                node,
            )
        if not 1 <= len(call.args) <= 3 or any(a.keyword is not None for a in call.args):
            raise self.unknown(
                UnknownKind.UNSUPPORTED,
                f"loop bounds `{self.text(call)}` are not analyzed (expected 1 to 3 positional "
                "arguments)",
                node,
            )
        bounds = [self.scalar_index(a.value) for a in call.args]
        zero, one = sympy.Integer(0), sympy.Integer(1)
        start, stop, step = (
            (zero, bounds[0], one)
            if len(bounds) == 1
            else (bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else one)
        )
        if not sympy.sympify(step).is_positive:
            raise self.unknown(
                UnknownKind.UNSUPPORTED,
                f"loop `{self.text(call)}`: only a positive step is analyzed",
                node,
            )
        trip = sympy.ceiling(sympy.sympify(stop - start) / step)
        user = node.target.value
        plain = start == 0 and step == 1
        counter = loop_symbol(user if plain else f"{user}_iter")
        if sympy.sympify(stop).free_symbols & self.grid.variables():
            # `range(0, (pid + 1) * BLOCK_M, BLOCK_N)`: its last blocks may lie past a
            # mask's bound, where they keep no lanes.
            self.overrunning.add(counter)
        self.env[user] = Tile((), index=start + step * counter)
        carried = self._carried_pointers(node)
        entry: dict[str, Pointer] = {}
        for target, increment in carried.items():
            pointer = self.env[target]
            assert isinstance(pointer, Pointer)
            entry[target] = pointer
            self.env[target] = _moved(pointer, increment, counter)
        self.frames.append(_Frame())
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        self.block(body)
        frame = self.frames.pop()
        span = self.span(node)
        var = str(counter)
        trip = as_expression(trip)
        self.frames[-1].executed.append(
            Loop(var, as_expression(0), 1, trip, tuple(frame.executed), span)
        )
        if frame.useful:
            self.frames[-1].useful.append(
                Loop(var, as_expression(0), 1, trip, tuple(frame.useful), span)
            )
        for target, increment in carried.items():
            self.env[target] = _moved(entry[target], increment, trip)
        for name_, value in list(self.env.items()):
            # Blocks carried out of the loop (accumulators): their lanes' validity cannot
            # name an iteration any more.
            if isinstance(value, Tile) and counter in sympy.sympify(value.valid).free_symbols:
                self.env[name_] = replace(value, valid=without_axis(value.valid, counter))

    def _carried_pointers(self, node: cst.For) -> dict[str, Tile | tuple[sympy.Expr, ...]]:
        """`ptrs += BLOCK_K * stride` (or `block = tl.advance(block, (0, BLOCK_K))`) in the
        loop body: the pointer at iteration t is its value on entry plus t increments;
        those statements are not lowered again."""
        carried: dict[str, Tile | tuple[sympy.Expr, ...]] = {}
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        for statement in body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if (
                    isinstance(small, cst.AugAssign)
                    and isinstance(small.operator, cst.AddAssign)
                    and isinstance(small.target, cst.Name)
                    and isinstance(self.env.get(small.target.value), Pointer)
                ):
                    try:
                        increment = self.value(small.value)
                    except _Opaque:
                        continue
                    if isinstance(increment, Tile) and increment.element is None:
                        carried[small.target.value] = increment
                        self.skipped.add(small)
                deltas = self._advance_deltas(small)
                if deltas is not None:
                    assert isinstance(small, cst.Assign)
                    target = small.targets[0].target
                    assert isinstance(target, cst.Name)
                    carried[target.value] = deltas
                    self.skipped.add(small)
        return carried

    def _advance_deltas(self, small: cst.BaseSmallStatement) -> tuple[sympy.Expr, ...] | None:
        """The deltas of `block = tl.advance(block, deltas)`, a block pointer's step."""
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
            return None
        target, call = small.targets[0].target, small.value
        if not (
            isinstance(target, cst.Name)
            and isinstance(call, cst.Call)
            and calls.called_name(call) == "tl.advance"
            and len(call.args) == 2
            and isinstance(call.args[0].value, cst.Name)
            and call.args[0].value.value == target.value
        ):
            return None
        pointer = self.env.get(target.value)
        deltas = call.args[1].value
        if not isinstance(pointer, Pointer) or pointer.block is None:
            return None
        if not isinstance(deltas, cst.Tuple | cst.List):
            return None
        try:
            return tuple(as_expression(self.scalar_index(e.value)) for e in deltas.elements)
        except _Opaque:
            return None

    # ---- expressions ------------------------------------------------------------------

    def value(self, node: cst.BaseExpression) -> Value:
        if isinstance(node, cst.Name):
            return self._name(node)
        if isinstance(node, cst.Integer):
            return Tile((), index=as_expression(int(node.value.replace("_", ""), 0)))
        if isinstance(node, cst.Float):
            return Tile((), weak=True)
        if isinstance(node, cst.BinaryOperation):
            op = _BINARY.get(type(node.operator))
            if op is None:
                raise self.unknown(
                    UnknownKind.UNSUPPORTED,
                    f"operator in `{self.text(node)}` is not analyzed",
                    node,
                )
            return self._binary(node.left, node.right, op, node)
        if isinstance(node, cst.Comparison):
            return self._comparison(node)
        if isinstance(node, cst.UnaryOperation):
            return self._unary(node)
        if isinstance(node, cst.Subscript):
            return self._subscript(node)
        if isinstance(node, cst.Call):
            return self._call(node)
        raise self.unknown(
            UnknownKind.UNSUPPORTED, f"expression `{self.text(node)}` is not analyzed", node
        )

    def _name(self, node: cst.Name) -> Value:
        found = self.env.get(node.value)
        if found is not None:
            return found
        if node.value in ("True", "False"):
            return Tile(
                (), is_bool=True, condition=sympy.true if node.value == "True" else sympy.false
            )
        raise self.unknown(
            UnknownKind.UNSUPPORTED, f"`{node.value}` has no value the analysis knows", node
        )

    def scalar_index(self, node: cst.BaseExpression) -> sympy.Expr:
        value = self.value(node)
        if isinstance(value, Tile) and value.rank == 0 and value.index is not None:
            return value.index
        raise self.unknown(
            UnknownKind.DATA_DEPENDENT_BOUND,
            f"`{self.text(node)}` is not an integer the analysis can derive",
            node,
        )

    def _binary(
        self,
        left_node: cst.BaseExpression,
        right_node: cst.BaseExpression,
        op: str,
        node: cst.CSTNode,
    ) -> Value:
        left, right = self.value(left_node), self.value(right_node)
        if isinstance(left, Pointer) or isinstance(right, Pointer):
            return self._pointer_arithmetic(left, right, op, node)
        shape = broadcast_shapes(left.shape, right.shape)
        if shape is None:
            raise self.unknown(
                UnknownKind.UNKNOWN_SHAPE,
                f"shapes {_shape_text(left)} and {_shape_text(right)} do not broadcast",
                node,
            )
        if op in ("and", "or"):
            condition = _logical(left.condition, right.condition, op)
            return Tile(
                shape, valid=sympy.And(left.valid, right.valid), is_bool=True, condition=condition
            )
        element = _element(left, right)
        if element is None and op in ("floordiv", "mod"):
            return self._divided(left, right, op, node)
        if element is None:
            return Tile(shape, index=_index_arithmetic(left.index, right.index, op))
        valid = sympy.And(left.valid, right.valid)
        if not element.is_float and op in ("add", "sub", "mul"):
            # Integer arithmetic on data (an id times a stride): no FLOP (MODEL.md).
            index = _index_arithmetic(left.index, right.index, op)
            return Tile(shape, index=index, element=element, valid=valid)
        tally = {"add": FlopTally(add=1), "sub": FlopTally(sub=1), "mul": FlopTally(mul=1)}.get(
            op, FlopTally(div=1) if op == "div" else FlopTally()
        )
        if op in ("floordiv", "mod"):
            raise self.unknown(
                UnknownKind.UNSUPPORTED,
                f"`{self.text(node)}` on floating-point blocks is not analyzed",
                node,
            )
        self.work(node, shape, tally, valid)
        return Tile(shape, element=element, valid=valid)

    def _divided(self, left: Tile, right: Tile, op: str, node: cst.CSTNode) -> Tile:
        """`pid // d`, `pid % d` on a program id: its grid loop split in two
        (`programs.py`); other integer `//` and `%` are not affine."""
        shape = broadcast_shapes(left.shape, right.shape) or left.shape
        name = None if left.index is None else self.grid.program_variable(left.index)
        if name is None or right.index is None or shape or self.inlining:
            return Tile(shape)
        if name in self.grid.splits:
            return Tile(shape, index=self.grid.divided(name, right.index, op))
        emitted = (*self.frames[0].executed, *self.frames[0].useful)
        if len(self.frames) > 1 or mentions(emitted, left.index):
            raise self.unknown(
                UnknownKind.NON_AFFINE_INDEX,
                f"`{self.text(node)}`: a program id divided after it addressed memory is not "
                "analyzed",
                node,
            )
        found = self.grid.split(name, right.index)
        if found is None:
            return Tile(shape)
        value, quotient, remainder = found
        mapping = {left.index: value}
        self.env = {
            k: v.substituted(mapping)
            if isinstance(v, Tile)
            else replace(v, offset=v.offset.substituted(mapping))
            for k, v in self.env.items()
        }
        return Tile((), index=quotient if op == "floordiv" else remainder)

    def _pointer_arithmetic(self, left: Value, right: Value, op: str, node: cst.CSTNode) -> Value:
        if isinstance(left, Pointer) and isinstance(right, Tile) and op in ("add", "sub"):
            pointer, offset, sign = left, right, 1 if op == "add" else -1
        elif isinstance(right, Pointer) and isinstance(left, Tile) and op == "add":
            pointer, offset, sign = right, left, 1
        else:
            raise self.unknown(
                UnknownKind.UNSUPPORTED,
                f"pointer arithmetic `{self.text(node)}` is not analyzed",
                node,
            )
        shape = broadcast_shapes(pointer.offset.shape, offset.shape)
        if shape is None:
            raise self.unknown(
                UnknownKind.UNKNOWN_SHAPE, f"shapes in `{self.text(node)}` do not broadcast", node
            )
        if offset.element is not None or offset.weak:
            # An address read from data (a gather): said here, and its accesses are
            # counted per lane with an unknown index, which the traffic bounds.
            self.unknown(
                UnknownKind.INDIRECT_ACCESS,
                f"`{self.text(node)}`: an offset computed from loaded data: which elements "
                "it reaches is not known",
                node,
            )
            return replace(pointer, offset=Tile(shape))
        index = _index_arithmetic(pointer.offset.index, offset.index, "add" if sign > 0 else "sub")
        return replace(pointer, offset=Tile(shape, index=index), block=None)

    def _comparison(self, node: cst.Comparison) -> Value:
        if len(node.comparisons) != 1:
            raise self.unknown(
                UnknownKind.UNSUPPORTED, f"chained comparison `{self.text(node)}`", node
            )
        (target,) = node.comparisons
        relation = _RELATIONS.get(type(target.operator))
        left, right = self.value(node.left), self.value(target.comparator)
        if relation is None or isinstance(left, Pointer) or isinstance(right, Pointer):
            raise self.unknown(UnknownKind.UNSUPPORTED, f"comparison `{self.text(node)}`", node)
        shape = broadcast_shapes(left.shape, right.shape)
        if shape is None:
            raise self.unknown(
                UnknownKind.UNKNOWN_SHAPE, f"shapes in `{self.text(node)}` do not broadcast", node
            )
        condition = None
        if left.index is not None and right.index is not None:
            condition = sympy.Rel(sympy.sympify(left.index), sympy.sympify(right.index), relation)
        return Tile(
            shape, valid=sympy.And(left.valid, right.valid), is_bool=True, condition=condition
        )

    def _unary(self, node: cst.UnaryOperation) -> Value:
        operand = self.value(node.expression)
        if isinstance(operand, Pointer):
            raise self.unknown(UnknownKind.UNSUPPORTED, f"`{self.text(node)}`", node)
        if isinstance(node.operator, cst.Minus):
            index = None if operand.index is None else -operand.index
            return replace(operand, index=index)  # a sign flip is no FLOP (MODEL.md)
        if isinstance(node.operator, cst.Plus):
            return operand
        if isinstance(node.operator, cst.BitInvert | cst.Not) and operand.is_bool:
            condition = None if operand.condition is None else sympy.Not(operand.condition)
            return replace(operand, condition=condition)
        raise self.unknown(UnknownKind.UNSUPPORTED, f"`{self.text(node)}` is not analyzed", node)

    def _subscript(self, node: cst.Subscript) -> Value:
        base = self.value(node.value)
        entries: list[str] = []
        for element in node.slice:
            item = element.slice
            if (
                isinstance(item, cst.Slice)
                and item.lower is None
                and item.upper is None
                and item.step is None
            ):
                entries.append("slice")
            elif (
                isinstance(item, cst.Index)
                and isinstance(item.value, cst.Name)
                and item.value.value == "None"
            ):
                entries.append("none")
            else:
                entries.append("other")
        tile = base.offset if isinstance(base, Pointer) else base
        shaped = reshaped(tile, entries) if "other" not in entries else None
        if shaped is None:
            raise self.unknown(
                UnknownKind.UNSUPPORTED,
                f"`{self.text(node)}`: only `[:, None]`-style broadcasting is analyzed",
                node,
            )
        return replace(base, offset=shaped) if isinstance(base, Pointer) else shaped

    # ---- calls -------------------------------------------------------------------------

    def _call(self, node: cst.Call) -> Value:
        helper = self._helper(node)
        if helper is not None:
            returned = helpers.inline(self, node, helper)
            if len(returned) != 1:
                raise self.unknown(
                    UnknownKind.UNSUPPORTED,
                    f"`{self.text(node)}` returns {len(returned)} values where one is used",
                    node,
                )
            return returned[0]
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "to":
            return calls.cast(self, node)
        name = calls.called_name(node)
        if name == "float":
            return Tile((), weak=True)  # `float("inf")`
        if name in ("min", "max") and len(node.args) == 2:
            return calls.elementwise(self, node, name)
        short = name.rsplit(".", 1)[-1] if name and name.startswith(("tl.", "triton.")) else None
        handler = calls.HANDLERS.get(short or "")
        if short is not None and handler is not None:
            return handler(self, node)
        if short in operations.SPECIALS or short in operations.FREE_ELEMENTWISE or short == "fma":
            return calls.elementwise(self, node, short)
        if short is not None and short in operations.REDUCTIONS:
            return calls.reduction(self, node, short)
        if short in operations.TRANSPARENT:
            return self.value(node.args[0].value)
        raise self.unknown(
            UnknownKind.UNKNOWN_CALL,
            f"call to `{name or self.text(node.func)}` is not analyzed: its work and traffic are "
            "not counted",
            node,
        )

    def argument(self, node: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                return arg.value
        positional = [a.value for a in node.args if a.keyword is None]
        return positional[position] if position < len(positional) else None

    def required(self, node: cst.Call, position: int, keyword: str) -> cst.BaseExpression:
        found = self.argument(node, position, keyword)
        if found is None:
            raise self.unknown(
                UnknownKind.UNSUPPORTED, f"`{self.text(node)}`: no `{keyword}`", node
            )
        return found

    def dtype(self, node: cst.BaseExpression | None) -> ElementType | None:
        if isinstance(node, cst.Attribute):
            return dtypes.dtype_named(node.attr.value)
        if isinstance(node, cst.Name):
            return dtypes.dtype_named(node.value)
        return None

    def access(
        self,
        node: cst.Call,
        pointer: Pointer,
        mask: Tile | None,
        *,
        is_write: bool,
        atomic: FlopTally | None = None,
    ) -> sympy.Basic:
        """A load or a store: one access per lane under its mask; returns the lanes read.
        `atomic`: a read-modify-write (`tl.atomic_add`), a read and a write per lane and
        the FLOPs of its update on the masked-in lanes only (executed and useful)."""
        shape = pointer.offset.shape
        if mask is not None:
            wider = broadcast_shapes(shape, mask.shape)
            shape = wider if wider is not None else shape
        span = self.span(node)
        text = self.text(node)
        index = pointer.offset.index
        unknowns: tuple[Unknown, ...] = ()
        if index is None:
            unknowns = (
                Unknown(UnknownKind.NON_AFFINE_INDEX, f"`{text}`: offset is not affine", span),
            )
        access = Access(
            pointer.array,
            None if index is None else (as_expression(sympy.expand(index)),),
            pointer.element,
            is_write,
            span,
            text,
        )
        accesses: tuple[Access, ...] = (access,)
        if atomic is not None:
            accesses = (access, replace(access, is_write=True))
        flops = atomic or FlopTally()
        condition = sympy.true if mask is None else mask.condition
        if condition is None:
            # A mask read from data: a named fraction of the lanes.
            statement = Statement(span, text, flops, accesses=accesses, unknowns=unknowns)
            masked = emission.masked(statement, None, span, text)
            nest = emission.element_loops(masked, shape, span)
            self.frames[-1].executed.append(nest)
            if not flops.is_zero():
                self.frames[-1].useful.append(nest)
            # Lanes computed from these: useful where the data says, which no count knows.
            return sympy.Symbol(f"mask_L{span.line}")
        loops, substitution, rest = lane_loops(shape, condition, frozenset(self.overrunning))
        if substitution and access.index is not None:
            moved = tuple(
                as_expression(sympy.expand(sympy.sympify(i).subs(substitution, simultaneous=True)))
                for i in access.index
            )
            accesses = tuple(replace(a, index=moved) for a in accesses)
        statement = Statement(span, text, flops, accesses=accesses, unknowns=unknowns)
        nest = emission.in_lanes(emission.masked(statement, rest, span, text), loops, span)
        self.frames[-1].executed.append(nest)
        if not flops.is_zero():
            self.frames[-1].useful.append(nest)
        return condition

    def work(
        self,
        node: cst.CSTNode,
        shape: tuple[sympy.Expr, ...],
        tally: FlopTally,
        valid: sympy.Basic,
        *,
        specials: tuple[str, ...] = (),
        contraction: bool = False,
        loops: Sequence[tuple[str, sympy.Expr, int]] = (),
        reduce: str | None = None,
    ) -> None:
        """Arithmetic on every lane of `shape` (executed), and on its valid lanes (useful).
        `loops` are extra (name, trip, start) loops inside the block's, for contractions;
        `reduce` names the axis of `shape` a reduction combines: e - 1 combines of e lanes."""
        if tally.is_zero():
            return
        span = self.span(node)
        statement = Statement(
            span, self.text(node), tally, special_calls=specials, contraction=contraction
        )
        inner: Node = statement
        for name, trip, start in reversed(loops):
            inner = Loop(name, as_expression(start), 1, as_expression(trip), (inner,), span)
        lanes, _, _ = lane_loops(shape, sympy.true)
        self.frames[-1].executed.append(
            emission.in_lanes(inner, emission.combines(lanes, reduce), span)
        )
        lanes, substitution, rest = lane_loops(shape, valid, frozenset(self.overrunning))
        lanes = emission.combines(lanes, reduce)
        guarded = emission.masked(statement, rest, span, statement.text, useful=True)
        for name, trip, start in reversed(loops):
            bounds = sympy.sympify(trip).subs(substitution), sympy.sympify(start).subs(substitution)
            guarded = Loop(
                name, as_expression(bounds[1]), 1, as_expression(bounds[0]), (guarded,), span
            )
        self.frames[-1].useful.append(emission.in_lanes(guarded, lanes, span))


_BINARY: dict[type, str] = {
    cst.Add: "add",
    cst.Subtract: "sub",
    cst.Multiply: "mul",
    cst.Divide: "div",
    cst.FloorDivide: "floordiv",
    cst.Modulo: "mod",
    cst.BitAnd: "and",
    cst.BitOr: "or",
}
_AUGMENTED: dict[type, str] = {
    cst.AddAssign: "add",
    cst.SubtractAssign: "sub",
    cst.MultiplyAssign: "mul",
    cst.DivideAssign: "div",
}
_RELATIONS: dict[type, str] = {
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
    cst.Equal: "==",
    cst.NotEqual: "!=",
}


def _element(left: Tile, right: Tile) -> ElementType | None:
    if left.element is None and right.element is None:
        return dtypes.FLOAT32 if left.weak or right.weak else None
    if left.element is None or right.element is None:
        return left.element or right.element
    return dtypes.wider(left.element, right.element)


def _index_arithmetic(
    left: sympy.Expr | None, right: sympy.Expr | None, op: str
) -> sympy.Expr | None:
    if left is None or right is None:
        return None
    if op == "add":
        return left + right
    if op == "sub":
        return left - right
    if op == "mul":
        return left * right
    return None  # `//`, `%`, `/`: not affine


def _logical(left: sympy.Basic | None, right: sympy.Basic | None, op: str) -> sympy.Basic | None:
    if left is None or right is None:
        return None
    return sympy.And(left, right) if op == "and" else sympy.Or(left, right)


def _moved(
    pointer: Pointer, increment: Tile | tuple[sympy.Expr, ...], times: sympy.Expr
) -> Pointer:
    if isinstance(increment, tuple):
        return blocks.advanced(pointer, increment, times)
    index = None
    if pointer.offset.index is not None and increment.index is not None:
        index = pointer.offset.index + times * increment.index
    shape = broadcast_shapes(pointer.offset.shape, increment.shape) or pointer.offset.shape
    return replace(pointer, offset=Tile(shape, index=index))


def _shape_text(tile: Tile) -> str:
    return "(" + ", ".join(str(e) for e in tile.shape) + ("," if tile.rank == 1 else "") + ")"


def lower_kernel(
    kernel: cst.FunctionDef,
    positions: Mapping[cst.CSTNode, CodeRange],
    path: str,
    module: cst.Module,
    binding: KernelBinding,
    jitted: Mapping[str, cst.FunctionDef] | None = None,
) -> Function:
    """The IR function of one launch of `kernel` (or of the kernel with symbolic launch);
    calls to the other `jitted` functions are inlined."""
    return KernelLowering(kernel, positions, path, module, binding, jitted).lower()
