"""Exact polynomials with rational coefficients, without importing sympy.

Trip counts, sums over affine domains, footprints and byte totals are polynomials in the size
symbols (`2*n`, `n**2/4 - 3*n/2`). Importing sympy costs more than the rest of a one-kernel
run together, so these values are carried as `Poly` and sympy is imported only where a result
needs it (`ceiling`, `Min`, limits, roots). The two types meet without ceremony:

- a `Poly` symbol hashes and compares equal to the sympy `Symbol` of the same name and
  assumptions, so dictionaries and sets of symbols work across the boundary;
- sympy converts a `Poly` it meets through `_sympy_`, and `Poly` hands any operation with a
  sympy operand to sympy;
- `str` writes sympy's own text, so reports do not change (tests/test_algebra.py holds all
  three to sympy).

The canonical rule: a value that is a polynomial is a `Poly`. `normal` turns sympy results
back into one where they are polynomials.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from functools import cache
from math import gcd
from typing import Any

__all__ = [
    "HINGE",
    "INFINITY",
    "ONE",
    "SYMPY",
    "ZERO",
    "Poly",
    "Quotient",
    "as_expression",
    "constant",
    "expand",
    "hinge",
    "is_infinity",
    "is_poly",
    "is_quotient",
    "monomial_and_sum",
    "normal",
    "ordered_terms",
    "polynomial_text",
    "power_texts",
    "probe_values",
    "symbol",
    "to_sympy",
]

Var = tuple[str, str]
"""A symbol's identity: its name and its kind (the sympy assumptions it carries)."""
Monomial = tuple[tuple[Var, int], ...]
"""Powers of symbols, sorted by (name, kind); `()` is the constant monomial."""
Coefficient = int | Fraction
"""An exact rational, held as an `int` when it is one: most coefficients of counts are
integers, and `int` arithmetic is C, where `Fraction`'s is Python (a fifth of the time the
C files' polynomials took). The two compare and hash equal, so no caller can tell."""

HINGE = "hinge"
"""The kind of a hinge atom `Max(0, c - s)` (`hinge`), which a `Poly` carries as one more
variable: not a symbol, and never in `KIND_ASSUMPTIONS`."""

KIND_ASSUMPTIONS: dict[str, dict[str, bool]] = {
    "size": {"integer": True, "positive": True},
    "loop": {"integer": True},
    "trip": {"integer": True, "nonnegative": True},
    "fraction": {"nonnegative": True},
    "positive": {"positive": True},
    "plain": {},
}
"""The assumptions each kind of symbol is created with in sympy."""


def _facts(true: str, false: str = "") -> tuple[tuple[str, bool], ...]:
    return tuple(sorted([(k, True) for k in true.split()] + [(k, False) for k in false.split()]))


_REAL = "commutative complex extended_real finite hermitian real"
_INTEGER = _REAL + " algebraic integer rational"
_NOT_INTEGER_ONLY = "imaginary infinite irrational noninteger transcendental"
_NONNEGATIVE = ("extended_nonnegative nonnegative", "extended_negative negative")
_POSITIVE = (
    "extended_nonnegative extended_nonzero extended_positive nonnegative nonzero positive",
    "extended_negative extended_nonpositive negative nonpositive zero",
)
_ASSUMPTIONS0: dict[str, tuple[tuple[str, bool], ...]] = {
    # sympy's `Symbol(name, **KIND_ASSUMPTIONS[kind]).assumptions0`, sorted: a symbol's hash
    # is built from it. tests/test_algebra.py checks this table against sympy.
    "size": _facts(f"{_INTEGER} {_POSITIVE[0]}", f"{_NOT_INTEGER_ONLY} {_POSITIVE[1]}"),
    "loop": _facts(_INTEGER, _NOT_INTEGER_ONLY),
    "trip": _facts(f"{_INTEGER} {_NONNEGATIVE[0]}", f"{_NOT_INTEGER_ONLY} {_NONNEGATIVE[1]}"),
    "fraction": _facts(f"{_REAL} {_NONNEGATIVE[0]}", f"imaginary infinite {_NONNEGATIVE[1]}"),
    "positive": _facts(f"{_REAL} {_POSITIVE[0]}", f"imaginary infinite {_POSITIVE[1]}"),
    "plain": _facts("commutative"),
}
_POSITIVE_KINDS = frozenset({"size", "positive"})
_INTEGER_KINDS = frozenset({"size", "loop", "trip", HINGE})  # a hinge of `c - s`, c an int
_FACTS = {kind: dict(assumptions) for kind, assumptions in _ASSUMPTIONS0.items()}
_KIND_OF_ASSUMPTIONS = {assumptions: kind for kind, assumptions in _ASSUMPTIONS0.items()}


class _DeferredSympy:
    """The sympy module, imported at the first attribute read. Modules bind it as `sympy`
    (with the real import under TYPE_CHECKING for the annotations), so that code which
    never reaches sympy's operations never pays for its import."""

    def __getattr__(self, name: str) -> Any:
        import sympy

        value = getattr(sympy, name)
        setattr(self, name, value)  # later reads skip __getattr__
        return value


SYMPY: Any = _DeferredSympy()


class _HingeName(str):
    """A hinge atom's name: its text (`Max(0, 4 - m)`, which orders and prints it) carrying
    its argument, so that a Poly pickled in a worker is whole in the parent."""

    argument: Poly

    def __new__(cls, text: str, argument: Poly) -> _HingeName:
        name = super().__new__(cls, text)
        name.argument = argument
        return name

    def __reduce__(self) -> tuple[type[_HingeName], tuple[str, Poly]]:
        return _HingeName, (str(self), self.argument)


def _hinge_parts(var: Var) -> tuple[int, str]:
    """The constant and the symbol's name of a hinge's argument `c - s`."""
    argument = var[0].argument  # type: ignore[attr-defined]
    constant_term = argument.terms.get((), 0)
    ((name, _),) = (v for m in argument.terms for v, _ in m)
    return constant_term, name


def _gen_key(var: Var) -> tuple[int, Coefficient, str]:
    """sympy's `default_sort_key` order of generators: symbols (by name) before hinges
    (`Max` sorts after `Symbol`), hinges by their argument `c - s`, c then s's name."""
    if var[1] != HINGE:
        return (0, 0, var[0])
    constant_term, name = _hinge_parts(var)
    return (1, constant_term, name)


