"""Leaders in a crowd: the line from a point to its label set away crosses no other label,
and no label is set over another's leader (`place_labels`, plain geometry)."""

from __future__ import annotations

import math
import random

import pytest

from aiscan.roofline.labels import Box, LabelRequest, place_labels

LEADER_MIN = 8.0
"""Pixels (at 100 dpi) beyond which plot_labels draws a leader."""


def _leader(request: LabelRequest, box: Box) -> tuple[float, float, float, float] | None:
    near_x = min(max(request.x, box[0]), box[2])
    near_y = min(max(request.y, box[1]), box[3])
    if math.hypot(near_x - request.x, near_y - request.y) <= LEADER_MIN:
        return None
    return request.x, request.y, near_x, near_y


def _crosses(segment: tuple[float, float, float, float], box: Box) -> bool:
    x0, y0, x1, y1 = segment
    for k in range(201):
        x, y = x0 + (x1 - x0) * k / 200, y0 + (y1 - y0) * k / 200
        if box[0] < x < box[2] and box[1] < y < box[3]:
            return True
    return False


@pytest.mark.parametrize("seed", range(6))
def test_no_leader_crosses_another_label(seed: int) -> None:
    """Thirty numbered labels on points packed along a roof-like diagonal, as a crowded
    roofline places them (reach 24 px)."""
    rng = random.Random(seed)
    requests = []
    for _ in range(30):
        t = rng.uniform(0, 60)
        requests.append(LabelRequest(200 + t, 200 + t + rng.uniform(-6, 6), 14, 12, reach=24))
    boxes = place_labels(requests, (0, 0, 600, 600))
    placed = [(r, b) for r, b in zip(requests, boxes, strict=True) if b is not None]
    assert len(placed) >= 10
    crossings = []
    for i, (request, box) in enumerate(placed):
        leader = _leader(request, box)
        if leader is None:
            continue
        crossings += [
            (i, j) for j, (_, other) in enumerate(placed) if j != i and _crosses(leader, other)
        ]
    assert crossings == []
