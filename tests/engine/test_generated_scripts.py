"""Generated scripts against real bash: seeded random combinations of the constructs LLM
scripts use (parameter expansions, arrays, arithmetic, tests, case, loops, functions, printf,
command substitution, pipelines into text commands), and focused generators for set -e/-u/
pipefail, IFS word splitting, test/[[ ]] expressions and brace expansion; each runs in bash and in
the engine, and stdout and exit status must match. A case is rebuilt from its seed, so a failure
reproduces."""
import random

import pytest

from support import HAVE_BASH5, run_bash, scaled

CASES = scaled(150)

VALUES = ["hello", "a.b.c", "''", "'x y'", "42", "-7", "007", "'Hello World'", "path/to/file.txt", "AbC", "0",
          "'a,b,,c'", "'  spaced  '", "'*'", "'[x]'", "é"]
EXPANSIONS = ["$v", "${v:-def}", "${v:+alt}", "${#v}", "${v%%.*}", "${v#*.}", "${v%.*}", "${v##*/}", "${v/l/L}",
              "${v//[aeiou]/_}", "${v^^}", "${v,,}", "${v^}", "${v:1:3}", "${v: -2}", "${v:-}", "${u:-unset}",
              "${v@Q}", '"$v"', "${#v}x", "${v/#a/A}", "${v/%c/C}", "${!name}"]
ARITH = ["$((n + 3))", "$((n * 2 - 1))", "$((n % 3))", "$((n / 2))", "$((n ** 2))", "$((n > 5 ? 1 : 0))",
         "$((n << 2))", "$((-n))", "$((n & 6))", "$((n++))", "$((++n))", "$((n += 4))", "$(( (n + 1) * (n - 1) ))",
         "$((16#ff + n))", "$((n == 3 || n == 4))"]
TESTS = ['[[ $v == h* ]]', '[[ $v =~ ^[0-9]+$ ]]', '[[ -z $v ]]', '[[ -n $u ]]', '[[ $n -gt 3 ]]', '(( n > 2 ))',
         '[[ $v < m ]]', '[ "$v" = hello ]', '[[ ${#v} -ge 5 && $n -lt 10 ]]', '[[ ! $v == *.* ]]',
         'test "$n" -eq 4', '[[ $v == "a.b.c" ]]', '[[ $v =~ ([a-z]+)\\.([a-z]+) ]] && echo "${BASH_REMATCH[2]}"']


MORE = [
    'set -- "$v" two "three four"; echo $#; shift; echo "$1|$*"; for x; do echo "<$x>"; done',
    'set -- a b; f2() { echo $# "$@"; local IFS=-; echo "$*"; }; f2 "$v" x',
    'mapfile -t L < <(printf "%s\\n" c a b) 2>/dev/null || mapfile -t L <<< "$(printf "%s\\n" c a b)"; '
    'echo ${#L[@]} "${L[1]}"',
    'cat <<EOF\nv=$v n=$((n+1)) ${v:0:2}\nEOF',
    "cat <<'EOF'\nraw $v\nEOF",
    'echo {1..3} {a,b}{x,y} x{1..7..3}',
    'IFS=:; set -- $v; echo $#; IFS=" "',
    'eval "w=\\$v"; echo "$w"',
    'printf -v "arr_$n" %s "$v"; declare -p arr_$n',
    'declare -a la=(1 2 3); la[5]=6; echo "${la[*]}" ${#la[@]}; declare -p la',
    'f3() { local -a xs=("$@"); echo ${#xs[@]}; }; f3 1 "2 3" 4',
    'OPTIND=1; while getopts "ab:c" o -a -b val -c rest; do echo "$o=${OPTARG:-}"; done; echo $OPTIND',
    '(exit 3); echo $?; ( v=sub; echo $v ); echo $v',
    'x=${v:-$(echo fallback)}; echo "$x"',
    '[[ $v =~ ^([a-z]+)(.*)$ ]] && echo "${#BASH_REMATCH[@]} ${BASH_REMATCH[1]}"',
    'echo "${!a*}" "${a[@]/y/Y}" "${a[@]^}"',
    'unset v; echo "${v-gone}" "${v:=again}" "$v"',
    'echo $(( RANDOM >= 0 )) $(( ${#v} > 3 ? ${#v} : -1 ))',
    'let "n = n * 3" "m = n + 1"; echo $n $m',
    'echo "$v" > /dev/null; echo status=$?; false || echo recovered',
    'x="  trim me  "; y="${x#"${x%%[![:space:]]*}"}"; echo "[${y%"${y##*[![:space:]]}"}]"',
    'case "$n" in [0-3]) echo low;; [4-6]) echo mid;; *) echo high;; esac',
    'if ! [[ $n -eq 4 ]]; then echo not4; fi; [[ $n == 4 ]] && echo is4 || echo isnt4',
    'for f in "$v" "$n"; do printf "%s:" "${f//[^a-z]/}"; done; echo',
]


