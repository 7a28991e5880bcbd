"""From a path to an analysis: read, pick the frontend by extension, lower, analyze.

Every failure of one file becomes its located diagnostic; callers go on with the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiscan.analysis.kernel import ModuleAnalysis, analyze_module
from aiscan.errors import Diagnostic, InputError, Severity
from aiscan.ir.nodes import Module
from aiscan.options import PipelineOptions
from aiscan.sources import language_of, read_source
from aiscan.span import Span

if TYPE_CHECKING:
    from collections.abc import Callable

    from aiscan.frontends.c import CFrontendOptions
    from aiscan.frontends.python.reuse import Trail

__all__ = ["FileResult", "PipelineOptions", "analyze_path", "analyze_text", "lower_source"]


@dataclass(frozen=True, slots=True)
class FileResult:
    """One file's outcome: an analysis, or the diagnostics that stopped it."""

    path: str
    analysis: ModuleAnalysis | None
    diagnostics: tuple[Diagnostic, ...]


def lower_source(
    text: str,
    path: str,
    options: PipelineOptions,
    through_line: int | None = None,
    between: Callable[[], None] | None = None,
    trail: Trail | None = None,
) -> Module:
    """The IR of one source text; raises `InputError` for input that cannot be analyzed.
    `through_line`: in Python, the top-level `def` or class holding that line (and what
    must be lowered before it), as the whole file's lowering gives it: the language
    server's hovered nest, before the rest. Other languages lower the whole file.
    `between`: in Python, called before each top-level statement, and may raise to stop.
    `trail`: in Python, the editor's last lowering of the file, reused where it holds."""
    language = options.language or language_of(path)
    if language == "c":
        from aiscan.frontends.c import lower_c_source

        return lower_c_source(text, path, _c_options(options))
    if language == "python":
        from aiscan.frontends.python import lower_python_source

        module = lower_python_source(
            text,
            path,
            options.python_dtype,
            x64=options.jax_enable_x64,
            tf32=options.fp32_matmul_tf32,
            shapes=options.shapes,
            through_line=through_line,
            between=between,
            trail=trail,
        )
        from aiscan.frontends import triton

        if triton.has_triton_kernels(text):
            # `@triton.jit` kernels are Triton's; the rest of the file stays Python.
            lowered = triton.lower_triton_kernels(text, path, options.triton_config)
            return triton.merged(module, lowered)
        return module
    if language == "cuda":
        from aiscan.frontends.cuda import LaunchError, launch_from_spec, lower_cuda_source

        try:
            launches = [launch_from_spec(spec, "--launch") for spec in options.launches]
            given = {launch.kernel for launch in launches}
            configured = [launch_from_spec(s, "configuration") for s in options.configured_launches]
            launches += [launch for launch in configured if launch.kernel not in given]
        except LaunchError as error:
            raise InputError(Diagnostic(Span(path, 1, 1), Severity.ERROR, str(error))) from None
        return lower_cuda_source(text, path, _c_options(options), launches)
    raise InputError(
        Diagnostic(
            Span(path, 1, 1),
            Severity.ERROR,
            "unknown language (expected a .c, .h, .cu, .cuh or .py file; "
            "`--language cuda` reads another as CUDA)",
        )
    )


def _c_options(options: PipelineOptions) -> CFrontendOptions:
    """What the C frontend (and CUDA, through it) takes of the pipeline's options."""
    from aiscan.frontends.c import CFrontendOptions

    return CFrontendOptions(options.include_dirs, options.defines)


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
