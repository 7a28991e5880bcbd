"""Flags whose value the code decides: a branch on one runs one way on every call.

Model code chooses its kernels once, in `__init__`, and branches on the choice in
`forward`: nanoGPT's and llama2.c's `self.flash = hasattr(torch.nn.functional,
'scaled_dot_product_attention')`, then `if self.flash:` / `else:` a hand-written attention.
A branch-fraction weighting both sides would count a kernel mix no call runs (and give the
function no per-call eager view), so a test whose value is a constant `bool` (a literal, a
name or `self.` attribute bound to one, `not` of one) is decided: only the branch taken is
lowered, as it runs, and an assumption on the `if` line says which. So is `size is None`
of a size (`if hidden_dim is None:` where the caller passes `args.hidden_dim`): False.
`hasattr(module, "name")` is True where aiscan models `module.name` (the PyTorch it reads
has it).
"""

from __future__ import annotations

import libcst as cst

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.expressions import ExpressionReader, Value
from aiscan.frontends.python.framework_calls import FRAMEWORK_CALLS
from aiscan.frontends.python.library_calls import LIBRARY
from aiscan.frontends.python.values import Integer, Scalar
from aiscan.ir.nodes import UnknownKind

__all__ = ["decided", "has_attribute"]


def decided(reader: ExpressionReader, test: cst.BaseExpression) -> bool | None:
    """The value of a branch's test when the code fixes it (a constant `bool`); None for
    any other test, which keeps its named fraction. Reads nothing into the report."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = decided(reader, test.expression)
        return None if inner is None else not inner
    none_test = _none_test(test)
    if none_test is not None:  # `if hidden_dim is None:` of a size: never None
        operand, negated = none_test
        value = _quiet_value(reader, operand)
        if isinstance(value, Integer) and value.value is not None:
            return negated
        return None
    if not isinstance(test, (cst.Name, cst.Attribute)):
        return None
    value = _quiet_value(reader, test)
    if (
        isinstance(value, Scalar)
        and value.constant
        and value.element == dtypes.BOOL
        and value.text in ("True", "False")
    ):
        return value.text == "True"
    return None


def _quiet_value(reader: ExpressionReader, node: cst.BaseExpression) -> Value | None:
    """`node`'s value, read without noting anything (the branch's own reading does)."""
    saved, pending = reader.unknowns, reader.pending
    reader.unknowns, reader.pending = [], []
    try:
        return reader.value(node)
    finally:
        reader.unknowns, reader.pending = saved, pending


def _none_test(test: cst.BaseExpression) -> tuple[cst.BaseExpression, bool] | None:
    """`x is None` (x, False) and `x is not None` (x, True); None for any other test."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    comparison = test.comparisons[0]
    right = comparison.comparator
    if not (isinstance(right, cst.Name) and right.value == "None"):
        return None
    if isinstance(comparison.operator, cst.Is):
        return test.left, False
    if isinstance(comparison.operator, cst.IsNot):
        return test.left, True
    return None


def has_attribute(reader: ExpressionReader, node: cst.Call) -> Value | None:
    """`hasattr(torch.nn.functional, "scaled_dot_product_attention")`: True (an assumption
    on the call) where aiscan models that function; None where it cannot say."""
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
