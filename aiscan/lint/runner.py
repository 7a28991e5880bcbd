"""`aiscan check` without the command line: files in, a `LintRun` out."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from aiscan.errors import Diagnostic, InputError
from aiscan.lint.checker import LintRun, check_analysis
from aiscan.lint.context import LintContext
from aiscan.lint.files import discover_files, repository_root
from aiscan.lint.finding import Finding
from aiscan.lint.settings import LintSettings
from aiscan.pipeline import PipelineOptions, analyze_path
from aiscan.roofline.devices import Device
from aiscan.sources import read_source

__all__ = ["check_paths"]


def check_paths(
    paths: Sequence[str],
    options: PipelineOptions,
    settings: LintSettings,
    devices: tuple[Device, ...] = (),
    *,
    sparse: bool = False,
    write_allocate: bool | None = None,
) -> LintRun:
    findings: list[Finding] = []
    errors: list[Diagnostic] = []
    sources: dict[str, str] = {}
    for path in discover_files(paths):
        result = analyze_path(path, options)
        if result.analysis is None:
            errors += result.diagnostics
            continue
        try:
            source = read_source(path)
        except InputError as error:  # changed under our feet
            errors.append(error.diagnostic)
            continue
        sources[path] = source
        context = LintContext(
            result.analysis,
            source,
            devices,
            options.analysis,
            sparse=sparse,
            write_allocate=write_allocate,
        )
        findings += check_analysis(context, settings)
    root = repository_root(Path.cwd()) or Path.cwd()
    return LintRun(tuple(findings), sources, settings.enabled(), tuple(errors), root)
