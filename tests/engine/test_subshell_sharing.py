"""Subshells share their parent's variables and copy one only when they change it, so the cost
of `$( )`, `( )` and pipeline stages does not grow with the number or size of variables.
(That changes stay on their side is tested against bash in test_differential.py.)"""
from scripted_kernel import ScriptedTool
from scripted_kernel.shell.state import IndexedArray, Var

BIG_STATE = """for ((i=0; i<300; i++)); do printf -v "var_$i" '%s' "$i"; done
big=(); for ((i=0; i<2000; i++)); do big[i]=$i; done
"""


def _counting(monkeypatch, script: str, methods: list) -> tuple[int, str]:
    """(how many calls of the methods did copy something, stdout). methods: (class, name,
    whether a call on this object copies)."""
    counts = [0]

    def counting(original, copies):
        def method(self, *args):
            counts[0] += copies(self)
            return original(self, *args)
        return method
    for owner, name, copies in methods:
        monkeypatch.setattr(owner, name, counting(getattr(owner, name), copies))
    result = ScriptedTool.builder("t").build().execute(script)
    return counts[0], result.stdout


def _copies(monkeypatch, script: str) -> tuple[int, str]:
    """Copies of variables and of arrays."""
    always = lambda self: True      # noqa: E731
    return _counting(monkeypatch, script, [(Var, "copy", always), (IndexedArray, "copy", always)])


def test_command_substitutions_copy_no_variable_they_do_not_change(monkeypatch):
    copies, out = _copies(monkeypatch, BIG_STATE + """s=0
for ((i=0; i<100; i++)); do s=$(( s + $(echo $i) )); done
( echo sub ${#big[@]} ) | cat
echo $s ${big[1999]} $var_299""")
    assert out == "sub 2000\n4950 1999 299\n"
    assert copies < 10


def test_a_subshell_copies_what_it_changes_once(monkeypatch):
    copies, out = _copies(monkeypatch, BIG_STATE + """
echo "$(big[0]=x; big[1]=y; var_1=z; echo ${big[0]}${big[1]}$var_1)" ${big[0]} $var_1""")
    assert out == "xyz 0 1\n"
    assert copies == 3          # the Vars var_1 and big, and big's array: nothing else


def _dict_copies(monkeypatch, script: str) -> tuple[int, str]:
    """Copies of the dict of globals, which a subshell makes at its first change of one."""
    from scripted_kernel.shell.runtime import Shell
    return _counting(monkeypatch, script, [(Shell, "own_globals", lambda self: self.globals_shared)])


def test_subshells_share_the_dict_of_globals_until_they_change_one(monkeypatch):
    copies, out = _dict_copies(monkeypatch, BIG_STATE + """s=0
for ((i=0; i<100; i++)); do s=$(( s + $(echo $i) )); done
( echo sub ${#big[@]} $var_7 ) | cat; f() { echo "f $1"; }; x=$(f y | tr a-z A-Z)
echo $s $x""")
    assert out == "sub 2000 7\n4950 F Y\n"
    assert copies == 0


def test_each_change_in_a_subshell_copies_the_dict_once_and_leaves_the_parent_alone(monkeypatch):
    copies, out = _dict_copies(monkeypatch, BIG_STATE + """
( new=1; unset var_1; var_2=b; declare -g g=1; export var_3; echo in $new ${var_1-unset} $var_2 $g )
echo "$(unset var_4; echo ${var_4-gone})" ${new-none} $var_1 $var_2 ${g-none} $var_4
echo x | { read -r var_5; echo $var_5; }; echo $var_5""")
    assert out == "in 1 unset b 1\ngone none 1 2 none 4\nx\n5\n"
    assert copies == 3          # one per subshell that changed a global, whatever it changed
