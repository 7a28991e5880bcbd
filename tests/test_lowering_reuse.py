"""The editor's lowering reuses the statements an edit left as they were (`reuse.py`), and
gives what a lowering of the edited text alone gives: the same IR, the same diagnostics in
the same order."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from aiscan.errors import InputError
from aiscan.frontends.python import frontend, lower_python_source
from aiscan.frontends.python.reuse import Trail
from aiscan.ir.nodes import Module

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "python"
EDITS_PER_FILE = 3


def _lowered(text: str, path: str, trail: Trail | None = None) -> Module | str:
    try:
        return lower_python_source(text, path, trail=trail)
    except InputError as error:
        return str(error.diagnostic)


def _edited(text: str, rng: random.Random) -> str:
    """`text` with one line changed as a person typing would: spaces after it, a blank
    line or a copy of it above it, the line deleted, a digit or a name on it changed."""
    lines = text.splitlines(keepends=True)
    at = rng.randrange(len(lines))
    line = lines[at]
    kind = rng.choice(["spaces", "blank", "copy", "delete", "digit", "name"])
    digits = list(re.finditer(r"\d", line))
    names = list(re.finditer(r"\b[a-z_]\w*\b", line))
    if kind == "spaces":
        lines[at] = line.rstrip("\n") + "  \n"
    elif kind == "blank":
        lines.insert(at, "\n")
    elif kind == "copy":
        lines.insert(at, line)
    elif kind == "delete":
        del lines[at]
    elif kind == "digit" and digits:
        d = rng.choice(digits)
        lines[at] = f"{line[: d.start()]}{(int(d.group()) + 1) % 10}{line[d.end() :]}"
    elif names:
        n = rng.choice(names)
        lines[at] = f"{line[: n.end()]}x{line[n.end() :]}"
    return "".join(lines)


@pytest.fixture
def replays(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each statement a trail could reuse was replayed, from now on."""
    found: list[bool] = []
    original = frontend._Progress.replayed

    def counted(self: Any, index: int, *rest: Any) -> bool:
        replayed = bool(original(self, index, *rest))
        if index in self.reused:
            found.append(replayed)
        return replayed

    monkeypatch.setattr(frontend._Progress, "replayed", counted)
    return found


def test_every_fixture_edited_lowers_as_it_does_alone(replays: list[bool]) -> None:
    rng = random.Random(19)
    statements = 0
    for path in sorted(FIXTURES.glob("*.py")):
        text = path.read_text()
        trail = Trail()
        _lowered(text, str(path), trail)
        for _ in range(EDITS_PER_FILE):
            text = _edited(text, rng)
            with_trail = _lowered(text, str(path), trail)
            assert with_trail == _lowered(text, str(path)), path.name
            statements += len(trail.last.lines) if trail.last else 0
    # The comparison means something only where statements were reused: most were.
    assert sum(replays) > statements / 3


STORED = """\
def stored(x: np.ndarray):
    A = np.zeros((3, 4))
    A[0:3, 0:4] = np.ones((2, 2))
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0
    return A
"""
"""A helper with an error (a store of the wrong shape) and a loop (summarized, not inlined)."""

HELPER_WITH_AN_ERROR = (
    """\
import numpy as np


def caller(a: np.ndarray):
    return stored(a)


"""
    + STORED
)


def test_a_summary_no_longer_made_by_an_earlier_call_is_made_where_its_def_is(
    replays: list[bool],
) -> None:
    """`stored` (a loop: summarized, not inlined) was first lowered for `caller`'s call,
    its error reported there; the edit removes the call, so `stored` is lowered at its
    own `def`, and its error reported there."""
    path = "helper.py"
    trail = Trail()
    before = _lowered(HELPER_WITH_AN_ERROR, path, trail)
    edited = HELPER_WITH_AN_ERROR.replace("return stored(a)", "return a * 2.0 ")
    after = _lowered(edited, path, trail)
    assert isinstance(before, Module) and isinstance(after, Module)
    assert after == _lowered(edited, path)
    errors = [d.message for d in after.diagnostics if "cannot be stored" in d.message]
    assert len(errors) == 1
    # The import is replayed; `stored` is the same text, but its summary is not made.
    assert replays == [True, False]


