"""BashTool against real bash 5 in an empty temporary directory: the same script gives the
same stdout and exit status. bash runs as an ordinary user (uid 65534 via setpriv when the
tests run as root) with umask 022, so that permission bits matter as they do for the
sandbox's user; both sides start with HOME and the working directory at that directory, and
its absolute path is written <cwd> before comparing."""
import os
import shutil
import subprocess
import tempfile

import pytest

from scripted_kernel import BashTool

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")

SCRIPTS = {
    # redirections
    "write-append-read": 'echo one > f; echo two >> f; cat f; cat < f; read x < f; echo "$x"',
    "stderr-to-file": 'ls nope 2> err; echo $?; wc -l < err; { echo out; echo err >&2; } &> both; sort both',
    "noclobber": 'echo a > f; set -C; echo b > f; echo $?; echo c >| f; cat f',
    "read-write-open": 'exec 3<> rw; echo hi >&3; exec 3>&-; cat rw',
    "exec-persistent": 'exec > log; echo hidden; exec >&-; exec >/dev/stdout 2>&1; true',
    "heredoc-to-file": 'cat > h.txt <<EOF\nline 1\nline $((1 + 1))\nEOF\ncat h.txt',
    "fd-variable": 'exec {fd}> v.txt; echo via-fd >&$fd; exec {fd}>&-; cat v.txt',
    "missing-dir": 'echo x > no/such; echo status=$?',
    "dir-as-file": 'mkdir d; echo x > d; echo status=$?; cat d; echo status=$?',
    "cmdsub-file": 'printf "a\\nb\\n\\n" > f; x=$(< f); echo "[$x]"',
    "ambiguous": 'touch a1 a2; echo x > a*; echo status=$?; v=""; echo y > $v; echo status=$?',
    # pathname expansion
    "globs": 'touch b.txt a.txt .hidden c.md; mkdir sub; touch sub/x.txt; echo *.txt; echo *; echo .*; echo */*.txt; echo [ab].txt; echo nomatch*',
    "glob-options": 'touch a.TXT .h; shopt -s nullglob; echo none* end; shopt -u nullglob; shopt -s nocaseglob; echo *.txt; shopt -s dotglob; echo *',
    "globstar": 'mkdir -p p/q/r; touch p/1.c p/q/2.c p/q/r/3.c; shopt -s globstar; echo **/*.c; echo p/**',
    "extglob": 'shopt -s extglob\ntouch a.c b.h c.o; echo !(*.o); echo @(a|b).*; echo +([a-c]).c',
    "quoted-glob": 'touch "a b" ab; x="a*"; echo "$x" $x; echo "a"*; for f in *; do echo "<$f>"; done',
    "failglob": 'shopt -s failglob; echo nothing*; echo status=$?',
    # directories
    "cd-pwd": 'mkdir -p a/b; cd a/b; pwd | sed "s|$HOME|~|"; cd ..; basename "$PWD"; cd -; cd; [ "$PWD" = "$HOME" ] && echo home',
    "cd-errors": 'touch f; cd f; echo $?; cd nope; echo $?; cd a b; echo $?',
    "pushd-popd": 'mkdir -p x y; pushd x >/dev/null; pushd ../y >/dev/null; dirs | sed "s|$HOME|H|g"; popd >/dev/null; basename "$PWD"; popd >/dev/null; dirs -c; dirs | sed "s|$HOME|H|g"',
    "cdpath": 'mkdir -p lib/pkg; CDPATH=lib; cd pkg | sed "s|$HOME|H|"; [ "$PWD" = "$HOME" ] && echo unchanged; cd pkg >/dev/null; basename "$PWD"',
    # file tests
    "test-ops": 'touch e; echo x > s; mkdir d; ln -s s l; chmod +x s; for t in -e -f -d -s -L -x -r -w; do for f in e s d l nope; do [ $t $f ] && printf "%s %s\\n" $t $f; done; done',
    "newer": 'touch old; sleep 0; echo x > new; [ new -nt old ] && echo newer; [ old -ot new ] && echo older; ln new hard; [ new -ef hard ] && echo same',
    "permissions": 'echo secret > f; chmod 000 f; cat f; echo $?; [ -r f ] || echo unreadable; chmod u+r f; cat f; mkdir d; chmod -x d; ls d; cd d; echo $?',
    # scripts
    "source": 'printf "v=sourced\\nf() { echo \\"f \\$1\\"; }\\n" > lib.sh; . ./lib.sh; echo $v; f x; source lib.sh; echo ok',
    "run-script": 'printf "#!/bin/bash\\necho \\"\\$0 \\$# \\$1\\"\\nexit 3\\n" > s.sh; ./s.sh a; echo $?; chmod +x s.sh; ./s.sh a b; echo $?; bash s.sh c; echo $?',
    "path-lookup": 'mkdir bin; printf "echo from-path\\n" > bin/tool; chmod +x bin/tool; PATH="$PWD/bin:$PATH"; tool; command -v tool | sed "s|$HOME|H|"',
    "path-shadowing": 'mkdir bin; printf "echo wrong\\n" > bin/tr; chmod +x bin/tr; PATH="$PWD/bin:$PATH"; echo aaa | tr a b; echo aaa | command -p tr a b; touch bin/noexec; PATH="$PWD/bin:$PATH"; noexec; echo $?',
    "mapfile-file": 'printf "1\\n2\\n3\\n" > n; mapfile -t a < n; echo ${#a[@]} ${a[2]}; while read -r l; do echo "<$l>"; done < n',
    # file commands
    "ls": 'mkdir -p d/e; touch b a .h d/f; ls; ls -a; ls -A; ls -1 d; ls -R; ls -d d; ls -F; ls nope; echo $?',
    "ls-long": 'mkdir -p d/sub; echo hello > d/a.txt; printf "%3000s" x > d/big; ln -s a.txt d/link; touch d/.hidden d/Zeta d/alpha; chmod +x d/alpha; cd d; for o in -la -l -lh -lS -ld; do ls $o | sed -E "s/^([^ ]+ +[0-9]+) +[^ ]+ +[^ ]+ /\\1 OWNER /; s/[A-Z][a-z]{2} [ 0-9]{2} [0-9]{2}:[0-9]{2}/DATE/"; done',
    "ls-long-shape": 'echo hello > a; mkdir d; ls -l | awk "{print \\$1, \\$2, \\$5, \\$NF}"; ls -la | head -1',
    "mkdir-rm": 'mkdir a; mkdir a; echo $?; mkdir -p a/b/c; rmdir a/b; echo $?; rm -r a; ls; rm nope; echo $?; rm -f nope; echo $?; mkdir d; rm d; echo $?; rm -d d; ls',
    "cp-mv": 'echo x > f; cp f g; cp -r . ../nope 2>/dev/null; mkdir d; cp f g d; ls d; mv g h; ls; mv h d/; ls d; cp d e; echo $?; cp -r d e; ls e; mv nope x; echo $?',
    "touch-chmod-stat": 'touch f; chmod 640 f; stat -c "%a %A %s %F" f; chmod u+x,g-r f; stat -c "%a" f; chmod a=r f; stat -c "%A" f; mkdir d; stat -c "%a %F" d; umask 077; touch g; stat -c %a g',
    "ln-readlink": 'echo t > target; ln -s target link; readlink link; cat link; ln -s target link; echo $?; ln target hard; stat -c %h target; realpath link | sed "s|$HOME|H|"',
    "find": 'mkdir -p a/b; touch a/x.txt a/b/y.txt z.md; find . -name "*.txt" | sort; find a -type d | sort; find . -maxdepth 1 -type f; find . -name "*.md" -exec cat {} \\;; find . -empty -type f | sort; find . -path "*b*" | sort',
    "find-delete": 'mkdir -p t/u; touch t/u/k t/j; find t -name k -delete; find t | sort; find nope; echo $?',
    "du": 'mkdir d; printf "%5000s" x > d/big; touch d/small; du -s d; du -a d | sort; du -sh d',
    "diff-cmp": 'printf "a\\nb\\nc\\n" > x; printf "a\\nB\\nc\\nd\\n" > y; diff x y; echo $?; diff x x; echo $?; diff -u x y | tail -n +3; cmp x y; echo $?; diff -q x y',
    "mktemp": 'f=$(mktemp); [ -f "$f" ] && echo file; d=$(mktemp -d); [ -d "$d" ] && echo dir; g=$(mktemp -p . XXXXX.tmp); [ -f "$g" ] && echo local',
    # text commands on files
    "text-commands": 'printf "b 2\\na 1\\nc 3\\n" > t; printf "x\\n" > u; cat -n t u; head -1 t u; tail -n 1 t; wc t u; wc -l t; sort t; sort -o t t; cat t; cut -d" " -f1 t; nl u; paste t u; tac t; rev u; uniq t; tr a A < t',
    "grep-files": 'mkdir -p d/e; echo "hit 1" > d/a; echo miss > d/b; echo "hit 2" > d/e/c; grep hit d/a d/b; grep -r hit d | sort; grep -l hit d/*; grep -L hit d/a d/b; grep -c hit d/a; grep hit nope; echo $?; echo hit > pats; grep -f pats d/a',
    "sed-files": 'printf "one\\ntwo\\n" > a; printf "three\\n" > b; sed -n "\\$p" a b; sed -s -n "\\$p" a b; sed -i "s/o/0/g" a; cat a; echo "s/t/T/" > prog; sed -f prog b',
    "sed-read-write": 'printf "a\\nb\\nc\\n" > f; printf "X\\nY\\n" > ins; sed "2r ins" f; sed "R ins" f; sed -n "/b/w out" f; cat out; sed "s/a/A/w subs" f >/dev/null; cat subs; sed "1W first" f >/dev/null; cat first; sed "r nope" f',
    "awk-files": 'printf "k 1\\nj 2\\n" > a; printf "k x\\n" > b; awk "{print FILENAME, FNR, NR}" a b; awk "NR==FNR{v[\\$1]=\\$2; next} {print \\$2, v[\\$1]}" a b; awk "{print \\$1 > \\"out\\"}" a; cat out; awk "BEGIN{while ((getline l < \\"a\\") > 0) n++; print n}"',
    "jq-files": 'echo \'{"a":1}\' > j; echo \'[1,2]\' > k; jq -c . j k; jq -n --slurpfile v k \'$v\'; jq -n --rawfile r j \'$r\'; jq . nope; echo $?',
    "tee-xargs": 'echo data | tee t1 t2 > /dev/null; cat t1 t2; printf "a\\nb\\n" > args; xargs -a args echo got; echo more | tee -a t1 >/dev/null; cat t1',
    "base64-files": 'printf hello > f; base64 f; base64 f > e; base64 -d e',
    "env": 'export A=1; B=2 env | grep -E "^(A|B)=" | sort; printenv A; X=3 printenv X; env -i Y=4 printenv Y; printenv NOPE; echo $?',
}


def _run_bash(script: str) -> tuple[str, int]:
    with tempfile.TemporaryDirectory() as top:
        home = os.path.join(top, "w")
        os.mkdir(home)
        os.chmod(top, 0o755)
        command = [BASH, "--norc", "--noprofile", "-c", 'export HOME="$PWD"; ' + script]
        if os.geteuid() == 0:
            if not shutil.which("setpriv"):
                pytest.skip("running as root without setpriv: permissions would not hold")
            os.chown(home, 65534, 65534)
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command
        proc = subprocess.run(command, cwd=home, capture_output=True, text=True, timeout=30,
                              env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": home},
                              preexec_fn=lambda: os.umask(0o022))
        return proc.stdout.replace(home, "<cwd>"), proc.returncode


def _run_ours(script: str) -> tuple[str, int]:
    tool = BashTool()
    r = tool.execute('export HOME="$PWD"; ' + script)
    return r.stdout.replace(tool.home, "<cwd>"), r.exit_code


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_same_as_bash(name):
    script = SCRIPTS[name]
    assert _run_ours(script) == _run_bash(script), script
