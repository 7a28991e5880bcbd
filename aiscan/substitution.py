"""sympy's `subs` of symbols, by `xreplace` where the two give the same expression.

`subs` goes through its machinery for every binding (sympifying, ordering, a cached
`_subs` walk that compares every node), and simultaneous bindings through fresh dummies:
every expression it builds is new to sympy's caches and asks its assumptions again.
Placing sizes (`n = 4096`) in a nest's counts and sweeping them to one `x` spent seconds
of a plot there, and the Python frontend's index substitutions 0.8 of the 3.1 s lowering
of every Python fixture. `xreplace` rebuilds each node once, with the same constructors.

They agree where each symbol is replaced as a leaf: no node of the expression or of the
values of a class that substitutes in its own way (`Piecewise`, logic, sums,
derivatives: an `_eval_subs` other than the arithmetic's). One binding after another,
`subs` rebuilds the expression after each, in its own order, and an intermediate result
may evaluate (`Min(1, m)` is 1 while `m` is still the positive symbol it replaces): so
do the `xreplace`s here, one a binding, in that order, and the result is the same
expression. Simultaneous bindings give the same value, equal once expanded (the frontend
expands them). Anything else is `subs`'s: keys that are not symbols, values that are not
commutative or not numbers (`oo`, `nan`), expressions that are not sympy's.
`tests/test_substitution.py` holds it to `subs` on random expressions.

Where every symbol of the expression gets a number that agrees with the symbol's
assumptions (a size path's point, a placement at `--size`), the result is that number:
it is read in Python's rationals (`point_value`) instead of rebuilding the expression
node by node, 20 times faster on a plot's placements. Each evaluation sympy makes on
the way is an identity wherever the assumptions hold, so it holds at those numbers.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from fractions import Fraction
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sympy

__all__ = ["replaced_as_subs", "substituted"]


def substituted(expression: Any, bindings: Mapping[Any, Any], *, simultaneous: bool = False) -> Any:
    """`expression.subs(bindings, simultaneous=...)` (a dict: `subs` orders it). Without
    sympy imported, `expression` is none of its (a `Poly`'s `subs` is its own)."""
    sympy = sys.modules.get("sympy")
    if sympy is not None and isinstance(expression, sympy.Basic):
        number = _number_at(expression, bindings)
        if number is not None:
            return number
        replaced = replaced_as_subs(expression, bindings.items(), simultaneous)
        if replaced is not None:
            return replaced
    return expression.subs(dict(bindings), simultaneous=simultaneous)


def _number_at(expression: sympy.Basic, bindings: Mapping[Any, Any]) -> sympy.Rational | None:
    """`subs`'s result where it is a number: every free symbol of `expression` (an
    arithmetic expression) bound to a rational that agrees with its assumptions; None
    elsewhere (a symbol left, a value of another kind, something `point_value` does not
    read, a zero denominator)."""
    import sympy

    from aiscan.analysis.point_values import NotEvaluated, point_value

    if not isinstance(expression, sympy.Expr) or not bindings:
        return None
    values: dict[str, Fraction] = {}
    for key, value in bindings.items():
        number = _agreeing_number(key, value)
        if number is None or values.setdefault(key.name, number) != number:
            return None
    if not expression.free_symbols <= bindings.keys():
        return None
    try:
        result = point_value(expression, values)
    except (NotEvaluated, ZeroDivisionError):
        return None
    return sympy.Rational(result.numerator, result.denominator)


def _agreeing_number(key: Any, value: Any) -> Fraction | None:
    """`value` as a Fraction where `key` is a symbol whose assumptions it meets."""
    import sympy

    if not isinstance(key, sympy.Symbol):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        number = Fraction(value)
    elif isinstance(value, sympy.Rational):
        number = Fraction(int(value.p), int(value.q))
    else:
        return None
    return number if _agrees(key, number) else None


@lru_cache(maxsize=4096)
def _agrees(symbol: sympy.Symbol, number: Fraction) -> bool:
    """Does `number` have every property `symbol` is assumed to have or not to have
    (`positive`, `integer`, and those implied, as `assumptions0` lists them)?"""
    import sympy

    rational = sympy.Rational(number.numerator, number.denominator)
    return all(
        getattr(rational, f"is_{fact}", None) == value
        for fact, value in symbol.assumptions0.items()
        if value is not None
    )


def replaced_as_subs(
    expression: sympy.Basic, bindings: Iterable[tuple[Any, Any]], simultaneous: bool
) -> sympy.Basic | None:
    """What `subs` of the `bindings` gives, by `xreplace`; None where they may differ."""
    import sympy

    value_of: dict[sympy.Symbol, sympy.Basic] = {}
    for key, value in bindings:
        if isinstance(value, int) and not isinstance(value, bool):
            value = sympy.Integer(value)
        if not (isinstance(key, sympy.Symbol) and isinstance(value, sympy.Basic)):
            return None
        value_of[key] = value  # the last binding of a key, as `subs`'s dict has it
    value_of = {key: value for key, value in value_of.items() if key != value}
    used = _used(expression, value_of, simultaneous)
    if not used:
        return expression
    for root in (expression, *(value_of[key] for key in used)):
        if not all(_replaced_as_leaves(type(node)) for node in sympy.preorder_traversal(root)):
            return None
    for key in used:
        if value_of[key].is_commutative is not True or value_of[key] in _not_numbers():
            return None  # `subs` puts these bindings first, or makes other dummies
    if simultaneous:
        return expression.xreplace({key: value_of[key] for key in used})
    replaced = expression
    for key in _subs_order({key: value_of[key] for key in used}):
        if key in replaced.free_symbols:
            replaced = replaced.xreplace({key: value_of[key]})
    return replaced


def _used(
    expression: sympy.Basic, value_of: dict[sympy.Symbol, sympy.Basic], simultaneous: bool
) -> set[sympy.Symbol]:
    """The bindings that can change `expression`: those of its symbols and, one binding
    after another, of the symbols the values of those bring in (the others are no-ops,
    wherever `subs` would take them)."""
    used = {key for key in expression.free_symbols if key in value_of}
    if simultaneous:
        return used
    new = set(used)
    while new:
        brought = {s for key in new for s in value_of[key].free_symbols if s in value_of}
        new = brought - used
        used |= new
    return used


@cache
def _not_numbers() -> tuple[sympy.Basic, ...]:
    import sympy

    return (sympy.nan, sympy.oo, -sympy.oo, sympy.zoo)


def _subs_order(bindings: dict[sympy.Symbol, sympy.Basic]) -> list[sympy.Symbol]:
    """The order `subs` takes a dict's bindings in, one after another (its own sort)."""
    from sympy.core.sorting import _nodes, default_sort_key, ordered

    return list(ordered(bindings, default=False, keys=(lambda x: -_nodes(x), default_sort_key)))


_LEAF_KINDS: dict[type, bool] = {}


def _replaced_as_leaves(kind: type) -> bool:
    """Whether `subs` of a symbol rebuilds a `kind` node from its substituted arguments,
    as `xreplace` does: its `_eval_subs` is the default's or one that acts only when the
    replaced thing is no symbol (a power, product, sum or function replaced whole)."""
    known = _LEAF_KINDS.get(kind)
    if known is None:
        import sympy
        from sympy.core.function import Application
        from sympy.core.numbers import Infinity, NegativeInfinity, Number
        from sympy.functions.elementary.exponential import exp

        definer = next(c for c in kind.__mro__ if "_eval_subs" in c.__dict__)
        known = _LEAF_KINDS[kind] = definer in (
            sympy.Basic, sympy.Add, sympy.Mul, sympy.Pow, sympy.Symbol, Application, Number,
            Infinity, NegativeInfinity, exp,
        )  # fmt: skip
    return known
