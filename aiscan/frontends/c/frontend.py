"""Entry point of the C frontend: source text in, an IR `Module` (or a located error) out."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from aiscan.errors import Diagnostic, InputError, Severity
from aiscan.frontends.c.preprocess import preprocess
from aiscan.ir.nodes import Module
from aiscan.span import Span

__all__ = ["CFrontendOptions", "lower_c_source"]

_PARSE_ERROR = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?:(?P<column>\d+):)?\s*(?P<message>.*)$")


@dataclass(frozen=True)
class CFrontendOptions:
    """What a compiler would get on its command line: `-I` and `-D`."""

    include_dirs: tuple[str, ...] = ()
    defines: Mapping[str, str] = field(default_factory=dict)


def lower_c_source(text: str, path: str, options: CFrontendOptions | None = None) -> Module:
    """Parse and lower one C file; raises `InputError` when nothing in it can be analyzed."""
    from pycparser import c_parser
    from pycparser.c_parser import ParseError

    from aiscan.frontends.c.lower import lower_file

    options = options or CFrontendOptions()
    source = preprocess(text, path, include_dirs=options.include_dirs, defines=options.defines)
    if source.fatal or any(d.severity is Severity.ERROR for d in source.diagnostics):
        raise InputError(source.diagnostics[0])
    try:
        ast = c_parser.CParser().parse(source.text, path)
    except ParseError as error:
        raise InputError(_parse_diagnostic(str(error), path)) from None
    except RecursionError:
        raise InputError(Diagnostic(
            Span(path, 1, 1), Severity.ERROR, "nesting too deep for the C parser"
        )) from None
    try:
        functions = lower_file(ast, path)
    except RecursionError:
        raise InputError(Diagnostic(
            Span(path, 1, 1), Severity.ERROR, "nesting too deep to analyze"
        )) from None
    return Module(
        path=path,
        language="c",
        functions=functions,
        size_defaults=tuple(sorted(source.size_defaults.items())),
        diagnostics=source.diagnostics,
    )


def _parse_diagnostic(message: str, path: str) -> Diagnostic:
    match = _PARSE_ERROR.match(message)
    if match is None:
        return Diagnostic(Span(path, 1, 1), Severity.ERROR, f"C syntax error: {message}")
    line = int(match.group("line"))
    column = int(match.group("column") or 1)
    file = match.group("file") or path
    detail = match.group("message").strip()
    if detail.startswith("before:"):
        detail = f"C syntax error before `{detail.removeprefix('before:').strip()}`"
    else:
        detail = f"C syntax error: {detail}"
    return Diagnostic(Span(file, line, column), Severity.ERROR, detail)
