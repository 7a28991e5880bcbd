"""Lower one assignment of an array-expression tree to IR loops: the fused view.

The target's elements are visited by one loop nest and each element is computed in
registers, as numba, JAX or numexpr would run it. Two things keep the count equal to what
NumPy computes: a reduction or contraction runs its own loops into a register, and any
sub-expression that is broadcast (it depends on fewer loop variables than its consumer) is
computed once, outside the loops it does not depend on. When that needs the loops in another
order it is computed into a named array first (`_f1`, ...), which the counts then include.
Reductions peel their first element, so `n` elements cost exactly `n - 1` combining operations.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import sympy

from aiscan.frontends.python.symbols import is_size_symbol, loop_symbol
from aiscan.frontends.python.values import (
    Apply,
    ArrayValue,
    Contract,
    Leaf,
    Reduce,
    Scalar,
    Select,
    Shape,
    coordinate,
    substituted,
)
from aiscan.ir.arithmetic import operator_flops as arithmetic_flops
from aiscan.ir.nodes import Access, Branch, FlopTally, Loop, Node, Statement, Unknown, UnknownKind
from aiscan.span import Span

__all__ = [
    "Namer",
    "NestBuilder",
    "Target",
    "array_named",
    "broadcast_coordinates",
    "operator_flops",
]

_COMBINE = {"sum": "add", "prod": "mul", "max": "", "min": ""}


def _combined_flops(combine: str) -> FlopTally:
    """One combine of a reduction: `add`, `mul`, or `complex_add` (two real adds)."""
    if combine == "complex_add":
        return FlopTally(add=2)
    return FlopTally(**{combine: 1})


class Namer:
    """Fresh names for one function: loop variables, registers, temporaries."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def fresh(self, prefix: str) -> str:
        count = self._counts.get(prefix, 0) + 1
        self._counts[prefix] = count
        return f"{prefix}{count}"


@dataclass(frozen=True, slots=True)
class Target:
    """Where a statement's value goes: array elements (`leaf`) or a register (`leaf=None`)."""

    leaf: Leaf | None
    compound: str = ""
    """`add`, `sub`, `mul` or `div` for `+=` and friends."""

    @property
    def shape(self) -> Shape:
        return self.leaf.shape if self.leaf is not None else ()


@dataclass(slots=True)
class _Evaluation:
    flops: FlopTally = field(default_factory=FlopTally)
    accesses: list[Access] = field(default_factory=list)
    special_calls: list[str] = field(default_factory=list)

    def absorb(self, other: _Evaluation) -> None:
        self.flops = self.flops + other.flops
        self.accesses += other.accesses
        self.special_calls += other.special_calls


@dataclass(frozen=True, slots=True)
class _Hoist:
    """Nodes computing a register, to be placed inside the loops of `needed` only."""

    needed: frozenset[sympy.Symbol]
    nodes: tuple[Node, ...]


class ShapeMismatch(Exception):
    """A value whose shape cannot broadcast to where it is stored (NumPy would raise)."""


def broadcast_coordinates(
    coords: Sequence[sympy.Expr], out_shape: Shape, shape: Shape
) -> tuple[sympy.Expr, ...]:
    """The coordinates of an operand of `shape` broadcast to `out_shape` (NumPy rules)."""
    offset = len(out_shape) - len(shape)
    if offset < 0 or len(coords) < len(out_shape):
        raise ShapeMismatch(
            f"a value of rank {len(shape)} cannot be stored into rank {len(out_shape)}"
        )
    if len(shape) == len(out_shape) and all(map(operator.is_, shape, out_shape)):
        return tuple(coords[: len(shape)])  # no dimension is broadcast: the common case
    one = sympy.S.One  # extents are canonical sympy expressions: 1 is this singleton
    return tuple(
        sympy.S.Zero if extent is one and out_shape[offset + d] is not one else coords[offset + d]
        for d, extent in enumerate(shape)
    )


