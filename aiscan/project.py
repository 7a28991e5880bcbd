"""Where the project lives: the repository and the release tag that every link aiscan
writes (SARIF `helpUri`, the language server's rule links, the JSON schemas' `$id`) is
built from, so one change here moves them all and none points at a site that does not exist.
"""

from __future__ import annotations

from typing import Final

from aiscan import __version__

__all__ = ["LINT_HELP_URL", "RELEASE_TAG", "REPOSITORY_URL", "schema_id"]

REPOSITORY_URL: Final = "https://github.com/aiscan/aiscan"
"""Also `[project.urls] Repository` in pyproject.toml and the README's pre-commit `repo:`."""

RELEASE_TAG: Final = f"v{__version__}"
"""Releases are tagged `v` + the package version (`v0.2.0`): the pre-commit hook's `rev`."""

LINT_HELP_URL: Final = f"{REPOSITORY_URL}/blob/{RELEASE_TAG}/docs/lint.md#{{code_lower}}-{{name}}"
"""The default `help-url` template: the rule's heading in docs/lint.md as released with
this version (`### AIS001 memory-bound` is anchor `ais001-memory-bound`)."""


def schema_id(name: str) -> str:
    """The `$id` of a shipped JSON schema (`report`, `lint`): the file itself on the main
    branch, raw, so a validator can fetch it; one id for every 1.x version of the format."""
    raw = REPOSITORY_URL.replace("https://github.com/", "https://raw.githubusercontent.com/")
    return f"{raw}/main/aiscan/report/schema/{name}.schema.json"
