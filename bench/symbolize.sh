#!/usr/bin/env bash
# Symbolization benchmark: N (default 100000) distinct addresses of a large binary with DWARF,
# symbolized with inline chains, file and line by firn (bench/symbolize_addrs.c, through
# lib/symbolize/symbolize), by binutils `addr2line -f -i -C` and by elfutils `eu-addr2line -f -i`, each
# given all the addresses in one batch on stdin. Prints the best wall and CPU time of RUNS runs
# (interleaved, so a busy machine slows all alike) and how many answers agree on SAMPLE of the
# addresses (the whole inline chain: function, file, line).
#
# usage: bench/symbolize.sh [BINARY]
#   BINARY   default: the first of $FIRN_BENCH_BINARY, pyenv's largest libpython3.*.so.1.0, the
#            libc6-dbg debug file of this machine's libc
#   env: BUILD (build), N (100000), RUNS (5; addr2line max(2, RUNS/2), eu-addr2line 1),
#        SAMPLE (2000), SKIP_EU=1 (no eu-addr2line timing: it takes minutes),
#        RESULTS=FILE (write the result block as the "## Symbolization" section of FILE)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
N=${N:-100000} RUNS=${RUNS:-5} SAMPLE=${SAMPLE:-2000}
OUT=$ROOT/$BUILD/bench/symbolize
mkdir -p "$OUT"

# pick_binary: the benchmark's binary (argument, env, or the largest candidate with DWARF).
pick_binary() {
	local c best= size=0
	if [ -n "${1:-}" ]; then echo "$1"; return; fi
	if [ -n "${FIRN_BENCH_BINARY:-}" ]; then echo "$FIRN_BENCH_BINARY"; return; fi
	for c in "$HOME"/.pyenv/versions/*/lib/libpython3.*.so.1.0; do
		[ -e "$c" ] && readelf -S -W "$c" 2>/dev/null | grep -q ' \.debug_info ' || continue
		s=$(stat -c %s "$c")
		if [ "$s" -gt "$size" ]; then best=$c size=$s; fi
	done
	if [ -n "$best" ]; then echo "$best"; return; fi
	local id
	id=$(readelf -n "$(ldd /bin/true | awk '/libc.so/ {print $3}')" | awk '/Build ID/ {print $3}')
	c=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	if [ -e "$c" ]; then echo "$c"; return; fi
	echo "no binary with DWARF found: give one (or install libc6-dbg)" >&2
	exit 1
}

BIN=$(pick_binary "${1:-}")
for tool in addr2line eu-addr2line; do
	command -v $tool >/dev/null || { echo "$tool is needed (binutils, elfutils)" >&2; exit 1; }
done

# The helper, linked as firn is.
make -s -C "$ROOT" BUILD="$BUILD" "$BUILD/libfirn.a" >/dev/null
PKGS="libbpf libelf libdw zlib ncursesw capstone"
cc -O2 -g -std=gnu11 -D_GNU_SOURCE -I"$ROOT/lib" -o "$OUT/symbolize_addrs" \
	"$ROOT/bench/symbolize_addrs.c" "$ROOT/$BUILD/libfirn.a" $(pkg-config --libs $PKGS) -liberty -lm

# N distinct addresses, uniform over the bytes of the binary's functions, in random order.
python3 - "$BIN" "$N" "$OUT/addrs.txt" <<'PY'
import random, subprocess, sys
path, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
syms = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True, text=True).stdout
fns = {}
for line in syms.splitlines():
    f = line.split()
    if len(f) == 4 and f[2] in "tTwW" and int(f[1], 16) > 1:
        fns[int(f[0], 16)] = int(f[1], 16)
spans = sorted(fns.items())
total = sum(s for _, s in spans)
if total < n:
    sys.exit("%s has only %d bytes of functions" % (path, total))
rng = random.Random(20240601)
picks = set()
while len(picks) < n:
    k = rng.randrange(total)
    for start, size in spans:  # (few thousand functions: fine)
        if k < size:
            picks.add(start + k)
            break
        k -= size
addrs = list(picks)
rng.shuffle(addrs)
open(out, "w").write("".join("%x\n" % a for a in addrs))
PY
head -n "$SAMPLE" "$OUT/addrs.txt" >"$OUT/sample.txt"

# Timing and comparison in Python: getrusage gives CPU time of each run, perf_counter wall.
python3 - "$BIN" "$OUT" "$RUNS" "${SKIP_EU:-}" "$N" "$SAMPLE" "${RESULTS:-}" <<'PY'
import os, re, resource, subprocess, sys, time
bin_, out, runs, skip_eu, n, sample, results = sys.argv[1:8]
runs, n, sample = int(runs), int(n), int(sample)
helper = os.path.join(out, "symbolize_addrs")
tools = {
    "firn": [helper, bin_],
    "firn --profile": [helper, "--profile", bin_],
    "addr2line -f -i -C": ["addr2line", "-f", "-i", "-C", "-e", bin_],
    "eu-addr2line -f -i": ["eu-addr2line", "-f", "-i", "-e", bin_],
}

def timed(cmd, inp):
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    with open(inp) as fi, open(os.devnull, "w") as fo:
        subprocess.run(cmd, stdin=fi, stdout=fo, stderr=subprocess.DEVNULL, check=True)
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    return t1 - t0, r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime

addrs = os.path.join(out, "addrs.txt")
best = {}
for i in range(runs):
    for name, cmd in tools.items():
        if name.startswith("eu-") and (skip_eu or i > 0):
            continue
        if name.startswith("addr2line") and i >= max(2, runs // 2):
            continue
        w, c = timed(cmd, addrs)
        bw, bc = best.get(name, (1e9, 1e9))
        best[name] = (min(bw, w), min(bc, c))

# Answers: each tool with -a (firn's helper too) on the sample, split per address.
def chains(cmd):
    text = subprocess.run(cmd[:1] + ["-a"] + cmd[1:], stdin=open(os.path.join(out, "sample.txt")),
                          capture_output=True, text=True, check=True).stdout
    res, cur = {}, None
    lines = text.splitlines()
    for i in range(0, len(lines)):
        l = lines[i]
        if re.fullmatch(r"0x[0-9a-f]+", l):
            cur = int(l, 16)
            res[cur] = []
        elif cur is not None and (not res[cur] or len(res[cur][-1]) == 3):
            res[cur].append([re.sub(r" inlined at .* in .*$", "", l)])  # eu-addr2line's form
        elif cur is not None:
            m = re.match(r"(.*?):(\d+|\?)(?::\d+)?(?: \(discriminator \d+\))?$", l)
            f, ln = (m.group(1), m.group(2)) if m else (l, "0")
            res[cur][-1] += [os.path.normpath(f) if f != "??" else "??", 0 if ln == "?" else int(ln)]
    return {a: [tuple(x) for x in v] for a, v in res.items()}

firn = chains([helper, bin_])
cmp = {}
for name, cmd in [("addr2line", ["addr2line", "-f", "-i", "-C", "-e", bin_]),
                  ("eu-addr2line", ["eu-addr2line", "-f", "-i", "-C", "-e", bin_])]:
    other, same, kinds, examples = chains(cmd), 0, {}, []
    for a, chain in firn.items():
        o = other.get(a)
        if o == chain:
            same += 1
            continue
        kind = ("depth" if o is None or len(o) != len(chain) else
                "function" if [x[0] for x in o] != [x[0] for x in chain] else
                "file" if [x[1] for x in o] != [x[1] for x in chain] else "line")
        kinds[kind] = kinds.get(kind, 0) + 1
        if len(examples) < 3:
            examples.append((a, chain, o))
    cmp[name] = (same, kinds, examples)

fsz = os.path.getsize(bin_)
info = subprocess.run(["readelf", "-S", "-W", bin_], capture_output=True, text=True).stdout
m = re.search(r"\.debug_info\s+\S+\s+\S+\s+\S+\s+([0-9a-f]+)", info)
frames = sum(len(v) for v in firn.values())
out_lines = []
p = out_lines.append
load = open("/proc/loadavg").read().split()[:3]
p("`bench/symbolize.sh` (N=%d RUNS=%d SAMPLE=%d): %d distinct addresses, uniform over the bytes of"
  % (n, runs, sample, n))
p("the functions of `%s`" % bin_)
p("(%.1f MB, .debug_info %.1f MB; %.2f frames per address with inlined calls), in random order, given"
  % (fsz / 1e6, int(m.group(1), 16) / 1e6 if m else 0, frames / max(1, len(firn))))
p("to each tool in one batch on stdin. firn is `bench/symbolize_addrs.c` through lib/symbolize/symbolize")
p("(DWARF inline chains, files, lines, symbol-table fallback, demangling; output in addr2line's")
p("format, in input order; it looks the batch up in address order). `firn --profile` also builds")
p("the profile's locations and functions, as `firn record` does. Best of %d runs, interleaved" % runs)
p("(addr2line %d, eu-addr2line 1); CPU = user + system time of the process." % max(2, runs // 2))
p("Machine: %d CPUs, load average %s while it ran (shared), %s." % (os.cpu_count(), " ".join(load),
  time.strftime("%Y-%m-%d")))
p("")
p("| tool | best wall s | best CPU s | wall vs firn | CPU vs firn |")
p("| --- | ---: | ---: | ---: | ---: |")
fw, fc = best["firn"]
for name, (w, c) in best.items():
    p("| %s | %.3f | %.3f | %.1fx | %.1fx |" % (name, w, c, w / fw, c / fc))
p("")
p("Same answers on %d sampled addresses (whole inline chain: function, file, line):" % len(firn))
for name, (same, kinds, examples) in cmp.items():
    p("- %s: %d of %d (%.1f %%)%s" % (name, same, len(firn), 100.0 * same / max(1, len(firn)),
      ("; differences by first field that differs: " +
       ", ".join("%s %d" % kv for kv in sorted(kinds.items()))) if kinds else ""))
    for a, mine, theirs in examples:
        p("  - 0x%x: firn %s / %s %s" % (a, mine, name, theirs))
block = "\n".join(out_lines)
print(block)
if results:
    old = open(results).read() if os.path.exists(results) else "# Benchmark results\n"
    section = "## Symbolization\n\n" + block + "\n"
    if "## Symbolization\n" in old:
        head, rest = old.split("## Symbolization\n", 1)
        nxt = rest.find("\n## ")
        tail = rest[nxt + 1:] if nxt >= 0 else ""
        new = head + section + ("\n" + tail if tail else "")
    else:
        new = old.rstrip("\n") + "\n\n" + section
    open(results, "w").write(new)
PY
