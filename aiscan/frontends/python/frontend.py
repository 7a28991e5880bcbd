"""Entry point of the Python frontend: source text in, an IR `Module` (or a located error) out.

The code is parsed with libcst and never imported or run. Each top-level `def` is a
function; module-level code with work is the pseudo-function `<module>`. Module-level
integer constants (`N = 1024`) are sizes with a default, as `#define N 1024` is in C.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from itertools import islice

import libcst as cst

from aiscan.errors import Diagnostic, InputError, Severity
from aiscan.frontends.python import dtypes
from aiscan.frontends.python.expressions import (
    CONFIGURATION_REASON,
    TOO_LARGE,
    Binding,
    Opaque,
    Scope,
    Summary,
    number_literal,
)
from aiscan.frontends.python.flax_modules import FLAX_MODULE, field_defaults, field_sizes
from aiscan.frontends.python.frameworks import FrameworkRules, read_frameworks
from aiscan.frontends.python.inference import class_sizes
from aiscan.frontends.python.lowering import FunctionLowering
from aiscan.frontends.python.modules import own_method
from aiscan.frontends.python.names import SourceNames
from aiscan.frontends.python.precision_rules import apply_rules
from aiscan.frontends.python.relines import Relines, Unmoved
from aiscan.frontends.python.reuse import (
    Lowered,
    Making,
    Mark,
    MethodEntry,
    SummaryKey,
    Trail,
    reused_statements,
    statement_lines,
    words_of,
)
from aiscan.frontends.python.symbols import size_symbol
from aiscan.frontends.python.values import Integer, Scalar
from aiscan.given_shapes import GivenShape
from aiscan.ir.nodes import ElementType, Function, Module
from aiscan.span import Span

__all__ = ["lower_python_source"]


def lower_python_source(
    text: str,
    path: str,
    default_dtype: str | None = None,
    *,
    x64: bool | None = None,
    tf32: bool | None = None,
    shapes: Sequence[GivenShape] = (),
    through_line: int | None = None,
    between: Callable[[], None] | None = None,
    trail: Trail | None = None,
) -> Module:
    """Parse and lower one Python file; raises `InputError` when it does not parse.

    `default_dtype` types what nothing in the code types (un-annotated parameters); None
    leaves it to each function's framework (float32 for PyTorch and JAX without x64,
    float64 for NumPy). `x64` and `tf32` are settings that override what the code says
    about its framework's precision (see `frameworks.py`). `shapes` are parameter shapes
    the user states (`--shape`). `through_line` stops after the top-level `def` or class
    holding that line (`_lowered_functions`). `between` is called before each top-level
    statement is lowered, and may raise to stop the lowering (the language server, when
    the editor asks for a line meanwhile). `trail` holds the editor's last whole lowering
    of the file, whose statements an edit left as they were this one reuses
    (`reuse.py`), and gets this one."""
    # The editor lowers a text twice (its hovered function, then the whole file): once
    # parsed. A scan lowers each text once, and keeps no tree past its file.
    syntax, module = _parsed(text, path, keep=trail is not None or through_line is not None)
    rules = read_frameworks(syntax, x64_setting=x64, tf32_setting=tf32)
    defaults = _Defaults(rules, dtypes.dtype_named(default_dtype or ""), shapes)
    progress: _Progress | None = None
    if trail is not None and through_line is None:
        context = _context(path, default_dtype, x64, tf32, shapes, rules, syntax)
        progress = _Progress(trail, context, text, syntax)
        module = progress.spliced(module)
    names = SourceNames(module, syntax, path)
    if progress is not None and not progress.agrees(names, text):
        module = progress.unspliced()
        names = SourceNames(module, syntax, path)
    constants, floats = _module_constants(module)
    size_defaults = tuple(sorted((n, v) for n, v in constants.items() if v is not None))
    bindings: dict[str, Binding] = {
        name: Integer(size_symbol(name), name)
        if value is not None
        else Integer(None, name, TOO_LARGE)
        for name, value in constants.items()
    }
    bindings |= {name: Scalar(dtypes.PYTHON_FLOAT, True, name, constant=True) for name in floats}
    globals_ = Scope(bindings)
    globals_.helpers = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    globals_.classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef)}
    errors: list[Diagnostic] = []
    summaries = _Summaries(names, globals_, defaults, errors)
    globals_.summarize = summaries.summary
    if progress is not None:
        progress.offer(summaries)
    try:
        functions = _lowered_functions(
            module,
            names,
            globals_,
            summaries,
            defaults,
            errors,
            through_line,
            between=between,
            progress=progress,
            needed=_needed(text, module, syntax, through_line),
        )
        if progress is not None:
            progress.keep(module, summaries, errors)
        if summaries.recursed and through_line is not None:
            # Lowered out of the file's order, a cycle of calls is entered elsewhere and
            # cut elsewhere: in the file's order, as the whole file's lowering does it.
            errors = []
            summaries = _Summaries(names, globals_, defaults, errors)
            globals_.summarize = summaries.summary
            functions = _lowered_functions(
                module, names, globals_, summaries, defaults, errors, through_line, False
            )
    finally:
        # The scope and the summaries refer to each other. With the cycle broken, the
        # file's trees and IR are freed the moment it is done, instead of by a collection
        # that must trace them (12,000 objects, 2.4 ms, a Python file: `collector.py`).
        globals_.summarize = None
        # The methods' scopes the trail keeps still refer to these summaries: without the
        # last lowering's makings and moves, they hold this lowering alone, not each
        # earlier one in turn (2 MiB an edit, never freed).
        summaries.earlier, summaries.relines = {}, None
    if rules.frameworks or rules.jit_functions:
        functions = [apply_rules(f, rules) for f in functions]
    notes = tuple(
        Diagnostic(Span(path, line, 1), Severity.NOTE, text) for line, text in rules.notes
    )
    lowered = Module(path, "python", tuple(functions), size_defaults, (*errors, *notes))
    if progress is not None:
        progress.trail.module, progress.trail.relines = lowered, progress.relines
    return lowered


class _Defaults:
    """The dtype of what nothing in a function's code types: the `--python-dtype` setting
    where given, else the default of the function's framework (`frameworks.py`)."""

    def __init__(
        self,
        rules: FrameworkRules,
        setting: ElementType | None,
        shapes: Sequence[GivenShape] = (),
    ) -> None:
        self.rules = rules
        self.setting = setting
        self.shapes = shapes

    def shapes_for(self, function: str) -> dict[str, GivenShape]:
        """The shapes stated for `function`'s parameters: `function.param` wins over a bare
        `param`; among equals the last stated (the command line's after the file's)."""
        found = {s.parameter: s for s in self.shapes if s.function is None}
        found.update({s.parameter: s for s in self.shapes if s.function == function})
        return found

    def __call__(self, function: str) -> tuple[ElementType, str]:
        if self.setting is not None:
            return self.setting, "--python-dtype"
        found = self.rules.default_dtype(function)
        return found if found is not None else (dtypes.FLOAT64, "--python-dtype")


