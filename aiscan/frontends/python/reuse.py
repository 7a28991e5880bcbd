"""An editor's earlier lowering of the same file, reused statement by statement.

The language server lowers a file again after each edit, and most of the time goes to
top-level statements the edit did not touch. A statement's lowering depends on the
module-level code (imports, constants), the `def`s and classes it names (by name, the
only way Python code reaches them), where it stands, and which helpers' summaries earlier
statements had already made (a summary is made once, where it is first needed, and its
errors are reported there). So a statement lowers as it did last time when:

* its lines are the same, in the same order among the statements kept (paired by their
  text: `difflib`); where it moved, what its lowering made is moved to its new lines
  (`relines.py`), and where that cannot be done with certainty, or the file's own names
  look like names the lowering makes, only statements at the same place, with the same
  comments and blank lines above them, are kept;
* every `def` or class it names is such a statement too (no changed one: transitively);
* the options, the frameworks' rules and the module-level code other than `def`s and
  classes are the same (`context`), and no `global` statement rebinds a module name;
* each summary its lowering looked up was made before it now if and only if it was
  then, and is a method's now if and only if it was then (`Lowered.lookups`), checked
  as the lowering reaches it: its lowering then takes the same path.

Then the frontend adds what its lowering added last time instead of lowering it. The
lowering only ever adds to its state (the functions, the errors, the summaries of helpers
and methods, the module-level statements), so what each statement added is kept as the
lengths of those lists after it (`Mark`). The kept IR refers to the last parse's nodes
(and its spans to their places), so the new parse gets those nodes in place of its own
for the reused statements (under the new parse's comments and blank lines above them,
which the lowering does not read); where the module they make is not the text (a line
added under a function is its own), nothing is reused.

A statement lowered again reuses summaries too: a call's summary of a helper or method
(`rotate` with the ranks `Attend.forward` gives it) lowers as it did last time when its
`def` is the same node (a reused statement's, so its text and every `def` or class it
names are the same) and each summary its lowering looked up is made, and a method's, now
exactly when it was (`Making`); it then adds the same summaries and errors.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import islice
from typing import TYPE_CHECKING

from aiscan.frontends.python.relines import movable

if TYPE_CHECKING:
    import libcst as cst

    from aiscan.errors import Diagnostic
    from aiscan.frontends.python.expressions import Scope, Summary
    from aiscan.frontends.python.relines import Relines
    from aiscan.ir.nodes import Function, Module

__all__ = [
    "Lowered",
    "Making",
    "Mark",
    "MethodEntry",
    "Reuse",
    "SummaryKey",
    "Trail",
    "reused_statements",
    "statement_lines",
    "words_of",
]

_WORD = re.compile(r"[^\W\d]\w*")
_GLOBAL = re.compile(r"\bglobal\b")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")

SummaryKey = tuple[str, tuple[tuple[str, str, bool], ...], tuple[tuple[str, int], ...]]
MethodEntry = tuple["cst.FunctionDef", "Scope", frozenset[str]]


@dataclass(frozen=True, slots=True)
class Mark:
    """The lowering's state after one top-level statement: the length of each of its lists."""

    functions: int
    errors: int
    done: int
    methods: int
    top_level: int


@dataclass(frozen=True, slots=True)
class Making:
    """How one summary was made (`_Summaries.summary`), for the next lowering to add what
    it added where its lowering would take the same path."""

    definition: cst.FunctionDef
    """The `def` lowered: the next lowering reuses this only for the same node."""
    lookups: dict[SummaryKey, tuple[bool, bool]]
    """The summaries its lowering looked up, and whether each was made, and was a
    method's, before it."""
    done: tuple[tuple[SummaryKey, Summary], ...]
    """The summaries it made, in order: those its lowering needed, then its own."""
    errors: tuple[Diagnostic, ...]


@dataclass(frozen=True)
class Lowered:
    """One whole lowering of a file, as the next lowering of the same file reuses it."""

    text: str
    context: tuple[object, ...]
    module: cst.Module
    lines: tuple[tuple[int, int], ...]
    """The first and last line of each top-level statement (`statement_lines`)."""
    words: tuple[frozenset[str], ...]
    """The identifiers each top-level statement's lines hold."""
    defines: tuple[str | None, ...]
    """The name each top-level `def` or class defines (None for other statements)."""
    marks: tuple[Mark, ...]
    lookups: tuple[dict[SummaryKey, tuple[bool, bool]], ...]
    """For each statement, the summaries its lowering looked up, and whether each was
    made, and was a method's, before the statement."""
    functions: tuple[Function, ...]
    errors: tuple[Diagnostic, ...]
    done: dict[SummaryKey, Summary]
    methods: dict[str, MethodEntry]
    top_level: tuple[cst.CSTNode, ...]
    makings: dict[SummaryKey, Making]
    """How each summary in `done` made by a lowering (not a class's own methods) was made."""


class Trail:
    """What the editor keeps of one file between its lowerings: the last whole one, the
    module it made, and where the statements it reused moved (None where none did), which
    the editor's analysis moves too."""

    def __init__(self) -> None:
        self.last: Lowered | None = None
        self.module: Module | None = None
        self.relines: Relines | None = None


