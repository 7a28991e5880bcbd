"""The shared symbol conventions (`aiscan.ir.symbols`) as sympy symbols.

The Python frontend computes with sympy throughout (shapes, views, library calls), so it
takes its symbols in sympy's own type; they equal the `aiscan.algebra` symbols the C
frontend and the analysis use, so both meet in the same dictionaries and sets. No cache
here: the shared constructors are cached, and a `Poly` keeps its sympy form.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiscan.algebra import to_sympy
from aiscan.ir import symbols
from aiscan.ir.symbols import MAX_INTEGER, MAX_INTEGER_BITS, is_size_symbol

if TYPE_CHECKING:
    import sympy

__all__ = [
    "MAX_INTEGER",
    "MAX_INTEGER_BITS",
    "data_symbol",
    "fraction_symbol",
    "is_size_symbol",
    "loop_symbol",
    "size_symbol",
    "trip_symbol",
]


def size_symbol(name: str) -> sympy.Symbol:
    return to_sympy(symbols.size_symbol(name))


def loop_symbol(name: str) -> sympy.Symbol:
    return to_sympy(symbols.loop_symbol(name))


def fraction_symbol(name: str) -> sympy.Symbol:
    return to_sympy(symbols.fraction_symbol(name))


def trip_symbol(name: str) -> sympy.Symbol:
    return to_sympy(symbols.trip_symbol(name))


def data_symbol(text: str) -> sympy.Symbol:
    return to_sympy(symbols.data_symbol(text))
