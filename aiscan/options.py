"""The options every layer passes along, in a module that imports nothing heavy.

Defined here (and re-exported where they are used) so that a fully cached scan can build
its cache keys without importing sympy, pycparser or libcst.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from aiscan.given_shapes import GivenShape
from aiscan.roofline.devices import Device

__all__ = ["AnalysisOptions", "PipelineOptions", "PlacementOptions"]


@dataclass(frozen=True)
class AnalysisOptions:
    """Knobs of the counting contract that MODEL.md leaves to the user."""

    write_allocate: bool = False
    special_weight: int = 0
    """FLOPs a special function (sqrt, exp, ...) adds to the total; reported apart always."""
    sizes: Mapping[str, int] = field(default_factory=dict)
    placed_view: str | None = None
    """The traffic model a placement reads (`aiscan roofline`'s `--model`): each region
    then counts only the traffic view that model places (`kernel._wanted_views`); None
    counts every view, as the reports print them."""


@dataclass(frozen=True)
class PipelineOptions:
    include_dirs: tuple[str, ...] = ()
    defines: Mapping[str, str] = field(default_factory=dict)
    analysis: AnalysisOptions = field(default_factory=AnalysisOptions)
    python_dtype: str | None = None
    """The dtype of Python arrays and scalars nothing in the code types (`--python-dtype`);
    None: the framework's default (float64 for NumPy, float32 for PyTorch and JAX)."""
    jax_enable_x64: bool | None = None
    """Setting that overrides what a JAX module says about x64 (None: the code decides)."""
    fp32_matmul_tf32: bool | None = None
    """Setting: float32 contractions in TF32 (True) or full FP32 (False); None: the
    framework's policy as the code states it."""
    triton_config: str = "first"
    """`--triton-config`: an autotuned Triton kernel's first config, or `all` of them."""
    launches: tuple[str, ...] = ()
    """CUDA kernel launches `KERNEL:GRID:BLOCK` (`--launch`); they replace the launches a
    file makes of those kernels."""
    configured_launches: tuple[str, ...] = ()
    """The same from the configuration's `launch` table (origin `configuration`), for the
    kernels `launches` does not name."""
    language: str | None = None
    """`--language`: every file read as this language (`c`, `cuda`, `python`), whatever
    its extension; None: each by its extension."""
    shapes: tuple[GivenShape, ...] = ()
    """Shapes stated for parameters (`--shape`, `[tool.aiscan.shapes]`), the command
    line's after the configuration's (a later one for the same key wins)."""


@dataclass(frozen=True)
class PlacementOptions:
    devices: tuple[Device, ...] = ()
    model: str = "compulsory"
    dtype: str | None = None
    """Precision override (normalized key); None takes the kernel's element type."""
    sparse: bool = False
    write_allocate: bool | None = None
    """None follows each device's store policy."""
    roof: str = "datasheet"
    """`attainable`: the device files' measured figures where they have them."""
    threads: int | None = None
    """Threads for every nest (`--threads`, the `threads` setting); None: the code decides
    (one thread unless an OpenMP directive or a library contraction says otherwise)."""
    threads_reason: str = ""
    """Where `threads` was set, for the report (`--threads 8`)."""
    cflags: str | None = None
    """The compiler flags the C code is built with (`--cflags`); None: `-O3`. They decide
    which dependency chains the compiler may break (reassociation) or fuse (FMA)."""
