#!/usr/bin/env python3
"""Allocation sites side by side (bench/alloc.sh's accuracy part, issue 47): the bytes a program
allocated, those still live at its exit, and each site's bytes, as heaptrack saw them and as a
firn -e alloc profile estimates them; prints one JSON object.

  alloc_sites.py heaptrack FILE.zst     heaptrack's data file (1.4, format 3): every call
  alloc_sites.py firn ALLOC.folded INUSE.folded
                                        firn report --folded --sample-type alloc_space / inuse_space
  alloc_sites.py compare HEAPTRACK.json FIRN.json [N]
                                        totals, leaked and the top N (10) sites' shares, both ways

A site is the function that called the allocator: heaptrack's traces start there; firn's stacks
end in libfirn-alloc.so's wrapper and sampled_alloc, which are taken off. A function without a
symbol (a stripped library's static one) is one site per file, "[FILE]", on both sides: heaptrack
names it [unknown], firn FILE+0xSTART, so only the file can be matched. heaptrack's file is read
raw, since heaptrack_print has no bytes-allocated view: 's LEN TEXT' strings, 'i IP MODULE
[FUNC FILE LINE]...' instruction pointers (the innermost inlined frame first), 't IP PARENT'
traces, 'a SIZE TRACE' allocation kinds, '+ KIND' an allocation, '- KIND' its free (hex numbers,
indexes from 1 but the kinds' from 0)."""
import json
import os
import re
import subprocess
import sys

ALLOCATOR = {"sampled_alloc", "malloc", "calloc", "realloc", "reallocarray", "free",
             "posix_memalign", "aligned_alloc", "memalign", "valloc"}


def heaptrack(path):
    """Totals and sites of a heaptrack data file."""
    strings, ips, traces, kinds = [None], [None], [None], []
    count, freed = [], []
    raw = subprocess.run(["zstd", "-dc", path], capture_output=True, check=True).stdout
    for line in raw.decode("utf-8", "replace").splitlines():
        op, _, rest = line.partition(" ")
        if op == "s":
            strings.append(rest.partition(" ")[2])
        elif op == "i":
            f = rest.split()
            ips.append((int(f[2], 16) if len(f) > 2 else 0, int(f[1], 16)))
        elif op == "t":
            ip, parent = rest.split()
            traces.append(int(ip, 16))
        elif op == "a":
            size, trace = rest.split()
            kinds.append((int(size, 16), int(trace, 16)))
            count.append(0)
            freed.append(0)
        elif op == "+":
            count[int(rest, 16)] += 1
        elif op == "-":
            freed[int(rest, 16)] += 1
    sites, total, leaked = {}, 0, 0
    for k, (size, trace) in enumerate(kinds):
        func, module = ips[traces[trace]] if 0 < trace < len(traces) else (0, 0)
        name = strings[func] if func else "[%s]" % os.path.basename(
            os.path.realpath(strings[module])) if module else "[unknown]"
        sites[name] = sites.get(name, 0) + size * count[k]
        total += size * count[k]
        leaked += size * max(count[k] - freed[k], 0)
    return {"total": total, "leaked": leaked, "sites": sites}


def folded(path):
    """Bytes by site of firn's folded stacks (the allocator's frames taken off the leaf end)."""
    sites, total = {}, 0
    for line in open(path, encoding="utf-8", errors="replace"):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if not stack or line.startswith("#"):
            continue
        frames = stack.split(";")
        while len(frames) > 1 and frames[-1] in ALLOCATOR:
            frames.pop()
        m = re.fullmatch(r"(.+)\+0x[0-9a-f]+", frames[-1])
        site = "[%s]" % m.group(1) if m else frames[-1]
        sites[site] = sites.get(site, 0) + int(float(n))
        total += int(float(n))
    return sites, total


def compare(ht, fi, n):
    """Totals, leaked and the top n sites of heaptrack with firn's estimates beside them."""
    out = {"total": [ht["total"], fi["total"]], "leaked": [ht["leaked"], fi["leaked"]]}
    top = sorted(ht["sites"], key=lambda s: -ht["sites"][s])[:n]
    out["sites"] = [[s, 100.0 * ht["sites"][s] / (ht["total"] or 1),
                     100.0 * fi["sites"].get(s, 0) / (fi["total"] or 1)] for s in top]
    out["max_share_pp"] = max((abs(a - b) for _, a, b in out["sites"]), default=0)
    out["total_err_pct"] = 100.0 * (fi["total"] - ht["total"]) / (ht["total"] or 1)
    out["leaked_err_pct"] = 100.0 * (fi["leaked"] - ht["leaked"]) / (ht["leaked"] or 1)
    return out


def main(argv):
    if len(argv) >= 3 and argv[1] == "heaptrack":
        print(json.dumps(heaptrack(argv[2])))
    elif len(argv) >= 4 and argv[1] == "firn":
        sites, total = folded(argv[2])
        _, leaked = folded(argv[3])
        print(json.dumps({"total": total, "leaked": leaked, "sites": sites}))
    elif len(argv) >= 4 and argv[1] == "compare":
        ht, fi = (json.load(open(p)) for p in argv[2:4])
        print(json.dumps(compare(ht, fi, int(argv[4]) if len(argv) > 4 else 10)))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
