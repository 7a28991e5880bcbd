"""Reading CUDA source text by its brackets: comments and literals masked, matching
brackets found, spans of text blanked without moving the lines and columns after them."""

from __future__ import annotations

import re

__all__ = ["blanked", "masked", "matching", "split_top_level"]

_COMMENT_OR_LITERAL = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.DOTALL
)
_CLOSING = {"(": ")", "[": "]", "{": "}", "<": ">"}


def masked(text: str) -> str:
    """`text` with comments and string or character literals replaced by spaces (newlines
    kept), so that brackets and keywords are found only in code; preprocessor lines keep
    their literals (`#include "k.cuh"`)."""

    def blank(match: re.Match[str]) -> str:
        start = text.rfind("\n", 0, match.start()) + 1
        if text[start : match.start()].lstrip().startswith("#") and match.group()[0] in "\"'":
            return match.group()
        return blanked(match.group())

    return _COMMENT_OR_LITERAL.sub(blank, text)


def blanked(text: str) -> str:
    """Spaces in place of `text`, its newlines kept: what follows stays where it was."""
    return "".join(c if c == "\n" else " " for c in text)


def matching(code: str, opening: int) -> int | None:
    """The position of the bracket closing the one at `opening`, or None if unclosed."""
    open_char = code[opening]
    close_char = _CLOSING[open_char]
    depth = 0
    for position in range(opening, len(code)):
        char = code[position]
        if char == open_char:
            depth += 1
        elif char == close_char:
            depth -= 1
            if depth == 0:
                return position
    return None


def split_top_level(code: str, separator: str = ",") -> list[tuple[int, str]]:
    """`code` split at the separators outside any bracket, each part with its offset."""
    parts: list[tuple[int, str]] = []
    depth, start = 0, 0
    for position, char in enumerate(code):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append((start, code[start:position]))
            start = position + 1
    parts.append((start, code[start:]))
    return parts
