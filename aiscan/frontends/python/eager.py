"""Split a statement's array-expression tree into the calls NumPy makes: the eager view.

Every ufunc, reduction and contraction reads its operands and writes its result; results
that feed another call are temporaries (`_t1`, ...), named with the source they compute and
their line. Scalar Python arithmetic is not a NumPy call and moves nothing. Storing into a
slice (`y[1:-1] = e`) is one more call, the copy `__setitem__` makes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import sympy

from aiscan.frontends.python.nests import Namer, NestBuilder, Target, array_named
from aiscan.frontends.python.values import (
    Apply,
    ArrayValue,
    Contract,
    Leaf,
    Reduce,
    Scalar,
)
from aiscan.ir.nodes import Loop, Region, Temporary
from aiscan.span import Span

__all__ = ["EagerCalls", "eager_calls", "is_array"]


@dataclass(slots=True)
class EagerCalls:
    regions: list[Region] = field(default_factory=list)
    temporaries: list[Temporary] = field(default_factory=list)


def eager_calls(
    target: Target, value: ArrayValue, namer: Namer, span: Span, rebinds: bool
) -> EagerCalls:
    """The calls of `target = value` (or `target op= value`); `rebinds` is `name = value`."""
    calls = _Calls(namer, span)
    result = calls.result
    root = calls.visit(value)
    assert target.leaf is not None, "eager calls are for array targets"
    if target.compound:
        compound = Apply(
            target.compound,
            target.compound,
            (target.leaf, root),
            target.leaf.element,
            target.leaf.shape,
            f"in-place {target.compound}",
            span,
        )
        calls.found.append((target.leaf, compound))
    elif rebinds:
        if calls.found and root is calls.found[-1][0]:
            # `z = expr`: the last call's result is `z` itself, not a temporary.
            calls.found[-1] = (target.leaf, calls.found[-1][1])
            result.temporaries.pop()
    else:
        calls.found.append(
            (
                target.leaf,
                Apply(
                    "free", "copy", (root,), target.leaf.element, target.leaf.shape, "copy", span
                ),
            )
        )
    for leaf, call in calls.found:
        text = f"{leaf.array} = {_call_text(call)}"
        nodes = NestBuilder(namer, span).assign(Target(leaf), call, text)
        kind = "nest" if any(isinstance(n, Loop) for n in nodes) else "straight"
        result.regions.append(
            Region(kind, tuple(nodes), span, contraction=isinstance(call, Contract))
        )
    return result


class _Calls:
    """The NumPy calls of one statement's value, innermost first, each into a temporary.

    A class, not nested functions: a recursive closure is a reference cycle, which keeps
    everything it reached alive until the garbage collector's next full pass."""

    def __init__(self, namer: Namer, span: Span) -> None:
        self.namer = namer
        self.span = span
        self.found: list[tuple[Leaf, ArrayValue]] = []
        self.emitted: set[str] = set()
        self.result = EagerCalls()

    def emit(self, call: ArrayValue) -> Leaf:
        name = self.namer.fresh("_t")
        leaf = array_named(name, call, self.span)
        self.found.append((leaf, call))
        self.emitted.add(name)
        elements = sympy.Mul(*call.shape) if call.shape else sympy.Integer(1)
        self.result.temporaries.append(
            Temporary(name, _call_text(call), self.span, elements, call.element)
        )
        return leaf

    def visit(self, node: ArrayValue) -> ArrayValue:
        if isinstance(node, (Leaf, Scalar)):
            return node
        if isinstance(node, Apply):
            applied = replace(node, operands=tuple(self.visit(o) for o in node.operands))
            if not any(
                is_array(o) or (isinstance(o, Leaf) and o.array in self.emitted)
                for o in applied.operands
            ):
                return applied  # Python scalar arithmetic: no NumPy call
            return self.emit(applied)
        if isinstance(node, Reduce):
            return self.emit(replace(node, operand=self.visit(node.operand)))
        assert isinstance(node, Contract)
        return self.emit(replace(node, operands=tuple(self.visit(o) for o in node.operands)))


def _call_text(call: ArrayValue) -> str:
    """The call's source; `x**3` also says that NumPy calls `power` for it (counted, as
    compilers and XLA expand it, as 2 multiplies)."""
    if isinstance(call, Apply) and call.name == "power" and call.op == "mul":
        return f"{call.text} (NumPy calls power)"
    return call.text


def is_array(value: ArrayValue) -> bool:
    """Does NumPy hold this value in memory (an array), rather than a Python scalar?"""
    if isinstance(value, Scalar):
        return False
    if isinstance(value, Apply):
        return any(is_array(o) for o in value.operands)
    if isinstance(value, Leaf):
        return bool(value.shape)  # `x[i]` is a NumPy scalar, read where it is used
    return True
