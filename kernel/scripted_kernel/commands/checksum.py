"""md5sum, sha1sum, sha224sum, sha256sum, sha384sum, sha512sum, b2sum and cksum: one
implementation of GNU coreutils' digest programs (hashlib, and POSIX cksum's CRC), printing
checksums or verifying them with -c."""
from __future__ import annotations

import hashlib
import re
import zlib
from dataclasses import dataclass
from typing import Callable, Optional

from ..fs import FsError
from ._bytes import read_bytes, shell_quote
from ._options import UsageError, bad_usage, parse
from .registry import Usage, command
from ..base.limits import Budget

CHUNK = 1 << 20            # bytes hashed between two looks at the clock


# ------------------------------------------------------------------ the algorithms

def _bit_reversed_bytes() -> bytes:
    return bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


_REVERSE = _bit_reversed_bytes()


def _reverse32(value: int) -> int:
    return int(f"{value:032b}"[::-1], 2)


def posix_crc(budget: Budget, data: bytes) -> int:
    """POSIX cksum's CRC: polynomial 0x04C11DB7 MSB-first, register starting at 0, the length
    appended in as few bytes as it needs (least significant first), the result complemented.
    zlib's crc32 is the same polynomial LSB-first: fed bit-reversed bytes and started from a
    zero register (its `value` is stored complemented), it yields the reversed register."""
    length = len(data)
    tail = bytearray()
    while length:
        tail.append(length & 0xFF)
        length >>= 8
    register = 0xFFFFFFFF       # zlib complements it on entry: a zero register
    for start in range(0, len(data), CHUNK):
        register = zlib.crc32(data[start:start + CHUNK].translate(_REVERSE), register)
        budget.check_clock()
    register = zlib.crc32(bytes(tail).translate(_REVERSE), register)
    return _reverse32(register ^ 0xFFFFFFFF) ^ 0xFFFFFFFF


def bsd_sum(budget: Budget, data: bytes) -> int:
    """`sum -r`: a 16-bit checksum rotated right before each byte is added."""
    checksum = 0
    for i, byte in enumerate(data):
        checksum = ((checksum >> 1) + ((checksum & 1) << 15) + byte) & 0xFFFF
        if not i & 0xFFFFF:
            budget.check_clock()
    return checksum


def sysv_sum(data: bytes) -> int:
    """`sum -s`: the sum of the bytes folded to 16 bits."""
    total = sum(data) & 0xFFFFFFFF
    r = (total & 0xFFFF) + (total >> 16)
    return (r & 0xFFFF) + (r >> 16)


@dataclass(frozen=True)
class Digest:
    """A hashlib algorithm as coreutils names it: the tag of `--tag` lines (BLAKE2b's carries
    its length when it is not 512 bits) and the hex length of a digest."""
    tag: str
    bits: int
    make: Callable

    def hexdigest(self, budget: Budget, data: bytes) -> str:
        h = self.make()
        for start in range(0, len(data), CHUNK):
            h.update(data[start:start + CHUNK])
            budget.check_clock()
        return h.hexdigest()

    @property
    def hex_length(self) -> int:
        return self.bits // 4

    @property
    def tag_text(self) -> str:
        return f"BLAKE2b-{self.bits}" if self.tag == "BLAKE2b" and self.bits != 512 else self.tag


def _hashlib(name: str, tag: str, bits: int) -> Digest:
    return Digest(tag, bits, lambda: hashlib.new(name))


