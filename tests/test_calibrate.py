"""`aiscan calibrate` on the CPU at small sizes: the file it writes loads and is used.

Timings are never asserted (they depend on the machine and its load)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aiscan.calibrate import Calibration, device_toml, stream_bytes
from aiscan.cli import main
from aiscan.host_caches import read_host_caches
from aiscan.roofline.devices import load_device_file
from aiscan.roofline.hierarchy import cache_specs

DAXPY = Path(__file__).resolve().parent.parent / "fixtures" / "c" / "daxpy.c"


def test_calibrate_writes_a_device_file_that_analyze_places_against(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "here.toml"
    argv = ["calibrate", "-o", str(output), "--array-mib", "1", "--gemm-n", "32"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "aiscan calibrate: copy" in captured.err and "done" in captured.err  # progress
    device = load_device_file(output)
    assert device.key == "here" and device.kind == "cpu"
    assert {p.precision for p in device.peaks} == {"fp64", "fp32"}
    assert {p.precision for p in device.attainable_peaks} == {"fp64", "fp32"}
    sources = [p.source for p in device.peaks] + [device.main_memory.source]
    sources += [p.source for p in device.core.peaks] + [m.source for m in device.core.memory]
    assert all(s.startswith("measured on this machine by aiscan calibrate on ") for s in sources)
    assert "NumPy" in device.peaks[0].source and "copy" in device.main_memory.source
    assert "datasheet" not in output.read_text()
    # One thread's figures beside every thread's: a serial nest is placed against them.
    assert {p.precision for p in device.core.peaks} == {"fp64", "fp32"}
    (one,) = device.core.memory
    assert one.name == "DRAM" and "on one thread" in one.source

    device_options = ["--device-file", str(output), "--device", "this-machine"]
    report_options = ["--format", "json", "--no-cache", "--size", "n=1000", "--roof", "attainable"]
    assert main(["analyze", str(DAXPY), *device_options, *report_options]) == 0
    report = json.loads(capsys.readouterr().out)
    (placed,) = report["files"][0]["functions"][0]["nests"][0]["placement"]
    assert placed["device"] == "here"
    assert placed["threads"] == {"count": 1, "reason": "no OpenMP pragma on the nest"}
    assert placed["peak_flops_per_s"] == device.core.peak("fp64").dense_flops_per_s  # type: ignore[union-attr]
    assert placed["peak_source"].startswith("one core: measured on this machine")
    assert set(placed["times_by_roof"]) == {"datasheet", "attainable"}


def test_calibrate_counts_triad_bytes_as_the_model_does() -> None:
    # NumPy's triad is two calls: reads c, b and the temporary, writes the temporary and a.
    assert stream_bytes("triad", 1000, write_allocate=False) == 40_000
    assert stream_bytes("triad", 1000, write_allocate=True) == 56_000
    assert stream_bytes("copy", 1000, write_allocate=True) == 24_000


def test_calibrate_writes_one_thread_and_every_thread(tmp_path: Path) -> None:
    result = Calibration("cpu", "test machine", "NumPy: best of 5", cpus=4, write_allocate=True)
    result.bandwidths["triad"] = 4e10
    result.core_bandwidths["triad"] = 1.5e10
    result.gemm["fp64"] = 2e11
    result.core_gemm["fp64"] = 6e10
    result.clock_hz, result.clock_source = 3e9, "read from /proc/cpuinfo"
    result.latencies["fp64"] = (3.0, 3.0, 4.0, 13.0)
    result.latency_source = "measured on this machine"
    path = tmp_path / "machine.toml"
    path.write_text(device_toml(result))
    device = load_device_file(path)
    assert device.schema == 3 and device.cores == 4 and device.write_allocate
    assert device.core.peak("fp64").dense_flops_per_s == 6e10  # type: ignore[union-attr]
    assert device.core.bandwidth("DRAM").bandwidth_bytes_per_s == 1.5e10  # type: ignore[union-attr]
    curve = device.curve("DRAM")
    assert curve is not None and curve.threads == (1, 4)
    assert curve.bandwidths_bytes_per_s == (1.5e10, 4e10)
    assert device.core.latency("fp64").fma_cycles == 4  # type: ignore[union-attr]
    assert device.core.clock_hz == 3e9


def test_calibrate_rejects_bad_sizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "-o", str(tmp_path / "x.toml"), "--gemm-n", "0"]) == 2
    assert "positive" in capsys.readouterr().err
    assert main(["calibrate", "-o", str(tmp_path / "x.txt")]) == 2


def _fake_cache(root: Path, index: int, fields: dict[str, str]) -> None:
    folder = root / f"index{index}"
    folder.mkdir(parents=True)
    for name, value in fields.items():
        (folder / name).write_text(value + "\n")


def test_host_caches_are_read_from_sysfs_and_make_a_cache_model(tmp_path: Path) -> None:

    root = tmp_path / "cache"
    common = {"coherency_line_size": "64", "ways_of_associativity": "8"}
    _fake_cache(
        root, 0, {"level": "1", "type": "Data", "size": "32K", "shared_cpu_list": "0"} | common
    )
    _fake_cache(
        root,
        1,
        {"level": "1", "type": "Instruction", "size": "32K", "shared_cpu_list": "0"} | common,
    )
    _fake_cache(
        root, 2, {"level": "2", "type": "Unified", "size": "1024K", "shared_cpu_list": "0"} | common
    )
    _fake_cache(
        root, 3, {"level": "3", "type": "Unified", "size": "32M", "shared_cpu_list": "0-3"} | common
    )
    _fake_cache(root, 4, {"level": "2", "type": "Unified", "size": "garbage"} | common)
    caches = read_host_caches(root)
    assert [(c.level, c.capacity_bytes, c.cpus) for c in caches] == [
        (1, 32768, 1),
        (2, 1048576, 1),
        (3, 33554432, 4),
    ]
    result = Calibration("cpu", "test machine", "NumPy: best of 5", caches=caches, cpus=4)
    result.bandwidths["triad"] = 2e10
    result.gemm["fp64"] = 1e11
    path = tmp_path / "machine.toml"
    path.write_text(device_toml(result))
    device = load_device_file(path)
    specs, notes = cache_specs(device)
    assert not notes
    # One core's share: L1d and L2 are private, the 32 MiB L3 is shared by the 4 cores.
    assert [(s.capacity_bytes, s.line_bytes) for s in specs] == [
        (32768, 64),
        (1048576, 64),
        (8388608, 64),
    ]


def test_no_sysfs_caches_means_a_schema_1_file(tmp_path: Path) -> None:

    assert read_host_caches(tmp_path / "missing") == ()
    result = Calibration("cpu", "test machine", "NumPy", caches=())
    result.bandwidths["copy"] = 1e10
    result.gemm["fp64"] = 1e10
    assert "schema = 1" in device_toml(result)
