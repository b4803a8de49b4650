"""tar, gzip/bzip2/xz and zip/unzip against the real programs on this machine: the same files
and the same command lines run in real bash (in an empty temporary directory) and in a
BashTool; stdout, the exit status and stderr must match. Archives embed times, owners and
the compressor's own deflate, so the cases compare listings and extracted contents (with
fixed mtimes and --owner), never archive bytes."""
import io
import shutil
import subprocess
import tarfile
import zipfile

import pytest

from scripted_kernel import BashTool

FILES = """mkdir -p d/sub
echo hello > d/a.txt
seq 1000 > d/sub/n.txt
printf 'x\\n' > d/sub/b
touch -d '2024-01-02 03:04:05' d/a.txt d/sub/n.txt d/sub/b d/sub d
"""
OWN = "--owner=user:1000 --group=user:1000 --sort=name"


def _real(script: str, files: dict, tmp_path):
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path), "TZ": "UTC"}
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True,
                       env=env, cwd=tmp_path, timeout=60)
    return (p.stdout.decode("utf-8", "surrogateescape"), p.stderr.decode("utf-8", "surrogateescape"),
            p.returncode)


def _ours(script: str, files: dict):
    r = BashTool(files=files, env={"TZ": "UTC"}).execute(script)
    return r.stdout, r.stderr, r.exit_code


def same(script: str, tmp_path, files=None, tools=("tar",), stderr=True):
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    files = files or {}
    real, ours = _real(script, files, tmp_path), _ours(script, files)
    assert ours[0] == real[0], (f"stdout differs\nours:\n{ours[0]}\nreal:\n{real[0]}\n"
                                f"stderr ours:\n{ours[1]}\nreal:\n{real[1]}")
    assert ours[2] == real[2], f"status {ours[2]} != {real[2]}\nstderr ours:\n{ours[1]}\nreal:\n{real[1]}"
    if stderr:
        assert ours[1] == real[1], f"stderr differs\nours:\n{ours[1]}\nreal:\n{real[1]}"


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    """Both sides show times in UTC (our commands read the host's zone through time)."""
    import time
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


# ---------------------------------------------------------------------------- tar

TAR_CASES = [
    FILES + f"tar cvf t.tar {OWN} d; echo rc=$?; tar tvf t.tar; tar tf t.tar",
    FILES + f"tar czf t.tgz {OWN} d; tar tzvf t.tgz; tar tf t.tgz; tar -tvf t.tgz d/sub",
    FILES + f"tar cjf t.tbz {OWN} d; tar tjf t.tbz; tar tf t.tbz; tar cJf t.txz {OWN} d; tar tvf t.txz",
    FILES + f"tar -czf t.tgz {OWN} d && mkdir out && tar xzf t.tgz -C out && find out | sort && "
            "cat out/d/a.txt && stat -c '%a %Y %n' out/d/a.txt out/d/sub/n.txt out/d/sub out/d",
    FILES + f"tar czf x.tgz {OWN} d; mkdir o; tar -xvzf x.tgz -C o; "
            "tar xf x.tgz -C o --strip-components=1 -v; find o | sort",
    FILES + f"tar cf - {OWN} d | tar tvf -; tar czf - {OWN} d | tar xzf - -O d/a.txt",
    FILES + f"tar czf x.tgz {OWN} d; cat x.tgz | tar tf -; echo rc=$?",
    FILES + f"tar cvf x.tar {OWN} --exclude='*.txt' d; echo; tar tf x.tar --exclude=sub",
    FILES + f"tar cf x.tar {OWN} d; tar tf x.tar d/nope d/a.txt; echo rc=$?; tar xf nope.tar; echo rc=$?",
    FILES + "tar; echo rc=$?; tar cf e.tar; echo rc=$?; tar cf e.tar nosuch d/a.txt; echo rc=$?; tar tf e.tar",
    FILES + f"mkdir -p w && tar cf x.tar -C d {OWN} a.txt sub && tar tf x.tar && tar xf x.tar -C w && find w | sort",
    FILES + f"tar cf x.tar {OWN} d; tar xf x.tar -C nodir; echo rc=$?",
    FILES + f"ln -s a.txt d/link; touch -d '2024-01-02 03:04:05' d; tar cvf x.tar {OWN} d; "
            "mkdir o; tar xf x.tar -C o; readlink o/d/link; cat o/d/link",
    FILES + "echo 'not a tar' > bad.tar; tar tf bad.tar; echo rc=$?; : > empty.tar; tar tf empty.tar; echo rc=$?",
    FILES + "echo hi > plain; tar tzf plain; echo rc=$?",
    FILES + f"tar cf x.tar {OWN} d/a.txt; tar xf x.tar -C d --keep-old-files; echo rc=$?",
    # long flags take effect (they were read as set to "", which is false)
    FILES + f"tar cf x.tar {OWN} d/a.txt; tar xf x.tar --to-stdout; tar xf x.tar --keep-old-files; echo rc=$?",
    FILES + f"cd d && tar czf ../all.tgz {OWN} . && cd .. && tar tzf all.tgz",
    # --strip-components takes ASCII digits only (int() took "1_0" and "٢")
    FILES + f"tar cf x.tar {OWN} d; for n in ' 1' +1 1_0 ٢ 01; do mkdir -p \"o$n\"; "
            "tar xf x.tar -C \"o$n\" --strip-components=\"$n\"; echo rc=$?; done; find o* | sort",
]


