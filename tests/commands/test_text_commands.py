"""Text commands against the GNU tools on this machine: the same pipeline runs in real bash
(with GNU sed, grep, sort, coreutils) and in the engine; stdout and status must match."""
import shutil

import pytest

from support import HAVE_BASH5, run_bash

SED_CASES = [
    r"""printf 'hello world\nfoo bar\n' | sed 's/o/0/g'""",
    r"""echo 'hello' | sed -E 's/(h)(e)/\2\1/'""",
    r"""echo 'Hello World' | sed 's/\w\+/[&]/g'""",
    r"""echo 'abc' | sed 'y/abc/xyz/'""",
    r"""printf 'x\ny\n' | sed 'a tail'""",
    r"""printf 'x\ny\n' | sed '='""",
    r"""printf '1\n2\n3\n4\n5\n' | sed -n '0~2p'""",
    r"""printf '1\n2\n3\n4\n5\n' | sed '/2/,/4/d'""",
    r"""printf '1\n2\n3\n4\n5\n' | sed -n '/2/,+1p'""",
    r"""echo 'foo bar' | sed 's/\(foo\) \(bar\)/\U\2\E \u\1/'""",
    r"""printf 'a b\n' | sed 's/ /\n/'""",
    r"""printf 'one\ntwo\n' | sed '2q'""",
    r"""printf 'one\ntwo\n' | sed -n '$p'""",
    r"""printf 'abc' | sed 's/b/B/'""",
    r"""echo aaa | sed 's/a/b/2'""",
    r"""echo aaa | sed 's/a/b/2g'""",
    r"""echo 'a.b.c' | sed 's/\./:/g'""",
    r"""echo 'x' | sed 's/x*/-/g'""",
    r"""echo 'abc' | sed 's/b*/-/g'""",
    r"""printf 'a\n\nb\n' | sed '/^$/d'""",
    r"""printf 'l1\nl2\nl3\n' | sed -n '2{p;p}'""",
    r"""echo 'path/to/file' | sed 's|/|_|g'""",
    r"""printf 'a\tb\n' | sed -n l""",
    r"""printf 'foo\nbar\n' | sed ':a;N;$!ba;s/\n/ /g'""",
    r"""printf 'x1\nx2\n' | sed -e 's/x/y/' -e 's/1/one/'""",
    r"""echo 'CamelCase' | sed 's/[A-Z]/_\l&/g'""",
    r"""printf 'a\nb\n' | sed '1!G;h;$!d'""",
    r"""printf 'hello\n' | sed 's/l/L/; t; s/h/H/'""",
    r"""printf '1\n2\n3\n' | sed '0,/2/d'""",
]

