"""Huge counts given to split, truncate, dd, od, shuf, xxd and friends: each ends with a named
error or a bounded result, inside the filesystem's quota and the execution's budget, without
building what it was asked for. Budgets here are generous for a loaded 2-core machine."""
import random

import pytest

from scripted_kernel import BashTool, ExecutionLimits
from scripted_kernel.fs import MemoryFs

HOME = "/home/user"


def tool(limits: ExecutionLimits = None, files: dict = None) -> BashTool:
    limits = limits or ExecutionLimits(timeout_seconds=60)
    fs = MemoryFs(limits=limits)
    for name, content in (files or {}).items():
        fs.add_file(f"{HOME}/{name}", content)
    return BashTool.builder().limits(limits).filesystem(fs).build()


def noise(size: int) -> bytes:
    return random.Random(7).randbytes(size)


def test_split_of_a_big_file_into_bytes_stops_at_the_file_count():
    limits = ExecutionLimits(timeout_seconds=60, max_file_count=300)
    t = tool(limits, {"big": noise(50_000)})
    r = t.execute("split -b 1 big part; echo status=$?; ls | wc -l")
    assert "No space left on device" in r.stderr and "status=1" in r.stdout
    assert int(r.stdout.split()[-1]) < 300


def test_split_into_a_huge_number_of_chunks_never_builds_them():
    limits = ExecutionLimits(timeout_seconds=60, max_file_count=200)
    t = tool(limits, {"f": b"abc\n"})
    r = t.execute("split -n 1000000000000 f; echo status=$?; split -n r/1000000000000 f r; "
                  "echo status=$?; split -n 5/1000000000000 f | wc -c")
    assert r.stdout.count("status=1") == 2 and r.stdout.endswith("0\n")


def test_truncate_to_a_terabyte_is_file_too_large():
    r = tool().execute("truncate -s 1T f; echo status=$?; wc -c < f; truncate -s +1E f; echo $?")
    assert r.stderr.startswith("truncate: failed to truncate 'f' at 1099511627776 bytes: File too large")
    assert r.stdout == "status=1\n0\n1\n"


def test_dd_with_a_gigabyte_block_of_zeros_is_refused_before_it_is_built():
    r = tool().execute("dd if=/dev/zero of=f bs=1G count=1; echo status=$?")
    assert "memory exhausted by input buffer of size 1073741824 bytes (1.0 GiB)" in r.stderr
    assert r.stdout == "status=1\n"


def test_dd_with_a_gigabyte_block_over_a_small_file_copies_it():
    r = tool(files={"f": b"x" * 1000}).execute("dd if=f of=g bs=1G status=none; wc -c < g")
    assert r.stdout == "1000\n"


def test_endless_dd_ends_at_the_file_size_limit():
    limits = ExecutionLimits(timeout_seconds=60, max_file_bytes=1 << 20)
    r = tool(limits).execute("dd if=/dev/zero of=f bs=64K; echo status=$?")
    assert "dd: error writing 'f': File too large" in r.stderr and r.stdout == "status=1\n"


def test_dd_seek_past_the_largest_file_is_file_too_large():
    r = tool(files={"f": b"abc"}).execute("dd if=f of=g bs=1 seek=1T status=none; echo $?")
    assert "File too large" in r.stderr and r.stdout == "1\n"


def test_od_of_a_large_file_stays_under_the_budget():
    t = tool(files={"big": noise(1 << 20)})
    r = t.execute("od -An -tx1 big | wc -l; od -c big | tail -1")
    assert r.exit_code == 0 and r.stdout == "65536\n4000000\n"


def test_od_past_the_output_limit_is_a_named_error():
    limits = ExecutionLimits(timeout_seconds=60, max_output_bytes=100_000)
    r = tool(limits, {"big": noise(1 << 20)}).execute("od -tx1 big")
    assert r.error is not None and "max_output_bytes" in str(r.error)


def test_od_and_hexdump_with_a_huge_width_are_bounded():
    limits = ExecutionLimits(timeout_seconds=60, max_string_length=1 << 20)
    t = tool(limits, {"f": b"abc"})
    r = t.execute("od -w1000000000 -tx1z f")
    assert r.error is not None and "max_string_length" in str(r.error)


def test_shuf_of_a_billion_numbers_picks_without_building_the_range():
    r = tool().execute("shuf -i 1-1000000000 -n 3 | wc -l; shuf -i 5-1000000000 -n 1")
    first, picked = r.stdout.split("\n")[:2]
    assert first == "3" and 5 <= int(picked) <= 1_000_000_000


def test_shuf_of_a_whole_huge_range_ends_at_the_output_limit():
    limits = ExecutionLimits(timeout_seconds=60, max_output_bytes=200_000)
    for script in ("shuf -i 1-1000000000", "shuf -r -e x"):
        r = tool(limits).execute(script)
        assert r.error is not None and "max_output_bytes" in str(r.error), script


def test_shuf_is_reproducible_from_the_random_generator():
    from scripted_kernel.shell.variables import SHARED_RANDOM
    outputs = []
    for _ in range(2):
        SHARED_RANDOM.seed(42)
        outputs.append(tool().execute("shuf -i 1-100 -n 10; shuf -e a b c d e").stdout)
    assert outputs[0] == outputs[1] and len(outputs[0].split()) == 15


def test_xxd_reverse_with_a_huge_offset_is_refused():
    r = tool().execute("echo 'fffffffff: 41' | xxd -r > out; echo status=$?; wc -c < out")
    assert "xxd: (stdout): File too large" in r.stderr and r.stdout == "status=3\n0\n"
    r = tool().execute("echo '7fffffff: 41' | xxd -r - out; echo status=$?")
    assert "xxd: out: File too large" in r.stderr and r.stdout == "status=3\n"


@pytest.mark.parametrize("script", [
    "numfmt --padding=1000000000 5",
    "numfmt --format=%1000000000f 5",
    "printf 'a\\tb\\n' | expand -t 1000000000",
    "seq 3 | pr -a -w 1000000000 -2",
    "seq 3 | pr -l 1000000000",
])
def test_widths_past_the_string_limit_are_refused(script):
    limits = ExecutionLimits(timeout_seconds=60, max_string_length=1 << 20)
    r = tool(limits).execute(script)
    assert r.error is not None and "max_string_length" in str(r.error), (r.stdout[:100], r.stderr)


def test_join_cross_product_is_bounded_by_the_output_limit():
    limits = ExecutionLimits(timeout_seconds=60, max_output_bytes=1 << 20)
    same_key = b"".join(b"k %d\n" % i for i in range(3000))
    r = tool(limits, {"a": same_key, "b": same_key}).execute("join a b")
    assert r.error is not None and "max_output_bytes" in str(r.error)


def test_path_operands_stay_in_the_sandbox():
    t = tool(files={"f": b"data\n"})
    r = t.execute("od -c ../../../../etc/passwd; xxd /etc/shadow; split -l 1 f ../../../../tmp/x;"
                  " ls /tmp; dd if=/etc/passwd of=p 2>&1 | head -1")
    assert "root:" not in r.stdout and "No such file or directory" in r.stderr
    assert r.stdout.startswith("xaa\n")        # split wrote inside the MemoryFs's /tmp
