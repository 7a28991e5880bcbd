"""Straight-line code: first-touch traffic in time near-linear in the statements, with the
same counts as the whole scan of read and write pairs (issue 35, item 13: 1,000
assignments took 12.5 s, 2,000 took 43 s)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from aiscan.analysis import kernel, traffic
from aiscan.analysis.footprint import Footprint
from aiscan.pipeline import PipelineOptions, analyze_text
from aiscan.report.json_report import file_entry


def straight_line(statements: list[str]) -> str:
    body = "\n".join(f"  {s}" for s in statements)
    return f"void f(double *a, double *b) {{\n{body}\n}}\n"


def report(source: str) -> object:
    kernel._memo.clear()  # counted again, not served from the last analysis of the same code
    result = analyze_text(source, "k.c", PipelineOptions())
    assert result.analysis is not None, result.diagnostics
    return file_entry(result, None)


def test_each_store_is_compared_with_a_bounded_number_of_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every store was compared with every read of its array: n * n / 2 comparisons."""
    calls = 0
    covers = traffic._covers

    def counted(*args: object) -> bool:
        nonlocal calls
        calls += 1
        return covers(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(traffic, "_covers", counted)
    n = 300
    entry = report(straight_line([f"a[{k}] = a[{k}] + b[{k}];" for k in range(n)]))
    assert calls <= 2 * n
    (function,) = entry["functions"]  # type: ignore[index]
    assert function["bytes"]["compulsory"] == {  # a[k] and b[k] read, a[k] stored
        "read": str(16 * n),
        "write": str(8 * n),
        "total": str(24 * n),
        "write_allocate_read": "0",
        "exact": True,
    }


STATEMENTS = (
    "a[{i}] = a[{j}] + b[{k}];",
    "a[{i}] = b[{j}] * 2.0;",
    "b[{i}] = a[{i}] - a[{j}];",
    "a[{i}] += b[{i}];",
    "a[{i}] = a[{i}] * a[{k}];",
)


@pytest.mark.parametrize("seed", range(30))
def test_the_pinned_fast_path_counts_as_the_whole_scan(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    statements = [
        rng.choice(STATEMENTS).format(i=rng.randrange(6), j=rng.randrange(6), k=rng.randrange(6))
        for _ in range(rng.randint(2, 14))
    ]
    source = straight_line(statements)
    first_written: list[tuple[str, bool, str]] = []
    whole = traffic._first_written

    def recorded(*args: Any) -> Footprint:
        """What the stores write first, as the traffic takes it (and, when it is not
        exact, before the integer sets count it again)."""
        footprint = whole(*args)
        first_written.append((str(footprint.count), footprint.exact, footprint.reason))
        return footprint

    monkeypatch.setattr(traffic, "_first_written", recorded)
    fast, fast_first = report(source), list(first_written)
    first_written.clear()
    monkeypatch.setattr(traffic._Pinned, "of", staticmethod(lambda *args: None))
    assert (report(source), first_written) == (fast, fast_first), statements
