"""Where the shipped data (`rules/`) lives, in a source checkout and in an installed wheel.

The wheel carries the repository's `rules/` as `aiscan/_data/rules` (see pyproject.toml);
a source checkout reads the top-level `rules/` directly.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["rules_dir"]

_PACKAGE_DIR = Path(__file__).resolve().parent


def rules_dir() -> Path:
    """The directory holding device files and lint defaults."""
    installed = _PACKAGE_DIR / "_data" / "rules"
    if installed.is_dir():
        return installed
    return _PACKAGE_DIR.parent / "rules"
