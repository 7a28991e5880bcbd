"""CUDA C to C, in place: what pycparser cannot read is blanked or respelled where it
stands, so that every line and most columns of the C text are those of the CUDA source.

- a `__global__` function keeps its body, wrapped in the loops of its launch (blocks
  `blockIdx_z..x`, then threads `threadIdx_z..x`, trips `gridDim_*` and `blockDim_*`,
  which become parameters); `threadIdx.x` is spelled `threadIdx_x`;
- qualifiers (`__device__`, `__shared__`, `__restrict__`, `__launch_bounds__(...)`,
  `extern "C"`) are blanked, shared arrays remembered; `__syncthreads()` costs nothing;
- `atomicAdd(&x, v)` is `x += v` (one read, one FLOP, one write), remembered, as are
  the other atomics; `__ldg`, warp shuffles and half/bf16 intrinsics are respelled as
  the loads, registers and operators they are (innermost call first);
- vector types (`float4`, `half2`) are structs of their lanes (the prelude);
- `constexpr` values are folded where used, integer template parameters become kernel
  parameters a launch binds, namespaces are opened in place;
- a grid-stride loop at the top of a kernel (`for (i = blockIdx.x*blockDim.x +
  threadIdx.x; i < n; i += blockDim.x*gridDim.x)`) is `for (i = 0; i < n; i++)`,
  remembered, and taken out of its axis' block and thread loops per launch (`grid.py`);
- `__device__` functions are respelled as C functions (qualifiers blanked, builtins and
  intrinsics as in kernels), which the C lowering inlines where they are called; a
  kernel's axes include those its device functions read;
- host functions are read for their launches and blanked; other C++ (type templates,
  classes, references, templated `__device__` functions) is blanked with a located error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from aiscan.errors import Diagnostic, Severity
from aiscan.frontends.cuda.launches import AXES, Launch, size_expression
from aiscan.frontends.cuda.scanning import blanked, masked, matching, split_top_level
from aiscan.span import Span

if TYPE_CHECKING:
    import sympy

__all__ = ["GRID_NAMES", "PRELUDE", "KernelText", "Translation", "translate"]

GRID_NAMES = tuple(f"{kind}_{axis}" for kind in ("gridDim", "blockDim") for axis in AXES)
PRELUDE = (
    "typedef _Float16 half; typedef _Float16 __half; typedef __bf16 __nv_bfloat16; "
    "typedef unsigned int uint; "
    "typedef struct float2 { float x, y; } float2; "
    "typedef struct float4 { float x, y, z, w; } float4; "
    "typedef struct double2 { double x, y; } double2; "
    "typedef struct half2 { half x, y; } half2; typedef half2 __half2; "
    "typedef struct __nv_bfloat162 { __nv_bfloat16 x, y; } __nv_bfloat162; "
)
"""CUDA's scalar type names as C has them, put at the start of the first line that is
not a directive (on that line)."""

_CUDA_HEADERS = re.compile(
    r"^[ \t]*#[ \t]*include[ \t]*[<\"]"
    r"(cuda|cooperative_|mma|cub|thrust|curand|cublas|device_)[^>\"]*[>\"]",
    re.MULTILINE,
)
_CUDA_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*\"[^\"]*\.cuh\"", re.MULTILINE)
_BUILTIN = re.compile(r"\b(threadIdx|blockIdx|blockDim|gridDim)\s*\.\s*([xyz])\b")
_QUALIFIERS = re.compile(
    r"\b(__global__|__device__|__host__|__forceinline__|__noinline__|__constant__|__managed__)\b"
    r"|\bextern\s+\"C\"|\b__launch_bounds__\s*(?=\()"
)
_RESTRICT = re.compile(r"\b__restrict__\b|\b__restrict\b")
_NO_COST = re.compile(r"\b(__syncthreads|__syncwarp|__threadfence|__threadfence_block)\s*(?=\()")
_SHARED = re.compile(r"\b(extern\s+)?__shared__\b")
_DECLARED = re.compile(r"(\w+)\s*\[")
_ATOMIC = re.compile(
    r"\b((?:atomicAdd|atomicSub|atomicMax|atomicMin|atomicExch)(?:_system|_block)?)\s*(?=\()"
)
_LDG = re.compile(r"\b(__ldg)\s*(?=\()")
_INTRINSICS = {
    # half and bfloat16 arithmetic (scalar and per lane of half2): the operators they are
    "__hadd": "({0} + {1})",
    "__hsub": "({0} - {1})",
    "__hmul": "({0} * {1})",
    "__hfma": "fmaf({0}, {1}, {2})",
    "__hadd2": "({0} + {1})",
    "__hsub2": "({0} - {1})",
    "__hmul2": "({0} * {1})",
    "__hfma2": "fmaf({0}, {1}, {2})",
    "__fmaf_rn": "fmaf({0}, {1}, {2})",
    "__fadd_rn": "({0} + {1})",
    "__fmul_rn": "({0} * {1})",
    # conversions: no FLOP
    "__float2half": "((half)({0}))",
    "__float2half_rn": "((half)({0}))",
    "__half2float": "((float)({0}))",
    "__float2bfloat16": "((__nv_bfloat16)({0}))",
    "__float2bfloat16_rn": "((__nv_bfloat16)({0}))",
    "__bfloat162float": "((float)({0}))",
}
_INTRINSIC = re.compile(
    r"\b(" + "|".join(sorted(_INTRINSICS, key=len, reverse=True)) + r")\s*(?=\()"
)
_SHUFFLE = re.compile(r"\b(__shfl(?:_down|_up|_xor)?_sync)\s*(?=\()")
_WARP_SIZE = re.compile(r"\bwarpSize\b")
_CONSTEXPR = re.compile(
    r"\b(?:static\s+)?constexpr\s+(?:(?:const|unsigned|signed|int|long|short|size_t|"
    r"int64_t|int32_t|auto|float|double|bool)\s+)+(\w+)\s*=\s*([^;{}]+);"
)
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?[fFlLuU]*")
_TEMPLATE = re.compile(r"\s*template\s*<([^<>]*)>")
_TEMPLATE_INT = re.compile(
    r"\s*(?:const\s+)?(?:unsigned\s+|signed\s+)?(?:int|long|short|size_t|unsigned|bool)\s+"
    r"(\w+)\s*(?:=\s*([^,]+))?\s*"
)
_USING_NAMESPACE = re.compile(r"\s*using\s+namespace\s+[\w:]+\s*;")
_FAST_MATH = re.compile(r"\b__(expf|logf|sinf|cosf|powf|exp10f|log2f|tanf)\b")
_CXX = re.compile(r"\b(template|namespace|class|using|operator|constexpr|auto)\b|::")
_REFERENCE = re.compile(r"\w\s*&\s*\w+\s*(?=[,)])")
_FOR = re.compile(r"\bfor\s*\(")
_AUTO = re.compile(r"\bauto\s+(\w+)\s*=\s*([^;{}]+);")
_SCALAR = (
    r"(?:unsigned\s+int|unsigned|int|long|size_t|float|double|half|__half|__nv_bfloat16|"
    r"float2|float4|double2|half2|__half2)"
)
_POINTER_PARAMETER = re.compile(
    rf"(?:const\s+)?({_SCALAR})\s*(?:const\s*)?\*\s*(?:const\s*)?(?:__restrict__\s*)?(\w+)\s*$"
)
_SCALAR_DECLARATION = re.compile(rf"(?<![\w.])(?:const\s+)?({_SCALAR})\s+(\w+)\s*(?=[=;,)])")
_FLOAT_LITERAL = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?[fF]")
_DOUBLE_LITERAL = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+[eE][-+]?\d+)([eE][-+]?\d+)?")
_INT_LITERAL = re.compile(r"[-+]?\d+")
_GRID_INDEX = re.compile(
    r"(?:\s|\d|[-+*/%()]|\b(?:threadIdx|blockIdx|blockDim|gridDim)\s*\.\s*[xyz]\b)+"
)
_ELEMENT = re.compile(r"(\w+)\s*\[[^;]*\]")
_INT_DECLARATION = re.compile(
    r"(?:const\s+)?(?:unsigned\s+)?(?:int|long|size_t|int64_t|unsigned)\s+(\w+)\s*=\s*([^;]+);"
)


@dataclass(frozen=True, slots=True)
class KernelText:
    """What the translation remembers of one `__global__` function."""

    name: str
    span: Span
    shared: frozenset[str]
    atomics: tuple[tuple[int, str, str], ...]
    """Line, target array and function (`atomicAdd`, `atomicMax`...) of each atomic."""
    grid_strides: tuple[tuple[int, tuple[str, ...]], ...]
    """Line of each grid-stride (or block-stride) loop and the grid loops it leaves: the
    block and thread loops of its axis (the thread loop only)."""
    axes: frozenset[str]
    """The axes (`x`, `y`, `z`) its body reads `threadIdx`, `blockIdx`... of."""
    size_parameters: tuple[str, ...]
    """Its integer parameters (sizes a launch may bind to host expressions)."""
    parameters: tuple[str, ...]
    """Every parameter's name, in order (a launch's arguments are matched by position)."""
    template_parameters: tuple[tuple[str, sympy.Expr | None], ...] = ()
    """Integer template parameters (`template <int BLOCK = 256>`), each with its default:
    parameters of the lowered kernel, which a launch's template arguments bind."""


