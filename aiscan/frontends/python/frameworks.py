"""The array framework a module uses, read from its imports, and the rules it applies.

The same NumPy-style code runs differently under each framework (measured on an H100, see
`shared/gpu-reference`), so the imports decide:

* **JAX.** float64 is computed as float32 unless x64 is enabled (`jax.config.update(
  "jax_enable_x64", True)` or `os.environ["JAX_ENABLE_X64"]` set in the module, or the
  `jax-enable-x64` setting); Python scalars are weakly typed (`x_f16 / 2.0` stays float16,
  which the NEP 50 rules aiscan applies already give); float32 contractions run in TF32 on
  GPUs unless `precision=HIGHEST` (per function), `jax.default_matmul_precision(...)` or
  the `jax_default_matmul_precision` option asks for full float32.
* **PyTorch.** A float32 matmul is full FP32 unless `torch.backends.cuda.matmul.allow_tf32
  = True` or `torch.set_float32_matmul_precision("high" | "medium")`.
* **CuPy.** NumPy's rules (NEP 50); `CUPY_TF32=1` set in the module opts into TF32.
* A function under `jax.jit`, `torch.compile` or `numba.njit`/`numba.jit` (decorator, or a
  visible module-level wrap `g = jax.jit(f)`) is placed with the jit view; other array code
  with the eager view.

The framework is decided per function, not per module: a function under `jax.jit` or
`torch.compile` runs in that framework; any other runs in the one whose names it calls
(`jnp.dot`, `F.gelu`, `np.sum`), or, calling none, in the module's only array library.
So `import numpy as np` beside `import jax.numpy as jnp` (how JAX code is written) keeps
each function's rules. Un-annotated parameters take the framework's default dtype:
float32 for PyTorch (`torch.set_default_dtype` read) and for JAX without x64, float64 for
NumPy and CuPy.

Each rule applied becomes a note on the import's line. Only CPython's `ast` is read: the
code is never imported or run.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from aiscan.frontends.python.dtypes import FLOAT32, dtype_qualified
from aiscan.ir.nodes import ElementType

__all__ = ["FrameworkRules", "read_frameworks"]

_ROOTS = {"jax": "JAX", "torch": "PyTorch", "cupy": "CuPy", "numba": "Numba"}
_ARRAY_LIBRARIES = ("numpy", "jax", "torch", "cupy")
_TYPING = ("numpy.typing", "jax.typing")
"""Annotations only: naming them says nothing of which library runs the code."""
_JIT_FRAMEWORK = {"jax.jit": "jax", "jax.pmap": "jax", "torch.compile": "torch"}
_JIT = {
    "jax.jit",
    "jax.pmap",
    "torch.compile",
    "numba.njit",
    "numba.jit",
    "numba.cuda.jit",
}
_TRUE_TEXT = {"1", "true", "True", "yes", "on"}
_FULL_FP32 = {"highest", "float32", "fp32", "HIGHEST"}


@dataclass(slots=True)
class FrameworkRules:
    """What the imports and settings decide for one module."""

    frameworks: dict[str, int] = field(default_factory=dict)
    """Framework name (`jax`, `torch`, `cupy`, `numba`) to the line of its first import."""
    x64: bool = False
    x64_source: str = ""
    full_fp32_functions: set[str] = field(default_factory=set)
    """Functions whose contractions ask for full float32 (`precision=HIGHEST`)."""
    jit_functions: set[str] = field(default_factory=set)
    notes: list[tuple[int, str]] = field(default_factory=list)
    """(line, text) for each rule applied, on the import's line."""
    imported: set[str] = field(default_factory=set)
    """Top-level modules imported (`numpy` among them or not)."""
    function_frameworks: dict[str, str] = field(default_factory=dict)
    """The array library each function runs in (`numpy`, `jax`, `torch`, `cupy`), where one
    is decided (see `_function_frameworks`); by function name (`Class.method` too)."""
    module_framework: str | None = None
    """The module's only array library, which functions that call none run in."""
    torch_default: ElementType = FLOAT32
    """`torch.get_default_dtype()`: float32 unless `torch.set_default_dtype(...)` says."""
    tf32_by_framework: dict[str, str | None] = field(default_factory=dict)
    """Per framework, why its float32 contractions run in TF32, or None for full FP32."""

    def framework(self, function: str) -> str | None:
        """The array library `function` runs in; None where that is not decided."""
        return self.function_frameworks.get(function, self.module_framework)

    def demotes_float64_in(self, function: str) -> bool:
        """JAX without x64: float64 data is float32."""
        return self.framework(function) == "jax" and not self.x64

    def default_dtype(self, function: str) -> tuple[ElementType, str] | None:
        """The dtype un-annotated arrays of `function` have in its framework, and why;
        None for NumPy's own default (the `--python-dtype` setting)."""
        framework = self.framework(function)
        if framework == "torch":
            return self.torch_default, "PyTorch's default dtype"
        if framework == "jax" and not self.x64:
            return FLOAT32, "JAX's default dtype with x64 off"
        return None

    def view(self, function: str) -> str:
        """`jit` for a compiled function, `eager` otherwise."""
        return "jit" if function in self.jit_functions else "eager"

    def tf32_for(self, function: str) -> str | None:
        if function in self.full_fp32_functions:
            return None
        framework = self.framework(function)
        return self.tf32_by_framework.get(framework, None) if framework else None


