"""NumPy dtypes as IR element types, and NumPy's type promotion (NEP 50).

Widths are NumPy's `itemsize`; bfloat16 follows ml_dtypes/JAX (bf16 with fp16 gives fp32).
Python scalars are *weak*: they take the array's dtype unless their kind is higher.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiscan.ir.nodes import ElementType

__all__ = [
    "BOOL",
    "FLOAT64",
    "INT64",
    "PYTHON_FLOAT",
    "PYTHON_INT",
    "dtype_named",
    "dtype_qualified",
    "magnitude_element",
    "promote",
    "reduction_element",
]

BOOL = ElementType("bool", 1, is_float=False, precision="int8")
INT8 = ElementType("int8", 1, is_float=False, precision="int8")
INT16 = ElementType("int16", 2, is_float=False, precision="int16")
INT32 = ElementType("int32", 4, is_float=False, precision="int32")
INT64 = ElementType("int64", 8, is_float=False, precision="int64")
UINT8 = ElementType("uint8", 1, is_float=False, precision="int8")
FLOAT16 = ElementType("float16", 2, is_float=True, precision="fp16")
BFLOAT16 = ElementType("bfloat16", 2, is_float=True, precision="bf16")
FLOAT32 = ElementType("float32", 4, is_float=True, precision="fp32")
FLOAT64 = ElementType("float64", 8, is_float=True, precision="fp64")
COMPLEX64 = ElementType("complex64", 8, is_float=True, is_complex=True, precision="fp32")
COMPLEX128 = ElementType("complex128", 16, is_float=True, is_complex=True, precision="fp64")

PYTHON_FLOAT = FLOAT64
PYTHON_INT = INT64

_BY_NAME: Mapping[str, ElementType] = {
    **{
        t.name: t
        for t in (
            BOOL,
            INT8,
            INT16,
            INT32,
            INT64,
            UINT8,
            FLOAT16,
            BFLOAT16,
            FLOAT32,
            FLOAT64,
            COMPLEX64,
            COMPLEX128,
        )
    },
    "bool_": BOOL,
    "half": FLOAT16,
    "single": FLOAT32,
    "double": FLOAT64,
    "float_": FLOAT64,
    "float": FLOAT64,
    "int": INT64,
    "complex": COMPLEX128,
    "cfloat": COMPLEX128,
    "bf16": BFLOAT16,
    "f2": FLOAT16,
    "f4": FLOAT32,
    "f8": FLOAT64,
    "i4": INT32,
    "i8": INT64,
    "c8": COMPLEX64,
    "c16": COMPLEX128,
    # jaxtyping's dtype-specific annotations
    "Float16": FLOAT16,
    "BFloat16": BFLOAT16,
    "Float32": FLOAT32,
    "Float64": FLOAT64,
    "Int8": INT8,
    "Int16": INT16,
    "Int32": INT32,
    "Int64": INT64,
    "UInt8": UINT8,
    "Complex64": COMPLEX64,
    "Complex128": COMPLEX128,
    "Bool": BOOL,
}

_KIND_RANK = {"b": 0, "i": 1, "f": 2, "c": 3}


def dtype_named(name: str) -> ElementType | None:
    """`float32`, `np.float32`'s last part, `'f4'`, `Float32` (jaxtyping): the element type."""
    return _BY_NAME.get(name)


_TORCH_NAMES: Mapping[str, ElementType] = {
    "float": FLOAT32,
    "half": FLOAT16,
    "double": FLOAT64,
    "cfloat": COMPLEX64,
    "cdouble": COMPLEX128,
    "long": INT64,
    "int": INT32,
    "short": INT16,
    "bool": BOOL,
}


def dtype_qualified(canonical: str) -> ElementType | None:
    """The dtype a resolved name spells: `numpy.float32`, `torch.bfloat16`, and torch's
    own words (`torch.float` is float32, `torch.half` float16, `torch.long` int64)."""
    module, _, name = canonical.rpartition(".")
    if module == "torch" and name in _TORCH_NAMES:
        return _TORCH_NAMES[name]
    return _BY_NAME.get(name)


def _kind(element: ElementType) -> str:
    if element.is_complex:
        return "c"
    if element.is_float:
        return "f"
    return "b" if element.name == "bool" else "i"


def promote(a: ElementType, a_weak: bool, b: ElementType, b_weak: bool) -> ElementType:
    """The result dtype of a binary ufunc on `a` and `b` (NumPy 2 / NEP 50 rules)."""
    if a_weak and not b_weak:
        return _weak_with(a, b)
    if b_weak and not a_weak:
        return _weak_with(b, a)
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        low, high = (a, b) if _KIND_RANK[ka] < _KIND_RANK[kb] else (b, a)
        if _kind(high) in "fc" and _kind(low) in "bi":
            return _float_holding(low, high)
        return high
    if a == b:
        return a
    if a.width_bytes == b.width_bytes:
        # float16 with bfloat16: neither holds the other (ml_dtypes gives float32).
        return FLOAT32 if ka == "f" else (a if a.name < b.name else b)
    return a if a.width_bytes > b.width_bytes else b


def _weak_with(weak: ElementType, strong: ElementType) -> ElementType:
    """A Python scalar meets an array: the array's dtype wins unless the kind is higher."""
    if _KIND_RANK[_kind(weak)] <= _KIND_RANK[_kind(strong)]:
        return strong
    if _kind(weak) == "c" and _kind(strong) == "f":
        return COMPLEX64 if strong.width_bytes <= 4 else COMPLEX128
    return FLOAT64 if _kind(weak) == "f" else weak


def _float_holding(integer: ElementType, floating: ElementType) -> ElementType:
    """int with float arrays: the smallest float of the float's kind that holds the int."""
    if integer.name == "bool":
        return floating
    need = {1: 2, 2: 4}.get(integer.width_bytes, 8)
    if floating.is_complex:
        return floating if floating.width_bytes >= 2 * need else COMPLEX128
    if floating.width_bytes >= need and floating != BFLOAT16:
        return floating
    return {2: FLOAT16, 4: FLOAT32}.get(max(need, floating.width_bytes * 2), FLOAT64)


def magnitude_element(element: ElementType) -> ElementType:
    """What `abs` of `element`s gives: a complex number's magnitude is real (NumPy's
    `absolute` of complex128 is float64); any other type keeps its own."""
    return {"complex64": FLOAT32, "complex128": FLOAT64}.get(element.name, element)


def reduction_element(kind: str, element: ElementType) -> ElementType:
    """What a reduction of `element`s accumulates in, as NumPy does: a sum of booleans
    counts in int64, a mean of integers sums in float64; anything else keeps its type."""
    if kind == "sum" and element.name == "bool":
        return INT64
    if kind == "mean" and not element.is_float:
        return FLOAT64
    return element
