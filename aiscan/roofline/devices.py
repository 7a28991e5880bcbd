"""Device data: peaks, memory levels and interconnects read from `rules/devices/*.toml`.

Every figure is stored in SI units (FLOP/s, bytes/s, bytes; 1 TB/s = 1e12 B/s) next to the
citation it came from, and dense and 2:4-sparse peaks are separate fields, because public
tools often mix both up. A malformed file raises `UsageError` naming the file and field.
This module imports only the standard library so that `aiscan devices` stays fast.
"""

from __future__ import annotations

import itertools
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Final

from aiscan.errors import UsageError
from aiscan.resources import rules_dir
from aiscan.roofline.precision import PRECISIONS, fallback_chain
from aiscan.sources import FileRefused, read_regular_file

__all__ = [
    "MAIN_MEMORY_LEVELS",
    "MEMORY_LEVELS",
    "SCHEMA_VERSION",
    "BandwidthCurve",
    "CoreFigures",
    "Device",
    "DeviceCatalog",
    "Interconnect",
    "Latencies",
    "MemoryLevel",
    "Peak",
    "PeakChoice",
    "device_files",
    "find_devices",
    "load_device_file",
    "load_devices",
]

SCHEMA_VERSION: Final = 3
SCHEMAS: Final = frozenset({1, 2, 3})
"""Schema 2 adds cache geometry (`line_bytes`, `associativity`, `shared_by_cores`) and the
device's `cores`; schema 3 adds one core's figures (`[core]`: clock, peaks, bandwidths,
operation latencies) and measured bandwidth-over-threads curves (`[scaling]`). Older files
load unchanged. A file without `schema` is the newest."""
MEMORY_LEVELS: Final = ("hbm", "dram", "llc", "l3", "l2", "l1")
"""Allowed `level` values; `llc` is a last-level cache outside the core clusters."""
MAIN_MEMORY_LEVELS: Final = frozenset({"hbm", "dram"})
KINDS: Final = frozenset({"gpu", "cpu"})
SMALLEST_FIGURE: Final = 1e-12
LARGEST_FIGURE: Final = 1e30
"""A device file's figures (rates, bandwidths, capacities, factors) lie between these:
`inf` or `5e-324` (whose reciprocal overflows) cannot be placed against."""


@dataclass(frozen=True, slots=True)
class Peak:
    """Peak arithmetic rate of one precision; `sparse_flops_per_s` is 2:4 structured sparsity.

    `divide_ops_per_s` and `special_ops_per_s` (sqrt, exp, sin, ...: results per second) are
    the in-core ceilings of those operations, where a source gives them (see `in_core`).
    """

    precision: str
    dense_flops_per_s: float
    sparse_flops_per_s: float | None
    source: str
    divide_ops_per_s: float | None = None
    divide_source: str | None = None
    special_ops_per_s: float | None = None
    special_source: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryLevel:
    """One level of the memory hierarchy; on-chip bandwidths are often unpublished (None)."""

    name: str
    level: str
    bandwidth_bytes_per_s: float | None
    capacity_bytes: float | None
    source: str
    line_bytes: int | None = None
    """Cache line (or, on GPUs, sector) size: the unit a miss moves. None: unknown."""
    associativity: int | None = None
    shared_by_cores: int | None = None
    """1 for a private (per-core) cache, N when N cores share one instance; None: unknown."""

    @property
    def is_main_memory(self) -> bool:
        return self.level in MAIN_MEMORY_LEVELS


@dataclass(frozen=True, slots=True)
class Interconnect:
    """A link to other devices or the host (NVLink, PCIe), bidirectional aggregate."""

    name: str
    bandwidth_bytes_per_s: float
    source: str


@dataclass(frozen=True, slots=True)
class PeakChoice:
    """The peak placement uses, and why it may differ from the requested precision."""

    requested: str
    precision: str
    sparse: bool
    flops_per_s: float
    source: str
    note: str | None


@dataclass(frozen=True, slots=True)
class Latencies:
    """Result latencies of one precision's floating-point operations, in core cycles: what
    a chain of dependent operations waits for (`aiscan.analysis.dependence`)."""

    precision: str
    add_cycles: float
    mul_cycles: float
    fma_cycles: float
    divide_cycles: float | None
    source: str
    special_cycles: float | None = None


