"""A scanned tree is data: it never runs a command, and its names never drive the output.

Each test is a break found by the hostile-input review: a `.git/config` that names a
command, file names that forge CI workflow commands or terminal escapes, an unreadable
directory that used to vanish from the scan.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from aiscan.cli import main
from aiscan.discovery import discover, work_tree_root
from aiscan.printable import printable, printable_path

ROOT = Path(__file__).resolve().parent.parent
DAXPY = (ROOT / "fixtures" / "c" / "daxpy.c").read_text()

FORGED = "a\n::error file=pwn.c,line=1::INJECTED.c"
OSC = "e\x1b]0;pwned\x07.c"
COMMAND_FIRST = "::warning::x.c"
PERCENT = "lit%0A.c"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def hostile_repository(tmp_path: Path) -> Path:
    """A work tree whose configuration runs a command on any git status-like call."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    marker = tmp_path.parent / f"{tmp_path.name}-MARKER"
    with (tmp_path / ".git" / "config").open("a") as config:
        config.write(
            f"[core]\n\tfsmonitor = touch {marker}\n\thooksPath = /nonexistent\n"
            f'[alias]\n\tcheck-ignore = "!touch {marker}"\n'
        )
    (tmp_path / "k.c").write_text(DAXPY)
    return tmp_path


def test_scanning_a_repository_runs_nothing_it_configures(
    hostile_repository: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = hostile_repository.parent / f"{hostile_repository.name}-MARKER"
    # The configuration is live: git itself runs it.
    subprocess.run(["git", "-C", str(hostile_repository), "status"], capture_output=True)
    assert marker.exists()
    marker.unlink()
    assert run(capsys, "analyze", str(hostile_repository), "--no-cache")[0] == 0
    assert run(capsys, "check", str(hostile_repository), "--no-cache")[0] in (0, 1)
    assert not marker.exists()


def test_gitignore_rules_are_read_as_git_reads_them(tmp_path: Path) -> None:
    """Nested files, negation, directory patterns, `info/exclude`, and a scan that starts
    below the work tree's top, where the top's rules still apply."""
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("secret.c\n")
    (tmp_path / ".gitignore").write_text("build/\n*.py\n!keep.py\n")
    for name in ("a.c", "secret.c", "x.py", "keep.py", "build/b.c", "src/c.c", "src/gen/d.c"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "src" / ".gitignore").write_text("gen/\n")

    found = [Path(p).relative_to(tmp_path).as_posix() for p in discover([str(tmp_path)])]
    assert found == ["a.c", "keep.py", "src/c.c"]
    below = [Path(p).relative_to(tmp_path).as_posix() for p in discover([str(tmp_path / "src")])]
    assert below == ["src/c.c"]
    assert work_tree_root(tmp_path / "src" / "gen") == tmp_path


def test_a_worktree_reads_the_common_exclude_file(tmp_path: Path) -> None:
    common = tmp_path / "repo.git"
    (common / "info").mkdir(parents=True)
    (common / "info" / "exclude").write_text("*.c\n")
    (common / "worktrees" / "wt").mkdir(parents=True)
    (common / "worktrees" / "wt" / "commondir").write_text("../..\n")
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {common / 'worktrees' / 'wt'}\n")
    (tree / "k.c").write_text("")
    (tree / "k.py").write_text("")
    assert discover([str(tree)]) == [str(tree / "k.py")]


def test_an_unreadable_directory_is_an_error_not_a_smaller_scan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ok.c").write_text(DAXPY)
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "k.c").write_text(DAXPY)
    locked = str(tmp_path / "locked")

    def refuse(real):  # type: ignore[no-untyped-def]
        def call(path="."):  # type: ignore[no-untyped-def]
            if os.fspath(path) == locked:
                raise PermissionError(13, "Permission denied", locked)
            return real(path)

        return call

    monkeypatch.setattr(os, "scandir", refuse(os.scandir))
    monkeypatch.setattr(os, "listdir", refuse(os.listdir))
    code, out, err = run(capsys, "check", str(tmp_path), "--no-cache")
    assert code == 2
    assert f"{locked}:1:1: error: cannot read directory: Permission denied" in err
    assert "All checks passed" not in out
    code, out, err = run(capsys, "analyze", str(tmp_path), "--no-cache")
    assert code == 2
    assert "function daxpy" in out  # the readable file is still analyzed


