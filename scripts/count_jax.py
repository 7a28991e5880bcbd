"""Count what JAX really does for the JAX fixtures (ground truth; a script, not a test).

Each function of `fixtures/python/frameworks_jax.py` and `frameworks_jax_ops.py`, and
each Flax module's `__call__` of `fixtures/python/frameworks_flax.py` (our own code; the
module's parameters are inputs, as aiscan reads them), is traced on CPU arrays of the
sizes below, and counted three ways:

* **FLOPs from the jaxpr's primitives**, by MODEL.md's conventions: `add`/`sub`/`mul`/`div`
  1 per element; `max`, `min`, comparisons, `select_n`, `neg`, conversions and layout 0;
  `integer_pow` `p - 1` multiplies; `exp`, `log`, `tanh`, `sqrt`, `rsqrt`, `erf`,
  `logistic`, `pow` ... special, apart; `reduce_sum` `n - 1` adds per result (`reduce_max`
  0); `dot_general` `batch*m*n*(2k - 1)` exact, and `2*batch*m*n*k` quoted (the
  convention ML tooling and XLA use). Sub-jaxprs (`pjit`, `custom_jvp_call`, ...) are
  counted through.
* **Eager bytes per dispatch**: JAX runs an un-jitted function one primitive at a time
  (a nested `jax.jit`, a `pjit` equation, is one dispatch), each reading its operands and
  writing its result. Layout primitives that XLA can alias (`reshape`, `squeeze`,
  `expand_dims`, a `broadcast_in_dim` that adds only unit axes, `transpose`,
  `stop_gradient`, a conversion to the same dtype) are left out, as aiscan treats views
  and as `count_torch.py` leaves PyTorch's views out; their result stands for their
  operand. Literals are scalars in registers.
* **flax_gpt.py**: a whole GPT (token ids in, `int32`) and its block, with their causal
  mask, as `GPT_CASES` builds them.
* **The jit view**: `jax.jit(f).lower(...).compile().cost_analysis()` (XLA's `flops`,
  `transcendentals` and `bytes accessed`, the sum over its fusions).

The figures go to `fixtures/python/frameworks_{jax,jax_ops,flax}.measured.toml`, which
the tests compare aiscan against (`tests/test_jax_measured.py`), so CI needs no jax. jax is never a
dependency of aiscan: `pip install jax` (the CPU wheel) to rerun this.

Usage: python scripts/count_jax.py [--write]
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "python" / "frameworks_jax.py"
MEASURED = FIXTURE.with_suffix(".measured.toml")

Shapes = tuple[tuple[str, ...], ...]
CASES: dict[str, tuple[dict[str, int], Shapes]] = {
    # function: (sizes by aiscan's names, each argument's shape in those names); the
    # sizes of count_torch.py, so the two frameworks' figures sit side by side
    "mlp": (
        {"x_d0": 64, "w1_d0": 128, "w2_d0": 512, "w2_d1": 128},
        (("x_d0", "w1_d0"), ("w1_d0", "w2_d0"), ("w2_d0",), ("w2_d0", "w2_d1")),
    ),
    "attention": (
        {"b": 2, "h": 4, "n": 64, "d": 32, "v_d2": 64, "v_d3": 32},
        (("b", "h", "n", "d"), ("b", "h", "v_d2", "d"), ("b", "h", "v_d2", "v_d3")),
    ),
    "layernorm": ({"n": 64, "d": 256}, (("n", "d"), ("d",), ("d",))),
    "sgemm": ({"a_d0": 64, "b_d0": 128, "b_d1": 96}, (("a_d0", "b_d0"), ("b_d0", "b_d1"))),
}

OPS_FIXTURE = FIXTURE.with_name("frameworks_jax_ops.py")
OPS_CASES: dict[str, tuple[dict[str, int], Shapes]] = {
    "heads": (
        {"b": 2, "t": 64, "s": 64, "h": 4, "d": 32},
        (("b", "t", "h", "d"), ("b", "s", "h", "d")),
    ),
    "general": ({"m": 64, "k": 128, "n": 96}, (("m", "k"), ("k", "n"))),
    "qkv": ({"n": 64, "d": 128, "w_d1": 384}, (("n", "d"), ("d", "w_d1"))),
    "causal": ({"t": 64, "u": 64}, (("t", "u"),)),
    "rms": ({"n": 64, "d": 256}, (("n", "d"),)),
    "exact_gelu": ({"n": 64, "d": 256}, (("n", "d"),)),
    "lse": ({"n": 64, "d": 256}, (("n", "d"),)),
    "merge": (
        {"b": 2, "h": 4, "t": 64, "s": 64, "v_d3": 32},
        (("b", "h", "t", "s"), ("b", "h", "s", "v_d3")),
    ),
}
FLAX_FIXTURE = FIXTURE.with_name("frameworks_flax.py")
FLAX_CASES: dict[str, tuple[dict[str, int], Shapes, Callable[[dict[str, Any]], Any]]] = {
    # method: (sizes, the input's shape, the module built from the fixture's namespace)
    "MLP.__call__": (
        {"n": 64, "d": 128, "n_embd": 128},
        (("n", "d"),),
        lambda ns: ns["MLP"](ns["Config"](n_embd=128)),
    ),
    "Norm.__call__": ({"n": 64, "d": 256}, (("n", "d"),), lambda ns: ns["Norm"]()),
    "Attention.__call__": (
        {"b": 2, "t": 64, "c": 128, "num_heads": 4},
        (("b", "t", "c"),),
        lambda ns: ns["Attention"](num_heads=4),
    ),
    "Head.__call__": (
        {"n": 64, "d": 256, "features": 128},
        (("n", "d"),),
        lambda ns: ns["Head"](features=128),
    ),
}

GPT_FIXTURE = FIXTURE.with_name("flax_gpt.py")
_GPT_SIZES = {"b": 2, "t": 64, "vocab_size": 512, "block_size": 64, "n_layer": 2, "n_head": 4}
GPT_CASES: dict[str, tuple[dict[str, int], Callable[[dict[str, Any]], tuple[Any, list[Any]]]]] = {
    # method: (sizes, the module and its inputs built from the fixture's namespace)
    "Block.__call__": (
        {**_GPT_SIZES, "n_embd": 128, "x_d0": 2, "x_d1": 64},
        lambda ns: (ns["Block"](_gpt_config(ns)), _gpt_inputs(False)),
    ),
    "GPT.__call__": (
        {**_GPT_SIZES, "n_embd": 128},
        lambda ns: (ns["GPT"](_gpt_config(ns)), _gpt_inputs(True)),
    ),
    "Stack.__call__": (
        {**_GPT_SIZES, "n_embd": 128, "x_d0": 2, "x_d1": 64},
        lambda ns: (ns["Stack"](_gpt_config(ns)), _gpt_inputs(False)),
    ),
}
"""flax_gpt.py's modules at B = 2, T = 64, n_embd = 128, 4 heads, 2 layers, 512 tokens."""


