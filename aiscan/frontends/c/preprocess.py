"""Turn a C file into text pycparser can parse, with no system compiler.

Two paths give the same result: files with no macros to expand (only `#pragma` and
`#include` of the shipped stub headers) take a fast path that strips comments in place;
everything else goes through pcpp, a pure-Python C99 preprocessor. Both keep line numbers
so every count stays traceable to its source line.

Object-like macros with an integer value (`#define N 1024`) are kept symbolic: the name
stays in the code, so counts come out in `N`, and the value becomes the default size.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from aiscan.errors import Diagnostic, Severity
from aiscan.frontends.c.line_names import file_of, line_name
from aiscan.frontends.c.literals import integer_literal
from aiscan.sources import FileRefused, content_digest, read_regular_file
from aiscan.span import Span

__all__ = ["PreprocessedSource", "named_as_user", "preprocess"]

STUB_DIR = Path(__file__).resolve().parent / "include"
MAX_INCLUDE_DEPTH = 40

# Types and GNU spellings pycparser does not know; their widths are resolved by name later.
_PRELUDE_TYPES = (
    "typedef double _Float16; typedef double __fp16; typedef double __bf16;"
    " typedef double _Float32; typedef double _Float64; typedef double _Float128;"
    " typedef double __float128; typedef double _Float32x; typedef double _Float64x;"
    " typedef int __builtin_va_list;"
)
_PRELUDE_MACROS = {
    "__attribute__(x)": "",
    "__attribute(x)": "",
    "__restrict": "restrict",
    "__restrict__": "restrict",
    "__inline": "inline",
    "__inline__": "inline",
    "__forceinline": "inline",
    "__extension__": "",
    "__asm__(x)": "",
    "__asm(x)": "",
    "__volatile__": "volatile",
    "__const": "const",
    "__signed__": "signed",
    "__declspec(x)": "",
    "_Pragma(x)": "",
    "__builtin_expect(x, y)": "(x)",
    "__builtin_assume_aligned(p, ...)": "(p)",
}
_INTEGER_MACRO = re.compile(r"\(?\s*(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)[uUlL]*\s*\)?")
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w*)[ \t]*(.*)$", re.MULTILINE)
_SYSTEM_INCLUDE = re.compile(r"<\s*([\w./]+)\s*>")
_WORD = re.compile(r"[A-Za-z_]\w*")
# Comments and the literals that may contain comment-like text, in one scanner.
_COMMENT_OR_LITERAL = re.compile(
    r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.DOTALL
)


@dataclass(frozen=True, slots=True)
class PreprocessedSource:
    """Parser-ready text, the sizes the source fixes, and what went wrong on the way."""

    text: str
    size_defaults: Mapping[str, int]
    diagnostics: tuple[Diagnostic, ...] = ()
    used_fast_path: bool = False
    fatal: bool = False
    dependencies: tuple[tuple[str, str | None], ...] = ()
    """Files looked for besides the source, with the digest of the bytes read, or None for a
    candidate that was absent (a header created there later changes the result): so that a
    cache can tell when to re-analyze."""
    missing_headers: tuple[str, ...] = ()
    """`<...>` headers found nowhere and treated as empty (each also warned about)."""


@dataclass
class _Options:
    include_dirs: tuple[Path, ...]
    defines: Mapping[str, str]
    size_bindings: dict[str, int] = field(default_factory=dict)


def preprocess(
    text: str,
    path: str,
    *,
    include_dirs: Iterable[str] = (),
    defines: Mapping[str, str] | None = None,
) -> PreprocessedSource:
    """Preprocess `text` (the contents of `path`) as a compiler with `-I`/`-D` would.

    `defines` maps names to values as `-D NAME=VALUE` does; an integer value keeps the
    name symbolic and binds its size instead of substituting it into the code.
    """
    text = _unix_line_ends(text)
    defines = dict(defines or {})
    options = _Options(tuple(Path(d) for d in include_dirs), defines)
    for name, value in defines.items():
        number = _integer_value(value)
        if number is not None:
            options.size_bindings[name] = number
    unterminated = _unterminated_comment(text, path)
    if unterminated is not None:
        return PreprocessedSource("", {}, (unterminated,), fatal=True)
    fast = _fast_path(text, path, options)
    if fast is not None:
        return fast
    return _pcpp_path(text, path, options)


def _unix_line_ends(text: str) -> str:
    """`text` with CRLF and lone CR line ends as LF, as compilers read them: pycparser
    refuses a `\r`, and a CRLF file must count as its LF twin (columns do not move)."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _integer_value(text: str) -> int | None:
    match = _INTEGER_MACRO.fullmatch(text.strip())
    return integer_literal(match.group(1)) if match else None


