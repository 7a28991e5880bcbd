"""The result cache is never wrong: issue 35's breaks, each replayed cold, then warm.

A warm run must print exactly what `--no-cache` prints: the same paths, the same findings,
the same counts, the same exit code, whatever the cache holds.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aiscan.cache import ResultCache
from aiscan.cli import main
from aiscan.frontends.c.preprocess import preprocess
from aiscan.options import PipelineOptions
from aiscan.report.file_task import AnalyzeOptions, analyze_task
from aiscan.scan import Payload, Task, run_task
from aiscan.sources import content_digest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

SCALED = (
    "void f(int n, double *restrict y, const double *restrict x)\n"
    "{\n"
    "    for (int i = 0; i < n; i++)\n"
    "        y[i] = {body};\n"
    "}\n"
)
"""A kernel whose FLOPs are set by `{body}`: `2.0 * x[i]` is n, `x[i] * x[i] + 1.0` 2*n."""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def flops(report: str) -> list[str]:
    return [str(f["functions"][0]["flops"]["total"]) for f in json.loads(report)["files"]]


def test_same_text_at_two_paths_keeps_each_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for folder in ("src/x", "src/y"):
        (tmp_path / folder).mkdir(parents=True)
        shutil.copy(FIXTURES / "c" / "daxpy.c", tmp_path / folder / "kernel.c")
    command = ("check", "src", "--device", "h100", "--jobs", "1")
    cold = run(capsys, *command)
    assert cold[0] == 0  # daxpy's AIS001 placement is a note
    assert [line.split(":")[0] for line in cold[1].splitlines()[:2]] == [
        "src/x/kernel.c",
        "src/y/kernel.c",
    ]
    assert run(capsys, *command) == cold
    assert run(capsys, *command, "--no-cache") == cold


def test_per_file_ignores_hold_on_a_warm_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.aiscan]\ndevices = ["h100"]\nfail-on = ["AIS001"]\n'
        '[tool.aiscan.per-file-ignores]\n"src/y/*" = ["AIS001"]\n'
    )
    for folder in ("src/x", "src/y"):
        (tmp_path / folder).mkdir(parents=True)
        shutil.copy(FIXTURES / "c" / "daxpy.c", tmp_path / folder / "kernel.c")
    cold = run(capsys, "check", "src", "--jobs", "1")
    assert cold[0] == 1
    assert cold[1].startswith("src/x/kernel.c:6:5: AIS001 ")
    assert "src/y/kernel.c" not in cold[1]
    assert run(capsys, "check", "src", "--jobs", "1") == cold


def test_empty_files_at_many_paths_keep_their_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [f"pkg{i}/__init__.py" for i in range(3)]
    for name in names:
        (tmp_path / "project" / name).parent.mkdir(parents=True)
        (tmp_path / "project" / name).write_text("")
    monkeypatch.chdir(tmp_path / "project")
    command = ("analyze", ".", "--format", "json", "--jobs", "1", "--cache-dir", "../cache")
    cold = run(capsys, *command)
    assert [f["path"] for f in json.loads(cold[1])["files"]] == names
    assert run(capsys, *command) == cold
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 3


def test_the_same_relative_path_from_another_directory_is_another_entry(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Per-file settings match the path resolved from the working directory."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.aiscan]\ndevices = ["h100"]\nfail-on = ["AIS001"]\n'
        '[tool.aiscan.per-file-ignores]\n"b/*" = ["AIS001"]\n'
    )
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        shutil.copy(FIXTURES / "c" / "daxpy.c", tmp_path / folder / "kernel.c")
    cache = str(tmp_path / "cache")
    monkeypatch.chdir(tmp_path / "a")
    assert run(capsys, "check", "kernel.c", "--cache-dir", cache)[0] == 1
    monkeypatch.chdir(tmp_path / "b")
    assert run(capsys, "check", "kernel.c", "--cache-dir", cache)[0] == 0


_EDITED_TO = SCALED.replace("{body}", "x[i] * x[i] + 1.0")


def _edit_then_analyze(path: str, options: AnalyzeOptions) -> Payload:
    """The task's own run, with the file changed after the scan looked it up (as an editor
    saving mid-scan does) and changed back once the analysis has read it."""
    original = Path(path).read_text()
    Path(path).write_text(_EDITED_TO)
    try:
        return analyze_task(options).run(path, options)
    finally:
        Path(path).write_text(original)


def test_a_file_edited_during_its_analysis_is_cached_under_the_text_analyzed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "k.c"
    source.write_text(SCALED.replace("{body}", "2.0 * x[i]"))
    options = AnalyzeOptions(PipelineOptions(), None, "json", "compulsory")
    real = analyze_task(options)
    racing = Task(real.kind, _edit_then_analyze, real.failed, options, real.fingerprint)
    cache = ResultCache(tmp_path / "cache")
    [edited] = run_task(["k.c"], racing, jobs=1, cache=cache)
    assert flops(f'{{"files": [{edited["output"]}]}}') == ["2*n"]  # the edit was analyzed
    assert source.read_text() == SCALED.replace("{body}", "2.0 * x[i]")
    # The file is back to its first text: a warm run must not serve the edit's result.
    [warm] = run_task(["k.c"], real, jobs=1, cache=cache)
    assert flops(f'{{"files": [{warm["output"]}]}}') == ["n"]
    # And the edit's text, when it comes back, is served from the cache.
    source.write_text(_EDITED_TO)
    [again] = run_task(["k.c"], real, jobs=1, cache=cache)
    assert again["output"] == edited["output"]


@pytest.mark.parametrize("spelling", ["<params.h>", '"params.h"'])
def test_a_header_that_appears_later_is_a_miss(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spelling: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inc").mkdir()
    body = "\n#ifdef TWICE\n2.0 * x[i] * x[i]\n#else\n2.0 * x[i]\n#endif\n"
    (tmp_path / "k.c").write_text(f"#include {spelling}\n" + SCALED.replace("{body}", body))
    command = ("analyze", "k.c", "-I", "inc", "--format", "json", "--jobs", "1")
    code, report, _ = run(capsys, *command)
    if spelling == "<params.h>":
        assert (code, flops(report)) == (0, ["n"])
        assert "header <params.h> not found, treated as empty" in report
    else:
        assert code == 2  # a quoted header that is missing is an error: nothing cached
    (tmp_path / "inc" / "params.h").write_text("#define TWICE 1\n")
    assert flops(run(capsys, *command)[1]) == ["2*n"]
    # A header of the same name beside the source comes first for `"..."` (and is
    # then no longer absent): the next run must see it.
    (tmp_path / "params.h").write_text("/* nothing */\n")
    expected = ["n"] if spelling == '"params.h"' else ["2*n"]
    assert flops(run(capsys, *command)[1]) == expected
    assert flops(run(capsys, *command, "--no-cache")[1]) == expected


def _edit_header_then_analyze(path: str, options: AnalyzeOptions) -> Payload:
    """The task's own run with `k.h` changed while the file is analyzed, and changed back."""
    header = Path(path).with_name("k.h")
    original = header.read_text()
    header.write_text("#define SCALE 2.0 * 3.0\n")
    try:
        return analyze_task(options).run(path, options)
    finally:
        header.write_text(original)


