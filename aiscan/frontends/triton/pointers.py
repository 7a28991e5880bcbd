"""Which kernel parameters are pointers: read from the code, whatever their names."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from aiscan.frontends.triton.calls import called_name

__all__ = ["pointer_parameters"]


def pointer_parameters(kernel: cst.FunctionDef) -> set[str]:
    """Parameters used as the base of a load's or store's address (through `+`/`-` and
    assignments): the kernel's pointers, whatever their names."""
    pointerish: set[str] = set()
    assignments: list[tuple[str, cst.BaseExpression]] = []
    for node in _walk(kernel.body):
        if isinstance(node, cst.Call) and called_name(node) in (
            "tl.load",
            "tl.store",
            "tl.atomic_add",
            "tl.atomic_max",
            "tl.atomic_min",
        ):
            if node.args:
                pointerish |= _additive_names(node.args[0].value)
        elif isinstance(node, cst.Assign) and len(node.targets) == 1:
            assigned = node.targets[0].target
            if isinstance(assigned, cst.Name):
                assignments.append((assigned.value, node.value))
        elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
            assignments.append((node.target.value, node.target))
    changed = True
    while changed:
        changed = False
        for target, value in assignments:
            if target in pointerish:
                found = _additive_names(value) - pointerish
                if found:
                    pointerish |= found
                    changed = True
    names = {p.name.value for p in kernel.params.params}
    return pointerish & names


def _additive_names(node: cst.BaseExpression) -> set[str]:
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add | cst.Subtract):
        right = _additive_names(node.right) if isinstance(node.operator, cst.Add) else set()
        return _additive_names(node.left) | right
    if isinstance(node, cst.Subscript):
        return _additive_names(node.value)
    return set()


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk(child)