def read_frameworks(
    tree: ast.Module, *, x64_setting: bool | None = None, tf32_setting: bool | None = None
) -> FrameworkRules:
    """The rules of `tree`'s frameworks; a setting (not None) overrides what the code says."""
    rules = FrameworkRules()
    aliases = _aliases(tree, rules)
    libraries = [a for a in _ARRAY_LIBRARIES if a in rules.imported]
    rules.module_framework = libraries[0] if len(libraries) == 1 else None
    if not rules.frameworks:
        return rules
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    jax_x64 = _jax_x64(tree, calls, aliases)
    env = _environment(tree)
    if x64_setting is not None:
        rules.x64, rules.x64_source = x64_setting, "the jax-enable-x64 setting"
    elif jax_x64:
        rules.x64, rules.x64_source = True, 'jax.config.update("jax_enable_x64", True)'
    elif env.get("JAX_ENABLE_X64", "") in _TRUE_TEXT:
        rules.x64, rules.x64_source = True, "JAX_ENABLE_X64 set in the module"
    for framework in ("jax", "torch", "cupy"):
        if framework in rules.frameworks:
            tf32 = _tf32(framework, calls, aliases, env, tree)
            if tf32_setting is not None:
                tf32 = "the fp32-matmul setting" if tf32_setting else None
            rules.tf32_by_framework[framework] = tf32
    rules.torch_default = _torch_default(calls, aliases)
    rules.full_fp32_functions = _full_fp32_functions(tree, aliases)
    rules.jit_functions = _jit_functions(tree, aliases)
    rules.function_frameworks = _function_frameworks(tree, aliases, rules.module_framework)
    _notes(rules)
    return rules


def _function_frameworks(
    tree: ast.Module, aliases: dict[str, str], module_framework: str | None
) -> dict[str, str]:
    """Each function's array library: its jit decorator's (`jax.jit`, `torch.compile`),
    else the one library whose names it uses (`jnp.dot`, `F.gelu`, `np.sum`); a function
    using several is left undecided, one using none runs in the module's only library."""
    found: dict[str, str] = {}
    modules = _module_classes(tree, aliases)
    for function, name in _all_functions(tree):
        jitted = {
            _JIT_FRAMEWORK.get(_jit_name(d, aliases), "") for d in function.decorator_list
        } - {""}
        used = jitted or {
            root
            for node in ast.walk(function)
            if isinstance(node, ast.Call | ast.Attribute)
            and not (qualified := _qualified(
                node.func if isinstance(node, ast.Call) else node, aliases
            )).startswith(_TYPING)
            and (root := _library_root(qualified)) in _ARRAY_LIBRARIES
        }  # fmt: skip
        if not used and name.partition(".")[0] in modules:
            used = {modules[name.partition(".")[0]]}  # a method of an `nn.Module` subclass
        if len(used) == 1:
            found[name] = used.pop()
        elif used and module_framework is None:
            found[name] = ""  # several libraries in one function: no rule applies
    return {k: v for k, v in found.items() if v}


_MODULE_BASES = {"torch.nn.Module": "torch", "flax.linen.Module": "jax"}


def _module_classes(tree: ast.Module, aliases: dict[str, str]) -> dict[str, str]:
    """Top-level classes deriving a framework's module class (`nn.Module`), to the
    framework their methods run in: one naming no array library (`RMSNorm.forward` of
    `x * self.weight`) runs there, even where NumPy is imported too (llama2.c)."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                framework = _MODULE_BASES.get(_qualified(base, aliases))
                if framework is not None:
                    found[node.name] = framework
    return found


def _library_root(qualified: str) -> str:
    """The array library a qualified name belongs to; Flax's layers run in JAX."""
    root = qualified.split(".")[0]
    return "jax" if root == "flax" else root