def test_a_header_edited_during_the_analysis_is_recorded_as_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.h").write_text("#define SCALE 2.0\n")
    (tmp_path / "k.c").write_text('#include "k.h"\n' + SCALED.replace("{body}", "SCALE * x[i]"))
    options = AnalyzeOptions(PipelineOptions(), None, "json", "compulsory")
    real = analyze_task(options)
    racing = Task(real.kind, _edit_header_then_analyze, real.failed, options, real.fingerprint)
    cache = ResultCache(tmp_path / "cache")
    [edited] = run_task(["k.c"], racing, jobs=1, cache=cache)
    assert flops(f'{{"files": [{edited["output"]}]}}') == ["2*n"]
    [warm] = run_task(["k.c"], real, jobs=1, cache=cache)
    assert flops(f'{{"files": [{warm["output"]}]}}') == ["n"]


def test_the_headers_looked_for_are_recorded_with_what_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each candidate of each `#include`, in search order: absent (None) or the digest of
    the bytes read; one read in two states matches no file."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "twice.h").write_text("/* first */\n")
    (tmp_path / "inc" / "once.h").write_text("/* once */\n")
    source = '#include "twice.h"\n#include <once.h>\n#include "twice.h"\nint k;\n'
    import aiscan.frontends.c.preprocess as preprocessing

    read_file = preprocessing.read_regular_file
    reads: list[str] = []

    def edited_between_reads(path: Path) -> bytes:
        data = read_file(path)
        if Path(path).name == "twice.h":
            reads.append(Path(path).name)
            return data if len(reads) == 1 else b"/* second */\n"
        return data

    monkeypatch.setattr(preprocessing, "read_regular_file", edited_between_reads)
    processed = preprocess(source, str(tmp_path / "k.c"), include_dirs=[str(tmp_path / "inc")])
    digests = dict(processed.dependencies)
    beside, found, system = (str(tmp_path / p) for p in ("twice.h", "inc/twice.h", "inc/once.h"))
    assert list(digests) == [beside, found, system]
    assert digests[beside] is None
    assert digests[system] == content_digest(b"/* once */\n")
    states = (b"/* first */\n", b"/* second */\n")
    assert digests[found] not in [content_digest(state) for state in states]
    assert reads == ["twice.h", "twice.h"]


def _corrupt(entry: dict[str, object], how: str) -> object:
    payload = entry["payload"]
    assert isinstance(payload, dict)
    if how == "a list":
        return [entry]
    if how == "no output":
        return {**entry, "payload": {k: v for k, v in payload.items() if k != "output"}}
    if how == "no findings":
        return {**entry, "payload": {k: v for k, v in payload.items() if k != "findings"}}
    if how == "dependencies a list":
        return {**entry, "dependencies": ["k.h"]}
    if how == "a dependency's digest a number":
        return {**entry, "dependencies": {"k.h": 7}}
    if how == "payload a string":
        return {**entry, "payload": "ok"}
    if how == "output a number":
        return {**entry, "payload": {**payload, "output": 7}}
    if how == "a finding without its span":
        findings = [{k: v for k, v in f.items() if k != "span"} for f in payload["findings"]]
        return {**entry, "payload": {**payload, "findings": findings}}
    if how == "a finding's line a string":
        findings = [{**f, "span": [f["span"][0], "six", 5, 6, 5]} for f in payload["findings"]]
        return {**entry, "payload": {**payload, "findings": findings}}
    raise AssertionError(how)


