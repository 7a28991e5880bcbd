"""Robustness testing: mutations of source text, and everything a user can ask of a file.

Kept in the package so the test suite and the fuzz scripts (`scripts/fuzz.py`,
`scripts/fuzz_coverage.py`) mutate inputs and exercise the analysis the same way; nothing
in aiscan's analysis path imports it.
"""

from __future__ import annotations

import json
import random
from functools import cache

from aiscan.options import AnalysisOptions, PipelineOptions, PlacementOptions
from aiscan.roofline.devices import Device

__all__ = ["exercise", "mutate"]

_SIZES = {"n": 4096, "N": 1024, "m": 512, "k": 64}


@cache
def _devices() -> tuple[Device, ...]:
    """A GPU and a CPU (no write-allocate, and write-allocate)."""
    from aiscan.roofline.devices import load_devices

    catalog = load_devices()
    return (catalog.get("h100"), catalog.get("epyc"))


def exercise(path: str) -> bool:
    """Everything a user can ask of one file: its analysis at given sizes, the JSON and
    text reports with placement on two devices, every lint rule, and the loop-nest graph
    in each format. True when the file was analyzed; an exception is a bug (bad input
    must end as located diagnostics, which this asserts)."""
    from aiscan.errors import InputError
    from aiscan.ir.dump import dump_module
    from aiscan.ir.graph import module_graph, to_dot, to_json
    from aiscan.lint.checker import check_analysis
    from aiscan.lint.context import LintContext
    from aiscan.lint.settings import LintSettings
    from aiscan.pipeline import analyze_text
    from aiscan.report.json_report import file_entry
    from aiscan.report.text_report import file_text
    from aiscan.sources import read_source

    try:
        source = read_source(path)
    except InputError:
        return False
    options = PipelineOptions(analysis=AnalysisOptions(sizes=_SIZES))
    result = analyze_text(source, path, options)
    placement = PlacementOptions(devices=_devices(), model="auto")
    json.dumps(file_entry(result, placement))
    file_text(result, "compulsory", placement)
    if result.analysis is None:
        assert result.diagnostics, "a file that was not analyzed must say why"
        return False
    context = LintContext(result.analysis, source, _devices(), options.analysis)
    check_analysis(context, LintSettings())
    graph = module_graph(result.analysis.module)
    to_dot(graph)
    to_json(graph)
    dump_module(result.analysis.module)
    return True


_TOKENS = (
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "for",
    "while",
    "if",
    "else",
    "#include",
    "#define",
    "*",
    "/*",
    "*/",
    "//",
    "\\\n",
    '"',
    "'",
    "0x",
    "1e999",
    "99999999999999999999",
    "double",
    "int",
    "__bf16",
    "np.",
    "range(",
    "def ",
    ":",
    "\t",
    "\n",
    "@",
    "lambda",
    "\x00",
    "\ufeff",
    "é",
    "\r",
)


def mutate(text: str, rng: random.Random, rounds: int = 3) -> str:
    """`text` with a few random edits: deletions, duplications, token insertions, cuts."""
    for _ in range(rounds):
        if not text:
            text = rng.choice(_TOKENS)
            continue
        start = rng.randrange(len(text))
        end = min(len(text), start + rng.randint(0, 40))
        action = rng.randrange(6)
        if action == 0:
            text = text[:start] + text[end:]
        elif action == 1:
            text = text[:end] + text[start:end] + text[end:]
        elif action == 2:
            text = text[:start] + rng.choice(_TOKENS) + text[start:]
        elif action == 3:
            text = text[:start]
        elif action == 4:
            text = text[:start] + "(" * rng.randint(1, 400) + text[start:]
        else:
            text = text[:start] + rng.choice(_TOKENS) * rng.randint(1, 50) + text[end:]
    return text
