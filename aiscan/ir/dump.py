"""A canonical, line-oriented text dump of the IR, so tests and users can compare trees.

Two frontends that understood the same kernel produce the same dump (spans aside when
`with_lines=False`), which is how the C and Python twins are compared.
"""

from __future__ import annotations

from aiscan.ir.nodes import Access, Branch, FlopTally, Function, Loop, Module, Node, Statement

__all__ = ["dump_function", "dump_module"]


def dump_module(module: Module, *, with_lines: bool = True) -> str:
    parts = [f"module {module.language}"]
    parts += [dump_function(f, with_lines=with_lines) for f in module.functions]
    return "\n".join(parts) + "\n"


def dump_function(function: Function, *, with_lines: bool = True) -> str:
    lines = [f"function {function.name}{_at(function.span.line, with_lines)}"]
    for region in function.regions:
        where = f" L{region.span.lines()}" if with_lines else ""
        lines.append(f"  {region.kind}{where}")
        lines += _dump_body(region.body, 2, with_lines)
    return "\n".join(lines)


def _at(line: int, with_lines: bool) -> str:
    return f" L{line}" if with_lines else ""


def _dump_body(body: tuple[Node, ...], depth: int, with_lines: bool) -> list[str]:
    pad = "  " * depth
    out: list[str] = []
    for node in body:
        if isinstance(node, Loop):
            out.append(
                f"{pad}loop {node.var} start={node.start} step={node.step} trip={node.trip}"
                f"{_at(node.span.line, with_lines)}"
            )
            out += _dump_body(node.body, depth + 1, with_lines)
        elif isinstance(node, Branch):
            out.append(f"{pad}if p={node.taken_fraction}{_at(node.span.line, with_lines)}")
            out.append(f"{pad}  cond {_dump_statement(node.condition)}")
            out += _dump_body(node.then_body, depth + 1, with_lines)
            if node.else_body:
                out.append(f"{pad}else")
                out += _dump_body(node.else_body, depth + 1, with_lines)
        else:
            out.append(f"{pad}stmt{_at(node.span.line, with_lines)} {_dump_statement(node)}")
    return out


def _dump_statement(statement: Statement) -> str:
    words = [_dump_flops(statement.flops)]
    words += [_dump_access(a) for a in statement.accesses]
    words += [f"call {name}" for name in statement.special_calls]
    return " ".join(w for w in words if w)


def _dump_flops(flops: FlopTally) -> str:
    kinds = ("add", "sub", "mul", "div", "special")
    counts = [f"{k}={getattr(flops, k)}" for k in kinds if getattr(flops, k)]
    return f"flops({' '.join(counts)})" if counts else "flops()"


def _dump_access(access: Access) -> str:
    verb = "write" if access.is_write else "read"
    index = "?" if access.index is None else ",".join(str(e) for e in access.index)
    return f"{verb} {access.array}[{index}]:{access.element.width_bytes}"
