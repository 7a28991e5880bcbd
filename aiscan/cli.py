"""The `aiscan` command line. The only module (with the language server) that prints or exits.

Exit codes: 0 every file analyzed, 1 findings (`check`), 2 usage, configuration or input
errors. Heavy modules are imported inside the subcommands so `--help` stays instant.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from aiscan import __version__
from aiscan.arguments import check_arguments, parse_size
from aiscan.errors import UsageError
from aiscan.given_shapes import parse_shape
from aiscan.limits import DEFAULT_MEMORY_LIMIT_MIB
from aiscan.printable import printable
from aiscan.progress import StatusLine
from aiscan.report.words import counted
from aiscan.roofline.precision import PRECISIONS
from aiscan.sources import languages_text

if TYPE_CHECKING:
    from aiscan.cache import ResultCache
    from aiscan.config import Config
    from aiscan.options import PipelineOptions, PlacementOptions
    from aiscan.roofline.devices import Device
    from aiscan.roofline.placement import Placement
    from aiscan.roofline.plot import KernelSpec, SizePath

__all__ = ["main"]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    arguments = parser.parse_args(_split_joined_flags(list(sys.argv[1:] if argv is None else argv)))
    if not getattr(arguments, "command", None):
        parser.print_help()
        return EXIT_ERROR
    if arguments.command != "lsp":
        from aiscan.collector import tune_collector_for_batch

        tune_collector_for_batch()
    try:
        check_arguments(arguments)
        code: int = arguments.handler(arguments)
        return code
    except UsageError as error:
        print(f"aiscan: error: {printable(str(error))}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        return EXIT_ERROR
    except Exception as error:  # never a traceback for the user; AISCAN_DEBUG=1 shows it
        if os.environ.get("AISCAN_DEBUG"):
            import traceback  # here: a run that fails imports it, not every run

            traceback.print_exc()
        print(
            f"aiscan: internal error: {type(error).__name__}: {printable(str(error))} "
            "(set AISCAN_DEBUG=1 for a traceback, and please report it)",
            file=sys.stderr,
        )
        return EXIT_ERROR


def _split_joined_flags(argv: list[str]) -> list[str]:
    """Accept the compilers' joined forms `-DN=1` and `-Iinclude` as well as `-D N=1`."""
    out: list[str] = []
    for word in argv:
        if len(word) > 2 and word[:2] in ("-D", "-I") and not word.startswith("--"):
            out += [word[:2], word[2:]]
        else:
            out.append(word)
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aiscan",
        description="Exact symbolic FLOPs, bytes and arithmetic intensity of loop kernels, "
        "read from C, CUDA and Python (NumPy, PyTorch, JAX, Triton) source without compiling "
        "or running it.",
        epilog="examples:\n"
        + "\n".join(f"  {e}" for e in _TOP_EXAMPLES)
        + "\n\n`aiscan COMMAND --help` for a command's options and examples.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"aiscan {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    analyze = commands.add_parser(
        "analyze", help="count FLOPs and bytes and derive the intensity of every loop nest"
    )
    analyze.add_argument(
        "files",
        nargs="+",
        metavar="PATH",
        help=f"{languages_text()} files, or directories to scan for them",
    )
    _add_source_options(analyze)
    _add_device_options(analyze)
    analyze.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text for people (default), or json: the versioned report docs/json.md describes",
    )
    analyze.add_argument("-o", "--output", metavar="PATH", help="write the report here")
    analyze.add_argument(
        "--model",
        choices=("compulsory", "streaming", "cache"),
        default=None,
        help="traffic model for roofline placement (default: cache for loop code on devices "
        "that describe their caches, the framework's view - jit or eager - for array code): "
        "cache (layer conditions on the device's caches), compulsory (infinite cache; the "
        "default for function totals) or streaming (no reuse)",
    )
    _add_scan_options(analyze)
    analyze.set_defaults(handler=_run_analyze)

    graph = commands.add_parser("graph", help="print the loop-nest graph aiscan understood")
    graph.add_argument("file", metavar="FILE", help=f"one source file: {languages_text()}")
    _add_source_options(graph)
    graph.add_argument(
        "--format",
        choices=("dot", "json", "text"),
        default="dot",
        help="dot for Graphviz (default), json (node-link), or an indented text tree",
    )
    graph.set_defaults(handler=_run_graph)

    devices = commands.add_parser("devices", help="list the known devices, or show one")
    devices.add_argument(
        "action",
        nargs="?",
        choices=("list", "show"),
        default="list",
        help="list the catalog (default), or show one device with every figure's source",
    )
    devices.add_argument("name", nargs="?", help="device name or alias (with `show`)")
    devices.add_argument(
        "--device-file",
        action="append",
        default=[],
        metavar="TOML",
        help="also load this device file",
    )
    devices.add_argument("--config", metavar="PATH", help="configuration file to use")
    devices.set_defaults(handler=_run_devices)

    roofline = commands.add_parser(
        "roofline", help="plot every loop nest on the chosen devices' rooflines"
    )
    roofline.add_argument("files", nargs="+", metavar="PATH",
                          help=f"{languages_text()} files, or directories to scan for "
                          "them")  # fmt: skip
    _add_source_options(roofline)
    _add_device_options(roofline)
    roofline.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="PLOT",
        help="output file: .png or .svg (the plot), or .html (an interactive plot, zoom, "
        "tooltips and toggles, with the placement and device tables; one file, offline)",
    )
    roofline.add_argument(
        "--model",
        choices=("compulsory", "streaming", "cache"),
        default=None,
        help="traffic model (default: cache for loop code on devices that describe their "
        "caches - one marker per memory level, the hierarchical roofline - and the "
        "framework's view, jit or eager, for array code), compulsory or streaming",
    )
    roofline.add_argument(
        "--size-range",
        default="8:65536",
        metavar="LOW:HIGH",
        help="sizes swept for size-dependent intensities (default 8:65536)",
    )
    roofline.set_defaults(handler=_run_roofline)

    calibrate = commands.add_parser(
        "calibrate",
        help="measure this machine's bandwidth and GEMM rates; write a device file",
    )
    calibrate.add_argument("-o", "--output", default="calibrated.toml", metavar="TOML",
                           help="device file to write (default: calibrated.toml; its "
                           "name without .toml is the device key)")  # fmt: skip
    calibrate.add_argument("--gpu", action="store_true",
                           help="measure the GPU through CuPy or PyTorch")  # fmt: skip
    calibrate.add_argument("--array-mib", type=int, default=128, metavar="MIB",
                           help="size of each bandwidth array (default 128 MiB: far past "
                           "the caches)")  # fmt: skip
    calibrate.add_argument("--gemm-n", type=int, default=2048, metavar="N",
                           help="GEMM size n (n x n times n x n; default 2048)")  # fmt: skip
    calibrate.set_defaults(handler=_run_calibrate)
    _add_lint_commands(commands)
    for name, subparser in commands.choices.items():
        subparser.epilog = "examples:\n" + "\n".join(f"  {e}" for e in _EXAMPLES[name])
        subparser.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


