"""From a path to an analysis: read, pick the frontend by extension, lower, analyze.

Every failure of one file becomes its located diagnostic; callers go on with the others.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiscan.analysis.kernel import ModuleAnalysis, analyze_module
from aiscan.errors import Diagnostic, InputError, Severity
from aiscan.ir.nodes import Module
from aiscan.options import PipelineOptions
from aiscan.sources import language_of, read_source
from aiscan.span import Span

__all__ = ["FileResult", "PipelineOptions", "analyze_path", "analyze_text", "lower_source"]


@dataclass(frozen=True, slots=True)
class FileResult:
    """One file's outcome: an analysis, or the diagnostics that stopped it."""

    path: str
    analysis: ModuleAnalysis | None
    diagnostics: tuple[Diagnostic, ...]


def lower_source(text: str, path: str, options: PipelineOptions) -> Module:
    """The IR of one source text; raises `InputError` for input that cannot be analyzed."""
    language = language_of(path)
    if language == "c":
        from aiscan.frontends.c import CFrontendOptions, lower_c_source

        return lower_c_source(text, path, CFrontendOptions(options.include_dirs, options.defines))
    if language == "python":
        from aiscan.frontends.python import lower_python_source

        module = lower_python_source(
            text,
            path,
            options.python_dtype,
            x64=options.jax_enable_x64,
            tf32=options.fp32_matmul_tf32,
        )
        from aiscan.frontends import triton

        if triton.has_triton_kernels(text):
            # `@triton.jit` kernels are Triton's; the rest of the file stays Python.
            lowered = triton.lower_triton_kernels(text, path, options.triton_config)
            return triton.merged(module, lowered)
        return module
    raise InputError(
        Diagnostic(
            Span(path, 1, 1), Severity.ERROR, "unknown language (expected a .c, .h or .py file)"
        )
    )


def analyze_path(path: str, options: PipelineOptions) -> FileResult:
    try:
        text = read_source(path)
    except InputError as error:
        return FileResult(path, None, (error.diagnostic,))
    return analyze_text(text, path, options)


def analyze_text(text: str, path: str, options: PipelineOptions) -> FileResult:
    """`analyze_path` for text already read (callers that need the source too)."""
    try:
        module = lower_source(text, path, options)
        analysis = analyze_module(module, options.analysis)
    except InputError as error:
        return FileResult(path, None, (error.diagnostic,))
    except RecursionError:
        message = "input nested too deeply to analyze"
        return FileResult(path, None, (Diagnostic(Span(path, 1, 1), Severity.ERROR, message),))
    return FileResult(path, analysis, module.diagnostics)
