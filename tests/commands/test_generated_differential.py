"""Generated differential cases: seeded random inputs and option sets for the text commands,
run through the real GNU tool and through the engine; stdout and status must match.

Each case is rebuilt from its seed (`<command>-<n>`), so a failure names a case that
reproduces. The real tools run under real bash with LC_ALL=C.UTF-8.
"""
import os
import random
import shlex
import shutil

import pytest

from support import HAVE_BASH5, run_bash, scaled

CASES_PER_COMMAND = scaled(20)

WORDS = ["apple", "Apple", "banana", "b", "10", "9", "-3", "1.5", "-0", ".5", "2K", "1M", "Jan", "feb",
         "1.10", "1.9", "foo", "bar", "a:b", "x y", "", "  lead", "trail  ", "tab\there", "0x1A", "é", "1e3"]
ASCII_WORDS = [w for w in WORDS if w.isascii()]


def lines(rng: random.Random, words, count=(0, 9), fields=(1, 3), sep=" ") -> str:
    rows = [sep.join(rng.choice(words) for _ in range(rng.randint(*fields)))
            for _ in range(rng.randint(*count))]
    text = "".join(row + "\n" for row in rows)
    return text[:-1] if text and rng.random() < 0.15 else text     # sometimes no final newline


def repeated_lines(rng: random.Random, option: str) -> str:
    pool = ["a", "a", "A", "b 1", "b 2", "c x1", "c x1", "", "aa", "ab"]
    return "".join(rng.choice(pool) + "\n" for _ in range(rng.randint(0, 10)))


def colon_fields(rng: random.Random, option: str) -> str:
    # cut -c counts characters, as POSIX says; GNU cut counts bytes there (it splits é)
    words = ["a", "bb", "", "c c", "4"] + ([] if option.startswith("-c") else ["é"])
    return lines(rng, words, fields=(1, 5), sep=rng.choice([":", "\t"]))


def grep_text(rng: random.Random, option: str) -> str:
    return lines(rng, ["foo", "bar", "foobar", "a1", "x", "B22", "", "a.b", "FOO"], fields=(1, 3))


