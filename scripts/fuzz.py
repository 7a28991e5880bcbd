"""Long-running robustness fuzzing: mutate the fixtures and random bytes, exercise each
as a user can (`aiscan.robustness.exercise`: analysis, both reports with placement, lint,
graph), and report how many inputs were tried and any that broke it (a traceback, or no
answer within the time limit).

With `--scan-batches B`, it also writes B directories of mutated files and scans each as a
user would (`aiscan analyze DIR --format json --jobs 2`, a child process) and counts lost
results: a file the report does not give, analyzed or with a located error, and a scan that
ends in a traceback or a crash.

Usage: python scripts/fuzz.py [--count 5000] [--seed 0] [--timeout 20] [--scan-batches 0]
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from aiscan.robustness import exercise, mutate

ROOT = Path(__file__).resolve().parent.parent


class _Timeout(Exception):
    pass


def _expire(signum: int, frame: object) -> None:
    raise _Timeout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--save", type=Path, help="keep each input that broke it here")
    parser.add_argument("--scan-batches", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=40)
    arguments = parser.parse_args()
    rng = random.Random(arguments.seed)
    seeds = _seeds()
    if arguments.scan_batches:
        _scan_batches(arguments.scan_batches, arguments.batch_size, seeds, rng)
    failures: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    outcomes: collections.Counter[str] = collections.Counter()
    signal.signal(signal.SIGALRM, _expire)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as directory:
        for number in range(arguments.count):
            source = rng.choice(seeds)
            path = Path(directory) / f"case{number % 50}{source.suffix}"
            _write_case(path, source, rng)
            signal.setitimer(signal.ITIMER_REAL, arguments.timeout)
            try:
                outcomes["analyzed" if exercise(str(path)) else "diagnosed"] += 1
            except _Timeout:
                failures["timeout"] += 1
                examples.setdefault("timeout", path.read_text(errors="replace"))
            except Exception:
                frame = traceback.extract_tb(__import__("sys").exc_info()[2])[-1]
                key = f"{frame.filename}:{frame.lineno}: {traceback.format_exc().splitlines()[-1]}"
                failures[key] += 1
                examples.setdefault(key, path.read_text(errors="replace"))
                if arguments.save is not None:
                    arguments.save.mkdir(parents=True, exist_ok=True)
                    kept = arguments.save / f"broke{number}{path.suffix}"
                    kept.write_bytes(path.read_bytes())
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    elapsed = time.monotonic() - started
    broken = sum(failures.values())
    print(
        f"{arguments.count} inputs in {elapsed:.0f} s: {outcomes['analyzed']} analyzed, "
        f"{outcomes['diagnosed']} rejected with a located diagnostic, {broken} broke it"
    )
    for key, count in failures.most_common():
        print(f"  {count:5d}  {key}")
        print("         example: " + repr(examples[key][:300]))


def _seeds() -> list[Path]:
    """Every fixture in a language aiscan reads (new frontends' fixtures come in by their
    suffixes)."""
    from aiscan.sources import LANGUAGES

    return sorted(p for p in (ROOT / "fixtures").rglob("*") if p.suffix.lower() in LANGUAGES)


def _write_case(path: Path, source: Path, rng: random.Random) -> None:
    if rng.random() < 0.1:
        path.write_bytes(rng.randbytes(rng.randint(0, 3000)))
    else:
        text = mutate(source.read_text(), rng, rng.randint(1, 6))
        path.write_bytes(text.encode("utf-8", errors="surrogatepass"))


def _scan_batches(batches: int, size: int, seeds: list[Path], rng: random.Random) -> None:
    """Whole scans of mutated trees: every file must come back, analyzed or diagnosed."""
    files = lost = crashed = 0
    started = time.monotonic()
    for batch in range(batches):
        with tempfile.TemporaryDirectory() as directory:
            written = []
            for number in range(size):
                source = rng.choice(seeds)
                path = Path(directory) / f"b{batch}_{number}{source.suffix}"
                _write_case(path, source, rng)
                written.append(path.name)
            completed = subprocess.run(
                [sys.executable, "-m", "aiscan", "analyze", directory, "--format", "json",
                 "--jobs", "2", "--no-cache", "--timeout", "20"],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            files += len(written)
            if completed.returncode not in (0, 2) or "Traceback" in completed.stderr:
                crashed += 1
                print(f"  scan {batch}: exit {completed.returncode}: {completed.stderr[-300:]!r}")
                continue
            report = json.loads(completed.stdout)
            given = {
                Path(entry["path"]).name
                for entry in report["files"]
                if entry["status"] == "analyzed" or entry.get("diagnostics")
            }
            missing = [name for name in written if name not in given]
            lost += len(missing)
            if missing:
                print(f"  scan {batch}: {len(missing)} results lost, e.g. {missing[:3]}")
    print(
        f"{batches} scans of {size} files ({files} files) in {time.monotonic() - started:.0f} s: "
        f"{lost} results lost, {crashed} scans crashed"
    )


if __name__ == "__main__":
    main()