_TOP_EXAMPLES: Final = (
    "aiscan analyze fixtures/c/daxpy.c --size n=4096",
    "aiscan analyze fixtures/c/dgemm_ijk.c --device h100 --size n=4096",
    "aiscan roofline fixtures/c/daxpy.c --device h100 -o roofline.html",
    "aiscan check fixtures/c --device h100",
)
"""Shown under `aiscan --help`: the first commands a new user runs."""

# Shown under each command's --help; every one runs as written from the repository's root
# (a test runs them).
_EXAMPLES: dict[str, tuple[str, ...]] = {
    "analyze": (
        "aiscan analyze fixtures/c/daxpy.c fixtures/c/dgemm_ijk.c --size n=4096",
        "aiscan analyze fixtures/c/dgemm_ijk.c --device h100 --device epyc-9654 --size n=2048",
        "aiscan analyze fixtures/python/loops.py --format json -o report.json",
    ),
    "graph": (
        "aiscan graph fixtures/c/dgemm_ijk.c --format text",
        "aiscan graph fixtures/c/dgemm_ijk.c | dot -Tsvg -o dgemm.svg",
    ),
    "devices": ("aiscan devices", "aiscan devices show h100"),
    "roofline": (
        "aiscan roofline fixtures/c/daxpy.c fixtures/c/dgemm_ijk.c --device h100 "
        "--size n=4096 -o roofline.png",
        "aiscan roofline fixtures/c --device h100 --device epyc-9654 -o roofline.html",
    ),
    "calibrate": ("aiscan calibrate -o this-machine.toml",),
    "check": (
        "aiscan check fixtures/c --device h100",
        "aiscan check src --output-format sarif -o aiscan.sarif",
        "cat kernel.c | aiscan check - --stdin-filename kernel.c",
    ),
    "rule": ("aiscan rule", "aiscan rule AIS002"),
    "lsp": (
        "aiscan lsp   (started by an editor; see docs/editors.md; it keeps finished views"
        " in AISCAN_CACHE_DIR or ~/.cache/aiscan, none with AISCAN_NO_CACHE=1)",
    ),
}