# command → (option sets, input maker)
GENERATORS = {
    "sort": (["", "-n", "-r", "-rn", "-k2", "-k2,2n", "-k2,2 -k1,1r", "-u", "-f", "-s -k1,1", "-t: -k2n",
              "-h", "-g", "-V", "-b -k2", "-nu", "-c", "-M", "-fu", "-k1.2,1.3", "-rk2,2n", "-k2,2nr -k1,1",
              "-k1,1r -k2n", "-r -k2", "-rc", "-c -k2n", "-ru", "-t' ' -k2,2r -k1,1n"],
             # -k1.2 counts characters here, bytes in GNU sort: é only where offsets are whole fields
             lambda rng, option: lines(rng, ASCII_WORDS if "." in option else WORDS)),
    "uniq": (["", "-c", "-d", "-u", "-i", "-f1", "-s1", "-w1", "-D", "-ci", "-u -i"], repeated_lines),
    "cut": (["-d: -f1", "-d: -f2-", "-d: -f1,3", "-d: -s -f2", "-c1-3", "-c2-", "-b1,3", "-d: --complement -f2",
             "-f2", "-d: -f3 --output-delimiter=,", "-f1-2", "-s -f2"], colon_fields),
    "tr": (["a-z A-Z", "-d aeiou", "-s ' '", "-c a-z _", "-cd 0-9", "'[:lower:]' '[:upper:]'", "-s a-z",
            "abc xy", "-d '[:space:]'", "'\\n' ' '", "-ds a-c x", "'[:digit:]' '[:alpha:]'", "ab '[:upper:]'",
            "-c '[:digit:]' xy", "'a-z[:upper:]' 'A-Z[:lower:]'", "-c a '[:upper:]'", "-cs '[:alpha:]' '\\n'"],
           lambda rng, option: lines(rng, ASCII_WORDS)),
    "wc": (["", "-l", "-w", "-c", "-m", "-L", "-lw"], lambda rng, option: lines(rng, WORDS)),
    "head": (["-n 2", "-n -2", "-c 5", "-3", "-n 0", "-c -3"], lambda rng, option: lines(rng, WORDS)),
    "tail": (["-n 2", "-n +2", "-c 4", "-3", "-n 0", "-c +3"], lambda rng, option: lines(rng, WORDS)),
    "grep": (["a", "-v a", "-c b", "-n '^[0-9a]'", "-i foo", "-w foo", "-x foo", "-o '[0-9]\\+'",
              "-E 'a|B'", "-F '.'", "-m1 a", "-A1 x", "-B1 x", "-C1 x", "-e a -e 1", "-vc '^$'",
              "-E '^(foo|bar)$'", "-q a", "-nv foo", "-ow 'foo\\|bar'"], grep_text),
    "sed": (["s/a/X/", "s/a/X/g", "-n /a/p", "/^$/d", "1d", "'$d'", "2,3d", "-E 's/([0-9]+)/<\\1>/g'",
             "y/abc/xyz/", "-n '$='", "G", "'$!N;P;D'", "'s/.*/\\U&/'", "-n l", "/a/,/b/d", "'s/o*/-/2'",
             "-n '2~2p'", "'1!G;h;$!d'", "-s -n '$p'", "'/foo/c\\\nchanged'", "'H;$!d;x'", "'$!d;x;G'",
             "-n '${x;p;x;p}'", "'s/\\bfoo/F/g'", "'s/o\\|oo/0/g'"], grep_text),
    "nl": (["", "-ba", "-bt -w3", "-s: -v5", "-nln"], lambda rng, option: lines(rng, ASCII_WORDS)),
    "paste": (["-s", "-s -d,", "-s -d ':;'", "-d, - -"], lambda rng, option: lines(rng, ASCII_WORDS)),
    "fold": (["-w 4", "-w 3 -s", "-w 1", "-s -w 6"], lambda rng, option: lines(rng, ASCII_WORDS, fields=(1, 4))),
    "rev": ([""], lambda rng, option: lines(rng, WORDS)),
    "tac": ([""], lambda rng, option: lines(rng, WORDS)),
    "base64": (["", "-w 8", "-w 0"], lambda rng, option: lines(rng, WORDS)),
}


def _seq_case(rng: random.Random) -> tuple[str, str]:
    numbers = [str(rng.randint(-5, 12)) for _ in range(3)]
    form = rng.choice([numbers[:1], numbers[:2], [numbers[0], rng.choice(["1", "2", "-1", "0.5", "-2"]), numbers[1]]])
    flags = rng.choice(["", "-w", "-s,", "-f %.2f", "-s ' ' -w"])
    return f"seq {flags} {' '.join(form)}", ""


def _expr_case(rng: random.Random) -> tuple[str, str]:
    value = lambda: rng.choice([str(rng.randint(-20, 20)), "0", "abc", "a1", "''", "10", "007"])
    form = rng.choice(["binary", "binary", "length", "substr", "index", "match", "colon"])
    if form == "binary":
        op = rng.choice(["+", "-", "'*'", "/", "%", "=", "!=", "'<'", "'>'", "'<='", "'>='", "'|'", "'&'"])
        return f"expr {value()} {op} {value()}; echo status=$?", ""
    word = rng.choice(["hello", "abcabc", "x", "''", "a.b.c", "bcd"])
    if form == "length":
        return f"expr length {word}; echo status=$?", ""
    if form == "substr":
        return f"expr substr {word} {rng.randint(0, 4)} {rng.randint(0, 4)}; echo status=$?", ""
    if form == "index":
        return f"expr index {word} {rng.choice(['l', 'cb', 'z', '.'])}; echo status=$?", ""
    pattern = rng.choice(["'a*'", "'h\\(.*\\)o'", "'.*c'", "'[a-c]*'", "'x'", "'\\(ab\\)*'",
                          "'\\(b\\|bc\\)'", "'a\\|ab\\|abc'"])
    if form == "match":
        return f"expr match {word} {pattern}; echo status=$?", ""
    return f"expr {word} : {pattern}; echo status=$?", ""


