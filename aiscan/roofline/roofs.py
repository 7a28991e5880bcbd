"""Which compute roof a kernel runs on: the kind of operation decides, not only its dtype.

A GPU has two kinds of arithmetic units. Contractions a library hands to BLAS (`@`,
`matmul`, `dot`, `einsum`, `tensordot`, `linalg.*`) run on the tensor (matrix) cores of
their dtype: fp64 on the FP64 tensor cores, fp16/bf16 on theirs, fp32 on the FP32 units or,
when the framework's precision policy says so, on the TF32 tensor cores. Element-wise
operations, reductions and C loops run on the CUDA (vector) cores, whose 16-bit peaks are
far below the tensor-core ones. The H100 measurements in `shared/gpu-reference` show both:
cuBLAS runs a float64 `A @ B` at 57-64 TFLOP/s, above the 34 TFLOP/s FP64 vector roof.

Each choice names the roof and why, e.g. "FP64 tensor core (BLAS contraction)". CPU
device files hold one figure per precision, the vector units', and keep it for both kinds.
This module imports only the standard library and `precision`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from aiscan.roofline.precision import normalize_precision

if TYPE_CHECKING:
    from aiscan.roofline.devices import Device

__all__ = ["CONTRACTION", "LOOPS", "VECTOR", "Roof", "roof_for", "roof_label"]

CONTRACTION: Final = "BLAS contraction"
VECTOR: Final = "element-wise/reduction"
LOOPS: Final = "loop code"

_TENSOR_KEYS: Final = frozenset({"fp64_tensor", "tf32", "bf16", "fp16", "fp8", "int8"})
_CONTRACTION_KEYS: Final = {"fp64": "fp64_tensor", "fp32": "fp32"}
_VECTOR_KEYS: Final = {"fp16": "fp16_vector", "bf16": "bf16_vector"}
_NAMES: Final = {
    "fp64": "FP64",
    "fp64_tensor": "FP64",
    "fp32": "FP32",
    "tf32": "TF32",
    "bf16": "BF16",
    "fp16": "FP16",
    "bf16_vector": "BF16",
    "fp16_vector": "FP16",
    "fp8": "FP8",
    "int8": "INT8",
}


@dataclass(frozen=True, slots=True)
class Roof:
    """The peak key asked of the device, and the words that say which roof and why."""

    precision: str
    reason: str
    """Why this roof: `BLAS contraction`, `element-wise/reduction`, `C loop`, plus the
    precision policy that chose TF32 when one did."""


def roof_for(
    precision: str,
    *,
    contraction: bool,
    device_kind: str,
    tf32: str | None = None,
    vector_reason: str = VECTOR,
) -> Roof:
    """The peak key for work of `precision` (an element type's key) of one kind.

    `tf32` is the reason fp32 contractions run in TF32 (a framework default or setting), or
    None for full FP32. On a CPU the plain key serves both kinds (its files have no tensor
    figures but for matrix engines, which NumPy's BLAS does not promise to use).
    """
    key = normalize_precision(precision)
    if contraction:
        if key == "fp32" and tf32 is not None:
            return Roof("tf32", f"{CONTRACTION}, fp32 in TF32: {tf32}")
        if device_kind == "gpu":
            key = _CONTRACTION_KEYS.get(key, key)
        return Roof(key, CONTRACTION)
    if device_kind == "gpu":
        key = _VECTOR_KEYS.get(key, key)
    return Roof(key, vector_reason)


def roof_label(precision_used: str, device: Device) -> str:
    """The roof in words: "FP64 tensor core", "FP16 CUDA cores", "FP64 vector units"."""
    name = _NAMES.get(precision_used, precision_used.upper())
    if device.kind != "gpu":
        return f"{name} vector units" if precision_used in ("fp64", "fp32") else f"{name} peak"
    matrix = "matrix core" if "amd" in device.name.lower() else "tensor core"
    if precision_used in _TENSOR_KEYS:
        return f"{name} {matrix}"
    return f"{name} {'CUDA cores' if 'nvidia' in device.name.lower() else 'vector units'}"
