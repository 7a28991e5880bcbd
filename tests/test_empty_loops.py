"""Regression (issue 35, item 10): a loop that does not run counts nothing.

`for (int i = 0; i < -5; i++)` and `i = n; i < n - 5` once gave trip -5, -5 FLOPs and -80
streaming bytes, at any `--size`; a loop whose trip depends on the sizes (`i < n - 5`)
gave negative counts at sizes where it does not run (n = 3), and compulsory bytes for a
reference that does not use the counter of a loop that never runs. Every count below is
checked against what running the loops would do."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from aiscan.algebra import ZERO, constant
from aiscan.analysis.idle_loops import without_idle_loops
from aiscan.cli import main
from aiscan.ir.nodes import FlopTally, Loop, Statement
from aiscan.ir.symbols import size_symbol
from aiscan.ir.trips import nonnegative_from
from aiscan.options import AnalysisOptions, PipelineOptions
from aiscan.pipeline import analyze_text
from aiscan.span import Span

C_KERNELS = """\
void never(int n, double *restrict x) {
    for (int i = 0; i < -5; i++)
        x[i] = x[i] * 2.0;
}
void shifted(int n, double *restrict x) {
    for (int i = n; i < n - 5; i++)
        x[i] = x[i] * 2.0;
}
void inner(int n, double *restrict x, const double *restrict y) {
    for (int j = 0; j < n; j++)
        for (int i = j; i < j - 3; i++)
            x[i] = y[j] * 2.0;
}
void sized(int n, double *restrict x, const double *restrict y) {
    for (int i = 0; i < n - 5; i++)
        for (int j = 0; j < n; j++)
            x[i * n + j] = y[j] * 2.0;
}
"""
PYTHON_KERNELS = """\
def never(n: int, x):
    for i in range(-5):
        x[i] = x[i] * 2.0

def shifted(n: int, x):
    for i in range(n, n - 5):
        x[i] = x[i] * 2.0

def inner(n: int, x, y):
    for j in range(n):
        for i in range(j, j - 3):
            x[i] = y[j] * 2.0

def sized(n: int, x, y):
    for i in range(n - 5):
        for j in range(n):
            x[i * n + j] = y[j] * 2.0
