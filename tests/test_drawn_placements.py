"""A drawing's placements (`simplified=False`) keep sympy's `simplify` off their path: where
a ratio needs more than the sympy-free forms, it is cancelled (`_drawn_cancelled`). Every
figure a drawing reads must be the simplified placement's: the bound, the bounding level,
each level's rate at the sizes and in the limit, and which symbols that do not grow the AI
holds (a path is drawn only for an AI in growing sizes alone; those all take one value)."""

from __future__ import annotations

import pytest
import sympy
from golden import FIXTURES

from aiscan.analysis.kernel import AnalysisOptions, analyze_module
from aiscan.options import PlacementOptions
from aiscan.pipeline import PipelineOptions, lower_source
from aiscan.roofline.devices import load_devices
from aiscan.roofline.kernels import module_kernels
from aiscan.roofline.placement import _drawn_cancelled, _intensity_and_limit, growing_symbols
from aiscan.roofline.plot import place_kernel
from aiscan.sources import read_source

# Tiles (ceilings of sizes over tile sizes), triangles and branch fractions (`p_L...`),
# NumPy and PyTorch code with floors of sizes: the ratios `simplify` was called for.
FILES = (
    "c/polyhedral_footprints.c",
    "c/tiled_loops.c",
    "c/loop_conditions.c",
    "c/index_conditions.c",
    "python/tiles.py",
    "python/control.py",
    "python/torch_llama.py",
)


def _kernels(path: str, device_key: str) -> list:
    source = FIXTURES / path
    module = lower_source(read_source(str(source)), str(source), PipelineOptions())
    device = load_devices().get(device_key)
    options = PlacementOptions(devices=(device,), model="auto")
    return [
        (k, device) for k in module_kernels([analyze_module(module, AnalysisOptions())], options)
    ]


def _drawn_figures(placement: object) -> tuple[object, ...]:
    if isinstance(placement, str):
        return (placement,)
    levels = tuple(
        (lv.level, lv.intensity_flops_per_byte, lv.attainable_flops_per_s,
         lv.attainable_limit_flops_per_s)
        for lv in placement.levels
    )  # fmt: skip
    intensity = placement.intensity
    symbols = (
        None if intensity is None else intensity.free_symbols - set(growing_symbols(intensity))
    )
    return (
        placement.bound, placement.bound_level, placement.intensity_flops_per_byte,
        placement.attainable_flops_per_s, placement.crossover, levels, symbols,
    )  # fmt: skip


@pytest.mark.parametrize("path", FILES)
@pytest.mark.parametrize("device_key", ["xeon-8480plus", "h100"])
def test_a_drawn_placement_draws_as_the_simplified_one(path: str, device_key: str) -> None:
    kernels = _kernels(path, device_key)
    assert kernels
    for kernel, device in kernels:
        drawn = place_kernel(kernel, device, simplified=False)
        printed = place_kernel(kernel, device, simplified=True)
        assert _drawn_figures(drawn) == _drawn_figures(printed), kernel.label


n, m, p = sympy.symbols("n m p_L5", positive=True)
b = sympy.Symbol("b", positive=True, integer=True)


@pytest.mark.parametrize(
    "ratio",
    [
        (-n * p + 2 * n) / (16 * n),  # a branch fraction stays
        (n * p + n) / (8 * n * p + 8 * n),  # ... and one cancels: a path is drawn
        2 * n**3 / (24 * n**3 + 32 * n**2 * sympy.ceiling(n / b)),
        (n**2 - 3 * n + 2) / (16 * n - 16),  # unbounded
        6
        * m
        * sympy.floor(sympy.floor(n / m) / 2)
        / (56 * m * sympy.floor(sympy.floor(n / m) / 2) + 16 * n),  # a factor that is 0/0
    ],
)
def test_a_cancelled_ratio_has_the_simplified_ratios_symbols_and_limit(
    ratio: sympy.Expr,
) -> None:
    cancelled, limit = _drawn_cancelled(ratio, True)
    simplified, simplified_limit = _intensity_and_limit(*ratio.as_numer_denom())
    assert cancelled.free_symbols == simplified.free_symbols
    assert sympy.simplify(cancelled - simplified) == 0
    limit, simplified_limit = sympy.sympify(limit), sympy.sympify(simplified_limit)
    assert limit == simplified_limit or sympy.simplify(limit - simplified_limit) == 0
