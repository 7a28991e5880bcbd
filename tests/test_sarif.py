"""SARIF output: valid against the OASIS SARIF 2.1.0 schema, with what GitHub code scanning reads.

The schema is looked up beside the repository (`../shared/schemas/`), as the issue names it;
a copy ships in `tests/data/` so that CI validates even where the shared folder is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from aiscan.cli import main

ROOT = Path(__file__).resolve().parent.parent
SHARED_SCHEMA = ROOT.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json"
SHIPPED_SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"
LINT = ROOT / "fixtures" / "lint"


def sarif(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["check", *argv, "--output-format", "sarif"])
    return code, json.loads(capsys.readouterr().out)


def validate(document: dict[str, Any], schema_path: Path) -> None:
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)
    validator(schema).validate(document)


@pytest.fixture
def report(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.chdir(ROOT)
    code, document = sarif(
        capsys,
        "fixtures/lint/AIS001.c",
        "fixtures/lint/AIS004.c",
        "fixtures/lint/AIS008.c",
        "--device",
        "h100-sxm",
    )
    assert code == 1
    return document


def test_valid_against_the_shared_oasis_schema(report: dict[str, Any]) -> None:
    if not SHARED_SCHEMA.is_file():
        pytest.skip(f"{SHARED_SCHEMA} is absent (the shipped copy is still checked)")
    validate(report, SHARED_SCHEMA)


def test_valid_against_the_shipped_schema_copy(report: dict[str, Any]) -> None:
    validate(report, SHIPPED_SCHEMA)


def test_the_schema_check_can_fail(report: dict[str, Any]) -> None:
    report["runs"][0]["results"][0]["level"] = "warn"
    with pytest.raises(jsonschema.ValidationError):
        validate(report, SHIPPED_SCHEMA)


def test_shipped_schema_copy_matches_the_shared_one() -> None:
    if not SHARED_SCHEMA.is_file():
        pytest.skip(f"{SHARED_SCHEMA} is absent")
    assert SHIPPED_SCHEMA.read_bytes() == SHARED_SCHEMA.read_bytes()


def test_rules_paths_and_fingerprints(report: dict[str, Any]) -> None:
    (run,) = report["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules][:3] == ["AIS001", "AIS002", "AIS003"]
    memory_bound = rules[0]
    assert memory_bound["name"] == "memory-bound"
    assert memory_bound["defaultConfiguration"]["level"] == "note"  # a placement informs
    assert memory_bound["help"]["markdown"].startswith("## What it does")
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == ROOT.as_uri() + "/"
    results = run["results"]
    locations = [
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in results
    ]
    assert locations[:2] == [
        ("AIS001", "fixtures/lint/AIS001.c", 14),
        ("AIS001", "fixtures/lint/AIS001.c", 20),  # the N = 4096 dgemm, cache-aware
    ]
    for result in results:
        artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["partialFingerprints"]["primaryLocationLineHash"].count(":") == 1
    notes = [r for r in results if r["ruleId"] == "AIS008"]
    assert notes and all(r["level"] == "note" for r in notes)
    # Two findings of one rule on one line get distinct fingerprints (occurrence count).
    fingerprints = [r["partialFingerprints"]["primaryLocationLineHash"] for r in results]
    assert len(set(fingerprints)) == len(fingerprints)


def test_fingerprint_survives_lines_moving(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = (LINT / "AIS005.c").read_text()
    monkeypatch.chdir(tmp_path)
    Path("k.c").write_text(source)
    _, before = sarif(capsys, "k.c")
    Path("k.c").write_text("/* a new comment */\n\n" + source)
    _, after = sarif(capsys, "k.c")
    firsts, seconds = before["runs"][0]["results"], after["runs"][0]["results"]
    assert firsts and len(firsts) == len(seconds)
    for first, second in zip(firsts, seconds, strict=True):
        line = first["locations"][0]["physicalLocation"]["region"]["startLine"]
        assert second["locations"][0]["physicalLocation"]["region"]["startLine"] == line + 2
        assert first["partialFingerprints"] == second["partialFingerprints"]
    assert len({str(r["partialFingerprints"]) for r in firsts}) == len(firsts)  # distinct


def test_input_errors_are_tool_notifications(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code, document = sarif(capsys, "fixtures/python/syntax_error.py")
    assert code == 2
    (invocation,) = document["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (notification,) = invocation["toolExecutionNotifications"]
    assert notification["level"] == "error"
    validate(document, SHIPPED_SCHEMA)
