"""BashTool: a bash interpreter over a virtual filesystem, as one tool for a model.

Like a terminal (and bashkit's BashTool), its shell persists across `execute()` calls: files,
variables, functions and the working directory carry over. `.fresh_shell()` on the builder
gives a fresh interpreter per call over the same filesystem.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..commands import COMMANDS
from ..fs import MemoryFs
from ..shell.builtins import load as load_builtins
from ..shell.limits import CancelToken, ExecutionLimits
from .scripted_tool import ScriptedTool, ToolResponse

DESCRIPTION = "Virtual bash interpreter with a virtual filesystem"
_FILE_COMMANDS = "ls mkdir rm rmdir cp mv touch chmod ln find du stat realpath readlink mktemp diff cmp"


class BashTool(ScriptedTool):
    """`BashTool()` with defaults, or `BashTool.builder()...build()`."""

    def __init__(self, username: str = "user", hostname: str = "sandbox",
                 limits: Optional[ExecutionLimits] = None, env: Optional[dict] = None,
                 files: Optional[dict] = None, filesystem: Optional[MemoryFs] = None,
                 builtins: Optional[dict] = None, fresh_shell: bool = False, name: str = "bash"):
        limits = limits or ExecutionLimits()
        fs = filesystem if filesystem is not None else MemoryFs(files, user=username, limits=limits)
        if filesystem is not None and files:
            for path, content in files.items():
                fs.add_file(path, content)
        home = f"/home/{username}"
        base_env = {"HOME": home, "USER": username, "LOGNAME": username, "HOSTNAME": hostname,
                    "PATH": "/usr/local/bin:/usr/bin:/bin", "TMPDIR": "/tmp"}
        self.user_env = dict(env or {})
        super().__init__(name, DESCRIPTION, {**base_env, **self.user_env}, limits, filesystem=fs)
        self.username = username
        self.hostname = hostname
        self.custom_builtins = dict(builtins or {})
        self.fresh = fresh_shell
        self._shell: list = []           # the persistent shell (one element once created)
        self._lock = threading.Lock()    # one call at a time uses the shell

    @staticmethod
    def builder() -> "BashToolBuilder":
        return BashToolBuilder()

    @property
    def home(self) -> str:
        return f"/home/{self.username}"

    # -------------------------------------------------------- the Tool contract

    def description(self) -> str:
        names = " ".join(sorted(self.commands_available()))
        text = f"{DESCRIPTION}. Commands: {names}."
        if self.custom_builtins:
            text += " Custom builtins: " + ", ".join(sorted(self.custom_builtins)) + "."
        return text

    def commands_available(self) -> list:
        return sorted(set(COMMANDS) | set(load_builtins()) | set(self.custom_builtins))

    def help(self) -> str:
        lines = [
            "NAME",
            f"    {self.name} - {DESCRIPTION.lower()}",
            "",
            "SYNOPSIS",
            '    {"commands": "<bash script>"}',
            "",
            "DESCRIPTION",
            "    Runs bash scripts (GNU bash 5.2 syntax: pipelines, redirections, functions, arrays,",
            "    arithmetic, [[ ]], here-documents) over an in-memory filesystem. Files, variables,",
            "    functions and the working directory persist between calls" +
            (" (here: files only; every call starts a fresh shell)." if self.fresh else "."),
            "    Nothing of the host is reachable: no host files unless mounted read-only, no",
            "    processes, no network.",
            "",
            "COMMANDS",
            "    Files: " + _FILE_COMMANDS,
            "    Text: " + " ".join(sorted(set(COMMANDS) - set(_FILE_COMMANDS.split()))),
            "    Shell: cd pwd pushd popd dirs source . umask test [ read mapfile printf echo ...",
        ]
        if self.custom_builtins:
            lines.append("    Custom: " + " ".join(sorted(self.custom_builtins)))
        lines += ["", "CONFIGURATION",
                  f"    User: {self.username} (home {self.home})",
                  f"    Host: {self.hostname}",
                  f"    Limits: {self.limits.max_commands} commands, {self.limits.max_loop_iterations} loop "
                  f"iterations, {self.limits.timeout_seconds:g} s per call, {self.limits.max_fs_bytes} bytes "
                  f"of files, {self.limits.max_file_count} files"]
        if self.user_env:
            lines.append("    Environment: " + " ".join(sorted(self.user_env)))
        if self.network_allow:
            lines.append("    Network (curl): " + " ".join(self.network_allow))
        lines += ["", "OUTPUT",
                  "    {stdout, stderr, exit_code}: exit_code is the script's status (124 on timeout).",
                  "", "EXAMPLES",
                  '    {"commands": "mkdir -p /tmp/w && echo hi > /tmp/w/a.txt && ls -l /tmp/w"}',
                  '    {"commands": "find . -name \'*.json\' | xargs -n1 jq -r .name"}', ""]
        return "\n".join(lines)

    def system_prompt(self) -> str:
        mode = "each call starts a fresh shell over the same files" if self.fresh else \
            "files, variables, functions and the working directory persist between calls"
        lines = [f"# {self.name}", "", f"{DESCRIPTION}.", "",
                 'Input: {"commands": "<bash script>"}',
                 "Output: {stdout, stderr, exit_code}", "",
                 f"Home: {self.home}",
                 f"User: {self.username}, host: {self.hostname}; {mode}.",
                 f"File commands: {_FILE_COMMANDS}; text commands: grep sed awk jq sort uniq cut "
                 "head tail wc tr xargs ...",
                 ("curl may fetch: " + ", ".join(self.network_allow) + "; no other network, "
                  if self.network_allow else "No network, ") + "no processes and no host files."]
        if self.custom_builtins:
            lines.append("Custom commands: " + ", ".join(sorted(self.custom_builtins)) + ".")
        return "\n".join(lines) + "\n"

    def input_schema(self) -> dict:
        return {"type": "object",
                "properties": {"commands": {"type": "string", "description": "A bash script."}},
                "required": ["commands"]}

    # -------------------------------------------------------- execution

    def commands(self) -> dict:
        if self._commands is None:
            table = dict(COMMANDS)
            for name, fn in self.custom_builtins.items():
                table[name] = _custom_command(name, fn)
            self._commands = table
        return self._commands

    def execute(self, commands, stdin: str = "", cancel: Optional[CancelToken] = None,
                on_output: Optional[Callable] = None, _session=None) -> ToolResponse:
        with self._lock:
            return super().execute(commands, stdin, cancel, on_output,
                                   None if self.fresh else self._shell)

    async def execute_async(self, commands, stdin: str = "", cancel: Optional[CancelToken] = None,
                            on_output: Optional[Callable] = None) -> ToolResponse:
        import asyncio
        return await asyncio.get_running_loop().run_in_executor(
            None, lambda: self.execute(commands, stdin, cancel, on_output))

    def _filesystem_for_call(self):
        return self.filesystem

    def _setup_shell(self, sh):
        super()._setup_shell(sh)
        sh.hostname = self.hostname
        if sh.fs is not self.filesystem:          # a shell made before: keep it on our files
            sh.fs = self.filesystem

    def _names_a_tool(self, script: str) -> bool:
        return False

    def reset(self):
        """Forget the shell's state (variables, functions, directory); the files stay."""
        with self._lock:
            self._shell.clear()