def _statement(rng: random.Random, depth: int = 0) -> str:
    if rng.random() < 0.25:
        return rng.choice(MORE)
    kinds = ["echo", "echo", "arith", "assign", "test", "array", "assoc", "printf", "subst", "pipe"]
    if depth < 2:
        kinds += ["case", "for", "while", "func", "if"]
    kind = rng.choice(kinds)
    if kind == "echo":
        return "echo " + " ".join(rng.choice(EXPANSIONS) for _ in range(rng.randint(1, 3)))
    if kind == "arith":
        return f"echo {rng.choice(ARITH)} $n"
    if kind == "assign":
        return rng.choice([f"v={rng.choice(VALUES)}", "v+=_x", "n=$((n + 1))", "u=$v", "declare -i n=n*2",
                           "local_copy=${v:-x}; v=${local_copy%?}", "readonly r=1; echo $r"])
    if kind == "test":
        return f"if {rng.choice(TESTS)}; then echo yes; else echo no $?; fi"
    if kind == "array":
        return rng.choice(['a=(one "two three" four); echo ${#a[@]} "${a[1]}" ${a[-1]}',
                           'a+=(five); echo "${a[@]}" ${!a[@]}', 'a[7]=x; echo ${#a[@]} ${!a[*]}',
                           'for x in "${a[@]}"; do echo "[$x]"; done', 'echo "${a[@]:1:2}"',
                           'unset "a[0]"; echo ${a[@]}', 'IFS=, read -ra p <<< "$v"; echo ${#p[@]} "${p[0]}"',
                           'echo "${a[*]^^}"'])
    if kind == "assoc":
        return rng.choice(['declare -A m=([k]=1 [j]=2); m[z]=$n; echo ${#m[@]} ${m[k]} ${m[z]}',
                           'declare -A c; for w in a b a c a; do c[$w]=$(( ${c[$w]:-0} + 1 )); done; '
                           'for key in a b c; do echo $key=${c[$key]}; done',
                           'declare -A m=([x]=1); [[ -v m[x] ]] && echo has; [[ -v m[y] ]] || echo not'])
    if kind == "printf":
        return rng.choice(['printf "%s|%5s|%-5s|\\n" "$v" "$n" x', 'printf "%d %03d %x %o\\n" $n $n $n $n',
                           'printf -v out "%s-%s" "$v" $n; echo "$out"', 'printf "%.2f %e\\n" 3.14159 $n',
                           'printf "%s\\n" "${a[@]}" | head -2', "printf '%q\\n' \"$v\"", 'printf "[%c]\\n" "$v"'])
    if kind == "subst":
        return rng.choice(['x=$(echo "$v" | tr a-z A-Z); echo "$x"', 'echo "$(printf "%s" "$v" | wc -c)"',
                           'lines=$(printf "b\\na\\nc\\n" | sort); echo $lines',
                           'echo "n is $(( n * 2 )) and $(echo $v)"', 'x=`echo back $n`; echo $x'])
    if kind == "pipe":
        return rng.choice(['echo "$v" | sed "s/[aeiou]/#/g"', 'printf "%s\\n" 3 1 2 | sort -n | tail -1',
                           'echo "$v" | grep -o "[a-z]" | head -3 | tr -d "\\n"; echo',
                           'seq $n | paste -sd+', 'echo "$v" | cut -c1-3', 'echo "$n $v" | awk \'{print $1 * 2, NF}\'',
                           'echo "$v" | rev', 'true | false; echo ${PIPESTATUS[@]}'])
    body = "; ".join(_statement(rng, depth + 1) for _ in range(rng.randint(1, 2)))
    if kind == "case":
        return f'case $v in h*) {body};; *.*) echo dotted;; [0-9]*) echo number;; *) echo other;; esac'
    if kind == "for":
        i = f"i{depth}"
        return rng.choice([f"for {i} in 1 2 3; do {body}; [[ ${i} == 2 ]] && continue; echo {i}=${i}; done",
                           f"for (({i} = 0; {i} < 3; {i}++)); do {body}; (( {i} == 1 )) && break; done; echo {i}=${i}"])
    if kind == "while":
        k = f"k{depth}"        # a counter per nesting level, so inner loops do not reset outer ones
        return f"{k}=0; while (( {k} < 2 )); do {k}=$(({k} + 1)); {body}; done; echo {k}=${k}"
    if kind == "func":
        return (f'f() {{ local v="in $1"; {body}; return $(( ${{#1}} % 4 )); }}; f "$v"; echo "rc=$? v=$v"')
    return f"if (( n % 2 )); then {body}; elif [[ $v == *o* ]]; then echo has-o; else echo else; fi"


