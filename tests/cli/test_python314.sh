# CPython 3.14 by function name, on a real 3.14: Debian unstable's python3.14, in a root the
# tests make with mmdebstrap and keep (tests/cli/sid_root.sh; skipped with the reason where it
# cannot be made), run as `chroot ROOT python3.14 ...`. The offsets come from the interpreter's
# own _Py_DebugOffsets; its _PyEval_EvalFrameDefault keeps its instruction loop in a cold part
# (GCC's hot/cold split), found through .eh_frame.
#  - the Parca seed's workload (pymix.py: sleep_a:sleep_b sleep 1:2, burn_a:burn_b burn CPU
#    2:1), `-e cpu-clock -e off-cpu`: the cpu type's burn_a:burn_b and the off_cpu type's
#    sleep_b:sleep_a within ±10 % of what the fixture's own clocks measured, enough samples for
#    the CPU it got; >= 95 % of each under `PyEval_EvalCode;<module>;main` (the Python frames
#    stand where the interpreter's native frame was, not after the native stack); the summary
#    counts 1 process and no unknown version;
#  - `python3.14 -m json.tool` over an 11 MB file: >= 99 % of the Python frames named (a frame
#    of the [python] mapping without a function is an unnamed one; frozen modules' files are
#    "<frozen runpy>": a name is what counts);
#  - a 150-deep recursion (pymix.py deep: outer -> 150 x down -> leaf, 2 s of CPU in leaf):
#    outer's inclusive share >= 95 % of the samples, enough in leaf for the CPU it got;
#  - `-p` on a 3.14 already running: burn_a and burn_b named under main;
#  - `-a`: a 3.14 started during a system-wide recording: >= 90 % of its samples under <module>
#    (as test_python asks of 3.11);
#  - `top --stdio` shows burn_a and burn_b as [python] rows; `--every` intervals name them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sid_root.sh"

