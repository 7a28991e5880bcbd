"""Which sizes a file's report is about: the names its counts really use.

A header's `#define`s become size defaults of every file that includes it, and `--size`
applies to every file; only the names a file's FLOPs, bytes or trip counts contain are
its sizes. The CLI warns about a `--size` name that no analyzed file uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI's warning runs on cached scans, which never import sympy
    import sympy

    from aiscan.analysis.kernel import ModuleAnalysis

__all__ = ["file_sizes", "size_names", "unused_size_warnings"]


def size_names(analysis: ModuleAnalysis) -> set[str]:
    """Names of the symbols in the file's counts (FLOPs, bytes of every model, trips)."""
    exprs: list[sympy.Expr] = []
    for function in analysis.functions:
        for region in function.regions:
            exprs.append(region.flops.total)
            exprs += [t.total(analysis.write_allocate) for t in region.traffic.values()]
            exprs += [loop.trip for loop in region.loops]
            exprs += [loop.start for loop in region.loops]
    return {_name(s) for e in set(exprs) for s in e.free_symbols}


def _name(symbol: sympy.Basic) -> str:
    """A symbol's name without sympy's printer (a sixth of the report's time)."""
    name = getattr(symbol, "name", None)
    return name if isinstance(name, str) else str(symbol)


def file_sizes(analysis: ModuleAnalysis) -> dict[str, int]:
    """The sizes that apply to this file: given (or defaulted) and used by it."""
    used = size_names(analysis)
    return {k: v for k, v in sorted(analysis.sizes.items()) if k in used}


def unused_size_warnings(given: Mapping[str, int], used: Iterable[str]) -> list[str]:
    """One warning per given size that no file uses, with the closest used name."""
    names = sorted(set(used))
    warnings = []
    for name, value in given.items():
        if name in names:
            continue
        text = f"--size {name}={value}: no analyzed file uses a size `{name}`"
        import difflib  # here: only a size name not found needs it

        close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
        if close:
            text += f"; did you mean `{close[0]}`?"
        elif names:
            text += f" (sizes used: {', '.join(names)})"
        warnings.append(text)
    return warnings
