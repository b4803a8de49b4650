"""The compiled modules (shell/native.py): used only when they were built from the sources
beside them, and parsing and running every script exactly as the pure-Python modules do."""
import importlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from support import mutate, script_corpus
from scripted_kernel import shell
from scripted_kernel.shell import native

SHELL_DIR = Path(shell.__file__).parent
BUILT = (SHELL_DIR / native.COMPILED_DIR / native.MANIFEST).exists()
STALE = "shell/compiled/ was built from other sources: reinstall (pip install -e .) to rebuild it"

# Run once with the compiled modules and once with SCRIPTED_KERNEL_PURE=1: each text's tree (its
# dataclass repr) or its error, one JSON list on stdout.
PARSE_OUTCOME = """
import json, sys
from scripted_kernel.shell import COMPILED_FRONT_END
from scripted_kernel.base.errors import ShellSyntaxError
from scripted_kernel.shell.parser import parse
def outcome(text):
    try:
        return repr(parse(text))
    except ShellSyntaxError as e:
        return f"error {e.line}:{e.col} {e}"
    except Exception as e:
        return "exception " + type(e).__name__
"""
PARSE_EACH = PARSE_OUTCOME + """
print(json.dumps([COMPILED_FRONT_END, [outcome(text) for text in json.load(sys.stdin)]]))
"""

# The same for running: each script's (stdout, stderr, status, what stopped it), on a fresh
# BashTool (files in memory); a run cut by the clock is reported as such (its output depends on
# the machine's speed, not on the build).
EXECUTE_EACH = """
import json, sys
from scripted_kernel import BashTool, ExecutionLimits
from scripted_kernel.shell import COMPILED_FRONT_END
def outcome(text):
    tool = BashTool(limits=ExecutionLimits(timeout_seconds=20, max_commands=20000))
    r = tool.execute(text)
    return "timeout" if r.error == "timeout" else [r.stdout, r.stderr, r.exit_code, r.error]
print(json.dumps([COMPILED_FRONT_END, [outcome(text) for text in json.load(sys.stdin)]]))
"""

# tokens that open and close constructs, for mutations and deep nesting
TOKENS = ["$(", ")", "${", "}", "$((", "))", "((", "[[", "]]", "'", '"', "`", "\\", "|", "&&", ";;",
          "<<", "<<-", "EOF\n", "\n", " ", "=", "+=", "[", "]", "{ ", "; }", "case x in ", " esac",
          "if ", " then ", " fi", "for i in ", " do ", " done", "f() ", "@(", "#", "~", "$'"]


# Each text parsed twice: as it is, and with Lexer.recycle made a no-op.
PARSE_WITHOUT_RECYCLING = PARSE_OUTCOME + """
from scripted_kernel.shell.lexer import Lexer
texts = json.load(sys.stdin)
recycled = [outcome(text) for text in texts]
Lexer.recycle = lambda self, tok: None
print(json.dumps([COMPILED_FRONT_END, [recycled, [outcome(text) for text in texts]]]))
"""


def _write_build(shell_dir: Path, manifest: dict) -> Path:
    compiled = shell_dir / native.COMPILED_DIR
    compiled.mkdir()
    (compiled / native.MANIFEST).write_text(json.dumps(manifest))
    return compiled


@pytest.fixture
def sources(tmp_path, monkeypatch):
    """A shell directory holding sources of the compiled modules."""
    monkeypatch.delenv(native.PURE_ENV, raising=False)
    for name in native.COMPILED_MODULES:
        (tmp_path / f"{name}.py").write_text(f"# the {name}\n")
    return tmp_path


def test_a_build_of_these_sources_goes_first_on_the_package_path(sources):
    compiled = _write_build(sources, native.manifest_for(str(sources)))
    path = [str(sources)]
    assert native.compiled_dir_in_use(path) == str(compiled)
    assert path == [str(compiled), str(sources)]


@pytest.mark.parametrize("edit", [lambda text: "# edited\n", lambda text: text.replace("the", "thE")])
def test_a_source_edited_since_the_build_is_used_as_it_is(sources, edit):
    """Edited to another length, or to the same length (the length and CRC-32 of each source
    are what the manifest records)."""
    _write_build(sources, native.manifest_for(str(sources)))
    source = sources / f"{native.COMPILED_MODULES[-1]}.py"
    source.write_text(edit(source.read_text()))
    path = [str(sources)]
    assert native.compiled_dir_in_use(path) is None and path == [str(sources)]


def test_a_build_for_another_interpreter_is_not_used(sources):
    _write_build(sources, {**native.manifest_for(str(sources)), "python": "cpython-00"})
    assert native.compiled_dir_in_use([str(sources)]) is None


@pytest.mark.parametrize("manifest", [None, "{not json"])
def test_no_build_or_an_unreadable_manifest_means_pure_python(sources, manifest):
    if manifest is not None:
        (sources / native.COMPILED_DIR).mkdir()
        (sources / native.COMPILED_DIR / native.MANIFEST).write_text(manifest)
    assert native.compiled_dir_in_use([str(sources)]) is None


def test_the_environment_can_ask_for_pure_python(sources, monkeypatch):
    _write_build(sources, native.manifest_for(str(sources)))
    monkeypatch.setenv(native.PURE_ENV, "1")
    assert native.compiled_dir_in_use([str(sources)]) is None


