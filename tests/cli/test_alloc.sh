# -e alloc: the allocfix fixture (site_a allocates 3x site_b's bytes, site_leak keeps what it
# allocates) recorded with libfirn-alloc.so preloaded at --alloc-rate 4096 (~42,000 sampled
# allocations of 173 MB): the estimated total within 5 % of the truth the fixture prints, each
# site's share of alloc_space within 5 standard errors of its true share, alloc_objects and
# alloc_space read by go tool pprof -sample_index and firn report --sample-type, the summary's
# alloc line; the live heap: site_leak holds >= 95 % of inuse_space, whose total is within 5
# standard errors (8.7 %) of the bytes the fixture leaks (and its array of them), at the end and when the process exits
# before the recording ends (its live allocations counted as exited); the rest of the malloc
# family (posix_memalign ... reallocarray) to the byte, realloc as free+alloc; -p of a process
# started with the library preloaded; a static program's warning; firn top -e alloc's table and
# rate; FIRN_ALLOC_RATE reaches the command; a usage error for a bad --alloc-rate or --alloc-live.
# Also: side by side with heaptrack (when installed); --every's cuts as snapshots of the live heap;
# firn diff as a gate on alloc_space; bad frees (allocbad) and a full map (--alloc-live 16).
. "$(dirname "$0")/lib.sh"

FX="$FIX/allocfix"
if [ ! -x "$FX" ]; then fail "fixture $FX is missing (make fixtures)"; exit 0; fi

expect_rc "--alloc-rate 0 is a usage error" 2 "$FIRN" record -e alloc --alloc-rate 0 -- true
grep -q "alloc-rate" "$TMP/err" && pass "the usage error names --alloc-rate" || fail "usage error: $(cat "$TMP/err")"
expect_rc "--alloc-live 0 is a usage error" 2 "$FIRN" record -e alloc --alloc-live 0 -- true

if ! is_root; then skip "recording -e alloc needs root"; exit 0; fi

"$FIRN" record -e alloc --alloc-rate 4096 -o "$TMP/a.pb.gz" -- "$FX" >"$TMP/rec.out" 2>"$TMP/rec.err"
rc=$?
[ $rc -eq 0 ] && pass "record -e alloc exits 0" || { fail "record -e alloc exit $rc"; head -5 "$TMP/rec.err"; }
truth=$(sed -n 's/^allocfix: total \([0-9]*\) .*/\1/p' "$TMP/rec.err")
grep -Eq '^firn: alloc: [0-9]+ allocations sampled, [0-9.]+ MB estimated, [0-9]+ live at end \([0-9.]+ MB; [0-9]+ in processes that exited\), overflow 0, [0-9]+ frees of untracked pointers, lost 0$' "$TMP/rec.err" \
	&& pass "summary: the alloc line" || fail "summary: $(grep alloc: "$TMP/rec.err")"

# the whole profile's alloc_space and the sites' shares, from firn report --json
"$FIRN" report --json --top 0 --sample-type alloc_space "$TMP/a.pb.gz" >"$TMP/space.json" 2>"$TMP/rep.err" \
	&& pass "report --sample-type alloc_space" || fail "report --sample-type alloc_space: $(cat "$TMP/rep.err")"
python3 - "$TMP/space.json" "$truth" <<'PY' | while read -r l; do echo "$l"; done
import json, math, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    print("FAIL: no report of alloc_space to read")
    sys.exit(0)
truth = int(sys.argv[2] or 0)
rows = d["functions"] if isinstance(d, dict) and "functions" in d else d
total = d.get("total") if isinstance(d, dict) else None
def tot(name):
    return sum(r.get("total", 0) for r in rows if r.get("name") == name)
main = tot("main")
if total is None:
    total = main
