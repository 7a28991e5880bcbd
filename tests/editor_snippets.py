"""The Neovim snippets of docs/editors.md, read from the docs: the docs are what is tested."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["neovim_snippets"]

DOCS = Path(__file__).resolve().parent.parent / "docs" / "editors.md"


def neovim_snippets() -> dict[tuple[int, int], str]:
    """The Lua block under each `### Neovim X.Y ...` heading, keyed by X.Y (its oldest version)."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## Neovim\n", 1)[1].split("\n## ", 1)[0]
    found = {}
    for part in section.split("\n### Neovim ")[1:]:
        match = re.match(r"(\d+)\.(\d+)", part)
        block = re.search(r"```lua\n(.*?)```", part, re.S)
        assert match is not None and block is not None, part[:60]
        found[(int(match.group(1)), int(match.group(2)))] = block.group(1)
    return found
