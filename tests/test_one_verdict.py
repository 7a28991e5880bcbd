"""One verdict, whatever command shows it (issue 34): `check`'s AIS001 reads the placement
`analyze` prints, so its AI, ridge and attainable rate are `analyze`'s, on C loops, NumPy
(eager view) and PyTorch code, with and without sizes, on a GPU and a one-core CPU."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from aiscan.cli import main
from aiscan.lint.figures import flops_rate

ROOT = Path(__file__).resolve().parent.parent

CASES = [
    ("fixtures/c/daxpy.c", ()),
    ("fixtures/c/dgemm_ijk.c", ()),
    ("fixtures/c/dgemm_ijk.c", ("--size", "n=4096")),
    ("fixtures/c/stencil_cross9.c", ("--size", "m=2000,n=2000")),
    ("fixtures/c/time_stencil.c", ("--size", "T=10,n=100000")),
    ("fixtures/python/frameworks_numpy.py", ()),
    ("fixtures/python/frameworks_torch.py", ()),
]


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    main(list(argv))
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("fixture", "sizes"), CASES)
def test_check_and_analyze_give_the_same_placement(
    capsys: pytest.CaptureFixture[str], fixture: str, sizes: tuple[str, ...]
) -> None:
    devices = ("--device", "h100", "--device", "epyc-9654")
    path = str(ROOT / fixture)
    report = _json(capsys, "analyze", path, *devices, *sizes, "--format", "json", "--no-cache")
    placed = {
        (nest["line"], p["device"]): p
        for function in report["files"][0]["functions"]
        for nest in function["nests"]
        for p in nest.get("placement") or ()
        if isinstance(p, dict)
    }
    lint = _json(
        capsys, "check", path, *devices, *sizes, "--select", "AIS001",
        "--output-format", "json", "--no-cache",
    )  # fmt: skip
    # One finding per nest; its message has one clause per device, in the devices' order.
    found = set()
    for finding in (f for f in lint["findings"] if f["code"] == "AIS001"):
        names = finding["details"]["device"].split(", ")
        clauses = re.split(r"; (?=memory-bound)", finding["message"])
        assert len(names) == len(clauses)
        for device, clause in zip(names, clauses, strict=True):
            found.add((finding["line"], device))
            p = placed[(finding["line"], device)]
            assert p["bound"] == "memory", clause
            assert f"the ridge {p['ridge_flops_per_byte']:.4g} F/B" in clause
            rate = re.search(r"attainable (?:at most )?([\d.]+ \w?FLOP/s)", clause)
            # Without sizes the attainable rate is a limit as sizes grow: the bounding level's.
            bounding = [lv for lv in p.get("levels") or () if lv["level"] == p["bound_level"]]
            limit = bounding[0]["attainable_limit_flops_per_s"] if bounding else None
            attainable = p["attainable_flops_per_s"] or limit
            if attainable is not None:  # the JSON has no limit for a single-level view
                assert rate is not None and rate.group(1) == flops_rate(attainable), clause
    # and every nest analyze calls memory-bound at the given sizes has its finding
    memory_bound = {
        key for key, p in placed.items()
        if p["bound"] == "memory" and p["intensity_flops_per_byte"] is not None
    }  # fmt: skip
    assert memory_bound <= found
