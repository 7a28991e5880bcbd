"""An annotation's head word (`ndarray` of `np.ndarray`, `Optional` of `typing.Optional`)
is read off the node where its code is plain, and off its code elsewhere: both readings
must agree, parentheses, spaced dots and line continuations included."""

from __future__ import annotations

import libcst as cst
import pytest

from aiscan.frontends.python.annotations import _last_word

_SPELLINGS = (
    "ndarray",
    "np.ndarray",
    "numpy.typing.NDArray",
    "(np.ndarray)",
    "(np).ndarray",
    "np . ndarray",
    "np. ndarray",
    "(np.\n ndarray)",
    "typing.Optional",
    "jaxtyping.Float32",
    "x[1]",
    "f().ndarray",
)


@pytest.mark.parametrize("spelling", _SPELLINGS)
def test_the_head_word_is_what_follows_the_codes_last_dot(spelling: str) -> None:
    node = cst.parse_expression(spelling)
    assert _last_word(node) == cst.Module([]).code_for_node(node).rpartition(".")[2]


def test_a_plain_head_is_read_without_its_code() -> None:
    """The readings differ where the code has a space after the dot: the code's is kept."""
    assert _last_word(cst.parse_expression("np.ndarray")) == "ndarray"
    assert _last_word(cst.parse_expression("np. ndarray")) == " ndarray"
