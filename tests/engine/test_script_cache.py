"""The script cache: bounded by text, and the code it holds kept out of the cyclic collector's
walks (gc.freeze) without freezing garbage or keeping what it drops."""
import gc
import sys
import weakref

import pytest

from scripted_kernel.shell.interpreter import ScriptCache


def big_script(tag: str) -> str:
    """A script over the cache's freezing size, different for each tag."""
    return f"# {tag}\n" + "\n".join(f"f{k}() {{ echo {tag}-{k}; }}" for k in range(120))


class Cycle:
    def __init__(self):
        self.me = self


def is_walked(obj) -> bool:
    """Whether the collector walks obj (frozen objects are not among gc.get_objects())."""
    return any(o is obj for o in gc.get_objects())


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_cached_code_is_frozen_and_freed_when_dropped(collector_on):
    cache = ScriptCache(max_total=16 * 1024)
    unit = cache.get(big_script("a"), 100).units[0]
    assert not is_walked(unit)
    dropped = weakref.ref(unit)
    del unit
    for tag in "bcdefgh":              # pushes "a" out of the cache
        cache.get(big_script(tag), 100)
    assert (big_script("a"), 100) not in cache.entries
    assert dropped() is None


def test_garbage_alive_before_compiling_is_collected_not_frozen(collector_on):
    cache = ScriptCache()
    cache.get(big_script("warm"), 100)            # the first freeze collects everything anyway
    garbage = Cycle()
    gc.collect()                                  # it is old now: young collections skip it
    gone = weakref.ref(garbage)
    del garbage
    cache.get(big_script("garbage"), 100)
    assert gone() is None


def test_cycles_frozen_while_alive_are_reclaimed_once_the_heap_grows(collector_on):
    cache = ScriptCache()
    cache.get(big_script("first"), 100)
    alive = Cycle()
    cache.get(big_script("second"), 100)          # freezes `alive`
    assert not is_walked(alive)
    gone = weakref.ref(alive)
    del alive
    gc.collect()
    assert gone() is not None                     # frozen garbage: no collection sees it
    ballast = [str(k) for k in range(int(sys.getallocatedblocks() * 0.3))]
    cache.get(big_script("third"), 100)           # the heap grew by a quarter: rebuilt
    assert gone() is None
    del ballast


def test_small_scripts_are_not_frozen(collector_on):
    unit = ScriptCache().get("echo small", 100).units[0]
    assert is_walked(unit)


def test_nothing_is_frozen_while_the_collector_is_off():
    was = gc.isenabled()
    gc.disable()
    try:
        unit = ScriptCache().get(big_script("off"), 100).units[0]
        assert is_walked(unit)
    finally:
        if was:
            gc.enable()


def test_entries_are_bounded_by_text_with_a_minimum_per_entry():
    cache = ScriptCache(max_total=8 * 1024, min_entry=1024)
    for k in range(50):
        cache.get(f"echo {k}", 100)
    assert len(cache.entries) == 8
    assert (f"echo 49", 100) in cache.entries and (f"echo 0", 100) not in cache.entries


def test_scripts_over_the_size_limit_are_compiled_but_not_kept():
    cache = ScriptCache(max_script=100)
    text = "echo " + "x" * 200
    assert cache.get(text, 100) is not cache.get(text, 100)
    assert not cache.entries


def test_freezing_is_off_when_its_size_is_above_the_cacheable_size(collector_on):
    cache = ScriptCache(max_script=32 * 1024, freeze_from=10 ** 9)
    unit = cache.get(big_script("host opted out"), 100).units[0]
    assert is_walked(unit)
