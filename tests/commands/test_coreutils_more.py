"""comm, join, split, csplit, od, hexdump, xxd, strings, expand, unexpand, fmt, pr, shuf,
tsort, numfmt, truncate and dd against the real programs on this machine (GNU coreutils,
bsdextrautils' hexdump, vim's xxd, binutils' strings): each script runs in real bash in an empty
temporary directory and in a BashTool over a MemoryFs; stdout, stderr and the status must be
the same (dd's timing and rate, the one thing that cannot be, are masked). A case whose
programs are absent here is skipped."""
import random
import re
import shutil
import subprocess

import pytest

from support import HAVE_BASH5
from scripted_kernel import BashTool

CASES = {
    'comm': (['comm'], [
        r'''printf 'a\nc\nb\nd\n' > u; printf 'a\nb\nc\n' > s; comm u s; echo "st=$?"''',
        r'''printf 'a\nc\nb\nd\n' > u; printf 'a\nb\nc\n' > s; comm --check-order u s; echo "st=$?"''',
        r"""printf 'a\nb\nc\n' > s; comm -12 s s; comm s; echo st=$?; comm a b c; echo $?""",
        r"""printf 'a\nc\nb\nd\n' > u; printf 'a\nb\nc\n' > s; comm --total -3 --output-delimiter=:: u s""",
        r"""printf 'a\nb\nc\n' > s; printf 'b\na\n' > r; comm r r; echo st=$?; comm s r; echo st=$?; comm s nope; echo $?""",
        r"""printf 'a\nb\nc\n' > s; printf 'a\nc\nb\nd\n' > u; comm -z s u | tr '\0' @""",
        r"""printf 'apple\nbanana\ncherry\n' > a; printf 'banana\ncherry\ndate' > b; comm -13 a b; comm -23 a b; comm -3 a - < b; comm --nocheck-order -1 b a""",
    ]),
    'join': (['join', 'od'], [
        r"""printf '1 a\n2 b\n' > j1; printf '1 x\n3 y\n' > j2; join -a 3 j1 j2; join -o 1.x j1 j2; join -o 0,1.0 j1 j2; join -t ab j1 j2; join -1 0 j1 j2; join -j x j1 j2; join -v 1 -a 2 j1 j2""",
        r"""printf '2 a\n1 b\n' > j3; printf '1 x\n3 y\n' > j2; join j3 j2; echo st=$?; join --check-order j3 j2; echo $?""",
        r"""printf '1 a\n2 b\n' > j1; printf '1 x\n3 y\n' > j2; join -e E -o auto -a1 -a2 j1 j2; join --header j1 j2; join j1; echo $?""",
        r"""printf 'id,name\n1,ann\n2,bob\n3,cy\n' > a.csv; printf 'id,score\n1,90\n3,70\n4,50\n' > b.csv; join -t, --header a.csv b.csv; join -t, -a1 -e NA -o 0,1.2,2.2 a.csv b.csv; join -t , -v2 a.csv b.csv""",
        r"""printf 'k1 a b\nk1 c d\nk2 e\n' > x; printf 'k1 X\nk1 Y\nk3 Z\n' > y; join x y; join -a1 -a2 x y; join -o 2.2,1.3 x y""",
        r"""printf 'a 1\nb 2\n' > p; printf '1 A\n2 B\n' > q; join -1 2 -2 1 p q; join -1 2 p q; echo st=$?""",
        r"""printf 'A x\nb y\n' > p; printf 'a 1\nB 2\n' > q; join -i p q; join p q; echo $?""",
        r"""printf '  a   x  \n\tb y\n' > p; printf 'a 1\nb 2\n' > q; join p q; join -t ' ' p q; echo $?""",
        r"""printf 'a,,x\nb,y\n' > p; printf 'a,1\nb,\n' > q; join -t, -e '?' p q; join -t, -e '?' -o auto p q; join -t '' p p""",
        r"""printf 'a x\n' > p; join p nope; echo $?; join -o 3.1 p p; join -o 1,2 p p; join -z p p | od -c""",
        r"""printf 'b 1\na 2\nc 3\n' > p; printf 'a 1\nb 2\nc 3\n' > q; join p q; echo $?; join --nocheck-order p q; echo $?; join -a1 p q; echo $?""",
    ]),
    'od_hexdump': (['od', 'hexdump', 'hd'], [
        r"""printf 'hello world\n' > h; printf "%040d" 0 | tr 0 "\\000" > z; printf 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ\x01\xff' > a
for c in "hexdump h" "hexdump -C h" "hd a" "hexdump -C z" "hexdump -c h" "hexdump -b h" "hexdump -d h" "hexdump -o h" "hexdump -x h" "hexdump -C -n 5 -s 2 a" "hexdump -v -C z" "hexdump -e '16/1 \"%02x\" \"\\n\"' a"; do echo "== $c"; eval "$c"; done""",
        r"""printf 'h\xc3\xa9\x7f\x80 \x00\t' > b; hexdump -c b; od -c b; hexdump -e '"%_u|"' b; echo; hexdump -n 3 -e '"%d %x"' b; echo; hexdump -e '4/1 "%02X" "\n"' -n 10 b; printf '' | hexdump -C; echo "[empty]"; hexdump -s 100 -C b; echo st=$?; hexdump -C nope; echo st=$?; hexdump -s 4 b""",
        r"""printf 'hello world\n' | od -tx1z -c -a; od -tx2 /dev/null; echo; printf 'ab' | od -j 5; echo $?; printf 'abcd' | od -w3 -tx2; echo $?; od -t q1 /dev/null; od -t x3 /dev/null; od -A q /dev/null""",
        r"""printf '\x00\x00\x80\x3f\x00\x00\x00\x00\x00\x00\xf0\x3f' | od -tf4 -tf8 -w16; printf 'abc' | od -tf4""",
        r"""printf 'hello world, this is a test of od\n\x00\x01\x02\xff' > f; od f; od -c f; od -An -tx1 f; od -t x2 -N 10 -j 3 f; od -v -w8 -tx1 f; od -Ad -tu1 -w4 f; od -Ax -td2 f; od -b f; od -tx1 -tc f; od -x -i -l f | head -5; od -to8 -tx8 -td8 -tu8 f""",
        r"""printf "%0100d" 0 | tr 0 "\\000" > z; od z; od -v -tx4 -w32 z | head -3; od -An -c z""",
        r"""printf 'abc' > f; od -tu2 f; od -td1 f; printf '\xff\xfe' | od -td1 -tu1 -to1 -tx1 -ta; printf '\xff\xfe\x00\x80' | od -td2 -td4 --endian=big; od -N 0x2 f; od -j1 -N1k f; od -S 3 f; echo $?""",
        r"""printf 'ab\0hello\0xy\0long string here\0tail' > s.bin; od -S 3 s.bin; od -S4 -Ax s.bin; od -An --strings s.bin; od -S 3 -c s.bin; echo $?""",
    ]),
    'xxd': (['xxd', 'od'], [
        r"""printf 'hello world\n' > h; printf 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ\x01\xff' > a
for c in "xxd h" "xxd a" "xxd -p a" "xxd -i h" "xxd -c 8 -g 4 a" "xxd -l 5 -s 3 a" "xxd -u -g 1 h" "xxd -b h" "xxd -e a" "xxd -i < h" "xxd -d h" "xxd -C -i h" "xxd -s -4 h" "xxd -s +2 -l 3 h" "xxd -o 100 h" "xxd -c 5 h" "xxd -c 5 -e h" "xxd -ps -c 0 a" "xxd -g0 h" "xxd -c3 -g2 a"; do echo "== $c"; eval "$c"; done""",
        r"""printf 'hello world\n' > h; xxd nope; echo $?; xxd -x h; echo $?; xxd h out.txt; cat out.txt; xxd -i 1x.y; echo $?; cp h 1x.y; xxd -i 1x.y; xxd -p h | xxd -r -p; xxd h | xxd -r; echo 'garbage' | xxd -r | od -c; echo $?; xxd -b -i h; echo $?; xxd -e -p h; echo $?""",
        r"""printf '%048d' 0 | tr 0 '\000' > z; printf x >> z; xxd -a z; xxd -a -c 4 z; printf '%032d' 0 | tr 0 '\000' | xxd -a; printf '%016d' 0 | tr 0 '\000' | xxd -a; printf '%064d' 0 | tr 0 '\000' | xxd -a""",
        r"""printf 'hello world\n' > h; xxd h > d; sed -i 's/6865/4a65/' d; xxd -r d; printf '00000010: 4142\n00000000: 4344\n' | xxd -r | od -c; printf 'XYZ' > t; printf '00000001: 41\n' | xxd -r - t; od -c t; echo 414243 | xxd -r -p; echo; xxd -b h | xxd -r -b 2>&1; echo $?""",
        r"""printf '' | xxd; printf '' | xxd -i; printf '' | xxd -p; echo st=$?; printf 'ab' | xxd -i -n my-var""",
    ]),
    'split_csplit': (['split', 'csplit'], [
        r"""seq 1 25 > f; split -l 10 f; ls; cat xab; split -l 7 -d f p-; ls p-*; split -b 20 --additional-suffix=.txt f q; ls q*; cat qab.txt""",
        r"""seq 1 25 > f; split -n 3 f; wc -c x*; split -n l/3 f y; wc -l y*; split -n r/4 f z; head -2 z*; split -n 2/3 f""",
        r"""seq 1 25 > f; split -a 1 -l 2 f; echo $?; ls; split -l 0 f; echo $?; split -b 0 f; echo $?; split f a b; echo $?; split nope; echo $?""",
        r"""seq 1 100 | split -l 1 - n; ls | head -3; ls | wc -l; ls | tail -3; seq 1 700 | split -l 1 - w; ls w* | tail -3""",
        r"""seq 1 30 > f; split -C 20 f c; for f in c*; do printf '%s:' $f; wc -c < $f; done; split --verbose -l 15 f v; split -l 10 -x f h; ls h*; split -l 3 --numeric-suffixes=5 f n; ls n*""",
        r"""printf 'a\nb\n\nc\n' > f; split -t '' -l 1 f; echo $?; split -e -n 8 f e; ls e*; split -n 8 f g; ls g*""",
        r"""seq 1 20 > f; csplit f 5 12; ls xx*; cat xx01; csplit -f part -n 3 f /1/ '{*}'; ls part*; csplit -s f /7/ %3% /9/+1; ls xx*; cat xx01""",
        r"""seq 1 20 > f; csplit f 30; echo $?; ls; csplit f /nope/; echo $?; ls; csplit -k f 5 /nope/; echo $?; ls""",
        r"""seq 1 20 > f; csplit f 3 '{2}'; ls; csplit -z f /5/ /5/; csplit f 5 /x; echo $?; csplit f; echo $?; seq 5 | csplit - 6; echo $?; seq 5 | csplit - 7; echo $?""",
        r"""printf 'h\nA\nb\nA\nc\n' > f; csplit -b '%03d.txt' f '/^A/' '{*}'; ls; head xx*""",
    ]),
    'dd_truncate': (['dd', 'truncate', 'od'], [
        r"""printf 'hello world\n' > h; dd if=h of=o bs=4 count=2 2>/dev/null; echo $?; cat o; echo; dd if=h bs=1 skip=6 status=none; dd if=h of=o2 bs=3 seek=2 count=1 status=noxfer; od -c o2; dd if=h conv=ucase 2>/dev/null; dd if=nope; echo $?; dd bs=x; echo $?; dd foo=1; echo $?""",
        r"""printf 'hello world\n' > h; dd if=h ibs=5 obs=3 status=noxfer; printf 'abc' | dd conv=notrunc of=h 2>/dev/null; cat h; dd if=h count=1 status=noxfer""",
        r"""printf 'hello world\n' > h; dd if=h of=o bs=5 conv=sync status=noxfer; od -c o; dd if=h conv=swab status=none; dd if=h skip=2 iflag=skip_bytes,count_bytes count=3 status=none; echo; dd if=h skip=100 status=noxfer; echo $?""",
        r"""printf 'hello world\n' > h; printf 'XXXXXXXXXXXXXXXXXXXX' > t; dd if=h of=t seek=1 bs=4 status=none; od -c t; printf 'XXXXXXXXXXXXXXXXXXXX' > t; dd if=h of=t seek=1 bs=4 conv=notrunc status=none; od -c t; dd if=h of=t conv=excl; echo $?; dd if=h of=nf conv=nocreat; echo $?; dd if=h of=t oflag=append status=none; cat t""",
        r"""printf 'hello world\n' > h; dd if=h of=o status=none conv=lcase,ucase; echo $?; dd if=h status=bad; echo $?; dd if=h conv=bogus; echo $?; dd if=h of=d/x; echo $?""",
        r"""printf 'hello' > f; truncate -s 2 f; cat f; echo; truncate -s +3 f; od -c f; truncate -s '<1' f; wc -c < f; truncate -s 10 new; wc -c < new; truncate -c -s 5 none; ls; truncate f; echo $?; truncate -s 3; echo $?; truncate -s x f; echo $?""",
        r"""printf 'hello' > f; truncate -s %4 f; wc -c < f; truncate -s /3 f; wc -c < f; truncate -r f -s +2 g; wc -c < g; truncate -s 1K f; wc -c < f; truncate -o -s 1 f; wc -c < f; truncate -s 5 d/x; echo $?""",
    ]),
    'shuf': (['shuf'], [
        r"""shuf -i 5-3; echo $?; shuf -i 1-3 -e a; echo $?; shuf -n x; echo $?; shuf -i x; echo $?; shuf -i 1-3 f; echo $?; shuf nope; echo $?; shuf -n 2 -i 3-3; shuf -i 4-3 -n 1; echo $?; shuf -e; echo $?;  shuf -i 3-5 -i 1-2; echo $?; printf 'a\nb\n' | shuf -n 0; echo $?""",
        r"""seq 1 50 > f; shuf f | sort -n | tr "\n" " "; shuf -n 5 f | wc -l; shuf -e a b c | sort; shuf -i 1-10 | sort -n | tr '\n' ' '; shuf -i 1-1000000000 -n 3 | wc -l; shuf -r -n 7 -e x | tr -d '\n'; shuf -o out -i 1-5; sort out | tr -d '\n'; printf 'a\0b\0' | shuf -z | sort -z | tr '\0' ,""",
        r"""shuf -r -e; echo $?; shuf -r -n 2 -i 1-0; echo $?; shuf -i 1-0; echo $?""",
    ]),
    'strings': (['strings', 'od'], [
        r"""printf 'ab\0hello\tworld\x01xyz1234\x80\xffmore text here\nline2!' > s.bin; printf 'abclo world' > h; strings s.bin; strings -n 6 s.bin; strings -t x s.bin; strings -td -n3 s.bin; strings -f s.bin h; strings nope; echo $?; strings -5 s.bin; strings -w s.bin | od -c | head; strings -e S s.bin | od -c; strings -o s.bin; echo x | strings -n 0; echo $?; strings -s , s.bin; cat s.bin | strings -f""",
    ]),
    'expand': (['expand', 'unexpand', 'od'], [
        r"""printf 'a\tb\tc\n\tx\ty\n  \t z\n' > t; expand t | od -c; expand -t 4 t; expand -i t | od -c; expand -t 2,5,9 t; expand -3 t; expand -t 4,/8 t; expand -t 2,+3 t; printf 'é\tx\n' | expand; expand -t 0 t; echo $?; expand -t 3,2 t; echo $?; expand -t a t; echo $?""",
        r"""printf '        a       b\n    x\n  \t y   z\n a\n' > s; unexpand s | od -c; unexpand -a s | od -c; unexpand -t 4 s | od -c; unexpand --first-only -t 4 s | od -c; printf 'ab      cd\n' | unexpand -a | od -c; printf 'a       \n' | unexpand -a | od -c""",
        r"""printf '%s\n' '       x  y       z' '         a' 'a b  c   d    e' | unexpand -a | od -c; printf 'x\b\tq\n' | expand | od -c; printf 'no newline\t' | expand | od -c""",
    ]),
    'tsort': (['tsort'], [
        r"""printf 'a b\nb c\nc d\n' | tsort; printf 'a b\nb a\n' | tsort; echo $?; printf 'a b c\n' | tsort; echo $?; printf 'x x\ny\n' | tsort; echo $?; printf '3 1\n2 1\n3 2\n' | tsort; tsort nope; echo $?""",
        r"""printf 'a b b c c a d e e d f g\n' | tsort; echo $?; printf 'main parse\nmain eval\nparse lex\neval lex\nlex util\nz a\n' > deps; tsort deps; printf 'q w\nw e\ne q\nr t\nt y\ny r\n' | tsort; echo $?""",
        r"""printf '1 2\n2 3\n3 4\n4 2\n5 6\n6 5\n2 7\n' | tsort; echo $?; tsort a b; echo $?""",
    ]),
    'fmt': (['fmt'], [
        r"""printf 'The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog again and again.  Another sentence here! And (parenthetical remark) too.\n\nSecond paragraph\nwith short\nlines here.\n' > p; fmt p; fmt -w 40 p; fmt -40 p; fmt -u -w 30 p; fmt -s -w 20 p; fmt -g 30 p""",
        r"""printf '  indented para line one\n  line two of it\n\tand a tab line\n# comment one two three four five six seven\n# comment eight nine ten\nplain\n' > q; fmt -w 20 q; fmt -c -w 20 q; fmt -t -w 20 q; fmt -p '#' -w 15 q; fmt -w x q; echo $?; fmt nope; echo $?""",
        r"""seq 1 400 | tr '\n' ' ' | fmt; seq 1 3000 | tr '\n' ' ' | fmt -w 60 | tail -3; printf 'a.\nb\n' | fmt; printf 'end no newline' | fmt""",
    ]),
    'pr': (['pr'], [
        r"""seq 1 10 > t; pr -3 -t t; pr -t -n t | head -2; pr -2 -t -a t; pr -2 -t -s, t; pr -t -l 5 -2 t; pr -t -w 20 -2 t""",
        r"""printf '' | pr | wc -l; seq 3 | pr | wc -l; seq 3 | pr -l 15 | sed 's/^20[0-9-]* [0-9:]*/DATE/'; seq 120 | pr -t -2 | head -3; seq 120 | pr -t -2 | sed -n '55,58p'; seq 5 | pr -t -d; seq 3 | pr -t -o 3; seq 12 | pr -t -3 -n; seq 3 | pr -t -n,3; printf 'a very long line that exceeds the column width for sure\nb\n' | pr -t -2 -w 30""",
        r"""seq 1 130 | pr -h T | sed 's/^20[0-9-]* [0-9:]*/DATE/' | head -70; seq 200 | pr -3 | sed 's/^20[0-9-]* [0-9:]*/DATE/' | tail -15; seq 5 | pr -T; seq 3 | pr -t -s; printf 'a\tb\n' | pr -t -2""",
    ]),
    'mixed': (['dd', 'od', 'xxd', 'hexdump', 'join', 'cmp'], [
        r"""dd if=/dev/zero of=z bs=1K count=3; wc -c < z; od -An -tx1 z | head -2; dd if=/dev/zero bs=512 count=2 | wc -c; dd if=z of=y bs=1M; wc -c < y""",
        r"""printf 'hello world\n' > h; dd if=h of=o; dd if=h of=o2 bs=1 count=5; cat o2; echo; seq 1 500 > big; dd if=big of=b2 bs=1000; cmp big b2 && echo same""",
        r"""printf '\xff\xfe\x00abc\x80' | xxd; printf '\xff\xfe\x00abc\x80' | od -An -c; printf '\xff\xfe\x00abc\x80' | hexdump -C; printf '\xff\xfe' | xxd -p | xxd -r -p | od -An -tx1; printf 'AB' | od -An -tu1 -w1""",
        r"""printf 'hello world, hello od\n' > f; hexdump -e '"%08_ax: " 8/1 "%02x " "\n"' f; hexdump -e '"%_Ad\n"' -e '4/1 "%3d" "\n"' -n 9 f; hexdump -e '1/4 "%08x" "\n"' f; od -An -w4 -tx1 -v f | head -3; cat f | od -c -N 5 -j 6""",
        r"""printf 'b 2\na 1\n' > u; sort u > s1; printf 'a x\nb y\nc z\n' > s2; join s1 s2; sort -k1,1 s2 | join - s1; comm -12 s1 s2; comm -3 s1 - < s2""",
    ]),
    # huge and odd numbers on the command line: each program's own answer or complaint
    'bounds_dumps': (['od', 'hexdump', 'xxd'], [
        r"""printf 'abcd\n' > h; od -w2147483647 -tx1 h; od -w99999999999999999999999 h; echo $?; od -j 16E h; echo $?; od -N 99999999999999999999 h; echo $?; od -w0 h""",
        r"""printf 'abcd\n' > h; hexdump -n 99999999999999999999999999 h; echo $?; hexdump -s 1Y h; echo $?; hexdump -n 16E -C h; echo $?; hexdump -e '"%2147483648d"' h; echo st=$?; hexdump -e '1/4 "%.99999999999s"' h; echo st=$?; hexdump -e '"%12d|"' h; echo""",
        r"""printf 'abc\n' > h; for o in 5 -5 18446744073709551615 18446744073709551616 9223372036854775808 99999999999999999999999999999999999999999999; do xxd -o $o h; xxd -d -o $o h; done; xxd -c 4294967312 h; xxd -g 4294967298 h; xxd -g 999999999999999999999999999999 h; xxd -l -5 h; xxd -l 99999999999999999999999999999 h""",
        r"""printf 'abc\n' > h; xxd -c 99999999999999999999999999999999999999999 h; echo $?; xxd -p -c 9999999999999999999999999999999999 h; echo $?; xxd -p -c -1 h; echo $?; xxd -i -c 9999999999999999999999999 h; echo $?""",
    ]),
    'bounds_pr': (['pr'], [
        r"""printf 'a 1\nb 2\n' > f; for a in -100 -36 -37 -2147483647 -2147483648 --columns=99999999999 '-w 4294967296' '-w 2147483647 -2' '-2 -w 40000000 -t' '-l 2147483648' '-o 2147483648' '-W 0' '-w 0' -n:99999999999 -n:0 -0 -00 '-2 -l 2147483647 -t'; do echo "== $a"; pr $a f | sed 's/^20[0-9-]* [0-9:]*/DATE/'; echo "st=${PIPESTATUS[0]}"; done""",
        r"""printf 'a 1\nb 2\n' > f; for a in '-w x' '-l x' '-o x' '-W x' '-w -5' '-l 0' '-l -1' '-o -1' --columns=x -n:x -n5x; do echo "== $a"; pr $a f | sed 's/^20[0-9-]* [0-9:]*/DATE/'; echo "st=${PIPESTATUS[0]}"; done; pr -2 -w 4000000 -t f | wc -c""",
    ]),
    'bounds_numfmt': (['numfmt'], [
        r"""for a in "--padding=99999999999999999999999999 5" "--padding=-99999999999999999999999999 5" "--format=%99999999999999999999999999f 5" "--format=%.99999999999999999999999999f 5" "--from-unit=99999999999999999999999999 5" "--to-unit=99999999999999999999999999 5" "--header=99999999999999999999999999 5" "--field=99999999999999999999999999 5" "--field=99999999999999999999999999- 5" "99999999999999999999999999" "--to=si 99999999999999999999999999" "--format=%.5000f 5" "--format=%.30f 5" "--format=%.18f 5" "--format=%.30f --to=si 5"; do echo "== $a"; numfmt $a; echo "st=$?"; done""",
        r"""for a in "--header=x 5" "--header=-1 5" "--header=0 5" "--from-unit=18446744073709551615 5" "--from-unit=18446744073709551616 5" "9999999999999999999" "99999999999999999999" "--to=si 99999999999999999999999999999" "--to=si 999999999999999999999999999" "--field=18446744073709551615 5" "--field=0 5" "9999999999999999999999999999999" "1.00000000000000000001" "--to=iec 1.5 1e3" "--padding=-10 5" "--format=%010.3f 5.5"; do echo "== $a"; numfmt $a; echo "st=$?"; done""",
    ]),
    'bounds_text': (['fmt', 'strings', 'expand', 'unexpand', 'shuf', 'join'], [
        r"""printf 'a b\n' > f; for w in 99999999999999999999999999 2501 2500 x -5 5K 0 ' 7'; do fmt -w "$w" f; echo st=$?; done; fmt -g 99999999999999999999999999 f; fmt -99999999999999999999999999 f; echo st=$?""",
        r"""printf 'abcdefgh\nxy\n' > f; for a in 99999999999999999999999999 4294967296 2147483648 x 0 -1 0x10 2 010 ' 3' 3x; do echo "== $a"; strings -n "$a" f; echo "st=$?"; done; strings -3 f""",
        r"""printf 'x\ty\n' > t; for a in 99999999999999999999999999 1,99999999999999999999999999 /99999999999999999999999999 18446744073709551616 x 0; do echo "== $a"; expand -t $a t; echo "st=$?"; unexpand -t $a t; echo "st=$?"; done; unexpand -t 18446744073709551615 t; echo st=$?""",
        r"""printf 'a\n' > f; for a in x-3 3 3-x -3 3-1 1- 1-99999999999999999999999999 99999999999999999999999999-99999999999999999999999999 0-18446744073709551615 0-18446744073709551616 18446744073709551615-18446744073709551615 5-4; do echo "== $a"; shuf -i $a -n 2 | wc -l; echo st=${PIPESTATUS[0]}; done; shuf -n 99999999999999999999999999 f; shuf -n -1 f; echo $?""",
        r"""printf 'a 1\nb 2\n' > f; printf 'a x\nb y\n' > g; join -1 99999999999999999999999999 f g; echo st=$?; join -o 1.99999999999999999999999999 f g; join -j 18446744073709551616 f g; join -j 0 f g; echo st=$?""",
    ]),
    'bounds_split': (['split', 'csplit', 'ls'], [
        r"""printf 'a 1\nb 2\nc 3\n' > f; for a in '-a 0' '-a x' '-a -1' '-b 1b' '-b 0' '-b x' '-n 3/2' '-n r/0' '-n x' '-n l/x' '-n 2/x' '-n 99999999999999999999999999/3' '-l 99999999999999999999999999' '-b 99999999999999999999999999' '-n 99999999999999999999999999' '-n 2/99999999999999999999999999' '-a 99999999999999999999999999' '-C 99999999999999999999999999' '-b 9223372036854775808' '-n 0/3' '-l 0'; do echo "== $a"; split $a f; echo "st=$?"; ls x* 2>/dev/null | head -3; rm -f x*; done""",
        r"""printf 'a 1\nb 2\nc 3\n' > f; for a in --numeric-suffixes=99999999999999999999999999 --numeric-suffixes=100 --numeric-suffixes=99 '-a 3 --numeric-suffixes=100' --numeric-suffixes=é --numeric-suffixes=-1 '-x --hex-suffixes=fg' '-a 300' '-e -n 1000000000' '-a 2 -n 1000' '-a 3 -n 1000 -e' '--numeric-suffixes=95 -n 10 -e' '-d -n 100 -e'; do echo "== $a"; split $a f; echo "st=$?"; ls x* 2>/dev/null | head -3; rm -f x*; done""",
        r"""printf '1\n2\n3\n' > f; for a in 'f /1/99999999999999999999999999' 'f /1/+99999999999999999999' 'f /1/x' 'f 2 {x}' 'f 2 {-1}' '-n x f 2' '-n -1 f 2' 'f 99999999999999999999999999' '-n 99999999999999999999999999 f 2' 'f 2 {99999999999999999999999999}' 'f 18446744073709551615' '-n 2147483648 f 2' '-n 3 f 2' 'f 1 {*}' 'f /2/+1'; do echo "== $a"; csplit $a; echo "rc=$?"; ls xx* 2>/dev/null; rm -f xx*; done""",
    ]),
    'bounds_truncate_dd': (['truncate', 'dd', 'wc'], [
        r"""printf hello > f; for a in 99999999999999999999999999 +99999999999999999999999999 18446744073709551615 9223372036854775808 %99999999999999999999999999 x +x %0 -99999999999999999999 ' 5' 1b 1Y '<99999999999999999999' '<+5' '+-5' 3 +2 -1 '<2' '>9' /2 %3 1K; do echo "== $a"; truncate -s "$a" f; echo "st=$?"; wc -c < f; done""",
        r"""printf 'a 1\nb 2\n' > f; for a in bs=99999999999999999999999999 count=99999999999999999999999999 skip=99999999999999999999999999 seek=99999999999999999999999999 ibs=99999999999999999999999999 cbs=99999999999999999999999999 bs=1x99999999999999999999999999 bs=18446744073709551616 bs=9223372036854775807 cbs=9223372036854775807 cbs=9223372036854775808 count=9223372036854775807 count=9223372036854775808 bs=2x4611686018427387904 bs=0 count=x; do echo "== $a"; dd if=f of=o $a status=none; echo st=$?; done""",
    ]),
    # file names in messages: bare or quoted as the shell needs (quotef), or always quoted (quoteaf)
    'quoting': (['comm', 'join', 'md5sum', 'sha256sum', 'pr', 'od', 'expand', 'tsort', 'shuf', 'dd',
                 'truncate', 'fmt', 'split', 'csplit'], [
        r"""for n in 'a b' "it's" é '#x' 'x#' '~x' 'a=b' 'a:b' '{' 'a{' $'a\tb' $'\x01' "it's \"q\"" 'a\b' "it's:x" $'\u2028'; do comm "$n" /dev/null; join /dev/null "$n"; md5sum "$n"; sha256sum -c "$n"; pr "$n"; od "$n"; expand "$n"; tsort "$n"; shuf "$n"; dd if="$n" status=none; truncate -s +1 -r "$n" x; fmt "$n"; split "$n"; csplit "$n" 1; done; echo st=$?""",
    ]),
}

