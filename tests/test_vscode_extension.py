"""The VS Code extension in `editors/vscode/`: a manifest VS Code accepts, a script that parses."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parent.parent / "editors" / "vscode"


def test_manifest_starts_the_language_server_for_c_and_python() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text())
    assert (EXTENSION / manifest["main"]).is_file()
    assert "vscode-languageclient" in manifest["dependencies"]
    assert {"onLanguage:c", "onLanguage:python"} <= set(manifest["activationEvents"])
    assert manifest["engines"]["vscode"].startswith("^")
    default = manifest["contributes"]["configuration"]["properties"]["aiscan.command"]["default"]
    assert default == ["aiscan", "lsp"]
    assert ".vsix" in (EXTENSION / "README.md").read_text()


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_extension_script_parses() -> None:
    subprocess.run(["node", "--check", str(EXTENSION / "extension.js")], check=True)


def test_the_extension_registers_what_the_server_reads() -> None:
    """A `.cpp` document was sent to a server that ignores it without a word; the client now
    selects C, CUDA and Python, and `cpp` only for the extensions the server reads."""
    from aiscan.sources import LANGUAGES

    script = (EXTENSION / "extension.js").read_text()
    assert '{ scheme: "file", language: "cpp" },' not in script
    assert '{ scheme: "file", language: "cpp", pattern: "**/*.{h,cu,cuh}" }' in script
    cpp_suffixes = {".h", ".cu", ".cuh"}
    assert cpp_suffixes <= set(LANGUAGES) and ".cpp" not in LANGUAGES
    assert (EXTENSION / "LICENSE").read_text().startswith("MIT License")
    assert "node_modules/.bin/**" in (EXTENSION / ".vscodeignore").read_text()
