"""`SourceNames` answers as libcst's `QualifiedNameProvider` and `PositionProvider` do.

It resolves names from its own binding table and positions from one offset-recording
pass; these tests hold it to the providers' answers on sources full of shadowing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider

from aiscan.frontends.python.names import SourceNames, _canonical_of

SHADOWING = '''\
"""Imports every way, then names that shadow them."""
import numpy as np
import numpy.linalg
import jax.numpy as jnp
import torch
from numpy import dot, sum as total
from math import sqrt, pi

N = 64


def local_np(A: Float64[np.ndarray, "n n"], x: Float64[np.ndarray, "n"]):
    np = A
    return np.dot(x) + dot(A, x)


def parameter_np(np: Float64[np.ndarray, "n"], b: Float64[np.ndarray, "n"]):
    return np.sum(b) + numpy.linalg.norm(b)


def assigned_after_use(a: Float64[np.ndarray, "n"]):
    y = dot(a, a)
    dot = 3
    return y


def builtin_shadowed(a: Float64[np.ndarray, "n"], range: int):
    for i in range(4):
        a[i] = a[i] * 2.0
    return total(a) + float(a[0]) + sqrt(pi)


def mirrors(a: Float32[torch.Tensor, "n n"], b: Float32[torch.Tensor, "n n"]):
    return torch.mm(a, b) + jnp.dot(a, b) + torch.linalg.norm(a)


def numpy(a: Float64[np.ndarray, "n"]):
    return a.sum() + len([x for x in range(3)])


def nested_scopes(a: Float64[np.ndarray, "n"]):
    def inner(np):
        return np

    pick = lambda dot: dot
    return np.exp(a) + dot(a, a)


def declared_global(a: Float64[np.ndarray, "n"]):
    global jnp
    return jnp.exp(a)


def deleted(a: Float64[np.ndarray, "n"]):
    del torch
    return torch.exp(a)


def imported_inside(a: Float64[np.ndarray, "n"]):
    import torch as np

    return np.exp(a) + np.mm(a, a)


for i in range(N):
    y = np.zeros(N)
x = dot(np.ones(N), np.ones(N))
dot = None
w = dot(x, x)
'''

CONDITIONAL = """\
try:
    import cupy as np
except ImportError:
    import numpy as np
import numpy as math

N = 32
a = np.ones(N)
b = np.exp(a) + math.sqrt(a)


class Kernel:
    np = 3

    def method(self, a):
        return np.exp(a)


def loop_variable(x: Float64[np.ndarray, "n"]):
    for np in range(3):
        x[np] = 1.0
    return x.sum()
"""


METHODS = """\
import numpy as np
import torch
from torch import nn
from numpy import dot

n = 4


class Attend(nn.Module):
    np = 3
    dot = staticmethod(len)
    width = n * 2

    def __init__(self, dim: int = n):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        torch = None

    def forward(self, x):
        q = self.q(x)
        y = q.view(2, 2).transpose(0, 1)
        return np.exp(y) + dot(y, y) + torch.softmax(q, -1) + self.width

    def shadowing(self, np, a):
        dot = np.sum
        return dot(a) + torch.exp(a)

    def nested(self, a):
        def inner(torch):
            return torch
        return inner(a) + torch.exp(a)


class Twice:
    def forward(self, x):
        return torch.relu(x)

    def forward(self, x):
        return np.tanh(x)


def after(a):
    return np.exp(a) + dot(a, a)