# numfmt ARGS; echo st=$? for each of these
NUMFMT_ARGS = [
    r"""--to=si 1000 1500 999999 1000000 123456789""",
    r"""--to=iec-i 2048 5000000""",
    r"""--from=si 1K 1.5M 2G""",
    r"""--from=iec 1K 1.5M""",
    r"""--from=auto 1Ki 1K""",
    r"""--from=iec-i 4Mi""",
    r"""--to=iec --suffix=B 4096""",
    r"""--padding=8 1 22""",
    r"""--padding=-8 1""",
    r"""--to=si --padding=6 1234""",
    r"""--format=%.2f 3.14159""",
    r"""--format=%08.1f 2.5""",
    r"""--to=iec --format=%.3f 1234567""",
    r"""--round=up --to=si 1001""",
    r"""--round=down --to=iec 2047""",
    r"""--grouping 1234567""",
    r"""abc""",
    r"""1.5""",
    r"""--to=iec 1.5""",
    r"""--from=none 12""",
    r"""--to=si 0.5""",
    r"""--to=iec 1023.5""",
    r"""-- -5""",
    r"""--invalid=ignore x 5""",
    r"""--to=auto 5""",
    r"""1K""",
    r"""--from=si 1k""",
    r"""--from=si 1.5""",
    r"""--from=iec-i 4M""",
    r"""--suffix=B 5B""",
    r"""--to=si --suffix=/s 2000/s""",
    r"""--from=si --to=iec 1G""",
    r"""--format='%10f' 5""",
    r"""--format='x%fy' 5""",
    r"""--round=nearest --to=si 1450""",
    r"""--to=si 999""",
    r"""--to=si 9999""",
    r"""--to=si 99999""",
    r"""--to=iec-i 1""",
    r"""--padding=3 12345""",
    r"""--invalid=fail abc 5""",
    r"""--invalid=warn abc 5""",
    r"""--format=%d 5""",
    r"""--to=si 1e3""",
    r"""--to=si 12.34""",
    r"""12.340""",
    r"""' 12'""",
    r"""--to=iec 1024 1536 1000000 999 0 10239 10240 1048575""",
    r"""--to=si -- -1536""",
    r"""--to-unit=1024 2048""",
    r"""--from-unit=512 --to=iec 4""",
]
NUMFMT_PIPELINES = r"""printf 'size 2048 x\nb 4096 y\n' | numfmt --field=2 --to=iec; printf 'h 1\nsize 2048\n' | numfmt --header --field 2 --to=iec; printf '1K,2K\n' | numfmt -d, --field=1- --from=iec; printf '  1024\n' | numfmt --to=iec; printf '1000 x 3000\n' | numfmt --field 1,3 --to=si; df() { printf 'a 1 2048\n'; }; printf 'x 12 y\n' | numfmt --field=2 --invalid=warn; printf '1\nx\n3\n' | numfmt; echo st=$?"""


