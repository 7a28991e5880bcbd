"""Roofline placement through the command line: devices, seed figures, JSON, plots."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from aiscan.cli import main
from aiscan.report.json_report import load_schema

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "c"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    code = main(["analyze", *argv, "--format", "json"])
    out = capsys.readouterr().out
    assert code == 0
    report = json.loads(out)
    jsonschema.validate(report, load_schema())
    return report


def first_nest_placement(report: dict[str, object]) -> list[dict[str, object]]:
    files = report["files"]
    assert isinstance(files, list)
    return files[0]["functions"][0]["nests"][0]["placement"]  # type: ignore[no-any-return]


def test_bluegene_daxpy_attains_2_4_gflops(capsys: pytest.CaptureFixture[str]) -> None:
    (placed,) = first_nest_placement(
        run_json(capsys, str(FIXTURES / "daxpy.c"), "--device", "bluegene-q", "--threads", "16")
    )  # the seeds' figure is the node's: all 16 cores
    assert placed["bound"] == "memory"
    assert placed["ridge_flops_per_byte"] == pytest.approx(7.11, abs=0.005)
    assert placed["attainable_flops_per_s"] == pytest.approx(2.4e9)


def test_haswell_triad_uses_the_devices_write_allocate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (placed,) = first_nest_placement(
        run_json(capsys, str(FIXTURES / "triad.c"), "--device", "haswell", "--threads", "14")
    )  # the seeds' 50 GB/s is the socket's
    assert placed["write_allocate"] is True
    assert placed["bytes"] == "40*n"
    assert placed["attainable_flops_per_s"] == pytest.approx(2.5e9)
    (overridden,) = first_nest_placement(
        run_json(
            capsys,
            str(FIXTURES / "triad.c"),
            "--device",
            "haswell",
            "--no-write-allocate",
            "--threads",
            "14",
        )
    )
    assert overridden["bytes"] == "32*n"
    assert overridden["attainable_flops_per_s"] == pytest.approx(50e9 / 16)


def test_h100_sparse_bf16_matmul_seed_figures(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(
        capsys, str(FIXTURES / "bf16_matmul.c"), "--device", "h100", "--sparse", "--size", "N=64"
    )
    (placed,) = first_nest_placement(report)
    assert placed["precision"] == "bf16" and placed["sparse"] is True
    assert placed["ridge_flops_per_byte"] == pytest.approx(590.7, abs=0.05)
    assert placed["intensity_flops_per_byte"] == pytest.approx(21.33, abs=0.01)
    assert placed["attainable_flops_per_s"] == pytest.approx(71.5e12, rel=0.01)
    crossover = placed["crossover"]
    assert isinstance(crossover, dict)
    assert crossover["kind"] == "at" and crossover["size"] == pytest.approx(1772.1, abs=1)


def test_v100_linear_layer_is_compute_bound(capsys: pytest.CaptureFixture[str]) -> None:
    (placed,) = first_nest_placement(
        run_json(capsys, str(FIXTURES / "fp16_linear.c"), "--device", "v100-pcie")
    )
    assert placed["intensity_flops_per_byte"] == pytest.approx(315.08, abs=0.01)
    assert placed["bound"] == "compute"


def test_text_placement_and_unknown_device(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(FIXTURES / "daxpy.c"), "--device", "a100"]) == 0
    out = capsys.readouterr().out
    assert "a100-sxm-80gb fp64: ridge 4.757 F/B, memory-bound" in out
    assert main(["analyze", str(FIXTURES / "daxpy.c"), "--device", "nope"]) == 2
    assert "unknown device 'nope'" in capsys.readouterr().err


def test_devices_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "h100-sxm" in out and "bluegene-q" in out and "7.11 F/B" in out
    assert main(["devices", "show", "H100"]) == 0
    out = capsys.readouterr().out
    assert "989.4 TFLOP/s dense, 1.979 PFLOP/s with 2:4 sparsity" in out
    assert "source: NVIDIA H100" in out


def test_user_device_file_from_config(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    device = tmp_path / "lab.toml"
    device.write_text(
        'schema = 1\nname = "Lab box"\naliases = ["lab"]\nkind = "cpu"\n'
        "write_allocate = true\n"
        '[peaks.fp64]\ndense_flops_per_s = 1e12\nsource = "measured with ERT"\n'
        '[[memory]]\nname = "DRAM"\nlevel = "dram"\nbandwidth_bytes_per_s = 1e11\n'
        'capacity_bytes = 1e11\nsource = "measured with STREAM triad"\n'
    )
    (tmp_path / "pyproject.toml").write_text(
        '[tool.aiscan]\ndevice-files = ["lab.toml"]\ndevices = ["lab"]\n'
    )
    monkeypatch.chdir(tmp_path)
    (placed,) = first_nest_placement(run_json(capsys, str(FIXTURES / "daxpy.c")))
    assert placed["device"] == "lab"
    assert placed["attainable_flops_per_s"] == pytest.approx(1e11 / 12)


def test_roofline_plot_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "roof.png"
    code = main(
        [
            "roofline",
            str(FIXTURES / "daxpy.c"),
            str(FIXTURES / "bf16_matmul.c"),
            "--device",
            "h100",
            "--device",
            "haswell",
            "-o",
            str(png),
        ]
    )
    assert code == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "2 loop nests on 2 devices" in capsys.readouterr().out
    html = tmp_path / "roof.html"
    assert main(["roofline", str(FIXTURES / "daxpy.c"), "--device", "h100", "-o", str(html)]) == 0
    text = html.read_text()
    assert "<svg" in text and "daxpy:6" in text
    assert main(["roofline", str(FIXTURES / "daxpy.c"), "-o", str(png)]) == 2


@pytest.mark.parametrize("model", ["compulsory", "cache"])
def test_html_labels_upper_bound_bytes(tmp_path: Path, model: str) -> None:
    """indirect.c's bytes are a flagged upper bound: the HTML table and tooltips say its AI
    is a lower bound, as the text report does; an exact kernel (daxpy) carries no label."""
    html = tmp_path / "roof.html"
    argv = ["roofline", str(FIXTURES / "indirect.c"), str(FIXTURES / "daxpy.c")]
    assert main([*argv, "--device", "h100", "--model", model, "-o", str(html)]) == 0
    text = html.read_text()
    table = re.findall(r"<tr>(.*?)</tr>", text)  # rows only: the page's script names kernels
    rows = [r for r in table if "<td>" in r and "indirect" in r]
    assert len(rows) == 2
    assert all("(lower bound: bytes are an upper bound)" in r for r in rows)
    daxpy = [r for r in table if "<td>" in r and "daxpy" in r]
    assert daxpy and not any("lower bound" in r for r in daxpy)
    assert "AI 0.03571 F/B (lower bound: bytes are an upper bound)" in text