def _lowered_functions(
    module: cst.Module,
    names: SourceNames,
    globals_: Scope,
    summaries: _Summaries,
    defaults: _Defaults,
    errors: list[Diagnostic],
    through_line: int | None = None,
    skip_earlier: bool = True,
    between: Callable[[], None] | None = None,
    progress: _Progress | None = None,
    needed: set[str] | None = None,
) -> list[Function]:
    """The module's functions and methods, and its top-level work as `<module>`.

    With `through_line`, the `def` or class holding that line and no `<module>` (the
    language server's hovered nest, before the rest of the file), lowered as the whole
    file's lowering gives it: a later statement never changes an earlier function, and an
    earlier `def` (`skip_earlier`) is lowered where a call needs it, as its own summary
    is, unless a class comes first (a class's methods are callable only after it, so the
    `def`s before it are lowered before it). Calls in a cycle are cut where the cycle is
    entered, which depends on the order: `_Summaries.recursed` says to lower again in
    the file's order. `progress`: the editor's lowering, which replays the statements it
    reuses and marks the state after each one. `needed`: with `through_line`, the classes
    the `def` or class holding it names (`_needed`); the other classes before it are not
    lowered (none of their state reaches it: a class is reached by its name alone)."""
    functions: list[Function] = []
    top_level: list[cst.CSTNode] = []
    earlier: list[cst.FunctionDef] = []
    classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef)}
    for index, statement in enumerate(module.body):
        if between is not None:
            between()
        if progress is not None:
            progress.begin(summaries)
            if progress.replayed(index, summaries, globals_, functions, errors, top_level):
                progress.mark(functions, errors, summaries, top_level)
                continue
        holds = through_line is not None and _holds(names, statement, through_line)
        if isinstance(statement, cst.FunctionDef):
            if through_line is not None and skip_earlier and not holds:
                earlier.append(statement)
            else:
                functions.append(summaries.lowered(statement))
        elif isinstance(statement, cst.ClassDef):
            if needed is not None and not holds and statement.name.value not in needed:
                continue
            functions += [summaries.lowered(definition) for definition in earlier]
            earlier.clear()
            functions += _methods(statement, names, globals_, summaries, errors, classes)
        elif _is_module_work(statement) and not _binds_constants(statement):
            top_level.append(statement)
        if holds:
            return functions
        if progress is not None:
            progress.mark(functions, errors, summaries, top_level)
    if top_level:
        element, source = defaults("<module>")
        lowering = FunctionLowering(
            names.within(None), globals_.copy(), element, dtype_source=source
        )
        pseudo = lowering.build("<module>", names.span(top_level[0]), top_level)
        pseudo = replace(pseudo, parameters=())  # a script: nothing passed in
        errors += lowering.errors
        if pseudo.regions:
            functions.append(pseudo)
    return functions