ok = truth and abs(total - truth) <= 0.05 * truth
print(("PASS" if ok else "FAIL") + ": estimated alloc_space %d within 5 %% of the truth %d" % (total, truth))
# true shares: a 120.0 MB, b 39.9 MB, leak 12.8 MB of 173.1 MB (allocfix's defaults)
n = total / 4096.0  # about the number of samples
for name, share in (("site_a", 0.6931), ("site_b", 0.2307), ("site_leak", 0.0739)):
    got = tot(name) / total if total else 0
    tol = max(5 * math.sqrt(share * (1 - share) / n), 0.01)
    ok = abs(got - share) <= tol
    print(("PASS" if ok else "FAIL") + ": %s holds %.2f %% of alloc_space (true %.2f %%, +-%.2f pp)"
          % (name, 100 * got, 100 * share, 100 * tol))
PY

# side by side with heaptrack on the same fixture (bench/alloc.sh's accuracy part, short): total
# allocated within 5 %, the top sites' shares within 3 pp, leaked within 5 % of heaptrack's or 5
# standard errors of ~3,200 sampled live allocations (8.8 %: 1.8 % is one; make check must hold)
if command -v heaptrack >/dev/null && command -v zstd >/dev/null; then
	heaptrack -o "$TMP/ht" "$FX" >/dev/null 2>&1
	"$FIRN" report --folded --sample-type alloc_space "$TMP/a.pb.gz" >"$TMP/a.alloc.folded" 2>/dev/null
	"$FIRN" report --folded --sample-type inuse_space "$TMP/a.pb.gz" >"$TMP/a.inuse.folded" 2>/dev/null
	S="python3 $ROOT/bench/alloc_sites.py"
	if $S heaptrack "$TMP"/ht.zst >"$TMP/ht.json" 2>/dev/null && $S firn "$TMP/a.alloc.folded" "$TMP/a.inuse.folded" >"$TMP/fi.json" &&
		$S compare "$TMP/ht.json" "$TMP/fi.json" >"$TMP/cmp.json"; then
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
se = 100 / (d["leaked"][0] / 4096.0) ** 0.5 if d["leaked"][0] else 0
for what, err, tol, unit in (("allocated", d["total_err_pct"], 5, "%%"), ("leaked", d["leaked_err_pct"], max(5, 5 * se), "%%"),
                             ("top-10 shares", d["max_share_pp"], 3, "pp")):
    print(("PASS" if abs(err) <= tol else "FAIL") + (": against heaptrack: %s within %.2f " + unit + " (+-%.1f)") % (what, abs(err), tol))' "$TMP/cmp.json"
	else
		fail "against heaptrack: no comparison ($(ls "$TMP"/ht* 2>/dev/null | head -2))"
	fi
else
	skip "against heaptrack: no heaptrack or zstd (make deps)"
fi