@dataclass(slots=True)
class Translation:
    text: str
    kernels: list[KernelText] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    origins: list[int] = field(default_factory=list)
    """For each character of `text`, the position in the source it comes from."""
    references: dict[str, frozenset[int]] = field(default_factory=dict)
    """For each `__device__` function with C++ reference parameters (`float &acc`), their
    positions: respelled as plain parameters, they are bound to their arguments' lvalues
    where the function is inlined."""
    source: str = ""

    def position(self, line: int, column: int) -> tuple[int, int]:
        """The source's line and column of a line and column of `text`."""
        offset = _offset(self.text, line, column)
        if offset is None or not self.origins:
            return line, column
        origin = self.origins[min(offset, len(self.origins) - 1)]
        start = self.source.rfind("\n", 0, origin) + 1
        return self.source.count("\n", 0, origin) + 1, origin - start + 1


def _offset(text: str, line: int, column: int) -> int | None:
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
    return start + column - 1


def translate(source: str, path: str) -> Translation:
    """The C text of a CUDA file, with its kernels, launches and located errors."""
    code = masked(_spliced(source))
    text = list(code)
    result = Translation("")

    replaced: set[int] = set()

    def read(start: int, end: int) -> str:
        return "".join(text[start:end])

    def put(start: int, end: int, replacement: str = "") -> None:
        original = "".join(text[start:end])
        if replacement:  # lines stay where they are: the original's newlines kept
            new = replacement + "\n" * original.count("\n")
            replaced.add(start)
        else:
            new = blanked(original)
            replaced.difference_update(range(start, end))
        text[start:end] = [""] * (end - start)
        text[start] = new

    for match in _CUDA_HEADERS.finditer(code):
        put(match.start(), match.end())
    constants, folded = _constexprs(code, put)
    checked = code  # what is searched for C++ constructs: the folded `constexpr`s are read
    for start, end in folded:
        checked = checked[:start] + blanked(checked[start:end]) + checked[end:]
    for match in _CUDA_INCLUDE.finditer(code):
        result.diagnostics.append(
            Diagnostic(
                _span_at(code, match.start(), path),
                Severity.WARNING,
                f"`{match.group().strip()}` not read: a header with CUDA code is analyzed on "
                "its own (its kernels are not known here)",
            )
        )
        put(match.start(), match.end())
    devices: dict[str, tuple[set[str], tuple[int, int]]] = {}
    for start, end, kind in _top_level_items(code):
        if kind == "extern-block":
            put(start, end)  # `extern "C" {`; its `}` is blanked as an item of its own
            continue
        if kind == "close":
            put(start, end)
            continue
        if kind == "c++":
            found = _CXX.search(code, start, end)
            what = f"C++ construct not read: `{found.group() if found else 'class'}`"
            span = _span_at(code, found.start() if found else start, path)
            result.diagnostics.append(Diagnostic(span, Severity.ERROR, what))
            put(start, end)
            continue
        if kind != "function":
            if _USING_NAMESPACE.fullmatch(code, start, end):
                put(start, end)
                continue
            _declaration(code, start, end, put)
            continue
        brace = code.index("{", start, end)
        closing = end - 1
        head = code[start:brace]
        line = code.count("\n", 0, start) + 1 + _leading_newlines(head)
        template = _TEMPLATE.match(code, start, brace)
        parameters = _template_parameters(template, constants)
        after = template.end() if template is not None and parameters is not None else start
        for typed in _typed_autos(code, start, brace, closing, put):
            checked = checked[:typed] + "    " + checked[typed + 4 :]
        cxx = _CXX.search(checked, after, closing)
        device = "__device__" in head and "__global__" not in head and not template
        if device and cxx is None:
            # Kept as C: the C lowering inlines its calls (frontends/c/inlining.py);
            # reference parameters (`float &acc`) stand for their arguments there.
            references = _reference_parameters(code, start, brace, put)
            axes, _, _ = _respelled(code, start, brace, closing, put, read)
            devices[_name(head)] = (axes, (brace, closing))
            if references:
                result.references[_name(head)] = references
            continue
        cxx = cxx or _REFERENCE.search(code, start, brace)
        if "__global__" in head and cxx is None:
            if template is not None:
                put(template.start(), template.end())
                line = code.count("\n", 0, after) + 1 + _leading_newlines(code[after:brace])
            kernel = _kernel(code, after, brace, closing, path, line, put, read, parameters or ())
            if kernel is not None:
                result.kernels.append(kernel)
                continue
        if "__global__" in head or "__device__" in head:
            what, severity = _not_read(cxx, head)
            span = _span_at(code, cxx.start() if cxx else start, path)
            result.diagnostics.append(Diagnostic(span, severity, what))
        else:
            result.launches.extend(_launches(code, brace, closing, path, _name(head), constants))
        put(start, end)
    result.kernels = [_with_device_axes(k, code, devices) for k in result.kernels]
    origins: list[int] = []
    for position, piece in enumerate(text):
        if position in replaced:
            origins += [position] * len(piece)
        else:
            origins += [min(position + k, len(code) - 1) for k in range(len(piece))]
    joined = "".join(text)
    # The prelude opens the first line that is not a directive: on a `#define` line it
    # would make the directive no longer start its line.
    at = len("".join(text[: _first_code_line(code)]))
    result.text = joined[:at] + PRELUDE + joined[at:]
    result.origins = origins[:at] + [min(at, max(len(code) - 1, 0))] * len(PRELUDE) + origins[at:]
    result.source = source
    return result


