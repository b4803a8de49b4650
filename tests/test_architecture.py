"""The import contract: each layer imports only the layers below it, commands see the
interpreter only through the command context, and the interpreter core has no import cycle
(the few back-edges that remain, as imports inside functions, are listed here with a reason).

Layers, lowest first: fs ← shell ← commands ← tools ← compat, integrations ← extension ←
kernel.py, __main__.py. Read from the source with `ast`, so it also sees imports inside
functions."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"scripted_kernel": ROOT / "kernel" / "scripted_kernel",
            "scripted_magic": ROOT / "extension" / "scripted_magic"}

# The libraries every layer may use (scripted_kernel/base): the budget and its errors, regular
# expressions and glob patterns. They import nothing but each other (checked below).
BASE = ("scripted_kernel.base", "scripted_kernel.base.errors", "scripted_kernel.base.limits",
        "scripted_kernel.base.regexes", "scripted_kernel.base.patterns", "scripted_kernel.base.extglob")

LAYERS = [  # (module-name prefix, layer): the longest matching prefix decides
    ("scripted_kernel.base", -1),
    ("scripted_kernel.fs", 0),
    ("scripted_kernel.shell", 1),
    ("scripted_kernel.commands", 2),
    ("scripted_kernel.tools", 3),
    ("scripted_kernel", 3),                 # the package's public API (__init__) is the tool layer's
    ("scripted_kernel.compat", 4),
    ("scripted_kernel.integrations", 4),
    ("scripted_magic", 5),
    ("scripted_kernel.kernel", 6),
    ("scripted_kernel.__main__", 6),
]

# What commands may use of the shell: the command context (and the base libraries, below it).
COMMAND_MAY_IMPORT = {"scripted_kernel.shell.context"}
# What everything else above the shell may use of it: its front door and the command context.
ABOVE_MAY_IMPORT = {"scripted_kernel.shell.api", "scripted_kernel.shell.context"}

# Back-edges inside the interpreter core, each an import inside a function: (importer, imported)
# -> why it stays.
JUSTIFIED_BACK_EDGES: dict[tuple[str, str], str] = {
    ("scripted_kernel.tools.definitions", "scripted_kernel.tools.executables"):
        "ToolDef.from_executable is the seed's API on the class; executables build ToolDefs, and "
        "running a program to ask for its definition has no place among plain data classes",
}


def modules() -> dict[str, Path]:
    found = {}
    for package, directory in PACKAGES.items():
        for path in directory.rglob("*.py"):
            if "compiled" in path.parts:
                continue
            parts = list(path.relative_to(directory).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package] + parts)] = path
    return found


MODULES = modules()


def imports_of(name: str) -> list[tuple[str, bool]]:
    """(imported module, at module level?) for each import of the project's own modules."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    top_level = {id(node) for node in tree.body}
    top_level |= {id(n) for node in tree.body if isinstance(node, ast.If) for n in node.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            submodules = [f"{base}.{alias.name}" for alias in node.names
                          if f"{base}.{alias.name}" in MODULES]
            # `from package import module` imports the module (its package is only its home)
            targets = submodules if len(submodules) == len(node.names) else [base] + submodules
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            continue
        for target in targets:
            if target in MODULES and target != name:
                found.append((target, id(node) in top_level))
    return found


def layer(name: str) -> int:
    best = max((prefix for prefix, _ in LAYERS if name == prefix or name.startswith(prefix + ".")),
               key=len)
    return dict(LAYERS)[best]


def upward_imports(graph: dict) -> list[str]:
    return [f"{a} imports {b}" for a, edges in graph.items() for b, _ in edges
            if layer(b) > layer(a) and not (b == "scripted_kernel" and a.startswith("scripted_kernel.tools"))]


GRAPH = {name: imports_of(name) for name in MODULES}


def test_no_layer_imports_a_layer_above_it():
    assert upward_imports(GRAPH) == []


def test_the_base_libraries_import_only_each_other():
    for name in BASE:
        assert {b for b, _ in GRAPH[name]} <= set(BASE), name


def test_the_contract_fails_on_an_upward_import():
    graph = dict(GRAPH)
    graph["scripted_kernel.base.limits"] = [("scripted_kernel.tools.scripted_tool", False)]
    assert upward_imports(graph) == ["scripted_kernel.base.limits imports scripted_kernel.tools.scripted_tool"]


def test_commands_use_the_shell_only_through_the_context():
    for name, edges in GRAPH.items():
        if name.startswith("scripted_kernel.commands"):
            shell = {b for b, _ in edges if b.startswith("scripted_kernel.shell")}
            assert shell <= COMMAND_MAY_IMPORT, (name, shell - COMMAND_MAY_IMPORT)
            assert "Shell" not in MODULES[name].read_text(encoding="utf-8"), name


def through_the_front_door(graph: dict) -> list[str]:
    """Imports of shell internals from above the shell (not commands: see the test above)."""
    return [f"{a} imports {b}" for a, edges in graph.items() for b, _ in edges
            if layer(a) > layer("scripted_kernel.shell") and not a.startswith("scripted_kernel.commands")
            and b.startswith("scripted_kernel.shell") and b not in ABOVE_MAY_IMPORT]


def test_above_the_shell_everything_uses_its_front_door():
    assert through_the_front_door(GRAPH) == []


def test_the_front_door_rule_fails_on_a_shell_internal():
    graph = dict(GRAPH)
    graph["scripted_kernel.tools.snapshot"] = [("scripted_kernel.shell.runtime", True)]
    assert through_the_front_door(graph) == ["scripted_kernel.tools.snapshot imports scripted_kernel.shell.runtime"]


def test_nothing_above_the_shell_sets_a_shell_attribute():
    # the tool layer, the notebook and the kernel once set sh.fs, sh.hostname, sh.globals[...]
    # through hooks that handed them the Shell; now they describe the shell with a ShellConfig
    for name, path in MODULES.items():
        if layer(name) > layer("scripted_kernel.shell") and not name.startswith("scripted_kernel.commands"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
                for target in targets:
                    base = target.value if isinstance(target, (ast.Attribute, ast.Subscript)) else None
                    while isinstance(base, (ast.Attribute, ast.Subscript)):
                        base = base.value
                    assert not (isinstance(base, ast.Name) and base.id in ("sh", "shell")), (name, node.lineno)


def cycles(graph: dict, within: tuple) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    nodes = [n for n in graph if n.startswith(within)]
    index, low, stack, on_stack, result = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w, _ in graph[v]:
            if not w.startswith(within) or (v, w) in JUSTIFIED_BACK_EDGES:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))
    for v in nodes:
        if v not in index:
            visit(v)
    return result


