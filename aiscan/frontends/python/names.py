"""What a name in the source refers to, whatever way it was imported, and where it is.

libcst's `QualifiedNameProvider` resolves `np.dot`, `from numpy import dot` and
`import numpy.linalg as la` alike; the APIs that mirror NumPy (`jax.numpy`, `cupy`, `torch`)
map onto NumPy's names so one table of semantics serves them all.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider, QualifiedNameProvider

from aiscan.span import Span

__all__ = ["SourceNames"]

_MIRRORS = (
    ("numpy.", "numpy."),
    ("jax.numpy.", "numpy."),
    ("cupy.", "numpy."),
    ("torch.linalg.", "numpy.linalg."),
    ("torch.", "numpy."),
    ("numba.prange", "builtins.range"),
    ("math.", "math."),
    ("builtins.", "builtins."),
)
# torch spells some NumPy functions differently.
_TORCH_ALIASES = {
    "numpy.mm": "numpy.matmul",
    "numpy.bmm": "numpy.matmul",
    "numpy.mv": "numpy.matmul",
    "numpy.div": "numpy.divide",
    "numpy.mul": "numpy.multiply",
    "numpy.amax": "numpy.max",
    "numpy.amin": "numpy.min",
}


class SourceNames:
    """Qualified names and 1-based spans of the nodes of one parsed module."""

    def __init__(self, wrapper: MetadataWrapper, path: str, text: str) -> None:
        self._names: Mapping[cst.CSTNode, object] = wrapper.resolve(QualifiedNameProvider)
        self._positions: Mapping[cst.CSTNode, CodeRange] = wrapper.resolve(PositionProvider)
        self.path = path
        self.module = wrapper.module

    def canonical(self, node: cst.CSTNode) -> str | None:
        """`numpy.dot` for `np.dot`, `jnp.dot`, `dot` imported from numpy; None if not an API."""
        found = self._names.get(node)
        if callable(found):
            found = found()  # libcst computes qualified names lazily
        if not isinstance(found, set):
            return None
        for qualified in sorted(str(q.name) for q in found):
            for prefix, replacement in _MIRRORS:
                if qualified.startswith(prefix) or qualified == prefix.rstrip("."):
                    name = replacement + qualified[len(prefix) :]
                    return _TORCH_ALIASES.get(name, name)
        return None

    def is_local(self, node: cst.CSTNode) -> bool:
        """A name bound in the analyzed file itself (a variable or a local function)."""
        found = self._names.get(node)
        if callable(found):
            found = found()
        return isinstance(found, set) and any(q.source.name == "LOCAL" for q in found)

    def span(self, node: cst.CSTNode) -> Span:
        """libcst's 0-based columns become our 1-based ones, here and only here."""
        where = self._positions.get(node)
        if where is None:
            return Span(self.path, 1, 1)
        return Span(
            self.path,
            where.start.line,
            where.start.column + 1,
            where.end.line,
            where.end.column + 1,
        )

    def text(self, node: cst.CSTNode) -> str:
        return " ".join(self.module.code_for_node(node).split())
