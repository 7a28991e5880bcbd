"""The plot's labels on the figure: numbered past a dozen kernels, then placed in linear
time by `aiscan.roofline.labels` clear of each other, the markers, the roofs and the frame.

The matplotlib side only: it measures the drawn texts and lines in display pixels, hands
the geometry to `place_labels`, and moves each text to its box (a thin leader back to its
point when the box is not beside it). matplotlib is imported inside functions only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from aiscan.roofline.labels import LEADER_MIN_PIXELS, Box, LabelRequest, leader_end, place_labels

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Text

__all__ = ["number_labels", "place_texts", "table_inches"]

_MARKER_GIDS: Final = ("kernel:", "level:", "ridge:", "path:")
_FIXED_TEXT_GIDS: Final = ("ceiling-label:",)
_TAG_GIDS: Final = ("level-label:", "path-size:")
"""The hierarchical roofline's level tags (`L1d`, `L2/L3`) and a path's size notes (`n=128`):
placed first, near their markers, clear of each other, of the labels and of the roofs."""
_TABLE_ROWS: Final = 52
"""Rows of the numbered table per column: as tall as the plot at xx-small."""
_TABLE_LINE_SPACING: Final = 1.5
"""The table's row pitch, in font sizes: a legend's rows (1 + `labelspacing` 0.5)."""
_TABLE_CHAR_INCHES: Final = 0.043
"""The width of an average character at xx-small, to size the table's columns."""
_NUMBER_REACH: Final = 24.0
"""A number stays this close to its point (pixels at 100 dpi), or is left out: long
leaders into a crowd cannot be followed."""
_SAMPLE_PIXELS: Final = 4.0
"""Lines are sampled every this many pixels (at 100 dpi) to be obstacles."""
_PAD_PIXELS: Final = 2.0
"""The label's rounded box reaches this far past its text (pad 0.15 of the font)."""


def number_labels(axes: Axes, labels: Sequence[Text], named_max: int) -> list[str]:
    """Past `named_max` kernels each label becomes its number and the table gives the
    names (`N: name`); the kernels that stand out (the lowest and highest intensity and
    rate) keep their name beside the number, and the paths lose their size notes (a
    crowd of them hides the numbers). Returns the table's rows, in order."""
    if len(labels) <= named_max:
        return []
    for text in [t for t in axes.texts if str(t.get_gid()).startswith("path-size:")]:
        text.remove()
    outstanding = _standing_out(labels)
    rows = []
    for number, label in enumerate(labels, start=1):
        rows.append(f"{number}: {label.get_text()}")
        label.set_text(f"{number}: {label.get_text()}" if label in outstanding else str(number))
    return rows


