"""Coverage-guided fuzzing of the whole analysis with atheris (libFuzzer for Python).

`scripts/fuzz.py` mutates the fixtures blindly; this lets libFuzzer steer the mutations
towards inputs that reach new branches of aiscan, pycparser and pcpp. Each input is one
source file: its first byte picks C or Python, the rest is the file's bytes. An input
breaks aiscan when exercising it as a user can (`aiscan.robustness.exercise`: analysis,
both reports with placement, lint, graph) raises (libFuzzer saves it as `crash-*`)
or when it runs past `-timeout` seconds (`timeout-*`); a located diagnostic is a pass.

Needs `pip install atheris` (Linux and macOS wheels). Usage, libFuzzer's flags as is:

    python scripts/fuzz_coverage.py -max_total_time=600 -timeout=20 [CORPUS_DIR]

An empty or missing corpus directory is seeded from the fixtures (without one, a temporary
directory is). libFuzzer's final stats say how many inputs ran.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parent.parent

with atheris.instrument_imports(include=["aiscan", "pycparser", "pcpp"]):
    from aiscan.robustness import exercise

    # aiscan imports its frontends, lint rules and reports on first use: use them here,
    # so that they are imported, and instrumented, inside this block.
    exercise(str(ROOT / "fixtures" / "c" / "branches.c"))
    exercise(str(ROOT / "fixtures" / "python" / "vectorized.py"))
SUFFIXES = (".c", ".py")
_WORKDIR = tempfile.mkdtemp(prefix="aiscan-fuzz-")


def analyze_one(data: bytes) -> None:
    """Exercise one input as a user can (analysis, reports, lint, graph); anything raised
    is a crash for libFuzzer."""
    if not data:
        return
    suffix = SUFFIXES[data[0] % len(SUFFIXES)]
    path = os.path.join(_WORKDIR, f"input{suffix}")
    with open(path, "wb") as file:
        file.write(data[1:])
    exercise(path)


def _seed(corpus: Path) -> None:
    """Start an empty corpus from the fixtures (first byte: the language)."""
    fixtures = sorted((ROOT / "fixtures").rglob("*.c")) + sorted((ROOT / "fixtures").rglob("*.py"))
    for number, fixture in enumerate(fixtures):
        marker = bytes([SUFFIXES.index(fixture.suffix)])
        (corpus / f"seed{number}").write_bytes(marker + fixture.read_bytes())


def main() -> None:
    arguments = sys.argv[:]
    corpora = [Path(a) for a in arguments[1:] if not a.startswith("-")]
    if not corpora:
        corpora = [Path(tempfile.mkdtemp(prefix="aiscan-corpus-"))]
        arguments.append(str(corpora[0]))
    for corpus in corpora:
        corpus.mkdir(parents=True, exist_ok=True)
        if not any(corpus.iterdir()):
            _seed(corpus)
    atheris.Setup(arguments, analyze_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