def _add_source_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
        help="define a macro as a compiler would; an integer value also sets that size "
        "(the name stays symbolic in the expressions)",
    )  # fmt: skip
    parser.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                        help="add an include directory")  # fmt: skip
    parser.add_argument(
        "--python-dtype", default=None, metavar="DTYPE",
        help="dtype of Python arrays nothing in the code types, e.g. un-annotated "
        "parameters: float16, bfloat16, float32, float64 (default, NumPy's), complex64, "
        "complex128, or int8, int16, int32, int64, uint8 for integer data (integer "
        "arithmetic is no FLOP); each use is listed as an assumption",
    )  # fmt: skip
    parser.add_argument(
        "--triton-config", default=None, choices=("first", "all"),
        help="an autotuned Triton kernel's configs: the first (default) or all, each "
        "reported as a launch of its own",
    )  # fmt: skip
    parser.add_argument(
        "--language", default=None, choices=("c", "cuda", "python"),
        help="read every file as this language, whatever its extension (CUDA code in "
        "`.h`, `.hpp` or `.cpp` files: `--language cuda`); default: by extension",
    )  # fmt: skip
    parser.add_argument(
        "--launch", dest="launches", action="append", default=[], metavar="KERNEL:GRID:BLOCK",
        help="a CUDA kernel's launch, GRID and BLOCK comma-separated size expressions "
        "(`vec_add:n/256:256`, `matmul:n/16,n/16:16,16`); replaces the file's launches of it",
    )  # fmt: skip
    parser.add_argument(
        "--size", dest="sizes", action="append", default=[], metavar="NAME=VALUE",
        help="evaluate the intensity at this size (repeatable, or comma-separated)",
    )  # fmt: skip
    parser.add_argument(
        "--shape", dest="shapes", action="append", default=[], metavar="NAME=EXTENT,...",
        help="the shape of a parameter the code does not give, by name or `function.name`, "
        "extents as size expressions, optionally a dtype (`q=b,h,n,d`, `w1=d,4*d`, "
        "`attention.x=n,d:float16`; repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--write-allocate", action=argparse.BooleanOptionalAction, default=None,
        help="stores to elements not read before also cost a read (default: off for the "
        "report; each device's own policy for roofline placement)",
    )  # fmt: skip
    parser.add_argument(
        "--special-weight", type=int, default=None, metavar="N",
        help="FLOPs each math-library call (sqrt, exp, ...) adds to the total (default 0; "
        "special calls are always reported apart)",
    )  # fmt: skip
    parser.add_argument("--config", metavar="PATH",
                        help="configuration file (default: nearest aiscan.toml or "
                        "pyproject.toml with [tool.aiscan])")  # fmt: skip


def _add_device_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", dest="devices", action="append", default=[],
                        metavar="NAME", help="place kernels on this device's roofline "
                        "(repeatable; `aiscan devices` lists them)")  # fmt: skip
    parser.add_argument(
        "--device-file",
        action="append",
        default=[],
        metavar="TOML",
        help="load a device file of your own (e.g. measured ceilings)",
    )
    parser.add_argument(
        "--dtype",
        metavar="PRECISION",
        help="precision for the peak (default: the kernel's element type): one of "
        f"{', '.join(PRECISIONS)} (also float64, float32, half, bfloat16, ...)",
    )
    parser.add_argument(
        "--sparse",
        action="store_true",
        help="use 2:4 structured-sparsity peaks instead of dense ones",
    )
    parser.add_argument(
        "--roof",
        choices=("datasheet", "attainable"),
        default="datasheet",
        help="place against the datasheet peaks or the measured, attainable figures a device "
        "file carries (`aiscan calibrate` writes them); JSON gives both times when both exist",
    )
    parser.add_argument(
        "--threads", type=int, default=None, metavar="N",
        help="threads for every loop nest on a CPU (default: one, unless an OpenMP directive "
        "or a library contraction says otherwise)",
    )  # fmt: skip
    parser.add_argument(
        "--cflags", default=None, metavar="FLAGS",
        help='the C compiler flags, e.g. "-O3 -march=native -ffast-math": they decide which '
        "dependency chains the compiler may reassociate or fuse (default: -O3)",
    )  # fmt: skip


def _config(arguments: argparse.Namespace) -> Config:
    from aiscan.config import find_config, load_config

    path = Path(arguments.config) if getattr(arguments, "config", None) else None
    if path is not None and not path.is_file():
        raise UsageError(f"--config {path}: no such file")
    return load_config(path or find_config(Path.cwd()))