@pytest.fixture
def injected_tree(tmp_path: Path) -> Path:
    for name in (FORGED, OSC, COMMAND_FIRST, PERCENT):
        (tmp_path / name).write_text(DAXPY)
    return tmp_path


def _no_forged_lines(text: str) -> None:
    for line in text.splitlines():
        assert not line.lstrip().startswith("::error"), line
        assert "\x1b" not in line and "\x07" not in line, line


@pytest.mark.parametrize("output_format", ["concise", "full"])
def test_names_cannot_forge_lines_in_text_formats(
    injected_tree: Path, capsys: pytest.CaptureFixture[str], output_format: str
) -> None:
    os.chdir(injected_tree)
    code, out, _ = run(
        capsys, "check", ".", "--device", "h100", "--no-cache", "--output-format", output_format
    )
    assert code == 0  # daxpy's AIS001 placement is a note
    _no_forged_lines(out)
    assert "a\\n::error file=pwn.c,line=1::INJECTED.c:6:5:" in out
    assert "e\\x1b]0;pwned\\x07.c:6:5:" in out
    assert "./::warning::x.c:6:5:" in out
    assert not any(line.startswith("::") for line in out.splitlines())


def test_names_are_escaped_in_github_commands(
    injected_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.chdir(injected_tree)
    _, out, _ = run(
        capsys, "check", ".", "--device", "h100", "--no-cache", "--output-format", "github"
    )
    lines = out.splitlines()
    assert len(lines) == 4 and all(line.startswith("::notice file=") for line in lines)
    assert "file=a%0A%3A%3Aerror file=pwn.c%2Cline=1%3A%3AINJECTED.c," in out
    assert "file=lit%250A.c," in out
    _no_forged_lines(out)


def test_sarif_uris_are_percent_encoded(
    injected_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.chdir(injected_tree)
    _, out, _ = run(
        capsys, "check", ".", "--device", "h100", "--no-cache", "--output-format", "sarif"
    )
    uris = sorted(
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for result in json.loads(out)["runs"][0]["results"]
    )
    assert uris == [
        "%3A%3Awarning%3A%3Ax.c",
        "a%0A%3A%3Aerror%20file%3Dpwn.c%2Cline%3D1%3A%3AINJECTED.c",
        "e%1B%5D0%3Bpwned%07.c",
        "lit%250A.c",
    ]


def test_analyze_text_and_plots_print_names_escaped(
    injected_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.chdir(injected_tree)
    code, out, _ = run(capsys, "analyze", ".", "--no-cache")
    assert code == 0
    _no_forged_lines(out)
    assert "a\\n::error file=pwn.c,line=1::INJECTED.c" in out.splitlines()
    for suffix in ("html", "svg"):
        output = injected_tree / f"roof.{suffix}"
        assert run(capsys, "roofline", ".", "--device", "h100", "-o", str(output))[0] == 0
        assert "\x1b" not in output.read_text()


def test_source_literals_do_not_reach_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = tmp_path / "k.py"
    kernel.write_text(
        "import numpy as np\n\ndef f(a, n: int):\n    s = 0.0\n    for i in range(n):\n"
        '        s += a[i] * np.einsum("\x1b]0;PWN\x07", a)\n    return s\n'
    )
    _, out, _ = run(capsys, "analyze", str(kernel), "--no-cache")
    assert 'einsum subscripts "\\x1b]0;PWN\\x07"' in out
    _, out, _ = run(capsys, "check", str(kernel), "--no-cache", "--output-format", "full")
    assert '6 |         s += a[i] * np.einsum("\\x1b]0;PWN\\x07", a)' in out
    _no_forged_lines(out)


def test_printable_escapes_controls_and_reordering_but_not_letters() -> None:
    assert printable("naïve ∑ tab\tok") == "naïve ∑ tab\tok"
    assert printable("a\r\nb\x7f\x9b\u202ec") == "a\\r\\nb\\x7f\\x9b\\u202ec"
    assert printable("a\nb", keep_line_breaks=True) == "a\nb"
    assert printable_path("::x.c") == "./::x.c"
    assert printable_path("src/::x.c") == "src/::x.c"
