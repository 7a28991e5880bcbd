"""C nodes printed back as source, exactly as the installed pycparser's `CGenerator` prints
them.

Statements and array references carry their text into the report, so every statement and
every reference is printed; through `CGenerator`'s generic dispatch that was a sixth of
lowering. Expressions built only of names, constants, subscripts, arithmetic, unary
operators and assignments are printed here directly, by the rules every pycparser release
shares for them (`reduce_parentheses` off: an operand is parenthesized unless it is a
name, a constant or a subscript). Any other node anywhere in the expression (a call, a
cast, a member, a comma list) hands the whole expression to `CGenerator`, since releases
differ in how they print those and in how their parents bracket them.
"""

from __future__ import annotations

from pycparser import c_ast, c_generator

__all__ = ["source_text"]

_GENERATOR = c_generator.CGenerator()
_SIMPLE = (c_ast.Constant, c_ast.ID, c_ast.ArrayRef)


def source_text(node: c_ast.Node) -> str:
    """`CGenerator().visit(node)`."""
    text = _direct(node)
    return text if text is not None else str(_GENERATOR.visit(node))


def _direct(node: c_ast.Node) -> str | None:
    """The text of an expression of the common kinds only, else None."""
    kind = type(node)
    if kind is c_ast.ID:
        return str(node.name)
    if kind is c_ast.Constant:
        return str(node.value)
    if kind is c_ast.ArrayRef:
        name, subscript = _operand(node.name), _direct(node.subscript)
        if name is None or subscript is None:
            return None
        return name + "[" + subscript + "]"
    if kind is c_ast.BinaryOp:
        left, right = _operand(node.left), _operand(node.right)
        if left is None or right is None:
            return None
        return f"{left} {node.op} {right}"
    if kind is c_ast.Assignment:
        target, value = _direct(node.lvalue), _direct(node.rvalue)
        if target is None or value is None:
            return None
        if type(node.rvalue) is c_ast.Assignment:
            value = "(" + value + ")"
        return f"{target} {node.op} {value}"
    if kind is c_ast.UnaryOp and node.op != "sizeof":
        operand = _operand(node.expr)
        if operand is None:
            return None
        if node.op == "p++":
            return operand + "++"
        if node.op == "p--":
            return operand + "--"
        return f"{node.op}{operand}"
    return None


def _operand(node: c_ast.Node) -> str | None:
    """`CGenerator._parenthesize_unless_simple`, for the kinds `_direct` prints."""
    text = _direct(node)
    if text is None or isinstance(node, _SIMPLE):
        return text
    return "(" + text + ")"
