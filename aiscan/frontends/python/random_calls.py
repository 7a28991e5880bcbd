"""Random arrays: `np.random.rand(n, m)`, `rng.standard_normal((n, m))` and their kin.

Benchmark scripts and initialization code fill their inputs with random numbers; without
these the arrays downstream have no shape and nothing after them is counted. Each call is
an allocation of the requested shape and dtype whose every element is written once.
Generating a number is integer work (a bit generator and a scaling multiply), not the
kernel's: it counts no FLOPs (docs/python.md). A call without a size is one scalar.

Both APIs are read: the legacy functions of `np.random` (also methods of a
`np.random.RandomState`), and the methods of a `np.random.default_rng(seed)` Generator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.arguments import _dtype_argument, _keyword, _positional, _shape
from aiscan.frontends.python.constructions import Construction
from aiscan.frontends.python.expressions import Allocation, Value
from aiscan.frontends.python.values import Leaf, Scalar, Shape
from aiscan.ir.nodes import ElementType, UnknownKind

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import ExpressionReader
    from aiscan.frontends.python.nests import Namer
    from aiscan.span import Span

__all__ = ["GENERATORS", "GENERATOR_REASON", "read_generator_method", "read_random_call"]

GENERATOR_REASON = "is a random number generator, usable only through its methods"
GENERATORS = frozenset({"default_rng", "Generator", "RandomState", "PCG64", "MT19937"})
"""`np.random` callables whose result is a generator object, not an array."""

# Where each function takes its size: `*dims` (separate extents) or the position of `size`.
_LEGACY: dict[str, int | None] = {
    "rand": None,
    "randn": None,
    "random": 0,
    "random_sample": 0,
    "sample": 0,
    "ranf": 0,
    "standard_normal": 0,
    "uniform": 2,
    "normal": 2,
    "randint": 2,
}
_GENERATOR: dict[str, int] = {
    "random": 0,
    "standard_normal": 0,
    "uniform": 2,
    "normal": 2,
    "integers": 2,
    "exponential": 1,
}
_INTEGER_RESULTS = frozenset({"randint", "integers"})


def read_random_call(reader: ExpressionReader, node: cst.Call, function: str) -> Value | None:
    """A legacy `np.random.<function>(...)` call (or a `RandomState` method); None, with
    the call noted, for one not modeled here."""
    if function == "seed":
        return Scalar(dtypes.PYTHON_INT, True, reader.names.text(node), constant=True)
    if function not in _LEGACY:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: this random function")
    where = _LEGACY[function]
    if where is None:  # `rand(d0, d1, ...)`: the extents as separate arguments
        shapes = [_shape(reader, argument) for argument in _positional(node)]
        if any(shape is None for shape in shapes):
            _no_size(reader, node)
            return None
        return _random(reader, node, tuple(e for shape in shapes if shape for e in shape), function)
    return _sized(reader, node, function, where)


def read_generator_method(reader: ExpressionReader, node: cst.Call, method: str) -> Value | None:
    """`rng.<method>(...)` of a `default_rng` Generator."""
    if method not in _GENERATOR:
        return reader.unsupported(node, f"`{reader.names.text(node)}`: this generator method")
    return _sized(reader, node, method, _GENERATOR[method])


def _sized(reader: ExpressionReader, node: cst.Call, function: str, where: int) -> Value | None:
    """A call whose `size` is a keyword or the positional argument at `where`."""
    positional = _positional(node)
    size = _keyword(node, "size")
    if size is None and len(positional) > where:
        size = positional[where]
    if size is None or (isinstance(size, cst.Name) and size.value == "None"):
        return _random(reader, node, (), function)
    shape = _shape(reader, size)
    if shape is None:
        _no_size(reader, node)
        return None
    return _random(reader, node, shape, function)


def _no_size(reader: ExpressionReader, node: cst.Call) -> None:
    reader.note(
        UnknownKind.UNKNOWN_SHAPE,
        node,
        f"`{reader.names.text(node)}`: the size is not a tuple of sizes; its work is not counted",
    )


def _random(reader: ExpressionReader, node: cst.Call, shape: Shape, function: str) -> Value | None:
    element = _element(reader, node, function)
    if element is None:
        return None
    text = reader.names.text(node)
    if not shape:
        return Scalar(element, False, text, constant=True)

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        return Construction(((leaf, Scalar(leaf.element, False, text, constant=True)),))

    return Allocation(shape, element, True, text, build)


def _element(reader: ExpressionReader, node: cst.Call, function: str) -> ElementType | None:
    given = _keyword(node, "dtype")
    if given is None:
        return dtypes.INT64 if function in _INTEGER_RESULTS else dtypes.FLOAT64
    element = _dtype_argument(reader, node)
    if element is None:
        reader.unsupported(node, f"`{reader.names.text(given)}`: not a known dtype")
    return element
