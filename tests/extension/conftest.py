"""The IPython shell the extension's tests share (IPython's test shell is a singleton)."""
import pytest

IPython = pytest.importorskip("IPython")
from IPython.testing.globalipapp import start_ipython  # noqa: E402

from scripted_kernel.tools.definitions import REGISTRY  # noqa: E402

_SHELL = []


@pytest.fixture
def ip():
    """An InteractiveShell with the extension loaded and one @tool, `double`, registered."""
    if not _SHELL:
        _SHELL.append(start_ipython() or IPython.get_ipython())    # started once, by any module
    shell = _SHELL[0]
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
