"""The VS Code extension in `editors/vscode/`: a manifest VS Code accepts, a script that parses."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parent.parent / "editors" / "vscode"


def test_manifest_starts_the_language_server_for_c_and_python() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text())
    assert (EXTENSION / "extension.js").is_file()  # main is its bundle, built by npm
    assert "vscode-languageclient" in manifest["dependencies"]
    assert {"onLanguage:c", "onLanguage:python"} <= set(manifest["activationEvents"])
    assert manifest["engines"]["vscode"].startswith("^")
    default = manifest["contributes"]["configuration"]["properties"]["aiscan.command"]["default"]
    assert default == ["aiscan", "lsp"]
    assert ".vsix" in (EXTENSION / "README.md").read_text()


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_extension_script_parses() -> None:
    subprocess.run(["node", "--check", str(EXTENSION / "extension.js")], check=True)


VSCODE_LANGUAGE_OF = {
    ".c": "c",
    ".h": "cpp",  # VS Code's built-in C++ language claims .h (its C language .c and .i)
    ".py": "python",
    ".pyi": "python",
    ".cu": "cuda-cpp",
    ".cuh": "cuda-cpp",
}
"""The language id VS Code gives a file of each suffix the server reads, by default."""


def _pattern_suffixes(pattern: str) -> set[str]:
    """`**/*.{h,cu,cuh}` or `**/*.cu`: the suffixes a selector's glob matches."""
    found = re.fullmatch(r"\*\*/\*\.(?:\{([\w,]+)\}|(\w+))", pattern)
    assert found is not None, pattern
    return {"." + suffix for suffix in (found.group(1) or found.group(2)).split(",")}


def test_the_extension_registers_every_language_the_server_reads_and_no_other() -> None:
    """A `.cpp` document was sent to a server that ignores it; `.cu` files were not sent at
    all before CUDA landed. The selector now covers each suffix of aiscan.sources.LANGUAGES
    by the language id VS Code gives it, and `cpp` only for suffixes the server reads."""
    from aiscan.sources import LANGUAGES

    assert set(VSCODE_LANGUAGE_OF) == set(LANGUAGES)
    selector = json.loads((EXTENSION / "document-selector.json").read_text())
    assert all(entry["scheme"] == "file" for entry in selector)
    for suffix, language in VSCODE_LANGUAGE_OF.items():
        assert any(
            entry["language"] == language
            and ("pattern" not in entry or suffix in _pattern_suffixes(entry["pattern"]))
            for entry in selector
        ), suffix
    for entry in selector:
        if entry["language"] == "cpp":  # VS Code's C++ language: only what the server reads
            assert "pattern" in entry and _pattern_suffixes(entry["pattern"]) <= set(LANGUAGES)
        else:
            assert entry["language"] in {"c", "cuda-cpp", "python"} and "pattern" not in entry
    manifest = json.loads((EXTENSION / "package.json").read_text())
    languages = {entry["language"] for entry in selector}
    assert set(manifest["activationEvents"]) == {f"onLanguage:{x}" for x in languages}
    assert 'require("./document-selector.json")' in (EXTENSION / "extension.js").read_text()


def test_the_package_is_a_bundle_with_a_license_and_no_sources() -> None:
    """`npm run package`: esbuild bundles the client and vscode-languageclient into
    dist/extension.js (vscode:prepublish), and vsce packs it without node_modules."""
    manifest = json.loads((EXTENSION / "package.json").read_text())
    scripts = manifest["scripts"]
    assert manifest["main"] == "./dist/extension.js"
    assert scripts["bundle"].startswith("esbuild extension.js --bundle --outfile=dist/extension.js")
    assert "--external:vscode" in scripts["bundle"]
    assert scripts["vscode:prepublish"] == "npm run bundle"
    assert scripts["package"] == "vsce package --no-dependencies"
    assert {"esbuild", "@vscode/vsce"} <= set(manifest["devDependencies"])
    assert manifest["repository"]["url"].startswith("https://github.com/")
    ignored = (EXTENSION / ".vscodeignore").read_text().split()
    assert {"node_modules/**", "extension.js", "document-selector.json"} <= set(ignored)
    assert (EXTENSION / "LICENSE").read_text().startswith("MIT License")
    assert "npm run package" in (EXTENSION / "README.md").read_text()
