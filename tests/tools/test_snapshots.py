"""The e-commerce example's help() and system prompts, compared with the reviewed texts under
snapshots/. A change to the prompt layout shows up here as a diff; after reviewing it, rewrite
the snapshots with `UPDATE_SNAPSHOTS=1 python -m pytest tests/tools/test_snapshots.py`."""
import os
import runpy
from pathlib import Path

import pytest

from scripted_kernel import DiscoveryMode, ScriptingToolSet

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).parent / "snapshots"


@pytest.fixture(scope="module")
def ecommerce():
    return runpy.run_path(str(ROOT / "examples" / "ecommerce.py"), run_name="snapshot")["api"]


RENDERINGS = {
    "ecommerce_help.md": lambda api: api.help(),
    "ecommerce_system_prompt.md": lambda api: api.system_prompt(),
    "ecommerce_system_prompt_discovery.md":
        lambda api: ScriptingToolSet(api, DiscoveryMode.WITH_DISCOVERY).system_prompt(),
}


@pytest.mark.parametrize("snapshot", sorted(RENDERINGS))
def test_rendering_matches_snapshot(ecommerce, snapshot):
    text = RENDERINGS[snapshot](ecommerce)
    path = SNAPSHOTS / snapshot
    if os.environ.get("UPDATE_SNAPSHOTS"):
        path.write_text(text)
    assert text == path.read_text()


def test_prompt_of_the_example_stays_short(ecommerce):
    # The seed-layout prompt replaced a 1,846-character one; it must not grow past that again.
    assert len(ecommerce.system_prompt()) < 1846
