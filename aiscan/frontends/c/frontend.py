"""Entry point of the C frontend: source text in, an IR `Module` (or a located error) out."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aiscan.errors import Diagnostic, InputError, Severity
from aiscan.frontends.c.preprocess import named_as_user, preprocess
from aiscan.ir.nodes import Module
from aiscan.span import Span

__all__ = ["CFrontendOptions", "lower_c_source"]

_PARSE_ERROR = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?:(?P<column>\d+):)?\s*(?P<message>.*)$")


@dataclass(frozen=True)
class CFrontendOptions:
    """What a compiler would get on its command line: `-I` and `-D`."""

    include_dirs: tuple[str, ...] = ()
    defines: Mapping[str, str] = field(default_factory=dict)


def lower_c_source(
    text: str,
    path: str,
    options: CFrontendOptions | None = None,
    references: Mapping[str, frozenset[int]] | None = None,
) -> Module:
    """Parse and lower one C file; raises `InputError` when nothing in it can be analyzed.
    `references`: functions whose parameters at these positions are C++ references
    (CUDA `__device__` functions), bound to their arguments where calls are inlined."""
    from pycparser import c_parser
    from pycparser.c_parser import ParseError

    from aiscan.frontends.c.lower import lower_file

    options = options or CFrontendOptions()
    source = preprocess(text, path, include_dirs=options.include_dirs, defines=options.defines)
    errors = [d for d in source.diagnostics if d.severity is Severity.ERROR]
    if source.fatal or errors:
        raise InputError((errors or list(source.diagnostics))[0])
    parser = c_parser.CParser()
    try:
        ast = parser.parse(source.text, path)
        _release(parser)
    except ParseError as error:
        diagnostic = _parse_diagnostic(str(error), path, parser)
        raise InputError(_blame_missing(diagnostic, source.missing_headers)) from None
    except RecursionError:
        raise InputError(
            Diagnostic(Span(path, 1, 1), Severity.ERROR, "nesting too deep for the C parser")
        ) from None
    except (AssertionError, IndexError, KeyError, AttributeError, TypeError) as error:
        # pycparser's own invariants fail on some malformed input instead of a ParseError.
        raise InputError(
            Diagnostic(
                _next_token_span(parser, path),
                Severity.ERROR,
                f"C syntax error (the parser could not recover: {type(error).__name__})",
            )
        ) from None
    try:
        functions = lower_file(ast, path, references or {})
    except RecursionError:
        raise InputError(
            Diagnostic(Span(path, 1, 1), Severity.ERROR, "nesting too deep to analyze")
        ) from None
    return Module(
        path=path,
        language="c",
        functions=functions,
        size_defaults=tuple(sorted(source.size_defaults.items())),
        diagnostics=source.diagnostics,
        dependencies=source.dependencies,
    )


def _blame_missing(diagnostic: Diagnostic, headers: tuple[str, ...]) -> Diagnostic:
    """A parse that fails after a header was treated as empty most likely fails on a name
    that header declares: say which header, so the fix (`-I`) is plain."""
    if not headers:
        return diagnostic
    names = ", ".join(f"<{h}>" for h in headers)
    return Diagnostic(
        diagnostic.span,
        diagnostic.severity,
        f"{diagnostic.message} (perhaps a name declared in {names}, which was not found "
        "and treated as empty; add its directory with -I)",
    )


def _release(parser: Any) -> None:
    """Drop a used parser's state now: its lexer calls back into it through bound methods,
    a reference cycle that would keep every token and coordinate of the file alive until
    the garbage collector's next full pass."""
    vars(parser).clear()


def _parse_diagnostic(message: str, path: str, parser: Any) -> Diagnostic:
    match = _PARSE_ERROR.match(message)
    if match is None:
        detail = message.split(": ", 1)[-1]
        return Diagnostic(
            _next_token_span(parser, path),
            Severity.ERROR,
            f"C syntax error: {detail[:1].lower()}{detail[1:]}",
        )
    line = int(match.group("line"))
    column = int(match.group("column") or 1)
    file = named_as_user(match.group("file") or path, path)
    detail = match.group("message").strip()
    if detail.startswith("before:"):
        detail = f"C syntax error before `{detail.removeprefix('before:').strip()}`"
    else:
        detail = f"C syntax error: {detail}"
    return Diagnostic(Span(file, line, column), Severity.ERROR, detail)


def _next_token_span(parser: Any, path: str) -> Span:
    """Where pycparser stopped, for errors that carry no position ("Invalid expression")."""
    try:
        token = parser._peek()
        coord = parser._tok_coord(token) if token is not None else None
    except Exception:  # pycparser's internals differ between versions and may be broken here
        coord = None
    if coord is None or not getattr(coord, "line", None):
        return Span(path, 1, 1)
    file = named_as_user(coord.file, path) if coord.file else path
    return Span(file, coord.line, coord.column or 1)