def _cases():
    for name, (programs, scripts) in CASES.items():
        for k, script in enumerate(scripts):
            yield pytest.param(programs, script, id=f"{name}-{k}")
    for k, args in enumerate(NUMFMT_ARGS):
        yield pytest.param(["numfmt"], f"numfmt {args}; echo st=$?", id=f"numfmt-{k}")
    yield pytest.param(["numfmt"], NUMFMT_PIPELINES, id="numfmt-pipelines")


def _random_graph(rng: random.Random) -> str:
    """Relations between a few dozen names, repeated ones, self-relations and a long cycle."""
    names = [rng.choice(["a", "b", "c", "x", "node", "n"]) + str(rng.randint(0, 60))
             for _ in range(rng.randint(1, 30))]
    pairs = [(rng.choice(names), rng.choice(names)) for _ in range(rng.randint(0, 60))]
    if rng.random() < 0.5:
        cycle = rng.sample(names, min(len(names), rng.randint(2, 10)))
        pairs += [(cycle[k], cycle[(k + 1) % len(cycle)]) for k in range(len(cycle))]
    rng.shuffle(pairs)
    return "".join(f"{a}{rng.choice([' ', '  ', chr(9), chr(10)])}{b}\n" for a, b in pairs)


@pytest.mark.differential
@pytest.mark.parametrize("seed", range(6))
def test_tsort_reports_the_loops_gnu_reports(seed, tmp_path):
    """Kahn's algorithm with predecessors kept by tree position (near-linear, was quadratic):
    the same order, the same loops and the same relations removed as GNU's detect_loop."""
    if not HAVE_BASH5 or shutil.which("tsort") is None:
        pytest.skip("real bash 5 and tsort are needed")
    rng = random.Random(seed)
    script = "".join(f"printf '{_random_graph(rng)}' | tsort; echo st=$?\n" for _ in range(40))
    assert ours(script) == real(script, tmp_path)


_TIMING = re.compile(r"copied, [0-9.e+-]+ s, [^\n]*")


def real(script: str, tmp_path) -> tuple:
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": str(tmp_path), "TZ": "UTC"}
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True,
                       cwd=tmp_path, env=env, timeout=60)
    return (p.stdout.decode("utf-8", "surrogateescape"),
            _TIMING.sub("copied, T", p.stderr.decode("utf-8", "surrogateescape")), p.returncode)


def ours(script: str) -> tuple:
    r = BashTool().execute(script)
    return r.stdout, _TIMING.sub("copied, T", r.stderr), r.exit_code


@pytest.mark.differential
@pytest.mark.parametrize("programs,script", list(_cases()))
def test_same_as_the_real_programs(programs, script, tmp_path):
    missing = [p for p in programs if shutil.which(p) is None]
    if not HAVE_BASH5 or missing:
        pytest.skip(f"real bash 5 and {', '.join(missing) or 'bash'} are needed")
    assert ours(script) == real(script, tmp_path)
