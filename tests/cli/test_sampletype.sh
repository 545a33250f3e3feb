# --sample-type in firn report and firn diff, on saved profiles with several sample types (no root
# needed: tests/fixtures/types_pprof.py writes them): which functions and which shares and values
# each type gives in the table, JSON, folded, SVG and pprof outputs, the units shown (ms, s),
# exit 2 and the one-line message for an unknown type, go tool pprof -sample_index agreeing with
# firn's numbers, and diff's gates on times (off_cpu) over their events.
. "$(dirname "$0")/lib.sh"

SRC="$ROOT/tests/fixtures"
cd "$TMP" || exit 1

# fixture: 10 rounds of sleep_a 100 ms, sleep_b 200 ms, read_pipe 300 ms (off-CPU), spin 100 ms
if ! python3 "$SRC/types_pprof.py" types.pb.gz || ! python3 "$SRC/types_pprof.py" deflt.pb.gz \
	--default off_cpu; then
	fail "types_pprof.py writes the fixtures"
	exit 0
fi
cp "$SRC/simple.folded" simple.folded

# json_is NAME PYTHON ARGS...: firn report --json --top 0 ARGS exits 0, and PYTHON's asserts hold
# on d (the document) and f (name -> row)
json_is() {
	local name=$1 py=$2; shift 2
	"$FIRN" report --json --top 0 "$@" >out.json 2>err
	local rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name (exit $rc)"; head -3 err | sed 's/^/    stderr: /'; return
	fi
	python3 -c '
import json, sys
d = json.load(open("out.json"))
f = {x["name"]: x for x in d["functions"]}
def near(a, b): return abs(a - b) < 0.005
'"$py" && pass "$name" || fail "$name"
}

# ---- report: each type's functions, shares and values ----
json_is "report: default type is samples (no zero rows of other types)" '
assert d["sample_type"] == "samples" and d["unit"] == "count" and d["total"] == 100, d
assert sorted(f) == ["main", "spin"], sorted(f)
assert f["spin"]["self"] == 100 and f["main"]["total"] == 100
' types.pb.gz
json_is "report --sample-type cpu: 1 s of spin" '
assert d["sample_type"] == "cpu" and d["unit"] == "nanoseconds" and d["total"] == 10**9, d
assert sorted(f) == ["main", "spin"] and f["spin"]["self"] == 10**9
' --sample-type cpu types.pb.gz
for t in off_cpu 3; do
	json_is "report --sample-type $t: off-CPU shares 1/6, 2/6, 3/6" '
assert d["sample_type"] == "off_cpu" and d["total"] == 6 * 10**9, d
assert "spin" not in f, sorted(f)
assert f["do_nanosleep"]["self"] == 3 * 10**9 and f["pipe_read"]["self"] == 3 * 10**9
assert near(f["sleep_a"]["total_pct"], 100 / 6) and near(f["sleep_b"]["total_pct"], 200 / 6)
assert near(f["read_pipe"]["total_pct"], 50) and f["read_pipe"]["self"] == 0
' --sample-type $t types.pb.gz
done
json_is "report --sample-type wall: 1/7, 2/7, 3/7, 1/7" '
assert d["sample_type"] == "wall" and d["total"] == 7 * 10**9, d
assert near(f["sleep_a"]["total_pct"], 100 / 7) and near(f["sleep_b"]["total_pct"], 200 / 7)
assert near(f["read_pipe"]["total_pct"], 300 / 7) and near(f["spin"]["self_pct"], 100 / 7)
' --sample-type wall types.pb.gz
json_is "report --sample-type usdt_app_tick: 10 hits in spin" '
assert d["sample_type"] == "usdt_app_tick" and d["total"] == 10 and f["spin"]["self"] == 10, d
' --sample-type usdt_app_tick types.pb.gz
json_is "report --json lists the types, the default and the chosen one" '
t = d["sample_types"]
assert [(x["index"], x["name"], x["unit"]) for x in t] == [(0, "samples", "count"),
    (1, "cpu", "nanoseconds"), (2, "waits", "count"), (3, "off_cpu", "nanoseconds"),
    (4, "wall", "nanoseconds"), (5, "usdt_app_tick", "count")], t
