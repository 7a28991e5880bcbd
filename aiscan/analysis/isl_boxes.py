"""A parametric isl set that is a box at every value of its parameters, counted in Python.

An exact count fixes each of a nest's three parametric sets at every grid point and
counts it there (`polyhedral._counts_cached`): on `np.linalg.solve`'s LU, 252 sets fixed and
counted, and each of them was a box (an array's rows and columns, whole or a range). Where
a set is such a box over the sizes, each bound affine in them (`0 <= e0 < P1`), its count
at any sizes is the product of its ranges where it is not empty, and where that is, read
off isl's own domain of the bounds. `box_counter` says so once per parametric set, with
isl's equality of the set and the box it builds from those bounds, so the counts are the
ones isl gives at each point. Any other set gives None, and is counted at each point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["CountAt", "box_counter"]

CountAt = Callable[[Sequence[int]], int]
"""A set's count at the values of its parameters `P0, P1, ...` (in that order)."""

_Affine = tuple[int, tuple[tuple[int, int], ...]]
"""A constant and (parameter index, coefficient) pairs."""


def box_counter(parametric: Any) -> CountAt | None:
    """`parametric`'s count as a function of its parameters' values, where it is a box
    with affine bounds (see the module docstring); None otherwise."""
    import islpy as isl

    try:
        points = parametric.coalesce()
        if points.is_empty():  # at every value of the parameters
            return lambda values: 0
        return _box_counter(isl, points)
    except isl.Error:
        return None


def _box_counter(isl: Any, points: Any) -> CountAt | None:
    """`box_counter` of a set that is not empty at every value of its parameters."""
    space = points.get_space()
    local = isl.LocalSpace.from_space(space)
    box = isl.Set.universe(space)
    ranges: list[tuple[_Affine, _Affine]] = []
    domain = None
    for dim in range(points.dim(isl.dim_type.set)):
        low = _single_affine(isl, points.dim_min(dim))
        high = _single_affine(isl, points.dim_max(dim))
        if low is None or high is None:
            return None
        (low_domain, low_aff), (high_domain, high_aff) = low, high
        for where in (low_domain, high_domain):
            domain = where if domain is None else domain.intersect(where)
        low_terms, high_terms = _terms(isl, low_aff), _terms(isl, high_aff)
        if low_terms is None or high_terms is None:
            return None
        for (constant, terms), sign in ((low_terms, 1), (high_terms, -1)):
            # x - low >= 0 and high - x >= 0
            constraint = isl.Constraint.alloc_inequality(local)
            constraint = constraint.set_coefficient_val(isl.dim_type.set, dim, sign)
            for index, value in terms:
                position = space.find_dim_by_name(isl.dim_type.param, f"P{index}")
                constraint = constraint.set_coefficient_val(
                    isl.dim_type.param, position, -sign * value
                )
            box = box.add_constraint(constraint.set_constant_val(-sign * constant))
        ranges.append((low_terms, high_terms))
    if domain is None:
        return None  # no dimension: a set of one point or none, left to isl
    if not box.intersect_params(domain).is_equal(points):
        return None
    runs = _conditions(isl, domain)
    if runs is None:
        return None

    def counter(values: Sequence[int]) -> int:
        if not any(all(_holds(c, values) for c in piece) for piece in runs):
            return 0
        count = 1
        for low, high in ranges:
            count *= _value(high, values) - _value(low, values) + 1
        return count

    return counter


def _index(name: str | None) -> int | None:
    """`P3` -> 3: the parameter's place among the values (`polyhedral._parameters`)."""
    if name is None or not name.startswith("P") or not name[1:].isdigit():
        return None
    return int(name[1:])


def _single_affine(isl: Any, bound: Any) -> tuple[Any, Any] | None:
    """The one piece of a bound, where it is an integer affine function of the
    parameters: (its domain, its function)."""
    if bound.n_piece() != 1:
        return None
    ((domain, aff),) = bound.get_pieces()
    if aff.dim(isl.dim_type.div) or aff.get_denominator_val().to_python() != 1:
        return None
    return domain, aff


def _terms(isl: Any, affine: Any) -> _Affine | None:
    """An `Aff` or a `Constraint` over the parameters as a constant and (parameter index,
    coefficient) pairs, read by the parameters' names; None for a name not `P<k>`."""
    space = affine.get_space()
    terms = []
    for k in range(space.dim(isl.dim_type.param)):
        value = affine.get_coefficient_val(isl.dim_type.param, k).to_python()
        if value:
            index = _index(space.get_dim_name(isl.dim_type.param, k))
            if index is None:
                return None
            terms.append((index, value))
    return affine.get_constant_val().to_python(), tuple(terms)


def _value(affine: _Affine, values: Sequence[int]) -> int:
    constant, terms = affine
    return constant + sum(coefficient * values[index] for index, coefficient in terms)


_Condition = tuple[_Affine, bool]
"""An affine function of the parameters and whether it must be 0 (else >= 0)."""


def _conditions(isl: Any, domain: Any) -> list[list[_Condition]] | None:
    """The parameters' domain as a union of conjunctions of affine conditions; None where
    a piece has existential variables."""
    pieces = []
    for basic in domain.coalesce().get_basic_sets():
        if basic.dim(isl.dim_type.div):
            return None
        conditions = []
        for constraint in basic.get_constraints():
            affine = _terms(isl, constraint)
            if affine is None:
                return None
            conditions.append((affine, bool(constraint.is_equality())))
        pieces.append(conditions)
    return pieces


def _holds(condition: _Condition, values: Sequence[int]) -> bool:
    affine, equality = condition
    value = _value(affine, values)
    return value == 0 if equality else value >= 0