@cache
def _stub_declarations(header: str) -> tuple[str, ...]:
    """A stub's declaration lines, those of the stubs it includes first."""
    declarations: list[str] = []
    text = _blank_comments((STUB_DIR / header).read_text(encoding="utf-8"))
    for line in text.splitlines():
        directive = _DIRECTIVE.fullmatch(line)
        if directive is not None:
            nested = _SYSTEM_INCLUDE.fullmatch(directive.group(2).strip())
            if directive.group(1) == "include" and nested is not None:
                declarations += _stub_declarations(nested.group(1))
        elif line.strip():
            declarations.append(line.strip())
    return tuple(declarations)


@cache
def _macro_words() -> frozenset[str]:
    """Every name a stub header or the prelude defines as a macro."""
    words = {name.split("(")[0] for name in _PRELUDE_MACROS}
    for header in STUB_DIR.rglob("*.h"):
        for match in _DIRECTIVE.finditer(header.read_text(encoding="utf-8")):
            if match.group(1) == "define":
                word = _WORD.match(match.group(2))
                if word and not word.group(0).startswith("__AISCAN_"):
                    words.add(word.group(0))
    return frozenset(words)


def _blank_comments(text: str) -> str:
    """Replace comments by spaces, keeping every newline so lines and columns stay put."""

    def blank(match: re.Match[str]) -> str:
        token = match.group(0)
        if token[0] in "\"'":
            return token
        return re.sub(r"[^\n]", " ", token)

    return _COMMENT_OR_LITERAL.sub(blank, text)


def _unterminated_comment(text: str, path: str) -> Diagnostic | None:
    """A `/*` that never closes swallows the rest of the file: say where it opened."""
    remainder = _COMMENT_OR_LITERAL.sub(lambda m: " " * len(m.group(0)), text)
    position = remainder.find("/*")
    if position < 0:
        return None
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return Diagnostic(Span(path, line, column), Severity.ERROR, "unterminated /* comment")


def _fast_path(text: str, path: str, options: _Options) -> PreprocessedSource | None:
    """Skip the preprocessor when it would change nothing but comments."""
    if "\\\n" in text or any(_integer_value(v) is None for v in options.defines.values()):
        return None
    stripped = _blank_comments(text)
    headers: list[str] = []
    for match in _DIRECTIVE.finditer(stripped):
        directive = match.group(1)
        if directive == "pragma" or _is_line_directive(directive):
            continue
        if directive != "include":
            return None
        system = _SYSTEM_INCLUDE.fullmatch(match.group(2).strip())
        if system is None or not _is_stub_header(system.group(1)):
            return None
        headers.append(system.group(1))
    words = set(_WORD.findall(stripped))
    if not _macro_words().isdisjoint(words):
        return None
    body = _DIRECTIVE.sub(_keep_pragma, stripped)
    declarations = dict.fromkeys(d for h in headers for d in _stub_declarations(h))
    prelude = "\n".join([_PRELUDE_TYPES, *declarations])
    return PreprocessedSource(
        text=f'{prelude}\n#line 1 "{line_name(path)}"\n{body}',
        size_defaults={k: v for k, v in options.size_bindings.items() if k in words},
        used_fast_path=True,
    )


def _is_stub_header(name: str) -> bool:
    """Is `<name>` one of the stub system headers? A name the OS cannot even look up (too
    long for a file name) is not."""
    try:
        return (STUB_DIR / name).is_file()
    except OSError:
        return False


def _keep_pragma(match: re.Match[str]) -> str:
    return match.group(0) if match.group(1) == "pragma" else ""


def _is_line_directive(directive: str) -> bool:
    """`#line N "file"`, or the linemarker `# N "file"` that `cpp -E` writes.

    Neither is followed: aiscan reports the file it reads, so its counts and diagnostics
    point at the line an editor shows there, and a directive naming another file must not
    make the file's functions look like a header's (docs/model.md)."""
    return directive == "line" or directive.isdigit()


_CHANGED_WHILE_READ = "changed during preprocessing"
"""The digest of a header read in two states: no file matches it, so no cache serves the
result of a preprocessing that saw a header change."""


def named_as_user(file: str, path: str) -> str:
    """`file` (the analyzed file or a header it includes) named as the user named `path`:
    a header of a relative `path` relative to the working directory, as compilers print it,
    unless that climbs out of it where `path` did not."""
    file = file_of(file)
    if os.path.abspath(file) == os.path.abspath(path):
        return path
    if os.path.isabs(path) or not os.path.isabs(file):
        return file
    try:
        relative = os.path.relpath(file)
    except ValueError:  # another drive
        return file
    if relative.startswith(os.pardir) and not path.startswith(os.pardir):
        return file
    return relative


