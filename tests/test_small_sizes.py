"""Regression: footprints marked exact hold at the small sizes where the loops run, not only
past the offsets' spread (`a[i] = a[i + 2] + b[i]` reads and writes 16 bytes at n = 1, not
24 with write-allocate, as the polynomial from n = 2 on says)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_domain_sums import evaluated

from aiscan.ir.symbols import size_symbol
from aiscan.pipeline import PipelineOptions, analyze_text

# (statement over `for (i = start; i < n - stop; i++)`, start, stop), each a pattern with a
# gap or a hole between its references.
CASES = {
    "gap_ahead": ("a[i] = a[i + 2] + b[i];", 0, 0),
    "gap_behind": ("a[i + 2] = a[i] + b[i];", 0, 0),
    "two_apart": ("b[i] = a[i] + a[i + 2];", 0, 0),
    "three_apart_inner": ("b[i] = a[i - 1] + a[i + 2];", 1, 2),
    "cross_no_centre": ("b[i] = a[i - 1] + a[i + 1];", 1, 1),
}


def brute_force(statement: str, start: int, stop: int, n: int) -> tuple[int, int]:
    """Compulsory bytes with and without write-allocate, by running the loop."""
    target, *reads = re.findall(r"[ab]\[[^\]]*\]", statement)
    touched: dict[tuple[str, int], bool] = {}
    written: set[tuple[str, int]] = set()
    for i in range(start, n - stop):
        for reference, is_write in [*((r, False) for r in reads), (target, True)]:
            array, index = reference[0], eval(reference[2:-1], {"i": i})
            touched.setdefault((array, index), is_write)
            if is_write:
                written.add((array, index))
    allocated = 8 * (len(touched) + len(written))
    plain = 8 * (sum(not first for first in touched.values()) + len(written))
    return allocated, plain


@pytest.mark.parametrize("name", sorted(CASES))
def test_exact_at_every_size_the_loop_runs(name: str) -> None:
    statement, start, stop = CASES[name]
    bound = f"n - {stop}" if stop else "n"
    text = (
        "void f(int n, double *restrict a, double *restrict b) {\n"
        f"  for (int i = {start}; i < {bound}; i++)\n    {statement}\n}}\n"
    )
    analysis = analyze_text(text, "k.c", PipelineOptions()).analysis
    assert analysis is not None
    traffic = analysis.functions[0].traffic["compulsory"]
    assert traffic.exact, text
    for n in range(start + stop + 1, 14):
        allocated, plain = brute_force(statement, start, stop, n)
        at = {size_symbol("n"): n}
        assert evaluated(traffic.total(True).subs(at)) == allocated, (n, text)
        assert evaluated(traffic.total(False).subs(at)) == plain, (n, text)


def _strided_tails(n: int) -> Iterator[list[tuple[str, int, bool]]]:
    for i in range(0, n, 3):
        for j in range(i, n):
            yield [("a", j, False), ("b", i, False), ("a", j, True)]


def _even_lower(n: int) -> Iterator[list[tuple[str, int, bool]]]:
    for i in range(0, n, 2):
        for j in range(0, i + 1, 2):
            yield [("b", j, False), ("a", i * n + j, True)]


def _strided_prefix(n: int) -> Iterator[list[tuple[str, int, bool]]]:
    for i in range(0, n, 3):
        for j in range(i):
            yield [("a", j, False), ("a", j, True)]


STRIDED = {
    "strided_tails": _strided_tails,
    "even_lower": _even_lower,
    "strided_prefix": _strided_prefix,
}


@pytest.mark.parametrize("name", sorted(STRIDED))
def test_strided_domains_are_brute_force(name: str) -> None:
    """fixtures/c/strided_domains.c, whose counts are polynomials in ceiling(n/p): equal to
    running the loops at every size, every residue."""
    path = Path(__file__).parent.parent / "fixtures" / "c" / "strided_domains.c"
    analysis = analyze_text(path.read_text(), str(path), PipelineOptions()).analysis
    assert analysis is not None
    function = next(f for f in analysis.functions if f.function.name == name)
    traffic = function.traffic["compulsory"]
    assert traffic.exact
    for n in range(1, 25):
        touched: dict[tuple[str, int], bool] = {}
        written: set[tuple[str, int]] = set()
        iterations = 0
        for accesses in STRIDED[name](n):
            iterations += 1
            for array, index, is_write in accesses:
                touched.setdefault((array, index), is_write)
                if is_write:
                    written.add((array, index))
        at = {size_symbol("n"): n}
        allocated = 8 * (len(touched) + len(written))
        plain = 8 * (sum(not first for first in touched.values()) + len(written))
        assert evaluated(traffic.total(True).subs(at)) == allocated, n
        assert evaluated(traffic.total(False).subs(at)) == plain, n
        if name != "even_lower":  # no FLOPs there
            assert evaluated(function.flops.total.subs(at)) == iterations, n