def hinge(argument: Poly) -> Poly | None:
    """`Max(0, argument)` as a Poly: a number for a number, `ZERO` for `c - s` with `c <= 1`
    (s is a size, at least 1), a hinge atom for `c - s` with `c >= 2`, the shape sympy
    keeps unevaluated; None for any other argument, whose `Max` is sympy's to build."""
    value = argument.constant_value()
    if value is not None:
        return constant(max(value, 0))
    if len(argument.terms) > 2:
        return None
    constant_term = argument.terms.get((), 0)
    rest = [(m, c) for m, c in argument.terms.items() if m]
    if len(rest) != 1 or constant_term.__class__ is not int:
        return None
    ((monomial, coefficient),) = rest
    if coefficient != -1 or len(monomial) != 1 or monomial[0][1] != 1:
        return None
    if monomial[0][0][1] != "size":
        return None
    if constant_term <= 1:
        return ZERO
    text = polynomial_text(argument)
    assert text is not None
    return Poly({(((_HingeName(f"Max(0, {text})", argument), HINGE), 1),): 1})


def _symbol_hash(var: Var) -> int:
    """The hash sympy gives `Symbol(name, **assumptions)`."""
    return hash(("Symbol", var[0], *_ASSUMPTIONS0[var[1]]))


def _from_sympy_module(value: object) -> bool:
    return type(value).__module__.startswith("sympy")


