"""Which files `aiscan check` reads: C and Python by extension, `.gitignore` respected.

Directories are walked; hidden directories are skipped; inside a git work tree the
paths git ignores are dropped (`git check-ignore`). Files named on the command line are
always checked, as compilers and ruff do.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from aiscan.errors import UsageError

__all__ = ["EXTENSIONS", "discover_files", "repository_root"]

EXTENSIONS = (".c", ".h", ".py")


def discover_files(paths: Sequence[str]) -> list[str]:
    """The files to check, in a stable order, each once."""
    found: list[str] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            candidates = sorted(_walk(path))
            found += _not_ignored(candidates, path)
        elif path.exists():
            found.append(given)
        else:
            raise UsageError(f"{given}: no such file or directory")
    return list(dict.fromkeys(found))


def repository_root(start: Path) -> Path | None:
    """The top of the git work tree holding `start`, or None outside one."""
    directory = start if start.is_dir() else start.parent
    try:
        completed = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=directory,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return None
    if completed.returncode != 0:
        return None
    return Path(completed.stdout.strip())


def _walk(directory: Path) -> Iterable[str]:
    for child in sorted(directory.iterdir()):
        if child.name.startswith("."):
            continue
        if child.is_dir():
            yield from _walk(child)
        elif child.suffix.lower() in EXTENSIONS and child.is_file():
            yield str(child)


def _not_ignored(candidates: list[str], directory: Path) -> list[str]:
    if not candidates or repository_root(directory) is None:
        return candidates
    try:
        completed = subprocess.run(
            ["git", "check-ignore", "--stdin"],
            cwd=directory,
            input="\n".join(str(Path(c).resolve()) for c in candidates),
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return candidates
    if completed.returncode not in (0, 1):  # 1: nothing ignored
        return candidates
    ignored = {line.strip() for line in completed.stdout.splitlines() if line.strip()}
    return [c for c in candidates if str(Path(c).resolve()) not in ignored]
