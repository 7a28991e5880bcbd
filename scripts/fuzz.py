"""Long-running robustness fuzzing: mutate the fixtures and random bytes, exercise each
as a user can (`aiscan.robustness.exercise`: analysis, both reports with placement, lint,
graph), and report how many inputs were tried and any that broke it (a traceback, or no
answer within the time limit).

Usage: python scripts/fuzz.py [--count 5000] [--seed 0] [--timeout 20]
"""

from __future__ import annotations

import argparse
import collections
import random
import signal
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
    arguments = parser.parse_args()
    rng = random.Random(arguments.seed)
    seeds = sorted((ROOT / "fixtures").rglob("*.c")) + sorted((ROOT / "fixtures").rglob("*.py"))
    failures: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    outcomes: collections.Counter[str] = collections.Counter()
    signal.signal(signal.SIGALRM, _expire)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as directory:
        for number in range(arguments.count):
            source = rng.choice(seeds)
            path = Path(directory) / f"case{number % 50}{source.suffix}"
            if rng.random() < 0.1:
                path.write_bytes(rng.randbytes(rng.randint(0, 3000)))
            else:
                text = mutate(source.read_text(), rng, rng.randint(1, 6))
                path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
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


if __name__ == "__main__":
    main()
