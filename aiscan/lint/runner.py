"""`aiscan check` without the command line: files in, a `LintRun` out.

Files are found by `aiscan.discovery` and checked by `aiscan.scan` like `analyze` does:
in worker processes, cached by content and options, each under the time limit. A file's
findings travel (and are cached) as plain data and are rebuilt here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from aiscan.cache import ResultCache, fingerprint
from aiscan.discovery import discover, work_tree_root
from aiscan.errors import Diagnostic, InputError, Severity, UsageError
from aiscan.given_shapes import shapes_matched
from aiscan.limits import DEFAULT_MEMORY_LIMIT_MIB
from aiscan.lint.checker import LintRun, check_analysis
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.settings import LintSettings
from aiscan.options import PlacementOptions
from aiscan.pipeline import PipelineOptions, analyze_text
from aiscan.roofline.devices import Device
from aiscan.scan import Payload, Task, run_task
from aiscan.sources import (
    FileRefused,
    decode_source,
    languages_text,
    read_source,
    read_source_file,
    read_stream,
)
from aiscan.span import Span

__all__ = ["CheckOptions", "check_paths"]


@dataclass(frozen=True)
class CheckOptions:
    pipeline: PipelineOptions
    settings: LintSettings
    devices: tuple[Device, ...] = ()
    sparse: bool = False
    write_allocate: bool | None = None
    placement: PlacementOptions | None = None
    """`analyze`'s placement options, for the rules that give a verdict."""


def check_paths(
    paths: Sequence[str],
    options: PipelineOptions,
    settings: LintSettings,
    devices: tuple[Device, ...] = (),
    *,
    sparse: bool = False,
    write_allocate: bool | None = None,
    jobs: int | None = 1,
    cache: ResultCache | None = None,
    timeout_s: float | None = None,
    memory_limit_mib: int | None = DEFAULT_MEMORY_LIMIT_MIB,
    progress: TextIO | None = None,
    stdin: tuple[str, BinaryIO] | None = None,
    placement: PlacementOptions | None = None,
) -> LintRun:
    """`stdin` is (name, stream): the source read from `-`, checked as if it were that file,
    under the same limits."""
    files = discover([p for p in paths if p != "-"])
    if not files and stdin is None:
        raise UsageError(f"no {languages_text()} source files found in the given paths")
    check = CheckOptions(options, settings, devices, sparse, write_allocate, placement)
    task = Task("check", _check_file, _failed_file, check, fingerprint(repr(check)), _well_formed)
    scan = partial(run_task, timeout_s=timeout_s, memory_limit_mib=memory_limit_mib)
    payloads = scan(files, task, jobs=jobs, cache=cache, progress=progress)
    findings: list[Finding] = []
    errors: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    sources: dict[str, str] = {}
    if stdin is not None:
        name, stream = stdin
        text = _read_stdin(name, stream)
        files = [name, *files]
        if isinstance(text, Diagnostic):
            payloads = [_failed((text,)), *payloads]
        else:
            stdin_task = Task("check-stdin", _check_stdin, _failed_file, (check, text), "")
            payloads = [*scan([name], stdin_task, jobs=1), *payloads]
        sources[name] = text if isinstance(text, str) else ""
    shapes_used = sorted({key for p in payloads for key in p.get("shapes_used", [])})
    for path, payload in zip(files, payloads, strict=True):
        if path in sources:
            findings += [_finding(f) for f in payload["findings"]]
            errors += [_diagnostic(d) for d in payload["errors"]]
            continue
        errors += [_diagnostic(d) for d in payload["errors"]]
        warnings += [_diagnostic(d) for d in payload.get("warnings", [])]
        found = [_finding(f) for f in payload["findings"]]
        if found:
            try:
                sources[path] = read_source(path)
            except InputError as error:  # changed under our feet
                errors.append(error.diagnostic)
                continue
        findings += found
    root = work_tree_root(Path.cwd()) or Path.cwd()
    return LintRun(
        tuple(findings),
        sources,
        settings.enabled(),
        tuple(errors),
        root,
        warnings=tuple(warnings),
        shapes_used=tuple(shapes_used),
    )


