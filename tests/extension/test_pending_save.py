"""Decide later across a kernel restart: `%scripted save` writes the runs that wait with the
session, `%scripted load` in a fresh kernel state brings them back, and a decision then resumes
each as an immediate answer would have run it. A file whose waiting runs are damaged, forged or
too large is refused with one line, and nothing of it is kept. (The real-kernel test is
tests/kernel/test_decide_later_widget.py.)"""
import json
import struct

import pytest

IPython = pytest.importorskip("IPython")
pytest.importorskip("ipywidgets")
from scripted_kernel.tools import snapshot  # noqa: E402
from scripted_magic import magics  # noqa: E402
from scripted_magic.approval import ALLOW, DENY, LATER  # noqa: E402
from scripted_magic.magics import MagicUsageError, ScriptPaused, shell_state  # noqa: E402

# the first call appends to a file, the second waits: a resume on the files as the cell left
# them (not as it found them) would count two lines
FIRST = "echo a >> /tmp/log; double --x 1; echo mid >&2; double --x 2; echo st=$?; wc -l < /tmp/log; echo end"
SECOND = "double --x 5; echo b=$?; n=${n:-0}; echo n=$n"


def _fresh_state(ip):
    """A new kernel's state of the shell (as after a restart), its questions answered from
    `ip.answers`."""
    state = magics._State(ip)
    state.approval.ask = lambda call: ip.answers.pop(0)
    ip._scripted_state = state
    return state


@pytest.fixture
def ip(ip, capsys):
    """The shared shell in a state of its own for the test (the shared one is put back after)."""
    kept = shell_state(ip)
    ip.answers = []
    _fresh_state(ip)
    ip.run_line_magic("scripted", "approve on")
    capsys.readouterr()
    yield ip
    ip._scripted_state = kept


def run(ip, capsys, cell: str, answers: list):
    ip.answers[:] = answers
    result = ip.run_cell("%%scripted\n" + cell)
    out, err = capsys.readouterr()
    return result, out, err


def _two_paused_runs(ip, capsys, path) -> list:
    """Two cells paused before their second and first call, saved to `path`: what each showed."""
    shown = []
    for cell, answers in ((FIRST, [ALLOW, LATER]), (SECOND, [LATER])):
        result, out, err = run(ip, capsys, cell, answers)
        assert isinstance(result.error_in_exec, ScriptPaused)
        shown.append(out.split("VBox(")[0])           # (the terminal shell prints the view's repr)
    ip.run_line_magic("scripted", f"save {path}")
    assert capsys.readouterr().out.startswith(f"session saved to {path}")
    return shown


def _restarted(ip, capsys, path) -> list:
    """A fresh state, the file loaded into it: the run ids in the order the cells paused."""
    state = _fresh_state(ip)
    ip.run_line_magic("scripted", f"load {path}")
    assert capsys.readouterr().out.endswith("; approve on: 2 runs wait for a decision (%scripted pending)\n")
    assert state.approval.on
    return list(state.pending.runs)


@pytest.mark.parametrize("session", [False, True])
@pytest.mark.parametrize("decision", [ALLOW, DENY])
def test_saved_runs_resume_after_a_restart_as_an_immediate_answer(ip, capsys, tmp_path, decision, session):
    if session:
        ip.run_line_magic("scripted", "session on")
        run(ip, capsys, "n=7", [])
    _, first, _ = run(ip, capsys, FIRST, [ALLOW, decision])
    _, second, _ = run(ip, capsys, SECOND, [decision])
    _, files, _ = run(ip, capsys, "cat /tmp/log", [])
    assert files == "a\n"

    _fresh_state(ip)
    ip.run_line_magic("scripted", "approve on")
    if session:
        ip.run_line_magic("scripted", "session on")
        run(ip, capsys, "n=7", [])
    capsys.readouterr()
    shown = _two_paused_runs(ip, capsys, tmp_path / "s.snap")
    assert shown == ["2\n", ""]
    labels = [paused.label for paused in shell_state(ip).pending.runs.values()]
    first_id, second_id = _restarted(ip, capsys, tmp_path / "s.snap")
    ip.run_line_magic("scripted", "pending")
    assert capsys.readouterr().out == (f"{labels[0]} waits before double --x 2: left for a decision in the notebook\n"
                                       f"{labels[1]} waits before double --x 5: left for a decision in the notebook\n")
    state = shell_state(ip)
    state.decide(ip, first_id, decision)
    assert shown[0] + capsys.readouterr().out == first
    state.decide(ip, second_id, decision)
    assert capsys.readouterr().out == second
    assert not state.pending.runs
    assert run(ip, capsys, "cat /tmp/log", [])[1] == files


