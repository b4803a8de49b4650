"""Background jobs (`cmd &`) and process substitution (`<( )`, `>( )`), deterministic.

Nothing runs concurrently here; both are given an order that real bash can also produce:

- A background job is a snapshot of the shell taken at `&` (a subshell, as bash forks one),
  run to completion later: when `wait` asks for it (or for a job started after it), when more
  than MAX_PENDING jobs are waiting to run (the oldest one runs), or when the shell that started
  it ends (the script, after its EXIT trap; a subshell or command substitution, before its
  output is taken). Jobs run in the order they were started; their output appears where they
  run, which is where bash shows the output of a job that is still running when the script
  reaches that point. Its standard input is empty (bash gives a background job /dev/null when
  there is no job control). `kill` removes a job that has not run: it never runs, and `wait`
  reports 128 + the signal's number.
- `<(body)` runs body to completion when the word is expanded; what it wrote is read through
  /dev/fd/N (an entry of the shell's descriptor table, numbered from 63 down as bash numbers
  them), as a pipe is read: once. `>(body)` gives a /dev/fd/N that collects what is written to it;
  body runs on that text when the command that expanded the word has finished, with the
  standard output and error the shell had when the word was expanded. The descriptors are
  closed when that command ends (a `>( )` kept open by `exec N>` runs when the shell ends).

Everything a job or a substitution does counts against the execution's one budget.
"""
from __future__ import annotations

from typing import Callable, Optional

from .streams import EMPTY_INPUT, InputStream, PipeBuffer

MAX_PENDING = 64            # jobs waiting to run; the oldest runs when one more starts


class ProcessInput(InputStream):
    """What `<( )` wrote, read through /dev/fd/N: a pipe, read once."""
    __slots__ = ()


class ProcessOutput:
    """The write end of `>( )`: a writer collecting what the command writes to /dev/fd/N;
    `finish()` runs the body on it."""
    __slots__ = ("buf", "child", "body", "done")

    def __init__(self, buf: PipeBuffer, child, body: Callable):
        self.buf = buf
        self.child = child
        self.body = body
        self.done = False

    def __call__(self, text: str):
        self.buf.write(text)

    def finish(self):
        if self.done:
            return
        self.done = True
        self.child.stdin = InputStream(self.buf.text())
        self.buf = PipeBuffer(self.child.budget)
        self.child.run_subshell(self.body)


def fork(sh):
    """A subshell of `sh` that may run later: `sh` stops changing the variables, the table of
    globals and the functions it shares with it in place (it copies them first), so the
    subshell keeps the state of this moment, as a forked process does."""
    child = sh.subshell()
    sh.var_owner = object()
    sh.globals_shared = True
    sh.functions_shared = True
    return child


# ---------------------------------------------------------------- process substitution

def substitute(sh, body: Callable, direction: str) -> str:
    """Expand `<(body)` or `>(body)`: a /dev/fd/N path of `sh`'s descriptor table."""
    sh.budget.check()
    fds = sh.extra_fds
    fd = 63
    while fd in fds:
        fd -= 1
        if fd < 10:
            fd = 64
            while fd in fds:
                fd += 1
            break
    if direction == "<":
        child = sh.subshell()
        buf = PipeBuffer(sh.budget)
        child.out = buf.write
        child.xtrace_depth += 1
        child.run_subshell(body)
        stream: object = ProcessInput(buf.text())
    else:
        child = fork(sh)
        child.xtrace_depth += 1
        stream = ProcessOutput(PipeBuffer(sh.budget), child, body)
    fds[fd] = stream
    frame = sh.procsub_frame
    if frame is None:                       # no command to close it: the shell's end does
        frame = sh.procsub_frame = []
    frame.append((fds, fd, stream))
    return f"/dev/fd/{fd}"


def with_substitutions(fn: Callable) -> Callable:
    """fn(sh) for a command whose words hold process substitutions: their descriptors are
    closed when it ends, and the `>( )` bodies run then."""
    def run(sh, *args):
        saved = sh.procsub_frame
        frame = sh.procsub_frame = []
        try:
            return fn(sh, *args)
        finally:
            sh.procsub_frame = saved
            if frame:
                close(sh, frame)
    return run


def close(sh, frame: list):
    """Close the descriptors of `frame`; run the `>( )` bodies no descriptor keeps open."""
    for fds, fd, stream in frame:
        if fds.get(fd) is stream:
            del fds[fd]
    for _, _, stream in frame:
        if type(stream) is ProcessOutput:
            if _still_open(sh, stream):
                table = jobs_of(sh)
                table.open_outputs.append(stream)
            else:
                stream.finish()


def _still_open(sh, stream) -> bool:
    return sh.out is stream or sh.err is stream or any(v is stream for v in sh.extra_fds.values())


# ---------------------------------------------------------------- jobs

class Job:
    __slots__ = ("number", "pid", "text", "child", "body", "status", "state", "foreign")

    def __init__(self, number: int, pid: int, text: str, child, body: Optional[Callable]):
        self.number = number
        self.pid = pid
        self.text = text
        self.child = child
        self.body = body
        self.status = 0
        self.state = "Running"          # Running (not run yet), Done, Killed
        self.foreign = False            # a parent shell's job, seen from a subshell: listed only