@pytest.mark.parametrize(
    ("command", "how"),
    [
        (("analyze", "--format", "json"), "a list"),
        (("analyze", "--format", "json"), "no output"),
        (("analyze",), "no output"),
        (("analyze", "--format", "json"), "dependencies a list"),
        (("analyze", "--format", "json"), "a dependency's digest a number"),
        (("analyze",), "payload a string"),
        (("analyze",), "output a number"),
        (("check", "--device", "h100"), "a list"),
        (("check", "--device", "h100"), "no findings"),
        (("check", "--device", "h100"), "dependencies a list"),
        (("check", "--device", "h100"), "a finding without its span"),
        (("check", "--device", "h100"), "a finding's line a string"),
    ],
)
def test_a_bad_entry_is_a_miss(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: tuple[str, ...],
    how: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.h").write_text("#define SCALE 2.0\n")
    (tmp_path / "k.c").write_text('#include "k.h"\n' + SCALED.replace("{body}", "SCALE * x[i]"))
    argv = (command[0], "k.c", *command[1:], "--jobs", "1", "--cache-dir", "cache")
    cold = run(capsys, *argv)
    assert cold[0] == 0  # check: the AIS001 placement is a note
    assert command[0] != "check" or " AIS001 memory-bound at HBM3 on h100-sxm" in cold[1]
    [entry_path] = (tmp_path / "cache").rglob("*.json")
    entry_path.write_text(json.dumps(_corrupt(json.loads(entry_path.read_text()), how)))
    assert run(capsys, *argv) == cold
    assert run(capsys, *argv) == cold  # the miss wrote a good entry back


@pytest.mark.parametrize(
    ("where", "directory"),
    [
        ("config", "."),
        ("config", ".."),
        ("flag", "."),
        ("flag", "{tmp}"),
        ("environment", "{tmp}/project"),
        ("flag", "src"),
    ],
)
def test_a_cache_directory_that_holds_the_project_is_refused(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    directory: str,
) -> None:
    monkeypatch.delenv("AISCAN_CACHE_DIR")
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    shutil.copy(FIXTURES / "c" / "daxpy.c", project / "src" / "daxpy.c")
    monkeypatch.chdir(project)
    directory = directory.replace("{tmp}", str(tmp_path))
    extra: tuple[str, ...] = ()
    if where == "config":
        (project / "aiscan.toml").write_text(f'cache-dir = "{directory}"\n')
    elif where == "flag":
        extra = ("--cache-dir", directory)
    else:
        monkeypatch.setenv("AISCAN_CACHE_DIR", directory)
    for command in ("analyze", "check"):
        code, out, error = run(capsys, command, "src", *extra)
        assert (code, out) == (2, "")
        [line] = error.splitlines()
        assert line.startswith("aiscan: error: ")
        assert "cache directory" in line and "would hold" in line
    assert sorted(p.name for p in tmp_path.rglob("*")) == sorted(
        ["project", "src", "daxpy.c", *(["aiscan.toml"] if where == "config" else [])]
    )


def test_a_cache_directory_of_its_own_inside_the_project_is_used(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AISCAN_CACHE_DIR")
    (tmp_path / "src").mkdir()
    shutil.copy(FIXTURES / "c" / "daxpy.c", tmp_path / "src" / "daxpy.c")
    (tmp_path / "aiscan.toml").write_text('cache-dir = "build/aiscan"\n')
    monkeypatch.chdir(tmp_path / "src")  # the configuration's paths are relative to it
    assert run(capsys, "analyze", "daxpy.c")[0] == 0
    assert len(list((tmp_path / "build" / "aiscan").rglob("*.json"))) == 1
    assert (tmp_path / "build" / "aiscan" / ".gitignore").is_file()


def test_no_gitignore_among_files_that_are_not_the_caches(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache directory below the scanned one, that already holds sources: the entries go
    there, but a `*` .gitignore would hide those sources from git."""
    (tmp_path / "src").mkdir()
    shutil.copy(FIXTURES / "c" / "daxpy.c", tmp_path / "src" / "daxpy.c")
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "analyze", ".", "--cache-dir", "src")[0] == 0
    assert len(list((tmp_path / "src").rglob("*.json"))) == 1
    assert not (tmp_path / "src" / ".gitignore").exists()
    (tmp_path / "empty").mkdir()  # made ready for the cache: it is aiscan's
    assert run(capsys, "analyze", ".", "--cache-dir", "empty")[0] == 0
    assert (tmp_path / "empty" / ".gitignore").read_text().endswith("\n*\n")
