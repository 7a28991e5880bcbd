"""`aiscan roofline` counts only the traffic view its placements read (`placed_view`): every
kernel it places must be the one the full analysis, every view counted, gives."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from aiscan.options import PipelineOptions, PlacementOptions
from aiscan.pipeline import analyze_path
from aiscan.roofline.kernels import kernel_spec

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# Loops, NumPy and framework calls (eager), compiled functions (jit), GPU launches.
FILES = (
    "c/daxpy.c",
    "c/polybench_2mm.c",
    "python/loops.py",
    "python/loop_eager.py",
    "python/jit_view.py",
    "python/frameworks_torch.py",
    "python/frameworks_jax.py",
    "python/library.py",
    "triton/vector_add.py",
    "cuda/bf16_scale.cu",
)
MODELS = ("auto", "compulsory", "streaming", "cache")


def _regions(path: str, placed_view: str | None) -> list:
    options = PipelineOptions()
    options = replace(options, analysis=replace(options.analysis, placed_view=placed_view))
    analysis = analyze_path(str(FIXTURES / path), options).analysis
    assert analysis is not None
    return [
        (f"{function.function.name}:{region.region.span.line}", region)
        for function in analysis.functions
        for region in function.regions
        if region.region.kind == "nest" and region.flops.total != 0
    ]


@pytest.mark.parametrize("path", FILES)
@pytest.mark.parametrize("model", MODELS)
def test_a_placed_view_places_as_every_view_does(path: str, model: str) -> None:
    placement = PlacementOptions(model=model)
    every = _regions(path, None)
    placed = _regions(path, model)
    assert [label for label, _ in placed] == [label for label, _ in every]
    assert every, path
    for (label, full), (_, alone) in zip(every, placed, strict=True):
        assert kernel_spec(label, alone, placement) == kernel_spec(label, full, placement)


def test_array_code_counts_its_own_view_alone() -> None:
    """Under `auto`, an eager region counts its eager view and a compiled one its jit
    view, neither the fused view (the compulsory bytes) nor the other."""
    views = {
        path: {label: set(region.traffic) for label, region in _regions(path, "auto")}
        for path in ("python/loop_eager.py", "python/frameworks_jax.py")
    }
    counted = [v for found in views.values() for v in found.values()]
    assert {"eager", "streaming"} in counted
    assert {"jit", "streaming"} in counted
    assert all("fused" not in v and "compulsory" not in v for v in counted if len(v) == 2)
    every = [set(r.traffic) for _, r in _regions("python/frameworks_jax.py", None)]
    assert {"compulsory", "streaming", "fused", "eager", "jit"} in every
