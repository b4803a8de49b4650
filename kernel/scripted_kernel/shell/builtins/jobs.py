"""Builtins of background jobs: wait, jobs, kill, disown, fg, bg (the jobs themselves, and
when they run: shell/jobs.py)."""
from __future__ import annotations

from ...base.errors import ExitSignal
from ..jobs import jobs_of
from .registry import builtin

_WAIT_USAGE = "wait: usage: wait [-fn] [-p var] [id ...]\n"
_JOBS_USAGE = "jobs: usage: jobs [-lnprs] [jobspec ...] or jobs -x command [args]\n"
_KILL_USAGE = ("kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... "
               "or kill -l [sigspec]\n")

# kill -l: bash's names on Linux, by number (32 and 33 are the C library's own)
_KILL_NAMES = {1: "HUP", 2: "INT", 3: "QUIT", 4: "ILL", 5: "TRAP", 6: "ABRT", 7: "BUS", 8: "FPE",
               9: "KILL", 10: "USR1", 11: "SEGV", 12: "USR2", 13: "PIPE", 14: "ALRM", 15: "TERM",
               16: "STKFLT", 17: "CHLD", 18: "CONT", 19: "STOP", 20: "TSTP", 21: "TTIN", 22: "TTOU",
               23: "URG", 24: "XCPU", 25: "XFSZ", 26: "VTALRM", 27: "PROF", 28: "WINCH", 29: "IO",
               30: "PWR", 31: "SYS"}
for _n in range(34, 65):
    _KILL_NAMES[_n] = ("RTMIN" + (f"+{_n - 34}" if _n < 49 else "")) if _n < 50 else \
        ("RTMAX" + (f"-{64 - _n}" if _n < 64 else ""))


_KILLED_AS = {1: "Hangup", 2: "Interrupt", 3: "Quit", 9: "Killed", 10: "User defined signal 1",
              12: "User defined signal 2", 13: "Broken pipe", 14: "Alarm clock", 15: "Terminated"}


def _options(sh, args: list, letters: str, with_value: str, usage: str, name: str):
    """Leading options of a job builtin: (set of letters, {letter: value}, operands), or None
    after reporting a bad one (status 2)."""
    flags: set = set()
    values: dict = {}
    while args and args[0].startswith("-") and len(args[0]) > 1:
        a = args.pop(0)
        if a == "--":
            break
        k = 1
        while k < len(a):
            c = a[k]
            if c in with_value:
                value = a[k + 1:] or (args.pop(0) if args else None)
                if value is None:
                    sh.error(f"{name}: -{c}: option requires an argument")
                    sh.err(usage)
                    return None
                values[c] = value
                break
            if c not in letters:
                sh.error(f"{name}: -{c}: invalid option")
                sh.err(usage)
                return None
            flags.add(c)
            k += 1
    return flags, values, args


def _job_for(sh, table, name: str, spec: str):
    """(job or None, pid or None, error reported): a %spec or a pid operand."""
    if spec.startswith("%"):
        job = table.find(spec)
        if job is None:
            sh.error(f"{name}: {spec}: no such job")
            return None, None, True
        return job, job.pid, False
    if not (spec.isascii() and spec.isdigit()):
        sh.error(f"{name}: `{spec}': not a pid or valid job spec")
        return None, None, True
    pid = int(spec)
    return table.by_pid(pid), pid, False


@builtin("wait")
def wait(sh, argv):
    parsed = _options(sh, argv[1:], "fn", "p", _WAIT_USAGE, "wait")
    if parsed is None:
        return 2
    flags, values, operands = parsed
    table = jobs_of(sh)
    store = values.get("p")
    if "n" in flags:
        candidates = []
        for spec in operands:
            job, _, bad = _job_for(sh, table, "wait", spec)
            if job is not None:
                candidates.append(job)
        pool = [j for j in (candidates or table.jobs) if j in table.jobs and not j.foreign]
        job = next((j for j in pool if j.state != "Running"), None) or \
            next((j for j in pool if j.state == "Running"), None)
        if job is None:
            return 127
        status = table.run(sh, job)
        table.forget(job)
        if store:
            sh.set_var(store, str(job.pid))
        return status
    if not operands:
        for job in list(table.jobs):
            if not job.foreign:
                table.run(sh, job)
                table.forget(job)
        return 0
    status = 0
    for spec in operands:
        job, pid, bad = _job_for(sh, table, "wait", spec)
        if bad:
            status = 127 if spec.startswith("%") else 2
            continue
        if job is not None and not job.foreign:
            status = table.run(sh, job)
            table.forget(job)
        elif pid in table.finished:
            status = table.finished[pid]
        else:
            sh.error(f"wait: pid {pid} is not a child of this shell")
            status = 127
        if store:
            sh.set_var(store, str(pid))
    return status


