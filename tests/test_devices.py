"""Device files: every shipped file loads and cites its figures; bad files fail clearly."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from aiscan.cli import main
from aiscan.errors import UsageError
from aiscan.report.devices_format import device_details
from aiscan.roofline import devices
from aiscan.roofline.devices import (
    Device,
    device_files,
    find_devices,
    load_device_file,
    load_devices,
)
from aiscan.roofline.precision import normalize_precision
from aiscan.roofline.units import format_bytes

REQUIRED = [
    "h100-sxm", "h100-pcie", "h200", "b200", "a100-sxm-80gb", "v100-sxm", "v100-pcie", "l4",
    "mi300x", "xeon-8480plus", "epyc-9654", "a64fx", "apple-m2-ultra", "bluegene-q",
    "haswell-e5-2695v3", "xeon-phi-7250",
]  # fmt: skip

GOOD = """\
schema = 1
name = "Test box"
aliases = ["tb"]
kind = "cpu"
write_allocate = true

[peaks.fp64]
dense_flops_per_s = 1e12
source = "made up for the test"

[[memory]]
name = "DRAM"
level = "dram"
bandwidth_bytes_per_s = 1e11
source = "made up for the test"
"""


def write(tmp_path: Path, text: str, name: str = "box.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_every_required_device_ships() -> None:
    keys = {path.stem for path in device_files()}
    assert set(REQUIRED) <= keys


@pytest.mark.parametrize("path", device_files(), ids=lambda p: p.stem)
def test_every_shipped_file_loads_with_a_source_per_figure(path: Path) -> None:
    device = load_device_file(path)
    assert device.main_memory.bandwidth_bytes_per_s
    assert device.write_allocate == (device.kind == "cpu")
    figures = [*device.peaks, *device.memory, *device.interconnects]
    assert all(len(figure.source) > 15 for figure in figures)
    for peak in device.peaks:
        assert peak.sparse_flops_per_s is None or peak.sparse_flops_per_s >= peak.dense_flops_per_s


def test_si_units_and_dense_sparse_apart() -> None:
    h100 = load_devices().get("h100")
    assert h100.main_memory.bandwidth_bytes_per_s == 3.35e12
    bf16 = h100.peak("bf16")
    assert bf16 is not None
    assert (bf16.dense_flops_per_s, bf16.sparse_flops_per_s) == (989.4e12, 1979e12)
    tf32 = h100.peak("tf32")
    assert tf32 is not None
    assert (tf32.dense_flops_per_s, tf32.sparse_flops_per_s) == (494.7e12, 989.4e12)


def test_lookup_by_key_name_and_alias_ignores_case() -> None:
    catalog = load_devices()
    assert catalog.get("H100").key == "h100-sxm"
    assert catalog.get("h100-SXM").key == "h100-sxm"
    assert catalog.get("NVIDIA H100 PCIe 80GB").key == "h100-pcie"
    assert catalog.get("bgq").key == "bluegene-q"
    with pytest.raises(UsageError, match="unknown device 'h1000'"):
        catalog.get("h1000")


def test_dense_is_the_default_and_sparse_must_be_asked_for() -> None:
    h100 = load_devices().get("h100")
    assert h100.choose_peak("bf16").flops_per_s == 989.4e12
    chosen = h100.choose_peak("bf16", sparse=True)
    assert (chosen.flops_per_s, chosen.sparse) == (1979e12, True)
    with pytest.raises(UsageError, match="no sparse fp64"):
        h100.choose_peak("fp64", sparse=True)


@pytest.mark.parametrize(
    ("device", "requested", "used"),
    [
        ("h100", "fp64", "fp64"),
        ("h100", "fp64_tensor", "fp64_tensor"),
        ("h100", "float", "fp32"),
        ("v100-pcie", "bf16", "fp32"),
        ("v100-pcie", "half", "fp16"),
        ("bgq", "fp32", "fp64"),
        ("haswell", "fp8", "fp32"),
        ("apple-m2-ultra", "bf16", "fp32"),
    ],
)
def test_precision_fallbacks(device: str, requested: str, used: str) -> None:
    choice = load_devices().get(device).choose_peak(requested)
    assert choice.precision == used
    assert (choice.note is None) == (normalize_precision(requested) == used)


def test_missing_precision_and_integer_types_are_errors() -> None:
    catalog = load_devices()
    with pytest.raises(UsageError, match="no peak for fp64"):
        catalog.get("apple-m2-ultra").choose_peak("double")
    with pytest.raises(UsageError, match="not counted as FLOPs"):
        normalize_precision("int32")


SPARSE_BELOW_DENSE = "dense_flops_per_s = 1e12\nsparse_flops_per_s = 1e9\n"
NO_PEAK_SOURCE = 'source = "made up for the test"\n\n[[memory]]'


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("schema = 1", "schema = 9", "schema"),
        ('kind = "cpu"', 'kind = "fpga"', "kind"),
        ("write_allocate = true", 'write_allocate = "yes"', "write_allocate"),
        ("bandwidth_bytes_per_s = 1e11", 'bandwidth_bytes_per_s = "100 GB/s"',
         "memory[0].bandwidth_bytes_per_s"),
        ("dense_flops_per_s = 1e12", "dense_flops_per_s = -1", "peaks.fp64.dense_flops_per_s"),
        ("dense_flops_per_s = 1e12\n", SPARSE_BELOW_DENSE, "peaks.fp64.sparse_flops_per_s"),
        (NO_PEAK_SOURCE, "\n[[memory]]", "peaks.fp64.source"),
        ('level = "dram"', 'level = "l2"', "memory[0].level"),
        ("[peaks.fp64]", "[peaks.fp128]", "peaks.fp128"),
        ("bandwidth_bytes_per_s = 1e11", "bandwith_bytes_per_s = 1e11",
         "memory[0].bandwith_bytes_per_s"),
        (GOOD[GOOD.index("[[memory]]"):], "", "memory"),
        ('name = "Test box"\n', "", "name"),
    ],
)  # fmt: skip
def test_malformed_file_names_file_and_field(
    tmp_path: Path, old: str, new: str, field: str
) -> None:
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(UsageError) as caught:
        load_device_file(path)
    message = str(caught.value)
    assert str(path) in message
    assert f"field '{field}'" in message


def test_not_toml_is_a_usage_error(tmp_path: Path) -> None:
    path = write(tmp_path, "schema = = 1")
    with pytest.raises(UsageError, match="not valid TOML"):
        load_device_file(path)


def test_user_file_with_measured_ceiling_replaces_shipped_alias(tmp_path: Path) -> None:
    measured = GOOD.replace('aliases = ["tb"]', 'aliases = ["h100"]').replace(
        "made up for the test", "measured with STREAM triad"
    )
    catalog = load_devices([write(tmp_path, measured, "my-h100.toml")])
    assert catalog.get("h100").key == "my-h100"
    assert catalog.get("h100-pcie").key == "h100-pcie"
    assert "h100-sxm" not in {d.key for d in catalog.devices}


def test_a_device_file_is_parsed_again_only_when_its_bytes_change(tmp_path: Path) -> None:
    """The language server reads the catalog for every file it opens: a file read again
    with the same bytes is the device parsed before; an edited file is parsed again."""
    path = write(tmp_path, GOOD)
    first = load_device_file(path)
    assert load_device_file(path) is first
    write(tmp_path, GOOD.replace("bandwidth_bytes_per_s = 1e11", "bandwidth_bytes_per_s = 2e11"))
    edited = load_device_file(path)
    assert edited.memory[0].bandwidth_bytes_per_s == 2e11
    assert first.memory[0].bandwidth_bytes_per_s == 1e11


def test_two_user_files_with_one_name_clash(tmp_path: Path) -> None:
    first = write(tmp_path, GOOD, "a.toml")
    second = write(tmp_path, GOOD, "b.toml")
    with pytest.raises(UsageError, match="name 'test box' is also used by"):
        load_devices([first, second])


def test_loading_devices_imports_neither_sympy_nor_matplotlib() -> None:
    code = (
        "import sys, aiscan.roofline.devices;"
        "print('sympy' in sys.modules, 'matplotlib' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]


def test_devices_show_gives_each_cache_as_one_core_sees_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The file stores the socket's total: printed beside "per core" it read as each
    core's (`3.146 MB, ..., per core` for the EPYC's 32 KiB L1d). Binary totals are
    binary too: 96 x 32 KiB is 3 MiB (it was "3.146 MB in all"), 96 x 1 MiB 96 MiB."""
    assert main(["devices", "show", "epyc-9654"]) == 0
    out = capsys.readouterr().out
    assert "L1d          bandwidth not published, 32 KiB per core (3 MiB in all)," in out
    assert "L2           bandwidth not published, 1 MiB per core (96 MiB in all)," in out
    assert "L3           bandwidth not published, 32 MB per 8 cores (384 MB in all)," in out
    assert "per core (3 MiB in all), 64-byte lines, 8-way, private\n" in out


