"""What a name in the source refers to, whatever way it was imported, and where it is.

`np.dot`, `from numpy import dot` and `import numpy.linalg as la` all resolve to NumPy's
names; the APIs that mirror NumPy (`jax.numpy`, `cupy`, and the torch functions that mean
what NumPy's do) map onto NumPy's names so one table of semantics serves them all. Other
framework names keep their own (`torch.nn.functional.gelu`, `jax.nn.softmax`).

The answers are those of libcst's `QualifiedNameProvider` and `PositionProvider`, but those
providers walk a copy of the whole tree with libcst's visitors, for the few dozen nodes per
file we ask about: ~160 ms a 100-line file, eight times its parse. So (now ~6 ms):

* names come from a table of the module's bindings read off CPython's `ast` (one cheap
  walk), resolved the way libcst's scopes do (libcst's qualified names, its shadowing,
  its handling of dotted imports). Whenever the answer could hinge on what that table
  leaves out (a name bound in a nested scope, `global`, `del`, a binding whose order
  matters, a string that libcst would parse as an annotation) the query goes to libcst's
  provider itself, computed once for the module on first need;
* positions and node texts come from one code generation pass recording character
  offsets, converted to lines and columns only for the nodes that get a span.
"""

from __future__ import annotations

import ast
import builtins
import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, auto
from itertools import combinations

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.helpers import get_full_name_for_node
from libcst.metadata import MetadataWrapper, QualifiedNameProvider

from aiscan.span import Span

__all__ = ["SourceNames"]