CALLS_A_LATER_HELPER = """\
import numpy as np


def caller(a: np.ndarray):
    return a + twice(a)


def twice(x: np.ndarray):
    return x * 2.0
"""


def test_a_caller_of_an_edited_helper_is_lowered_again() -> None:
    path = "later.py"
    trail = Trail()
    _lowered(CALLS_A_LATER_HELPER, path, trail)
    edited = CALLS_A_LATER_HELPER.replace("return x * 2.0", "return x * x * 2.0")
    after = _lowered(edited, path, trail)
    assert isinstance(after, Module)
    assert after == _lowered(edited, path)
    caller = next(f for f in after.functions if f.name == "caller")
    assert caller != _caller_before(path)  # the call's work is the helper's new work


def _caller_before(path: str) -> object:
    module = _lowered(CALLS_A_LATER_HELPER, path)
    assert isinstance(module, Module)
    return next(f for f in module.functions if f.name == "caller")


def _llama_on_a_trail() -> tuple[Path, str, Trail, Sequence[Any]]:
    """The Llama block lowered on a trail: its path, text, trail and top-level nodes."""
    path = FIXTURES / "torch_llama.py"
    text = path.read_text()
    trail = Trail()
    _lowered(text, str(path), trail)
    assert trail.last is not None
    return path, text, trail, trail.last.module.body


def test_an_edit_to_the_last_class_lowers_that_class_alone(replays: list[bool]) -> None:
    """Of the Llama block, an edit to `Layer.forward` leaves the eight statements before
    it (the imports, the settings, `Norm`, `rotate`, `widen`, `Attend`, `Gated`) as they
    were: their nodes and their IR are the last lowering's."""
    path, text, trail, before = _llama_on_a_trail()
    edited = text.replace("return h + self.gated", "return h - self.gated")
    after = _lowered(edited, str(path), trail)
    assert after == _lowered(edited, str(path))
    now = trail.last.module.body
    kept = [i for i, (a, b) in enumerate(zip(before, now, strict=True)) if a is b]
    assert kept == list(range(len(now) - 1))
    assert all(replays) and len(replays) == len(now) - 1


def test_a_line_added_under_a_function_is_its_own() -> None:
    """An indented line added after a function's last line belongs to that function,
    though its old lines are all there: it is lowered again."""
    path = "under.py"
    trail = Trail()
    _lowered(CALLS_A_LATER_HELPER, path, trail)
    edited = CALLS_A_LATER_HELPER.replace(
        "    return a + twice(a)\n", "    return a + twice(a)\n    return a\n"
    )
    assert _lowered(edited, path, trail) == _lowered(edited, path)


PAGED = """\
import numpy as np
\x0c

def caller(a: np.ndarray):
    return a + twice(a)


def twice(x: np.ndarray):
    y = x * 2.0
    return y
"""


def test_form_feeds_do_not_end_lines() -> None:
    """A form feed (old files' page breaks) ends no line for Python: counted as one,
    `caller`'s lines would be read one line early, miss its call of `twice`, and keep
    `caller` as it was after `twice` changed."""
    path = "pages.py"
    trail = Trail()
    _lowered(PAGED, path, trail)
    edited = PAGED.replace("y = x * 2.0", "y = x * x * 2.0")
    assert _lowered(edited, path, trail) == _lowered(edited, path)