class _Summaries:
    """Each top-level function lowered once, on first need: where the module lists it, or
    earlier, where a caller's call needs its summary (`summaries.py`). A summary asked for
    while its own function is being lowered is recursion: it has none."""

    def __init__(
        self,
        names: SourceNames,
        globals_: Scope,
        defaults: _Defaults,
        errors: list[Diagnostic],
    ) -> None:
        self.names = names
        self.globals_ = globals_
        self.defaults = defaults
        self.errors = errors
        self.done: dict[SummaryKey, Summary] = {}
        self.lowering: set[str] = set()
        self.recursed = False
        """Whether a call was cut as recursive (`_lowered_functions`)."""
        self.methods: dict[str, MethodEntry] = {}
        """Each method as its class's earlier methods left `self` (`Class.forward`), for
        lowering it again with the ranks a submodule's call gives (`summaries.py`)."""
        self.looked_up: set[SummaryKey] | None = None
        """The editor's lowering: the summaries the statement being lowered looked up
        (`reuse.py`)."""
        self.replaced = False
        """Whether a class replaced another's methods (two classes of one name): the state
        after a statement is then more than the first entries of `done` and `methods`."""
        self.makings: dict[SummaryKey, Making] = {}
        """How each summary this lowering made (or reused) was made (`reuse.Making`)."""
        self.earlier: Mapping[SummaryKey, Making] = {}
        """The editor's last lowering's makings, reused where they still hold."""
        self.relines: Relines | None = None
        """Where the reused statements moved (`relines.py`), when one did."""
        self._frames: list[set[SummaryKey]] = []
        """The summaries each summary being made has looked up so far, outermost first."""
        self._recursions = 0

    def lowered(self, definition: cst.FunctionDef) -> Function:
        """The function as the module's report shows it (lowered once)."""
        if self.globals_.helpers.get(definition.name.value) is not definition:
            # A `def` the module redefines later: calls reach the later one, not this.
            return self._lower(definition, {}).function
        summary = self.summary(definition.name.value, {}, {})
        assert not isinstance(summary, str)  # nothing is being lowered from here
        return summary.function

    def summary(
        self,
        name: str,
        dtypes_given: Mapping[str, tuple[ElementType, bool]],
        ranks_given: Mapping[str, int] | None = None,
    ) -> Summary | str:
        ranks_given = ranks_given or {}
        key = (
            name,
            tuple(sorted((p, e.name, w) for p, (e, w) in dtypes_given.items())),
            tuple(sorted(ranks_given.items())),
        )
        found = self.done.get(key)
        self._looked_up(key)
        if found is not None:
            return found
        if name in self.lowering:
            self.recursed = True
            self._recursions += 1
            return f"recursive call to `{name}`"
        if name not in self.globals_.helpers and name not in self.methods:
            return f"`{name}` is not lowered before its call"
        if (summary := self._remade(key)) is not None:
            return summary
        self.lowering.add(name)
        self._frames.append(set())
        done_from, errors_from, recursions = len(self.done), len(self.errors), self._recursions
        try:
            if name in self.methods:
                summary = self.method(name, ranks_given)[1]
            else:
                summary = self._lower(self.globals_.helpers[name], dtypes_given, ranks_given)
        finally:
            self.lowering.discard(name)
            looked_up = self._frames.pop()
        self.done[key] = summary
        if self._recursions == recursions:  # a cut cycle depends on where it was entered
            self._note_making(key, looked_up, done_from, errors_from)
        return summary

    def _looked_up(self, key: SummaryKey) -> None:
        if self.looked_up is not None:
            self.looked_up.add(key)
        for frame in self._frames:
            frame.add(key)

    def _definition(self, name: str) -> cst.FunctionDef:
        """The `def` a summary of `name` lowers (`summary`'s choice)."""
        return self.methods[name][0] if name in self.methods else self.globals_.helpers[name]

    def _note_making(
        self, key: SummaryKey, looked_up: set[SummaryKey], done_from: int, errors_from: int
    ) -> None:
        made = tuple(islice(self.done.items(), done_from, None))
        new = {k for k, _ in made}
        lookups = {k: (k in self.done and k not in new, k[0] in self.methods) for k in looked_up}
        errors = tuple(self.errors[errors_from:])
        self.makings[key] = Making(self._definition(key[0]), lookups, made, errors)

    def _remade(self, key: SummaryKey) -> Summary | None:
        """The summary as the last lowering made it, and what it added with it, where its
        lowering now would take the same path (`reuse.Making`); else None."""
        making = self.earlier.get(key)
        if making is None or making.definition is not self._definition(key[0]):
            return None
        for other, (done, method) in making.lookups.items():
            if (other in self.done) != done or (other[0] in self.methods) != method:
                return None
            if not done and other[0] in self.lowering:
                return None  # made then, a cut cycle now
        carried = self.carried([k for k, _ in making.done])
        if carried is None:
            return None
        moved = carried[key]
        self.done.update(moved.done)
        self.errors += moved.errors
        for other in making.lookups:
            self._looked_up(other)
        self.makings.update(carried)
        return self.done[key]

    def carried(self, keys: Sequence[SummaryKey]) -> dict[SummaryKey, Making] | None:
        """The last lowering's makings of `keys` (those it has), moved to this text's lines;
        None where one cannot be moved."""
        found = {k: self.earlier[k] for k in keys if k in self.earlier}
        if self.relines is None or not found:
            return found
        try:
            moved = self.relines([(m.done, m.errors) for m in found.values()])
        except Unmoved:
            return None
        return {
            k: replace(m, done=done, errors=errors)
            for (k, m), (done, errors) in zip(found.items(), moved, strict=True)
        }

    def method(
        self, qualified: str, ranks_given: Mapping[str, int] | None = None
    ) -> tuple[FunctionLowering, Summary]:
        """Lower the method `Class.name` in the state its class's earlier methods left."""
        definition, state, sizes = self.methods[qualified]
        element, source = self.defaults(qualified)
        lowering = FunctionLowering(
            self.names.within(definition),
            state.copy(),
            element,
            class_sizes=sizes,
            dtype_source=source,
            framework=self.defaults.rules.framework(qualified),
            ranks_given=ranks_given,
            shapes_given=self.defaults.shapes_for(qualified),
        )
        function = lowering.function(definition, qualified)
        return lowering, self._summary(lowering, function, state)

    def _summary(
        self, lowering: FunctionLowering, function: Function, state: Scope | None = None
    ) -> Summary:
        notes = tuple(u for u in function.unknowns if u not in lowering.parameter_notes)
        # Sizes every caller names the same: the module's constants, and a Flax module's
        # configuration fields (`self.config.n_head` is `n_head` in every class).
        held = [b for k, b in (state.names.items() if state else ()) if _configuration_key(k)]
        fixed = frozenset(
            b.value
            for b in (*self.globals_.names.values(), *held)
            if isinstance(b, Integer) and b.value is not None and b.value.is_Symbol
        )
        return Summary(
            function,
            tuple(lowering.parameter_bindings.items()),
            tuple(lowering.returns),
            notes,
            fixed,
            frozenset(lowering.candidates),
            frozenset(lowering.merged),
            tuple(lowering.tuple_returns),
        )

    def _lower(
        self,
        definition: cst.FunctionDef,
        dtypes_given: Mapping[str, tuple[ElementType, bool]],
        ranks_given: Mapping[str, int] | None = None,
    ) -> Summary:
        element, source = self.defaults(definition.name.value)
        lowering = FunctionLowering(
            self.names.within(definition),
            self.globals_.copy(),
            element,
            dtypes_given=dtypes_given,
            dtype_source=source,
            framework=self.defaults.rules.framework(definition.name.value),
            ranks_given=ranks_given,
            shapes_given=self.defaults.shapes_for(definition.name.value),
        )
        function = lowering.function(definition)
        if not dtypes_given and not ranks_given:
            self.errors += lowering.errors  # a specialization's errors are the same ones
        return self._summary(lowering, function)


