"""Snapshots of a BashTool session: restore(snapshot()) behaves as the original on any next script.

Seeded random sessions (files, variables with attributes, arrays, functions, options, traps,
directories, $RANDOM) are snapshotted; the original and the restored tool (by restore() and by
the builder's from_snapshot()) then run the same probe scripts and the same random scripts, and
their outputs are compared."""
from __future__ import annotations

import random

import pytest

from scripted_kernel import BashTool
from scripted_kernel.base.limits import ExecutionLimits
from scripted_kernel.tools.snapshot import SnapshotError, SnapshotLimits, decode

PROBE = r"""declare -p
declare -f
set -o
shopt
trap -p
echo "pwd=$(pwd) dirs=$(dirs) umask=$(umask) status=$? args=$# $*"
find / -path /dev -prune -o -print | sort | while IFS= read -r f; do
  stat -c '%n %i %a %Y %h %F %s' "$f"
  if [ -L "$f" ]; then echo "-> $(readlink "$f")"; elif [ -f "$f" ] && [ -r "$f" ]; then md5sum < "$f"; fi
done
ls -laR /tmp /home 2>&1 | sed 's/  */ /g'
echo "random: $RANDOM $RANDOM $RANDOM"
"""

# the same probe without mtimes, for after scripts that write files (their mtimes are the clock's)
PROBE_NO_TIMES = PROBE.replace(" %Y", "").replace("ls -laR /tmp /home 2>&1 | sed 's/  */ /g'",
                                                    "ls -aR /tmp /home 2>&1")

NAMES = ["a", "b", "cnt", "path_x", "Z9", "_u"]
FILES = ["/tmp/f1", "/tmp/d/f2", "/home/user/notes.txt", "/tmp/d/e/deep", "/tmp/sp ace", "/tmp/uni-é"]


def _word(rng: random.Random) -> str:
    return rng.choice(["x", "hello world", "", "a'b", 'q"q', "tab\there", "line\nbreak", "*", "ünï",
                       "$HOME", "1", "42", "-7"])


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def random_script(rng: random.Random, lines: int = 25) -> str:
    out = []
    for _ in range(lines):
        k = rng.randrange(22)
        name = rng.choice(NAMES)
        if k == 0:
            out.append(f"{name}={_quote(_word(rng))}")
        elif k == 1:
            out.append(f"declare -a {name}_arr=({' '.join(_quote(_word(rng)) for _ in range(rng.randrange(4)))})")
        elif k == 2:
            out.append(f"{name}_arr[{rng.randrange(20)}]={_quote(_word(rng))}")
        elif k == 3:
            pairs = " ".join(f"[{_quote(_word(rng) or 'k')}]={_quote(_word(rng))}" for _ in range(rng.randrange(1, 5)))
            out.append(f"declare -A {name}_map=({pairs})")
        elif k == 4:
            out.append(f"declare -{rng.choice(['i', 'l', 'u', 'x', 'ix'])} {name}_attr={rng.randrange(100)}")
        elif k == 5:
            out.append(f"unset {name}")
        elif k == 6:
            body = rng.choice(['echo "$1-$2"', 'local v=$((RANDOM % 7)); echo "$v"', 'return 3',
                               'echo "line $LINENO ${FUNCNAME[0]}"', 'cat "$@" 2>&1 | wc -c'])
            out.append(rng.choice([f"fn_{name}() {{ {body}; }}", f"function fn_{name} {{\n  {body}\n}}"]))
        elif k == 7:
            out.append(f"set {rng.choice('-+')}o {rng.choice(['pipefail', 'noglob', 'allexport', 'noclobber'])}")
        elif k == 8:
            option = rng.choice(['extglob', 'nullglob', 'dotglob', 'globstar', 'nocasematch'])
            out.append(f"shopt -{rng.choice('su')} {option}")
        elif k == 9:
            out.append(f"trap {_quote('echo trapped ' + name)} {rng.choice(['USR1', 'USR2', 'ERR', 'RETURN', 'INT'])}")
        elif k == 10:
            path = rng.choice(FILES)
            parent = _quote(path.rsplit('/', 1)[0])
            out.append(f"mkdir -p {parent} && printf '%s\\n' {_quote(_word(rng))} >> {_quote(path)}")
        elif k == 11:
            out.append(f"ln -sf {_quote(rng.choice(FILES))} /tmp/link{rng.randrange(3)}")
        elif k == 12:
            src = rng.choice(FILES)
            out.append(f"[ -f {_quote(src)} ] && ln -f {_quote(src)} /tmp/hard{rng.randrange(2)}")
        elif k == 13:
            mode = rng.choice(['600', '644', '755', '400', '1777'])
            out.append(f"chmod {mode} {_quote(rng.choice(FILES))} 2>/dev/null")
        elif k == 14:
            stamp = f"{rng.randrange(10**9)}.{rng.randrange(10**6):06d}"
            out.append(f"touch -d @{stamp} {_quote(rng.choice(FILES))} 2>/dev/null")
        elif k == 15:
            out.append(f"rm -f {_quote(rng.choice(FILES))}")
        elif k == 16:
            out.append(f"cd {rng.choice(['/tmp', '/', '~', '/tmp/d', '/home'])} 2>/dev/null")
        elif k == 17:
            out.append(rng.choice(["pushd /tmp >/dev/null", "popd >/dev/null 2>&1", "pushd / >/dev/null"]))
        elif k == 18:
            out.append(f"set -- {' '.join(_quote(_word(rng)) for _ in range(rng.randrange(4)))}")
        elif k == 19:
            out.append(f"{name}_r=$RANDOM")
        elif k == 20:
            out.append(f"umask {rng.choice(['022', '077', '002'])}")
        else:
            out.append(f"seq {rng.randrange(1000)} | head -c {rng.randrange(3000)} > /tmp/blob{rng.randrange(2)}")
    return "\n".join(out) + "\n"


