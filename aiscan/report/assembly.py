"""A scan's report assembled from per-file parts that are already rendered.

Workers (or the cache) hand over each file's part as text; joining them needs neither the
analysis nor sympy, so this module imports neither: a warm scan, served from the cache,
never loads them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from aiscan import __version__
from aiscan.project import schema_id

__all__ = ["SCHEMA_ID", "SCHEMA_VERSION", "join_report", "join_text", "load_schema"]

SCHEMA_VERSION = "1.8"
SCHEMA_ID = schema_id("report")


def load_schema(name: str = "report") -> dict[str, Any]:
    """A shipped JSON Schema: `report` (`aiscan analyze`) or `lint` (`aiscan check`)."""
    # Imported here: `importlib.resources` brings `tempfile` and `shutil` (~4 ms), and only
    # a validation reads a schema.
    from importlib import resources

    text = (
        resources.files("aiscan.report")
        .joinpath(f"schema/{name}.schema.json")
        .read_text(encoding="utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


def join_report(entries: Sequence[str], analyzed: int, options: Mapping[str, Any]) -> str:
    """The report's JSON text from per-file entries already serialized (by parallel workers,
    or straight from the cache), so no entry is parsed or encoded twice."""
    head = {
        "schema": SCHEMA_ID,
        "schema_version": SCHEMA_VERSION,
        "aiscan_version": __version__,
        "options": dict(options),
    }
    summary = {"files": len(entries), "analyzed": analyzed, "errors": len(entries) - analyzed}
    return (
        json.dumps(head)[:-1]
        + ', "files": ['
        + ", ".join(entries)
        + '], "summary": '
        + json.dumps(summary)
        + "}\n"
    )


def join_text(blocks: Sequence[str]) -> str:
    return "\n".join(b for b in blocks if b)
