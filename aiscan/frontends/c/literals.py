"""The value of a C integer literal, as C reads it (Python's `int(text, 0)` does not).

C writes octal with a bare leading zero (`010` is 8), allows `0b` binary as an extension
(standard in C23), and appends any mix of `u`/`U`/`l`/`L` suffixes. No C integer type
holds 2**64 or more, so such a literal is no valid one (compilers reject it too): the
analysis never computes with, or prints, numbers of unbounded size.
"""

from __future__ import annotations

import re

from aiscan.ir.symbols import MAX_INTEGER

__all__ = ["integer_literal"]

_LITERAL = re.compile(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)[uUlL]*")


def integer_literal(text: str) -> int | None:
    """The literal's value; None for text that is no valid C integer literal (`08`, or a
    value of 2**64 or more)."""
    match = _LITERAL.fullmatch(text.strip())
    if match is None:
        return None
    digits = match.group(1)
    if digits[:2] in ("0x", "0X"):
        value = int(digits[2:], 16)
    elif digits[:2] in ("0b", "0B"):
        value = int(digits[2:], 2)
    elif digits.startswith("0"):
        value = int(digits, 8)
    elif len(digits) > 20:  # 2**64 has 20 digits; Python refuses to read thousands
        return None
    else:
        value = int(digits)
    return value if value < MAX_INTEGER else None