@cache
def _bound_shifts() -> None:
    """pcpp shifts a Python integer before it wraps the result to 64 bits, so
    `#if (1 << 16000000000)` first builds a 2 GB integer. A shift by 64 bits or more wraps
    to 0 whatever the operand (GCC's preprocessor gives 0 too): answer that directly."""
    from pcpp.evaluator import INTMAXBITS, Value

    shift = Value.__lshift__

    def bounded_shift(self: Any, other: Any) -> Any:
        count = Value(other)
        if self.exception is None and count.exception is None:
            bits = int(count) & Value.UINT_MAX if self.unsigned else int(count)
            if bits >= INTMAXBITS:
                return Value(0, self.unsigned)
        return shift(self, other)

    Value.__lshift__ = bounded_shift


def _pcpp_path(text: str, path: str, options: _Options) -> PreprocessedSource:
    from pcpp.preprocessor import Action, OutputDirective, Preprocessor

    _bound_shifts()

    diagnostics: list[Diagnostic] = []
    size_defaults: dict[str, int] = {}
    allowed_roots = [
        Path(path).resolve().parent,
        STUB_DIR,
        *(d.resolve() for d in options.include_dirs),
    ]
    refused: set[str] = set()
    looked_for: dict[str, str | None] = {}

    def depend(file: Path, digest: str | None) -> None:
        if file.is_relative_to(STUB_DIR):
            return  # aiscan's own headers: its code identity covers them
        if looked_for.setdefault(str(file), digest) != digest:
            looked_for[str(file)] = _CHANGED_WHILE_READ

    not_read: dict[str, str] = {}
    """Headers found but not read (a device, a FIFO, too large), with the reason."""

    missing: list[str] = []
    pending_size: list[tuple[str, int]] = []

    def diagnose(
        file: str | None, line: int | None, message: str, severity: Severity = Severity.ERROR
    ) -> None:
        where = Span(path if file is None else named_as_user(file, path), line or 1, 1)
        diagnostics.append(Diagnostic(where, severity, message))

    class _Preprocessor(Preprocessor):  # type: ignore[misc]
        def on_error(self, file: str, line: int, msg: str) -> None:
            diagnose(file, line, msg)

        def on_file_open(self, is_system_include: bool, includepath: str) -> Any:
            resolved = Path(includepath).resolve()
            if not any(resolved.is_relative_to(root) for root in allowed_roots):
                refused.add(includepath)
                raise OSError(f"outside the include paths: {includepath}")
            if len(self.temp_path) > MAX_INCLUDE_DEPTH:
                raise OSError("include nested too deeply")
            try:
                data = read_regular_file(resolved)
            except FileRefused as refusal:
                depend(resolved, None)
                not_read[includepath] = str(refusal)
                raise OSError(str(refusal)) from None
            except OSError:
                depend(resolved, None)
                raise
            depend(resolved, content_digest(data))
            if b"\0" in data:
                raise OSError("binary file")
            try:
                decoded = data.decode("utf-8")
            except UnicodeDecodeError as error:
                raise OSError("not UTF-8") from error
            return io.StringIO(_unix_line_ends(decoded.lstrip("\ufeff")))

        def on_include_not_found(
            self, is_malformed: bool, is_system_include: bool, curdir: str, includepath: str
        ) -> None:
            directive = self.lastdirective
            file = directive.source if directive is not None else path
            line = directive.lineno if directive is not None else 1
            refusal = next((why for p, why in not_read.items() if p.endswith(includepath)), None)
            if is_malformed:
                reason = f"malformed #include {includepath}"
            elif refusal is not None:
                reason = f"#include '{includepath}' not read: {refusal}"
            elif os.path.isabs(includepath) or any(r.endswith(includepath) for r in refused):
                reason = f"#include '{includepath}' refused: outside the include paths (-I)"
            elif len(self.temp_path) > MAX_INCLUDE_DEPTH:
                reason = f"#include '{includepath}' nested more than {MAX_INCLUDE_DEPTH} deep"
            elif is_system_include and not _unreadable(includepath, self.path):
                # A system header we do not stub rarely matters for counting: go on
                # without it, and name it if the parse then fails.
                diagnose(
                    file,
                    line,
                    f"header <{includepath}> not found, treated as empty",
                    Severity.WARNING,
                )
                missing.append(includepath)
                raise OutputDirective(Action.IgnoreAndRemove)
            else:
                reason = f"#include '{includepath}' not found, or not a UTF-8 text file"
            diagnose(file, line, reason)
            raise OutputDirective(Action.IgnoreAndRemove)

        def on_directive_handle(
            self, directive: Any, toks: list[Any], ifpassthru: bool, precedingtoks: list[Any]
        ) -> Any:
            super().on_directive_handle(directive, toks, ifpassthru, precedingtoks)
            pending_size.clear()
            if directive.value == "define" and not _in_stub(directive.source):
                pending_size.extend(_keep_integer_macro_symbolic(self, toks))
            return True

        def define(self, tokens: Any) -> None:
            # Called only for a `#define` in an active branch: its size becomes the default.
            super().define(tokens)
            size_defaults.update(pending_size)
            pending_size.clear()

        def undef(self, tokens: Any) -> None:
            super().undef(tokens)
            if tokens and tokens[0].type == "CPP_ID":
                size_defaults.pop(tokens[0].value, None)

        def on_unknown_macro_in_expr(self, tok: Any) -> Any:
            # A size kept symbolic (`#define N 1024` defines `N` to itself) is its value,
            # as the compiler sees it; any other identifier left in an `#if` is 0 (C11
            # 6.10.1). Passing the directive through left `#if` lines pycparser refuses.
            name = getattr(tok, "value", tok)
            return options.size_bindings.get(name, size_defaults.get(name, 0))

        def on_directive_unknown(
            self, directive: Any, toks: list[Any], ifpassthru: bool, precedingtoks: list[Any]
        ) -> Any:
            # pcpp prints `#error`/`#warning` to stderr itself: say them as diagnostics.
            if directive.value in ("error", "warning"):
                text = "".join(t.value for t in toks).strip()
                severity = Severity.ERROR if directive.value == "error" else Severity.WARNING
                diagnose(directive.source, directive.lineno, f"#{directive.value} {text}", severity)
                return True
            if _is_line_directive(directive.value):
                return True  # removed, its lines kept (see `_is_line_directive`)
            return super().on_directive_unknown(directive, toks, ifpassthru, precedingtoks)

    preprocessor = _Preprocessor()
    preprocessor.line_directive = "#line"
    preprocessor.compress = 0
    # pcpp writes each file's absolute path into `#line` as it is: escape it there (and in
    # the tokens' `source`, which `file_of` reads back), so any name survives the parser.
    preprocessor.rewrite_paths = [(r"(?s).+", lambda whole: line_name(whole.group(0)))]
    for spelling, value in _PRELUDE_MACROS.items():
        preprocessor.define(f"{spelling} {value}")
    for name, value in options.defines.items():
        # An integer -D binds a size and keeps the name symbolic (see module docstring).
        preprocessor.define(
            f"{name} {name}" if name in options.size_bindings else f"{name} {value}"
        )
    for directory in (STUB_DIR, *options.include_dirs):
        preprocessor.add_path(str(directory))
    out = io.StringIO()
    try:
        preprocessor.parse(text, path)
        preprocessor.write(out)
    except RecursionError:
        diagnose(path, 1, "preprocessing recursed too deeply (include or macro cycle)")
        return PreprocessedSource("", {}, tuple(diagnostics), fatal=True)
    except Exception as error:  # pcpp raises plain exceptions on malformed input
        diagnose(path, 1, f"preprocessor failed: {type(error).__name__}: {error}")
        return PreprocessedSource("", {}, tuple(diagnostics), fatal=True)
    text = out.getvalue()
    # A -D that only switched `#ifdef`s (`-D LARGE_DATASET`) is no size of the code.
    used = set(_WORD.findall(text))
    size_defaults.update((k, v) for k, v in options.size_bindings.items() if k in used)
    return PreprocessedSource(
        text=f"{_PRELUDE_TYPES}\n{text}",
        size_defaults=size_defaults,
        diagnostics=tuple(diagnostics),
        dependencies=tuple(looked_for.items()),
        missing_headers=tuple(dict.fromkeys(missing)),
    )


