"""A file's trees and IR are freed by reference counting the moment it is done.

A batch run collects cycles once per file (`aiscan/collector.py`); anything aiscan leaves
in a cycle keeps the whole file alive until that collection traces it (a Python file's
scope and its helper summaries referring to each other cost 2.4 ms a file, a fifth of
its parse). sympy's own small cycles (recursive closures inside `replace`, `factor_terms`)
hold none of the file's objects, and are left to it.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from aiscan.options import PipelineOptions
from aiscan.report.file_task import AnalyzeOptions, analyze_task

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
_FILE_OBJECTS = ("aiscan.", "libcst._nodes.", "ast", "pycparser.")


@pytest.mark.parametrize(
    "name",
    [
        "python/loops.py",  # every Python file: the helper summaries and the module scope
        "python/allocations.py",  # inferred sizes: visitor classes made per call
        "python/library.py",  # library constructors: builders that refer to the reader
        "python/script.py",  # module-level work
        "python/helper_calls.py",
        "c/daxpy.c",
        "c/dgemm_ijk.c",
    ],
)
def test_analysis_leaves_no_file_objects_in_cycles(name: str) -> None:
    task = analyze_task(AnalyzeOptions(PipelineOptions(), None, "json", "compulsory"))
    path = str(FIXTURES / name)
    assert task.run(path, task.options)["ok"]  # first use: imports and memo caches
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        assert task.run(path, task.options)["ok"]
        gc.collect()
        kept = sorted(
            {
                f"{type(o).__module__}.{type(o).__qualname__}"
                for o in gc.garbage
                if type(o).__module__.startswith(_FILE_OBJECTS)
            }
        )
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert kept == []
