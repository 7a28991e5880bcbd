"""SI formatting for rates, sizes and times, shared by the plot and the HTML report.

Decimal prefixes only (1 TB/s = 1e12 B/s), matching the device files.
"""

from __future__ import annotations

import math
from typing import Final

__all__ = ["format_si", "format_time"]

_PREFIXES: Final = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
_SUBUNITS: Final = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"), (1e-12, "ps"))


def format_si(value: float, unit: str, digits: int = 4) -> str:
    """`989.4e12, 'FLOP/s'` -> `989.4 TFLOP/s`; four significant digits by default."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}"
    for scale, prefix in _PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


def format_time(seconds: float, digits: int = 3) -> str:
    """`1.0597e-9` -> `1.06 ns`."""
    if seconds == 0 or not math.isfinite(seconds):
        return f"{seconds:g} s"
    for scale, unit in _SUBUNITS:
        if abs(seconds) >= scale:
            return f"{seconds / scale:.{digits}g} {unit}"
    return f"{seconds / 1e-12:.{digits}g} ps"
