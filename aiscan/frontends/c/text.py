"""C nodes printed back as source, exactly as pycparser's `CGenerator` prints them.

Statements and array references carry their text into the report, so every statement and
every reference is printed; through `CGenerator`'s generic dispatch that was a sixth of
lowering. The expression nodes loop bodies are made of are printed here directly, by the
same rules (`reduce_parentheses` off: an operand is parenthesized unless it is a name, a
constant, a subscript, a member or a call); anything else goes to `CGenerator` itself.
"""

from __future__ import annotations

from pycparser import c_ast, c_generator

__all__ = ["source_text"]

_GENERATOR = c_generator.CGenerator()
_SIMPLE = (c_ast.Constant, c_ast.ID, c_ast.ArrayRef, c_ast.StructRef, c_ast.FuncCall)


def source_text(node: c_ast.Node) -> str:
    """`CGenerator().visit(node)`."""
    kind = type(node)
    if kind is c_ast.ID:
        return str(node.name)
    if kind is c_ast.Constant:
        return str(node.value)
    if kind is c_ast.ArrayRef:
        return _operand(node.name) + "[" + source_text(node.subscript) + "]"
    if kind is c_ast.BinaryOp:
        return f"{_operand(node.left)} {node.op} {_operand(node.right)}"
    if kind is c_ast.Assignment:
        rvalue = _expression(node.rvalue)
        if type(node.rvalue) is c_ast.Assignment:
            rvalue = "(" + rvalue + ")"
        return f"{source_text(node.lvalue)} {node.op} {rvalue}"
    if kind is c_ast.UnaryOp and node.op != "sizeof":
        operand = _operand(node.expr)
        if node.op == "p++":
            return operand + "++"
        if node.op == "p--":
            return operand + "--"
        return f"{node.op}{operand}"
    return str(_GENERATOR.visit(node))


def _expression(node: c_ast.Node) -> str:
    """`CGenerator._visit_expr`: lists and compound literals in their brackets."""
    if isinstance(node, c_ast.InitList):
        return "{" + source_text(node) + "}"
    if isinstance(node, (c_ast.ExprList, c_ast.Compound)):
        return "(" + source_text(node) + ")"
    return source_text(node)


def _operand(node: c_ast.Node) -> str:
    """`CGenerator._parenthesize_unless_simple`."""
    text = _expression(node)
    return text if isinstance(node, _SIMPLE) else "(" + text + ")"