def test_a_session_with_no_waiting_run_saves_none_and_an_old_snapshot_still_loads(ip, capsys, tmp_path):
    run(ip, capsys, "echo kept > /tmp/x", [])
    ip.run_line_magic("scripted", f"save {tmp_path / 'new.snap'}")
    data = (tmp_path / "new.snap").read_bytes()
    assert not struct.unpack(">H", data[8:10])[0] & snapshot.FLAG_PENDING
    assert "pending" not in snapshot.decode(data, snapshot.SnapshotLimits.of(magics.notebook_limits())).manifest
    state = shell_state(ip)
    old = snapshot.snapshot_session(state.fs, None, "user", "sandbox")      # as saved before runs were kept
    (tmp_path / "old.snap").write_bytes(old)
    _fresh_state(ip)
    ip.run_line_magic("scripted", f"load {tmp_path / 'old.snap'}")
    assert capsys.readouterr().out.endswith(f"session loaded from {tmp_path / 'old.snap'}\n")
    assert not shell_state(ip).approval.on and not shell_state(ip).pending.runs
    assert run(ip, capsys, "cat /tmp/x", [])[1] == "kept\n"


# ---------------------------------------------------------------- hostile files

def _forged(path, change):
    """The snapshot at `path` with `change(manifest, blobs)` applied to what it decodes to."""
    loaded = snapshot.decode(path.read_bytes(), snapshot.SnapshotLimits.of(magics.notebook_limits()))
    manifest = dict(loaded.manifest, counts=loaded.counts)
    del manifest["blobs"]
    blobs = dict(loaded.blobs)
    change(manifest, blobs)
    path.write_bytes(snapshot.encode(manifest, blobs))


def _add(blobs: dict, data: bytes) -> str:
    import hashlib
    sha = hashlib.sha256(data).hexdigest()
    blobs[sha] = data
    return sha


def _record(field, value):
    def change(manifest, blobs):
        manifest["pending"][0][field] = value(blobs) if callable(value) else value
    return change


def _start_changed(change):
    """A change to the session a run's cell began with, the start re-encoded as saved."""
    def forge(manifest, blobs):
        record = manifest["pending"][0]
        start = snapshot.decode(blobs[record["start"]], snapshot.SnapshotLimits.of(magics.notebook_limits()),
                                fetch=lambda wanted: {sha: blobs[sha] for sha in wanted})
        forged = dict(start.manifest, counts=start.counts)
        del forged["blobs"]
        change(forged, start.blobs)
        record["start"] = _add(blobs, snapshot.encode_detached(forged, start.blobs))
    return forge


def _flag_without_section(path):
    data = bytearray(path.read_bytes())
    data[8:10] = struct.pack(">H", struct.unpack(">H", data[8:10])[0] & ~snapshot.FLAG_PENDING)
    path.write_bytes(bytes(data))


HOSTILE = {
    "a tampered continuation": (_record("continuation", lambda b: _add(b, b"SKCONT1\n" + bytes(32) + b"{not json")),
                                "waiting run 1: continuation is damaged (its body is not JSON)"),
    "another tool's continuation": (
        _record("continuation", lambda b: _add(b, b"SKCONT1\n" + bytes(32) + json.dumps(
            {"format": "scripted-continuation", "version": 1, "tool": "other"}).encode())),
        "waiting run 1: continuation of tool 'other', not of 'notebook'"),
    "a start that is not a snapshot": (_record("start", lambda b: _add(b, b"SKSNAP" + bytes(60))),
                                       "waiting run 1: the session as its cell began: snapshot format version 0"),
    "a start whose files are malformed": (_start_changed(lambda m, b: m["fs"].__setitem__("root", 3)),
                                          "waiting run 1: the session as its cell began: snapshot fs: the root"),
    "a start naming a file the file does not hold": (
        _start_changed(lambda m, b: b.__setitem__("f" * 64, b"")),
        "waiting run 1: the session as its cell began: a blob the snapshot names (ffffffffffff) is missing"),
    "a blob the file does not hold": (_record("at_pause", "0" * 64),
                                      "waiting run 1: snapshot at_pause: names a blob the snapshot does not hold"),
    "an at_pause that is no manifest": (_record("at_pause", lambda b: _add(b, b'{"fs": {"inodes": 7}}')),
                                        "waiting run 1: snapshot at_pause: not a session's manifest"),
    "an at_pause nested too deep": (_record("at_pause", lambda b: _add(b, b"[" * 100_000)),
                                    "waiting run 1: snapshot at_pause: not a session's manifest"),
    "a run with another field": (_record("command", "rm -rf /"), "waiting run 1: a waiting run's fields are"),
    "shown counts that are not two counts": (_record("shown", [1, -2]), "waiting run 1: snapshot shown: not an"),
    "in_session not a boolean": (_record("in_session", "yes"), "waiting run 1: snapshot in_session: not true"),
    "a label of a thousand characters": (_record("label", "x" * 1000), "waiting run 1: snapshot label: not a text"),
    "a section that is not a list": (lambda m, b: m.__setitem__("pending", {"runs": []}),
                                     "snapshot pending section: not a list"),
    "more runs than may wait": (lambda m, b: m["pending"].extend(m["pending"] * 16),
                                "17 waiting runs, and no more than 16 more may wait (at most 16 at once)"),
}