OTHER_CASES = [
    # head -n N and tail -n N cut without splitting into lines: every edge of separators
    r"""for input in '' 'a' 'a\n' 'a\nb' 'a\nb\n' '\n\n' 'a\n\nb\n\n' 'x\ny\nz'; do
  for n in 0 1 2 3 5; do
    x=$(printf "$input" | head -n $n; echo .); printf 'h %s %q\n' $n "${x%.}"
    x=$(printf "$input" | tail -n $n; echo .); printf 't %s %q\n' $n "${x%.}"
    x=$(printf "$input" | tr '\n' '\0' | head -z -n $n | tr '\0' '\n'; echo .); printf 'hz %s %q\n' $n "${x%.}"
    x=$(printf "$input" | tr '\n' '\0' | tail -z -n $n | tr '\0' '\n'; echo .); printf 'tz %s %q\n' $n "${x%.}"
  done
done""",
    r"""seq 1 100000 | wc -l; seq -s, 3; seq 0; seq 5 -2 -4; seq 70000 | tail -2; seq 3 | wc -w -c""",
    r"""printf 'b 2\na 10\nc 1\n' | sort -k2,2n""",
    r"""sort -m <(printf 'a 1\nc 3\n') <(printf 'b 2\nd 4\n'); sort -m -k2,2n <(printf 'x 1\ny 10\n') <(printf 'z 2\nw 3\n'); sort --merge -r <(printf 'c\na\n') <(printf 'b\n')""",
    r"""printf 'b,2\na,10\n' | sort -t, -k2 -rn""",
    r"""printf 'x\ny\nx\n' | sort | uniq -d""",
    r"""printf '5 b\n5 a\n-\n\n 10\n.5\n-1.5 x\n5 a\n' | sort -n""",
    r"""printf '5 b\n5 a\n-\n\n 10\n.5\n-1.5 x\n' | sort -rn""",
    r"""printf '0x10\n9\n1e1\nz\n-0x1p3\n' | sort -g""",
    r"""printf 'a 2\nb 1\nc 2\n' | sort -k2,2nr -k1,1""",
    r"""printf 'A\na\nB\n' | uniq -i -c""",
    r"""printf 'one\ntwo\nthree\n' | grep -n -A1 one""",
    r"""printf 'a\nb\nc\nd\ne\n' | grep -C1 c""",
    r"""printf 'foo\nbar\nbaz\n' | grep -E -x 'ba.'""",
    r"""printf 'foo bar\n' | grep -ow 'bar'""",
    r"""printf 'a.b\naxb\n' | grep -F 'a.b'""",
    r"""printf 'x\n' | grep -e x -e y -c""",
    r"""printf 'tab\there\n' | cut -f2""",
    r"""printf 'a:b:c:d\nnone\n:x\n' | cut -d: -f2-""",
    r"""printf 'a:b:c:d\nnone\n:x\n' | cut -d: -s -f3,1-2 --output-delimiter=,""",
    r"""printf 'a\nb\na\n' | grep -v b""",
    r"""printf 'foo bar foo\nbaz\n' | grep --color=always foo; printf 'foo o\n' | grep --color=always -n -H --label=in o; printf 'xa\n' | grep --color=always -ob a; printf 'a\nfoo\nb\nc\nd\nfoo\n' | grep --color=always -n -C1 foo; printf 'foo\n' | grep --color=never foo; printf 'foo\nx\n' | grep --color=always -v foo""",
    r"""printf 'a\0b\nfoo\n' | grep foo 2>&1; echo rc=$?; printf 'a\0b\nfoo\n' | grep -a foo; printf 'a\0b\nfoo\n' | grep -c foo; printf 'a\0b\nfoo\n' | grep --binary-files=text foo; printf 'a\0b\n' | grep zz; echo rc=$?""",
    r"""printf 'ab\ncd\nxcx\n' | grep -b c; printf 'ab\ncd\nxcx\n' | grep -bo c; printf 'ab\ncd\n' | grep -nb -A1 a; printf 'é\nc\n' | grep -b c; echo hi | grep --line-buffered h""",
    r"""printf '^a\n^^\nx\n*y\n' | grep -c '^^'; printf '^*\n*\n' | grep -c '^*'; echo '^^x' | grep -cE '^^x'""",
    r"""printf 'a\na\nb\nA\na\n' | uniq -c""",
    r"""echo abcdef | cut -c1,3-4 --complement""",
    r"""echo 'hello' | tr -d 'l'""",
    r"""echo 'aabbcc' | tr -s 'a-c'""",
    r"""echo 'abc' | tr -c 'a' 'x'""",
    r"""echo 'hi there' | tr '[:lower:]' '[:upper:]'""",
    r"""printf 'a\nb\nc\n' | head -n -1""",
    r"""printf 'a\nb\nc\n' | tail -c 4""",
    r"""seq 1 0.5 3""",
    r"""seq -f 'n%02g' 3""",
    r"""printf 'a b\nc\n' | wc""",
    r"""printf 'one\ntwo\n' | nl""",
    r"""printf '1\n2\n3\n4\n' | paste -sd+""",
    r"""echo 'abcdefghij' | fold -w 3""",
    r"""printf 'a b c\n\nd\n e\nf g' | cut -d' ' -f1; printf 'x.y\n.z\n' | cut -d. -f1; printf 'p]q\\r\n' | cut -d']' -f1
printf 'p^q\n' | cut -d^ -f1; printf 'a\\b\n' | cut -d'\' -f1; printf 'a b\0c d\0' | cut -z -d' ' -f1 | tr '\0' '|'""",
    r"""echo hello | base64 | base64 -d""",
    r"""expr 'abc123' : '[a-z]*'""",
    r"""expr 10 / 3 \* 2""",
    r"""echo a b c | xargs -n1 echo item""",
    r"""printf 'x\ny\n' | xargs -I{} echo '<{}>'""",
    r"""printf 'a\0b\0' | xargs -0 echo""",
    r"""date -u -d @86400 '+%Y-%m-%d %H:%M:%S %a %j'""",
    r"""TZ=UTC date -u -d '2024-02-29 13:45:00' +%s""",
    r"""basename /a/b/c.txt .txt; basename -a /x/y /z/; dirname /a/b/c; dirname c; dirname /""",
    r"""printf 'a b c
longer x y
' | column -t""",
    r"""printf 'a:bb:c
xxx:y:z
' | column -t -s:""",
    r"""printf 'a	b


' | cat -A""",
    r"""printf 'x

y
' | cat -sb""",
    r"""sleep 0.05; echo slept""",
]

