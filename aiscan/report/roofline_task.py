"""`aiscan roofline` as a per-file task: analyze one file, make its kernels and place them.

Run in the scan's worker processes (`aiscan.scan.run_task`), so that the analyses, the
cache model's sweeps over sizes and the placements of different files use every core,
and the command itself only draws. The payload carries the kernels and their placements
as objects (the workers pickle them); it is never cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiscan.errors import Diagnostic
from aiscan.options import PipelineOptions, PlacementOptions
from aiscan.scan import Payload, Task

if TYPE_CHECKING:
    from aiscan.roofline.placement import Placement
    from aiscan.roofline.plot import KernelSpec, SizePath

__all__ = ["RooflineFiles", "RooflineOptions", "joined_files", "preload", "roofline_task"]


@dataclass(frozen=True)
class RooflineOptions:
    """What a worker needs for each file: how to analyze it, where to place its kernels,
    and the sizes its paths sweep."""

    pipeline: PipelineOptions
    placement: PlacementOptions
    size_range: tuple[int, int]
    simplified: bool = True
    """False for a drawing alone (a PNG, an SVG): its placements keep no AI in `simplify`'s
    printed form, which only the HTML report's tables show (`placement.place`)."""


@dataclass(frozen=True)
class RooflineFiles:
    """Every file's kernels and their placements, joined as one run over all files makes
    them (`module_kernels`, `placements`)."""

    kernels: list[KernelSpec]
    placed: tuple[list[tuple[KernelSpec, Placement]], list[str]]
    paths: list[SizePath]
    """The `swept_path` of each placed pair, in the order of `placed`."""
    errors: list[str]
    """Each file's diagnostics, in the order of the files."""
    shapes_used: list[str]
    failed: bool
    """Some file was not analyzed."""


def preload(files: list[str], options: RooflineOptions) -> None:
    """Import what each worker needs, and this process after them, before the workers
    fork: they share it instead of each importing it again (sympy, the analysis and the
    frontends of the files' languages: about a second of CPU a worker)."""
    import sympy  # noqa: F401  (a placement on a device needs it)

    import aiscan.pipeline
    import aiscan.roofline.kernels
    import aiscan.roofline.plot
    from aiscan.sources import language_of

    languages = {options.pipeline.language or language_of(path) for path in files}
    if languages & {"c", "cuda"}:
        import aiscan.frontends.c
    if "python" in languages:
        import aiscan.frontends.python  # noqa: F401


def roofline_task(options: RooflineOptions) -> Task:
    # Never cached (`run_task` gets no cache): the fingerprint keys nothing.
    return Task(
        kind="roofline", run=_roofline_file, failed=_failed_file, options=options, fingerprint=""
    )


def _roofline_file(path: str, options: RooflineOptions) -> Payload:
    from aiscan.pipeline import analyze_path
    from aiscan.roofline.kernels import file_kernels
    from aiscan.roofline.plot import place_kernel, swept_path

    result = analyze_path(path, options.pipeline)
    errors = [d.format() for d in result.diagnostics]
    if result.analysis is None:
        return {"ok": False, "errors": errors}
    kernels = file_kernels(result.analysis, options.placement, options.size_range)
    # The plot places every kernel at the sizes given, not the module's own (as before).
    sizes = dict(options.pipeline.analysis.sizes) or None
    devices, sparse = options.placement.devices, options.placement.sparse
    shapes: list[str] = []
    if options.pipeline.shapes:
        from aiscan.given_shapes import shapes_matched

        shapes = shapes_matched(options.pipeline.shapes, result.analysis.module.functions)
    simplified = options.simplified
    placed = [
        [place_kernel(k, d, sizes=sizes, sparse=sparse, simplified=simplified) for d in devices]
        for k in kernels
    ]
    return {
        "ok": True,
        "errors": errors,
        "shapes_used": shapes,
        "kernels": kernels,
        "placed": placed,
        # Its path over sizes too: evaluating it is part of placing, done in every worker.
        "paths": [
            [() if isinstance(p, str) else swept_path(k, p, options.size_range) for p in row]
            for k, row in zip(kernels, placed, strict=True)
        ],
    }


def _failed_file(path: str, diagnostic: Diagnostic, options: RooflineOptions) -> Payload:
    return {"ok": False, "errors": [diagnostic.format()]}


def joined_files(
    files: list[str], payloads: list[Payload], options: RooflineOptions
) -> RooflineFiles:
    """The payloads of `files` (in order) as one run over all of them: kernels labelled
    with their file where several files were analyzed, placements device by device."""
    from aiscan.roofline.kernels import labelled_by_file
    from aiscan.roofline.plot import joined_paths, joined_placements

    analyzed = [(f, p) for f, p in zip(files, payloads, strict=True) if p["ok"]]
    kernels, each, paths = [], [], []
    for path, payload in analyzed:
        for kernel, placed, swept in zip(
            payload["kernels"], payload["placed"], payload["paths"], strict=True
        ):
            kernels.append(labelled_by_file(kernel, path) if len(analyzed) > 1 else kernel)
            each.append(placed)
            paths.append(swept)
    devices = options.placement.devices
    return RooflineFiles(
        kernels,
        joined_placements(kernels, devices, each),
        joined_paths(kernels, devices, each, paths),
        [e for p in payloads for e in p["errors"]],
        sorted({s for _, p in analyzed for s in p["shapes_used"]}),
        len(analyzed) < len(payloads),
    )
