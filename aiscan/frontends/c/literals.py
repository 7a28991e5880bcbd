"""The value of a C integer literal, as C reads it (Python's `int(text, 0)` does not).

C writes octal with a bare leading zero (`010` is 8), allows `0b` binary as an extension
(standard in C23), and appends any mix of `u`/`U`/`l`/`L` suffixes.
"""

from __future__ import annotations

import re

__all__ = ["integer_literal"]

_LITERAL = re.compile(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[uUlL]*")


def integer_literal(text: str) -> int | None:
    """The literal's value; None for text that is no valid C integer literal (`08`)."""
    match = _LITERAL.fullmatch(text.strip())
    if match is None:
        return None
    digits = match.group(1)
    if digits[:2] in ("0x", "0X"):
        return int(digits[2:], 16)
    if digits[:2] in ("0b", "0B"):
        return int(digits[2:], 2)
    if digits.startswith("0"):
        return int(digits, 8)
    return int(digits)
