"""BashTool: a bash interpreter over a virtual filesystem, as one tool for a model.

Like a terminal (and bashkit's BashTool), its shell persists across `execute()` calls: files,
variables, functions and the working directory carry over. `.fresh_shell()` on the builder
gives a fresh interpreter per call over the same filesystem.

One call at a time uses the shell. Custom builtins are host code, contained as ScriptedTool
contains its callbacks: a script that names one runs on a runner thread, and a builtin that
hangs is left behind at the deadline (status 124) together with the shell it was running in
(the next call starts a new shell over the same files).
"""
from __future__ import annotations

import dataclasses
import contextvars
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

from ..commands import COMMANDS, FILE_COMMANDS
from ..commands.python3 import NAMES as PYTHON_COMMANDS, available as python_available
from ..commands.urlpolicy import NetworkPolicy
from ..fs import MemoryFs
from ..base.limits import CancelToken, ExecutionLimits, timeout_error
from ..shell.api import ShellConfig, ShellSession, builtin_names
from .containment import WAIT_SLICE, cannot_print
from .definitions import is_async_callable
from .flags import FlagError
from .history import History, diff as history_diff
from .hooks import Hooks, Plan, ToolCall, pending_stdin
from .results import result_text
from .scripted_tool import GRACE, HostPolicyOptions, ScriptedTool, ToolResponse, _tool_run
from .telemetry import TelemetryConfig

# tools/snapshot.py is imported by the methods that capture or restore a session (it loads
# hmac and OpenSSL's hashes, which a process that never takes a snapshot does without), and
# tools/journal.py by the runs that journal their calls
if TYPE_CHECKING:
    from .journal import Journal

DESCRIPTION = "Virtual bash interpreter with a virtual filesystem"


def _file_commands(taken=()) -> str:
    """The commands that need the filesystem, from the registry (`needs_files=True`), but
    those a custom builtin took the name of (and python3 without the `python` extra)."""
    missing = set() if python_available() else set(PYTHON_COMMANDS)
    return " ".join(sorted(FILE_COMMANDS - set(taken) - missing))


