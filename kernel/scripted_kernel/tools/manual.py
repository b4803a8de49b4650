"""What `help NAME` says about a shell builtin or keyword, as bash's `help` does, and the one
page per name behind `man NAME` cells and Shift-Tab in the notebook.

bash's `help` prints `NAME: SYNOPSIS` and an indented description; `help -s` the synopsis line,
`help -d` `NAME - summary`. The synopses are bash 5.2's; the descriptions are short and name
what this interpreter leaves out (logic mode has no jobs, history or aliases).
"""
from __future__ import annotations

import textwrap

_NOT_HERE = "Not available here: the interpreter runs no host processes and has no terminal."
_NO_JOB_CONTROL = "There is no job control (no terminal): bash says so too. Jobs run when waited for."

# name: (synopsis, summary, more lines)
BUILTINS: dict[str, tuple] = {
    ":": (": [arguments]", "Null command: no effect; the status is 0.", ()),
    ".": (". filename [arguments]", "Execute commands from a file in the current shell.",
          ("Needs a filesystem (not in logic mode).",)),
    "[": ("[ arg... ]", "Evaluate a conditional expression; the last argument must be `]`.",
          ("A synonym of `test`.",)),
    "alias": ("alias [-p] [name[=value] ... ]", "Define or display aliases.", (_NOT_HERE,)),
    "bash": ("bash [-ceuxo option] [file | -c string] [arguments]",
             "Run a script in a new shell (a subshell of this interpreter).", ()),
    "bg": ("bg [job_spec ...]", "Move jobs to the background.", (_NO_JOB_CONTROL,)),
    "bind": ("bind [-lpsvPSVX] [-m keymap] [-f filename] ...", "Set Readline key bindings.", (_NOT_HERE,)),
    "break": ("break [n]", "Exit for, while, or until loops.",
              ("With N, break out of N enclosing loops.",)),
    "builtin": ("builtin [shell-builtin [arg ...]]", "Execute a shell builtin, bypassing functions.", ()),
    "caller": ("caller [expr]", "Return the context of the current subroutine call.", ()),
    "cd": ("cd [-L|[-P [-e]] [-@]] [dir]", "Change the shell working directory.",
           ("Without DIR, go to $HOME; `cd -` goes to $OLDPWD.",)),
    "command": ("command [-pVv] command [arg ...]", "Execute a simple command, bypassing functions.",
                ("-v prints how the name would be found, -V describes it.",)),
    "compgen": ("compgen [-abcdefgjksuv] [-o option] [-A action] [-G globpat] [word]",
                "Display possible completions.", (_NOT_HERE,)),
    "complete": ("complete [-abcdefgjksuv] [-pr] [-DEI] [-o option] [name ...]",
                 "Specify how arguments are to be completed.", (_NOT_HERE,)),
    "compopt": ("compopt [-o|+o option] [-DEI] [name ...]", "Modify completion options.", (_NOT_HERE,)),
    "continue": ("continue [n]", "Resume the next iteration of the enclosing loop.", ()),
    "declare": ("declare [-aAfFgiIlnrtux] [name[=value] ...] or declare -p [-aAfFilnrtux] [name ...]",
                "Set variable values and attributes.",
                ("-a indexed array, -A associative array, -i integer, -l/-u lower/upper case,",
                 "-n name reference, -r read-only, -x export, -g global in a function, -p print.")),
    "dirs": ("dirs [-clpv] [+N] [-N]", "Display the directory stack.", ()),
    "disown": ("disown [-h] [-ar] [jobspec ... | pid ...]", "Remove jobs from the current shell.",
               ("The job still runs when the shell ends; `jobs` and `wait` no longer see it.",)),
    "echo": ("echo [-neE] [arg ...]", "Write arguments to the standard output.",
             ("-n no trailing newline, -e interpret backslash escapes, -E do not (the default).",)),
    "enable": ("enable [-a] [-dnps] [-f filename] [name ...]", "Enable and disable shell builtins.", (_NOT_HERE,)),
    "eval": ("eval [arg ...]", "Execute arguments as a shell command.", ()),
    "exec": ("exec [-cl] [-a name] [command [argument ...]] [redirection ...]",
             "Replace the shell with the given command.",
             ("Without a command, its redirections apply to the current shell.",)),
    "exit": ("exit [n]", "Exit the shell with a status of N (the last command's if omitted).", ()),
    "export": ("export [-fn] [name[=value] ...] or export -p", "Set export attribute for shell variables.", ()),
    "false": ("false", "Return an unsuccessful result.", ()),
    "fc": ("fc [-e ename] [-lnr] [first] [last] or fc -s [pat=rep] [command]",
           "Display or execute commands from the history list.", (_NOT_HERE,)),
    "fg": ("fg [job_spec]", "Move job to the foreground.", (_NO_JOB_CONTROL,)),
    "getopts": ("getopts optstring name [arg ...]", "Parse option arguments.",
                ("Each call puts the next option letter in NAME and its argument in $OPTARG.",)),
    "hash": ("hash [-lr] [-p pathname] [-dt] [name ...]", "Remember or display program locations.", (_NOT_HERE,)),
    "help": ("help [-dms] [pattern ...]", "Display information about builtin commands and tools.",
             ("Without a name, lists the tools (and, as a whole notebook cell, opens the tool browser);",
              "with a tool's name, its flags; with a builtin's or keyword's name, this page.",
              "-d: a one-line description, -s: the synopsis only. Text commands answer `NAME --help`.")),
    "history": ("history [-c] [-d offset] [n] or history -anrw [filename]",
                "Display or manipulate the history list.", (_NOT_HERE,)),
    "jobs": ("jobs [-lnprs] [jobspec ...] or jobs -x command [args]", "Display status of jobs.",
             ("A job that has not run yet is Running; one that ran is shown once as Done or Exit N.",)),
    "kill": ("kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]",
             "Send a signal to a job.",
             ("A job that has not run yet never runs; `wait` then gives 128 + the signal's number.",)),
    "let": ("let arg [arg ...]", "Evaluate arithmetic expressions.",
            ("The status is 1 if the last expression evaluates to 0, else 0.",)),
    "local": ("local [option] name[=value] ...", "Define local variables (in a function).", ()),
    "logout": ("logout [n]", "Exit a login shell.", (_NOT_HERE,)),
    "mapfile": ("mapfile [-d delim] [-n count] [-O origin] [-s count] [-t] [-u fd] [-C callback] [-c quantum] [array]",
                "Read lines from the standard input into an indexed array variable.",
                ("-t strips the trailing newline; the array is MAPFILE by default.",)),
    "popd": ("popd [-n] [+N | -N]", "Remove directories from the stack and change to the new top.", ()),
    "printf": ("printf [-v var] format [arguments]", "Formats and prints ARGUMENTS under control of the FORMAT.",
               ("%s %d %i %u %x %o %e %f %g %c %b %q and %(fmt)T, with flags, width and precision;",
                "the format is reused until the arguments are consumed. -v VAR assigns instead of printing.")),
    "pushd": ("pushd [-n] [+N | -N | dir]", "Add directories to the stack and change to the new top.", ()),
    "pwd": ("pwd [-LP]", "Print the name of the current working directory.", ()),
    "read": ("read [-ers] [-a array] [-d delim] [-i text] [-n nchars] [-N nchars] [-p prompt] [-t timeout] "
             "[-u fd] [name ...]",
             "Read a line from the standard input and split it into fields.",
             ("-r keeps backslashes, -a reads into an array, -d DELIM ends the line at DELIM;",
              "the status is non-zero at end of input.")),
    "readarray": ("readarray [-d delim] [-n count] [-O origin] [-s count] [-t] [-u fd] [-C callback] "
                  "[-c quantum] [array]",
                  "Read lines from a file into an array variable.", ("A synonym for `mapfile`.",)),
    "readonly": ("readonly [-aAf] [name[=value] ...] or readonly -p", "Mark shell variables as unchangeable.", ()),
    "return": ("return [n]", "Return from a shell function (or a sourced script) with status N.", ()),
    "set": ("set [-abefhkmnptuvxBCEHPT] [-o option-name] [--] [-] [arg ...]",
            "Set or unset values of shell options and positional parameters.",
            ("-e exit on an error, -u unset variables are errors, -x trace commands,",
             "-o pipefail a pipeline fails when any part fails; `set -- ARGS` sets $1, $2, ...")),
    "sh": ("sh [-c string | file] [arguments]", "Run a script in a new shell (a subshell of this interpreter).", ()),
    "shift": ("shift [n]", "Shift positional parameters.", ()),
    "shopt": ("shopt [-pqsu] [-o] [optname ...]", "Set and unset shell options.",
              ("For example extglob, nullglob, failglob, globstar, nocasematch, lastpipe.",)),
    "source": ("source filename [arguments]", "Execute commands from a file in the current shell.",
               ("Needs a filesystem (not in logic mode).",)),
    "suspend": ("suspend [-f]", "Suspend shell execution.", (_NOT_HERE,)),
    "test": ("test [expr]", "Evaluate conditional expression.",
             ("Strings: -z -n = != < >; numbers: -eq -ne -lt -le -gt -ge; files: -e -f -d -s -r -w -x -L;",
              "! negates, -a and -o combine.")),
    "timeout": ("timeout [-s SIGNAL] [-k DURATION] DURATION COMMAND [ARG]...",
                "Run a command with a time limit; the status is 124 when it runs out.", ()),
    "times": ("times", "Display process times.", ()),
    "trap": ("trap [-lp] [[arg] signal_spec ...]", "Trap signals and other events.",
             ("EXIT, ERR, DEBUG and RETURN run here; signals never arrive.",)),
    "true": ("true", "Return a successful result.", ()),
    "type": ("type [-afptP] name [name ...]", "Display information about command type.", ()),
    "typeset": ("typeset [-aAfFgiIlnrtux] name[=value] ... or typeset -p [-aAfFilnrtux] [name ...]",
                "Set variable values and attributes.", ("A synonym for `declare`.",)),
    "ulimit": ("ulimit [-SHabcdefiklmnpqrstuvxPRT] [limit]", "Modify shell resource limits.", (_NOT_HERE,)),
    "umask": ("umask [-p] [-S] [mode]", "Display or set file mode mask.", ()),
    "unalias": ("unalias [-a] name [name ...]", "Remove each NAME from the list of defined aliases.", (_NOT_HERE,)),
    "unset": ("unset [-f] [-v] [-n] [name ...]", "Unset values and attributes of shell variables and functions.", ()),
    "wait": ("wait [-fn] [-p var] [id ...]", "Wait for job completion and return exit status.",
             ("Runs the job (and those started before it) to completion and gives its status;",
              "without an id, every job; -n the next one (127 when there is none).")),
    "discover": ("discover --categories | --category NAME | --tag TAG | --search TEXT [--json]",
                 "Find tools by category, tag or words of their name and description.",
                 ("As a whole notebook cell, opens the tool browser filtered that way.",)),
}