assert [x["default"] for x in t] == [True] + [False] * 5, t
assert [x["chosen"] for x in t] == [False] * 4 + [True, False], t
' --sample-type 4 types.pb.gz
json_is "report: the profile's default_sample_type is the default" '
assert d["sample_type"] == "off_cpu" and d["total"] == 6 * 10**9, d
assert [x["default"] for x in d["sample_types"]] == [False] * 3 + [True, False, False]
' deflt.pb.gz
json_is "report --sample-type samples overrides the profile's default" '
assert d["sample_type"] == "samples" and d["total"] == 100, d
' --sample-type samples deflt.pb.gz
json_is "report --sample-type with --pid (the filtered profile sums the same type)" '
assert d["sample_type"] == "off_cpu" and d["total"] == 6 * 10**9, d
' --sample-type off_cpu --pid 4242 types.pb.gz

# the table says the unit: times in ms (s from 10 s on), counts as they are
"$FIRN" report --sample-type off_cpu types.pb.gz >table 2>err
cat >want <<'EOF'
# types.pb.gz: 6,000.0 ms off_cpu (cpu-clock,off-cpu), 1 process
  self%  total%  off_cpu ms  module             function
  50.00   50.00      3000.0  [kernel.kallsyms]  do_nanosleep
  50.00   50.00      3000.0  [kernel.kallsyms]  pipe_read
   0.00  100.00         0.0  app                main
   0.00   50.00         0.0  app                read_pipe
   0.00   16.67         0.0  app                sleep_a
   0.00   33.33         0.0  app                sleep_b
EOF
cmp -s want table && [ ! -s err ] && pass "report --sample-type off_cpu: the table in ms" \
	|| { fail "report --sample-type off_cpu: the table in ms"; diff want table | head; }
python3 "$SRC/types_pprof.py" long.pb.gz --rounds 100
"$FIRN" report --sample-type wall --top 1 long.pb.gz >table 2>err
printf '%s\n' '# long.pb.gz: 70.000 s wall (cpu-clock,off-cpu), 1 process' \
	'  self%  total%  wall s  module             function' \
	'  42.86   42.86  30.000  [kernel.kallsyms]  do_nanosleep' >want
cmp -s want table && pass "report --sample-type wall: seconds from 10 s on" \
	|| { fail "report --sample-type wall: seconds from 10 s on"; diff want table | head; }
"$FIRN" report --sample-type usdt_app_tick types.pb.gz | head -2 >table
printf '%s\n' '# types.pb.gz: 10 usdt_app_tick (cpu-clock,off-cpu), 1 process' \
	'  self%  total%  usdt_app_tick  module  function' >want
cmp -s want table && pass "report: a count type's table as it was" \
	|| { fail "report: a count type's table as it was"; diff want table | head; }

# folded, SVG and pprof outputs sum the chosen type
"$FIRN" report --folded --sample-type off_cpu types.pb.gz >got
cat >want <<'EOF'
# firn folded stacks: the first frame is the process name
app;main;read_pipe;pipe_read_[k] 3000000000
app;main;sleep_a;do_nanosleep_[k] 1000000000
app;main;sleep_b;do_nanosleep_[k] 2000000000
EOF
cmp -s want got && pass "report --folded --sample-type off_cpu" \
	|| { fail "report --folded --sample-type off_cpu"; diff want got | head; }
"$FIRN" report --folded --sample-type wall --pid 4242 types.pb.gz | grep -c '^app;' | grep -qx 4 \
	&& pass "report --folded --sample-type wall --pid: 4 stacks" || fail "report --folded --sample-type wall --pid"
"$FIRN" report --svg --sample-type wall types.pb.gz >wall.svg 2>err
grep -q '>Flame Graph: wall (ms)</text>' wall.svg && pass "report --svg: the title names the type and unit" \
	|| fail "report --svg: the title names the type and unit"
grep -q '<title>spin (1000.0 ms, 14.29%)</title>' wall.svg && grep -q '<title>sleep_b (2000.0 ms, 28.57%)</title>' wall.svg \
	&& pass "report --svg: tooltips in ms" || fail "report --svg: tooltips in ms: $(grep -o '<title>spin[^<]*' wall.svg)"
"$FIRN" report --svg --sample-type wall --title T types.pb.gz | grep -q '>T</text>' \
	&& pass "report --svg --title: the given title stays" || fail "report --svg --title: the given title stays"
"$FIRN" report --svg types.pb.gz | grep -q '>Flame Graph</text>' \
	&& pass "report --svg: samples keep flamegraph.pl's title" || fail "report --svg: samples' title"
"$FIRN" report --pprof --sample-type off_cpu -o chosen.pb.gz types.pb.gz
json_is "report --pprof --sample-type: all types kept, the chosen one the default" '
assert d["sample_type"] == "off_cpu" and d["total"] == 6 * 10**9, d
assert len(d["sample_types"]) == 6 and d["sample_types"][3]["default"], d["sample_types"]
' chosen.pb.gz

