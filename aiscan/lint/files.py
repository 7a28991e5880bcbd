"""Where a lint run's paths are relative to: the git work tree's top, when there is one.

(Which files are read is `aiscan.discovery`'s job, shared with `analyze`.)
"""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["repository_root"]


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