class _Progress:
    """The editor's lowering of a file: the statements it reuses of the last one
    (`reuse.py`), and the state after each statement, kept for the next."""

    def __init__(
        self, trail: Trail, context: tuple[object, ...], text: str, tree: ast.Module
    ) -> None:
        self.trail = trail
        self.context = context
        self.text = text
        self.tree = tree
        self.reused: dict[int, int] = {}
        """Statements whose lowering is replayed: their index to their index in the last."""
        self.relines: Relines | None = None
        """Where the reused statements moved, when one did (`relines.py`)."""
        self.regrafted: dict[int, cst.CSTNode] = {}
        """The last parse's statements (by id) under new lines above: their new nodes."""
        self.lines: list[tuple[int, int]] | None = None
        self.parsed: cst.Module | None = None
        self.marks: list[Mark] = []
        self.lookups: list[dict[SummaryKey, tuple[bool, bool]]] = []
        self.started = (0, 0)
        """The lengths of `done` and `methods` when the statement being lowered began."""
        self.functions: list[Function] = []
        self.top_level: list[cst.CSTNode] = []

    def spliced(self, parsed: cst.Module) -> cst.Module:
        """`parsed`, with the reused statements' nodes in place of its own: the IR kept
        refers to them, and the lowering of the rest may too."""
        self.parsed = parsed
        self.lines = statement_lines(parsed, self.tree)
        last = self.trail.last
        if self.lines is None or last is None:
            return parsed
        defines = [_defined(s) for s in parsed.body]
        reuse = reused_statements(last, self.text, self.context, self.lines, defines)
        self.reused = reuse.statements
        self.relines = Relines(reuse.lines) if reuse.moved else None
        if not self.reused:
            return parsed
        body = []
        for index, statement in enumerate(parsed.body):
            old = self.reused.get(index)
            kept = statement if old is None else last.module.body[old]
            if index in reuse.regrafted:  # the last node, under the new lines above it
                above = statement.leading_lines
                self.regrafted[id(kept)] = kept = kept.with_changes(leading_lines=above)
            body.append(kept)
        return parsed.with_changes(body=body)

    def agrees(self, names: SourceNames, text: str) -> bool:
        """Whether the spliced module is the text's (else nothing is reused)."""
        if self.reused and names.code != text:
            self.reused = {}
            return False
        return True

    def unspliced(self) -> cst.Module:
        assert self.parsed is not None
        return self.parsed

    def offer(self, summaries: _Summaries) -> None:
        """Give the summaries the last lowering's makings, where statements were reused."""
        last = self.trail.last
        if last is not None and self.reused:
            summaries.earlier, summaries.relines = last.makings, self.relines

    def begin(self, summaries: _Summaries) -> None:
        """A statement's lowering starts: note the summaries it looks up."""
        summaries.looked_up = set()
        self.started = (len(summaries.done), len(summaries.methods))

    def replayed(
        self,
        index: int,
        summaries: _Summaries,
        globals_: Scope,
        functions: list[Function],
        errors: list[Diagnostic],
        top_level: list[cst.CSTNode],
    ) -> bool:
        """Whether statement `index` was lowered by adding what its lowering added last
        time: it is reused, and each summary it looked up is made now exactly when it was
        made before it then, and a method's exactly when it was (else its lowering now
        would make another summary, or not, and report that helper's errors elsewhere)."""
        last, old = self.trail.last, self.reused.get(index)
        if last is None or old is None:
            return False
        lookups = last.lookups[old]
        for key, (done, method) in lookups.items():
            if (key in summaries.done) != done or (key[0] in summaries.methods) != method:
                return False
        before = last.marks[old - 1] if old else Mark(0, 0, 0, 0, 0)
        after = last.marks[old]
        added = (
            last.functions[before.functions : after.functions],
            last.errors[before.errors : after.errors],
            list(islice(last.done.items(), before.done, after.done)),
            list(islice(last.methods.items(), before.methods, after.methods)),
        )
        if self.relines is not None:
            try:
                added = self.relines(added)
            except Unmoved:
                return False  # it refers to a line that is no reused statement's
        makings = summaries.carried([key for key, _ in added[2]])
        if makings is None:
            return False
        summaries.makings.update(makings)
        functions += added[0]
        errors += added[1]
        summaries.done.update(added[2])
        for qualified, (definition, state, sizes) in added[3]:
            state = state.copy()  # this module's helpers and summaries, not the last one's
            state.helpers, state.classes = globals_.helpers, globals_.classes
            state.summarize = summaries.summary
            summaries.methods[qualified] = (definition, state, sizes)
        top_level += [
            self.regrafted.get(id(node), node)
            for node in last.top_level[before.top_level : after.top_level]
        ]
        summaries.looked_up = set(lookups)
        return True

    def mark(
        self,
        functions: list[Function],
        errors: list[Diagnostic],
        summaries: _Summaries,
        top_level: list[cst.CSTNode],
    ) -> None:
        """Note the state after one more top-level statement, and which of the summaries
        it looked up were made, and which were methods, before it."""
        lengths = (len(summaries.done), len(summaries.methods), len(top_level))
        self.marks.append(Mark(len(functions), len(errors), *lengths))
        made = set(islice(summaries.done, self.started[0], None))
        methods = set(islice(summaries.methods, self.started[1], None))
        self.lookups.append(
            {
                key: (
                    key in summaries.done and key not in made,
                    key[0] in summaries.methods and key[0] not in methods,
                )
                for key in summaries.looked_up or ()
            }
        )
        summaries.looked_up = None
        self.functions, self.top_level = functions, top_level

    def keep(self, module: cst.Module, summaries: _Summaries, errors: list[Diagnostic]) -> None:
        """Leave this lowering on the trail, for the next."""
        lines = self.lines
        if lines is None or summaries.replaced or len(self.marks) != len(module.body):
            self.trail.last = None
            return
        self.trail.last = Lowered(
            self.text,
            self.context,
            module,
            tuple(lines),
            words_of(self.text, lines),
            tuple(_defined(s) for s in module.body),
            tuple(self.marks),
            tuple(self.lookups),
            tuple(self.functions),
            tuple(errors),
            dict(summaries.done),
            dict(summaries.methods),
            tuple(self.top_level),
            dict(summaries.makings),
        )