# ---- report: unknown types are usage errors with the list of types ----
# bad_type NAME SPEC FILE MESSAGE: exit 2, nothing on stdout, exactly the one line MESSAGE
bad_type() {
	expect_rc "$1: exit 2" 2 "$FIRN" report --sample-type "$2" "$3"
	[ ! -s "$TMP/out" ] && [ "$(cat "$TMP/err")" = "$4" ] && pass "$1: one line" \
		|| fail "$1: stderr '$(cat "$TMP/err")', wanted '$4'"
}
types='it has 0 samples/count, 1 cpu/nanoseconds, 2 waits/count, 3 off_cpu/nanoseconds, 4 wall/nanoseconds, 5 usdt_app_tick/count'
bad_type "report --sample-type bogus" bogus types.pb.gz "firn report: no sample type 'bogus' in 'types.pb.gz': $types"
bad_type "report --sample-type 6 (out of range)" 6 types.pb.gz "firn report: no sample type '6' in 'types.pb.gz': $types"
bad_type "report --sample-type -1" -1 types.pb.gz "firn report: no sample type '-1' in 'types.pb.gz': $types"
bad_type "report --sample-type TYPE/UNIT" off_cpu/nanoseconds types.pb.gz \
	"firn report: no sample type 'off_cpu/nanoseconds' in 'types.pb.gz': $types"
bad_type "report --sample-type cpu of folded text" cpu simple.folded \
	"firn report: no sample type 'cpu' in 'simple.folded': it has 0 samples/count"
for m in --folded --svg --pprof; do
	expect_rc "report $m --sample-type bogus: exit 2" 2 "$FIRN" report $m -o x --sample-type bogus types.pb.gz
done
[ ! -e x ] && pass "report: no output file for an unknown type" || fail "report: output file for an unknown type"

# ---- go tool pprof -sample_index agrees: each function's flat and cum values and shares ----
if command -v go >/dev/null && go tool pprof -h >/dev/null 2>&1; then
	for t in samples cpu 1 off_cpu 3 wall usdt_app_tick; do
		"$FIRN" report --json --top 0 --sample-type $t long.pb.gz >firn.json
		go tool pprof -sample_index=$t -unit=ns -top -nodecount=100 long.pb.gz >pprof.top 2>pprof.err
		python3 - <<'EOF' && pass "go tool pprof -sample_index=$t agrees with firn" || fail "go tool pprof -sample_index=$t agrees with firn"
import json, re
d = json.load(open("firn.json"))
rows = {}
for line in open("pprof.top"):
    m = re.match(r"\s*(\d+)\w*\s+([\d.]+)%\s+[\d.]+%\s+(\d+)\w*\s+([\d.]+)%\s+(\S+)$", line)
    if m:
        rows[m.group(5)] = (int(m.group(1)), float(m.group(2)), int(m.group(3)), float(m.group(4)))
assert sorted(rows) == sorted(x["name"] for x in d["functions"]), (sorted(rows), d["functions"])
for x in d["functions"]:
    flat, flatp, cum, cump = rows[x["name"]]
    assert (flat, cum) == (x["self"], x["total"]), (x, rows[x["name"]])
    assert abs(flatp - x["self_pct"]) < 0.006 and abs(cump - x["total_pct"]) < 0.006, (x, rows[x["name"]])
EOF
	done
	go tool pprof -top chosen.pb.gz 2>/dev/null | grep -qx 'Type: off_cpu' \
		&& pass "go tool pprof shows --pprof --sample-type's choice first" \
		|| fail "go tool pprof shows --pprof --sample-type's choice first"
else
	skip "go tool pprof -sample_index: no go"
fi

# ---- diff: the chosen type on both sides, gates on times ----
# base and new over 100 rounds; new waits 600 ms on the pipe (off-CPU shares 1/9, 2/9, 6/9) and
# spends 60 ms a round in parse
python3 "$SRC/types_pprof.py" base.pb.gz --rounds 100
python3 "$SRC/types_pprof.py" new.pb.gz --rounds 100 --pipe 600 --parse 6
python3 "$SRC/types_pprof.py" base_nw.pb.gz --rounds 100 --no-waits
python3 "$SRC/types_pprof.py" new_nw.pb.gz --rounds 100 --pipe 600 --parse 6 --no-waits

