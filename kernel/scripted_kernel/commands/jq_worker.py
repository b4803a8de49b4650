"""A worker process for jq programs that can run away (`range`, `repeat`, recursion, ...).

libjq cannot be interrupted from Python and can allocate without bound, so such programs run
in a child process with an address-space limit; past the script's time budget the child is
killed (and started again for the next call). Programs without those constructs stay in
process (~15 µs a run), since they finish in time proportional to their input.
"""
from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import threading
from typing import Optional

# Constructs with which a jq program can loop or grow without its input growing.
RUNAWAY = ("range", "repeat", "recurse", "until", "while", "def", "combinations")
MEMORY_LIMIT = 1 << 30            # bytes of address space for the child
MAX_RESULTS_BYTES = 64 << 20      # results larger than this are refused


class WorkerTimeout(Exception):
    pass


class WorkerCrashed(Exception):
    pass


def _send(stream, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack(">Q", len(data)))
    stream.write(data)
    stream.flush()


def _receive(stream):
    header = stream.read(8)
    if len(header) < 8:
        raise EOFError
    (size,) = struct.unpack(">Q", header)
    return pickle.loads(stream.read(size))


def serve():
    """The child: compile (cached) and run requests until stdin closes."""
    import resource
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError):
        pass
    import jq as libjq
    programs: dict = {}
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            source, args, inputs = _receive(inp)
        except EOFError:
            return
        runs = []
        key = (source, pickle.dumps(args))
        try:
            program = programs.get(key)
            if program is None:
                program = libjq.compile(source, args=dict(args))
                programs[key] = program
            size = 0
            for value in inputs:
                results, error = [], None
                try:
                    for result in program.input_value(value):
                        results.append(result)
                        size += 64
                        if size > MAX_RESULTS_BYTES:
                            raise ValueError("jq output too large for the worker (limit 64 MiB)")
                except ValueError as e:
                    error = str(e)
                runs.append((results, error))
                if error is not None:
                    break
            _send(out, ("ok", runs))
        except MemoryError:
            _send(out, ("error", "jq ran out of memory (limit 1 GiB)"))
        except ValueError as e:
            _send(out, ("compile", str(e)))


class Worker:
    """The parent's handle on one child; a dead or killed child is replaced on next use."""

    _lock = threading.Lock()
    _proc: Optional[subprocess.Popen] = None

    @classmethod
    def _ensure(cls) -> subprocess.Popen:
        if cls._proc is None or cls._proc.poll() is not None:
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": os.pathsep.join(sys.path)}
            cls._proc = subprocess.Popen(
                [sys.executable, "-c", "from scripted_kernel.commands.jq_worker import serve; serve()"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        return cls._proc

    @classmethod
    def kill(cls):
        if cls._proc is not None:
            try:
                cls._proc.kill()
                cls._proc.wait(timeout=5)
            except Exception:
                pass
            cls._proc = None

    @classmethod
    def run(cls, source: str, args: dict, inputs: list, timeout: Optional[float]):
        """[(results, error or None)] per input; raises WorkerTimeout / WorkerCrashed, or
        ValueError with libjq's message for a compile error."""
        with cls._lock:
            proc = cls._ensure()
            box: dict = {}

            def exchange():
                try:
                    _send(proc.stdin, (source, list(args.items()), inputs))
                    box["reply"] = _receive(proc.stdout)
                except Exception as e:       # a broken pipe: the child died
                    box["failure"] = e
            thread = threading.Thread(target=exchange, daemon=True)
            thread.start()
            thread.join(timeout)
            if thread.is_alive():
                cls.kill()
                thread.join(5)
                raise WorkerTimeout()
            if "failure" in box:
                cls.kill()
                raise WorkerCrashed("jq worker stopped (memory limit?)")
            kind, payload = box["reply"]
            if kind == "compile":
                raise ValueError(payload)
            if kind == "error":
                cls.kill()
                raise WorkerCrashed(payload)
            return payload
