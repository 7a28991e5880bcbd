"""`np.histogram(a, bins, weights=w)` with `bins` an integer count, as NumPy 2 computes it.

The equal bins' edges are a `linspace` (`bins + 1` elements, a multiply and an add each,
and `stop - start`, `/ bins` once), the range's width once (`last - first`); each element's
bin index is `(a - first) / width * bins` (a subtract, a divide and a multiply; the
corrections at the edges compare integers). Without weights the counts are integers (no
FLOPs); with weights `bincount` adds each weight into its bin and NumPy adds the bins into
the result once per block of 65,536 elements. Which bin an element lands in is data: the
scattered adds are counted, their addresses are not (an `indirect-access` note says so).
Traffic is the call's own: `a` (and `w`) read, the counts and the edges written; NumPy's
internal index and mask arrays are not counted (docs/python.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst
import sympy

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.arguments import _keyword, _positional
from aiscan.frontends.python.constructions import Construction
from aiscan.frontends.python.expressions import Allocation, number_literal
from aiscan.frontends.python.symbols import loop_symbol
from aiscan.frontends.python.values import Leaf, coordinate, substituted
from aiscan.ir.nodes import Access, FlopTally, Loop, Node, Statement, UnknownKind

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import ExpressionReader
    from aiscan.frontends.python.nests import Namer
    from aiscan.span import Span

__all__ = ["BLOCK", "histogram_part", "is_histogram"]

BLOCK = 65536
"""NumPy's `histogram` works through its input in blocks of this many elements."""


def is_histogram(reader: ExpressionReader, node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and reader.names.canonical(node.func) == "numpy.histogram"


def histogram_part(reader: ExpressionReader, node: cst.Call, part: int) -> Allocation | None:
    """The counts (`part` 0) or the edges (1) of `np.histogram(...)`; the call's work is
    counted with either. None (noted) for a form not modeled."""
    text = reader.names.text(node)
    arguments = _positional(node)
    known = {"bins", "weights"}
    if (
        len(arguments) > 2
        or any(
            a.star or (a.keyword is not None and a.keyword.value not in known) for a in node.args
        )
        or not arguments
    ):
        reader.unsupported(
            node, f"`{text}`: only `np.histogram(a, bins, weights=w)` with a bin count"
        )
        return None
    bins_node = arguments[1] if len(arguments) > 1 else _keyword(node, "bins")
    if isinstance(bins_node, cst.SimpleString | cst.List | cst.Tuple) or (
        bins_node is not None
        and number_literal(bins_node) is not None
        and not isinstance(number_literal(bins_node), int)
    ):
        reader.unsupported(node, f"`{text}`: `bins` that is not an integer count")
        return None
    bins = sympy.Integer(10) if bins_node is None else reader.integer(bins_node)
    a = reader.array(arguments[0])
    weights_node = _keyword(node, "weights")
    weights = None if weights_node is None else reader.array(weights_node)
    if bins is None or a is None or (weights_node is not None and weights is None):
        return None
    if weights is not None:
        reader.unify(a.shape, weights.shape)  # NumPy raises unless they agree
    operands = [a] if weights is None else [a, weights]
    if any(not isinstance(v, Leaf) or len(v.shape) != 1 for v in operands):
        reader.unsupported(node, f"`{text}`: only 1-d arrays in memory are modeled")
        return None
    if weights is not None and (weights.element.is_complex or not weights.element.is_float):
        reader.unsupported(node, f"`{text}`: only real floating-point weights are modeled")
        return None
    reader.note(
        UnknownKind.INDIRECT_ACCESS,
        node,
        f"`{text}`: each element's bin is read from the data; the adds into the bins are "
        "counted, their addresses are not",
    )
    counts = dtypes.INT64 if weights is None else weights.element
    edges = a.element if a.element.is_float else dtypes.FLOAT64
    shape = (bins,) if part == 0 else (sympy.expand(bins + 1),)
    element = counts if part == 0 else edges
    data = a
    weighed = weights if isinstance(weights, Leaf) else None

    def build(leaf: Leaf, namer: Namer, span: Span) -> Construction:
        other = namer.fresh("_hist")
        counts_name, edges_name = (leaf.array, other) if part == 0 else (other, leaf.array)
        assert isinstance(data, Leaf)
        nodes = _work(namer, span, text, data, weighed, bins, counts_name, edges_name)
        return Construction(nodes=tuple(nodes), library=False)

    return Allocation(shape, element, False, text, build)


def _work(
    namer: Namer,
    span: Span,
    text: str,
    a: Leaf,
    weights: Leaf | None,
    bins: sympy.Expr,
    counts: str,
    edges: str,
) -> list[Node]:
    """The edges, the range's width, each element's bin, and the counts, as IR loops."""

    def variable() -> sympy.Symbol:
        return loop_symbol(namer.fresh("_hb"))

    def at(leaf: Leaf, i: sympy.Symbol) -> Access:
        index = tuple(substituted(e, {coordinate(0): i}) for e in leaf.index)
        return Access(leaf.array, index, leaf.element, False, span, text)

    edge_element = a.element if a.element.is_float else dtypes.FLOAT64
    count_element = dtypes.INT64 if weights is None else weights.element
    k, i, block, b = variable(), variable(), variable(), variable()
    fill_edges = Statement(
        span,
        text,
        FlopTally(add=1, mul=1),
        (Access(edges, (k,), edge_element, True, span, text),),
    )
    widths = Statement(span, text, FlopTally(sub=2, div=1))
    element_reads = [at(a, i)] + ([] if weights is None else [at(weights, i)])
    per_element = FlopTally(sub=1, div=1, mul=1, add=0 if weights is None else 1)
    binned = Statement(span, text, per_element, tuple(element_reads))
    add_bins = Statement(
        span,
        text,
        FlopTally(add=0 if weights is None else 1),
        (Access(counts, (b,), count_element, True, span, text),),
    )
    zero = sympy.Integer(0)
    blocks = sympy.ceiling(a.shape[0] / BLOCK)
    return [
        Loop(k.name, zero, 1, sympy.expand(bins + 1), (fill_edges,), span),
        widths,
        Loop(i.name, zero, 1, a.shape[0], (binned,), span),
        Loop(block.name, zero, 1, blocks, (Loop(b.name, zero, 1, bins, (add_bins,), span),), span),
    ]