def _path_case(rng: random.Random) -> tuple[str, str]:
    parts = ["", "a", "b.txt", "..", ".", "dir", "c.tar.gz"]
    path = lambda: shlex.quote("/".join(rng.choice(parts) for _ in range(rng.randint(1, 4))) or "/")
    form = rng.choice(["dirname", "basename", "basename-suffix", "basename-a", "dirname-many", "basename-s"])
    if form == "dirname":
        return f"dirname {path()}", ""
    if form == "dirname-many":
        return f"dirname {path()} {path()}", ""
    if form == "basename":
        return f"basename {path()}", ""
    if form == "basename-suffix":
        return f"basename {path()} {rng.choice(['.txt', '.gz', 'a', 'txt'])}", ""
    if form == "basename-a":
        return f"basename -a {path()} {path()}", ""
    return f"basename -s {rng.choice(['.txt', '.gz'])} {path()} {path()}", ""


def _date_case(rng: random.Random) -> tuple[str, str]:
    fields = ["%Y", "%m", "%d", "%H", "%M", "%S", "%j", "%a", "%b", "%A", "%B", "%s", "%u", "%w", "%y",
              "%e", "%p", "%I", "%F", "%T", "%D", "%%", "%Z", "%z", "%R", "%C", "%h", "%k", "%l", "%n", "%t"]
    fmt = shlex.quote("+" + "-".join(rng.choice(fields) for _ in range(rng.randint(1, 4))))
    when = rng.choice([f"@{rng.randint(0, 2_000_000_000)}", "2024-02-29", "'2024-02-29 13:45:07'",
                       "2000-01-01T00:00:00", f"@{rng.randint(-100000, 100000)}"])
    return f"date -u -d {when} {fmt}", ""


def _printf_case(rng: random.Random) -> tuple[str, str]:
    conversions = ["%d", "%5d", "%-5d|", "%05d", "%+d", "% d", "%x", "%X", "%o", "%#x", "%s", "%5s|", "%-5s|",
                   "%.2s", "%c", "%5.2f", "%e", "%g", "%.3g", "%b", "%q", "%%", "%i", "%u"]
    fmt = "".join(rng.choice(conversions) + rng.choice([" ", ",", "\\n"]) for _ in range(rng.randint(1, 3)))
    args = [rng.choice(["42", "-7", "0x1f", "077", "'A", "3.5", "abc", "'a b'", "'x\\ty'", "''", "1e3"])
            for _ in range(rng.randint(0, 4))]
    return f"printf '{fmt}' {' '.join(args)}; echo \" status=$?\"", ""


def _xargs_case(rng: random.Random) -> tuple[str, str]:
    flags = rng.choice(["-n 2", "-n 1", "-I{} echo [{}]", "-L 1", "-r", "-n 3 -r", "-d ,", "-0", "-I X echo X-X"])
    words = [rng.choice(["a", "b c", "d", "'e'", "f,g", ""]) for _ in range(rng.randint(0, 6))]
    if "-0" in flags:
        stdin = "".join(w.replace("'", "") + "\0" for w in words)
    elif "-d" in flags:
        stdin = ",".join(w.replace("'", "") for w in words) + "\n"
    else:
        stdin = "".join(w + "\n" for w in words)
    command = "" if "echo" in flags else " echo"
    return f"xargs {flags}{command}", stdin


def _column_case(rng: random.Random) -> tuple[str, str]:
    flags = rng.choice(["-t", "-t -s,", "-t -s ':,'", "-t -o ' | '", "-s, -t -o -"])
    cells = ["a", "bb", "ccc", "1", "22", "long_cell"]
    sep = "," if "-s," in flags or "-s :," in flags.replace("'", "") else " "
    rows = [sep.join(rng.choice(cells) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 5))]
    return f"column {flags}", "".join(r + "\n" for r in rows)


AWK_EXPRESSIONS = ["$1", "$2", "$NF", "NF", "NR", "$1+$2", "$1*2", "$2/4", "$1%3", "-$1", "$1 $2", "length($0)",
                   "substr($0,2,3)", 'index($0,"b")', "toupper($1)", "($1>$2)", "($1==$2)", '($1<"m")',
                   "($0 ~ /a/)", "int($2/3)", "x+1", "a[$1]", "s", '($2 != "")', '(NF>2 ? "many" : "few")',
                   'sprintf("%05.1f", $2)', 'sprintf("%-4s|", $1)', "$1^2", "($1 && $2)", "(!$1)", "k"]
