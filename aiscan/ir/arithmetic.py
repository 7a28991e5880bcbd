"""FLOPs of one arithmetic operator, as both frontends must count them (MODEL.md).

Real operands: 1 of its kind. Complex operands follow the textbook real-operation counts:
`+`/`-` are 2 (1 when only one side is complex), complex×complex is 4 mul + 1 add + 1 sub,
complex×real 2 mul, complex÷complex 6 mul + 2 add + 1 sub + 2 div, complex÷real 2 div.
"""

from __future__ import annotations

from aiscan.ir.nodes import FlopTally

__all__ = ["LARGEST_LITERAL_POWER", "literal_power_multiplies", "operator_flops"]

LARGEST_LITERAL_POWER = 16
"""`x**p` for a literal integer `p` up to this is `p - 1` multiplies (MODEL.md); larger or
non-integer exponents stay a special `power` call."""


def literal_power_multiplies(exponent: object) -> int | None:
    """Multiplies of `x**exponent` for a literal 1 <= exponent <= 16 that is an integer
    (`3` or `3.0`), as compilers and XLA expand it; None for any other exponent."""
    if isinstance(exponent, bool) or not isinstance(exponent, (int, float)):
        return None
    if exponent != int(exponent) or not 1 <= exponent <= LARGEST_LITERAL_POWER:
        return None
    return int(exponent) - 1


def operator_flops(kind: str, element_complex: bool, both_complex: bool) -> FlopTally:
    """`kind` is add, sub, mul or div; `element_complex` when either operand is complex."""
    if not element_complex:
        return FlopTally(**{kind: 1})
    if kind in ("add", "sub"):
        return FlopTally(**{kind: 2 if both_complex else 1})
    if kind == "mul":
        return FlopTally(mul=4, add=1, sub=1) if both_complex else FlopTally(mul=2)
    return FlopTally(mul=6, add=2, sub=1, div=2) if both_complex else FlopTally(div=2)