_MIRRORS = (
    ("numpy.", "numpy."),
    ("jax.numpy.", "numpy."),
    ("cupy.", "numpy."),
    ("torch.linalg.", "numpy.linalg."),
    ("numba.prange", "builtins.range"),
    ("math.", "math."),
    ("builtins.", "builtins."),
    ("torch.", "torch."),
    ("jax.", "jax."),
    ("flax.linen.", "flax.linen."),
)
# What torch spells as NumPy does, with NumPy's meaning: these read as `numpy.*`, so one
# table of semantics serves both. Any other torch name keeps its own (`torch.nn.
# functional.gelu`, `torch.softmax`): torch's `transpose`, `max`, `std` or `float` mean
# something else than NumPy's.
_TORCH_WORDS = (
    "exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan tanh sinh cosh erf erfc "
    "abs absolute maximum minimum where matmul dot inner outer einsum sum mean prod amax "
    "amin zeros ones empty full zeros_like ones_like empty_like full_like add subtract "
    "multiply divide true_divide square sigmoid relu sign floor ceil round trunc isnan "
    "isfinite logical_and logical_or logical_not greater less greater_equal less_equal "
    "reshape triu tril clip pi e inf nan float16 float32 float64 bfloat16 int32 int64 "
    "complex64 complex128 stack arange"
)
_TORCH_AS_NUMPY = frozenset(_TORCH_WORDS.split())
_TORCH_ALIASES = {
    "mm": "matmul",
    "bmm": "matmul",
    "mv": "matmul",
    "div": "divide",
    "mul": "multiply",
    "sub": "subtract",
    "neg": "negative",
    "pow": "power",
    "clamp": "clip",
    "cat": "concatenate",
    "concat": "concatenate",
}
_LAX_SAME = "exp exp2 expm1 log log1p sqrt rsqrt tanh sin cos abs erf"
_LAX_AS_NUMPY = {
    f"jax.lax.{lax}": f"numpy.{numpy}"
    for lax, numpy in (
        *((n, n) for n in _LAX_SAME.split(" ")),
        ("add", "add"),
        ("sub", "subtract"),
        ("mul", "multiply"),
        ("div", "divide"),
        ("neg", "negative"),
        ("max", "maximum"),
        ("min", "minimum"),
        ("pow", "power"),
        ("logistic", "sigmoid"),
        ("select", "where"),
        ("batch_matmul", "matmul"),
        ("dot", "dot"),
    )
}
"""`jax.lax`'s common elementwise ops and products, by the NumPy name of the same thing."""
_FLAX_ACTIVATIONS = "gelu relu silu swish sigmoid softmax log_softmax logsumexp one_hot"
_FLAX_AS_JAX = {
    **{f"flax.linen.{n}": f"jax.nn.{n}" for n in _FLAX_ACTIVATIONS.split(" ")},
    "flax.linen.tanh": "numpy.tanh",
}
"""`flax.linen` re-exports `jax.nn`'s activations (`nn.gelu` is `jax.nn.gelu`)."""
_NEWLINE = re.compile(r"\r\n?|\n")
_BINDING_WORDS = re.compile(rb"\b(import|def|class|lambda|global|nonlocal)\b")
_MAX_ORDERINGS = 4
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_NEW_SCOPES = (*_DEFINITIONS, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


_SPECIAL = (
    ast.Constant,
    ast.Expr,
    ast.Name,
    *_NEW_SCOPES,
    ast.arg,
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
    ast.ExceptHandler,
    ast.MatchAs,
    ast.MatchStar,
    ast.MatchMapping,
)
_BINDS_NOTHING = frozenset(
    kind
    for kind in vars(ast).values()
    if isinstance(kind, type) and issubclass(kind, ast.AST) and not issubclass(kind, _SPECIAL)
)
"""Node classes `_Bindings._walk` only descends through."""


class _Unsure(Enum):
    """Only libcst's own scopes can tell."""

    UNSURE = auto()


_UNSURE = _Unsure.UNSURE


class SourceNames:
    """Qualified names and 1-based spans of the nodes of one parsed module."""

    def __init__(self, module: cst.Module, tree: ast.Module, path: str) -> None:
        self.path = path
        self.module = module
        self._positions = _Positions(module)
        self._bindings = _Bindings(tree, module)
        self._function: int | None = None

    def within(self, function: cst.FunctionDef | None) -> SourceNames:
        """The same names, read from inside `function` (a top-level `def` or a method of a
        top-level class) or module code."""
        inside = object.__new__(SourceNames)
        inside.path = self.path
        inside.module = self.module
        inside._positions = self._positions
        inside._bindings = self._bindings
        inside._function = None if function is None else self._bindings.index_of(function)
        return inside

    @property
    def code(self) -> str:
        """The module's code, as its nodes generate it."""
        return self._positions.code

    def canonical(self, node: cst.CSTNode) -> str | None:
        """`numpy.dot` for `np.dot`, `jnp.dot`, `dot` imported from numpy; None if not an API."""
        return self._bindings.canonical(node, self._function)

    def span(self, node: cst.CSTNode) -> Span:
        """libcst's 0-based columns become our 1-based ones, here and only here."""
        positions = self._positions
        known = positions.spans.get(id(node))
        if known is not None:
            return known
        where = positions.syntactic.get(id(node))
        if where is None:
            return Span(self.path, 1, 1)
        line, column = positions.line_column(where[0])
        end_line, end_column = positions.line_column(where[1])
        span = Span(self.path, line, column + 1, end_line, end_column + 1)
        positions.spans[id(node)] = span  # a node of the module: its id stays its own
        return span

    def text(self, node: cst.CSTNode) -> str:
        where = self._positions.inclusive.get(id(node))
        code = (
            self.module.code_for_node(node)
            if where is None
            else self._positions.code[where[0] : where[1]]
        )
        return " ".join(code.split())


def _canonical_of(qualified_names: frozenset[str]) -> str | None:
    for qualified in sorted(qualified_names):
        for prefix, replacement in _MIRRORS:
            if qualified.startswith(prefix) or qualified == prefix.rstrip("."):
                name = replacement + qualified[len(prefix) :]
                if replacement == "torch.":
                    return _torch_as_numpy(name)
                if replacement == "flax.linen.":
                    return _FLAX_AS_JAX.get(name, name)
                return _LAX_AS_NUMPY.get(name, name)
    return None


def _torch_as_numpy(name: str) -> str:
    """`torch.exp` is `numpy.exp`, `torch.mm` is `numpy.matmul`; `torch.softmax` stays."""
    function = name.removeprefix("torch.")
    if function in _TORCH_ALIASES:
        return f"numpy.{_TORCH_ALIASES[function]}"
    return f"numpy.{function}" if function in _TORCH_AS_NUMPY else name


# ---- positions ------------------------------------------------------------------------


class _Positions:
    """`PositionProvider`'s ranges (and whitespace-inclusive ones) as code offsets."""

    def __init__(self, module: cst.Module) -> None:
        state = _OffsetRecordingState(module.default_indent, module.default_newline)
        module._codegen(state)
        self.syntactic = state.syntactic
        self.inclusive = state.inclusive
        self.spans: dict[int, Span] = {}
        """The spans made so far, by node: the lowering asks for many twice."""
        self.code = "".join(state.tokens)
        if "\r" in self.code:
            # libcst counts lines token by token, so a `\r` ending one token and a `\n`
            # starting the next are two line breaks; follow it exactly.
            starts = [0]
            offset = 0
            for token in state.tokens:
                starts += [offset + m.end() for m in _NEWLINE.finditer(token)]
                offset += len(token)
        else:
            starts = [0, *(m.end() for m in re.finditer("\n", self.code))]
        self._line_starts = starts

    def line_column(self, offset: int) -> tuple[int, int]:
        """1-based line, 0-based column (as libcst counts them)."""
        index = bisect_right(self._line_starts, offset) - 1
        return index + 1, offset - self._line_starts[index]


class _OffsetRecordingState(CodegenState):
    """Code generation that notes where each node's text starts and ends.

    Mirrors libcst's `PositionProvidingCodegenState`: a node's syntactic range is the one it
    records itself (possibly hoisted from a child), else its whitespace-inclusive range.
    """

    def __init__(self, default_indent: str, default_newline: str) -> None:
        super().__init__(default_indent, default_newline)
        self.offset = 0
        # Keyed by `id(node)` (the module outlives these tables): a libcst node's own
        # `__hash__` is a Python call, and this pass hashes every node of the file.
        self.syntactic: dict[int, tuple[int, int]] = {}
        self.inclusive: dict[int, tuple[int, int]] = {}
        self._starts: list[int] = []

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        where = (self._starts.pop(), self.offset)
        key = id(node)
        self.inclusive[key] = where
        self.syntactic.setdefault(key, where)

    def pop_trailing_newline(self) -> None:
        """Keep it: offsets were counted with it, as libcst's lines and columns were."""

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _SyntacticRecord:
        # A plain context manager: libcst calls this for most nodes, and a generator-based
        # one cost more than the rest of this pass.
        return _SyntacticRecord(self, node, start_node, end_node)


class _SyntacticRecord:
    __slots__ = ("end_node", "node", "start", "start_node", "state")

    def __init__(
        self,
        state: _OffsetRecordingState,
        node: cst.CSTNode,
        start_node: cst.CSTNode | None,
        end_node: cst.CSTNode | None,
    ) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node
        self.start = state.offset

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, *exception: object) -> None:
        if kind is not None:
            return  # as libcst's generator does: what stopped the pass goes on (a time limit)
        syntactic = self.state.syntactic
        start = self.start if self.start_node is None else syntactic[id(self.start_node)][0]
        end = self.state.offset if self.end_node is None else syntactic[id(self.end_node)][1]
        syntactic[id(self.node)] = (start, end)


