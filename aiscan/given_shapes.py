"""Shapes a user states for parameters the code leaves open: `--shape q=b,h,n,d` and the
`[tool.aiscan.shapes]` table.

The text is read here, once, and checked before any work starts (a malformed one is a
`UsageError`). Extents are integer expressions in size names (`4*d`, `n + 1`, `n//2`),
read with Python's parser and walked node by node: nothing is evaluated, and nothing but
names, integers and `+ - * // **` is accepted. This module imports nothing heavy: the
frontend turns the extents into sympy (`extent_value`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from aiscan.errors import UsageError

__all__ = [
    "SHAPE_DTYPES",
    "GivenShape",
    "extent_value",
    "parse_shape",
    "shapes_matched",
    "unmatched_shape_warnings",
]

SHAPE_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
"""The dtypes a stated shape may carry after a colon (`x=n,d:float16`)."""

_SHOWN = 60

_OPERATORS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Pow: lambda a, b: a**b,
}


@dataclass(frozen=True)
class GivenShape:
    """One stated shape: for parameter `name` (or `function.name`), its extents (each an
    expression's text, `()` for a scalar) and optionally its dtype."""

    key: str
    extents: tuple[str, ...]
    dtype: str | None
    source: str
    """Where it was stated, for messages: `--shape q=b,h,n,d`, or `PATH: shapes.q` for the
    configuration's key."""

    @property
    def function(self) -> str | None:
        """`attention` of `attention.q` (`Block.forward` of `Block.forward.x`); None for a
        bare parameter name, which applies in every function."""
        head, _, _ = self.key.rpartition(".")
        return head or None

    @property
    def parameter(self) -> str:
        return self.key.rpartition(".")[2]


def parse_shape(text: str, where: str = "--shape") -> GivenShape:
    """`NAME=EXTENT,EXTENT,...[:DTYPE]` (NAME may be `function.param`); a `UsageError`
    naming `where` if it is not that."""
    key, equals, rest = text.partition("=")
    key = key.strip()
    source = f"--shape {_shown(text)}" if where == "--shape" else f"{where}.{key}"
    if not equals or not all(part.isidentifier() for part in key.split(".")):
        raise UsageError(f"{source}: expected NAME=EXTENT,...[:DTYPE]")
    extents_text, colon, dtype = rest.partition(":")
    dtype = dtype.strip()
    if colon and dtype not in SHAPE_DTYPES:
        choices = ", ".join(SHAPE_DTYPES)
        raise UsageError(f"{source}: dtype {dtype!r} is not one of {choices}")
    extents = tuple(e.strip() for e in extents_text.split(",")) if extents_text.strip() else ()
    for extent in extents:
        problem = _extent_problem(extent)
        if problem:
            raise UsageError(f"{source}: extent {extent!r} {problem}")
    return GivenShape(key, extents, dtype or None, source)


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class _Function(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def parameters(self) -> Sequence[_Named] | None: ...


def shapes_matched(shapes: Iterable[GivenShape], functions: Iterable[_Function]) -> list[str]:
    """The keys of `shapes` that name a parameter of one of `functions` (IR functions: a
    name and their parameters): the others are warned about (`unmatched_shape_warnings`)."""
    found = {(f.name, p.name) for f in functions for p in f.parameters or ()}
    names = {p for _, p in found}
    return sorted(
        s.key
        for s in shapes
        if (s.function is None and s.parameter in names) or (s.function, s.parameter) in found
    )


def unmatched_shape_warnings(shapes: Iterable[GivenShape], matched: Iterable[str]) -> list[str]:
    """One warning per stated shape whose parameter no analyzed function has."""
    used = set(matched)
    warnings = []
    for shape in shapes:
        if shape.key in used:
            continue
        where = f"function `{shape.function}`" if shape.function else "analyzed function"
        warnings.append(f"{shape.source}: no {where} has a parameter `{shape.parameter}`")
    return warnings


def extent_value(text: str, symbol: Callable[[str], Any]) -> Any:
    """The extent `text` (already checked by `parse_shape`) built from `symbol(name)` and
    Python integers with Python's operators (on sympy symbols: a sympy expression)."""
    return _value(ast.parse(text, mode="eval").body, symbol)


def _value(node: ast.expr, symbol: Callable[[str], Any]) -> Any:
    if isinstance(node, ast.Name):
        return symbol(node.id)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        return -_value(node.operand, symbol)
    assert isinstance(node, ast.BinOp)
    return _OPERATORS[type(node.op)](_value(node.left, symbol), _value(node.right, symbol))


def _extent_problem(text: str) -> str | None:
    """Why `text` is no extent expression, or None."""
    if not text:
        return "is empty"
    if len(text) > 200:
        return "is too long"
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "is not an expression"
    bad = _bad_node(tree.body, 0)
    if bad:
        return bad
    if not any(isinstance(n, ast.Name) for n in ast.walk(tree)):
        value = _value(tree.body, lambda name: name)
        if value <= 0:
            return "is not a positive extent"
    return None


def _bad_node(node: ast.expr, depth: int) -> str | None:
    if depth > 20:
        return "is nested too deeply"
    if isinstance(node, ast.Name):
        return None
    if isinstance(node, ast.Constant):
        value = node.value
        ok = type(value) is int and value < 2**63
        return None if ok else "has a constant that is no integer extent"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _bad_node(node.operand, depth + 1)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        if isinstance(node.op, ast.Pow) and not (
            isinstance(node.right, ast.Constant)
            and type(node.right.value) is int
            and 0 <= node.right.value <= 16
        ):
            return "has a power whose exponent is not an integer literal from 0 to 16"
        return _bad_node(node.left, depth + 1) or _bad_node(node.right, depth + 1)
    return "uses what an extent cannot (names, integers and + - * // ** only)"


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN else f"{text[: _SHOWN - 10]}... ({len(text)} characters)"
