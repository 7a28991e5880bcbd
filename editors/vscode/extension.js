// The aiscan extension: starts `aiscan lsp` on stdio for C, CUDA and Python files.
// Diagnostics, hovers on loop nests and code lenses all come from the server; this file
// only launches it with the user's settings.
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const settings = vscode.workspace.getConfiguration("aiscan");
  const [command, ...args] = settings.get("command", ["aiscan", "lsp"]);
  const serverOptions = { command, args };
  const clientOptions = {
    // What the server reads (aiscan.sources.LANGUAGES): C (.c, .h), CUDA (.cu, .cuh) and
    // Python. VS Code calls a .h file `cpp` (and a .cu one too without CUDA support): those
    // files only, never a .cpp. One file, which tests/test_vscode_extension.py checks.
    documentSelector: require("./document-selector.json"),
    initializationOptions: { devices: settings.get("devices", []) },
  };
  client = new LanguageClient("aiscan", "aiscan", serverOptions, clientOptions);
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