def _typed_autos(code: str, start: int, brace: int, closing: int, put: _Put) -> list[int]:
    """`auto x = init;` in a function's body, where the initializer says the type: a literal
    (`1.0f` float, `1.0` double, `1` int), a grid index (`blockIdx.x * blockDim.x +
    threadIdx.x`: unsigned int, as CUDA's builtins are), an element of a pointer parameter
    (`x[i]`: its element type) or a variable declared with a scalar type. Each is respelled
    with that type; the positions of the `auto`s respelled are returned. Others stay (a
    located error, as any C++ construct not read)."""
    types: dict[str, str] = {}
    close_paren = code.rfind(")", start, brace)
    open_paren = _opening(code, close_paren) if close_paren != -1 else -1
    if open_paren >= start:
        for _, parameter in split_top_level(code[open_paren + 1 : close_paren]):
            pointer = _POINTER_PARAMETER.search(parameter.strip())
            if pointer is not None:
                types[pointer.group(2)] = "*" + pointer.group(1)
    respelled = []
    for match in _SCALAR_DECLARATION.finditer(code, start, closing):
        types.setdefault(match.group(2), match.group(1))
    for match in _AUTO.finditer(code, brace, closing):
        typed = _type_of(match.group(2).strip(), types)
        if typed is None:
            continue
        types[match.group(1)] = typed
        put(match.start(), match.start() + 4, typed)
        respelled.append(match.start())
    return respelled


