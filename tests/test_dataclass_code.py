"""Dataclass methods compiled once and kept (issue 33: compiling them was 40% of a one-kernel
run). A class built from the kept code must be the class `@dataclass` builds, and the kept
table must never be what breaks a run."""

from __future__ import annotations

import dataclasses
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from aiscan import dataclass_code

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _byte_code_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in an installed package's run (CI may set PYTHONDONTWRITEBYTECODE)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def _define(table: dataclass_code._CompiledTexts) -> type:
    """A frozen dataclass with a default and a factory, built through `table`."""
    original = dataclasses.exec  # type: ignore[attr-defined]
    dataclasses.exec = table.exec  # type: ignore[attr-defined]
    try:

        @dataclasses.dataclass(frozen=True)
        class Point:
            x: int
            y: float = 0.5
            tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)

    finally:
        dataclasses.exec = original  # type: ignore[attr-defined]
    return Point


def test_a_class_built_from_kept_code_is_the_class_dataclass_builds(tmp_path: Path) -> None:
    first = dataclass_code._CompiledTexts(tmp_path)
    _define(first)
    # __init__, __repr__, __eq__, __hash__, __setattr__, __delattr__, in the table of
    # this module's top-level package (as pytest imported it), not in aiscan's
    package = __name__.partition(".")[0]
    assert set(first.tables) == {package}
    assert len(first.tables[package].new) >= 6
    first.save()
    assert [p.name for p in tmp_path.iterdir()] == [
        f"dataclass-methods.{package}.{sys.implementation.cache_tag}.marshal"
    ]

    second = dataclass_code._CompiledTexts(tmp_path)
    point = _define(second)
    assert second.tables[package].new == {}  # nothing compiled: all came from the table
    assert point(1) == point(1, 0.5, ()) and point(1) != point(2)
    assert hash(point(1, 2.0)) == hash(point(1, 2.0))
    assert repr(point(3, 1.5, ("a",))).endswith("Point(x=3, y=1.5, tags=('a',))")
    with pytest.raises(dataclasses.FrozenInstanceError):
        point(1).x = 2  # type: ignore[misc]
    # The annotations `@dataclass` gives: the fields' types (strings in this module) and
    # None, not the names of its locals (`_type_x`), which compiling with this module's
    # `from __future__ import annotations` in effect would have written.
    assert vars(point)["__init__"].__annotations__ == {
        "x": "int",
        "y": "float",
        "tags": "tuple[str, ...]",
        "return": None,
    }


def test_a_save_keeps_what_another_run_stored(tmp_path: Path) -> None:
    path = tmp_path / "methods.marshal"
    one = dataclass_code._Table(path)
    one.code("def a(): return 1\n")
    other = dataclass_code._Table(path)  # read before `one` saved: empty
    other.code("def b(): return 2\n")
    one.save()
    other.save()
    assert set(dataclass_code._Table(path).codes) == {
        "def a(): return 1\n",
        "def b(): return 2\n",
    }


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\x00\x01 not marshal",
        marshal.dumps((1, "another Python", {"def a(): pass\n": compile("0", "<s>", "exec")})),
        marshal.dumps((1, sys.version, ["a list, not a table"])),
    ],
)
def test_a_damaged_or_foreign_table_is_ignored(tmp_path: Path, content: bytes) -> None:
    compiled = dataclass_code._CompiledTexts(tmp_path)
    compiled.table("_").path.write_bytes(content)  # type: ignore[union-attr]
    compiled.tables.clear()
    namespace: dict[str, object] = {}
    compiled.exec("def f():\n    return 41 + 1\n", {}, namespace)
    assert compiled.tables["_"].codes.keys() == {"def f():\n    return 41 + 1\n"}
    assert namespace["f"]() == 42  # type: ignore[operator]


def test_nothing_is_written_where_byte_code_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "methods.marshal"
    table = dataclass_code._Table(path)
    table.code("x = 1\n")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    table.save()
    assert not path.exists()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    table.save()
    assert path.exists()
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    read_only.chmod(0o500)
    blocked = dataclass_code._Table(read_only / "methods.marshal")
    blocked.code("x = 1\n")
    blocked.save()  # no error: the next run compiles again
    if os.geteuid() != 0:  # root writes anywhere
        assert list(read_only.iterdir()) == []


def test_a_second_run_compiles_no_dataclass_method(tmp_path: Path) -> None:
    """End to end, in fresh processes with their own byte-code folder: the first run
    stores the methods of every dataclass the C path defines, the second compiles none."""
    probe = (
        "import aiscan.cli, aiscan.pipeline, aiscan.report.text_report, aiscan.roofline.kernels\n"
        "from aiscan import dataclass_code\n"
        "table = dataclass_code._installed.tables['aiscan']\n"
        "print(len(table.used), len(table.new), sorted(dataclass_code._installed.tables))\n"
    )
    environment = {**os.environ, "PYTHONPYCACHEPREFIX": str(tmp_path)}
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    runs = [
        subprocess.run(
            [sys.executable, "-c", probe],
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split(maxsplit=2)
        for _ in range(2)
    ]
    (used_first, new_first, packages), (used_second, new_second, _) = runs
    assert int(used_first) == int(new_first) > 300
    assert used_second == used_first and new_second == "0"
    assert "'aiscan'" in packages and "'libcst'" not in packages  # the C path
    assert list(tmp_path.rglob("dataclass-methods.aiscan.*.marshal"))