"""


def _scoped_nodes(module: cst.Module) -> Iterator[tuple[cst.FunctionDef | None, cst.CSTNode]]:
    """Every name-like node of the lowered code, with the `def` it is read in: a top-level
    one or a method of a top-level class (the class's own body is read as module code)."""
    for top in module.body:
        statements: list[cst.CSTNode] = [top]
        if isinstance(top, cst.ClassDef) and isinstance(top.body, cst.IndentedBlock):
            statements = list(top.body.body)
        for statement in statements:
            yield from _nodes_in(statement)


def _nodes_in(statement: cst.CSTNode) -> Iterator[tuple[cst.FunctionDef | None, cst.CSTNode]]:
    function = statement if isinstance(statement, cst.FunctionDef) else None
    if function is not None:
        stack: list[cst.CSTNode] = [function.body]
    else:
        stack = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            yield function, node
        stack.extend(node.children)


def _provider_canonical(found: object) -> str | None:
    """What `SourceNames.canonical` answered when it asked the provider itself."""
    if callable(found):
        found = found()
    if not isinstance(found, set):
        return None
    return _canonical_of(frozenset(str(q.name) for q in found))


@pytest.mark.parametrize(
    "source", [SHADOWING, CONDITIONAL, METHODS], ids=["shadowing", "conditional", "methods"]
)
def test_names_agree_with_the_qualified_name_provider(source: str) -> None:
    module = cst.parse_module(source)
    provided = MetadataWrapper(module, unsafe_skip_copy=True).resolve(QualifiedNameProvider)
    names = SourceNames(module, ast.parse(source), "k.py")
    checked = 0
    for function, node in _scoped_nodes(module):
        found = provided.get(node)
        if not callable(found):
            continue  # libcst gives no scope to e.g. the `attr` of an attribute
        expected = _provider_canonical(found)
        assert names.within(function).canonical(node) == expected, module.code_for_node(node)
        checked += 1
    assert checked > 20


def _call_names(source: str, function: str) -> list[str | None]:
    module = cst.parse_module(source)
    names = SourceNames(module, ast.parse(source), "k.py")
    (definition,) = (
        s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == function
    )
    inside = names.within(definition)
    calls: list[str | None] = []
    stack: list[cst.CSTNode] = [definition.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            calls.append(inside.canonical(node.func))
        stack.extend(reversed(node.children))
    return calls


def test_shadowing_is_detected() -> None:
    assert _call_names(SHADOWING, "local_np") == [None, "numpy.dot"]
    assert _call_names(SHADOWING, "parameter_np") == [None, "numpy.linalg.norm"]
    # As libcst reads it: a name read before the function assigns it is the module's.
    assert _call_names(SHADOWING, "assigned_after_use") == ["numpy.dot"]
    assert _call_names(SHADOWING, "mirrors") == ["numpy.matmul", "numpy.dot", "numpy.linalg.norm"]
    assert _call_names(SHADOWING, "imported_inside") == ["numpy.exp", "numpy.matmul"]


@pytest.mark.parametrize(
    "source", [SHADOWING, CONDITIONAL, METHODS], ids=["shadowing", "conditional", "methods"]
)
def test_spans_and_texts_agree_with_the_position_provider(source: str) -> None:
    for newline in ("\n", "\r\n", "\r"):
        text = source.replace("\n", newline)
        module = cst.parse_module(text)
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        names = SourceNames(module, ast.parse(source), "k.py")
        for node, where in positions.items():
            span = names.span(node)
            assert (span.line, span.column) == (where.start.line, where.start.column + 1)
            assert (span.end_line, span.end_column) == (where.end.line, where.end.column + 1)
            if not isinstance(node, (cst.Annotation, cst.Module)):  # no text standalone
                assert names.text(node) == " ".join(module.code_for_node(node).split())


def test_method_locals_resolve_without_libcsts_scopes() -> None:
    """A method's own names (`q`, `self`, `x`) are read from its own scope: libcst's
    provider, a pass over the whole module, is asked only where the class body binds the
    name read (`np` in `Attend`)."""
    module = cst.parse_module(METHODS)
    names = SourceNames(module, ast.parse(METHODS), "k.py")
    twice = next(s for s in module.body if isinstance(s, cst.ClassDef) and s.name.value == "Twice")
    answers = [
        names.within(function).canonical(node)
        for statement in twice.body.body
        for function, node in _nodes_in(statement)
    ]
    assert {"numpy.tanh", "numpy.relu"} <= set(answers)
    assert names._bindings._fallback is None


class _Stop(BaseException):
    """What a time limit raises mid-pass (`scan.AnalysisTimedOut` is a BaseException)."""


def test_a_positions_pass_stopped_midway_raises_what_stopped_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A time limit that fires while the positions are recorded must reach the editor as
    itself: the records left open may not look up a node whose end was never reached
    (that was a `KeyError`, reported as "could not analyze this text")."""
    text = "def f(x):\n    for i in range(3):\n        x[i] = x[i] + 1\n    return x\n"
    module = cst.parse_module(text)
    names_seen = 0
    original = cst.Name._codegen_impl

    def stop_at_the_third_name(self: cst.Name, state: object) -> None:
        nonlocal names_seen
        names_seen += 1
        if names_seen == 3:
            raise _Stop
        original(self, state)

    monkeypatch.setattr(cst.Name, "_codegen_impl", stop_at_the_third_name)
    with pytest.raises(_Stop):
        SourceNames(module, ast.parse(text), "f.py")
