"""Roofline plots and the HTML report, rendered headless; content checked, not pixels."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy
import pytest
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from aiscan.errors import UsageError
from aiscan.ir.symbols import size_symbol
from aiscan.roofline.devices import Device, load_devices
from aiscan.roofline.html import render_html, write_html
from aiscan.roofline.placement import place
from aiscan.roofline.plot import KernelSpec, build_figure, render_roofline

n, N = size_symbol("n"), size_symbol("N")
KERNELS = [
    # Contractions (a library's dot and matmul): placed on the bf16 tensor-core roof.
    KernelSpec("bf16 dot", 2 * N - 1, 4 * N + 2, "bf16", contraction_flops=2 * N - 1),
    KernelSpec("bf16 matmul", 2 * N**3, 6 * N**2, "bf16", contraction_flops=2 * N**3),
    KernelSpec("daxpy", 2 * n, 24 * n, "fp64"),
    KernelSpec("triad", 2 * n, 40 * n, "fp64"),
    KernelSpec("stencil", 9 * n, 16 * n, "fp64"),
]


def devices(*names: str) -> list[Device]:
    catalog = load_devices()
    return [catalog.get(name) for name in names]


def line(figure: Figure, gid: str) -> Line2D:
    found = [a for a in figure.axes[0].get_lines() if a.get_gid() == gid]
    assert len(found) == 1, f"{gid}: {[a.get_gid() for a in figure.axes[0].get_lines()]}"
    return found[0]


def xy(artist: Line2D) -> tuple[numpy.ndarray, numpy.ndarray]:
    return numpy.asarray(artist.get_xdata(), float), numpy.asarray(artist.get_ydata(), float)


def test_points_match_placement_on_two_devices() -> None:
    chosen = devices("h100", "bgq")
    figure = build_figure(KERNELS, chosen, sizes={"n": 1000})
    for device in chosen:
        for kernel in KERNELS[2:]:
            expected = place(kernel.flops, kernel.bytes_moved, kernel.precision, device)
            xs, ys = xy(line(figure, f"kernel:{kernel.label}:{device.key}"))
            assert xs[0] == pytest.approx(expected.intensity_flops_per_byte)
            assert ys[0] == pytest.approx(expected.attainable_flops_per_s)


def test_roof_ridge_and_dashed_ceilings_match_the_device() -> None:
    (haswell,) = devices("haswell")
    figure = build_figure(KERNELS[2:4], [haswell])
    xs, ys = xy(line(figure, "roof:haswell-e5-2695v3:fp64"))
    assert ys.max() == pytest.approx(515.2e9)
    memory_part = xs * 50e9 < 515.2e9
    assert ys[memory_part] == pytest.approx(xs[memory_part] * 50e9)
    ridge_x, ridge_y = xy(line(figure, "ridge:haswell-e5-2695v3:fp64"))
    assert (ridge_x[0], ridge_y[0]) == pytest.approx((515.2 / 50, 515.2e9))
    for level, bandwidth in (("L3", 254.62e9), ("L2", 597.01e9), ("L1d", 1771.36e9)):
        ceiling = line(figure, f"ceiling:haswell-e5-2695v3:{level}")
        assert ceiling.get_linestyle() == "--"
        cx, cy = xy(ceiling)
        assert cy[0] == pytest.approx(cx[0] * bandwidth)
    assert line(figure, "roof:haswell-e5-2695v3:fp64").get_linestyle() == "-"


def test_sparse_roof_is_used_only_when_asked() -> None:
    dense = build_figure(KERNELS[:2], devices("h100"))
    sparse = build_figure(KERNELS[:2], devices("h100"), sparse=True)
    assert xy(line(dense, "roof:h100-sxm:bf16"))[1].max() == pytest.approx(989.4e12)
    assert xy(line(sparse, "roof:h100-sxm:bf16"))[1].max() == pytest.approx(1979e12)
    ridge_x, _ = xy(line(sparse, "ridge:h100-sxm:bf16"))
    assert ridge_x[0] == pytest.approx(590.7, abs=0.05)


def test_size_dependent_matmul_is_a_path_crossing_the_ridge() -> None:
    figure = build_figure(KERNELS[1:2], devices("h100"), sparse=True, size_range=(8, 65536))
    xs, ys = xy(line(figure, "path:bf16 matmul:h100-sxm"))
    assert xs == pytest.approx([2**k / 3 for k in range(3, 17)])
    assert ys == pytest.approx([min(1979e12, x * 3.35e12) for x in xs])
    cross_x, cross_y = xy(line(figure, "crossover:bf16 matmul:h100-sxm"))
    assert (cross_x[0], cross_y[0]) == pytest.approx((590.7, 1979e12), rel=1e-4)


def test_matmul_at_n_64_is_a_point_at_71_tflops() -> None:
    figure = build_figure(KERNELS[1:2], devices("h100"), sparse=True, sizes={"N": 64})
    xs, ys = xy(line(figure, "kernel:bf16 matmul:h100-sxm"))
    assert xs[0] == pytest.approx(21.33, abs=0.01)
    assert ys[0] == pytest.approx(71.5e12, rel=0.01)


def label_boxes(figure: Figure) -> list[object]:
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    texts = [t for t in figure.axes[0].texts if str(t.get_gid()).startswith("label:")]
    return [t.get_window_extent(renderer) for t in texts]


@pytest.mark.parametrize("names", [("h100",), ("h100", "haswell")])
def test_labels_do_not_overlap_and_each_kernel_is_labelled(names: Sequence[str]) -> None:
    figure = build_figure(KERNELS, devices(*names), sizes={"n": 1000})
    texts = [t for t in figure.axes[0].texts if str(t.get_gid()).startswith("label:")]
    assert len(texts) == len(KERNELS)  # each kernel once, however many devices
    assert {t.get_text().split(" (")[0] for t in texts} == {k.label for k in KERNELS}
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    ridges = [t for t in figure.axes[0].texts if str(t.get_gid()).startswith("ridge-label:")]
    boxes = label_boxes(figure) + [t.get_window_extent(renderer) for t in ridges]
    frame = figure.axes[0].get_window_extent(renderer)
    for i, box in enumerate(boxes):
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1  # inside: never on the axis titles
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1
        for other in boxes[i + 1 :]:
            assert not box.overlaps(other)  # type: ignore[attr-defined]


def test_axes_have_units_and_log_scales() -> None:
    figure = build_figure(KERNELS, devices("h100"))
    axes = figure.axes[0]
    assert axes.get_xscale() == axes.get_yscale() == "log"
    assert "[FLOP/byte]" in axes.get_xlabel()
    assert "[FLOP/s]" in axes.get_ylabel()
    (legend,) = figure.legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert "× size where a kernel meets the ridge" in texts  # the marks have a legend
    assert "kernel daxpy" in texts
    assert any("3.35 TB/s" in t.get_text() for t in legend.get_texts())


def test_unplaceable_pairs_are_listed_not_raised() -> None:
    figure = build_figure(KERNELS[2:3], devices("apple-m2-ultra", "h100"))
    (legend,) = figure.legends
    assert any("daxpy on apple-m2-ultra" in t.get_text() for t in legend.get_texts())
    line(figure, "kernel:daxpy:h100-sxm")


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_render_writes_png_and_svg(tmp_path: Path, suffix: str) -> None:
    path = render_roofline(KERNELS, devices("h100"), tmp_path / f"roof.{suffix}")
    head = path.read_bytes()[:200]
    assert head.startswith(b"\x89PNG") if suffix == "png" else b"<svg" in head or b"<?xml" in head


def test_other_suffix_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"\.png or \.svg"):
        render_roofline(KERNELS, devices("h100"), tmp_path / "roof.jpg")


def test_html_report_is_self_contained_with_plot_and_tables(tmp_path: Path) -> None:
    path = write_html(tmp_path / "r.html", KERNELS, devices("h100", "bgq"), sizes={"n": 1000})
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "<svg" in text and "</svg>" in text
    # its one script is inline (the interactive layer), nothing is fetched or linked
    assert not re.search(r"<script[^>]*\bsrc=|<link|src=\"http", text)
    assert text.count("<script>") == 1
    assert "NVIDIA H100 Tensor Core GPU datasheet" in text  # sources travel with figures
    assert "2.4 GFLOP/s" in text  # BG/Q daxpy
    assert "N = 59364/67" in text  # dense bf16 crossover, exact
    assert text.count("<table>") == 2


def test_html_escapes_labels() -> None:
    kernel = KernelSpec("a<b & c", 2 * n, 24 * n, "fp64")
    text = render_html([kernel], devices("bgq"))
    assert "a&lt;b &amp; c" in text
    assert "a<b & c" not in text.split("<svg")[0]


def test_the_numbered_table_stays_beside_the_plot_above_the_legend() -> None:
    """200 kernels (four columns of the table) and a legend made tall by kernels with no
    traffic: the table hung from the plot's top ran down over the legend below; the plot
    now grows to the table's height."""
    many = [
        KernelSpec(f"kernel_{i}", (1 + i % 13) * n, (8 + 3 * (i % 7)) * n, "fp64")
        for i in range(200)
    ]
    scalars = [KernelSpec(f"scalar_{i}", 2 * n, 0 * n, "fp64") for i in range(12)]
    figure = build_figure([*many, *scalars], devices("h100"), sizes={"n": 1000})
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    plot = figure.axes[0].get_window_extent(renderer)
    table = figure.axes[0].get_legend().get_window_extent(renderer)
    legend = figure.legends[0].get_window_extent(renderer)
    rows = [
        row for t in figure.axes[0].get_legend().get_texts() for row in t.get_text().splitlines()
    ]
    assert len(rows) == 200 and len(figure.axes[0].get_legend().get_texts()) == 4
    assert table.y0 >= plot.y0 and table.y1 <= plot.y1 + 1
    assert not table.overlaps(legend)  # type: ignore[attr-defined]