@dataclass(frozen=True, slots=True)
class BandwidthCurve:
    """A level's measured bandwidth at some thread counts (`[scaling.memory.<name>]`)."""

    level: str
    threads: tuple[int, ...]
    bandwidths_bytes_per_s: tuple[float, ...]
    source: str

    def at(self, threads: int) -> float:
        """Linear between the measured points; the nearest end outside them."""
        points = list(zip(self.threads, self.bandwidths_bytes_per_s, strict=True))
        if threads <= points[0][0]:
            return points[0][1] * threads / points[0][0]
        for (low, low_bw), (high, high_bw) in itertools.pairwise(points):
            if threads <= high:
                return low_bw + (high_bw - low_bw) * (threads - low) / (high - low)
        return points[-1][1]


@dataclass(frozen=True, slots=True)
class CoreFigures:
    """One core's roofs (schema 3, `[core]`): what a serial loop nest can reach.

    `clock_hz` converts latencies to seconds; it is the highest clock one core runs at, so
    that a latency bound stays a lower bound on time. Peaks and bandwidths are keyed as
    the device's (`[core.peaks.fp64]`, `[core.memory.<level name>]`)."""

    clock_hz: float | None = None
    clock_source: str | None = None
    peaks: tuple[Peak, ...] = ()
    memory: tuple[MemoryLevel, ...] = ()
    latencies: tuple[Latencies, ...] = ()

    def peak(self, precision: str) -> Peak | None:
        return next((p for p in self.peaks if p.precision == precision), None)

    def bandwidth(self, level_name: str) -> MemoryLevel | None:
        wanted = level_name.lower()
        return next((m for m in self.memory if m.name.lower() == wanted), None)

    def latency(self, precision: str) -> Latencies | None:
        return next((lat for lat in self.latencies if lat.precision == precision), None)


@dataclass(frozen=True, slots=True)
class Device:
    """One machine as a roofline sees it: compute peaks, memory levels, write policy."""

    key: str
    name: str
    aliases: tuple[str, ...]
    kind: str
    write_allocate: bool
    peaks: tuple[Peak, ...]
    memory: tuple[MemoryLevel, ...]
    interconnects: tuple[Interconnect, ...]
    notes: str
    path: Path
    cores: int = 1
    """Cores (SMs on a GPU) the peaks and the `capacity_bytes` totals are over (schema 2)."""
    cache_safety_factor: float | None = None
    """Schema 2: the fraction of a cache a layer condition may fill (None: the model's 1/2)."""
    schema: int = SCHEMA_VERSION
    attainable_peaks: tuple[Peak, ...] = ()
    """Measured GEMM rates per precision key (`[attainable.peaks]`), dense."""
    attainable_memory: tuple[MemoryLevel, ...] = ()
    """Measured bandwidths of some memory levels (`[attainable.memory]`), by level name."""
    core: CoreFigures = CoreFigures()
    """One core's figures (schema 3); empty where the file gives none."""
    curves: tuple[BandwidthCurve, ...] = ()
    """Measured bandwidth over thread counts, per memory level (schema 3)."""
    threads: int | None = None
    """The threads the roofs are scaled to (`aiscan.roofline.threads`); None: the file's
    figures as they are, the whole device with every core busy."""

    def curve(self, level_name: str) -> BandwidthCurve | None:
        wanted = level_name.lower()
        return next((c for c in self.curves if c.level.lower() == wanted), None)

    @property
    def has_attainable(self) -> bool:
        return bool(self.attainable_peaks or self.attainable_memory)

    def attainable(self) -> Device:
        """This device with its measured figures in place of the datasheet ones, where the
        file has them (`--roof attainable`); the others stay, and say so in their source."""
        measured = {p.precision: p for p in self.attainable_peaks}
        peaks = tuple(
            measured.get(p.precision)
            or Peak(p.precision, p.dense_flops_per_s, p.sparse_flops_per_s,
                    f"no attainable figure: datasheet ({p.source})")
            for p in self.peaks
        )  # fmt: skip
        levels = {m.name.lower(): m for m in self.attainable_memory}
        memory = tuple(
            replace(level, bandwidth_bytes_per_s=levels[level.name.lower()].bandwidth_bytes_per_s,
                    source=levels[level.name.lower()].source)
            if level.name.lower() in levels else level
            for level in self.memory
        )  # fmt: skip
        return replace(self, peaks=peaks, memory=memory)

    @property
    def main_memory(self) -> MemoryLevel:
        """The level a plain roofline uses: the first, HBM or DRAM (checked on load)."""
        return self.memory[0]

    @property
    def names(self) -> tuple[str, ...]:
        """Every lower-cased name the device answers to."""
        return tuple(dict.fromkeys(n.lower() for n in (self.key, self.name, *self.aliases)))

    def peak(self, precision: str) -> Peak | None:
        """The stored peak for exactly this key, or None."""
        return next((p for p in self.peaks if p.precision == precision), None)

    def choose_peak(self, precision: str, *, sparse: bool = False) -> PeakChoice:
        """Apply the precision rules (see `aiscan.roofline.precision`) to this device.

        Dense unless `sparse` is asked for; a sparse request on a peak without a sparse
        figure is an error rather than a silent dense answer.
        """
        chain = fallback_chain(precision)
        for key in chain:
            peak = self.peak(key)
            if peak is None:
                continue
            note = None if key == chain[0] else f"{self.key} has no {chain[0]} peak; used {key}"
            if not sparse:
                return PeakChoice(chain[0], key, False, peak.dense_flops_per_s, peak.source, note)
            if peak.sparse_flops_per_s is None:
                raise UsageError(f"device {self.key}: no sparse {key} peak in {self.path}")
            return PeakChoice(chain[0], key, True, peak.sparse_flops_per_s, peak.source, note)
        known = ", ".join(p.precision for p in self.peaks)
        raise UsageError(
            f"device {self.key}: no peak for {chain[0]} or a fallback "
            f"({', '.join(chain[1:]) or 'none'}); it has {known}"
        )

    def memory_level(self, name: str | None = None) -> MemoryLevel:
        """A level by its name or level kind (`L2`, `hbm`); main memory when None."""
        if name is None:
            return self.main_memory
        wanted = name.lower()
        for level in self.memory:
            if wanted in (level.name.lower(), level.level):
                return level
        known = ", ".join(m.name for m in self.memory)
        raise UsageError(f"device {self.key}: no memory level {name!r}; it has {known}")


