"""The cache model's range between a cache's safe share and its whole capacity, as report
text and JSON (issue 32: a range whose width is stated).

Where a layer condition holds only when a working set may fill the whole cache, a level's
bytes have two ends: the placed one (the device's safety factor, 1/2 by default, the ECM
margin) and the whole cache's (what an LRU cache keeps). Both are stated at the sizes,
with the width of the range and the loops whose conditions decide it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aiscan.analysis.cache_model import LayerCondition, LevelTraffic
from aiscan.analysis.intensity import substitute_sizes
from aiscan.report.expressions import expression_text, numeric_value
from aiscan.roofline.hierarchy import DeviceCacheTraffic

__all__ = ["range_json", "range_lines"]


@dataclass(frozen=True, slots=True)
class _Ends:
    placed_bytes: float
    whole_bytes: float

    @property
    def width(self) -> float:
        """How many times the placed end is the whole cache's (the smaller one)."""
        return self.placed_bytes / self.whole_bytes


def _ends(level: LevelTraffic, sizes: Mapping[str, int]) -> _Ends | None:
    """Both ends at the sizes; None without a range (the whole cache's end not below the
    placed one, or either not a number)."""
    whole = level.whole_cache
    if whole is None or not sizes:
        return None
    placed = numeric_value(substitute_sizes(level.total, sizes))
    other = numeric_value(substitute_sizes(whole.total, sizes))
    if placed is None or other is None or not 0 < other < placed:
        return None  # (a nest starts cold: the whole cache's end moves its compulsory lines)
    return _Ends(placed, other)


def range_lines(traffic: DeviceCacheTraffic, sizes: Mapping[str, int]) -> list[str]:
    """One line per level whose bytes are a range: `range, LL → DRAM: 14,267,712 B with
    working sets in half the cache (placed) to 638,400 B in the whole cache, 22.3 times
    wide: the layer condition of loop `k` (line 21) holds only in the whole cache`."""
    lines = []
    for inner, level in zip(traffic.levels, traffic.levels[1:], strict=False):
        ends = _ends(level, sizes)
        if ends is None or level.whole_cache is None:
            continue
        share = _share_text(level.whole_cache.safety_factor)
        lines.append(
            f"      range, {inner.level} → {level.level}: {_bytes_text(ends.placed_bytes)} "
            f"with working sets in {share} the cache (placed) to "
            f"{_bytes_text(ends.whole_bytes)} in the whole cache, {_width_text(ends.width)} "
            f"times wide: {_conditions_text(level.whole_cache.conditions, sizes)}"
        )
    return lines


def range_json(level: LevelTraffic, sizes: Mapping[str, int]) -> dict[str, Any]:
    """Schema 1.8: `whole_cache` beside a level whose bytes are a range, else nothing."""
    ends = _ends(level, sizes)
    whole = level.whole_cache
    if ends is None or whole is None:
        return {}
    return {
        "whole_cache": {
            "read": expression_text(whole.read),
            "write": expression_text(whole.write),
            "value": ends.whole_bytes,
            "placed_value": ends.placed_bytes,
            "width": ends.width,
            "safety_factor": whole.safety_factor,
            "loops": [
                {"loop": var, "line": line, **({"iterations": pieces} if pieces else {})}
                for (var, line), pieces in _loops(whole.conditions, sizes).items()
            ],
        }
    }


def _loops(
    conditions: tuple[LayerCondition, ...], sizes: Mapping[str, int]
) -> dict[tuple[str, int], list[str]]:
    """Each loop once, with the pieces of its range (`0 to 20`, at the sizes) where it
    was split there; no pieces where the condition holds for the whole range."""
    loops: dict[tuple[str, int], list[str]] = {}
    for c in conditions:
        pieces = loops.setdefault((c.loop_var, c.line), [])
        if c.iterations is not None:
            first, last = (expression_text(substitute_sizes(e, sizes)) for e in c.iterations)
            pieces.append(f"{first} to {last}")
    return loops


def _conditions_text(conditions: tuple[LayerCondition, ...], sizes: Mapping[str, int]) -> str:
    loops = _loops(conditions, sizes)
    if not loops:
        return "a working set between the two crosses the cache during a loop's range"
    named = [
        f"`{var}` (line {line}{', ' + var + ' from ' + ', '.join(p) if p else ''})"
        for (var, line), p in loops.items()
    ]
    if len(named) == 1:
        return f"the layer condition of loop {named[0]} holds only in the whole cache"
    listed = ", ".join(named[:-1]) + f" and {named[-1]}"
    return f"the layer conditions of loops {listed} hold only in the whole cache"


def _width_text(width: float) -> str:
    """`22.3`; a width within a rounding of 1 with the digits that tell it apart (`1.00006`)."""
    text = f"{width:.3g}"
    return f"{width:.6g}" if text == "1" else text


def _share_text(factor: float) -> str:
    return "half" if factor == 0.5 else f"{factor:g} of"


def _bytes_text(value: float) -> str:
    return f"{value:,.0f} B" if value == int(value) else f"{value:,.6g} B"