def _custom_command(name: str, fn: Callable) -> Callable:
    """A Python callable as a command: fn(args: list[str], stdin: str) returning the text to
    print, or (stdout, exit_code), or (stdout, stderr, exit_code). An exception is a failure
    reported as `name: message` (status 1)."""
    def run(sh, argv):
        stdin = sh.stdin.read_all()
        try:
            result = fn(list(argv[1:]), stdin)
        except Exception as e:        # the callable's failure, reported like a command's
            sh.err(f"{name}: {e}\n")
            return 1
        if result is None:
            return 0
        if isinstance(result, tuple):
            if len(result) == 2:
                out, status = result
                err = ""
            else:
                out, err, status = result
            sh.out(str(out or ""))
            sh.err(str(err or ""))
            return int(status)
        sh.out(str(result))
        return 0
    return run


@dataclass
class BashToolBuilder:
    """BashTool.builder().username("agent").hostname("box").limits(...).env(k, v)
    .builtin(name, fn).files({...}).mount(at, host_dir).build()"""
    _username: str = "user"
    _hostname: str = "sandbox"
    _limits: Optional[ExecutionLimits] = None
    _env: dict = field(default_factory=dict)
    _builtins: dict = field(default_factory=dict)
    _files: dict = field(default_factory=dict)
    _mounts: list = field(default_factory=list)
    _filesystem: Optional[MemoryFs] = None
    _fresh: bool = False
    _name: str = "bash"
    _network: tuple = ()

    def username(self, name: str) -> "BashToolBuilder":
        self._username = name
        return self

    def hostname(self, name: str) -> "BashToolBuilder":
        self._hostname = name
        return self

    def name(self, name: str) -> "BashToolBuilder":
        self._name = name
        return self

    def limits(self, limits: ExecutionLimits) -> "BashToolBuilder":
        self._limits = limits
        return self

    def env(self, key: str, value: str) -> "BashToolBuilder":
        self._env[key] = str(value)
        return self

    def builtin(self, name: str, fn: Callable) -> "BashToolBuilder":
        self._builtins[name] = fn
        return self

    def files(self, files: dict) -> "BashToolBuilder":
        """{path: text or bytes}; relative paths are below the home directory."""
        self._files.update(files)
        return self

    def mount(self, at: str, host_dir: str, read_only: bool = True) -> "BashToolBuilder":
        self._mounts.append((at, host_dir, read_only))
        return self

    def filesystem(self, fs: MemoryFs) -> "BashToolBuilder":
        self._filesystem = fs
        return self

    def network(self, allow: list) -> "BashToolBuilder":
        """Let `curl` fetch URLs under these entries (`scheme://host[:port][/path]`; the exact
        rule is in SECURITY.md, "Network"), nothing else."""
        self._network = tuple(allow)
        return self

    def fresh_shell(self, fresh: bool = True) -> "BashToolBuilder":
        self._fresh = fresh
        return self

    def build(self) -> BashTool:
        tool = BashTool(self._username, self._hostname, self._limits, self._env, self._files,
                        self._filesystem, self._builtins, self._fresh, self._name)
        for at, host_dir, read_only in self._mounts:
            tool.filesystem.mount(at, host_dir, read_only)
        tool.network_allow = self._network
        return tool
