"""Compiled dataclass methods kept between runs, as Python keeps compiled modules.

`@dataclass` writes each class's `__init__`, `__eq__`, `__hash__`, `__repr__` (and, frozen,
`__setattr__` and `__delattr__`) as source text and compiles it with `exec` every time the
class is defined, in every process. A one-kernel run defines about 110 such classes (libcst's
nodes, for Python, several hundred more), and compiling their ~600 methods was 40% of the
instructions of a whole `aiscan analyze` of naive dgemm placed on a CPU: more than parsing,
analysis and report together. The text is the same in every run, so its code object is too.

`install` gives the `dataclasses` module an `exec` that looks the text up in a table of code
objects before compiling it: one table for each top-level package that defines dataclasses
(a C kernel's run never reads libcst's), read when that package first defines one, from a
file beside this package's own byte-code (`__pycache__`, or `sys.pycache_prefix`), as
trusted as the `.pyc` files there and never from the tree being analyzed. A table is written
back at exit when the run compiled text it did not hold. Running the looked-up code object
is what `exec` of its text does; anything unexpected (no such file, another Python's table,
a damaged file, a read-only install, `PYTHONDONTWRITEBYTECODE`) falls back to compiling,
as without the table.
"""

from __future__ import annotations

import atexit
import builtins
import importlib.util
import marshal
import os
import sys
from contextlib import suppress
from pathlib import Path
from types import CodeType
from typing import Any

__all__ = ["install", "save"]

# Entries a table keeps at most (aiscan's own dataclasses make about 700 methods); past this,
# a write keeps only what the writing run used.
_LIMIT = 10_000
_FORMAT = 1


class _Table:
    """One package's code objects by their source text, read from `path` when first asked."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.codes: dict[str, CodeType] = _read(path) if path is not None else {}
        self.used: dict[str, CodeType] = {}
        self.new: dict[str, CodeType] = {}

    def code(self, source: str) -> CodeType:
        code = self.codes.get(source)
        if code is None:
            # Not inheriting this module's `from __future__ import annotations`: the
            # generated methods' annotations must be evaluated, as `exec` of the text does.
            code = compile(source, "<string>", "exec", dont_inherit=True)
            self.codes[source] = self.new[source] = code
        self.used[source] = code
        return code

    def save(self) -> None:
        """Add what this process compiled to the stored table, if anything. Other runs may
        be reading or writing it: the stored entries are read again and kept, and the file
        is replaced whole."""
        if not self.new or self.path is None or sys.dont_write_bytecode:
            return
        table = _read(self.path) | self.new
        if len(table) > _LIMIT:
            table = self.used | self.new
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_bytes(marshal.dumps((_FORMAT, sys.version, table)))
            os.replace(temporary, self.path)
        except (OSError, ValueError):  # a read-only install; an object marshal refuses
            with suppress(OSError):
                temporary.unlink(missing_ok=True)
            return
        self.new = {}


class _CompiledTexts:
    """`exec` for the `dataclasses` module: a text's code object from its package's table."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.tables: dict[str, _Table] = {}

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        if isinstance(source, str):
            source = self.table(_package(globals)).code(source)
        builtins.exec(source, globals, locals)

    def table(self, package: str) -> _Table:
        table = self.tables.get(package)
        if table is None:
            name = f"dataclass-methods.{package}.{sys.implementation.cache_tag}.marshal"
            table = _Table(self.folder / name if self.folder is not None else None)
            self.tables[package] = table
        return table

    def save(self) -> None:
        for table in self.tables.values():
            table.save()


def _package(namespace: Any) -> str:
    """The top-level package of the module whose globals `dataclasses` passes (its class's
    module); `_` for a class of no importable module."""
    name = namespace.get("__name__") if isinstance(namespace, dict) else None
    top = name.partition(".")[0] if isinstance(name, str) else ""
    return top if top.isidentifier() else "_"


def _read(path: Path) -> dict[str, CodeType]:
    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not (isinstance(data, tuple) and len(data) == 3 and data[:2] == (_FORMAT, sys.version)):
        return {}
    table = data[2]
    if not isinstance(table, dict):
        return {}
    return {t: c for t, c in table.items() if isinstance(t, str) and isinstance(c, CodeType)}


def tables_folder() -> Path | None:
    """Where this Python keeps the tables: beside the byte-code of this module."""
    if sys.implementation.cache_tag is None:
        return None  # this Python keeps no byte-code
    return Path(importlib.util.cache_from_source(__file__)).parent


_installed: _CompiledTexts | None = None


def install(folder: Path | None = None) -> _CompiledTexts:
    """Route `dataclasses`' compiling through the tables (once a process)."""
    global _installed
    if _installed is None:
        import dataclasses

        _installed = _CompiledTexts(folder if folder is not None else tables_folder())
        dataclasses.exec = _installed.exec  # type: ignore[attr-defined]
        atexit.register(_installed.save)
    return _installed


def save() -> None:
    """Store what this process compiled; for a forked worker, which leaves by `os._exit`
    and so runs no `atexit` function."""
    if _installed is not None:
        _installed.save()
