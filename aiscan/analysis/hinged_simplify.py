"""sympy's `simplify` of a ratio of polynomials holding footprint hinges (`Max(0, 4 - n)`),
without the steps that cannot change such a ratio.

A placement prints `simplify(flops/bytes)`, so its text must stay `simplify`'s, bit for
bit. For these ratios most of `simplify`'s time goes to steps that leave them as they are:
the simplification of every `Max`'s arguments (a whole `simplify` of `4 - n`, which gives
back `4 - n`), `hyperexpand` (no hypergeometric terms), and the passes for functions the
ratio does not hold (trigonometric, logarithms, sums, ...). The steps that can change it
(sign, content, cancellation, `together`, `factor_terms`, each choice by `count_ops`) are
run here in `simplify`'s order, with its tie-breaks (sympy 1.14's `simplify`; a sympy
without the helpers it calls is left to `simplify` itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiscan.algebra import SYMPY

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["MIRRORED_SYMPY", "is_hinged_ratio", "simplify_hinged"]

MIRRORED_SYMPY = ("1", "14")
"""The sympy release whose `simplify` the steps below follow, step for step: another
release may have changed them, and a report's text must stay `simplify`'s."""


def is_hinged_ratio(expr: sympy.Expr) -> bool:
    """Whether `expr` is built of rationals, symbols, sums, products and integer powers,
    and hinges `Max(0, c - s)` (c an integer, s a symbol), with at least one hinge: the
    shapes whose `Max` arguments `simplify` gives back unchanged."""
    hinges = 0
    for node in sympy.preorder_traversal(expr):
        if node.is_Symbol or node.is_Rational or node.is_Add or node.is_Mul:
            continue
        if node.is_Pow:
            if not node.exp.is_Integer:
                return False
            continue
        if node.func is sympy.Max and _is_hinge(node):
            hinges += 1
            continue
        return False
    return hinges > 0


def _is_hinge(node: sympy.Expr) -> bool:
    """`Max(0, c - s)`: zero and an integer minus one symbol."""
    if len(node.args) != 2 or not node.args[0].is_zero:
        return False
    difference = node.args[1]
    if not difference.is_Add or len(difference.args) != 2:
        return False
    number, term = difference.args
    return bool(number.is_Integer and term.is_Mul and term.args[0] == -1) and (
        len(term.args) == 2 and term.args[1].is_Symbol
    )


def simplify_hinged(expr: sympy.Expr) -> sympy.Expr | None:
    """`sympy.simplify(expr)` for an `is_hinged_ratio`; None for a sympy other than the
    one whose `simplify` these steps follow, or one that lacks the helpers it is built of
    (the result is then `simplify`'s to give)."""
    from sympy import __version__ as release  # the module's own (SYMPY keeps what it read)

    if tuple(release.split(".")[:2]) != MIRRORED_SYMPY:
        return None
    try:
        from sympy.core.rules import Transform
        from sympy.simplify.radsimp import fraction, radsimp
        from sympy.simplify.simplify import _bottom_up, _mexpand, signsimp
        from sympy.utilities.iterables import has_variety
    except ImportError:
        return None

    def shorter(*choices: Any) -> Any:
        """The choice with the fewest operations; the first of those on a tie."""
        if not has_variety(choices):
            return choices[0]
        return min(choices, key=sympy.count_ops)

    original = expr = signsimp(expr)  # `collect_abs` has no `Abs` to collect
    expr = _bottom_up(expr, lambda w: getattr(w, "normal", lambda: w)())
    expr = sympy.Mul(*sympy.powsimp(expr).as_content_primitive())
    cancelled = sympy.cancel(expr)
    expr1 = shorter(cancelled, _mexpand(cancelled).cancel())
    expr2 = shorter(sympy.together(expr, deep=True), sympy.together(expr1, deep=True))
    expr = shorter(expr2, expr1, expr)
    expr = sympy.factor_terms(expr, sign=False)
    short = shorter(sympy.powsimp(expr, combine="exp", deep=True), sympy.powsimp(expr), expr)
    short = shorter(short, sympy.cancel(short))
    short = shorter(
        short,
        sympy.factor_terms(short),
        sympy.expand_power_exp(sympy.expand_mul(short)),
    )
    hollow_mul = Transform(
        lambda x: sympy.Mul(*x.args),
        lambda x: (
            x.is_Mul
            and len(x.args) == 2
            and x.args[0].is_Number
            and x.args[1].is_Add
            and x.is_commutative
        ),
    )
    expr = short.xreplace(hollow_mul)
    numerator, denominator = expr.as_numer_denom()
    if denominator.is_Add:
        top, bottom = fraction(radsimp(1 / denominator, symbolic=False, max_terms=1))
        if top is not sympy.S.One:
            expr = (numerator * top).expand() / bottom
    if expr.could_extract_minus_sign():
        top, bottom = fraction(expr)
        if bottom != 0:
            expr = signsimp(-top / (-bottom))
    if sympy.count_ops(expr) > 1.7 * sympy.count_ops(original):  # `simplify`'s ratio
        expr = original
    return expr  # `done`: nothing to `doit`, no `Abs` to collect