def _defined(statement: cst.CSTNode) -> str | None:
    """The name a top-level `def` or class defines."""
    return statement.name.value if isinstance(statement, cst.FunctionDef | cst.ClassDef) else None


def _context(
    path: str,
    default_dtype: str | None,
    x64: bool | None,
    tf32: bool | None,
    shapes: Sequence[GivenShape],
    rules: FrameworkRules,
    tree: ast.Module,
) -> tuple[object, ...]:
    """What decides every statement's lowering at once (`reuse.py`): the options, the
    frameworks' rules, and the module-level code other than `def`s and classes. Not
    where they stand: the rules' lines are only their notes', made after the lowering."""
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    code = tuple(ast.dump(s) for s in tree.body if not isinstance(s, definitions))
    unplaced = replace(
        rules,
        frameworks=dict.fromkeys(rules.frameworks, 0),
        notes=[(0, note) for _, note in rules.notes],
    )
    return (path, default_dtype, x64, tf32, tuple(shapes), unplaced, code)


def _needed(text: str, module: cst.Module, tree: ast.Module, line: int | None) -> set[str] | None:
    """The names of the top-level `def`s and classes that the `def` or class holding `line`
    names, by name and transitively (itself included); None where no `def` or class holds
    it, or the statements' lines cannot be read."""
    if line is None or (lines := statement_lines(module, tree)) is None:
        return None
    defines = [_defined(s) for s in module.body]
    holder = next((i for i, (a, b) in enumerate(lines) if a <= line <= b), None)
    if holder is None or defines[holder] is None:
        return None
    words = words_of(text, lines)
    defining: dict[str, list[int]] = {}
    for index, name in enumerate(defines):
        if name:
            defining.setdefault(name, []).append(index)
    reached, waiting = {holder}, [holder]
    while waiting:
        for word in words[waiting.pop()]:
            for index in defining.get(word, ()):
                if index not in reached:
                    reached.add(index)
                    waiting.append(index)
    return {name for index in reached if (name := defines[index])}