def blake2b(bits: int = 512) -> Digest:
    return Digest("BLAKE2b", bits, lambda: hashlib.blake2b(digest_size=bits // 8))


DIGESTS = {
    "md5": _hashlib("md5", "MD5", 128),
    "sha1": _hashlib("sha1", "SHA1", 160),
    "sha224": _hashlib("sha224", "SHA224", 224),
    "sha256": _hashlib("sha256", "SHA256", 256),
    "sha384": _hashlib("sha384", "SHA384", 384),
    "sha512": _hashlib("sha512", "SHA512", 512),
    "blake2b": blake2b(),
}
if "sm3" in hashlib.algorithms_available:
    DIGESTS["sm3"] = _hashlib("sm3", "SM3", 256)
LEGACY = ("bsd", "sysv", "crc")           # cksum's own sums: no --tag form and no -c
CKSUM_ALGORITHMS = ("bsd", "sysv", "crc", "md5", "sha1", "sha224", "sha256", "sha384", "sha512",
                    "blake2b", "sm3")
PROGRAMS = {"md5sum": "md5", "sha1sum": "sha1", "sha224sum": "sha224", "sha256sum": "sha256",
            "sha384sum": "sha384", "sha512sum": "sha512", "b2sum": "blake2b"}


# ------------------------------------------------------------------ names as coreutils prints them

def _escaped(name: str) -> tuple[str, str]:
    """(prefix, name) for an output line: a name with a backslash or newline is written with
    them escaped and the line starts with a backslash."""
    if "\\" in name or "\n" in name:
        return "\\", name.replace("\\", "\\\\").replace("\n", "\\n")
    return "", name


# ------------------------------------------------------------------ the command line

@dataclass
class Settings:
    program: str
    algorithm: str                     # a DIGESTS key, one of LEGACY, or "any" (cksum -c)
    digest: Optional[Digest]
    tagged: bool
    binary: bool
    zero: bool
    check: bool
    quiet: bool = False
    status_only: bool = False
    strict: bool = False
    warn: bool = False
    ignore_missing: bool = False


_CHECK_ONLY = {"ignore-missing": "--ignore-missing", "quiet": "--quiet", "status": "--status",
               "strict": "--strict", "w": "--warn"}


def _parse(argv: list) -> tuple[Settings, list]:
    program = argv[0].rsplit("/", 1)[-1]
    is_cksum = program == "cksum"
    long_flags = {"check": "c", "tag": "tag", "zero": "z", "ignore-missing": "ignore-missing",
                  "quiet": "quiet", "status": "status", "strict": "strict", "warn": "w"}
    long_values = {}
    short_flags, short_values = "czw", ""
    if is_cksum:
        long_flags.update({"untagged": "untagged", "debug": "debug"})
        long_values.update({"algorithm": "a", "length": "l"})
        short_values = "al"
    else:
        long_flags.update({"binary": "b", "text": "t"})
        short_flags += "bt"
    if program == "b2sum":
        long_values["length"] = "l"
        short_values = "l"
    opts, ops = parse(program, argv, short_flags, short_values, long_flags, long_values)
    algorithm = PROGRAMS.get(program) or _cksum_algorithm(opts.get("a", "crc"))
    digest = DIGESTS.get(algorithm)
    if is_cksum and opts.has("c") and not opts.has("a"):
        algorithm, digest = "any", None     # each line's tag names its algorithm
    if opts.has("l"):
        if algorithm != "blake2b":
            raise UsageError(f"{program}: --length is only supported with --algorithm=blake2b")
        digest = blake2b(_blake2_length(program, opts.get("l")))
    check = opts.has("c")
    tagged = opts.has("tag") or (is_cksum and algorithm not in LEGACY and not opts.has("untagged"))
    if is_cksum and opts.has("tag") and opts.has("untagged"):
        tagged = opts.flags[::-1].index("tag") < opts.flags[::-1].index("untagged")
    settings = Settings(program, algorithm, digest, tagged, opts.has("b"), opts.has("z"), check,
                        opts.has("quiet"), opts.has("status"), opts.has("strict"), opts.has("w"),
                        opts.has("ignore-missing"))
    _check_combinations(program, opts, settings, is_cksum)
    return settings, ops


def _cksum_algorithm(value: str) -> str:
    matches = [a for a in CKSUM_ALGORITHMS if a.startswith(value)]
    if value in CKSUM_ALGORITHMS:
        return value
    if len(matches) == 1 and (matches[0] in DIGESTS or matches[0] in LEGACY):
        return matches[0]
    problem = "ambiguous" if len(matches) > 1 else "invalid"
    choices = "".join(f"  - \u2018{a}\u2019\n" for a in CKSUM_ALGORITHMS)
    raise UsageError(f"cksum: {problem} argument \u2018{value}\u2019 for \u2018--algorithm\u2019\n"
                     f"Valid arguments are:\n{choices}Try 'cksum --help' for more information.")


_LENGTH = re.compile(r"\s*\+?[0-9]+")       # what xstrtoumax takes: ASCII digits, a sign, blanks before


def _blake2_length(program: str, text: str) -> int:
    bits = -1
    if _LENGTH.fullmatch(text):
        digits = text.strip().lstrip("+").lstrip("0") or "0"
        if len(digits) > 20 or int(digits) >= 1 << 64:
            raise UsageError(f"{program}: invalid length: \u2018{text}\u2019: "
                             "Value too large for defined data type")
        bits = int(digits)
    if bits < 0 or bits > 512:
        reason = ("maximum digest length for \u2018BLAKE2b\u2019 is 512 bits" if bits > 512
                  else None)
        raise UsageError(f"{program}: invalid length: \u2018{text}\u2019"
                         + (f"\n{program}: {reason}" if reason else ""))
    if bits % 8:
        raise UsageError(f"{program}: invalid length: \u2018{text}\u2019\n"
                         f"{program}: length is not a multiple of 8")
    return bits or 512


def _check_combinations(program: str, opts, s: Settings, is_cksum: bool):
    """The option pairs coreutils refuses, in its order of tests."""
    if s.check:
        if is_cksum and s.algorithm in LEGACY:
            raise UsageError("cksum: --check is not supported with --algorithm={bsd,sysv,crc}")
        if opts.has("b") or opts.has("t"):
            raise bad_usage(program, "the --binary and --text options are meaningless when "
                                     "verifying checksums")
        if opts.has("tag") and not is_cksum:
            raise bad_usage(program, "the --tag option is meaningless when verifying checksums")
        if s.zero:
            raise bad_usage(program, "the --zero option is not supported when verifying checksums")
        return
    for key, option in _CHECK_ONLY.items():
        if opts.has(key):
            raise bad_usage(program, f"the {option} option is meaningful only when verifying "
                                     "checksums")


# ------------------------------------------------------------------ printing sums

def _sum_line(budget: Budget, s: Settings, data: bytes, name: Optional[str]) -> str:
    """One output line (without its terminator). `name` None: standard input read without an
    operand, which cksum's own sums print without a name."""
    if s.algorithm == "crc":
        return f"{posix_crc(budget, data)} {len(data)}" + (f" {name}" if name is not None else "")
    if s.algorithm == "sysv":
        return f"{sysv_sum(data)} {-(-len(data) // 512)}" + (f" {name}" if name is not None else "")
    if s.algorithm == "bsd":
        return f"{bsd_sum(budget, data):05d} {-(-len(data) // 1024):5d}" + (f" {name}" if name is not None else "")
    # only cksum -c without -a has no digest (each line names its own), and it prints no sums
    assert s.digest is not None
    shown = "-" if name is None else name
    prefix, shown = ("", shown) if s.zero else _escaped(shown)
    hexdigest = s.digest.hexdigest(budget, data)
    if s.tagged:
        return f"{prefix}{s.digest.tag_text} ({shown}) = {hexdigest}"
    return f"{prefix}{hexdigest} {'*' if s.binary else ' '}{shown}"


def _print_sums(ctx, s: Settings, operands: list) -> int:
    status = 0
    end = "\0" if s.zero else "\n"
    for name in operands or [None]:
        try:
            data = read_bytes(ctx, "-" if name is None else name)
        except FsError as e:
            ctx.err(f"{s.program}: {shell_quote(name)}: {e.strerror}\n")
            status = 1
            continue
        ctx.out(_sum_line(ctx.budget, s, data, name) + end)
    return status


# ------------------------------------------------------------------ checking sums

@dataclass
class CheckLine:
    name: str
    expected: str            # lower-case hex
    digest: Digest


class LineReader:
    """Parses the lines of one checksum file as coreutils' digest -c does. The first untagged
    line decides whether lines are `HASH  NAME` (GNU) or `HASH NAME` (BSD reversed) for the
    rest of the file, so that a name cannot be made to start with a space."""

    def __init__(self, s: Settings):
        self.s = s
        self.reversed_form: Optional[bool] = None

    def parse(self, line: str) -> Optional[CheckLine]:
        text = line.lstrip(" \t")
        escaped = text.startswith("\\")
        if escaped:
            text = text[1:]
        found = self._tagged(text) or self._untagged(text)
        if found is None:
            return None
        name, expected, digest = found
        if escaped:
            name = _unescape(name)
            if name is None:
                return None
        return CheckLine(name, expected.lower(), digest)

    def _tagged(self, text: str):
        for digest in self._tag_candidates():
            tag = digest.tag
            if not text.startswith(tag):
                continue
            rest = text[len(tag):]
            if tag == "BLAKE2b" and rest.startswith("-"):
                bits_text = rest[1:].split(" ", 1)[0].split("(", 1)[0]
                bits = _tag_bits(bits_text)
                if bits is None:
                    return None
                digest = blake2b(bits)
                rest = rest[1 + len(bits_text):]
            rest = rest[1:] if rest.startswith(" ") else rest
            if not rest.startswith("("):
                return None
            close = rest.rfind(")")
            if close < 1:
                return None
            name, tail = rest[1:close], rest[close + 1:]
            tail = tail[1:] if tail.startswith(" ") else tail
            if not tail.startswith("="):
                return None
            tail = tail[1:]
            tail = tail[1:] if tail.startswith(" ") else tail
            if not _is_hex(tail, digest.hex_length):
                return None
            return name, tail, digest
        return None

    def _tag_candidates(self) -> list:
        if self.s.digest is None:
            return list(DIGESTS.values())     # cksum -c without -a: the tag names it
        return [self.s.digest]

    def _untagged(self, text: str):
        digest = self.s.digest
        if digest is None:
            return None
        end = 0
        while end < len(text) and text[end] not in " \t":
            end += 1
        hexdigest = text[:end]
        if end >= len(text):
            return None
        if digest.tag == "BLAKE2b" and self.s.program == "b2sum" and len(hexdigest) != digest.hex_length:
            bits = len(hexdigest) * 4
            if not (0 < bits <= 512 and bits % 8 == 0) or digest.bits != 512:
                return None
            digest = blake2b(bits)
        if not _is_hex(hexdigest, digest.hex_length):
            return None
        rest = text[end + 1:]
        if len(rest) == 1 or rest[:1] not in (" ", "*"):
            if self.reversed_form is False:
                return None
            self.reversed_form = True
        elif self.reversed_form is not True:
            self.reversed_form = False
            rest = rest[1:]
        return rest, hexdigest, digest


_TAG_LENGTH = re.compile(r"\+?(?:0[xX]([0-9a-fA-F]{1,8})|(0[0-7]{0,8})|([1-9][0-9]{0,8}))")


def _tag_bits(text: str) -> Optional[int]:
    """The length in a `BLAKE2b-N` tag, if it is one: a number as strtoumax reads it in base 0
    (0x10 and 020 are 16), a multiple of 8 up to 512."""
    match = _TAG_LENGTH.fullmatch(text)
    if match is None:
        return None
    hexadecimal, octal, decimal = match.groups()
    bits = int(hexadecimal, 16) if hexadecimal else int(octal, 8) if octal else int(decimal)
    return bits if bits and not bits % 8 and bits <= 512 else None


def _is_hex(text: str, length: int) -> bool:
    return len(text) == length and all(c in "0123456789abcdefABCDEF" for c in text)


def _unescape(name: str) -> Optional[str]:
    out, i = [], 0
    while i < len(name):
        c = name[i]
        if c == "\\":
            nxt = name[i + 1:i + 2]
            if nxt == "\\":
                out.append("\\")
            elif nxt == "n":
                out.append("\n")
            else:
                return None
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


@dataclass
class Tally:
    misformatted: int = 0
    unreadable: int = 0
    mismatched: int = 0
    verified: int = 0


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _check_file(ctx, s: Settings, list_name: str) -> bool:
    """Verify the sums listed in one file; True when it passes."""
    shown_list = "standard input" if list_name == "-" else list_name
    try:
        text = read_bytes(ctx, list_name).decode("utf-8", "surrogateescape")
    except FsError as e:
        ctx.err(f"{s.program}: {shell_quote(list_name)}: {e.strerror}\n")
        return False
    reader, tally, properly_formatted = LineReader(s), Tally(), 0
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        if not number % 1024:
            ctx.budget.check_clock()
        if line.startswith("#"):
            continue
        entry = reader.parse(line[:-1] if line.endswith("\r") else line)
        if entry is None:
            tally.misformatted += 1
            if s.warn:
                tag = s.digest.tag if s.digest else "checksum"
                ctx.err(f"{s.program}: {shell_quote(shown_list)}: {number}: improperly formatted "
                        f"{tag} checksum line\n")
            continue
        properly_formatted += 1
        _verify(ctx, s, entry, tally)
    if not properly_formatted:
        ctx.err(f"{s.program}: {shell_quote(shown_list)}: no properly formatted checksum lines found\n")
        return False
    if not s.status_only:
        if tally.misformatted:
            ctx.err(f"{s.program}: WARNING: "
                    f"{_plural(tally.misformatted, 'line is', 'lines are')} improperly formatted\n")
        if tally.unreadable:
            ctx.err(f"{s.program}: WARNING: {_plural(tally.unreadable, 'listed file', 'listed files')}"
                    f" could not be read\n")
        if tally.mismatched:
            ctx.err(f"{s.program}: WARNING: "
                    f"{_plural(tally.mismatched, 'computed checksum', 'computed checksums')}"
                    f" did NOT match\n")
    if s.ignore_missing and not tally.verified:
        if not s.status_only:
            ctx.err(f"{s.program}: {shell_quote(shown_list)}: no file was verified\n")
        return False
    return not (tally.mismatched or tally.unreadable or (s.strict and tally.misformatted))


def _verify(ctx, s: Settings, entry: CheckLine, tally: Tally):
    # -c's report escapes a name only for a newline (a backslash alone is printed as it is)
    prefix, shown = _escaped(entry.name) if "\n" in entry.name else ("", entry.name)
    try:
        data = read_bytes(ctx, entry.name)
    except FsError as e:
        if s.ignore_missing and e.strerror == "No such file or directory":
            return
        tally.unreadable += 1
        ctx.err(f"{s.program}: {shell_quote(entry.name)}: {e.strerror}\n")
        if not s.status_only:
            ctx.out(f"{prefix}{shown}: FAILED open or read\n")
        return
    tally.verified += 1
    if entry.digest.hexdigest(ctx.budget, data) != entry.expected:
        tally.mismatched += 1
        if not s.status_only:
            ctx.out(f"{prefix}{shown}: FAILED\n")
    elif not (s.quiet or s.status_only):
        ctx.out(f"{prefix}{shown}: OK\n")


# ------------------------------------------------------------------ the commands

_COMMON = ("-c, --check         read checksums from the FILEs and check them",
           "    --tag           create a BSD-style checksum",
           "-z, --zero          end each output line with NUL, not newline",
           "    --ignore-missing  don't fail or report status for missing files",
           "    --quiet         don't print OK for each successfully verified file",
           "    --status        don't output anything, status code shows success",
           "    --strict        exit non-zero for improperly formatted checksum lines",
           "-w, --warn          warn about improperly formatted checksum lines")
_MODES = ("-b, --binary        read in binary mode", "-t, --text          read in text mode (default)")


def _usage(name: str) -> Usage:
    if name == "cksum":
        return Usage("[OPTION]... [FILE]...", "Print or verify checksums.\n"
                     "By default use the 32 bit CRC algorithm.",
                     ("-a, --algorithm=TYPE  select the digest type to use",
                      "-l, --length=BITS   digest length in bits (blake2b)",
                      "    --untagged      create a reversed style checksum, without digest type")
                     + _COMMON)
    label = "BLAKE2b (512-bit)" if name == "b2sum" else DIGESTS[PROGRAMS[name]].tag
    extra = ("-l, --length=BITS   digest length in bits",) if name == "b2sum" else ()
    return Usage("[OPTION]... [FILE]...", f"Print or check {label} checksums.",
                 _MODES + extra + _COMMON)


@command("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum",
         usage={name: _usage(name) for name in (*PROGRAMS, "cksum")},
         needs_files=False)
def run(ctx, argv):
    s, operands = _parse(argv)
    if not s.check:
        return _print_sums(ctx, s, operands)
    results = [_check_file(ctx, s, name) for name in operands or ["-"]]
    return 0 if all(results) else 1
