"""The state of one running shell (variables, functions, options, I/O) and the operations the
compiled closures, the expander and the builtins call on it."""
from __future__ import annotations

import random
from typing import Callable, Optional

from .quoting import quote_for_reuse
from .lexer import decode_ansi_c
from ..base.errors import (bounded, BreakLoop, ContinueLoop, ErrexitSignal, ExitSignal, FatalError,
                     LimitExceeded, ReturnSignal)
from ..fs import NO_FS, absolute
from ..base.limits import wall_clock
from .printer import body_text
from .state import (EXPORT, READONLY, IndexedArray, Var)
from .streams import EMPTY_INPUT, InputStream, PipeBuffer, SubstitutionBuffer, discard  # noqa: F401
from .variables import DEFAULT_IFS, NO_COMMAND, SHARED_RANDOM, TempScope, Variables, attribute_letters

HOME = "/home/user"
BASH_VERSION = "5.2.15(1)-release"


class DeclarationArg:
    """`name=value` given to declare/local/export/readonly, kept apart from plain strings."""
    __slots__ = ("name", "index", "append", "value", "apply_array")

    def __init__(self, name, index, append, value, apply_array):
        self.name = name
        self.index = index
        self.append = append
        self.value = value
        self.apply_array = apply_array

    def __str__(self):
        return f"{self.name}={self.value or ''}"


class Function:
    __slots__ = ("name", "body", "node", "script", "text_length")

    def __init__(self, name: str, body: Callable, node, script: str = ""):
        self.name = name
        self.body = body
        self.node = node
        self.script = script    # the text the function was defined in
        self.text_length = -1   # of its body, once measured (session_state)

    @property
    def source(self) -> str:
        """The body's text, for `type` and `declare -f`: found when asked, which few do."""
        return body_text(self.script, self.node.body.pos) if self.script else ""


OPTION_NAMES = {"e": "errexit", "u": "nounset", "x": "xtrace", "f": "noglob", "C": "noclobber",
                "a": "allexport", "v": "verbose", "n": "noexec", "h": "hashall", "B": "braceexpand",
                "T": "functrace", "E": "errtrace"}
# the options `set` changes, which are attributes of the shell (and what `local -` saves)
SET_OPTIONS = ("errexit", "nounset", "xtrace", "pipefail", "noglob", "noclobber", "allexport",
               "verbose", "noexec", "posix", "emacs", "vi", "functrace", "errtrace")
LONG_ONLY_OPTIONS = ("pipefail", "posix", "emacs", "vi", "ignoreeof", "interactive-comments",
                     "monitor", "notify", "nolog", "functrace", "errtrace", "histexpand", "history",
                     "keyword", "onecmd", "physical", "privileged")
SHOPT_DEFAULTS = {"extglob": False, "nullglob": False, "failglob": False, "nocasematch": False,
                  "nocaseglob": False, "dotglob": False, "globstar": False, "lastpipe": False,
                  "expand_aliases": False, "inherit_errexit": False, "patsub_replacement": True,
                  "extquote": True, "sourcepath": True, "xpg_echo": False, "globasciiranges": True,
                  "assoc_expand_once": False, "localvar_inherit": False, "localvar_unset": False,
                  "shift_verbose": False, "checkwinsize": False, "interactive_comments": True,
                  "login_shell": False, "progcomp": True, "promptvars": True, "hostcomplete": False,
                  "autocd": False, "globskipdots": True, "progcomp_alias": False,
                  "noexpand_translation": False, "varredir_close": False,
                  "cmdhist": True, "lithist": False, "compat31": False, "compat32": False,
                  "compat40": False, "compat41": False, "compat42": False, "compat43": False,
                  "compat44": False, "complete_fullquote": True, "direxpand": False,
                  "dirspell": False, "execfail": False, "extdebug": False, "force_fignore": True,
                  "gnu_errfmt": False, "histappend": False, "histreedit": False,
                  "histverify": False, "huponexit": False, "mailwarn": False,
                  "no_empty_cmd_completion": False, "restricted_shell": False, "cdable_vars": False,
                  "cdspell": False, "checkhash": False, "checkjobs": False}


_DEFAULTS_BY_HOME: dict = {}