def _holds(names: SourceNames, statement: cst.CSTNode, line: int) -> bool:
    """Whether `statement` is a `def` or a class whose lines hold `line`."""
    if not isinstance(statement, cst.FunctionDef | cst.ClassDef):
        return False
    span = names.span(statement)
    return span.line <= line <= span.end_line


def _methods(
    node: cst.ClassDef,
    names: SourceNames,
    globals_: Scope,
    summaries: _Summaries,
    errors: list[Diagnostic],
    classes: dict[str, cst.ClassDef],
) -> list[Function]:
    """A class's methods, each a function `Class.method`, `__init__` first.

    `self.N` that any method uses as a size is the size `N` everywhere (and `self.N = N`
    in `__init__` makes the parameter that size); arrays a method binds on `self`
    (`self.A = np.zeros((self.N, self.N))`) are seen, with their shapes, by the methods
    lowered after it; others get shapes from the code like un-annotated parameters."""
    methods = [s for s in node.body.body if isinstance(s, cst.FunctionDef)]
    methods.sort(key=lambda m: m.name.value not in ("__init__", "setup"))  # stable
    sizes = frozenset(class_sizes(node))
    state = globals_.copy()
    if any(names.canonical(base.value) == FLAX_MODULE for base in node.bases):
        state.names.update(_flax_fields(node, classes))
        flags, kinds = field_defaults(node, classes, names)
        state.names.update(flags)
        state.names.update({k: Opaque(k, CONFIGURATION_REASON) for k in kinds})
        state.dtypes.update(kinds)
    found: list[tuple[int, Function]] = []
    for method in methods:
        qualified = f"{node.name.value}.{method.name.value}"
        summaries.replaced |= qualified in summaries.methods
        summaries.methods[qualified] = (method, state.copy(), sizes)
        lowering, summary = summaries.method(qualified)
        summaries.done[(qualified, (), ())] = summary  # a submodule's call reuses it
        function = summary.function
        errors += lowering.errors
        for key, binding in lowering.scope.names.items():
            if key.startswith("self.") and not isinstance(binding, Opaque):
                state.names[key] = binding
        state.layers.update(lowering.scope.layers)
        helper = own_method(node.name.value, method)
        if helper is not None:  # `self._norm(x)` in the methods lowered after it
            state.layers[helper[0]] = helper[1]
        found.append((function.span.line, function))
    return [f for _, f in sorted(found, key=lambda pair: pair[0])]


