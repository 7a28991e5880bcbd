"""Label placement for the roofline plots, in linear time: each label takes the first free
spot of a fixed set around its point, checked against a grid of what is already placed.

Plain geometry in display pixels, no matplotlib: boxes are `(x0, y0, x1, y1)`. A label never
overlaps another label nor leaves the frame, and the leader line to a label set away from
its point crosses no other label nor lies under one; among those spots it avoids markers,
then lines and fixed texts (under the label or its leader), then distance. One that finds
no spot is left out (`None`), so a crowded plot loses labels rather than legibility. Every
label looks at a constant number of spots and grid cells (and a leader at most 96 pixels
long), so n labels cost O(n), where adjustText's repulsion was quadratic.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

__all__ = ["LEADER_MIN_PIXELS", "Box", "LabelRequest", "leader_end", "place_labels"]

Box = tuple[float, float, float, float]
"""(x0, y0, x1, y1) in display pixels, x0 <= x1 and y0 <= y1."""

_RADII: Final = (4.0, 12.0, 24.0, 40.0, 64.0, 96.0)
"""Distances from the point tried in turn, in pixels at 100 dpi (scaled with the dpi)."""
_DIAGONAL: Final = math.sqrt(0.5)
_DIRECTIONS: Final = (
    (1.0, 0.0), (_DIAGONAL, _DIAGONAL), (_DIAGONAL, -_DIAGONAL), (0.0, 1.0), (0.0, -1.0),
    (-1.0, 0.0), (-_DIAGONAL, _DIAGONAL), (-_DIAGONAL, -_DIAGONAL),
)  # fmt: skip
LEADER_MIN_PIXELS: Final = 8.0
"""A label farther than this from its point (pixels at 100 dpi) gets a leader line."""
_LEADER_STEP_PIXELS: Final = 2.0
_LEADER_SKIP_PIXELS: Final = 6.0
"""The leader's first pixels cross no line that counts: they leave the point's own marker,
which may sit on a roof."""
_CELL_PIXELS: Final = 16.0
"""The grid's cell at 100 dpi: about a line of small text."""
_MARKER_COST: Final = 1000.0
_OBSTACLE_COST: Final = 60.0


@dataclass(frozen=True, slots=True)
class LabelRequest:
    """A label of `width` by `height` pixels for the point at (`x`, `y`), set at most
    `reach` pixels (at 100 dpi) away from it."""

    x: float
    y: float
    width: float
    height: float
    reach: float = _RADII[-1]


@dataclass(slots=True)
class _Grid:
    """Boxes bucketed by square cells, so a query looks only at its own cells."""

    cell: float
    cells: defaultdict[tuple[int, int], list[Box]] = field(
        default_factory=lambda: defaultdict(list)
    )

    def _keys(self, box: Box) -> Iterable[tuple[int, int]]:
        x0, y0, x1, y1 = (math.floor(v / self.cell) for v in box)
        return ((i, j) for i in range(x0, x1 + 1) for j in range(y0, y1 + 1))

    def add(self, box: Box) -> None:
        for key in self._keys(box):
            self.cells[key].append(box)

    def hits(self, box: Box) -> int:
        """How many stored boxes overlap `box` (one that spans two cells counts once)."""
        seen: set[Box] = set()
        for key in self._keys(box):
            seen.update(b for b in self.cells.get(key, ()) if _overlap(b, box))
        return len(seen)


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(box: Box, frame: Box) -> bool:
    return frame[0] <= box[0] and box[2] <= frame[2] and frame[1] <= box[1] and box[3] <= frame[3]


def _spot(request: LabelRequest, direction: tuple[float, float], radius: float) -> Box:
    """The box whose nearest edge or corner sits `radius` from the point, in `direction`:
    to the right it starts there, to the left it ends there, straight up it is centred."""
    dx, dy = direction
    left = request.x + dx * radius - request.width * (1 - _sign(dx)) / 2
    bottom = request.y + dy * radius - request.height * (1 - _sign(dy)) / 2
    return (left, bottom, left + request.width, bottom + request.height)


