"""The references of every exact count a fixture's analysis asks for (`polyhedral.
exact_counts`), as the traffic and the cache model write them: for tests that hold the
counting's parts to each other on real nests."""

from __future__ import annotations

from typing import Any

import pytest
from golden import FIXTURES

from aiscan.analysis import kernel, polyhedral
from aiscan.analysis.kernel import AnalysisOptions, analyze_module
from aiscan.analysis.polyhedral import PolyReference, _in_compact_time
from aiscan.pipeline import PipelineOptions, lower_source
from aiscan.sources import read_source

__all__ = ["COUNTED", "counted_references", "sized_counts"]

COUNTED = (
    "c/polyhedral_footprints.c",
    "c/index_conditions.c",
    "c/strided_domains.c",
    "c/triangular.c",
    "cuda/transpose_tiled.cu",
    "cuda/half2_fma.cu",
    "python/library.py",
    "python/index_conditions.py",
    "python/tiles.py",
    "python/torch_rotary.py",
    "python/views.py",
)
"""Fixtures whose analyses take exact counts: triangles, guards, stencils read before they
are stored, strides and tiles, CUDA's thread indices, and library calls whose views count
one array with other positions."""


def counted_references(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[PolyReference, ...]]:
    """The references of each exact count the analysis of fixture `path` asks for."""
    asked: list[tuple[PolyReference, ...]] = []
    exact_counts = polyhedral.exact_counts

    def recording(references):  # type: ignore[no-untyped-def]
        asked.append(tuple(references))
        return exact_counts(references)

    monkeypatch.setattr(polyhedral, "exact_counts", recording)
    monkeypatch.setattr(kernel, "_memo", {})  # counted again, not found from another test
    source = FIXTURES / path
    module = lower_source(read_source(str(source)), str(source), PipelineOptions())
    analyze_module(module, AnalysisOptions())
    monkeypatch.undo()
    return asked


def sized_counts(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[tuple[PolyReference, ...], list[Any]]]:
    """Each exact count's references in compact time (as `exact_counts` counts them) with
    the sizes they depend on; a count on anything else (an indirect index) is left out."""
    found = []
    for references in map(_in_compact_time, counted_references(path, monkeypatch)):
        sizes = polyhedral._sizes(references)
        if sizes:
            found.append((references, sizes))
    return found
