"""A raw stdio client for `aiscan lsp`: writes bytes exactly as given, reads framed replies.

The protocol tests need bytes no well-behaved client library would send (a negative
Content-Length, a URI with `%00`), so this client frames nothing on its own unless asked.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["Server", "frame"]


def frame(message: dict[str, Any], length: int | str | None = None) -> bytes:
    """`message` with its header; `length` overrides the Content-Length value."""
    body = json.dumps(message).encode()
    value = len(body) if length is None else length
    return f"Content-Length: {value}\r\n\r\n".encode() + body


class Server:
    """`python -m aiscan lsp` in `cwd`, with a thread collecting the messages it writes."""

    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "aiscan", "lsp"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.messages: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self._passed: list[dict[str, Any]] = []
        self._arrivals: dict[int, float] = {}
        self.seen: list[dict[str, Any]] = []
        """Every message read from `messages` so far, in the order they came."""
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def request(self, id_: int, method: str, params: Any) -> None:
        self.send(frame({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}))

    def notify(self, method: str, params: Any) -> None:
        self.send(frame({"jsonrpc": "2.0", "method": method, "params": params}))

    def open(self, uri: str, text: str, language: str = "c") -> None:
        document = {"uri": uri, "languageId": language, "version": 1, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": document})

    def initialize(self, root: Path, options: dict[str, Any] | None = None) -> None:
        params = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        if options is not None:
            params["initializationOptions"] = options
        self.request(0, "initialize", params)
        self.wait_for(lambda m: m.get("id") == 0)
        self.notify("initialized", {})

    def wait_for(self, predicate: Any, timeout_s: float = 30.0) -> dict[str, Any]:
        """The first message not taken before that `predicate` accepts; the messages it
        passes over stay for later calls."""
        for index, message in enumerate(self._passed):
            if predicate(message):
                return self._passed.pop(index)
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no such message in {timeout_s} s; stderr: {self.errors()}")
            try:
                arrived, message = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(message)
            self._arrivals[id(message)] = arrived
            if predicate(message):
                return message
            self._passed.append(message)

    def arrival(self, message: dict[str, Any]) -> float:
        """When the reader thread read `message` (`time.monotonic()`)."""
        return self._arrivals[id(message)]

    def response(self, id_: int, timeout_s: float = 30.0) -> dict[str, Any]:
        return self.wait_for(lambda m: m.get("id") == id_ and "method" not in m, timeout_s)

    def diagnostics(self, uri: str, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        return list(self.publication(uri, timeout_s)["params"]["diagnostics"])

    def publication(self, uri: str, timeout_s: float = 30.0) -> dict[str, Any]:
        """The next publishDiagnostics message for `uri`."""
        return self.wait_for(lambda m: _publishes(m, uri), timeout_s)

    def published(self, uri: str) -> bool:
        """Whether diagnostics for `uri` were among the messages taken so far."""
        return any(_publishes(m, uri) for m in self.seen)

    def errors(self) -> str:
        return b"".join(self.stderr).decode(errors="replace")[-4000:]

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.request(99999, "shutdown", None)
                self.notify("exit", None)
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            length = None
            while True:
                line = stdout.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n") and length is not None:
                    break
            assert length is not None
            message = json.loads(stdout.read(length))
            self.messages.put((time.monotonic(), message))

    def _drain_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        for line in stderr:
            self.stderr.append(line)


def _publishes(message: dict[str, Any], uri: str) -> bool:
    return bool(
        message.get("method") == "textDocument/publishDiagnostics"
        and message["params"]["uri"] == uri
    )


def _publishes(message: dict[str, Any], uri: str) -> bool:
    return bool(
        message.get("method") == "textDocument/publishDiagnostics"
        and message["params"]["uri"] == uri
    )
