"""The optional compiled front end: the lexer, the parser and the compile stage (syntax tree to
closures: compile.py, expand.py for words, braces.py for brace expansion) built into C
extensions by mypyc.

The pure-Python modules are the reference and always work. When the project is installed on a
machine with a C compiler, its build hook (`kernel/hatch_build.py`) compiles the modules named
in COMPILED_MODULES from the same source into `shell/compiled/`, with a manifest of the
digests of the sources it compiled. At import, `shell/__init__.py` puts that directory first on
the package's search path, so those modules load from it, but only if the manifest matches
the sources beside it: a source edited since the build is used as it is (reinstall to compile
it again).

Compiled modules are native classes and functions: their methods cannot be replaced at run
time, a closure they make takes no attribute and no weak reference, and the types their
annotations name are checked when values cross them (an annotation that is wrong is an error
there, not a comment). The test that runs scripts on both builds (tests/engine/test_native.py)
is where a wrong one shows. `SCRIPTED_KERNEL_PURE=1` keeps the pure-Python modules.

This module imports nothing from the package: the build hook loads it by its path, in a build
environment where the package's dependencies are not installed.
"""
from __future__ import annotations

import json
import os
import sys
import zlib

COMPILED_MODULES = ("nodes", "lexer", "parser", "compile", "expand", "redirects", "conditions", "braces", "xtrace")
COMPILED_DIR = "compiled"
MANIFEST = "manifest.json"
PURE_ENV = "SCRIPTED_KERNEL_PURE"
# the shared library mypyc builds beside the modules (it holds their common runtime code)
GROUP_NAME = "scripted_kernel.shell.compiled_group"


def manifest_for(shell_dir: str) -> dict:
    """What a build of the sources in shell_dir for this interpreter records: each source's
    length and CRC-32, which tell an edited source from the one compiled (a check made at every
    import, where hashlib would load OpenSSL; not a defence: whoever can edit the sources can
    edit the build too)."""
    digests = {}
    for name in COMPILED_MODULES:
        with open(os.path.join(shell_dir, name + ".py"), "rb") as f:
            source = f.read()
        digests[name] = f"{len(source)}:{zlib.crc32(source):08x}"
    return {"python": sys.implementation.cache_tag, "sources": digests}


def compiled_dir_in_use(package_path: list) -> str | None:
    """The directory of a compiled build that matches the sources in package_path[0], put at
    the front of package_path; None (and package_path unchanged) if there is none, it is
    stale, or the pure-Python modules were asked for."""
    if os.environ.get(PURE_ENV):
        return None
    shell_dir = package_path[0]
    compiled = os.path.join(shell_dir, COMPILED_DIR)
    try:
        with open(os.path.join(compiled, MANIFEST)) as f:
            built = json.load(f)
        if built != manifest_for(shell_dir):
            return None
    except (OSError, ValueError):
        return None
    package_path.insert(0, compiled)
    return compiled
