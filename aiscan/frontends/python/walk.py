"""A libcst visitor run over a tree without rebuilding it.

libcst's own `node.visit(visitor)` rebuilds every node it passes (`_visit_and_replace_
children` makes a new node from the visited children, validation included), even for a
read-only `CSTVisitor`. The Python frontend's read-only walks (the evidence of each
function's shapes, its `self.*` uses, its configuration parameters, ...) ran it over every
function body, once per call site that lowers the function: a quarter of lowering
`fixtures/python/torch_llama.py`. `walk` calls the same `visit_<Node>` and `leave_<Node>`
methods on the same nodes in the same order, and builds nothing.

The order: a node's children are read from its dataclass fields. libcst visits them in
source order, which is the fields' order except for the few nodes listed in
`_SOURCE_ORDER` (a class's decorators and bases come before its body in the source, after
it in the fields). `tests/test_cst_walk.py` holds the walk to libcst's own traversal on
every Python fixture, and the table to libcst's `_visit_and_replace_children`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import fields
from typing import Any

import libcst as cst

__all__ = ["walk"]

_SOURCE_ORDER: dict[str, tuple[str, ...]] = {
    "Arg": ("keyword", "value"),
    "ClassDef": ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    "ExceptHandler": ("type", "name", "body"),
    "ExceptStarHandler": ("type", "name", "body"),
    "FunctionDef": ("decorators", "name", "type_parameters", "params", "returns", "body"),
    "IfExp": ("body", "test", "orelse"),
    "ImportFrom": ("relative", "module", "names"),
    "LazyImportFrom": ("relative", "module", "names"),
    "MatchCase": ("pattern", "guard", "body"),
    "Parameters": (
        "posonly_params",
        "posonly_ind",
        "params",
        "star_arg",
        "kwonly_params",
        "star_kwarg",
    ),
    "TypeAlias": ("name", "type_parameters", "value"),
}
"""Nodes whose children that can hold code come in another order than their fields:
those children in libcst's (source) order. Their other fields follow in field order."""

_TOKEN_FIELDS = re.compile(
    r"whitespace.*|.*_whitespace|lpar|rpar|lbracket|rbracket|lbrace|rbrace|comma|semicolon"
    r"|equal|dot|colon|first_colon|second_colon|leading_lines|lines_after_decorators|header"
    r"|footer|newline|empty_lines|first_line|last_line|comment|asynchronous|operator"
)
"""Fields that hold whitespace, comments, brackets, separators or an operator's token: no
code. Most of a tree's nodes are these (`SimpleWhitespace` alone is two fifths of
`torch_llama.py`'s), and no visitor here reads them: `walk` does not go into them."""

_Hooks = tuple[Callable[[Any, Any], Any] | None, Callable[[Any, Any], Any] | None]

_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}
_HOOKS: dict[tuple[type[cst.CSTVisitor], type[cst.CSTNode]], _Hooks] = {}


def walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """`node.visit(visitor)` for a visitor that only reads code: each node's
    `visit_<Node>` (its children are skipped when it returns False), its children, its
    `leave_<Node>`; whitespace and tokens are not visited (`_TOKEN_FIELDS`)."""
    kind = type(node)
    hooks = _HOOKS.get((type(visitor), kind))
    if hooks is None:
        hooks = _hooks(type(visitor), kind)
    visit, leave = hooks
    if visit is None or visit(visitor, node) is not False:
        names = _FIELDS.get(kind)
        if names is None:
            names = _fields(kind)
        for name in names:
            child = getattr(node, name)
            if isinstance(child, cst.CSTNode):
                walk(child, visitor)
            elif isinstance(child, tuple | list):
                for item in child:
                    if isinstance(item, cst.CSTNode):
                        walk(item, visitor)
    if leave is not None:
        leave(visitor, node)


def _hooks(visitor: type[cst.CSTVisitor], kind: type[cst.CSTNode]) -> _Hooks:
    """The visitor's own `visit_<Node>` and `leave_<Node>`; None for libcst's empty ones,
    which every visitor inherits for every node."""
    found = tuple(
        None if method is getattr(cst.CSTVisitor, name, None) else method
        for name in (f"visit_{kind.__name__}", f"leave_{kind.__name__}")
        for method in (getattr(visitor, name, None),)
    )
    hooks: _Hooks = (found[0], found[1])
    _HOOKS[(visitor, kind)] = hooks
    return hooks


def _fields(kind: type[cst.CSTNode]) -> tuple[str, ...]:
    """The fields of `kind` that can hold code, in libcst's order."""
    names = tuple(f.name for f in fields(kind) if not _TOKEN_FIELDS.fullmatch(f.name))
    first = _SOURCE_ORDER.get(kind.__name__, ())
    ordered = (*first, *(n for n in names if n not in first))
    _FIELDS[kind] = ordered
    return ordered
