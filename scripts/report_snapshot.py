"""Every report aiscan writes for the shipped fixtures, in one folder, to diff before and after a
change that must not alter any output (the speed work's rule: byte-identical reports).

For each C and Python fixture it writes the text and the JSON report, plain, placed on
two devices at a given size (a CPU with cache geometry, so the cache model runs, and the
H100), and placed on two CPUs at no size (symbolic limits, crossovers and cache regimes), in
one process per fixture set so the run takes seconds, not minutes.

Usage:
    python scripts/report_snapshot.py OUT_DIR
    diff -r BEFORE_DIR AFTER_DIR
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_VARIANTS: dict[str, list[str]] = {
    "plain": [],
    "placed": ["--device", "epyc-9654", "--device", "h100-sxm", "--size", "n=4096"],
    # No sizes: limits, crossovers and the cache model's regimes stay symbolic.
    "symbolic": ["--device", "xeon-8480plus", "--device", "haswell-e5-2695v3"],
}


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))  # this checkout's aiscan, not an installed one
    from aiscan.cli import main as aiscan

    fixtures = sorted(ROOT.glob("fixtures/c/**/*.c")) + sorted(ROOT.glob("fixtures/python/*.py"))
    for fixture in fixtures:
        name = str(fixture.relative_to(ROOT / "fixtures")).replace("/", "__")
        for variant, flags in _VARIANTS.items():
            for form in ("text", "json"):
                buffer = io.StringIO()
                arguments = [
                    "analyze",
                    str(fixture.relative_to(ROOT)),
                    "--no-cache",
                    "--timeout",
                    "600",
                ]
                arguments += ["--format", form, *flags]
                with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
                    try:
                        aiscan(arguments)
                    except SystemExit as exit_:
                        buffer.write(f"\n[exit {exit_.code}]\n")
                # Paths of this checkout are written as <root>, so checkouts compare.
                text = buffer.getvalue().replace(str(ROOT), "<root>")
                (out / f"{name}.{variant}.{form}").write_text(text)
    print(f"{len(fixtures)} fixtures, {len(fixtures) * 2 * len(_VARIANTS)} reports in {out}")


if __name__ == "__main__":
    main()