if ! is_root; then skip "recording tests need root"; exit 0; fi
if ! SID=$(sid_root); then skip "python 3.14: $SID"; exit 0; fi
STACKS="$ROOT/tests/fixtures/pprof_stacks.py"
# the fixtures, copied into the root (its /tmp), gone with $TMP
IN=$(mktemp -d "$SID/tmp/firn-test.XXXXXX")
trap 'rm -rf "$TMP" "$IN"' EXIT
cp "$ROOT/tests/fixtures/pymix.py" "$IN/"
AT=${IN#"$SID"} # the same folder as the chroot sees it
PY="chroot $SID python3.14"

# mix_check FOLDED_CPU FOLDED_OFF CLOCKS FLOOR: the shares of the two types against the clocks
mix_check() {
	python3 - "$@" <<'PY'
import sys
def load(path):
    fn, under = {}, {}
    for row in open(path):
        if row.startswith("#"):
            continue
        stack, n = row.rsplit(" ", 1)
        names = stack.split(";")
        for f in ("burn_a", "burn_b", "sleep_a", "sleep_b"):
            if f in names:
                fn[f] = fn.get(f, 0) + int(n)
                if ";PyEval_EvalCode;<module>;main;" + f in stack:
                    under[f] = under.get(f, 0) + int(n)
    return fn, under
def out(ok, msg): print(("PASS: " if ok else "FAIL: ") + "python 3.14: " + msg)
cpu, cu = load(sys.argv[1])
off, ou = load(sys.argv[2])
clk = open(sys.argv[3]).read().split()
real = dict(zip(clk[0::2], map(int, clk[1::2]))) if len(clk) == 8 else {}
floor = int(sys.argv[4])
out(len(real) == 4, "the fixture printed its clocks (%s)" % " ".join(clk))
if len(real) == 4:
    truth = real["burn_a"] / real["burn_b"]
    got = cpu.get("burn_a", 0) / max(cpu.get("burn_b", 0), 1)
    out(abs(got / truth - 1) <= 0.1, "cpu burn_a:burn_b = %.3f:1, the fixture's own %.3f:1 within 10%%" % (got, truth))
    truth = real["sleep_b"] / real["sleep_a"]
    got = off.get("sleep_b", 0) / max(off.get("sleep_a", 0), 1)
    out(abs(got / truth - 1) <= 0.1, "off_cpu sleep_b:sleep_a = %.3f:1, the fixture's own %.3f:1 within 10%%" % (got, truth))
    for f in ("sleep_a", "sleep_b"):
        t = real[f] / 1e9
        out(abs(off.get(f, 0) / 1e9 / t - 1) <= 0.1, "%s off the CPU %.3f s, the fixture's own %.3f s within 10%%" % (f, off.get(f, 0) / 1e9, t))
burns = cpu.get("burn_a", 0) + cpu.get("burn_b", 0)
ns = 1e9 / 999  # a cpu-clock sample's weight in the cpu type at -F 999
out(burns / ns >= floor, "%d samples in burn_a and burn_b (>= %d for the CPU time the run got)" % (burns / ns, floor))
for f, d, u in (("burn_a", cpu, cu), ("burn_b", cpu, cu), ("sleep_a", off, ou), ("sleep_b", off, ou)):
    out(d.get(f, 0) > 0 and u.get(f, 0) >= 0.95 * d[f],
        "%s under PyEval_EvalCode;<module>;main in %.1f%% of its time (>= 95%%)" % (f, 100.0 * u.get(f, 0) / max(d.get(f, 0), 1)))
PY
}

"$FIRN" record -F 999 -e cpu-clock -e off-cpu -o "$TMP/mix.pb.gz" -- \
	sh "$CPUTIME" "$TMP/mix.cpu" $PY "$AT/pymix.py" 2 >"$TMP/mix.out" 2>"$TMP/mix.err" ||
	{ fail "python 3.14: record exit $?"; tail -3 "$TMP/mix.err"; }
grep "firn: python:" "$TMP/mix.err" | sed "s/^/# /"
grep -q "firn: python: 1 process, .*; unknown version 0$" "$TMP/mix.err" &&
	pass "python 3.14: the summary counts one process, no unknown version" ||
	fail "python 3.14: summary: $(grep 'firn: python' "$TMP/mix.err")"
"$FIRN" report --folded --sample-type cpu "$TMP/mix.pb.gz" >"$TMP/mix-cpu.folded"
"$FIRN" report --folded --sample-type off_cpu "$TMP/mix.pb.gz" >"$TMP/mix-off.folded"
mix_check "$TMP/mix-cpu.folded" "$TMP/mix-off.folded" "$TMP/mix.out" "$(sample_floor "$TMP/mix.cpu" 999 80)"

# named_check PROFILE: Python frames named (a function with a .py file) among the frames of the
# [python] mapping, each sample's frames counted with its count; PASS/FAIL
named_check() {
	python3 - "$1" <<'PY'
import gzip, sys
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        if k & 7 == 0:
            v, i = varint(b, i)
        elif k & 7 == 2:
            n, i = varint(b, i); v, i = b[i:i + n], i + n
        elif k & 7 == 1:
            v, i = b[i:i + 8], i + 8
        else:
            v, i = b[i:i + 4], i + 4
        yield k >> 3, k & 7, v
def ints(wt, v):
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i); out.append(x)
    return out
data = gzip.open(sys.argv[1]).read()
strs, maps, locs, funcs, samples = [], {}, {}, {}, []
for num, wt, v in fields(data):
    if num == 6: strs.append(v.decode())
    elif num == 2: samples.append(v)
    elif num == 3:
        m = dict((a, c) for a, _, c in fields(v)); maps[m.get(1, 0)] = m.get(5, 0)
    elif num == 4:
        lid = mid = 0; fids = []
        for a, w, c in fields(v):
            if a == 1: lid = c
            elif a == 2: mid = c
            elif a == 4: fids.append(dict((x, z) for x, _, z in fields(c)).get(1, 0))
        locs[lid] = (mid, fids)
    elif num == 5:
        f = dict((a, c) for a, _, c in fields(v)); funcs[f.get(1, 0)] = (f.get(2, 0), f.get(4, 0))
py = named = 0
for s in samples:
    ids, n = [], 0
    for a, w, v in fields(s):
        if a == 1: ids += ints(w, v)
        elif a == 2 and not n: n = ints(w, v)[0]
    for lid in ids:
        mid, fids = locs.get(lid, (0, []))
        if strs[maps.get(mid, 0)] != "[python]":
            continue
        py += n
        names = [strs[funcs.get(f, (0, 0))[0]] for f in fids]
        named += n if names and all(x and not x.startswith("[") for x in names) else 0
print("# python 3.14 json.tool: %d of %d Python frames named" % (named, py))
ok = py >= 2000 and named >= 0.99 * py
print(("PASS: " if ok else "FAIL: ") + "python 3.14 -m json.tool: %.2f%% of %d Python frames named (>= 99 %%, >= 2000 frames)" % (100.0 * named / max(py, 1), py))
PY
}

python3 -c '
import json, random, sys
r = random.Random(1)
json.dump([{"id": i, "name": "n%d" % i, "tags": [r.random() for _ in range(5)], "sub": {"a": [1, 2, {"b": "x" * 10}]}}
           for i in range(60000)], open(sys.argv[1], "w"))' "$IN/big.json"
"$FIRN" record -F 999 -o "$TMP/json.pb.gz" -- $PY -m json.tool "$AT/big.json" /dev/null 2>"$TMP/json.err" ||
	{ fail "python 3.14 -m json.tool: record exit $?"; tail -3 "$TMP/json.err"; }
