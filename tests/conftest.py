"""The fixtures the tests share; what they share besides fixtures is in support.py."""
import pytest

from scripted_kernel import ScriptedTool
from support import RedisServer

_IPYTHON_SHELL: list = []


@pytest.fixture(scope="session")
def tool():
    return ScriptedTool.builder("test").build()


@pytest.fixture
def run(tool):
    """run(script, stdin='') -> ToolResponse"""
    def _run(script, stdin=""):
        return tool.execute(script, stdin=stdin)
    return _run


@pytest.fixture
def ip():
    """An InteractiveShell with the extension loaded and one @tool, `double`, registered: the
    extension's tests share it (IPython's test shell is a singleton, started once by any module)."""
    IPython = pytest.importorskip("IPython")
    from IPython.testing.globalipapp import start_ipython

    from scripted_kernel.tools.definitions import REGISTRY
    if not _IPYTHON_SHELL:
        _IPYTHON_SHELL.append(start_ipython() or IPython.get_ipython())
    shell = _IPYTHON_SHELL[0]
    shell.run_line_magic("load_ext", "scripted_magic")
    REGISTRY.clear()
    shell.run_cell('''
@tool
def double(x: int) -> int:
    """Double a number."""
    return 2 * x
''')
    yield shell
    REGISTRY.clear()


@pytest.fixture(scope="session")
def redis_url():
    """The URL of a redis-server shared by the tests of a run."""
    server = RedisServer()
    yield server.url
    server.stop()


@pytest.fixture(params=["file", "redis"])
def store_url(request, tmp_path):
    """A session store's URL: a directory, or a redis-server of the test's own."""
    if request.param == "redis":
        server = RedisServer()
        yield server.url
        server.stop()
        return
    yield f"file://{tmp_path}/sessions"