# ---- bindings -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Import:
    """One `import`/`from ... import` statement, as libcst's `ImportAssignment` reads it."""

    module: str
    aliases: tuple[tuple[str, str | None], ...]  # (dotted name, `as` name)

    def qualified_names(self, full_name: str) -> frozenset[str]:
        results: set[str] = set()
        for dotted, alias in self.aliases:
            parts = dotted.split(".")
            for real_name in (".".join(parts[:i]) for i in range(len(parts), 0, -1)):
                as_name = real_name
                if self.module.endswith("."):
                    real_name = f"{self.module}{real_name}"
                elif self.module:
                    real_name = f"{self.module}.{real_name}"
                if alias:
                    as_name = alias
                if full_name.startswith(as_name):
                    remaining = full_name.split(as_name, 1)[1]
                    if remaining and not remaining.startswith("."):
                        continue
                    remaining = remaining.lstrip(".")
                    results.add(f"{real_name}.{remaining}" if remaining else real_name)
                    break
        return frozenset(results)


_LOCAL = None  # a binding that is not an import: its qualified name is its scope's
_Binding = _Import | None
_Table = dict[str, list[_Binding]]


@dataclass(slots=True)
class _Where:
    """Where a walk is: its binding table, or None inside scopes we do not model."""

    table: _Table | None
    unmodeled: set[str]