@pytest.mark.parametrize("package", ["scripted_kernel.shell", "scripted_kernel.commands",
                                     "scripted_kernel.fs", "scripted_kernel.tools"])
def test_no_import_cycles(package):
    assert cycles(GRAPH, (package,)) == []


def test_the_contract_fails_on_a_new_cycle():
    graph = {"p.a": [("p.b", True)], "p.b": [("p.a", False)]}
    assert cycles(graph, ("p",)) == [["p.a", "p.b"]]


def test_every_justified_back_edge_still_exists():
    for importer, imported in JUSTIFIED_BACK_EDGES:
        assert (imported, False) in GRAPH[importer], (importer, imported)


# What importing the package may import of commands/: the table and its options parser, the
# network policy the tools hold, and python3's names (its availability is a spec lookup).
COMMAND_SUPPORT_AT_IMPORT = {"scripted_kernel.commands", "scripted_kernel.commands.registry",
                             "scripted_kernel.commands._options", "scripted_kernel.commands.python3",
                             "scripted_kernel.commands.urlpolicy"}


def test_importing_the_package_imports_no_command_module():
    import subprocess
    import sys
    program = ("import sys, scripted_kernel\n"
               "print('\\n'.join(m for m in sys.modules if m.startswith('scripted_kernel.commands')))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert set(done.stdout.split()) - COMMAND_SUPPORT_AT_IMPORT == set()


# Libraries a script's first run does not need: each is imported where it is first used (a tool
# with a schema to validate, an async callback, a user's regular expression, YAML, MCP ...).
IMPORTED_WHERE_USED = {"asyncio", "regex", "docstring_parser", "jsonschema", "logging", "yaml", "sqlite3",
                       "h11", "mcp", "uuid", "shlex", "ipykernel", "IPython"}


def test_a_first_run_imports_no_library_it_does_not_use():
    """Cold start: a process that imports the package, builds a tool and runs `echo hi`
    imports none of IMPORTED_WHERE_USED (beyond what the interpreter's start-up did)."""
    import subprocess
    import sys
    program = ("import sys\nbefore = set(sys.modules)\n"
               "from scripted_kernel import ScriptedTool\n"
               "assert ScriptedTool.builder('t').build().execute('echo hi').stdout == 'hi\\n'\n"
               "print('\\n'.join(sorted(set(sys.modules) - before)))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert {m.split(".")[0] for m in done.stdout.split()} & IMPORTED_WHERE_USED == set()
