"""`aiscan roofline` analyzes and places each file in the scan's workers: what it joins is
what one process made before, kernel by kernel and placement by placement."""

from __future__ import annotations

from pathlib import Path

from aiscan.cli import (
    RooflineInputs,
    _config,
    _parser,
    _pipeline_options,
    _placement_options,
    roofline_inputs,
)
from aiscan.pipeline import analyze_path
from aiscan.roofline.kernels import module_kernels
from aiscan.roofline.placement import Placement
from aiscan.roofline.plot import KernelSpec, placements, swept_path

ROOT = Path(__file__).resolve().parent.parent
DEVICES = ["--device", "h100-sxm", "--device", "epyc-9654", "--device", "l4"]


def _inputs_and_in_process(
    *files: str, sizes: tuple[str, ...] = ()
) -> tuple[RooflineInputs, list[KernelSpec], tuple[list[tuple[KernelSpec, Placement]], list[str]]]:
    """`roofline_inputs` on the fixtures `files`, and the kernels and placements one
    process makes of the same files (`module_kernels`, `placements`)."""
    paths = [str(ROOT / "fixtures" / f) for f in files]
    arguments = _parser().parse_args(["roofline", *paths, *DEVICES, *sizes, "-o", "unused.png"])
    inputs = roofline_inputs(arguments)
    config = _config(arguments)
    options, placement = _pipeline_options(arguments, config), _placement_options(arguments, config)
    assert placement is not None
    analyses = [r.analysis for p in paths if (r := analyze_path(p, options)).analysis is not None]
    kernels = module_kernels(analyses, placement, inputs.plot_arguments["size_range"])
    sizes_given = inputs.plot_arguments["sizes"]
    return inputs, kernels, placements(kernels, placement.devices, sizes=sizes_given)


def test_the_workers_give_what_one_process_gave() -> None:
    files = ("c/daxpy.c", "c/dgemm_ijk.c", "python/views.py", "c/errors/syntax_error.c")
    inputs, kernels, (placed, skipped) = _inputs_and_in_process(*files)
    assert inputs.failed  # the syntax error
    assert [k.label for k in inputs.kernels] == [k.label for k in kernels]
    assert inputs.kernels[0].label == "daxpy.c:daxpy:6"  # several files analyzed
    assert inputs.kernels == kernels  # size paths and cache traffic included
    assert [p for _, p in inputs.placed[0]] == [p for _, p in placed]
    assert [k.label for k, _ in inputs.placed[0]] == [k.label for k, _ in placed]
    assert inputs.placed[1] == skipped
    dgemm = [p for k, p in inputs.placed[0] if k.label.startswith("dgemm")]
    assert [p.device for p in dgemm] == ["h100-sxm", "epyc-9654", "l4"]  # device by device
    # Each pair's path over sizes, evaluated in the workers, in the order of the pairs.
    size_range = inputs.plot_arguments["size_range"]
    assert inputs.paths == [swept_path(k, p, size_range) for k, p in placed]
    assert sum(1 for path in inputs.paths if path) == 33  # no sizes given: symbolic AIs


def test_one_analyzed_file_labels_without_its_name() -> None:
    inputs, kernels, _ = _inputs_and_in_process(
        "c/dgemm_ijk.c", "c/errors/syntax_error.c", sizes=("--size", "n=512")
    )
    assert [k.label for k in inputs.kernels] == ["dgemm:7"] == [k.label for k in kernels]
    assert inputs.plot_arguments["sizes"] == {"n": 512}
    assert inputs.kernels == kernels


def test_a_drawing_gets_the_paths_of_the_simplified_placements() -> None:
    """A PNG's workers keep the AI of NumPy-style code as its ratio stands where only
    sympy's `simplify` would give its printed form (`floor(h/2 - 1/2)` of a strided conv):
    the same paths as the placements the HTML report makes, the same crossovers and
    verdicts; only the printed AI and its limit (which no drawing reads) are left out."""
    inputs, _, (placed, _) = _inputs_and_in_process("python/torch_layers.py")
    drawn = [p for _, p in inputs.placed[0]]
    whole = [p for _, p in placed]
    size_range = inputs.plot_arguments["size_range"]
    assert inputs.paths == [swept_path(k, p, size_range) for k, p in placed]
    kept_as_is = [(d, w) for d, w in zip(drawn, whole, strict=True) if d.intensity != w.intensity]
    assert len(kept_as_is) == 13  # of 21: ratios only `simplify` writes in its form
    for d, w in kept_as_is:
        assert d.intensity_limit is None and w.intensity_limit is not None
        assert (d.crossover, d.bound, d.attainable_flops_per_s) == (
            w.crossover,
            w.bound,
            w.attainable_flops_per_s,
        )
