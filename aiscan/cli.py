"""The `aiscan` command line. The only module (with the language server) that prints or exits.

Exit codes: 0 every file analyzed, 1 findings (`check`), 2 usage, configuration or input
errors. Heavy modules are imported inside the subcommands so `--help` stays instant.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from aiscan import __version__
from aiscan.errors import UsageError

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
    try:
        code: int = arguments.handler(arguments)
        return code
    except UsageError as error:
        print(f"aiscan: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        return EXIT_ERROR
    except Exception as error:  # never a traceback for the user; AISCAN_DEBUG=1 shows it
        if os.environ.get("AISCAN_DEBUG"):
            traceback.print_exc()
        print(
            f"aiscan: internal error: {type(error).__name__}: {error} "
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
        "read from C and NumPy source without running it.",
    )
    parser.add_argument("--version", action="version", version=f"aiscan {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    analyze = commands.add_parser(
        "analyze", help="count FLOPs and bytes and derive the intensity of every loop nest"
    )
    analyze.add_argument("files", nargs="+", metavar="FILE", help="C (.c, .h) or Python files")
    _add_source_options(analyze)
    analyze.add_argument("--format", choices=("text", "json"), default="text")
    analyze.add_argument("-o", "--output", metavar="PATH", help="write the report here")
    analyze.add_argument(
        "--model",
        choices=("compulsory", "streaming"),
        default="compulsory",
        help="traffic model used for function totals in text output (default: compulsory)",
    )
    analyze.set_defaults(handler=_run_analyze)

    graph = commands.add_parser("graph", help="print the loop-nest graph aiscan understood")
    graph.add_argument("file", metavar="FILE")
    _add_source_options(graph)
    graph.add_argument("--format", choices=("dot", "json", "text"), default="dot")
    graph.set_defaults(handler=_run_graph)
    return parser


def _add_source_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-D",
        dest="defines",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="define a macro as a compiler would; an integer value also sets that size "
        "(the name stays symbolic in the expressions)",
    )
    parser.add_argument(
        "-I",
        dest="include_dirs",
        action="append",
        default=[],
        metavar="DIR",
        help="add an include directory",
    )
    parser.add_argument(
        "--size",
        dest="sizes",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="evaluate the intensity at this size (repeatable, or comma-separated)",
    )
    parser.add_argument(
        "--write-allocate",
        action="store_true",
        help="stores to elements not read before also cost a read (CPU caches)",
    )
    parser.add_argument(
        "--special-weight",
        type=int,
        default=0,
        metavar="N",
        help="FLOPs each math-library call (sqrt, exp, ...) adds to the total (default 0; "
        "special calls are always reported apart)",
    )


def _pipeline_options(arguments: argparse.Namespace) -> Any:
    from aiscan.analysis.kernel import AnalysisOptions
    from aiscan.pipeline import PipelineOptions

    defines: dict[str, str] = {}
    for item in arguments.defines:
        name, _, value = item.partition("=")
        if not name.isidentifier():
            raise UsageError(f"-D {item}: not a macro name")
        defines[name] = value if "=" in item else "1"
    sizes: dict[str, int] = {}
    for group in arguments.sizes:
        for item in filter(None, (part.strip() for part in group.split(","))):
            name, _, value = item.partition("=")
            if not name.isidentifier() or not value.strip().lstrip("-").isdigit():
                raise UsageError(f"--size {item}: expected NAME=INTEGER")
            if int(value) <= 0:
                raise UsageError(f"--size {item}: sizes are positive")
            sizes[name] = int(value)
    for directory in arguments.include_dirs:
        if not os.path.isdir(directory):
            raise UsageError(f"-I {directory}: no such directory")
    analysis = AnalysisOptions(
        write_allocate=arguments.write_allocate,
        special_weight=arguments.special_weight,
        sizes=sizes,
    )
    # An integer -D value binds a size in the preprocessor (see frontends/c/preprocess.py).
    return PipelineOptions(tuple(arguments.include_dirs), defines, analysis)


def _run_analyze(arguments: argparse.Namespace) -> int:
    from aiscan.pipeline import analyze_path

    options = _pipeline_options(arguments)
    results = [analyze_path(path, options) for path in arguments.files]
    if arguments.format == "json":
        from aiscan.report.json_report import render_json

        report_options = {
            "write_allocate": options.analysis.write_allocate,
            "special_weight": options.analysis.special_weight,
            "sizes": dict(options.analysis.sizes),
            "default_model": "compulsory",
        }
        text = render_json(results, report_options)
    else:
        from aiscan.report.text_report import render_text

        text = render_text(results, default_model=arguments.model)
    _emit(text, arguments.output)
    for result in results:
        if result.analysis is None:
            for diagnostic in result.diagnostics:
                if arguments.format == "json" or arguments.output:
                    print(diagnostic.format(), file=sys.stderr)
    return EXIT_ERROR if any(r.analysis is None for r in results) else EXIT_OK


def _run_graph(arguments: argparse.Namespace) -> int:
    from aiscan.errors import InputError
    from aiscan.ir.dump import dump_module
    from aiscan.ir.graph import module_graph, to_dot, to_json
    from aiscan.pipeline import lower_source
    from aiscan.sources import read_source

    options = _pipeline_options(arguments)
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
