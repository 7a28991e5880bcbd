"""Mutations of source text for robustness testing (the fuzz tests and `scripts/fuzz.py`).

Kept in the package so the test suite and the long-running fuzz script mutate inputs the
same way; nothing in aiscan's analysis path imports it.
"""

from __future__ import annotations

import random

__all__ = ["mutate"]

_TOKENS = (
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "for",
    "while",
    "if",
    "else",
    "#include",
    "#define",
    "*",
    "/*",
    "*/",
    "//",
    "\\\n",
    '"',
    "'",
    "0x",
    "1e999",
    "99999999999999999999",
    "double",
    "int",
    "__bf16",
    "np.",
    "range(",
    "def ",
    ":",
    "\t",
    "\n",
    "@",
    "lambda",
    "\x00",
    "\ufeff",
    "é",
    "\r",
)


def mutate(text: str, rng: random.Random, rounds: int = 3) -> str:
    """`text` with a few random edits: deletions, duplications, token insertions, cuts."""
    for _ in range(rounds):
        if not text:
            text = rng.choice(_TOKENS)
            continue
        start = rng.randrange(len(text))
        end = min(len(text), start + rng.randint(0, 40))
        action = rng.randrange(6)
        if action == 0:
            text = text[:start] + text[end:]
        elif action == 1:
            text = text[:end] + text[start:end] + text[end:]
        elif action == 2:
            text = text[:start] + rng.choice(_TOKENS) + text[start:]
        elif action == 3:
            text = text[:start]
        elif action == 4:
            text = text[:start] + "(" * rng.randint(1, 400) + text[start:]
        else:
            text = text[:start] + rng.choice(_TOKENS) * rng.randint(1, 50) + text[end:]
    return text
