"""Precision keys and the rules that map a kernel's element type onto a device peak.

A kernel computes in the precision of its element type; a device publishes peaks for some
precisions only. The rules below pick the peak a performance engineer would quote, and
say so when it is not the requested one. They never pick a faster unit than asked for:
fp64 uses the vector peak unless `fp64_tensor` is requested, fp32 never becomes tf32.
"""

from __future__ import annotations

from typing import Final

from aiscan.errors import UsageError

__all__ = [
    "FLOAT_PRECISIONS",
    "PRECISIONS",
    "fallback_chain",
    "normalize_precision",
]

PRECISIONS: Final = (
    "fp64",
    "fp64_tensor",
    "fp32",
    "tf32",
    "bf16",
    "fp16",
    "bf16_vector",
    "fp16_vector",
    "fp8",
    "int8",
)
"""Every peak key a device file may carry, widest first. On GPUs `bf16`/`fp16` are the
tensor-core figures and `bf16_vector`/`fp16_vector` the CUDA-core (non-tensor) ones."""

FLOAT_PRECISIONS: Final = frozenset(PRECISIONS) - {"int8"}

_SPELLINGS: Final[dict[str, str]] = {
    "double": "fp64",
    "float64": "fp64",
    "f64": "fp64",
    "float": "fp32",
    "float32": "fp32",
    "f32": "fp32",
    "single": "fp32",
    "half": "fp16",
    "float16": "fp16",
    "_float16": "fp16",
    "f16": "fp16",
    "bfloat16": "bf16",
    "__bf16": "bf16",
    "int8_t": "int8",
    "i8": "int8",
    "float8": "fp8",
}

_OTHER_INTEGERS: Final = frozenset(
    {"int", "int16", "int32", "int64", "long", "short", "char", "uint8", "int16_t", "int32_t"}
)

# Where a device lacks the requested peak, the next key that runs the same arithmetic at
# least as exactly: tensor fp64 is fp64, tf32 is fp32 with shorter mantissas, 16-bit
# formats widen to fp32 (what a unit without them does), fp32 on an fp64-only machine runs
# on the fp64 units (Blue Gene/Q's QPX does). Never narrower, never a tensor unit.
_FALLBACK: Final[dict[str, tuple[str, ...]]] = {
    "fp64": (),
    "fp64_tensor": ("fp64",),
    "fp32": ("fp64",),
    "tf32": ("fp32", "fp64"),
    "bf16": ("fp32", "fp64"),
    "fp16": ("fp32", "fp64"),
    # A device without a non-tensor 16-bit figure: its plain key (the only 16-bit figure a
    # CPU file has; on a GPU the tensor-core one, an over-estimate that keeps times bounds).
    "bf16_vector": ("bf16", "fp32", "fp64"),
    "fp16_vector": ("fp16", "fp32", "fp64"),
    "fp8": ("fp16", "fp32", "fp64"),
    "int8": (),
}


def normalize_precision(text: str) -> str:
    """Map a spelling (`double`, `float32`, `bfloat16`, `BF16`) to a peak key.

    Integer types other than int8 raise: integer arithmetic is not counted as FLOPs, so no
    FLOP/s peak applies to it.
    """
    key = text.strip().lower()
    key = _SPELLINGS.get(key, key)
    if key in PRECISIONS:
        return key
    if key in _OTHER_INTEGERS:
        raise UsageError(
            f"precision {text!r}: integer arithmetic is not counted as FLOPs, so no peak "
            "applies; only int8 (tensor/matrix TOPS) is placed"
        )
    raise UsageError(f"unknown precision {text!r}; known: {', '.join(PRECISIONS)}")


def fallback_chain(precision: str) -> tuple[str, ...]:
    """The requested key followed by the keys tried when a device lacks it, in order."""
    key = normalize_precision(precision)
    return (key, *_FALLBACK[key])