# inuse_space: the leak. leaked bytes + the array holding them (rounds / 4 + 1 pointers) are live.
leak_check() { # FILE LEAKED-BYTES WHAT
	"$FIRN" report --json --top 0 --sample-type inuse_space "$1" >"$TMP/inuse.json" 2>"$TMP/rep.err" \
		|| fail "$3: report --sample-type inuse_space: $(cat "$TMP/rep.err")"
	python3 - "$TMP/inuse.json" "$2" "$3" <<'PY'
import json, math, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    print("FAIL: %s: no report of inuse_space to read" % sys.argv[3])
    sys.exit(0)
leaked, what = int(sys.argv[2] or 0), sys.argv[3]
truth = leaked + (leaked // 256 + 1) * 8
total = d.get("total", 0)
leak = sum(r.get("total", 0) for r in d["functions"] if r.get("name") == "site_leak")
# about truth / 4096 sampled live allocations: 5 standard errors of their count
tol = max(0.05, 5 / math.sqrt(truth / 4096.0)) if truth else 0
ok = truth and abs(total - truth) <= tol * truth
print(("PASS" if ok else "FAIL") + ": %s: inuse_space %d within %.1f %% of the live bytes %d" % (what, total, 100 * tol, truth))
ok = total and leak >= 0.95 * total
print(("PASS" if ok else "FAIL") + ": %s: site_leak holds %.1f %% of inuse_space (>= 95 %%)" % (what, 100.0 * leak / (total or 1)))
PY
}
leak_check "$TMP/a.pb.gz" "$(sed -n 's/^allocfix: .* leaked \([0-9]*\) .*/\1/p' "$TMP/rec.err")" "at the end"

# the process exits before the recording ends: its live allocations stay its leak, counted
"$FIRN" record -e alloc --alloc-rate 4096 -o "$TMP/x.pb.gz" -- sh -c "'$FX'; sleep 0.5" >/dev/null 2>"$TMP/x.err"
leak_check "$TMP/x.pb.gz" "$(sed -n 's/^allocfix: .* leaked \([0-9]*\) .*/\1/p' "$TMP/x.err")" "exited first"
exited=$(sed -n 's/^firn: alloc: .*; \([0-9]*\) in processes that exited.*/\1/p' "$TMP/x.err")
[ "${exited:-0}" -gt 100 ] && pass "the exited process's live allocations counted ($exited)" \
	|| fail "exited: $(grep alloc: "$TMP/x.err")"

# --every: each interval's inuse_* are the live heap at its cut, by stack (not what the interval
# allocated less what it freed, which can be negative): site_leak never frees, so its inuse_space
# can only grow cut over cut, to about all it leaked; no stack's value is below 0
rm -rf "$TMP/iv"; mkdir -p "$TMP/iv"
"$FIRN" record -e alloc --alloc-rate 4096 --every 0.5 -o "$TMP/iv/h-%H%M%S.pb.gz" -- "$FX" 2000000 \
	>/dev/null 2>"$TMP/iv.err" || fail "record --every: $(grep -v '^firn: [dfa]' "$TMP/iv.err" | head -3)"
leaked=$(sed -n 's/^allocfix: .* leaked \([0-9]*\) .*/\1/p' "$TMP/iv.err")
for f in $(ls -tr "$TMP"/iv/h-*.pb.gz); do
	"$FIRN" report --folded --sample-type inuse_space "$f" 2>/dev/null >"$f.space"
	"$FIRN" report --folded --sample-type inuse_objects "$f" 2>/dev/null >"$f.objects"
	awk '$NF < 0 { neg++ } /;site_leak;/ { s += $NF } END { print s + 0, neg + 0 }' "$f.space" "$f.objects"
done >"$TMP/iv.levels"
python3 - "$TMP/iv.levels" "${leaked:-0}" <<'PY'
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
leak, leaked = [r[0] for r in rows if r[0]], int(sys.argv[2])
grows = len(leak) >= 3 and all(b >= a for a, b in zip(leak, leak[1:])) and leak[-1] >= 2 * leak[0]
print(("PASS" if grows else "FAIL") + ": --every: site_leak's inuse_space grows cut over cut %s" % leak)
neg = sum(r[1] for r in rows)
print(("PASS" if not neg else "FAIL") + ": --every: no inuse value below 0 in %d intervals (%d)" % (len(rows), neg))
ok = leak and leaked and abs(leak[-1] - leaked) <= 0.1 * leaked
print(("PASS" if ok else "FAIL") + ": --every: the last cut's site_leak %s is about the %d bytes leaked" % (leak[-1:], leaked))
PY
# --every with one file: the whole recording's inuse_* are the last cut's live heap, not a sum of cuts
"$FIRN" record -e alloc --alloc-rate 4096 --every 0.5 -o "$TMP/w.pb.gz" -- "$FX" 600000 >/dev/null 2>"$TMP/w.err"
leak_check "$TMP/w.pb.gz" "$(sed -n 's/^allocfix: .* leaked \([0-9]*\) .*/\1/p' "$TMP/w.err")" "--every, the whole"

# firn diff as a CI gate on allocated bytes per function: the fixture twice, and once with site_b
# allocating twice its bytes (ALLOCFIX_B_SCALE=2: 23 % -> 37 % of alloc_space). Its significance
# counts the sampled allocations (the profile's period: space/bytes, the rate), not the objects
# they stand for (about 45 times as many at this rate: any wobble of a share was "significant")
# (rate 8192: ~20,000 sampled allocations a run; at 65536's ~2,600 the 99 % interval of
# site_a's 69 % share was +-3.9 pp, so the same program twice was inconclusive against +5 pp in
# about one run in five: +1.34 pp once, between -2.62 and +5.30)
for i in 1 2; do
	"$FIRN" record -e alloc --alloc-rate 8192 -o "$TMP/g$i.pb.gz" -- "$FX" >/dev/null 2>"$TMP/g$i.err"
done
ALLOCFIX_B_SCALE=2 "$FIRN" record -q -e alloc --alloc-rate 8192 -o "$TMP/g3.pb.gz" -- "$FX" >/dev/null 2>&1
sampled=$(sed -n 's/^firn: alloc: \([0-9]*\) allocations sampled.*/\1/p' "$TMP/g1.err")
"$FIRN" diff --json --sample-type alloc_space "$TMP/g1.pb.gz" "$TMP/g2.pb.gz" 2>/dev/null |
	python3 -c 'import json, sys
n, d = int(sys.argv[1] or 0), json.load(sys.stdin)
ev = d["base"]["events"]
ok = n and 0.8 * n <= ev <= 1.25 * n
print(("PASS" if ok else "FAIL") + ": diff: alloc_space stands for %.0f events, the %d allocations sampled" % (ev, n))' "$sampled" \
	|| fail "diff --json of two alloc profiles"
expect_rc "diff gate: site_b allocating twice the bytes trips total:site_b>+5pp (exit 3)" 3 \
	"$FIRN" diff --sample-type alloc_space --fail-on 'total:site_b>+5pp' "$TMP/g1.pb.gz" "$TMP/g3.pb.gz"
grep -q "rule 'total:site_b>+5pp' tripped: site_b" "$TMP/err" && pass "diff gate: the finding names site_b" \
	|| fail "diff gate finding: $(grep tripped "$TMP/err")"
expect_rc "diff gate: the same program twice passes, surely (--strict, any:total>+5pp)" 0 \
	"$FIRN" diff --strict --sample-type alloc_space --fail-on 'total:site_b>+5pp' --fail-on 'any:total>+5pp' \
	"$TMP/g1.pb.gz" "$TMP/g2.pb.gz"

# bad input: frees of pointers never allocated (inside a block, and far from any) and double
# frees, 100,000 of each, over liballocbump.so (whose free checks nothing, so glibc does not
# abort): the process runs to its end, the library fires no probe for them (0 frees of
# untracked pointers), and the estimated total and leak hold
"$FIRN" record -e alloc --alloc-rate 4096 -o "$TMP/bad.pb.gz" -- "$FIX/allocbad" >/dev/null 2>"$TMP/bad.err"
rc=$?
[ $rc -eq 0 ] && grep -q '^allocbad: total' "$TMP/bad.err" && pass "bad frees: the process and the recording end, exit 0" \
	|| fail "bad frees: exit $rc, $(grep -v '^firn: [df]' "$TMP/bad.err" | head -3)"
grep -Eq '^firn: alloc: .*, overflow 0, 0 frees of untracked pointers, lost 0$' "$TMP/bad.err" \
	&& pass "bad frees: none reached the recording (0 untracked, nothing lost)" || fail "bad frees: $(grep alloc: "$TMP/bad.err")"
for t in alloc_space inuse_space; do
	"$FIRN" report --json --top 0 --sample-type $t "$TMP/bad.pb.gz" 2>/dev/null | python3 -c 'import json, sys
try:
    total = json.load(sys.stdin).get("total", 0)
except ValueError:
    total = 0
t, want = sys.argv[1], int(sys.argv[2] or 0)
tol = 0.05 if t == "alloc_space" else max(0.05, 5 / (want / 4096.0) ** 0.5)
ok = want and abs(total - want) <= tol * want
print(("PASS" if ok else "FAIL") + ": bad frees: %s %d within %.1f %% of %d" % (t, total, 100 * tol, want))' \
		$t "$(sed -n "s/^allocbad: total \([0-9]*\) leaked \([0-9]*\)$/\\$([ $t = alloc_space ] && echo 1 || echo 2)/p" "$TMP/bad.err")"
done

# the map of live allocations full (--alloc-live 16): the allocations past it are counted as
# overflow and said in a warning, their frees as untracked; alloc_* still count them all
"$FIRN" record -e alloc --alloc-rate 4096 --alloc-live 16 -o "$TMP/full.pb.gz" -- "$FX" >/dev/null 2>"$TMP/full.err"
rc=$?
read -r live over untracked < <(sed -n 's/^firn: alloc: .* \([0-9]*\) live at end .*, overflow \([0-9]*\), \([0-9]*\) frees of untracked.*/\1 \2 \3/p' "$TMP/full.err")
[ $rc -eq 0 ] && [ "${live:-99}" -le 16 ] && [ "${over:-0}" -gt 1000 ] && [ "${untracked:-0}" -gt 1000 ] \
	&& pass "--alloc-live 16: exit 0, $live live, overflow $over, $untracked untracked frees" \
	|| fail "--alloc-live 16: exit $rc, $(grep alloc: "$TMP/full.err")"
grep -q "^firn: warning: alloc: $over sampled allocations not followed to their free" "$TMP/full.err" \
	&& pass "--alloc-live 16: the warning says how many were not followed" || fail "no overflow warning: $(grep warning "$TMP/full.err")"
grep -q "not followed to their free" "$TMP/rec.err" && fail "an overflow warning at the default size" || pass "no overflow warning at the default size"
truth=$(sed -n 's/^allocfix: total \([0-9]*\) .*/\1/p' "$TMP/full.err")
"$FIRN" report --json --top 0 --sample-type alloc_space "$TMP/full.pb.gz" 2>/dev/null | python3 -c 'import json, sys
total, want = json.load(sys.stdin).get("total", 0), int(sys.argv[1] or 0)
ok = want and abs(total - want) <= 0.05 * want
print(("PASS" if ok else "FAIL") + ": --alloc-live 16: alloc_space %d within 5 %% of %d" % (total, want))' "$truth" \
	|| fail "--alloc-live 16: no alloc_space to read"

# every sample type read by go tool pprof
if command -v go >/dev/null; then
	types=$(go tool pprof -raw "$TMP/a.pb.gz" 2>/dev/null | grep -A1 '^Samples:' | tail -1)
	[ "$types" = "alloc_objects/count[dflt] alloc_space/bytes inuse_objects/count inuse_space/bytes" ] \
		&& pass "sample types: $types" || fail "sample types: $types"
	for t in alloc_objects:site_a alloc_space:site_a inuse_objects:site_leak inuse_space:site_leak; do
		go tool pprof -sample_index=${t%:*} -top "$TMP/a.pb.gz" 2>/dev/null | grep -q " ${t#*:}\$" \
			&& pass "go tool pprof -sample_index=${t%:*} reads it (${t#*:})" || fail "go tool pprof -sample_index=$t"
	done
else
	skip "go tool pprof: no go"
fi

# the rest of the family: posix_memalign, aligned_alloc, memalign, valloc, realloc (a free and an
# allocation), reallocarray, 100 blocks of 64 KiB each (every one sampled at 4096, weight 64 KiB:
# exact sums, but for a miss in e^16); by_realloc's 64 KiB mallocs grow to 128 KiB; only
# by_valloc's last block is live at the end.
"$FIRN" record -e alloc --alloc-rate 4096 -o "$TMP/f.pb.gz" -- "$FX" family >/dev/null 2>"$TMP/f.err"
grep -q ' 0 frees of untracked pointers, lost 0$' "$TMP/f.err" && pass "family: no untracked frees, nothing lost" \
	|| fail "family: $(grep alloc: "$TMP/f.err")"
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
    print(("PASS" if ok else "FAIL") + ": family: %s allocated %d bytes (want %d)" % (name, got, w))
total, inuse = totals(sys.argv[2])
ok = total == 65536 and inuse.get("by_valloc") == 65536
print(("PASS" if ok else "FAIL") + ": family: inuse_space is by_valloc's last 64 KiB block (%d, %s)" % (total, inuse))
PY

# -p: a process started with the library preloaded, recorded for a second of its run
LD_PRELOAD="$ROOT/$BUILD/libfirn-alloc.so" FIRN_ALLOC_RATE=4096 "$FX" 5000000 2>/dev/null &
fx=$!
sleep 0.3
"$FIRN" record -e alloc -p "$fx" -d 1 -o "$TMP/p.pb.gz" >/dev/null 2>"$TMP/p.err"
kill "$fx" 2>/dev/null; wait "$fx" 2>/dev/null
"$FIRN" report --json --top 0 --sample-type alloc_space "$TMP/p.pb.gz" 2>/dev/null | python3 -c '
import json, math, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    print("FAIL: -p: no profile to read"); sys.exit(0)
total = d.get("total", 0)
a = sum(r["total"] for r in d["functions"] if r["name"] == "site_a")
n = total / 4096.0
tol = max(5 * math.sqrt(0.6931 * 0.3069 / n), 0.01) if n else 0
ok = n > 1000 and abs(a / total - 0.6931) <= tol
print(("PASS" if ok else "FAIL") + ": -p: site_a holds %.2f %% of %.0f MB allocated in the second (true 69.31 %%, +-%.2f pp)"
      % (100.0 * a / (total or 1), total / 1e6, 100 * tol))'

# a static program: the library cannot interpose its malloc; no sample, and a warning says why
"$FIRN" record -e alloc --alloc-rate 4096 -o "$TMP/s.pb.gz" -- "$FIX/allocfix-static" 1000 >/dev/null 2>"$TMP/s.err"
rc=$?
[ $rc -eq 0 ] && grep -q "^firn: warning: no hits for 'alloc': no process of the recording was seen mapping '.*libfirn-alloc.so'" "$TMP/s.err" \
	&& pass "static program: exit 0 and the warning that nothing mapped libfirn-alloc.so" \
	|| fail "static program: exit $rc, $(grep -v '^firn: [df]' "$TMP/s.err")"
grep -q "no hits" "$TMP/rec.err" && fail "a warning for the dynamic fixture" || pass "no such warning for the dynamic fixture"

# firn top -e alloc: the command preloaded as for record; the last table's site_a share of
# alloc_space and the header's rate in bytes/s
timeout 120 "$FIRN" top -e alloc --alloc-rate 4096 --stdio --sample-type alloc_space -d 1 -n 2 -- \
	"$FX" 3000000 >"$TMP/top.out" 2>"$TMP/top.err"
share=$(awk '$NF == "site_a" { s = $2 } END { print s }' "$TMP/top.out")
awk -v s="${share:-0}" 'BEGIN { exit !(s >= 68.31 && s <= 70.31) }' \
	&& pass "top -e alloc: site_a holds $share % of alloc_space (true 69.31 %, +-1 pp)" \
	|| { fail "top -e alloc: site_a '$share'"; tail -3 "$TMP/top.err"; }
grep -q "showing alloc_space (bytes) .*" "$TMP/top.out" && grep -Eq "^[0-9]+ bytes/s" "$TMP/top.out" \
	&& pass "top -e alloc: the header shows alloc_space and its rate in bytes/s" \
	|| fail "top -e alloc header: $(grep -m2 'firn top\|/s' "$TMP/top.out")"

# the rate reaches the command; the library is preloaded first
"$FIRN" record -q -e alloc --alloc-rate 12345 -o "$TMP/b.pb.gz" -- sh -c 'echo "$FIRN_ALLOC_RATE $LD_PRELOAD"' >"$TMP/env.out" 2>&1
grep -q "^12345 .*libfirn-alloc.so" "$TMP/env.out" && pass "FIRN_ALLOC_RATE and LD_PRELOAD set for the command" \
	|| fail "command environment: $(cat "$TMP/env.out")"