KEYWORDS: dict[str, tuple] = {
    "if": ("if COMMANDS; then COMMANDS; [ elif COMMANDS; then COMMANDS; ]... [ else COMMANDS; ] fi",
           "Execute commands based on conditional.", ()),
    "for": ("for NAME [in WORDS ... ] ; do COMMANDS; done", "Execute commands for each member in a list.",
            ("`for (( exp1; exp2; exp3 )); do COMMANDS; done` is the arithmetic form.",)),
    "while": ("while COMMANDS; do COMMANDS-2; done", "Execute commands as long as a test succeeds.", ()),
    "until": ("until COMMANDS; do COMMANDS-2; done", "Execute commands as long as a test does not succeed.", ()),
    "case": ("case WORD in [PATTERN [| PATTERN]...) COMMANDS ;;]... esac",
             "Execute commands based on pattern matching.", ()),
    "select": ("select NAME [in WORDS ... ;] do COMMANDS; done", "Select words from a list and execute commands.", ()),
    "function": ("function name { COMMANDS ; } or name () { COMMANDS ; }", "Define shell function.", ()),
    "time": ("time [-p] pipeline", "Report time consumed by pipeline's execution.", ()),
    "[[": ("[[ expression ]]", "Execute conditional command.",
           ("== and != match patterns, =~ matches a regular expression (groups in BASH_REMATCH);",
            "&& || ! and ( ) combine.")),
    "((": ("(( expression ))", "Evaluate arithmetic expression; the status is 1 if it is 0.", ()),
    "{": ("{ COMMANDS ; }", "Group commands as a unit.", ()),
    "!": ("! PIPELINE", "Negate the status of a pipeline.", ()),
}

