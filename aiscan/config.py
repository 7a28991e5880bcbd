"""Project configuration: `[tool.aiscan]` in pyproject.toml, or an `aiscan.toml`.

Found by walking up from the working directory; command-line flags win over it. Keys are
kebab-case as in ruff: `devices`, `device-files`, `sizes`, `write-allocate`,
`special-weight`, `include-dirs`, `defines`, `jax-enable-x64` and `fp32-matmul`
(framework precision settings that override the code), `shapes` (parameter shapes the code
does not give, as `--shape`), and for `aiscan check`: `select`,
`ignore`, `per-file-ignores` (glob -> codes), `thresholds` (rule code or name -> option ->
number), `fail-on` (rules whose notes fail the run too, e.g. `["AIS001"]`), `fail-on-notes`
(every note fails the run: `fail-on = ["ALL"]`) and `help-url` (a template
for the rules' documentation pages: `{code}`, `{code_lower}`, `{name}`); `python-dtype` types
un-annotated Python arrays.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiscan.errors import UsageError
from aiscan.given_shapes import SHAPE_DTYPES, GivenShape, parse_shape
from aiscan.sources import FileRefused, read_regular_file

__all__ = ["PYTHON_DTYPES", "Config", "find_config", "load_config"]

_KEYS = {
    "cache-dir",
    "launch",
    "devices",
    "device-files",
    "sizes",
    "write-allocate",
    "special-weight",
    "include-dirs",
    "defines",
    "select",
    "ignore",
    "per-file-ignores",
    "thresholds",
    "jax-enable-x64",
    "fp32-matmul",
    "python-dtype",
    "threads",
    "cflags",
    "fail-on",
    "triton-config",
    "fail-on-notes",
    "help-url",
    "shapes",
}

PYTHON_DTYPES = tuple(d for d in SHAPE_DTYPES if d != "bool")
"""What `python-dtype` / `--python-dtype` accept: the dtype of un-typed Python arrays, any a
stated shape may carry but bool (an integer one for integer kernels, graph or
dynamic-programming code, whose arithmetic is no FLOP)."""


@dataclass(frozen=True)
class Config:
    """Settings read from a file; paths in it are relative to that file's directory."""

    path: Path | None = None
    devices: tuple[str, ...] = ()
    device_files: tuple[Path, ...] = ()
    sizes: Mapping[str, int] = field(default_factory=dict)
    write_allocate: bool | None = None
    special_weight: int | None = None
    include_dirs: tuple[Path, ...] = ()
    defines: Mapping[str, str] = field(default_factory=dict)
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    thresholds: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    jax_enable_x64: bool | None = None
    """Overrides what a JAX module says about x64 (None: the code decides)."""
    fp32_matmul_tf32: bool | None = None
    """`fp32-matmul = "tf32"` or `"fp32"`: overrides the framework's precision policy."""
    python_dtype: str | None = None
    threads: int | None = None
    """Threads for every loop nest on a CPU (`--threads`); None: the code decides."""
    cflags: str | None = None
    """The C compiler's flags (`--cflags`): which dependency chains it may break."""
    fail_on: tuple[str, ...] = ()
    """Rule selectors whose notes fail `check` (`fail-on`)."""
    triton_config: str | None = None
    """`triton-config = "all"`: every autotune config of a Triton kernel, not the first."""
    launches: tuple[str, ...] = ()
    """`[tool.aiscan.launch]`: CUDA launches, `kernel = "GRID:BLOCK"`, as `--launch`."""
    fail_on_notes: bool = False
    help_url: str | None = None
    cache_dir: str | None = None
    """`cache-dir`, relative to the configuration's directory (the command line places it)."""
    shapes: tuple[GivenShape, ...] = ()
    """`[tool.aiscan.shapes]`: `q = "b,h,n,d"`, `"attention.x" = "n,d:float16"`, as
    `--shape`."""