def _all_functions(
    tree: ast.Module,
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """Top-level functions, and methods of top-level classes as `Class.method`."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node, node.name
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield item, f"{node.name}.{item.name}"


def _jit_name(node: ast.AST, aliases: dict[str, str]) -> str:
    """The qualified name of a jit decorator (`jax.jit`, through `partial` or a call)."""
    if isinstance(node, ast.Call):
        name = _qualified(node.func, aliases)
        if name in ("functools.partial", "partial") and node.args:
            return _jit_name(node.args[0], aliases)
        return name
    return _qualified(node, aliases)


def _torch_default(calls: list[ast.Call], aliases: dict[str, str]) -> ElementType:
    """`torch.set_default_dtype(torch.float64)` in the module, else float32."""
    for call in calls:
        if _qualified(call.func, aliases) == "torch.set_default_dtype" and call.args:
            named = dtype_qualified(_qualified(call.args[0], aliases))
            if named is not None:
                return named
    return FLOAT32


def _aliases(tree: ast.Module, rules: FrameworkRules) -> dict[str, str]:
    """Local names bound by imports, to their qualified names; notes each framework."""
    aliases: dict[str, str] = {}
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                _seen(rules, alias.name, node.lineno)
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    aliases[root] = root
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            _seen(rules, node.module, node.lineno)
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)


def _statements(tree: ast.Module) -> Iterator[ast.AST]:
    """The statements of `tree` in `ast.walk`'s order, without walking into expressions,
    which hold no statements (an import can only be one; this was a twentieth of a file)."""
    todo: deque[ast.AST] = deque([tree])
    while todo:
        node = todo.popleft()
        todo.extend(c for c in ast.iter_child_nodes(node) if isinstance(c, _BLOCKS))
        yield node


def _seen(rules: FrameworkRules, module: str, line: int) -> None:
    root = _library_root(module)
    if not module.startswith(_TYPING):  # `import numpy.typing as npt` beside JAX: types only
        rules.imported.add(root)
    if root in _ROOTS and root not in rules.frameworks:
        rules.frameworks[root] = line


def _qualified(node: ast.AST, aliases: dict[str, str]) -> str:
    """`jnp.matmul` -> `jax.numpy.matmul`, through the module's import aliases."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def _constant(node: ast.AST | None) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _jax_x64(tree: ast.Module, calls: list[ast.Call], aliases: dict[str, str]) -> bool:
    for call in calls:
        name = _qualified(call.func, aliases)
        args = [_constant(a) for a in call.args]
        if name.endswith("config.update") and args[:1] == ["jax_enable_x64"]:
            return len(args) == 2 and args[1] in (True, 1, "1", "true", "True")
    return False


def _environment(tree: ast.Module) -> dict[str, str]:
    """`os.environ["NAME"] = "value"` and `os.environ.setdefault("NAME", "value")`."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Subscript)
                    and ast.unparse(target.value).endswith("environ")
                    and isinstance(_constant(target.slice), str)
                ):
                    found[str(_constant(target.slice))] = str(_constant(node.value))
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func).endswith("environ.setdefault")
            and len(node.args) == 2
            and isinstance(_constant(node.args[0]), str)
        ):
            found.setdefault(str(_constant(node.args[0])), str(_constant(node.args[1])))
    return found


def _tf32(
    framework: str,
    calls: list[ast.Call],
    aliases: dict[str, str],
    env: dict[str, str],
    tree: ast.Module,
) -> str | None:
    """Why `framework`'s float32 contractions run in TF32 in this module, or None."""
    if framework == "jax":
        for call in calls:
            name = _qualified(call.func, aliases)
            args = [_constant(a) for a in call.args]
            setting = name.endswith("config.update") and len(args) == 2
            if setting and args[0] == "jax_default_matmul_precision" and args[1] in _FULL_FP32:
                return None
            if name == "jax.default_matmul_precision" and args[:1] and args[0] in _FULL_FP32:
                return None
        if env.get("JAX_DEFAULT_MATMUL_PRECISION", "") in _FULL_FP32:
            return None
        return "JAX's default matmul precision on GPUs"
    if framework == "torch":
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and _constant(node.value) is True
                and any(ast.unparse(t).endswith("matmul.allow_tf32") for t in node.targets)
            ):
                return "torch.backends.cuda.matmul.allow_tf32 = True"
        for call in calls:
            name = _qualified(call.func, aliases)
            args = [_constant(a) for a in call.args]
            if name == "torch.set_float32_matmul_precision" and args[:1] in (["high"], ["medium"]):
                return f'torch.set_float32_matmul_precision("{args[0]}")'
        return None
    if env.get("CUPY_TF32", "") == "1":
        return "CUPY_TF32=1 set in the module"
    return None


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _full_fp32_functions(tree: ast.Module, aliases: dict[str, str]) -> set[str]:
    """Functions with `precision=HIGHEST` (any spelling) on a call or a
    `with jax.default_matmul_precision("float32")` block."""
    found = set()
    for function in _functions(tree):
        for node in ast.walk(function):
            if isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if keyword.arg == "precision" and _highest(keyword.value):
                        found.add(function.name)
                name = _qualified(node.func, aliases)
                args = [_constant(a) for a in node.args]
                if name == "jax.default_matmul_precision" and args[:1] and args[0] in _FULL_FP32:
                    found.add(function.name)
    return found