def _type_of(init: str, types: Mapping[str, str]) -> str | None:
    """The type an initializer obviously has, or None."""
    if _FLOAT_LITERAL.fullmatch(init):
        return "float"
    if _DOUBLE_LITERAL.fullmatch(init):
        return "double"
    if _INT_LITERAL.fullmatch(init):
        return "int"
    if _GRID_INDEX.fullmatch(init) and _BUILTIN.search(init):
        return "unsigned int"
    element = _ELEMENT.fullmatch(init)
    if element is not None and types.get(element.group(1), "").startswith("*"):
        return types[element.group(1)][1:]
    known = types.get(init)
    return known if known is not None and not known.startswith("*") else None


def _reference_parameters(code: str, start: int, brace: int, put: _Put) -> frozenset[int]:
    """The positions of a function's reference parameters (`float &acc`, `const T& x`),
    each `&` blanked in place."""
    close_paren = code.rfind(")", start, brace)
    open_paren = _opening(code, close_paren) if close_paren != -1 else -1
    if open_paren < start:
        return frozenset()
    found = set()
    for position, (offset, parameter) in enumerate(
        split_top_level(code[open_paren + 1 : close_paren])
    ):
        match = _REFERENCE.search(parameter + ")")
        if match is None:
            continue
        ampersand = open_paren + 1 + offset + parameter.index("&", match.start())
        put(ampersand, ampersand + 1)
        found.add(position)
    return frozenset(found)


def _with_device_axes(
    kernel: KernelText, code: str, devices: Mapping[str, tuple[set[str], tuple[int, int]]]
) -> KernelText:
    """The kernel's axes with those its `__device__` functions read, directly or through
    one another (their bodies are inlined into it)."""
    body = _lines(code, kernel.span.line, kernel.span.end_line)
    axes = set(kernel.axes)
    seen: set[str] = set()
    texts = [body]
    while texts:
        text = texts.pop()
        for name, (device_axes, (start, end)) in devices.items():
            if name not in seen and re.search(rf"\b{re.escape(name)}\s*\(", text):
                seen.add(name)
                axes |= device_axes
                texts.append(code[start:end])
    return replace(kernel, axes=frozenset(axes)) if axes != kernel.axes else kernel


def _lines(code: str, first: int, last: int) -> str:
    return "\n".join(code.split("\n")[first - 1 : last])


def _first_code_line(code: str) -> int:
    """The offset of the first line that is not a preprocessor directive (or the
    continuation of one)."""
    position = 0
    while position < len(code):
        end = code.find("\n", position)
        line = code[position : len(code) if end == -1 else end]
        if not line.lstrip().startswith("#"):
            return position
        while end != -1 and code[end - 1] == "\\":
            end = code.find("\n", end + 1)
        if end == -1:
            return len(code)
        position = end + 1
    return position


def _not_read(cxx: re.Match[str] | None, head: str) -> tuple[str, Severity]:
    if cxx is not None:
        return f"C++ construct not read: `{cxx.group().strip()}`", Severity.ERROR
    if "__global__" in head:
        return "kernel not read: its parameter list is not found", Severity.ERROR
    return "`__device__` function not read: calls to it are unknown calls", Severity.WARNING


def _leading_newlines(head: str) -> int:
    stripped = head.lstrip()
    return head[: len(head) - len(stripped)].count("\n")


def _span_at(code: str, position: int, path: str) -> Span:
    while position < len(code) and code[position] in " \t\n":
        position += 1
    line = code.count("\n", 0, position) + 1
    column = position - (code.rfind("\n", 0, position) + 1) + 1
    return Span(path, line, column)


