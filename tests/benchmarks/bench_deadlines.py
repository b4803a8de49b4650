"""Deadlines on a loaded machine: the deadline reproducers of issue 33, each with
`timeout_seconds=3` while CPU-bound processes keep the cores busy, with each case's wall time,
outcome and the peak memory of the process that ran it (a fresh one per case).

    python tests/benchmarks/bench_deadlines.py [--hogs 2] [--timeout 3] [--only NAME ...]

The target: every case ends within the timeout + 0.5 s (or sooner, with bash's answer or a
named limit), the host under 1 GB. A check that fires only after so much CPU time fires late
here, where the script gets a fraction of a core; the watchdog (base/limits.py) does not.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

EXTGLOB_A = "$(printf 'a%.0s' {1..62})"

# name → (kind, script): kind is the tool that runs it
CASES = {
    "glob */../* x4 (40 dirs)": ("bash", "mkdir d{1..40}; echo */../*/../*/../* | wc -c"),
    "extglob case bomb": ("logic", f"shopt -s extglob; s={EXTGLOB_A}; "
                                   "case $s in +(a|aa)+(a|aa)b) echo match;; *) echo no;; esac"),
    "extglob [[ == ]] bomb": ("logic", f"shopt -s extglob; s={EXTGLOB_A}; "
                                       "[[ $s == +(a|aa)+(a|aa)b ]] && echo match || echo no"),
    "${x//pat/} bomb": ("logic", f"shopt -s extglob; x={EXTGLOB_A}; "
                                 "y=${x//+(a|aa)+(a|aa)b/}; echo ${#y}"),
    "command substitution memory": ("logic", "x=$(printf '%8000000s'); x=$x$x; "
                                             "y=$(for i in {1..50}; do echo \"$x\"; done)"),
    "slow commands in a loop": ("logic", "while :; do printf '%9999999s' | tr ' ' x | wc -c; done >/dev/null"),
    "endless loop": ("logic", "while :; do :; done"),
    "slow tool callback": ("tool", "slow; echo after"),
    "dripping HTTP server (curl)": ("curl", "curl -s \"$URL\" | wc -c"),
}


def _peak_mb() -> int:
    """This child's peak resident memory: VmHWM (ru_maxrss keeps the peak of its parent)."""
    with open("/proc/self/status") as status:
        return int(status.read().split("VmHWM:")[1].split()[0]) // 1024


def run_case(kind: str, script: str, timeout: float) -> dict:
    """In the child: run one case, return what happened."""
    import threading
    from scripted_kernel import ExecutionLimits, ScriptedTool, ToolDef
    from scripted_kernel.tools import BashTool
    limits = ExecutionLimits(timeout_seconds=timeout)
    if kind == "bash":
        tool = BashTool(limits=limits)
    elif kind == "tool":
        tool = (ScriptedTool.builder("slow").limits(limits)
                .tool(ToolDef("slow", "sleeps", {"type": "object"}), lambda args: time.sleep(30) or "")
                .build())
    elif kind == "curl":
        url = _dripping_server(threading)
        tool = BashTool.builder().limits(limits).network([url]).env("URL", url).build()
    else:
        tool = ScriptedTool.builder("logic").limits(limits).build()
    started = time.monotonic()
    response = tool.execute(script)
    wall = time.monotonic() - started
    return {"wall": wall, "exit": response.exit_code, "error": response.error,
            "stdout": response.stdout.strip()[:40], "stderr": response.stderr.strip()[-100:],
            "peak_mb": _peak_mb()}


def _dripping_server(threading) -> str:
    """A local HTTP server that sends its body one byte every half second."""
    import http.server

    class Drip(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            for _ in range(100):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.5)

        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Drip)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/api/data"


def _hog():
    while True:
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hogs", type=int, default=2, help="CPU-bound processes to run meanwhile")
    parser.add_argument("--timeout", type=float, default=3.0)
    parser.add_argument("--only", nargs="*", help="names (or parts of names) of the cases to run")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, script = CASES[args.child]
        print(json.dumps(run_case(kind, script, args.timeout)))
        return 0
    names = [n for n in CASES if not args.only or any(o in n for o in args.only)]
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    failed = 0
    try:
        print(f"timeout_seconds={args.timeout:g}, {args.hogs} CPU-bound processes on "
              f"{os.cpu_count()} cores; target: each within {args.timeout + 0.5:g} s\n")
        print(f"{'case':32} {'wall s':>7} {'peak MB':>8}  outcome")
        for name in names:
            child = subprocess.run([sys.executable, __file__, "--child", name, "--timeout", str(args.timeout)],
                                   capture_output=True, text=True, timeout=args.timeout * 20 + 60)
            try:
                r = json.loads(child.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                print(f"{name:32} crashed: {child.stderr.strip()[-300:]}")
                failed += 1
                continue
            late = r["wall"] > args.timeout + 0.5
            failed += late or r["peak_mb"] >= 1024
            outcome = r["error"] or f"exit {r['exit']}: {r['stdout']}"
            print(f"{name:32} {r['wall']:7.2f} {r['peak_mb']:8d}  {outcome}{'  LATE' if late else ''}")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
