"""The yardstick for un-annotated NumPy (issue 28): run each NPBench ``*_numpy.py`` kernel with
duck arrays that count, then compare aiscan's figures for the same file at the same sizes.

The counting run wraps every array in :class:`Counted`, which implements
``__array_ufunc__``/``__array_function__`` around a real ndarray: each NumPy call computes its
real result and is tallied by MODEL.md's conventions (``+ - * /`` 1 FLOP per element, complex
operations by their real counts, a reduction of ``n`` elements ``n - 1``, ``(m,k) @ (k,n)``
``m*n*(2k - 1)``, ``x**p`` for a small integer ``p`` ``p - 1`` multiplies, math functions
special, integer arithmetic, comparisons, ``abs``, ``max``, ``min`` 0), and its eager bytes are
what the call reads and writes (each distinct array operand read once, the result written;
``np.empty``/``np.zeros`` write nothing, as aiscan counts them). Element reads and writes by
integer indices (loop code) cost their width; scalars live in registers. A NumPy call the
table below does not know is run uncounted and listed (``uncounted``), so a gap in the
yardstick is visible, never a silent zero.

This script runs the benchmark's code: that is its job as a validation run. aiscan itself
never runs or imports what it analyzes.

Usage:
    python scripts/count_numpy.py measure NPBENCH_DIR -o tests/data/npbench_counts.json
    python scripts/count_numpy.py compare NPBENCH_DIR tests/data/npbench_counts.json
    python scripts/count_numpy.py fixture   # fixtures/python/benchmark_idioms.py, stored in
                                            # tests/data/benchmark_idioms_counts.json
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import math
import re
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import sympy

ROOT = Path(__file__).resolve().parent.parent

# Sizes smaller than NPBench's "S" preset where the run in pure-Python loops would be slow or
# where "S" is larger than needed; every figure is compared at the sizes actually run.
_SMALLER: dict[str, dict[str, Any]] = {
    "cholesky2": {"N": 200},
    "durbin": {"N": 200},
    "gramschm": {"M": 40, "N": 30},
    "jacobi1d": {"TSTEPS": 50, "N": 400},
    "lu": {"N": 30},
    "ludcmp": {"N": 30},
    "mvt": {"N": 1000},
    "trisolv": {"N": 400},
    "mlp": {"C_in": 3, "N": 8, "S0": 3000, "S1": 200, "S2": 200},
    "azimhist": {"N": 40000, "npt": 100},
    "azimnaiv": {"N": 40000, "npt": 100},
    "spmv": {"M": 512, "N": 512, "nnz": 1024},
}


class Tally:
    """What the run counted, per kernel line (FLOPs, specials, eager bytes)."""

    def __init__(self, kernel_file: str) -> None:
        self.kernel_file = kernel_file
        self.flops: dict[int, int] = defaultdict(int)
        self.special: dict[int, int] = defaultdict(int)
        self.read: dict[int, int] = defaultdict(int)
        self.write: dict[int, int] = defaultdict(int)
        self.uncounted: dict[str, int] = defaultdict(int)
        self.selected: dict[int, list[int]] = defaultdict(lambda: [0, 0])
        """Per line, the data-dependent quantities aiscan names: the elements boolean masks
        select and their extent (summed over the line's executions), the elements integer
        arrays gather and how many gathers ran."""

    def line(self) -> int:
        """The line of the kernel file that made the NumPy call being counted."""
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self.kernel_file:
                return frame.f_lineno
            frame = frame.f_back  # type: ignore[assignment]
        return 0

    def select(self, chosen: int, extent: int) -> None:
        """A boolean selection or masked store (`chosen` of `extent` elements), or an
        integer-array gather (`chosen` elements, one gather as the extent)."""
        counts = self.selected[self.line()]
        counts[0] += chosen
        counts[1] += extent

    def add(self, flops: int = 0, special: int = 0, read: int = 0, write: int = 0) -> None:
        line = self.line()
        self.flops[line] += flops
        self.special[line] += special
        self.read[line] += read
        self.write[line] += write


TALLY: Tally | None = None

_FREE_UFUNCS = {
    "absolute", "negative", "positive", "maximum", "minimum", "fmax", "fmin", "sign",
    "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and",
    "logical_or", "logical_not", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "invert", "left_shift", "right_shift", "isnan", "isinf", "isfinite", "floor", "ceil",
    "trunc", "rint", "conjugate", "real", "imag", "clip", "copysign", "signbit",
}  # fmt: skip
_OPERATOR_UFUNCS = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div",
                    "true_divide": "div", "floor_divide": "div", "remainder": "div"}  # fmt: skip


def _raw(value: Any) -> Any:
    if isinstance(value, Counted):
        return value.a
    if isinstance(value, (list, tuple)):
        return type(value)(_raw(v) for v in value)
    return value


def _wrap(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return Counted(value)
    if isinstance(value, np.generic) and not isinstance(value, (np.bool_, np.integer)):
        return Counted(np.asarray(value))
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _floating(dtype: np.dtype[Any]) -> bool:
    return dtype.kind in "fc"


def _bytes_of(*values: Any) -> int:
    """Eager reads of a call's operands: each distinct element of its arrays of rank >= 1
    once (`A[:-2] + A[1:-1]` reads m + 1 elements of A, as aiscan's eager view counts a
    call's reads); 0-d values live in registers."""
    by_base: dict[int, list[np.ndarray]] = defaultdict(list)
    for value in values:
        array = _raw(value)
        if isinstance(array, np.ndarray) and array.ndim >= 1 and array.size:
            base = array if array.base is None else array.base
            while isinstance(base, np.ndarray) and base.base is not None:
                base = base.base
            by_base[id(base)].append(array)
    total = 0
    for views in by_base.values():
        if len(views) == 1:
            total += views[0].nbytes
            continue
        total += _union_bytes(views)
    return total


def _union_bytes(views: list[np.ndarray]) -> int:
    """Bytes of the distinct elements several views of one buffer touch."""
    start = min(v.__array_interface__["data"][0] for v in views)
    itemsize = views[0].itemsize
    spans = []
    for view in views:
        offset = view.__array_interface__["data"][0] - start
        grid = np.indices(view.shape, sparse=True)
        positions = offset + sum(g * s for g, s in zip(grid, view.strides, strict=True))
        spans.append(np.broadcast_to(positions, view.shape).ravel() // itemsize)
    last = max(int(p.max()) for p in spans)
    touched = np.zeros(last + 1, dtype=bool)
    for positions in spans:
        touched[positions] = True
    return int(touched.sum()) * itemsize


def _same_view(a: Any, b: Any) -> bool:
    return (
        isinstance(a, np.ndarray)
        and isinstance(b, np.ndarray)
        and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
        and a.shape == b.shape
        and a.strides == b.strides
        and a.dtype == b.dtype
    )


def _operator_flops(kind: str, a: Any, b: Any, result_dtype: np.dtype[Any]) -> int:
    """Real operations per element of a binary operator, by aiscan's complex rules."""
    if not _floating(result_dtype):
        return 0
    both = all(np.iscomplexobj(_raw(x)) for x in (a, b))
    if kind in ("add", "sub"):
        return 2 if both else 1
    if kind == "mul":
        return 6 if both else 2 if result_dtype.kind == "c" else 1
    return 11 if both else 2 if result_dtype.kind == "c" else 1


def _power_flops(exponent: Any, size: int, complex_result: bool) -> tuple[int, int]:
    value = _raw(exponent)
    if np.ndim(value) == 0:
        p = float(value)
        if p.is_integer() and 2 <= p <= 16:
            # `p - 1` multiplies; a complex one is 6 real operations (MODEL.md).
            return (int(p) - 1) * size * (6 if complex_result else 1), 0
        if p == 1:
            return 0, 0
    return 0, size


def _elementwise(name: str, inputs: tuple[Any, ...], result: Any) -> tuple[int, int]:
    size = int(np.size(result))
    dtype = np.asarray(result).dtype
    if name in _FREE_UFUNCS or not _floating(dtype):
        return 0, 0
    if name in _OPERATOR_UFUNCS:
        return _operator_flops(_OPERATOR_UFUNCS[name], inputs[0], inputs[1], dtype) * size, 0
    if name in ("square",):
        return size, 0
    if name == "reciprocal":
        return size, 0
    if name in ("power", "float_power"):
        return _power_flops(inputs[1], size, dtype.kind == "c")
    return 0, size  # exp, log, sin, cos, sqrt, tanh, arctan2, ...: special


def _data_bounded(key: Any) -> bool:
    """A slice whose bounds were read from an array (NumPy integers, not Python ints)."""
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, slice) and isinstance(k.start, (np.integer, Counted)) for k in keys)


def _record_selection(masks: list[np.ndarray], key: Any, result: np.ndarray | None) -> None:
    """What a boolean index selected (true count of the mask, and its extent), or how
    many elements an integer-array index gathered: the data-dependent quantities."""
    assert TALLY is not None
    for mask in masks:
        TALLY.select(int(mask.sum()), int(mask.size))
    keys = key if isinstance(key, tuple) else (key,)
    gathers = [k for k in keys if isinstance(k, np.ndarray) and k.dtype.kind in "iu"]
    if gathers and not masks and result is not None:
        TALLY.select(int(gathers[0].size), 1)


class Counted(np.lib.mixins.NDArrayOperatorsMixin):
    """A real ndarray whose every NumPy call is tallied in :data:`TALLY`."""

    __slots__ = ("a",)

    def __init__(self, array: Any) -> None:
        self.a = np.asarray(array)

    # -- attributes NumPy code reads
    shape = property(lambda self: self.a.shape, lambda self, v: setattr(self.a, "shape", v))
    dtype = property(lambda self: self.a.dtype)
    ndim = property(lambda self: self.a.ndim)
    size = property(lambda self: self.a.size)
    itemsize = property(lambda self: self.a.itemsize)
    nbytes = property(lambda self: self.a.nbytes)
    T = property(lambda self: Counted(self.a.T))
    real = property(lambda self: Counted(self.a.real))
    imag = property(lambda self: Counted(self.a.imag))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if TALLY is not None:
            TALLY.uncounted["__array__"] += 1
        return self.a if dtype is None else self.a.astype(dtype)

    def __len__(self) -> int:
        return len(self.a)

    def __iter__(self) -> Iterator[Any]:
        for index in range(len(self.a)):
            yield self[index]

    def __repr__(self) -> str:
        return f"Counted({self.a!r})"

    def __bool__(self) -> bool:
        return bool(self.a)

    def __float__(self) -> float:
        return float(self.a)

    def __int__(self) -> int:
        return int(self.a)

    def __index__(self) -> int:
        return int(self.a)

    def __complex__(self) -> complex:
        return complex(self.a)

    def __hash__(self) -> int:
        return id(self)

    def __format__(self, spec: str) -> str:
        return format(self.a.item() if self.a.ndim == 0 else self.a, spec)

    # -- indexing
    def __getitem__(self, key: Any) -> Any:
        raw = _raw(key)
        result = self.a[raw]
        assert TALLY is not None
        if isinstance(result, np.ndarray) and _data_bounded(key):
            TALLY.select(len(result), 1)  # `A_col[A_row[i]:A_row[i + 1]]`: its length
        if isinstance(result, np.ndarray) and np.shares_memory(result, self.a) and result.ndim:
            return Counted(result)  # a view: no data moves
        index_bytes = _bytes_of(*(raw if isinstance(raw, tuple) else (raw,)))
        if not isinstance(result, np.ndarray) or result.ndim == 0:
            TALLY.add(read=self.a.itemsize + index_bytes)  # an element: loop code
            return _wrap(result)
        masks = [
            k
            for k in (raw if isinstance(raw, tuple) else (raw,))
            if isinstance(k, np.ndarray) and k.dtype == bool
        ]
        source = self.a.nbytes if masks else result.nbytes
        _record_selection(masks, raw, result)
        TALLY.add(read=index_bytes + source, write=result.nbytes)  # a gather
        return Counted(result)

    def __setitem__(self, key: Any, value: Any) -> None:
        raw, value_raw = _raw(key), _raw(value)
        target = self.a[raw]
        if _same_view(target, value_raw):
            # `a[s] -= x` stores `a[s]`'s own view back: NumPy skips the copy.
            return
        self.a[raw] = value_raw
        assert TALLY is not None
        keys = raw if isinstance(raw, tuple) else (raw,)
        masks = [k for k in keys if isinstance(k, np.ndarray) and k.dtype == bool]
        _record_selection(masks, raw, None)
        index_bytes = _bytes_of(*(raw if isinstance(raw, tuple) else (raw,)))
        stored = self.a[raw]
        written = stored.nbytes if isinstance(stored, np.ndarray) else self.a.itemsize
        TALLY.add(read=index_bytes + _bytes_of(value_raw), write=written)

    # -- the protocols
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        raw_inputs = tuple(_raw(x) for x in inputs)
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(_raw(o) for o in out)
        name = ufunc.__name__
        if name in ("matmul", "vecdot") and method == "__call__" and out is None:
            return _contraction(ufunc, *inputs, **kwargs)
        result = getattr(ufunc, method)(*raw_inputs, **kwargs)
        assert TALLY is not None
        target = kwargs["out"][0] if out is not None else result
        written = target.nbytes if isinstance(target, np.ndarray) and target.ndim else 0
        if method == "__call__" or method == "outer":
            flops, special = _elementwise(name, raw_inputs, target)
        elif method == "reduce":
            combines = int(np.size(raw_inputs[0]) - np.size(target))
            free = name in _FREE_UFUNCS or not _floating(np.asarray(target).dtype)
            flops, special = (0 if free else combines), 0
        elif method == "accumulate":
            combines = int(np.size(raw_inputs[0]) - np.size(raw_inputs[0]) // len(raw_inputs[0]))
            flops, special = (0 if name in _FREE_UFUNCS else combines), 0
        else:
            TALLY.uncounted[f"{name}.{method}"] += 1
            flops, special = 0, 0
        TALLY.add(flops, special, _bytes_of(*raw_inputs), written)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        name = func.__name__
        handler = _FUNCTIONS.get(name)
        assert TALLY is not None
        if handler is None:
            TALLY.uncounted[name] += 1
            return _wrap(func(*_raw(args), **{k: _raw(v) for k, v in kwargs.items()}))
        return handler(func, *args, **kwargs)

    # -- methods, as the functions they are
    def __getattr__(self, name: str) -> Any:
        if name in _METHODS:
            return lambda *args, **kwargs: _METHODS[name](self, *args, **kwargs)
        attribute = getattr(self.a, name)
        assert TALLY is not None
        TALLY.uncounted[f".{name}"] += 1
        if callable(attribute):
            return lambda *a, **k: _wrap(attribute(*_raw(a), **{x: _raw(y) for x, y in k.items()}))
        return attribute


def _reduction(kind: str) -> Callable[..., Any]:
    def count(func: Any, a: Any, *args: Any, **kwargs: Any) -> Any:
        raw = _raw(a)
        result = func(raw, *_raw(args), **{k: _raw(v) for k, v in kwargs.items()})
        combines = int(np.size(raw) - np.size(result))
        flops = 0
        if kind in ("sum", "prod") and _floating(np.asarray(result).dtype):
            flops = combines
        if kind == "mean":
            flops = combines + int(np.size(result))
        assert TALLY is not None
        written = result.nbytes if isinstance(result, np.ndarray) and result.ndim else 0
        TALLY.add(flops, 0, _bytes_of(raw), written)
        return _wrap(result)

    return count


def _contraction(func: Any, a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
    ra, rb = _raw(a), _raw(b)
    result = func(ra, rb, *_raw(args), **{k: _raw(v) for k, v in kwargs.items()})
    if np.ndim(ra) == 0 or np.ndim(rb) == 0:
        flops = int(np.size(result))
    else:
        depth = np.shape(ra)[-1]
        flops = int(np.size(result)) * max(2 * depth - 1, 0)  # an empty dot adds nothing
    if not _floating(np.asarray(result).dtype):
        flops = 0
    elif np.asarray(result).dtype.kind == "c":
        flops = int(np.size(result)) * max(8 * np.shape(ra)[-1] - 2, 0)
    assert TALLY is not None
    written = result.nbytes if isinstance(result, np.ndarray) and result.ndim else 0
    TALLY.add(flops, 0, _bytes_of(ra, rb), written)
    return _wrap(result)


def _einsum(func: Any, spec: str, *operands: Any, **kwargs: Any) -> Any:
    raw = [_raw(x) for x in operands]
    result = func(spec, *raw, **{k: _raw(v) for k, v in kwargs.items()})
    inputs = spec.replace(" ", "").partition("->")[0]
    extents: dict[str, int] = {}
    for letters, array in zip(inputs.split(","), raw, strict=True):
        extents.update(zip(letters, np.shape(array), strict=True))
    points = math.prod(extents.values())
    flops = (len(raw) - 1) * points + points - int(np.size(result))
    assert TALLY is not None
    TALLY.add(
        flops if _floating(np.asarray(result).dtype) else 0, 0, _bytes_of(*raw), result.nbytes
    )
    return _wrap(result)


def _moves(read_inputs: bool, write: bool) -> Callable[..., Any]:
    """Allocations, copies and views: no FLOPs; their eager bytes."""

    def count(func: Any, *args: Any, **kwargs: Any) -> Any:
        raw_args = _raw(args)
        result = func(*raw_args, **{k: _raw(v) for k, v in kwargs.items()})
        assert TALLY is not None
        arrays = [x for x in raw_args if isinstance(x, np.ndarray)]
        if args and isinstance(raw_args[0], (list, tuple)):
            arrays += [x for x in raw_args[0] if isinstance(x, np.ndarray)]
        written = result.nbytes if write and isinstance(result, np.ndarray) else 0
        TALLY.add(0, 0, _bytes_of(*arrays) if read_inputs else 0, written)
        return _wrap(result)

    return count


def _ufunc_function(ufunc: np.ufunc) -> Callable[..., Any]:
    def call(func: Any, *args: Any, **kwargs: Any) -> Any:
        return ufunc(*(_wrap_arg(x) for x in args), **kwargs)

    return call


def _wrap_input(value: Any) -> Any:
    """A kernel's argument: arrays and scalars count (float arithmetic on them is FLOPs,
    MODEL.md, `1.0 / N` included; integer arithmetic is not)."""
    if isinstance(value, (int, float, complex, np.number)) and not isinstance(value, bool):
        return Counted(np.asarray(value))
    return _wrap_arg(value)


def _wrap_arg(value: Any) -> Any:
    return Counted(value) if isinstance(value, np.ndarray) else value


def _linalg_solve(func: Any, a: Any, b: Any) -> Any:
    ra, rb = _raw(a), _raw(b)
    n = ra.shape[0]
    k = 1 if rb.ndim == 1 else rb.shape[1]
    flops = sympy.Rational(2, 3) * n**3 - sympy.Rational(1, 2) * n**2 - sympy.Rational(1, 6) * n
    assert TALLY is not None
    result = func(ra, rb)
    TALLY.add(int(flops + k * (2 * n**2 - n)), 0, 0, 0)
    TALLY.uncounted["linalg.solve bytes"] += 1
    return _wrap(result)


def _linalg_inv(func: Any, a: Any) -> Any:
    ra = _raw(a)
    n = ra.shape[0]
    assert TALLY is not None
    flops = sympy.Rational(8, 3) * n**3 - sympy.Rational(3, 2) * n**2 - sympy.Rational(1, 6) * n
    TALLY.add(int(flops), 0, 0, 0)
    TALLY.uncounted["linalg.inv bytes"] += 1
    return _wrap(func(ra))


def _linalg_cholesky(func: Any, a: Any) -> Any:
    ra = _raw(a)
    n = ra.shape[0]
    assert TALLY is not None
    flops = sympy.Rational(1, 3) * n**3 + sympy.Rational(1, 2) * n**2 + sympy.Rational(1, 6) * n
    TALLY.add(int(flops) - n, n, 0, 0)
    TALLY.uncounted["linalg.cholesky bytes"] += 1
    return _wrap(func(ra))


def _var(
    func: Any,
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
) -> Any:
    """NumPy's ``_var``, written with counted calls: mean with keepdims, deviation, its
    square in place, sum, divide (and ``sqrt`` for ``std``)."""
    arr = a if isinstance(a, Counted) else Counted(a)
    count = arr.size // max(np.sum(arr.a, axis=axis, keepdims=True).size, 1)
    mean = np.sum(arr, axis=axis, keepdims=True)
    mean = np.true_divide(mean, count, out=mean, casting="unsafe")
    x = arr - mean
    x = np.multiply(x, x, out=x)
    result = np.sum(x, axis=axis, keepdims=keepdims)
    result = result / max(count - ddof, 0)
    return np.sqrt(result) if func.__name__ == "std" else result


def _cov(
    func: Any,
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: Any = None,
    **kwargs: Any,
) -> Any:
    """NumPy's ``cov`` for one array, written with counted calls."""
    x = Counted(np.array(_raw(m), ndmin=2))
    assert TALLY is not None
    TALLY.add(0, 0, x.nbytes, x.nbytes)  # the copy NumPy makes
    if not rowvar and x.shape[0] != 1:
        x = x.T
    ddof = (0 if bias else 1) if ddof is None else ddof
    fact = x.shape[1] - ddof
    average = np.mean(x, axis=1)
    x -= average[:, None]
    c = np.dot(x, x.T.conj() if np.iscomplexobj(x.a) else x.T)
    c *= np.true_divide(1, fact)
    TALLY.add(1, 0, 0, 0)  # that reciprocal: a float division of two Python ints
    return c.squeeze() if hasattr(c, "squeeze") else c


def _histogram(
    func: Any, a: Any, bins: int = 10, range: Any = None, density: Any = None, weights: Any = None
) -> Any:
    """``np.histogram`` with equal bins as NumPy 2 computes it: the edges (``linspace``),
    the range once, per element ``(a - first_edge) / range * bins`` and, with weights,
    ``bincount``'s add per element and the bins added into the result once per block of
    65,536 elements. Its eager bytes are the call's own, as for any call: ``a`` (and the
    weights) read, the counts and the edges written (docs/python.md)."""
    ra, rw, bins = _raw(a), _raw(weights), int(_raw(bins))
    hist, edges = func(ra, bins, range=range, weights=rw)
    n = int(np.size(ra))
    assert TALLY is not None
    blocks = -(-n // 65536)
    flops = 2 * (bins + 1) + 2 + 1 + 3 * n + (n + blocks * bins if rw is not None else 0)
    TALLY.add(flops, 0, _bytes_of(ra, rw), hist.nbytes + edges.nbytes)
    return Counted(hist), Counted(edges)


def _meshgrid(func: Any, *xi: Any, **kwargs: Any) -> Any:
    """``np.meshgrid``: each vector read, each part written (its copy; ``copy=False``
    returns views, which move nothing)."""
    raw = [_raw(x) for x in xi]
    parts = func(*raw, **kwargs)
    assert TALLY is not None
    if kwargs.get("copy", True):
        TALLY.add(0, 0, _bytes_of(*raw), sum(p.nbytes for p in parts))
    return tuple(_wrap(p) for p in parts)


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sum": _reduction("sum"),
    "prod": _reduction("prod"),
    "mean": _reduction("mean"),
    "max": _reduction("max"),
    "amax": _reduction("max"),
    "min": _reduction("min"),
    "amin": _reduction("min"),
    "argmax": _reduction("max"),
    "argmin": _reduction("min"),
    "dot": _contraction,
    "matmul": _contraction,
    "inner": _contraction,
    "vdot": _contraction,
    "einsum": _einsum,
    "empty_like": _moves(False, False),
    "zeros_like": _moves(False, True),
    "ones_like": _moves(False, True),
    "full_like": _moves(False, True),
    "copy": _moves(True, True),
    "array": _moves(True, True),
    "asarray": _moves(False, False),
    "squeeze": _moves(False, False),
    "reshape": _moves(False, False),
    "transpose": _moves(False, False),
    "flip": _moves(False, False),
    "ravel": _moves(False, False),
    "concatenate": _moves(True, True),
    "hstack": _moves(True, True),
    "vstack": _moves(True, True),
    "stack": _moves(True, True),
    "repeat": _moves(True, True),
    "tile": _moves(True, True),
    "triu": _moves(True, True),
    "tril": _moves(True, True),
    "where": _moves(True, True),
    "shape": _moves(False, False),
    "ndim": _moves(False, False),
    "size": _moves(False, False),
    "result_type": lambda func, *args, **kwargs: func(*_raw(args), **kwargs),  # a dtype
    "clip": _ufunc_function(np._core.umath.clip),
    "cov": _cov,
    "histogram": _histogram,
    "meshgrid": _meshgrid,
    "outer": lambda func, a, b: np.multiply.outer(_wrap_arg(_raw(a).ravel()), _raw(b).ravel()),
    "var": _var,
    "std": _var,
    "solve": _linalg_solve,
    "inv": _linalg_inv,
    "cholesky": _linalg_cholesky,
}

_METHODS: dict[str, Callable[..., Any]] = {
    "sum": lambda self, *a, **k: np.sum(self, *a, **k),
    "mean": lambda self, *a, **k: np.mean(self, *a, **k),
    "max": lambda self, *a, **k: np.max(self, *a, **k),
    "min": lambda self, *a, **k: np.min(self, *a, **k),
    "prod": lambda self, *a, **k: np.prod(self, *a, **k),
    "std": lambda self, *a, **k: np.std(self, *a, **k),
    "var": lambda self, *a, **k: np.var(self, *a, **k),
    "dot": lambda self, other: np.dot(self, other),
    "copy": lambda self: np.copy(self),
    "flatten": lambda self: np.copy(np.ravel(self)),
    "ravel": lambda self: np.ravel(self),
    "transpose": lambda self, *axes: Counted(self.a.transpose(*axes)),
    "reshape": lambda self, *shape, **k: Counted(self.a.reshape(*shape, **k)),
    "astype": lambda self, dtype, **k: _astype(self, dtype),
    "fill": lambda self, value: _fill(self, value),
    "squeeze": lambda self, *a: Counted(self.a.squeeze(*a)),
    "conj": lambda self: np.conjugate(self),
    "item": lambda self, *a: self.a.item(*a),
    "tolist": lambda self: self.a.tolist(),
}


def _astype(self: Counted, dtype: Any) -> Counted:
    result = self.a.astype(dtype)
    assert TALLY is not None
    TALLY.add(0, 0, self.a.nbytes, result.nbytes)
    return Counted(result)


def _fill(self: Counted, value: Any) -> None:
    self.a.fill(_raw(value))
    assert TALLY is not None
    TALLY.add(0, 0, 0, self.a.nbytes)


def _allocation(writes: bool) -> Callable[..., Any]:
    def make(func: Any, *args: Any, **kwargs: Any) -> Any:
        result = func(*_raw(args), **{k: _raw(v) for k, v in kwargs.items()})
        assert TALLY is not None
        TALLY.add(0, 0, 0, result.nbytes if writes else 0)
        return _wrap(result)

    return make


def _linspace(func: Any, start: Any, stop: Any, num: Any = 50, **kwargs: Any) -> Any:
    num = int(_raw(num))
    result = func(_raw(start), _raw(stop), num, **kwargs)
    assert TALLY is not None
    TALLY.add(2 * num + 2, 0, 0, result.nbytes)  # step once; arange * step + start
    return _wrap(result)


_CONSTRUCTORS: dict[str, Callable[..., Any]] = {
    "zeros": _allocation(False),
    "empty": _allocation(False),
    "ndarray": _allocation(False),
    "ones": _allocation(True),
    "full": _allocation(True),
    "arange": _allocation(True),
    "eye": _allocation(True),
    "identity": _allocation(True),
    "array": _allocation(True),
    "fromfunction": _allocation(True),
    "linspace": _linspace,
}


class NumpyProxy:
    """``np`` as the kernel sees it: NumPy, with constructors that return counting arrays."""

    def __getattr__(self, name: str) -> Any:
        real = getattr(np, name)
        if name in _CONSTRUCTORS:
            return lambda *args, **kwargs: _CONSTRUCTORS[name](real, *args, **kwargs)
        if name in ("mgrid", "ogrid"):
            return _GridProxy(real)
        return real


class _GridProxy:
    def __init__(self, grid: Any) -> None:
        self.grid = grid

    def __getitem__(self, key: Any) -> Any:
        result = self.grid[_raw(key)]
        assert TALLY is not None
        arrays = result if isinstance(result, (list, tuple)) else [result]
        TALLY.add(0, 0, 0, sum(a.nbytes for a in arrays))
        return _wrap(result)


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _benchmarks(npbench: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for info_file in sorted((npbench / "bench_info").glob("*.json")):
        info = json.loads(info_file.read_text())["benchmark"]
        yield info_file.stem, info


def _kernel_file(npbench: Path, info: dict[str, Any]) -> Path:
    folder = npbench / "npbench" / "benchmarks" / info["relative_path"]
    return folder / f"{info['module_name']}_numpy.py"


def _sizes(name: str, info: dict[str, Any]) -> dict[str, Any]:
    sizes = dict(info["parameters"]["S"])
    sizes.update(_SMALLER.get(info["short_name"], {}))
    return sizes


class _LineCounter:
    """How many times each statement of the kernel's file ran, keyed by its first line: a
    loop's header runs once per pass and once more at its end, a branch's first statement
    once per pass taking it. A statement over several lines is one execution, however
    often the interpreter moves between its lines."""

    def __init__(self, kernel_file: str) -> None:
        self.kernel_file = kernel_file
        self.counts: dict[int, int] = defaultdict(int)
        self.statement: dict[int, int] = {}
        tree = ast.parse(Path(kernel_file).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt) and not hasattr(node, "body"):
                end = node.end_lineno or node.lineno
                self.statement.update(dict.fromkeys(range(node.lineno, end + 1), node.lineno))
        self.last: dict[int, int] = {}

    def trace(self, frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != self.kernel_file:
            return None
        return self.local

    def local(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            statement = self.statement.get(frame.f_lineno, frame.f_lineno)
            if self.last.get(id(frame)) != statement:
                self.counts[statement] += 1
            self.last[id(frame)] = statement
        elif event == "return":
            self.last.pop(id(frame), None)
        return self.local


def measure_one(npbench: Path, name: str) -> dict[str, Any]:
    """Run one benchmark's NumPy kernel with counting arrays at its sizes."""
    global TALLY
    info = dict(_benchmarks(npbench))[name]
    kernel_file = _kernel_file(npbench, info)
    sizes = _sizes(name, info)
    values = dict(sizes)
    if "init" in info:
        init_module = _load(kernel_file.parent / f"{info['module_name']}.py", f"init_{name}")
        init = getattr(init_module, info["init"]["func_name"])
        outputs = init(*(sizes[a] for a in info["init"]["input_args"]))
        if len(info["init"]["output_args"]) == 1:
            outputs = (outputs,)
        values.update(zip(info["init"]["output_args"], outputs, strict=True))
    kernel_module = _load(kernel_file, f"kernel_{name}")
    kernel_module.np = NumpyProxy()
    kernel = getattr(kernel_module, info["func_name"])
    arguments = [values[a] for a in info["input_args"]]
    parameters = list(kernel.__code__.co_varnames[: kernel.__code__.co_argcount])
    described: dict[str, Any] = {}
    for parameter, value in zip(parameters, arguments, strict=False):
        if isinstance(value, np.ndarray):
            described[parameter] = {"shape": list(value.shape), "dtype": str(value.dtype)}
        elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            described[parameter] = {"int": int(value)}
        else:
            described[parameter] = {"scalar": str(type(value).__name__)}
    TALLY = Tally(str(kernel_file))
    executed = _LineCounter(str(kernel_file))
    started = time.perf_counter()
    sys.settrace(executed.trace)
    try:
        kernel(*(_wrap_input(a) for a in arguments))
    finally:
        sys.settrace(None)
    seconds = time.perf_counter() - started
    lines = sorted(set(TALLY.flops) | set(TALLY.read) | set(TALLY.write) | set(TALLY.special))
    return {
        "kernel": str(kernel_file.relative_to(npbench)),
        "function": info["func_name"],
        "sizes": sizes,
        "parameters": described,
        "flops": sum(TALLY.flops.values()),
        "special": sum(TALLY.special.values()),
        "eager_read": sum(TALLY.read.values()),
        "eager_write": sum(TALLY.write.values()),
        "lines": {
            str(line): [TALLY.flops[line], TALLY.special[line], TALLY.read[line], TALLY.write[line]]
            for line in lines
        },
        "uncounted": dict(TALLY.uncounted),
        "selected": {str(line): counts for line, counts in sorted(TALLY.selected.items())},
        "executed": {str(line): count for line, count in sorted(executed.counts.items())},
        "seconds": round(seconds, 2),
    }


def measure(npbench: Path, output: Path, only: list[str]) -> None:
    """Measure every benchmark in its own process (a time limit each), into one JSON file."""
    figures: dict[str, Any] = json.loads(output.read_text()) if output.exists() else {}
    for name, info in _benchmarks(npbench):
        if only and name not in only and info["short_name"] not in only:
            continue
        command = [sys.executable, __file__, "measure-one", str(npbench), name]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        except subprocess.TimeoutExpired:
            figures[name] = {"error": "timed out"}
            continue
        if done.returncode != 0:
            figures[name] = {"error": done.stderr.strip().splitlines()[-1]}
        else:
            figures[name] = json.loads(done.stdout)
        print(name, figures[name].get("error", figures[name].get("flops")), file=sys.stderr)
    output.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")


_SHAPE_MESSAGE = re.compile(r"`(\w+)` has no annotation: taken as an array of shape \(([^)]*)\)")


def _size_values(measured: dict[str, Any], unknowns: list[dict[str, Any]]) -> dict[str, int]:
    """Bind aiscan's size symbols to the run's values: int parameters, and each array
    parameter's extents as its assumption names them."""
    values: dict[str, int] = {}
    for parameter, described in measured["parameters"].items():
        if "int" in described:
            values[parameter] = described["int"]
    for unknown in unknowns:
        match = _SHAPE_MESSAGE.search(unknown["message"])
        if match is None or match.group(1) not in measured["parameters"]:
            continue
        shape = measured["parameters"][match.group(1)].get("shape", [])
        names = [n.strip() for n in match.group(2).split(",") if n.strip()]
        if 0 < len(names) < len(shape):
            # aiscan took fewer axes than the run has (nothing in the code gives the rank):
            # its first axis stands for the run's leading axes merged, as in C order.
            merged = len(shape) - len(names) + 1
            shape = [math.prod(shape[:merged]), *shape[merged:]]
        if len(names) == len(shape):
            for symbol, extent in zip(names, shape, strict=True):
                values.setdefault(symbol, extent)
    return values


_DATA_DEPENDENT = ("boolean mask", "gathered")
"""How aiscan's messages begin for the quantities the run measures: a mask's fraction, a
gather's length."""


def _measured_values(
    measured: dict[str, Any], unknowns: list[dict[str, Any]], kernel: Path | None = None
) -> dict[str, Any]:
    """aiscan's named data-dependent quantities at what the run observed on their line:
    a mask's fraction is the elements it selected over the elements it covered, summed over
    the line's executions (so a count linear in it is the run's total), a gathered length
    the mean length of the line's gathers; a loop's named trip the mean passes per entry,
    a branch's fraction the share of its tests that took it (from the lines run)."""
    selected = measured.get("selected", {})
    values: dict[str, Any] = {}
    for unknown in unknowns:
        symbol, line = unknown.get("symbol"), str(unknown["line"])
        if symbol and unknown["message"].startswith(_DATA_DEPENDENT) and line in selected:
            chosen, extent = selected[line]
            values.setdefault(symbol, sympy.Rational(chosen, max(extent, 1)))
    if kernel is not None and "executed" in measured:
        values.update(_control_values(measured["executed"], unknowns, kernel, values))
    return values


def _control_values(
    executed: dict[str, int], unknowns: list[dict[str, Any]], kernel: Path, known: dict[str, Any]
) -> dict[str, Any]:
    """`trip_L<line>` and the `p_L<line>` of an `if` at the run's line counts: the header
    line runs once per test, the body's first line once per pass taking it."""
    headers = {
        node.lineno: node
        for node in ast.walk(ast.parse(kernel.read_text()))
        if isinstance(node, (ast.While, ast.For, ast.If))
    }
    values: dict[str, Any] = {}
    for unknown in unknowns:
        symbol = unknown.get("symbol") or ""
        match = re.fullmatch(r"(trip|p)_L(\d+)", symbol)
        if match is None or symbol in known or int(match.group(2)) not in headers:
            continue
        node = headers[int(match.group(2))]
        tests = executed.get(str(node.lineno), 0)
        taken = executed.get(str(node.body[0].lineno), 0)
        if match.group(1) == "trip" and isinstance(node, (ast.While, ast.For)):
            entries = tests - taken
            if entries > 0:
                values[symbol] = sympy.Rational(taken, entries)
        elif match.group(1) == "p" and isinstance(node, ast.If) and tests:
            values[symbol] = sympy.Rational(taken, tests)
    return values


def _evaluate(text: str | None, values: dict[str, Any]) -> int | str | None:
    if text is None:
        return None
    expression = sympy.sympify(text, locals={n: sympy.Symbol(n) for n in values})
    result = expression.subs({sympy.Symbol(k): v for k, v in values.items()})
    if result.free_symbols:
        return "free: " + ", ".join(sorted(str(s) for s in result.free_symbols))
    return int(sympy.floor(result)) if result.is_finite else str(result)


_SWITCH_DTYPES = {"complex64", "complex128", "int8", "int16", "int32", "int64", "uint8"}
"""The dtypes other than float ones that `--python-dtype` takes."""

AISCAN_ROOT = ROOT
"""The checkout whose aiscan is compared (`--aiscan`: another commit's, for a before/after)."""


def aiscan_figures(kernel: Path, measured: dict[str, Any]) -> dict[str, Any]:
    """aiscan's FLOPs, specials and eager bytes for the kernel's function at the run's sizes."""
    command = [sys.executable, "-m", "aiscan", "analyze", str(kernel), "--format", "json"]
    command += ["--no-cache", "--timeout", "600"]
    floats = {
        p["dtype"]
        for p in measured["parameters"].values()
        if p.get("dtype", "").startswith("float")
    }
    arrays = {p["dtype"] for p in measured["parameters"].values() if "dtype" in p}
    if not floats and len(arrays) == 1 and arrays <= _SWITCH_DTYPES:
        floats = arrays  # every array input is of one complex (or one integer) dtype
    if len(floats) == 1:
        # The user's switch for un-annotated arrays: the run's inputs are all of this dtype.
        command += ["--python-dtype", floats.pop()]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=AISCAN_ROOT)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"error": (done.stderr or done.stdout).strip()[-200:]}
    file_report = report["files"][0]
    function = next(
        (f for f in file_report.get("functions", []) if f["name"] == measured["function"]), None
    )
    if function is None:
        return {"error": "; ".join(d["message"] for d in file_report.get("diagnostics", []))}
    values: dict[str, Any] = dict(_size_values(measured, function["unknowns"]))
    observed = _measured_values(measured, function["unknowns"], kernel)
    values.update(observed)
    # The FLOPs are "at the measured fractions" only where their expressions hold one.
    counted = " ".join(function["flops"][key] or "" for key in ("total", "special"))
    in_flops = set(re.findall(r"\w+", counted))
    eager = function["bytes"].get("eager") or {}
    flags = [
        f"{u['line']}: {u['kind']}: {u['message']}"
        for u in function["unknowns"]
        if u["kind"] != "assumption"
    ]
    return {
        "flops": _evaluate(function["flops"]["total"], values),
        "special": _evaluate(function["flops"]["special"], values),
        "eager": _evaluate(eager.get("total"), values),
        "flags": flags,
        "assumed_dtype": any("dtype assumed" in u["message"] for u in function["unknowns"]),
        "measured": sorted(symbol for symbol in observed if symbol in in_flops),
    }


def classify(measured: dict[str, Any], found: dict[str, Any]) -> str:
    """One of the issue's categories (and one more: integer inputs whose dtype the code does
    not show, where aiscan's float64 assumption is stated at the parameter)."""
    measured["integer_data"] = any(
        p.get("dtype", "float").startswith(("int", "uint")) for p in measured["parameters"].values()
    )
    if "error" in found:
        return "aiscan error"
    flagged = bool(found["flags"])
    flops_equal = found["flops"] == measured["flops"] and found["special"] == measured["special"]
    run_bytes = measured["eager_read"] + measured["eager_write"]
    eager = found["eager"]
    bytes_close = isinstance(eager, int) and abs(eager - run_bytes) <= 0.1 * max(run_bytes, 1)
    at = " at the measured fractions" if found["measured"] else ""
    if flops_equal and bytes_close:
        return f"FLOPs equal{at}, eager bytes within 10%"
    if flops_equal:
        return f"FLOPs equal{at}, bytes off"
    if found["flops"] == 0 and flagged:
        return "0 FLOPs (flagged)"
    if flagged:
        return "flagged with a reason"
    if found["assumed_dtype"] and measured["integer_data"]:
        return "wrong: integer data, float64 assumed (said)"
    return "wrong, nothing flagged"


def compare(npbench: Path, stored: Path, only: list[str]) -> None:
    figures = json.loads(stored.read_text())
    counts: dict[str, int] = defaultdict(int)
    print("| kernel | FLOPs run | aiscan | special run | aiscan | eager B run | aiscan | result |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, measured in sorted(figures.items()):
        if only and name not in only:
            continue
        if "error" in measured:
            print(f"| {name} | run failed: {measured['error']} |")
            counts["run failed"] += 1
            continue
        found = aiscan_figures(npbench / measured["kernel"], measured)
        verdict = classify(measured, found)
        counts[verdict] += 1
        run_bytes = measured["eager_read"] + measured["eager_write"]
        print(
            f"| {name} | {measured['flops']} | {found.get('flops')} | {measured['special']} | "
            f"{found.get('special')} | {run_bytes} | {found.get('eager')} | {verdict} |"
        )
        if found.get("measured"):
            print(f"|   | at the run's values of {', '.join(found['measured'])} |")
        if verdict != "FLOPs equal, eager bytes within 10%":
            for flag in found.get("flags", [])[:4]:
                print(f"|   | {flag[:150]} |")
            if measured["uncounted"]:
                print(f"|   | run did not count: {measured['uncounted']} |")
    print()
    for verdict, count in sorted(counts.items()):
        print(f"| {verdict} | {count} |")


# The fixture of issue 28's constructs, run at small sizes: each function's arguments, as
# ("array", shape) or a Python value, and aiscan's size symbols at those sizes.
_FIXTURE = ROOT / "fixtures" / "python" / "benchmark_idioms.py"
_FIXTURE_RUNS: dict[str, tuple[list[Any], dict[str, int]]] = {
    "haversine": ([("array", (1000,))] * 4, {"lon1_d0": 1000}),
    "dense_layer": (
        [("array", (64, 32)), ("array", (32, 16)), ("array", (16,))],
        {"x_d0": 64, "w_d0": 32, "w_d1": 16},
    ),
    "two_products": (
        [1.5, 0.5, ("array", (50, 40)), ("array", (50, 40)), ("array", (40,))],
        {"Q_d0": 50, "v_d0": 40},
    ),
    # z's leading axes are one extent, z_d0 (1 for this vector): aiscan takes it (z_d0, z_d1).
    "normalize": ([("array", (100,))], {"z_d0": 1, "z_d1": 100}),
    "classify": (
        [("array", (20, 30)), ("array", (30, 10)), ("array", (10,))],
        {"n": 20, "k": 30, "w_out_d1": 10},
    ),
    "pair_scores": ([30], {"n": 30}),
    "heat_steps": ([5, ("array", (200,))], {"steps": 5, "u_d0": 200}),
    "relax": ([3, ("array", (20, 25))], {"iters": 3, "grid_d0": 20, "grid_d1": 25}),
    "solver": (
        [2, 3, ("array", (20, 25))],
        {"steps": 2, "sweeps": 3, "grid_d0": 20, "grid_d1": 25},
    ),
    "shifted": ([("array", (50,)), ("array", (50,))], {"b_d0": 50}),
}


def measure_fixture(output: Path) -> None:
    """Run the fixture's functions with counting arrays; store the figures and the sizes."""
    global TALLY
    module = _load(_FIXTURE, "benchmark_idioms")
    module.np = NumpyProxy()
    rng = np.random.default_rng(0)
    figures: dict[str, Any] = {}
    for name, (arguments, sizes) in _FIXTURE_RUNS.items():
        made = [
            Counted(rng.random(a[1])) if isinstance(a, tuple) else _wrap_input(a) for a in arguments
        ]
        TALLY = Tally(str(_FIXTURE))
        getattr(module, name)(*made)
        figures[name] = {
            "sizes": sizes,
            "flops": sum(TALLY.flops.values()),
            "special": sum(TALLY.special.values()),
            "eager": sum(TALLY.read.values()) + sum(TALLY.write.values()),
            "uncounted": dict(TALLY.uncounted),
        }
    output.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["measure", "measure-one", "compare", "fixture"])
    parser.add_argument("npbench", type=Path, nargs="?")
    parser.add_argument("rest", nargs="*")
    parser.add_argument(
        "-o", "--output", type=Path, default=ROOT / "tests/data/npbench_counts.json"
    )
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--aiscan", type=Path, default=ROOT, help="checkout to compare")
    options = parser.parse_args()
    global AISCAN_ROOT
    AISCAN_ROOT = options.aiscan
    if options.action == "fixture":
        measure_fixture(ROOT / "tests" / "data" / "benchmark_idioms_counts.json")
    elif options.action == "measure-one":
        print(json.dumps(measure_one(options.npbench, options.rest[0])))
    elif options.action == "measure":
        measure(options.npbench, options.output, options.only)
    else:
        compare(options.npbench, Path(options.rest[0]) if options.rest else options.output,
                options.only)  # fmt: skip


if __name__ == "__main__":
    main()