def _top_level_items(code: str) -> list[tuple[int, int, str]]:
    """Top-level functions (`function`), `extern "C" {` openings and their closing brace,
    and other statements (`other`), each as a range of `code`."""
    items: list[tuple[int, int, str]] = []
    position, start = 0, 0
    closers: list[int] = []
    while position < len(code):
        char = code[position]
        if char == "#" and code[code.rfind("\n", 0, position) + 1 : position].strip() == "":
            end = code.find("\n", position)
            while end != -1 and code[end - 1] == "\\":
                end = code.find("\n", end + 1)
            position = start = len(code) if end == -1 else end + 1
            continue
        if char == "}" and closers and position == closers[-1]:
            closers.pop()
            items.append((position, position + 1, "close"))
            position = start = position + 1
            continue
        if char == ";":
            items.append((start, position + 1, "other"))
            position = start = position + 1
            continue
        if char == "{":
            head = code[start:position]
            closing = matching(code, position)
            if closing is None:
                break
            if re.search(r"\bextern\s*$", head.replace('"C"', "").rstrip()) or re.fullmatch(
                r"\s*extern\s*\"C\"\s*", head
            ):
                items.append((start, position + 1, "extern-block"))
                closers.append(closing)
                position = start = position + 1
                continue
            if head.rstrip().endswith(")") or re.search(r"\)\s*(const\s*)?$", head):
                items.append((start, closing + 1, "function"))
                position = start = closing + 1
                continue
            if re.fullmatch(r"\s*(inline\s+)?namespace(\s+\w+)?\s*", head):
                items.append((start, position + 1, "extern-block"))  # its `}` closes it
                closers.append(closing)
                position = start = position + 1
                continue
            if re.search(r"\b(namespace|class)\b", head):
                items.append((start, closing + 1, "c++"))  # no `;` need follow
                position = start = closing + 1
                continue
            position = closing + 1  # a struct or an initializer: up to its `;`
            continue
        position += 1
    return items


def _declaration(code: str, start: int, end: int, put: _Put) -> None:
    """A top-level declaration: qualifiers blanked (`__constant__ float c[16];`)."""
    for match in _QUALIFIERS.finditer(code, start, end):
        put(match.start(), match.end())
    for match in _RESTRICT.finditer(code, start, end):
        put(match.start(), match.end(), "restrict".ljust(match.end() - match.start()))


def _name(head: str) -> str:
    found = re.findall(r"(\w+)\s*\(", head)
    return found[-1] if found else "?"


def _spliced(source: str) -> str:
    """C's second translation phase: each backslash-newline removed, as the preprocessor
    removes it before reading any token, so that the respellings read what it reads. A
    grid-stride loop whose `blockIdx` was split over two lines was not read as one: its
    trip was summed over a block's 256 threads one by one, 11 s and a sum of 256
    roundings, where the loop is `i < n`. The newlines are put back at the end of the
    logical line: every line after it stays where it was."""
    if "\\\n" not in source and "\\\r\n" not in source:
        return source
    parts = source.split("\n")
    out: list[str] = []
    joined = 0
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        line = part.removesuffix("\r")
        if not last and line.endswith("\\"):
            out.append(line[:-1])
            joined += 1
            continue
        out.append(part)
        if not last:
            out.append("\n" * (1 + joined))
            joined = 0
    out.append("\n" * joined)  # a splice at the end of the file
    return "".join(out)


class _Put(Protocol):
    """Replaces `text[start:end]` (blanks it without a replacement)."""

    def __call__(self, start: int, end: int, replacement: str = "") -> None: ...


def _kernel(
    code: str,
    start: int,
    brace: int,
    closing: int,
    path: str,
    line: int,
    put: _Put,
    read: Callable[[int, int], str],
    template: tuple[tuple[str, sympy.Expr | None], ...] = (),
) -> KernelText | None:
    head = code[start:brace]
    name = _name(head)
    # The parameter list: the last balanced parentheses before the body.
    close_paren = code.rfind(")", start, brace)
    open_paren = _opening(code, close_paren) if close_paren != -1 else -1
    if open_paren < start:
        return None
    parameters = [p.strip() for _, p in split_top_level(code[open_paren + 1 : close_paren])]
    parameters = [p for p in parameters if p and p != "void"]
    names = [_parameter_name(p) for p in parameters]
    sizes = tuple(
        n
        for n, p in zip(names, parameters, strict=True)
        if "*" not in p and "[" not in p and re.search(r"\b(int|long|size_t|unsigned|int64_t)\b", p)
    )
    axes, shared, atomics = _respelled(code, start, brace, closing, put, read)
    strides = _grid_strides(code, brace, closing, put)
    grid = ", ".join([*(f"int {name}" for name, _ in template), *(f"int {n}" for n in GRID_NAMES)])
    put(close_paren, close_paren + 1, f"{', ' if parameters else ''}{grid})")
    loops = "".join(
        f"for (int {kind}_{axis} = 0; {kind}_{axis} < {dim}_{axis}; {kind}_{axis}++) "
        for kind, dim in (("blockIdx", "gridDim"), ("threadIdx", "blockDim"))
        for axis in reversed(AXES)
    )
    put(brace, brace + 1, "{ " + loops + "{")
    put(closing, closing + 1, "} }")
    span = Span(path, line, 1, code.count("\n", 0, closing) + 1)
    return KernelText(
        name,
        span,
        frozenset(shared),
        tuple(atomics),
        tuple(strides),
        frozenset(axes),
        sizes,
        tuple(names),
        template,
    )