class Poly:
    """A polynomial with rational coefficients in symbols of known kinds; immutable."""

    __slots__ = ("_hash", "_sympy", "_text", "terms")

    terms: dict[Monomial, Coefficient]
    """Coefficient per monomial; no zero coefficients (the zero polynomial has no terms),
    and an integral one is an `int`."""

    def __init__(self, terms: dict[Monomial, Coefficient]) -> None:
        self.terms = terms
        self._hash: int | None = None
        self._sympy: Any = None
        self._text: str | None = None

    def __getattr__(self, name: str) -> Any:
        """Any other question sympy code asks of an expression (`atoms`, `args`, `is_Add`),
        put to the sympy form. Never for private names (`__sympy__`, `_op_priority`): sympy
        must not take a Poly for one of its own objects, but convert it."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(to_sympy(self), name)

    def __reduce__(self) -> tuple[type[Poly], tuple[dict[Monomial, Coefficient]]]:
        return Poly, (self.terms,)  # not the cached sympy form, which would import sympy

    # -- construction -------------------------------------------------------------------

    @staticmethod
    def _of(value: object) -> Poly | None:
        """`value` as a Poly when it is one or a plain number; None otherwise."""
        if value.__class__ is Poly:
            return value
        if isinstance(value, int | Fraction) and not isinstance(value, bool):
            return constant(value)
        return None

    # -- what sympy code asks of an expression ----------------------------------------------

    @property
    def is_number(self) -> bool:
        return all(not monomial for monomial in self.terms)

    @property
    def is_Integer(self) -> bool:
        value = self.constant_value()
        return value is not None and value.denominator == 1

    @property
    def is_Rational(self) -> bool:
        return self.is_number

    @property
    def is_zero(self) -> bool:
        return not self.terms

    # Signs: a symbol's facts come from its kind; a number's, or a sum of one sign over
    # positive symbols (sizes), from its sign; anything else is sympy's to decide.

    def _sign(self) -> int | None:
        value = self.constant_value()
        if value is not None:
            return (value > 0) - (value < 0)
        kinds = {var[1] for monomial in self.terms for var, _ in monomial}
        signs = {c > 0 for c in self.terms.values()}
        if kinds <= _POSITIVE_KINDS and len(signs) == 1:
            return 1 if signs.pop() else -1
        return None

    def _fact(self, fact: str, of_sign: Callable[[int], bool]) -> bool | None:
        var = self.var()
        if var is not None:
            return _FACTS[var[1]].get(fact)
        sign = self._sign()
        if sign is not None:
            return of_sign(sign)
        facts = self._size_power_less_number()
        if facts is not None:
            return facts[fact]
        answer: bool | None = getattr(to_sympy(self), f"is_{fact}")
        return answer

    def _size_power_less_number(self) -> dict[str, bool | None] | None:
        """sympy's facts of `c*s**k - d` (s a size, so an integer from 1; c, d > 0), a box
        side such as `m - 1`: from `c - d` on; None for any other shape (sympy's facts of
        several symbols, `m*n - 2`, follow no rule this short)."""
        if len(self.terms) != 2 or () not in self.terms:
            return None
        ((monomial, coefficient),) = ((m, c) for m, c in self.terms.items() if m)
        number = self.terms[()]
        if len(monomial) != 1 or monomial[0][0][1] != "size" or coefficient <= 0 or number >= 0:
            return None
        least = coefficient + number
        if least > 0:
            return {"positive": True, "nonnegative": True, "negative": False, "nonpositive": False}
        if least == 0:
            return {"positive": None, "nonnegative": True, "negative": False, "nonpositive": None}
        return {"positive": None, "nonnegative": None, "negative": None, "nonpositive": None}

    @property
    def is_positive(self) -> bool | None:
        return self._fact("positive", lambda sign: sign > 0)

    @property
    def is_negative(self) -> bool | None:
        return self._fact("negative", lambda sign: sign < 0)

    @property
    def is_nonnegative(self) -> bool | None:
        return self._fact("nonnegative", lambda sign: sign >= 0)

    @property
    def is_nonpositive(self) -> bool | None:
        return self._fact("nonpositive", lambda sign: sign <= 0)

    @property
    def is_integer(self) -> bool | None:
        var = self.var()
        if var is not None:
            return _FACTS[var[1]].get("integer")
        kinds = {var[1] for monomial in self.terms for var, _ in monomial}
        if all(c.denominator == 1 for c in self.terms.values()) and kinds <= _INTEGER_KINDS:
            return True
        return to_sympy(self).is_integer if kinds else False

    @property
    def is_Symbol(self) -> bool:
        return self.var() is not None

    @property
    def p(self) -> int:
        """The numerator of a rational constant (sympy's `Rational.p`)."""
        value = self._required_constant()
        return value.numerator

    @property
    def q(self) -> int:
        value = self._required_constant()
        return value.denominator

    @property
    def name(self) -> str:
        """A symbol's name; an AttributeError for anything else, as for sympy's `Add`."""
        return self._required_var("name")[0]

    @property
    def kind(self) -> str:
        return self._required_var("kind")[1]

    def _required_var(self, attribute: str) -> Var:
        var = self.var()
        if var is None:
            raise AttributeError(attribute)
        return var

    @property
    def free_symbols(self) -> set[Poly]:
        """The symbols, those in a hinge's argument included (a hinge is no symbol)."""
        symbols = set()
        for monomial in self.terms:
            for var, _ in monomial:
                if var[1] == HINGE:
                    symbols |= var[0].argument.free_symbols  # type: ignore[attr-defined]
                else:
                    symbols.add(symbol(*var))
        return symbols

    @property
    def hinged(self) -> bool:
        """Whether a hinge `Max(0, c - s)` is among the variables."""
        return any(var[1] == HINGE for monomial in self.terms for var, _ in monomial)

    def _hinge_holds(self, var: Poly | None) -> bool:
        """Whether a hinge's argument holds `var` (any symbol, for None)."""
        if var is None or not self.hinged:
            return self.hinged
        return any(s == var for atom in self.hinges() for s in atom.free_symbols)

    def hinge_holds(self, var: Poly) -> bool:
        """Whether a hinge `Max(0, c - s)` here has `var` for s: the polynomial is then no
        polynomial in `var` (a degree or a coefficient of a power of `var` would be wrong)."""
        return self._hinge_holds(var)

    def hinges(self) -> dict[Poly, tuple[int, str]]:
        """Each hinge atom `Max(0, c - s)` with its `(c, s's name)`."""
        return {
            Poly({((var, 1),): 1}): _hinge_parts(var)
            for monomial in self.terms
            for var, _ in monomial
            if var[1] == HINGE
        }

    def without_hinges(self, values: Mapping[Poly, Poly]) -> Poly:
        """The given hinge atoms replaced by their values (0 for a hinge past its bend)."""
        return self._replaced({next(iter(atom.terms))[0][0]: v for atom, v in values.items()})

    def _replaced(self, values: Mapping[Var, Poly]) -> Poly:
        """Each variable (a symbol or a hinge) in `values` replaced by its value."""
        total = ZERO
        for monomial, coefficient in self.terms.items():
            term = constant(coefficient)
            for var, power in monomial:
                value = values.get(var)
                term = term * (Poly({((var, 1),): 1}) if value is None else value) ** power
            total = total + term
        return total

    def var(self) -> Var | None:
        """The symbol this polynomial is, if it is exactly one symbol (a hinge is none)."""
        if len(self.terms) != 1:
            return None
        ((monomial, coefficient),) = self.terms.items()
        if coefficient != 1 or len(monomial) != 1 or monomial[0][1] != 1:
            return None
        return None if monomial[0][0][1] == HINGE else monomial[0][0]

    def constant_value(self) -> Coefficient | None:
        """The value of a constant polynomial; None when symbols remain."""
        if not self.terms:
            return 0
        if len(self.terms) == 1:
            coefficient = self.terms.get(())
            return coefficient
        return None

    def _required_constant(self) -> Coefficient:
        value = self.constant_value()
        if value is None:
            raise TypeError(f"{self} is not a number")
        return value

    def degree(self, var: Poly | None = None) -> int:
        """The total degree, or the degree in one symbol; a hinge's dependence on its
        argument is no degree, so a hinge of that symbol (of any, for the total) makes it
        a ValueError."""
        if self._hinge_holds(var):
            raise ValueError(f"{self} holds a hinge of {var}: no polynomial degree")
        if var is None:
            return max((sum(e for _, e in m) for m in self.terms), default=0)
        v = var.var()
        return max((e for m in self.terms for w, e in m if w == v), default=0)

    def by_total_degree(self) -> dict[int, Fraction]:
        """The polynomial with every symbol at one `x`: its coefficients by power of `x`
        (the terms' coefficients summed by total degree), the zero ones left out. Where
        the sizes grow together, its highest power decides a limit."""
        sums: dict[int, Fraction] = {}
        for monomial, coefficient in self.terms.items():
            power = sum(exponent for _, exponent in monomial)
            sums[power] = sums.get(power, Fraction(0)) + coefficient
        return {power: c for power, c in sums.items() if c}

    def multiple_of(self, other: Poly) -> Fraction | None:
        """The number `self/other` where `self` is a multiple of `other` (the same terms,
        in the same ratio), else None."""
        if self.terms.keys() != other.terms.keys():
            return None
        ratios = {Fraction(c) / other.terms[m] for m, c in self.terms.items()}
        return ratios.pop() if len(ratios) == 1 else None

    def coeff(self, var: Any, n: int = 1) -> Any:
        """What multiplies `var` to the power `n` (sympy's `Expr.coeff` on an expanded sum)."""
        v = _var_of(var)
        if v is None or n != 1:
            return normal(to_sympy(self).coeff(to_sympy(var), n))
        result: dict[Monomial, Coefficient] = {}
        for monomial, coefficient in self.terms.items():
            if (v, 1) in monomial:
                rest = tuple(p for p in monomial if p[0] != v)
                result[rest] = coefficient
        return Poly(result)

    def by_power(self, var: Poly) -> dict[int, Poly]:
        """The coefficients of each power of `var` (itself free of `var`); ValueError where
        a hinge holds `var`."""
        if self._hinge_holds(var):
            raise ValueError(f"{self} holds a hinge of {var}: no coefficients by power")
        v = var.var()
        parts: dict[int, dict[Monomial, Coefficient]] = {}
        for monomial, coefficient in self.terms.items():
            power = next((e for w, e in monomial if w == v), 0)
            rest = tuple(p for p in monomial if p[0] != v) if power else monomial
            parts.setdefault(power, {})[rest] = coefficient
        return {power: Poly(terms) for power, terms in parts.items()}

    # -- what cancelling a quotient needs --------------------------------------------------

    def has_name_clash(self, other: Poly) -> bool:
        """Whether two different symbols (of the two together) share a name."""
        variables = {v for p in (self, other) for m in p.terms for v, _ in m}
        return len({name for name, _ in variables}) != len(variables)

    def common_monomial(self, other: Poly) -> dict[Var, int]:
        """The largest monomial dividing every term of both."""
        monomials = [dict(m) for p in (self, other) for m in p.terms]
        variables = set(monomials[0]).intersection(*monomials[1:]) if monomials else set()
        return {v: min(m[v] for m in monomials) for v in variables}

    def divided_by_monomial(self, monomial: dict[Var, int]) -> Poly:
        """Each term divided by `monomial`, which divides all of them."""
        if not monomial:
            return self
        terms = {}
        for m, c in self.terms.items():
            powers = {v: e - monomial.get(v, 0) for v, e in m}
            terms[tuple(sorted((v, e) for v, e in powers.items() if e))] = c
        return Poly(terms)

    def divmod_monomial(self, divisor: Poly) -> tuple[Poly, Poly]:
        """Division by one term (`sympy.div` over the divisor's symbols): the terms it
        divides, divided, and the others."""
        ((monomial, coefficient),) = divisor.terms.items()
        quotient: dict[Monomial, Coefficient] = {}
        remainder: dict[Monomial, Coefficient] = {}
        for m, c in self.terms.items():
            powers = dict(m)
            if all(powers.get(v, 0) >= e for v, e in monomial):
                for v, e in monomial:
                    powers[v] -= e
                quotient[tuple(sorted((v, e) for v, e in powers.items() if e))] = _quotient(
                    c, coefficient
                )
            else:
                remainder[m] = c
        return Poly(quotient), Poly(remainder)

    def content(self) -> Fraction:
        """The positive rational whose quotient is primitive with integer coefficients."""
        numerators = 0
        denominators = 1
        for c in self.terms.values():
            numerators = gcd(numerators, c.numerator)
            denominators = denominators * c.denominator // gcd(denominators, c.denominator)
        return Fraction(numerators, denominators)

    def leading_coefficient(self) -> Coefficient:
        """The coefficient of the highest term, lexicographic in the symbols sorted by name
        (the order of sympy's `lex` over symbols given sorted by name; hinges after them,
        as sympy sorts its generators)."""
        variables = sorted({v for m in self.terms for v, _ in m}, key=_gen_key)
        best = max(self.terms, key=lambda m: tuple(dict(m).get(v, 0) for v in variables))
        return self.terms[best]

    def at(self, values: Mapping[Any, float]) -> float:
        """The value, in floating point, with the given symbols at the given values."""
        given = {_var_of(k): v for k, v in values.items()}
        total = 0.0
        for monomial, coefficient in self.terms.items():
            term = float(coefficient)
            for var, power in monomial:
                if var[1] == HINGE:
                    term *= max(0.0, var[0].argument.at(values)) ** power  # type: ignore[attr-defined]
                else:
                    term *= given[var] ** power
            total += term
        return total

    def has(self, *items: object) -> bool:
        if self.hinged:
            variables = [_var_of(item) for item in items]
            if None in variables:  # `has(sympy.Max)`, `has(Max(0, 4 - n))`: sympy's answer
                return bool(to_sympy(self).has(*items))
            free = self.free_symbols
            return any(symbol(*v) in free for v in variables if v is not None)
        mine = {var for monomial in self.terms for var, _ in monomial}
        for item in items:
            other = _var_of(item)
            if other is not None and other in mine:
                return True
        return False

    def expand(self) -> Poly:
        return self

    def subs(self, *arguments: Any, simultaneous: bool = False) -> Any:
        """Substitute symbols, as sympy's `subs` does (a mapping, pairs, or one old and one
        new value); a Poly when every value is a number or a Poly, else sympy's result."""
        if len(arguments) == 2:
            pairs = [(arguments[0], arguments[1])]
        else:
            (mapping,) = arguments
            pairs = list(mapping.items()) if isinstance(mapping, Mapping) else list(mapping)
        values: dict[Var, Poly] = {}
        for key, value in pairs:
            var = _var_of(key)
            replacement = Poly._of(value)
            if var is None or replacement is None:
                return normal(to_sympy(self).subs(pairs, simultaneous=simultaneous))
            values[var] = replacement
        if not simultaneous and len(values) > 1:
            chained = {v for r in values.values() for m in r.terms for v, _ in m} & set(values)
            if chained:  # one value names another key: sympy substitutes in its own order
                return normal(to_sympy(self).subs(pairs))
        if not values:
            return self
        hinges: dict[Var, Poly] = {}
        for monomial in self.terms:
            for var, _ in monomial:
                if var[1] == HINGE and var not in hinges:
                    argument = var[0].argument.subs(  # type: ignore[attr-defined]
                        {symbol(*v): value for v, value in values.items()}
                    )
                    value = hinge(argument) if is_poly(argument) else None
                    if value is None:  # a `Max` only sympy writes
                        return normal(to_sympy(self).subs(pairs, simultaneous=simultaneous))
                    hinges[var] = value
        return self._replaced({**values, **hinges})  # no key is a hinge: `_var_of` refuses one

    def _sympy_(self) -> Any:
        if self._sympy is None:
            import sympy

            parts = []
            for monomial, coefficient in self.terms.items():
                factors = [sympy.Rational(coefficient.numerator, coefficient.denominator)]
                factors += [_sympy_symbol(var) ** power for var, power in monomial]
                parts.append(sympy.Mul(*factors))
            self._sympy = sympy.Add(*parts)
        return self._sympy

    # -- arithmetic -----------------------------------------------------------------------

    def __add__(self, other: object) -> Any:
        right = Poly._of(other)
        if right is None:
            return NotImplemented
        if not right.terms:
            return self
        if not self.terms:
            return right
        terms = dict(self.terms)
        for monomial, coefficient in right.terms.items():
            total = terms.get(monomial, 0) + coefficient
            if total:
                terms[monomial] = total.numerator if total.denominator == 1 else total
            else:
                del terms[monomial]
        return Poly(terms)

    __radd__ = __add__

    def __neg__(self) -> Poly:
        return Poly({m: -c for m, c in self.terms.items()})

    def __pos__(self) -> Poly:
        return self

    def __sub__(self, other: object) -> Any:
        right = Poly._of(other)
        if right is None:
            return NotImplemented
        return self + (-right)

    def __rsub__(self, other: object) -> Any:
        left = Poly._of(other)
        if left is None:
            return NotImplemented
        return left + (-self)

    def __mul__(self, other: object) -> Any:
        right = Poly._of(other)
        if right is None:
            return NotImplemented
        terms: dict[Monomial, Coefficient] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in right.terms.items():
                monomial = _multiply(m1, m2) if m1 and m2 else m1 or m2
                total = terms.get(monomial, 0) + c1 * c2
                if total:
                    terms[monomial] = total.numerator if total.denominator == 1 else total
                else:
                    terms.pop(monomial, None)
        return Poly(terms)

    __rmul__ = __mul__

    def __truediv__(self, other: object) -> Any:
        right = Poly._of(other)
        if right is None:
            return NotImplemented
        divisor = right.constant_value()
        if divisor is not None and divisor != 0:
            return self if divisor == 1 else self * constant(_quotient(1, divisor))
        if len(self.terms) == 1 and len(right.terms) == 1:
            # A monomial over a monomial: sympy cancels it when it is made, as here.
            ((top, c1),), ((bottom, c2),) = self.terms.items(), right.terms.items()
            powers = dict(top)
            for var, power in bottom:
                powers[var] = powers.get(var, 0) - power
            if all(power >= 0 for power in powers.values()):
                monomial = tuple(sorted((v, e) for v, e in powers.items() if e))
                return Poly({monomial: _quotient(c1, c2)})
        elif self == right and self.terms:
            return ONE
        return normal(to_sympy(self) / to_sympy(right))

    def __rtruediv__(self, other: object) -> Any:
        left = Poly._of(other)
        if left is None:
            return NotImplemented
        return left / self

    def __pow__(self, power: object) -> Any:
        if isinstance(power, Poly):
            value = power.constant_value()
            power = int(value) if value is not None and value.denominator == 1 else power
        if not isinstance(power, int) or power < 0:
            return normal(to_sympy(self) ** to_sympy(power))
        result = ONE
        for _ in range(power):
            result = result * self
        return result

    def __abs__(self) -> Any:
        sign = self._sign()
        if sign is not None:  # sympy's `Abs` of an expression of known sign is the same
            return self if sign >= 0 else -self
        import sympy

        return normal(sympy.Abs(to_sympy(self)))

    # -- comparison -----------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if other.__class__ is Poly:
            return self.terms == other.terms
        if isinstance(other, int | float | Fraction):
            value = self.constant_value()
            return value is not None and value == other
        if _from_sympy_module(other):
            if getattr(other, "is_Symbol", False):
                mine = self.var()
                return mine is not None and mine == _var_of(other)
            return bool(to_sympy(self) == other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        if self._hash is None:
            var = self.var()
            if var is not None:
                self._hash = _symbol_hash(var)
            else:
                value = self.constant_value()
                self._hash = (
                    hash(value) if value is not None else hash(frozenset(self.terms.items()))
                )
        return self._hash

    def _compare(self, other: object) -> tuple[Coefficient, Coefficient] | None:
        right = Poly._of(other) if not isinstance(other, float) else None
        mine = self.constant_value()
        theirs = right.constant_value() if right is not None else None
        if mine is None or theirs is None:
            return None
        return mine, theirs

    def __lt__(self, other: object) -> Any:
        pair = self._compare(other)
        return pair[0] < pair[1] if pair else to_sympy(self) < to_sympy(other)

    def __le__(self, other: object) -> Any:
        pair = self._compare(other)
        return pair[0] <= pair[1] if pair else to_sympy(self) <= to_sympy(other)

    def __gt__(self, other: object) -> Any:
        pair = self._compare(other)
        return pair[0] > pair[1] if pair else to_sympy(self) > to_sympy(other)

    def __ge__(self, other: object) -> Any:
        pair = self._compare(other)
        return pair[0] >= pair[1] if pair else to_sympy(self) >= to_sympy(other)

    def __bool__(self) -> bool:
        return bool(self.terms)

    def __int__(self) -> int:
        return int(self._required_constant())

    def __float__(self) -> float:
        return float(self._required_constant())

    def __index__(self) -> int:
        value = self._required_constant()
        if value.denominator != 1:
            raise TypeError(f"{self} is not an integer")
        return value.numerator

    # -- text -----------------------------------------------------------------------------

    def __str__(self) -> str:
        """Kept once written: a report writes the same count in several places."""
        if self._text is None:
            text = polynomial_text(self)
            self._text = text if text is not None else str(to_sympy(self))
        return self._text

    __repr__ = __str__


class Quotient:
    """A rational intensity, `numerator/denominator`, two Polys in the lowest terms the
    intensity's cancellation gives (`m*n/(4*m*n + 4*m + 8*n)`), kept without sympy.

    It stands for the sympy expression the intensity used to build (`_sympy_`): `str`
    writes that expression's text where the shape is one `polynomial_text` covers, and any
    other question or operation is put to the sympy form, so code written for sympy keeps
    working and pays for the import only off the common path. Never a polynomial: a
    quotient that is one is a `Poly`.

    `factored` is the form sympy's `simplify` gives a monomial over a sum of positive
    terms (a placement's intensity): the bottom's content and common monomial taken out
    of the sum, `m/(8*(m + 8))` for `m/(8*m + 64)` (`Quotient.factored`).

    `contents` is the form `simplify` gives most cancelled ratios of two sums (a hinged
    stencil's, a model's level ratios): each side's integer content taken out as one
    positive rational coefficient, `(n - 2)/(2*(5*n - Max(0, 4 - n) - 8))` for
    `(n - 2)/(10*n - 2*Max(0, 4 - n) - 16)`, and each side's common monomial before its
    sum (`nj*(3*nk + 1)/(8*(3*nj*nk + 2*nj + 8*nk))`, `(2*n - 1)/(4*n*(n + 21))`); a side
    may be that monomial alone (`(n - 1)/(16*n)`)."""

    __slots__ = ("_sympy", "_text", "contents", "denominator", "factored", "numerator")

    def __init__(
        self,
        numerator: Poly,
        denominator: Poly,
        *,
        factored: bool = False,
        contents: bool = False,
    ) -> None:
        self.numerator = numerator
        self.denominator = denominator
        self.factored = factored
        self.contents = contents
        self._sympy: Any = None
        self._text: str | None = None

    @staticmethod
    def simplified(numerator: Poly, denominator: Poly) -> Quotient | None:
        """`numerator/denominator`, in lowest terms with coprime integer coefficients, in
        the form sympy's `simplify` writes; None where that form is not the one
        `factored` covers (a sum above, a sign, two symbols of one name)."""
        if len(numerator.terms) != 1 or len(denominator.terms) < 1:
            return None
        if numerator.hinged or denominator.hinged:
            return None  # `simplify` of a `Max` is `hinged_simplify`'s
        ((_, coefficient),) = numerator.terms.items()
        if coefficient <= 0 or not all(c > 0 for c in denominator.terms.values()):
            return None
        if numerator.has_name_clash(denominator) or polynomial_text(denominator) is None:
            return None
        if len(denominator.terms) > 1 and denominator.common_monomial(denominator):
            # `1/(n**3 + n)` stays so under `simplify`, `1/(n**2 + n)` becomes
            # `1/(n*(n + 1))`: sympy weighs the two forms' lengths; left to it.
            return None
        return Quotient(numerator, denominator, factored=True)

    def _factors(self) -> tuple[Fraction, Poly, Poly, Poly]:
        """The factored form's coefficient, top monomial, bottom monomial and bottom sum
        (`ONE` when the bottom is a monomial)."""
        ((top, top_coefficient),) = self.numerator.terms.items()
        common = self.denominator.common_monomial(self.denominator)
        rest = self.denominator.divided_by_monomial(common)
        content = rest.content()
        coefficient = Fraction(top_coefficient) / content
        total = rest * constant(1 / content)
        common_poly = Poly({tuple(sorted(common.items())): 1})
        return coefficient, Poly({top: 1}), common_poly, total

    def __getattr__(self, name: str) -> Any:
        """As `Poly.__getattr__`: public questions go to the sympy form."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._sympy_(), name)

    def __reduce__(self) -> tuple[Any, tuple[Poly, Poly, bool, bool]]:
        return _quotient_of, (self.numerator, self.denominator, self.factored, self.contents)

    def _primitive_sides(self) -> tuple[Fraction, Poly, Poly]:
        """The `contents` form's coefficient and its two primitive sums."""
        top_content, bottom_content = self.numerator.content(), self.denominator.content()
        above = self.numerator * constant(1 / top_content)
        below = self.denominator * constant(1 / bottom_content)
        return top_content / bottom_content, above, below

    def _sympy_(self) -> Any:
        """What `analysis.intensity` built before: a sum over a number unevaluated, so
        that `(n + 1)/48` is not distributed into `n/48 + 1/48`; `factored`, the product
        `simplify` returns."""
        if self._sympy is None:
            import sympy

            top, bottom = self.numerator._sympy_(), self.denominator._sympy_()
            if self.factored:
                coefficient, above, below, total = self._factors()
                self._sympy = sympy.Mul(
                    sympy.Rational(coefficient.numerator, coefficient.denominator),
                    above._sympy_(),
                    sympy.Pow(below._sympy_(), -1),
                    sympy.Pow(total._sympy_(), -1),
                )
            elif self.contents:
                coefficient, above, below = self._primitive_sides()
                factors = []
                if coefficient != 1:
                    rational = sympy.Rational(coefficient.numerator, coefficient.denominator)
                    factors.append(rational)
                for side, power in ((above, 1), (below, -1)):
                    for part in monomial_and_sum(side):
                        if part is not None and part != ONE:
                            factors.append(sympy.Pow(part._sympy_(), power))
                self._sympy = sympy.Mul(*factors)
            elif self.denominator.is_number:
                inverse = sympy.Pow(bottom, -1, evaluate=False)
                self._sympy = sympy.Mul(top, inverse, evaluate=False)
            else:
                self._sympy = top / bottom
        return self._sympy

    @property
    def free_symbols(self) -> set[Poly]:
        return self.numerator.free_symbols | self.denominator.free_symbols

    @property
    def is_number(self) -> bool:
        return False  # its denominator, or its numerator over a number, has symbols

    def has(self, *items: object) -> bool:
        return self.numerator.has(*items) or self.denominator.has(*items)

    def subs(self, *arguments: Any, **keywords: Any) -> Any:
        """A number when the values leave no symbol (exactly what sympy's `subs` gives);
        otherwise sympy's `subs` of the sympy form."""
        top = self.numerator.subs(*arguments, **keywords)
        bottom = self.denominator.subs(*arguments, **keywords)
        if is_poly(top) and is_poly(bottom):
            above, below = top.constant_value(), bottom.constant_value()
            if above is not None and below:
                return constant(_quotient(above, below))
        return self._sympy_().subs(*arguments, **keywords)

    def __str__(self) -> str:
        if self._text is None:
            text = self._fast_text()
            self._text = text if text is not None else str(self._sympy_())
        return self._text

    __repr__ = __str__

    def _fast_text(self) -> str | None:
        """sympy's text for the shapes the cancellation builds (`(p + 1)/20`,
        `(n + 3)/(4*n + 20)`, `n/(4*n + 20)`); None for others, which sympy writes."""
        if self.factored:
            return self._factored_text()
        if self.contents:
            return self._contents_text()
        top, bottom = self.numerator, self.denominator
        top_text, bottom_text = polynomial_text(top), polynomial_text(bottom)
        if top_text is None or bottom_text is None:
            return None
        if len(bottom.terms) > 1:
            below = f"({bottom_text})"
        elif bottom.is_Integer and bottom.constant_value() > 0:  # type: ignore[operator]
            below = bottom_text
        else:
            return None  # a monomial below: `1/(12*n)` is sympy's to write
        if len(top.terms) > 1:
            return f"({top_text})/{below}"
        if len(bottom.terms) == 1 or not top.terms:
            return None
        ((monomial, coefficient),) = top.terms.items()
        if not monomial or coefficient.denominator != 1:
            return None
        return f"{top_text}/{below}"

    def _factored_text(self) -> str:
        """As sympy's `_print_Mul` writes the factored product: the factors above (the
        coefficient's numerator first), then `/` and those below, in parentheses when
        there are several; symbols in sympy's order, by name, on each side."""
        coefficient, above, below, total = self._factors()
        ((powers, _),) = below.terms.items()
        alone = coefficient == 1 and above.is_number and len(total.terms) == 1
        if alone and len(powers) == 1 and powers[0][1] > 1:
            ((name, _), power) = powers[0]  # a power alone, as sympy's `_print_Pow` writes it
            return f"{name}**(-{power})"
        tops = [] if coefficient.numerator == 1 else [str(coefficient.numerator)]
        bottoms = [] if coefficient.denominator == 1 else [str(coefficient.denominator)]
        for monomial, side in ((above, tops), (below, bottoms)):
            ((powers, _),) = monomial.terms.items()
            side += power_texts(powers)
        if len(total.terms) > 1:
            bottoms.append(f"({polynomial_text(total)})")
        top_text = "*".join(tops) or "1"
        if len(bottoms) == 1:
            return f"{top_text}/{bottoms[0]}"
        return f"{top_text}/({'*'.join(bottoms)})"

    def _contents_text(self) -> str | None:
        """As sympy's `_print_Mul` writes the `contents` product: the coefficient's
        numerator, the top's monomial (its symbols by name, as `Mul` sorts them) and sum,
        `/`, then its denominator and the bottom's monomial and sum."""
        coefficient, above, below = self._primitive_sides()
        tops = [] if coefficient.numerator == 1 else [str(coefficient.numerator)]
        bottoms = [] if coefficient.denominator == 1 else [str(coefficient.denominator)]
        for side, texts in ((above, tops), (below, bottoms)):
            monomial, total = monomial_and_sum(side)
            if monomial is not None:
                ((powers, _),) = monomial.terms.items()
                texts += power_texts(powers)
            if total != ONE:
                text = polynomial_text(total)
                if text is None:
                    return None
                texts.append(f"({text})")
        if not tops or not bottoms:
            return None  # `1/(...)`, or no bottom: shapes the forms here do not build
        if len(bottoms) == 1:
            return f"{'*'.join(tops)}/{bottoms[0]}"
        return f"{'*'.join(tops)}/({'*'.join(bottoms)})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is Quotient:
            return (
                self.numerator == other.numerator
                and self.denominator == other.denominator
                and self.factored == other.factored
                and self.contents == other.contents
            )
        if other.__class__ is Poly or isinstance(other, int | float | Fraction):
            return False  # never a polynomial, and never a number
        if _from_sympy_module(other):
            return bool(self._sympy_() == other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash((Quotient, self.numerator, self.denominator, self.factored, self.contents))

    # Arithmetic and order are sympy's, on the sympy form, as before this type.
    def __add__(self, other: object) -> Any:
        return self._sympy_() + to_sympy(other)

    def __radd__(self, other: object) -> Any:
        return to_sympy(other) + self._sympy_()

    def __sub__(self, other: object) -> Any:
        return self._sympy_() - to_sympy(other)

    def __rsub__(self, other: object) -> Any:
        return to_sympy(other) - self._sympy_()

    def __mul__(self, other: object) -> Any:
        return self._sympy_() * to_sympy(other)

    def __rmul__(self, other: object) -> Any:
        return to_sympy(other) * self._sympy_()

    def __truediv__(self, other: object) -> Any:
        return self._sympy_() / to_sympy(other)

    def __rtruediv__(self, other: object) -> Any:
        return to_sympy(other) / self._sympy_()

    def __pow__(self, power: object) -> Any:
        return self._sympy_() ** to_sympy(power)

    def __neg__(self) -> Any:
        return -self._sympy_()

    def __lt__(self, other: object) -> Any:
        return self._sympy_() < to_sympy(other)

    def __le__(self, other: object) -> Any:
        return self._sympy_() <= to_sympy(other)

    def __gt__(self, other: object) -> Any:
        return self._sympy_() > to_sympy(other)

    def __ge__(self, other: object) -> Any:
        return self._sympy_() >= to_sympy(other)

    def __float__(self) -> float:
        return float(self._sympy_())


class Infinity:
    """sympy's `oo` as a limit (an intensity that grows without bound, naive dgemm's
    `n/12`), without importing sympy: it prints `oo`, and any other use is the sympy
    `oo`'s. One value, `INFINITY`."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._sympy_(), name)

    def __reduce__(self) -> str:
        return "INFINITY"

    def _sympy_(self) -> Any:
        import sympy

        return sympy.oo

    @property
    def is_number(self) -> bool:
        return True

    @property
    def free_symbols(self) -> set[Poly]:
        return set()

    def __str__(self) -> str:
        return "oo"

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        if other.__class__ is Infinity:
            return True
        if other.__class__ in (Poly, Quotient) or isinstance(other, int | Fraction):
            return False
        if isinstance(other, float):
            return other == float("inf")
        if _from_sympy_module(other):
            return bool(self._sympy_() == other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(float("inf"))

    def __float__(self) -> float:
        return float("inf")


INFINITY = Infinity()


def monomial_and_sum(poly: Poly) -> tuple[Poly | None, Poly]:
    """A sum's common monomial (None when it has none) and the sum divided by it."""
    common = poly.common_monomial(poly)
    if not common:
        return None, poly
    return Poly({tuple(sorted(common.items())): 1}), poly.divided_by_monomial(common)


def _quotient_of(
    numerator: Poly, denominator: Poly, factored: bool, contents: bool = False
) -> Quotient:
    """Unpickling: `Quotient` with its keywords."""
    return Quotient(numerator, denominator, factored=factored, contents=contents)


def is_infinity(value: object) -> bool:
    return value.__class__ is Infinity


_PROBES = (1, 2**20)


def probe_values(poly: Poly) -> Iterator[Coefficient]:
    """The exact values with every symbol at 1 and at 2**20, and with the sizes at 2**20
    and the other symbols at 1: values every kind of symbol may take (sizes, counters,
    trips, fractions, reals), the last one telling a size from a counter (`m - i`, 0 at
    the first two). One of them positive proves the polynomial is not nonpositive
    everywhere, so sympy's `is_nonpositive` (or, with one of them at least 0,
    `is_negative`) cannot be True, and it need not be asked. Yielded one by one, each
    summed off the terms (no Poly is built): the first often settles the question."""
    low, high = _PROBES
    yield _value_at(poly, lambda var: low)
    yield _value_at(poly, lambda var: high)
    yield _value_at(poly, lambda var: high if var[1] == "size" else low)


def _value_at(poly: Poly, value_of: Callable[[Var], int]) -> Coefficient:
    """The exact value with each symbol at `value_of` it, a hinge at its argument's
    (`Max(0, c - s)`, as `subs` evaluates it)."""
    total: Coefficient = 0
    for monomial, coefficient in poly.terms.items():
        term = coefficient
        for var, power in monomial:
            value: Coefficient
            if var[1] == HINGE:
                argument = _value_at(var[0].argument, value_of)  # type: ignore[attr-defined]
                value = argument if argument > 0 else 0
            else:
                value = value_of(var)
            term = term * value**power
        total = total + term
    return total


def is_quotient(value: object) -> bool:
    return value.__class__ is Quotient


def _quotient(top: Coefficient, bottom: Coefficient) -> Coefficient:
    """`top / bottom`, exact (`/` of two ints is a float)."""
    if top.__class__ is int and bottom.__class__ is int:
        return top // bottom if top % bottom == 0 else Fraction(top, bottom)
    value = Fraction(top) / bottom
    return value.numerator if value.denominator == 1 else value


def _multiply(m1: Monomial, m2: Monomial) -> Monomial:
    powers = dict(m1)
    for var, power in m2:
        powers[var] = powers.get(var, 0) + power
    return tuple(sorted(powers.items()))


@cache
def symbol(name: str, kind: str) -> Poly:
    """The symbol `name` of the given kind (see `KIND_ASSUMPTIONS`)."""
    if kind not in _ASSUMPTIONS0:
        raise ValueError(f"unknown kind of symbol: {kind}")
    return Poly({(((name, kind), 1),): 1})


def constant(value: int | Fraction) -> Poly:
    """The constant polynomial `value`."""
    if not value:
        return ZERO
    if value.__class__ is not int:
        exact = value if value.__class__ is Fraction else Fraction(value)  # a float, a bool
        value = exact.numerator if exact.denominator == 1 else exact
    return Poly({(): value})


ZERO = Poly({})
ONE = Poly({(): 1})


def is_poly(value: object) -> bool:
    return value.__class__ is Poly


def _var_of(item: object) -> Var | None:
    """The symbol identity of a Poly symbol or a sympy Symbol of a known kind."""
    if item.__class__ is Poly:
        return item.var()
    if _from_sympy_module(item) and getattr(item, "is_Symbol", False):
        content = item._hashable_content()  # type: ignore[attr-defined]
        if type(item).__name__ != "Symbol":
            return None  # a Dummy or a Wild
        kind = _KIND_OF_ASSUMPTIONS.get(tuple(content[1:]))
        return None if kind is None else (content[0], kind)
    return None


def _sympy_symbol(var: Var) -> Any:
    import sympy

    if var[1] == HINGE:
        made = _SYMPY_HINGES.get(var[0])
        if made is None:  # `Max` asks its arguments' assumptions: once per hinge
            made = _SYMPY_HINGES[var[0]] = sympy.Max(0, var[0].argument._sympy_())  # type: ignore[attr-defined]
        return made
    return sympy.Symbol(var[0], **KIND_ASSUMPTIONS[var[1]])


_SYMPY_HINGES: dict[str, Any] = {}
"""The sympy `Max` of each hinge's text (the text names its argument)."""


def to_sympy(value: object) -> Any:
    """`value` as a sympy object (Poly converted, numbers made exact, sympy unchanged)."""
    if value.__class__ in (Poly, Quotient, Infinity):
        return value._sympy_()
    import sympy

    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    return sympy.sympify(value)


def as_expression(value: Any) -> Any:
    """`sympy.sympify` that keeps polynomials and numbers as `Poly` (and imports sympy only
    for anything else, such as text)."""
    if value.__class__ is Poly:
        return value
    if isinstance(value, int | Fraction) and not isinstance(value, bool):
        return constant(value)
    if _from_sympy_module(value):
        return normal(value)
    import sympy

    return normal(sympy.sympify(value))


def normal(value: Any) -> Any:
    """A sympy result as a Poly when it is a polynomial in symbols of known kinds (the
    canonical rule); anything else unchanged."""
    if value.__class__ is Poly or not _from_sympy_module(value):
        if isinstance(value, int) and not isinstance(value, bool):
            return constant(value)
        return value
    terms = _sympy_terms(value)
    return value if terms is None else Poly(terms)


def _sympy_terms(expr: Any) -> dict[Monomial, Coefficient] | None:
    if getattr(expr, "is_Rational", False):
        return {(): _quotient(int(expr.p), int(expr.q))} if expr != 0 else {}
    if not getattr(expr, "is_commutative", False):
        return None
    summands = expr.args if expr.is_Add else (expr,)
    terms: dict[Monomial, Coefficient] = {}
    for summand in summands:
        coefficient: Coefficient = 1
        powers: dict[Var, int] = {}
        for factor in summand.args if summand.is_Mul else (summand,):
            if factor.is_Rational:
                coefficient *= _quotient(int(factor.p), int(factor.q))
                continue
            base, exponent = (factor.base, factor.exp) if factor.is_Pow else (factor, 1)
            var = _var_of(base)
            if var is None or not (getattr(exponent, "is_number", True) and exponent > 0):
                return None  # `R**K`: a symbolic exponent is no polynomial
            if exponent != int(exponent):
                return None
            powers[var] = powers.get(var, 0) + int(exponent)
        monomial = tuple(sorted(powers.items()))
        total = terms.get(monomial, 0) + coefficient
        if total:
            terms[monomial] = total.numerator if total.denominator == 1 else total
        else:
            terms.pop(monomial, None)
    return terms


def expand(value: Any) -> Any:
    """`sympy.expand`, which a Poly needs no call for."""
    if value.__class__ is Poly:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return constant(value)
    import sympy

    return normal(sympy.expand(value))


# -- text, as sympy's printer writes a polynomial ---------------------------------------


def power_texts(monomial: Monomial) -> list[str]:
    """A monomial's powers as sympy writes each factor of a product: `n`, `n**2`, by name."""
    return [name if power == 1 else f"{name}**{power}" for (name, _), power in monomial]


def polynomial_text(poly: Poly) -> str | None:
    """`str(poly)` as sympy's printer writes it, read off the terms (sympy's printer costs
    about half a millisecond a polynomial); None when two symbols share a name, whose order
    only sympy knows."""
    if not poly.terms:
        return "0"
    ordered = ordered_terms(poly)
    if ordered is None:
        return None
    text = ""
    for monomial, coefficient in ordered:
        part = _term_text(coefficient, monomial)
        negative = part.startswith("-")
        if not text:
            text = part
        else:
            text += (" - " if negative else " + ") + (part[1:] if negative else part)
    return text


def ordered_terms(poly: Poly) -> list[tuple[Monomial, Coefficient]] | None:
    """The terms in the order sympy prints them (`Add.as_ordered_terms`); None when two
    symbols share a name, whose order only sympy knows."""
    terms = list(poly.terms.items())
    names = sorted({var for monomial, _ in terms for var, _ in monomial}, key=_gen_key)
    if len({name for name, _ in names}) != len(names):
        return None  # one name, two kinds: leave the order to sympy
    if _number_minus_term(terms):
        return sorted(terms, key=lambda t: bool(t[0]))  # sympy's `1 - n` special case
    # sympy's default order: lexicographic in the sorted symbols, highest first.
    return sorted(terms, key=lambda t: tuple(dict(t[0]).get(v, 0) for v in names), reverse=True)


def _rational_text(value: Coefficient) -> str:
    return (
        str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    )


def _term_text(coefficient: Coefficient, monomial: Monomial) -> str:
    """As sympy's `_print_Mul` writes it: sign, numerator factors, then `/denominator`."""
    if not monomial:
        return _rational_text(coefficient)
    sign = "-" if coefficient < 0 else ""
    numerator, denominator = abs(coefficient.numerator), coefficient.denominator
    if any(var[1] == HINGE for var, _ in monomial):  # hinges after symbols, as sympy sorts
        monomial = tuple(sorted(monomial, key=lambda pair: _gen_key(pair[0])))
    factors = [name if power == 1 else f"{name}**{power}" for (name, _), power in monomial]
    if numerator != 1:
        factors.insert(0, str(numerator))
    text = sign + "*".join(factors)
    return text if denominator == 1 else f"{text}/{denominator}"


def _number_minus_term(terms: list[tuple[Monomial, Coefficient]]) -> bool:
    """A positive number plus one negative multiple of one factor, printed number first."""
    if len(terms) != 2:
        return False
    number = next((c for m, c in terms if not m), None)
    other = next(((m, c) for m, c in terms if m), None)
    return (
        number is not None
        and other is not None
        and number > 0
        and other[1] < 0
        and len(other[0]) == 1
    )
