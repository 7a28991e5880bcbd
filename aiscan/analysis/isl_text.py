"""sympy expressions as isl's text: the loop bounds, guards and indices of a nest, with
each size a number (a grid point) or an isl parameter, and each loop variable its
iteration (`start + step*T1`).

An index that is no polynomial (`floor`, `Mod`, `Min`, with a size inside: model code's
`i // (width // heads)`) cannot hold that size as an isl parameter: the size is written as
its number (`sizes_as_numbers`), once per value it takes on the grid. `_text_at_numbers`
writes such text without sympy: substituting the numbers with `subs` re-evaluates every
`floor` and `Mod` once per binding, about a millisecond a reference, a sixteenth of the
analysis of the fixtures. It writes the same integer function at those sizes, so isl
counts the same sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import ceil, floor, lcm
from typing import TYPE_CHECKING, Any

from aiscan.algebra import SYMPY, expand, to_sympy
from aiscan.analysis.polynomials import terms_of

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = [
    "Collected",
    "NotAffine",
    "Param",
    "Terms",
    "Var",
    "affine_text",
    "collected",
    "denominator",
    "plain_terms",
    "sizes_as_numbers",
]


class NotAffine(Exception):
    """The nest cannot be written as an isl set at these sizes."""


@dataclass(frozen=True, slots=True)
class Param:
    """A size written as an isl parameter (`P0`, ...: no loop's or element's name)."""

    name: str


@dataclass(frozen=True)
class Var:
    """A loop variable at iteration `t`: `start + step*t`, start already in isl text."""

    start: str
    step: int
    t: str
    """The iteration's name in isl's text (`T1`)."""

    @property
    def text(self) -> str:
        # The plainest text for isl's parser, which reads every token (a start of 0 and a
        # step of 1 are most loops).
        step = self.t if self.step == 1 else f"{self.step}*{self.t}"
        return f"({step})" if self.start == "(0)" else f"(({self.start}) + {step})"


Terms = tuple[tuple[Fraction, tuple[tuple["sympy.Symbol", int], ...]], ...]
"""A polynomial's terms: exact coefficients and symbol powers (`plain_terms`)."""


def affine_text(expr: sympy.Expr, substitution: dict[sympy.Symbol, Any]) -> str:
    """`expr` as isl affine text, sizes replaced by numbers and loop variables by their
    iteration expressions; NotAffine when it is not (quasi-)affine there."""
    terms = plain_terms(expr)
    if terms is not None:
        return _polynomial_text(terms, substitution)
    numbers = {s: v for s, v in substitution.items() if isinstance(v, int)}
    if not numbers:
        return _text(expr, substitution)
    try:
        return _text_at_numbers(expr, substitution)
    except NotAffine:
        pass  # sympy's evaluation at the numbers may still make it affine (`0*i*j`)
    return _text(expand(expr.subs(numbers)), substitution)


@lru_cache(maxsize=8192)
def plain_terms(expr: sympy.Expr) -> Terms | None:
    """A polynomial's terms as exact coefficients and symbol powers, or None for anything
    else (floor, Mod, Min...): read once per expression, not once per grid point."""
    terms = terms_of(expr)
    if terms is None:
        return None
    return tuple(
        (Fraction(int(c.p), int(c.q)), tuple(sorted(m.items(), key=lambda kv: kv[0].name)))
        for c, m in terms
    )


@dataclass(frozen=True, slots=True)
class Collected:
    """A polynomial at the sizes of a substitution: each isl parameter's, each loop
    variable's integer coefficient, and the constant; zero coefficients left out."""

    parameters: dict[str, int]
    variables: dict[sympy.Symbol, int]
    constant: int


def collected(terms: Terms, substitution: dict[sympy.Symbol, Any]) -> Collected:
    """`terms` at the sizes in `substitution`, summed in plain integers (`sympy.subs`
    and `expand` at every grid point cost a conv2d nest seconds); NotAffine where they are
    not affine there with integer coefficients."""
    constant = Fraction(0)
    linear: dict[sympy.Symbol, Fraction] = {}
    parameters: dict[str, Fraction] = {}
    for coefficient, powers in terms:
        value, variable, parameter = coefficient, None, None
        for symbol, power in powers:
            given = substitution.get(symbol)
            if isinstance(given, int):
                value *= given**power
            elif isinstance(given, Var) and power == 1 and variable is None:
                variable = symbol
            elif isinstance(given, Param) and power == 1 and parameter is None:
                parameter = given.name
            else:
                raise NotAffine  # a product of loop variables, or a free symbol
        if parameter is not None:
            if variable is not None:
                raise NotAffine  # a size times a loop variable: affine at fixed sizes only
            parameters[parameter] = parameters.get(parameter, Fraction(0)) + value
        elif variable is None:
            constant += value
        else:
            linear[variable] = linear.get(variable, Fraction(0)) + value
    if any(v.denominator != 1 for v in parameters.values()):
        raise NotAffine  # `n/2`: integral at some sizes only
    if any(v.denominator != 1 for v in linear.values()):
        raise NotAffine  # a fraction of a variable
    if constant.denominator != 1:
        raise NotAffine
    return Collected(
        {name: v.numerator for name, v in parameters.items() if v},
        {symbol: v.numerator for symbol, v in linear.items() if v},
        constant.numerator,
    )