def _respelled(
    code: str,
    start: int,
    brace: int,
    closing: int,
    put: _Put,
    read: Callable[[int, int], str],
) -> tuple[set[str], set[str], list[tuple[int, str, str]]]:
    """A `__global__` or `__device__` function respelled as C in place: qualifiers blanked,
    builtins, intrinsics, atomics and shuffles as what they are. Returns the axes it reads
    `threadIdx`... of, its shared arrays and its atomics."""
    for match in _QUALIFIERS.finditer(code, start, closing):
        if match.group().startswith("__launch_bounds__"):
            paren = code.index("(", match.end() - 1)
            end = matching(code, paren)
            put(match.start(), (end or paren) + 1)
        else:
            put(match.start(), match.end())
    for match in _RESTRICT.finditer(code, start, closing):
        put(match.start(), match.end(), "restrict".ljust(match.end() - match.start()))
    axes: set[str] = set()
    for match in _BUILTIN.finditer(code, brace, closing):
        axes.add(match.group(2))
        put(
            match.start(),
            match.end(),
            f"{match.group(1)}_{match.group(2)}".ljust(match.end() - match.start()),
        )
    for match in _NO_COST.finditer(code, brace, closing):
        end = matching(code, code.index("(", match.end() - 1)) or match.end()
        put(match.start(), end + 1)
    shared: set[str] = set()
    for match in _SHARED.finditer(code, brace, closing):
        end = code.index(";", match.end())
        declared = _DECLARED.search(code, match.end(), end)
        if declared is not None:
            shared.add(declared.group(1))
        put(match.start(), match.end())
    for match in _WARP_SIZE.finditer(code, brace, closing):
        put(match.start(), match.end(), "32".ljust(match.end() - match.start()))
    for match in _FAST_MATH.finditer(code, brace, closing):
        put(match.start(), match.end(), match.group(1).rjust(match.end() - match.start()))
    atomics: list[tuple[int, str, str]] = []
    calls = sorted(
        (m for pattern in _CALLS for m in pattern.finditer(code, brace, closing)),
        key=lambda m: m.start(),
        reverse=True,
    )
    # Innermost (last) first, each reading the text as respelled so far: a call's
    # arguments keep what was respelled in them (`__ldg(&x[threadIdx.x])`, nested
    # intrinsics).
    for match in calls:
        paren = code.index("(", match.end() - 1)
        end = matching(code, paren)
        if end is None:
            continue
        arguments = [a.strip() for _, a in split_top_level(read(paren + 1, end))]
        respelled = _call(match.group(1), arguments)
        if respelled is None:
            continue
        if match.re is _ATOMIC:
            line = code.count("\n", 0, match.start()) + 1
            target = re.split(r"[-+]?=", respelled, maxsplit=1)[0]
            atomics.append((line, _array_of(target), match.group(1).split("_")[0]))
        put(match.start(), end + 1, respelled)
    return axes, shared, atomics


def _opening(code: str, closing: int) -> int:
    depth = 0
    for position in range(closing, -1, -1):
        if code[position] == ")":
            depth += 1
        elif code[position] == "(":
            depth -= 1
            if depth == 0:
                return position
    return -1  # unbalanced


def _parameter_name(parameter: str) -> str:
    words = re.findall(r"\w+", parameter.split("[")[0])
    return words[-1] if words else ""


def _array_of(element: str) -> str:
    found = re.match(r"\s*\(?\s*(\w+)", element)
    return found.group(1) if found else element


def _grid_strides(
    code: str, brace: int, closing: int, put: _Put
) -> list[tuple[int, tuple[str, ...]]]:
    """Grid-stride loops among the kernel's top-level statements, respelled as plain
    loops from 0 with step 1 (see the module docstring)."""
    found: list[tuple[int, tuple[str, ...]]] = []
    locals_: dict[str, str] = {}
    position = brace + 1
    depth = 0
    while position < closing:
        char = code[position]
        if char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
        if depth == 0 and (declared := _INT_DECLARATION.match(code, position)):
            locals_[declared.group(1)] = declared.group(2)
        if (
            depth == 0
            and (loop := _FOR.match(code, position))
            and (position == 0 or not (code[position - 1].isalnum() or code[position - 1] == "_"))
        ):
            paren = loop.end() - 1
            end = matching(code, paren)
            if end is None:
                break
            parts = split_top_level(code[paren + 1 : end], ";")
            axis = _stride_axis(parts, locals_) if len(parts) == 3 else None
            if axis is not None:
                (_, init), (_, condition), (_, _update) = parts
                var = init.split("=")[0].split()[-1]
                typed = init.split("=")[0].strip()
                header = f"{typed} = 0;{condition}; {var}++"
                put(paren + 1, end, header)
                found.append((code.count("\n", 0, position) + 1, axis))
            position = end + 1
            continue
        position += 1
    return found


