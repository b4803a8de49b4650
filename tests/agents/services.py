"""The MCP service as the tests run it: real `python -m scripted_kernel mcp --http` processes on
free loopback ports, and clients of both protocol eras (the `mcp` 2.x client, raw HTTP)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from contextlib import asynccontextmanager

import pytest
import support
from support import free_port

ACCEPT = "application/json, text/event-stream"
LEGACY = "2025-06-18"


class Service:
    """`python -m scripted_kernel mcp --http ARGS` on its own port, up once /healthz answers."""

    def __init__(self, *args, env: dict | None = None, token: str = "", wait: bool = True):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = token
        command = [sys.executable, "-m", "scripted_kernel", "mcp", "--http", "--port", str(self.port), *args]
        if token:
            command += ["--token", token]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})})
        self._log: list = []             # stderr's lines so far
        self._drain = threading.Thread(target=self._drain_stderr, daemon=True)
        self._drain.start()
        if wait:
            self.wait_until_up()

    def wait_until_up(self, seconds: float = 180):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                self.health()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        pytest.fail(f"the MCP service did not start: {self.stderr[-3000:]}")

    def health(self, path: str = "/healthz") -> dict:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=30) as r:
            return json.load(r)

    def get(self, path: str) -> tuple:
        try:
            with urllib.request.urlopen(f"{self.url}{path}", timeout=30) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def post(self, payload, token: str | None = None, body: bytes = b"", sid: str | None = None,
             method: str = "POST", version: str = LEGACY, timeout: float = 120) -> tuple:
        """(status, Mcp-Session-Id answered, the JSON answer or the raw body)."""
        headers = {"Content-Type": "application/json", "Accept": ACCEPT, "MCP-Protocol-Version": version}
        token = self.token if token is None else token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if sid:
            headers["Mcp-Session-Id"] = sid
        data = body or (json.dumps(payload).encode() if payload is not None else None)
        request = urllib.request.Request(f"{self.url}/mcp", data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as r:
                raw = r.read()
                if r.headers.get("content-type", "").startswith("text/event-stream"):
                    # an MCP session's answer comes as events: the last data line is the response
                    raw = [line for line in raw.splitlines() if line.startswith(b"data:")][-1][5:]
                return r.status, r.headers.get("mcp-session-id"), json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, None, json.loads(raw)
            except ValueError:
                return e.code, None, raw

    def initialize(self) -> tuple:
        """(status, session id, answer) of a 2025-era `initialize`."""
        return self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                          "params": {"protocolVersion": LEGACY, "capabilities": {},
                                     "clientInfo": {"name": "test", "version": "1"}}})

    def open_session(self) -> str:
        status, sid, answer = self.initialize()
        assert status == 200 and sid, answer
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid=sid)
        return sid

    def run(self, sid: str | None, commands: str, request_id: int = 1, tool: str = "bash", **arguments) -> dict:
        """The structuredContent of a 2025-era call (in the Mcp-Session-Id session `sid`)."""
        status, _, answer = self.post({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                                       "params": {"name": tool, "arguments": {"commands": commands, **arguments}}},
                                      sid=sid)
        assert status == 200, answer
        return answer["result"]["structuredContent"]

    @asynccontextmanager
    async def client(self, mode: str = "auto", token: str | None = None, **options):
        """An `mcp` 2.x Client of this service (2026-07-28 with mode "auto"; "legacy": the
        2025 handshake, with an Mcp-Session-Id)."""
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        token = self.token if token is None else token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
            async with Client(streamable_http_client(f"{self.url}/mcp", http_client=http), mode=mode,
                              **options) as client:
                yield client

    @property
    def stderr(self) -> str:
        """What the service wrote to stderr: so far, or all of it once it has exited."""
        if self.proc.poll() is not None:
            self._drain.join(30)
        return self.log_so_far()

    def log_so_far(self) -> str:
        """What the service has written to stderr so far."""
        return "".join(self._log)

    def _drain_stderr(self):
        # read as it is written: a service whose stderr pipe filled up (some 600 call log
        # lines) would block on its next line
        for line in self.proc.stderr:
            self._log.append(line)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.stderr

    def log_lines(self) -> list:
        return [json.loads(line) for line in self.stop().splitlines() if line.startswith("{")]


def redis_on(port: int):
    """A support.RedisServer on a port of the test's choosing (one a service was told of
    before the store came up)."""
    from unittest import mock
    with mock.patch.object(support, "free_port", lambda: port):
        return support.RedisServer()


def structured(result) -> dict:
    """stdout, stderr and exit code of a script tool's structured result."""
    content = result.structured_content if hasattr(result, "structured_content") else result
    return {k: content[k] for k in ("stdout", "stderr", "exit_code")}
