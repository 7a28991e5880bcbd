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
    ADDMM,
    Apply,
    ArrayValue,
    Contract,
    Leaf,
    Reduce,
    Scalar,
    Select,
)
from aiscan.ir.nodes import Branch, Loop, Region, Temporary
from aiscan.span import Span

__all__ = ["EagerCalls", "eager_calls", "is_array", "masked_store_calls"]


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
    _call_regions(calls, namer, span)
    return result


def masked_store_calls(
    target: Leaf, mask: ArrayValue, value: ArrayValue, branch: Branch, namer: Namer, span: Span
) -> EagerCalls | None:
    """The calls of `target[mask] = value` as NumPy makes them: the value first (a
    selection by the mask on the right, `r[r > 0]`, is a gather of its own), then the mask
    (a bool temporary), then the masked store (`__setitem__`): the mask read at every
    element, the element written under `branch`'s fraction, a packed value read once per
    selected element. None when the value is neither a scalar nor packed (the fused
    nodes stand in)."""
    calls = _Calls(namer, span)
    root = calls.visit(value)
    if root.shape and not (isinstance(root, Leaf) and _is_packed(root)):
        return None
    stored = calls.visit(mask)
    assert isinstance(stored, Leaf)
    _call_regions(calls, namer, span)
    nodes = NestBuilder(namer, span).scatter(target, stored, root, branch)
    calls.result.regions.append(Region("nest", tuple(nodes), span))
    return calls.result


def _is_dot(node: Reduce) -> bool:
    """The sum a dot product of two selections is read as (`selections.py`)."""
    selection = node.operand
    return (
        node.kind == "sum"
        and isinstance(selection, Select)
        and isinstance(selection.operand, Apply)
        and selection.operand.name == "dot"
        and len(selection.operand.operands) == 2
    )


def _is_packed(leaf: Leaf) -> bool:
    """A packed selection (its length a named fraction of the mask's elements)."""
    return any(s.is_integer is not True for s in leaf.shape[0].free_symbols)


def _call_regions(calls: _Calls, namer: Namer, span: Span) -> None:
    """One region per call found, appended to `calls.result`."""
    for leaf, call in calls.found:
        text = f"{leaf.array} = {_call_text(call)}"
        nodes = NestBuilder(namer, span).assign(Target(leaf), call, text)
        kind = "nest" if any(isinstance(n, Loop) for n in nodes) else "straight"
        # PyTorch's `addmm` (a linear layer with its bias) is a contraction call too.
        contraction = isinstance(call, Contract) or (isinstance(call, Apply) and call.name == ADDMM)
        calls.result.regions.append(Region(kind, tuple(nodes), span, contraction=contraction))


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
        if isinstance(node, Apply) and node.name == ADDMM:
            # `F.linear(x, w, b)` in PyTorch: one `addmm` kernel, product and bias add.
            fused = tuple(
                replace(o, operands=tuple(self.visit(p) for p in o.operands))
                if isinstance(o, Contract)
                else self.visit(o)
                for o in node.operands
            )
            return self.emit(replace(node, operands=fused))
        if isinstance(node, Apply):
            applied = replace(node, operands=tuple(self.visit(o) for o in node.operands))
            if not any(
                is_array(o) or (isinstance(o, Leaf) and o.array in self.emitted)
                for o in applied.operands
            ):
                return applied  # Python scalar arithmetic: no NumPy call
            return self.emit(applied)
        if isinstance(node, Select):
            return self.visit(self.packed(node.operand, node))
        if isinstance(node, Reduce) and _is_dot(node):
            # `x[m] @ y[m]`: one dot call on the two packed selections, no product array.
            assert isinstance(node.operand, Select) and isinstance(node.operand.operand, Apply)
            a, b = (self.visit(self.packed(o, node.operand)) for o in node.operand.operand.operands)
            count = node.operand.shape[0]
            dot = Contract(
                (a, b), ("k", "k"), "", (("k", count),), node.element, (), node.text, node.span
            )
            return self.emit(dot)
        if isinstance(node, Reduce):
            return self.emit(replace(node, operand=self.visit(node.operand)))
        assert isinstance(node, Contract)
        return self.emit(replace(node, operands=tuple(self.visit(o) for o in node.operands)))

    def packed(self, node: ArrayValue, selection: Select) -> ArrayValue:
        """`node` (part of a selection's elementwise tree) as NumPy computes it: each
        selected array `x[mask]` is a call of its own, the mask evaluated (a bool
        temporary, unless it is a named array) and the selected elements gathered into a
        packed temporary; the operations then run on packed arrays of `p * N` elements."""
        full = selection.operand.shape
        if isinstance(node, Leaf) and len(node.shape) == len(full):
            mask = self.visit(selection.mask)
            assert isinstance(mask, Leaf)
            rest = node.shape[len(mask.shape) :]
            gathered = replace(
                selection,
                operand=node,
                mask=mask,
                element=node.element,
                shape=(selection.shape[0], *rest),
                text=f"{node.text}[{selection.mask.text}]",
            )
            return self.emit(gathered)
        if isinstance(node, Apply) and len(node.shape) == len(full):
            operands = tuple(self.packed(o, selection) for o in node.operands)
            shape = (selection.shape[0], *node.shape[len(selection.mask.shape) :])
            return replace(node, operands=operands, shape=shape)
        return node  # a scalar, or an array broadcast along the axes the mask leaves


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
