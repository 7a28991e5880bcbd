"""The text outputs read as English: counts agree with their nouns, names are not nested in
brackets twice, a figure is not printed twice, and every command's help has examples that
run (issue 34, "Text that reads well")."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import pytest

from aiscan.cli import _EXAMPLES, _TOP_EXAMPLES, _parser, main
from aiscan.sources import LANGUAGES
from aiscan.span import Span

ROOT = Path(__file__).resolve().parent.parent


def _out(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    main(["analyze", "--no-cache", *argv])
    return capsys.readouterr().out


def test_one_line_spans_say_line_not_lines() -> None:
    assert Span("k.c", 7).labelled() == "line 7"
    assert Span("k.c", 7, end_line=12).labelled() == "lines 7-12"


def test_a_contraction_convention_says_what_it_counts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = tmp_path / "mm.py"
    source.write_text(
        "import numpy as np\nimport numpy.typing as npt\n\n"
        "def mm(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]):\n"
        "    return a @ b\n"
    )
    out = _out(capsys, str(source))
    assert "loop nest, line 5\n" in out
    line = next(x for x in out.splitlines() if "also quoted" in x)
    # Was `2*a_d0*b_d0*b_d1 (2*a_d0*b_d0*b_d1 convention)`: the figure named by itself.
    figure, said = line.split("also quoted")[1].strip().split("   ")
    assert figure.startswith("2*") and figure.count("_d") == 3
    assert said == "(2 FLOPs per multiply-add, the figure ML tooling quotes)"


def test_a_single_element_temporary_is_singular(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = tmp_path / "t.py"
    source.write_text(
        "import numpy as np\nimport numpy.typing as npt\n\n"
        "def f(x: npt.NDArray[np.float64]):\n"
        "    s = np.sum(x * x)\n"
        "    return np.sqrt(np.sum(x) * s)\n"
    )
    out = _out(capsys, str(source))
    assert " 1 elements" not in out


def test_a_named_main_memory_is_not_bracketed_twice(capsys: pytest.CaptureFixture[str]) -> None:
    out = _out(
        capsys, str(ROOT / "fixtures/c/dgemm_ijk.c"), "--device", "epyc-9654", "--threads", "96"
    )
    assert "memory-bound at DRAM (DDR5-4800, 12 channels)" in out


def test_each_levels_intensity_is_printed_once(capsys: pytest.CaptureFixture[str]) -> None:
    out = _out(capsys, str(ROOT / "fixtures/c/dgemm_ijk.c"), "--device", "h100")
    placed = next(x for x in out.splitlines() if "cache model, AI per level" in x)
    rest = next(x for x in out.splitlines() if "cache traffic, AI at levels without a roof" in x)
    assert "HBM3" in placed
    assert "HBM3" not in rest
    assert rest.split(": ", 1)[1] == "L1/shared n/(8*n + 4) F/B, L2 n/(68*n + 64) F/B"


def test_a_call_to_a_function_of_the_same_file_is_counted_inline(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = tmp_path / "calls.c"
    source.write_text(
        "void scale(int n, double *x) { for (int i = 0; i < n; i++) x[i] *= 2.0; }\n"
        "void twice(int n, double *x) {\n"
        "  for (int t = 0; t < 2; t++) scale(n, x);\n"
        "}\n"
    )
    out = _out(capsys, str(source))
    assert "call to unknown function `scale`" not in out
    assert "not counted" not in out
    twice = out[out.index("function twice") :]
    assert "FLOPs       2*n   [mul 2*n]" in twice
    assert "  inlined: scale (line 1), called at line 3\n" in twice


def test_every_command_help_has_examples_that_parse(capsys: pytest.CaptureFixture[str]) -> None:
    parser = _parser()
    commands = {"analyze", "graph", "devices", "roofline", "calibrate", "check", "rule", "lsp"}
    assert set(_EXAMPLES) == commands
    for command in commands:
        with pytest.raises(SystemExit):
            parser.parse_args([command, "--help"])
        assert "examples:\n  aiscan " in capsys.readouterr().out
        for example in _EXAMPLES[command]:
            command_line = example.split("   (")[0]  # a trailing `   (comment)`
            pipeline = command_line.split("|")
            words = shlex.split(pipeline[-1] if command_line.startswith("cat") else pipeline[0])
            assert words[0] == "aiscan"
            parser.parse_args(words[1:])  # raises SystemExit on an unknown flag


def _commands() -> dict[str, argparse.ArgumentParser]:
    (commands,) = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


def test_every_option_of_every_command_says_what_it_does() -> None:
    """`check --output-format` listed its five formats and said nothing of them."""
    silent = [
        f"{name} {'/'.join(action.option_strings) or action.metavar or action.dest}"
        for name, command in _commands().items()
        for action in command._actions
        if not action.help
    ]
    assert silent == []


def test_the_paths_help_names_every_language_read() -> None:
    """`analyze`, `roofline` and `graph` said "C or Python" after CUDA landed."""
    for name in ("analyze", "roofline", "graph"):
        (path,) = [a for a in _commands()[name]._actions if a.dest in ("files", "file")]
        assert path.help is not None
        for suffix in LANGUAGES:
            assert f"{suffix}," in path.help or f"{suffix})" in path.help, (name, suffix)
        assert "CUDA" in path.help


def test_the_top_level_help_has_examples_that_parse(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _parser().parse_args(["--help"])
    out = capsys.readouterr().out
    assert "read from C and NumPy source" not in out and "CUDA" in out
    assert "examples:\n  aiscan analyze " in out
    assert "exit 1 when there are any" not in out  # notes never fail the run
    for example in _TOP_EXAMPLES:
        _parser().parse_args(shlex.split(example)[1:])


@pytest.mark.parametrize(
    ("command", "flag", "words"),
    [
        ("analyze", "--format", "versioned report"),
        ("graph", "--format", "Graphviz"),
        ("devices", "{list,show}", "every figure's source"),
        ("analyze", "--dtype", "bf16"),
    ],
)
def test_choices_have_help(
    capsys: pytest.CaptureFixture[str], command: str, flag: str, words: str
) -> None:
    with pytest.raises(SystemExit):
        _parser().parse_args([command, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert words in out.split(flag, 2)[-1]


def test_the_progress_line_escapes_the_scanned_names(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from aiscan.scan import _Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("CI", raising=False)
    stream = Terminal()
    bar = _Progress(stream, total=20, done=0)
    bar.advance("src/\x1b]0;owned\x07k.c")
    written = stream.getvalue()
    assert "\x07" not in written and "]0;owned" in written
    assert written.count("\x1b") == 1  # the bar's own clear-line, not the name's


def test_devices_show_lists_the_measured_figures(capsys: pytest.CaptureFixture[str]) -> None:
    main(["devices", "show", "h100"])
    out = capsys.readouterr().out
    section = out.split("attainable (measured; used with --roof attainable)\n")[1]
    assert section.startswith("  fp64_tensor  56.94 TFLOP/s\n")
    assert "  HBM3         3.031 TB/s\n" in section


def test_attainable_roofs_say_which_figures_are_measured(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = _out(capsys, str(ROOT / "fixtures/c/daxpy.c"), "--device", "h100", "--roof", "attainable")
    assert (
        "note: roofs from --roof attainable: fp64 peak datasheet (none measured), HBM3 measured"
    ) in out


def test_the_html_table_places_at_the_sizes_analyze_uses(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    page = tmp_path / "r.html"
    argv = [str(ROOT / "fixtures/c/time_stencil.c"), "--device", "h100", "--size", "T=10"]
    main(["roofline", *argv, "-o", str(page)])
    analyzed = _out(capsys, *argv)
    # analyze: T cancels; the table had FLOPs at T = 10 over bytes in T, and "-> 0 FLOP/s".
    assert "cache model, AI per level: HBM3 3*(n - 2)/(16*(2*n - 3)) F/B" in analyzed
    text = page.read_text()
    assert "3*(n - 2)/(16*(2*n - 3))" in text
    assert "8*T*" not in text
    assert "→ 314.1 GFLOP/s as sizes grow" in text


def test_the_lens_puts_the_unit_after_each_figure(tmp_path: Path) -> None:
    from aiscan.lsp.document import analyze_document, settings_for
    from aiscan.lsp.hover import lens_title

    (tmp_path / "aiscan.toml").write_text("sizes = { n = 4096 }\n")
    path = str(tmp_path / "dgemm.c")
    source = (ROOT / "fixtures/c/dgemm_ijk.c").read_text()
    result = analyze_document(source, path, settings_for(path, ()))
    assert result.analysis is not None
    [region] = [r for f in result.analysis.functions for r in f.regions]
    # Was `aiscan: AI n/12 = 341 at the configured sizes F/B · ...`.
    assert lens_title(region, False).startswith(
        "aiscan: AI n/12 F/B = 341 F/B at the configured sizes"
    )


def test_the_path_legend_says_what_sizes_were_drawn(tmp_path: Path) -> None:
    out = tmp_path / "r.svg"
    main(["roofline", str(ROOT / "fixtures/c/dgemm_ijk.c"), "--device", "h100", "-o", str(out)])
    text = out.read_text()
    assert "kernel over sizes (none given: all set to one value, 8 to 65536)" in text
    assert "symbols without a value" not in text