def _pipeline_options(arguments: argparse.Namespace, config: Config) -> PipelineOptions:
    from aiscan.options import AnalysisOptions, PipelineOptions

    defines = dict(config.defines)
    for item in arguments.defines:
        name, _, value = item.partition("=")
        if not name.isidentifier():
            raise UsageError(f"-D {item}: not a macro name")
        defines[name] = value if "=" in item else "1"
    sizes = dict(config.sizes)
    sizes.update(_given_sizes(arguments.sizes))
    include_dirs = [str(d) for d in config.include_dirs] + list(arguments.include_dirs)
    for directory in include_dirs:
        if not os.path.isdir(directory):
            raise UsageError(f"-I {directory}: no such directory")
    write_allocate = arguments.write_allocate
    if write_allocate is None:
        write_allocate = config.write_allocate
    special_weight = arguments.special_weight
    if special_weight is None:
        special_weight = config.special_weight or 0
    analysis = AnalysisOptions(
        write_allocate=bool(write_allocate), special_weight=special_weight, sizes=sizes
    )
    from aiscan.config import PYTHON_DTYPES

    python_dtype = getattr(arguments, "python_dtype", None) or config.python_dtype
    if python_dtype is not None and python_dtype not in PYTHON_DTYPES:
        raise UsageError(f"--python-dtype {python_dtype}: one of {', '.join(PYTHON_DTYPES)}")
    launches = tuple(getattr(arguments, "launches", ()))
    for spec in (*config.launches, *launches):
        _check_launch(spec)
    # An integer -D value binds a size in the preprocessor (see frontends/c/preprocess.py).
    return PipelineOptions(
        tuple(include_dirs),
        defines,
        analysis,
        python_dtype,
        jax_enable_x64=config.jax_enable_x64,
        fp32_matmul_tf32=config.fp32_matmul_tf32,
        triton_config=getattr(arguments, "triton_config", None) or config.triton_config or "first",
        launches=launches,
        configured_launches=config.launches,
        language=getattr(arguments, "language", None),
        shapes=(*config.shapes, *map(parse_shape, getattr(arguments, "shapes", ()))),
    )


def _check_launch(spec: str) -> None:
    from aiscan.frontends.cuda.launches import LaunchError, launch_from_spec

    try:
        launch_from_spec(spec, "--launch")
    except LaunchError as error:
        raise UsageError(f"--{error}") from None


def _placement_options(arguments: argparse.Namespace, config: Config) -> PlacementOptions | None:
    names = list(arguments.devices) or list(config.devices)
    if not names:
        if arguments.dtype or arguments.sparse:
            raise UsageError("--dtype and --sparse need at least one --device")
        return None
    from aiscan.options import PlacementOptions
    from aiscan.roofline.devices import find_devices
    from aiscan.roofline.precision import normalize_precision

    devices = find_devices(names, [*config.device_files, *arguments.device_file])
    write_allocate = arguments.write_allocate
    if write_allocate is None:
        write_allocate = config.write_allocate
    threads, threads_reason = getattr(arguments, "threads", None), ""
    if threads is not None:
        threads_reason = f"--threads {threads}"
    elif config.threads is not None:
        threads, threads_reason = config.threads, f"threads = {config.threads} in {config.path}"
    if threads is not None and threads < 1:
        raise UsageError(f"--threads {threads}: at least one thread")
    return PlacementOptions(
        devices=devices,
        model=arguments.model or "auto",
        dtype=normalize_precision(arguments.dtype) if arguments.dtype else None,
        sparse=arguments.sparse,
        write_allocate=write_allocate,
        roof=arguments.roof,
        threads=threads,
        threads_reason=threads_reason,
        cflags=getattr(arguments, "cflags", None) or config.cflags,
    )


def _run_analyze(arguments: argparse.Namespace) -> int:
    from aiscan.discovery import discover
    from aiscan.report.file_task import AnalyzeOptions, analyze_task
    from aiscan.scan import run_task

    config = _config(arguments)
    options = _pipeline_options(arguments, config)
    placement = _placement_options(arguments, config)
    files = discover(arguments.files)
    if not files:
        raise UsageError(f"no {languages_text()} source files found in the given paths")
    totals_model = arguments.model if arguments.model in ("compulsory", "streaming") else None
    task = analyze_task(
        AnalyzeOptions(options, placement, arguments.format, totals_model or "compulsory")
    )
    payloads = run_task(
        files,
        task,
        jobs=arguments.jobs,
        cache=_cache(arguments, config, arguments.files),
        timeout_s=arguments.timeout,
        memory_limit_mib=arguments.memory_limit,
        progress=sys.stderr,
    )
    if arguments.format == "json":
        from aiscan.report.assembly import join_report

        report_options: dict[str, Any] = {
            "write_allocate": options.analysis.write_allocate,
            "special_weight": options.analysis.special_weight,
            "sizes": dict(options.analysis.sizes),
            "model": placement.model if placement else (arguments.model or "compulsory"),
            "devices": [d.key for d in placement.devices] if placement else [],
        }
        analyzed = sum(1 for p in payloads if p["ok"])
        text = join_report([p["output"] for p in payloads], analyzed, report_options)
    else:
        from aiscan.report.assembly import join_text

        text = join_text([p["output"] for p in payloads])
    _emit(text, arguments.output)
    for payload in payloads:
        for error in payload.get("errors", []):
            print(error, file=sys.stderr)
    _warn_unused_sizes(arguments, payloads)
    if any(p["ok"] for p in payloads):
        _warn_unmatched_shapes(options, [n for p in payloads for n in p.get("shapes_used", [])])
    return EXIT_OK if all(p["ok"] for p in payloads) else EXIT_ERROR


