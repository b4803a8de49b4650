"""bc, the checksums, file, tree and iconv against hostile input: every bomb ends with a named
error (or the deadline) in bounded time, and nothing reaches the host. The clock limits are
generous for a loaded 2-core machine; the size limits stop their cases before any work starts."""
import time

import pytest

from scripted_kernel import BashTool, ExecutionLimits

LIMITS = ExecutionLimits(timeout_seconds=4, max_output_bytes=1 << 20)


def run(script: str, files=None, limits=LIMITS):
    started = time.monotonic()
    r = BashTool.builder().limits(limits).files(files or {}).build().execute(script)
    return r, time.monotonic() - started


SIZE_BOMBS = {
    "power tower": ("echo '10^10^10' | bc", "limit:max_string_length"),
    "huge power": ("echo '2^99999999' | bc", "limit:max_string_length"),
    "huge scale": ("echo 'scale=1000000000; 1/3' | bc", "limit:max_string_length"),
    "huge square root": ("echo 'scale=2000000000; sqrt(2)' | bc", "limit:max_string_length"),
    "huge e()": ("echo 'e(10^8)' | bc -l", "limit:max_string_length"),
    "deep recursion": ("echo 'define f(x) { return f(x+1) }; f(1)' | bc", "limit:max_function_depth"),
    "deep recursion in a file": ("printf 'define f(n) {\\n return 1 + f(n+1)\\n}\\nf(0)\\n' > r.bc; bc r.bc",
                                 "limit:max_function_depth"),
}


@pytest.mark.parametrize("name", sorted(SIZE_BOMBS))
def test_bc_bombs_end_with_a_named_limit(name):
    script, error = SIZE_BOMBS[name]
    r, seconds = run(script)
    assert r.error == error, (r.stdout[:200], r.stderr[:200])   # the named limit, not the clock
    assert seconds < LIMITS.timeout_seconds + 5


CLOCK_BOMBS = [
    "echo 'while (1) { }' | bc",
    "echo 'for (i = 0; ; i++) a[i % 1000] = i' | bc",
    "echo 'define f(n) { while (1) n += 1 }; f(0)' | bc",
    "echo 'scale = 100000; e(1000000)' | bc -l",
    "echo 'scale = 200000; x = sqrt(2); while (1) x = x * x / 3' | bc",
]


@pytest.mark.parametrize("script", CLOCK_BOMBS)
def test_bc_loops_stop_at_the_deadline(script):
    r, seconds = run(script)
    assert r.error == "timeout" and r.exit_code == 124
    assert seconds < LIMITS.timeout_seconds + 5


def test_bc_keeps_working_after_a_refused_statement_within_limits():
    r, _ = run("printf 'scale=3; 1/0; 5\\n2/3\\n' | bc; echo status=$?")
    assert r.stdout == ".666\nstatus=0\n"        # the rest of the failing line is dropped, as bc does
    assert "Divide by zero" in r.stderr


def test_bc_reads_files_only_through_the_filesystem():
    r, _ = run("bc /etc/passwd; echo $?")
    assert r.stdout == "1\n" and r.stderr == "File /etc/passwd is unavailable.\n"


def test_checksums_of_a_large_file_count_against_the_clock():
    r, seconds = run("printf '%08000000d' 0 > z; "
                     "md5sum z | cut -c1-8; cksum z | cut -d' ' -f2")
    assert r.error is None and r.stdout.split("\n")[1] == "8000000"
    assert seconds < 10


def test_tree_of_a_deep_directory_ends_within_the_path_depth():
    r, _ = run("p=d; for i in $(seq 100); do p=$p/d; done; mkdir -p $p; tree | tail -1")
    assert r.error is None and r.stdout == "102 directories, 0 files\n"      # the root counts


def test_tree_follows_link_loops_once():
    r, _ = run("mkdir -p a/b; ln -s ../.. a/b/up; ln -s . a/self; tree -l a | tail -1")
    assert r.error is None and r.stdout == "8 directories, 0 files\n"     # as tree 2.1 counts it


def test_file_does_not_open_host_paths_or_follow_links_out():
    r, _ = run("ln -s /etc/passwd p; file p /etc/shadow; file -L p")
    assert r.stdout == ("p:           broken symbolic link to /etc/passwd\n"
                        "/etc/shadow: cannot open `/etc/shadow' (No such file or directory)\n"
                        "p: cannot open `p' (No such file or directory)\n")


def test_iconv_of_invalid_input_stops_at_the_first_bad_byte():
    r, _ = run("printf 'ok\\xff%.0s' $(seq 1000) | iconv -f utf-8 -t utf-16 | wc -c; "
               "printf '\\xff' | iconv -f utf-8 -t ascii; echo $?")
    assert r.stdout == "6\n1\n"
    assert r.stderr.count("illegal input sequence at position") == 2


def test_which_never_reports_a_host_program():
    r, _ = run("which perl gcc; echo $?")         # (python3 is a command of the sandbox: commands/python3)
    assert r.stdout == "1\n"
