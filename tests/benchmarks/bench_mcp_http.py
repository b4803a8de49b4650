"""Throughput of the MCP HTTP service with 1 and with N workers: 50 concurrent MCP clients
(stateless streamable HTTP, JSON-RPC `tools/call` over keep-alive connections) for a fixed time,
each call a new script text that calls a tool and pipes it through jq.

    python tests/benchmarks/bench_mcp_http.py [--clients 50] [--seconds 30] [--workers 1 2]
    python tests/benchmarks/bench_mcp_http.py --redis        # BashTool sessions in Redis

`--redis` (or `--session-store URL`) serves `--bash` with that session store instead: each
client opens its own MCP session and every call appends to a file of the session and counts a
variable, so each call runs on the session's latest version and saves what it changed (a
worker keeps the session its last call saved; a call another worker's save preceded loads the
session); `--redis` starts a `redis-server` on a free loopback port for the run.

    python tests/benchmarks/bench_mcp_http.py --session-sizes [--redis]

`--session-sizes` measures what a session's size costs a call instead (one worker, a directory
store unless `--redis`/`--session-store`): the median time of an `echo` on sessions holding
1 MB, 10 MB and 60 MB of files (the goal: the 60 MB call within 2x the 1 MB call), and the
worker's peak memory while six sessions of 50 MB each answer an `echo` at once ("before"
counts the sessions the worker holds from their last calls, within --max-sessions-bytes).

Prints calls per second, p50/p95/p99 latency and errors per configuration, and the ratio of
each to the first. The client is plain asyncio sockets so that it takes little of the CPU the
workers need.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "bench-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(workers: int, store: str = "", sessions: int = 16, options: list = ()):
    port = free_port()
    served = (["--bash", "--session-store", store, "--max-sessions", str(sessions), *options] if store else
              ["--tools", f"{ROOT / 'examples' / 'ecommerce.py'}:api"])
    proc = subprocess.Popen([sys.executable, "-m", "scripted_kernel", "mcp", "--http", "--port", str(port),
                             "--workers", str(workers), "--token", TOKEN, *served],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
            return proc, port
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the service did not start")


def request_bytes(port: int, n: int, client: int, sid: str = "") -> bytes:
    if sid:
        script = f"# client {client} call {n}\necho {n} >> /tmp/log; calls=$((calls+1)); wc -l < /tmp/log"
        tool = "bash"
    else:
        script = (f"# client {client} call {n}\n"
                  f"name=$(get_user --id {n % 3 + 1} | jq -r .name)\n"
                  f"orders=$(list_orders --user_id {n % 3 + 1} | jq length)\n"
                  f'echo "$name $orders"')
        tool = "ecommerce"
    body = json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                       "params": {"name": tool, "arguments": {"commands": script}}}).encode()
    return _post(port, body, sid)


def _post(port: int, body: bytes, sid: str = "") -> bytes:
    session = f"Mcp-Session-Id: {sid}\r\n" if sid else ""
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
            f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{session}"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    return head + body


async def _exchange(reader, writer, data: bytes) -> tuple:
    writer.write(data)
    head = await reader.readuntil(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    return head, await reader.readexactly(length)


async def one_client(port: int, client: int, stop_at: float, latencies: list, errors: list, bash: bool):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    n = 0
    sid = ""
    try:
        if bash:
            init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                               "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                          "clientInfo": {"name": "bench", "version": "1"}}}).encode()
            head, _ = await _exchange(reader, writer, _post(port, init))
            sid = next(line.split(b":")[1].strip().decode() for line in head.split(b"\r\n")
                       if line.lower().startswith(b"mcp-session-id"))
        while time.perf_counter() < stop_at:
            n += 1
            started = time.perf_counter()
            head, body = await _exchange(reader, writer, request_bytes(port, n, client, sid))
            ok = head.startswith(b"HTTP/1.1 200") and b'"exit_code":0' in body
            (latencies if ok else errors).append(time.perf_counter() - started)
    finally:
        writer.close()


async def drive(port: int, clients: int, seconds: float, bash: bool = False):
    latencies, errors = [], []
    stop_at = time.perf_counter() + seconds
    started = time.perf_counter()
    await asyncio.gather(*(one_client(port, c, stop_at, latencies, errors, bash) for c in range(clients)))
    return latencies, errors, time.perf_counter() - started


def start_redis():
    import shutil
    server = shutil.which("redis-server")
    if server is None:
        raise SystemExit("--redis needs redis-server (Debian package redis-server)")
    port = free_port()
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return proc, f"redis://127.0.0.1:{port}/0"


# ---------------------------------------------------------------- session sizes

SIZES_MB = (1, 10, 60)
CONCURRENT_SESSIONS, CONCURRENT_MB = 6, 50


def _call(port: int, sid: str, script: str) -> dict:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "bash", "arguments": {"commands": script}}}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=body, headers={
        "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json", "Mcp-Session-Id": sid,
        "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"})
    with urllib.request.urlopen(request, timeout=600) as r:
        result = json.load(r)["result"]["structuredContent"]
    if result["exit_code"] != 0:
        raise SystemExit(f"a call failed: {result['stderr'].strip()}")
    return result


def _session_of(port: int, megabytes: int) -> str:
    """A new session holding `megabytes` MB of files, each MB of its own content."""
    init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "bench", "version": "1"}}}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=init, headers={
        "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"})
    with urllib.request.urlopen(request, timeout=60) as r:
        sid = r.headers["mcp-session-id"]
    for first in range(0, megabytes, 10):         # 10 MB a call, within a call's limits
        count = min(10, megabytes - first)
        _call(port, sid, f'mkdir -p /data; x=$(printf "%1048000s" ""); for i in $(seq {first} {first + count - 1}); '
                         f'do printf "%s %s\\n" "$i" "$x" > /data/$i; done')
    return sid


def _peak_rss(pid: int, work) -> int:
    """The peak resident bytes of process `pid` (Linux) while `work` runs."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")                               # the peak (VmHWM) starts again from now
    work()
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM"))


