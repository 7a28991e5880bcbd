"""A hover's placements before the file's analysis (`LintContext.printed_placements`) are
made without sympy's `simplify` of the AI, which `placement_lines` does not print: every
line they print must be the full placement's, and a cache level whose AI is printed as an
expression (no sizes) is placed in full. They are not kept: a rule prints the AI."""

from __future__ import annotations

import pytest
from golden import FIXTURES

from aiscan.analysis.kernel import AnalysisOptions, RegionAnalysis, analyze_module
from aiscan.lint.context import LintContext
from aiscan.pipeline import PipelineOptions, lower_source
from aiscan.report.placement_format import placement_lines
from aiscan.roofline import placement as placement_module
from aiscan.roofline.devices import load_devices
from aiscan.sources import read_source

# Tiles and triangles (ceilings, branch fractions), model code with floors of sizes, and
# loops the cache model places on a CPU: the ratios `simplify` is called for.
FILES = (
    "c/polyhedral_footprints.c",
    "c/tiled_loops.c",
    "c/loop_conditions.c",
    "c/jacobi2d_time.c",
    "c/polybench_cholesky.c",
    "python/tiles.py",
    "python/control.py",
    "python/torch_llama.py",
)
DEVICES = ("h100-sxm", "xeon-8480plus")


def _context(path: str, memo: dict | None = None) -> LintContext:
    source = FIXTURES / path
    module = lower_source(read_source(str(source)), str(source), PipelineOptions())
    catalog = load_devices()
    devices = tuple(catalog.get(name) for name in DEVICES)
    analysis = analyze_module(module, AnalysisOptions())
    return LintContext(analysis, "", devices, placement_memo=memo)


def _nests(context: LintContext) -> list[RegionAnalysis]:
    return [region for _, region in context.nests()]


@pytest.mark.parametrize("path", FILES)
def test_a_hovers_placements_print_what_the_full_placements_print(path: str) -> None:
    context = _context(path)
    nests = _nests(context)
    assert nests
    for region in nests:
        printed = [placement_lines(p) for p in context.printed_placements(region)]
        assert printed == [placement_lines(p) for p in context.placements(region)]


def test_a_model_nest_is_placed_for_its_hover_without_simplify(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memo: dict = {}
    context = _context("python/torch_llama.py", memo)
    (region,) = [r for r in _nests(context) if r.region.span.line == 67]

    def simplified(*args: object) -> None:
        raise AssertionError("simplify's form of the AI was made")

    monkeypatch.setattr(placement_module, "_intensity_and_limit", simplified)
    printed = context.printed_placements(region)
    assert all(p.intensity is not None for p in printed if not isinstance(p, str))
    assert not memo  # the rules' placements are made in full, later
    monkeypatch.undo()
    full = context.placements(region)
    assert [placement_lines(p) for p in printed] == [placement_lines(p) for p in full]
    assert [str(p.intensity) for p in printed] != [str(p.intensity) for p in full]
    assert len(memo) == 1


def test_a_cache_level_that_prints_its_ai_is_placed_in_full() -> None:
    memo: dict = {}
    context = _context("python/tiles.py", memo)
    region = next(
        r
        for r in _nests(context)
        if any(
            level.intensity_flops_per_byte is None
            for p in context.placements(r)
            if not isinstance(p, str)
            for level in p.levels
        )
    )
    memo.clear()
    printed = context.printed_placements(region)
    assert len(memo) == 1  # placed in full, and kept
    assert printed == list(next(iter(memo.values())))
