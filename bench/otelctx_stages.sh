#!/usr/bin/env bash
# Where the OpenTelemetry context reader's time goes, stage by stage (by hand): a build with
# bpf/otelctx.bpf.h's FIRN_OTEL_TIMING marks (bpf_ktime_get_ns between stages, per-CPU sums of
# the gaps under 20 us: a host's steal time or an interrupt left out) records the otelctx
# fixture (two threads spinning in spans) for SECONDS s; prints each stage's mean ns and count.
# Stage 0 is two marks back to back (the marks' own cost, in every stage); 2: the thread's
# cache (this CPU's last thread, fs base; task storage, then walker_procs on a miss); 3: the
# epoch and the TLS pointer read; 4: the header read again and compared; 5: the sample counted.
# Build it aside:
#   make -j2 BUILD=build-t BPF_CFLAGS="-g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Wno-unused-function -idirafter /usr/include/x86_64-linux-gnu -Ibpf -DFIRN_OTEL_TIMING" build-t/firn
#   FIRN=build-t/firn bash bench/otelctx_stages.sh [otelctx|otelctx-gd]
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FIRN=${FIRN:-$ROOT/build-t/firn}
FIX=$ROOT/${BUILD:-build}/fixtures
EXE=${1:-otelctx}
SECONDS_ON=${SECONDS_ON:-5}
env OTELCTX_SCALE_MS=1000000 LD_LIBRARY_PATH="$FIX" "$FIX/$EXE" >/dev/null 2>&1 &
fx=$!
sleep 0.3
"$FIRN" record -F 999 -p "$fx" -o /tmp/otelctx-stages.pb.gz 2>/tmp/otelctx-stages.err &
fp=$!
sleep "$SECONDS_ON"
# the newest otel_timing map: this firn's
id=$(bpftool map show | awk '/name otel_timing/ { sub(":", "", $1); id = $1 } END { print id }')
[ -n "$id" ] && bpftool map dump id "$id" -j | python3 -c '
import json, sys
sums, ns = [0] * 8, [0] * 8
for v in json.load(sys.stdin)[0]["formatted"]["values"]:
    for i in range(8):
        sums[i] += v["value"]["sum"][i]
        ns[i] += v["value"]["n"][i]
print(" ".join("s%d=%.0f/%d" % (i, sums[i] / ns[i], ns[i]) for i in range(8) if ns[i]))'
kill -INT "$fp"
wait "$fp"
kill "$fx"
wait "$fx" 2>/dev/null
[ -n "$id" ] || { echo "no otel_timing map: not a FIRN_OTEL_TIMING build" >&2; exit 1; }
