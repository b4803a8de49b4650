"""MemoryFs: limits fail like the C library (nothing written before is lost), and read-only
host mounts stay inside their directory."""
import os

import pytest

from scripted_kernel import BashTool, ExecutionLimits, MemoryFs
from scripted_kernel.fs import FsError


def small(**kw):
    return ExecutionLimits(**kw)


def test_total_bytes_limit_fails_the_write_like_enospc_and_keeps_earlier_data():
    tool = BashTool(limits=small(max_fs_bytes=1000))
    r = tool.execute('printf "%500s" a > f; printf "%600s" b > g; echo status=$?; wc -c < f')
    assert "No space left on device" in r.stderr
    assert r.stdout == "status=1\n500\n"


def test_single_file_limit_is_file_too_large():
    tool = BashTool(limits=small(max_file_bytes=100))
    r = tool.execute('for i in 1 2 3; do printf "%40s" x >> f || echo failed $i; done; wc -c < f')
    assert r.stdout == "failed 3\n80\n" and "File too large" in r.stderr


def test_file_count_and_path_depth_limits():
    tool = BashTool(limits=small(max_file_count=30))
    r = tool.execute('for i in $(seq 40); do touch f$i 2>/dev/null || { echo stopped at $i; break; }; done')
    assert r.stdout.startswith("stopped at ")
    deep = BashTool(limits=small(max_path_depth=10))
    r = deep.execute('mkdir -p a/b/c/d/e/f/g/h/i/j/k/l; echo $?')
    assert r.stdout == "1\n" and "File name too long" in r.stderr


def test_removing_files_frees_their_bytes():
    tool = BashTool(limits=small(max_fs_bytes=1000))
    r = tool.execute('for i in 1 2 3 4; do printf "%600s" x > f && rm f || echo no; done; echo done')
    assert r.stdout == "done\n"


def test_symlink_loop_and_dangling_links():
    fs = MemoryFs()
    fs.symlink("/tmp/b", "/tmp/a")
    fs.symlink("/tmp/a", "/tmp/b")
    with pytest.raises(FsError, match="Too many levels of symbolic links"):
        fs.read_bytes("/tmp/a")
    fs.symlink("/tmp/missing", "/tmp/dangling")
    assert fs.exists("/tmp/dangling", follow=False) and not fs.exists("/tmp/dangling")


def test_hard_link_shares_data():
    fs = MemoryFs({"/tmp/a": "one"})
    fs.link("/tmp/a", "/tmp/b")
    fs.write_bytes("/tmp/b", b"two")
    assert fs.read_text("/tmp/a") == "two" and fs.stat("/tmp/a").nlink == 2


@pytest.fixture
def host_tree(tmp_path):
    """A host directory to mount, with a secret beside it and links pointing out."""
    (tmp_path / "secret.txt").write_text("SECRET\n")
    data = tmp_path / "data"
    data.mkdir()
    (data / "ok.txt").write_text("visible\n")
    (data / "sub").mkdir()
    (data / "sub" / "inner.txt").write_text("inner\n")
    os.symlink(str(tmp_path / "secret.txt"), data / "abs_link")
    os.symlink("../secret.txt", data / "rel_link")
    os.symlink(str(tmp_path), data / "dir_link")
    os.link(tmp_path / "secret.txt", data / "hard_link")
    return data


def test_mount_reads_inside_and_refuses_writes(host_tree):
    tool = BashTool.builder().mount("/data", str(host_tree)).build()
    r = tool.execute("cat /data/ok.txt /data/sub/inner.txt; ls /data/sub; echo x > /data/new; "
                     "echo status=$?; rm /data/ok.txt; echo status=$?")
    assert r.stdout == "visible\ninner\ninner.txt\nstatus=1\nstatus=1\n"
    assert "Read-only file system" in r.stderr


@pytest.mark.parametrize("script", [
    "cat /data/../secret.txt", "cat /data/abs_link", "cat /data/rel_link", "cat /data/dir_link/secret.txt",
    "cat /data/hard_link", "cd /data/..; cat secret.txt", "cat /data/sub/../../secret.txt",
    "grep -r SECRET /", "find / -name 'secret*' -exec cat {} \\;", "cp /data/hard_link /tmp/x; cat /tmp/x",
    "ls -la /data/dir_link/", "head -c 100 /data/rel_link",
])
def test_mount_cannot_be_left(host_tree, script):
    tool = BashTool.builder().mount("/data", str(host_tree)).build()
    r = tool.execute(script)
    assert "SECRET" not in r.stdout and "SECRET" not in r.stderr
    assert str(host_tree) not in r.stdout + r.stderr


def test_mount_race_swapping_a_directory_for_a_link(host_tree, tmp_path):
    """A directory replaced by a symlink to outside after mounting is not followed."""
    tool = BashTool.builder().mount("/data", str(host_tree)).build()
    assert tool.execute("cat /data/sub/inner.txt").stdout == "inner\n"
    os.rename(host_tree / "sub", tmp_path / "moved")
    os.symlink(str(tmp_path), host_tree / "sub")
    r = tool.execute("cat /data/sub/secret.txt; cat /data/sub/inner.txt")
    assert "SECRET" not in r.stdout and r.exit_code != 0


def test_mount_reads_are_size_limited(host_tree):
    (host_tree / "big").write_bytes(b"x" * 5000)
    tool = BashTool.builder().limits(ExecutionLimits(max_file_bytes=1000)).mount("/data", str(host_tree)).build()
    r = tool.execute("wc -c < /data/big; echo status=$?")
    assert "File too large" in r.stderr and r.stdout == "status=1\n"


def test_only_read_only_mounts():
    with pytest.raises(ValueError):
        MemoryFs().mount("/data", "/tmp", read_only=False)