AWK_CASES = r"""
echo 'a b c' | awk '{print $2}'
printf '1 2\n3 4\n' | awk '{s += $1 * $2} END {print s}'
echo 'a:b:c' | awk -F: '{print $NF, NF}'
printf 'x 1\ny 2\nx 3\n' | awk '{sum[$1] += $2} END {for (k in sum) print k, sum[k]}' | sort
echo 'hello world' | awk '{print toupper(substr($1,1,1)) substr($1,2), length($2)}'
awk 'BEGIN {printf "%5.2f|%-4s|%03d|%x|%c|%e\n", 3.14159, "ab", 7, 255, 65, 12345.678}'
awk 'BEGIN {x = "3x"; y = x + 1; print y, (x < 10), ("10" < "9"), (10 < 9)}'
echo '10 9' | awk '{print ($1 < $2), ($1 > $2)}'
awk 'BEGIN { n = split("a,b,c", arr, ","); print n, arr[1], arr[3] }'
echo 'foo bar foo' | awk '{n = gsub(/foo/, "[&]"); print n, $0}'
awk 'BEGIN { if (match("xxabcxx", /b+c/)) print RSTART, RLENGTH }'
printf 'a\nb\nc\nd\n' | awk 'NR==2, NR==3'
awk 'function f(n) { return n <= 1 ? 1 : n * f(n-1) } BEGIN { print f(10) }'
awk 'function fill(a) { a["x"] = 1 } BEGIN { fill(arr); print length(arr), arr["x"] }'
echo '1 2 3' | awk '{$2 = "X"; print; print NF}'
echo '1 2 3' | awk '{NF = 2; print}'
awk 'BEGIN { print 1e6, 0.1 + 0.2, 100/3, 2^10, 7%3, -7%3 }'
printf 'a b\n\nc d\ne\n\n\nf\n' | awk 'BEGIN{RS=""}{print NR": "$0}'
awk -v x=5 'BEGIN { print x * 2 }'
echo | awk '{ print v }' v=hi
awk 'BEGIN { a[1,2] = 3; for (k in a) { split(k, p, SUBSEP); print p[1], p[2] } }'
printf 'l1\nl2\nl3\n' | awk 'NR == 1 { getline; print "got", $0 } END { print NR }'
awk 'BEGIN { exit 3 } END { print "end" }'; echo "status=$?"
awk 'BEGIN { CONVFMT = "%.2f"; a = 3.14159; b = a ""; print b; print a }'
awk 'BEGIN { for (i = 0; i < 5; i++) { if (i == 2) continue; if (i == 4) break; printf "%d ", i }; print "i=" i }'
awk 'BEGIN { i = 0; do { i++; if (i < 3) continue; printf "%d ", i } while (i < 5); print "" }'
awk 'BEGIN { while (1) { n++; if (n > 3) break }; print n }'
printf 'a\nb\nc\n' | awk '{ for (i = 0; i < 3; i++) if ($0 == "b") next } { print }'
printf 'a\nb\nc\n' | awk 'NR == 1 { while ((getline line) > 0) n++; print n, line, NR, $0 }'
printf 'k 1\nk 2\nj 5\n' | awk '{ t[$1] += $2; c[$1]++ } END { print t["k"], c["k"], t["j"], c["j"] }'
awk 'BEGIN { x = 5; y = x++ + ++x; print x, y; a["k"] = 1; print a["k"]++, a["k"], --a["k"] }'
awk 'BEGIN { x = 10; x -= 3; x *= 2; x /= 7; x ^= 3; x %= 5; print x; print (y += 2) * 3, y }'
awk 'function inc(arr, k) { arr[k]++ } BEGIN { inc(c, "x"); inc(c, "x"); print c["x"], length(c) }'
awk 'function fill(a, n,   i) { for (i = 1; i <= n; i++) a[i] = i * i } BEGIN { fill(sq, 4); for (k = 1; k <= 4; k++) printf "%s ", sq[k]; print "" }'
awk 'function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) } BEGIN { print fib(15) }'
awk 'function loc(x,   tmp) { tmp = x * 2; return tmp } BEGIN { tmp = "global"; print loc(4), tmp }'
echo 'a b c d' | awk '{ $5 = "e"; print NF, $0; $2 = ""; print; NF = 3; print $0 "|" }'
echo 'one two' | awk '{ sub(/o/, "0", $2); gsub(/[a-z]/, "<&>", $1); print; print $1 }'
awk 'BEGIN { s = "aaa"; n = gsub(/a/, "b", s); arr["x"] = "hello"; sub(/l+/, "L", arr["x"]); print n, s, arr["x"] }'
printf '1\n2\n3\n4\n5\n6\n' | awk '/2/,/3/ { print "r1", $0 } $0 == 5, 0 { print "r2", $0 }'
echo '3 x' | awk '{ print ($1 > 10), ($2 > 10), ($1 "" > 10), (substr($1, 1) < 10) }'
awk 'BEGIN { a["x"]; if ("x" in a) print "in"; delete a["x"]; if (!("x" in a)) print "gone"; a[1,2] = 3; if ((1,2) in a) print "pair" }'
awk 'BEGIN { OFS = "-"; ORS = "|\n"; $0 = "a b c"; $1 = $1; print; print $1, $2 }'
echo '5 apples' | awk '{ $1 *= 2; print; print $1 + 0 }'
awk 'BEGIN { x; if (x == 0 && x == "") print "both"; print length(x), length() }' </dev/null
printf 'x y z\n' | awk '{ for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? OFS : ORS) }'
awk 'BEGIN { printf "%s %d %.3f %5s|%-5s|\n", "s", "42abc", 3.14159, "r", "l" }'
awk 'BEGIN { n = split("2024-01-15", d, /-/); print n, d[1] + 0, d[2] d[3] }'
echo 'abc' | awk '{ if (match($0, /b+/)) print RSTART, RLENGTH, substr($0, RSTART, RLENGTH) }'
awk 'BEGIN { while (i++ < 3) s = s i; print s; exit; print "no" } END { print "end" }'
printf 'a;b;c\n' | awk '{ print NR ": " $0 }' RS=';'
echo abcd | awk '{ match($0, /b|bc/); print RSTART, RLENGTH; sub(/b|bc/, "X"); print }'
echo xyz | awk '{ gsub(/x|xy|y/, "<&>"); print; r = "y|yz"; if ("xyz" ~ r) { match("xyz", r); print RLENGTH } }'
echo 'a1b22c' | awk '{ n = split($0, p, /[0-9]|[0-9][0-9]/); print n, p[3] }'
echo 'a&b a\b aaa' | awk '{ n = gsub(/a/, "[&]"); m = sub(/b/, "\\&"); print n, m, $0 }'
echo 'x.y.z' | awk '{ gsub(/\./, "\\\\"); print }'
echo 'abc' | awk '{ gsub(/x*/, "-"); print; s = "hello"; gsub(/l|^/, "<&>", s); print s }'
awk 'BEGIN { printf "%5s|%-6d|%.2e|%*d|%c%c\n", "ab", 42, 1234.5, 4, 7, "xyz", 66 }'
printf '1 2\n3 4\n' | awk '{ print $1 * 2, $2 "x", $1 $2, -$1, $3 "|" }'
""".strip().split("\n")

