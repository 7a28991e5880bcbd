"""The result cache is never wrong: issue 35's breaks, each replayed cold, then warm.

A warm run must print exactly what `--no-cache` prints: the same paths, the same findings,
the same counts, the same exit code, whatever the cache holds.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aiscan.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

SCALED = (
    "void f(int n, double *restrict y, const double *restrict x)\n"
    "{\n"
    "    for (int i = 0; i < n; i++)\n"
    "        y[i] = {body};\n"
    "}\n"
)
"""A kernel whose FLOPs are set by `{body}`: `2.0 * x[i]` is n, `x[i] * x[i] + 1.0` 2*n."""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def flops(report: str) -> list[str]:
    return [str(f["functions"][0]["flops"]["total"]) for f in json.loads(report)["files"]]


def test_same_text_at_two_paths_keeps_each_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for folder in ("src/x", "src/y"):
        (tmp_path / folder).mkdir(parents=True)
        shutil.copy(FIXTURES / "c" / "daxpy.c", tmp_path / folder / "kernel.c")
    command = ("check", "src", "--device", "h100", "--jobs", "1")
    cold = run(capsys, *command)
    assert cold[0] == 1
    assert [line.split(":")[0] for line in cold[1].splitlines()[:2]] == [
        "src/x/kernel.c",
        "src/y/kernel.c",
    ]
    assert run(capsys, *command) == cold
    assert run(capsys, *command, "--no-cache") == cold


def test_per_file_ignores_hold_on_a_warm_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.aiscan]\ndevices = ["h100"]\n'
        '[tool.aiscan.per-file-ignores]\n"src/y/*" = ["AIS001"]\n'
    )
    for folder in ("src/x", "src/y"):
        (tmp_path / folder).mkdir(parents=True)
        shutil.copy(FIXTURES / "c" / "daxpy.c", tmp_path / folder / "kernel.c")
    cold = run(capsys, "check", "src", "--jobs", "1")
    assert cold[0] == 1
    assert cold[1].startswith("src/x/kernel.c:6:5: AIS001 ")
    assert "src/y/kernel.c" not in cold[1]
    assert run(capsys, "check", "src", "--jobs", "1") == cold


def test_empty_files_at_many_paths_keep_their_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [f"pkg{i}/__init__.py" for i in range(3)]
    for name in names:
        (tmp_path / "project" / name).parent.mkdir(parents=True)
        (tmp_path / "project" / name).write_text("")
    monkeypatch.chdir(tmp_path / "project")
    command = ("analyze", ".", "--format", "json", "--jobs", "1", "--cache-dir", "../cache")
    cold = run(capsys, *command)
    assert [f["path"] for f in json.loads(cold[1])["files"]] == names
    assert run(capsys, *command) == cold
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 3


def test_the_same_relative_path_from_another_directory_is_another_entry(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Per-file settings match the path resolved from the working directory."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.aiscan]\ndevices = ["h100"]\n[tool.aiscan.per-file-ignores]\n"b/*" = ["AIS001"]\n'
    )
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        shutil.copy(FIXTURES / "c" / "daxpy.c", tmp_path / folder / "kernel.c")
    cache = str(tmp_path / "cache")
    monkeypatch.chdir(tmp_path / "a")
    assert run(capsys, "check", "kernel.c", "--cache-dir", cache)[0] == 1
    monkeypatch.chdir(tmp_path / "b")
    assert run(capsys, "check", "kernel.c", "--cache-dir", cache)[0] == 0
