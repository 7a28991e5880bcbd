"""`aiscan check --output-format json` against the JSON Schema shipped for it."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from aiscan.cli import main
from aiscan.report.json_report import load_schema
from aiscan.report.lint_json import LINT_JSON_VERSION, LINT_SCHEMA_ID

ROOT = Path(__file__).resolve().parent.parent
LINT_FIXTURES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "fixtures" / "lint").iterdir())


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    document = load_schema("lint")
    jsonschema.Draft202012Validator.check_schema(document)
    return document


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every lint fixture on two devices, and one file that does not parse: checked once
    for the module (3 s), each test reading it or breaking a copy of its own."""
    broken = tmp_path_factory.mktemp("lint") / "broken.c"
    broken.write_text("void f(int n, double *a) { for (int i = 0; i < n; i++) a[i] = ; }\n")
    arguments = ["check", *LINT_FIXTURES, str(broken), "--output-format", "json"]
    output = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(output):
        patch.chdir(ROOT)
        code = main([*arguments, "--device", "h100", "--device", "epyc", "--no-cache"])
    assert code == 2
    document: dict[str, Any] = json.loads(output.getvalue())
    return document


def test_schema_names_this_output(schema: dict[str, Any]) -> None:
    assert schema["$id"] == LINT_SCHEMA_ID
    jsonschema.validate(
        {"schema_version": LINT_JSON_VERSION, "findings": [], "errors": [], "rules": []}, schema
    )


def test_every_rules_findings_and_an_error_validate(
    report: dict[str, Any], schema: dict[str, Any]
) -> None:
    jsonschema.validate(report, schema)
    codes = {finding["code"] for finding in report["findings"]}
    assert codes >= {"AIS001", "AIS002", "AIS003", "AIS004", "AIS005", "AIS006", "AIS008"}
    assert codes >= {"AIS100"}
    (error,) = report["errors"]
    assert error["line"] == 1 and error["column"] == 63
    assert error["message"] == "C syntax error: invalid expression"
    ranged = [f for f in report["findings"] if f["end_column"] is not None]
    assert ranged, "the Python and suppression findings carry end columns"


@pytest.mark.parametrize(
    ("where", "change"),
    [
        ("finding", lambda f: f.pop("code")),
        ("finding", lambda f: f.update(severity="fatal")),
        ("finding", lambda f: f.update(code="E501")),
        ("finding", lambda f: f.update(line=0)),
        ("finding", lambda f: f["details"].update({"AI": 0.083})),
        ("finding", lambda f: f.update(extra=1)),
        ("error", lambda e: e.pop("message")),
        ("document", lambda d: d.update(schema_version="2.0")),
        ("document", lambda d: d.update(rules=["AIS001", "AIS001"])),
    ],
    ids=[
        "no-code",
        "unknown-severity",
        "foreign-code",
        "line-0",
        "number-in-details",
        "unknown-key",
        "error-without-message",
        "major-version-2",
        "rule-twice",
    ],
)
def test_schema_rejects_a_broken_document(
    report: dict[str, Any], schema: dict[str, Any], where: str, change: Any
) -> None:
    broken = copy.deepcopy(report)
    target = {
        "finding": broken["findings"][0],
        "error": broken["errors"][0],
        "document": broken,
    }[where]
    change(target)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
