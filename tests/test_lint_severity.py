"""The pre-commit hook teams keep (issue 34): placement is information, fixable findings fail.

With the README's hook (`aiscan check --device h100`), a clean streaming loop and `np.sum(x)`
pass: AIS001 memory-bound is a note. A finding a developer can act on still fails the run,
and `fail-on` (configuration or `--fail-on`) makes any rule fail, in every output format.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aiscan.cli import main
from aiscan.errors import Severity, UsageError
from aiscan.lint.registry import RULES
from aiscan.lint.rules.AIS001_memory_bound import MemoryBound
from aiscan.lint.settings import LintSettings

ROOT = Path(__file__).resolve().parent.parent
STREAM = """\
void scale(int n, double *y)
{
    for (int i = 0; i < n; i++)
        y[i] = 2.0 * y[i];
}
"""
SUM = """\
import numpy as np


def total(x):
    return np.sum(x)
"""
HOOK = ("--device", "h100")
"""The README's pre-commit hook: `entry: aiscan check` with `args: [--device, h100]`."""


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["check", *argv])
    return code, capsys.readouterr().out


@pytest.fixture
def stream(tmp_path: Path) -> Path:
    path = tmp_path / "scale.c"
    path.write_text(STREAM)
    return path


@pytest.fixture
def total(tmp_path: Path) -> Path:
    path = tmp_path / "total.py"
    path.write_text(SUM)
    return path


def test_the_hook_passes_a_clean_streaming_loop(
    stream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = check(capsys, str(stream), *HOOK)
    assert code == 0
    lines = out.splitlines()
    # the placement is still shown, as information
    assert lines[0].startswith(f"{stream}:3:5: AIS001 memory-bound at HBM3 on h100-sxm: AI 1/16 ")
    assert lines[-1] == "Found 1 note in 1 file (notes do not fail the run)."


def test_the_hook_passes_np_sum(total: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = check(capsys, str(total), *HOOK, "--output-format", "json")
    assert code == 0
    findings = json.loads(out)["findings"]
    assert [(f["code"], f["line"], f["severity"]) for f in findings] == [
        ("AIS008", 4, "note"),
        ("AIS001", 5, "note"),
    ]


def test_a_finding_a_developer_can_act_on_still_fails(
    stream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    math_calls = ROOT / "fixtures" / "c" / "math_calls.c"
    code, out = check(capsys, str(math_calls), str(stream), *HOOK)
    assert code == 1
    assert out.splitlines()[-1] == "Found 3 warnings (5 notes) in 2 files."
    strided = ROOT / "fixtures" / "lint" / "AIS004.c"
    assert check(capsys, str(strided), *HOOK)[0] == 1


def test_fail_on_makes_ais001_fail_from_the_command_line(
    stream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = check(capsys, str(stream), *HOOK, "--fail-on", "AIS001")
    assert code == 1
    assert out.splitlines()[-1] == "Found 1 warning in 1 file."
    # by name too, and the JSON and SARIF levels say what fails
    code, out = check(capsys, str(stream), *HOOK, "--fail-on", "memory-bound", "--output-format",
                      "json")  # fmt: skip
    assert code == 1
    assert [f["severity"] for f in json.loads(out)["findings"]] == ["warning"]
    code, out = check(capsys, str(stream), *HOOK, "--fail-on=AIS001", "--output-format=sarif")
    run = json.loads(out)["runs"][0]
    assert code == 1
    assert [r["level"] for r in run["results"]] == ["warning"]
    # the rule's default level stays the documented one
    assert run["tool"]["driver"]["rules"][0]["defaultConfiguration"]["level"] == "note"


def test_fail_on_makes_ais001_fail_from_the_configuration(
    stream: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "aiscan.toml"
    config.write_text('fail-on = ["memory-bound"]\n')
    assert check(capsys, str(stream), *HOOK, "--config", str(config))[0] == 1
    config.write_text('[tool.aiscan]\nfail-on = ["AIS0"]\n')
    pyproject = tmp_path / "pyproject.toml"
    config.rename(pyproject)
    assert check(capsys, str(stream), *HOOK, "--config", str(pyproject))[0] == 1


def test_sarif_levels_follow_the_default_severities(
    stream: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = check(capsys, str(stream), *HOOK, "--output-format", "sarif")
    run = json.loads(out)["runs"][0]
    assert code == 0
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == [("AIS001", "note")]
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in run["tool"]["driver"]["rules"]}
    assert levels == {rule.code: rule.severity.value for rule in RULES}
    assert levels["AIS001"] == levels["AIS008"] == "note"
    assert levels["AIS004"] == levels["AIS009"] == "warning"


def test_fail_on_selectors_are_checked() -> None:
    with pytest.raises(UsageError, match="fail-on: 'AIS999' selects no rule"):
        LintSettings(fail_on=("AIS999",))
    settings = LintSettings(fail_on=("AIS001",))
    assert settings.severity_of(MemoryBound) is Severity.WARNING
    assert LintSettings().severity_of(MemoryBound) is Severity.NOTE


def test_fail_on_notes_reads_as_failing(capsys: pytest.CaptureFixture[str]) -> None:
    """`--fail-on-notes` is `--fail-on ALL`: the summary no longer says notes do not fail."""
    indirect = str(ROOT / "fixtures" / "c" / "indirect.c")
    code, out = check(capsys, indirect, "--fail-on-notes")
    assert (code, out.splitlines()[-1]) == (1, "Found 3 warnings in 1 file.")


def test_rule_without_argument_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["code", "name", "severity", "what", "it", "flags"]
    rows = [line.split(maxsplit=3) for line in lines[1:]]
    assert [row[:3] for row in rows] == [[r.code, r.name, r.severity.value] for r in RULES]
    assert rows[0][3] == MemoryBound.title()
    assert dict((row[0], row[2]) for row in rows)["AIS001"] == "note"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_page_states_its_severity(
    rule: type, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rule", rule.code]) == 0
    page = capsys.readouterr().out
    fails = "never fails the run" if rule.severity is Severity.NOTE else "fails the run"
    assert f"Default severity: {rule.severity.value} ({fails}" in page