def test_a_line_added_at_the_top_moves_every_later_statement(replays: list[bool]) -> None:
    """Every statement but the first of each fixture (whose lines above it grew) is
    replayed, moved a line down (`relines.py`), and the file lowers as it does alone."""
    moved, short = 0, []
    for path in sorted(FIXTURES.glob("*.py")):
        text = path.read_text()
        trail = Trail()
        if not isinstance(_lowered(text, str(path), trail), Module) or trail.last is None:
            continue
        replays.clear()
        edited = "# a line added\n" + text
        assert _lowered(edited, str(path), trail) == _lowered(edited, str(path)), path.name
        assert trail.relines is not None or len(trail.last.lines) == 1, path.name
        moved += sum(replays)
        if sum(replays) < len(trail.last.lines) - 1:
            short.append(path.name)
    assert moved > 400
    assert short == []


MADE_NAME_IN_THE_TEXT = """\
import numpy as np


def f(x_L2: np.ndarray):
    for i in range(x_L2.shape[0]):
        x_L2[i] = x_L2[i] * 2.0


def g(x: np.ndarray):
    for i in range(x.shape[0]):
        x[i] = x[i] + 1.0
"""


def test_a_file_naming_like_a_made_name_is_not_moved(replays: list[bool]) -> None:
    """`x_L2` would read as a name the lowering made, holding line 2: nothing is moved,
    and only the statements that stand where they stood are reused."""
    trail = Trail()
    _lowered(MADE_NAME_IN_THE_TEXT, "made.py", trail)
    edited = "# a line\n" + MADE_NAME_IN_THE_TEXT
    assert _lowered(edited, "made.py", trail) == _lowered(edited, "made.py")
    assert trail.relines is None and replays == []


def test_a_blank_line_above_a_class_lowers_nothing_again(replays: list[bool]) -> None:
    """Enter pressed above `Attend`, which `Layer` builds on: every statement is replayed,
    `Attend` under its new blank line (its node the last one's, with the new lines above
    it) and the rest moved a line down, and the file lowers as it does alone."""
    path, text, trail, before = _llama_on_a_trail()
    edited = text.replace("\nclass Attend", "\n\nclass Attend")
    assert _lowered(edited, str(path), trail) == _lowered(edited, str(path))
    now = trail.last.module.body
    assert all(replays) and len(replays) == len(now)
    attend = next(
        i for i, s in enumerate(now) if getattr(s, "name", None) and s.name.value == "Attend"
    )
    assert now[attend] is not before[attend] and now[attend].body is before[attend].body
    assert len(now[attend].leading_lines) == len(before[attend].leading_lines) + 1


@pytest.fixture
def lowered_helpers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The helpers and methods whose summaries were lowered (not reused), from now on."""
    found: list[str] = []
    lower, method = frontend._Summaries._lower, frontend._Summaries.method

    def counted_lower(self: Any, definition: Any, *rest: Any) -> Any:
        found.append(definition.name.value)
        return lower(self, definition, *rest)

    def counted_method(self: Any, qualified: str, *rest: Any) -> Any:
        found.append(qualified)
        return method(self, qualified, *rest)

    monkeypatch.setattr(frontend._Summaries, "_lower", counted_lower)
    monkeypatch.setattr(frontend._Summaries, "method", counted_method)
    return found


def test_an_edit_in_a_caller_reuses_the_summaries_it_made_of_unchanged_helpers(
    lowered_helpers: list[str],
) -> None:
    """`Attend.forward` calls `rotate` with ranks its code does not give it: two
    specializations of `rotate`, made while `Attend` is lowered. An edit in `Attend`
    lowers `Attend` and `Layer` again, but not `rotate`, whose `def` is unchanged; moved a
    line down by a line added at the top, too."""
    path, text, trail, _ = _llama_on_a_trail()
    edited = text.replace("q, k = rotate(q, k, cos, sin)", "q, k = rotate(q, k, cos, sin)  ")
    assert _lowered(edited, str(path), trail) == _lowered(edited, str(path))
    assert "rotate" in lowered_helpers  # the lowering alone
    lowered_helpers.clear()
    moved = "\n" + edited.replace("self.o(y.transpose", "self.o( y.transpose")
    assert _lowered(moved, str(path), trail) == _lowered(moved, str(path))
    assert "rotate" in lowered_helpers  # the lowering alone
    lowered_helpers.clear()
    assert _lowered(moved, str(path), trail) == _lowered(moved, str(path))
    assert "rotate" in lowered_helpers
    assert trail.last is not None
    assert sum(key[0] == "rotate" and key[2] != () for key in trail.last.makings) == 2


SPECIALIZED_HELPERS = (
    """\
