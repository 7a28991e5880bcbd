"""The Python frontend's modules import in one direction: no circle, lazy imports included.

A function-level import (or one under `if TYPE_CHECKING:`) is still an import: a circle
through one means neither module can be read, changed or tested without the other. The
readers of calls, subscripts and layers reach the evaluator only through the
`ExpressionReader` interface it hands them (`expressions.py`), never by importing it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

import aiscan.frontends.python

PACKAGE = "aiscan.frontends.python"
_ROOT = Path(aiscan.frontends.python.__file__).parent


def _imported(node: ast.ImportFrom | ast.Import, modules: set[str]) -> set[str]:
    """The package's modules an import statement names (relative, absolute, or as names)."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    elif node.level == 1:
        base = node.module or ""
        targets = [base] if base else [alias.name for alias in node.names]
    elif node.level == 0 and node.module == PACKAGE:
        targets = [alias.name for alias in node.names]  # `from ...python import dtypes`
    elif node.level == 0 and node.module is not None:
        targets = [node.module]
    else:
        targets = []
    found = set()
    for target in targets:
        name = target.removeprefix(f"{PACKAGE}.").split(".")[0]
        if name in modules:
            found.add(name)
    return found


def import_graph(root: Path) -> nx.DiGraph:
    """Module -> module it imports, for every import statement anywhere in the file."""
    modules = {path.stem for path in root.glob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _imported(node, modules) - {path.stem}:
                    graph.add_edge(path.stem, target)
    return graph


def test_the_graph_sees_function_level_and_type_checking_imports(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from .b import x\n")
    (tmp_path / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from aiscan.frontends.python.c import y\n"
        "def f():\n    from aiscan.frontends.python import a\n"
    )
    (tmp_path / "c.py").write_text("import aiscan.frontends.python.a\n")
    graph = import_graph(tmp_path)
    assert sorted(graph.edges) == [("a", "b"), ("b", "a"), ("b", "c"), ("c", "a")]
    assert not nx.is_directed_acyclic_graph(graph)


def test_the_python_frontend_imports_without_a_circle() -> None:
    graph = import_graph(_ROOT)
    assert graph.number_of_nodes() > 30 and graph.number_of_edges() > 150  # read them all
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert circles == [], f"import circles in {PACKAGE}: {circles}"


def test_only_the_lowering_imports_the_evaluator() -> None:
    graph = import_graph(_ROOT)
    assert sorted(graph.predecessors("evaluator")) == ["lowering"]
    assert sorted(graph.predecessors("calls")) == ["evaluator", "lowering"]
