"""A content-hash result cache, like ruff's: an unchanged file is not analyzed twice.

The key hashes the aiscan version and its own code files' state, the kind of result, the
options (device data included), and the file's bytes. An entry also records the files the
result depended on (included headers) with their hashes; a changed dependency makes the
entry a miss. Entries are JSON files written atomically, so concurrent workers never read
half an entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from aiscan import __version__
from aiscan.sources import FileRefused, read_regular_file

__all__ = ["ResultCache", "fingerprint"]


def fingerprint(value: Any) -> str:
    """A stable hash of JSON-able options (sorted keys)."""
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@lru_cache(maxsize=1)
def _code_identity() -> str:
    """The aiscan version and the state of its own files (size and modification time of
    every module and data file), so that a changed aiscan never serves old results, even
    from a source checkout whose version number did not move."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".json", ".toml", ".h") and path.is_file():
            stat = path.stat()
            digest.update(
                f"{path.relative_to(package)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode()
            )
    return digest.hexdigest()


def _file_hash(path: str) -> str | None:
    """None for a file that cannot be read, or that the analysis would refuse (a device,
    a FIFO, over the size limit): hashing must not read `/dev/zero` forever either."""
    try:
        return hashlib.sha256(read_regular_file(path)).hexdigest()
    except (OSError, FileRefused):
        return None


class ResultCache:
    """Results by (kind, options, content) in `directory`; a no-op when `directory` is None."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory / __version__ if directory is not None else None

    def key(self, kind: str, options_fingerprint: str, path: str) -> str | None:
        if self.directory is None:
            return None
        content = _file_hash(path)
        if content is None:
            return None
        parts = f"{_code_identity()}\0{kind}\0{options_fingerprint}\0{content}"
        return hashlib.sha256(parts.encode()).hexdigest()

    def get(self, key: str | None) -> dict[str, Any] | None:
        if key is None or self.directory is None:
            return None
        entry_path = self.directory / key[:2] / f"{key}.json"
        try:
            entry = json.loads(entry_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        dependencies: Mapping[str, str] = entry.get("dependencies", {})
        if any(_file_hash(path) != digest for path, digest in dependencies.items()):
            return None
        payload = entry.get("payload")
        return payload if isinstance(payload, dict) else None

    def put(
        self, key: str | None, payload: Mapping[str, Any], dependencies: Sequence[str] = ()
    ) -> None:
        if key is None or self.directory is None:
            return
        hashes = {path: _file_hash(path) for path in dependencies}
        if any(digest is None for digest in hashes.values()):
            return
        folder = self.directory / key[:2]
        try:
            folder.mkdir(parents=True, exist_ok=True)
            gitignore = self.directory.parent / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# Created by aiscan: its result cache.\n*\n")
            handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump({"dependencies": hashes, "payload": payload}, stream)
            os.replace(temporary, folder / f"{key}.json")
        except OSError:
            return  # a cache that cannot be written is only slower, never wrong
