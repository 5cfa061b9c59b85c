"""Random tile programs for the engine's property tests (issue test (e)) and benchmarks: loads of 2-D
tiles, then random trans / reshape / reduce-expand-broadcast / elementwise / join / split / dot / cast,
every unused value stored."""

from __future__ import annotations

import random

from linear_layouts.engine import Builder

SHAPES = [(32, 32), (16, 64), (64, 16), (32, 64), (64, 32)]


def random_program(seed: int):
    rng = random.Random(seed)
    b = Builder(num_warps=rng.choice([2, 4, 8]))
    pool = []  # (value id, shape)
    uses = {}

    def add(v, shape):
        pool.append((v, tuple(shape)))
        uses.setdefault(v, 0)

    def take(pred=lambda s: True):
        options = [p for p in pool if pred(p[1])]
        if not options:
            return None
        v, s = rng.choice(options)
        uses[v] = uses.get(v, 0) + 1
        return v, s

    n_loads = 0
    for _ in range(rng.randint(2, 9)):
        kind = rng.choice(["load", "trans", "reshape", "reduce", "binary", "join", "split", "dot", "cast"])
        if kind == "load" or not pool:
            shape = rng.choice(SHAPES)
            add(b.load(b.pointer(f"in{n_loads}", shape, "fp16")), shape)
            n_loads += 1
        elif kind == "trans":
            v, s = take()
            perm = list(range(len(s)))
            rng.shuffle(perm)
            add(b.trans(v, perm), [s[p] for p in perm])
        elif kind == "reshape":
            v, s = take()
            n = 1
            for x in s:
                n *= x
            new = [rng.choice([2, 4, 8])]
            new = [new[0], n // new[0]] if rng.random() < 0.7 else [n // 2, 2]
            add(b.reshape(v, new), new)
        elif kind == "reduce":
            got = take(lambda s: len(s) >= 2)
            if got:
                v, s = got
                axis = rng.randrange(len(s))
                r = b.reduce(v, axis, rng.choice(["add", "max"]))
                add(b.elementwise("sub", v, b.broadcast(b.expand_dims(r, axis), s)), s)
        elif kind == "binary":
            v, s = take()
            other = take(lambda t: t == s)
            add(b.elementwise(rng.choice(["add", "mul"]), v, other[0]), s)
        elif kind == "join":
            v, s = take(lambda s: len(s) < 3)
            w, _ = take(lambda t: t == s)
            add(b.join(v, w), list(s) + [2])
        elif kind == "split":
            got = take(lambda s: s[-1] == 2 and len(s) >= 2)
            if got:
                v, s = got
                lo, hi = b.split(v)
                add(b.elementwise("add", lo, hi), s[:-1])
        elif kind == "dot":
            got = take(lambda s: len(s) == 2 and s[0] >= 16 and s[1] >= 16)
            if got:
                v, s = got
                other = take(lambda t: len(t) == 2 and t[0] == s[1] and t[1] >= 8)
                if other is None:
                    w = b.load(b.pointer(f"in{n_loads}", [s[1], 32], "fp16"))
                    n_loads += 1
                    other = (w, (s[1], 32))
                version = 3 if b.num_warps >= 4 and rng.random() < 0.5 else 2
                c = b.dot(v, other[0], mma_version=version)
                add(b.cast(c, "fp16"), (s[0], other[1][1]))
        elif kind == "cast":
            v, s = take()
            add(b.cast(b.elementwise("exp2", b.cast(v, "fp32")), "fp16"), s)
    for i, (v, s) in enumerate(pool):
        if uses[v] == 0:
            b.store(b.pointer(f"out{i}", s, "fp16"), v)
    return b.build()
