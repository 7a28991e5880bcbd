"""Small English helpers the text outputs share, so that no output says `1 devices`."""

from __future__ import annotations

__all__ = ["counted"]


def counted(number: int, noun: str) -> str:
    """`1 device`, `3 devices`: a count with its noun in the right number."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