JQ_CASES = [
    r"""echo '{"a":1,"b":[1,2,{"c":"x"}]}' | jq .""",
    r"""echo '{"a":1,"b":[1,2]}' | jq -c .""",
    r"""echo '{"name":"al","id":3}' | jq -r .name""",
    r"""echo '[1,2,3]' | jq '.[] * 2'""",
    r"""echo '[{"n":1},{"n":2}]' | jq -c 'map(.n) | add'""",
    r"""jq -n '1, 2'""",
    r"""jq -n --arg x hello '$x | ascii_upcase'""",
    r"""jq -n --argjson o '{"k":5}' '$o.k + 1'""",
    r"""echo '1 2 3' | jq -s 'add'""",
    r"""printf 'a\nb\n' | jq -R .""",
    r"""printf 'a\nb\n' | jq -Rs .""",
    r"""echo '{"b":1,"a":2}' | jq -S -c .""",
    r"""echo 'null' | jq -e .; echo status=$?""",
    r"""echo '{"a":1}' | jq '.a.b'; echo status=$?""",
    r"""jq -n '.a +'; echo status=$?""",
    r"""echo '"x"' | jq -j '., .'""",
    r"""jq -n '[1,[2]]' --tab""",
    r"""jq -n '{"a":[]}' --indent 4""",
    r"""jq -n '"\u00e9"' -a""",
    r"""jq -n '[limit(3; range(10))]' -c""",
    r"""jq -n 'error("boom")'; echo status=$?""",
    r"""jq -n '(1.5, 1.0, 100, 1e100, 0.1+0.2, 1e-5, 123456789012345678) + 0'""",
    r"""echo '{"a":"x","b":"y"}' | jq -r 'to_entries[] | "\(.key)=\(.value)"'""",
    r"""jq -n '[inputs]' -c <<< '1 2 3'""",
    r"""echo '[3,1,2]' | jq -c 'sort, length, (.[0] | tostring)'""",
    r"""echo '{"a":{"b":[1,2]}}' | jq -c 'paths'""",
    r"""jq -rn '"a\tb", @csv "\([1,"x"])", @sh "echo \("it'"'"'s")"'""",
    r"""jq -n --args '$ARGS' a b -c""",
    r"""echo '{}' | jq 'halt_error("bye\n")'; echo status=$?""",
    r"""printf '1 2\n3\n{"a":\n1}\n\n[2,\n3] 4\n5' | jq -c '[., input_line_number]'""",
    r"""echo 1 | jq -c 'try input catch .'; echo 1 | jq input; echo status=$?""",
    r"""echo '1 2 3 4 5' | jq -c '[., input]'; echo status=$?; echo '1 2 3' | jq -c 'input, [inputs]'""",
    r"""jq -n -c '[input, input], input_line_number, [limit(1; inputs)]' <<< '1 2
3
4 5'; jq -nc '[inputs]' <<< ''""",
    r"""jq -n '"a" | debug | length' 2>&1 >/dev/null; echo '{"a":1}' | jq 'try halt_error(3) catch "caught"' 2>&1
echo status=$?; echo '"bye"' | jq halt_error 2>&1; echo status=$?; jq -n 'halt'; echo status=$?""",
    r"""jq -R . <<< $'a\nb'; jq -Rs . <<< $'a\nb'; jq -Rnc '[inputs]' <<< $'a\nb'; jq -Rr 'ascii_upcase' <<< x""",
    r"""printf 'x\0\n' | grep -c --binary-files=without-match x; echo st=$?; printf 'x\0\n' | grep -I x; echo st=$?
printf 'x\0\n' | grep -l -I x; printf 'x\0\ny\n' | grep -I -L q; printf 'x\0\n' | grep -a -I x | wc -c
echo x | grep --binary-files=foo x; echo st=$?""",
]


