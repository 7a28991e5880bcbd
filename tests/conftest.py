"""Shared test options: `--update-golden` rewrites fixture expectations on purpose."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# In CI (`CI` set, as `.ci/run` sets it) every property test runs the same examples in
# every run: a failure found by chance there would stop everything from landing (a
# random tiled nest found isl's coalescing bug only under another order of the tests).
# Elsewhere the examples are random, so runs by hand keep searching.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


_MOST_WORKERS = 4
"""pytest-xdist's `-n auto` (pyproject's `addopts`) on a large machine: each worker holds
sympy, isl and the analysis (300-450 MB), and the suite's longest tests (the fuzzers,
40 s) bound it past four."""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(_MOST_WORKERS, cores or 1))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the *.expected.toml files of fixtures from the current results",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(autouse=True)
def _private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tests never write a result cache into the repository."""
    monkeypatch.setenv("AISCAN_CACHE_DIR", str(tmp_path_factory.mktemp("aiscan-cache")))