class BashTool(ScriptedTool):
    """`BashTool()` with defaults, or `BashTool.builder()...build()`."""

    def __init__(self, username: str = "user", hostname: str = "sandbox",
                 limits: Optional[ExecutionLimits] = None, env: Optional[dict] = None,
                 files: Optional[dict] = None, filesystem: Optional[MemoryFs] = None,
                 builtins: Optional[dict] = None, fresh_shell: bool = False, name: str = "bash",
                 sanitize_errors: bool = True, shadow=()):
        limits = limits or ExecutionLimits()
        fs = filesystem if filesystem is not None else MemoryFs(files, user=username, limits=limits)
        if filesystem is not None and files:
            for path, content in files.items():
                fs.add_file(path, content)
        home = f"/home/{username}"
        base_env = {"HOME": home, "USER": username, "LOGNAME": username, "HOSTNAME": hostname,
                    "PATH": "/usr/local/bin:/usr/bin:/bin", "TMPDIR": "/tmp"}
        self.user_env = dict(env or {})
        super().__init__(name, DESCRIPTION, {**base_env, **self.user_env}, limits,
                         sanitize_errors=sanitize_errors, filesystem=fs)
        self.username = username
        self.hostname = hostname
        self.custom_builtins = dict(builtins or {})
        for builtin_name in self.custom_builtins:       # `shadow`: the names they may take from the shell
            self._check_name(builtin_name, builtin_name in shadow)
        self.fresh = fresh_shell
        self._shell = ShellSession()     # the persistent shell, once a call has made it
        self._lock = threading.Lock()    # one call at a time uses the shell
        self.snapshot_key: Optional[bytes] = None      # signs snapshots, and is required of them
        self.max_history_bytes: Optional[int] = None   # None: max_fs_bytes + max_shell_state_bytes
        self._history: Optional[History] = None

    @staticmethod
    def builder() -> "BashToolBuilder":  # type: ignore[override]  # the seed's API: a BashTool has no name to give
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
        return sorted(set(COMMANDS) | set(builtin_names()) | set(self.custom_builtins))

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
            "    processes (background jobs and <( ) run inside the interpreter), no network.",
            "",
            "COMMANDS",
            "    Files: " + _file_commands(),
            "    Text: " + " ".join(sorted(set(COMMANDS) - FILE_COMMANDS)),
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
                 f"File commands: {_file_commands(self.custom_builtins)}; text commands: " +
                 " ".join(c for c in ("grep", "sed", "awk", "jq", "sort", "uniq", "cut", "head", "tail", "wc",
                                      "tr", "xargs") if c not in self.custom_builtins) + " ...",
                 ("curl may fetch: " + ", ".join(self.network_allow) + "; no other network, "
                  if self.network_allow else "No network, ") + "no processes and no host files."]
        if self.custom_builtins:
            taken = self.shadowed_names()
            lines.append("Custom commands: " + ", ".join(
                f"{name} (not the shell's {name}: `command {name}` runs that)" if name in taken else name
                for name in sorted(self.custom_builtins)) + ".")
        return "\n".join(lines) + "\n"

    def input_schema(self) -> dict:
        return {"type": "object",
                "properties": {"commands": {"type": "string", "description": "A bash script."}},
                "required": ["commands"]}

    # -------------------------------------------------------- execution

    def commands(self) -> dict:
        if self._commands is None:
            table = self._with_journaled_programs(dict(COMMANDS))
            self._commands = self._with_host_commands(table, {name: self._builtin_command(name, fn)
                                                              for name, fn in self.custom_builtins.items()})
        return self._commands

    def execute(self, commands, stdin: str = "", cancel: Optional[CancelToken] = None,
                on_output: Optional[Callable] = None, _session=None) -> ToolResponse:
        """Run a script in the shell. A call waits for the shell while another uses it, within
        its own timeout and cancel token."""
        refused = self._nested_call() or self._wait_for_shell(cancel)
        if refused is not None:
            return refused
        try:
            return super().execute(commands, stdin, cancel, on_output, self._session())
        finally:
            self._lock.release()

    async def execute_async(self, commands, stdin: str = "", cancel: Optional[CancelToken] = None,
                            on_output: Optional[Callable] = None) -> ToolResponse:
        """The script runs on a runner thread, as ScriptedTool's do (no executor that busy
        calls could fill); waiting for the shell does not hold the loop."""
        import asyncio       # here, not at the top: a synchronous caller never pays its import
        refused = self._nested_call() or await self._wait_for_shell_async(cancel)
        if refused is not None:
            return refused
        try:
            session = self._session()
            run, work = self._prepare(commands, stdin, cancel, on_output, session, asyncio.get_running_loop())
            response = await self._traced_await(run, work, session)
        finally:
            self._lock.release()
        self._last.trace = response.trace
        return response

    def _new_journal(self, session) -> Journal:
        """A journaled call keeps the session as it was when it began: a resume puts it back
        before replaying (the cost of a snapshot of the session per call, with a hook)."""
        from . import snapshot
        journal = super()._new_journal(session)
        manifest, blobs = self._capture()           # (the call holds the shell's lock)
        journal.session = snapshot.encode(manifest, blobs, self.snapshot_key)
        return journal

    def _resumed(self, loaded) -> ToolResponse:
        from . import snapshot
        refused = self._nested_call() or self._wait_for_shell(None)
        if refused is not None:
            return refused
        try:
            if loaded.journal.session is not None:
                _, fs, shell = snapshot.load_session(loaded.journal.session, self.limits, self.snapshot_key,
                                                     snapshot.host_mounts(self.filesystem),
                                                     expect_user=self.username)
                self._install(fs, shell)
            return self._replay(loaded, None, self._session())
        finally:
            self._lock.release()

    def plan(self, commands, stdin: str = "") -> Plan:
        """The script run on a copy of this session (its files and shell), with no side effect:
        custom builtins are not called (each is listed as a call of kind "builtin"), curl's
        requests are listed and not sent, and `files` lists the paths the script would create,
        change or remove. The session itself is left as it was."""
        from . import snapshot
        with self._lock:
            manifest, blobs = self._capture()
        _, fs, shell = snapshot.rebuild(manifest, blobs, self.limits, snapshot.host_mounts(self.filesystem),
                                        self.username)
        copy = BashTool(self.username, self.hostname, self.limits, self.user_env, None, fs,
                        self.custom_builtins, self.fresh, self.name, self.sanitize_errors_enabled,
                        shadow=self.custom_builtins)
        if not self.fresh:
            copy._shell.take(shell)
        copy.network_allow, copy.network_policy = self.network_allow, self.network_policy
        before = _file_states(fs)
        run, work = copy._prepare(commands, stdin, None, None, copy._session(), plan=True)
        copy._run_and_wait(run, work, copy._session())
        plan = run.plan if run.plan is not None else Plan()
        after = _file_states(fs)
        plan.files = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
        return plan

    def _session(self) -> Optional[ShellSession]:
        return None if self.fresh else self._shell

    def _nested_call(self) -> Optional[ToolResponse]:
        """A builtin of this tool calling its execute() would wait for itself: refused."""
        if self in _RUNNING_BUILTINS_OF.get():
            return _refusal("a builtin of this tool called its execute(): the shell is running that "
                            "builtin, a nested call would wait for itself", 1, "nested")
        return None

    def _wait_for_shell(self, cancel: Optional[CancelToken]) -> Optional[ToolResponse]:
        """Take the shell's lock; or the response of a call that stopped waiting for it."""
        if self._lock.acquire(blocking=False):
            return None
        deadline = self._shell_deadline()
        while not self._lock.acquire(timeout=WAIT_SLICE):
            refused = self._stop_waiting(cancel, deadline)
            if refused is not None:
                return refused
        return None

    async def _wait_for_shell_async(self, cancel: Optional[CancelToken]) -> Optional[ToolResponse]:
        import asyncio
        deadline = self._shell_deadline()
        while not self._lock.acquire(blocking=False):
            refused = self._stop_waiting(cancel, deadline)
            if refused is not None:
                return refused
            await asyncio.sleep(WAIT_SLICE)
        return None

    def _shell_deadline(self) -> Optional[float]:
        # the call using the shell ends by its own deadline plus GRACE, so a caller with the
        # same timeout gets the shell; a queue of callers does not wait for ever
        timeout = self.limits.timeout_seconds
        return time.monotonic() + timeout + GRACE if timeout else None

    def _stop_waiting(self, cancel: Optional[CancelToken], deadline: Optional[float]) -> Optional[ToolResponse]:
        if cancel is not None and cancel.cancelled:
            return _refusal(f"execution {cancel.reason} while waiting for the shell (another call "
                            f"was using it)", 130, "cancelled")
        if deadline is not None and time.monotonic() > deadline:
            return _refusal(f"{timeout_error(self.limits).message} waiting for the shell (another "
                            f"call was using it)", 124, "timeout")
        return None

    def _callback_names(self):
        return self.custom_builtins

    def _builtin_command(self, name: str, fn: Callable) -> Callable:
        """A builtin, fn(args: list[str], stdin: str) (or an async one), as a command. It returns
        the text to print, or (stdout, exit_code), or (stdout, stderr, exit_code); text is a
        str, bytes, None, or any other value printed as JSON. Anything it raises, and any other
        return, is a failing command (status 1, one sanitised line), as a tool's callback."""
        is_async = is_async_callable(fn)

        def run(ctx, argv):
            started = time.perf_counter()
            active = _tool_run(ctx)
            if active is not None and active.plan is not None:         # a plan: listed, not called
                active.plan.append(ToolCall(name, {"args": list(argv[1:])}, list(argv), pending_stdin(ctx.stdin),
                                            "builtin"))
                return 0
            if self.hooks.before or self.hooks.after or (active is not None and (active.watched or active.journal)):
                call = ToolCall(name, {"args": list(argv[1:])}, list(argv), pending_stdin(ctx.stdin), "builtin")
                return self._through_hooks(ctx, active, call, lambda c: invoke(ctx, argv, c.params["args"], started),
                                           _builtin_params)
            return invoke(ctx, argv, list(argv[1:]), started)[0]

        def invoke(ctx, argv, args, started) -> tuple:
            self._count_call(ctx, name, "builtin", argv, None, started)
            stdin = ctx.stdin.read_all()
            value = self._contained(ctx, _tool_run(ctx), name, lambda: self._call_builtin(fn, args, stdin, is_async),
                                    is_async, (name, "builtin", argv, None, started))
            if isinstance(value, BaseException):
                return self._fail(ctx, name, argv, None, started, self._failure_text(value), "builtin"), 0, 0
            try:
                out, err, status = _builtin_result(value)
            except BaseException as e:    # the wrong shape, a cycle, an object whose __str__ raises
                return self._fail(ctx, name, argv, None, started,
                                  cannot_print(e), "builtin"), 0, 0
            ctx.out(out)
            ctx.err(err)
            self._trace(ctx, name, "builtin", argv, None, status, started, len(out), len(err))
            return status, len(out), len(err)
        return run

    def _call_builtin(self, fn: Callable, args: list, stdin: str, is_async: bool):
        """fn's value (a coroutine if is_async), known meanwhile as a builtin of this tool."""
        if is_async:
            async def marked():
                _RUNNING_BUILTINS_OF.set(_RUNNING_BUILTINS_OF.get() | {self})   # the task's own context
                return await fn(args, stdin)
            return marked()
        token = _RUNNING_BUILTINS_OF.set(_RUNNING_BUILTINS_OF.get() | {self})
        try:
            return fn(args, stdin)
        finally:
            _RUNNING_BUILTINS_OF.reset(token)

    def _filesystem_for_call(self):
        return self.filesystem

    def _shell_config(self, table: dict, journal) -> ShellConfig:
        """ScriptedTool's, with this tool's host name and files (a shell made before, as a
        restored one, is kept on them)."""
        return dataclasses.replace(super()._shell_config(table, journal), hostname=self.hostname,
                                   fs=self.filesystem)

    def reset(self):
        """Forget the shell's state (variables, functions, directory); the files stay."""
        with self._lock:
            self._shell.clear()

    # -------------------------------------------------------- snapshots and history

    def snapshot(self, at=None, key=None, compress: bool = False) -> bytes:
        """The session (files and shell state) as bytes (format: tools/snapshot.py); `at`: a
        commit of its history instead. Signed with `key` (or the builder's snapshot_key)."""
        from . import snapshot
        key = key if key is not None else self.snapshot_key
        if at is not None:
            commit = self.history.find(at)
            return snapshot.encode(commit.manifest, self.history.blobs_of(commit), key, compress)
        with self._lock:
            manifest, blobs = self._capture()
            return snapshot.encode(manifest, blobs, key, compress)

    def restore(self, data: bytes, key=None):
        """Bring the session back to a snapshot: its files and shell state replace this tool's
        (its configured host mounts are attached at their mount points). SnapshotError, and
        nothing changed, for a snapshot that is damaged, forged, too large for this tool's limits
        or not signed with the key."""
        from . import snapshot
        key = key if key is not None else self.snapshot_key
        with self._lock:
            _, fs, shell = snapshot.load_session(data, self.limits, key, snapshot.host_mounts(self.filesystem),
                                                 expect_user=self.username)
            self._install(fs, shell)

    def commit(self, message: Optional[str] = None) -> str:
        """Record the session in its history; the commit's id (HistoryFull past the budget)."""
        with self._lock:
            manifest, blobs = self._capture(known=self.history.blobs)
            return self.history.add(manifest, blobs, message).id

    def checkout(self, ref) -> str:
        """Bring the session back to a commit (an id, a prefix of one, or its number); the next
        commit follows it. Returns the commit's id."""
        from . import snapshot
        commit = self.history.find(ref)
        with self._lock:
            _, fs, shell = snapshot.rebuild(commit.manifest, self.history.blobs_of(commit), self.limits,
                                            snapshot.host_mounts(self.filesystem), self.username)
            self._install(fs, shell)
            self.history.head = commit.id
        return commit.id

    def log(self) -> list:
        """The commits, newest first: dicts of id, parent, message, time, files, variables, head."""
        return self.history.log()

    def diff(self, a=None, b=None) -> dict:
        """What changed from commit `a` to commit `b` (None: the session as it is now): files,
        variables and functions added, removed and changed."""
        return history_diff(self._manifest_of(a), self._manifest_of(b))

    def prune(self, keep: int) -> int:
        """Keep the newest `keep` commits of the history; the bytes freed."""
        return self.history.prune(keep)

    def session_parts(self, known=None) -> tuple:
        """The session as (manifest, blobs) (tools/snapshot.py), the blobs its live contents,
        to be read before the tool runs again; `known` (a snapshot.Digests or a dict of digests)
        spares hashing contents that did not change. For a store that keeps the parts apart."""
        with self._lock:
            return self._capture(known=known)

    def take_session(self, fs, session: ShellSession):
        """Take files and a shell rebuilt from a session's parts (snapshot.rebuild)."""
        with self._lock:
            self._install(fs, session)

    def _manifest_of(self, ref) -> dict:
        if ref is None:
            with self._lock:
                return self._capture(known=self.history.blobs)[0]
        return self.history.find(ref).manifest

    def _capture(self, known=None) -> tuple:
        from . import snapshot
        return snapshot.capture(self.filesystem, None if self.fresh else self._shell, self.username,
                                self.hostname, known=known)

    def _install(self, fs, session: ShellSession):
        """Take the files and the shell of a restored session (a fresh-shell tool, the files)."""
        self.filesystem = fs if fs is not None else MemoryFs(user=self.username, limits=self.limits)
        if self.fresh:
            self._shell.clear()
        else:
            self._shell.take(session)

    @property
    def history(self) -> History:
        """The session's commits (made on first use; bounded by max_history_bytes)."""
        if self._history is None:
            self._history = History(self.max_history_bytes if self.max_history_bytes is not None
                                    else self.limits.max_fs_bytes + self.limits.max_shell_state_bytes)
        return self._history

    def kept_bytes(self) -> int:
        """What the session keeps: its files, its shell's state and its history."""
        state = self._shell.state_bytes()
        return self.filesystem.used_bytes + state + (self._history.used_bytes if self._history is not None else 0)


