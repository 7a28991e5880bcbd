"""How Python's cyclic garbage collector runs in a batch run over many files.

An analysis allocates millions of short-lived objects. At the default threshold (700) the
collector rescans them about every millisecond, so a batch run collects far less often,
with mypy's setting. And once a file is done, its cycles are collected and what survives
(imported modules, sympy's and aiscan's memo caches) is frozen, so that no later
collection scans it again: over the 1,000-file benchmark tree that was a sixth of the CPU
time. A process that edits the same files for hours (the language server) keeps Python's
thresholds (its analysis children freeze only what they imported and warmed up,
`aiscan.lsp.warmup`), and so does any program that imports aiscan as a library.
"""

from __future__ import annotations

import gc

__all__ = ["retire_file_garbage", "tune_collector_for_batch"]

_retire_each_file = False


def tune_collector_for_batch() -> None:
    """For this process and the workers it forks: collect rarely, and per file."""
    global _retire_each_file
    gc.freeze()
    gc.set_threshold(200_000, 30, 30)
    _retire_each_file = True


def retire_file_garbage() -> None:
    """After a file: collect its garbage cycles and take the survivors out of later scans."""
    if _retire_each_file:
        gc.collect()
        gc.freeze()
