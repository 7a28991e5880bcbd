"""The pre-commit hook for real: `pre-commit` installs aiscan from this repository's HEAD.

Slow (pre-commit builds a virtual environment with aiscan and its dependencies, once for
both cases, from pip's cache when warm), but it runs everywhere the suite runs: a hook
definition that only looks right is worth little. Skipped only when this checkout is not
a git repository or `pre-commit` is not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLEAN = """\
void scale(int n, const double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++)
        y[i] = 3.0 * x[i];
}
"""
FINDING = """\
void divide(int n, double h, const double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++)
        y[i] = x[i] / h;
}
"""
STREAM = """\
void twice(int n, double *y)
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


def readme_hook_args() -> str:
    """The `args:` line of the README's pre-commit snippet, verbatim (`[--device, h100]`)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = readme.split("As a pre-commit hook:", 1)[1].split("```yaml\n", 1)[1]
    match = re.search(r"^ *args: (\[.*\])$", snippet.split("```", 1)[0], re.M)
    assert match is not None, "the README's hook snippet lost its args line"
    return match.group(1)


def _git(cwd: Path, *args: str) -> str:
    completed = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return completed.stdout.strip()


@pytest.fixture(scope="module")
def head() -> str:
    if shutil.which("pre-commit") is None:
        pytest.skip("pre-commit is not installed (pip install '.[test]')")
    try:
        sha = _git(ROOT, "rev-parse", "HEAD")
        tracked = _git(ROOT, "ls-tree", "--name-only", "HEAD", ".pre-commit-hooks.yaml")
    except (subprocess.CalledProcessError, OSError):
        pytest.skip("this checkout is not a git repository")
    if tracked != ".pre-commit-hooks.yaml":
        pytest.skip("HEAD has no .pre-commit-hooks.yaml yet (commit it first)")
    return sha


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One hook environment for both runs."""
    return tmp_path_factory.mktemp("pre-commit-home")


def _project(
    tmp_path: Path,
    head: str,
    kernel: str,
    args: str = "",
    files: dict[str, str] | None = None,
    verbose: bool = False,
) -> Path:
    project = tmp_path / "project"
    project.mkdir(parents=True)
    _git(project, "init", "-q")
    _git(project, "config", "user.email", "test@example.com")
    _git(project, "config", "user.name", "test")
    hook_args = f"        args: {args}\n" if args else ""
    hook_args += "        verbose: true\n" if verbose else ""  # show a passing hook's output
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {head}\n    hooks:\n      - id: aiscan\n" + hook_args
    )
    (project / "kernel.c").write_text(kernel)
    for name, text in (files or {}).items():
        (project / name).write_text(text)
    (project / "notes.txt").write_text("not a kernel: the hook must not read it\n")
    _git(project, "add", ".")
    return project


def _run(project: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        ["pre-commit", "run", "--all-files"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


def test_hook_passes_a_clean_kernel(tmp_path: Path, head: str, pre_commit_home: Path) -> None:
    completed = _run(_project(tmp_path, head, CLEAN), pre_commit_home)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "aiscan" in completed.stdout and "Passed" in completed.stdout


def test_hook_fails_on_a_finding(tmp_path: Path, head: str, pre_commit_home: Path) -> None:
    completed = _run(_project(tmp_path, head, FINDING), pre_commit_home)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "Failed" in completed.stdout
    assert (
        "kernel.c:4:9: AIS006 1 division per execution, executed n times; "
        "n of the nest's n FLOPs are divisions" in completed.stdout
    )


def test_readme_hook_passes_a_streaming_loop_and_np_sum(
    tmp_path: Path, head: str, pre_commit_home: Path
) -> None:
    """Being memory-bound is a property: the README's hook shows it as a note and passes."""
    args = readme_hook_args()
    assert args == "[--device, h100]"
    project = _project(tmp_path, head, STREAM, args, {"total.py": SUM}, verbose=True)
    completed = _run(project, pre_commit_home)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "Passed" in completed.stdout
    assert "kernel.c:3:5: AIS001 memory-bound at HBM3 on h100-sxm: AI 1/16" in completed.stdout
    assert "total.py:5:5: AIS001 memory-bound on h100-sxm at every size" in completed.stdout
    assert "Found 3 notes in 2 files (notes do not fail the run)." in completed.stdout


def test_readme_hook_still_fails_on_a_finding_and_on_fail_on(
    tmp_path: Path, head: str, pre_commit_home: Path
) -> None:
    args = readme_hook_args()
    completed = _run(_project(tmp_path / "a", head, FINDING, args), pre_commit_home)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "kernel.c:4:9: AIS006 1 division per execution" in completed.stdout
    fail_on = args[:-1] + ", --fail-on, AIS001]"
    completed = _run(_project(tmp_path / "b", head, STREAM, fail_on), pre_commit_home)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "Found 1 warning in 1 file." in completed.stdout
