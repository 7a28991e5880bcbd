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

Each rule applied becomes a note on the import's line. Only CPython's `ast` is read: the
code is never imported or run.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["FrameworkRules", "read_frameworks"]

_ROOTS = {"jax": "JAX", "torch": "PyTorch", "cupy": "CuPy", "numba": "Numba"}
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
    tf32: str | None = None
    """Why float32 contractions run in TF32, or None for full FP32."""
    full_fp32_functions: set[str] = field(default_factory=set)
    """Functions whose contractions ask for full float32 (`precision=HIGHEST`)."""
    jit_functions: set[str] = field(default_factory=set)
    notes: list[tuple[int, str]] = field(default_factory=list)
    """(line, text) for each rule applied, on the import's line."""
    imported: set[str] = field(default_factory=set)
    """Top-level modules imported (`numpy` among them or not)."""
    mixed: bool = False
    """Several array libraries: the framework rules are not applied."""

    @property
    def demotes_float64(self) -> bool:
        """JAX without x64: float64 data is float32."""
        return "jax" in self.frameworks and not self.x64

    def view(self, function: str) -> str:
        """`jit` for a compiled function, `eager` otherwise."""
        return "jit" if function in self.jit_functions else "eager"

    def tf32_for(self, function: str) -> str | None:
        return None if function in self.full_fp32_functions else self.tf32


def read_frameworks(
    tree: ast.Module, *, x64_setting: bool | None = None, tf32_setting: bool | None = None
) -> FrameworkRules:
    """The rules of `tree`'s frameworks; a setting (not None) overrides what the code says."""
    rules = FrameworkRules()
    aliases = _aliases(tree, rules)
    if not rules.frameworks:
        return rules
    arrays = sorted(set(rules.frameworks) & {"jax", "torch", "cupy"})
    if len(arrays) > 1 or (arrays and "numpy" in rules.imported):
        # Which library holds an array is not visible: no dtype or precision rule applies.
        names = ", ".join(_ROOTS[a] for a in arrays)
        line = min(rules.frameworks[a] for a in arrays)
        rules.notes.append(
            (line, f"{names} imported beside NumPy or each other: dtypes and matmul precision "
             "as written (no framework rule applied)")
        )  # fmt: skip
        rules.jit_functions = _jit_functions(tree, aliases)
        rules.frameworks = {k: v for k, v in rules.frameworks.items() if k == "numba"}
        rules.mixed = True
        _notes(rules)
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
    rules.tf32 = _tf32(rules, calls, aliases, env, tree)
    if tf32_setting is not None:
        rules.tf32 = "the fp32-matmul setting" if tf32_setting else None
    rules.full_fp32_functions = _full_fp32_functions(tree, aliases)
    rules.jit_functions = _jit_functions(tree, aliases)
    _notes(rules)
    return rules


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
    root = module.split(".")[0]
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
    rules: FrameworkRules,
    calls: list[ast.Call],
    aliases: dict[str, str],
    env: dict[str, str],
    tree: ast.Module,
) -> str | None:
    """Why float32 contractions run in TF32 in this module, or None."""
    if "jax" in rules.frameworks:
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
    if "torch" in rules.frameworks:
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
    if "cupy" in rules.frameworks and env.get("CUPY_TF32", "") == "1":
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
    if isinstance(node, ast.Call):
        name = _qualified(node.func, aliases)
        if name in ("functools.partial", "partial") and node.args:
            return _is_jit(node.args[0], aliases)
        return name in _JIT
    return _qualified(node, aliases) in _JIT


def _notes(rules: FrameworkRules) -> None:
    frameworks = rules.frameworks
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
        if rules.tf32:
            rules.notes.append(
                (line, f"JAX: float32 contractions in TF32 ({rules.tf32}) unless precision=HIGHEST")
            )
        else:
            rules.notes.append(
                (line, "JAX: float32 contractions in full FP32 (matmul precision set)")
            )
    if "torch" in frameworks:
        line = frameworks["torch"]
        text = f"TF32 ({rules.tf32})" if rules.tf32 else "full FP32 (PyTorch default)"
        rules.notes.append((line, f"PyTorch: float32 matmul in {text}"))
    if "cupy" in frameworks:
        line = frameworks["cupy"]
        text = f"TF32 ({rules.tf32})" if rules.tf32 else "FP32 (CUPY_TF32 not set)"
        rules.notes.append(
            (line, f"CuPy: NumPy's promotion rules (NEP 50); float32 matmul in {text}")
        )
    if rules.jit_functions and frameworks:
        line = min(frameworks.values())
        names = ", ".join(sorted(rules.jit_functions))
        rules.notes.append((line, f"compiled (jit view): {names}; other array code: eager view"))
    elif frameworks:
        rules.notes.append((min(frameworks.values()), "no compiled function: eager view"))