def array_named(name: str, value: ArrayValue, span: Span) -> Leaf:
    """A new whole array `name` to hold `value`, read at the standard coordinates."""
    coordinates = tuple(coordinate(d) for d in range(len(value.shape)))
    return Leaf(name, value.element, value.shape, coordinates, name, span)


def operator_flops(op: str, element_complex: bool, both_complex: bool) -> FlopTally:
    """One operator of a NumPy expression: arithmetic by the shared rules, `special` for
    math functions, anything else (comparisons, conversions) free."""
    if op == "special":
        return FlopTally(special=1)
    if op not in ("add", "sub", "mul", "div"):
        return FlopTally()
    return arithmetic_flops(op, element_complex, both_complex)


class NestBuilder:
    """Builds the fused loop nest of one statement; `namer` is shared by the function."""

    def __init__(self, namer: Namer, span: Span) -> None:
        self.namer = namer
        self.span = span
        self.before: list[Node] = []

    def assign(self, target: Target, value: ArrayValue, text: str) -> list[Node]:
        """The nodes that compute `value` into `target` (loops over the target's shape)."""
        if isinstance(value, Select):
            assert target.leaf is not None and not target.compound, "the lowering checks"
            return self.gather(target.leaf, value, text)
        shape = target.shape
        variables = [loop_symbol(self.namer.fresh("_i")) for _ in shape]
        order = tuple(variables)
        coords = broadcast_coordinates(variables, shape, value.shape)
        evaluation, hoists = self._operand(value, coords, frozenset(variables), order)
        if target.leaf is not None and target.compound:
            evaluation.absorb(self._read(target.leaf, variables))
        if target.compound:
            evaluation.flops = evaluation.flops + operator_flops(
                target.compound, value.element.is_complex, value.element.is_complex
            )
        if target.leaf is not None:
            write = self._read(target.leaf, variables).accesses[0]
            evaluation.accesses.append(_as_write(write))
        statement = self._statement(text, evaluation)
        return self._nest(variables, shape, hoists, statement)

    def masked_assign(
        self, target: Leaf, mask: ArrayValue, value: ArrayValue, text: str, branch: Branch
    ) -> list[Node]:
        """`A[mask] = value`: per element of `target`, the mask is evaluated (its reads),
        and the store (with `value`'s work) runs under `branch`'s fraction. `mask` covers
        the leading axes of `target`; `value` broadcasts to `target`."""
        shape = target.shape
        variables = [loop_symbol(self.namer.fresh("_i")) for _ in shape]
        order = tuple(variables)
        needs = frozenset(variables)
        mask_coords = tuple(variables[: len(mask.shape)])
        condition, mask_hoists = self._operand(mask, mask_coords, needs, order)
        coords = broadcast_coordinates(variables, shape, value.shape)
        evaluation, hoists = self._operand(value, coords, needs, order)
        write = self._read(target, variables).accesses[0]
        evaluation.accesses.append(_as_write(write))
        guarded = replace(
            branch,
            condition=self._statement(branch.condition.text, condition),
            then_body=(self._statement(text, evaluation),),
        )
        return self._nest(variables, shape, [*mask_hoists, *hoists], guarded)

    def gather(self, target: Leaf, value: Select, text: str) -> list[Node]:
        """`y = x[mask]` (or `y = x[mask] * 2.0`): the selected elements computed as in
        `selected`, then the `p * N` of them written, packed, into `target` (a new array
        of that many elements: its writes are counted exactly, whatever the view)."""
        nodes = self.selected(value, text)
        variables = [loop_symbol(self.namer.fresh("_i")) for _ in target.shape]
        write = _as_write(self._read(target, variables).accesses[0])
        packed = self._statement(
            f"{target.array} = packed {value.text}", _Evaluation(accesses=[write])
        )
        return [*nodes, *_loops(variables, target.shape, [packed], self.span)]

    def scatter(self, target: Leaf, mask: Leaf, value: ArrayValue, branch: Branch) -> list[Node]:
        """NumPy's masked store `target[mask] = value` of computed values (eager view):
        per element the mask is read, and the element stored under `branch`'s fraction;
        a packed array `value` of the `p * N` selected values is read once each."""
        variables = [loop_symbol(self.namer.fresh("_i")) for _ in target.shape]
        condition = self._read(mask, variables[: len(mask.shape)])
        write = _as_write(self._read(target, variables).accesses[0])
        stored = replace(
            branch,
            condition=self._statement(branch.condition.text, condition),
            then_body=(self._statement(branch.condition.text, _Evaluation(accesses=[write])),),
        )
        nodes = _loops(variables, target.shape, [stored], self.span)
        if isinstance(value, Leaf) and value.shape:
            packed = [loop_symbol(self.namer.fresh("_i")) for _ in value.shape]
            read = self._statement(f"packed {value.text}", self._read(value, packed))
            nodes += _loops(packed, value.shape, [read], self.span)
        return nodes

    def selected(self, value: Select, text: str) -> list[Node]:
        """Loops over the mask's domain (and the axes it leaves): the mask evaluated at
        every element (its reads; comparisons cost nothing), and the selected element
        with the selection's elementwise work under a branch taken for the named fraction
        of the elements (as `masked_assign` does for a store)."""
        inner = NestBuilder(self.namer, self.span)
        shape = value.operand.shape
        variables = [loop_symbol(self.namer.fresh("_i")) for _ in shape]
        order = tuple(variables)
        needs = frozenset(variables)
        mask_coords = tuple(variables[: len(value.mask.shape)])
        condition, mask_hoists = inner._operand(value.mask, mask_coords, needs, order)
        element, hoists = inner._operand(value.operand, order, needs, order)
        branch = Branch(
            self.span,
            inner._statement(value.mask_text, condition),
            value.fraction,
            (inner._statement(text, element),),
            (),
            (value.unknown,),
        )
        return inner._nest(variables, shape, [*mask_hoists, *hoists], branch)

    def _nest(
        self,
        variables: Sequence[sympy.Symbol],
        shape: Shape,
        hoists: Sequence[_Hoist],
        innermost: Node,
    ) -> list[Node]:
        """Loops over `shape` around `innermost`, each hoist placed in the loops it needs."""
        levels: list[list[Node]] = [[] for _ in range(len(variables) + 1)]
        for hoist in hoists:
            levels[len(hoist.needed)].extend(hoist.nodes)
        levels[-1].append(innermost)
        body: list[Node] = levels[-1]
        for depth in range(len(variables) - 1, -1, -1):
            loop = Loop(
                variables[depth].name, sympy.Integer(0), 1, shape[depth], tuple(body), self.span
            )
            body = [*levels[depth], loop]
        return [*self.before, *(n for n in body if _has_work(n))]

    # ---- operands -----------------------------------------------------------------------

    def _operand(
        self,
        value: ArrayValue,
        coords: tuple[sympy.Expr, ...],
        consumer_needs: frozenset[sympy.Symbol],
        order: tuple[sympy.Symbol, ...],
    ) -> tuple[_Evaluation, list[_Hoist]]:
        if isinstance(value, Select):
            # Only a whole value or a full reduction can be a selection (the lowering
            # checks); anywhere else its data-dependent length cannot be lined up.
            raise ShapeMismatch(f"the selection `{value.text}` has a data-dependent length")
        needed = _needed(coords)
        hoist = isinstance(value, (Reduce, Contract)) or (
            isinstance(value, Apply) and _computes(value) and needed < consumer_needs
        )
        if not hoist:
            return self._inline(value, coords, order)
        if needed == frozenset(order[: len(needed)]):
            nodes, hoists = self._register(value, coords, order)
            return _Evaluation(), [*hoists, _Hoist(needed, tuple(nodes))]
        return self._materialize(value, coords, order)

    def _materialize(
        self, value: ArrayValue, coords: tuple[sympy.Expr, ...], order: tuple[sympy.Symbol, ...]
    ) -> tuple[_Evaluation, list[_Hoist]]:
        """Compute `value` into a new array first; this statement then reads it."""
        name = self.namer.fresh("_f")
        leaf = array_named(name, value, self.span)
        inner = NestBuilder(self.namer, self.span)
        self.before += inner.assign(Target(leaf), value, f"{name} = {_text(value)}")
        return self._inline(leaf, coords, order)

    def _inline(
        self, value: ArrayValue, coords: tuple[sympy.Expr, ...], order: tuple[sympy.Symbol, ...]
    ) -> tuple[_Evaluation, list[_Hoist]]:
        if isinstance(value, Leaf):
            return self._read(value, coords), []
        if isinstance(value, Scalar):
            return _Evaluation(), []
        assert isinstance(value, Apply), "reductions and contractions are always hoisted"
        result = _Evaluation()
        hoists: list[_Hoist] = []
        needs = _needed(coords)
        for operand in value.operands:
            operand_coords = broadcast_coordinates(coords, value.shape, operand.shape)
            evaluation, more = self._operand(operand, operand_coords, needs, order)
            result.absorb(evaluation)
            hoists += more
        if _computes(value):
            complex_operands = [o.element.is_complex for o in value.operands]
            one = operator_flops(value.op, value.element.is_complex, all(complex_operands))
            for _ in range(value.repeat):
                result.flops = result.flops + one
            if value.op == "special":
                result.special_calls.append(value.name)
        return result, hoists

    def _read(self, leaf: Leaf, coords: Sequence[sympy.Expr]) -> _Evaluation:
        bindings = {coordinate(d): c for d, c in enumerate(coords)}
        index = tuple(substituted(e, bindings) for e in leaf.index)
        access = Access(leaf.array, index, leaf.element, False, self.span, leaf.text)
        return _Evaluation(accesses=[access])

    # ---- registers ----------------------------------------------------------------------

    def _register(
        self, value: ArrayValue, coords: tuple[sympy.Expr, ...], order: tuple[sympy.Symbol, ...]
    ) -> tuple[list[Node], list[_Hoist]]:
        """Nodes computing one element of `value` (at `coords`) into a register."""
        register = self.namer.fresh("_r")
        if isinstance(value, Apply):
            evaluation, hoists = self._inline(value, coords, order)
            return [self._statement(f"{register} = {value.text}", evaluation)], hoists
        if isinstance(value, Reduce):
            return self._reduce(value, coords, order, register)
        assert isinstance(value, Contract)
        return self._contract(value, coords, order, register)

    def _reduce(
        self,
        value: Reduce,
        coords: tuple[sympy.Expr, ...],
        order: tuple[sympy.Symbol, ...],
        register: str,
    ) -> tuple[list[Node], list[_Hoist]]:
        if isinstance(value.operand, Select):
            return self._reduce_selection(value, value.operand, register), []
        operand_shape = value.operand.shape
        kept = iter(coords) if not value.keepdims else None
        operand_coords: list[sympy.Expr] = []
        axes: list[tuple[sympy.Symbol, sympy.Expr]] = []
        for d, extent in enumerate(operand_shape):
            if d in value.axes:
                var = loop_symbol(self.namer.fresh("_k"))
                axes.append((var, extent))
                operand_coords.append(var)
            else:
                operand_coords.append(next(kept) if kept is not None else coords[d])
        evaluation, hoists = self._operand(
            value.operand,
            tuple(operand_coords),
            _needed(operand_coords) | {v for v, _ in axes},
            order,
        )
        text = f"{register} = {value.text}"
        # Integer sums and products are index arithmetic, not FLOPs (MODEL.md).
        combine = _COMBINE[value.kind] if value.element.is_float else ""
        return self._peel(evaluation, axes, combine, text), hoists

    def _reduce_selection(self, value: Reduce, selection: Select, register: str) -> list[Node]:
        """A full reduction of a selection: its elements read (and computed) under the
        mask's branch, then `k - 1` combines of its `k = p * N` elements, the count of
        any reduction of `k` elements (exact given k >= 1; an empty selection combines
        nothing)."""
        text = f"{register} = {value.text}"
        nodes = self.selected(selection, text)
        combine = _COMBINE[value.kind] if value.element.is_float else ""  # ints: no FLOPs
        axes = [(loop_symbol(self.namer.fresh("_k")), e) for e in selection.shape]
        return nodes + self._unpeeled(_Evaluation(), axes, combine, text)

    def _contract(
        self,
        value: Contract,
        coords: tuple[sympy.Expr, ...],
        order: tuple[sympy.Symbol, ...],
        register: str,
    ) -> tuple[list[Node], list[_Hoist]]:
        bound = dict(zip(value.out, coords, strict=True))
        axes: list[tuple[sympy.Symbol, sympy.Expr]] = []
        for label in dict.fromkeys("".join(value.labels)):
            if label not in bound:
                var = loop_symbol(self.namer.fresh("_k"))
                bound[label] = var
                axes.append((var, value.extent(label)))
        evaluation = _Evaluation()
        hoists: list[_Hoist] = []
        all_needs = _needed(tuple(bound.values())) | {v for v, _ in axes}
        for operand, labels in zip(value.operands, value.labels, strict=True):
            operand_coords = tuple(bound[label] for label in labels)
            part, more = self._operand(operand, operand_coords, all_needs, order)
            evaluation.absorb(part)
            hoists += more
        floating = value.element.is_float  # an integer matmul does no FLOPs (MODEL.md)
        for _ in value.operands[1:] if floating else ():
            evaluation.flops = evaluation.flops + operator_flops(
                "mul", value.element.is_complex, value.element.is_complex
            )
        text = f"{register} = {value.text}"
        # A complex product's sums are complex adds (2 real each), as its multiplies are 6.
        combine = ("complex_add" if value.element.is_complex else "add") if floating else ""
        return self._peel(evaluation, axes, combine, text), hoists

    def _peel(
        self,
        element: _Evaluation,
        axes: list[tuple[sympy.Symbol, sympy.Expr]],
        combine: str,
        text: str,
    ) -> list[Node]:
        """`acc = first element; acc op= every other element`: exactly count - 1 combines."""
        if any(_packed(extent) for _, extent in axes):
            return self._unpeeled(element, axes, combine, text)
        combined = _Evaluation(element.flops, list(element.accesses), list(element.special_calls))
        if combine:
            combined.flops = combined.flops + _combined_flops(combine)
        peeled = self._peeled(element, combined, axes, {}, text)
        # An extent that follows an enclosing loop (`L[i, :i] @ x[:i]`) is empty at some of
        # its iterations: there the peel runs nothing, so it is guarded by `extent >= 1`
        # (counted exactly by the branch analysis). Extents in sizes alone are assumed in
        # range, as slices are.
        guards = [
            sympy.Ge(extent, 1)
            for _, extent in axes
            if any(not is_size_symbol(s) for s in extent.free_symbols)
        ]
        if not guards:
            return peeled
        condition = Statement(self.span, f"if {text} is not empty", FlopTally(), (), ())
        guard = sympy.And(*guards) if len(guards) > 1 else guards[0]
        # Said only where the integer sets cannot count the guard (the analysis drops it
        # where they can): then an empty reduction is counted as -1 combines.
        unknown = Unknown(
            UnknownKind.BRANCH_FRACTION,
            f"`{text}` is empty at some iterations and the integer sets could not count "
            "which: counted as if never empty (-1 combines each time it is)",
            self.span,
        )
        peel = Branch(self.span, condition, sympy.Integer(1), tuple(peeled), (), (unknown,), guard)
        return [peel]

    def _unpeeled(
        self,
        element: _Evaluation,
        axes: list[tuple[sympy.Symbol, sympy.Expr]],
        combine: str,
        text: str,
    ) -> list[Node]:
        """A reduction over a packed selection's `p * N` elements: every element read
        (and computed) by one loop, then its `count - 1` combines on their own. The same
        counts as the peel, with one footprint per array (the first element of a packed
        array is not a box the footprint union can tell apart from the rest)."""
        nodes = self._combined(element, axes, {}, text)
        if combine:
            count = sympy.expand(sympy.Mul(*(extent for _, extent in axes)) - 1)
            step = self._statement(text, _Evaluation(_combined_flops(combine)))
            var = self.namer.fresh("_k")
            nodes.append(Loop(var, sympy.Integer(0), 1, count, (step,), self.span))
        return nodes

    def _peeled(
        self,
        element: _Evaluation,
        combined: _Evaluation,
        rest: list[tuple[sympy.Symbol, sympy.Expr]],
        fixed: dict[sympy.Symbol, sympy.Expr],
        text: str,
    ) -> list[Node]:
        """The first element along each of `rest` on its own, then the others combined."""
        if not rest:
            return [self._fixed_statement(text, element, fixed)]
        (var, extent), *inner = rest
        first = self._peeled(element, combined, inner, {**fixed, var: sympy.Integer(0)}, text)
        others = Loop(
            str(var),
            sympy.Integer(1),
            1,
            sympy.expand(extent - 1),
            tuple(self._combined(combined, inner, fixed, text)),
            self.span,
        )
        return [*first, others]

    def _combined(
        self,
        combined: _Evaluation,
        rest: list[tuple[sympy.Symbol, sympy.Expr]],
        fixed: dict[sympy.Symbol, sympy.Expr],
        text: str,
    ) -> list[Node]:
        """Every element along all of `rest`, each combined into the register."""
        if not rest:
            return [self._fixed_statement(text, combined, fixed)]
        (var, extent), *inner = rest
        body = tuple(self._combined(combined, inner, fixed, text))
        return [Loop(str(var), sympy.Integer(0), 1, extent, body, self.span)]

    def _fixed_statement(
        self, text: str, evaluation: _Evaluation, fixed: dict[sympy.Symbol, sympy.Expr]
    ) -> Statement:
        """`evaluation`'s statement with the peeled loop variables fixed (to 0)."""
        accesses = [
            Access(
                a.array,
                None if a.index is None else tuple(substituted(e, fixed) for e in a.index),
                a.element,
                a.is_write,
                a.span,
                a.text,
            )
            for a in evaluation.accesses
        ]
        return self._statement(
            text, _Evaluation(evaluation.flops, accesses, evaluation.special_calls)
        )

    def _statement(self, text: str, evaluation: _Evaluation) -> Statement:
        return Statement(
            self.span,
            text,
            evaluation.flops,
            tuple(evaluation.accesses),
            tuple(evaluation.special_calls),
        )


