"""The package's names are imported when first used (base/exports.py): a process that uses
ScriptedTool loads neither BashTool's files and snapshots, the journal of pausable runs, difflib,
the URL policy (ipaddress, urllib) nor OpenSSL's hashes, and every name the package exports is
still there, by attribute, by `from ... import` and by `*`."""
import json
import subprocess
import sys

import pytest

import scripted_kernel
import scripted_kernel.tools


def loaded_after(code: str) -> dict:
    """In a fresh interpreter: which of some modules `code` loaded, and what it printed."""
    probe = code + ("\nimport sys, json\nprint(json.dumps({m: m in sys.modules for m in ("
                    "'scripted_kernel.tools.scripted_tool', 'scripted_kernel.tools.bash_tool', "
                    "'scripted_kernel.tools.snapshot', 'scripted_kernel.tools.toolset', "
                    "'scripted_kernel.tools.journal', 'scripted_kernel.commands.urlpolicy', 'hashlib', 'hmac', "
                    "'secrets', 'difflib')}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_importing_the_package_loads_no_tool():
    loaded = loaded_after("import scripted_kernel")
    assert not any(loaded.values()), loaded


def test_a_scripted_tool_loads_neither_bash_tool_nor_snapshots_nor_hashes():
    loaded = loaded_after("from scripted_kernel import ScriptedTool\n"
                          "assert ScriptedTool.builder('t').build().execute('echo hi').stdout == 'hi\\n'")
    assert loaded.pop("scripted_kernel.tools.scripted_tool")
    assert not any(loaded.values()), loaded


def test_a_snapshot_loads_what_it_needs_when_taken():
    loaded = loaded_after("from scripted_kernel import BashTool\nt = BashTool()\nt.execute('echo x > f')\n"
                          "BashTool.builder().from_snapshot(t.snapshot()).build()")
    assert loaded["scripted_kernel.tools.snapshot"] and loaded["hashlib"]


def test_a_network_allowlist_loads_the_url_policy_when_given():
    loaded = loaded_after("from scripted_kernel import ScriptedTool\n"
                          "t = ScriptedTool.builder('t').network(['https://example.com']).build()\n"
                          "assert t.plan('curl -s https://example.com/a')[0].params['url'] == 'https://example.com/a'")
    assert loaded["scripted_kernel.commands.urlpolicy"]


@pytest.mark.parametrize("package", [scripted_kernel, scripted_kernel.tools])
def test_every_exported_name_is_there(package):
    for name in package.__all__:
        assert getattr(package, name) is not None
        assert name in dir(package)
    star: dict = {}
    exec(f"from {package.__name__} import *", star)
    assert set(package.__all__) <= set(star)


def test_a_name_the_package_does_not_export_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'Nothing'"):
        assert scripted_kernel.Nothing is None      # (never reached)
    with pytest.raises(ImportError):
        exec("from scripted_kernel import Nothing", {})


def test_the_two_packages_export_the_same_objects():
    for name in set(scripted_kernel.__all__) & set(scripted_kernel.tools.__all__):
        assert getattr(scripted_kernel, name) is getattr(scripted_kernel.tools, name)
