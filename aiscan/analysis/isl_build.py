"""A reference's isl map built through isl's constraint API instead of parsed from text.

`polyhedral._map_text` writes a reference's map as isl text, and isl's parser reads each
comparison as piecewise affine functions and the sets between them: about 0.3 ms a map,
a tenth of the first hover on `np.linalg.solve`'s nest (38 maps). Where every loop bound,
subscript and guard is a polynomial that is affine at the sizes, read as the text reads
it (`isl_text.collected`), the same map is built here from its constraints in about a
third of the time. Anything else (a floor, a Mod, a Min, a disjunction, `!=`, an array
name isl's parser would read otherwise) gives None, and the caller parses the text as
before. Both are the same integer map, so they count the same
(`tests/test_isl_build.py` compares them on the fixtures' references).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from aiscan.algebra import SYMPY
from aiscan.analysis.domain import LoopLike
from aiscan.analysis.isl_text import NotAffine, Param, Var, collected, plain_terms
from aiscan.ir.symbols import loop_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["built_map"]

_Key = tuple[str, int | str]
"""A column of a constraint: ("in", k) the time's k-th dimension, ("out", k) the
element's k-th subscript, ("param", name) a size, ("cst", 0) the constant."""
_Form = dict[_Key, int]
_ONE: _Key = ("cst", 0)


def built_map(
    array: str,
    index: Sequence[sympy.Expr],
    loops: Sequence[LoopLike],
    times: Sequence[int | None],
    guards: Sequence[sympy.Basic],
    sizes: dict[sympy.Symbol, Any],
    width: int,
) -> Any | None:
    """`{ [t...] -> array[index...] : loops and guards }` over `sizes` (numbers, or
    `Param`s: isl parameters), the time's fixed positions `times` (None where the loop at
    that level iterates); None where it is not built here (see the module docstring).
    The guards are in negation normal form."""
    if not _read_alike(array):
        return None
    try:
        equalities, inequalities = _constraints(index, loops, times, guards, sizes)
    except NotAffine:
        return None
    parameters = [v.name for v in sizes.values() if isinstance(v, Param)]
    return _assembled(array, parameters, width, len(index), equalities, inequalities)


def _constraints(
    index: Sequence[sympy.Expr],
    loops: Sequence[LoopLike],
    times: Sequence[int | None],
    guards: Sequence[sympy.Basic],
    sizes: dict[sympy.Symbol, Any],
) -> tuple[list[_Form], list[_Form]]:
    """The map's equalities and inequalities (`form >= 0`), as `_map_text` writes them."""
    substitution: dict[sympy.Symbol, Any] = dict(sizes)
    variables: dict[sympy.Symbol, _Form] = {}
    equalities = [{("in", k): 1, _ONE: -at} for k, at in enumerate(times) if at is not None]
    inequalities: list[_Form] = []
    for level, loop in enumerate(loops):
        t: _Key = ("in", 2 * level + 1)
        start = _form(loop.start, substitution, variables)
        trip = _form(loop.trip, substitution, variables)
        inequalities += [{t: 1}, _sum(trip, {t: -1, _ONE: -1})]  # 0 <= t <= trip - 1
        var = loop_symbol(loop.var)
        variables[var] = _sum(start, {t: loop.step})
        substitution[var] = Var("", loop.step, f"T{2 * level + 1}")  # a loop's, to `collected`
    for position, expr in enumerate(index):
        equalities.append(_sum(_form(expr, substitution, variables), {("out", position): -1}))
    for guard in guards:
        for relation in _conjuncts(guard):
            left = _form(relation.lhs, substitution, variables)
            right = _form(relation.rhs, substitution, variables)
            operator = relation.rel_op
            if operator == "==":
                equalities.append(_sum(left, _scaled(right, -1)))
            elif operator in ("<", "<="):  # right - left - 1 >= 0, or right - left >= 0
                inequalities.append(_sum(right, _scaled(left, -1), {_ONE: -(operator == "<")}))
            else:  # ">", ">="
                inequalities.append(_sum(left, _scaled(right, -1), {_ONE: -(operator == ">")}))
    return equalities, inequalities


def _conjuncts(guard: sympy.Basic) -> list[Any]:
    """The comparisons `guard` holds all of; NotAffine for anything else."""
    if guard is sympy.true:
        return []
    parts = guard.args if isinstance(guard, sympy.And) else (guard,)
    relational = sympy.core.relational.Relational
    if not all(isinstance(p, relational) and p.rel_op in _OPERATORS for p in parts):
        raise NotAffine  # `or`, `!=`, false: the text writes those
    return list(parts)


_OPERATORS = frozenset({"<", "<=", ">", ">=", "=="})


def _form(
    expr: sympy.Expr, substitution: dict[sympy.Symbol, Any], variables: dict[sympy.Symbol, _Form]
) -> _Form:
    """`expr` at the sizes, each loop variable its `start + step*t`."""
    terms = plain_terms(expr)
    if terms is None:
        raise NotAffine  # a floor, Mod or Min: the text writes those
    found = collected(terms, substitution)
    form: _Form = {("param", name): value for name, value in found.parameters.items()}
    for symbol, value in found.variables.items():
        form = _sum(form, _scaled(variables[symbol], value))
    return _sum(form, {_ONE: found.constant})


def _sum(*forms: _Form) -> _Form:
    total: _Form = {}
    for form in forms:
        for key, value in form.items():
            total[key] = total.get(key, 0) + value
    return total


def _scaled(form: _Form, factor: int) -> _Form:
    return {key: value * factor for key, value in form.items()}


def _assembled(
    array: str,
    parameters: list[str],
    width: int,
    rank: int,
    equalities: list[_Form],
    inequalities: list[_Form],
) -> Any:
    import islpy as isl

    space = isl.Space.create_from_names(
        isl.DEFAULT_CONTEXT,
        in_=[f"t{k}" for k in range(width)],
        out=[f"e{k}" for k in range(rank)],
        params=parameters,
    ).set_tuple_name(isl.dim_type.out, array)
    local = isl.LocalSpace.from_space(space)
    kinds = {"in": isl.dim_type.in_, "out": isl.dim_type.out}
    positions = {name: k for k, name in enumerate(parameters)}
    basic = isl.BasicMap.universe(space)
    for forms, allocate in (
        (equalities, isl.Constraint.alloc_equality),
        (inequalities, isl.Constraint.alloc_inequality),
    ):
        for form in forms:
            constraint = allocate(local)
            for (kind, which), value in form.items():
                if not value:
                    continue
                if kind == "cst":
                    constraint = constraint.set_constant_val(value)
                elif kind == "param":
                    constraint = constraint.set_coefficient_val(
                        isl.dim_type.param, positions[str(which)], value
                    )
                else:
                    constraint = constraint.set_coefficient_val(kinds[kind], int(which), value)
            basic = basic.add_constraint(constraint)
    return isl.Map.from_basic_map(basic)


@lru_cache(maxsize=1024)
def _read_alike(array: str) -> bool:
    """Does isl's parser read `array` as this tuple name (not a keyword, not two tokens)?"""
    import islpy as isl

    try:
        parsed = isl.Map(f"{{ [] -> {array}[] }}")
    except isl.Error:
        return False
    return bool(parsed.get_tuple_name(isl.dim_type.out) == array)
