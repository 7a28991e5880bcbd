"""Which files a scan reads: the paths given, and in directories every C and Python source.

Directories are walked without following symbolic links (so link loops cannot trap a scan),
in sorted order (so output order never depends on the file system), skipping what git
ignores when the directory is in a git work tree.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from aiscan.sources import LANGUAGES

__all__ = ["discover"]

_SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".aiscan_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".tox",
        ".venv",
        "venv",
        "node_modules",
    }
)


def discover(paths: Sequence[str]) -> list[str]:
    """Files named on the command line (always kept, whatever their name) and the sources
    found under directories, in a stable order without duplicates."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found += _not_ignored(path, sorted(_walk(path)))
        else:
            found.append(path)
    return list(dict.fromkeys(found))


def _walk(root: str) -> Iterable[str]:
    for directory, subdirectories, files in os.walk(root, followlinks=False):
        subdirectories[:] = sorted(
            d for d in subdirectories if d not in _SKIPPED_DIRECTORIES and not d.startswith(".")
        )
        for name in sorted(files):
            path = os.path.normpath(os.path.join(directory, name))
            if Path(name).suffix.lower() in LANGUAGES and not os.path.islink(path):
                yield path


def _not_ignored(root: str, files: list[str]) -> list[str]:
    """Drop what `.gitignore` excludes, asking the git work tree of `root` (its rules are
    subtle); outside a work tree nothing is dropped."""
    if not files:
        return files
    absolute = {os.path.abspath(f): f for f in files}
    try:
        result = subprocess.run(
            ["git", "-C", os.path.abspath(root), "check-ignore", "--stdin", "-z"],
            input="\0".join(absolute) + "\0",
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return files
    if result.returncode not in (0, 1):  # 128: not a git work tree
        return files
    ignored = {
        os.path.abspath(os.path.join(root, p)) if not os.path.isabs(p) else p
        for p in filter(None, result.stdout.split("\0"))
    }
    return [original for path, original in absolute.items() if path not in ignored]