# diff_json NAME PYTHON ARGS...: firn diff --json ARGS (any exit status but 1 and 2), PYTHON's
# asserts on d (the document), f (name -> row) and rc
diff_json() {
	local name=$1 py=$2; shift 2
	"$FIRN" diff --json --top 0 "$@" >out.json 2>err
	local rc=$?
	if [ $rc -eq 1 ] || [ $rc -eq 2 ]; then
		fail "$name (exit $rc)"; head -3 err | sed 's/^/    stderr: /'; return
	fi
	RC=$rc python3 -c '
import json, os
rc = int(os.environ["RC"])
d = json.load(open("out.json"))
f = {x["name"]: x for x in d["functions"]}
def near(a, b, e=0.005): return abs(a - b) < e
'"$py" && pass "$name" || fail "$name"
}

diff_json "diff: samples by default" '
assert d["sample_type"] == "samples" and d["base"]["total"] == 1000 and d["new"]["total"] == 1600, d
assert d["base"]["events"] == 1000 and "read_pipe" not in f
' base.pb.gz new.pb.gz
diff_json "diff --sample-type off_cpu: shares and events (Kish, from the waits)" '
assert d["sample_type"] == "off_cpu" and d["unit"] == "nanoseconds", d
assert d["base"]["total"] == 60 * 10**9 and d["new"]["total"] == 90 * 10**9, d
# 100 rounds of waits of 100, 200 and 300 ms: (600)^2 / (100^2 + 200^2 + 300^2) per round
assert near(d["base"]["events"], 100 * 360000 / 140000, 1e-6), d["base"]
assert near(d["new"]["events"], 100 * 810000 / 410000, 1e-6), d["new"]
t = f["read_pipe"]["total"]
assert near(t["base_pct"], 50) and near(t["new_pct"], 200 / 3) and t["significant"], t
assert near(f["sleep_a"]["total"]["new_pct"], 100 / 9), f["sleep_a"]
' --sample-type off_cpu base.pb.gz new.pb.gz
diff_json "diff: the default_sample_type both profiles name is the default" '
assert d["sample_type"] == "off_cpu", d["sample_type"]
' deflt.pb.gz deflt.pb.gz
diff_json "diff: defaults that differ fall back to samples" '
assert d["sample_type"] == "samples", d["sample_type"]
' deflt.pb.gz types.pb.gz

# the gate on off_cpu trips on the pipe's +16.67 pp; cpu decides exactly as samples
expect_rc "diff --sample-type off_cpu --fail-on total:read_pipe>+5pp: exit 3 (tripped)" 3 \
	"$FIRN" diff --sample-type off_cpu --fail-on 'total:read_pipe>+5pp' base.pb.gz new.pb.gz
grep -q "^firn diff: rule 'total:read_pipe>+5pp' tripped: read_pipe (app) total 50.00% -> 66.67%, +16.67pp, between +" "$TMP/err" \
	&& pass "diff --sample-type off_cpu: the tripped rule on stderr" \
	|| { fail "diff --sample-type off_cpu: the tripped rule on stderr"; head -3 "$TMP/err"; }
head -2 "$TMP/out" >got
printf '%s\n' '# base: base.pb.gz: 60.000 s off_cpu (257 events)' \
	'# new:  new.pb.gz: 90.000 s off_cpu (198 events)' >want
cmp -s want got && pass "diff --sample-type off_cpu: header lines in s with the events" \
	|| { fail "diff --sample-type off_cpu: header lines"; diff want got; }
expect_rc "diff --sample-type off_cpu --fail-on 'total:read_pipe>+40pp': exit 0 (passed)" 0 \
	"$FIRN" diff --sample-type off_cpu --fail-on 'total:read_pipe>+40pp' base.pb.gz new.pb.gz
expect_rc "diff --sample-type off_cpu --fail-on 'total:sleep_b<-1pp': exit 3 (shrink)" 3 \
	"$FIRN" diff --sample-type off_cpu --fail-on 'total:sleep_b<-1pp' base.pb.gz new.pb.gz
# sleep_a's -5.56 pp over about 257 and 198 events cannot be told from -2 pp
expect_rc "diff --sample-type off_cpu --strict --fail-on 'total:sleep_a<-2pp': exit 4 (too few events)" 4 \
	"$FIRN" diff --sample-type off_cpu --strict --fail-on 'total:sleep_a<-2pp' base.pb.gz new.pb.gz
# without a count of the waits each stack is one event: 3 a side, nothing can be decided
expect_rc "diff --sample-type off_cpu --strict without waits: exit 4 (inconclusive)" 4 \
	"$FIRN" diff --sample-type off_cpu --strict --fail-on 'total:read_pipe>+5pp' base_nw.pb.gz new_nw.pb.gz
grep -q "too few events to tell from +5.00pp (60.000 s base and 90.000 s new, as many as 3 and 2 events)" "$TMP/err" \
	&& pass "diff: the inconclusive rule in s and events" || { fail "diff: the inconclusive rule in s and events"; head -3 "$TMP/err"; }