def find_config(start: Path) -> Path | None:
    """The nearest aiscan.toml, or pyproject.toml with a [tool.aiscan] table."""
    for directory in (start, *start.parents):
        candidate = directory / "aiscan.toml"
        if candidate.is_file():
            return candidate
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and b"[tool.aiscan" in _config_bytes(pyproject):
            return pyproject
    return None


def _config_bytes(path: Path) -> bytes:
    """A pyproject.toml's bytes; empty when it cannot be read (it is then not ours)."""
    try:
        return read_regular_file(path)
    except (OSError, FileRefused):
        return b""


def load_config(path: Path | None) -> Config:
    if path is None:
        return Config()
    try:
        data = tomllib.loads(read_regular_file(path).decode("utf-8"))
    except (OSError, FileRefused, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"{path}: cannot read configuration: {error}") from None
    table = _tool_table(data) if path.name == "pyproject.toml" else data
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.aiscan] must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise UsageError(
            f"{path}: unknown setting(s) {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})"
        )
    base = path.parent
    return Config(
        path=path,
        devices=tuple(_strings(table, "devices", path)),
        device_files=tuple(base / p for p in _strings(table, "device-files", path)),
        sizes=_sizes(table.get("sizes", {}), path),
        write_allocate=_optional_bool(table, "write-allocate", path),
        special_weight=_special_weight(table, path),
        include_dirs=tuple(base / p for p in _strings(table, "include-dirs", path)),
        defines={str(k): str(v) for k, v in _table(table, "defines", path).items()},
        select=tuple(_strings(table, "select", path)),
        ignore=tuple(_strings(table, "ignore", path)),
        per_file_ignores=_per_file_ignores(table, path),
        thresholds=_thresholds(table, path),
        jax_enable_x64=_optional_bool(table, "jax-enable-x64", path),
        fp32_matmul_tf32=_fp32_matmul(table, path),
        python_dtype=_python_dtype(table, path),
        threads=_threads(table, path),
        cflags=_cflags(table, path),
        fail_on=tuple(_strings(table, "fail-on", path)),
        triton_config=_triton_config(table, path),
        launches=_launches(table.get("launch", {}), path),
        fail_on_notes=bool(_optional_bool(table, "fail-on-notes", path)),
        help_url=_help_url(table, path),
        cache_dir=_cache_dir(table, path),
        shapes=_shapes(table.get("shapes", {}), path),
    )


def _threads(table: Mapping[str, Any], path: Path) -> int | None:
    value = _optional_int(table, "threads", path)
    if value is not None and value < 1:
        raise UsageError(f"{path}: threads must be at least 1")
    return value


def _cflags(table: Mapping[str, Any], path: Path) -> str | None:
    value = table.get("cflags")
    if value is not None and not isinstance(value, str):
        raise UsageError(f"{path}: cflags must be a string of compiler flags")
    return value


def _tool_table(data: Mapping[str, Any]) -> object:
    """pyproject.toml's `[tool.aiscan]`; whatever `tool` holds that is not a table,
    `load_config` refuses as not a table."""
    tool = data.get("tool", {})
    return tool.get("aiscan", {}) if isinstance(tool, dict) else tool


def _special_weight(table: Mapping[str, Any], path: Path) -> int | None:
    value = _optional_int(table, "special-weight", path)
    if value is not None and value < 0:
        raise UsageError(f"{path}: special-weight must be 0 or more FLOPs per call")
    return value


def _cache_dir(table: Mapping[str, Any], path: Path) -> str | None:
    value = table.get("cache-dir")
    if value is not None and (not isinstance(value, str) or not value):
        raise UsageError(f"{path}: cache-dir must be a directory name")
    return value


def _triton_config(table: Mapping[str, Any], path: Path) -> str | None:
    value = table.get("triton-config")
    if value is None:
        return None
    if value not in ("first", "all"):
        raise UsageError(f'{path}: triton-config must be "first" or "all"')
    return str(value)


