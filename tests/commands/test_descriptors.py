"""stat and ls on /dev/fd/N (process substitutions, descriptors opened with exec, standard
input, output and error), and the links and formats that go with them, against coreutils run by
real bash: the same command lines, the same output in the formats that hold no inode number or
time."""
import shutil

import pytest

from support import ours_with_files as ours, real_with_files as real

needs_coreutils = pytest.mark.skipif(shutil.which("stat") is None or shutil.which("ls") is None,
                                     reason="coreutils stat and ls are not installed")
FILES = {"a": "hello\n"}
PIPE_ID = " | sed 's/pipe:\\[[0-9]*\\]/pipe:[N]/'"

CASES = [
    # a process substitution is a link to a pipe; followed, the pipe
    "stat -c '%F|%s|%A|%h' /dev/fd/63 <(echo hi); stat -L -c '%F|%s|%A|%h' <(echo hi); "
    "stat -c '%A %F' >(cat)",
    "stat -c '%N' <(true)" + PIPE_ID,
    # standard input, output and error are the pipes the caller holds
    "stat -L -c '%F|%s|%A' /dev/fd/0 /dev/fd/1 /dev/fd/2; stat -c '%A' /dev/fd/0 /dev/fd/1",
    # a descriptor opened on a file: the file when followed
    "exec 3<a; stat -L -c '%F|%s|%A' /dev/fd/3; stat -c '%F|%s|%A' /dev/fd/3; exec 4>out; "
    "stat -L -c '%F|%s' /dev/fd/4; stat -c %A /dev/fd/4; exec 3<&- 4>&-; stat /dev/fd/3; echo rc=$?",
    "ls <(true); ls -d <(true); ls -F <(true); ls -1 /dev/fd/63 <(true) <(true); "
    "ls -l <(true) | awk '{print $1, $2, $5, $(NF-2), $NF}'" + PIPE_ID + "; ls -lL <(true) | awk '{print $1, $5, $NF}'",
    "stat /dev/fd/9; echo rc=$?; ls /dev/fd/9; echo rc=$?; ls -l /dev/fd/9 /dev/fd/99999999999999999999; "
    "echo rc=$?; stat -c %F /dev/fd/x /dev/fd/-1 /dev/fd/٣; echo rc=$?",
    # links named on the command line are listed themselves under -F (and -d, -l); -L follows
    # them; a directive's width and flags (the default format's %04a printed "?4a")
    "ln -s a l; mkdir d; ln -s d ld; ls -F l ld; ls -d ld; ls ld; ls -lL l | awk '{print $1, $5}'; "
    "stat -c '[%5s] [%-5s] [%05a] [%4h] [%-3a]' a; stat a | grep -c 'Access: (0644/-rw-r--r--)'",
]


@needs_coreutils
@pytest.mark.parametrize("script", CASES)
def test_like_coreutils(script):
    assert ours(script, FILES) == real(script, FILES)
