"""The data caches of the machine aiscan runs on, read from Linux sysfs.

`aiscan calibrate` writes them into its device file, so the `cache` model (layer conditions)
works on a calibrated machine as it does on a shipped one. Only data and unified caches
count; the figures are what the kernel reports (`/sys/devices/system/cpu/cpu0/cache/index*`),
nothing is guessed where a file is missing or unreadable.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["SYSFS_CACHES", "HostCache", "read_host_caches"]

SYSFS_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")


@dataclass(frozen=True, slots=True)
class HostCache:
    """One cache as one CPU sees it: `capacity_bytes` is one instance, shared by `cpus`."""

    level: int
    capacity_bytes: int
    line_bytes: int
    associativity: int | None
    cpus: int
    path: str


def read_host_caches(root: Path = SYSFS_CACHES) -> tuple[HostCache, ...]:
    """The data and unified caches under `root`, innermost first; () where sysfs has none."""
    found = []
    for index in sorted(root.glob("index*")):
        kind = _read(index / "type")
        level = _integer(_read(index / "level"))
        size = _size_bytes(_read(index / "size"))
        line = _integer(_read(index / "coherency_line_size"))
        if kind not in ("Data", "Unified") or level is None or size is None or not line:
            continue
        found.append(
            HostCache(
                level,
                size,
                line,
                _integer(_read(index / "ways_of_associativity")) or None,
                _cpu_count(_read(index / "shared_cpu_list")),
                str(index),
            )
        )
    return tuple(sorted(found, key=lambda cache: cache.level))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _integer(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def _size_bytes(text: str) -> int | None:
    """`32K`, `1024K`, `32M` or a plain byte count (sysfs uses binary units)."""
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    number = _integer(text[:-1]) if text[-1:] in units else _integer(text)
    if number is None:
        return None
    return number * units.get(text[-1:], 1)


def _cpu_count(text: str) -> int:
    """CPUs in a list like `0-3,8-11`; 1 where the list is missing or malformed."""
    count = 0
    for part in filter(None, text.split(",")):
        low, _, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            return 1
        count += int(high) - int(low) + 1 if high else 1
    return max(count, 1)