def _have(tool):
    return shutil.which(tool) is not None


CASES = ([("sed", c) for c in SED_CASES + OTHER_CASES] + [("jq", c) for c in JQ_CASES]
         + [("awk", c) for c in AWK_CASES])


@pytest.mark.differential
@pytest.mark.parametrize("needs,script", CASES)
def test_same_as_the_real_tools(needs, script, run, tmp_path):
    if not HAVE_BASH5 or not _have(needs):
        pytest.skip(f"real bash 5 and {needs} are needed")
    want_out, want_status = run_bash(script, tmp_path=tmp_path)
    got = run(script)
    assert (got.stdout, got.exit_code) == (want_out, want_status), got.stderr


def test_reversed_range_is_an_error_in_grep_and_sed(run):
    for script, message, status in (("echo abc | grep '[z-a]'", "grep: Invalid range end\n", 2),
                                    ("echo abc | sed 's/[z-a]/X/'", "Invalid range end\n", 1)):
        r = run(script)
        assert (r.stdout, r.exit_code) == ("", status) and r.stderr.endswith(message), r.stderr


def test_awk_infinities_and_nans_print_with_their_sign(run):
    """As gawk 5 and the One True AWK print them (mawk prints C's inf and nan); glibc's log and
    sqrt of a negative number give a NaN with the sign bit set."""
    r = run("awk 'BEGIN { x = 2^1024; print x, -x, x \"\", log(-1), -log(-1), sqrt(-1), log(0) }'")
    assert r.stdout == "+inf -inf +inf -nan +nan -nan -inf\n"
    r = run("echo '+inf -inf +nan -nan' | awk '{ print $1 + 0, $2 + 0, $3 + 0, $4 + 0 }'")
    assert r.stdout == "+inf -inf +nan -nan\n"