def _refused_and_nothing_kept(ip, capsys, path, expected: str, limits: str = ""):
    state = _fresh_state(ip)
    if limits:
        ip.run_line_magic("scripted", f"limits {limits}")
    run(ip, capsys, "echo before > /tmp/mine", [])
    capsys.readouterr()
    result = ip.run_cell(f"%scripted load {path}")
    error = result.error_in_exec
    assert isinstance(error, MagicUsageError) and expected in str(error), str(error)
    shown = "".join(capsys.readouterr())
    assert shown == f"MagicUsageError: {error}\n" and "Traceback" not in shown
    assert shell_state(ip) is state and not state.pending.runs and not state.approval.on
    assert run(ip, capsys, "ls /tmp", [])[1] == "mine\n"


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_file_whose_waiting_runs_are_damaged_is_refused_and_nothing_of_it_is_kept(ip, capsys, tmp_path, case):
    path = tmp_path / "s.snap"
    run(ip, capsys, "double --x 1; echo done", [LATER])
    ip.run_line_magic("scripted", f"save {path}")
    change, expected = HOSTILE[case]
    _forged(path, change)
    _refused_and_nothing_kept(ip, capsys, path, expected)


def test_a_flag_without_its_section_and_a_truncated_file_are_refused(ip, capsys, tmp_path):
    path = tmp_path / "s.snap"
    run(ip, capsys, "double --x 1; echo done", [LATER])
    ip.run_line_magic("scripted", f"save {path}")
    whole = path.read_bytes()
    path.write_bytes(whole[:-40])
    _refused_and_nothing_kept(ip, capsys, path, "truncated snapshot")
    path.write_bytes(whole)
    _flag_without_section(path)
    _refused_and_nothing_kept(ip, capsys, path, "snapshot pending section: not a list, or not where its flag says")


def test_waiting_runs_larger_than_the_loading_kernel_allows_are_refused(ip, capsys, tmp_path):
    """The runs' bytes count against the bounds the loading kernel's limits give a snapshot."""
    path = tmp_path / "s.snap"
    run(ip, capsys, "double --x 1; echo done", [LATER])
    ip.run_line_magic("scripted", f"save {path}")
    _forged(path, _record("continuation", lambda b: _add(b, bytes(range(256)) * 800)))
    _refused_and_nothing_kept(ip, capsys, path, "more than", limits="--max-fs 96K --max-shell-state 1024")


def test_runs_past_the_room_left_are_refused(ip, capsys, tmp_path, monkeypatch):
    from scripted_magic import pending
    path = tmp_path / "s.snap"
    _two_paused_runs(ip, capsys, path)
    monkeypatch.setattr(pending, "MAX_PENDING", 1)
    _refused_and_nothing_kept(ip, capsys, path, "2 waiting runs, and no more than 1 more may wait (at most 1 at once)")


def test_a_session_whose_runs_pass_the_snapshot_bounds_is_not_saved(ip, capsys, tmp_path):
    """The runs' bytes count against the bounds of the snapshot: a save its own load would
    refuse is refused, and writes nothing."""
    ip.run_line_magic("scripted", "limits --max-fs 96K --max-shell-state 1024")
    run(ip, capsys, "head -c 60000 /dev/zero | tr '\\0' a > /tmp/big", [])
    run(ip, capsys, "rm /tmp/big; double --x 1", [LATER])                      # its start holds /tmp/big
    run(ip, capsys, "head -c 60000 /dev/zero | tr '\\0' b > /tmp/other", [])
    result = ip.run_cell(f"%scripted save {tmp_path / 's.snap'}")
    error = str(result.error_in_exec)
    assert error.startswith("%scripted save: the session with its 1 waiting runs is more than a snapshot may hold")
    assert "\n" not in error and not (tmp_path / "s.snap").exists()