_ALIASES = {"then": "if", "elif": "if", "else": "if", "fi": "if", "do": "for", "done": "for",
            "in": "for", "esac": "case", "}": "{", "]]": "[["}


def builtin_entry(name: str):
    """(name, synopsis, summary, more) for a builtin or keyword, or None."""
    key = _ALIASES.get(name, name)
    entry = BUILTINS.get(key) or KEYWORDS.get(key)
    if entry is None:
        return None
    return (key,) + entry


def builtin_help(name: str, mode: str = "") -> str:
    """bash's `help [-d|-s] NAME` text for a builtin or keyword ('' if there is none)."""
    entry = builtin_entry(name)
    if entry is None:
        return ""
    key, synopsis, summary, more = entry
    if mode == "-s":
        return f"{key}: {synopsis}\n"
    if mode == "-d":
        return f"{key} - {summary}\n"
    body = "".join(f"    {line}\n" for line in (summary, "", *more)) if more else f"    {summary}\n"
    return f"{key}: {synopsis}\n{body}"


def builtin_flags(name: str) -> list[str]:
    """The option letters a builtin's synopsis shows, as `-x` words."""
    entry = builtin_entry(name)
    if entry is None:
        return []
    import re
    flags = []
    for group in re.findall(r"\[\s*-([A-Za-z@]+)\b", entry[1]):
        for letter in group:
            if f"-{letter}" not in flags:
                flags.append(f"-{letter}")
    return flags


def names_list(width: int = 78) -> str:
    """The builtins and keywords in a few lines, for `help` without a name."""
    names = sorted(set(BUILTINS) - {"discover"} | set(KEYWORDS))
    return textwrap.fill(" ".join(names), width)


def page(name: str, tool=None) -> str:
    """The one page about NAME: a tool's help, a builtin's or keyword's bash help, or a text
    command's `--help` usage; '' when the name is none of these."""
    if tool is not None:
        registered = tool.tools.get(name)
        if registered is not None:
            from . import catalog
            return catalog.tool_help_text(registered.tool_def)
    text = builtin_help(name)
    if text:
        return text
    from ..commands import COMMANDS, usage_text
    if name in COMMANDS:
        return usage_text(name)
    return ""
