"""isl's counts kept by what they count (`count_memo`): a nest that an edit moved is not
counted again, a nest that an edit changed is, and the editor's children hand them on."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aiscan.analysis import count_memo, kernel, polyhedral
from aiscan.cache import ResultCache
from aiscan.lsp import worker
from aiscan.lsp.document import settings_for
from aiscan.options import PipelineOptions
from aiscan.pipeline import analyze_text

# A triangular solve: x's first reads and writes are no box, so isl counts them.
LOWER = """\
void lower(int n, double *restrict x, const double *restrict L)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            x[i] -= L[i * n + j] * x[j];
}
"""
COMPULSORY = "4*n**2 + 12*n - 8"
"""L's strict lower triangle, x read and written whole (doubles): 8*n*(n - 1)/2 + 8*n + 8*n."""


def _new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing counted in memory: the memos of regions by structure and of references
    (spans included) as a new process has them, and no counts."""
    monkeypatch.setattr(kernel, "_memo", {})
    monkeypatch.setattr(count_memo, "_KNOWN", {})
    monkeypatch.setattr(count_memo, "_LEARNED", {})
    monkeypatch.setattr(count_memo, "_UNSAVED", set())
    polyhedral._counts_cached.cache_clear()
    polyhedral._exact_counts.cache_clear()


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """A new process's memos, and every count isl makes from now on."""
    _new_process(monkeypatch)
    made: list[Any] = []
    original = polyhedral._counts_at

    def counting(references: Any, sizes: Any) -> Any:
        made.append(sizes)
        return original(references, sizes)

    monkeypatch.setattr(polyhedral, "_counts_at", counting)
    return made


def _compulsory(text: str) -> str:
    result = analyze_text(text, "lower.c", PipelineOptions())
    assert result.analysis is not None
    (region,) = result.analysis.functions[0].regions
    return str(region.traffic["compulsory"].total(False))


def test_a_nest_an_edit_moved_is_not_counted_again(fresh: list[Any]) -> None:
    assert _compulsory(LOWER) == COMPULSORY
    assert len(fresh) == 12  # the grid and the held-out sizes, in n
    learned = count_memo.learned()
    assert [len(points) for points in learned.values()] == [12]
    # Another process (the editor's next child) with what the first one learned.
    kernel._memo.clear()
    count_memo._KNOWN.clear()
    count_memo.adopt(learned)
    polyhedral._counts_cached.cache_clear()
    polyhedral._exact_counts.cache_clear()
    fresh.clear()
    assert _compulsory("// an edit above\n\n" + LOWER) == COMPULSORY
    assert fresh == []
    assert count_memo.learned() == {}


def test_a_nest_an_edit_changed_is_counted_again(fresh: list[Any]) -> None:
    assert _compulsory(LOWER) == COMPULSORY
    before = count_memo.learned()
    fresh.clear()
    wider = LOWER.replace("j < i;", "j <= i;")
    assert _compulsory(wider) == "4*n**2 + 20*n"  # the diagonal too: 8*n more of L
    after = count_memo.learned()
    assert len(fresh) == sum(len(points) for points in after.values()) == 13  # n = 1 too
    assert before.keys().isdisjoint(after.keys())


def test_the_key_tells_sizes_of_other_kinds_apart() -> None:
    from aiscan.algebra import symbol

    result = analyze_text(LOWER, "lower.c", PipelineOptions())
    assert result.analysis is not None
    (region,) = result.analysis.functions[0].regions
    statement = region.region.body[0].body[0].body[0]  # type: ignore[union-attr]
    outer = region.region.body[0]
    inner = outer.body[0]  # type: ignore[union-attr]
    reference = polyhedral.PolyReference(statement.accesses[0], (outer, inner), (0, 0), 0, 0)
    size = symbol("n", "size")
    other = symbol("n", "trip")
    assert count_memo.nest_key([reference], [size]) != count_memo.nest_key([reference], [other])
    assert count_memo.nest_key([reference], [size]) == count_memo.nest_key([reference], [size])


def test_the_editors_next_child_starts_with_the_counts(tmp_path: Path) -> None:
    """Two analyses in two children (the first killed, as a newer edit kills the analysis
    it replaces): the second counts nothing the first counted."""
    path = str(tmp_path / "lower.c")
    settings = settings_for(path)

    async def analyze() -> tuple[dict[str, Any], dict[str, Any]]:
        pool = worker.AnalysisPool()
        try:
            await pool.view(LOWER, path, settings, 60.0)
            (first,) = pool._idle
            learned_first = first.learned
            # Its own counts are kept, and not sent back to it with its next request.
            assert first.seen == len(pool._counts) == 1
            pool._kill(pool._idle.pop())
            await pool.view("// an edit above\n\n" + LOWER, path, settings, 60.0)
            (second,) = pool._idle
            assert second is not first
            return learned_first, second.learned
        finally:
            pool.close()

    first, second = asyncio.run(analyze())
    assert [len(points) for points in first.values()] == [12]
    assert second == {}


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ResultCache]:
    cache = ResultCache(tmp_path / "cache")
    with count_memo.stored_in(cache):
        yield cache


def _count_entries(cache: ResultCache) -> dict[Path, Any]:
    assert cache.directory is not None
    entries = {}
    for path in cache.directory.rglob("*.json"):
        payload = json.loads(path.read_text())["payload"]
        if "points" in payload:
            entries[path] = payload["points"]
    return entries


