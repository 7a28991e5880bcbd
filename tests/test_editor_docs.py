"""The Neovim snippets in docs/editors.md use only the API of the versions they are for.

No Neovim runs here: each snippet sits under a heading naming its oldest version, and every
Neovim call it makes must exist in that version (the table below, from Neovim's news)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SINCE: dict[str, tuple[int, int]] = {
    "vim.lsp.config": (0, 11),
    "vim.lsp.enable": (0, 11),
    "vim.fs.root": (0, 10),
    "vim.lsp.start(": (0, 8),
    "vim.fs.find": (0, 8),
    "vim.fs.dirname": (0, 8),
    "vim.api.nvim_create_autocmd": (0, 7),
}


def _snippets() -> dict[tuple[int, int], str]:
    """The Lua block under each `### Neovim X.Y ...` heading, keyed by X.Y."""
    text = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    section = text.split("## Neovim\n", 1)[1].split("\n## ", 1)[0]
    found = {}
    for part in section.split("\n### Neovim ")[1:]:
        match = re.match(r"(\d+)\.(\d+)", part)
        block = re.search(r"```lua\n(.*?)```", part, re.S)
        assert match is not None and block is not None, part[:60]
        found[(int(match.group(1)), int(match.group(2)))] = block.group(1)
    return found


def test_a_snippet_for_each_version_range() -> None:
    assert sorted(_snippets()) == [(0, 7), (0, 8), (0, 11)]


def test_each_snippet_calls_only_what_its_oldest_version_has() -> None:
    for oldest, lua in _snippets().items():
        for call, since in SINCE.items():
            if call in lua:
                assert since <= oldest, f"{call} needs {since}, the snippet is for {oldest}"
    assert "lspconfig" in _snippets()[(0, 7)]