def _script(seed: int) -> str:
    rng = random.Random(f"script-{seed}")
    head = f"v={rng.choice(VALUES)}; n={rng.randint(0, 9)}; name=v; a=(x y z)"
    return "\n".join([head] + [_statement(rng) for _ in range(rng.randint(2, 6))])



# ---- set -e / -u / pipefail: which failures end the script, and with what status
ERREXIT_HEADS = ["set -e", "set -euo pipefail", "set -u", "set -o pipefail", "set -e -o pipefail", ""]
ERREXIT_STATEMENTS = [
    "echo start", "false", "false || echo alt", "false && echo no", "! false", "if false; then echo t; fi",
    "x=$(false); echo after-subst $?", "lf() { local y=$(false); echo in-func $?; }; lf",
    "echo $undefined_var", "echo ${undefined_var:-dflt}", "a=(); echo ${#a[@]}", 'echo "${a[@]:-}"',
    "(( 0 )); echo arith0", "(( n = 0 )) || true", "echo x | grep -q y; echo grep $?",
    "echo x | grep y | cat; echo pipe $?", "true | false | true; echo ps ${PIPESTATUS[*]}",
    "f() { false; echo f-continued; }; f; echo after-f", "f() { false; echo f-continued; }; f || echo f-failed",
    "f() { return 3; }; f; echo ret $?", "read -r line <<< ''; echo read $?", "read -r line < /dev/null; echo eof $?",
    'v=$(echo ok; false); echo "v=$v $?"', "cmd_not_found_x 2>/dev/null; echo nf $?",
    "while false; do :; done; echo while-ok", "for i in 1 2; do [[ $i == 2 ]] && echo two; done",
    "[[ -z ${unset_x-} ]] && echo empty", "test 1 -eq 2; echo test $?", "{ false; echo in-group; }",
    "( false; echo in-sub ); echo sub $?", "set +e; false; echo off; set -e", "echo $(( 1 / 0 ))",
    "x=$(( 1 / 0 )); echo x-after $?", "echo end"]


def _errexit_script(seed: int) -> str:
    rng = random.Random(f"errexit-{seed}")
    lines = [rng.choice(ERREXIT_STATEMENTS) for _ in range(rng.randint(2, 6))]
    return "\n".join([rng.choice(ERREXIT_HEADS), "n=1"] + lines)



# ---- IFS: word splitting of $v, $@, $*, arrays, read and for, under assorted separators
IFS_VALUES = ["' '", "':'", "' :'", "','", "''", "$' \\t\\n'", "'x'", "': '", "'::'", "'a '"]
SPLIT_VALUES = ["'a b'", "'a:b::c'", "' lead trail '", "'a,,b,'", "''", "'x y:z'", "': a : b :'", "'aaxbb'",
                "$'a\\tb\\nc'"]