@dataclass(slots=True)
class _Bindings:
    """The module's bindings by scope, and name resolution the way libcst's scopes do it."""

    tree: ast.Module
    module: cst.Module
    globals_: _Table = field(default_factory=dict)
    functions: list[_Table] = field(default_factory=list)
    function_names: list[str] = field(default_factory=list)
    # Names that, looked up from module code or from a function, need libcst's answer.
    unmodeled_globally: set[str] = field(default_factory=set)
    unmodeled_in: list[set[str]] = field(default_factory=list)
    unmodeled_anywhere: set[str] = field(default_factory=set)
    everything_unmodeled: bool = False
    _function_index: dict[int, int] = field(default_factory=dict)
    _fallback: Mapping[cst.CSTNode, object] | None = None

    def __post_init__(self) -> None:
        module_level = _Where(self.globals_, self.unmodeled_globally)
        for statement in self.tree.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                _bind(self.globals_, statement.name, _LOCAL)
                self._function(statement, statement.name)
            elif isinstance(statement, ast.ClassDef):
                self._top_level_class(statement, module_level)
            else:
                self._walk(statement, module_level)
        self._function_index = {id(d): i for i, d in enumerate(_modeled_functions(self.module))}

    def index_of(self, function: cst.FunctionDef) -> int | None:
        """The scope of a top-level `def` or of a method of a top-level class; None for
        others (nested ones), whose names libcst resolves."""
        return self._function_index.get(id(function))

    # ---- reading the bindings --------------------------------------------------------

    def _top_level_class(self, node: ast.ClassDef, module_level: _Where) -> None:
        """A class's methods are scopes of their own (`Attend.forward.<locals>`), whose
        reads skip the class body, as Python's do; the rest of the class is left to libcst
        as before: what the class body binds, and its decorators and bases."""
        self._bind(module_level, node.name, _LOCAL)
        in_class = _Where(None, module_level.unmodeled)
        for child in (*node.decorator_list, *node.bases, *node.keywords):
            self._walk(child, in_class)
        for parameter in getattr(node, "type_params", ()):  # Python 3.12's `class C[T]:`
            self._walk(parameter, in_class)
        for statement in node.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._bind(in_class, statement.name, _LOCAL)  # a class attribute
                self._function(statement, f"{node.name}.{statement.name}")
            else:
                self._walk(statement, in_class)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, qualified: str) -> None:
        """The scope of a top-level `def` or a method, named as libcst names its locals."""
        table: _Table = {}
        unmodeled: set[str] = set()
        self.functions.append(table)
        self.function_names.append(qualified)
        self.unmodeled_in.append(unmodeled)
        arguments = node.args
        for argument in (
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            *(a for a in (arguments.vararg, arguments.kwarg) if a is not None),
        ):
            _bind(table, argument.arg, _LOCAL)
        # Decorators, defaults and annotations run in the enclosing scope: bindings there
        # (a walrus) are left to libcst.
        outside = _Where(None, self.unmodeled_anywhere)
        for child in (*node.decorator_list, *arguments.defaults, node.returns):
            if child is not None:
                self._walk(child, outside)
        for default in arguments.kw_defaults:
            if default is not None:
                self._walk(default, outside)
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            if argument.annotation is not None:
                self._walk(argument.annotation, outside)
        for star in (arguments.vararg, arguments.kwarg):
            if star is not None and star.annotation is not None:
                self._walk(star.annotation, outside)
        inside = _Where(table, unmodeled)
        for statement in node.body:
            self._walk(statement, inside)

    def _walk(self, node: ast.AST, where: _Where) -> None:
        if type(node) in _BINDS_NOTHING:  # most nodes
            self._walk_children(node, where)
            return
        if isinstance(node, ast.Constant):
            # libcst parses some strings (annotations, `cast("T", x)`) as code and records
            # what they bind; a statement's own string (a docstring) is never one of them.
            value = node.value
            if isinstance(value, str):
                value = value.encode("utf-8", "surrogatepass")
            if isinstance(value, bytes) and _BINDING_WORDS.search(value):
                self.everything_unmodeled = True
            return
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                self._bind(where, node.id, _LOCAL)
            elif isinstance(node.ctx, ast.Del):
                self.unmodeled_anywhere.add(node.id)
            return
        if isinstance(node, _DEFINITIONS):
            self._bind(where, node.name, _LOCAL)
        if isinstance(node, _NEW_SCOPES):
            self._walk_children(node, _Where(None, where.unmodeled))
            return
        if isinstance(node, ast.arg):
            where.unmodeled.add(node.arg)  # a nested function's or lambda's parameter
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self._import(node, where)
            return
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.unmodeled_anywhere.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name is not None:
            self._bind(where, node.name, _LOCAL)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name is not None:
            self.unmodeled_anywhere.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest is not None:
            self.unmodeled_anywhere.add(node.rest)
        self._walk_children(node, where)

    def _walk_children(self, node: ast.AST, where: _Where) -> None:
        """`_walk` of each child, in `ast.iter_child_nodes`' order, without its two
        generators (this walk is a tenth of a Python file's lowering)."""
        for name in node._fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        self._walk(item, where)
            elif isinstance(value, ast.AST):
                self._walk(value, where)

    def _import(self, node: ast.Import | ast.ImportFrom, where: _Where) -> None:
        module = ""
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
        aliases = tuple((a.name, a.asname) for a in node.names)
        if any(name == "*" for name, _ in aliases):
            return  # libcst records nothing for a star import
        statement = _Import(module, aliases)
        for name, alias in aliases:
            if alias is not None:
                self._bind(where, alias, statement)
                continue
            parts = name.split(".")
            for end in range(len(parts), 0, -1):
                self._bind(where, ".".join(parts[:end]), statement)

    @staticmethod
    def _bind(where: _Where, name: str, binding: _Binding) -> None:
        if where.table is None:
            where.unmodeled.add(name.partition(".")[0])
        else:
            _bind(where.table, name, binding)

    # ---- resolving -------------------------------------------------------------------

    def canonical(self, node: cst.CSTNode, function: int | None) -> str | None:
        answer = self._resolve(node, function)
        if answer is not _UNSURE:
            return answer
        return _canonical_of(self._libcst_names(node))

    def _resolve(self, node: cst.CSTNode, function: int | None) -> str | _Unsure | None:
        """The canonical name, or `_UNSURE` when only libcst's own scopes can tell."""
        full_name = get_full_name_for_node(node)
        if full_name is None:
            return None if not isinstance(node, cst.BaseString) else _UNSURE
        head = full_name.partition(".")[0]
        if self.everything_unmodeled or head in self.unmodeled_anywhere:
            return _UNSURE
        local: _Table | None = None
        prefix = ""
        if function is None:
            if head in self.unmodeled_globally:
                return _UNSURE
        else:
            if head in self.unmodeled_in[function]:
                return _UNSURE
            local = self.functions[function]
            prefix = f"{self.function_names[function]}.<locals>"
        # libcst looks the longest dotted prefix up, innermost scope first.
        for key in _dotted_prefixes(full_name):
            if local is not None and key in local:
                bindings, scope_prefix, parent = local[key], prefix, self._global_names(key)
                break
            if key in self.globals_:
                bindings, scope_prefix = self.globals_[key], ""
                parent = _builtin_names(key)
                if local is not None:  # read from a function: every module binding counts
                    return _canonical_of(_names_of(bindings, "", full_name))
                break
            if hasattr(builtins, key):
                return _canonical_of(frozenset({f"builtins.{key}"}))
        else:
            return None
        everything = _canonical_of(_names_of(bindings, scope_prefix, full_name))
        if not (isinstance(node, cst.Name) or key == full_name):
            return everything
        # A read sees only the bindings of its own scope made before it (or, if none, the
        # enclosing scope's); an assignment sees itself. Unless all agree, ask libcst.
        distinct = list(dict.fromkeys(_names_of([b], scope_prefix, full_name) for b in bindings))
        if len(distinct) > _MAX_ORDERINGS:
            return _UNSURE
        answers = {_canonical_of(parent), everything}
        for size in range(1, len(distinct)):
            for subset in combinations(distinct, size):
                answers.add(_canonical_of(frozenset().union(*subset)))
        return everything if len(answers) == 1 else _UNSURE

    def _global_names(self, key: str) -> frozenset[str]:
        if key in self.globals_:
            return _names_of(self.globals_[key], "", key)
        return _builtin_names(key)

    def _libcst_names(self, node: cst.CSTNode) -> frozenset[str]:
        if self._fallback is None:
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._fallback = wrapper.resolve(QualifiedNameProvider)
        found = self._fallback.get(node)
        if callable(found):
            found = found()  # libcst computes qualified names lazily
        if not isinstance(found, set):
            return frozenset()
        return frozenset(str(q.name) for q in found)


def _bind(table: _Table, name: str, binding: _Binding) -> None:
    table.setdefault(name, []).append(binding)


def _modeled_functions(module: cst.Module) -> Iterator[cst.FunctionDef]:
    """The `def`s `_Bindings` gives a scope of their own, in the order it reads them: the
    top-level ones and the methods of top-level classes."""
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            yield statement
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            yield from (s for s in statement.body.body if isinstance(s, cst.FunctionDef))


def _dotted_prefixes(full_name: str) -> Iterator[str]:
    prefix = full_name
    while prefix:
        yield prefix
        prefix = prefix.rpartition(".")[0]


def _names_of(bindings: Sequence[_Binding], scope_prefix: str, full_name: str) -> frozenset[str]:
    names: set[str] = set()
    for binding in bindings:
        if binding is None:
            names.add(f"{scope_prefix}.{full_name}" if scope_prefix else full_name)
        else:
            names |= binding.qualified_names(full_name)
    return frozenset(names)


def _builtin_names(key: str) -> frozenset[str]:
    return frozenset({f"builtins.{key}"}) if hasattr(builtins, key) else frozenset()
