"""`aiscan roofline` and `graph` as users run them: directories, the sizes `analyze` uses,
text kept as text in SVG, axes clamped to the data."""

from __future__ import annotations

from pathlib import Path

import pytest

from aiscan.cli import main

ROOT = Path(__file__).resolve().parent.parent
C = ROOT / "fixtures" / "c"
DEFINED = """\
#define N 4096
void scale(const double *restrict x, double *restrict y)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            y[i * N + j] = 3.0 * x[i * N + j];
}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_roofline_accepts_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    for name in ("daxpy.c", "triad.c"):
        (kernels / name).write_text((C / name).read_text())
    output = tmp_path / "plot.svg"
    code, out, err = run(capsys, "roofline", str(kernels), "--device", "h100", "-o", str(output))
    assert (code, err) == (0, "")
    assert out == f"wrote {output} (2 loop nests on 1 device)\n"
    assert output.read_text().count("<svg") == 1


def test_graph_says_it_takes_one_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "graph", str(C))
    assert (code, out) == (2, "")
    assert "graph: takes one source file" in err and "is a directory" in err


def test_roofline_uses_define_defaults_and_sizes_like_analyze(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from aiscan.config import Config
    from aiscan.options import PlacementOptions
    from aiscan.pipeline import PipelineOptions, analyze_path
    from aiscan.roofline.devices import load_devices
    from aiscan.roofline.kernels import module_kernels

    path = tmp_path / "defined.c"
    path.write_text(DEFINED)
    analysis = analyze_path(str(path), PipelineOptions()).analysis
    assert analysis is not None and dict(analysis.sizes) == {"N": 4096}
    options = PlacementOptions(devices=(load_devices().get("h100"),))
    (spec,) = module_kernels([analysis], options)
    assert spec.flops == 4096**2  # evaluated at N = 4096, as `analyze` does
    assert spec.bytes_moved == 16 * 4096**2
    del Config  # only imported to show where sizes come from


def test_svg_keeps_text_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "plot.svg"
    code, _, _ = run(capsys, "roofline", str(C / "daxpy.c"), "--device", "h100", "-o", str(output))
    assert code == 0
    svg = output.read_text()
    assert "<text" in svg and "Arithmetic intensity" in svg


def test_html_tables_fit_markers_have_tooltips_and_crossovers_are_decimals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "report.html"
    code, _, _ = run(
        capsys, "roofline", str(C / "time_stencil.c"), str(C / "daxpy.c"), "--device", "h100",
        "--model", "compulsory", "-o", str(output),
    )  # fmt: skip  # crossovers are a compulsory-model answer; the cache model is the default
    assert code == 0
    page = output.read_text()
    assert "width: 100%" in page and '<div class="table"><table>' in page
    assert (
        '<g id="kernel:daxpy.c:daxpy:6:h100-sxm"><title>daxpy.c:daxpy:6 on h100-sxm (fp64), '
        "AI 0.08333 F/B, memory-bound, 279.2 GFLOP/s</title>" in page
    )
    assert '<g id="path:time_stencil.c:jacobi_1d:4:h100-sxm"><title>' in page
    table = page[page.index("<h2>Placement</h2>") :]
    assert "sqrt" not in table  # the jacobi crossover's exact root is a surd
    # jacobi's 2 adds and a division per point: no multiply to pair with, so its in-core
    # ceiling is 3/4 of the FMA peak (25.5 TFLOP/s) and the ridge it crosses 7.612 F/B
    # T only bounds the time loop: held, not swept with n (it was "T = n ≈ 61.57")
    assert "in n: depends on T (held, not swept)" in table and "T = n" not in table