def _configuration_key(key: str) -> bool:
    """`self.config.n_head` or `config.n_head`: a configuration dataclass's field."""
    return key.count(".") == 2 if key.startswith("self.") else key.count(".") == 1


def _flax_fields(node: cst.ClassDef, classes: dict[str, cst.ClassDef]) -> dict[str, Binding]:
    """A Flax module's fields: `int` ones sizes, a configuration dataclass's `int` fields
    sizes (`self.config.n_embd`), the configuration itself read for them only."""
    found: dict[str, Binding] = dict(field_sizes(node, classes))
    for key in {k.rpartition(".")[0] for k in found if k.count(".") >= 1}:
        if key != "self":
            found[key] = Opaque(key, CONFIGURATION_REASON)
    return found


def _unrepresentable(text: str, path: str, reason: str) -> Diagnostic:
    """libcst refuses a tree CPython's parser accepted (`return*x`): code that CPython's
    compiler rejects too, in which case its located message is the better one. Compiling
    only translates; nothing is run."""
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        span = Span(path, error.lineno or 1, error.offset or 1)
        return Diagnostic(span, Severity.ERROR, f"Python syntax error: {error.msg}")
    return Diagnostic(
        Span(path, 1, 1), Severity.ERROR, f"Python code libcst cannot represent: {reason}"
    )