@pytest.mark.skipif(not BUILT, reason="the front end was not compiled (no C compiler at install)")
def test_an_installed_build_is_the_one_in_use():
    if os.environ.get(native.PURE_ENV):
        pytest.skip(f"{native.PURE_ENV} is set")
    assert shell.COMPILED_FRONT_END, STALE
    for name in native.COMPILED_MODULES:
        module = importlib.import_module(f"scripted_kernel.shell.{name}")
        # (a module first imported by another compiled one is named below the directory)
        assert SHELL_DIR / native.COMPILED_DIR in Path(module.__file__).parents, module.__file__


def _each(program: str, texts: list[str], pure: bool) -> tuple[bool, list]:
    env = {**os.environ, native.PURE_ENV: "1" if pure else ""}
    out = subprocess.run([sys.executable, "-c", program], input=json.dumps(texts), env=env,
                         capture_output=True, text=True, check=True).stdout
    compiled, outcomes = json.loads(out)
    return compiled, outcomes


def test_recycling_tokens_never_changes_a_parse():
    """The parser hands the lexer back the tokens it is done with (Lexer.recycle), and the
    next token is made in one of them: a token recycled while something still held it would
    change a tree. Every tree and every error must be what parsing without recycling gives,
    over the corpus and its mutations (the pure parser, whose Lexer can be patched)."""
    corpus = script_corpus()
    rng = random.Random(11)
    texts = corpus + [mutate(rng, text, TOKENS) for text in corpus for _ in range(2)]
    compiled, (recycled, fresh) = _each(PARSE_WITHOUT_RECYCLING, texts, pure=True)
    assert not compiled
    assert sum(o.startswith("CommandList") for o in fresh) > 1000
    differences = [(text, r, f) for text, r, f in zip(texts, recycled, fresh) if r != f]
    assert not differences, differences[:3]


@pytest.mark.skipif(not BUILT, reason="the front end was not compiled (no C compiler at install)")
def test_the_compiled_front_end_parses_as_the_pure_one_does():
    corpus = script_corpus()
    rng = random.Random(7)
    texts = corpus + [mutate(rng, text, TOKENS) for text in corpus for _ in range(2)]
    texts += [token * 300 + "x" for token in TOKENS if token.strip()]      # nesting beyond the limit
    compiled, got = _each(PARSE_EACH, texts, pure=False)
    pure, want = _each(PARSE_EACH, texts, pure=True)
    assert compiled, STALE
    assert not pure
    assert sum(o.startswith("error") for o in want) > 100 and sum(o.startswith("CommandList") for o in want) > 1000
    differences = [(text, g, w) for text, g, w in zip(texts, got, want) if g != w]
    assert not differences, differences[:3]


@pytest.mark.skipif(not BUILT, reason="the front end was not compiled (no C compiler at install)")
def test_the_compiled_compile_stage_runs_scripts_as_the_pure_one_does():
    """The compiled compile stage (compile.py, expand.py) against the pure one, on the scripts
    the differential tests compare with bash, and mutations of them (error paths)."""
    from test_differential import CASES
    from test_shell_features import FILE_CASES, LOGIC_CASES, STDERR_CASES
    timed = ("sleep", "timeout", "read -t", "SECONDS", "EPOCH", "date")   # what the clock decides
    corpus = sorted(text for text in {*CASES.values(), *FILE_CASES.values(), *LOGIC_CASES.values(),
                                      *STDERR_CASES.values()} if not any(word in text for word in timed))
    rng = random.Random(11)
    texts = corpus + [mutate(rng, text, TOKENS) for text in corpus for _ in range(3)]
    compiled, got = _each(EXECUTE_EACH, texts, pure=False)
    pure, want = _each(EXECUTE_EACH, texts, pure=True)
    assert compiled, STALE
    assert not pure
    compared = [(text, g, w) for text, g, w in zip(texts, got, want) if "timeout" not in (g, w)]
    assert len(compared) > 0.95 * len(texts)
    assert sum(w[2] == 0 for _, _, w in compared) > len(corpus) // 2
    assert sum(w[2] != 0 for _, _, w in compared) > len(corpus) // 4
    differences = [(text, g, w) for text, g, w in compared if g != w]
    assert not differences, differences[:3]


def _except_names_of_two_types(source: str):
    """(function, name, types) for each name that two `except ... as name` clauses of one
    function bind to different exception types."""
    import ast
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        bound: dict = {}
        stack = list(fn.body)
        while stack:            # this function's own statements: nested ones are visited on their own
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(node, ast.ExceptHandler) and node.name:
                bound.setdefault(node.name, set()).add(ast.unparse(node.type) if node.type else "")
            stack.extend(ast.iter_child_nodes(node))
        yield from ((fn.name, name, types) for name, types in bound.items() if len(types) > 1)


def test_no_compiled_function_binds_one_name_to_two_exception_types():
    """Compiled, a local variable holds one type: `except A as e` and then `except B as e` in
    one function (a closure included, as the build types their bodies) makes the second a
    TypeError, which a script sees as an internal error."""
    found = [(module, *where) for module in native.COMPILED_MODULES
             for where in _except_names_of_two_types((SHELL_DIR / f"{module}.py").read_text())]
    assert found == []
    assert list(_except_names_of_two_types(
        "def f():\n    try: g()\n    except KeyError as e: h(e)\n    except OSError as e: h(e)\n")) \
        == [("f", "e", {"KeyError", "OSError"})]
