"""The hierarchical roofline: one marker per memory level at that level's intensity, joined
by a line at the kernel's attainable rate; the bounding level's marker is the filled one."""

from __future__ import annotations

from pathlib import Path

import pytest
from golden import FIXTURES

from aiscan.analysis.kernel import AnalysisOptions, analyze_module
from aiscan.cli import main
from aiscan.options import PlacementOptions
from aiscan.pipeline import PipelineOptions, lower_source
from aiscan.roofline.devices import Device, load_devices
from aiscan.roofline.kernels import module_kernels
from aiscan.roofline.plot import KernelSpec, build_figure, placements
from aiscan.sources import read_source

SIZES = {"n": 2000}


def dgemm_kernels(model: str) -> tuple[list[KernelSpec], Device]:
    source = FIXTURES / "c" / "dgemm_ijk.c"
    module = lower_source(read_source(str(source)), str(source), PipelineOptions())
    analysis = analyze_module(module, AnalysisOptions(sizes=SIZES))
    haswell = load_devices().get("haswell-e5-2695v3")
    options = PlacementOptions(devices=(haswell,), model=model)
    return module_kernels([analysis], options), haswell


def test_each_level_is_a_marker_at_its_own_intensity_joined_at_the_attainable_rate() -> None:
    kernels, haswell = dgemm_kernels("cache")
    (placed,), skipped = placements(kernels, [haswell], sizes=SIZES)
    assert not skipped
    placement = placed[1]
    assert placement.model == "cache" and placement.bound_level is not None
    figure = build_figure(kernels, [haswell], sizes=SIZES)
    lines = {str(line.get_gid()): line for line in figure.axes[0].get_lines()}
    key = "dgemm:7:haswell-e5-2695v3"
    joined = lines[f"levels:{key}"]
    expected = [lv.intensity_flops_per_byte for lv in placement.levels]
    assert list(joined.get_xdata()) == pytest.approx(expected)
    assert set(joined.get_ydata()) == {placement.attainable_flops_per_s}
    # the bounding level is filled and keeps the kernel's gid; every other level is hollow
    filled = lines[f"kernel:{key}"]
    bounding = next(lv for lv in placement.levels if lv.level == placement.bound_level)
    assert list(filled.get_xdata()) == pytest.approx([bounding.intensity_flops_per_byte])
    hollow = [g for g in lines if g.startswith(f"level:{key}:")]
    assert len(hollow) == len(placement.levels) - 1
    assert all(lines[g].get_markerfacecolor() == "white" for g in hollow)
    # naive dgemm at n = 2000 streams B from beyond the caches: memory traffic far above
    # its compulsory 24 n^2, so its DRAM intensity is far below the compulsory n/12
    dram = placement.levels[-1]
    assert dram.intensity_flops_per_byte is not None and dram.intensity_flops_per_byte < 1


def test_compulsory_model_keeps_one_marker_per_kernel() -> None:
    kernels, haswell = dgemm_kernels("compulsory")
    figure = build_figure(kernels, [haswell], sizes=SIZES)
    gids = [str(line.get_gid()) for line in figure.axes[0].get_lines()]
    assert "kernel:dgemm:7:haswell-e5-2695v3" in gids
    assert not [g for g in gids if g.startswith(("levels:", "level:"))]


def test_roofline_command_draws_the_cache_model_by_default(tmp_path: Path) -> None:
    output = tmp_path / "roof.html"
    dgemm = str(FIXTURES / "c" / "dgemm_ijk.c")
    code = main(["roofline", dgemm, "--device", "haswell", "--size", "n=2000", "-o", str(output)])
    assert code == 0
    text = output.read_text()
    assert 'id="levels:dgemm:7:haswell-e5-2695v3"' in text
    kernels, haswell = dgemm_kernels("cache")
    (placed,), _ = placements(kernels, [haswell], sizes=SIZES)
    levels = ", ".join(f"{lv.level} {lv.intensity_flops_per_byte:.4g}" for lv in placed[1].levels)
    assert f"<td>{levels}</td>" in text
    assert f"<td>memory at {placed[1].bound_level}</td>" in text


def test_symbolic_sizes_draw_the_cache_model_swept_over_sizes() -> None:
    """Without sizes the cache model's symbolic traffic is its large-size regime: drawn at
    small sizes it put naive dgemm near 0.1 F/B. The path is the model decided at each
    size of the sweep, each point what `--size n=S` places, so it rises while the working
    sets fit and falls where a layer condition breaks."""
    source = FIXTURES / "c" / "dgemm_ijk.c"
    module = lower_source(read_source(str(source)), str(source), PipelineOptions())
    haswell = load_devices().get("haswell-e5-2695v3")
    options = PlacementOptions(devices=(haswell,), model="cache")
    (kernel,) = module_kernels([analyze_module(module, AnalysisOptions())], options, (8, 2048))
    path = dict((size, (x, y)) for size, x, y in kernel.size_paths[haswell.key])
    assert sorted(path) == [2**k for k in range(3, 12)]
    for size in (8, 2048):
        at = {"n": size}
        (fixed,) = module_kernels([analyze_module(module, AnalysisOptions(sizes=at))], options)
        (placed,), _ = placements([fixed], [haswell], sizes=at)
        dram = placed[1].levels[-1]
        assert path[size] == pytest.approx(
            (dram.intensity_flops_per_byte, placed[1].attainable_flops_per_s)
        )
    assert path[8][0] == pytest.approx(8 / 16)  # all fits: compulsory, n/16 (write-allocate)
    assert max(x for x, _ in path.values()) > 4 * path[2048][0]  # B stops fitting
    figure = build_figure([kernel], [haswell], size_range=(8, 2048))
    gids = {str(line.get_gid()) for line in figure.axes[0].get_lines()}
    assert any(g.startswith("path-step:dgemm:7") for g in gids)


def test_level_tags_of_nearby_kernels_do_not_overlap() -> None:
    """The README's hierarchical roofline: the dgemm and Gauss-Seidel markers sit close, and
    their tags (`L1d`, `L2/L3/DRAM`) overlapped when each sat a fixed offset below its
    marker; they are now placed like labels, clear of each other."""
    import importlib.util

    from aiscan.cli import roofline_inputs

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("images", root / "scripts/readme_images.py")
    assert spec is not None and spec.loader is not None
    images = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(images)
    inputs = roofline_inputs(images._arguments("docs/images/hierarchical-roofline.png"))
    figure = build_figure(inputs.kernels, list(inputs.devices), **inputs.plot_arguments)
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    tags = [t for t in figure.axes[0].texts if str(t.get_gid()).startswith("level-label:")]
    assert len(tags) >= 8
    boxes = [t.get_window_extent(renderer) for t in tags]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b), (a, b)