def _stride_axis(parts: list[tuple[int, str]], locals_: dict[str, str]) -> tuple[str, ...] | None:
    """The grid loops a strided loop covers: `i = blockIdx.a*blockDim.a + threadIdx.a;
    ...; i += blockDim.a*gridDim.a` covers its axis' blocks and threads, `i =
    threadIdx.a; ...; i += blockDim.a` its axis' threads (once per block)."""
    (_, init), _, (_, update) = parts
    if "=" not in init or "+=" not in update:
        return None
    var = init.split("=")[0].split()[-1] if init.split("=")[0].split() else ""
    moved, step = (s.strip() for s in update.split("+=", 1))
    if moved != var:
        return None
    start = _resolved(init.split("=", 1)[1], locals_)
    stride = _resolved(step, locals_)
    for axis in AXES:
        block, thread = f"blockIdx.{axis}", f"threadIdx.{axis}"
        size, count = f"blockDim.{axis}", f"gridDim.{axis}"
        starts = {f"{a}*{b}+{thread}" for a, b in ((block, size), (size, block))}
        starts |= {f"{thread}+{a}*{b}" for a, b in ((block, size), (size, block))}
        if start in starts and stride in (f"{size}*{count}", f"{count}*{size}"):
            return (f"blockIdx_{axis}", f"threadIdx_{axis}")
        if start == thread and stride == size:
            return (f"threadIdx_{axis}",)
    return None


def _resolved(text: str, locals_: dict[str, str]) -> str:
    compact = re.sub(r"[\s()]", "", text)
    if compact in locals_:
        compact = re.sub(r"[\s()]", "", locals_[compact])
    return compact


def _launches(
    code: str,
    brace: int,
    closing: int,
    path: str,
    host: str,
    constants: Mapping[str, sympy.Expr],
) -> list[Launch]:
    """`kernel<<<grid, block[, smem[, stream]]>>>(args)` (`kernel<256><<<...>>>` for a
    template) in one host function, with its `dim3` and integer locals and the file's
    `constexpr` integers resolved."""
    names: dict[str, sympy.Expr] = dict(constants)
    dims: dict[str, tuple[str, ...]] = {}
    launches: list[Launch] = []
    body = code[brace:closing]
    events = sorted(
        [
            (m.start(), "dim3", m)
            for m in re.finditer(r"\bdim3\s+(\w+)\s*(\(|=\s*dim3\s*\(|=\s*\{|\{)", body)
        ]
        + [(m.start(), "int", m) for m in _INT_DECLARATION.finditer(body)]
        + [
            (m.start(), "launch", m) for m in re.finditer(r"\b(\w+)\s*(?:<([^<>;]*)>)?\s*<<<", body)
        ],
        key=lambda e: e[0],
    )
    for offset, kind, match in events:
        if kind == "dim3":
            opening = brace + match.end() - 1
            end = matching(code, opening)
            if end is not None:
                dims[match.group(1)] = tuple(p for _, p in split_top_level(code[opening + 1 : end]))
        elif kind == "int":
            value = size_expression(match.group(2), names)
            if value is not None:
                names[match.group(1)] = value
        else:
            start = brace + match.end()
            end = code.find(">>>", start)
            if end == -1:
                continue
            # `ns::kernel`, `ns::WARP`: names in a namespace are read by their own name.
            config = [
                re.sub(r"\b\w+::", "", p).strip() for _, p in split_top_level(code[start:end])
            ]
            paren = code.find("(", end)
            close = matching(code, paren) if paren != -1 else None
            arguments = (
                [a.strip() for _, a in split_top_level(code[paren + 1 : close])] if close else []
            )
            span = _span_at(code, brace + offset, path)
            launch = _launch(match.group(1), config, arguments, dims, names, span, host)
            if launch is not None and match.group(2) is not None:
                values = [size_expression(p, names) for _, p in split_top_level(match.group(2))]
                launch = replace(
                    launch, template_arguments=tuple(v for v in values if v is not None)
                )
            if launch is not None:
                launches.append(launch)
    return launches


def _launch(
    kernel: str,
    config: list[str],
    arguments: list[str],
    dims: dict[str, tuple[str, ...]],
    names: dict[str, sympy.Expr],
    span: Span,
    host: str,
) -> Launch | None:
    from aiscan.algebra import constant

    if len(config) < 2:
        return None
    # A host variable passed to the kernel stays a size (`int n = 1 << 24; k<<<(n +
    # 255) / 256, 256>>>(x, n)`): the grid then covers the kernel's own `n`.
    passed = {word for argument in arguments for word in re.findall(r"\b\w+\b", argument)}
    names = {name: value for name, value in names.items() if name not in passed}
    axes = []
    for part in config[:2]:
        values = dims.get(part)
        if values is None:
            inner = re.fullmatch(r"dim3\s*\((.*)\)", part, re.DOTALL)
            values = tuple(p for _, p in split_top_level(inner.group(1))) if inner else (part,)
        read = [size_expression(v, names) for v in values]
        if any(v is None for v in read) or not 1 <= len(read) <= 3:
            return None
        one = constant(1)
        padded = [*read, one, one][:3]
        axes.append((padded[0], padded[1], padded[2]))
    bound = tuple(
        (position, value)
        for position, argument in enumerate(arguments)
        if (value := size_expression(argument, {})) is not None
    )
    return Launch(
        kernel,
        axes[0],
        axes[1],
        f"launched in {host}, line {span.line}",
        span,
        tuple((str(p), v) for p, v in bound),
    )