AWK_STATEMENTS = ["x += $2", "a[$1]++", "s = s $1", "n = split($0, p, /[ ,]/)", 'gsub(/a/, "A")',
                  'sub(/[0-9]+/, "<&>", $2)', '$3 = "new"', "NF = 2", 'if ($1 > 2) print "big", $1; else print "small"',
                  "for (i = 1; i <= NF; i++) c += length($i)", "while (j < 3) { j++; if (j == 2) continue; t = t j }",
                  "next", "k = ($2 > 5) ? $2 : -$2", "delete a[$1]", '$0 = $2 " " $1', 'printf "%s-%d\\n", $1, $2',
                  "print", "m[NR % 3] = $0"]
AWK_ENDS = ["print x, s", "for (k in a) cnt++; print cnt", "print n, c, t", "print length(a)", "print NR, x+0",
            'print m[0] "|" m[1] "|" m[2]', "print k"]
AWK_WORDS = ["apple", "banana", "3", "10", "7.5", "-2", "a", "cab", "0", "", "x,y", "12abc"]
AWK_FUNCTIONS = {
    "function f(a, b) { return a + b }": ["f($1, $2)", "f(f(1, 2), NR)"],
    "function g(arr, k) { arr[k] = k * 2; return length(arr) }": ["g(q, $1)", "g(q, NR) + length(q)"],
    "function h(s,   i, r) { for (i = length(s); i > 0; i--) r = r substr(s, i, 1); return r }": ["h($1)", "h(h($0))"],
    "function fact(n) { return n <= 1 ? 1 : n * fact(n - 1) }": ["fact(NR)", "fact(NR % 5)"],
    "function cnt(arr,   k, c) { for (k in arr) c++; return c + 0 }": ["cnt(a)", "cnt(q)"],
    'function upd(v) { v = v "!"; gl = v; return v }': ["upd($2)", "gl"],
}


def _awk_case(rng: random.Random) -> tuple[str, str]:
    """A program of random rules (patterns, assignments, field and NF changes, loops, arrays),
    half of them with user functions (array parameters, locals, recursion)."""
    functions = rng.sample(sorted(AWK_FUNCTIONS), rng.randint(1, 3)) if rng.random() < 0.5 else []
    expressions = AWK_EXPRESSIONS + [call for fn in functions for call in AWK_FUNCTIONS[fn]]
    rules = list(functions)
    for _ in range(rng.randint(1, 3)):
        pattern = rng.choice(["", "NR > 1 ", "/a/ ", "$2 > 3 ", "NF == 2 ", "!/x/ ", "NR==1, NR==2 "])
        body = [rng.choice(AWK_STATEMENTS) for _ in range(rng.randint(1, 3))]
        body += ["print " + ", ".join(rng.choice(expressions) for _ in range(rng.randint(1, 3)))
                 for _ in range(rng.randint(0, 2))]
        rules.append(f"{pattern}{{ {'; '.join(body)} }}")
    if rng.random() < 0.7:
        rules.append(f"END {{ {rng.choice(AWK_ENDS)} }}")
    text = "".join(" ".join(rng.choice(AWK_WORDS) for _ in range(rng.randint(1, 4))) + "\n"
                   for _ in range(rng.randint(0, 6)))
    return "awk " + shlex.quote("\n".join(rules)), text


REGEX_ATOMS = ["a", "b", ".", "[ab]", "[^a]", "[[:digit:]]", "[[:space:]]", "[a-c]", "\\.", "x", "1", "(a|b)", "(ab)",
               "[]a]", "[a-]", "\\w", "\\W", "\\b", "^", "$", "\\<", "\\>", "[[:upper:]]", "\\s", "^^"]
REGEX_QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,2}", "{0,}", "{,2}"]
BRE_SPELLING = {"(a|b)": "\\(a\\|b\\)", "(ab)": "\\(ab\\)", "+": "\\+", "?": "\\?", "{2}": "\\{2\\}",
                "{1,2}": "\\{1,2\\}", "{0,}": "\\{0,\\}", "{,2}": "\\{,2\\}"}