@dataclass(frozen=True, slots=True)
class DeviceCatalog:
    """All known devices; lookup by key, name or alias, case-insensitively."""

    devices: tuple[Device, ...]

    def get(self, name: str) -> Device:
        wanted = name.strip().lower()
        for device in self.devices:
            if wanted in device.names:
                return device
        known = ", ".join(d.key for d in self.devices)
        names = sorted({n for d in self.devices for n in d.names})
        import difflib  # here: only a name not found needs it

        close = difflib.get_close_matches(wanted, names, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"unknown device {name!r}{hint} (known: {known})")


def device_files() -> tuple[Path, ...]:
    """The shipped device files, sorted by name."""
    return tuple(sorted((rules_dir() / "devices").glob("*.toml")))


def load_devices(extra_files: Iterable[Path | str] = ()) -> DeviceCatalog:
    """The shipped devices plus the user's files (same format).

    A user device that shares a name or alias with a shipped one replaces it (for example
    an `h100` with measured ceilings); two shipped, or two user, devices that share a name
    are an error, since a lookup could not tell them apart.
    """
    shipped = _without_clashes([load_device_file(p) for p in device_files()])
    extra = _without_clashes([load_device_file(Path(p)) for p in extra_files])
    taken = {n for d in extra for n in d.names}
    kept = [d for d in shipped if taken.isdisjoint(d.names)]
    return DeviceCatalog(tuple(kept + extra))


def find_devices(
    names: Sequence[str], extra_files: Iterable[Path | str] = ()
) -> tuple[Device, ...]:
    """The devices `names` name, as `load_devices(extra_files).get` finds them, reading only
    their own files when every name is a shipped file's name and no user file is given:
    parsing all the device files costs a one-kernel run more than its analysis."""
    extra = list(extra_files)
    if not extra:
        shipped = {path.stem: path for path in device_files()}
        found = []
        for name in names:
            path = shipped.get(name.strip().lower())
            device = load_device_file(path) if path is not None else None
            if device is None or name.strip().lower() not in device.names:
                break  # an alias, or a name only the whole catalog can resolve
            found.append(device)
        else:
            return tuple(found)
    catalog = load_devices(extra)
    return tuple(catalog.get(name) for name in names)


def _without_clashes(devices: Sequence[Device]) -> list[Device]:
    owner: dict[str, Device] = {}
    for device in devices:
        for name in device.names:
            other = owner.setdefault(name, device)
            if other is not device:
                raise UsageError(f"{device.path}: name {name!r} is also used by {other.path}")
    return list(devices)


