"""`aiscan check` as CI and people read it: input errors in every format, notes that inform
without failing, one finding per place, the summary line, statistics, colour and stdin."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from aiscan.cli import main
from aiscan.limits import MAX_SOURCE_BYTES
from aiscan.lint.checker import DEFAULT_HELP_URL

ROOT = Path(__file__).resolve().parent.parent
SHIPPED_SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"
SHARED_SCHEMA = ROOT.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json"
BROKEN = "void f(int n, double *a) {\n  for (int i = 0; i < n; i++) a[i] = \n}\n"
DIVIDE = """\
void divide(int n, double h, const double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++)
        y[i] = x[i] / h;
}
"""


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    path = tmp_path / "broken.c"
    path.write_text(BROKEN)
    return path


@pytest.mark.parametrize("output_format", ["full", "concise"])
def test_human_formats_show_input_errors_located(
    output_format: str, broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = check(capsys, str(broken), "--output-format", output_format)
    assert code == 2
    assert f"{broken}:3:1: error: C syntax error" in err
    assert "All checks passed" not in out
    assert out.endswith("No findings; 1 file could not be analyzed.\n")


def test_github_shows_input_errors_as_error_commands(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = check(capsys, str(broken), "--output-format", "github")
    assert code == 2
    assert out.splitlines() == [
        f"::error file={broken},line=3,col=1,title=aiscan input error::"
        "C syntax error: invalid expression"
    ]


def _one_command(out: str) -> tuple[str, dict[str, str], str]:
    """The single workflow command in `out`: its name, properties and message."""
    lines = out.split("\n")
    assert lines[-1] == ""
    (command,) = lines[:-1]  # one command on one line: nothing injected
    assert "\r" not in command
    head, message = command.split("::", 2)[1:]
    name, _, rest = head.partition(" ")
    properties = dict(p.split("=", 1) for p in rest.split(","))
    assert set(properties) == {"file", "line", "col", "title"}
    return name, properties, message


def test_github_hostile_file_name_cannot_inject_a_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = tmp_path / "k%25,line=1::error file=evil.c,line=9::pwned.c"
    hostile.write_text(DIVIDE)
    code, out, _ = check(capsys, str(hostile), "--output-format", "github")
    assert code == 1
    name, properties, message = _one_command(out)
    assert name == "warning"
    assert properties["file"] == str(tmp_path) + (
        "/k%2525%2Cline=1%3A%3Aerror file=evil.c%2Cline=9%3A%3Apwned.c"
    )
    assert (properties["line"], properties["col"]) == ("4", "9")
    assert message.startswith("AIS006 1 division")


def test_github_newlines_in_a_file_name_stay_in_one_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = tmp_path / "k\n::error file=evil.c,line=1::pwned\r.c"
    hostile.write_text(DIVIDE)
    code, out, _ = check(capsys, str(hostile), "--output-format", "github")
    assert code in (1, 2)  # the C preprocessor's #line may refuse such a name: an input error
    _, properties, _ = _one_command(out)
    assert properties["file"].endswith("k%0A%3A%3Aerror file=evil.c%2Cline=1%3A%3Apwned%0D.c")


def test_github_escapes_data_percent_and_newlines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from aiscan.report.github import _data, _property

    assert _data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert _property("a:b,c%") == "a%3Ab%2Cc%25"


def sarif(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["check", *argv, "--output-format", "sarif"])
    return code, json.loads(capsys.readouterr().out)


def validate(document: dict[str, Any]) -> None:
    for path in (SHARED_SCHEMA, SHIPPED_SCHEMA):
        if path.exists():
            schema = json.loads(path.read_text(encoding="utf-8"))
            jsonschema.validators.validator_for(schema)(schema).validate(document)


def test_json_and_sarif_carry_input_errors(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = check(capsys, str(broken), "--output-format", "json")
    assert code == 2
    (error,) = json.loads(out)["errors"]
    assert (error["line"], error["column"], error["severity"]) == (3, 1, "error")
    code, document = sarif(capsys, str(broken))
    assert code == 2
    (notification,) = document["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    region = notification["locations"][0]["physicalLocation"]["region"]
    assert (notification["level"], region["startLine"]) == ("error", 3)
    validate(document)


def test_sarif_rules_have_help_uri_and_one_sentence_short_description(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    _, document = sarif(capsys, "fixtures/lint/AIS006.c")
    rules = document["runs"][0]["tool"]["driver"]["rules"]
    assert len(rules) == 16  # AIS001-AIS015 and AIS100
    for rule in rules:
        anchor = f"{rule['id'].lower()}-{rule['name']}"
        assert rule["helpUri"] == DEFAULT_HELP_URL.format(
            code=rule["id"], code_lower=rule["id"].lower(), name=rule["name"]
        )
        assert rule["helpUri"].endswith(f"/docs/lint.md#{anchor}")
        short = rule["shortDescription"]["text"]
        assert len(short) <= 100 and short.endswith(".") and ". " not in short
    validate(document)
    # the anchors are the headings of docs/lint.md
    headings = (ROOT / "docs" / "lint.md").read_text().splitlines()
    for rule in rules:
        assert f"### {rule['id']} {rule['name']}" in headings
    config = tmp_path / "aiscan.toml"
    config.write_text('help-url = "https://example.org/rules/{code}.html"\n')
    _, document = sarif(capsys, "fixtures/lint/AIS006.c", "--config", str(config))
    first = document["runs"][0]["tool"]["driver"]["rules"][0]
    assert first["helpUri"] == "https://example.org/rules/AIS001.html"


def test_notes_inform_without_failing_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    indirect = str(ROOT / "fixtures" / "c" / "indirect.c")
    code, out, _ = check(capsys, indirect)
    assert code == 0
    assert out.count(" AIS008 ") == 3
    assert out.endswith("Found 3 notes in 1 file (notes do not fail the run).\n")
    assert check(capsys, indirect, "--fail-on-notes")[0] == 1
    config = tmp_path / "aiscan.toml"
    config.write_text("fail-on-notes = true\n")
    assert check(capsys, indirect, "--config", str(config))[0] == 1
    mixed = str(ROOT / "fixtures" / "c" / "math_calls.c")
    code, out, _ = check(capsys, mixed)
    assert (code, out.splitlines()[-1]) == (1, "Found 3 warnings (1 note) in 1 file.")


def test_one_finding_per_rule_and_place(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = check(
        capsys, str(ROOT / "fixtures" / "c" / "indirect.c"), "--output-format", "json"
    )
    findings = json.loads(out)["findings"]
    places = [(f["code"], f["line"], f["column"]) for f in findings]
    assert places == [("AIS008", 5, 17), ("AIS008", 14, 9), ("AIS008", 15, 27)]
    first = findings[0]
    assert first["message"].startswith("indirect-access: `x[idx[i]]`")
    assert "; footprint-bound: x:" in first["message"]
    assert first["details"]["kind"] == "indirect-access, footprint-bound"


def test_unique_findings_drops_identical_and_joins_messages() -> None:
    from aiscan.errors import Severity
    from aiscan.lint.checker import unique_findings
    from aiscan.lint.finding import Finding
    from aiscan.span import Span

    at = Span("k.c", 3, 5)
    a = Finding("AIS008", "analysis-gap", Severity.NOTE, at, "first", (("kind", "a"),))
    b = Finding("AIS008", "analysis-gap", Severity.NOTE, at, "second", (("kind", "b"),))
    other = Finding("AIS006", "slow-operation", Severity.WARNING, at, "first")
    merged = unique_findings([a, a, b, other, b])
    assert [(f.code, f.message, f.details) for f in merged] == [
        ("AIS008", "first; second", (("kind", "a, b"),)),
        ("AIS006", "first", ()),
    ]


def test_statistics(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = check(capsys, str(ROOT / "fixtures" / "c" / "math_calls.c"), "--statistics")
    assert code == 1
    assert out.splitlines() == [
        "3  AIS006  slow-operation",
        "1  AIS008  analysis-gap",
        "Found 3 warnings (1 note) in 1 file.",
    ]


def test_stdin_with_a_file_name(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", _stdin(DIVIDE.encode()))
    code, out, _ = check(capsys, "-", "--stdin-filename", "kernels/divide.c")
    assert code == 1
    assert out.splitlines()[0].startswith("kernels/divide.c:4:9: AIS006 1 division")
    monkeypatch.setattr(sys, "stdin", _stdin(DIVIDE.encode()))
    code, _, err = check(capsys, "-")
    assert code == 2 and "--stdin-filename" in err


def _stdin(data: bytes) -> io.TextIOWrapper:
    """A standard input holding `data`, bytes underneath as the real one."""
    return io.TextIOWrapper(io.BytesIO(data))


def test_stdin_is_read_no_further_than_the_size_limit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check - < /dev/zero` read until memory ran out; it stops at the source size limit."""
    read: list[int] = []

    class Endless(io.RawIOBase):
        def readinto(self, buffer: Any) -> int:
            buffer[:] = b"x" * len(buffer)
            read.append(len(buffer))
            return len(buffer)

        def readable(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(Endless())))
    code, _, err = check(capsys, "-", "--stdin-filename", "k.c")
    assert code == 2
    assert "k.c:1:1: error: stdin: over the 10 MiB limit for one source file" in err
    assert sum(read) <= MAX_SOURCE_BYTES + io.DEFAULT_BUFFER_SIZE