def _polynomial_text(terms: Terms, substitution: dict[sympy.Symbol, Any]) -> str:
    """`_text` of a polynomial at the sizes in `substitution` (`collected`)."""
    found = collected(terms, substitution)
    parts = [_times(value, name) for name, value in found.parameters.items()]
    parts += [_times(value, substitution[s].text) for s, value in found.variables.items()]
    if found.constant or not parts:
        parts.append(str(found.constant))
    return "(" + " + ".join(parts) + ")"


def _times(coefficient: int, text: str) -> str:
    """`coefficient*text`, the coefficient left out where it is 1 (fewer tokens to parse)."""
    return text if coefficient == 1 else f"{coefficient}*{text}"


def _text(expr: sympy.Expr, substitution: dict[sympy.Symbol, Any]) -> str:
    if expr.is_Integer:
        return str(int(expr))
    if expr.is_Symbol:
        value = substitution.get(expr)
        if isinstance(value, Var):
            return value.text
        if isinstance(value, Param):
            return value.name
        raise NotAffine
    if expr.is_Add:
        return "(" + " + ".join(_text(a, substitution) for a in expr.args) + ")"
    if expr.is_Mul:
        coefficient, rest = expr.as_coeff_Mul()
        if not coefficient.is_Integer or rest.is_Mul:
            raise NotAffine  # a fraction of a variable, or a product of two
        return f"{int(coefficient)}*{_text(rest, substitution)}"
    if isinstance(expr, (sympy.floor, sympy.ceiling)):
        (argument,) = expr.args
        scale = denominator(argument)
        name = "floor" if isinstance(expr, sympy.floor) else "ceil"
        inner = expand(argument * scale)
        return f"{name}(({_text(inner, substitution)})/{scale})"
    if isinstance(expr, sympy.Mod) and expr.args[1].is_Integer and expr.args[1] > 0:
        return f"(({_text(expr.args[0], substitution)}) mod {int(expr.args[1])})"
    if isinstance(expr, (sympy.Max, sympy.Min)):
        return _extremum(expr, [_text(a, substitution) for a in expr.args])
    raise NotAffine


def _extremum(expr: sympy.Expr, parts: list[str]) -> str:
    """A `Max` or `Min` of the written arguments, as isl's nested binary `max`/`min`."""
    name = "max" if isinstance(expr, sympy.Max) else "min"
    text = parts[0]
    for part in parts[1:]:
        text = f"{name}({text}, {part})"
    return text


def denominator(expr: sympy.Expr) -> int:
    """The least common denominator of `expr`'s rational coefficients."""
    denominator = 1
    for term in sympy.Add.make_args(to_sympy(expand(expr))):
        coefficient, _ = term.as_coeff_Mul()
        if coefficient.is_Rational:
            denominator = lcm(denominator, int(coefficient.q))
    return denominator


# ---- at the numbers, without sympy --------------------------------------------------------

_Form = tuple[dict[str, Fraction], Fraction]
"""An affine form: the coefficient of each atom (by its isl text), and the constant."""


def _text_at_numbers(expr: sympy.Expr, substitution: dict[sympy.Symbol, Any]) -> str:
    """`_text` of `expand(expr.subs(numbers))`, the sizes' numbers multiplied in as the
    text is written (the other sizes isl parameters); NotAffine where this reading is not
    affine (the caller then asks sympy)."""
    return _form_text(_form(expr, substitution))


