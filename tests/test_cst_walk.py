"""`walk` calls a read-only visitor's hooks on the same nodes, in the same order, as
libcst's own `visit`, without rebuilding the tree."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from dataclasses import fields
from pathlib import Path

import libcst as cst
import pytest

from aiscan.frontends.python import inference, settings, summaries
from aiscan.frontends.python.walk import _SOURCE_ORDER, _fields, walk

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures" / "python").rglob("*.py"))

VISITORS = (
    summaries._Reads,
    inference._Walker,
    inference._SelfUses,
    inference._ArrayForm,
    inference._Names,
    settings._Uses,
)


def _hooked() -> set[str]:
    """The node classes aiscan's visitors have a `visit_` or `leave_` for."""
    names = set()
    for visitor in VISITORS:
        for attribute in vars(visitor):
            if attribute.startswith(("visit_", "leave_")):
                names.add(attribute.split("_", 1)[1])
    return names


class _Recording(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, str, int]] = []


def _recorder(skip: str | None) -> type[_Recording]:
    """A visitor that records each hook it is called with, on the nodes aiscan's visitors
    hook (and on `Name`, the commonest leaf); `skip`'s children are not visited."""

    def visit(kind: str):  # type: ignore[no-untyped-def]
        def hook(self, node):  # type: ignore[no-untyped-def]
            self.calls.append(("visit", kind, id(node)))
            return kind != skip

        return hook

    def leave(kind: str):  # type: ignore[no-untyped-def]
        def hook(self, node):  # type: ignore[no-untyped-def]
            self.calls.append(("leave", kind, id(node)))

        return hook

    namespace: dict[str, object] = {}
    for kind in _hooked() | {"Name", "IfExp", "Decorator", "Param"}:
        namespace[f"visit_{kind}"] = visit(kind)
        namespace[f"leave_{kind}"] = leave(kind)
    return type("Recorder", (_Recording,), namespace)


@pytest.mark.parametrize("skip", [None, "Attribute", "Call"])
def test_walk_calls_the_hooks_libcst_calls_on_every_fixture(skip: str | None) -> None:
    recorder = _recorder(skip)
    walked = 0
    for path in FIXTURES:
        try:
            module = cst.parse_module(path.read_bytes())
        except cst.ParserSyntaxError:
            continue  # the fixtures of bad input
        walked += 1
        theirs, ours = recorder(), recorder()
        module.visit(theirs)
        walk(module, ours)
        assert ours.calls == theirs.calls, path
    assert walked > 50


def test_walk_reads_decorators_and_bases_before_a_body() -> None:
    """The nodes whose fields are not in source order."""
    source = (
        "@d1\nclass C(B, metaclass=M):\n"
        "    @d2\n    def f(x: T = v) -> R:\n        return a if t else b\n"
    )
    recorder = _recorder(None)
    theirs, ours = recorder(), recorder()
    module = cst.parse_module(source)
    module.visit(theirs)
    walk(module, ours)
    names = [c for c in ours.calls if c[1] == "Name" and c[0] == "visit"]
    assert len(names) == 14  # d1 C B metaclass M d2 f x T v R a t b
    assert ours.calls == theirs.calls


_TOKEN_FIELD = re.compile(
    r"^(whitespace.*|.*_whitespace|lpar|rpar|lbracket|rbracket|lbrace|rbrace|comma|semicolon"
    r"|equal|dot|colon|first_colon|second_colon|leading_lines|lines_after_decorators|header"
    r"|footer|newline|indent|asynchronous|empty_lines|first_line|last_line|comment"
    r"|walrus|arrow|star|operator)$"
)
"""Fields that hold whitespace or one token: no node a visitor of code reads."""


def _libcst_order(kind: type[cst.CSTNode]) -> list[str]:
    """The fields in the order `_visit_and_replace_children` visits them, read from its source."""
    source = textwrap.dedent(inspect.getsource(kind._visit_and_replace_children))
    names = {f.name for f in fields(kind)}
    calls = sorted(
        (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    order: list[str] = []
    for call in calls:
        for argument in call.args:
            value = getattr(argument, "value", None)
            if isinstance(argument, ast.Constant) and value in names and value not in order:
                order.append(value)
    return order


def _concrete_nodes() -> list[type[cst.CSTNode]]:
    found = []
    for name in dir(cst):
        kind = getattr(cst, name)
        if inspect.isclass(kind) and issubclass(kind, cst.CSTNode) and not inspect.isabstract(kind):
            found.append(kind)
    return found


def test_source_order_table_is_libcsts_order_of_code_fields() -> None:
    kinds = _concrete_nodes()
    assert len(kinds) > 100
    for kind in kinds:
        theirs = [f for f in _libcst_order(kind) if not _TOKEN_FIELD.match(f)]
        ours = [f for f in _fields(kind) if f in theirs]
        assert ours == theirs, kind.__name__
    assert set(_SOURCE_ORDER) <= {k.__name__ for k in kinds}
