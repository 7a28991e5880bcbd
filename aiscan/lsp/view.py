"""What the editor shows of one document, computed where the analysis runs.

The analysis runs in a child process (`aiscan.lsp.worker`), so what comes back to the
server is plain, picklable data: the diagnostics and, for each loop nest, its hover text
and code-lens title. Hover texts place every nest on every device (up to a tenth of a
second a nest), so they are made here too, inside the same time limit, and the server
itself never computes anything slow. The lint places each nest (AIS001) and the hovers
show the same placements: they are made once, and kept per process across analyses
(`PLACEMENTS`), so an edit re-places only the nests it changed; each function's analysis
(`ANALYSES`) and each Python file's last lowering (`_TRAILS`, `reuse.py`) are kept the
same way, so it lowers and analyzes again only what it changed. The nests are described
before the lint, each sent as it is done, the one the editor hovers on first (from its
own analysis, before its function's and the file's, which find it kept (`REGIONS`); in
Python from its function's lowering, before the rest of the file is lowered): a hover
during a document's first analysis waits for its own nest, not for the whole file.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

from aiscan.analysis.kernel import (
    AnalysisOptions,
    FunctionAnalysis,
    RegionAnalysis,
    analysis_key,
    analyze_module,
)
from aiscan.errors import Diagnostic
from aiscan.ir.nodes import Function, Module, Region
from aiscan.lint.finding import Finding
from aiscan.lsp.document import (
    DocumentAnalysis,
    ServerSettings,
    analyze_document,
    error_at_start,
    lint_context,
    lint_document,
)
from aiscan.lsp.hover import hover_markdown, lens_title
from aiscan.pipeline import lower_source
from aiscan.roofline.devices import Device
from aiscan.roofline.placement import Placement
from aiscan.scan import AnalysisTimedOut, time_limit
from aiscan.sources import language_of
from aiscan.span import Span

if TYPE_CHECKING:
    from aiscan.frontends.python.relines import Relines
    from aiscan.frontends.python.reuse import Trail
    from aiscan.lint.context import LintContext

__all__ = [
    "ANALYSES",
    "PLACEMENTS",
    "REGIONS",
    "DocumentView",
    "NestView",
    "failed_view",
    "place_described_early",
    "view_document",
]


_Value = TypeVar("_Value")


class _Recent(dict[Hashable, _Value]):
    """A memo that forgets its oldest entries past `capacity` (a long session's edits)."""

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity

    def __setitem__(self, key: Hashable, value: _Value) -> None:
        super().__setitem__(key, value)
        while len(self) > self.capacity:
            del self[next(iter(self))]


PLACEMENTS: _Recent[tuple[Placement | str, ...]] = _Recent(512)
"""This process's placements by nest (`LintContext.placement_key`), across analyses."""
ANALYSES: _Recent[FunctionAnalysis] = _Recent(512)
"""This process's analyses by function (`analyze_module`'s memo), across analyses: an edit
re-analyzes the functions it changed."""
REGIONS: _Recent[RegionAnalysis] = _Recent(1024)
"""This process's analyses by region (`analyze_module`'s `region_memo`): a hovered nest
analyzed alone, before its function, is not analyzed again with the function."""


@dataclass(frozen=True)
class NestView:
    span: Span
    hover: str
    """Markdown."""
    lens: str
    described: bool = field(default=True, compare=False)
    """False where the time limit or an error left it undescribed (its text says so)."""


@dataclass(frozen=True)
class DocumentView:
    findings: tuple[Finding, ...]
    errors: tuple[Diagnostic, ...]
    nests: tuple[NestView, ...]
    complete: bool = field(default=True, compare=False)
    """Nothing in it was cut short by the time limit or an error: what the text gives,
    every time, and so worth keeping (`view_store`)."""
    dependencies: tuple[tuple[str, str | None], ...] = field(default=(), compare=False)
    """The files the analysis read besides the text (a C file's headers), with the
    digests of the bytes it read (`Module.dependencies`)."""

    def nest_at(self, line: int) -> NestView | None:
        """The loop nest whose lines (1-based, inclusive) hold `line`."""
        return next((n for n in self.nests if n.span.line <= line <= n.span.end_line), None)


def failed_view(path: str, message: str) -> DocumentView:
    """A document that could not be analyzed: one error on its first line, no nests."""
    return DocumentView((), (error_at_start(path, message),), (), complete=False)


def view_document(
    text: str,
    path: str,
    settings: ServerSettings,
    limit_s: float,
    on_nest: Callable[[NestView], None] = lambda nest: None,
    wanted_line: Callable[[], int | None] = lambda: None,
) -> DocumentView:
    """The document's diagnostics and nests, all within `limit_s`: the nest holding
    `wanted_line()` (the line the editor hovers on) from its function's analysis alone when
    it is asked for before the file's analysis (and, asked before the file is lowered, from
    a Python file's lowering through that function: `lower`), then the analysis, every
    nest's counts, then each nest's placement (the wanted one first), each nest to
    `on_nest` once described, then the lint, which reuses those placements. Whatever the time left
    undone, the nest's hover says so."""
    started = time.monotonic()
    early: dict[Region, NestView] = {}  # by the nest's IR: nests of one line may share a span
    _UNPLACED.clear()  # another document's: its analysis is over

    def lower() -> Module:
        """The whole file's module, the hovered nest described on the way: a Python file's
        from the functions up to its own alone when the editor asked before the file was
        lowered (`lower_source`'s `through_line`: the rest of a long file stood before
        it), or while it was (the file's lowering stops between top-level statements,
        and starts again after), else from the whole file's."""
        line = wanted_line()
        if _lowers_in_part(path, settings):
            trail = _trail(path)
            if line is None:
                try:
                    module = _lowered_on(trail, text, path, settings, stop_if_wanted)
                except _Wanted as wanted:  # asked for during the file's lowering
                    line = wanted.line
                else:
                    describe_wanted(module, wanted_line())
                    return module
            describe_wanted(lower_source(text, path, settings.pipeline, line), line)
            module = _lowered_on(trail, text, path, settings)
        else:
            module = lower_source(text, path, settings.pipeline)
        if not early:
            describe_wanted(module, wanted_line())
        return module

    def stop_if_wanted() -> None:
        line = wanted_line()
        if line is not None:
            raise _Wanted(line)

    def describe_wanted(module: Module, line: int | None) -> None:
        """The hovered nest from its own analysis, before the whole file's (which finds
        its analysis and its placement kept): the function's other nests wait, unless
        the function's analysis is kept already (an edit elsewhere)."""
        found = next(((f, n) for f in module.functions for n in _nests_at(f, line)), None)
        if found is None:
            return
        function, nest = found
        options = settings.pipeline.analysis
        sizes = {**dict(module.size_defaults), **options.sizes}
        if analysis_key(function, options, sizes) not in ANALYSES:
            function = replace(function, regions=(nest,))
        alone = replace(module, functions=(function,))
        analysis = analyze_module(alone, options, ANALYSES, REGIONS)
        context = lint_context(analysis, text, settings, PLACEMENTS)
        part = DocumentAnalysis(analysis, (), (), context)
        region = part.nest_at(line) if line is not None else None
        if region is not None:
            view = _nest_view(region, part, settings.devices, printed_only=True)
            early[region.region] = view
            on_nest(view)

    result = analyze_document(
        text,
        path,
        settings,
        limit_s,
        PLACEMENTS,
        lint=False,
        lower=lower,
        analysis_memo=ANALYSES,
        region_memo=REGIONS,
    )
    regions = list(result.nests())
    views = [_undescribed(region.region.span, limit_s) for region in regions]
    unplaced = f"\n\n_Not placed: placing this file's nests took over {limit_s:g} s._"
    # Each nest's view sent before the file's analysis, if any (a lookup hashes the IR).
    sent = [early.get(r.region) for r in regions] if early else [None] * len(regions)
    complete = not result.stopped
    try:
        with time_limit(_left(started, limit_s)):
            for index, region in enumerate(regions):
                if (view := sent[index]) is not None:
                    views[index] = view
                    continue
                view = _nest_view(region, result, ())
                if settings.devices:
                    view = replace(view, hover=view.hover + unplaced)
                views[index] = view
            for index in _by_demand(regions, wanted_line):
                if sent[index] is not None:
                    continue  # sent before the whole file's analysis
                if settings.devices:
                    views[index] = _nest_view(regions[index], result, settings.devices)
                on_nest(views[index])
    except AnalysisTimedOut:
        complete = False
    lint = result.lint
    if lint is not None and settings.devices:
        _UNPLACED.extend((lint, r) for r, v in zip(regions, sent, strict=True) if v is not None)
    result = lint_document(result, path, settings, _left(started, limit_s), limit_s)
    if result.analysis is None:  # the lint stopped: the document's error, as before it ran
        return DocumentView((), result.errors, (), complete=complete and not result.stopped)
    complete = complete and all(view.described for view in views)
    dependencies = result.analysis.module.dependencies
    return DocumentView(result.findings, result.errors, tuple(views), complete, dependencies)


_UNPLACED: list[tuple[LintContext, RegionAnalysis]] = []
"""The nests the last analysis described before the file's, placed for their hover alone
(`LintContext.printed_placements`): `place_described_early` places them in full."""


def place_described_early(limit_s: float) -> None:
    """The last analysis's early nests placed in full, kept for the next analysis (an
    edit), which would otherwise place them, as the rules place the others: the analysis
    process does this once its reply is sent (`worker.py`), within `limit_s`."""
    try:
        with time_limit(limit_s):
            while _UNPLACED:
                lint, region = _UNPLACED.pop()
                lint.placements(region)
    except (AnalysisTimedOut, Exception):  # the time limit, or a failed placement: the
        _UNPLACED.clear()  # next analysis places it


_TRAILS: _Recent[Trail] = _Recent(16)
"""This process's last lowering of each Python file, by path (`reuse.py`)."""


def _trail(path: str) -> Trail:
    """`path`'s trail, put last: the least recently used is the one forgotten."""
    from aiscan.frontends.python.reuse import Trail

    trail = _TRAILS.pop(path, None) or Trail()
    _TRAILS[path] = trail
    return trail


class _Wanted(Exception):
    """The editor asked for `line` while the whole file was being lowered."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _lowered_on(
    trail: Trail,
    text: str,
    path: str,
    settings: ServerSettings,
    between: Callable[[], None] | None = None,
) -> Module:
    """The file lowered on its trail; the analyses and placements of the functions the
    edit only moved (a line added above them) moved with them, for the file's analysis
    to find kept (`_move_analyses`)."""
    before = trail.module
    module = lower_source(text, path, settings.pipeline, between=between, trail=trail)
    if before is not None and trail.relines is not None:
        _move_analyses(before, module, trail.relines, settings.pipeline.analysis)
    return module


def _move_analyses(
    before: Module, module: Module, relines: Relines, options: AnalysisOptions
) -> None:
    """Each function of `module` that is one of `before`'s moved (`relines`), with its
    analysis and its nests' placements moved the same way (`relines.py`): they are of the
    IR alone, so the moved IR's are the moved ones."""
    from aiscan.frontends.python.relines import Unmoved

    sizes = {**dict(module.size_defaults), **options.sizes}
    names = Counter(f.name for f in before.functions)
    earlier = {f.name: f for f in before.functions if names[f.name] == 1}
    for function in module.functions:
        old = earlier.get(function.name)
        key = analysis_key(function, options, sizes)
        if old is None or old is function or key in ANALYSES:
            continue
        found = ANALYSES.get(analysis_key(old, options, sizes))
        if found is None:
            continue
        try:
            moved = relines(found)
        except Unmoved:
            continue
        if moved.function == function:
            ANALYSES[key] = moved = replace(moved, function=function)
            _move_placements(found, moved, relines)


def _move_placements(old: FunctionAnalysis, new: FunctionAnalysis, relines: Relines) -> None:
    """The placements of `old`'s nests, moved to `new`'s: a placement is of the nest's IR
    (`LintContext.placement_key`, which holds it first) and of options that do not move."""
    from aiscan.frontends.python.relines import Unmoved

    regions = {id(a.region): b.region for a, b in zip(old.regions, new.regions, strict=True)}
    for key in [k for k in PLACEMENTS if isinstance(k, tuple) and id(k[0]) in regions]:
        try:
            PLACEMENTS[(regions[id(key[0])], *key[1:])] = relines(PLACEMENTS[key])
        except Unmoved:
            continue


def _lowers_in_part(path: str, settings: ServerSettings) -> bool:
    """Whether the file's frontend lowers the functions up to a line alone (Python's);
    the others lower the whole file either way, so asking would lower it twice."""
    return (settings.pipeline.language or language_of(path)) == "python"


def _nests_at(function: Function, line: int | None) -> Iterator[Region]:
    """`function`'s loop nests that hold `line`, in order (the first is the one
    `DocumentAnalysis.nest_at` finds)."""
    if line is None:
        return
    for region in function.regions:
        if region.kind == "nest" and region.span.line <= line <= region.span.end_line:
            yield region


def _left(started: float, limit_s: float) -> float:
    return max(limit_s - (time.monotonic() - started), 0.001)


def _by_demand(
    regions: list[RegionAnalysis], wanted_line: Callable[[], int | None]
) -> Iterator[int]:
    """Indices of `regions`, each once: the one holding the wanted line when asked, in
    order otherwise."""
    left = list(range(len(regions)))
    while left:
        line = wanted_line()
        spans = ((i, regions[i].region.span) for i in left)
        chosen = next(
            (i for i, s in spans if line is not None and s.line <= line <= s.end_line), left[0]
        )
        left.remove(chosen)
        yield chosen


def _undescribed(span: Span, limit_s: float) -> NestView:
    hover = (
        f"**aiscan: loop nest, {span.labelled()}**\n\n"
        f"_Not described: this file's analysis took over {limit_s:g} s._"
    )
    return NestView(span, hover, "aiscan: over the time limit (see hover)", described=False)


def _nest_view(
    region: RegionAnalysis,
    result: DocumentAnalysis,
    devices: tuple[Device, ...],
    *,
    printed_only: bool = False,
) -> NestView:
    """`printed_only`: placed for the hover alone (`LintContext.printed_placements`), as
    the nest described before the file's analysis is; the lint places it in full later."""
    assert result.analysis is not None
    span = region.region.span
    lint = result.lint
    described = True
    placements = None
    if lint and devices == lint.devices:
        placements = lint.printed_placements if printed_only else lint.placements
    try:
        hover = hover_markdown(
            region,
            devices,
            result.analysis.sizes,
            result.analysis.write_allocate,
            None if placements is None else (lambda: placements(region)),
        )
    except Exception as error:  # this nest's error is this nest's hover text
        hover = (
            f"**aiscan: loop nest, {span.labelled()}**\n\n"
            f"aiscan could not describe this nest: {type(error).__name__}: {error}"
        )
        described = False
    try:
        lens = lens_title(region, result.analysis.write_allocate)
    except Exception as error:  # one nest's failure leaves the other lenses
        lens = f"aiscan: no figures for this nest ({type(error).__name__})"
        described = False
    return NestView(span, hover, lens, described)