def _check_file(path: str, options: CheckOptions) -> Payload:
    try:
        source = read_source_file(path)
    except InputError as error:
        return _failed((error.diagnostic,))
    return {**_check_source(source.text, path, options), "content": source.digest}


def _read_stdin(name: str, stream: BinaryIO) -> str | Diagnostic:
    """The source on stdin, read no further than the size limit; or why it is refused."""
    try:
        return decode_source(read_stream(stream), name)
    except FileRefused as refusal:
        return Diagnostic(Span(name, 1, 1), Severity.ERROR, f"stdin: {refusal}")
    except InputError as error:
        return error.diagnostic


def _check_stdin(name: str, options: tuple[CheckOptions, str]) -> Payload:
    check, text = options
    return _check_source(text, name, check)


def _check_source(source: str, path: str, options: CheckOptions) -> Payload:
    result = analyze_text(source, path, options.pipeline)
    if result.analysis is None:
        return _failed(result.diagnostics)
    context = LintContext(
        result.analysis,
        source,
        options.devices,
        options.pipeline.analysis,
        sparse=options.sparse,
        write_allocate=options.write_allocate,
        placement=options.placement,
    )
    findings = check_analysis(context, options.settings)
    return {
        "ok": True,
        "findings": [_finding_data(f) for f in findings],
        "errors": [],
        "warnings": [_diagnostic_data(d) for d in result.diagnostics],
        "dependencies": list(result.analysis.module.dependencies),
        "shapes_used": shapes_matched(options.pipeline.shapes, result.analysis.module.functions),
    }


def _failed_file(path: str, diagnostic: Diagnostic, options: object) -> Payload:
    return _failed((diagnostic,))


def _failed(diagnostics: Sequence[Diagnostic]) -> Payload:
    return {
        "ok": False,
        "findings": [],
        "errors": [_diagnostic_data(d) for d in diagnostics],
        "dependencies": [],
    }


def _well_formed(payload: Payload) -> bool:
    """Has a cached payload the shape `_check_source` gives a success, every finding and
    diagnostic rebuildable? A bad entry is a miss, never a crash."""
    findings, errors, warnings = (payload.get(key) for key in ("findings", "errors", "warnings"))
    return (
        payload.get("ok") is True
        and isinstance(findings, list)
        and isinstance(errors, list)
        and isinstance(warnings, list)
        and isinstance(payload.get("shapes_used"), list)
        and all(isinstance(key, str) for key in payload["shapes_used"])
        and all(map(_is_finding_data, findings))
        and all(map(_is_diagnostic_data, [*errors, *warnings]))
    )


def _is_finding_data(data: Any) -> bool:
    return (
        _is_diagnostic_data(data)
        and isinstance(data.get("code"), str)
        and isinstance(data.get("name"), str)
        and isinstance(data.get("details"), list)
        and all(_is_label_and_value(pair) for pair in data["details"])
    )


def _is_diagnostic_data(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and _is_span_data(data.get("span"))
        and data.get("severity") in _SEVERITIES
        and isinstance(data.get("message"), str)
    )


def _is_span_data(data: Any) -> bool:
    return (
        isinstance(data, list)
        and len(data) == 5
        and isinstance(data[0], str)
        and all(type(number) is int for number in data[1:])
    )


def _is_label_and_value(pair: Any) -> bool:
    return isinstance(pair, list) and len(pair) == 2 and all(isinstance(t, str) for t in pair)


_SEVERITIES = frozenset(severity.value for severity in Severity)


def _span_data(span: Span) -> list[Any]:
    return [span.file, span.line, span.column, span.end_line, span.end_column]


def _diagnostic_data(diagnostic: Diagnostic) -> dict[str, Any]:
    return {
        "span": _span_data(diagnostic.span),
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
    }


def _diagnostic(data: dict[str, Any]) -> Diagnostic:
    return Diagnostic(Span(*data["span"]), Severity(data["severity"]), data["message"])


def _finding_data(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "span": _span_data(finding.span),
        "message": finding.message,
        "details": [list(pair) for pair in finding.details],
    }


def _finding(data: dict[str, Any]) -> Finding:
    return Finding(
        data["code"],
        data["name"],
        Severity(data["severity"]),
        Span(*data["span"]),
        data["message"],
        tuple((label, value) for label, value in data["details"]),
    )
