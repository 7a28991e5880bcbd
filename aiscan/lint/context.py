"""What a rule sees: one module's analysis, its source lines, the target devices."""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field, replace

from aiscan.analysis.kernel import (
    AnalysisOptions,
    FunctionAnalysis,
    ModuleAnalysis,
    RegionAnalysis,
)
from aiscan.analysis.walk import Placed, placed_statements
from aiscan.errors import UsageError
from aiscan.options import PlacementOptions
from aiscan.roofline.devices import Device
from aiscan.roofline.placement import Placement, place
from aiscan.roofline.repeats import repeat_symbols

__all__ = ["LintContext"]


@dataclass(frozen=True)
class LintContext:
    analysis: ModuleAnalysis
    source: str
    devices: tuple[Device, ...] = ()
    analysis_options: AnalysisOptions = field(default_factory=AnalysisOptions)
    sparse: bool = False
    """Place on 2:4 structured-sparsity peaks instead of dense ones."""
    write_allocate: bool | None = None
    """None follows each device's store policy when placing on it."""
    placement: PlacementOptions | None = None
    """How `analyze` places nests on the devices (model, threads, flags): the rules that
    give a verdict use the same placement, so every surface says the same thing. None:
    `analyze`'s defaults on `devices`."""
    placement_memo: MutableMapping[Hashable, tuple[Placement | str, ...]] | None = field(
        default=None, compare=False
    )
    """Placements already made, by all that decides them (`placement_key`): the language
    server keeps one across edits, so its hovers and a nest an edit left alone are not
    placed again. None: every call places."""

    @property
    def path(self) -> str:
        return self.analysis.module.path

    @property
    def sizes(self) -> Mapping[str, int]:
        return self.analysis.sizes

    def nests(self) -> Iterator[tuple[FunctionAnalysis, RegionAnalysis]]:
        """Every top-level loop nest, with the function around it."""
        for function in self.analysis.functions:
            for region in function.regions:
                if region.region.kind == "nest":
                    yield function, region

    def looped_statements(self, *, explicit: bool) -> Iterator[tuple[RegionAnalysis, Placed]]:
        """Statements inside at least one loop, with their nest.

        `explicit` keeps only loops the programmer wrote: vectorized NumPy regions, whose
        loops the frontend makes up and NumPy orders itself, are left out, and so are GPU
        launches, whose grid loops run in parallel (loop-order advice does not apply).
        """
        for _, region in self.nests():
            if explicit and (region.region.eager_calls or region.region.gpu_launch):
                continue
            for placed in placed_statements(region.region.body):
                if placed.loops:
                    yield region, placed

    def write_allocate_on(self, device: Device) -> bool:
        """The store policy for `device`: the user's override, else the device's own."""
        return device.write_allocate if self.write_allocate is None else self.write_allocate

    def placements(self, region: RegionAnalysis) -> list[Placement | str]:
        """The nest on every device exactly as `analyze` places it (one per device, in
        order; a string where it cannot be placed there)."""
        options = self._placement_options()
        key, known = self._kept(region, options)
        if known is not None:
            return known
        placed = self._placed(region, options, simplified=True)
        if self.placement_memo is not None:
            self.placement_memo[key] = tuple(placed)
        return placed

    def printed_placements(self, region: RegionAnalysis) -> list[Placement | str]:
        """The placements as `placement_lines` prints them (a hover): those kept when
        kept, else made without sympy's `simplify` of the AI, which those lines print
        only as a cache level's AI without sizes (then placed in full). Most of a model
        nest's placement was that `simplify`. Not kept: a rule prints the AI (AIS001)."""
        options = self._placement_options()
        known = self._kept(region, options)[1]
        if known is not None:
            return known
        placed = self._placed(region, options, simplified=False)
        if any(_prints_symbolic_levels(p) for p in placed):
            return self.placements(region)
        return placed

    def _kept(
        self, region: RegionAnalysis, options: PlacementOptions
    ) -> tuple[Hashable, list[Placement | str] | None]:
        """The key of the nest's placements in the memo, and those kept under it."""
        if self.placement_memo is None:
            return None, None
        key = self.placement_key(region, options)
        known = self.placement_memo.get(key)
        return key, None if known is None else list(known)

    def _placed(
        self, region: RegionAnalysis, options: PlacementOptions, *, simplified: bool
    ) -> list[Placement | str]:
        from aiscan.roofline.kernels import kernel_spec, place_on_devices

        spec = kernel_spec(f"line {region.region.span.line}", region, options)
        return place_on_devices(spec, options, self.sizes, region, simplified=simplified)

    def _placement_options(self) -> PlacementOptions:
        return self.placement or PlacementOptions(
            devices=self.devices,
            model="auto",
            sparse=self.sparse,
            write_allocate=self.write_allocate,
        )

    def placement_key(self, region: RegionAnalysis, options: PlacementOptions) -> Hashable:
        """What decides a nest's placements: its IR (spans included: the texts name lines)
        and the counting options and sizes its analysis is a function of (`analyze_module`
        analyzes each region from these alone), and the placement options."""
        counting = self.analysis_options
        return (
            region.region,
            tuple(sorted(self.sizes.items())),
            (counting.write_allocate, counting.special_weight),
            tuple(sorted(counting.sizes.items())),
            options,
        )

    def place(self, region: RegionAnalysis, device: Device, precision: str) -> Placement | None:
        """The nest on `device` under the compulsory model; None when the device has no
        peak for `precision` (nothing certain to say then)."""
        traffic = region.traffic["compulsory"]
        try:
            placed = place(
                region.flops.total,
                traffic.total(self.write_allocate_on(device)),
                precision,
                device,
                sizes=self.sizes or None,
                sparse=self.sparse,
                repeats=repeat_symbols((region.region.body,)),
            )
            return replace(placed, bytes_upper_bound=not traffic.exact)
        except UsageError:
            return None


def _prints_symbolic_levels(placement: Placement | str) -> bool:
    """Whether `placement_lines` prints a cache level's AI as an expression (no sizes)."""
    return not isinstance(placement, str) and any(
        level.intensity_flops_per_byte is None and level.intensity is not None
        for level in placement.levels
    )