"""
NEVER_RUN = ["never", "shifted", "inner"]


def functions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, language: str, *flags: str
) -> dict[str, dict[str, object]]:
    path = tmp_path / f"k.{language}"
    path.write_text(C_KERNELS if language == "c" else PYTHON_KERNELS)
    code = main(["analyze", str(path), "--no-cache", "--format", "json", *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    [file] = json.loads(out)["files"]
    return {f["name"]: f for f in file["functions"]}


def counts(function: dict[str, object]) -> dict[str, object]:
    """FLOPs and bytes of every model, symbolic and at the sizes."""
    [nest] = function["nests"]  # type: ignore[misc]
    found = {"flops": nest["flops"]["total"], "flops_value": nest["flops"].get("total_value")}
    for model, traffic in nest["bytes"].items():
        found[model] = traffic["total"]
        found[f"{model}_value"] = traffic.get("total_value")
    return found


@pytest.mark.parametrize("language", ["c", "py"])
@pytest.mark.parametrize("sizes", [[], ["--size", "n=100"], ["--size", "n=3"]])
def test_a_loop_that_never_runs_counts_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, language: str, sizes: list[str]
) -> None:
    found = functions(capsys, tmp_path, language, *sizes)
    for name in NEVER_RUN:
        [nest] = found[name]["nests"]  # type: ignore[misc]
        trips = [loop["trip"] for loop in nest["loops"]]
        assert trips[-1] == "0", (name, trips)  # the innermost loop never runs
        values = counts(found[name])
        assert {values[k] for k in ("flops", "compulsory", "streaming")} == {"0"}, (name, values)


@pytest.mark.parametrize("language", ["c", "py"])
def test_a_trip_in_sizes_counts_where_the_loop_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, language: str
) -> None:
    """`i < n - 5` keeps its polynomial, exact from n = 5 on."""
    sized = counts(functions(capsys, tmp_path, language, "--size", "n=100")["sized"])
    assert sized["flops"] == "n**2 - 5*n" and sized["flops_value"] == 9500
    # x: (n - 5)*n elements written; y: n elements read
    assert sized["compulsory"] == "8*n**2 - 32*n" and sized["compulsory_value"] == 76800
    assert sized["streaming"] == "16*n**2 - 80*n" and sized["streaming_value"] == 152000


@pytest.mark.parametrize("language", ["c", "py"])
@pytest.mark.parametrize("n", [3, 5])
def test_at_sizes_where_the_loop_does_not_run_nothing_is_counted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, language: str, n: int
) -> None:
    """At n = 3 the loop on `i < n - 5` does not run: no FLOPs, no bytes (y is never
    read), never a negative count, and the report says why."""
    function = functions(capsys, tmp_path, language, "--size", f"n={n}")["sized"]
    values = counts(function)
    assert {values[k] for k in ("flops", "compulsory", "streaming")} == {"0"}, values
    [nest] = function["nests"]  # type: ignore[misc]
    assert [loop["trip"] for loop in nest["loops"]] == ["n - 5", "n"]
    [note] = [u for u in nest["unknowns"] if "does not run" in u["message"]]
    assert note["line"] == 15
    assert f"n - 5 times, which is {n - 5} at n = {n}" in note["message"]


@pytest.mark.parametrize("language", ["c", "py"])
def test_no_negative_value_reaches_a_report_or_a_placement(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, language: str
) -> None:
    path = tmp_path / f"k.{language}"
    path.write_text(C_KERNELS if language == "c" else PYTHON_KERNELS)
    argv = ["analyze", str(path), "--no-cache", "--size", "n=3"]
    code = main([*argv, "--device", "epyc-9654", "--device", "h100-sxm"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "sized" in out
    assert not re.search(r"(= |≈ |[:,] )-\d", out), out


# Nests whose inner loop runs for some outer iterations and not for others, or not at all
# at small sizes: (C loops, Python loops, statement, its references in order, per size).
TRIANGLES = {
    "tail": (
        "for (int i = 0; i < n; i++) for (int j = i + 2; j < n; j++)",
        "for i in range(n):\n  for j in range(i + 2, n):",
        "a[j] = a[j] * 2.0",
        lambda n: [[("a", j, False), ("a", j, True)] for i in range(n) for j in range(i + 2, n)],
    ),
    "shrinking": (
        "for (int i = 0; i < n; i++) for (int j = 0; j < i - 1; j++)",
        "for i in range(n):\n  for j in range(i - 1):",
        "b[j] = a[i] * 2.0",
        lambda n: [[("a", i, False), ("b", j, True)] for i in range(n) for j in range(i - 1)],
    ),
    "downward": (
        "for (int i = 0; i < n; i++) for (int j = n - 1; j > i + 1; j--)",
        "for i in range(n):\n  for j in range(n - 1, i + 1, -1):",
        "a[j] = a[j] + b[i]",
        lambda n: [
            [("a", j, False), ("b", i, False), ("a", j, True)]
            for i in range(n)
            for j in range(n - 1, i + 1, -1)
        ],
    ),
    "sized": (
        "for (int i = 0; i < n - 3; i++) for (int j = 0; j < n; j++)",
        "for i in range(n - 3):\n  for j in range(n):",
        "a[i * n + j] = b[j] * 2.0",
        lambda n: [
            [("b", j, False), ("a", i * n + j, True)] for i in range(n - 3) for j in range(n)
        ],
    ),
}


def brute_force(iterations: list[list[tuple[str, int, bool]]]) -> tuple[int, int, int]:
    """FLOPs (one per pass), streaming and compulsory bytes, by running the loops."""
    first_read: dict[tuple[str, int], bool] = {}
    written: set[tuple[str, int]] = set()
    streaming = 0
    for references in iterations:
        streaming += 8 * len(set(references))
        for array, index, is_write in references:
            first_read.setdefault((array, index), not is_write)
            if is_write:
                written.add((array, index))
    compulsory = 8 * (sum(first_read.values()) + len(written))
    return len(iterations), streaming, compulsory


@pytest.mark.parametrize("language", ["c", "py"])
@pytest.mark.parametrize("name", sorted(TRIANGLES))
def test_partly_running_nests_match_brute_force_at_every_size(language: str, name: str) -> None:
    """Before, C summed the closed form over rows where the inner loop does not run (-1
    FLOP for `j = i + 2` at i = n - 1), and both languages gave negative bytes at n = 1."""
    c_loops, python_loops, statement, run = TRIANGLES[name]
    if language == "c":
        head = "void f(int n, double *restrict a, double *restrict b) {"
        text = f"{head}\n{c_loops}\n  {statement};\n}}\n"
    else:
        loops = textwrap.indent(python_loops, "    ")
        text = f"def f(n: int, a, b):\n{loops}\n        {statement}\n"
    for n in range(1, 10):
        options = PipelineOptions(analysis=AnalysisOptions(sizes={"n": n}))
        analysis = analyze_text(text, f"k.{language}", options).analysis
        assert analysis is not None
        [function] = analysis.functions
        flops, streaming, compulsory = brute_force(run(n))
        at = {size_symbol("n"): n}
        assert function.flops.total.subs(at) == flops, (n, text)
        assert function.traffic["streaming"].total(False).subs(at) == streaming, (n, text)
        assert function.traffic["compulsory"].exact, text
        assert function.traffic["compulsory"].total(False).subs(at) == compulsory, (n, text)


def test_the_analysis_empties_a_loop_that_never_runs_whatever_its_frontend() -> None:
    """A trip at most 0 at every size empties the loop even where no frontend clamped it
    (a GPU frontend's grid loop, say); a trip in sizes does only at sizes that stop it."""
    span = Span("k.c", 2, 5)
    body = (Statement(span, "x[i] *= 2.0", FlopTally(mul=1)),)
    n = size_symbol("n")
    for trip in (constant(-5), -n, n - n - 5):
        emptied, notes = without_idle_loops((Loop("i", ZERO, 1, trip, body, span),), {"n": 3})
        assert emptied[0].body == () and notes == [], trip  # type: ignore[union-attr]
    running, notes = without_idle_loops((Loop("i", ZERO, 1, n - 5, body, span),), {"n": 6})
    assert running[0].body == body and notes == []  # type: ignore[union-attr]
    emptied, [note] = without_idle_loops((Loop("i", ZERO, 1, n - 5, body, span),), {"n": 3})
    assert emptied[0].body == () and note.span == span  # type: ignore[union-attr]


@pytest.mark.parametrize("language", ["c", "py"])
def test_the_report_says_from_which_size_a_trip_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, language: str
) -> None:
    """`n - 5` is negative below n = 5: the loops line says where it holds; a trip never
    negative at sizes of at least 1 (`n`, and `n - 1`, which is 0 at n = 1) says nothing."""
    path = tmp_path / f"k.{language}"
    path.write_text(C_KERNELS if language == "c" else PYTHON_KERNELS)
    assert main(["analyze", str(path), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "i (line 15): trip n - 5 (for n >= 5); j (line 16): trip n\n" in out
    assert out.count(" (for ") == 1
    assert nonnegative_from(2 * size_symbol("n") - 5) == ("n", 3)
    assert nonnegative_from(size_symbol("n") - 1) is None
