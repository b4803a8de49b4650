"""The compiled front end (shell/native.py): used only when it was built from the sources beside
it, and parsing every script exactly as the pure-Python lexer and parser do."""
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import mutate, script_corpus
from scripted_kernel import shell
from scripted_kernel.shell import lexer, native, parser

SHELL_DIR = Path(shell.__file__).parent
BUILT = (SHELL_DIR / native.COMPILED_DIR / native.MANIFEST).exists()
STALE = "shell/compiled/ was built from other sources: reinstall (pip install -e .) to rebuild it"

# Run once with the compiled modules and once with SCRIPTED_KERNEL_PURE=1: each text's tree (its
# dataclass repr) or its error, one JSON list on stdout.
PARSE_EACH = """
import json, sys
from scripted_kernel.shell import COMPILED_FRONT_END
from scripted_kernel.shell.errors import ShellSyntaxError
from scripted_kernel.shell.parser import parse
def outcome(text):
    try:
        return repr(parse(text))
    except ShellSyntaxError as e:
        return f"error {e.line}:{e.col} {e}"
    except Exception as e:
        return "exception " + type(e).__name__
print(json.dumps([COMPILED_FRONT_END, [outcome(text) for text in json.load(sys.stdin)]]))
"""

# tokens that open and close constructs, for mutations and deep nesting
TOKENS = ["$(", ")", "${", "}", "$((", "))", "((", "[[", "]]", "'", '"', "`", "\\", "|", "&&", ";;",
          "<<", "<<-", "EOF\n", "\n", " ", "=", "+=", "[", "]", "{ ", "; }", "case x in ", " esac",
          "if ", " then ", " fi", "for i in ", " do ", " done", "f() ", "@(", "#", "~", "$'"]


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


def test_a_source_edited_since_the_build_is_used_as_it_is(sources):
    _write_build(sources, native.manifest_for(str(sources)))
    (sources / f"{native.COMPILED_MODULES[-1]}.py").write_text("# edited\n")
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
    for module in (lexer, parser):
        assert Path(module.__file__).parent == SHELL_DIR / native.COMPILED_DIR, module.__file__


def _parse_each(texts: list[str], pure: bool) -> tuple[bool, list[str]]:
    env = {**os.environ, native.PURE_ENV: "1" if pure else ""}
    out = subprocess.run([sys.executable, "-c", PARSE_EACH], input=json.dumps(texts), env=env,
                         capture_output=True, text=True, check=True).stdout
    compiled, outcomes = json.loads(out)
    return compiled, outcomes


@pytest.mark.skipif(not BUILT, reason="the front end was not compiled (no C compiler at install)")
def test_the_compiled_front_end_parses_as_the_pure_one_does():
    corpus = script_corpus()
    rng = random.Random(7)
    texts = corpus + [mutate(rng, text, TOKENS) for text in corpus for _ in range(2)]
    texts += [token * 300 + "x" for token in TOKENS if token.strip()]      # nesting beyond the limit
    compiled, got = _parse_each(texts, pure=False)
    pure, want = _parse_each(texts, pure=True)
    assert compiled, STALE
    assert not pure
    assert sum(o.startswith("error") for o in want) > 100 and sum(o.startswith("CommandList") for o in want) > 1000
    differences = [(text, g, w) for text, g, w in zip(texts, got, want) if g != w]
    assert not differences, differences[:3]