def statement_lines(module: cst.Module, tree: ast.Module) -> list[tuple[int, int]] | None:
    """The first and last line of each of `module`'s top-level statements, from CPython's
    tree of the same text (a decorator's line is its `def`'s first); None where the two
    trees do not pair up statement by statement."""
    import libcst as cst

    nodes = iter(tree.body)
    found: list[tuple[int, int]] = []
    for statement in module.body:
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        parts = list(islice(nodes, count))
        if len(parts) != count or parts[-1].end_lineno is None:
            return None
        decorators = getattr(parts[0], "decorator_list", ())
        start = min([parts[0].lineno, *(d.lineno for d in decorators)])
        found.append((start, parts[-1].end_lineno))
    return None if next(nodes, None) is not None else found


def words_of(text: str, lines: Sequence[tuple[int, int]]) -> tuple[frozenset[str], ...]:
    """The identifiers (and keywords, and words of strings and comments: more is safe) on
    each statement's lines."""
    split = _source_lines(text)
    return tuple(frozenset(_WORD.findall("".join(split[start - 1 : end]))) for start, end in lines)


def _source_lines(text: str) -> list[str]:
    """`text`'s lines as Python numbers them (`\\r\\n`, `\\r` or `\\n` ends one; a form
    feed, which `str.splitlines` would end one at, does not)."""
    return _LINE.findall(text)


@dataclass(frozen=True)
class Reuse:
    """The statements an edit left as they were, and where their lines went."""

    statements: dict[int, int]
    """Each reused statement's index, to its index in the last lowering."""
    lines: dict[int, int]
    """Each line of the reused statements, old to new."""
    regrafted: frozenset[int]
    """The reused statements whose comments and blank lines above them changed: their
    nodes are the last parse's with the new parse's lines above (`Progress.spliced`)."""

    @property
    def moved(self) -> bool:
        return any(old != new for old, new in self.lines.items())


def reused_statements(
    last: Lowered,
    text: str,
    context: tuple[object, ...],
    lines: Sequence[tuple[int, int]],
    defines: Sequence[str | None],
) -> Reuse:
    """Which of `text`'s top-level statements (their `lines`, the names they `define`) lower
    as `last`'s did: the same lines in the same order (moved by lines added or removed
    elsewhere, where the lowering can be moved: `relines.movable`; else at the same place,
    with the comments and blank lines above them), naming no `def` or class that is not."""
    if last.context != context or _GLOBAL.search(text):
        return Reuse({}, {}, frozenset())
    before, now = _source_lines(last.text), _source_lines(text)
    was, where = _with_lines_above(last.lines), _with_lines_above(lines)
    if movable(text) and movable(last.text):
        pairs = _aligned(_texts(before, last.lines), _texts(now, lines))
    else:
        places = {place: index for index, place in enumerate(was)}
        pairs = {
            index: old
            for index, (start, end) in enumerate(where)
            if (old := places.get((start, end))) is not None
            and before[start - 1 : end] == now[start - 1 : end]
        }
    kept = _naming_no_changed(last, pairs, defines)
    moves: dict[int, int] = {}
    for index, old in kept.items():
        (start, _), (old_start, old_end) = lines[index], last.lines[old]
        moves.update((line, line - old_start + start) for line in range(old_start, old_end + 1))
    above = frozenset(  # the comments and blank lines above each, changed
        index
        for index, old in kept.items()
        if before[was[old][0] - 1 : last.lines[old][0] - 1]
        != now[where[index][0] - 1 : lines[index][0] - 1]
    )
    return Reuse(kept, moves, above)


def _texts(split: list[str], places: Sequence[tuple[int, int]]) -> list[str]:
    return ["".join(split[start - 1 : end]) for start, end in places]


def _aligned(old: list[str], new: list[str]) -> dict[int, int]:
    """The statements of the same text in both, in the same order: each new index to its
    old one (the longest runs first, as `difflib` matches lines)."""
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    return {
        block.b + offset: block.a + offset
        for block in matcher.get_matching_blocks()
        for offset in range(block.size)
    }


def _naming_no_changed(
    last: Lowered, pairs: dict[int, int], defines: Sequence[str | None]
) -> dict[int, int]:
    """`pairs` less each statement that names a `def` or class that is not reused: by name,
    transitively."""
    kept = dict(pairs)
    olds = set(kept.values())
    changed = {name for i, name in enumerate(last.defines) if name and i not in olds}
    changed.update(name for i, name in enumerate(defines) if name and i not in kept)
    naming: dict[str, list[int]] = {}
    for index, old in kept.items():
        for word in last.words[old]:
            naming.setdefault(word, []).append(index)
    waiting = list(changed)
    while waiting:
        for index in naming.get(waiting.pop(), ()):
            dropped = kept.pop(index, None)
            if dropped is None:
                continue
            for name in (defines[index], last.defines[dropped]):
                if name and name not in changed:
                    changed.add(name)
                    waiting.append(name)
    return kept


def _with_lines_above(lines: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each statement's lines from the line after the one before it: the comments and blank
    lines above a statement are its node's."""
    return [(1 if i == 0 else lines[i - 1][1] + 1, end) for i, (_, end) in enumerate(lines)]
