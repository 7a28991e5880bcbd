"""C integer literals are read as C reads them (octal `010`, hex, binary, suffixes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aiscan.frontends.c.literals import integer_literal
from aiscan.pipeline import PipelineOptions, lower_source


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0),
        ("7", 7),
        ("010", 8),
        ("02", 2),
        ("0x1F", 31),
        ("0XffUL", 255),
        ("0b101", 5),
        ("42u", 42),
        ("100LL", 100),
        ("08", None),
        ("0x", None),
        ("1.5", None),
    ],
)
def test_integer_literal(text: str, value: int | None) -> None:
    assert integer_literal(text) == value


def test_octal_define_is_a_size_default_of_eight() -> None:
    source = Path(__file__).resolve().parent.parent / "fixtures" / "c" / "loop_forms.c"
    module = lower_source(source.read_text(), str(source), PipelineOptions())
    assert dict(module.size_defaults)["BLOCK"] == 8
