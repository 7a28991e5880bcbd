"""Which traffic model each device's points use, said where devices differ.

On one plot a kernel may be placed with the `cache` model on a device whose file gives its
cache geometry and with its compulsory bytes on one whose file does not (the L4): the same
kernel is then memory-bound on one and compute-bound on the other for a reason the picture
alone does not show. The legend and the HTML report name each device's model in that case.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from aiscan.roofline.placement import Placement

if TYPE_CHECKING:
    from aiscan.roofline.plot import KernelSpec

__all__ = ["NO_CACHE_GEOMETRY", "device_traffic_models", "differing_traffic_models"]

NO_CACHE_GEOMETRY: Final = "no cache geometry in its file"
_CACHE: Final = "cache model (layer conditions on its caches)"


def device_traffic_models(
    placed: Sequence[tuple[KernelSpec, Placement]],
) -> dict[str, str]:
    """By device key, in the order placed: the traffic model(s) its points use, with the
    reason where a kernel meant for the cache model fell back to compulsory bytes."""
    models: dict[str, list[str]] = {}
    for kernel, placement in placed:
        device = placement.device
        if placement.traffic_view == "cache":
            text = _CACHE
        elif kernel.cache_traffic is not None and kernel.cache_traffic.get(device) is None:
            text = f"{placement.traffic_view or 'compulsory'} traffic ({NO_CACHE_GEOMETRY})"
        else:
            text = f"{placement.traffic_view or 'compulsory'} traffic"
        found = models.setdefault(device, [])
        if text not in found:
            found.append(text)
    return {device: "; ".join(texts) for device, texts in models.items()}


def differing_traffic_models(
    placed: Sequence[tuple[KernelSpec, Placement]],
) -> dict[str, str]:
    """`device_traffic_models` when the devices do not all use the same model, else empty
    (one model everywhere needs no word on the plot)."""
    models = device_traffic_models(placed)
    return models if len(set(models.values())) > 1 else {}
