"""Every link aiscan writes resolves to a file of this repository, and the pre-commit snippet
a user pastes pins a tag that the release scheme (`v` + the package version) creates."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from aiscan import __version__
from aiscan.lint.checker import DEFAULT_HELP_URL, help_url
from aiscan.lint.registry import RULES
from aiscan.lint.rule import Rule
from aiscan.project import RELEASE_TAG, REPOSITORY_URL, schema_id
from aiscan.report.assembly import SCHEMA_ID, load_schema
from aiscan.report.lint_json import LINT_SCHEMA_ID

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER = re.compile(r"aiscan" r"\.dev\b")
"""The placeholder domain (not the `aiscan.devices` setting); spelled in two parts so this
file does not match its own search."""


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _github_anchors(markdown: str) -> set[str]:
    """The fragment GitHub gives each heading: lower case, punctuation but `-` and `_`
    dropped, spaces to hyphens."""
    anchors = set()
    for line in markdown.splitlines():
        match = re.match(r"#{1,6} (.+)$", line)
        if match:
            text = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower())
            anchors.add(text.replace(" ", "-"))
    return anchors


def test_no_placeholder_domain_is_left() -> None:
    shipped = [
        path
        for top in ("aiscan", "docs", "editors", "rules", "scripts", "tests")
        for path in (ROOT / top).rglob("*")
        if path.is_file() and path.suffix in (".py", ".json", ".md", ".toml", ".js", ".yaml")
    ]
    shipped += [ROOT / "README.md", ROOT / "pyproject.toml", ROOT / ".pre-commit-hooks.yaml"]
    found = [
        str(path.relative_to(ROOT))
        for path in shipped
        if PLACEHOLDER.search(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert found == []


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_each_rule_links_to_its_heading_in_docs_lint(rule: type[Rule]) -> None:
    url = help_url(DEFAULT_HELP_URL, rule.code, rule.name)
    prefix = f"{REPOSITORY_URL}/blob/{RELEASE_TAG}/"
    assert url.startswith(prefix)
    path, anchor = url.removeprefix(prefix).split("#")
    assert path == "docs/lint.md"
    assert anchor == f"{rule.code.lower()}-{rule.name}"
    assert anchor in _github_anchors((ROOT / path).read_text(encoding="utf-8"))


def test_schema_ids_name_the_shipped_files() -> None:
    for name, constant in (("report", SCHEMA_ID), ("lint", LINT_SCHEMA_ID)):
        schema = load_schema(name)
        assert schema["$id"] == constant == schema_id(name)
        assert not PLACEHOLDER.search(json.dumps(schema))
        assert constant.endswith(f"/main/aiscan/report/schema/{name}.schema.json")
        assert (ROOT / "aiscan" / "report" / "schema" / f"{name}.schema.json").is_file()
    assert load_schema("report")["properties"]["schema"]["const"] == SCHEMA_ID


def test_repository_url_is_the_packages() -> None:
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    assert project["urls"]["Repository"] == REPOSITORY_URL
    assert project["version"] == __version__
    assert f"v{project['version']}" == RELEASE_TAG


def _hook_snippet(text: str) -> tuple[str, str]:
    """The `repo:` and `rev:` of the first pre-commit snippet in a page."""
    repo = re.search(r"^ *- repo: (\S+)", text, re.M)
    rev = re.search(r"^ *rev: (\S+)", text, re.M)
    assert repo is not None and rev is not None, "no pre-commit snippet"
    return repo.group(1), rev.group(1)


@pytest.mark.parametrize("page", ["README.md", "docs/lint.md"])
def test_pre_commit_snippet_pins_this_versions_tag(page: str) -> None:
    repo, rev = _hook_snippet((ROOT / page).read_text(encoding="utf-8"))
    assert repo == REPOSITORY_URL
    assert rev == f"v{_pyproject()['project']['version']}"  # type: ignore[index]


def test_vscode_extension_has_the_package_version() -> None:
    package = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    assert package["version"] == __version__
