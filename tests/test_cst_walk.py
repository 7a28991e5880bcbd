"""`walk` calls a read-only visitor's hooks on the same nodes, in the same order, as
libcst's own `visit`, without rebuilding the tree."""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import fields
from pathlib import Path

import libcst as cst
import pytest

from aiscan.frontends.python import inference, settings, summaries
from aiscan.frontends.python.walk import _SOURCE_ORDER, _TOKEN_FIELDS, _fields, walk

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
        theirs = [f for f in _libcst_order(kind) if not _TOKEN_FIELDS.fullmatch(f)]
        ours = [f for f in _fields(kind) if f in theirs]
        assert ours == theirs, kind.__name__
    assert set(_SOURCE_ORDER) <= {k.__name__ for k in kinds}


_CODE = (cst.BaseExpression, cst.BaseStatement, cst.BaseSmallStatement, cst.BaseSuite)


def test_token_fields_hold_no_code_on_any_fixture() -> None:
    """What `walk` does not go into (whitespace, brackets, separators, operators) holds
    no expression, statement or suite: a visitor of code misses nothing there."""
    skipped = 0
    for path in FIXTURES:
        try:
            module = cst.parse_module(path.read_bytes())
        except cst.ParserSyntaxError:
            continue
        stack: list[cst.CSTNode] = [module]
        while stack:
            node = stack.pop()
            for field in fields(node):
                value = getattr(node, field.name)
                values = value if isinstance(value, tuple | list) else (value,)
                children = [v for v in values if isinstance(v, cst.CSTNode)]
                if _TOKEN_FIELDS.fullmatch(field.name):
                    for child in children:
                        inside: list[cst.CSTNode] = [child]
                        while inside:
                            token = inside.pop()
                            assert not isinstance(token, _CODE), (path, field.name, token)
                            inside.extend(token.children)
                            skipped += 1
                stack.extend(children)
    assert skipped > 10_000
