"""An earlier lowering's IR moved to the lines its statements stand on now.

A line added or removed above a statement moves it without changing it, but its lowering
holds its lines: in spans, in the names the lowering makes (`trip_L12`, `p_L45_1`, an
inlined call's `forward_L102_rotate_L72__i25` and arrays `forward_L102_q`), and in the
messages that point at a helper (`line 72, called here`; `lines 72-75`). `Relines`
rewrites each of those by a map from the old lines to the new ones, so the editor can
reuse a moved statement's lowering (`reuse.py`) instead of lowering it again.

The same map moves an analysis of the moved IR (`kernel.FunctionAnalysis`), which holds
lines as numbers too: a dataclass's field named `line`, `..._line` or `..._lines` holds
lines (`tests/test_relines.py` holds every dataclass of the package to that).

Anything it cannot move with certainty raises `Unmoved`: a line the map does not hold (the
statement refers to one an edit changed), a kind of value it does not know. The statement
is then lowered (or analyzed) again. The made names hold `_L` and digits after a word; a
file whose text holds such a name itself is never moved (`movable`), so a user's name is
never read as a line.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from enum import Enum
from fractions import Fraction
from types import BuiltinFunctionType, FunctionType, MethodType
from typing import Any

__all__ = ["Relines", "Unmoved", "movable"]

_MADE = re.compile(r"(?<=\w_L)\d+")
_MESSAGE = re.compile(r"\b(lines? )(\d+)(?:-(\d+))?")
_ANY = re.compile(r"_L\d")


_NUMBERS = frozenset({int, float, bool, type(None), Fraction})


class Unmoved(Exception):
    """A value whose lines cannot be moved with certainty."""


def movable(text: str) -> bool:
    """Whether a lowering of `text` can be moved: no name of the file's own looks like one
    the lowering makes (`x_L2`)."""
    return _ANY.search(text) is None


class Relines:
    """Moves values by one map of old lines to new ones, keeping what they share shared
    (each value is moved once)."""

    def __init__(self, lines: Mapping[int, int]) -> None:
        self.lines = lines
        self._moved: dict[int, tuple[object, object]] = {}
        self._names: dict[str, str] = {}

    def __call__(self, value: Any) -> Any:
        kind = type(value)
        if kind is str:
            return self._text(value) if "_L" in value or "line" in value else value
        if kind in _NUMBERS:
            return value
        found = self._moved.get(id(value))
        if found is not None:
            return found[1]
        moved = self._move(value)
        self._moved[id(value)] = (value, moved)  # the value, so that its id is not reused
        return moved

    def line(self, line: int) -> int:
        moved = self.lines.get(line)
        if moved is None:
            raise Unmoved(f"line {line} is not a reused statement's")
        return moved

    def name(self, name: str) -> str:
        """`name` with each line it holds moved (`trip_L12` -> `trip_L13`)."""
        moved = self._names.get(name)
        if moved is None:
            moved = self._names[name] = _MADE.sub(lambda m: str(self.line(int(m[0]))), name)
        return moved

    def _move(self, value: Any) -> Any:
        mover = _movers_of(type(value))
        return mover(self, value)

    def _text(self, text: str) -> str:
        if "_L" in text:
            text = self.name(text)
        if "line" in text:
            text = _MESSAGE.sub(self._lines_named, text)
        return text

    def _lines_named(self, found: re.Match[str]) -> str:
        """`line 72` or `lines 72-75` in a message, moved."""
        end = f"-{self.line(int(found[3]))}" if found[3] else ""
        return f"{found[1]}{self.line(int(found[2]))}{end}"


def _unchanged(relines: Relines, value: Any) -> Any:
    return value


def _string(relines: Relines, value: str) -> str:
    """A string moved as text; a hinge's name (a `str` that holds its argument) is never
    one the lowering made, and is refused where it holds one."""
    if type(value) is not str:
        if _ANY.search(value):
            raise Unmoved("a hinge on a made name")
        return value
    return relines._text(value)


def _sequence(relines: Relines, value: Any) -> Any:
    items = [relines(item) for item in value]
    if all(new is old for new, old in zip(items, value, strict=True)):
        return value
    return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)


def _mapping(relines: Relines, value: dict[Any, Any]) -> dict[Any, Any]:
    old = [*value.items()]
    new = [(relines(k), relines(v)) for k, v in old]
    unchanged = all(a is c and b is d for (a, b), (c, d) in zip(new, old, strict=True))
    return value if unchanged else dict(new)


def _poly(relines: Relines, value: Any) -> Any:
    from aiscan.algebra import HINGE, symbol

    renamed = {}
    for monomial in value.terms:
        for var, _ in monomial:
            if var[1] == HINGE:
                _string(relines, var[0])
            elif "_L" in var[0] and (new := relines.name(var[0])) != var[0]:
                renamed[var] = symbol(new, var[1])
    return value._replaced(renamed) if renamed else value


def _sympy(relines: Relines, value: Any) -> Any:
    import sympy

    renamed = {}
    for atom in value.atoms(sympy.Symbol, sympy.core.function.AppliedUndef):
        if not isinstance(atom, sympy.Symbol):
            _string(relines, str(atom.func))
        elif "_L" in atom.name and (new := relines.name(atom.name)) != atom.name:
            renamed[atom] = type(atom)(new, **atom._assumptions_orig)
    return value.xreplace(renamed) if renamed else value


def _span(relines: Relines, value: Any) -> Any:
    if (value.line, value.column, value.end_line, value.end_column) == (1, 1, 1, 0):
        return value  # a made node's (`SourceNames.span`): line 1 wherever it is
    line, end = relines.line(value.line), relines.line(value.end_line)
    if line == value.line and end == value.end_line:
        return value
    return dataclasses.replace(value, line=line, end_line=end)


def _quotient(relines: Relines, value: Any) -> Any:
    from aiscan.algebra import Quotient

    top, bottom = relines(value.numerator), relines(value.denominator)
    if top is value.numerator and bottom is value.denominator:
        return value
    return Quotient(top, bottom, factored=value.factored, contents=value.contents)


def _record_of(kind: type) -> Mover:
    """How a dataclass is moved: each field (fields not set by `__init__` are caches, made
    again). A line held as a number is a field named `line`, `..._line` or `..._lines`."""
    plan = [(field.name, _held(field.name)) for field in dataclasses.fields(kind) if field.init]

    def record(relines: Relines, value: Any) -> Any:
        changes = {}
        for name, holds in plan:
            old = getattr(value, name)
            if holds is _VALUE:
                if (new := relines(old)) is not old:
                    changes[name] = new
            elif holds is _LINE:
                if old is not None and (line := relines.line(old)) != old:
                    changes[name] = line
            elif (lines := type(old)(relines.line(line) for line in old)) != old:
                changes[name] = lines
        return dataclasses.replace(value, **changes) if changes else value

    return record


_VALUE, _LINE, _LINES = "value", "line", "lines"


def _held(name: str) -> str:
    """What a dataclass's field holds, by its name: a line, lines, or another value."""
    if name == "line" or name.endswith("_line"):
        return _LINE
    return _LINES if name.endswith("_lines") else _VALUE


