"""`aiscan analyze` as a per-file task: analyze one file and render its report part.

The payload holds the rendered part (a text block, or the file's JSON entry), so workers
return plain data and the cache stores exactly what is printed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiscan.cache import fingerprint
from aiscan.errors import Diagnostic
from aiscan.options import PipelineOptions, PlacementOptions
from aiscan.scan import Payload, Task

if TYPE_CHECKING:  # the analysis is imported only when a file is really analyzed
    from aiscan.pipeline import FileResult

__all__ = ["AnalyzeOptions", "analyze_task"]


@dataclass(frozen=True)
class AnalyzeOptions:
    pipeline: PipelineOptions
    placement: PlacementOptions | None
    format: str
    model: str


def analyze_task(options: AnalyzeOptions) -> Task:
    return Task(
        kind=f"analyze-{options.format}",
        run=_analyze_file,
        failed=_failed_file,
        options=options,
        fingerprint=fingerprint(repr(options)),
        well_formed=_well_formed,
    )


def _well_formed(payload: Payload) -> bool:
    """Has a cached payload the shape `_analyze_file` gives a success? (The output itself is
    not re-parsed: a warm scan joins the stored parts as they are.)"""
    return (
        payload.get("ok") is True
        and isinstance(payload.get("output"), str)
        and _strings(payload.get("errors"))
        and _strings(payload.get("sizes_used"))
        and _strings(payload.get("shapes_used"))
    )


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _renderer(options: AnalyzeOptions) -> Callable[[FileResult], Any]:
    """What writes a file's part of the report, as text: JSON entries are serialized
    here, once, so a cached scan joins strings instead of parsing and re-encoding every
    entry."""
    if options.format == "json":
        from aiscan.report.json_report import file_entry

        return lambda result: json.dumps(file_entry(result, options.placement))
    from aiscan.report.text_report import file_text

    return lambda result: file_text(result, options.model, options.placement)


def _analyze_file(path: str, options: AnalyzeOptions) -> Payload:
    from aiscan.errors import InputError
    from aiscan.pipeline import analyze_text
    from aiscan.report.sizes import size_names
    from aiscan.sources import read_source_file

    # The renderer is imported before the analysis: a file that exhausts the memory limit
    # in a fresh worker had no room left to import it for its error, and the worker exited
    # (a crash, where the file is too large).
    render = _renderer(options)
    try:
        source = read_source_file(path)
    except InputError as error:
        return _failed_file(path, error.diagnostic, options)
    result = analyze_text(source.text, path, options.pipeline)
    dependencies = list(result.analysis.module.dependencies) if result.analysis else []
    return {
        "ok": result.analysis is not None,
        "content": source.digest,
        "sizes_used": sorted(size_names(result.analysis)) if result.analysis else [],
        "shapes_used": _shapes_used(result, options.pipeline),
        "output": render(result),
        "errors": [d.format() for d in result.diagnostics] if result.analysis is None else [],
        "dependencies": dependencies,
    }


def _shapes_used(result: FileResult, options: PipelineOptions) -> list[str]:
    """The stated shapes (`--shape`) that name a parameter of this file's functions."""
    if result.analysis is None or not options.shapes:
        return []
    from aiscan.given_shapes import shapes_matched

    return shapes_matched(options.shapes, result.analysis.module.functions)


def _failed_file(path: str, diagnostic: Diagnostic, options: AnalyzeOptions) -> Payload:
    from aiscan.pipeline import FileResult

    result = FileResult(path, None, (diagnostic,))
    return {
        "ok": False,
        "output": _renderer(options)(result),
        "errors": [diagnostic.format()],
        "dependencies": [],
    }