def test_awk_number_too_large_for_a_double_is_a_string(run):
    """mawk and the One True AWK: a field that overflows is not a strnum, so two spellings of
    it compare as strings (gawk compares them as +inf)."""
    r = run("printf '2e1000 2.0e1000 1e308 1.0e308\\n' | awk '{ print ($1 == $2), ($3 == $4), $1 + 0 }'")
    assert r.stdout == "0 1 +inf\n"


def test_awk_has_no_double_star_operator(run):
    """POSIX awk's exponent is `^` only. mawk (the system awk the differential tests use)
    refuses `**` and `**=` as a syntax error; gawk and the One True AWK accept them. We follow
    POSIX and mawk, with mawk's message and status."""
    r = run("echo x | awk '{ print 2**3 }'")
    assert (r.stdout, r.stderr, r.exit_code) == ("", "awk: line 1: syntax error at or near *\n", 2)
    r = run("echo x | awk '{ n = 2; n **= 3; print n }'")
    assert (r.stderr, r.exit_code) == ("awk: line 1: syntax error at or near *=\n", 2)
    assert run("echo x | awk '{ n = 2; n ^= 3; print n, 2 ^ 3, 2 * 3 }'").stdout == "8 8 6\n"


def test_awk_runaway_string_with_an_escape_is_a_syntax_error(run):
    """An unterminated string holding an octal or hex escape is mawk's runaway error, quoting
    the source text as written, and the script goes on (the message used to join the escape's
    byte as text and end the run with an internal TypeError)."""
    for program, shown in (("BEGIN { print \"\\101abc\n}", "\\101abc"),
                           ("BEGIN { print \"\\tab\\\\c\\x41yzwvut", "\\tab\\\\c\\x4")):
        r = run(f"awk '{program}'; echo rc=$?")
        assert r.stdout == "rc=2\n"
        assert r.stderr == f'awk: line 1: runaway string constant "{shown} ...\n'


def test_cut_c_counts_characters_not_bytes(run):
    """POSIX: -c selects characters. GNU cut treats -c as -b and splits multibyte characters;
    we keep characters whole, and -b still counts bytes."""
    assert run("printf 'é1x\\n' | cut -c1,2").stdout == "é1\n"
    assert run("printf 'é1x\\n' | cut -b3").stdout == "1\n"


def test_awk_function_name_is_not_a_variable(run):
    r = run("awk 'function f(x) { return x } BEGIN { f = 1; print \"no\" }'")
    assert (r.stdout, r.exit_code) == ("", 2)
    assert r.stderr == "awk: function name f used as a variable\n"


def test_awk_long_expression_chains_compile(run):
    """Left-associative + - * and concatenation chains are flat in the generated Python, whose
    parser refuses about 200 nested parentheses."""
    terms = " + 1 - 2 + 3" * 400
    pieces = ' "b" x' * 400
    r = run(f"awk 'BEGIN {{ x = 1{terms}; print x; s = \"a\"{pieces}; print length(s) }}'")
    assert (r.stdout, r.exit_code) == ("801\n1601\n", 0), r.stderr


LONG_FIELDS = "999999999999999 1 9007199254740993 123456789012345678901 1000000000000000 007\n"


@pytest.mark.parametrize("expression", [
    "$1 + $2", "$3 + 0", "$4 - 1", "$5 - $1", "($1 + $2) % 97", "$3 % 1000", "-$1 - $2",
    "$1 + $1 + $1 + $1 + $1 + $1 + $1 + $1 + $1 + $1 + $2", "$1 + $1 + $1 + $1 + $1 + $1 + $1 + $1 + $2",
    "($6 - 8) % 5", "$6 % 5 + $2"])
def test_awk_integer_arithmetic_of_long_fields_matches_its_float_path(expression, run):
    """Arithmetic on fields of plain digits is done in Python ints only where that gives the
    float's digits: fields of 16 or more digits, sums that could pass 2**53 and remainders of
    negative values stay floats. `* 1` forces the float path for the comparison."""
    ints = run(f"awk '{{ print {expression}; print ({expression}) \"\" }}'", stdin=LONG_FIELDS)
    floats = run(f"awk '{{ print ({expression}) * 1; print ({expression}) * 1 \"\" }}'",
                 stdin=LONG_FIELDS)
    assert (ints.stdout, ints.exit_code) == (floats.stdout, 0), ints.stderr