def test_stdin_honours_the_time_limit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check -` ran its source without `--timeout`, as no path did."""
    source = (ROOT / "fixtures" / "c" / "stencil_cross9.c").read_bytes()
    monkeypatch.setattr(sys, "stdin", _stdin(source))
    code, _, err = check(capsys, "-", "--stdin-filename", "k.c", "--timeout", "0.001")
    assert code == 2
    assert "k.c:1:1: error: analysis timed out after 0.001 s (--timeout)" in err


def _run_on_terminal(argv: list[str], environ: dict[str, str]) -> str:
    """Output of the CLI when its stdout is a terminal (a pseudo-terminal here)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "aiscan", *argv],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        env=environ,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode()


def test_colour_on_a_terminal_only_and_never_with_no_color() -> None:
    argv = ["check", "fixtures/c/math_calls.c", "--no-cache"]
    environ = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert "\033[" in _run_on_terminal(argv, environ)
    assert "\033[" not in _run_on_terminal(argv, {**environ, "NO_COLOR": "1"})
    piped = subprocess.run(
        [sys.executable, "-m", "aiscan", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environ,
    )
    assert piped.returncode == 1 and "AIS006" in piped.stdout and "\033[" not in piped.stdout


COLUMN_WALKS = """\
#define N 128
void vla(int m, int n, const float a[m][n], float *restrict s)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            s[j] += a[i][j];
}

void fixed(double a[N][64], double *restrict s)
{
    for (int j = 0; j < 64; j++)
        for (int i = 0; i < N; i += 2)
            s[j] += a[i][j];
}

void rows(int m, int n, double (*a)[n], double *restrict s)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            s[j] += a[i][j];
}

void unknown(int m, double **a, double *restrict s)
{
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < m; i++)
            s[j] += a[i][j];
}
"""


def test_strided_access_prints_the_declared_row_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "columns.c"
    path.write_text(COLUMN_WALKS)
    code, out, _ = check(capsys, str(path), "--select", "AIS004", "--output-format", "json")
    strides = {
        f["line"]: (f["details"]["stride (elements)"], f["details"]["stride (bytes)"])
        for f in json.loads(out)["findings"]
    }
    assert strides == {
        6: ("n", "4*n"),
        13: ("128", "1024"),  # two rows of 64 doubles per step of i += 2
        20: ("n", "8*n"),
        27: ("one row (its length is not declared)", "8 × one row (its length is not declared)"),
    }
    assert code == 1


def test_memory_bound_message_says_when_bytes_are_an_upper_bound() -> None:
    """AIS001 on flagged upper-bound bytes says its AI is a lower bound, as `analyze` does;
    exact bytes carry no such words. (Today every rule skips a nest with an analysis gap,
    and inexact compulsory bytes always come with one, so this guards the placements the
    lint context hands the rules.)"""
    from dataclasses import replace

    import sympy

    from aiscan.lint.rules.AIS001_memory_bound import _message
    from aiscan.roofline.devices import load_devices
    from aiscan.roofline.placement import place

    n = sympy.Symbol("n", positive=True, integer=True)
    exact = place(2 * n, 28 * n, "fp64", load_devices().get("h100"))
    bounded = replace(exact, bytes_upper_bound=True)
    words = "bytes are an upper bound, so AI is a lower bound"
    assert words not in _message(exact, 1.0, "at every size", {})
    assert words in _message(bounded, 1.0, "at every size", {})
