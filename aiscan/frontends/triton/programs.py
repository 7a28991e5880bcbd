"""The launch grid as loops, and `//` and `%` on program ids (grouped orderings).

A grid axis is a loop over its programs. `pid // d` and `pid % d` (d free of that axis)
split the axis's loop in two, `pid = q*d + r`: q over `cdiv(P, d)`, r over the
`Min(d, P - q*d)` programs of q's group (just `d` where d divides P), which together
visit every program once, so the counts stay exact. The L2-friendly grouped ordering
(`group_id = pid // (GROUP_M*num_pid_n)`, `pid_m = first_pid_m + (pid % group) %
group_size_m`, `pid_n = (pid % group) // group_size_m`) splits twice; its row of
programs, `q*GROUP_M + t` for t below `Min(GROUP_M, num_pid_m - q*GROUP_M)`, is the
masked-lane pattern of `masks.py` and becomes one loop over `num_pid_m` rows when nothing
else reads the group number. Every count is order-free (a sum over programs, or a
union of what they touch), so only the set of programs matters, not their order; the
order the GPU starts them in (`launch_order`) is kept apart for the L2 model.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, as_expression
from aiscan.ir.nodes import Branch, Loop, Node, Statement
from aiscan.ir.symbols import loop_symbol, size_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["ProgramGrid", "mentions"]


@dataclass(frozen=True, slots=True)
class _Split:
    divisor: sympy.Expr
    quotient: str
    remainder: str
    value: sympy.Expr
    """The split variable in the new ones: `q*divisor + r`."""
    remainder_value: sympy.Expr


@dataclass(frozen=True, slots=True)
class _Row:
    """A remainder `t` that runs as `u - q*step`, `u` from `q*step` over `trip` (the
    masked-lane pattern), u replacing q and t when nothing else reads q."""

    group: str
    step: sympy.Expr
    extent: sympy.Expr
    """The total q and t cover: u runs over `[0, extent)`."""
    merged: str


@dataclass
class ProgramGrid:
    """The grid's loops, as `tl.program_id` and `//`, `%` on program ids shape them."""

    extents: tuple[sympy.Expr, ...] | None
    """The launch's grid; None: a symbol per axis (`grid0`)."""
    axes: set[int] = field(default_factory=set)
    trips: dict[str, sympy.Expr] = field(default_factory=dict)
    splits: dict[str, _Split] = field(default_factory=dict)
    rows: dict[str, _Row] = field(default_factory=dict)

    def program_id(self, axis: int) -> sympy.Expr:
        self.axes.add(axis)
        name = f"pid_{axis}"
        if name not in self.trips:
            self.trips[name] = as_expression(self._extent(axis))
        return loop_symbol(name)

    def _extent(self, axis: int) -> sympy.Expr:
        if self.extents is not None and axis < len(self.extents):
            return self.extents[axis]
        return size_symbol(f"grid{axis}")

    def variables(self) -> set[sympy.Expr]:
        """Every loop variable the grid's programs take."""
        names = set(self.trips) | {row.merged for row in self.rows.values()}
        return {loop_symbol(name) for name in names}

    def program_variable(self, value: sympy.Expr) -> str | None:
        """The grid variable `value` is (or was, before its split)."""
        name = str(value)
        if name in self.trips and loop_symbol(name) == value:
            return name
        for name, split in self.splits.items():
            if sympy.expand(sympy.sympify(value) - split.value) == 0:
                return name
        return None

    def divided(self, name: str, divisor: sympy.Expr, op: str) -> sympy.Expr | None:
        """`//` or `%` of a variable already split by `divisor`; None for another."""
        split = self.splits.get(name)
        if split is None or sympy.simplify(sympy.sympify(split.divisor) - divisor) != 0:
            return None
        return loop_symbol(split.quotient) if op == "floordiv" else split.remainder_value

    def split(
        self, name: str, divisor: sympy.Expr
    ) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr] | None:
        """Split grid variable `name` by `divisor`: (its value in the new variables, the
        quotient, the remainder); None when the divisor depends on it or on a variable
        inside it."""
        inner = self._inner(name)
        if any(str(s) in inner for s in sympy.sympify(divisor).free_symbols):
            return None
        total = self.trips[name]
        quotient_name, remainder_name = f"{name}q", f"{name}r"
        exact = exact_quotient(total, divisor)
        q = loop_symbol(quotient_name)
        if exact is not None:
            q_trip, r_trip = exact, divisor
        else:
            q_trip = sympy.ceiling(sympy.sympify(total) / divisor)
            r_trip = factored(sympy.Min(sympy.sympify(divisor), sympy.expand(total - q * divisor)))
        self.trips[quotient_name] = as_expression(q_trip)
        row = self._row(remainder_name, r_trip)
        remainder: sympy.Expr = loop_symbol(remainder_name)
        if row is not None:
            self.rows[remainder_name] = row
            remainder = loop_symbol(row.merged) - row.step * loop_symbol(row.group)
        self.trips[remainder_name] = as_expression(r_trip)
        value = as_expression(sympy.expand(q * divisor + remainder))
        mapping = {loop_symbol(name): value}
        for earlier, split in self.splits.items():
            self.splits[earlier] = replace(
                split,
                value=_substituted(split.value, mapping),
                remainder_value=_substituted(split.remainder_value, mapping),
            )
        self.splits[name] = _Split(
            as_expression(divisor), quotient_name, remainder_name, value, remainder
        )
        return value, q, remainder

    def _row(self, name: str, trip: sympy.Expr) -> _Row | None:
        """`Min(step, extent - q*step)` with q a grid variable over `cdiv(extent, step)`."""
        if not isinstance(trip, sympy.Min) or len(trip.args) != 2:
            return None
        for step, rest in (trip.args, reversed(trip.args)):
            for group, group_trip in self.trips.items():
                q = loop_symbol(group)
                extent = sympy.expand(rest + q * step)
                if q in extent.free_symbols or q not in sympy.sympify(rest).free_symbols:
                    continue
                if sympy.simplify(group_trip - sympy.ceiling(extent / step)) == 0:
                    return _Row(group, step, extent, f"{name}u")
        return None

    def _inner(self, name: str) -> set[str]:
        """`name` and every variable its split made."""
        found = {name}
        split = self.splits.get(name)
        if split is not None:
            found |= self._inner(split.quotient) | self._inner(split.remainder)
        row = self.rows.get(name)
        if row is not None:
            found.add(row.merged)
        return found

    def loops(self, body: tuple[Node, ...]) -> list[tuple[str, sympy.Expr, sympy.Expr]]:
        """(variable, start, trip) of the grid's loops, outermost first, for `body`."""
        axes = max(self.axes, default=-1) + 1
        loops: list[tuple[str, sympy.Expr, sympy.Expr]] = []
        for axis in range(axes):
            name = f"pid_{axis}"
            if name not in self.trips:
                self.trips[name] = as_expression(self._extent(axis))
            loops.extend(self._expanded(name))
        for row in self.rows.values():
            loops = _merged(loops, row, body)
        return loops

    def launch_order(self) -> list[tuple[str, sympy.Expr, sympy.Expr]]:
        """(variable, start, trip) of the grid's loops in the order the GPU starts
        programs, outermost first: axis 0 fastest, each split `pid = q*d + r` with q
        outside r, and grouped rows left unmerged (their group loop outside them)."""
        axes = max(self.axes, default=-1) + 1
        loops: list[tuple[str, sympy.Expr, sympy.Expr]] = []
        for axis in reversed(range(axes)):
            loops.extend(self._expanded(f"pid_{axis}"))
        return loops

    def _expanded(self, name: str) -> list[tuple[str, sympy.Expr, sympy.Expr]]:
        split = self.splits.get(name)
        if split is None:
            row = self.rows.get(name)
            if row is not None:
                start = row.step * loop_symbol(row.group)
                return [(row.merged, as_expression(start), self.trips[name])]
            return [(name, as_expression(0), self.trips[name])]
        return self._expanded(split.quotient) + self._expanded(split.remainder)


