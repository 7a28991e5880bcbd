"""Triton and torch dtype names as IR element types.

Pointer arguments take the dtype of the torch tensor the host wrapper passes; `tl.*`
dtypes name casts (`.to(tl.float16)`) and accumulators (`tl.zeros(..., dtype=tl.float32)`).
"""

from __future__ import annotations

from collections.abc import Mapping

from aiscan.ir.nodes import ElementType

__all__ = ["FLOAT32", "INT32", "dtype_named", "wider"]

FLOAT16 = ElementType("float16", 2, is_float=True, precision="fp16")
BFLOAT16 = ElementType("bfloat16", 2, is_float=True, precision="bf16")
FLOAT32 = ElementType("float32", 4, is_float=True, precision="fp32")
FLOAT64 = ElementType("float64", 8, is_float=True, precision="fp64")
FLOAT8 = ElementType("float8", 1, is_float=True, precision="fp8")
INT8 = ElementType("int8", 1, is_float=False, precision="int8")
INT16 = ElementType("int16", 2, is_float=False, precision="int16")
INT32 = ElementType("int32", 4, is_float=False, precision="int32")
INT64 = ElementType("int64", 8, is_float=False, precision="int64")
BOOL = ElementType("bool", 1, is_float=False, precision="int8")

_BY_NAME: Mapping[str, ElementType] = {
    "float16": FLOAT16,
    "fp16": FLOAT16,
    "half": FLOAT16,
    "bfloat16": BFLOAT16,
    "bf16": BFLOAT16,
    "float32": FLOAT32,
    "fp32": FLOAT32,
    "float": FLOAT32,
    "float64": FLOAT64,
    "fp64": FLOAT64,
    "double": FLOAT64,
    "float8e4nv": FLOAT8,
    "float8e5": FLOAT8,
    "float8_e4m3fn": FLOAT8,
    "float8_e5m2": FLOAT8,
    "int8": INT8,
    "uint8": INT8,
    "int16": INT16,
    "int32": INT32,
    "int64": INT64,
    "long": INT64,
    "int1": BOOL,
    "bool": BOOL,
}


def dtype_named(name: str) -> ElementType | None:
    """`float16` from `tl.float16` or `torch.float16` (the attribute's name)."""
    return _BY_NAME.get(name)


def wider(first: ElementType, second: ElementType) -> ElementType:
    """The result type of arithmetic on both: floats over integers, then the wider."""
    if first.is_float != second.is_float:
        return first if first.is_float else second
    return first if first.width_bytes >= second.width_bytes else second
