"""Which files a scan reads: the paths given, and in directories every C and Python source.

Directories are walked without following symbolic links (so link loops cannot trap a scan),
in sorted order (so output order never depends on the file system), skipping what git
ignores when the directory is in a git work tree. The ignore rules are read here, with
`pathspec`'s gitignore matcher, and git itself is never run: a scanned tree's
`.git/config` can name commands (`core.fsmonitor`, hooks) that any git call in it would
execute. A directory that cannot be read is kept in the list, so that reading it gives a
located error instead of a silently smaller scan.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aiscan.sources import LANGUAGES

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = ["discover", "git_dir", "work_tree_root"]

_SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".aiscan_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".tox",
        ".venv",
        "venv",
        "node_modules",
    }
)
_MAX_IGNORE_FILE_BYTES = 1024 * 1024


def discover(paths: Sequence[str]) -> list[str]:
    """Files named on the command line (always kept, whatever their name) and the sources
    found under directories, in a stable order without duplicates."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found += sorted(_walk(path))
        else:
            found.append(path)
    return list(dict.fromkeys(found))


def work_tree_root(start: Path) -> Path | None:
    """The top of the git work tree holding `start` (the nearest directory with a `.git`
    entry), or None outside one; found by looking, never by running git."""
    directory = (start if start.is_dir() else start.parent).absolute()
    for candidate in (directory, *directory.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def git_dir(root: Path) -> Path | None:
    """The repository directory of the work tree `root`: `.git` itself, or where a `.git`
    file (`gitdir: ...`, as worktrees and submodules write) points."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    text = _read_small(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = Path(text.removeprefix("gitdir:").strip())
    return target if target.is_absolute() else root / target


@dataclass(frozen=True)
class _Rules:
    """The patterns of one ignore file, matched against paths relative to `base`."""

    base: str
    spec: GitIgnoreSpec


def _walk(root: str) -> Iterator[str]:
    tree = work_tree_root(Path(root))
    rules = _ancestor_rules(tree, Path(root).absolute()) if tree is not None else []
    yield from _walk_directory(os.path.normpath(root), rules, tree is not None)


def _walk_directory(directory: str, rules: list[_Rules], in_tree: bool) -> Iterator[str]:
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError:
        yield directory
        return
    if in_tree:
        rules = [*rules, *_rules_in(os.path.abspath(directory))]
    subdirectories = []
    for entry in entries:
        path = os.path.normpath(os.path.join(directory, entry.name))
        if entry.is_symlink():
            continue
        if entry.is_dir():
            if entry.name in _SKIPPED_DIRECTORIES or entry.name.startswith("."):
                continue
            if not _ignored(path, rules, is_directory=True):
                subdirectories.append(path)
        elif Path(entry.name).suffix.lower() in LANGUAGES and not _ignored(
            path, rules, is_directory=False
        ):
            yield path
    for subdirectory in subdirectories:
        yield from _walk_directory(subdirectory, rules, in_tree)


def _ignored(path: str, rules: list[_Rules], *, is_directory: bool) -> bool:
    """Git's answer: the last pattern that matches, over every file in precedence order."""
    absolute = os.path.abspath(path)
    verdict: bool | None = None
    for rule in rules:
        relative = os.path.relpath(absolute, rule.base).replace(os.sep, "/")
        if relative.startswith("../"):
            continue
        result = rule.spec.check_file(relative + "/" if is_directory else relative)
        if result.include is not None:
            verdict = result.include
    return bool(verdict)


def _ancestor_rules(tree: Path, start: Path) -> list[_Rules]:
    """The rules that apply before `start`'s own `.gitignore`: the user's global excludes,
    the repository's `info/exclude`, and the `.gitignore` of every directory from the
    work tree's top down to `start`'s parent."""
    base = str(tree)
    rules: list[_Rules] = []
    for path in (_global_excludes(), _info_exclude(tree)):
        if path is not None:
            rules += _rules_from(path, base)
    if start != tree and tree in start.parents:
        directory = tree
        for part in start.relative_to(tree).parts[:-1]:
            rules += _rules_in(str(directory))
            directory = directory / part
        rules += _rules_in(str(directory))
    return rules


def _global_excludes() -> Path | None:
    """Git's default global ignore file (`core.excludesFile` unset): the user's own."""
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(
        os.path.expanduser("~"), ".config"
    )
    return Path(config_home) / "git" / "ignore"


def _info_exclude(tree: Path) -> Path | None:
    repository = git_dir(tree)
    if repository is None:
        return None
    common = _read_small(repository / "commondir")
    if common is not None:
        repository = repository / common.strip()
    return repository / "info" / "exclude"


def _rules_in(directory: str) -> list[_Rules]:
    return _rules_from(Path(directory) / ".gitignore", directory)


def _rules_from(path: Path, base: str) -> list[_Rules]:
    text = _read_small(path)
    if not text:
        return []
    from pathspec import GitIgnoreSpec

    return [_Rules(base, GitIgnoreSpec.from_lines(text.splitlines()))]


def _read_small(path: Path) -> str | None:
    """A small regular file's text, or None: ignore files are read, never trusted to be
    files, small or UTF-8."""
    try:
        if not path.is_file() or path.stat().st_size > _MAX_IGNORE_FILE_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