def _merged(
    loops: list[tuple[str, sympy.Expr, sympy.Expr]],
    row: _Row,
    body: tuple[Node, ...],
) -> list[tuple[str, sympy.Expr, sympy.Expr]]:
    """q and `u` as one loop over `[0, extent)` where nothing else reads q."""
    names = [name for name, _, _ in loops]
    if row.group not in names or row.merged not in names:
        return loops
    q = loop_symbol(row.group)
    between = loops[names.index(row.group) + 1 : names.index(row.merged)]
    if any(q in sympy.sympify(trip).free_symbols for _, _, trip in between):
        return loops
    if mentions(body, q):
        return loops
    kept = [entry for entry in loops if entry[0] != row.merged]
    at = names.index(row.group)
    kept[at] = (row.merged, as_expression(0), as_expression(row.extent))
    return kept


def exact_quotient(total: sympy.Expr, divisor: sympy.Expr) -> sympy.Expr | None:
    """`total / divisor` where it is a polynomial in the sizes (no remainder)."""
    quotient = sympy.cancel(factored(total) / factored(divisor))
    if sympy.fraction(sympy.together(quotient))[1] != 1:
        return None
    if quotient.has(sympy.Min, sympy.Max):
        return None
    return as_expression(quotient)


def factored(expr: sympy.Expr) -> sympy.Expr:
    """`Min(a*k, b*k)` as `k*Min(a, b)` for a positive common factor k (and inside
    products), so that group sizes divide the ranges they split."""
    expr = sympy.sympify(expr)
    if isinstance(expr, sympy.Min | sympy.Max):
        parts = [sympy.factor_terms(sympy.sympify(a)) for a in expr.args]
        common = set(sympy.Mul.make_args(parts[0]))
        for part in parts[1:]:
            common &= set(sympy.Mul.make_args(part))
        common = {c for c in common if c.is_positive}
        if common:
            factor = sympy.Mul(*common)
            return factor * type(expr)(*(sympy.cancel(p / factor) for p in parts))
        return expr
    if isinstance(expr, sympy.Mul):
        return sympy.Mul(*(factored(a) for a in expr.args))
    return expr


def mentions(body: Iterable[Node], symbol: sympy.Expr) -> bool:
    """Whether any bound, index or guard in `body` reads `symbol`."""
    for node in body:
        if isinstance(node, Loop):
            if _reads(node.start, symbol) or _reads(node.trip, symbol):
                return True
            if mentions(node.body, symbol):
                return True
        elif isinstance(node, Branch):
            if node.guard is not None and _reads(node.guard, symbol):
                return True
            if mentions((node.condition, *node.then_body, *node.else_body), symbol):
                return True
        elif isinstance(node, Statement):
            for access in node.accesses:
                if access.index is not None and any(_reads(i, symbol) for i in access.index):
                    return True
    return False


def _substituted(expr: sympy.Expr, mapping: dict[sympy.Expr, sympy.Expr]) -> sympy.Expr:
    return as_expression(sympy.expand(sympy.sympify(expr).subs(mapping, simultaneous=True)))


def _reads(expr: object, symbol: sympy.Expr) -> bool:
    return symbol in sympy.sympify(expr).free_symbols
