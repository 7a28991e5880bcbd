"""The loop-nest graph: functions, nests, loops, statements and accesses as a networkx DiGraph.

Edges point from a container to what it contains (and from a statement to its accesses);
every node carries its kind, a label and its source line, so `aiscan graph` shows a user
exactly what the analyzer understood. networkx stays behind this module's API.
"""

from __future__ import annotations

import json
from typing import Any

from aiscan.ir.nodes import Branch, Loop, Module, Node, Statement

__all__ = ["module_graph", "to_dot", "to_json"]


def module_graph(module: Module) -> Any:
    """A `networkx.DiGraph` of the module (typed Any: networkx ships no type hints)."""
    import networkx as nx

    graph = nx.DiGraph(path=module.path, language=module.language)
    counter = iter(range(1 << 62))

    def add(kind: str, label: str, line: int, parent: str | None, **extra: Any) -> str:
        node_id = f"n{next(counter)}"
        graph.add_node(node_id, kind=kind, label=label, line=line, **extra)
        if parent is not None:
            graph.add_edge(parent, node_id)
        return node_id

    def add_body(body: tuple[Node, ...], parent: str) -> None:
        for node in body:
            if isinstance(node, Loop):
                loop_id = add(
                    "loop",
                    f"for {node.var}: trip {node.trip}",
                    node.span.line,
                    parent,
                    var=node.var,
                    start=str(node.start),
                    step=node.step,
                    trip=str(node.trip),
                )
                add_body(node.body, loop_id)
            elif isinstance(node, Branch):
                branch_id = add("branch", f"if (p = {node.taken_fraction})", node.span.line, parent)
                add_statement(node.condition, branch_id)
                add_body(node.then_body, add("then", "then", node.span.line, branch_id))
                if node.else_body:
                    add_body(node.else_body, add("else", "else", node.span.line, branch_id))
            else:
                add_statement(node, parent)

    def add_statement(statement: Statement, parent: str) -> None:
        flops = statement.flops
        statement_id = add(
            "statement",
            statement.text,
            statement.span.line,
            parent,
            add=flops.add,
            sub=flops.sub,
            mul=flops.mul,
            div=flops.div,
            special=flops.special,
        )
        for access in statement.accesses:
            index = "?" if access.index is None else ", ".join(str(e) for e in access.index)
            add(
                "write" if access.is_write else "read",
                f"{access.array}[{index}]",
                access.span.line,
                statement_id,
                array=access.array,
                bytes=access.element.width_bytes,
            )

    for function in module.functions:
        function_id = add("function", function.name, function.span.line, None)
        for region in function.regions:
            region_id = add(
                region.kind,
                f"{region.kind} {region.span.labelled()}",
                region.span.line,
                function_id,
            )
            add_body(region.body, region_id)
    return graph


def to_json(graph: Any) -> str:
    import networkx as nx

    data = nx.node_link_data(graph, edges="edges")
    return json.dumps(data, indent=2, default=str) + "\n"


def to_dot(graph: Any) -> str:
    """Graphviz DOT text, written directly so no pydot/pygraphviz is needed."""
    shapes = {
        "function": "box3d",
        "nest": "box",
        "straight": "box",
        "loop": "ellipse",
        "branch": "diamond",
        "statement": "note",
        "read": "plaintext",
        "write": "plaintext",
        "then": "point",
        "else": "point",
    }
    lines = [
        f"digraph {json.dumps(str(graph.graph.get('path', 'aiscan')))} {{",
        "  rankdir=TB;",
        '  node [fontname="monospace"];',
    ]
    for node_id, data in graph.nodes(data=True):
        prefix = f"{data['kind']} " if data["kind"] in ("read", "write") else ""
        label = f"{_dot_escape(prefix + str(data['label']))}\\nline {data['line']}"
        shape = shapes.get(data["kind"], "box")
        lines.append(f'  {node_id} [label="{label}", shape={shape}];')
    for source, target in graph.edges():
        lines.append(f"  {source} -> {target};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