REGEX_LINES = ["ab", "aab b", "x1 y22", "A.b", "  lead", "a]b-c", "abab", "", "foo_bar baz", "1.2.3", "^^x", "BA ab"]


def _regex_case(rng: random.Random) -> tuple[str, str]:
    """One random pattern, spelled as an ERE and as a BRE, through grep and sed."""
    atoms = []
    for _ in range(rng.randint(1, 4)):
        atom = rng.choice(REGEX_ATOMS)
        quantifier = "" if atom in ("^", "$", "\\b", "\\<", "\\>", "^^") else rng.choice(REGEX_QUANTIFIERS)
        atoms.append((atom, quantifier))
    ere = "".join(a + q for a, q in atoms)
    bre = "".join(BRE_SPELLING.get(a, a) + BRE_SPELLING.get(q, q) for a, q in atoms)
    command = rng.choice([f"grep -c -E {shlex.quote(ere)}", f"grep -o -E {shlex.quote(ere)}",
                          f"grep -c {shlex.quote(bre)}", "sed -E " + shlex.quote(f"s/{ere}/<&>/g"),
                          "sed " + shlex.quote(f"s/{bre}/<&>/"),
                          f"grep -n -i -E {shlex.quote(ere)}", f"grep -w -E {shlex.quote(ere)}"])
    text = "".join(rng.choice(REGEX_LINES) + "\n" for _ in range(rng.randint(1, 6)))
    return command + '; echo "[$?]"', text


SED_ADDRESSES = ["", "", "1", "2", "$", "/a/", "/^b/", "2,3", "/a/,/c/", "0,/a/", "1~2", "2~3", "3,+1", "/x/,$", "$!",
                 "1!", "/a/!"]
SED_COMMANDS = ["p", "d", "s/a/X/", "s/[bc]/<&>/g", "s/\\(.\\)\\(.\\)/\\2\\1/", "y/abc/ABC/", "=", "l", "n", "N", "P",
                "h", "H", "g", "G", "x", "a\\\nAPP", "i\\\nINS", "c\\\nCHG", "q", "Q", "s/a/\\n/", "s/$/!/",
                "s/^/>/", "{p;p}", "s/a*/-/g", "s/b/B/2", "s/A/Z/I"]      # (no D: G;D can loop forever)
SED_LINES = ["abc", "bca", "cab", "a", "", "xyz", "aaa", "b c a"]


def _sed_script_case(rng: random.Random) -> tuple[str, str]:
    """A sed script of one to three addressed commands (ranges, n/N, hold space, a/i/c, q)."""
    script = "\n".join(rng.choice(SED_ADDRESSES) + rng.choice(SED_COMMANDS) for _ in range(rng.randint(1, 3)))
    text = "".join(rng.choice(SED_LINES) + "\n" for _ in range(rng.randint(1, 6)))
    return f"sed {rng.choice(['', '-n', '-s'])} {shlex.quote(script)}", text[:-1] if rng.random() < 0.2 else text


AWK_ARRAY_BUILDS = ["c[$1]++", "c[$2] += $3", "c[NR] = $1", "c[$1, $2]++", "c[length($0)]++",
                    "c[NR % 7] = $2", "c[$3 / 4] = 1", "c[substr($1, 1, 1)] += $3", "n = split($0, c)",
                    "if ($1 in c) c[$2]++; else c[$1] = NR", "c[$1]++; if (NR % 3 == 0) delete c[$2]",
                    "c[\"k\" NR]++; c[NR * 31]++", "for (i = 0; i < $3 * 20; i++) c[i $1] = i"]
AWK_LOOP_BODIES = ["print k, c[k]", "print k", "c[k]++; print k", "if (k in c) print k"]
# ASCII: mawk counts bytes
AWK_ORDER_WORDS = ["alpha", "beta", "gamma", "delta", "pi", "rho", "x", "y", "1", "2", "10", "-3", ""]