def _same(a: BashTool, b: BashTool, script: str):
    ra, rb = a.execute(script), b.execute(script)
    assert (ra.stdout, ra.stderr, ra.exit_code) == (rb.stdout, rb.stderr, rb.exit_code), script


@pytest.mark.parametrize("seed", range(8))
def test_restored_tool_runs_every_next_script_as_the_original(seed):
    rng = random.Random(seed)
    tool = BashTool()
    for _ in range(3):
        tool.execute(random_script(rng))
    data = tool.snapshot()
    by_builder = BashTool.builder().from_snapshot(data).build()
    by_restore = BashTool()
    by_restore.restore(data)
    expected = tool.execute(PROBE)
    for other in (by_builder, by_restore):
        got = other.execute(PROBE)
        assert (got.stdout, got.stderr, got.exit_code) == (expected.stdout, expected.stderr, expected.exit_code)
    follow = [random_script(rng) for _ in range(3)]
    for script in follow:
        _same(tool, by_builder, script)
    _same(tool, by_builder, PROBE_NO_TIMES)


def test_snapshot_round_trips_byte_for_byte():
    tool = BashTool()
    tool.execute(random_script(random.Random(99)))
    data = tool.snapshot()
    again = BashTool.builder().from_snapshot(data).build()
    limits = SnapshotLimits.of(ExecutionLimits())
    a, b = decode(data, limits), decode(again.snapshot(), limits)
    # the same session gives the same manifest, but for the times it was taken at
    for loaded in (a, b):
        del loaded.manifest["meta"]["created"]
        del loaded.manifest["shell"]["seconds"]
    assert a.manifest == b.manifest and a.blobs == b.blobs


def test_functions_keep_their_lines_text_and_redirections():
    tool = BashTool()
    tool.execute('x=1\n\n\nf() {\n  echo "at $LINENO"\n}\nfunction g { echo "g" >&2; }\nh() ( echo sub )\n'
                 'k() { echo "to err"; } >&2\n')
    copy = BashTool.builder().from_snapshot(tool.snapshot()).build()
    _same(tool, copy, "f; g; h; k; declare -f")
    assert copy.execute("f").stdout == "at 5\n"


def test_signed_snapshots_and_the_key():
    tool = BashTool.builder().snapshot_key(b"k1").build()
    tool.execute("echo hi > /tmp/a; v=1")
    data = tool.snapshot()
    assert BashTool.builder().from_snapshot(data, key=b"k1").build().execute("cat /tmp/a; echo $v").stdout == "hi\n1\n"
    with pytest.raises(SnapshotError, match="signature"):
        BashTool.builder().from_snapshot(data, key=b"other").build()
    unsigned = BashTool().snapshot()
    with pytest.raises(SnapshotError, match="unsigned"):
        tool.restore(unsigned)


def test_restore_refuses_what_does_not_fit_the_limits():
    tool = BashTool()
    tool.execute("seq 100000 > /tmp/big")
    small = ExecutionLimits(max_fs_bytes=100_000)
    with pytest.raises(SnapshotError):
        BashTool.builder().limits(small).from_snapshot(tool.snapshot()).build()
    target = BashTool(limits=ExecutionLimits(max_fs_bytes=100_000))
    target.execute("echo keep > /tmp/k")
    with pytest.raises(SnapshotError):
        target.restore(tool.snapshot())
    assert target.execute("cat /tmp/k").stdout == "keep\n"      # nothing changed


def test_host_mounts_are_recorded_by_their_mount_point(tmp_path):
    (tmp_path / "data.txt").write_text("host data\n")
    tool = BashTool.builder().mount("/mnt/host", str(tmp_path)).build()
    tool.execute("cat /mnt/host/data.txt > /tmp/copy")
    data = tool.snapshot()
    assert b"host data" in data                     # the copy made in memory, once
    assert data.count(b"host data") == 1
    mounted = BashTool.builder().mount("/mnt/host", str(tmp_path)).from_snapshot(data).build()
    assert mounted.execute("cat /mnt/host/data.txt /tmp/copy").stdout == "host data\nhost data\n"
    bare = BashTool.builder().from_snapshot(data).build()
    result = bare.execute("ls -A /mnt/host; cat /tmp/copy")
    assert result.stdout == "host data\n"           # the mount point is there, empty


def test_a_fresh_tool_and_a_fresh_shell_tool_snapshot():
    assert BashTool.builder().from_snapshot(BashTool().snapshot()).build().execute("pwd").stdout == "/home/user\n"
    fresh = BashTool.builder().fresh_shell().build()
    fresh.execute("x=1; echo f > /tmp/f")
    copy = BashTool.builder().from_snapshot(fresh.snapshot()).build()
    assert copy.execute('cat /tmp/f; echo "[$x]"').stdout == "f\n[]\n"


def test_scripted_tool_session_snapshot():
    from scripted_kernel import ScriptedTool
    tool = ScriptedTool.builder("api").build()
    session = tool.session()
    session.execute("x=5; f() { echo f$1; }")
    data = session.snapshot()
    other = tool.session()
    other.restore(data)
    assert other.execute("echo $x; f 2").stdout == "5\nf2\n"


def test_a_seeded_random_sequence_carries_over():
    tool = BashTool()
    tool.execute("RANDOM=5; echo $RANDOM")
    copy = BashTool.builder().from_snapshot(tool.snapshot()).build()
    assert copy.execute("echo $RANDOM $RANDOM").stdout == tool.execute("echo $RANDOM $RANDOM").stdout == "29338 982\n"
