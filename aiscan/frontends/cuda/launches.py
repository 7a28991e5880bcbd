"""Launch configurations: `kernel<<<grid, block>>>(args)` in host code, `--launch
'KERNEL:GRID:BLOCK'` on the command line or in the configuration, as sympy sizes.

Host code's integer expressions are read as C reads them (`/` truncates: `(n + 255) /
256` is `ceiling(n/256)`); in a `--launch` spec `/` rounds up (`n/256` is
`ceiling(n/256)`, a grid that covers `n`, as `triton.cdiv`). Both by walking Python's
syntax tree of the text; nothing is evaluated.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiscan.algebra import SYMPY, normal, to_sympy
from aiscan.ir.symbols import MAX_INTEGER, size_symbol
from aiscan.span import Span

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY

__all__ = ["AXES", "Launch", "LaunchError", "launch_from_spec", "size_expression"]

AXES = ("x", "y", "z")


class LaunchError(ValueError):
    """A launch configuration aiscan cannot read (the message says what)."""


@dataclass(frozen=True, slots=True)
class Launch:
    """One launch of a kernel: its grid and block, three axes each (1 where not given)."""

    kernel: str
    grid: tuple[sympy.Expr, sympy.Expr, sympy.Expr]
    block: tuple[sympy.Expr, sympy.Expr, sympy.Expr]
    origin: str
    """Where it comes from, in words: `launched in main, line 40`, `--launch`."""
    span: Span | None = None
    arguments: tuple[tuple[str, sympy.Expr], ...] = ()
    """Kernel size parameters bound to the host's expressions (`n` to `N`)."""
    template_arguments: tuple[sympy.Expr, ...] = ()
    """`kernel<256, 4><<<...>>>`: the values of its integer template parameters."""


def launch_from_spec(spec: str, origin: str) -> Launch:
    """`KERNEL:GRID:BLOCK`, GRID and BLOCK comma-separated size expressions in the
    kernel's own parameter names (`matmul:n/16,n/16:16,16`); a template kernel's integer
    arguments after its name (`sum_squares<256>:n/256:256`)."""
    parts = spec.split(":")
    if len(parts) != 3 or not parts[0].strip():
        raise LaunchError(f"launch `{spec}`: expected KERNEL:GRID:BLOCK, e.g. vec_add:n/256:256")
    kernel, grid, block = (p.strip() for p in parts)
    # `sum_squares<256>`: a template kernel's integer arguments.
    named = re.fullmatch(r"(\w+)\s*(?:<([^<>]*)>)?", kernel)
    if named is None:
        raise LaunchError(f"launch `{spec}`: `{kernel}` is not a kernel name (or name<args>)")
    arguments = []
    for part in (named.group(2) or "").split(",") if named.group(2) else []:
        value = size_expression(part, {})
        if value is None:
            raise LaunchError(f"launch `{spec}`: cannot read `{part.strip()}` as a size")
        arguments.append(value)
    return Launch(
        named.group(1),
        _axes(grid, spec),
        _axes(block, spec),
        origin,
        template_arguments=tuple(arguments),
    )


def _axes(text: str, spec: str) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    values = [size_expression(part, {}, round_up=True) for part in text.split(",")]
    if not 1 <= len(values) <= 3 or any(v is None for v in values):
        raise LaunchError(f"launch `{spec}`: cannot read `{text}` as one to three sizes")
    one = normal(sympy.Integer(1))
    padded = [*values, one, one][:3]
    return (padded[0], padded[1], padded[2])


def size_expression(
    text: str, names: Mapping[str, sympy.Expr], *, round_up: bool = False
) -> sympy.Expr | None:
    """An integer expression of sizes, C's truncating `/` included (rounding up with
    `round_up`); `names` resolves host variables (`threads`); any other name is a size.
    None for what is not such an expression (a call, a float, a string)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return None
    try:
        value = _value(tree.body, names, round_up)
    except (_NotSize, RecursionError):
        return None
    return normal(value)


class _NotSize(Exception):
    pass


def _value(node: ast.expr, names: Mapping[str, sympy.Expr], round_up: bool) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        if node.value >= MAX_INTEGER:
            raise _NotSize
        return sympy.Integer(node.value)
    if isinstance(node, ast.Name):
        found = names.get(node.id)
        return to_sympy(found if found is not None else size_symbol(node.id))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
        return _value(node.operand, names, round_up)
    if isinstance(node, ast.BinOp):
        left, right = _value(node.left, names, round_up), _value(node.right, names, round_up)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div | ast.FloorDiv):
            return _quotient(left, right, round_up)
        if isinstance(node.op, ast.LShift) and right.is_Integer and 0 <= int(right) < 64:
            return left * 2 ** int(right)
    raise _NotSize


def _quotient(top: Any, bottom: Any, round_up: bool) -> Any:
    """C's `top / bottom` on positive integers; `(n + k - 1) / k` is `ceiling(n/k)`."""
    if bottom == 0:
        raise _NotSize
    top = sympy.expand(top)
    if bottom.is_Integer and top.is_Add:
        offset = sum((a for a in top.args if a.is_Integer), sympy.Integer(0))
        if offset == bottom - 1 and offset > 0:
            return sympy.ceiling((top - offset) / bottom)
    if bottom.is_Integer and (top / bottom).is_integer:
        return sympy.expand(top / bottom)
    return sympy.ceiling(top / bottom) if round_up else sympy.floor(top / bottom)
