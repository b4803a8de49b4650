"""The script cache: a script kept from the second time it is seen, bounded by text, and big
compiled scripts kept out of the cyclic collector's walks (gc.freeze) without freezing garbage
or keeping what it drops."""
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


def kept(cache: ScriptCache, text: str):
    """The compiled script, after the cache has seen the text twice (and so keeps it)."""
    cache.get(text, 100)
    return cache.get(text, 100)


def test_a_script_is_kept_from_the_second_time_it_is_seen():
    cache = ScriptCache()
    first = cache.get("echo once", 100)
    assert not cache.entries
    second = cache.get("echo once", 100)
    assert second is not first
    assert list(cache.entries) == [("echo once", 100)]
    assert cache.get("echo once", 100) is second


def test_the_scripts_seen_once_are_remembered_up_to_a_bound():
    cache = ScriptCache(max_seen=2)
    for text in ("echo a", "echo b", "echo c"):
        cache.get(text, 100)
    cache.get("echo a", 100)              # forgotten: this is a first sight again
    cache.get("echo c", 100)              # remembered: kept now
    assert list(cache.entries) == [("echo c", 100)]


def test_a_big_script_seen_once_is_frozen_while_it_runs_and_freed_after(collector_on):
    cache = ScriptCache()
    unit = cache.get(big_script("once"), 100).units[0]
    assert not is_walked(unit)
    assert not cache.entries
    # nothing but this test holds it (compiled closures take no weak reference): the last
    # reference gone, reference counting frees it, frozen or not
    assert sys.getrefcount(unit) == 2


def test_cached_code_is_frozen_and_freed_when_dropped(collector_on):
    cache = ScriptCache(max_total=16 * 1024)
    unit = kept(cache, big_script("a")).units[0]
    assert not is_walked(unit)
    for tag in "bcdefgh":              # pushes "a" out of the cache
        kept(cache, big_script(tag))
    assert (big_script("a"), 100) not in cache.entries
    assert sys.getrefcount(unit) == 2  # (as above) held by this test alone


def test_garbage_alive_before_compiling_is_collected_not_frozen(collector_on):
    cache = ScriptCache()
    cache.get(big_script("warm"), 100)            # the first freeze collects everything anyway
    garbage = Cycle()
    gc.collect()                                  # it is old now: young collections skip it
    gone = weakref.ref(garbage)
    del garbage
    cache.get(big_script("garbage"), 100)
    assert gone() is None


def test_young_garbage_is_collected_not_frozen_when_nothing_is_old(collector_on):
    cache = ScriptCache()
    cache.get(big_script("warm"), 100)            # freezes all: the oldest generation is empty
    garbage = Cycle()
    gc.collect(0)                                 # in the middle generation now
    assert not gc.get_objects(2)
    gone = weakref.ref(garbage)
    del garbage
    cache.get(big_script("young garbage"), 100)
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
        kept(cache, f"echo {k}")
    assert len(cache.entries) == 8
    assert ("echo 49", 100) in cache.entries and ("echo 0", 100) not in cache.entries


def test_scripts_over_the_size_limit_are_compiled_but_not_kept():
    cache = ScriptCache(max_script=100)
    text = "echo " + "x" * 200
    assert kept(cache, text) is not cache.get(text, 100)
    assert not cache.entries


def test_a_host_turns_freezing_off_with_an_infinite_size(collector_on):
    cache = ScriptCache(freeze_from=float("inf"))
    assert is_walked(cache.get(big_script("host opted out"), 100).units[0])
    assert is_walked(kept(cache, big_script("host opted out, kept")).units[0])
