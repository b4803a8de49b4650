"""Self-describing executables as tools (shellclaw's interface).

An executable answering `--describe` with `{"name", "description", "parameters"}` becomes a
tool; a call runs it with the JSON arguments as `$1` and the pipeline input on stdin. Only
executables found when the directory was scanned can run (default-deny); a broken one is
skipped with a warning; stub mode sets STUB_ENV=1 so tools answer with canned data (and the
interface's original name for it, for executables written against that).
"""
from __future__ import annotations

import json
import os
import subprocess
import warnings
from pathlib import Path
from typing import Callable, Optional

from .definitions import ToolArgs, ToolDef

DESCRIBE_TIMEOUT = 10.0
STUB_ENV = "SCRIPTED_KERNEL_STUB"
STUB_ENV_ORIGINAL = "SHELLCLAW_STUB"


class ExecutableError(Exception):
    pass


def _clean_env(stub: bool) -> dict:
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
    if stub:
        env[STUB_ENV] = env[STUB_ENV_ORIGINAL] = "1"
    return env


def describe(path: str, stub: bool = False) -> ToolDef:
    """Ask an executable to describe itself; ExecutableError when it cannot."""
    try:
        p = subprocess.run([path, "--describe"], capture_output=True, text=True,
                           timeout=DESCRIBE_TIMEOUT, env=_clean_env(stub), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ExecutableError(f"{Path(path).name}: --describe failed ({type(e).__name__})") from None
    if p.returncode != 0:
        raise ExecutableError(f"{Path(path).name}: --describe exited with status {p.returncode}")
    try:
        meta = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise ExecutableError(f"{Path(path).name}: --describe did not print JSON") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        raise ExecutableError(f"{Path(path).name}: --describe must print an object with a name")
    schema = meta.get("parameters") or {"type": "object", "properties": {}}
    return ToolDef(meta["name"], str(meta.get("description", "")), schema,
                   list(meta.get("tags", [])), meta.get("category"))


def callback_for(path: str, stub: bool = False, timeout: float = 30.0):
    def call(args: ToolArgs):
        try:
            p = subprocess.run([path, json.dumps(args.params)], input=args.stdin or "",
                               capture_output=True, text=True, timeout=timeout, env=_clean_env(stub))
        except subprocess.TimeoutExpired:
            raise ExecutableError(f"timed out after {timeout:g} s") from None
        if p.returncode != 0:
            message = (p.stderr.strip().splitlines() or [f"exited with status {p.returncode}"])[-1]
            raise ExecutableError(message)
        return p.stdout
    return call


def scan(directory: str, stub: bool = False, timeout: float = 30.0) -> list[tuple[ToolDef, Callable]]:
    """(ToolDef, callback) for each executable of the directory that describes itself."""
    found = []
    for entry in sorted(Path(directory).iterdir()):
        if not entry.is_file() or not os.access(entry, os.X_OK):
            continue
        try:
            tool_def = describe(str(entry), stub)
        except ExecutableError as e:
            warnings.warn(f"skipping executable tool: {e}", stacklevel=2)
            continue
        found.append((tool_def, callback_for(str(entry.resolve()), stub, timeout)))
    return found


def catalog(directory: str, stub: bool = False) -> list[dict]:
    return [{"name": d.name, "description": d.description, "parameters": d.input_schema,
             "tags": d.tags, "category": d.category} for d, _ in scan(directory, stub)]


def context_blocks(directory: Optional[str]) -> list[str]:
    """The .md files of a folder, in name order: appended to the system prompt."""
    if not directory:
        return []
    return [p.read_text(encoding="utf-8") for p in sorted(Path(directory).glob("*.md"))]