_LAST_PARSE: dict[tuple[str, str], tuple[ast.Module, cst.Module]] = {}
"""The editor's last text parsed, by text and path (`_parsed`)."""


def _parsed(text: str, path: str, *, keep: bool) -> tuple[ast.Module, cst.Module]:
    """CPython's tree and libcst's of `text`, each as immutable as its parser made it (no
    lowering changes a node); with `keep`, the last text's are kept for its next lowering
    (the editor's partial lowering, then the file's: 15 ms of a long file's parse)."""
    key = (text, path)
    if (found := _LAST_PARSE.get(key)) is not None:
        return found
    syntax = _check_with_cpython_parser(text, path)
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        span = Span(path, error.editor_line, error.editor_column)
        message = f"Python syntax error: {error.message}"
        raise InputError(Diagnostic(span, Severity.ERROR, message)) from None
    except cst.CSTValidationError as error:
        raise InputError(_unrepresentable(text, path, str(error))) from None
    _LAST_PARSE.clear()
    if keep:
        _LAST_PARSE[key] = (syntax, module)
    return syntax, module


def _check_with_cpython_parser(text: str, path: str) -> ast.Module:
    """Let CPython's parser (which only parses, never runs) reject input first.

    It bounds nesting safely ("too many nested parentheses"), where libcst's native parser
    can exhaust the C stack and take the whole process down. Its tree also tells
    `SourceNames` what each scope binds.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. SyntaxWarning: not ours to print
            return ast.parse(text, filename=path)
    except SyntaxError as error:
        line = error.lineno or 1
        column = error.offset or 1
        message = f"Python syntax error: {error.msg}"
        raise InputError(
            Diagnostic(Span(path, line, max(column, 1)), Severity.ERROR, message)
        ) from None
    except (RecursionError, MemoryError, ValueError) as error:
        message = f"Python input too deeply nested or too large to parse ({type(error).__name__})"
        raise InputError(Diagnostic(Span(path, 1, 1), Severity.ERROR, message)) from None


def _module_constants(module: cst.Module) -> tuple[dict[str, int | None], set[str]]:
    """Module-level `NAME = <integer literal>`: sizes with a default, or None for a value
    of 2**64 or more, which is no size (an unknown value, as everywhere); and the names of
    `NAME = <float literal>` (`alpha = 1.5`, `eps = -1e-6`): Python floats, weak scalars.
    The last assignment of a name decides."""
    found: dict[str, int | None] = {}
    floats: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            constant = _constant(small)
            if constant is None:
                continue
            name, value = constant
            if isinstance(value, float):
                floats.add(name)
                found.pop(name, None)
            else:
                found[name] = value
                floats.discard(name)
    return found, floats


def _constant(small: cst.BaseSmallStatement) -> tuple[str, int | float | None] | None:
    """`NAME = <integer literal>` (its value, None past 2**64) or `NAME = <float
    literal>`: the name and the value; None for any other statement."""
    if not (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
    ):
        return None
    name, value = small.targets[0].target.value, number_literal(small.value)
    if isinstance(small.value, cst.Integer):
        return name, value if isinstance(value, int) else None
    return (name, value) if isinstance(value, float) else None


def _binds_constants(statement: cst.CSTNode) -> bool:
    """`N = 1000` at the top: already the size `N` (default 1000) in every function and in
    `<module>` itself; lowering it again would make `<module>`'s counts plain numbers."""
    return isinstance(statement, cst.SimpleStatementLine) and all(
        _constant(small) is not None for small in statement.body
    )


def _is_module_work(statement: cst.CSTNode) -> bool:
    """Imports, classes, `if TYPE_CHECKING:` and `if __name__ == ...:` are not kernel code."""
    if isinstance(statement, (cst.ClassDef,)):
        return False
    if isinstance(statement, cst.If):
        test = cst.Module([]).code_for_node(statement.test)
        return "TYPE_CHECKING" not in test and "__name__" not in test
    if isinstance(statement, cst.SimpleStatementLine):
        return not all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)
    return True
