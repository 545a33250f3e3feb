# -e alloc in uprobe mode (--alloc-mode uprobe, and auto for -p): processes firn did not start
# and that do not map libfirn-alloc.so, seen through uprobes on their libc's malloc family with
# the Poisson rule run in BPF. The allocfix fixture, started without firn and held at a fifo
# until the recording is attached, recorded with -p at --alloc-rate 4096 (~12,700 sampled
# allocations of 52 MB): the estimated total within 10 % of the truth the fixture prints, each
# site's share of alloc_space within 5 standard errors of its true share, site_leak >= 95 % of
# inuse_space; auto mode picks the uprobes for such a -p process; a command in uprobe mode: the
# rest of the family (posix_memalign ... reallocarray) to 0.1 %, by_valloc's block the live heap;
# a usage error for a bad --alloc-mode.
. "$(dirname "$0")/lib.sh"

FX="$FIX/allocfix"
if [ ! -x "$FX" ]; then fail "fixture $FX is missing (make fixtures)"; exit 0; fi

expect_rc "--alloc-mode x is a usage error" 2 "$FIRN" record -e alloc --alloc-mode x -- true
grep -q "alloc-mode" "$TMP/err" && pass "the usage error names --alloc-mode" || fail "usage error: $(cat "$TMP/err")"

if ! is_root; then skip "recording -e alloc needs root"; exit 0; fi

# gated ROUNDS OUT PB ARGS...: allocfix ROUNDS started without firn (stderr to OUT), waiting at
# a fifo until firn record -p ARGS... has had time to attach, then run to its end, which ends
# the recording (PB: its profile, OUT.rec: firn's stderr). The fifo's reader is the process
# itself (sh, then allocfix after exec: one pid).
gated() {
	local rounds=$1 out=$2 pb=$3 pid rp
	shift 3
	rm -f "$TMP/go"; mkfifo "$TMP/go"
	sh -c 'read x; exec "$0" "$1"' "$FX" "$rounds" <"$TMP/go" 2>"$out" &
	pid=$!
	"$FIRN" record -e alloc --alloc-rate 4096 -p "$pid" -o "$pb" "$@" >/dev/null 2>"$out.rec" &
	rp=$!
	# attached when firn holds the uprobes' perf events (8 of them at least; give up after 20 s)
	for _ in $(seq 100); do
		[ "$(ls -l /proc/$rp/fd 2>/dev/null | grep -c 'perf_event')" -ge 8 ] && break
		sleep 0.2
	done
	sleep 0.5
	echo go >"$TMP/go"
	wait "$pid"
	wait "$rp"
}

gated 60000 "$TMP/u.out" "$TMP/u.pb.gz" --alloc-mode uprobe
rc=$?
[ $rc -eq 0 ] && pass "record -p --alloc-mode uprobe exits 0" || { fail "record -p uprobe: exit $rc"; head -5 "$TMP/u.out.rec"; }
truth=$(sed -n 's/^allocfix: total \([0-9]*\) .*/\1/p' "$TMP/u.out")
leaked=$(sed -n 's/^allocfix: .* leaked \([0-9]*\) .*/\1/p' "$TMP/u.out")
for t in alloc_space inuse_space; do
	"$FIRN" report --json --top 0 --sample-type $t "$TMP/u.pb.gz" >"$TMP/u.$t.json" 2>/dev/null
done
python3 - "$TMP/u.alloc_space.json" "$TMP/u.inuse_space.json" "${truth:-0}" "${leaked:-0}" <<'PY'
import json, math, sys
def load(path):
    try:
        d = json.load(open(path))
    except ValueError:
        return 0, {}
    return d.get("total", 0), {r["name"]: r["total"] for r in d["functions"]}