def _default_variables(home: str) -> dict:
    """The variables every shell starts with. The Var objects are shared by all shells (no
    shell owns them: the first change copies one, see Var.owner), so a new shell does not
    build them again."""
    defaults = _DEFAULTS_BY_HOME.get(home)
    if defaults is None:
        exported = ("HOME", "PWD", "SHELL", "USER", "SHLVL", "HOSTNAME")
        values = {"HOME": home, "PWD": home, "IFS": DEFAULT_IFS, "PS4": "+ ", "OPTIND": "1",
                  "BASH_VERSION": BASH_VERSION, "BASH": "/bin/bash", "HOSTNAME": "sandbox",
                  "SHELL": "/bin/bash", "USER": "user", "UID": "1000", "EUID": "1000",
                  "PPID": "4241", "SHLVL": "1", "OSTYPE": "linux-gnu", "HOSTTYPE": "x86_64",
                  "MACHTYPE": "x86_64-pc-linux-gnu", "OPTERR": "1"}
        defaults = {name: Var(value, EXPORT if name in exported else 0) for name, value in values.items()}
        defaults["BASH_VERSINFO"] = Var(IndexedArray(["5", "2", "15", "1", "release",
                                                      "x86_64-pc-linux-gnu"]), READONLY)
        if len(_DEFAULTS_BY_HOME) < 64:          # one per file system home, in practice one or two
            _DEFAULTS_BY_HOME[home] = defaults
    return defaults


