"""OpenMP directives that decide how many threads run a loop nest.

`#pragma omp parallel for` (and `omp for` inside a parallel region) shares a loop's
iterations among threads; `#pragma omp parallel` runs the statement after it on every
thread; `num_threads(N)` and a preceding `omp_set_num_threads(N)` set how many. Other
directives (`omp simd`, `omp target ...`) leave the thread count alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["OpenMPDirective", "read_directive"]

_NUM_THREADS: Final = re.compile(r"\bnum_threads\s*\(\s*(\d+)\s*\)")


@dataclass(frozen=True, slots=True)
class OpenMPDirective:
    """A directive that runs code on several threads: on the next loop (`shares_loop`) or
    on the whole next statement (a parallel region)."""

    text: str
    shares_loop: bool
    threads: int | None


def read_directive(pragma: str) -> OpenMPDirective | None:
    """The threading meaning of a `#pragma` line's text (after `#pragma`), or None."""
    words = pragma.split()
    if len(words) < 2 or words[0] != "omp" or words[1] not in ("parallel", "for"):
        return None
    construct = [w for w in words[1:] if re.fullmatch(r"[a-z]+", w)]
    found = _NUM_THREADS.search(pragma)
    threads = int(found.group(1)) if found and int(found.group(1)) > 0 else None
    shares_loop = "for" in construct or "loop" in construct
    if words[1] == "parallel" and any(w in construct for w in ("sections", "master", "single")):
        return None
    return OpenMPDirective(f"#pragma {' '.join(pragma.split())}", shares_loop, threads)