# The BashTools whose builtin is running in this context (on the builtin's thread, and on the
# threads of the calls it makes): a nested execute() of one of them is refused.
_RUNNING_BUILTINS_OF: contextvars.ContextVar = contextvars.ContextVar("running_builtins_of", default=frozenset())


def _refusal(message: str, status: int, error: str) -> ToolResponse:
    return ToolResponse("", f"bash: {message}\n", status, error)


def _builtin_params(params: dict) -> dict:
    """A before_tool hook's replacement for a builtin's call: {"args": [str, ...]}."""
    args = params.get("args")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise FlagError('a builtin\'s parameters are {"args": [strings]}')
    return {"args": list(args)}


def _builtin_result(value) -> tuple:
    """A builtin's return value as (stdout, stderr, status); ValueError for a tuple of another
    shape (result_text raises for a value with no text form)."""
    if not isinstance(value, tuple):
        return result_text(value), "", 0
    if len(value) not in (2, 3):
        raise ValueError(f"a tuple of {len(value)} values, not (stdout, status) or (stdout, stderr, status)")
    status = value[-1]
    if not isinstance(status, int):
        raise ValueError(f"the status is a {type(status).__name__}, not an integer")
    err = result_text(value[1]) if len(value) == 3 else ""
    return result_text(value[0]), err, status & 255