named_check "$TMP/json.pb.gz"

# a 150-deep recursion: outer -> 150 x down -> leaf, 2 s of CPU in leaf
"$FIRN" record -F 499 -o "$TMP/deep.pb.gz" -- sh "$CPUTIME" "$TMP/deep.cpu" $PY "$AT/pymix.py" deep 150 2 \
	2>"$TMP/deep.err" || { fail "python 3.14 deep: record exit $?"; tail -3 "$TMP/deep.err"; }
read -r all outer leaf <<<"$("$FIRN" report --folded "$TMP/deep.pb.gz" |
	awk '!/^#/ { a += $NF; if (/;outer;/) o += $NF; if (/;leaf( |;)/) d += $NF } END { print a + 0, o + 0, d + 0 }')"
floor=$(sample_floor "$TMP/deep.cpu" 499 80)
[ "$leaf" -ge "$floor" ] && [ $((outer * 100)) -ge $((all * 95)) ] &&
	pass "python 3.14: a 150-deep recursion: outer's inclusive share $outer of $all samples (>= 95 %), $leaf in leaf (>= $floor)" ||
	fail "python 3.14: a 150-deep recursion: outer in $outer of $all samples, leaf in $leaf (floor $floor)"

# -p: a 3.14 started before the recording
$PY "$AT/pymix.py" 2.5 >/dev/null &
pid=$!
sleep 0.5
target=$(pgrep -P "$pid" -x python3.14 || echo "$pid")
"$FIRN" record -F 999 -p "$target" -d 1.5 -o "$TMP/p.pb.gz" 2>"$TMP/p.err"
wait "$pid"
"$FIRN" report --folded "$TMP/p.pb.gz" | awk '/;<module>;main;burn_a/ { a += $NF } /;<module>;main;burn_b/ { b += $NF } END { print a + 0, b + 0 }' >"$TMP/p.n"
read -r a b <"$TMP/p.n"
[ "$a" -ge 100 ] && [ "$b" -ge 50 ] &&
	pass "python 3.14 -p: burn_a ($a) and burn_b ($b) named under <module> -> main" ||
	fail "python 3.14 -p: burn_a $a, burn_b $b samples under <module> -> main; $(grep 'firn: python' "$TMP/p.err")"

# -a: a 3.14 started during a system-wide recording
"$FIRN" record -a -F 499 -d 4 -o "$TMP/all.pb.gz" 2>"$TMP/all.err" &
fp=$!
wait_recording "$fp" # not a fixed sleep: a loaded machine's verifier can take longer
sleep 0.2
$PY "$AT/pymix.py" 1 >/dev/null
wait "$fp"
read -r tot mod <<<"$("$FIRN" report --folded --comm python3.14 "$TMP/all.pb.gz" |
	awk '!/^#/ { t += $NF } /;<module>;/ { m += $NF } END { print t + 0, m + 0 }')"
check "python 3.14 -a: a 3.14 started during the recording: <module> in $mod of $tot samples (>= 90 %)" \
	test "$tot" -ge 200 -a $((mod * 100)) -ge $((tot * 90))

# top: the functions of a 3.14, live, as report names them (burn_a leads: twice burn_b's work)
timeout 90 "$FIRN" top --stdio -n 3 -d 1 --rows 0 -- $PY "$AT/pymix.py" 3 >"$TMP/top.txt" 2>&1
check "python 3.14 top --stdio: burn_a and burn_b are [python] rows: $(grep -m2 -E '\[python\] +burn_[ab]$' "$TMP/top.txt" | tr -s ' ' | tr '\n' '|')" \
	test "$(grep -cE '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +\[python\] +burn_[ab]$' "$TMP/top.txt")" -ge 2

# continuous: intervals of a 3.14 (--every) each name its functions; their sum holds both burns
mkdir -p "$TMP/iv"
"$FIRN" record -q -F 499 --every 1 -o "$TMP/iv/iv-%s.pb.gz" -- $PY "$AT/pymix.py" 2 >/dev/null 2>"$TMP/iv.err"
n=$(ls "$TMP/iv" | wc -l)
read -r named tot <<<"$(for f in "$TMP"/iv/*.pb.gz; do "$FIRN" report --folded "$f"; done |
	awk '!/^#/ { t += $NF } /;burn_[ab](;|$)/ { m += $NF } END { print m + 0, t + 0 }')"
check "python 3.14 --every: $n intervals, burn_a/burn_b in $named of $tot samples (>= 50 %)" \
	test "$n" -ge 2 -a "$tot" -gt 0 -a $((named * 2)) -ge "$tot"