def load_device_file(path: Path) -> Device:
    """Read and check one device file."""
    try:
        data = read_regular_file(path)
    except FileRefused as refusal:
        raise UsageError(f"{path}: cannot read device file: {refusal}") from None
    except OSError as error:
        raise UsageError(f"{path}: cannot read device file: {error.strerror}") from error
    return _device_of(path, data)


@lru_cache(maxsize=64)
def _device_of(path: Path, data: bytes) -> Device:
    """Remembered by path and bytes: the language server reads the catalog for every file
    it opens, and parsing its sixteen files took 7 ms of the first hover's wait."""
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise UsageError(f"{path}: not valid UTF-8: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{path}: not valid TOML: {error}") from error
    return _Reader(path).device(parsed)


_PEAK_FIELDS: Final = (
    "dense_flops_per_s",
    "sparse_flops_per_s",
    "source",
    "divide_ops_per_s",
    "divide_source",
    "special_ops_per_s",
    "special_source",
)


class _Reader:
    """Field-by-field checks; every message names the file and the dotted field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, field: str, problem: str) -> UsageError:
        return UsageError(f"{self.path}: field '{field}': {problem}")

    def table(self, data: object, field: str, allowed: Iterable[str]) -> Mapping[str, object]:
        if not isinstance(data, dict):
            raise self.fail(field, "expected a table")
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise self.fail(f"{field}.{unknown[0]}" if field else unknown[0], "unknown field")
        return data

    def text(self, data: Mapping[str, object], key: str, field: str) -> str:
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"{field}{key}", "missing or empty text")
        return value.strip()

    def number(
        self, data: Mapping[str, object], key: str, field: str, *, required: bool = True
    ) -> float | None:
        value = data.get(key)
        if value is None and not required:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not SMALLEST_FIGURE <= value <= LARGEST_FIGURE
        ):
            raise self.fail(
                f"{field}{key}",
                f"expected a positive number in SI units, from {SMALLEST_FIGURE:g} to "
                f"{LARGEST_FIGURE:g}, got {value!r}",
            )
        return float(value)

    def device(self, raw: object) -> Device:
        data = self.table(
            raw,
            "",
            (
                "schema",
                "name",
                "cores",
                "cache_safety_factor",
                "aliases",
                "kind",
                "write_allocate",
                "notes",
                "peaks",
                "memory",
                "interconnect",
                "attainable",
                "core",
                "scaling",
            ),
        )
        schema = data.get("schema", SCHEMA_VERSION)
        if isinstance(schema, bool) or schema not in SCHEMAS:
            raise self.fail("schema", f"expected one of {sorted(SCHEMAS)}, got {schema!r}")
        if schema == 1 and "cores" in data:
            raise self.fail("cores", "needs schema = 2")
        cores = self.count(data, "cores", "") or 1
        safety = self.number(data, "cache_safety_factor", "", required=False)
        if safety is not None and (schema == 1 or safety > 1):
            raise self.fail("cache_safety_factor", "needs schema = 2 and a value in (0, 1]")
        aliases = data.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) and a for a in aliases):
            raise self.fail("aliases", "expected a list of names")
        kind = data.get("kind")
        if kind not in KINDS:
            raise self.fail("kind", f"expected one of {sorted(KINDS)}, got {kind!r}")
        write_allocate = data.get("write_allocate")
        if not isinstance(write_allocate, bool):
            raise self.fail("write_allocate", "expected true or false")
        notes = data.get("notes", "")
        if not isinstance(notes, str):
            raise self.fail("notes", "expected text")
        memory = self.memory(data.get("memory"), int(schema))
        peaks, levels = self.attainable(data.get("attainable", {}))
        for later in ("core", "scaling"):
            if later in data and schema < 3:
                raise self.fail(later, "needs schema = 3")
        core = self.core(data.get("core", {}))
        curves = self.scaling(data.get("scaling", {}))
        names = {m.name.lower() for m in memory}
        for field, named in (
            *((f"attainable.memory.{lv.name}", lv.name) for lv in levels),
            *((f"core.memory.{lv.name}", lv.name) for lv in core.memory),
            *((f"scaling.memory.{c.level}", c.level) for c in curves),
        ):
            if named.lower() not in names:
                raise self.fail(field, "no [[memory]] level of that name")
        return Device(
            key=self.path.stem.lower(),
            name=self.text(data, "name", ""),
            aliases=tuple(a.lower() for a in aliases),
            kind=str(kind),
            write_allocate=write_allocate,
            peaks=self.peaks(data.get("peaks")),
            memory=memory,
            interconnects=self.interconnects(data.get("interconnect", [])),
            notes=notes.strip(),
            path=self.path,
            attainable_peaks=peaks,
            attainable_memory=levels,
            cores=cores,
            cache_safety_factor=safety,
            schema=int(schema),
            core=core,
            curves=curves,
        )

    def core(self, raw: object) -> CoreFigures:
        """`[core]`: `clock_hz` with `clock_source`; `[core.peaks.<key>]` (flops_per_s,
        source), `[core.memory.<level name>]` (bandwidth_bytes_per_s, source) and
        `[core.latency.<key>]` (add/mul/fma/divide/special cycles, source)."""
        data = self.table(raw, "core", ("clock_hz", "clock_source", "peaks", "memory", "latency"))
        clock = self.number(data, "clock_hz", "core.", required=False)
        clock_source = self.text(data, "clock_source", "core.") if clock is not None else None
        peaks, memory = self.attainable(
            {"peaks": data.get("peaks", {}), "memory": data.get("memory", {})}, "core"
        )
        latencies = []
        for key, entry in self.table(data.get("latency", {}), "core.latency", PRECISIONS).items():
            if clock is None:
                raise self.fail(f"core.latency.{key}", "needs core.clock_hz")
            field = f"core.latency.{key}."
            names = ("add_cycles", "mul_cycles", "fma_cycles", "divide_cycles", "special_cycles")
            entry = self.table(entry, field[:-1], (*names, "source"))
            add, mul, fma, divide, special = (
                self.number(entry, name, field, required=name in names[:3]) for name in names
            )
            assert add is not None and mul is not None and fma is not None
            latencies.append(
                Latencies(key, add, mul, fma, divide, self.text(entry, "source", field), special)
            )
        return CoreFigures(clock, clock_source, peaks, memory, tuple(latencies))

    def scaling(self, raw: object) -> tuple[BandwidthCurve, ...]:
        """`[scaling.memory.<level name>]`: `threads` (rising) and `bandwidth_bytes_per_s`
        lists of one length, and a `source`."""
        data = self.table(raw, "scaling", ("memory",))
        memory = data.get("memory", {})
        if not isinstance(memory, dict):
            raise self.fail("scaling.memory", "expected a table of memory level names")
        curves = []
        for name, entry in memory.items():
            field = f"scaling.memory.{name}."
            entry = self.table(entry, field[:-1], ("threads", "bandwidth_bytes_per_s", "source"))
            threads, rates = entry.get("threads"), entry.get("bandwidth_bytes_per_s")
            if (
                not isinstance(threads, list)
                or not threads
                or not all(isinstance(t, int) and not isinstance(t, bool) for t in threads)
                or sorted(set(threads)) != threads
                or threads[0] < 1
            ):
                raise self.fail(f"{field}threads", "expected rising positive thread counts")
            if (
                not isinstance(rates, list)
                or len(rates) != len(threads)
                or not all(isinstance(r, int | float) and not isinstance(r, bool) and r > 0
                           for r in rates)
            ):  # fmt: skip
                raise self.fail(
                    f"{field}bandwidth_bytes_per_s", "expected one positive number per count"
                )
            curves.append(
                BandwidthCurve(
                    name,
                    tuple(threads),
                    tuple(float(r) for r in rates),
                    self.text(entry, "source", field),
                )
            )
        return tuple(curves)

    def attainable(
        self, raw: object, table: str = "attainable"
    ) -> tuple[tuple[Peak, ...], tuple[MemoryLevel, ...]]:
        """`[attainable.peaks.<key>]` (flops_per_s, source) and `[attainable.memory.<level
        name>]` (bandwidth_bytes_per_s, source): measured figures beside the datasheet's.
        `[core.peaks]` and `[core.memory]` have the same shape."""
        data = self.table(raw, table, ("peaks", "memory"))
        peaks = []
        for key, entry in self.table(data.get("peaks", {}), f"{table}.peaks", PRECISIONS).items():
            field = f"{table}.peaks.{key}."
            entry = self.table(entry, field[:-1], ("flops_per_s", "source"))
            rate = self.number(entry, "flops_per_s", field)
            assert rate is not None
            peaks.append(Peak(key, rate, None, self.text(entry, "source", field)))
        levels = []
        memory = data.get("memory", {})
        if not isinstance(memory, dict):
            raise self.fail(f"{table}.memory", "expected a table of memory level names")
        for name, entry in memory.items():
            field = f"{table}.memory.{name}."
            entry = self.table(entry, field[:-1], ("bandwidth_bytes_per_s", "source"))
            bandwidth = self.number(entry, "bandwidth_bytes_per_s", field)
            levels.append(MemoryLevel(name, "", bandwidth, None, self.text(entry, "source", field)))
        return tuple(peaks), tuple(levels)

    def peaks(self, raw: object) -> tuple[Peak, ...]:
        data = self.table(raw, "peaks", PRECISIONS)
        if not data:
            raise self.fail("peaks", "at least one precision is required")
        peaks = []
        for precision in PRECISIONS:
            if precision not in data:
                continue
            field = f"peaks.{precision}."
            entry = self.table(data[precision], field[:-1], _PEAK_FIELDS)
            dense = self.number(entry, "dense_flops_per_s", field)
            sparse = self.number(entry, "sparse_flops_per_s", field, required=False)
            assert dense is not None
            if sparse is not None and sparse < dense:
                raise self.fail(f"{field}sparse_flops_per_s", "is below the dense peak")
            source = self.text(entry, "source", field)
            divide, divide_source = self.throughput(entry, "divide", field)
            special, special_source = self.throughput(entry, "special", field)
            peaks.append(
                Peak(
                    precision,
                    dense,
                    sparse,
                    source,
                    divide,
                    divide_source,
                    special,
                    special_source,
                )
            )
        return tuple(peaks)

    def throughput(
        self, entry: Mapping[str, object], kind: str, field: str
    ) -> tuple[float | None, str | None]:
        """An optional `<kind>_ops_per_s`, which needs its own `<kind>_source`."""
        rate = self.number(entry, f"{kind}_ops_per_s", field, required=False)
        if rate is None:
            if f"{kind}_source" in entry:
                raise self.fail(f"{field}{kind}_source", f"given without {kind}_ops_per_s")
            return None, None
        return rate, self.text(entry, f"{kind}_source", field)

    def count(self, data: Mapping[str, object], key: str, field: str) -> int | None:
        """An optional positive integer (cores, line bytes, ways)."""
        value = data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.fail(f"{field}{key}", f"expected a positive integer, got {value!r}")
        return value

    def memory(self, raw: object, schema: int = SCHEMA_VERSION) -> tuple[MemoryLevel, ...]:
        if not isinstance(raw, list) or not raw:
            raise self.fail("memory", "expected at least one [[memory]] level")
        levels = []
        for index, item in enumerate(raw):
            field = f"memory[{index}]."
            geometry = ("line_bytes", "associativity", "shared_by_cores") if schema >= 2 else ()
            entry = self.table(
                item,
                field[:-1],
                ("name", "level", "bandwidth_bytes_per_s", "capacity_bytes", "source", *geometry),
            )
            level = entry.get("level")
            allowed = MAIN_MEMORY_LEVELS if index == 0 else MEMORY_LEVELS
            if level not in allowed:
                raise self.fail(
                    f"{field}level", f"expected one of {sorted(allowed)}, got {level!r}"
                )
            bandwidth = self.number(entry, "bandwidth_bytes_per_s", field, required=index == 0)
            capacity = self.number(entry, "capacity_bytes", field, required=False)
            if bandwidth is None and capacity is None:
                raise self.fail(field[:-1], "needs a bandwidth, a capacity, or both")
            name = self.text(entry, "name", field)
            levels.append(
                MemoryLevel(
                    name,
                    str(level),
                    bandwidth,
                    capacity,
                    self.text(entry, "source", field),
                    line_bytes=self.count(entry, "line_bytes", field),
                    associativity=self.count(entry, "associativity", field),
                    shared_by_cores=self.count(entry, "shared_by_cores", field),
                )
            )
        return tuple(levels)

    def interconnects(self, raw: object) -> tuple[Interconnect, ...]:
        if not isinstance(raw, list):
            raise self.fail("interconnect", "expected [[interconnect]] entries")
        links = []
        for index, item in enumerate(raw):
            field = f"interconnect[{index}]."
            entry = self.table(item, field[:-1], ("name", "bandwidth_bytes_per_s", "source"))
            bandwidth = self.number(entry, "bandwidth_bytes_per_s", field)
            assert bandwidth is not None
            links.append(
                Interconnect(
                    self.text(entry, "name", field), bandwidth, self.text(entry, "source", field)
                )
            )
        return tuple(links)