def _loops(
    variables: Sequence[sympy.Symbol], shape: Shape, body: list[Node], span: Span
) -> list[Node]:
    """Plain loops over `shape` around `body`, outermost first."""
    for var, extent in reversed(list(zip(variables, shape, strict=True))):
        body = [Loop(var.name, sympy.Integer(0), 1, extent, tuple(body), span)]
    return body


def _packed(extent: sympy.Expr) -> bool:
    """Does `extent` count a packed selection (`p_L4*n`: a fraction, not an integer)?"""
    return any(s.is_integer is not True for s in extent.free_symbols)


def _as_write(access: Access) -> Access:
    return Access(access.array, access.index, access.element, True, access.span, access.text)


def _needed(coords: Sequence[sympy.Expr]) -> frozenset[sympy.Symbol]:
    """The builder's loop variables an element at `coords` depends on."""
    return frozenset(
        s
        for c in coords
        for s in (c if isinstance(c, sympy.Basic) else sympy.sympify(c)).free_symbols
    )


def _computes(value: Apply) -> bool:
    """Does evaluating `value` cost FLOPs or call a special function (not a free op)?"""
    return value.op in ("add", "sub", "mul", "div", "special") and value.element.is_float


def _text(value: ArrayValue) -> str:
    return value.text


def _has_work(node: Node) -> bool:
    if isinstance(node, Statement):
        return bool(node.accesses) or not node.flops.is_zero() or bool(node.unknowns)
    return True