def _warn_unused_sizes(arguments: argparse.Namespace, payloads: Sequence[Any]) -> None:
    """`--size nn=4096` that no analyzed file uses: a warning with the closest name."""
    given = _given_sizes(arguments.sizes)
    analyzed = [p for p in payloads if p["ok"]]
    if not given or not analyzed or any("sizes_used" not in p for p in analyzed):
        return
    from aiscan.report.sizes import unused_size_warnings

    used = {name for p in analyzed for name in p["sizes_used"]}
    for warning in unused_size_warnings(given, used):
        print(f"aiscan: warning: {warning}", file=sys.stderr)


def _warn_unmatched_shapes(options: PipelineOptions, used: Sequence[str]) -> None:
    """`--shape w9=n` where no analyzed function has a parameter `w9`: a warning."""
    from aiscan.given_shapes import unmatched_shape_warnings

    for warning in unmatched_shape_warnings(options.shapes, used):
        print(f"aiscan: warning: {printable(warning)}", file=sys.stderr)


def _given_sizes(groups: Sequence[str]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for group in groups:
        for item in filter(None, (part.strip() for part in group.split(","))):
            name, value = parse_size(item)
            sizes[name] = value
    return sizes


def _cache(arguments: argparse.Namespace, config: Config, scanned: Sequence[str]) -> ResultCache:
    """`--no-cache` or AISCAN_NO_CACHE turn it off; `--cache-dir`, AISCAN_CACHE_DIR, the
    config's `cache-dir` (relative to the configuration's directory), else `.aiscan_cache`
    in the working directory. A directory that holds the project, the working directory or
    a scanned path is refused: its entries and its `*` .gitignore would bury the sources."""
    from aiscan.cache import ResultCache, holder_of

    if arguments.no_cache or os.environ.get("AISCAN_NO_CACHE"):
        return ResultCache(None)
    configured = config.cache_dir
    if arguments.cache_dir:
        directory, source = Path(arguments.cache_dir), f"--cache-dir {arguments.cache_dir}"
    elif os.environ.get("AISCAN_CACHE_DIR"):
        value = os.environ["AISCAN_CACHE_DIR"]
        directory, source = Path(value), f"AISCAN_CACHE_DIR={value}"
    elif configured is not None and config.path is not None:
        directory = config.path.parent / configured
        source = f'{config.path}: cache-dir "{configured}"'
    else:
        directory, source = Path(".aiscan_cache"), ".aiscan_cache"
    project = config.path.parent if config.path is not None else Path.cwd()
    places = [
        ("the project", project),
        ("the working directory", Path.cwd()),
        *((f"the scanned path {path}", Path(path)) for path in scanned),
    ]
    held = holder_of(directory, places)
    if held is not None:
        name, place = held
        raise UsageError(
            f"{source}: the cache directory would hold {name} ({place.resolve()}), and its "
            "'*' .gitignore would hide it from git; name a directory of its own, such as "
            ".aiscan_cache"
        )
    return ResultCache(directory)


def _add_scan_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="worker processes (default: all cores)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="per-file time limit; a file over it gets an 'analysis timed "
        "out' error and the scan goes on (default 60)",
    )
    parser.add_argument(
        "--memory-limit",
        type=_memory_limit,
        default=DEFAULT_MEMORY_LIMIT_MIB,
        metavar="MIB",
        help="per-file memory limit (a worker's address space, MiB; 0: none); a file over "
        f"it gets a 'too large to analyze' error and the scan goes on (default "
        f"{DEFAULT_MEMORY_LIMIT_MIB})",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="analyze every file even if an unchanged result is cached",
    )
    parser.add_argument(
        "--cache-dir", metavar="DIR", help="where cached results live (default .aiscan_cache)"
    )


def _memory_limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of MiB, got {text!r}")
    return value


def _run_graph(arguments: argparse.Namespace) -> int:
    from aiscan.errors import InputError
    from aiscan.ir.dump import dump_module
    from aiscan.ir.graph import module_graph, to_dot, to_json
    from aiscan.pipeline import lower_source
    from aiscan.sources import read_source

    if os.path.isdir(arguments.file):
        raise UsageError(
            f"graph: takes one source file, and {arguments.file} is a directory "
            "(`analyze` and `roofline` take directories)"
        )
    options = _pipeline_options(arguments, _config(arguments))
    try:
        module = lower_source(read_source(arguments.file), arguments.file, options)
    except InputError as error:
        print(error.diagnostic.format(), file=sys.stderr)
        return EXIT_ERROR
    if arguments.format == "text":
        _emit(dump_module(module), None)
    else:
        graph = module_graph(module)
        _emit(to_dot(graph) if arguments.format == "dot" else to_json(graph), None)
    return EXIT_OK