def _highest(node: ast.AST) -> bool:
    text = ast.unparse(node)
    return text.endswith("HIGHEST") or _constant(node) in _FULL_FP32


def _jit_functions(tree: ast.Module, aliases: dict[str, str]) -> set[str]:
    found = set()
    for function in _functions(tree):
        for decorator in function.decorator_list:
            if _is_jit(decorator, aliases):
                found.add(function.name)
    for node in tree.body:  # g = jax.jit(f): f runs compiled through g
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and _is_jit(node.value.func, aliases)
            and node.value.args
            and isinstance(node.value.args[0], ast.Name)
        ):
            found.add(node.value.args[0].id)
    return found


def _is_jit(node: ast.AST, aliases: dict[str, str]) -> bool:
    """`@jax.jit`, `@jit` (imported from jax/numba), `@numba.njit(...)`,
    `@partial(jax.jit, ...)`, `@torch.compile(...)`."""
    return _jit_name(node, aliases) in _JIT


def _notes(rules: FrameworkRules) -> None:
    """The rules of each framework some function runs in (`numba` always: its jit view)."""
    running = {*rules.function_frameworks.values(), rules.module_framework, "numba"}
    frameworks = {k: v for k, v in rules.frameworks.items() if k in running}
    if "jax" in frameworks:
        line = frameworks["jax"]
        if rules.x64:
            rules.notes.append(
                (line, f"JAX: float64 computed as float64 (x64 on: {rules.x64_source})")
            )
        else:
            rules.notes.append((line, "JAX defaults: float64 computed as float32 (x64 off)"))
        rules.notes.append(
            (line, "JAX: Python scalars are weakly typed (x_f16 / 2.0 stays float16)")
        )
        tf32 = rules.tf32_by_framework.get("jax")
        if tf32:
            rules.notes.append(
                (line, f"JAX: float32 contractions in TF32 ({tf32}) unless precision=HIGHEST")
            )
        else:
            rules.notes.append(
                (line, "JAX: float32 contractions in full FP32 (matmul precision set)")
            )
    if "torch" in frameworks:
        line = frameworks["torch"]
        tf32 = rules.tf32_by_framework.get("torch")
        text = f"TF32 ({tf32})" if tf32 else "full FP32 (PyTorch default)"
        rules.notes.append((line, f"PyTorch: float32 matmul in {text}"))
        if rules.torch_default != FLOAT32:
            rules.notes.append((line, f"PyTorch: default dtype {rules.torch_default.name}"))
    if "cupy" in frameworks:
        line = frameworks["cupy"]
        tf32 = rules.tf32_by_framework.get("cupy")
        text = f"TF32 ({tf32})" if tf32 else "FP32 (CUPY_TF32 not set)"
        rules.notes.append(
            (line, f"CuPy: NumPy's promotion rules (NEP 50); float32 matmul in {text}")
        )
    if rules.frameworks and rules.module_framework is None:
        line = min(rules.frameworks.values())
        by_library: dict[str, list[str]] = {}
        for function, library in sorted(rules.function_frameworks.items()):
            by_library.setdefault(library, []).append(function)
        runs = "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(by_library.items()))
        rules.notes.append(
            (line, "several array libraries imported: each function runs in the one it "
             f"calls or is compiled by ({runs or 'none decided'}); a function using none or "
             "several gets no framework rule")
        )  # fmt: skip
    if rules.jit_functions and rules.frameworks:
        line = min(rules.frameworks.values())
        names = ", ".join(sorted(rules.jit_functions))
        rules.notes.append((line, f"compiled (jit view): {names}; other array code: eager view"))
    elif rules.frameworks:
        rules.notes.append((min(rules.frameworks.values()), "no compiled function: eager view"))