def _awk_loop_order_case(rng: random.Random) -> tuple[str, str]:
    """An array built by one or two common idioms, then walked with `for (k in c)` (twice,
    the second walk after the first's uses): the order must be mawk's."""
    builds = "; ".join(rng.sample(AWK_ARRAY_BUILDS, rng.randint(1, 2)))
    walks = " ".join(f"for (k in c) {{ {rng.choice(AWK_LOOP_BODIES)} }}" for _ in range(rng.randint(1, 2)))
    text = "".join(f"{rng.choice(AWK_ORDER_WORDS)} {rng.choice(AWK_ORDER_WORDS)} {rng.randint(0, 60)}\n"
                   for _ in range(rng.randint(0, 120)))
    return "awk " + shlex.quote(f"{{ {builds} }} END {{ {walks} }}"), text


# (below 2**31: the system mawk 1.3.4 prints larger integers with OFMT, where other awks and
# we print their digits; test_awk_integer_arithmetic_of_long_fields_matches_its_float_path
# covers long fields)
AWK_INTEGER_WORDS = ["0", "7", "007", "42", "100", "65535", "99999999", "-5", "+3", "2.5", "1e3", "",
                     "x", "12abc", "1.0", "-0"]


def _awk_integer_term(rng: random.Random, depth: int) -> str:
    """An expression of fields, integer constants, +, -, %, unary minus and parentheses."""
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(["$1", "$2", "$3", "$4", "$1", "$2", "3", "97", "0", "100000"])
    op = rng.choice(["+", "-", "%", "%", "neg", "()"])
    if op == "neg":
        return "(- " + _awk_integer_term(rng, depth - 1) + ")"
    if op == "()":
        return "(" + _awk_integer_term(rng, depth - 1) + ")"
    right = rng.choice(["7", "97", "1", "-4", "0.5", "(2 + 1)"]) if op == "%" else _awk_integer_term(rng, depth - 1)
    return f"({_awk_integer_term(rng, depth - 1)} {op} {right})"


def _awk_integer_case(rng: random.Random) -> tuple[str, str]:
    """Integer arithmetic on fields, printed and concatenated: computed in Python ints where
    the fields hold plain digits, in floats otherwise; the digits must be awk's either way."""
    terms = [_awk_integer_term(rng, rng.randint(1, 4)) for _ in range(rng.randint(1, 3))]
    sums = " + ".join(rng.choice(["$1", "$2", "$3"]) for _ in range(rng.randint(2, 12)))
    program = f"{{ print {', '.join(terms)}; print ({terms[0]}) \"|\" ({sums}) }}"
    text = "".join(" ".join(rng.choice(AWK_INTEGER_WORDS) for _ in range(rng.randint(0, 4))) + "\n"
                   for _ in range(rng.randint(1, 8)))
    return "awk " + shlex.quote(program), text


SCRIPT_MAKERS = {"seq": _seq_case, "expr": _expr_case, "basename": _path_case, "date": _date_case,
                 "printf": _printf_case, "xargs": _xargs_case, "column": _column_case, "awk": _awk_case,
                 "awk-integer": _awk_integer_case, "awk-loop-order": _awk_loop_order_case,
                 "regex": _regex_case, "sed-script": _sed_script_case}
# the real tool each maker needs
TOOL_OF = {"regex": "grep", "sed-script": "sed", "awk-loop-order": "awk", "awk-integer": "awk"}


def _case(command: str, index: int) -> tuple[str, str]:
    rng = random.Random(f"{command}-{index}")
    if command in SCRIPT_MAKERS:
        return SCRIPT_MAKERS[command](rng)
    options, make_input = GENERATORS[command]
    option = rng.choice(options)
    return f"{command} {option}", make_input(rng, option)


CASES = [(command, index) for command in list(GENERATORS) + list(SCRIPT_MAKERS)
         for index in range(CASES_PER_COMMAND * (5 if command in ("awk", "awk-integer", "regex", "sed-script") else 1))]