def test_a_scan_keeps_the_counts_in_its_result_cache(fresh: list[Any], store: ResultCache) -> None:
    assert _compulsory(LOWER) == COMPULSORY
    ((path, points),) = _count_entries(store).items()
    assert len(points) == len(fresh) == 12
    # n = 9: x's 9 elements touched, x[1..8] written (row 0 has no j), all 9 read first.
    assert [9, 9, 8, 9] in points
    # The next run (a new process: nothing in memory) reads them from the cache.
    kernel._memo.clear()
    count_memo._KNOWN.clear()
    polyhedral._counts_cached.cache_clear()
    polyhedral._exact_counts.cache_clear()
    fresh.clear()
    assert _compulsory("// an edit above\n\n" + LOWER) == COMPULSORY
    assert fresh == []
    # An entry that is not what `keep` writes is a miss, and counted again.
    path.write_text(json.dumps({"dependencies": {}, "payload": {"points": [[9, "x", 0, 0]]}}))
    kernel._memo.clear()
    count_memo._KNOWN.clear()
    polyhedral._counts_cached.cache_clear()
    polyhedral._exact_counts.cache_clear()
    assert _compulsory(LOWER) == COMPULSORY
    assert len(fresh) == 12


def test_check_in_a_pre_commit_hook_counts_only_the_nests_an_edit_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end, as a hook runs it: `aiscan check` on a file, then on the file with a
    line added and a second nest; the moved nest's counts are read, not written again."""
    from aiscan.cli import main

    monkeypatch.chdir(tmp_path)
    _new_process(monkeypatch)
    source = tmp_path / "hooked.c"
    source.write_text(LOWER)
    arguments = ["check", "hooked.c", "--cache-dir", "cache", "--exit-zero"]
    assert main(arguments) == 0
    cache = ResultCache(tmp_path / "cache")
    first = _count_entries(cache)
    assert len(first) == 1
    written = {path: path.stat().st_mtime_ns for path in first}
    _new_process(monkeypatch)  # the hook's next run
    source.write_text(
        "// an edit above\n"
        + LOWER
        + LOWER.replace("lower(", "wider(").replace("j < i;", "j <= i;")
    )
    assert main(arguments) == 0
    second = _count_entries(cache)
    assert len(second) == 2  # the new nest's counts beside the old ones
    assert {path: path.stat().st_mtime_ns for path in first} == written


def test_a_read_only_arrays_counts_are_one_isl_count_a_point(
    fresh: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """L is only read, both ways round (`L[i][j]` and `L[j][i]` under `j < i`): every
    element it touches is first touched by a read, so isl counts the union once a point
    (touched = read first, none written), not twice."""
    counted: list[int] = []
    original = polyhedral._count

    def counting(points: Any) -> int:
        found = original(points)
        if points is not None:
            counted.append(found)
        return found

    monkeypatch.setattr(polyhedral, "_count", counting)
    read_only = LOWER.replace("x[i] -= L[i * n + j] * x[j];", "s += L[i * n + j] * L[j * n + i];")
    read_only = read_only.replace("{\n", "{\n    double s = 0;\n", 1)
    result = analyze_text(read_only, "lower.c", PipelineOptions())
    assert result.analysis is not None
    (region,) = result.analysis.functions[0].regions
    assert str(region.traffic["compulsory"].total(False)) == "8*n**2 - 8*n"  # off its diagonal
    assert len(fresh) == len(counted) > 0  # one count of L's triangle at each point


CALLS_A_SOLVE = """\
import numpy as np


def solve(x: np.ndarray, L: np.ndarray):
    for i in range(x.shape[0]):
        for j in range(i):
            x[i] -= L[i, j] * x[j]


def caller(x: np.ndarray, L: np.ndarray):
    solve(x, L)
    solve(L[0], L)
"""


def test_an_inlined_nest_an_edit_moved_is_not_counted_again(fresh: list[Any]) -> None:
    """An inlined call's names hold its line (`caller_L11_x`, loop variables of
    `solve_L11`): the key names them by where they first appear instead, so a line added
    above leaves the keys, and the counts, as they were."""
    first = analyze_text(CALLS_A_SOLVE, "solve.py", PipelineOptions())
    assert fresh  # isl counted the triangles
    kernel._memo.clear()
    polyhedral._counts_cached.cache_clear()
    polyhedral._exact_counts.cache_clear()
    fresh.clear()
    moved = analyze_text("# an edit above\n" + CALLS_A_SOLVE, "solve.py", PipelineOptions())
    assert fresh == []
    assert first.analysis is not None and moved.analysis is not None
    traffic = [
        str(r.traffic["compulsory"].total(False))
        for analysis in (first.analysis, moved.analysis)
        for f in analysis.functions
        for r in f.regions
    ]
    assert traffic[: len(traffic) // 2] == traffic[len(traffic) // 2 :]


def test_names_holding_lines_are_renamed_one_to_one() -> None:
    key = "['caller_L11_x', 'trip_L5', 'caller_L11_x', 'caller_L12_x', 'n']"
    assert count_memo._without_lines(key) == "['<0>', '<1>', '<0>', '<2>', 'n']"