def _run_devices(arguments: argparse.Namespace) -> int:
    from aiscan.report.devices_format import device_details, device_table
    from aiscan.roofline.devices import load_devices

    config = _config(arguments)
    catalog = load_devices([*config.device_files, *arguments.device_file])
    if arguments.action == "show":
        if not arguments.name:
            raise UsageError("devices show: name a device (see `aiscan devices`)")
        _emit(device_details(catalog.get(arguments.name)), None)
    else:
        _emit(device_table(catalog.devices), None)
    return EXIT_OK


@dataclass(frozen=True)
class RooflineInputs:
    """What `aiscan roofline` draws: the kernels placed, the devices, the plot's settings,
    and whether a file failed to analyze. `scripts/readme_images.py` reads the same."""

    kernels: list[KernelSpec]
    devices: tuple[Device, ...]
    plot_arguments: dict[str, Any]
    failed: bool
    placed: tuple[list[tuple[KernelSpec, Placement]], list[str]]
    """Every kernel on every device, as `plot.placements` gives them for `plot_arguments`."""
    paths: list[SizePath]
    """The `plot.swept_path` of each placed pair, in the order of `placed`."""


def roofline_inputs(
    arguments: argparse.Namespace, status: StatusLine | None = None
) -> RooflineInputs:
    """Analyze the files of a `roofline` command line and place their loop nests, in the
    scan's worker processes; `status` shows the step on a terminal."""
    from aiscan.discovery import discover
    from aiscan.report.roofline_task import RooflineOptions, joined_files, preload, roofline_task
    from aiscan.scan import run_task

    config = _config(arguments)
    options = _pipeline_options(arguments, config)
    placement = _placement_options(arguments, config)
    if placement is None:
        raise UsageError("roofline: choose at least one --device (see `aiscan devices`)")
    if status is not None and len(placement.devices) < 2:
        # Only a plot of several devices (a cache-model sweep on each) is long enough to
        # say what it is doing; on a terminal only, as `StatusLine` decides.
        status.enabled = False
    low, _, high = arguments.size_range.partition(":")
    if not (low.isdigit() and high.isdigit() and 0 < int(low) < int(high)):
        raise UsageError(f"--size-range {arguments.size_range}: expected LOW:HIGH integers")
    files = discover(arguments.files)
    if not files:
        raise UsageError(f"no {languages_text()} source files found in the given paths")
    size_range = (int(low), int(high))
    if status is not None:
        devices = counted(len(placement.devices), "device")
        status.show(
            f"aiscan roofline: analyzing {counted(len(files), 'file')} and placing their "
            f"loop nests on {devices}"
        )
    # Each region counts only the traffic view the placements read (`--model`): a NumPy
    # region's fused, eager and jit views are each a count of their own.
    placing = replace(options, analysis=replace(options.analysis, placed_view=placement.model))
    # A drawing reads no AI's printed form: sympy's `simplify` of it is left to the HTML
    # report, whose tables show it.
    task_options = RooflineOptions(
        placing, placement, size_range, simplified=_is_html(Path(arguments.output))
    )
    preload(files, task_options)
    from aiscan.roofline.plot import import_drawing

    # No time or memory limit, as when the files were analyzed in this process; the
    # drawing's imports are done while the workers analyze.
    payloads = run_task(
        files,
        roofline_task(task_options),
        timeout_s=None,
        memory_limit_mib=None,
        meanwhile=import_drawing,
    )
    if status is not None:
        status.close()
    joined = joined_files(files, payloads, task_options)
    for error in joined.errors:
        print(error, file=sys.stderr)
    if options.shapes and any(p["ok"] for p in payloads):
        _warn_unmatched_shapes(options, joined.shapes_used)
    if not joined.kernels:
        raise UsageError("roofline: no loop nest with FLOPs to plot")
    plot_arguments: dict[str, Any] = {
        "sizes": dict(options.analysis.sizes) or None,
        "sparse": placement.sparse,
        "size_range": size_range,
    }
    return RooflineInputs(
        joined.kernels,
        tuple(placement.devices),
        plot_arguments,
        joined.failed,
        joined.placed,
        joined.paths,
    )


def _is_html(output: Path) -> bool:
    """The HTML report (tables beside the plot), not a drawing alone (PNG, SVG)."""
    return output.suffix.lower() in (".html", ".htm")


