"""The multi-device roofline as the README draws it: size notes and leaders clear of the roofs
and of every name on the plot, and progress on a terminal only (never when piped)."""

from __future__ import annotations

import functools
import io
import itertools
import sys
from pathlib import Path

import numpy
import pytest
from matplotlib.figure import Figure

from aiscan.cli import RooflineInputs, _parser, main, roofline_inputs
from aiscan.roofline.plot import build_figure, placements

ROOT = Path(__file__).resolve().parent.parent
DEVICES_IMAGE = [
    "fixtures/c/daxpy.c", "fixtures/c/dgemm_ijk.c", "fixtures/c/stencil_cross9.c",
    "fixtures/c/triad.c", "--device", "h100-sxm", "--device", "epyc-9654", "--device", "l4",
    "--threads", "96",
]  # fmt: skip
"""The arguments of docs/images/roofline-devices.svg (scripts/readme_images.py)."""


@functools.cache
def _inputs() -> RooflineInputs:
    arguments = _parser().parse_args(
        ["roofline", *(str(ROOT / a) if a.startswith("fixtures") else a for a in DEVICES_IMAGE),
         "-o", "unused.svg"]
    )  # fmt: skip
    return roofline_inputs(arguments)


@pytest.fixture(scope="module")
def figure() -> Figure:
    inputs = _inputs()
    drawn = build_figure(inputs.kernels, inputs.devices, **inputs.plot_arguments)
    drawn.draw_without_rendering()
    return drawn


def _display(figure: Figure, line: object) -> numpy.ndarray:
    xs = numpy.asarray(line.get_xdata(), dtype=float)  # type: ignore[attr-defined]
    ys = numpy.asarray(line.get_ydata(), dtype=float)  # type: ignore[attr-defined]
    return figure.axes[0].transData.transform(numpy.column_stack([xs, ys]))


def _roofs(figure: Figure) -> dict[str, numpy.ndarray]:
    return {
        str(line.get_gid()): _display(figure, line)
        for line in figure.axes[0].get_lines()
        if str(line.get_gid()).startswith(("roof:", "ceiling:"))
    }


def _on_polyline(box: object, points: numpy.ndarray) -> bool:
    """Whether the polyline passes through the box (sampled every half pixel)."""
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        count = max(2, int(numpy.hypot(x1 - x0, y1 - y0) * 2))
        for k in range(count + 1):
            x, y = x0 + (x1 - x0) * k / count, y0 + (y1 - y0) * k / count
            if box.x0 < x < box.x1 and box.y0 < y < box.y1:  # type: ignore[attr-defined]
                return True
    return False


def test_size_notes_lie_on_no_roof(figure: Figure) -> None:
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    notes = [t for t in figure.axes[0].texts if str(t.get_gid()).startswith("path-size:")]
    assert len(notes) >= 6  # dgemm's and the stencil's sizes on each device
    roofs = _roofs(figure)
    on_roofs = [
        (note.get_text(), gid)
        for note in notes
        for gid, points in roofs.items()
        if _on_polyline(note.get_window_extent(renderer), points)
    ]
    assert on_roofs == []


def test_no_leader_crosses_a_name_on_the_plot(figure: Figure) -> None:
    """A leader runs from its point to its own label, over no roof's name (ridge and cache
    labels), size note or other label."""
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    axes = figure.axes[0]
    leaders = [line for line in axes.get_lines() if str(line.get_gid()).startswith("leader:")]
    assert leaders
    crossed = []
    for leader in leaders:
        own = str(leader.get_gid()).removeprefix("leader:")
        points = _display(figure, leader)
        for text in axes.texts:
            gid = str(text.get_gid())
            if gid in (own, f"label:{own}") or not text.get_text():
                continue
            if _on_polyline(text.get_window_extent(renderer), points):
                crossed.append((own, gid, text.get_text()))
    assert crossed == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _roofline_stderr(
    stream: io.StringIO, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *devices: str
) -> str:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys, "stderr", stream)
    argv = ["roofline", str(ROOT / "fixtures/c/daxpy.c"), str(ROOT / "fixtures/c/triad.c")]
    for device in devices:
        argv += ["--device", device]
    assert main([*argv, "-o", str(tmp_path / "plot.svg")]) == 0
    return stream.getvalue()


def test_a_multi_device_plot_shows_its_steps_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = _roofline_stderr(_Terminal(), tmp_path, monkeypatch, "h100-sxm", "epyc-9654")
    steps = [step for step in shown.split("\r\033[K") if step]
    assert steps == [
        "aiscan roofline: analyzing 2 files and placing their loop nests on 2 devices",
        "aiscan roofline: drawing 2 loop nests",
    ]
    assert shown.endswith("\r\033[K")  # the line is erased before the summary


def test_no_progress_when_piped_or_for_one_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _roofline_stderr(io.StringIO(), tmp_path, monkeypatch, "h100-sxm", "epyc-9654") == ""
    assert _roofline_stderr(_Terminal(), tmp_path, monkeypatch, "h100-sxm") == ""


def test_the_legend_of_several_devices_fits_the_figure(figure: Figure) -> None:
    """Each device's roof name is long (threads, units, memory): side by side in two
    columns they ran off both edges of the figure."""
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    (legend,) = figure.legends
    box, frame = legend.get_window_extent(renderer), figure.bbox
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1
    names = [text.get_text() for text in legend.get_texts()]
    assert any(name.startswith("epyc-9654 (96 threads) FP64") for name in names)


def test_the_legend_says_which_traffic_model_each_device_uses(figure: Figure) -> None:
    """Naive dgemm is memory-bound on the H100 (cache model) and compute-bound on the L4,
    whose file has no cache geometry (compulsory bytes): the legend says so per device."""
    (legend,) = figure.legends
    names = [text.get_text() for text in legend.get_texts()]
    assert "h100-sxm points: cache model (layer conditions on its caches)" in names
    assert "epyc-9654 points: cache model (layer conditions on its caches)" in names
    assert "l4 points: compulsory traffic (no cache geometry in its file)" in names
    dgemm = [k for k in _inputs().kernels if k.label == "dgemm_ijk.c:dgemm:7"]
    placed, _ = placements(dgemm, _inputs().devices)
    by_device = {p.device: p for _, p in placed}
    assert by_device["h100-sxm"].traffic_view == "cache"
    assert by_device["l4"].traffic_view == "compulsory"


def test_one_traffic_model_everywhere_adds_no_legend_entry() -> None:
    inputs = _inputs()
    one_model = [d for d in inputs.devices if d.key != "l4"]
    drawn = build_figure(inputs.kernels, one_model, **inputs.plot_arguments)
    (legend,) = drawn.legends
    assert not [t for t in legend.get_texts() if " points: " in t.get_text()]