class Shell(Variables):
    """One shell: the top level of a script, or a subshell copied from its parent."""
    random: "random.Random"        # $RANDOM's generator: the shared one (set below) or its own

    def __init__(self, run, commands: dict, builtins: dict, env: Optional[dict] = None,
                 stdin: InputStream = EMPTY_INPUT, compile_script: Optional[Callable] = None,
                 compiler=None, out: Optional[Callable] = None, err: Optional[Callable] = None, fs=None):
        self.run = run                      # the execution's state (shell/run.py): owner of the budget
        self.budget = run.budget            # (kept here too: the command loop reads it on every command)
        self.limits = run.limits
        fs = fs if fs is not None else run.fs
        self.fs = fs if fs is not None else NO_FS
        self.cwd = self.fs.home if self.fs.enabled else HOME
        self.umask = 0o022
        self.hostname = "sandbox"
        self.dirstack: list[str] = []        # pushd's saved directories (below the current one)
        self.commands = commands
        self.builtins = builtins
        # the shell's own builtins and commands whose names a tool took (name -> ("builtin" or
        # "command", fn)): `builtin NAME` and `command NAME` still reach them
        self.shadowed: dict[str, tuple] = {}
        self.compile_script = compile_script     # text -> a compiled script (cached)
        self.compiler = compiler                 # the Compiler: words and assignments met at run time
        self.globals: dict[str, Var] = {}
        self.globals_shared = False         # the dict is a parent's: own_globals() before a change
        self.scopes: list[dict[str, Var]] = []
        self.functions: dict[str, Function] = {}
        self.functions_shared = False   # a subshell's table is its parent's until it changes it
        self.exported_functions: set[str] = set()     # export -f: seen by `bash -c` and scripts
        self.positional: list[str] = []
        self.status = 0
        self.lineno: int = 0
        self.out = out if out is not None else run.out.write
        self.err = err if err is not None else run.err.write
        self.stdin = stdin
        self.extra_fds: dict[int, Callable] = {}
        self.jobs = None                    # the background jobs it started (shell/jobs.py)
        self.procsub_frame: Optional[list] = None   # open process substitutions (shell/jobs.py)
        self.last_job_pid: Optional[int] = None     # $!
        self.pids = [4300]                  # the next job's $!, one count for all the shells
        self.random_state: Optional[list] = None    # [seed, last value] once RANDOM=N seeded it
        self.errexit = self.nounset = self.xtrace = self.pipefail = False
        self.noclobber = self.allexport = self.noglob = self.noexec = self.verbose = False
        self.posix = False
        self.functrace = self.errtrace = False
        self.trap_depth = 0                 # > 0 while a trap's action runs
        self.xtrace_depth = 0               # command substitutions and evals around: `set -x`'s ++
        self.bash_command: tuple = NO_COMMAND      # $BASH_COMMAND: the simple command running or next
        self.return_trap_depth = 0          # the RETURN trap fires for calls at least this deep
        self.emacs = self.vi = False
        # `local -`: (call depth, the options saved, the next outer entry), or None; a tuple
        # chain, so a subshell shares it safely
        self.local_options: Optional[tuple[int, tuple, Optional[tuple]]] = None
        self.shopts = dict(SHOPT_DEFAULTS)
        self.errexit_suppressed = 0
        self.subshell_level: int = 0
        self.funcnames: list[str] = []
        self.call_lines: list[int] = []     # BASH_LINENO: where each running function was called
        self.last_arg: str = ""                  # $_
        self.call_depth = 0
        self.loop_depth = 0
        self.cmdsub_status = 0
        self.traps: dict[str, str] = {}
        self.err_trap_held = 0      # > 0: no ERR trap now (inside it, or in a pipeline stage)
        self.script_name = "bash"
        self.pid: int = 4242
        self.started: float = wall_clock()
        self.pipestatus: list[int] = [0]
        self.in_subshell = False
        self.isolate_tools = False          # under `timeout`: sync tools run on a helper thread
        self.var_owner = object()           # the Vars this shell may change in place (Var.owner)
        self.state_bytes = 0                # what it keeps, measured after a call (session_state)
        self._init_variables(env or {})

    def _init_variables(self, env: dict):
        defaults = _default_variables(self.cwd)
        if not env:
            self.globals.update(defaults)
            return
        g = self.globals
        for name, value in env.items():
            g[name] = Var(str(value), EXPORT)
        for name, var in defaults.items():
            if name not in g:
                g[name] = var

    # ------------------------------------------------------------ subshells

    def subshell(self) -> "Shell":
        """A copy for ( ), pipeline stages and command substitution: changes stay inside it."""
        if self.subshell_level >= self.limits.max_subshell_depth:
            raise LimitExceeded("max_subshell_depth",
                                f"subshell nesting deeper than {self.limits.max_subshell_depth} "
                                f"(max_subshell_depth)")
        child = object.__new__(Shell)
        d = child.__dict__
        d.update(self.__dict__)
        # the variables are shared, copied when the child first changes one (Var.owner); the
        # parent runs again only once the child has finished (pipeline stages run one after
        # another), so it keeps changing its own in place
        child.var_owner = object()
        # the dict of globals too is shared, copied when the child first changes one of them
        # (own_globals): $( ) costs the same with 10 variables or 10,000
        child.globals, child.globals_shared = self.globals, True
        child.scopes = ([s.copy_scope() if type(s) is TempScope else dict(s) for s in self.scopes]
                        if self.scopes else [])
        # shared until changed: own_functions() copies the table, and `shopt` replaces the
        # options' dict rather than writing into it
        child.functions, child.functions_shared = self.functions, True
        child.exported_functions = set(self.exported_functions)
        # (the positional parameters are shared: every change replaces the list)
        child.dirstack = list(self.dirstack)
        child.extra_fds = dict(self.extra_fds)
        child.jobs = self.jobs.inherited() if self.jobs is not None else None
        child.procsub_frame = None
        child.funcnames = list(self.funcnames)
        child.call_lines = list(self.call_lines)
        child.traps = {}
        child.subshell_level = self.subshell_level + 1
        child.loop_depth = 0
        child.in_subshell = True
        return child

    def own_functions(self) -> dict:
        """The function table, to change it (a subshell copies its parent's first)."""
        if self.functions_shared:
            self.functions = dict(self.functions)
            self.functions_shared = False
        return self.functions

    def script_shell(self) -> "Shell":
        """A fresh shell as bash starts one for a script file or `bash -c`: it inherits the
        exported variables, the working directory, the descriptors and the filesystem."""
        child = Shell(self.run, self.commands, self.builtins, self.exported_env(), stdin=self.stdin,
                      compile_script=self.compile_script, compiler=self.compiler, out=self.out,
                      err=self.err, fs=self.fs)
        child.cwd, child.umask, child.extra_fds = self.cwd, self.umask, dict(self.extra_fds)
        child.pids = self.pids
        child.hostname = self.hostname
        child.random = self.random
        child.shadowed = self.shadowed
        return child

    def attach(self, run, stdin: InputStream, commands: dict):
        """A persistent shell's next call: its run, input and commands."""
        self.run, self.budget, self.limits = run, run.budget, run.limits
        self.out, self.err, self.stdin = run.out.write, run.err.write, stdin
        self.commands = commands

    def run_subshell(self, fn: Callable, command: bool = False) -> int:
        """Run fn in this (sub)shell; exit, errexit and fatal errors end only this shell
        (`command`: see run_contained). Its background jobs run at its end (shell/jobs.py)."""
        status = self.run_exit_trap(self.run_contained(fn, command))
        if self.jobs is not None or self.procsub_frame:
            from .jobs import finish_jobs
            finish_jobs(self)
        return status

    def run_contained(self, fn: Callable, command: bool = False) -> int:
        """fn's status; exit, errexit and fatal errors end only fn, as they end a subshell.
        `command`: fn is a simple command that bash forks alone (a pipeline stage), which an
        error that exits the shell (an unbound variable under `set -u`) ends with its own
        status, 127; a subshell ends with 1."""
        try:
            status = fn(self)
        except ExitSignal as e:
            status = e.status
        except ErrexitSignal as e:
            status = e.status
        except FatalError as e:
            self.error(e.message)
            status = 1 if e.exits and not command else e.status
        except (BreakLoop, ContinueLoop):
            status = 0
        except ReturnSignal as e:
            status = e.status
        return status

    def run_exit_trap(self, status: int) -> int:
        action = self.traps.pop("EXIT", None)
        if action:
            self.status = status
            self.trap_depth += 1
            try:
                self.eval_string(action)
            except ExitSignal as e:
                status = e.status
            finally:
                self.trap_depth -= 1
        return status

    def command_substitution(self, body: Callable) -> str:
        # under the clock, as a command is: 500,000 empty `` in one word ran no command, and so
        # never read the clock, for 7 s past a 2 s deadline once its parse was quick enough
        self.budget.check_stop()
        child = self.subshell()
        buf = SubstitutionBuffer(self.budget)
        child.out = buf.write
        child.xtrace_depth += 1
        if not self.shopts["inherit_errexit"]:
            child.errexit = False
        child.status = self.status
        status = child.run_subshell(body)
        self.cmdsub_status = status
        self.status = status
        text = buf.text()
        if "\0" in text:           # bash strings cannot hold NUL bytes: bash drops them
            text = text.replace("\0", "")
        if len(text) > 4096:
            if len(text) > self.limits.max_string_length:
                raise LimitExceeded("max_string_length", "command substitution output exceeds "
                                    f"{self.limits.max_string_length} characters (max_string_length)")
            self.budget.note(len(text))
        return text.rstrip("\n")

    def file_substitution(self, name: str) -> str:
        """`$(< file)`: the file's contents without trailing newlines."""
        from ..fs import FsError, access
        try:
            text = access.read_text(self, name)
            self.cmdsub_status = 0
        except FsError as e:
            self.error(f"{name}: {access.redirect_message(e)}")
            self.cmdsub_status = 1
            return ""
        return text.replace("\0", "").rstrip("\n")

    # ------------------------------------------------------------ messages

    def path(self, name: str) -> str:
        """A path operand made absolute against the working directory."""
        return absolute(self.cwd, name)

    def error(self, message: str):
        """A diagnostic as bash prints it for a script: `bash: line N: message` (a script run
        by path or `bash FILE` names its path: `s.sh: line N: message`)."""
        self.err(bounded(f"{self.script_name}: line {self.lineno}: {message}") + "\n")

    # ------------------------------------------------------------ misc

    def tilde(self, user: str) -> str:
        if user == "":
            home = self.get_value("HOME")
            return HOME if home is None else home
        if user == "+":
            return self.get_value("PWD") or HOME
        if user == "-":
            return self.get_value("OLDPWD") or "~-"
        if user == getattr(self.fs, "user", "user"):
            return getattr(self.fs, "home", HOME) if self.fs.enabled else HOME
        if user == "root":
            return "/root"
        return "~" + user

    def option_letters(self) -> str:
        """$- in bash's order (hashall and braceexpand are always on; -c: a command string)."""
        return "".join(letter for letter, name in _DOLLAR_DASH if name is None or getattr(self, name)) + "c"

    def transform(self, value: str, letter: str, p) -> str:
        if letter == "Q":
            return quote_for_reuse(value)
        if letter == "E":
            return decode_ansi_c(value)
        if letter == "P":
            return value
        if letter == "U":
            return value.upper()
        if letter == "u":
            return value[:1].upper() + value[1:]
        if letter == "L":
            return value.lower()
        name = p.name
        if p.indirect:                     # ${!r@a}: the variable r names (a[0] -> a)
            if p.index is not None and p.index.literal() in ("@", "*"):   # ${!r[@]@a}: r's values name it
                var = self.lookup(p.name)
                reference = " ".join(var.values()) if var is not None else ""
            else:
                reference = self.get_value(p.name) or ""
            name = reference.split("[", 1)[0]
        if letter == "a":
            var = self.lookup(name)
            return attribute_letters(var) if var is not None else ""
        if letter == "A":
            return f"{name}={quote_for_reuse(value)}"
        if letter in "Kk":
            return quote_for_reuse(value)
        return value

    def eval_string(self, text: str, name: str = "eval") -> int:
        assert self.compile_script is not None   # (every shell that runs scripts is given one)
        fn = self.compile_script(text)
        return fn(self)

    def _run_trap(self, name: str, status: int):
        """A DEBUG or RETURN trap: its commands keep the script's $LINENO and $BASH_COMMAND
        (trap_depth), and $? is the same after it."""
        self.trap_depth += 1
        try:
            self.eval_string(self.traps[name])
        finally:
            self.trap_depth -= 1
            self.status = status

    def _run_return_trap(self, status: int):
        """The RETURN trap as a function ends (still inside it); then its caller's turn."""
        self.return_trap_depth = self.call_depth - 1
        self._run_trap("RETURN", status)

    def run_debug_trap(self):
        """The DEBUG trap before a command (in functions only under `set -T`), not within itself."""
        if not self.funcnames or self.functrace:
            self._run_trap("DEBUG", self.status)

    def save_local_options(self):
        """`local -`: the options as they are now come back when the running function
        returns, however it ends (a limit or an error too)."""
        if self.local_options is None or self.local_options[0] != self.call_depth:
            saved = tuple(getattr(self, name) for name in SET_OPTIONS)
            self.local_options = (self.call_depth, saved, self.local_options)

    def restore_local_options(self):
        assert self.local_options is not None   # (callers check there is an entry)
        _, saved, self.local_options = self.local_options
        for name, value in zip(SET_OPTIONS, saved):
            setattr(self, name, value)

    def run_function(self, func: Function, argv: list) -> int:
        if self.call_depth >= self.limits.max_function_depth:
            raise LimitExceeded("max_function_depth",
                                f"{func.name}: maximum function nesting level exceeded "
                                f"({self.limits.max_function_depth}, max_function_depth)")
        saved_positional = self.positional
        self.positional = argv[1:]
        self.funcnames.append(func.name)
        self.call_lines.append(self.lineno)
        self.scopes.append({})
        self.call_depth += 1
        saved_loop = self.loop_depth
        self.loop_depth = 0
        try:
            try:
                status = func.body(self)
            except ReturnSignal as r:
                status = r.status
            if "RETURN" in self.traps and (self.return_trap_depth >= self.call_depth or self.functrace):
                self._run_return_trap(status)
            return status
        finally:
            if self.local_options is not None and self.local_options[0] == self.call_depth:
                self.restore_local_options()
            self.call_depth -= 1
            self.loop_depth = saved_loop
            self.scopes.pop()
            self.funcnames.pop()
            self.call_lines.pop()
            self.positional = saved_positional


_DOLLAR_DASH = (("a", "allexport"), ("e", "errexit"), ("f", "noglob"), ("h", None), ("n", "noexec"),
                ("u", "nounset"), ("v", "verbose"), ("x", "xtrace"), ("B", None), ("C", "noclobber"),
                ("E", "errtrace"), ("T", "functrace"))

# A shell draws $RANDOM from `sh.random`: the shared generator, unless the shell was given one of
# its own (a snapshot does, so that a restored shell draws the same numbers as the original).
Shell.random = SHARED_RANDOM
