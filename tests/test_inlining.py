"""Calls to functions of the same file counted as their bodies (`frontends/c/inlining.py`):
each caller of fixtures/c/inlined_calls.c against its hand-inlined twin, and every call
the inliner refuses as a located unknown that names why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from golden import FIXTURES, same

from aiscan.analysis.kernel import AnalysisOptions, FunctionAnalysis, analyze_module
from aiscan.cli import main
from aiscan.frontends.c.inlining import MAX_CALLS, MAX_DEPTH, inline_calls
from aiscan.ir.nodes import UnknownKind
from aiscan.pipeline import PipelineOptions, lower_source
from aiscan.report.assembly import load_schema

CALLS = FIXTURES / "c" / "inlined_calls.c"
TWINS = FIXTURES / "c" / "inlined_calls_twins.c"
CALLERS = ("axpy_sq", "matvec", "scale", "row_norms")


def _functions(path: Path, text: str | None = None, **options: Any) -> dict[str, FunctionAnalysis]:
    source = path.read_text() if text is None else text
    module = lower_source(source, str(path), PipelineOptions())
    analysis = analyze_module(module, AnalysisOptions(**options))
    return {f.function.name: f for f in analysis.functions}


@pytest.mark.parametrize("write_allocate", [False, True])
def test_every_caller_counts_exactly_as_its_hand_inlined_twin(write_allocate: bool) -> None:
    inlined = _functions(CALLS, write_allocate=write_allocate)
    twins = _functions(TWINS, write_allocate=write_allocate)
    for name in CALLERS:
        ours, twin = inlined[name], twins[name]
        assert ours.flops == twin.flops, name
        for model in ("compulsory", "streaming"):
            assert same(
                ours.traffic[model].total(write_allocate),
                str(twin.traffic[model].total(write_allocate)),
            ), (name, model)
        assert [str(loop.trip) for r in ours.regions for loop in r.loops] == [
            str(loop.trip) for r in twin.regions for loop in r.loops
        ], name
        assert not ours.unknowns, (name, [u.message for u in ours.unknowns])


def test_the_counts_are_the_kernels_own() -> None:
    """Not merely equal to the twin: the values a performance engineer writes down."""
    functions = _functions(CALLS)
    assert same(functions["axpy_sq"].flops.total, "3*n")
    assert same(functions["matvec"].flops.total, "2*n**2")
    assert same(functions["matvec"].traffic["compulsory"].total(False), "8*n**2 + 16*n")
    assert same(functions["scale"].traffic["compulsory"].total(False), "16*n**2 + 8*n")
    assert same(functions["row_norms"].flops.total, "2*m*n")
    # The callee is still analyzed on its own.
    assert same(functions["dot"].flops.total, "2*n")


def test_the_report_names_what_was_inlined(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["analyze", "--no-cache", str(CALLS)]) == 0
    out = capsys.readouterr().out
    assert "  inlined: dot (line 7), called at line 43\n" in out
    assert "  inlined: norm2 (line 23), called at line 57\n" in out
    assert main(["analyze", "--no-cache", "--format", "json", str(CALLS)]) == 0
    report = json.loads(capsys.readouterr().out)
    jsonschema.validate(report, load_schema())
    functions = {f["name"]: f for f in report["files"][0]["functions"]}
    assert functions["matvec"]["inlined"] == [
        {"name": "dot", "file": str(CALLS), "line": 7, "call_lines": [43]}
    ]
    assert "inlined" not in functions["dot"]


def _unknowns(text: str, tmp_path: Path, function: str = "k") -> list[tuple[int, str]]:
    path = tmp_path / "calls.c"
    analysis = _functions(path, text)[function]
    return sorted(
        (u.span.line, u.message) for u in analysis.unknowns if u.kind is UnknownKind.UNKNOWN_CALL
    )


def test_calls_that_cannot_be_inlined_are_located_unknowns_that_say_why(tmp_path: Path) -> None:
    text = (
        "double fact(double x, int k) { if (k <= 1) return x; return x * fact(x, k - 1); }\n"
        "double ping(double x);\n"
        "double pong(double x) { return ping(x) + 1.0; }\n"
        "double ping(double x) { return pong(x) * 2.0; }\n"
        "double jump(double x) { if (x > 0) goto out; x = x * 2.0; out: return x; }\n"
        "double vsum(int c, ...) { return 0.0; }\n"
        "int bound(int n) { return n; }\n"
        "void k(int n, double *x, double (*fp)(double)) {\n"
        "  for (int i = 0; i < n; i++) x[i] = fact(x[i], 3) + ping(x[i]);\n"
        "  for (int i = 0; i < n; i++) x[i] = jump(x[i]) + vsum(1, x[i]) + fp(x[i]);\n"
        "  for (int i = 0; i < bound(n); i++) x[i] = 2.0 * x[i];\n"
        "}\n"
    )
    found = _unknowns(text, tmp_path)
    assert found == [
        (
            9,
            "call to `fact` (defined at line 1 of this file) not inlined: it is recursive; "
            "its work and traffic are not counted here",
        ),
        (
            9,
            "call to `ping` (defined at line 4 of this file) not inlined: it is recursive; "
            "its work and traffic are not counted here",
        ),
        (
            10,
            "call through the function pointer `fp`: its target is not known, its work and "
            "traffic are not counted",
        ),
        (
            10,
            "call to `jump` (defined at line 5 of this file) not inlined: its body uses "
            "`goto`; its work and traffic are not counted here",
        ),
        (
            10,
            "call to `vsum` (defined at line 6 of this file) not inlined: it takes a variable "
            "number of arguments; its work and traffic are not counted here",
        ),
        (
            11,
            "call to `bound` (defined at line 7 of this file) not inlined: in a loop header; "
            "its work and traffic are not counted here",
        ),
    ]


def test_calls_nested_deeper_than_the_limit_stop_there(tmp_path: Path) -> None:
    helpers = ["double f0(double x) { return x * 2.0; }"]
    for depth in range(1, MAX_DEPTH + 2):
        helpers.append(f"double f{depth}(double x) {{ return f{depth - 1}(x) + 1.0; }}")
    top = MAX_DEPTH + 1
    caller = f"void k(int n, double *x) {{ for (int i = 0; i < n; i++) x[i] = f{top}(x[i]); }}"
    text = "\n".join([*helpers, caller])
    functions = _functions(tmp_path / "deep.c", text)
    line = len(helpers) + 1
    (unknown,) = functions["k"].unknowns
    assert unknown.span.line == line
    assert "not inlined: calls nested deeper than 8" in unknown.message
    # The MAX_DEPTH outer levels are counted: one add each.
    assert same(functions["k"].flops.total, f"{MAX_DEPTH}*n")


def test_an_early_return_is_an_upper_bound_said_at_the_call(tmp_path: Path) -> None:
    text = (
        "double clip(double x) { if (x < 0.0) return 0.0; x = x * 3.0; return x; }\n"
        "void k(int n, double *x) {\n"
        "  for (int i = 0; i < n; i++) x[i] = clip(x[i]);\n"
        "}\n"
    )
    function = _functions(tmp_path / "clip.c", text)["k"]
    assert same(function.flops.total, "n")
    messages = [(u.span.line, u.message) for u in function.function.unknowns]
    assert (
        3,
        "`return` before the end of the inlined `clip` (its line 1): the statements after it "
        "are counted as if it were not taken",
    ) in messages


def test_two_branches_of_one_callee_are_two_fractions(tmp_path: Path) -> None:
    text = (
        "double twice(double x, double y) {\n"
        "  if (x > y) x = x * 2.0;\n"
        "  if (y > x) y = y * 2.0;\n"
        "  return x + y;\n"
        "}\n"
        "void k(int n, double *x, double *y) {\n"
        "  for (int i = 0; i < n; i++) x[i] = twice(x[i], y[i]);\n"
        "}\n"
    )
    function = _functions(tmp_path / "branches.c", text)["k"]
    assert same(function.flops.total, "n*(p_L7_2 + p_L7_3 + 1)")


def test_helpers_fanning_out_stop_at_the_call_budget(tmp_path: Path) -> None:
    lines = ["double f0(double x) { return x * 2.0; }"]
    for level in range(1, 7):
        calls = " + ".join([f"f{level - 1}(x)"] * 4)
        lines.append(f"double f{level}(double x) {{ return {calls}; }}")
    lines.append("void k(int n, double *x) { for (int i = 0; i < n; i++) x[i] = f6(x[i]); }")
    function = _functions(tmp_path / "fan.c", "\n".join(lines))["k"]
    refused = [u for u in function.unknowns if u.kind is UnknownKind.UNKNOWN_CALL]
    assert refused
    assert all(
        f"not inlined: more than {MAX_CALLS} calls inlined into this function" in u.message
        for u in refused
    )
    assert all(u.span.line == 8 for u in refused)


def test_a_helper_from_a_header_is_inlined_and_named_with_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "vec.h").write_text(
        "static inline double axpy1(double a, double x, double y) { return a * x + y; }\n"
    )
    source = tmp_path / "k.c"
    source.write_text(
        '#include "vec.h"\n'
        "void k(int n, double a, const double *restrict x, double *restrict y) {\n"
        "  for (int i = 0; i < n; i++) y[i] = axpy1(a, x[i], y[i]);\n"
        "}\n"
    )
    function = _functions(source)["k"]
    assert same(function.flops.total, "2*n")
    assert same(function.traffic["compulsory"].total(False), "24*n")
    assert [u.message for u in function.unknowns] == []
    assert main(["analyze", "--no-cache", str(source)]) == 0
    out = capsys.readouterr().out
    assert f"  inlined: axpy1 ({tmp_path / 'vec.h'}:1), called at line 3\n" in out


def test_statements_keep_their_text_as_written(tmp_path: Path) -> None:
    """The report quotes `if (sq(x[i]) > 1.0)`, not the result variable it reads."""
    text = (
        "double sq(double x);\n"
        "void k(int n, double *restrict x, double *restrict y) {\n"
        "  for (int i = 0; i < n; i++)\n"
        "    if (sq(x[i]) > 1.0) y[i] = sq(y[i]);\n"
        "}\n"
        "double sq(double x) { return x * x; }\n"
    )
    function = _functions(tmp_path / "branch.c", text)["k"]
    (unknown,) = function.unknowns
    assert unknown.message == (
        "branch `if (sq(x[i]) > 1.0)`: the fraction of executions taking it is named p_L4"
    )
    assert same(function.flops.total, "n*p_L4 + n")


def test_a_body_is_copied_only_when_it_has_a_call_to_inline() -> None:
    """The inliner works on a copy, so that a callee's own tree stays as written; a body
    that calls no function of the file is handed back as it is (the copy cost a one-kernel
    run 2 ms of CPU)."""
    from pycparser import c_ast, c_parser

    tree = c_parser.CParser().parse(
        "double sq(double v) { return v * v; }\n"
        "void k(int n, double *x) { for (int i = 0; i < n; i++) x[i] = sq(x[i]); }\n"
    )
    sq, k = (node for node in tree.ext if isinstance(node, c_ast.FuncDef))
    definitions = {"sq": sq}
    assert inline_calls(sq.body, definitions).body is sq.body
    inlined = inline_calls(k.body, definitions)
    assert inlined.body is not k.body
    assert [call.callee for call in inlined.calls] == ["sq"]
    assert isinstance(k.body.block_items[0].stmt.rvalue, c_ast.FuncCall)  # left as written