def _constexprs(code: str, put: _Put) -> tuple[dict[str, sympy.Expr], list[tuple[int, int]]]:
    """`constexpr int WARP = 32;` (at file level or in a function): the declaration
    blanked and each later use of the name, up to the end of its block, replaced by its
    value, as the compiler folds it; integer values are also returned, for launches. A
    value that is no integer expression nor a number keeps its name (a plain `const`)."""
    known: dict[str, sympy.Expr] = {}
    folded: list[tuple[int, int]] = []
    for match in _CONSTEXPR.finditer(code):
        name, text = match.group(1), match.group(2).strip()
        value = size_expression(text, known)
        if value is not None and value.is_Integer:
            known[name] = value
            spelled = str(value)
        elif _NUMBER.fullmatch(text):
            spelled = text
        else:
            word = re.search(r"\bconstexpr\b", code[match.start() : match.end()])
            if word is not None:
                at = match.start() + word.start()
                put(at, at + len("constexpr"), "const".ljust(len("constexpr")))
                folded.append((at, at + len("constexpr")))
            continue
        put(match.start(), match.end())
        folded.append((match.start(), match.end()))
        end = _block_end(code, match.start())
        for use in re.finditer(rf"\b{re.escape(name)}\b", code[match.end() : end]):
            at = match.end() + use.start()
            if code[at - 2 : at] != "::" and code[at - 1 : at] != ".":
                put(at, at + len(name), spelled.ljust(len(name)))
    return known, folded


def _block_end(code: str, position: int) -> int:
    """Where the innermost block around `position` ends (the end of `code` at file
    level, or inside a namespace)."""
    depth = 0
    for at in range(position, len(code)):
        if code[at] == "{":
            depth += 1
        elif code[at] == "}":
            if depth == 0:
                opening = _opening_brace(code, at)
                head = code[code.rfind(";", 0, opening) + 1 : opening] if opening >= 0 else ""
                if re.search(r"\bnamespace\b", head):
                    return len(code)
                return at
            depth -= 1
    return len(code)


def _opening_brace(code: str, closing: int) -> int:
    depth = 0
    for at in range(closing, -1, -1):
        if code[at] == "}":
            depth += 1
        elif code[at] == "{":
            depth -= 1
            if depth == 0:
                return at
    return -1


def _template_parameters(
    template: re.Match[str] | None, constants: Mapping[str, sympy.Expr]
) -> tuple[tuple[str, sympy.Expr | None], ...] | None:
    """`template <int BLOCK, int STEPS = 4>`: each integer parameter and its default;
    None when one is not an integer (`typename T`), or there is no template."""
    if template is None:
        return None
    found: list[tuple[str, sympy.Expr | None]] = []
    for _, part in split_top_level(template.group(1)):
        parameter = _TEMPLATE_INT.fullmatch(part)
        if parameter is None:
            return None
        default = parameter.group(2)
        found.append((parameter.group(1), size_expression(default, constants) if default else None))
    return tuple(found)


_CALLS = (_ATOMIC, _LDG, _SHUFFLE, _INTRINSIC)


def _call(name: str, arguments: list[str]) -> str | None:
    """The C spelling of a CUDA call with these (respelled) arguments, or None to leave
    it as it is (an unknown call)."""
    if name.startswith("atomic"):
        if len(arguments) != 2:
            return None
        target, value = arguments
        element = target[1:].strip() if target.startswith("&") else f"{target}[0]"
        operation = name.split("_")[0]
        if operation == "atomicAdd":
            return f"{element} += ({value})"  # a read, an add, a write
        if operation == "atomicSub":
            return f"{element} -= ({value})"
        if operation == "atomicExch":
            return f"{element} = ({value}) + 0 * {element}"  # a read (the old value) and a write
        keep = ">" if operation == "atomicMax" else "<"  # a comparison: no FLOP
        return f"{element} = ({element} {keep} ({value}) ? {element} : ({value}))"
    if name == "__ldg":
        if len(arguments) != 1 or not arguments[0]:
            return None
        inner = arguments[0]
        return f"({inner[1:]})" if inner.startswith("&") else f"(*({inner}))"
    if name.startswith("__shfl"):
        # A warp shuffle moves a register between lanes: no memory, no arithmetic.
        return f"({arguments[1]})" if len(arguments) >= 2 else None
    form = _INTRINSICS[name]
    return form.format(*arguments) if len(arguments) == form.count("{") else None