SPLIT_FORMS = ['printf "<%s>" $v; echo', 'set -- $v; echo $#', 'a=($v); echo ${#a[@]} "${a[*]}"',
               'set -- $v; printf "<%s>" "$*"; echo', 'set -- $v; printf "<%s>" $*; echo',
               'set -- $v; printf "<%s>" "$@" $@; echo', 'read -r p q r <<< "$v"; printf "<%s>" "$p" "$q" "$r"; echo',
               'for w in $v; do printf "[%s]" "$w"; done; echo', 'printf "<%s>" ${v}x "${v:-}" $v""; echo',
               'x=$v; printf "<%s>" $x$x; echo', 'a=($v); printf "<%s>" ${a[@]} ${a[*]}; echo']


def _ifs_script(seed: int) -> str:
    rng = random.Random(f"ifs-{seed}")
    return "\n".join(f"IFS={rng.choice(IFS_VALUES)}; v={rng.choice(SPLIT_VALUES)}; {rng.choice(SPLIT_FORMS)}"
                     for _ in range(3))



# ---- test / [ ] / [[ ]]: operators, operand counts, octal and bad numbers in arithmetic tests
TEST_OPERANDS = ["''", "a", "b", "10", "010", "0x10", "-3", "' 5 '", "abc", "'a b'", "-n", "-z", "!", "=", "'('",
                 "')'", "-a", "-o", "2", "1e2"]
TEST_BINARY = ["=", "==", "!=", "'<'", "'>'", "-eq", "-ne", "-lt", "-le", "-gt", "-ge"]


def _test_script(seed: int) -> str:
    rng = random.Random(f"test-{seed}")
    operand = lambda: rng.choice(TEST_OPERANDS)
    lines = []
    for _ in range(4):
        expr = rng.choice([operand(), f"{rng.choice(['-n', '-z', '!'])} {operand()}",
                           f"{operand()} {rng.choice(TEST_BINARY)} {operand()}",
                           f"! {operand()} {rng.choice(TEST_BINARY)} {operand()}",
                           f"{operand()} {rng.choice(TEST_BINARY)} {operand()} {rng.choice(['-a', '-o'])} {operand()}",
                           f"'(' {operand()} {rng.choice(TEST_BINARY)} {operand()} ')'",
                           " ".join(operand() for _ in range(rng.randint(3, 5)))])
        lines.append(f"[ {expr} ]; echo $?")
        x = rng.choice(["10", "010", "'a b'", "x", "-3", "' 7'", "08"])
        right = rng.choice(["10", "8", "x", "007", "-3", "$x", "'a b'"])
        lines.append(f"x={x}; [[ $x {rng.choice(['-eq', '-lt', '-ge', '==', '<'])} {right} ]]; echo $?")
    return "\n".join(lines)



# ---- brace expansion: sequences, nesting, empty alternatives, next to parameters and quotes
BRACE_PIECES = ["a", "b", "{a,b}", "{1..3}", "{3..1}", "{01..3}", "{a..c}", "{1..10..4}", "{x,{y,z}}", "{,q}", "{a}",
                "{}", ",", "{1..a}", "{-2..2}", "{a..e..2}", "$v", "'{a,b}'", "{$v,c}", "{1..3}{a,b}", "x{,}",
                "{a,b,}", "{05..10..2}", "{-05..5..5}"]


def _brace_script(seed: int) -> str:
    rng = random.Random(f"brace-{seed}")
    words = ["".join(rng.choice(BRACE_PIECES) for _ in range(rng.randint(1, 3))) for _ in range(3)]
    return "v=V; v1a=one; v05=five\n" + "\n".join(f"printf '<%s>' {w}; echo" for w in words)


GENERATORS = {"script": _script, "errexit": _errexit_script, "word-splitting": _ifs_script,
              "test": _test_script, "brace": _brace_script}


@pytest.mark.differential
@pytest.mark.skipif(not HAVE_BASH5, reason="real bash 5 is not installed")
@pytest.mark.parametrize("kind,seed", [(k, seed) for k in GENERATORS for seed in range(CASES)],
                         ids=[f"{k}-{seed}" for k in GENERATORS for seed in range(CASES)])
def test_generated_script_matches_bash(kind, seed, run, tmp_path):
    script = GENERATORS[kind](seed)
    want_out, want_status = run_bash(script, tmp_path=tmp_path)
    got = run(script)
    assert (got.stdout, got.exit_code) == (want_out, want_status), f"{script}\nstderr: {got.stderr}"
