"""`aiscan check` as users run it: exit codes, file discovery, configuration, suppressions."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from aiscan.cli import main

ROOT = Path(__file__).resolve().parent.parent
C = ROOT / "fixtures" / "c"
LINT = ROOT / "fixtures" / "lint"

DIVIDE = """\
void divide(int n, double h, const double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++)
        y[i] = x[i] / h;
}
"""
CLEAN = """\
void scale(int n, const double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++)
        y[i] = 3.0 * x[i];
}
"""


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def codes(out: str) -> list[tuple[int, str]]:
    return [(f["line"], f["code"]) for f in json.loads(out)["findings"]]


def test_exit_codes_clean_findings_and_input_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert check(capsys, str(C / "vector_add.c"))[0] == 0
    code, out, _ = check(capsys, str(C / "math_calls.c"))
    assert code == 1
    assert out.splitlines() == [
        f"{C / 'math_calls.c'}:9:9: AIS006 calls to sqrt, exp per execution, executed n times",
        f"{C / 'math_calls.c'}:15:9: AIS006 1 division per execution, executed n times; "
        "n of the nest's n FLOPs are divisions",
        f"{C / 'math_calls.c'}:21:16: AIS008 unknown-call: call to unknown function "
        "`black_box`: its work and traffic are not counted",
        # pow(x, 2.5) stays a math-library call (integer powers become multiplies).
        f"{C / 'math_calls.c'}:28:9: AIS006 call to pow per execution, executed n times",
        "Found 3 warnings (1 note) in 1 file.",
    ]
    assert check(capsys, str(C / "math_calls.c"), "--exit-zero")[0] == 0
    code, out, err = check(capsys, str(ROOT / "fixtures" / "python" / "syntax_error.py"))
    assert code == 2
    assert out == "No findings; 1 file could not be analyzed.\n"
    assert "syntax_error.py:" in err and "error:" in err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = check(capsys, str(C / "daxpy.c"), "--device", "no-such-gpu")
    assert (code, "unknown device 'no-such-gpu'" in err) == (2, True)
    code, _, err = check(capsys, str(C / "daxpy.c"), "--select", "XYZ1")
    assert (code, "'XYZ1' selects no rule" in err) == (2, True)
    code, _, err = check(capsys, "no/such/path.c")
    assert (code, "no/such/path.c:1:1: error: no such file" in err) == (2, True)


def test_select_and_ignore_flags(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(C / "math_calls.c")
    _, out, _ = check(capsys, path, "--output-format", "json", "--select", "AIS008")
    assert codes(out) == [(21, "AIS008")]
    _, out, _ = check(capsys, path, "--output-format", "json", "--ignore", "slow-operation")
    assert codes(out) == [(21, "AIS008")]


def test_sizes_decide_a_size_dependent_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    dgemm = str(C / "dgemm_ijk.c")
    # AIS001 is a note; `--fail-on` makes its verdict the exit code this test reads
    base = [dgemm, "--device", "h100-sxm", "--select", "AIS001", "--fail-on", "AIS001"]
    # Without sizes, the verdict analyze prints: the cache model's large-size traffic.
    code, out, _ = check(capsys, *base)
    assert code == 1
    assert (
        "memory-bound at HBM3 on h100-sxm at large sizes (working sets that grow with the "
        "sizes taken not to fit; --size decides smaller ones): AI n/(4*(5*n + 4)) F/B"
    ) in out
    code, out, _ = check(capsys, *base, "--size", "n=64")
    assert code == 1
    # At n = 64 everything fits the L2: the cache-aware traffic is the compulsory one.
    assert (
        "memory-bound at HBM3 on h100-sxm at the given sizes: AI n/12 F/B (5.33 F/B at n = 64)"
        in out
    )
    # n = 128: B (128 KiB) still fits one SM's share of the L2, AI n/12 = 10.7, compute-bound.
    assert check(capsys, *base, "--size", "n=128")[0] == 0
    # n = 4096: the compulsory AI is 341, but B is streamed from HBM once per i (AI ~ 1/4).
    code, out, _ = check(capsys, *base, "--size", "n=4096")
    assert code == 1 and "0.25 F/B at n = 4096" in out


def test_configuration_select_ignore_per_file_and_thresholds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "divide.c").write_text(DIVIDE)
    (tmp_path / "legacy.c").write_text(DIVIDE)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.aiscan]\n"
        'devices = ["h100-sxm"]\n'
        'ignore = ["AIS008"]\n'
        '[tool.aiscan.per-file-ignores]\n"legacy.c" = ["AIS006"]\n'
        "[tool.aiscan.thresholds.memory-bound]\nridge-factor = 100\n"
    )
    monkeypatch.chdir(tmp_path)
    code, out, _ = check(capsys, ".", "--output-format", "json")
    assert code == 1
    found = {(f["file"], f["line"], f["code"]) for f in json.loads(out)["findings"]}
    # AI 1/16 is more than 100x below the 10.1 F/B ridge in both files; AIS006 only in one.
    assert found == {
        ("kernels/divide.c", 3, "AIS001"),
        ("kernels/divide.c", 4, "AIS006"),
        ("legacy.c", 3, "AIS001"),
    }
    assert "more than 100× below the ridge" in out
    (tmp_path / "pyproject.toml").write_text(
        "[tool.aiscan]\n"
        'devices = ["h100-sxm"]\n'
        "[tool.aiscan.thresholds.AIS001]\nridge-factor = 200\n"
    )
    _, out, _ = check(capsys, ".", "--output-format", "json", "--select", "AIS001")
    assert codes(out) == []  # 10.1/200 = 0.05 F/B is below 1/16


def test_bad_configuration_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "aiscan.toml"
    config.write_text('[thresholds.AIS001]\n"no-such-option" = 1\n')
    (tmp_path / "k.c").write_text(CLEAN)
    code, _, err = check(capsys, str(tmp_path / "k.c"), "--config", str(config))
    assert code == 2
    assert "thresholds.AIS001: unknown option(s) no-such-option (known: ridge-factor)" in err


def test_directories_respect_gitignore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "build").mkdir()
    (tmp_path / "src" / "divide.c").write_text(DIVIDE)
    (tmp_path / "src" / "notes.txt").write_text("not source\n")
    (tmp_path / "build" / "generated.c").write_text(DIVIDE)
    (tmp_path / ".gitignore").write_text("build/\n")
    code, out, _ = check(capsys, str(tmp_path), "--output-format", "json")
    assert code == 1
    files = {Path(f["file"]).relative_to(tmp_path).as_posix() for f in json.loads(out)["findings"]}
    assert files == {"src/divide.c"}
    # Named explicitly, an ignored file is checked anyway, as compilers would.
    assert check(capsys, str(tmp_path / "build" / "generated.c"))[0] == 1


def test_inline_suppression_and_unused_suppression(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = check(capsys, str(LINT / "AIS100.c"), "--output-format", "json")
    assert code == 1
    assert codes(out) == [(12, "AIS100"), (18, "AIS100")]
    _, out, _ = check(
        capsys, str(LINT / "AIS100.c"), "--output-format", "json", "--ignore", "AIS100"
    )
    assert codes(out) == []


def test_device_rule_suppressions_are_not_unused_without_a_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "k.c"
    path.write_text(
        CLEAN.replace(
            "for (int i = 0; i < n; i++)", "for (int i = 0; i < n; i++) // aiscan: ignore[AIS001]"
        )
    )
    assert check(capsys, str(path))[0] == 0
    assert check(capsys, str(path), "--device", "h100-sxm")[0] == 0
    assert check(capsys, str(path), "--device", "a100-sxm-80gb")[0] == 0


def test_installed_entry_point_runs_check(tmp_path: Path) -> None:
    path = tmp_path / "k.c"
    path.write_text(DIVIDE)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    completed = subprocess.run(
        ["python", "-m", "aiscan", "check", str(path), "--output-format", "github"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert completed.returncode == 1
    assert completed.stdout == (
        f"::warning file={path},line=4,col=9,title=AIS006 slow-operation::AIS006 1 division "
        "per execution, executed n times; n of the nest's n FLOPs are divisions\n"
    )