_UNITS = {"B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15}
_UNITS |= {"KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30}
_FIGURE = re.compile(r"(\d+(?:\.\d+)?) ([kMGTP]?B|[KMG]iB)(/s)?\b")


def _figures(text: str) -> list[tuple[float, str, bool]]:
    """Each byte figure in `text`: its value, its unit, and whether it is a rate."""
    return [(float(n) * _UNITS[unit], unit, bool(rate)) for n, unit, rate in _FIGURE.findall(text)]


@pytest.mark.parametrize(
    "path",
    [
        *device_files(),
        *sorted((Path(__file__).parent.parent / "fixtures" / "devices").glob("*.toml")),
    ],
    ids=lambda p: p.stem,
)
def test_every_capacity_and_bandwidth_printed_is_the_files(path: Path) -> None:
    """`aiscan devices show` for each device file: every bandwidth is the file's (to the 4
    digits printed), every capacity the file's total or one instance's share of it, exactly
    where the figure is a whole number of KiB, MiB or GiB, and then written in them."""
    device = load_device_file(path)
    lines = device_details(device).splitlines()
    rates = [
        level.bandwidth_bytes_per_s
        for level in (*device.memory, *device.attainable_memory, *device.core.memory)
        if level.bandwidth_bytes_per_s
    ]
    rates += [b for curve in device.curves for b in curve.bandwidths_bytes_per_s]
    rates += [link.bandwidth_bytes_per_s for link in device.interconnects]
    figures = [line for line in lines if "source:" not in line and not line.startswith("notes:")]
    printed = [v for line in figures for v, _, r in _figures(line) if r]
    assert printed == pytest.approx(rates, rel=5e-4)
    for level in device.memory:
        if not level.capacity_bytes:
            continue
        # The first line that names the level: the memory section's (one core's follows).
        line = next(x for x in lines if x.startswith(f"  {level.name} ") and "source:" not in x)
        capacities = [(v, unit) for v, unit, rate in _figures(line) if not rate]
        instances = 1
        if level.shared_by_cores and device.cores > level.shared_by_cores:
            instances = device.cores // level.shared_by_cores
        expected = [level.capacity_bytes / instances, level.capacity_bytes][2 - len(capacities) :]
        for (value, unit), stored in zip(capacities, expected, strict=True):
            binary = stored >= 1024 and (stored / 1024).is_integer() and stored % 1000 != 0
            if binary:
                assert unit.endswith("iB"), (line, stored)
            assert value == (stored if binary else pytest.approx(stored, rel=5e-4)), line


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (32768, "32 KiB"),
        (3145728, "3 MiB"),
        (3670016, "3.5 MiB"),
        (2752512, "2.625 MiB"),
        (34359738368, "32 GiB"),
        (384e6, "384 MB"),
        (192e3, "192 kB"),
        (20.736e6, "20.736 MB"),
        (123456789, "123.5 MB"),
    ],
)
def test_capacities_print_in_the_units_they_are_whole_in(value: float, text: str) -> None:
    assert format_bytes(value) == text