def _gpt_config(ns: dict[str, Any]) -> Any:
    sizes = {k: v for k, v in _GPT_SIZES.items() if k not in ("b", "t")}
    return ns["Config"](n_embd=128, **sizes)


def _gpt_inputs(tokens: bool) -> list[Any]:
    """Token indices (int32) for the model; a block's input and its causal mask else."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    idx = jax.random.randint(jax.random.PRNGKey(0), (2, 64), 0, 512, jnp.int32)
    if tokens:
        return [idx]
    x = jax.random.normal(jax.random.PRNGKey(2), (2, 64, 128), jnp.float32)
    return [x, nn.make_causal_mask(idx, dtype=bool)]


_ARITHMETIC = frozenset({"add", "sub", "mul", "div", "add_any"})
_SPECIAL_WORDS = (
    "exp exp2 log log1p expm1 tanh logistic sqrt rsqrt cbrt erf erfc erf_inv pow sin cos tan "
    "atan2 asin acos atan sinh cosh asinh acosh atanh lgamma digamma"
)
_SPECIAL = frozenset(_SPECIAL_WORDS.split())
_FREE_WORDS = (
    "max min neg abs sign eq ne lt le gt ge and or not xor select_n convert_element_type "
    "broadcast_in_dim reshape squeeze expand_dims transpose slice dynamic_slice "
    "dynamic_update_slice concatenate split gather scatter pad iota stop_gradient copy copy_p "
    "reduce_max reduce_min argmax argmin reduce_precision floor ceil round clamp sort "
    "reduce_and reduce_or"
)
_FREE = frozenset(_FREE_WORDS.split())
_SUBJAXPRS = ("jaxpr", "call_jaxpr", "fun_jaxpr")
_CALLS = frozenset({"pjit", "jit", "closed_call", "core_call", "remat", "checkpoint"})
"""Primitives that call a jaxpr as one dispatch (eager): a nested `jax.jit`."""


def _size(aval: Any) -> int:
    return math.prod(aval.shape)


def _nbytes(aval: Any) -> int:
    return _size(aval) * aval.dtype.itemsize


def _inner(eqn: Any) -> Any | None:
    for key in _SUBJAXPRS:
        found = eqn.params.get(key)
        if found is not None:
            return getattr(found, "jaxpr", found)
    return None


class Flops:
    """MODEL.md's counts of a jaxpr: exact total (specials apart), specials, quoted."""

    def __init__(self) -> None:
        self.exact = 0
        self.special = 0
        self.quoted = 0
        self.unknown: list[str] = []

    def count(self, jaxpr: Any) -> None:
        for eqn in jaxpr.eqns:
            inner = _inner(eqn)
            if inner is not None:
                self.count(inner)
                continue
            self._primitive(eqn)

    def _primitive(self, eqn: Any) -> None:
        name = eqn.primitive.name
        out = eqn.outvars[0].aval
        floating = getattr(out.dtype, "kind", "f") in "fc"
        if name == "dot_general":
            (contracting, _), _ = eqn.params["dimension_numbers"]
            left = eqn.invars[0].aval.shape
            k = math.prod(left[d] for d in contracting)
            results = _size(out)
            if floating:
                self.exact += results * (2 * k - 1) if k else 0
                self.quoted += 2 * results * k
        elif name in _ARITHMETIC:
            self.exact += _size(out) if floating else 0
        elif name == "integer_pow":
            power = eqn.params["y"]
            if 2 <= power <= 16:
                self.exact += (power - 1) * _size(out)
            elif power != 1:
                self.special += _size(out)
        elif name == "square":
            self.exact += _size(out)
        elif name in _SPECIAL:
            self.special += _size(out)
        elif name == "reduce_sum":
            if floating:
                self.exact += _size(eqn.invars[0].aval) - _size(out)
        elif name not in _FREE:
            self.unknown.append(name)


