"""Count what JAX does for public GPT code in Flax (ground truth; a script, not a test).

The model files of jenkspt/gpt-jax and cgarciae/nanoGPT-jax (fetched by hand, never
committed) are traced with `count_jax.py`'s counters: FLOPs of the jaxpr's primitives by
MODEL.md and the eager bytes of each dispatch. Each module's `apply` is traced with its
parameters as inputs, as aiscan reads them. The sizes are the table's in docs/python.md:
B = 2, T = 64, n_embd = 128, 4 heads, and for the whole model 2 layers, a vocabulary of
512 and a block size of 64. jax and flax are never dependencies of aiscan.

Usage: python scripts/count_jax_public.py GPT_JAX_DIR NANOGPT_JAX_DIR
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from count_jax import Flops, eager_log

B, T, C, HEADS, LAYERS, VOCAB = 2, 64, 128, 4, 2, 512


def _namespace(model: Path) -> dict[str, Any]:
    """The model file's names, loaded as a module of its own (ground truth only)."""
    import importlib.util

    name = f"public_{model.parent.name.replace('+', '_').replace('-', '_')}"
    spec = importlib.util.spec_from_file_location(name, model)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return vars(module)


def _count(module: Any, *inputs: Any, **keywords: Any) -> tuple[int, int]:
    """The jaxpr's exact FLOPs (specials apart) and eager bytes of `module.apply`."""
    import flax.linen as nn
    import jax

    def initialize(key: Any, *x: Any) -> Any:
        return nn.Module.init(module, key, *x, **keywords)  # gpt-jax's GPT overrides `init`

    parameters = jax.jit(initialize)(jax.random.PRNGKey(1), *inputs)  # traced: see _split
    closed = jax.make_jaxpr(lambda p, *x: module.apply(p, *x, **keywords))(parameters, *inputs)
    flops = Flops()
    flops.count(closed.jaxpr)
    return flops.exact, sum(b for _, b in eager_log(closed.jaxpr))


def _split() -> None:
    """nanoGPT-jax calls `x.split(3, axis=-1)`, a method JAX arrays no longer have (jax
    0.10): give tracers (every array here is traced) `jnp.split`'s."""
    import jax
    import jax.numpy as jnp

    jax.core.Tracer.split = lambda self, n, axis=0: jnp.split(self, n, axis=axis)


def gpt_jax(directory: Path) -> dict[str, tuple[int, int]]:
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    ns = _namespace(directory / "model.py")
    config = ns["GPTConfig"](
        block_size=T, vocab_size=VOCAB, num_layers=LAYERS, num_heads=HEADS, num_embeds=C
    )
    x = jax.random.normal(jax.random.PRNGKey(0), (B, T, C), jnp.float32)
    idx = jnp.zeros((B, T), jnp.int32)
    mask = nn.make_causal_mask(idx, dtype=bool)
    return {
        "Block": _count(ns["Block"](config), x, mask, deterministic=True),
        "GPT": _count(ns["GPT"](config), idx, deterministic=True),
    }


def nanogpt_jax(directory: Path) -> dict[str, tuple[int, int]]:
    import jax
    import jax.numpy as jnp

    _split()
    ns = _namespace(directory / "model.py")
    config = ns["GPTConfig"](
        block_size=T, vocab_size=VOCAB, n_layer=LAYERS, n_head=HEADS, n_embd=C, dropout=0.0
    )
    x = jax.random.normal(jax.random.PRNGKey(0), (B, T, C), jnp.float32)
    idx = jnp.zeros((B, T), jnp.int32)
    return {
        "Block": _count(ns["Block"](config), x, train=False),
        "GPT": _count(ns["GPT"](config), idx, train=False),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gpt_jax", type=Path)
    parser.add_argument("nanogpt_jax", type=Path)
    options = parser.parse_args(argv)
    try:
        import jax
    except ImportError:
        sys.stderr.write("jax is not installed: pip install jax flax (CPU wheels)\n")
        return 2
    sys.stdout.write(f"# jax {jax.__version__}, CPU, float32; B={B} T={T} C={C} ")
    sys.stdout.write(f"heads={HEADS} layers={LAYERS} vocab={VOCAB}\n")
    for repository, measure in (
        ("gpt-jax", gpt_jax(options.gpt_jax)),
        ("nanoGPT-jax", nanogpt_jax(options.nanogpt_jax)),
    ):
        for module, (flops, eager) in measure.items():
            sys.stdout.write(f"{repository} {module}: flops {flops} eager_bytes {eager}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