@pytest.mark.parametrize("name", [*(p.stem for p in device_files()), "H100", "bgq", "epyc"])
def test_find_devices_finds_what_the_catalog_finds(name: str) -> None:
    (found,) = find_devices([name])
    assert found == load_devices().get(name)


def test_find_devices_reads_only_the_named_files(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []

    def counting(path: Path) -> Device:
        read.append(path.stem)
        return load_device_file(path)

    monkeypatch.setattr(devices, "load_device_file", counting)
    keys = [d.key for d in find_devices(["xeon-8480plus", "H100-SXM"])]
    assert (keys, read) == (["xeon-8480plus", "h100-sxm"], ["xeon-8480plus", "h100-sxm"])
    read.clear()
    assert [d.key for d in find_devices(["h100"])] == ["h100-sxm"]  # an alias: every file
    assert len(read) == len(device_files())


def test_find_devices_lets_a_user_file_replace_a_shipped_one(tmp_path: Path) -> None:
    measured = GOOD.replace('aliases = ["tb"]', 'aliases = ["h100-sxm"]')
    (found,) = find_devices(["h100-sxm"], [write(tmp_path, measured, "my-h100.toml")])
    assert found.key == "my-h100"
    with pytest.raises(UsageError, match="unknown device 'h1000'"):
        find_devices(["h100-sxm", "h1000"])