def table_inches(axes: Axes, rows: Sequence[str]) -> tuple[float, float]:
    """The numbered table beside the plot, in columns of at most `_TABLE_ROWS` rows;
    returns the width it adds to the figure and its height, in inches (the plot must be
    as tall: the table hangs from its top)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.lines import Line2D

    if not rows:
        return 0.0, 0.0
    columns = math.ceil(len(rows) / _TABLE_ROWS)
    # One entry per column, its rows on lines of their own: 452 entries took a legend's
    # box packing two seconds at every draw (the layout measures it, then the save).
    per_column = math.ceil(len(rows) / columns)
    blocks = ["\n".join(rows[k : k + per_column]) for k in range(0, len(rows), per_column)]
    table = axes.legend(
        [Line2D([], [], linestyle="none") for _ in blocks], blocks, loc="upper left",
        bbox_to_anchor=(1.01, 1.0), ncols=columns, fontsize="xx-small", frameon=False,
        handlelength=0, handletextpad=0, columnspacing=1.2, borderaxespad=0,
        title="kernels by number", title_fontsize="x-small",
    )  # fmt: skip
    for text in table.get_texts():
        text.set_linespacing(_TABLE_LINE_SPACING)
    points = FontProperties(size="xx-small").get_size_in_points()
    height = (per_column + 2) * _TABLE_LINE_SPACING * points / 72  # the rows and the title
    return columns * (_TABLE_CHAR_INCHES * max(len(row) for row in rows) + 0.2), height


def _standing_out(labels: Sequence[Text]) -> set[Text]:
    """The labels at the extremes of the cloud: lowest and highest AI, and rate."""
    chosen: set[Text] = set()
    for index in (0, 1):
        chosen.add(min(labels, key=lambda label: float(label.get_position()[index])))
        chosen.add(max(labels, key=lambda label: float(label.get_position()[index])))
    return chosen


def place_texts(figure: Figure, axes: Axes, labels: Sequence[Text]) -> None:
    """Place the ridge labels, then the kernels' (those standing out first); a label with
    no free spot is removed rather than drawn over another."""
    ridges = [t for t in axes.texts if str(t.get_gid()).startswith("ridge-label:")]
    tags = [t for t in axes.texts if str(t.get_gid()).startswith(_TAG_GIDS)]
    named = [t for t in labels if not t.get_text().isdigit()]
    texts = [*ridges, *tags, *named, *[t for t in labels if t.get_text().isdigit()]]
    if not texts:
        return
    # The layout alone, not a whole draw: the texts and the frame are measured with the
    # renderer, and the one draw is the save's (a draw of 452 nests took two seconds).
    engine = figure.get_layout_engine()
    if engine is not None:
        engine.execute(figure)
    # The layout stays as measured: run again at save time, it moved the axes by a few
    # pixels, and labels (sized in pixels, anchored in data) drifted onto leaders. No
    # engine at all, not the placeholder "none" leaves: with one, `savefig` draws the
    # whole figure once more before its draw (0.2 s for 452 nests, the same pixels).
    figure.set_layout_engine(None)
    if figure.get_layout_engine() is not None:  # the rc asks for one: a placeholder
        figure.set_layout_engine("none")
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    scale = figure.dpi / 100
    pad = _PAD_PIXELS * scale
    requests = []
    for text in texts:
        extent = text.get_window_extent(renderer)
        x, y = axes.transData.transform(text.get_position())
        width, height = extent.width + 2 * pad, extent.height + 2 * pad
        if text.get_text().isdigit() or text in tags:
            requests.append(LabelRequest(x, y, width, height, reach=_NUMBER_REACH))
        else:
            requests.append(LabelRequest(x, y, width, height))
    frame = axes.get_window_extent(renderer)
    boxes = place_labels(
        requests, (frame.x0, frame.y0, frame.x1, frame.y1),
        markers=_marker_boxes(axes, scale), obstacles=_obstacles(axes, renderer, scale),
        scale=scale,
    )  # fmt: skip
    to_data = axes.transData.inverted()
    for text, request, box in zip(texts, requests, boxes, strict=True):
        if box is None:
            text.remove()
            continue
        text.set_horizontalalignment("left")
        text.set_verticalalignment("bottom")
        x, y = to_data.transform((box[0] + pad, box[1] + pad))
        text.set_position((float(x), float(y)))
        _leader(axes, text, request, box, scale)


def _leader(axes: Axes, text: Text, request: LabelRequest, box: Box, scale: float) -> None:
    """A thin line from the point to the nearest edge of a label set away from it."""
    near_x, near_y = leader_end(request, box)
    if math.hypot(near_x - request.x, near_y - request.y) <= LEADER_MIN_PIXELS * scale:
        return
    to_data = axes.transData.inverted()
    (x0, y0), (x1, y1) = to_data.transform([(request.x, request.y), (near_x, near_y)])
    axes.plot(
        [x0, x1], [y0, y1], color="0.5", linewidth=0.6, zorder=1,
        gid=f"leader:{str(text.get_gid()).removeprefix('label:')}",
    )  # fmt: skip


def _marker_boxes(axes: Axes, scale: float) -> list[Box]:
    """A square the size of each marker, around each point that has one."""
    boxes: list[Box] = []
    for line in axes.get_lines():
        if not str(line.get_gid()).startswith(_MARKER_GIDS):
            continue
        half = float(line.get_markersize()) * scale * 100 / 72 / 2
        for x, y in _display_points(axes, line):
            boxes.append((x - half, y - half, x + half, y + half))
    return boxes


def _obstacles(axes: Axes, renderer: Any, scale: float) -> list[Box]:
    """Every drawn line sampled every few pixels, and the texts that stay where they are."""
    boxes: list[Box] = []
    step = _SAMPLE_PIXELS * scale
    frame = axes.get_window_extent(renderer)
    for line in axes.get_lines():
        if line.get_linestyle() in ("None", "none", " ", ""):
            continue
        points = _display_points(axes, line)
        for (x0, y0), (x1, y1) in itertools.pairwise(points):
            count = max(1, math.ceil(math.hypot(x1 - x0, y1 - y0) / step))
            for k in range(count + 1):
                x, y = x0 + (x1 - x0) * k / count, y0 + (y1 - y0) * k / count
                if frame.x0 <= x <= frame.x1 and frame.y0 <= y <= frame.y1:
                    boxes.append((x - 0.5, y - 0.5, x + 0.5, y + 0.5))
    for text in axes.texts:
        if str(text.get_gid()).startswith(_FIXED_TEXT_GIDS):
            extent = text.get_window_extent(renderer)
            boxes.append((extent.x0, extent.y0, extent.x1, extent.y1))
    return boxes


def _display_points(axes: Axes, line: Any) -> list[tuple[float, float]]:
    import numpy

    xs = numpy.asarray(line.get_xdata(), dtype=float)
    ys = numpy.asarray(line.get_ydata(), dtype=float)
    keep = (xs > 0) & (ys > 0)
    points = axes.transData.transform(numpy.column_stack([xs[keep], ys[keep]]))
    return [(float(x), float(y)) for x, y in points]