def test_many_kernels_are_numbered_with_a_table_and_labels_never_overlap() -> None:
    """Past a dozen kernels each label is its number, the table beside the plot names
    every kernel, the extremes keep their names, and no two labels overlap."""
    many = [KernelSpec(f"k{i}", (1 + i % 13) * n, (8 + 3 * (i % 7)) * n, "fp64") for i in range(40)]
    figure = build_figure(many, devices("h100"), sizes={"n": 1000})
    table = figure.axes[0].get_legend()
    assert table is not None and table.get_title().get_text() == "kernels by number"
    rows = [row for t in table.get_texts() for row in t.get_text().splitlines()]
    assert rows == [f"{i + 1}: k{i}" for i in range(40)]
    texts = [t for t in figure.axes[0].texts if str(t.get_gid()).startswith("label:")]
    assert texts and all(t.get_text().split(":")[0].isdigit() for t in texts)
    named = [t.get_text() for t in texts if not t.get_text().isdigit()]
    assert "14: k13" in named  # the lowest intensity and rate, 1/26 FLOP/byte
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    ridges = [t for t in figure.axes[0].texts if str(t.get_gid()).startswith("ridge-label:")]
    boxes = [t.get_window_extent(renderer) for t in [*texts, *ridges]]
    frame = figure.axes[0].get_window_extent(renderer)
    for i, box in enumerate(boxes):
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1
        for other in boxes[i + 1 :]:
            assert not box.overlaps(other)  # type: ignore[attr-defined]
