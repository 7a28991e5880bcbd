"""Values the command line cannot use are one-line usage errors (exit 2), never internal
errors (issue 35, item 15); device files and configurations are named in the message."""

from __future__ import annotations

from pathlib import Path

import pytest

from aiscan.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DAXPY = str(FIXTURES / "c" / "daxpy.c")
L4 = Path(__file__).resolve().parent.parent / "rules" / "devices" / "l4.toml"


def _usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == 2
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("aiscan: error: ")
    return lines[0].removeprefix("aiscan: error: ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--size", "n=²"], "--size n=²: expected NAME=INTEGER"),
        (
            ["--size", "n=" + "9" * 5000],
            "--size n=" + "9" * 28 + "... (5002 characters): sizes are below 2**64",
        ),
        (["--size", "n=18446744073709551616"], "sizes are below 2**64"),
        (["--size", "n=0"], "--size n=0: sizes are positive"),
        (["--timeout", "nan"], "--timeout nan: expected seconds from 0 (no limit) to 1e+06"),
        (["--timeout", "inf"], "--timeout inf: expected seconds"),
        (["--timeout", "-1"], "--timeout -1: expected seconds"),
        (["--special-weight", "-1"], "--special-weight -1: expected 0 or more FLOPs per call"),
    ],
)
def test_option_values_that_parse_but_cannot_be_used(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert message in _usage_error(capsys, "analyze", DAXPY, *argv)


def test_sizes_below_the_limit_still_evaluate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", DAXPY, "--size", "n=+0018446744073709551615"]) == 0
    assert "[n=18446744073709551615]" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("figure", "shown"), [("inf", "inf"), ("5e-324", "5e-324"), ("1e31", "1e+31")]
)
def test_a_device_figure_out_of_range_names_the_file_and_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, figure: str, shown: str
) -> None:
    text = L4.read_text().replace('aliases = ["l4"]', 'aliases = ["l4-test"]')
    text = text.replace("NVIDIA L4 24GB", "Test L4").replace("300e9", figure)
    device_file = tmp_path / "odd.toml"
    device_file.write_text(text)
    message = _usage_error(
        capsys, "analyze", DAXPY, "--device-file", str(device_file), "--device", "l4-test"
    )
    assert message == (
        f"{device_file}: field 'memory[0].bandwidth_bytes_per_s': expected a positive number "
        f"in SI units, from 1e-12 to 1e+30, got {shown}"
    )


def test_a_device_file_that_is_not_utf8(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    device_file = tmp_path / "latin1.toml"
    device_file.write_bytes(b'schema = 1\nname = "caf\xe9"\n')
    message = _usage_error(
        capsys, "analyze", DAXPY, "--device-file", str(device_file), "--device", "cafe"
    )
    assert message.startswith(f"{device_file}: not valid UTF-8: ")


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("pyproject.toml", "tool = 5\n", "[tool.aiscan] must be a table"),
        ("aiscan.toml", "cache-dir = 5\n", "cache-dir must be a directory name"),
        ("aiscan.toml", 'cache-dir = ""\n', "cache-dir must be a directory name"),
        ("aiscan.toml", "special-weight = -3\n", "special-weight must be 0 or more FLOPs per call"),
    ],
)
def test_configuration_values_of_the_wrong_kind(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, text: str, problem: str
) -> None:
    config = tmp_path / name
    config.write_text(text)
    message = _usage_error(capsys, "analyze", DAXPY, "--config", str(config))
    assert message == f"{config}: {problem}"


def test_roofline_into_a_missing_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    output = tmp_path / "missing" / "roof.png"
    message = _usage_error(capsys, "roofline", DAXPY, "--device", "h100", "-o", str(output))
    assert message == f"-o {output}: no such directory {output.parent}"
    assert not output.parent.exists()