def _python_dtype(table: Mapping[str, Any], path: Path) -> str | None:
    value = table.get("python-dtype")
    if value is None:
        return None
    if value not in PYTHON_DTYPES:
        raise UsageError(f"{path}: python-dtype must be one of {', '.join(PYTHON_DTYPES)}")
    return str(value)


def _strings(table: Mapping[str, Any], key: str, path: Path) -> list[str]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{path}: {key} must be a list of strings")
    return value


def _table(table: Mapping[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise UsageError(f"{path}: {key} must be a table")
    return value


def _sizes(value: Any, path: Path) -> dict[str, int]:
    if not isinstance(value, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value.values()
    ):
        raise UsageError(f"{path}: sizes must map names to positive integers")
    return {str(k): int(v) for k, v in value.items()}


def _shapes(value: Any, path: Path) -> tuple[GivenShape, ...]:
    """`shapes = {q = "b,h,n,d", "attention.x" = ["n", "d"]}` as `--shape` specs; a list
    holds the extents (integers or expressions), a string is `--shape`'s right side."""
    if not isinstance(value, dict):
        raise UsageError(f'{path}: shapes must map parameter names to "EXTENT,..." strings')
    shapes = []
    for key, spec in value.items():
        if isinstance(spec, list) and all(
            isinstance(e, str) or (isinstance(e, int) and not isinstance(e, bool)) for e in spec
        ):
            spec = ",".join(str(e) for e in spec)
        if not isinstance(spec, str):
            raise UsageError(f'{path}: shapes.{key} must be an "EXTENT,...[:DTYPE]" string')
        shapes.append(parse_shape(f"{key}={spec}", f"{path}: shapes"))
    return tuple(shapes)


def _launches(value: Any, path: Path) -> tuple[str, ...]:
    """`launch = {vec_add = "n/256:256"}` as `--launch` specs (`vec_add:n/256:256`)."""
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UsageError(f'{path}: launch must map kernel names to "GRID:BLOCK" strings')
    return tuple(f"{kernel}:{spec}" for kernel, spec in value.items())


def _optional_bool(table: Mapping[str, Any], key: str, path: Path) -> bool | None:
    value = table.get(key)
    if value is not None and not isinstance(value, bool):
        raise UsageError(f"{path}: {key} must be true or false")
    return value


def _optional_int(table: Mapping[str, Any], key: str, path: Path) -> int | None:
    value = table.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise UsageError(f"{path}: {key} must be an integer")
    return value


def _per_file_ignores(
    table: Mapping[str, Any], path: Path
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    entries = []
    for pattern, codes in _table(table, "per-file-ignores", path).items():
        if isinstance(codes, str):
            codes = [codes]
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise UsageError(f"{path}: per-file-ignores.{pattern} must be a list of rule codes")
        entries.append((str(pattern), tuple(codes)))
    return tuple(entries)


def _thresholds(table: Mapping[str, Any], path: Path) -> dict[str, dict[str, float]]:
    thresholds: dict[str, dict[str, float]] = {}
    for rule, options in _table(table, "thresholds", path).items():
        if not isinstance(options, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in options.values()
        ):
            raise UsageError(f"{path}: thresholds.{rule} must map option names to numbers")
        thresholds[str(rule)] = {str(k): float(v) for k, v in options.items()}
    return thresholds


def _fp32_matmul(table: Mapping[str, Any], path: Path) -> bool | None:
    value = table.get("fp32-matmul")
    if value is None:
        return None
    if value not in ("tf32", "fp32"):
        raise UsageError(f'{path}: fp32-matmul must be "tf32" or "fp32"')
    return bool(value == "tf32")


def _help_url(table: Mapping[str, Any], path: Path) -> str | None:
    value = table.get("help-url")
    if value is None:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{path}: help-url must be a string")
    try:
        value.format(code="AIS001", code_lower="ais001", name="memory-bound")
    except (KeyError, IndexError, ValueError) as error:
        raise UsageError(
            f"{path}: help-url: bad template ({error}); use {{code}}, {{code_lower}}, {{name}}"
        ) from None
    return value