@dataclass
class BashToolBuilder(HostPolicyOptions):
    """BashTool.builder().username("agent").hostname("box").limits(...).env(k, v)
    .builtin(name, fn).files({...}).mount(at, host_dir).build()"""
    _username: str = "user"
    _hostname: str = "sandbox"
    _limits: Optional[ExecutionLimits] = None
    _env: dict = field(default_factory=dict)
    _builtins: dict = field(default_factory=dict)
    _shadow: set = field(default_factory=set)
    _files: dict = field(default_factory=dict)
    _mounts: list = field(default_factory=list)
    _filesystem: Optional[MemoryFs] = None
    _fresh: bool = False
    _name: str = "bash"
    _network: tuple = ()
    _network_policy: Optional[NetworkPolicy] = None
    _sanitize: bool = True
    _snapshot: Optional[bytes] = None
    _snapshot_key: Optional[bytes] = None
    _history_bytes: Optional[int] = None
    _hooks: Hooks = field(default_factory=Hooks)
    _telemetry: Optional[TelemetryConfig] = None

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

    def builtin(self, name: str, fn: Callable, shadow: bool = False) -> "BashToolBuilder":
        """A command of the host's: fn(args, stdin) -> text (or (stdout, stderr, status)).
        `shadow=True` lets it take the name of a shell builtin or command."""
        self._builtins[name] = fn
        if shadow:
            self._shadow.add(name)
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

    def fresh_shell(self, fresh: bool = True) -> "BashToolBuilder":
        self._fresh = fresh
        return self

    def sanitize_errors(self, enabled: bool = True) -> "BashToolBuilder":
        """Builtins' errors reach scripts sanitised (the default) or as raised."""
        self._sanitize = enabled
        return self

    def from_snapshot(self, data: bytes, key=None) -> "BashToolBuilder":
        """Start from a snapshot (tool.snapshot()): its files, shell state, user and host name;
        checked at build() against the builder's limits (and key: `key` here, or
        snapshot_key()). Files and mounts given to the builder are added over it."""
        self._snapshot = data
        if key is not None:
            self._snapshot_key = key
        return self

    def snapshot_key(self, key) -> "BashToolBuilder":
        """Sign this tool's snapshots with HMAC-SHA256 under `key`, and refuse to restore any
        snapshot not signed with it."""
        self._snapshot_key = key
        return self

    def max_history_bytes(self, limit: int) -> "BashToolBuilder":
        """The most the tool's history (commit) may keep; by default as much as its files and
        shell state may (max_fs_bytes + max_shell_state_bytes)."""
        self._history_bytes = limit
        return self

    def build(self) -> BashTool:
        restored = None
        if self._snapshot is not None:
            from . import snapshot
            limits = self._limits or ExecutionLimits()
            loaded = snapshot.decode(self._snapshot, snapshot.SnapshotLimits.of(limits), self._snapshot_key)
            restored = snapshot.rebuild(loaded.manifest, loaded.blobs, limits)
            self._username = restored[0]["username"]
            self._hostname = restored[0]["hostname"]
            self._limits = limits
        tool = BashTool(self._username, self._hostname, self._limits, self._env, None,
                        self._filesystem, self._builtins, self._fresh, self._name, self._sanitize,
                        self._shadow)
        if restored is not None:
            tool._install(restored[1], restored[2])
        for path, content in self._files.items():
            tool.filesystem.add_file(path, content)
        for at, host_dir, read_only in self._mounts:
            tool.filesystem.mount(at, host_dir, read_only)
        tool.network_allow = self._network
        tool.snapshot_key = tool.continuation_key = self._snapshot_key
        tool.max_history_bytes = self._history_bytes
        tool.network_policy = self._network_policy
        tool.hooks = self._hooks.copy()
        tool.telemetry = self._telemetry
        return tool


def _file_states(fs) -> dict:
    """{path: what a plan compares} for every file of `fs`: kind, mode, size, mtime and link
    target (a directory by its kind and mode: its mtime moves whenever an entry does)."""
    return {path: (st.kind, st.mode) if st.kind == "d" else (st.kind, st.mode, st.size, st.mtime, st.target)
            for path, st in fs.tree().items()}