def _aliases(eqn: Any) -> bool:
    """A layout primitive whose result stands for its operand (no data moved)."""
    name = eqn.primitive.name
    if name in ("reshape", "squeeze", "expand_dims", "transpose", "stop_gradient", "copy"):
        return True
    if name == "broadcast_in_dim":
        return _size(eqn.invars[0].aval) == _size(eqn.outvars[0].aval)
    if name == "convert_element_type":
        return eqn.invars[0].aval.dtype == eqn.outvars[0].aval.dtype
    return False


def eager_log(jaxpr: Any) -> list[tuple[str, int]]:
    """Each dispatch of an un-jitted run, with the bytes it reads and writes."""
    from jax.extend.core import Literal

    log: list[tuple[str, int]] = []
    standing: dict[Any, Any] = {}  # a view's result -> the array it stands for

    def root(var: Any) -> Any:
        while var in standing:
            var = standing[var]
        return var

    def walk(jaxpr: Any) -> None:
        for eqn in jaxpr.eqns:
            inner = _inner(eqn)
            if inner is not None and eqn.primitive.name not in _CALLS:
                walk(inner)  # custom_jvp/custom_vjp: run op by op in eager mode
                for outer, traced in zip(eqn.outvars, inner.outvars, strict=True):
                    if not isinstance(traced, Literal):
                        standing[outer] = traced
                for outer, traced in zip(eqn.invars, inner.invars, strict=False):
                    standing[traced] = outer
                continue
            if _aliases(eqn) and not isinstance(eqn.invars[0], Literal):
                standing[eqn.outvars[0]] = eqn.invars[0]
                continue
            operands = {root(v) for v in eqn.invars if not isinstance(v, Literal) and v.aval.shape}
            read = sum(_nbytes(v.aval) for v in operands)
            written = sum(_nbytes(v.aval) for v in eqn.outvars)
            log.append((eqn.primitive.name, read + written))

    walk(jaxpr)
    return log


def _functions(fixture: Path) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(fixture.read_text(), str(fixture), "exec"), namespace)  # our own fixture
    return namespace


def _cost(analysis: Any) -> dict[str, Any]:
    if isinstance(analysis, list):  # older jax: one dict per computation
        analysis = analysis[0]
    return dict(analysis)


def _inputs(sizes: dict[str, int], shapes: Shapes) -> list[Any]:
    import jax
    import jax.numpy as jnp

    keys = jax.random.split(jax.random.PRNGKey(0), len(shapes))
    return [
        jax.random.normal(key, tuple(sizes[s] for s in shape), jnp.float32)
        for key, shape in zip(keys, shapes, strict=True)
    ]


