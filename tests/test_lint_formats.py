"""Every lint reporter on the same inputs: the AIS002 and AIS100 fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aiscan.cli import main

ROOT = Path(__file__).resolve().parent.parent
INPUTS = ["fixtures/lint/AIS002.c", "fixtures/lint/AIS100.c"]
FUSION = (
    "this loop nest re-reads buf after the nest at lines 7-8; fused, compulsory traffic "
    "falls from 48*n bytes to 40*n bytes and AI rises from 1/24 ≈ 0.0417 F/B to 1/20 ≈ 0.05 F/B"
)


@pytest.fixture(autouse=True)
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def render(capsys: pytest.CaptureFixture[str], output_format: str) -> str:
    assert main(["check", *INPUTS, "--output-format", output_format]) == 1
    return capsys.readouterr().out


def test_concise(capsys: pytest.CaptureFixture[str]) -> None:
    assert render(capsys, "concise").splitlines() == [
        f"fixtures/lint/AIS002.c:9:5: AIS002 {FUSION}",
        "fixtures/lint/AIS100.c:12:31: AIS100 unused suppression of AIS006: "
        "no AIS006 finding on this line",
        "fixtures/lint/AIS100.c:18:25: AIS100 unused suppression of AIS999: "
        "AIS999 is not a rule code",
        "Found 3 warnings in 2 files.",
    ]


def test_full_shows_the_source_line_caret_and_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    out = render(capsys, "full")
    assert out.startswith(
        f"fixtures/lint/AIS002.c:9:5: warning: AIS002 [unfused-nests] {FUSION}\n"
        " 9 |     for (int i = 0; i < n; i++) // error: AIS002\n"
        "   |     ^\n"
        "   = other nest: lines 7-8\n"
        "   = shared arrays: buf\n"
        "   = bytes apart: 48*n\n"
        "   = bytes fused: 40*n\n"
        "   = FLOPs: 2*n\n"
    )
    assert " 12 |         y[i] = x[i] * 3.0; // aiscan: ignore[AIS006]  error: AIS100\n" in out
    assert "    | " + " " * 30 + "^\n" in out  # column 31: the suppression comment
    assert out.endswith("Found 3 warnings in 2 files.\n")


def test_json(capsys: pytest.CaptureFixture[str]) -> None:
    report = json.loads(render(capsys, "json"))
    assert report["schema_version"] == "1.0"
    assert report["errors"] == []
    first = report["findings"][0]
    assert first == {
        "code": "AIS002",
        "name": "unfused-nests",
        "severity": "warning",
        "message": FUSION,
        "file": "fixtures/lint/AIS002.c",
        "line": 9,
        "column": 5,
        "end_line": 10,
        "end_column": None,
        "details": {
            "other nest": "lines 7-8",
            "shared arrays": "buf",
            "bytes apart": "48*n",
            "bytes fused": "40*n",
            "FLOPs": "2*n",
        },
    }
    assert [f["code"] for f in report["findings"]] == ["AIS002", "AIS100", "AIS100"]


def test_github_annotations(capsys: pytest.CaptureFixture[str]) -> None:
    lines = render(capsys, "github").splitlines()
    assert lines[0] == (
        "::warning file=fixtures/lint/AIS002.c,line=9,col=5,title=AIS002 unfused-nests::"
        f"AIS002 {FUSION}"
    )
    assert lines[2].startswith(
        "::warning file=fixtures/lint/AIS100.c,line=18,col=25,title=AIS100 unused-suppression::"
    )


def test_github_escapes_properties_and_data(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    odd = tmp_path / "a,b:c.c"
    odd.write_text((ROOT / "fixtures" / "lint" / "AIS006.c").read_text())
    assert main(["check", str(odd), "--output-format", "github"]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert "a%2Cb%3Ac.c,line=8" in first
