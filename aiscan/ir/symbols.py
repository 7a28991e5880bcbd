"""Symbol conventions shared by every frontend and the analysis.

Sizes are positive integers (as Kerncraft declares them), loop variables are integers, and
branch fractions are reals in [0, 1]. One constructor per kind keeps sympy's assumption-aware
symbol identity consistent across modules. The symbols are `aiscan.algebra` polynomials, equal
(and hashing alike) to the sympy symbols with these assumptions, so building a kernel's counts
imports no sympy.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aiscan.algebra import Poly, is_poly, symbol

__all__ = [
    "MAX_INTEGER",
    "MAX_INTEGER_BITS",
    "data_symbol",
    "fraction_symbol",
    "is_data_symbol",
    "is_size_symbol",
    "loop_symbol",
    "size_symbol",
    "trip_symbol",
]

MAX_INTEGER_BITS = 64
MAX_INTEGER = 2**MAX_INTEGER_BITS
"""No size, index or trip count is this large (no C integer type holds it). Both frontends
read a larger integer as an unknown value, so that no input can make the analysis compute
with, or print, numbers of unbounded size (`10**10**10`, `1 << 4000000000`)."""


@cache
def size_symbol(name: str) -> Poly:
    """A problem size such as `n`, `N`, `nnz`: a positive integer that may grow."""
    return symbol(name, "size")


@cache
def loop_symbol(name: str) -> Poly:
    """A loop variable, bound by its loop."""
    return symbol(name, "loop")


@cache
def trip_symbol(name: str) -> Poly:
    """A data-dependent trip count the analysis cannot derive (named, never guessed)."""
    return symbol(name, "trip")


@cache
def fraction_symbol(name: str) -> Poly:
    """The fraction of executions that take a branch; lies in [0, 1]."""
    return symbol(name, "fraction")


@cache
def data_symbol(text: str) -> Poly:
    """An index read from data (`neigh_idx[a, b]` in `G[k, neigh_idx[a, b]]`): one element,
    at an address the analysis cannot know. An access whose index holds one is indirect."""
    return symbol(f"{_DATA}{text}", "plain")


_DATA = "data:"


def is_data_symbol(symbol: Any) -> bool:
    return bool(getattr(symbol, "name", "").startswith(_DATA))


def is_size_symbol(symbol: Any) -> bool:
    """Sizes grow in limits; fractions and loop variables do not. `symbol` is a Poly symbol
    or a sympy one."""
    if is_poly(symbol):
        return bool(symbol.kind == "size")
    return bool(symbol.is_positive and symbol.is_integer)
