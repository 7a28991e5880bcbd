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

import re
from typing import TYPE_CHECKING, Any

from aiscan.algebra import (
    SYMPY,
    Poly,
    Quotient,
    constant,
    monomial_and_sum,
    polynomial_text,
    power_texts,
)
from aiscan.analysis.hinged_cancel import cancelled_hinged, coprime_contents

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = [
    "MIRRORED_SYMPY",
    "cancelled_by_common_factor",
    "common_factor_form",
    "contents_form",
    "is_hinged_ratio",
    "simplify_hinged",
]

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


_OPERATOR = re.compile(r"\*\*|[-+*/]|Max\(")
"""What `count_ops` counts in a printed polynomial ratio: each sign, product, power,
quotient and `Max`."""


def cancelled_by_common_factor(numerator: Poly, denominator: Poly) -> Quotient | None:
    """`simplify_hinged(numerator/denominator)` without sympy, for the ratios where it is
    `cancel`'s result with each side's content taken out (`factor_terms`): the sides
    share a factor that is no monomial (jacobi2d's `m - 2`), and the form that keeps it
    has more operations than the cancelled form, so every `count_ops` choice of
    `simplify` is a cancelled form. None for other shapes (a monomial or a number left
    on a side, a common monomial within a side, a side whose terms are all negative, a
    ratio no longer than its cancelled form): `simplify_hinged` decides."""
    if not (numerator.hinged or denominator.hinged):
        return None
    return common_factor_form(numerator, denominator)


def common_factor_form(numerator: Poly, denominator: Poly) -> Quotient | None:
    """`cancelled_by_common_factor` of any two Polys, hinged or not: `simplify_hinged`
    is `simplify`'s steps for ratios of polynomials whose only functions are hinges, so
    a ratio of two plain sums (PolyBench's jacobi_2d, `5*(n - 2)/(8*(5*n - 8))`) gets
    `simplify`'s form by the same `count_ops` argument."""
    cancelled = cancelled_hinged(numerator, denominator, lambda _: False)
    if cancelled is None:
        return None
    top, bottom = cancelled
    common = numerator.common_monomial(denominator)  # `factor_terms` takes it out too
    kept = coprime_contents(
        numerator.divided_by_monomial(common), denominator.divided_by_monomial(common)
    )
    above, below = kept[0].multiple_of(top), kept[1].multiple_of(bottom)
    proportional = above is not None
    # Signs `signsimp` leaves where they are: two sums of positive terms, or (sharing no
    # factor but numbers and monomials) sums it does not turn over, and `cancel` normalized
    # no sign away (each kept side a positive multiple of the cancelled one).
    settled = _positive_plain_sums(numerator, denominator) or (
        above is not None
        and above > 0
        and below is not None
        and below > 0
        and _signs_settled(numerator, denominator)
    )
    for side in (top, bottom):
        if len(side.terms) < 2 or (side.common_monomial(side) and not (side is top and settled)):
            return None  # a monomial, or one `factor_terms` takes out: `_print_Mul`'s order
        if polynomial_text(side) is None or all(c < 0 for c in side.terms.values()):
            return None  # two symbols of one name, or a sign `simplify` may move
    # `count_ops` reads the product as `fraction` gives it, the coefficient spread over
    # both sides (`(n - 2)/(10*n - 2*Max(0, 4 - n) - 16)`, `cancel`'s form). `powsimp`
    # offers it spread over the top (`(n/2 - 1)/(5*n - Max(0, 4 - n) - 8)`): shorter,
    # that form is `simplify`'s; on a tie the form with the content out, which comes first.
    operations = _operations(top, bottom)  # coprime contents: `cancel`'s form
    if proportional:
        # No factor in common but numbers and monomials (PolyBench's 2mm, `(2*nj + 1)/(8*(9*nj
        # + 32))`). Where `signsimp` turns no side over (`_signs_settled`), every form
        # `simplify` weighs is the cancelled one; where it turns one, the sign it chose
        # first stays: left to it.
        if not settled:
            return None
    elif operations >= _operations(*kept):
        return None  # the form that keeps the factor may be as short: `count_ops` decides
    spread = top * constant(1 / bottom.content())
    if _operations(spread, bottom * constant(1 / bottom.content())) < operations:
        return None
    return Quotient(top, bottom, contents=True)


