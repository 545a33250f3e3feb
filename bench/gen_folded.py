#!/usr/bin/env python3
"""Writes a folded-stacks file for the flame graph bench: N distinct stacks of depth 10-40,
deterministic for a seed (Python's random.Random, standard library only).

--kind shared: stacks are paths in a skewed call tree (few hot roots, children drawn from a
small set per caller), so stacks share long prefixes, as real profiles do.
--kind random: every frame is drawn from a large pool of names, so stacks share almost nothing
and the merged tree is nearly as large as the input.

Frame names look like C, C++ and kernel symbols (some with _[k] suffixes) and average about 14
bytes, so 200000 stacks make about 80 MB."""
import argparse
import random
import sys

WORDS = ["parse", "hash", "alloc", "free", "read", "write", "find", "insert", "put", "draw",
         "encode", "decode", "send", "recv", "poll", "lock", "wake", "sched", "run", "walk",
         "sync", "scan", "sort", "copy", "map", "tick", "merge", "flush"]


def make_pool(rng, n):
    """n distinct function names: word_word_NNN, nsN::Class::wordN, or kernel word_wordNN_[k]."""
    names, seen = [], set()
    while len(names) < n:
        r = rng.random()
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        if r < 0.7:
            s = "%s_%s_%03d" % (a, b, rng.randrange(1000))
        elif r < 0.85:
            s = "ns%d::%s::%s%d" % (rng.randrange(10), a.capitalize(), b, rng.randrange(10))
        else:
            s = "%s_%s%d_[k]" % (a, b, rng.randrange(100))
        if s not in seen:
            seen.add(s)
            names.append(s)
    return names


def shared_stack(rng, pool, depth):
    """A path in a call tree: frame i is one of 3 children of frame i-1, chosen with skew."""
    frames, h = [], 0
    for i in range(depth):
        fan = 2 if i < 6 else 4
        k = min(int(rng.expovariate(1.0)), fan - 1)
        h = (h * 1000003 + k * 7919 + i) % (1 << 61)
        frames.append(pool[h % len(pool)])
    return frames


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kind", choices=["shared", "random"], default="shared")
    ap.add_argument("--stacks", type=int, default=200000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random("%s-%d" % (a.kind, a.seed))
    pool = make_pool(rng, 2000 if a.kind == "shared" else 50000)
    seen = set()
    out = sys.stdout
    while len(seen) < a.stacks:
        depth = rng.randint(10, 40)
        if a.kind == "shared":
            frames = shared_stack(rng, pool, depth)
        else:
            frames = [rng.choice(pool) for _ in range(depth)]
        line = ";".join(frames)
        if line in seen:
            continue
        seen.add(line)
        out.write("%s %d\n" % (line, rng.randint(1, 1000)))


if __name__ == "__main__":
    main()
