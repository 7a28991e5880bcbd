"""How lint messages state their figures: exact expressions with a short decimal beside."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY
from aiscan.analysis.intensity import substitute_sizes
from aiscan.roofline.units import format_si

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["bytes_text", "exact_text", "flops_rate", "intensity_text", "ratio_text"]


def exact_text(expr: sympy.Expr) -> str:
    """`24*n`, `n/12`, or `1/12 ≈ 0.0833` when the exact value is a non-integer number."""
    text = str(expr)
    if expr.is_number and not expr.is_integer:
        return f"{text} ≈ {float(expr):.3g}"
    return text


def intensity_text(expr: sympy.Expr | None, sizes: dict[str, int] | None = None) -> str:
    """An intensity in F/B; with sizes that bind its symbols, also its value there."""
    if expr is None:
        return "no memory traffic"
    text = f"{exact_text(expr)} F/B"
    if sizes and expr.free_symbols:
        value = substitute_sizes(expr, sizes)
        if value.is_number:
            text += f" ({float(value):.3g} F/B at {_sizes_text(sizes, expr)})"
    return text


def bytes_text(expr: sympy.Expr) -> str:
    return f"{exact_text(expr)} bytes"


def flops_rate(value: float) -> str:
    return format_si(value, "FLOP/s")


def ratio_text(value: float) -> str:
    """`1/64` for a ratio that is one over an integer, else three digits."""
    if 0 < value < 1 and abs(1 / value - round(1 / value)) < 0.01 / value:
        return f"1/{round(1 / value)}"
    return f"{value:.3g}"


def _sizes_text(sizes: dict[str, int], expr: sympy.Expr) -> str:
    names = sorted(s.name for s in expr.free_symbols if s.name in sizes)
    return ", ".join(f"{name} = {sizes[name]}" for name in names)