def contents_form(numerator: Poly, denominator: Poly) -> Quotient | None:
    """`simplify(numerator/denominator)` without sympy for two sums without hinges where
    it is `cancel`'s result with each side's content and common monomial taken out
    (`factor_terms`): `x*(2*a*b + 8*b - c)/(4*(a*b + a*x + b*c + b + c*x))`, the form 120
    of the 239 ratios a plot of every fixture on two devices left to sympy take (sympy
    1.14). It holds where, as in `common_factor_form`:

    * the sides share no factor but numbers and monomials, and `cancel` turned no sign
      (each cancelled side a positive multiple of the side with the common monomial and
      contents out);
    * `signsimp` turns no side over, before or after the cancellation (`_signs_settled`);

    and where the bottom is a sum, the form is no longer than `cancel`'s, no form with the
    coefficient spread over the top's sum is shorter than it (`n**2*(3*B*d + 9*n/8)/...`),
    and, where the top keeps no monomial of its own, the spread form of `cancel`'s result
    is no shorter than `cancel`'s (`(M*N/4 - M/16 - N/16)/(M*N + M + N)` is shorter, and
    is `simplify`'s). None elsewhere: sympy decides."""
    if numerator.hinged or denominator.hinged:
        return None
    cancelled = cancelled_hinged(numerator, denominator, lambda _: False)
    if cancelled is None:
        return None
    top, bottom = cancelled
    if top.is_number or len(bottom.terms) < 2:
        return None  # over a monomial, each term divided by it may be shorter: `x + 1/T`
    if any(polynomial_text(side) is None for side in (numerator, denominator, top, bottom)):
        return None
    if not _signs_settled(numerator, denominator, top, bottom):
        return None
    common = numerator.common_monomial(denominator)
    kept = coprime_contents(
        numerator.divided_by_monomial(common), denominator.divided_by_monomial(common)
    )
    above, below = kept[0].multiple_of(top), kept[1].multiple_of(bottom)
    if above is None or below is None or above <= 0 or below <= 0:
        return None
    operations = _operations(top, bottom)
    if len(top.terms) > 1 and not top.common_monomial(top):
        content = constant(1 / bottom.content())
        if _operations(top * content, bottom * content) < operations:
            return None
    form = Quotient(top, bottom, contents=True)
    text = form._fast_text()
    if text is None or len(_OPERATOR.findall(text)) > operations:
        return None  # `cancel`'s form shorter (`1/(n**3 + n)`): `count_ops` keeps it
    spread = _spread_text(form)
    if spread is not None and len(_OPERATOR.findall(spread)) < len(_OPERATOR.findall(text)):
        return None  # `n**2*(3*B*d + 9*n/8)/(...)` for `3*n**2*(8*B*d + 3*n)/(8*(...))`
    return form


def _spread_text(form: Quotient) -> str | None:
    """The `contents` form with its coefficient spread over the top's sum (`expand_mul`
    offers it), as sympy writes it; None where there is no such form (a coefficient of
    1, a monomial above)."""
    coefficient, above, below = form._primitive_sides()
    top_monomial, top_sum = monomial_and_sum(above)
    if coefficient == 1 or len(top_sum.terms) < 2:
        return None
    bottom_monomial, bottom_sum = monomial_and_sum(below)
    spread = polynomial_text(top_sum * constant(coefficient))
    rest = polynomial_text(bottom_sum)
    if spread is None or rest is None:
        return None
    tops = [*_monomial_texts(top_monomial), f"({spread})"]
    bottoms = [*_monomial_texts(bottom_monomial), f"({rest})"]
    return f"{'*'.join(tops)}/({'*'.join(bottoms)})"


def _monomial_texts(monomial: Poly | None) -> list[str]:
    if monomial is None:
        return []
    ((powers, _),) = monomial.terms.items()
    return power_texts(powers)


def _operations(top: Poly, bottom: Poly) -> int:
    """`count_ops` of `top/bottom`, two sums, counted in their printed text."""
    return len(_OPERATOR.findall(f"({polynomial_text(top)})/({polynomial_text(bottom)})"))


def _signs_settled(*sides: Poly) -> bool:
    """Whether `signsimp` (`simplify`'s first step) leaves every side as it is written:
    it turns over a sum that `could_extract_minus_sign`, one with more negative terms than
    positive, or as many of each and a negative first term (sympy's `sort_key` of the sum
    and of its negation differ first in that term's coefficient). A hinge is a sum inside
    a `Max`, which it reads too: not decided here."""
    for side in sides:
        text = polynomial_text(side)
        if side.hinged or text is None:
            return False
        negative = sum(1 for c in side.terms.values() if c < 0)
        positive = len(side.terms) - negative
        if negative > positive or (negative == positive and text.startswith("-")):
            return False
    return True


def _positive_plain_sums(*sides: Poly) -> bool:
    """Whether every side is a sum without hinges whose coefficients are all positive."""
    return all(not side.hinged and all(c > 0 for c in side.terms.values()) for side in sides)