def leader_end(request: LabelRequest, box: Box) -> tuple[float, float]:
    """Where a leader from the point meets the label: the box's nearest edge or corner."""
    return min(max(request.x, box[0]), box[2]), min(max(request.y, box[1]), box[3])


def _leader_probes(request: LabelRequest, box: Box, scale: float) -> list[tuple[float, Box]]:
    """Pixel boxes along the leader to `box`, each with its distance from the point; none
    when the label sits close enough to need no leader."""
    end_x, end_y = leader_end(request, box)
    length = math.hypot(end_x - request.x, end_y - request.y)
    if length <= LEADER_MIN_PIXELS * scale:
        return []
    step = _LEADER_STEP_PIXELS * scale
    probes = []
    for k in range(math.ceil(length / step)):
        x = request.x + (end_x - request.x) * k * step / length
        y = request.y + (end_y - request.y) * k * step / length
        half = step / 2  # probes touch end to end: a box corner cannot slip between them
        probes.append((k * step, (x - half, y - half, x + half, y + half)))
    return probes


def _leader_cost(
    request: LabelRequest, box: Box, placed: _Grid, crossed: _Grid, scale: float
) -> float:
    """What the leader to `box` would cross: another label (a ridge's name too) rules the spot
    out; each line it crosses past the point's own marker costs as an obstacle does."""
    lines: set[tuple[int, int]] = set()
    for distance, probe in _leader_probes(request, box, scale):
        if placed.hits(probe):
            return math.inf
        if distance >= _LEADER_SKIP_PIXELS * scale and crossed.hits(probe):
            # one line crossed leaves several samples: count it once
            lines.add((round(probe[0] / (8 * scale)), round(probe[1] / (8 * scale))))
    return _OBSTACLE_COST * len(lines)


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)


def place_labels(
    requests: Sequence[LabelRequest],
    frame: Box,
    *,
    markers: Sequence[Box] = (),
    obstacles: Sequence[Box] = (),
    scale: float = 1.0,
    margin: float = 1.0,
) -> list[Box | None]:
    """A box for each request in order (earlier requests choose first), or None where no
    spot is free of other labels inside `frame`. `markers` are avoided first, then
    `obstacles` (line samples, fixed texts); `scale` is the dpi over 100; `margin` pixels
    of air are kept between labels."""
    cell = _CELL_PIXELS * scale
    placed, avoided, crossed, leaders = _Grid(cell), _Grid(cell), _Grid(cell), _Grid(cell)
    for box in markers:
        avoided.add(box)
    for box in obstacles:
        crossed.add(box)
    boxes: list[Box | None] = []
    for request in requests:
        best: tuple[float, Box] | None = None
        for radius in _RADII:
            if radius > request.reach:
                break
            for direction in _DIRECTIONS:
                box = _spot(request, direction, radius * scale)
                air = (box[0] - margin, box[1] - margin, box[2] + margin, box[3] + margin)
                if not _inside(box, frame) or placed.hits(air) or leaders.hits(box):
                    continue
                cost = (
                    _MARKER_COST * avoided.hits(box)
                    + _OBSTACLE_COST * crossed.hits(box)
                    + radius
                )  # fmt: skip
                if best is not None and cost >= best[0]:
                    continue
                cost += _leader_cost(request, box, placed, crossed, scale)
                if cost < math.inf and (best is None or cost < best[0]):
                    best = (cost, box)
            if best is not None and best[0] <= radius:  # nothing in the way: no farther look
                break
        boxes.append(None if best is None else best[1])
        if best is not None:
            placed.add(best[1])
            for _, probe in _leader_probes(request, best[1], scale):
                leaders.add(probe)  # no later label covers this leader
    return boxes