import numpy as np


def first(n: int):
    a = np.ones(n, dtype=np.float32)
    return a


def caller(n: int):
    a = np.ones(n, dtype=np.float32)
    return scaled(a)


def scaled(x: np.ndarray):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0
    return stored(x)


"""
    + STORED
)


def _helpers_lowered_by_edit(edited: str, found: list[str]) -> tuple[Module, list[str]]:
    """`SPECIALIZED_HELPERS` lowered on a trail, then `edited`: its module (checked to be
    the lowering alone's) and the helpers the edit's lowering lowered."""
    path = "specialized.py"
    trail = Trail()
    _lowered(SPECIALIZED_HELPERS, path, trail)
    found.clear()
    after = _lowered(edited, path, trail)
    lowered = list(found)
    assert isinstance(after, Module) and after == _lowered(edited, path)
    return after, lowered


def test_a_reused_summary_adds_the_summaries_and_errors_its_lowering_made(
    lowered_helpers: list[str],
) -> None:
    """`caller` makes `scaled`'s summaries (for float64, and for its float32 array), and
    they make `stored`'s, whose error is reported there. An edit in `caller` reuses all
    four, and reports the error once, as the lowering alone does."""
    edited = SPECIALIZED_HELPERS.replace("return scaled(a)", "return scaled(a) ")
    after, lowered = _helpers_lowered_by_edit(edited, lowered_helpers)
    assert lowered == ["caller"]
    errors = [d for d in after.diagnostics if "cannot be stored" in d.message]
    assert len(errors) == 1


def test_a_summary_whose_helpers_are_made_earlier_now_is_lowered_again(
    lowered_helpers: list[str],
) -> None:
    """An edit makes `first` call `stored`: its summaries are then made before `caller`
    (reused: their lowering looks nothing up), so `scaled`'s lowering would not make them:
    `scaled` is lowered again, and `stored`'s error is reported at `first`'s call, once."""
    edited = SPECIALIZED_HELPERS.replace("    return a\n", "    return stored(a)\n", 1)
    after, lowered = _helpers_lowered_by_edit(edited, lowered_helpers)
    assert lowered == ["first", "caller", "scaled", "scaled"]
    errors = [d for d in after.diagnostics if "cannot be stored" in d.message]
    assert len(errors) == 1


def test_a_trail_holds_its_last_lowering_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The trail keeps the last lowering, whose method scopes refer to its summaries; they
    must not hold the lowering before it (its makings, its moves), and so on back: each
    edit's lowering would then be kept for the rest of the session (2 MiB an edit). Only
    this test's lowerings are counted (other tests' trails may still be alive)."""
    import gc
    import weakref

    made: list[weakref.ref[Any]] = []
    initialized = frontend._Summaries.__init__

    def noted(self: Any, *arguments: Any) -> None:
        initialized(self, *arguments)
        made.append(weakref.ref(self))

    monkeypatch.setattr(frontend._Summaries, "__init__", noted)
    path, text, trail, _ = _llama_on_a_trail()
    for edit in range(6):
        moved = "\n" * (edit % 2 + 1) + text.replace(
            "return h + self.gated", f"return h+ {edit}*self.gated"
        )
        _lowered(moved, str(path), trail)
    gc.collect()
    assert len(made) == 7
    assert sum(ref() is not None for ref in made) <= 2