class JobTable:
    """The jobs one shell started (a subshell has its own), in the order they started."""
    __slots__ = ("jobs", "finished", "open_outputs", "disowned")

    def __init__(self):
        self.jobs: list[Job] = []           # not yet waited for
        self.finished: dict[int, int] = {}  # pid -> status of jobs that ran (for `wait PID`)
        self.open_outputs: list = []        # `>( )` kept open by `exec N>`: run at the end
        self.disowned: list[Job] = []       # out of the table, still run at the end

    def start(self, sh, body: Callable, text: str) -> Job:
        pending = [j for j in self.jobs if j.state == "Running"]
        if len(pending) >= MAX_PENDING:
            self.run(sh, pending[0])
        child = fork(sh)
        child.stdin = EMPTY_INPUT
        number = (self.jobs[-1].number if self.jobs else 0) + 1
        pids = sh.pids                      # one count for the whole execution
        job = Job(number, pids[0], text, child, body)
        pids[0] += 1
        self.jobs.append(job)
        sh.last_job_pid = job.pid
        return job

    def inherited(self) -> "JobTable":
        """What a subshell sees: the jobs still to run, to list (`$(jobs -p)`), not to run."""
        table = JobTable()
        for job in self.jobs:
            if job.state == "Running":
                view = Job(job.number, job.pid, job.text, None, None)
                view.foreign = True
                table.jobs.append(view)
        return table

    def run(self, sh, job: Job) -> int:
        """Run `job` to completion (and, first, every job started before it that has not run)."""
        for other in self.jobs:
            if other is job:
                break
            if other.state == "Running" and not other.foreign:
                self._run_one(other)
        if job.state == "Running" and not job.foreign:
            self._run_one(job)
        return job.status

    def _run_one(self, job: Job):
        job.state = "Done"
        body, job.body = job.body, None
        child, job.child = job.child, None
        job.status = child.run_subshell(body)
        self.finished[job.pid] = job.status

    def forget(self, job: Job):
        if job in self.jobs:
            self.jobs.remove(job)
        self.finished[job.pid] = job.status

    def kill(self, job: Job, signal: int):
        if job.state == "Running":
            job.state = "Killed"
            job.status = 128 + signal
            job.body = job.child = None
            self.finished[job.pid] = job.status

    def finish(self, sh):
        """The shell ends: every job not yet run runs, then what `exec N> >( )` kept open."""
        while True:
            pending = next((j for j in self.jobs if j.state == "Running" and not j.foreign), None)
            if pending is None:
                break
            self.run(sh, pending)
        disowned, self.disowned = self.disowned, []
        for job in disowned:
            if job.state == "Running":
                self._run_one(job)
        outputs, self.open_outputs = self.open_outputs, []
        for stream in outputs:
            stream.finish()

    def find(self, spec: str) -> Optional[Job]:
        """A job by job spec: %N, %+ / %% / % (the current), %- (the previous), %string
        (a command starting with it), %?string (containing it)."""
        jobs = self.jobs
        if not jobs:
            return None
        body = spec[1:]
        if body in ("", "%", "+"):
            return jobs[-1]
        if body == "-":
            return jobs[-2] if len(jobs) > 1 else jobs[-1]
        if body.isascii() and body.isdigit():
            return next((j for j in jobs if j.number == int(body)), None)
        if body.startswith("?"):
            found = [j for j in jobs if body[1:] in j.text]
        else:
            found = [j for j in jobs if j.text.startswith(body)]
        return found[-1] if found else None

    def by_pid(self, pid: int) -> Optional[Job]:
        return next((j for j in self.jobs if j.pid == pid), None)


def jobs_of(sh) -> JobTable:
    table = sh.jobs
    if table is None:
        table = sh.jobs = JobTable()
    return table


def start_job(sh, body: Callable, text: str) -> int:
    jobs_of(sh).start(sh, body, text)
    return 0


def finish_jobs(sh):
    """At the end of a shell: run what is left (see JobTable.finish)."""
    table = sh.jobs
    if table is not None:
        table.finish(sh)
    frame = sh.procsub_frame
    if frame:
        sh.procsub_frame = None
        close(sh, frame)


def end_of_call(sh):
    """The top level of a call is over, however it ended: its jobs and process substitutions
    end with it. Those a stopped call could not run are dropped (they hold that call's spent
    budget, which would stop the next call at once), and a `<( )`/`>( )` descriptor that
    `exec N>` kept open is closed, so a persistent shell's next call starts with none."""
    sh.jobs = None
    sh.procsub_frame = None
    fds = sh.extra_fds
    for fd in [fd for fd, stream in fds.items() if isinstance(stream, (ProcessInput, ProcessOutput))]:
        del fds[fd]


__all__ = ["ProcessInput", "ProcessOutput", "JobTable", "Job", "substitute", "with_substitutions",
           "start_job", "finish_jobs", "end_of_call", "jobs_of", "fork", "MAX_PENDING"]
