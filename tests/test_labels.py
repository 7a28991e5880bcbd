"""Label placement (`aiscan.roofline.labels`): plain geometry, checked by its properties."""

from __future__ import annotations

from aiscan.roofline.labels import Box, LabelRequest, place_labels

FRAME: Box = (0.0, 0.0, 400.0, 300.0)


def overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def inside(box: Box, frame: Box) -> bool:
    return frame[0] <= box[0] and box[2] <= frame[2] and frame[1] <= box[1] and box[3] <= frame[3]


def test_a_lone_label_sits_beside_its_point() -> None:
    (box,) = place_labels([LabelRequest(100.0, 100.0, 40.0, 10.0)], FRAME)
    assert box == (104.0, 95.0, 144.0, 105.0)  # first spot: right of the point, centred


def test_a_crowd_never_overlaps_and_stays_inside_dropping_what_does_not_fit() -> None:
    requests = [LabelRequest(200.0, 150.0, 30.0, 10.0) for _ in range(200)]
    boxes = place_labels(requests, FRAME)
    kept = [b for b in boxes if b is not None]
    # the spots around one point run out: the four beside it, as a farther label's leader
    # would cross one of them (a leader never crosses another label)
    assert len(kept) == 4
    for i, box in enumerate(kept):
        assert inside(box, FRAME)
        assert all(not overlap(box, other) for other in kept[i + 1 :])


def test_a_label_at_the_edge_turns_inward() -> None:
    (box,) = place_labels([LabelRequest(398.0, 298.0, 40.0, 10.0)], FRAME)
    assert box is not None and inside(box, FRAME)
    assert box[2] <= 398.0  # left of the point: the right side is outside


def test_markers_and_lines_are_avoided_when_a_free_spot_exists() -> None:
    marker: Box = (103.0, 94.0, 150.0, 106.0)  # covers the spot to the right
    line = [(x - 0.5, 120.0, x + 0.5, 121.0) for x in range(60, 140, 4)]  # a roof above
    (box,) = place_labels(
        [LabelRequest(100.0, 100.0, 40.0, 10.0)], FRAME, markers=[marker], obstacles=line
    )
    assert box is not None
    assert not overlap(box, marker)
    assert not any(overlap(box, sample) for sample in line)


def test_earlier_requests_choose_first() -> None:
    first, second = place_labels(
        [LabelRequest(100.0, 100.0, 40.0, 10.0), LabelRequest(100.0, 100.0, 40.0, 10.0)], FRAME
    )
    assert first == (104.0, 95.0, 144.0, 105.0)
    assert second is not None and second != first


def test_a_label_stays_within_its_reach_or_is_left_out() -> None:
    requests = [LabelRequest(200.0, 150.0, 30.0, 10.0, reach=12.0) for _ in range(50)]
    boxes = place_labels(requests, FRAME)
    kept = [b for b in boxes if b is not None]
    assert 0 < len(kept) < 50
    for box in kept:  # the nearest edge within 12 pixels of the point
        dx = max(box[0] - 200.0, 0.0, 200.0 - box[2])
        dy = max(box[1] - 150.0, 0.0, 150.0 - box[3])
        assert (dx * dx + dy * dy) ** 0.5 <= 12.0 + 1e-9
