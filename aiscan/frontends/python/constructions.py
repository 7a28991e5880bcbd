"""What a constructor, a library routine or a summarized helper writes into the array it returns.

An `Allocation`'s `build` makes one (`expressions.py`); the call readers that build them
(`library_calls.py`, `framework_calls.py`, `grids.py`, ...) and the lowering that runs them
all name this record, so it sits below every one of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy

from aiscan.frontends.python.values import ArrayValue, Leaf
from aiscan.ir.nodes import Node, Region

if TYPE_CHECKING:
    from aiscan.frontends.python.nests import Namer
    from aiscan.span import Span

__all__ = ["Builder", "Construction"]


@dataclass(frozen=True, slots=True)
class Construction:
    """What a constructor or a LAPACK driver does to the new array it returns.

    `stores` are copies into views of arrays (the result, or a work array), lowered like
    `view[...] = value` statements; `nodes` then run (a factorization's loops), and
    `conventions` are the FLOP figures quoted for them."""

    stores: tuple[tuple[Leaf, ArrayValue], ...] = ()
    nodes: tuple[Node, ...] = ()
    conventions: tuple[tuple[str, sympy.Expr], ...] = ()
    library: bool = True
    """`nodes` are one library routine (LAPACK), run as one contraction call; False for a
    summarized helper's work (`summaries.py`), which runs as its own code does."""
    arguments: tuple[str, ...] = ()
    """Work arrays that hold a framework kernel's arguments (`F.gelu(x @ w + b)`): each is
    the argument's own value, its last call writing it (no copy), as Python evaluates
    arguments before the call (`framework_calls.py`)."""
    dispatches: tuple[Region, ...] = ()
    """The eager view's calls where the framework runs `nodes` as several (JAX runs
    `jax.nn.gelu` one primitive at a time); empty: `nodes` are one call."""
    regions: tuple[Region, ...] = ()
    """A summarized helper's regions, after `nodes`: nests of their own where the call is
    a statement of the function's top level (the compulsory model starts cold at each, as
    in the helper's own report), their bodies spliced where the call is inside a loop."""


Builder = Callable[["Leaf", "Namer", "Span"], Construction]