@pytest.mark.differential
@pytest.mark.parametrize("command,index", CASES, ids=[f"{c}-{i}" for c, i in CASES])
def test_generated_case_matches_the_real_tool(command, index, run, tmp_path):
    tool = TOOL_OF.get(command, command)
    if not HAVE_BASH5 or shutil.which(tool) is None:
        pytest.skip(f"real bash 5 and {tool} are needed")
    if command == "awk-loop-order" and "mawk" not in os.path.realpath(shutil.which("awk")):
        pytest.skip("the loop order is mawk's: the system awk must be mawk")
    script, stdin = _case(command, index)
    want_out, want_status = run_bash(script, stdin=stdin, tmp_path=tmp_path)
    got = run(script, stdin=stdin)
    assert (got.stdout, got.exit_code) == (want_out, want_status), \
        f"{script} <<< {stdin!r}\nstderr: {got.stderr}\n(reproduce: {shlex.quote(script)})"


# (not "": GNU grep 3.8 prints no count at all for `grep -vc ''`)
GREP_WHOLE_PATTERNS = ["a", "^a", "a$", "^$", "b.c", "[0-9]+", "^[^a]", "x*", "\\<foo", "bar\\>", "^(a|b)",
                       "o{2}", "[[:digit:]]$", "[[:space:]]", ".", "^.", "c$", "\\bab", "a.*b", "[A-Z]"]
GREP_WHOLE_LINES = ["abc", "", "foo bar", "x", "a1", "b2c", "ccc", "  lead", "A.b", "barfoo", "9", "ab ab",
                    "foo", "xa", "Zz"]


@pytest.mark.differential
@pytest.mark.parametrize("seed", range(60))
def test_grep_over_many_lines_matches_gnu_grep(seed, run, tmp_path):
    """grep searches the whole input at once where no match can cross a line: the lines it
    selects, their numbers and counts must be GNU grep's, wherever the matches fall."""
    if not HAVE_BASH5 or shutil.which("grep") is None:
        pytest.skip("real bash 5 and grep are needed")
    rng = random.Random(f"grep-whole-{seed}")
    pattern = rng.choice(GREP_WHOLE_PATTERNS)
    flags = rng.choice(["", "-v", "-c", "-n", "-vn", "-i", "-x", "-w", "-vc", "-m2", "-n -A1", "-iv"])
    text = "".join(rng.choice(GREP_WHOLE_LINES) + "\n" for _ in range(rng.randint(0, 40)))
    if text and rng.random() < 0.3:
        text = text[:-1]                   # no final newline
    script = f"grep -E {flags} {shlex.quote(pattern)}; echo \"[$?]\""
    want_out, want_status = run_bash(script, stdin=text, tmp_path=tmp_path)
    got = run(script, stdin=text)
    assert (got.stdout, got.exit_code) == (want_out, want_status), f"{script} <<< {text!r}"


SORT_KEYS = ["1", "2", "10", "-3", "0", "-0", "1.5", ".5", "007", "", "x", " 4", "\t2", "-", "3e2"]
SORT_TAILS = ["", " a", " b", " a b", ",z", " A", "\t1", " é"]


@pytest.mark.differential
@pytest.mark.parametrize("seed", range(24))
def test_numeric_sort_of_many_lines_with_repeated_keys_matches_gnu_sort(seed, run, tmp_path):
    """sort -n groups lines by value where keys repeat a lot, and orders each group by whole
    line: the order must be GNU sort's, reversed or not, by the whole line or by a -k key."""
    if not HAVE_BASH5 or shutil.which("sort") is None:
        pytest.skip("real bash 5 and sort are needed")
    rng = random.Random(f"sort-groups-{seed}")
    keys = rng.sample(SORT_KEYS, rng.randint(2, 6))
    lines = [rng.choice(keys) + rng.choice(SORT_TAILS) for _ in range(rng.randint(64, 900))]
    option = rng.choice(["-n", "-rn", "-nr", "-k1,1n", "-k1,1nr", "-t, -k1n", "-t, -k1,1rn"])
    text = "\n".join(lines) + "\n"
    script = f"sort {option}"
    want_out, want_status = run_bash(script, stdin=text, tmp_path=tmp_path)
    got = run(script, stdin=text)
    assert (got.stdout, got.exit_code) == (want_out, want_status), f"{script} <<< {text[:200]!r}"
