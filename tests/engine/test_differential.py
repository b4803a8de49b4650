"""The engine against real GNU bash: each script runs in both; stdout and exit status must match.

Skipped where bash 5 is absent. Cases cover every construct of DESIGN.md "The language" and
the text commands scripts pipe through; stderr is not compared (messages name the engine's
line and column, bash's do not).
"""
import pytest

from support import HAVE_BASH5, run_bash

CASES = {
    # ---- the first assignment of a name (a global made with its value) and every form that is
    # not one: +=, under set -a, inside a function, a local, a long value, a nameref, readonly,
    # an attribute declared first, a subshell's own copy
    "first_assignments_of_names": """a=1; b+=x; b+=y; echo "$a $b"; set -a; c=exported; set +a; printenv c
f() { d=in-function; local e=local-one; e+=more; echo "$e"; }; f; echo "$d [$e]"
long=$(printf '%5000s' z); echo ${#long}; declare -n ref=target; ref=via-ref; echo $target
declare -i n; n=3+4; echo $n; declare -u up; up=loud; echo $up; ( sub=inside; echo $sub ); echo "[$sub]"
readonly ro=1; ( ro=2 ) 2>/dev/null; echo "readonly $?"; g=1 h=2 i=$g$h; echo $i; unset a; a+=again; echo $a
""",
    # ---- subscripts and loop conditions that are a bare number, a name or `name OP number`
    # (read without the expression's closures): octal, recursion, attributes, locals, namerefs
    "subscript_and_condition_shapes": """a=(); x=3; a[x]=three; a[010]=eight; a[0]=zero; a[ 2 ]=two; y=1+1; a[y]=again
declare -p a; e='x*2'; (( e == 6 )) && echo expr-value; for ((i=0; i<=3; i++)); do :; done; echo $i
declare -i n=5; (( n != 5 )) || echo integer-attr; declare -n r=x; (( r > 2 )) && echo via-nameref
f() { local x=10; (( x >= 10 )) && echo local-x; a[x]=ten; }; f; echo "${a[10]} ${#a[@]}"
(( unset_var < 1 )) && echo unset-is-0; b[unset_var]=z; echo "${!b[@]}"; z=08
(( z < 9 )) 2>/dev/null || echo "bad octal $?"; ( c[z]=q; echo after ) 2>/dev/null; echo "bad subscript $?"
( set -u; (( u < 3 )); echo after ) 2>/dev/null; echo "nounset $?"; big=(); a[99999999999999999999]=w; echo "${!a[@]}"
h=99999999999999999999; echo $((h)) $((h + 0)); d=(); d[h]=x; echo "${!d[@]}"
""",
    # ---- `name OP constant` and `name++` (arithmetic's one-step forms) against every kind of
    # variable: attributes, exported under set -a, a nameref, a local, unset, past the 64-bit edge
    "increments_and_comparisons_of_every_variable": """for op in '<' '>' '<=' '>=' '==' '!='; do
for v in -2 7 8 9; do x=$v; (( x $op 8 )); printf '%s' $?; (( x $op -2 )); printf '%s' $?; (( x $op 010 )); printf '%s ' $?; done; done; echo
i=9223372036854775807; (( i++ )); echo $i; (( i-- )); echo $i; (( ++i )); echo $i; j=-9223372036854775808; (( j-- )); echo $j
declare -i n=4; (( n++ )); echo $n; declare -u u=ab; (( u++ )); echo $u;
set -a; e=1; (( e++ )); set +a; printenv e; declare -n ref=n; (( ref++ )); (( ref < 7 )); echo "$n $?"
f() { local k=1; (( k++ )); (( k == 2 )) && echo "local $k"; (( g++ )); }; f; echo "k=[$k] g=$g"
(( unset_one++ )); echo $unset_one; ( set -u; (( nothing < 2 )); echo after ) 2>/dev/null; echo "nounset $?"
s=' 12 '; (( s++ )); echo "[$s]"; t='3+4'; (( t < 8 )) && echo expr-var; w=08; (( w < 9 )) 2>/dev/null || echo "bad octal $?"
a=(5 6); (( a++ )); (( a[1]++ )); echo "${a[@]}"; for ((c=3; c>0; c--)); do printf '%s' $c; done; echo""",
    # ---- a readonly variable in arithmetic: the command fails and the line goes on, except in
    # $(( )), which ends it as any failed expansion does
    "readonly_variables_in_arithmetic": """readonly r=1; (( r++ )); echo "(( )) $? $r"; (( x=5, r=2, y=7 )); echo "$? $x [$y]"
let z=1 r=3 w=2; echo "let $? [$z] [$w]"; for ((r=0; r<2; r++)); do echo never; done; echo "for $?"
f() { local -r q=1; (( q++ )); echo "local $?"; }; f; ( echo "$(( r++ ))"; echo not-reached ); echo "expansion $?"
( set -e; (( r = 4 )); echo not-under-errexit ); echo "errexit $?"; r=5; echo not-reached-either""",
    # ---- indirect references to arrays under operators (the compiled build once typed these as strings)
    "indirect_array_operators": """a=('foo bar' baz); r='a[@]'; printf '<%s>' ${!r+"${!r}"}; echo
printf '<%s>' "${!r:1}"; echo; declare -A m=([k]=a[@]); printf '<%s>' "${!m[@]:1}"; echo""",
    # ---- traps and the call stack
    "err_trap": """trap 'echo err $?' ERR; false; echo after; (exit 3); true | false; false | true
if false; then :; fi; false || true; ! false; f() { false; echo in-f; }; f; g() { return 4; }; g
x=$(false); set -o pipefail; false | true; echo end""",
    "err_trap_with_errexit": """set -e; trap 'echo caught $?' ERR; echo a; false; echo never""",
    "trap_listing": """trap 'echo a' INT; trap 'echo b' EXIT; trap "echo c'd" TERM; trap 'echo e' ERR; trap '' HUP
trap; echo --; trap -p INT EXIT; trap - INT; trap 'echo x' 15; trap -p; trap 'z' bogus; echo rc=$?""",
    "select_menu_and_answers": """{ printf '3\\n\\n9\\nx\\n1\\n' | { PS3='pick: '; select x in apple banana cherry; do
echo "[$x] [$REPLY]"; [ "$REPLY" = 1 ] && break; done; echo status=$?; }; } 2>&1
{ printf '12\\n' | select x in $(seq 1 25 | sed 's/^/item/'); do echo "$x"; break; done; } 2>&1
{ COLUMNS=40; echo 3 | select x in alpha beta gamma delta epsilon zeta eta theta iota kappa; do echo $x; break; done; } 2>&1
{ printf '1\\n2\\n' | { select x in a b; do echo "got $x"; done; echo status=$?; }; } 2>&1""",
    "declare_and_local_listing": """v1=111; readonly v2=222; export v3=333; arr=(a 'b c'); declare -A m=([k]=v)
f() { local v5=555 v6; local -i v7=7; { declare; echo --; local; echo --; local -p; } | grep -E '^(--|v[0-9]|arr|m)'; }; f""",
    "array_literal_as_temporary_binding": """f() { declare -p B; echo "$B"; }; B=(b b) f; x='p q'
B=( "x y" $x * ) printenv B; C=([k]=$x [2]=w) printenv C; echo "[$B]" """,
    "nameref_to_elements": """array=(X Y Z); typeset -n ref='array[0]'; ref[0]=foo
echo status=$?; echo ${array[@]}; typeset -n all='b[@]'; b=('A B' C); echo "$all"; all=(X Y)
echo status=$?; echo "${b[@]}" """,
    "last_argument_after_a_pipeline": """true zz; echo a b | tr a A; echo "[$_]"; printf '%s\\n' x y | cut -c1 | sort
echo "[$_]"; shopt -s lastpipe; true yy; echo c d | tr c C; echo "[$_]" """,
    "subshells_keep_functions_and_options_to_themselves": """f() { echo f1; }; ( f() { echo f2; }; f ); f
( unset -f f; f 2>/dev/null || echo gone ); f; x=$(g() { echo g; }; g); echo $x; g 2>/dev/null || echo no-g
( shopt -s nocasematch; [[ A == a ]] && echo in-yes ); [[ A == a ]] && echo out-yes || echo out-no
echo x | { shopt -s nocasematch; [[ B == b ]] && echo stage-yes; }; [[ B == b ]] || echo parent-no
shopt -s nocasematch; ( [[ C == c ]] && echo inherited ); h() { echo h; }; echo "$(h)" """,
    "double_quoted_text_and_parameters": """set -- 'a  b' '*' ''; x='1  2'; e=; IFS=' 2'
printf '[%s]' "$1" "x$2y" "$3" "$x" "<$x>" "$e" "${x}-${1}" "$# $? $-" "*.$x"; echo
y="$1-$x"; z="$e"; printf '[%s]' "$y" "$z" "$10" "${10}"; echo; f() { echo "in $FUNCNAME: $1|$2"; }; f "$x" "$e"
for v in "$x" "a $e b"; do echo "<$v>"; done; case "$x" in "1  2") echo case-ok;; esac
unset IFS; set -u; echo "$x $1"; ( echo "ok $undefined_var" ) 2>/dev/null; echo status=$?""",
    "subshells_keep_variables_to_themselves": """a=1 b=2; arr=(x y); declare -A m=([k]=v); readonly r=9
( a=10; unset b; arr[5]=z; m[j]=w; c=3; declare -g d=4; export a; echo "in $a ${b-u} ${#arr[@]} ${!m[*]} $c $d" )
echo "out $a $b ${#arr[@]} ${#m[@]} ${c-u} ${d-u}"; x=$(a=11; unset arr; printf -v e %s 5; echo $a ${arr-u} $e)
echo "$x | $a ${arr[1]} ${e-u}"; echo q | { read -r a; for b in 7 8; do :; done; echo "$a $b"; }; echo "$a $b"
f() { local a=l; ( a=s; g=1; echo "f $a" ); echo "$a ${g-u}"; }; f; echo $a
( (r=1) 2>/dev/null; echo "r $?"; ( ( h=deep; echo $h ); echo ${h-u} ); echo ${h-u} ); env | grep -c '^a=' """,
    "star_only_patterns": """for p in 'a*' '*a' '*a*b*' 'a*a' '**' '*' 'ab*ab' 'x*y*z' '*-*' '*b' 'b*b*b'; do
for t in '' a aa aba ab abab xyz xz x-y bbb bb; do [[ $t == $p ]] && printf '%s~%s ' "$t" "$p"
case $t in $p) printf 'c ';; esac; done; done; echo; case 'a*' in a"*") echo quoted;; esac
case 'ab' in a"*") echo never;; *) echo other;; esac""",
    "function_definitions_with_blanks": """f  () { echo c; }; g	() { echo d; }; h ( ) { echo e; }; i 	 ( 	) { echo i; }
f; g; h; i; echo j (k) 2>&1; echo after""",
    "command_V_function": """f() { echo hi; }; command -V f; type f""",
    "caller": """caller; echo rc=$?; f() { caller; caller 0; caller 1; echo rc=$?; }; g() { f; }
g
f""",
    # ---- words, quoting, expansions
    "quotes": r"""echo 'single $x' "double $HOME_UNSET" $'ansi\tc\x41\u263a' "a\"b" 'it'\''s'""",
    "escapes_in_dq": r'''x=1; echo "\$x \\ \` \a $x"''',
    "param_default_forms": r"""u=; s=set; echo "${u:-d1} ${u-d2} ${s:+alt} ${nope+alt2}|${nope:=as}|$nope" """,
    "param_error": """f() { echo ${1:?need an argument}; }; (f); echo "status=$?" """,
    "length_and_slices": """s=hello_world; echo ${#s} ${s:2:3} ${s: -5} ${s:(-5):2} ${s:3}""",
    "prefix_suffix": """p=/usr/local/lib/libfoo.so.1.2; echo ${p#*/} ${p##*/} ${p%.*} ${p%%.*}""",
    "replace": """s=aXbXcX; echo ${s/X/-} ${s//X/-} ${s/#a/A} ${s/%X/!} ${s//[bc]/_} "${s//X/<&>}" """,
    "case_modification": """s='hello World'; echo ${s^} ${s^^} ${s,,} ${s~~} ${s^^[lo]}""",
    "indirect": """name=target; target=value; echo ${!name}; arr=(a b); ref=arr[1]; echo ${!ref}""",
    "prefix_names": """aa1=1 aa2=2 ab=3; echo ${!aa*}; for v in "${!aa@}"; do echo $v; done""",
    "quote_transform": """s="it's a \\"test\\""; echo ${s@Q}; t=$'a\\nb'; echo ${t@Q}; declare -i n=3; echo ${n@a}""",
    "tilde": """echo ~ ~/x x~ "~" ~nobody_here_x""",
    "tilde_in_parameter_words": """unset x; p=abc; q=~/a; echo ${p/b/~} "${x:-~}" ${x:-~/d} ${x:-a~} "${p/b/~}"
echo ${q//~/z} ${q#~} "${q#~}" ${x:+~}; echo ${y:=~}; echo $y""",
    "slice_offset_with_ternary": """s=abcd; echo ${s: 0 < 1 ? 2 : 0 : 1} ${s:1:2} ${s: 1 ? 3 : 0}""",
    "assoc_array_slice": """declare -A a=([x]=1 [y]=2 [z]=3); echo ${a[@]:0:1} ${a[@]:1:1} ${a[@]:2:2} ${a[@]:3}""",
    "unset_non_identifier": """unset %; echo st=$?; unset -v % 2>/dev/null; echo st=$?""",
    "loop_control_too_many_arguments": """for x in a b; do echo $x; continue 1 2; done; echo after""",
    "brace_expansion": """echo {a,b}{1,2} x{1..3}y {5..1..2} {a..e} {01..10..3} {x,{y,z}}w {1..3}{,}""",
    "brace_no_expansion": """echo {a} {} {,} a{b c{d,e} '{x,y}' ${v:-{a,b}}""",
    "word_splitting": """x='  a  b   c  '; printf '[%s]' $x; echo; IFS=:; y='a::b:'; printf '[%s]' $y; echo""",
    "ifs_mixed": """IFS=' :'; x=' a : b :: c '; printf '<%s>' $x; echo""",
    "at_and_star": """set -- 'a b' c ''; printf '[%s]' "$@"; echo; printf '[%s]' $@; echo; printf '[%s]' "$*"; echo; IFS=,; echo "$*" """,
    "at_with_affixes": """set -- x y; printf '[%s]' "pre$@post"; echo; set --; printf '[%s]' "pre$@post" "$@"; echo""",
    "command_substitution": """a=$(echo one; echo two); echo "$a" | wc -l; b=`echo back \\`echo tick\\``; echo $b; echo "$(printf 'x\\n\\n\\n')" """,
    "nested_substitution": """echo $(echo $(echo $(( 1 + $(echo 2) ))))""",
    "arith_expansion": """x=7; echo $((x*2+1)) $((x/2)) $((x%3)) $((-x/2)) $((2**10)) $((x<<2)) $((x>>1)) $((x&3|8)) $((x^5)) $((!x)) $((~x))""",
    "arith_ops": """a=5; echo $((a++)) $a $((++a)) $((a--)) $((a+=10)) $((a*=2)) $((a>30?1:0)) $((a,b=3,b*2))""",
    "arith_bases": """echo $((0x1f)) $((017)) $((2#1010)) $((36#zz)) $((64#@_)) $((16#ff))""",
    "arith_wrap": """echo $((9223372036854775807 + 1)) $((2**63)) $((-9223372036854775807 - 3)) $((1<<64))""",
    "obsolete_dollar_bracket_arithmetic": """echo $[1+2] $[ 2 *
3 ]; a=(4 5); echo $[a[1]+1] "$[7%4]"; echo $[1+2 ; echo never""",
    "bash_subshell_levels": """echo $BASH_SUBSHELL $(echo $BASH_SUBSHELL) $( (echo $BASH_SUBSHELL) )
( ( echo $BASH_SUBSHELL ) ); ( echo $BASH_SUBSHELL ) | cat; echo a | ( echo $BASH_SUBSHELL; ( echo $BASH_SUBSHELL ) )
{ ( echo $BASH_SUBSHELL ); } | cat; { echo $BASH_SUBSHELL; } | cat; echo $BASH_SUBSHELL | cat
f() { echo $BASH_SUBSHELL; }; f; f | cat; x=$(f); echo $x; (echo in; exit 3) | cat; echo ${PIPESTATUS[@]}
echo q | (read v; exit 4); echo $?; shopt -s lastpipe; echo x | ( read v; echo $BASH_SUBSHELL $v )""",
    "unbound_variable_in_pipeline_stages": """set -u; cd "$nope" | cat; echo ${PIPESTATUS[@]}
f() { echo "$nope"; }; f | cat; echo ${PIPESTATUS[@]}; x=$nope | cat; echo ${PIPESTATUS[@]}
{ echo $nope; } | cat; echo ${PIPESTATUS[@]}; cat < /dev/null | cd "$nope"; echo ${PIPESTATUS[@]}
(echo $nope) | cat; echo ${PIPESTATUS[@]}""",
    "arith_indirect_vars": """a=b+1; b=4; echo $((a*2)); s=' 12 '; echo $((s+1))""",
    "arith_division_by_zero": """echo before; echo $((1/0)); echo same line
echo next line $?""",
    "dollar_brackets_in_arith": """arr=(10 20 30); i=1; echo $((arr[i]+arr[2])) $((${#arr[@]}*2))""",
    # ---- arrays
    "indexed_arrays": """a=(x y z); a[5]=f; a+=(g h); echo ${a[@]} ${#a[@]} ${!a[@]} ${a[-1]} ${a[@]:1:2}; unset 'a[1]'; echo ${a[*]} ${#a[@]}""",
    "array_append_and_copy": """a=(1 2); b=("${a[@]}" 3); b[1]+=x; echo "${b[@]}"; c=(); echo ${#c[@]}""",
    "assoc_arrays": """declare -A m=([one]=1 [two]=2); m[three]=3; m[one]+=0; echo ${m[one]} ${#m[@]}; for k in "${!m[@]}"; do echo $k=${m[$k]}; done | sort""",
    "assoc_bash_order": """declare -A h; for k in apple banana cherry date elder fig; do h[$k]=${#k}; done; echo "${!h[@]}"; echo "${h[@]}" """,
    "sparse_slices": """a=([2]=b [5]=e [9]=i); echo ${a[@]:3} "${!a[@]}" ${a[@]: -2:1}""",
    "declare_print": """declare -a a=(1 'two words'); declare -A m=([k]=v); declare -i n=5; declare -r r=x; declare -p a m n r""",
    "mapfile": """mapfile -t lines <<'EOF'
one
two three
EOF
echo ${#lines[@]} "${lines[1]}"; readarray -t -s 1 -n 1 x <<< $'a\\nb\\nc'; echo "${x[@]}" """,
    # ---- control flow
    "if_elif_else": """for x in 1 2 3; do if [ $x = 1 ]; then echo one; elif (( x == 2 )); then echo two; else echo other; fi; done""",
    "while_until": """i=0; while (( i < 3 )); do echo w$i; ((i++)); done; until [ $i -eq 0 ]; do ((i--)); done; echo $i""",
    "c_style_for": """for ((i=0, j=10; i<3; i++, j-=2)); do echo $i $j; done; for ((;;)); do break; done; echo ok""",
    "for_in_and_positional": """set -- a 'b c'; for x; do echo "[$x]"; done; for y in; do echo never; done""",
    "break_continue_levels": """for i in 1 2 3; do for j in a b c; do [ $j = b ] && continue 2; [ $i = 3 ] && break 2; echo $i$j; done; done""",
    "case_patterns": """shopt -s extglob
for w in apple Banana cherry 42 x.txt ''; do case $w in a*|b*) echo ab;; [A-Z]*) echo upper;; *[0-9]) echo digit;; *.@(txt|md)) echo doc;; '') echo empty;; *) echo other;; esac; done""",
    "case_fallthrough": """case a in a) echo 1;& b) echo 2;;& *) echo 3;; esac""",
    # patterns written out (tested when compiled: plain text, one star, or left to the matcher)
    # against quoted and escaped stars, nocasematch, [[ == ]] and a pattern from a variable
    "written_case_patterns": """for w in '' a A ab aB 'a*' '*' x.json X.JSON ITEM-1 item- '*b' 'a?' ab.c; do printf '%s:' "$w"
case $w in '') printf e;; a) printf a;; 'a*') printf q;; a\\*) printf b;; *.json) printf j;; ITEM-*) printf i;; \\*b|"*"*) printf s;; ab*c) printf c;; *) printf o;; esac
[[ $w == a* ]] && printf A; [[ $w != *b ]] && printf N; [[ $w == "a"? ]] && printf Q; p='*.c'; [[ $w == $p ]] && printf P
shopt -s nocasematch; case $w in item-*) printf I;; A) printf C;; *.JSON) printf J;; esac; [[ $w == A* ]] && printf L; shopt -u nocasematch; echo; done""",
    # arithmetic keeps the number it stored beside the text (Var.number): any other
    # assignment (plain, +=, an array, a subshell's, declare -i) must be read afresh
    "arithmetic_after_other_assignments": """i=0; for ((n=0; n<3; n++)); do ((i++)); done; echo $i
i=abc; abc=7; echo $((i + 1)); ((i = 5)); i=5; echo $((i * 2)); i=6; echo $((i * 2))
j=0; ((j++)); j+=1; echo $j $((j + 1)); k=1; ((k++)); ( ((k += 10)); echo sub $k ); echo $k $((k))
declare -i d=3; ((d++)); d=4+4; echo $d $((d)); x=7; ((x++)); x=(1 2); echo $((x)) ${x[1]}
y=1; ((y++)); f() { local y=10; ((y++)); echo f $y; }; f; echo $y $((y + 0)); ((y--)); y=010; echo $((y))
set -u; g() { local u; (( u + 1 )); echo not here; }; g; echo after""",
    # brace expansion's words: fixed text (kept as fields without a closure each) beside
    # quoted, escaped and expanding ones
    "brace_words_fixed_and_not": """for i in {1..3} {a,'b c',"d"}{x,} {01..3} {z..x} '{1..2}' \\{a,b\\} {a,b\\*} {,}; do printf '[%s]' "$i"; done; echo
v=q; echo {1..3}{,-} x{,}y ~nobody{a,b} {$v,w} $v{1,2} "$v"{1,2} {a..e..2} {5..1..2} {-1..1} {a,b}{1..2}
IFS=x; echo {1..2}x{a,b} {$v,x}; printf '<%s>' {a,}{b,} {'',''}; echo
echo {a{b,c}} {a,{b,c} {{a,b}} {a,b}{ x{1..3 {1..3}} }{a,b}{ \\${a,b} a{}b {,} {a{,}b} {1..1} {x..x}
a=([1]=x{1,2,3} [5]=y); declare -p a; b=([2]=-{a,b}- [7]={1..3}); declare -p b""",
    "dbracket": """x=abc; [[ $x == a* && -n $x && ! -z $x ]] && echo ok1; [[ $x < b || 1 -eq 2 ]] && echo ok2; [[ ( $x != abc ) ]] || echo ok3; [[ 10 -gt 9 ]] && echo ok4""",
    "regex_match": """[[ 'key=value; k2=v2' =~ ([a-z0-9]+)=([a-z0-9]+) ]] && echo ${BASH_REMATCH[0]} ${BASH_REMATCH[1]} ${BASH_REMATCH[2]}; re='^[0-9]+$'; [[ 123 =~ $re ]] && echo num""",
    "test_builtin": """[ -z '' ] && echo z; [ abc = abc ] && echo eq; [ 3 -lt 10 ] && echo lt; test ! -n '' && echo not; [ a '<' b ] && echo less; [ \\( 1 -eq 1 \\) -a 2 -gt 1 ] && echo and""",
    "and_or_lists": """true && echo a || echo b; false && echo c || echo d; ! false && echo e; false || false || echo f""",
    "subshell_isolation": """x=1; (x=2; echo in $x); echo out $x; { x=3; }; echo brace $x""",
    "pipelines_and_status": """echo hi | (read l; echo got $l); false | true; echo $? ${PIPESTATUS[@]}; set -o pipefail; false | true; echo $?""",
    # a stage that runs in the shell (it cannot change it) ends alone, as its subshell would
    "fatal_error_in_a_pipeline_stage": """set -u; echo "$nope" | tr a b; echo "after $?"
printf '%s\\n' "${gone}" x | cat; echo "then ${PIPESTATUS[*]}"; echo ok | tr o "$unset_too"; echo end""",
    "pipeline_subshell_state": """x=1; echo 5 | read x; echo $x; echo a b | { read p q; echo $q $p; }""",
    # ---- functions
    "functions_and_locals": """f() { local x=$1; g; echo f:$x; }; g() { echo g:$x; x=changed; }; x=global; f arg; echo $x""",
    "function_keyword_and_return": """function h { return $(( $1 + 1 )); }; h 4; echo $?; k() ( exit 7 ); k; echo $?""",
    "recursion": """fib() { if (( $1 < 2 )); then echo $1; else echo $(( $(fib $(($1-1))) + $(fib $(($1-2))) )); fi; }; fib 12""",
    "funcname_and_positional": """f() { echo "$FUNCNAME $# $1 ${@: -1}"; shift; echo "$*"; }; f a b c""",
    "dynamic_scope_and_unset": """outer() { local v=outer; inner; echo after:$v; }; inner() { unset v; echo inner:${v-unset}; }; v=global; outer""",
    # ---- builtins
    "printf_formats": r"""printf '%5s|%-5s|%05d|%x|%X|%o|%e|%.3f|%c|%%|%b|%q\n' ab cd 42 255 255 8 12345.678 3.14159 xyz 'a\tb' "it's"; printf '%s-' a b c; echo""",
    "printf_v_and_reuse": """printf -v out '%s=%d;' a 1 b 2; echo "$out"; printf '%d\\n' "'A" 0x10 010""",
    "echo_flags": r"""echo -n a; echo -e 'b\tc\x41'; echo -E 'd\te'; echo -ne 'f\n'; echo -- -n""",
    "read_variants": """read a b <<< '  one two three  '; echo "[$a][$b]"; IFS=: read -r x y <<< 'p:q:r'; echo $x $y; read -n 3 c <<< abcdef; echo $c; read -d , d <<< 'x,y'; echo $d""",
    "read_backslashes_and_fields": r"""printf 'a\\b c\\\nd e\n\nx,y,,z rest, \nlast' > /dev/null
printf 'a\\b c\\\nd e\n\nx,y,,z rest, \nlast' | { read p q; echo "[$p][$q]"; read -r e; echo "[$e]"; IFS=, read -r f g h; echo "[$f][$g][$h]"; read -r l; echo "[$l] $?"; read m; echo "[$m] $?"; }""",
    "printf_q_and_at_q": r"""printf '%q\n' 'a,b' 'x^y' 'p=q' '#h' 'm#n' '~u' 'v~w' 'é ü' $'\xff' "it's"; x=$'\t\xff'; echo "${x@Q}" """,
    "transform_of_unset": r"""set -- "${x@Q}"; echo $#; set -- "${a[@]@Q}"; echo $#; set -- ${x@Q}; echo $#; set -- "${a[*]@Q}" "${x@a}"; echo $#; "${x@U}" 2>/dev/null; echo $?""",
    "read_array_and_trailing_delimiters": """IFS=, read -ra p <<< "solo"; echo ${#p[@]}; IFS=: read a b c <<< "1:2:3:4:"; echo "[$c]"; IFS=: read a b <<< "1:2:"; echo "[$b]"; IFS=: read a b <<< "1:2::"; echo "[$b]" """,
    "printf_c_first_byte": """x=$(printf '%c' é); echo ${#x}; printf '[%c]\n' '' | wc -c""",
    "patsub_empty_matches_and_extglob": """shopt -s extglob; s=abc; p='?(x)'; echo "${s/$p/X}|${s//$p/X}|${s/#$p/X}|${s/%$p/X}"
p='*(b)'; echo "${s//$p/X}"; s=a-xa; p='?x!(a)'; echo "${s/$p/X}"; s=ab; p='!(a)'; echo "${s/$p/X}" "${s/#!(a)/Y}"
[[ c/a-- == [!a]**(a) ]] && echo star-then-group""",
    "unknown_transform_of_unset_and_set": """unset x; a=(); echo "[${x@Z}] [${x@}] [${x@QQ}] [${a[@]@Z}]"
f() { echo "[${y@-}]"; }; f; x=1; (echo ${x@Z}; echo never); echo "sub $?"; echo ${x@Z}; echo never""",
    "patsub_of_an_empty_value": """shopt -s extglob; v=; a=("" b ""); for p in '?(x)' '*(x)' '*' '[a]' '!(x)'; do
echo "$p [${v/$p/X}] [${v//$p/X}] [${v/#$p/X}] [${v/%$p/X}] ${a[@]/$p/Y}"; done; echo "[${v/#/X}] [${v/%/X}]" """,
    "unquoted_at_with_nonblank_ifs": """IFS=:; set -- a "" b; printf "<%s>" $@; echo; printf "<%s>" $* x$*y; echo
set -- "a:b" ""; printf "<%s>" $@; echo; IFS=': '; v=': a : b :'; set -- $v; printf "<%s>" $*; echo
read -r p q r <<< "$v"; printf "<%s>" "$p" "$q" "$r"; echo; IFS=' '; set -- a "" b; printf "<%s>" $@; echo""",
    "arith_signs_and_compound_order": """x=5; y=-2; a=(4 5 6); echo $(( ---x )) $x $(( --3 )) $(( +++x )) $x $(( ----x )) $(( x---y )) $x $y
x=5; y=-2; echo $(( y |= y <<= 3 )) $y $(( y += y *= 2 )) $y $(( a[1] += a[1] *= 2 )) ${a[1]} $(( - --x )) $x""",
    "brace_expansion_lengthens_names": """v=V; v05=five; v1a=one; printf "<%s>" $v{05..10..2}; echo; printf "<%s>" x{,}$v{1..3}{a,b}; echo
printf "<%s>" {$v,c}{1..3} ${v}{1,2} $v{,x} "$v"{1,2}; echo""",
    "declare_p_control_characters": r"""a=($'x	y' b); declare -A m=([$'k	q']=1); s=$''; declare -p a m s; export e=$'n
l'; declare -p e""",
    "heredoc_continuations": "cat <<EOF\na\\\nb\nx\\\nEOF\nEOF\ncat <<-EOF\n\ta\\\n\tb\n\tEOF\ncat <<'EOF'\nc\\\nEOF\necho after",
    "read_loop_from_heredoc": """while IFS= read -r line; do echo "<$line>"; done <<'EOF'
  indented
with \\backslash
EOF""",
    "getopts": """set -- -a -b val -c arg1; while getopts 'ab:c' opt; do echo "$opt ${OPTARG-}"; done; shift $((OPTIND-1)); echo rest=$*""",
    "eval_and_let": """cmd='x=5; echo $((x*2))'; eval "$cmd"; let 'y = x + 1' z=3; echo $y $z""",
    "type_and_command": """f() { :; }; type -t f echo if; command -v echo; command -v nonexistent_zz || echo missing""",
    "declare_attributes": """declare -i n=2+3; declare -l lo=HeLLo; declare -u up=abc; echo $n $lo $up; n+=1; echo $n""",
    "readonly_and_export": """readonly r=1; export e=2; (r=3) 2>/dev/null; echo $? $r; declare -p e""",
    "shift_and_set": """set -- 1 2 3 4; shift 2; echo $@; set -- x; echo $#; shift 5; echo $?""",
    "local_scope_shadow": """v=g; f() { local v; echo "[${v-unset}]"; v=l; echo $v; }; f; echo $v""",
    # ---- options
    "errexit": """set -e; f() { false; echo not reached; }; if f; then :; fi; echo survived; false || true; echo end; false; echo never""",
    "errexit_in_subshell": """set -e; (false; echo no); echo unreachable""",
    "nounset": """set -u; x=1; echo ${y:-d} $x; echo $y; echo never""",
    "xtrace_stdout_unaffected": """set -x; a=1; echo $a""",
    # ---- here-docs and redirections
    "heredocs": """cat <<EOF
expand $((1+1)) $(echo sub)
EOF
cat <<'EOF'
literal $x
EOF
cat <<-EOF
	tab stripped
	EOF""",
    "heredoc_two_on_line": """while read a && read b <&3; do echo "$a $b"; done <<A 3<<B
1
2
A
x
y
B""",
    "herestring_and_devnull": """cat <<< "here string"; echo gone >/dev/null; echo err 2>/dev/null >&2; echo shown""",
    "stderr_to_stdout": """{ echo out; echo err >&2; } 2>&1 | sort""",
    "exit_status_and_exit": """(exit 3); echo $?; f() { return 4; }; f; echo $?; exit 5""",
    "comments_and_continuations": """echo a \\
  b # comment
# full line
echo c#notcomment""",
    # ---- text commands
    "sort_uniq": """printf 'b\\na\\nc\\na\\n' | sort | uniq -c; printf '10\\n9\\n100\\n' | sort -n; printf 'x 3\\ny 1\\nz 2\\n' | sort -k2 -n""",
    "sort_flags": """printf 'B\\na\\nC\\nb\\n' | sort -f; printf '1\\n3\\n2\\n3\\n' | sort -ru; printf 'a:3\\nb:1\\n' | sort -t: -k2""",
    "grep_variants": """printf 'apple\\nBanana\\ncherry\\n' > /dev/null; printf 'apple\\nBanana\\ncherry\\n' | grep -i an; printf 'a1\\nb2\\nc3\\n' | grep -E '[ab][0-9]' | grep -v b; printf 'x\\ny\\n' | grep -c .; printf 'one two\\n' | grep -o '[a-z]*'""",
    "grep_status": """echo abc | grep -q b && echo found; echo abc | grep zzz; echo status=$?""",
    "cut_tr_wc": """echo 'a,b,c,d' | cut -d, -f2-3; echo hello | cut -c2-4; echo 'Hello World' | tr 'a-z' 'A-Z' | tr -d 'O'; echo 'a  b   c' | tr -s ' '; printf 'one two\\nthree\\n' | wc -l""",
    "head_tail_seq": """seq 10 | head -3; seq 10 | tail -2; seq 2 2 8; seq -w 8 11; seq 5 | tail -n +4; seq 3 | tac""",
    "expr_and_rev": """expr 6 \\* 7; expr length hello; echo abc | rev; expr 5 '>' 3""",
    # ---- arrays, declarations and errexit corners
    "attributes_of_declared_arrays": """declare -A h=(['1']=2); declare -a e; declare -A g; a=()
echo "[${h@a}] [${e@a}] [${g@a}] [${a@a}] [${unset_x@a}]" """,
    "readonly_export_p_with_names": """x=1; readonly -p x; echo $?; declare -p x; y=1; export -p y; declare -p y
f() { local z=5 w=1; g=2; local -p z g; echo --; local -p; }; f""",
    "set_e_inside_negated_call": """f() { set -e; false; echo x; }; if f; then echo y; fi; ! f | cat; echo z; ! f; echo never""",
    "negation_holds_err_trap_only": """trap 'echo err' ERR; f() { false; echo x; }; ! f; ! false; false; echo z
set -e; g() { false; echo in-g; }; ! g; echo after""",
    "assoc_literal_append_reads_old_value": """declare -A h=([k]=1 [k]+=2); echo ${h[k]}; h=([k]+=x [k]+=y); echo ${h[k]}
h+=([k]+=p [k]+=q); echo ${h[k]}; a=(old); a=([0]+=x [0]+=y); echo ${a[0]}""",
    "element_as_temporary_binding": """f() { echo "in [${b[0]}] [$c]"; }; b[0]=2 c=3 f; echo "out [${b[0]}] $?"
b[1]=x true; echo rc=$?""",
    "bad_subscript_in_assignment_ends_script": """a['1']=x; echo ok; a[1+]=y
echo never""",
    "quoted_subscripts": """a["1"]=2; a[2 + "3"]=5; declare -A h; h['k']=v; echo ${#a[@]} ${a[5]} ${h[k]}""",
    "indirect_through_values_needs_one_name": """x=val; a=(x); echo "${!a[@]-d}"; (echo "${!b[@]-d}"); echo rc=$?
c=(x x); (echo "${!c[@]-d}"); echo rc=$?""",
    "brace_expansion_in_keyed_element": """a=([k2]=-{a,b}- [5]=x{}y); declare -p a; declare -A h=([x]={1,2}); declare -p h""",
    "select_at_end_of_input": """printf '9\\n1\\n' | { select x in a b; do echo "[$x] $REPLY"; done; echo "st=$?"; } 2>/dev/null""",
    "debug_trap": """trap 'echo "dbg $LINENO [$BASH_COMMAND] $?"' DEBUG; x=1
echo hi; false
f() { echo inf; }; f; echo $(echo sub); trap - DEBUG; echo done""",
    "debug_trap_in_functions_with_functrace": """set -T; trap 'echo "dbg [$BASH_COMMAND]"' DEBUG; f() { echo inf; }; echo top; echo $-""",
    "return_trap": """f() { trap 'echo "ret $? ${FUNCNAME[0]}"' RETURN; echo inf; return 3; }; g() { echo ing; }; f; echo out $?; g
h() { f; echo inh; }; h; trap - RETURN; h""",
    "bash_command_in_err_trap": """trap 'echo "failed: [$BASH_COMMAND] $?"' ERR; x=$(echo a); nope_cmd_zz; false; echo next""",
    "err_trap_in_functions_with_errtrace": """set -E; trap 'echo "err in ${FUNCNAME[0]:-main}"' ERR; f() { false; echo after; }; f; false""",
    "options_in_dollar_dash": """echo $-; set -euCaTE; echo $-; set +eu -f; echo $-""",
    "let_with_parentheses": """let x=( 1 ); let y=( x + 2 ) z=( y * 3 ); v=2; let w=$v+1 'q = ( 4 )'; echo $x $y $z $w $q""",
    # subshells share their parent's variables until they change one (copy on write): every
    # kind of change stays on its side, in $( ), ( ), pipeline stages and functions
    "subshell_changes_stay_inside": r"""s=1 t=abc; a=(1 2 3); declare -A h=([k]=v [j]=w); declare -i n=5; declare -u up=x; ro=r
f() { local l=1; echo "in f l=$l $(l=2; echo sub $l; s=9) l=$l"; local -a la=(x y); ( la[5]=z; echo ${#la[@]} ); echo ${#la[@]}; }
echo "$(s=2; t+=def; a[1]=X; a+=(4); h[k]=V; h[new]=N; unset 'a[0]'; unset t; n+=3; up=abc; export s; declare -i s; s=3+4; echo in $s ${a[*]} ${h[k]} $n $up)"
echo "out $s $t ${a[*]} ${#a[@]} ${h[k]} ${h[new]-none} $n $up"
( readonly s; declare -l t; t=XYZ; echo "$t"; unset -v h; declare -p h 2>/dev/null; echo st=$? ) ; declare -p s t h | sed 's/declare/D/'
echo x | { read -r s; mapfile -t a <<< "m1"; printf -v t '%s!' p; echo "in $s ${a[*]} $t"; }; echo "out $s ${a[*]} $t"
f; echo "$(f)"
x=1; echo $( (( x++ )); let x+=5; : ${y:=yy}; echo $x $y ); echo $x ${y-unset}
declare -n ref=s; echo $(ref=viaref; echo $s); echo $s; ( unset -n ref; ref=plain; echo $ref $s ); echo $ref
for i in 1 2; do big[i]=$(echo $i); done; echo ${big[*]}
g() { a[0]=G; echo g ${a[*]}; }; echo "$(g)"; echo ${a[*]}; g | cat; echo ${a[*]}; g; echo ${a[*]}
echo "${a[*]}" | while read -r q; do a[7]=$q; s=loop; done; echo ${a[7]-none} $s
declare -A h2; h2[a]=1; ( h2[b]=2; declare -p h2 ); declare -p h2
z=0; for k in 1 2 3; do z=$((z + $(echo $k))); done; echo $z""",
    # `local` takes over a function call's own temporary binding (removing the local later
    # reveals what was under both) and turns one made inside the function (`v=x eval`) into a
    # local in place; an eval's binding below the function stays
    "local_and_temporary_bindings": r"""drop() { unset -v "$1"; }
g() { local v; echo "g1 ${v-(unset)}"; ( drop v; echo "g2 ${v-(unset)}" ); drop v; echo "g3 ${v-(unset)}"; }
h() { local v=one; v=two eval 'local v=three; (unset v; echo "h1 ${v-(unset)}"); (drop v; echo "h2 ${v-(unset)}"); unset v; echo "h3 ${v-(unset)}"'; echo "h4 $v"; }
v=outer; v=temp g; v=temp eval g; v=temp h; echo "end $v"
""",
    "nameref_over_a_value_that_names_nothing": """ref=1; typeset -n ref; echo st=$?; ref=foo; declare -p ref
x=1; typeset -n r=x; r=2; declare -p r x; e=""; declare -n e; echo st=$?; declare -p e 2>&1""",
    # a tilde after `:` in an assignment's value, in `[k]=v` of an indexed array, inside
    # ${u-...} of an assignment, and in an argument that looks like an assignment
    "tildes_after_colons": """HOME=/h; echo ${u-~:~} x=~:~ "${u-~:~}"; x=${u-~:~}; y=a:${u-~:~:b}; z="${u-~:~}"
a=([1]=~:~ [2]=x:~/d); echo $x $y $z ${a[@]}""",
    # any word before `()` makes a function definition; a name with quotes or expansions is
    # refused when the definition runs (status 1), and the script goes on
    "function_names_that_are_not_names": """$foo-bar() { ls; }; echo next $?
foo-$(echo hi)() { ls; }; echo n2 $?; "f"() { echo q; }; echo n3 $?; function $y { :; }; echo n4 $?
g-x() { echo ok; }; g-x""",
    "reversed_range_in_patterns_matches_nothing": """[[ xy == x[z-a]y ]]; echo $?; [[ xby == x[!z-a]y ]]; echo $?
[[ xby == x[bz-a]y ]]; echo $?; v=xyz; echo ${v//[z-a]/Q}; case a in [z-a]) echo m;; *) echo n;; esac""",
}


@pytest.mark.differential
@pytest.mark.skipif(not HAVE_BASH5, reason="real bash 5 is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_same_as_bash(name, run, tmp_path):
    script = CASES[name]
    want_out, want_status = run_bash(script, tmp_path=tmp_path)
    got = run(script)
    assert (got.stdout, got.exit_code) == (want_out, want_status), got.stderr