def _run_roofline(arguments: argparse.Namespace) -> int:
    output = Path(arguments.output)
    if not output.parent.is_dir():
        raise UsageError(f"-o {output}: no such directory {output.parent}")
    status = StatusLine(sys.stderr)
    inputs = roofline_inputs(arguments, status)
    status.show(f"aiscan roofline: drawing {counted(len(inputs.kernels), 'loop nest')}")
    drawn = {**inputs.plot_arguments, "placed_already": inputs.placed, "paths": inputs.paths}
    try:
        if _is_html(output):
            from aiscan.roofline.html import write_html

            write_html(output, inputs.kernels, inputs.devices, **drawn)
        else:
            from aiscan.roofline.plot import render_roofline

            render_roofline(inputs.kernels, inputs.devices, output, **drawn)
    except OSError as error:
        raise UsageError(f"cannot write {output}: {error.strerror or error}") from None
    finally:
        status.close()
    nests = counted(len(inputs.kernels), "loop nest")
    print(f"wrote {output} ({nests} on {counted(len(inputs.devices), 'device')})")
    return EXIT_ERROR if inputs.failed else EXIT_OK


def _run_calibrate(arguments: argparse.Namespace) -> int:
    from aiscan.calibrate import calibrate, write_device_file
    from aiscan.roofline.devices import load_device_file

    if arguments.array_mib <= 0 or arguments.gemm_n <= 0:
        raise UsageError("calibrate: --array-mib and --gemm-n are positive")
    output = Path(arguments.output)
    if output.suffix != ".toml":
        raise UsageError(f"calibrate -o {output}: a device file ends in .toml")
    result = calibrate(
        array_bytes=arguments.array_mib * 2**20, gemm_n=arguments.gemm_n, gpu=arguments.gpu
    )
    write_device_file(output, result)
    device = load_device_file(output)  # what --device-file will read
    print(f"wrote {output}: use --device-file {output} --device {device.key}")
    return EXIT_OK


LINT_FORMATS = ("concise", "full", "json", "sarif", "github")


def _add_lint_commands(commands: Any) -> None:
    """`check`, `rule` and `lsp`: the linter, its documentation and the language server."""
    check = commands.add_parser(
        "check",
        help="report performance findings (rules AIS...); exit 1 on a warning (notes inform)",
    )
    check.add_argument("paths", nargs="+", metavar="PATH",
                       help="files or directories; `-` reads a source from stdin")  # fmt: skip
    check.add_argument("--stdin-filename", metavar="NAME",
                       help="the name (and, by its extension, the language) of the source "
                       "read from `-`")  # fmt: skip
    _add_source_options(check)
    check.add_argument("--device", dest="devices", action="append", default=[],
                       metavar="NAME", help="target device for the rules that need one "
                       "(repeatable; default: `devices` in the configuration)")  # fmt: skip
    check.add_argument("--device-file", action="append", default=[], metavar="TOML",
                       help="load a device file of your own")  # fmt: skip
    check.add_argument("--sparse", action="store_true", help="use 2:4 sparsity peaks")
    check.add_argument("--select", action="append", default=[], metavar="CODES",
                       help="rules to run: codes, prefixes, names or ALL, comma-separated "
                       "(replaces `select` in the configuration)")  # fmt: skip
    check.add_argument("--ignore", action="append", default=[], metavar="CODES",
                       help="rules to skip (added to `ignore` in the configuration)")  # fmt: skip
    check.add_argument("--output-format", choices=LINT_FORMATS, default="concise",
                       help="concise: one line a finding (default); full: with its source "
                       "line and figures; json; sarif (code scanning); github (workflow "
                       "annotations)")  # fmt: skip
    check.add_argument("-o", "--output", metavar="PATH", help="write the report here")
    check.add_argument("--exit-zero", action="store_true",
                       help="exit 0 even when there are findings")  # fmt: skip
    check.add_argument("--fail-on", action="append", default=[], metavar="CODES",
                       help="rules whose notes (e.g. AIS001 memory-bound) fail the run too, "
                       "comma-separated (added to `fail-on` in the configuration)")  # fmt: skip
    check.add_argument("--fail-on-notes", action="store_true", default=None,
                       help="every note fails the run: --fail-on ALL "
                       "(`fail-on-notes` in the configuration)")  # fmt: skip
    check.add_argument("--statistics", action="store_true",
                       help="print the number of findings per rule, not the findings")  # fmt: skip
    _add_scan_options(check)
    # The placement `analyze` makes by default (model "auto"): one verdict on every surface.
    check.set_defaults(handler=_run_check, dtype=None, model=None, roof="datasheet")

    rule = commands.add_parser(
        "rule", help="print a rule's documentation; without CODE, list the rules"
    )
    rule.add_argument("code", nargs="?", metavar="CODE", help="rule code or name")
    rule.add_argument("--all", action="store_true", help="every rule, as in docs/lint.md")
    rule.set_defaults(handler=_run_rule)

    lsp = commands.add_parser("lsp", help="run the language server on stdin/stdout")
    lsp.set_defaults(handler=_run_lsp)


