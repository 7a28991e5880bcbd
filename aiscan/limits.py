"""What one file may cost aiscan: bytes read, memory. Kept apart, importing nothing, so that
the command line can show the defaults without importing the scan."""

from __future__ import annotations

__all__ = ["DEFAULT_MEMORY_LIMIT_MIB", "MAX_SOURCE_BYTES"]

MAX_SOURCE_BYTES = 10 * 1024 * 1024
"""The most a source, a header, stdin or a data file may hold."""

DEFAULT_MEMORY_LIMIT_MIB = 2048
"""A worker's address space (`--memory-limit`): the analysis of a real kernel stays under a
tenth of it, and libcst's parse of a 1 MB Python list literal (2.5 GB) does not."""
