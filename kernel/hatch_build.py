"""Hatch build hook: compile the front end (lexer, parser, compile stage) with mypyc where a C
compiler is present.

What is compiled, where it goes and how it is chosen at import is in
`scripted_kernel/shell/native.py`. Without a compiler, with `SCRIPTED_KERNEL_PURE=1`, or if
the compile fails, the build goes on and the pure-Python modules are used.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

KERNEL_DIR = os.path.dirname(os.path.abspath(__file__))
SHELL_DIR = os.path.join(KERNEL_DIR, "scripted_kernel", "shell")

# Run in a child process of the build environment, where the hook's dependencies are installed.
_COMPILE = """
import sys
from mypyc.build import mypycify
from setuptools import setup
work_dir, group_name, *mypy_args = sys.argv[1:]
extensions = mypycify(mypy_args, group_name=group_name, target_dir=work_dir + "/c")
setup(name="scripted-kernel-compiled", ext_modules=extensions, script_args=[
    "build_ext", "--build-lib", work_dir + "/lib", "--build-temp", work_dir + "/temp"])
"""
# No config file: mypy would otherwise find pyproject.toml's [tool.mypy] above kernel/ (the
# lint gate, stricter), fail the compile on what only the gate need report, and leave the
# pure modules in use. The bodies of functions without annotations (the closures compile.py
# makes) are typed as the gate types them: otherwise every value in them is an object, and
# every call a method makes on a native class is a generic one, looked up by name.
_MYPY_ARGS = ("--config-file=", "--ignore-missing-imports", "--follow-imports=silent", "--check-untyped-defs")


def _load_native():
    """shell/native.py, by its path: importing the package would need its dependencies."""
    spec = importlib.util.spec_from_file_location("_scripted_kernel_native",
                                                  os.path.join(SHELL_DIR, "native.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NATIVE = _load_native()
TARGET_DIR = os.path.join(SHELL_DIR, NATIVE.COMPILED_DIR)


def _compiler_present() -> bool:
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    headers = os.path.join(sysconfig.get_paths()["include"], "Python.h")
    return shutil.which(compiler) is not None and os.path.exists(headers)


def _wanted() -> bool:
    return not os.environ.get(NATIVE.PURE_ENV) and _compiler_present()


def build_compiled_front_end() -> None:
    """Compile COMPILED_MODULES into TARGET_DIR. The manifest is written last: a build cut
    short leaves none, and the pure modules are used."""
    shutil.rmtree(TARGET_DIR, ignore_errors=True)
    manifest = NATIVE.manifest_for(SHELL_DIR)      # of the sources about to be compiled
    sources = [f"scripted_kernel/shell/{name}.py" for name in NATIVE.COMPILED_MODULES]
    with tempfile.TemporaryDirectory() as work_dir:
        subprocess.run([sys.executable, "-c", _COMPILE, work_dir, NATIVE.GROUP_NAME,
                        f"--cache-dir={work_dir}/mypy", *_MYPY_ARGS, *sources],
                       cwd=KERNEL_DIR, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
        built = os.path.join(work_dir, "lib", "scripted_kernel", "shell")
        os.makedirs(TARGET_DIR)
        for name in os.listdir(built):
            shutil.copy2(os.path.join(built, name), TARGET_DIR)
    with open(os.path.join(TARGET_DIR, NATIVE.MANIFEST), "w") as f:
        json.dump(manifest, f)


class CompiledFrontEndHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def dependencies(self) -> list[str]:
        return ["mypy>=1.10", "setuptools>=64"] if _wanted() else []

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        if not _wanted():           # (and no build left from an earlier install is used)
            shutil.rmtree(TARGET_DIR, ignore_errors=True)
            return
        try:
            build_compiled_front_end()
        except (subprocess.CalledProcessError, OSError) as e:
            # the compiler's last line says why, where there is one
            output = getattr(e, "stderr", None) or b""
            last = output.decode(errors="replace").strip().splitlines()[-1:]
            self.app.display_warning("the compiled front end was not built "
                                     f"({' '.join(last) or e}); the pure-Python ones are used")
            return
        if version != "editable":       # (an editable install finds them in the source tree)
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
            build_data["force_include"][TARGET_DIR] = "scripted_kernel/shell/" + NATIVE.COMPILED_DIR