def _refused(relines: Relines, value: Any) -> Any:
    raise Unmoved(f"a {type(value).__name__} is not moved")


Mover = Callable[[Relines, Any], Any]
_MOVERS: dict[type, Mover] = {}


def _movers_of(kind: type) -> Mover:
    mover = _MOVERS.get(kind)
    if mover is None:
        mover = _MOVERS[kind] = _mover_for(kind)
    return mover


def _mover_for(kind: type) -> Mover:
    """How a value of `kind` is moved, decided once per type."""
    import libcst as cst

    from aiscan.algebra import Infinity, Poly, Quotient
    from aiscan.span import Span

    if issubclass(kind, int | float | bool | Fraction | Enum | bytes | type(None) | Infinity):
        return _unchanged
    if issubclass(kind, str):
        return _string
    if issubclass(kind, tuple | list | set | frozenset):
        return _sequence
    if issubclass(kind, dict):
        return _mapping
    if issubclass(kind, cst.CSTNode | MethodType | FunctionType | BuiltinFunctionType):
        return _unchanged  # the reused statements' own nodes, placed where they are now
    if kind is Poly:
        return _poly
    if kind is Span:
        return _span
    if kind is Quotient:
        return _quotient
    if dataclasses.is_dataclass(kind):
        return _record_of(kind)
    if kind.__module__.startswith("sympy"):
        return _sympy
    return _refused