@pytest.mark.parametrize("script", TAR_CASES)
def test_tar(script, tmp_path):
    same(script, tmp_path, tools=("tar", "gzip", "bzip2", "xz"))


def _tar(*members) -> bytes:
    """An archive with the given (name, type, link target) members, dated 1970."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for name, kind, target in members:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.mode = kind, target, 0o644
            data = b"x\n" if kind == tarfile.REGTYPE else b""
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


REG, SYM, LNK = tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE
HOSTILE_TARS = {
    "dotdot.tar": _tar(("ok.txt", REG, ""), ("../evil.txt", REG, ""), ("a/../../evil2.txt", REG, ""),
                       ("a/../b.txt", REG, "")),
    "abs.tar": _tar(("/tmp/abs_evil.txt", REG, ""), ("//x/y", REG, "")),
    "sym.tar": _tar(("lnk", SYM, "/tmp"), ("lnk/evil3.txt", REG, "")),
    "up.tar": _tar(("up", SYM, ".."), ("up/evil4.txt", REG, "")),
    "hard.tar": _tar(("h", LNK, "/etc/passwd"), ("h2", LNK, "../x"), ("f", REG, ""), ("h3", LNK, "f")),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_TARS))
def test_tar_hostile_members_as_gnu_tar(name, tmp_path):
    """`..` members refused, leading `/` stripped, links that point out made last: the same
    listing, messages and statuses as GNU tar, and nothing written outside the directory."""
    script = (f"mkdir out; tar tvf {name}; echo rc=$?; tar tf {name}; tar xvf {name} -C out; "
              f"echo rc=$?; find out | sort; ls ../ | grep -c evil")
    same(script, tmp_path, files={name: HOSTILE_TARS[name]})


# ---------------------------------------------------------------------------- gzip, bzip2, xz

GZIP_CASES = [
    "echo hello > a; gzip a; ls; zcat a.gz; gzip -l a.gz; gunzip a.gz; cat a; ls",
    "echo hello > a; echo b > b; gzip -k a b; ls; gzip -k b; echo rc=$?; gzip a.gz; echo rc=$?",
    "echo hi | gzip | gzip -d; echo hi | gzip -c | zcat; echo hi | gzip | gzip -l",
    "echo hello > a; gzip -c a > x.gz; ls; gunzip -c x.gz; gzip -dc < x.gz; zcat < x.gz",
    "gunzip nosuch.gz; echo rc=$?; gzip -dc nope; echo rc=$?; gzip nosuch; echo rc=$?",
    "echo notgz > x.gz; gunzip x.gz; echo rc=$?; ls",
    "echo b > b; gunzip b; echo rc=$?; mkdir d; gzip d; echo rc=$?",
    "mkdir -p d/e; echo y > d/y; echo z > d/e/z; gzip -r d; find d | sort; gunzip -r d; find d | sort",
    "seq 100 > n; gzip -9 n; gzip -t n.gz; echo rc=$?; gzip -1 -c n.gz | gunzip | gunzip | tail -1",
    "echo a > a; echo b > b; gzip a b; zcat a.gz b.gz; cat a.gz b.gz > ab.gz; zcat ab.gz; gzip -l a.gz b.gz",
    "echo hello > a; touch -d '2024-01-02 03:04:05' a; chmod 600 a; gzip a; stat -c '%a %Y' a.gz; "
    "gunzip a.gz; stat -c '%a %Y' a",
    "echo hi > a; gzip a; echo again > a; gzip a; echo rc=$?; gzip -f a; echo rc=$?; zcat a.gz",
    "echo x > t.tar; gzip t.tar; mv t.tar.gz t.tgz; gunzip t.tgz; ls",
    "echo x | gzip -n > x.gz; printf 'garbage' >> x.gz; zcat x.gz; echo rc=$?",
    # an empty -S would name the output after the input (gunzip failed with an internal error)
    "echo hi | gzip > a; gunzip -S '' a; echo rc=$?; echo hi > b; gzip -S '' b; echo rc=$?; ls",
    # an empty file compresses to a stream that ends in its first call (was "unexpected end of file")
    "printf '' | gzip | gunzip | wc -c; : > e; gzip e; gunzip e.gz; echo rc=$?; wc -c < e",
]


@pytest.mark.parametrize("script", GZIP_CASES)
def test_gzip(script, tmp_path):
    same(script, tmp_path, tools=("gzip",))


BZIP2_XZ_CASES = [
    "echo hello > a; {z} a; ls; {z} -dc a.{s}; {z} -d a.{s}; cat a; ls",
    "echo hello > a; {z} -k a; ls; {z} a.{s}; echo rc=$?; {z} a; echo rc=$?; {z} -f a; echo rc=$?; ls",
    "echo hi | {z} | {z} -d; echo hi | {z} -c | {cat}; {z} -d nosuch; echo rc=$?; {cat} nosuch; {un} nosuch",
    "echo nope > x.{s}; {z} -d x.{s}; echo rc=$?; mkdir dd; {z} dd; echo rc=$?",
    "echo hello > a; {z} -c a > b.{s}; {un} b.{s}; cat b; {z} -t a.{s} 2>/dev/null; {z} -k a; {z} -t a.{s}; echo rc=$?",
    "echo x > plain; {z} -d plain; echo rc=$?; ls; echo x | {z} > p; {un} p; echo rc=$?",
    "echo x | {z} > e.{s}; printf garbage >> e.{s}; {cat} e.{s}; echo rc=$?",
]


@pytest.mark.parametrize("script", BZIP2_XZ_CASES)
@pytest.mark.parametrize("z,s,un,cat", [("bzip2", "bz2", "bunzip2", "bzcat"), ("xz", "xz", "unxz", "xzcat")])
def test_bzip2_and_xz(script, z, s, un, cat, tmp_path):
    same(script.format(z=z, s=s, un=un, cat=cat), tmp_path, tools=(z,))


def test_xz_refuses_an_empty_suffix(tmp_path):
    same("echo hi | xz > a; unxz -S '' a; echo rc=$?; xz -S '' -k a; echo rc=$?; ls", tmp_path, tools=("xz",))


# ---------------------------------------------------------------------------- zip, unzip

ZIP_FILES = FILES + "touch -d '2024-01-02 03:04:05' d/sub/b\n"
ZIP_CASES = [
    ZIP_FILES + "zip x.zip d d/a.txt d/sub d/sub/n.txt; echo rc=$?; unzip -l x.zip",
    ZIP_FILES + "zip -r x.zip d | sort; unzip -l x.zip | sort",
    ZIP_FILES + "zip -q x.zip d/a.txt; echo rc=$?; zip x.zip d/a.txt d/sub/b; unzip -l x.zip",
    ZIP_FILES + "zip -j j.zip d/a.txt d/sub/n.txt; unzip -l j.zip; zip nope.zip nosuch; echo rc=$?; ls",
    ZIP_FILES + "zip -q x.zip d/a.txt d/sub/n.txt; mkdir o; cd o; unzip ../x.zip; echo rc=$?; "
                "cat d/a.txt; stat -c '%a %Y' d/a.txt; unzip ../x.zip; echo rc=$?; unzip -o ../x.zip; "
                "unzip -n ../x.zip; echo rc=$?",
    ZIP_FILES + "zip -qr x.zip d; unzip -q x.zip -d out; echo rc=$?; find out | sort; unzip -p x.zip d/a.txt; "
                "unzip -p x.zip d/sub/b",
    ZIP_FILES + "zip -q x.zip d/a.txt d/sub/b; unzip -o x.zip d/a.txt -d o2; unzip -l x.zip nosuch; echo rc=$?",
    ZIP_FILES + "unzip nosuch.zip; echo rc=$?; echo junk > bad.zip; unzip bad.zip; echo rc=$?",
    ZIP_FILES + "zip -q x.zip d/a.txt d/sub/n.txt; unzip -j -q x.zip -d flat; ls flat",
    ZIP_FILES + "zip -qr x.zip d -x '*.txt'; unzip -l x.zip | sort",
    # -t tests every member (it extracted them); -qt prints the verdict only
    ZIP_FILES + "zip -q x.zip d d/a.txt d/sub/n.txt; unzip -t x.zip; echo rc=$?; unzip -qt x.zip; ls",
]


@pytest.mark.parametrize("script", ZIP_CASES)
def test_zip(script, tmp_path):
    same(script, tmp_path, tools=("zip", "unzip"))


ZIP_CHANGE_CASES = [
    # -d: patterns (`*` crossing `/`) against the members; none matched is status 12
    ZIP_FILES + "zip -qr x.zip d; zip -d x.zip d/a.txt; echo rc=$?; unzip -l x.zip; zip -d x.zip nope; "
                "echo rc=$?; zip -dq x.zip nope; echo rc=$?; zip -d x.zip '*.txt'; echo rc=$?; unzip -l x.zip; "
                "zip -d x.zip; echo rc=$?; zip -d nosuch.zip a; echo rc=$?; ls",
    ZIP_FILES + "zip -q x.zip d/a.txt; zip -d x.zip 'd/*'; echo rc=$?; ls; unzip -l x.zip; "
                "zip -qr y.zip d; zip -q y.zip -d 'd/s*'; unzip -l y.zip",
    # -u: files newer than their copy (in DOS time) or not in the archive; nothing newer is a
    # silent status 12; -u alone looks at every member's file
    ZIP_FILES + "zip -q x.zip d d/a.txt d/sub d/sub/b d/sub/n.txt; zip -u x.zip d/a.txt d/sub/b; echo rc=$?; "
                "touch -d '2024-03-01' d/a.txt; echo new > d/new; touch -d '2024-01-02 03:04:06' d/new d/sub/b; "
                "zip -u x.zip d/new d/sub/b d/a.txt; echo rc=$?; unzip -l x.zip; zip -u x.zip; echo rc=$?; "
                "touch -d '2024-04-01' d/sub/n.txt; zip -u x.zip; echo rc=$?; touch -d '2024-01-02 03:04:05' d; "
                "zip -u x.zip d d/sub d/sub/n.txt; echo rc=$?; zip -u new.zip d/a.txt; echo rc=$?; "
                "zip -u x.zip nosuch; echo rc=$?; unzip -l x.zip | grep -v ' d/$'; zip x.zip d/sub/b d/a.txt",
    # an archive that is not one: zip's warnings and status 3, the file left alone
    "echo junk > j.zip; echo a > a; zip -d j.zip a; echo rc=$?; zip j.zip a; echo rc=$?; zip -u j.zip a; "
    "echo rc=$?; cat j.zip",
]

@pytest.mark.parametrize("script", ZIP_CHANGE_CASES)
def test_zip_delete_and_update(script, tmp_path):
    same(script, tmp_path, tools=("zip", "unzip"))


def _zip(*names) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.writestr(zipfile.ZipInfo(name, (2024, 1, 2, 3, 4, 6)), b"x\n")
    return buffer.getvalue()


def test_unzip_cleans_slip_members_as_unzip_does(tmp_path):
    files = {"e.zip": _zip("../evil.txt", "/abs.txt", "ok/../../e2", "fine")}
    same("mkdir w; cd w; unzip ../e.zip; echo rc=$?; find . | sort; ls .. | grep -c evil",
         tmp_path, files=files, tools=("unzip",))


# ---------------------------------------------------------------------------- tar -r -u --delete

TAR_CHANGE_CASES = [
    FILES + f"tar cf x.tar {OWN} d/a.txt; tar rvf x.tar {OWN} d/sub; echo rc=$?; tar tvf x.tar; "
            f"tar rf new.tar {OWN} d/a.txt; echo rc=$?; tar tf new.tar",
    # -u appends what is newer than the archive's copy (in whole seconds) or not in it
    FILES + f"tar cf u.tar {OWN} d; touch -d '2024-02-01' d/a.txt; echo new > d/new; "
            "touch -d '2024-01-02 03:04:05.9' d/new d/sub/b; touch -d '2024-01-02 03:04:05' d; "
            f"tar uvf u.tar {OWN} d; echo rc=$?; tar tvf u.tar; tar uvf u.tar {OWN} d; echo rc=$?",
    FILES + f"tar cf x.tar {OWN} d; tar --delete -f x.tar d/sub/n.txt nope; echo rc=$?; tar tvf x.tar; "
            f"tar --delete -f x.tar d/sub; echo rc=$?; tar tf x.tar; "
            f"tar cf - {OWN} d | tar --delete -f - d/a.txt | tar tf -",
    # long names (GNU's extra header before the member) are deleted and kept whole
    FILES + f"n=$(printf '%0150d' 0); echo x > d/$n; tar cf x.tar {OWN} d; tar --delete -f x.tar d/a.txt; "
            f"tar tf x.tar | wc -l; tar --delete -f x.tar d/$n; tar tf x.tar; tar rf x.tar {OWN} d/$n; "
            "tar tvf x.tar | tail -1 | wc -c",
    # GNU changes archives in place: never a compressed one, nor standard input under -r/-u
    FILES + f"tar czf x.tgz {OWN} d; tar rf x.tgz d/a.txt; echo rc=$?; tar -r -z -f x.tgz d; echo rc=$?; "
            "tar --delete -f x.tgz d; echo rc=$?; tar uf x.tgz d; echo rc=$?; tar rf - d; echo rc=$?; "
            "tar -r --delete -f x.tar d; echo rc=$?; tar --delete -f nosuch.tar d; echo rc=$?; tar tf x.tgz",
    FILES + f": > e.tar; tar rf e.tar {OWN} d/a.txt; echo rc=$?; tar tf e.tar",
]


@pytest.mark.parametrize("script", TAR_CHANGE_CASES)
def test_tar_append_update_delete(script, tmp_path):
    same(script, tmp_path, tools=("tar", "gzip"))


# ---------------------------------------------------------------------------- tar --transform

LINKS = "ln -s a.txt d/lnk; ln d/a.txt d/hard; touch -d '2024-01-02 03:04:05' d\n"
NO_TIME = " | awk '{$4 = $5 = \"\"; print}'"     # (a symbolic link's time is the clock's)
TRANSFORM_CASES = [
    # the stored names and link targets change; -v names the files read, the listing the
    # members as stored, with link targets transformed (names too with --show-transformed-names)
    FILES + LINKS + f"tar cvf t.tar {OWN} --transform 's/a/X/' d; echo rc=$?; tar tvf t.tar {NO_TIME}; "
                    f"tar tvf t.tar --transform 's,^,pre/,' {NO_TIME}; "
                    "tar tf t.tar --show-transformed-names --xform 's,^,pre/,'",
    FILES + LINKS + f"tar cf t.tar {OWN} --transform='s/a/Z/S' --xform 's/(.*)\\.txt$/\\U\\1\\E.text/x' d; "
                    f"tar tvf t.tar {NO_TIME}; "
                    f"tar cvf u.tar {OWN} --show-transformed-names --transform 's/[DS]/_/2gi' d; tar tf u.tar",
    FILES + LINKS + f"tar cf t.tar {OWN} d; mkdir o; tar xvf t.tar -C o --transform 's,^d,top,;s/sub/SUB/g'; "
                    "find o | sort; readlink o/top/lnk; cat o/top/hard",
    FILES + f"tar cf t.tar {OWN} d/a.txt; tar rf t.tar {OWN} --transform 's/a/R/' d/a.txt; tar tf t.tar",
    FILES + "for e in x/a/b/ s/a/b 's/a/b/q' 's/\\(a/b/' 's/a/\\3/'; do "
            "tar cf e.tar --transform \"$e\" d; echo rc=$?; done; ls",
]


@pytest.mark.parametrize("script", TRANSFORM_CASES)
def test_tar_transform(script, tmp_path):
    same(script, tmp_path)
