"""One open document analyzed: lint findings, the error that stopped it, its loop nests.

Pure: text in, results out; the server converts them to LSP types at its edge. Any
failure of the analysis on a half-typed edit becomes a diagnostic, never an exception.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterator, MutableMapping
from dataclasses import dataclass, replace
from pathlib import Path

# The server's fork server (aiscan.lsp.worker) pays sympy's import once, when it starts,
# not inside each analysis child's first hover: the command line defers it
# (aiscan.algebra), but real code in an editor reaches a `ceiling`, a `Min` or a limit
# soon enough. `sympy.simplify` imports `sympy.physics.units` at its first call (0.1 s),
# which placing any intensity that is not a monomial makes, so that is imported too.
import sympy.physics.units  # noqa: F401  (binds sympy too)

from aiscan.analysis.kernel import (
    FunctionAnalysis,
    ModuleAnalysis,
    RegionAnalysis,
    analyze_module,
)
from aiscan.config import Config, find_config, load_config
from aiscan.errors import AiscanError, Diagnostic, InputError, Severity
from aiscan.ir.nodes import Module
from aiscan.lint.checker import DEFAULT_HELP_URL, check_analysis
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.settings import LintSettings
from aiscan.pipeline import PipelineOptions, lower_source
from aiscan.roofline.devices import Device, find_devices
from aiscan.roofline.placement import Placement
from aiscan.scan import AnalysisTimedOut, time_limit
from aiscan.span import Span

__all__ = [
    "EDIT_TIME_LIMIT_S",
    "DocumentAnalysis",
    "ServerSettings",
    "analyze_document",
    "error_at_start",
    "lint_context",
    "lint_document",
    "settings_for",
    "time_limit_message",
]


@dataclass(frozen=True)
class ServerSettings:
    """What the server needs per file: pipeline options, lint settings, target devices."""

    pipeline: PipelineOptions
    lint: LintSettings
    devices: tuple[Device, ...]
    help_url: str = DEFAULT_HELP_URL


@dataclass(frozen=True)
class DocumentAnalysis:
    analysis: ModuleAnalysis | None
    findings: tuple[Finding, ...]
    errors: tuple[Diagnostic, ...]
    """Parse errors and frontend notes: shown as diagnostics besides the findings."""
    lint: LintContext | None = None
    """What the rules saw: its placements (made once per nest) serve the hovers too."""
    stopped: bool = False
    """Cut short (the time limit, an unexpected error): its error says so, not the text."""

    def nests(self) -> Iterator[RegionAnalysis]:
        """The file's loop nests, in order (none when it did not analyze)."""
        if self.analysis is None:
            return
        for function in self.analysis.functions:
            for region in function.regions:
                if region.region.kind == "nest":
                    yield region

    def nest_at(self, line: int) -> RegionAnalysis | None:
        """The loop nest whose lines (1-based, inclusive) hold `line`."""
        for region in self.nests():
            span = region.region.span
            if span.line <= line <= span.end_line:
                return region
        return None


def settings_for(path: str, devices: tuple[str, ...] = ()) -> ServerSettings:
    """Settings from the configuration nearest to `path`; `devices` adds to its devices."""
    from aiscan.analysis.kernel import AnalysisOptions

    config: Config
    try:
        config = load_config(find_config(Path(path).resolve().parent))
    except AiscanError:
        config = Config()
    analysis = AnalysisOptions(
        write_allocate=bool(config.write_allocate),
        special_weight=config.special_weight or 0,
        sizes=dict(config.sizes),
    )
    pipeline = PipelineOptions(
        tuple(str(d) for d in config.include_dirs),
        dict(config.defines),
        analysis,
        config.python_dtype,
        jax_enable_x64=config.jax_enable_x64,
        fp32_matmul_tf32=config.fp32_matmul_tf32,
        triton_config=config.triton_config or "first",
        configured_launches=config.launches,
        shapes=config.shapes,
    )
    try:
        lint = LintSettings(
            select=config.select or ("ALL",),
            ignore=config.ignore,
            per_file_ignores=config.per_file_ignores,
            thresholds=config.thresholds,
            root=config.path.parent if config.path else Path(path).resolve().parent,
            fail_on=("ALL",) if config.fail_on_notes else config.fail_on,
        )
    except AiscanError:
        lint = LintSettings()
    names = tuple(dict.fromkeys((*config.devices, *devices)))
    chosen: tuple[Device, ...] = ()
    if names:
        try:
            found = find_devices(names, config.device_files)  # their own files alone
            # a device named twice (an alias and its key) is one device, shown once
            chosen = tuple({device.key: device for device in found}.values())
        except AiscanError:
            chosen = ()
    return ServerSettings(pipeline, lint, chosen, config.help_url or DEFAULT_HELP_URL)


