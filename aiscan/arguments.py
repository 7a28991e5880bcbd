"""Command-line values aiscan cannot use, refused before any work starts.

argparse checks a value's type only: `--timeout nan` is a float and `--size n=²` passes
`str.isdigit`, and both used to end in an internal error. Each check here raises a
one-line `UsageError` naming the option instead.
"""

from __future__ import annotations

import argparse
import math
import re

from aiscan.errors import UsageError
from aiscan.given_shapes import parse_shape

__all__ = ["MAX_SIZE", "MAX_TIMEOUT_S", "check_arguments", "parse_size"]

MAX_SIZE = 2**64
"""Sizes are below 2**64, as for sizes read from source (larger ones are unknown there)."""
MAX_TIMEOUT_S = 1e6
"""About eleven days: any larger per-file limit is no limit (`--timeout 0`)."""
_INTEGER = re.compile(r"[+-]?[0-9]+")


def check_arguments(arguments: argparse.Namespace) -> None:
    """Refuse option values that parse but cannot be used; a `UsageError` if one is."""
    timeout = getattr(arguments, "timeout", None)
    if timeout is not None and not (math.isfinite(timeout) and 0 <= timeout <= MAX_TIMEOUT_S):
        raise UsageError(
            f"--timeout {timeout:g}: expected seconds from 0 (no limit) to {MAX_TIMEOUT_S:g}"
        )
    weight = getattr(arguments, "special_weight", None)
    if weight is not None and weight < 0:
        raise UsageError(f"--special-weight {weight}: expected 0 or more FLOPs per call")
    for group in getattr(arguments, "sizes", None) or ():
        for item in filter(None, (part.strip() for part in group.split(","))):
            parse_size(item)
    for text in getattr(arguments, "shapes", None) or ():
        parse_shape(text)


def parse_size(item: str) -> tuple[str, int]:
    """`NAME=VALUE` from `--size`, as a name and a positive integer below `MAX_SIZE`."""
    name, _, value = item.partition("=")
    name, value = name.strip(), value.strip()
    if not name.isidentifier() or not _INTEGER.fullmatch(value):
        raise UsageError(f"--size {_shown(item)}: expected NAME=INTEGER")
    digits = value.lstrip("+-").lstrip("0")
    if value.startswith("-") or not digits:
        raise UsageError(f"--size {_shown(item)}: sizes are positive")
    if len(digits) > len(str(MAX_SIZE)) or int(digits) >= MAX_SIZE:
        raise UsageError(f"--size {_shown(item)}: sizes are below 2**64")
    return name, int(digits)


def _shown(item: str) -> str:
    return item if len(item) <= 40 else f"{item[:30]}... ({len(item)} characters)"