total, space = load(sys.argv[1])
truth, leaked = int(sys.argv[3]), int(sys.argv[4])
ok = truth and abs(total - truth) <= 0.10 * truth
print(("PASS" if ok else "FAIL") + ": uprobe -p: estimated alloc_space %d within 10 %% of the truth %d" % (total, truth))
n = total / 4096.0  # about the number of samples
# true shares: a 69.31 %, b 23.07 %, leak 7.39 % of allocfix's bytes (its header aside)
for name, share in (("site_a", 0.6931), ("site_b", 0.2307), ("site_leak", 0.0739)):
    got = space.get(name, 0) / total if total else 0
    tol = max(5 * math.sqrt(share * (1 - share) / n), 0.01) if n else 0
    ok = n > 1000 and abs(got - share) <= tol
    print(("PASS" if ok else "FAIL") + ": uprobe -p: %s holds %.2f %% of alloc_space (true %.2f %%, +-%.2f pp)"
          % (name, 100 * got, 100 * share, 100 * tol))
inuse, live = load(sys.argv[2])
want = leaked + (60000 // 4 + 1) * 8  # what leaks and the array holding it
tol = max(0.10, 5 / math.sqrt(want / 4096.0)) if want else 0
ok = want and abs(inuse - want) <= tol * want
print(("PASS" if ok else "FAIL") + ": uprobe -p: inuse_space %d within %.1f %% of the live bytes %d" % (inuse, 100 * tol, want))
ok = inuse and live.get("site_leak", 0) >= 0.95 * inuse
print(("PASS" if ok else "FAIL") + ": uprobe -p: site_leak holds %.1f %% of inuse_space (>= 95 %%)"
      % (100.0 * live.get("site_leak", 0) / (inuse or 1)))
PY

# auto (the default): a -p process that maps no libfirn-alloc.so is seen through uprobes
gated 20000 "$TMP/a.out" "$TMP/a.pb.gz"
truth=$(sed -n 's/^allocfix: total \([0-9]*\) .*/\1/p' "$TMP/a.out")
est=$(sed -n 's/^firn: alloc: [0-9]* allocations sampled, \([0-9.]*\) MB estimated.*/\1/p' "$TMP/a.out.rec")
awk -v e="${est:-0}" -v t="${truth:-0}" 'BEGIN { exit !(t > 0 && e * 1e6 >= 0.9 * t && e * 1e6 <= 1.1 * t) }' \
	&& pass "auto -p: uprobes for a process without the library ($est MB of $truth bytes)" \
	|| fail "auto -p: '$est' MB of '$truth': $(grep -v '^firn: [df]' "$TMP/a.out.rec" | head -3)"

# a command in uprobe mode (the host's libc, the command's processes kept in BPF): the rest of
# the family, each function's bytes (64 KiB blocks at a rate of 4096: all sampled, weighted
# ~1.0000001) and by_valloc's last block live at the end
"$FIRN" record -e alloc --alloc-mode uprobe --alloc-rate 4096 -o "$TMP/f.pb.gz" -- "$FX" family \
	>/dev/null 2>"$TMP/f.err" || fail "uprobe family: $(grep -v '^firn: [df]' "$TMP/f.err" | head -3)"
grep -q 'libfirn-alloc' "$TMP/f.err" && fail "uprobe family: the library was involved" || true
for t in alloc_space inuse_space; do
	"$FIRN" report --json --top 0 --sample-type $t "$TMP/f.pb.gz" >"$TMP/f.$t.json" 2>/dev/null
done
python3 - "$TMP/f.alloc_space.json" "$TMP/f.inuse_space.json" <<'PY'
import json, sys
want = {"by_posix_memalign": 6553600, "by_aligned_alloc": 6553600, "by_memalign": 6553600,
        "by_valloc": 6553600, "by_realloc": 100 * (65536 + 131072), "by_reallocarray": 6553600}
def totals(path):
    try:
        d = json.load(open(path))
    except ValueError:
        return 0, {}
    return d.get("total", 0), {r["name"]: r["total"] for r in d["functions"] if r["name"].startswith("by_")}
_, space = totals(sys.argv[1])
for name, w in want.items():
    got = space.get(name, 0)
    ok = abs(got - w) <= 0.001 * w
    print(("PASS" if ok else "FAIL") + ": uprobe family: %s allocated %d bytes (want %d)" % (name, got, w))
total, inuse = totals(sys.argv[2])
ok = abs(inuse.get("by_valloc", 0) - 65536) <= 66 and abs(total - 65536) <= 0.02 * 65536
print(("PASS" if ok else "FAIL") + ": uprobe family: inuse_space is by_valloc's last 64 KiB block (%d, %s)" % (total, inuse))
PY
