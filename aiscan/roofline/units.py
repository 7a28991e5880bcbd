"""SI formatting for rates, sizes and times, shared by the plot and the HTML report.

Decimal prefixes (1 TB/s = 1e12 B/s), matching the device files; capacities the file gives
in binary units (`32768`, a 32 KiB L1) are written in them (`format_bytes`).
"""

from __future__ import annotations

import math
from typing import Final

__all__ = ["format_binary", "format_bytes", "format_si", "format_time"]

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


def format_bytes(value: float) -> str:
    """A capacity as the device file means it: `32768` -> `32 KiB`, `3670016` -> `3.5 MiB`,
    `384e6` -> `384 MB`, `20.736e6` -> `20.736 MB`; 4 significant digits, SI, for others.

    A round decimal figure (three significant digits) stays decimal; else a number of KiB,
    MiB or GiB below 1024 with at most four significant digits is binary; else an exact
    decimal of up to six digits. `format_si` alone wrote a 32 KiB L1 as "32.77 kB"."""
    if value <= 0 or not math.isfinite(value):
        return format_si(value, "B")
    shown = format_si(value, "B", 3)
    if _exact(shown, value):
        return shown
    for power, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        count = value / (1 << power)
        if 1 <= count < 1024 and float(f"{count:.4g}") == count:
            return f"{count:.4g} {unit}"
    shown = format_si(value, "B", 6)
    return shown if _exact(shown, value) else format_si(value, "B")


def format_binary(value: float, digits: int = 4) -> str:
    """Bytes in KiB, MiB or GiB (`294976` -> `288.1 KiB`): a working set written in the
    units of the cache capacity it is compared with."""
    for power, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if abs(value) >= 1 << power:
            return f"{value / (1 << power):.{digits}g} {unit}"
    return f"{value:.{digits}g} B"


def _exact(shown: str, value: float) -> bool:
    """Whether `format_si`'s text (`20.736 MB`) is `value` exactly."""
    number, unit = shown.split(" ", 1)
    scale = dict((prefix, scale) for scale, prefix in _PREFIXES).get(unit[:-1], 1.0)
    return math.isclose(float(number) * scale, value, rel_tol=1e-12, abs_tol=0.0)


def format_time(seconds: float, digits: int = 3) -> str:
    """`1.0597e-9` -> `1.06 ns`."""
    if seconds == 0 or not math.isfinite(seconds):
        return f"{seconds:g} s"
    for scale, unit in _SUBUNITS:
        if abs(seconds) >= scale:
            return f"{seconds / scale:.{digits}g} {unit}"
    return f"{seconds / 1e-12:.{digits}g} ps"
