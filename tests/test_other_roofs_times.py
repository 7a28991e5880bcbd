"""A device with measured figures shows a kernel's times on both roof sets; without a number
of FLOPs at the sizes there are no times, and the other roof set is not placed at all (its
crossover was solved again for nothing: most of a strided nest's first hover)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from aiscan.ir.symbols import size_symbol
from aiscan.options import PlacementOptions
from aiscan.roofline import kernels
from aiscan.roofline.devices import load_devices
from aiscan.roofline.plot import KernelSpec

n = size_symbol("n")


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The devices `_place_one` is asked to place on, in order."""
    placed: list[str] = []
    original: Callable[..., Any] = kernels._place_one

    def counted(spec: KernelSpec, device: Any, *args: Any, **kwargs: Any) -> Any:
        placed.append(device.memory[0].source)
        return original(spec, device, *args, **kwargs)

    monkeypatch.setattr(kernels, "_place_one", counted)
    return placed


def test_without_sizes_only_the_roofs_asked_for_are_placed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h100 = load_devices().get("h100-sxm")
    assert h100.has_attainable
    placed = _counting(monkeypatch)
    spec = KernelSpec("daxpy", 2 * n, 24 * n, "fp64")
    (placement,) = kernels.place_on_devices(spec, PlacementOptions(devices=(h100,)), {})
    assert not isinstance(placement, str)
    assert placement.times is None
    assert placement.times_by_roof == (("datasheet", None), ("attainable", None))
    assert placed == [h100.memory[0].source]  # the datasheet's roofs only


def test_at_sizes_both_roof_sets_are_placed_and_timed(monkeypatch: pytest.MonkeyPatch) -> None:
    h100 = load_devices().get("h100-sxm")
    measured = h100.attainable()
    placed = _counting(monkeypatch)
    spec = KernelSpec("daxpy", 2 * n, 24 * n, "fp64")
    (placement,) = kernels.place_on_devices(spec, PlacementOptions(devices=(h100,)), {"n": 4096})
    assert not isinstance(placement, str)
    times = dict(placement.times_by_roof)
    datasheet, attainable = times["datasheet"], times["attainable"]
    assert datasheet is not None and attainable is not None
    assert datasheet.comms_s == pytest.approx(24 * 4096 / h100.memory[0].bandwidth_bytes_per_s)
    assert attainable.comms_s == pytest.approx(24 * 4096 / measured.memory[0].bandwidth_bytes_per_s)
    assert attainable.comms_s != datasheet.comms_s
    assert placed == [h100.memory[0].source, measured.memory[0].source]
