"""An earlier lowering moved to the lines its statements stand on now (`relines.py`): every
line it holds moves, in spans, made names, messages and numbered fields, and anything it
cannot move with certainty is refused."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import sympy

import aiscan
from aiscan.algebra import Quotient, symbol
from aiscan.errors import Diagnostic, Severity
from aiscan.frontends.python import lower_python_source
from aiscan.frontends.python.relines import Relines, Unmoved, movable
from aiscan.frontends.python.reuse import Trail
from aiscan.ir.nodes import InlinedFunction, Parallel
from aiscan.span import Span

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "python"
MOVED_TWO = Relines({line: line + 2 for line in range(1, 200)})


def test_a_made_name_moves_each_line_it_holds() -> None:
    assert MOVED_TWO.name("forward_L102_rotate_L72__i25") == "forward_L104_rotate_L74__i25"
    assert MOVED_TWO.name("p_L45_1") == "p_L47_1"
    assert MOVED_TWO.name("trip_L9") == "trip_L11"
    assert MOVED_TWO.name("n_embd") == "n_embd"


def test_messages_move_the_lines_they_name() -> None:
    message = "in `rotate` (line 72, called here); lines 5-7 stay"
    assert MOVED_TWO(message) == "in `rotate` (line 74, called here); lines 7-9 stay"
    assert MOVED_TWO("a streamline of 8 bytes") == "a streamline of 8 bytes"


def test_a_span_and_a_diagnostic_move() -> None:
    diagnostic = Diagnostic(Span("f.py", 3, 5, 4, 9), Severity.ERROR, "`x` at line 3")
    moved = MOVED_TWO(diagnostic)
    assert moved == Diagnostic(Span("f.py", 5, 5, 6, 9), Severity.ERROR, "`x` at line 5")


def test_numbered_lines_move_by_their_fields_name() -> None:
    parallel = Parallel(Span("f.c", 4), "omp parallel for", 8, 3)
    assert MOVED_TWO(parallel) == Parallel(Span("f.c", 6), "omp parallel for", 8, 5)
    inlined = InlinedFunction("f", Span("f.c", 10), (20, 30))
    assert MOVED_TWO(inlined).call_lines == (22, 32)


def test_symbols_are_renamed_with_their_assumptions() -> None:
    trip = symbol("trip_L9", "trip")
    size = symbol("n", "size")
    moved = MOVED_TWO(3 * trip * size + trip)
    assert moved == 3 * symbol("trip_L11", "trip") * size + symbol("trip_L11", "trip")
    expression = sympy.floor(sympy.sympify(trip) / 2) + sympy.Symbol("n", positive=True)
    renamed = MOVED_TWO(expression)
    (made,) = [s for s in renamed.free_symbols if s.name.startswith("trip")]
    assert made.name == "trip_L11" and made.is_nonnegative and made.is_integer
    quotient = MOVED_TWO(Quotient(size, trip + 1, factored=True))
    assert quotient.numerator == size and quotient.factored
    assert quotient.denominator == symbol("trip_L11", "trip") + 1


def test_what_is_shared_stays_shared() -> None:
    span = Span("f.py", 4)
    first, second = MOVED_TWO((span, span))
    assert first is second and first.line == 6


def test_a_line_the_map_does_not_hold_is_refused() -> None:
    partial = Relines({1: 1, 2: 3})
    with pytest.raises(Unmoved):
        partial(Span("f.py", 5))
    with pytest.raises(Unmoved):
        partial("trip_L7")
    with pytest.raises(Unmoved):
        partial(object())  # a kind of value it does not know


def test_a_file_with_a_name_like_a_made_one_is_not_moved() -> None:
    assert movable("x = 1\n")
    assert not movable("w_L1 = 2\n")


def test_moving_an_earlier_lowering_gives_the_lowering_of_the_moved_text() -> None:
    """Every function of `loops.py` (made names, spans, messages) moved down three lines
    equals the lowering of the file with three lines above it."""
    text = (FIXTURES / "loops.py").read_text()
    lines = text.count("\n") + 1
    before = lower_python_source(text, "loops.py")
    after = lower_python_source("#\n#\n#\n" + text, "loops.py")
    moved = Relines({line: line + 3 for line in range(1, lines + 1)})
    assert moved(before.functions) == after.functions
    assert any("_L" in str(f) for f in before.functions)  # made names were there to move


def test_a_trail_notes_where_its_lowering_moved() -> None:
    text = "import numpy as np\n\n\ndef f(x: np.ndarray):\n    return x * 2.0\n"
    trail = Trail()
    lower_python_source(text, "f.py", trail=trail)
    assert trail.relines is None  # nothing moved: nothing before it
    lower_python_source("# moved\n" + text, "f.py", trail=trail)
    assert trail.relines is not None and trail.relines.lines[4] == 5


_NOT_MOVED = {
    # The reuse's own bookkeeping, and the Triton frontend's, whose IR is never moved.
    ("aiscan.frontends.python.reuse", "Lowered", "lines"),
    ("aiscan.frontends.python.reuse", "Reuse", "lines"),
    ("aiscan.frontends.triton.launch", "Launch", "lines"),
    ("aiscan.frontends.triton.launch", "_Wrapper", "lines"),
}
_LINE_WORDS = {"line", "lines", "lineno", "linenos"}
_NOT_A_LINE = {"line_bytes"}  # a cache line's size


def test_every_field_that_holds_a_line_is_named_so() -> None:
    """`Relines` moves a number as a line where its field is `line`, `..._line` or
    `..._lines`: a field of another name that holds lines would not move."""
    wrong = []
    for found in pkgutil.walk_packages(aiscan.__path__, "aiscan."):
        if found.name.endswith("__main__"):
            continue
        module = importlib.import_module(found.name)
        for kind in vars(module).values():
            if not isinstance(kind, type) or kind.__module__ != found.name:
                continue
            if not dataclasses.is_dataclass(kind):
                continue
            for field in dataclasses.fields(kind):
                name = field.name
                if _LINE_WORDS.isdisjoint(name.lower().split("_")) or name in _NOT_A_LINE:
                    continue
                if name == "line" or name.endswith(("_line", "_lines")):
                    continue
                if (found.name, kind.__name__, name) not in _NOT_MOVED:
                    wrong.append(f"{found.name}.{kind.__name__}.{name}")
    assert wrong == []


@dataclass(frozen=True)
class _Chain:
    line: int
    loop_line: int | None
    launch_lines: frozenset[int]


def test_numbered_fields_keep_their_type() -> None:
    moved = MOVED_TWO(_Chain(3, None, frozenset({4, 5})))
    assert moved == _Chain(5, None, frozenset({6, 7}))
