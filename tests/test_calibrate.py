"""`aiscan calibrate` on the CPU at small sizes: the file it writes loads and is used.

Timings are never asserted (they depend on the machine and its load)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aiscan.cli import main
from aiscan.roofline.devices import load_device_file

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
    assert all(s.startswith("measured by aiscan calibrate on ") for s in sources)
    assert "NumPy" in device.peaks[0].source and "copy" in device.main_memory.source

    device_options = ["--device-file", str(output), "--device", "this-machine"]
    report_options = ["--format", "json", "--no-cache", "--size", "n=1000", "--roof", "attainable"]
    assert main(["analyze", str(DAXPY), *device_options, *report_options]) == 0
    report = json.loads(capsys.readouterr().out)
    (placed,) = report["files"][0]["functions"][0]["nests"][0]["placement"]
    assert placed["device"] == "here"
    assert placed["peak_flops_per_s"] == device.peak("fp64").dense_flops_per_s  # type: ignore[union-attr]
    assert placed["bandwidth_bytes_per_s"] == device.main_memory.bandwidth_bytes_per_s
    assert placed["peak_source"].startswith("measured by aiscan calibrate")
    assert set(placed["times_by_roof"]) == {"datasheet", "attainable"}


def test_calibrate_rejects_bad_sizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "-o", str(tmp_path / "x.toml"), "--gemm-n", "0"]) == 2
    assert "positive" in capsys.readouterr().err
    assert main(["calibrate", "-o", str(tmp_path / "x.txt")]) == 2