EDIT_TIME_LIMIT_S = 10.0
"""A document whose analysis takes longer gets an error instead of freezing the editor."""


def analyze_document(
    text: str,
    path: str,
    settings: ServerSettings,
    limit_s: float = EDIT_TIME_LIMIT_S,
    placement_memo: MutableMapping[Hashable, tuple[Placement | str, ...]] | None = None,
    *,
    lint: bool = True,
    lower: Callable[[], Module] | None = None,
    analysis_memo: MutableMapping[Hashable, FunctionAnalysis] | None = None,
    region_memo: MutableMapping[Hashable, RegionAnalysis] | None = None,
) -> DocumentAnalysis:
    """The document analyzed and linted within `limit_s` (when run on a main thread);
    `placement_memo` keeps placements for the next analysis (`LintContext`). Without
    `lint`, no findings yet: `lint_document` adds them (the server describes the nests
    first, the lint then reuses their placements). `lower`, when given, lowers the text
    in `lower_source`'s place, within the limit (the server describes the hovered nest on
    the way). `analysis_memo` keeps each function's analysis for the next, `region_memo`
    each region's (`analyze_module`)."""
    started = time.monotonic()
    try:
        with time_limit(limit_s):
            module = lower_source(text, path, settings.pipeline) if lower is None else lower()
            analysis = analyze_module(
                module, settings.pipeline.analysis, analysis_memo, region_memo
            )
    except BaseException as error:
        return _failed(error, path, limit_s)
    context = lint_context(analysis, text, settings, placement_memo)
    result = DocumentAnalysis(analysis, (), module.diagnostics, context)
    if not lint:
        return result
    left_s = max(limit_s - (time.monotonic() - started), 0.001)
    return lint_document(result, path, settings, left_s, limit_s)


def lint_context(
    analysis: ModuleAnalysis,
    text: str,
    settings: ServerSettings,
    placement_memo: MutableMapping[Hashable, tuple[Placement | str, ...]] | None,
) -> LintContext:
    """What the lint sees of `analysis`, placing as `analyze` does on the settings' devices."""
    return LintContext(
        analysis,
        text,
        settings.devices,
        settings.pipeline.analysis,
        write_allocate=None,
        placement_memo=placement_memo,
    )


def lint_document(
    result: DocumentAnalysis, path: str, settings: ServerSettings, left_s: float, limit_s: float
) -> DocumentAnalysis:
    """`result` with its findings, made within `left_s` of the edit's `limit_s`."""
    if result.lint is None:
        return result
    try:
        with time_limit(left_s):
            findings = tuple(check_analysis(result.lint, settings.lint))
    except BaseException as error:
        return _failed(error, path, limit_s)
    return replace(result, findings=findings)


def time_limit_message(limit_s: float, held_s: float = 0.0) -> str:
    """The error of a document stopped at the time limit, however it was stopped: by its
    own alarm, or killed `held_s` later when a library call (isl's, in C, holding the
    interpreter) kept the alarm from interrupting it."""
    held = f" (a call that could not be interrupted held it {held_s:g} s more)" if held_s else ""
    return (
        f"aiscan stopped analyzing this file after {limit_s:g} s, the language server's "
        f"time limit per edit{held}; the editor stays responsive"
    )


def _failed(error: BaseException, path: str, limit_s: float) -> DocumentAnalysis:
    """The diagnostic of an analysis that stopped; what is not ours to turn into one (^C,
    exit) goes on."""
    if isinstance(error, InputError):
        return DocumentAnalysis(None, (), (error.diagnostic,))
    if isinstance(error, AnalysisTimedOut):
        message = time_limit_message(limit_s)
    elif isinstance(error, Exception):  # a half-typed edit must never take the server down
        message = f"aiscan could not analyze this text ({type(error).__name__}: {error})"
    else:
        raise error
    return DocumentAnalysis(None, (), (error_at_start(path, message),), stopped=True)


def error_at_start(path: str, message: str) -> Diagnostic:
    """An error about the whole document, which has no place of its own: on line 1."""
    return Diagnostic(Span(path, 1, 1), Severity.ERROR, message)