for t in samples cpu; do
	"$FIRN" diff --json --sample-type $t --fail-on 'self:parse>+30pp' base.pb.gz new.pb.gz >$t.json 2>/dev/null
done
python3 -c '
import json
s, c = (json.load(open(t + ".json"))["gate"]["rules"][0] for t in ("samples", "cpu"))
assert s["verdict"] == c["verdict"] == "tripped", (s, c)
assert s["tripped"] == c["tripped"], (s["tripped"], c["tripped"])
' && pass "diff: a gate on cpu decides as on samples (same bounds)" || fail "diff: a gate on cpu decides as on samples"
"$FIRN" diff --svg --sample-type wall base.pb.gz new.pb.gz >wall.svg 2>err
grep -q '>Differential Flame Graph: wall (s)</text>' wall.svg && grep -q '<title>parse (6.00 s, 5.66%; base 0.00; +5.66%)</title>' wall.svg \
	&& pass "diff --svg --sample-type wall: title and tooltips in s" \
	|| fail "diff --svg --sample-type wall: $(grep -o '<title>parse[^<]*' wall.svg)"
"$FIRN" diff --folded --sample-type off_cpu base.pb.gz new.pb.gz | grep -qx 'app;main;read_pipe;pipe_read_\[k\] 45000000000 60000000000' \
	&& pass "diff --folded --sample-type off_cpu: raw ns, base scaled to new" || fail "diff --folded --sample-type off_cpu"

# both profiles must have the chosen type
# diff_fails NAME MESSAGE ARGS...: exit 2, nothing on stdout, exactly the one line MESSAGE
diff_fails() {
	local name=$1 msg=$2; shift 2
	expect_rc "$name: exit 2" 2 "$FIRN" diff "$@"
	[ ! -s "$TMP/out" ] && [ "$(cat "$TMP/err")" = "$msg" ] && pass "$name: one line" \
		|| fail "$name: stderr '$(cat "$TMP/err")', wanted '$msg'"
}
diff_fails "diff --sample-type bogus" "firn diff: no sample type 'bogus' in 'base.pb.gz': $types" \
	--sample-type bogus base.pb.gz new.pb.gz
diff_fails "diff --sample-type off_cpu, NEW folded" \
	"firn diff: no sample type 'off_cpu' in 'simple.folded': it has 0 samples/count" \
	--sample-type off_cpu base.pb.gz simple.folded
diff_fails "diff --sample-type 3 naming two types" \
	"firn diff: sample type 3 is 'off_cpu' in 'base.pb.gz' but 'wall' in 'new_nw.pb.gz'" \
	--sample-type 3 base.pb.gz new_nw.pb.gz

# ---- a real recording (root): samples and cpu, the same shares, cpu = samples x period ----
if is_root && [ -x "$FIX/busy" ]; then
	if "$FIRN" record -q -F 499 -o rec.pb.gz -- "$FIX/busy" 1 >/dev/null 2>rec.err; then
		"$FIRN" report --json --top 0 rec.pb.gz >samples.json
		"$FIRN" report --json --top 0 --sample-type cpu rec.pb.gz >cpu.json
		python3 -c '
import json
s, c = json.load(open("samples.json")), json.load(open("cpu.json"))
assert s["sample_type"] == "samples" and c["sample_type"] == "cpu", (s["sample_type"], c["sample_type"])
period = 10**9 // 499
assert c["total"] == s["total"] * period and s["total"] > 100, (s["total"], c["total"])
# by name and module: _start is the program's and the dynamic loader's
fs = {(x["name"], x["module"]): x for x in s["functions"]}
for x in c["functions"]:
    assert x["self"] == fs[x["name"], x["module"]]["self"] * period, x
    assert x["self_pct"] == fs[x["name"], x["module"]]["self_pct"], x
assert fs["busy_hot", "busy"]["self_pct"] > 50, fs["busy_hot", "busy"]
' && pass "record: report --sample-type cpu is samples x period, the same shares" \
			|| fail "record: report --sample-type cpu is samples x period"
		"$FIRN" report --sample-type cpu --annotate busy_hot rec.pb.gz >ann 2>&1 \
			&& grep -q '^# [0-9.]*% of ' ann && pass "record: --annotate --sample-type cpu" \
			|| fail "record: --annotate --sample-type cpu: $(head -3 ann)"
	else
		fail "record busy: $(head -2 rec.err)"
	fi
else
	skip "a real recording: not root or no busy fixture"
fi
