"""What each `tl.*` function does to FLOPs, declared once as data (STYLE.md: semantics in
tables keyed by name). Names are the last part of the qualified name: `tl.exp` and
`tl.math.exp` are one entry."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["FREE_ELEMENTWISE", "REDUCTIONS", "SPECIALS", "TRANSPARENT"]

SPECIALS: frozenset[str] = frozenset(
    {
        "exp",
        "exp2",
        "log",
        "log2",
        "log1p",
        "sqrt",
        "sqrt_rn",
        "rsqrt",
        "sin",
        "cos",
        "tanh",
        "sigmoid",
        "erf",
        "pow",
        "div_rn",
        "fast_expf",
        "fast_dividef",
    }
)
"""One special operation per lane (MODEL.md: reported apart from `+ - * /`)."""

FREE_ELEMENTWISE: frozenset[str] = frozenset(
    {"abs", "maximum", "minimum", "clamp", "where", "floor", "ceil", "fabs"}
)
"""Element-wise, no FLOP: selections, comparisons and sign flips (MODEL.md)."""

REDUCTIONS: Mapping[str, str | None] = {
    "sum": "add",
    "max": None,
    "min": None,
    "argmax": None,
    "argmin": None,
}
"""A reduction of extent e does e - 1 combines per result; `add` counts them as FLOPs,
None (comparisons) as none."""

TRANSPARENT: frozenset[str] = frozenset({"multiple_of", "max_contiguous", "max_constancy"})
"""Compiler hints that return their first argument unchanged."""