def _codes(groups: list[str]) -> tuple[str, ...]:
    return tuple(c.strip() for group in groups for c in group.split(",") if c.strip())


def _run_check(arguments: argparse.Namespace) -> int:
    from aiscan.lint.runner import check_paths
    from aiscan.lint.settings import LintSettings

    config = _config(arguments)
    options = _pipeline_options(arguments, config)
    placement = _placement_options(arguments, config)
    settings = LintSettings(
        select=_codes(arguments.select) or config.select or ("ALL",),
        ignore=(*config.ignore, *_codes(arguments.ignore)),
        per_file_ignores=config.per_file_ignores,
        thresholds=config.thresholds,
        root=config.path.parent if config.path else Path.cwd(),
        fail_on=(*config.fail_on, *_codes(arguments.fail_on), *_fail_on_notes(arguments, config)),
    )
    run = check_paths(
        arguments.paths,
        options,
        settings,
        placement.devices if placement else (),
        sparse=arguments.sparse,
        write_allocate=arguments.write_allocate
        if arguments.write_allocate is not None
        else config.write_allocate,
        jobs=arguments.jobs,
        cache=_cache(arguments, config, [p for p in arguments.paths if p != "-"]),
        timeout_s=arguments.timeout,
        memory_limit_mib=arguments.memory_limit,
        progress=sys.stderr,
        stdin=_stdin_source(arguments),
        placement=placement,
    )
    run = replace(run, help_url=config.help_url or run.help_url)
    _emit(_lint_report(run, arguments), arguments.output)
    for warning in run.warnings:
        print(warning.format(), file=sys.stderr)
    _warn_unmatched_shapes(options, run.shapes_used)
    if run.errors and arguments.output_format in ("concise", "full"):
        from aiscan.report.lint_concise import input_errors
        from aiscan.report.lint_summary import palette_for

        sys.stderr.write(input_errors(run, palette_for(sys.stderr)))
    if run.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if run.failures and not arguments.exit_zero else EXIT_OK


def _fail_on_notes(arguments: argparse.Namespace, config: Config) -> tuple[str, ...]:
    """`fail-on-notes` is `fail-on = ["ALL"]`; the flag wins over the configuration."""
    flag = arguments.fail_on_notes
    return ("ALL",) if (flag if flag is not None else config.fail_on_notes) else ()


def _stdin_source(arguments: argparse.Namespace) -> tuple[str, BinaryIO] | None:
    """The source to read from `-`, named by `--stdin-filename` (whose extension picks the
    language); None when no path is `-`. The check reads it, under its limits."""
    from aiscan.sources import language_of

    if "-" not in arguments.paths:
        if arguments.stdin_filename:
            raise UsageError("--stdin-filename needs `-` among the paths")
        return None
    name = arguments.stdin_filename
    if not name or (language_of(name) is None and not getattr(arguments, "language", None)):
        raise UsageError(
            "check: reading `-` needs --stdin-filename NAME.c or NAME.py "
            "(its extension picks the language)"
        )
    return name, sys.stdin.buffer


def _lint_report(run: Any, arguments: argparse.Namespace) -> str:
    from aiscan.report.lint_summary import palette_for, statistics, summary_line

    output_format = arguments.output_format
    palette = palette_for(sys.stdout if not arguments.output else io.StringIO())
    if arguments.statistics and output_format in ("concise", "full"):
        return statistics(run) + summary_line(run) + "\n"
    if output_format == "full":
        from aiscan.report.lint_full import render_full

        return render_full(run, palette)
    if output_format == "json":
        from aiscan.report.lint_json import render_lint_json

        return render_lint_json(run)
    if output_format == "sarif":
        from aiscan.report.sarif import render_sarif

        return render_sarif(run)
    if output_format == "github":
        from aiscan.report.github import render_github

        return render_github(run)
    from aiscan.report.lint_concise import render_concise

    return render_concise(run, palette)


def _run_rule(arguments: argparse.Namespace) -> int:
    from aiscan.lint.docs import rule_markdown, rules_markdown, rules_table
    from aiscan.lint.registry import get_rule

    if arguments.all:
        _emit(rules_markdown(), None)
    elif arguments.code:
        _emit(rule_markdown(get_rule(arguments.code)), None)
    else:
        _emit(rules_table(), None)
    return EXIT_OK


def _run_lsp(arguments: argparse.Namespace) -> int:
    from aiscan.lsp.server import serve

    serve()
    return EXIT_OK


def _emit(text: str, output: str | None) -> None:
    if output:
        try:
            with open(output, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as error:
            raise UsageError(f"cannot write {output}: {error.strerror}") from None
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    sys.exit(main())