def _form(expr: sympy.Expr, substitution: dict[sympy.Symbol, Any]) -> _Form:
    if expr.is_Rational:
        return {}, Fraction(int(expr.p), int(expr.q))
    if expr.is_Symbol:
        value = substitution.get(expr)
        if isinstance(value, int):
            return {}, Fraction(value)
        if isinstance(value, Var):
            return {value.text: Fraction(1)}, Fraction(0)
        if isinstance(value, Param):
            return {value.name: Fraction(1)}, Fraction(0)
        raise NotAffine  # a free symbol
    if expr.is_Add:
        return _sum([_form(a, substitution) for a in expr.args])
    if expr.is_Mul:
        return _product([_form(a, substitution) for a in expr.args])
    if expr.is_Pow:
        (base_atoms, base), (exponent_atoms, exponent) = (_form(a, substitution) for a in expr.args)
        if base_atoms or exponent_atoms or exponent.denominator != 1:
            raise NotAffine  # a power of a variable, or a root
        if base == 0 and exponent < 0:
            raise NotAffine
        return {}, base ** int(exponent)
    if isinstance(expr, (sympy.floor, sympy.ceiling)):
        return _rounded(expr, substitution)
    if isinstance(expr, sympy.Mod):
        return _modulo(expr, substitution)
    if isinstance(expr, (sympy.Max, sympy.Min)):
        text = _extremum(expr, [_form_text(_form(a, substitution)) for a in expr.args])
        return {text: Fraction(1)}, Fraction(0)
    raise NotAffine


def _sum(forms: list[_Form]) -> _Form:
    atoms: dict[str, Fraction] = {}
    total = Fraction(0)
    for terms, constant in forms:
        for atom, coefficient in terms.items():
            atoms[atom] = atoms.get(atom, Fraction(0)) + coefficient
        total += constant
    return atoms, total


def _product(forms: list[_Form]) -> _Form:
    """At most one factor with atoms (a product of two is no affine form)."""
    varying = [f for f in forms if f[0]]
    if len(varying) > 1:
        raise NotAffine
    scale = Fraction(1)
    for terms, constant in forms:
        if not terms:
            scale *= constant
    if not varying:
        return {}, scale
    terms, constant = varying[0]
    return {a: c * scale for a, c in terms.items()}, constant * scale


def _rounded(expr: sympy.Expr, substitution: dict[sympy.Symbol, Any]) -> _Form:
    """`floor(a)` or `ceiling(a)` as isl's `floor((D*a)/D)`, D the least common
    denominator of a's coefficients."""
    terms, constant = _form(expr.args[0], substitution)
    rounding = floor if isinstance(expr, sympy.floor) else ceil
    if not terms:
        return {}, Fraction(rounding(constant))
    scale = lcm(constant.denominator, *(c.denominator for c in terms.values()))
    inner = _form_text(({a: c * scale for a, c in terms.items()}, constant * scale))
    name = "floor" if rounding is floor else "ceil"
    return {f"{name}(({inner})/{scale})": Fraction(1)}, Fraction(0)


def _modulo(expr: sympy.Expr, substitution: dict[sympy.Symbol, Any]) -> _Form:
    """`Mod(a, m)` as isl's `(a mod m)`, m a positive integer there (a Python remainder,
    as isl's and sympy's are for a positive m)."""
    modulus = _form(expr.args[1], substitution)
    if modulus[0] or modulus[1].denominator != 1 or modulus[1] <= 0:
        raise NotAffine
    terms, constant = _form(expr.args[0], substitution)
    if not terms:
        return {}, constant % modulus[1]
    return {f"(({_form_text((terms, constant))}) mod {modulus[1]})": Fraction(1)}, Fraction(0)


def _form_text(form: _Form) -> str:
    """Integer coefficients only, as `_text` takes them."""
    terms, constant = form
    parts = []
    for atom, coefficient in terms.items():
        if coefficient.denominator != 1:
            raise NotAffine  # a fraction of a variable
        if coefficient:
            parts.append(f"{coefficient.numerator}*{atom}")
    if constant.denominator != 1:
        raise NotAffine
    parts.append(str(constant.numerator))
    return "(" + " + ".join(parts) + ")"


def sizes_as_numbers(
    expressions: Sequence[sympy.Expr], sizes: Sequence[sympy.Symbol]
) -> frozenset[sympy.Symbol]:
    """The `sizes` that isl cannot take as parameters in these expressions, as `affine_text`
    writes them: those inside a floor, Mod or Min, times a loop variable or another size
    (`A[i*n + j]`), or with a fraction (`n/2`). The others can stay parameters of one map
    for every value of these (`polyhedral._map_at`)."""
    wanted = set(sizes)
    found: set[sympy.Symbol] = set()
    for expr in expressions:
        terms = plain_terms(expr)
        if terms is None:
            found |= expr.free_symbols & wanted
            continue
        for coefficient, powers in terms:
            held = [s for s, _ in powers if s in wanted]
            if held and (len(powers) > 1 or powers[0][1] > 1 or coefficient.denominator != 1):
                found.update(held)
    return frozenset(found)