def session_sizes(store: str) -> None:
    from concurrent.futures import ThreadPoolExecutor
    proc, port = start(1, store, 16)              # the defaults: --max-sessions-bytes 512 MiB
    try:
        print(f"BashTool sessions in {store}: one worker, {os.cpu_count()} CPUs")
        print("| session | echo, median of 5 | / 1 MB |")
        print("|---|---|---|")
        first = None
        for megabytes in SIZES_MB:
            sid = _session_of(port, megabytes)
            times = []
            for _ in range(5):
                started = time.perf_counter()
                _call(port, sid, "echo hi")
                times.append(time.perf_counter() - started)
            median = statistics.median(times)
            first = first or median
            print(f"| {megabytes} MB | {median * 1000:.0f} ms | {median / first:.1f} |")
        sids = [_session_of(port, CONCURRENT_MB) for _ in range(CONCURRENT_SESSIONS)]
        with open(f"/proc/{proc.pid}/status") as f:
            before = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS"))
        with ThreadPoolExecutor(CONCURRENT_SESSIONS) as pool:
            peak = _peak_rss(proc.pid, lambda: list(pool.map(lambda sid: _call(port, sid, "echo hi"), sids)))
        print(f"{CONCURRENT_SESSIONS} sessions of {CONCURRENT_MB} MB answering at once: the worker "
              f"{before / 2**20:.0f} MB before, {peak / 2**20:.0f} MB at its peak")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def percentile(values: list, q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else float("nan")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--session-store", default="", help="serve --bash with this session store")
    parser.add_argument("--redis", action="store_true", help="serve --bash with a Redis store started here")
    parser.add_argument("--session-sizes", action="store_true",
                        help="the cost of a call by its session's size, and six big sessions' memory")
    args = parser.parse_args(argv)
    redis = None
    if args.redis:
        redis, args.session_store = start_redis()
    if args.session_sizes:
        import tempfile
        try:
            with tempfile.TemporaryDirectory() as directory:
                session_sizes(args.session_store or f"file://{directory}")
        finally:
            if redis is not None:
                redis.terminate()
                redis.wait(30)
        return 0
    bash = bool(args.session_store)
    rows = []
    try:
        for workers in args.workers:
            # each client of each run (and of each warm-up) opens a session in the one store
            proc, port = start(workers, args.session_store, len(args.workers) * (args.clients + 4))
            try:
                asyncio.run(drive(port, 4, 2, bash))                 # warm every worker up
                latencies, errors, elapsed = asyncio.run(drive(port, args.clients, args.seconds, bash))
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(60)
            rows.append((workers, len(latencies) / elapsed, latencies, errors))
    finally:
        if redis is not None:
            redis.terminate()
            redis.wait(30)
    served = f"BashTool sessions in {args.session_store}" if bash else "ScriptedTool (stateless)"
    print(f"{served}: {args.clients} clients, {args.seconds:g} s each, {os.cpu_count()} CPUs")
    print("| workers | calls/s | p50 ms | p95 ms | p99 ms | errors | throughput / 1st |")
    print("|---|---|---|---|---|---|---|")
    for workers, rate, latencies, errors in rows:
        print(f"| {workers} | {rate:.0f} | {statistics.median(latencies) * 1000:.0f} | "
              f"{percentile(latencies, 95) * 1000:.0f} | {percentile(latencies, 99) * 1000:.0f} | "
              f"{len(errors)} | {rate / rows[0][1]:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
