"""Buffers a PyTorch module registers: `self.register_buffer("freqs_cos", freqs_cos,
persistent=False)` (llama2.c's rotary tables) makes `self.freqs_cos` module state, as
`self.freqs_cos = freqs_cos` would: the methods after `__init__` see the value registered,
its shape and dtype, and `self.freqs_cos[:seqlen]` is a view of it. The work computing
the value is `__init__`'s."""

from __future__ import annotations

import libcst as cst

__all__ = ["registered_buffer"]


def registered_buffer(node: cst.BaseExpression) -> tuple[cst.Attribute, cst.BaseExpression] | None:
    """`self.register_buffer("name", value, ...)`: the attribute `self.name` it binds and
    the value; None for any other expression (a name that is no string literal, a `None`
    buffer, which binds no tensor)."""
    if not (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value == "self"
        and node.func.attr.value == "register_buffer"
    ):
        return None
    given = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    name = positional[0] if positional else given.get("name")
    value = positional[1] if len(positional) > 1 else given.get("tensor")
    if not isinstance(name, cst.SimpleString) or value is None:
        return None
    if isinstance(value, cst.Name) and value.value == "None":
        return None
    attribute = name.evaluated_value
    if not isinstance(attribute, str) or not attribute.isidentifier():
        return None
    return cst.Attribute(cst.Name("self"), cst.Name(attribute)), value
