"""Lint fixtures are the specification: each marked line must get exactly its codes.

`fixtures/lint/CODE.ext` marks offending lines with `// error: CODE[, CODE...]` (or `#`);
every other line must stay clean of every rule. A first line `// flags: ...` adds
command-line flags (a target device for the rules that need one).
"""

from __future__ import annotations

import json
import re
import shlex
from collections import defaultdict
from pathlib import Path

import pytest

from aiscan.cli import main
from aiscan.errors import Severity
from aiscan.lint.registry import RULES

LINT_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint"
_MARKER = re.compile(r"error:\s*([A-Z]+\d+(?:\s*,\s*[A-Z]+\d+)*)")
_FLAGS = re.compile(r"^(?://|#)\s*flags:\s*(.*)$")


def expected_findings(path: Path) -> dict[int, set[str]]:
    expected: dict[int, set[str]] = defaultdict(set)
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        for match in _MARKER.finditer(line):
            expected[number] |= {code.strip() for code in match.group(1).split(",")}
    return dict(expected)


def flags(path: Path) -> list[str]:
    match = _FLAGS.match(path.read_text().splitlines()[0])
    return shlex.split(match.group(1)) if match else []


def actual_findings(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[int, set[str]]]:
    code = main(["check", str(path), "--output-format", "json", *flags(path)])
    report = json.loads(capsys.readouterr().out)
    found: dict[int, set[str]] = defaultdict(set)
    for finding in report["findings"]:
        found[finding["line"]].add(finding["code"])
    return code, dict(found)


NOTE_CODES = {r.code for r in RULES if r.severity is Severity.NOTE}
FIXTURES = sorted(p for p in LINT_FIXTURES.iterdir() if p.suffix in (".c", ".py", ".cu"))


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_fixture_findings_match_markers(fixture: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = actual_findings(fixture, capsys)
    expected = expected_findings(fixture)
    assert found == expected
    failing = {c for codes in expected.values() for c in codes} - NOTE_CODES
    assert code == (1 if failing else 0)  # notes (AIS008) inform; they do not fail the run


def test_every_rule_has_a_fixture_that_triggers_it() -> None:
    marked = {code for fixture in FIXTURES for codes in expected_findings(fixture).values()
              for code in codes}  # fmt: skip
    assert marked == {rule.code for rule in RULES}


def test_fixture_named_by_code_marks_its_own_code() -> None:
    for fixture in FIXTURES:
        codes = set().union(*expected_findings(fixture).values())
        assert fixture.stem in codes, fixture.name
