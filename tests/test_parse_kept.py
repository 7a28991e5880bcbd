"""The editor lowers a Python text twice (the hovered function, then the whole file): it
is parsed once. A scan lowers each text once and keeps no tree past its file."""

from __future__ import annotations

from typing import Any

import pytest

from aiscan.frontends.python import frontend
from aiscan.frontends.python.frontend import lower_python_source
from aiscan.frontends.python.reuse import Trail

TEXT = """\
import numpy as np


def scale(x: np.ndarray, a: float):
    for i in range(x.shape[0]):
        x[i] = a * x[i]
"""


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts libcst parses from now on, with nothing kept before."""
    parsed: list[str] = []
    original = frontend.cst.parse_module

    def counted(text: Any, *rest: Any, **given: Any) -> Any:
        parsed.append(text)
        return original(text, *rest, **given)

    monkeypatch.setattr(frontend.cst, "parse_module", counted)
    monkeypatch.setattr(frontend, "_LAST_PARSE", {})
    return parsed


def test_the_editors_two_lowerings_of_a_text_parse_it_once(parses: list[str]) -> None:
    hovered = lower_python_source(TEXT, "k.py", through_line=6)
    whole = lower_python_source(TEXT, "k.py", trail=Trail())
    assert parses == [TEXT]
    assert hovered.functions == whole.functions
    lower_python_source(TEXT + "\n", "k.py", trail=Trail())  # an edit: parsed anew
    assert parses == [TEXT, TEXT + "\n"]


def test_a_scan_keeps_no_tree(parses: list[str]) -> None:
    lower_python_source(TEXT, "k.py", through_line=6)
    first = lower_python_source(TEXT, "a.py")
    assert not frontend._LAST_PARSE
    assert lower_python_source(TEXT, "a.py") == first
    assert parses == [TEXT, TEXT, TEXT]
