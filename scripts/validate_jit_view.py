"""Compare aiscan's `jit` traffic view with XLA's own byte count (a script, not a test).

For each function of a fixture written with jaxtyping annotations (default
`fixtures/python/jit_view.py`), this compiles the same source with `jax.numpy` in place of
`numpy` through `jax.jit(f).lower(*args).compile().cost_analysis()` and prints XLA's
"bytes accessed" beside aiscan's `jit` bytes at the same sizes.

jax is not a dependency of aiscan (`pip install jax jaxlib`, or the `jit-validation` extra).
XLA's figure is the sum over its fusions of the bytes each reads and writes: where XLA
fuses a function fully the two agree; where it splits a function into several fusions
(a reduction feeding an elementwise op, a dot feeding a bias add on CPU) each split adds
the intermediate's write and read, which the jit view by definition does not count.

Usage: python scripts/validate_jit_view.py [FIXTURE] [--size NAME=VALUE ...]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_SIZES = {"b": 64, "n": 256, "k": 128, "m": 96}
_ANNOTATION = re.compile(r'Float32\[np\.ndarray, "([^"]*)"\]')


def _jax_namespace(source: str) -> dict[str, Any]:
    """The fixture's functions, with `jax.numpy` for `numpy` (the fixture is our own code).

    Annotations stay strings (never evaluated), so jaxtyping need not be installed."""
    lines = [
        line
        for line in source.replace("import numpy as np", "import jax.numpy as np").splitlines()
        if not line.startswith("from jaxtyping")
    ]
    namespace: dict[str, Any] = {}
    code = "from __future__ import annotations\n" + "\n".join(lines)
    exec(compile(code, "fixture", "exec"), namespace)
    return namespace


def _arguments(function: Any, sizes: dict[str, int]) -> list[Any]:
    import inspect

    import jax.numpy as jnp

    arguments = []
    for parameter in inspect.signature(function).parameters.values():
        text = str(parameter.annotation)
        match = _ANNOTATION.search(text) or re.search(r"'([^']*)'\]", text)
        dims = match.group(1).split() if match else []
        shape = tuple(sizes[d] for d in dims)
        arguments.append(jnp.ones(shape, jnp.float32))
    return arguments


def _xla_bytes(function: Any, arguments: list[Any]) -> float:
    import jax

    compiled = jax.jit(function).lower(*arguments).compile()
    analysis = compiled.cost_analysis()
    if isinstance(analysis, list):  # older jax: one dict per computation
        analysis = analysis[0]
    return float(analysis["bytes accessed"])


def _aiscan_bytes(path: Path, sizes: dict[str, int]) -> dict[str, Any]:
    import sympy

    from aiscan.analysis.kernel import AnalysisOptions, analyze_module
    from aiscan.pipeline import PipelineOptions, lower_source

    module = lower_source(path.read_text(), str(path), PipelineOptions())
    analysis = analyze_module(module, AnalysisOptions())
    found: dict[str, Any] = {}
    for function in analysis.functions:
        traffic = function.traffic.get("jit")
        if traffic is None:
            continue
        expr = traffic.total(False)
        values = {s: sizes[s.name] for s in expr.free_symbols if s.name in sizes}
        found[function.function.name] = (expr, sympy.Integer(expr.subs(values)))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixture", nargs="?", default=str(ROOT / "fixtures/python/jit_view.py"))
    parser.add_argument("--size", action="append", default=[], metavar="NAME=VALUE")
    arguments = parser.parse_args()
    sizes = dict(_SIZES)
    for item in arguments.size:
        name, _, value = item.partition("=")
        sizes[name] = int(value)
    try:
        import jax  # noqa: F401
    except ImportError:
        print("jax is not installed: pip install jax jaxlib", file=sys.stderr)
        return 2
    path = Path(arguments.fixture)
    namespace = _jax_namespace(path.read_text())
    ours = _aiscan_bytes(path, sizes)
    print(f"sizes: {sizes}")
    print(f"{'function':<14}{'aiscan jit':>14}{'XLA':>14}{'XLA/jit':>9}  aiscan expression")
    for name, (expr, value) in ours.items():
        function = namespace.get(name)
        if function is None:
            continue
        xla = _xla_bytes(function, _arguments(function, sizes))
        ratio = xla / float(value) if value else float("nan")
        print(f"{name:<14}{int(value):>14}{int(xla):>14}{ratio:>9.3f}  {expr}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
