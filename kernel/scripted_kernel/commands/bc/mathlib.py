"""The functions of `bc -l`: s (sine), c (cosine), a (arctangent), l (natural logarithm),
e (exponential) and j (Bessel), computed as GNU bc's library computes them: the same series
and range reductions, each step truncated at the scale bc would be working at, so that every
digit printed is the digit bc prints.

Each function takes the interpreter (for its `scale` and clock) and Num arguments."""
from __future__ import annotations

from . import numbers as N
from .numbers import Num

# pi/4 and atan(1/5), true to 70 digits: bc answers a(1) and a(.2) from constants up to scale 60
PI_4 = Num(7853981633974483096156608458198757210492923498437764552437361480769541, 70)
ATAN_FIFTH = Num(1973955598498807583700497651947902934475851037878521015176889402410339, 70)
CONSTANT_SCALE = 60

ZERO, ONE, TWO = Num(0), Num(1), Num(2)
FIFTH = Num(2, 1)


def _int(value: int) -> Num:
    return Num(value, 0)


def _series_guard(bc, i: int):
    bc.check_stop()         # each term may be long: look at the clock before every one


def exp(bc, x: Num) -> Num:
    negative = x.n < 0
    x = Num(abs(x.n), x.scale)
    z = bc.scale
    n = N.add(N.add(_int(6), _int(z)), N.mul(Num(44, 2), x, z))
    N.check_digits(n.integer(), "e()")      # (before halving x: a big x halves for long)
    scale = x.scale + 1
    halvings = 0
    while x.compare(ONE) > 0:
        bc.check_stop()
        halvings += 1
        x = N.div(x, TWO, scale)
        scale += 1
    scale = n.integer()
    v = N.add(ONE, x)
    a, d, i = x, ONE, 2
    while True:
        _series_guard(bc, i)
        a = N.mul(a, x, scale)
        d = N.mul(d, _int(i), scale)
        e = N.div(a, d, scale)
        if e.is_zero():
            for _ in range(halvings):
                v = N.mul(v, v, scale)
            return N.div(ONE, v, z) if negative else N.div(v, ONE, z)
        v = N.add(v, e)
        i += 1


def log(bc, x: Num) -> Num:
    z = bc.scale
    if x.n <= 0:
        return N.div(N.sub(ONE, N.power(_int(10), z, z)), ONE, z)
    scale = 6 + z
    f = TWO
    while x.compare(TWO) >= 0:
        bc.check_stop()
        f = N.mul(f, TWO, scale)
        x = N.sqrt(x, scale)
    half = Num(5, 1)
    while x.compare(half) <= 0:
        bc.check_stop()
        f = N.mul(f, TWO, scale)
        x = N.sqrt(x, scale)
    n = N.div(N.sub(x, ONE), N.add(x, ONE), scale)
    v, m, i = n, N.mul(n, n, scale), 3
    while True:
        _series_guard(bc, i)
        n = N.mul(n, m, scale)
        e = N.div(n, _int(i), scale)
        if e.is_zero():
            return N.div(N.mul(f, v, scale), ONE, z)
        v = N.add(v, e)
        i += 2


def sin(bc, x: Num) -> Num:
    z = bc.scale
    scale = N.add(N.mul(Num(11, 1), _int(z), z), TWO).integer()
    v = _atan_at(bc, ONE, scale)
    negative = x.n < 0
    if negative:
        x = Num(-x.n, x.scale)
    n = N.div(N.add(N.div(x, v, 0), TWO), _int(4), 0)
    x = N.sub(x, N.mul(N.mul(_int(4), n, 0), v, 0))
    if N.mod(n, TWO, 0).n:
        x = Num(-x.n, x.scale)
    scale = z + 2
    v = e = x
    s = N.mul(Num(-x.n, x.scale), x, scale)
    i = 3
    while True:
        _series_guard(bc, i)
        e = N.mul(e, N.div(s, _int(i * (i - 1)), scale), scale)
        if e.is_zero():
            return N.div(Num(-v.n, v.scale) if negative else v, ONE, z)
        v = N.add(v, e)
        i += 2


def cos(bc, x: Num) -> Num:
    z = bc.scale
    scale = N.mul(_int(z), Num(12, 1), z).integer()
    shifted = N.add(x, N.mul(_atan_at(bc, ONE, scale), TWO, scale))
    v = _at_scale(bc, scale, sin, shifted)
    return N.div(v, ONE, z)


def atan(bc, x: Num) -> Num:
    return _atan_at(bc, x, bc.scale)


def _atan_at(bc, x: Num, z: int) -> Num:
    m = ONE
    if x.n < 0:
        m, x = _int(-1), Num(-x.n, x.scale)
    if z <= CONSTANT_SCALE:
        if x.compare(ONE) == 0:
            return N.div(PI_4, m, z)
        if x.compare(FIFTH) == 0:
            return N.div(ATAN_FIFTH, m, z)
    a = ZERO
    if x.compare(FIFTH) > 0:
        a = _atan_at(bc, FIFTH, z + 5)
    scale = z + 3
    f = 0
    while x.compare(FIFTH) > 0:
        f += 1
        x = N.div(N.sub(x, FIFTH), N.add(ONE, N.mul(x, FIFTH, scale)), scale)
    v = n = x
    s = N.mul(Num(-x.n, x.scale), x, scale)
    i = 3
    while True:
        _series_guard(bc, i)
        n = N.mul(n, s, scale)
        e = N.div(n, _int(i), scale)
        if e.is_zero():
            return N.div(N.add(N.mul(_int(f), a, z), v), m, z)
        v = N.add(v, e)
        i += 2


def bessel(bc, n: Num, x: Num) -> Num:
    z = bc.scale
    order = N.div(n, ONE, 0).integer()
    negative = False
    if order < 0:
        order = -order
        negative = order % 2 == 1
    N.check_digits(order, "j()")
    f = ONE
    for i in range(2, order + 1):
        bc.check_stop()
        f = N.mul(f, _int(i), 0)
    scale = N.mul(Num(15, 1), _int(z), 0).integer()
    f = N.div(N.div(N.power(x, order, scale), N.power(TWO, order, scale), scale), f, scale)
    v = e = ONE
    s = N.div(N.mul(Num(-x.n, x.scale), x, scale), _int(4), scale)
    scale = N.add(N.sub(N.add(N.mul(Num(15, 1), _int(z), scale), _int(f.length())),
                        _int(f.scale)), ZERO).integer()
    i = 1
    while True:
        _series_guard(bc, i)
        e = N.div(N.div(N.mul(e, s, scale), _int(i), scale), _int(order + i), scale)
        if e.is_zero():
            product = N.mul(Num(-f.n, f.scale) if negative else f, v, z)
            return N.div(product, ONE, z)
        v = N.add(v, e)
        i += 1


def _at_scale(bc, scale: int, function, *args) -> Num:
    """Call a library function as bc does from inside another, with `scale` set."""
    saved = bc.scale
    bc.scale = scale
    try:
        return function(bc, *args)
    finally:
        bc.scale = saved


LIBRARY = {"e": exp, "l": log, "s": sin, "c": cos, "a": atan, "j": bessel}