def measure_module(
    module: Any, sizes: dict[str, int], shapes: Shapes, given: list[Any] | None = None
) -> dict[str, Any]:
    """A Flax module's `__call__`: its parameters are inputs (read as the layer reads them);
    `given` inputs instead of random float32 arrays of `shapes`."""
    import jax

    inputs = given if given is not None else _inputs(sizes, shapes)
    parameters = module.init(jax.random.PRNGKey(1), *inputs)
    return measure(lambda p, *x: module.apply(p, *x), sizes, [parameters, *inputs])


def measure_function(
    function: Callable[..., Any], sizes: dict[str, int], shapes: Shapes
) -> dict[str, Any]:
    plain = getattr(function, "__wrapped__", function)  # the function under `@jax.jit`
    return measure(plain, sizes, _inputs(sizes, shapes))


def measure(
    plain: Callable[..., Any], sizes: dict[str, int], arguments: list[Any]
) -> dict[str, Any]:
    import jax

    closed = jax.make_jaxpr(plain)(*arguments)
    flops = Flops()
    flops.count(closed.jaxpr)
    log = eager_log(closed.jaxpr)
    cost = _cost(jax.jit(plain).lower(*arguments).compile().cost_analysis())
    return {
        "sizes": sizes,
        "flops": flops.exact,
        "special": flops.special,
        "quoted": flops.quoted,
        "unknown_primitives": flops.unknown,
        "eager_bytes": sum(b for _, b in log),
        "xla_flops": int(cost.get("flops", 0)),
        "xla_transcendentals": int(cost.get("transcendentals", 0)),
        "xla_bytes": int(cost.get("bytes accessed", 0)),
        "ops": [f"{op} {b}" for op, b in log],
    }


def _toml(results: dict[str, dict[str, Any]], version: str) -> str:
    lines = [
        "# Measured by scripts/count_jax.py (jax " + version + ", CPU, float32, x64 off): FLOPs",
        "# of the jaxpr's primitives by MODEL.md (`flops` exact with specials apart, `quoted`",
        "# 2*m*k*n per dot_general), the eager bytes of each dispatch (operands + result;",
        "# layout primitives left out), and XLA's cost_analysis of jax.jit (`xla_*`).",
        "# Regenerate with `python scripts/count_jax.py --write`; never edit by hand.",
        "",
    ]
    for name, result in results.items():
        lines.append(f'[functions."{name}"]' if "." in name else f"[functions.{name}]")
        sizes = ", ".join(f"{k} = {v}" for k, v in result["sizes"].items())
        lines.append(f"sizes = {{ {sizes} }}")
        for key in ("flops", "special", "quoted", "eager_bytes"):
            lines.append(f"{key} = {result[key]}")
        for key in ("xla_flops", "xla_transcendentals", "xla_bytes"):
            lines.append(f"{key} = {result[key]}")
        if result["unknown_primitives"]:
            unknown = ", ".join(f'"{p}"' for p in result["unknown_primitives"])
            lines.append(f"unknown_primitives = [{unknown}]")
        ops = ", ".join(f'"{op}"' for op in result["ops"])
        lines.append(f"ops = [{ops}]")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {MEASURED.name}")
    options = parser.parse_args(argv)
    try:
        import jax
    except ImportError:
        sys.stderr.write("jax is not installed: pip install jax (a CPU wheel)\n")
        return 2
    texts = {}
    for fixture, cases in ((FIXTURE, CASES), (OPS_FIXTURE, OPS_CASES)):
        functions = _functions(fixture)
        results = {name: measure_function(functions[name], *case) for name, case in cases.items()}
        texts[fixture] = _toml(results, jax.__version__)
    classes = _functions(FLAX_FIXTURE)
    modules = {
        name: measure_module(build(classes), sizes, shapes)
        for name, (sizes, shapes, build) in FLAX_CASES.items()
    }
    flax_text = _toml(modules, jax.__version__)
    texts[FLAX_FIXTURE] = flax_text
    namespace = _functions(GPT_FIXTURE)
    gpt = {}
    for name, (sizes, build) in GPT_CASES.items():
        module, inputs = build(namespace)
        gpt[name] = measure_module(module, sizes, (), inputs)
    texts[GPT_FIXTURE] = _toml(gpt, jax.__version__)
    for fixture, text in texts.items():
        if options.write:
            fixture.with_suffix(".measured.toml").write_text(text)
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
