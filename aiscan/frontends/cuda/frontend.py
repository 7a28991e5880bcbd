"""Entry point of the CUDA frontend: CUDA source in, one IR function per launch of each
`__global__` kernel out (or per kernel, with its grid symbolic, when it has none)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from aiscan.errors import Diagnostic, InputError, Severity
from aiscan.frontends.c import CFrontendOptions, lower_c_source
from aiscan.frontends.cuda.grid import launched
from aiscan.frontends.cuda.launches import Launch
from aiscan.frontends.cuda.spans import in_source
from aiscan.frontends.cuda.translation import Translation, translate
from aiscan.ir.nodes import Function, Module

__all__ = ["lower_cuda_source"]


def lower_cuda_source(
    text: str,
    path: str,
    options: CFrontendOptions | None = None,
    launches: Sequence[Launch] = (),
) -> Module:
    """Translate, parse as C, and lower every kernel per launch. `launches` (from the
    command line or the configuration) replace the file's own launches of their kernel."""
    translation = translate(text, path)
    try:
        module = lower_c_source(translation.text, path, options, translation.references)
    except InputError as error:
        raise InputError(_unshifted(error.diagnostic, translation, path)) from None
    by_name = {f.name: f for f in module.functions}
    functions: list[Function] = []
    for kernel in translation.kernels:
        function = by_name.get(kernel.name)
        if function is None:
            continue
        given = [launch for launch in launches if launch.kernel == kernel.name]
        own: list[Launch | None] = [
            *(given or [launch for launch in translation.launches if launch.kernel == kernel.name])
        ]
        for launch in own or [None]:
            functions.append(in_source(launched(function, kernel, launch), translation.position))
    diagnostics = sorted(
        [*(_unshifted(d, translation, path) for d in module.diagnostics), *translation.diagnostics],
        key=lambda d: (d.span.line, d.span.column, d.severity is not Severity.ERROR),
    )
    return replace(
        module, language="cuda", functions=tuple(functions), diagnostics=tuple(diagnostics)
    )


def _unshifted(diagnostic: Diagnostic, translation: Translation, path: str) -> Diagnostic:
    """A position in the C text as the CUDA source has it."""
    span = diagnostic.span
    if span.file != path:
        return diagnostic
    line, column = translation.position(span.line, span.column)
    return replace(diagnostic, span=replace(span, line=line, column=column, end_line=line))
