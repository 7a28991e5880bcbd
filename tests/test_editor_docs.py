"""The Neovim snippets in docs/editors.md use only the API of the versions they are for.

Each snippet sits under a heading naming its oldest version, and every Neovim call it makes
must exist in that version (the table below, from Neovim's news). Only Neovim 0.11 is at hand
to run them (`test_nvim.py`), so this table is what holds the older limits."""

from __future__ import annotations

from editor_snippets import neovim_snippets

SINCE: dict[str, tuple[int, int]] = {
    "vim.lsp.config": (0, 11),
    "vim.lsp.enable": (0, 11),
    "vim.fs.root": (0, 10),
    "vim.lsp.start(": (0, 8),
    "vim.fs.find": (0, 8),
    "vim.fs.dirname": (0, 8),
    "vim.api.nvim_create_autocmd": (0, 7),
}


def test_a_snippet_for_each_version_range() -> None:
    assert sorted(neovim_snippets()) == [(0, 7), (0, 8), (0, 11)]


def test_each_snippet_calls_only_what_its_oldest_version_has() -> None:
    for oldest, lua in neovim_snippets().items():
        for call, since in SINCE.items():
            if call in lua:
                assert since <= oldest, f"{call} needs {since}, the snippet is for {oldest}"
    assert "lspconfig" in neovim_snippets()[(0, 7)]