@builtin("jobs")
def jobs(sh, argv):
    parsed = _options(sh, argv[1:], "lnprs", "", _JOBS_USAGE, "jobs")
    if parsed is None:
        return 2
    flags, _, operands = parsed
    table = jobs_of(sh)
    listed = [j for j in table.jobs if j.state != "Killed"]   # (bash shows no killed job here)
    status = 0
    if operands:
        chosen = []
        for spec in operands:
            job = table.find(spec) if spec.startswith("%") else table.by_pid(int(spec)) \
                if spec.isascii() and spec.isdigit() else None
            if job is None:
                sh.error(f"jobs: {spec}: no such job")
                status = 1
            else:
                chosen.append(job)
    else:
        chosen = listed
    if "s" in flags:
        chosen = []                     # no job is ever stopped here
    elif "r" in flags:
        chosen = [j for j in chosen if j.state == "Running"]
    current = listed[-1] if listed else None
    previous = listed[-2] if len(listed) > 1 else None
    for job in chosen:
        if "p" in flags:
            sh.out(f"{job.pid}\n")
        else:
            mark = "+" if job is current else "-" if job is previous else " "
            pid = f" {job.pid}" if "l" in flags else " "
            if job.state == "Running":
                sh.out(f"[{job.number}]{mark}{pid} {'Running':<24}{job.text}\n")
            else:                       # ran already (bash reports a finished job once)
                if job.state == "Killed":
                    state = _KILLED_AS.get(job.status - 128, f"Signal {job.status - 128}")
                else:
                    state = "Done" if job.status == 0 else f"Exit {job.status}"
                sh.out(f"[{job.number}]{mark}{pid} {state:<24}{job.text[:-2]}\n")
        if job.state != "Running" and not job.foreign:
            table.forget(job)
    return status


def _signal_number(text: str):
    upper = text.upper()
    if upper.isascii() and upper.isdigit():
        return int(upper)
    upper = upper[3:] if upper.startswith("SIG") else upper
    for number, name in _KILL_NAMES.items():
        if name == upper:
            return number
    return None


@builtin("kill")
def kill(sh, argv):
    args = argv[1:]
    signal = 15
    if args and args[0] == "-l" or args and args[0] == "-L":
        return _kill_list(sh, args[1:])
    if args and args[0] in ("-s", "-n"):
        if len(args) < 2:
            sh.error(f"kill: {args[0]}: option requires an argument")
            sh.err(_KILL_USAGE)
            return 2
        signal = _signal_number(args[1])
        if signal is None:
            sh.error(f"kill: {args[1]}: invalid signal specification")
            return 1
        args = args[2:]
    elif args and args[0].startswith("-") and len(args[0]) > 1 and args[0] != "--":
        signal = _signal_number(args[0][1:])
        if signal is None:
            sh.error(f"kill: {args[0][1:]}: invalid signal specification")
            return 1
        args = args[1:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        sh.err(_KILL_USAGE)
        return 2
    table = jobs_of(sh)
    status = 0
    for spec in args:
        if spec.startswith("%"):
            job = table.find(spec)
            if job is None:
                sh.error(f"kill: {spec}: no such job")
                status = 1
                continue
            if job.state != "Running":          # it ran already: the process is gone
                sh.error(f"kill: ({job.pid}) - No such process")
                table.forget(job)
                status = 1
                continue
        elif spec.lstrip("-").isascii() and spec.lstrip("-").isdigit():
            pid = int(spec)
            if pid == sh.pid:                   # the script itself
                if signal == 0:
                    continue
                raise ExitSignal(128 + signal)
            job = table.by_pid(pid)
            if job is None or job.state != "Running":
                sh.error(f"kill: ({pid}) - No such process")
                status = 1
                continue
        else:
            sh.error(f"kill: {spec}: arguments must be process or job IDs")
            status = 1
            continue
        if signal == 0:
            if job.state != "Running":
                status = 1
            continue
        if signal in (18, 28, 17, 23):          # CONT, WINCH, CHLD, URG: nothing happens
            continue
        table.kill(job, signal)             # (listed once more, and `wait` gives 128 + N)
    return status


def _kill_list(sh, args: list) -> int:
    if not args:
        cells = [f"{n:2d}) SIG{name}" for n, name in _KILL_NAMES.items()]
        lines = []
        for k in range(0, len(cells), 5):
            lines.append("\t".join(cells[k:k + 5]) + ("\t" if k + 5 >= len(cells) else "") + "\n")
        sh.out("".join(lines))
        return 0
    status = 0
    for a in args:
        if a.isascii() and a.isdigit():
            n = int(a)
            n = n - 128 if n > 128 else n
            name = _KILL_NAMES.get(n)
            if name is None:
                sh.error(f"kill: {a}: invalid signal specification")
                status = 1
            else:
                sh.out(name + "\n")
        else:
            n = _signal_number(a)
            if n is None:
                sh.error(f"kill: {a}: invalid signal specification")
                status = 1
            else:
                sh.out(f"{n}\n")
    return status


@builtin("disown")
def disown(sh, argv):
    table = jobs_of(sh)
    args = [a for a in argv[1:] if not a.startswith("-")]
    everything = any(a.startswith("-") and "a" in a for a in argv[1:])
    chosen = list(table.jobs) if everything else []
    if not args and not everything:
        if not table.jobs:
            sh.error("disown: current: no such job")
            return 1
        chosen = [table.jobs[-1]]
    status = 0
    for spec in args:
        job, _, bad = _job_for(sh, table, "disown", spec)
        if job is None:
            if not bad:
                sh.error(f"disown: {spec}: no such job")
            status = 1
        else:
            chosen.append(job)
    for job in chosen:                  # it still runs when the shell ends, unlisted
        if job in table.jobs:
            table.jobs.remove(job)
            table.disowned.append(job)
    return status


@builtin("fg", "bg")
def no_job_control(sh, argv):
    sh.error(f"{argv[0]}: no job control")
    return 1

