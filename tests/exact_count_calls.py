"""The references of every exact count a fixture's analysis asks for (`polyhedral.
exact_counts`), as the traffic and the cache model write them: for tests that hold the
counting's parts to each other on real nests."""

from __future__ import annotations

import pytest
from golden import FIXTURES

from aiscan.analysis import kernel, polyhedral
from aiscan.analysis.kernel import AnalysisOptions, analyze_module
from aiscan.analysis.polyhedral import PolyReference
from aiscan.pipeline import PipelineOptions, lower_source
from aiscan.sources import read_source

__all__ = ["counted_references"]


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
