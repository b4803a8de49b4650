"""Source's line numbers: counted forward from the last position asked for, or searched in an
index of line starts made for a position before it. Either way a position's line and column
are the text's, whatever order positions are asked in and from however many threads."""
import random
import threading

from scripted_kernel.shell.lexer import Source

TEXT = "a\n\nbb ccc\n" + "".join(f"line {k} {'x' * (k % 7)}\n" for k in range(200)) + "last"


def expected(pos: int, base_line: int = 0):
    line_start = TEXT.rfind("\n", 0, pos) + 1
    return TEXT.count("\n", 0, pos) + 1 + base_line, pos - line_start + 1


def test_positions_in_any_order_get_the_lines_and_columns_of_the_text():
    rng = random.Random(3)
    forward = list(range(0, len(TEXT) + 1, 3))
    for order in (forward, forward[::-1], rng.sample(forward, len(forward))):
        source = Source(TEXT, base_line=4)
        for pos in order:
            assert source.line_col(pos) == expected(pos, 4), pos
            assert source.line_of(pos) == expected(pos, 4)[0]
            line_start = pos - expected(pos)[1] + 1
            end = TEXT.find("\n", line_start)
            assert source.line_text(pos) == TEXT[line_start:end if end >= 0 else len(TEXT)]


def test_threads_sharing_a_source_each_get_the_right_lines():
    source = Source(TEXT)
    wrong: list = []

    def ask(seed: int):
        rng = random.Random(seed)
        for _ in range(3000):
            pos = rng.randrange(len(TEXT) + 1) if rng.random() < 0.2 else min(len(TEXT), rng.randrange(40) * 25)
            if source.line_of(pos) != expected(pos)[0]:
                wrong.append(pos)
    threads = [threading.Thread(target=ask, args=(seed,)) for seed in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong
