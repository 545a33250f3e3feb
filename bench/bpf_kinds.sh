#!/usr/bin/env bash
# Where on_sample's time goes in a system-wide recording, by the kind of sample (by hand): a
# build with bpf/sw_timing.bpf.h's FIRN_SW_TIMING marks (bpf_ktime_get_ns between stages, per-CPU
# sums by kind: idle, kernel thread or exiting process, described or not, user or kernel mode, the
# deep fixture) records -a beside the deep fixture (two threads) for SECONDS s; prints per kind
# its share of the runs and of the time, its mean, frames (user, kernel), VMA lookups and
# announcements a sample, and each stage's mean ns. The marks cost ~40 ns each. Build it aside:
#   cp -a build build-t && rm build-t/bpf/profile.bpf.o build-t/lib/source/sampler.o
#   make -j2 BUILD=build-t BPF_CFLAGS="-g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Wno-unused-function -idirafter /usr/include/x86_64-linux-gnu -Ibpf -DFIRN_SW_TIMING" build-t/firn
#   FIRN=build-t/firn bash bench/bpf_kinds.sh [fp|dwarf]
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/bench/bench_lib.sh"
FIRN=${FIRN:-$ROOT/build-t/firn}
CG=${1:-dwarf}
SECONDS_ON=${SECONDS_ON:-5}
"$DEEP" -t 2 -1 >/dev/null 2>&1 &
fx=$!
bpf_stats_on
"$FIRN" record -a -F 999 --call-graph "$CG" -q -o /tmp/bpf-kinds.pb.gz 2>/tmp/bpf-kinds.err &
fp=$!
sleep 1.5
id=$(bpf_map_id "$fp" sw_timing)
read -r c0 n0 < <(bpf_prog_stats "$fp" on_sample)
sleep "$SECONDS_ON"
read -r c1 n1 < <(bpf_prog_stats "$fp" on_sample)
[ -n "$id" ] && bpftool map dump id "$id" -j >/tmp/bpf-kinds.json
kill -INT "$fp"
wait "$fp"
kill "$fx"
wait "$fx" 2>/dev/null
[ -n "$id" ] || { echo "no sw_timing map: not a FIRN_SW_TIMING build" >&2; exit 1; }
echo "on_sample: $((c1 - c0)) runs, mean $(((n1 - n0) / (c1 - c0))) ns (bpf_stats, ${SECONDS_ON} s; marks from start-up)"
python3 - <<'PY'
import json
names = ["idle (pid 0)", "kernel thread", "described, user", "described, kernel",
         "undescribed, user", "undescribed, kernel", "deep, user", "deep, kernel"]
f = ["n", "frames", "vma", "kframes", "ann"]
t = {k: [0] * 8 for k in f}
ns = [[0] * 8 for _ in range(8)]
for v in json.load(open("/tmp/bpf-kinds.json"))[0]["formatted"]["values"]:
    for k in f:
        for i in range(8):
            t[k][i] += v["value"][k][i]
    for i in range(8):
        for j in range(8):
            ns[i][j] += v["value"]["ns"][i][j]
n = sum(t["n"])
tot = sum(map(sum, ns))
print("%-20s %6s %6s %7s %6s %5s %5s %5s %5s | %5s %5s %5s %6s %5s %6s %6s %6s" % ("kind", "runs", "share", "mean ns",
      "time", "ufr", "kfr", "vma", "new", "seen", "send", "comm", "user", "vma", "kernel", "walk.", "count"))
for i in range(8):
    c = t["n"][i]
    if not c:
        continue
    print("%-20s %6d %5.1f%% %7.0f %5.1f%% %5.1f %5.1f %5.2f %5.2f | %5.0f %5.0f %5.0f %6.0f %5.0f %6.0f %6.0f %6.0f" % (names[i], c,
          100 * c / n, sum(ns[i]) / c, 100 * sum(ns[i]) / tot, t["frames"][i] / c, t["kframes"][i] / c,
          t["vma"][i] / c, t["ann"][i] / c, *[ns[i][j] / c for j in (6, 4, 0, 1, 5, 2, 3, 7)]))
print("all: %d runs, mean %.0f ns between the marks; stages: announce (seen map; its event sent), comm, user walk, kernel"
      " stack, walkers (stack hooks, tail call, ctx), count (stacks stored, counted)" % (n, tot / n))
PY
