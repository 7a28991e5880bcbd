"""Flags whose value the code decides: a branch on one runs one way on every call.

Model code chooses its kernels once, in `__init__`, and branches on the choice in
`forward`: nanoGPT's and llama2.c's `self.flash = hasattr(torch.nn.functional,
'scaled_dot_product_attention')`, then `if self.flash:` / `else:` a hand-written attention.
A branch-fraction weighting both sides would count a kernel mix no call runs (and give the
function no per-call eager view), so a test whose value is a constant `bool` (a literal, a
name or `self.` attribute bound to one, `not` of one) is decided: only the branch taken is
lowered, as it runs, and an assumption on the `if` line says which. `hasattr(module,
"name")` is True where aiscan models `module.name` (the PyTorch it reads has it).
"""

from __future__ import annotations

import libcst as cst

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.expressions import ExpressionReader, Value
from aiscan.frontends.python.values import Scalar
from aiscan.ir.nodes import UnknownKind

__all__ = ["decided", "has_attribute"]


def decided(reader: ExpressionReader, test: cst.BaseExpression) -> bool | None:
    """The value of a branch's test when the code fixes it (a constant `bool`); None for
    any other test, which keeps its named fraction. Reads nothing into the report."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = decided(reader, test.expression)
        return None if inner is None else not inner
    if not isinstance(test, (cst.Name, cst.Attribute)):
        return None
    saved, pending = reader.unknowns, reader.pending
    reader.unknowns, reader.pending = [], []
    try:
        value = reader.value(test)
    finally:
        reader.unknowns, reader.pending = saved, pending
    if (
        isinstance(value, Scalar)
        and value.constant
        and value.element == dtypes.BOOL
        and value.text in ("True", "False")
    ):
        return value.text == "True"
    return None


def has_attribute(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`hasattr(torch.nn.functional, "scaled_dot_product_attention")`: True (an assumption
    on the call) where aiscan models that function; None where it cannot say."""
    from aiscan.frontends.python.framework_calls import FRAMEWORK_CALLS
    from aiscan.frontends.python.library_calls import LIBRARY

    arguments = [a.value for a in node.args]
    if len(arguments) != 2 or not isinstance(arguments[1], cst.SimpleString):
        return None
    owner = reader.names.canonical(arguments[0])
    attribute = arguments[1].evaluated_value
    if owner is None or not isinstance(attribute, str):
        return None
    qualified = f"{owner}.{attribute}"
    if qualified not in FRAMEWORK_CALLS and qualified not in LIBRARY:
        return None
    reader.note(
        UnknownKind.ASSUMPTION,
        node,
        f"`{reader.names.text(node)}` taken as True: aiscan models `{qualified}`, as the "
        "library versions it reads have it",
    )
    return Scalar(dtypes.BOOL, True, "True", constant=True)
