"""A content-hash result cache, like ruff's: an unchanged file is not analyzed twice.

The key hashes the aiscan version and its own code files' state, the kind of result, the
options (device data and lint settings included), where the file is (the path as given,
the working directory, the resolved path: a result names its file, and per-file settings
match it), and the digest of the bytes the analysis read (looked up by the file's bytes
now). An entry also records the files the result depended on (included headers) with
the hashes of the bytes the analysis read, and the header candidates it found absent; a
changed dependency, or one that appeared, makes the entry a miss. Entries are JSON files
written atomically, so concurrent workers never read half an entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from aiscan import __version__
from aiscan.sources import FileRefused, content_digest, read_regular_file

__all__ = ["ResultCache", "fingerprint", "holder_of"]


def fingerprint(value: Any) -> str:
    """A stable hash of JSON-able options (sorted keys)."""
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def holder_of(directory: Path, places: Iterable[tuple[str, Path]]) -> tuple[str, Path] | None:
    """The first of the named `places` that `directory` is or lies above: a cache there
    would write its entries, and a `.gitignore` of `*`, among the user's files (a `*`
    .gitignore in the project hides it from git and from the next scan's discovery)."""
    target = directory.resolve()
    for name, place in places:
        if place.resolve().is_relative_to(target):
            return name, place
    return None


@lru_cache(maxsize=1)
def code_identity() -> str:
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


def _well_formed(entry: Any) -> bool:
    """Is `entry` what `put` writes? The payload's own shape is its task's to judge."""
    if not isinstance(entry, dict) or not isinstance(entry.get("payload"), dict):
        return False
    dependencies = entry.get("dependencies")
    return isinstance(dependencies, dict) and all(
        isinstance(digest, str | None) for digest in dependencies.values()
    )


def _file_hash(path: str) -> str | None:
    """None for a file that cannot be read, or that the analysis would refuse (a device,
    a FIFO, over the size limit): hashing must not read `/dev/zero` forever either."""
    try:
        return content_digest(read_regular_file(path))
    except (OSError, FileRefused):
        return None


class ResultCache:
    """Results by (kind, options, place, content) in `directory`; a no-op when `directory`
    is None."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory / __version__ if directory is not None else None
        self._ignore_written = False
        self._real_directories: dict[str, str] = {}

    def lookup_key(self, kind: str, options_fingerprint: str, path: str) -> str | None:
        """The key of the file as it is now: what a scan looks up before analyzing it."""
        if self.directory is None:
            return None
        return self.key(kind, options_fingerprint, path, _file_hash(path))

    def key(
        self, kind: str, options_fingerprint: str, path: str, content: str | None
    ) -> str | None:
        """The key of a result of the bytes whose `content_digest` is `content`: a result
        is stored under the digest of the text it analyzed, never of the file's text at
        another moment."""
        if self.directory is None or content is None:
            return None
        parts = [code_identity(), kind, options_fingerprint, *self._place(path), content]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def shared_key(self, kind: str, text: str) -> str | None:
        """The key of a result that depends on `text` alone, whichever file it came from
        (isl's counts of a nest, `analysis.count_memo`); None without a directory."""
        if self.directory is None:
            return None
        return hashlib.sha256("\0".join([code_identity(), kind, text]).encode()).hexdigest()

    def _place(self, path: str) -> tuple[str, str, str]:
        """Where the file is, as far as its result can tell: the path as given (reports
        print it), the working directory (relative `-I` directories and header names start
        there) and the path with links resolved (per-file settings match it). Directories
        are resolved once a run: a scan's files share a few."""
        directory, name = os.path.split(path)
        if os.path.islink(path) or name in ("", os.curdir, os.pardir):
            return path, os.getcwd(), os.path.realpath(path)
        real = self._real_directories.get(directory)
        if real is None:
            real = self._real_directories[directory] = os.path.realpath(directory or os.curdir)
        return path, os.getcwd(), os.path.join(real, name)

    def get(self, key: str | None) -> dict[str, Any] | None:
        """The payload stored under `key`, unless the entry is malformed or a dependency
        changed (or appeared)."""
        if key is None or self.directory is None:
            return None
        entry_path = self.directory / key[:2] / f"{key}.json"
        try:
            entry = json.loads(entry_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not _well_formed(entry):
            return None  # a bad entry is a miss, whoever wrote it
        dependencies: Mapping[str, str | None] = entry["dependencies"]
        if any(_file_hash(path) != digest for path, digest in dependencies.items()):
            return None
        payload: dict[str, Any] = entry["payload"]
        return payload

    def put(
        self,
        key: str | None,
        payload: Mapping[str, Any],
        dependencies: Iterable[tuple[str, str | None]] = (),
    ) -> None:
        """Store `payload`; `dependencies` are (path, digest) pairs from the analysis: the
        digest of the bytes it read, or None for a file it looked for and did not find."""
        if key is None or self.directory is None:
            return
        hashes = dict(dependencies)
        folder = self.directory / key[:2]
        try:
            self._ignore_in_git(self.directory.parent)
            folder.mkdir(parents=True, exist_ok=True)
            import tempfile  # here: with --no-cache, or only reads, no run needs it

            handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump({"dependencies": hashes, "payload": payload}, stream)
            os.replace(temporary, folder / f"{key}.json")
        except OSError:
            return  # a cache that cannot be written is only slower, never wrong

    def _ignore_in_git(self, root: Path) -> None:
        """Give a cache directory that aiscan creates (or finds empty) a `.gitignore` of
        `*`; never write one among files that are not aiscan's, which it would hide."""
        if self._ignore_written:
            return
        self._ignore_written = True
        if root.exists() and any(root.iterdir()):
            return
        root.mkdir(parents=True, exist_ok=True)
        (root / ".gitignore").write_text("# Created by aiscan: its result cache.\n*\n")
