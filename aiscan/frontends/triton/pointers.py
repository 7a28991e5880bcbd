"""Which kernel parameters are pointers: read from the code, whatever their names."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import libcst as cst

from aiscan.frontends.triton.calls import called_name

__all__ = ["pointer_parameters"]


def pointer_parameters(
    kernel: cst.FunctionDef,
    helpers: Mapping[str, cst.FunctionDef] | None = None,
    _seen: frozenset[str] = frozenset(),
) -> set[str]:
    """Parameters used as the base of a load's or store's address (through `+`/`-` and
    assignments, and through the pointer parameters of the `@triton.jit` helpers they are
    passed to): the kernel's pointers, whatever their names."""
    helpers = helpers or {}
    pointerish: set[str] = set()
    assignments: list[tuple[str, cst.BaseExpression]] = []
    for node in _walk(kernel.body):
        if isinstance(node, cst.Call) and called_name(node) in _ADDRESSED:
            if node.args:
                pointerish |= _additive_names(node.args[0].value)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            helper = helpers.get(node.func.value)
            if helper is not None and helper.name.value not in _seen:
                pointerish |= _passed_pointers(node, helper, helpers, _seen)
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


_ADDRESSED = frozenset(
    {
        "tl.load",
        "tl.store",
        "tl.atomic_add",
        "tl.atomic_max",
        "tl.atomic_min",
        "tl.make_block_ptr",
    }
)


def _passed_pointers(
    call: cst.Call,
    helper: cst.FunctionDef,
    helpers: Mapping[str, cst.FunctionDef],
    seen: frozenset[str],
) -> set[str]:
    """The names passed (additively) to a helper's pointer parameters."""
    inner = pointer_parameters(helper, helpers, seen | {helper.name.value})
    params = [p.name.value for p in helper.params.params]
    found: set[str] = set()
    for position, arg in enumerate(a for a in call.args if a.keyword is None):
        if position < len(params) and params[position] in inner:
            found |= _additive_names(arg.value)
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in inner:
            found |= _additive_names(arg.value)
    return found


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
