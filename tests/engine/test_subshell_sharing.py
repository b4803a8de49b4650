"""Subshells share their parent's variables and copy one only when they change it, so the cost
of `$( )`, `( )` and pipeline stages does not grow with the number or size of variables.
(That changes stay on their side is tested against bash in test_differential.py.)"""
from scripted_kernel import ScriptedTool
from scripted_kernel.shell.state import IndexedArray, Var

BIG_STATE = """for ((i=0; i<300; i++)); do printf -v "var_$i" '%s' "$i"; done
big=(); for ((i=0; i<2000; i++)); do big[i]=$i; done
"""


def _copies(monkeypatch, script: str) -> tuple[int, str]:
    counts = [0]
    var_copy, array_copy = Var.copy, IndexedArray.copy

    def counting_var_copy(self, *args):
        counts[0] += 1
        return var_copy(self, *args)

    def counting_array_copy(self):
        counts[0] += 1
        return array_copy(self)

    monkeypatch.setattr(Var, "copy", counting_var_copy)
    monkeypatch.setattr(IndexedArray, "copy", counting_array_copy)
    result = ScriptedTool.builder("t").build().execute(script)
    return counts[0], result.stdout


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