def _keep_integer_macro_symbolic(preprocessor: Any, toks: list[Any]) -> list[tuple[str, int]]:
    """Rewrite `#define N 1024` to `#define N N` (a self-reference is never re-expanded);
    the size it would set, to be kept only if the directive is in an active branch."""
    words = [t for t in toks if t.type not in preprocessor.t_WS]
    if len(words) < 2 or words[0].type != "CPP_ID":
        return []
    name = words[0].value
    if name.startswith("__") or (len(words) > 1 and words[1].value == "(" and toks[1] is words[1]):
        return []  # reserved names and function-like macros expand as usual
    value = _integer_value("".join(t.value for t in words[1:]))
    if value is None:
        return []
    words[1].type = "CPP_ID"
    words[1].value = name
    for token in words[2:]:
        token.value = ""
    return [(name, value)]


@lru_cache(maxsize=1024)
def _in_stub(source: str | None) -> bool:
    """Macros of the stub headers expand as usual; only the user's sizes stay symbolic.

    Memoized: pcpp asks at every `#define`, and resolving the path each time was a third
    of preprocessing a PolyBench kernel."""
    return source is not None and Path(file_of(source)).resolve().is_relative_to(STUB_DIR)


def _unreadable(header: str, search_path: list[str]) -> bool:
    """Is `<header>` there but refused (binary, not UTF-8)? Then it is an error, not absent."""
    for directory in search_path:
        try:
            if (Path(directory) / header).is_file():
                return True
        except OSError:
            continue
    return False
