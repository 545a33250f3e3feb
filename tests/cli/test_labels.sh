# firn report --group-by LABEL and the tag filters (--tag-focus, --tag-ignore) on saved profiles:
# the exact table, folded stacks and JSON of a labelled pprof fixture (samples without the label
# under "(none)"), the tag filters against go tool pprof's -tagfocus/-tagignore, usage errors, and
# a Go CPU profile whose runtime/pprof labels (pprof.Do, endpoint=a/b) --group-by ranks. No root.
. "$(dirname "$0")/lib.sh"

SRC="$ROOT/tests/fixtures"
cd "$TMP" || exit 1
python3 "$SRC/labels_pprof.py" r.pb.gz --routes --threads --idle

# same NAME WANT_FILE GOT_FILE: passes when the files have the same bytes (shows a diff if not)
same() {
	if cmp -s "$2" "$3"; then pass "$1"; else
		fail "$1"; diff "$2" "$3" | head -20 | sed 's/^/    /'; fi
}

# report_is NAME WANT ARGS...: runs firn report ARGS, expects exit 0, stdout WANT, empty stderr
report_is() {
	local name=$1 want=$2; shift 2
	printf '%s' "$want" >want
	"$FIRN" report "$@" >got 2>got.err
	local rc=$?
	if [ "$rc" -ne 0 ] || [ -s got.err ]; then
		fail "$name (exit $rc)"; head -3 got.err | sed 's/^/    stderr: /'
	else
		same "$name" want got
	fi
}

report_is "--group-by http_route: values ranked, (none) counted, top function each" \
'# r.pb.gz: 20 samples (cpu-clock 99 Hz), 3 processes
 share%  samples  http_route  top function
  45.00        9  (none)      pv_native_safe_halt (88.89%)
  45.00        9  /api/a      work (66.67%)
  10.00        2  /api/b      memcpy (100.00%)
' --group-by http_route r.pb.gz
report_is "--group-by pid (a numeric label) with --no-idle and --top" \
'# r.pb.gz: 12 of 20 samples (cpu-clock 99 Hz), 3 processes
 share%  samples  pid  top function
  66.67        8  100  work (75.00%)
  25.00        3  200  sys_read (100.00%)
' --group-by pid --no-idle --top 2 r.pb.gz
report_is "--group-by thread --sample-type cpu: the chosen type's values" \
'# r.pb.gz: 202.02 ms cpu (cpu-clock 99 Hz), 3 processes
 share%  cpu ms  thread    top function
  40.00   80.81  [idle]    pv_native_safe_halt (100.00%)
  30.00   60.61  worker-1  work (100.00%)
  15.00   30.30  beta-io   sys_read (100.00%)
  10.00   20.20  worker-2  memcpy (100.00%)
   5.00   10.10  alpha     main (100.00%)
' --group-by thread --sample-type cpu r.pb.gz
report_is "--group-by --folded: LABEL=value is the root frame (go tool pprof -tagroot)" \
'http_route=(none);do_idle_[k];pv_native_safe_halt_[k] 8
http_route=(none);main 1
http_route=/api/a;main;sys_read_[k] 3
http_route=/api/a;main;work 6
http_route=/api/b;main;work;memcpy 2
' --group-by http_route --folded r.pb.gz
report_is "--group-by with --comm: the filter first, then the roots" \
'comm=alpha;main 1
comm=alpha;main;work 6
comm=alpha;main;work;memcpy 2
' --group-by comm --comm alpha --folded r.pb.gz
"$FIRN" report --group-by http_route --svg -o g.svg r.pb.gz &&
	grep -q 'http_route=/api/a' g.svg && grep -q 'http_route=(none)' g.svg &&
	pass "--group-by --svg: the values are root frames" || fail "--group-by --svg"
"$FIRN" report --group-by http_route --json r.pb.gz >g.json &&
	python3 - g.json <<'PY' && pass "--group-by --json: values, totals, top functions, without_label" || fail "--group-by --json"
import json, sys
d = json.load(open(sys.argv[1]))
got = [(v["value"], v["total"], v["top_function"], v["top_self"], v["stacks"]) for v in d["values"]]
assert d["group_by"] == "http_route" and d["without_label"] == 9, d
assert got == [("(none)", 9, "pv_native_safe_halt", 8, 2), ("/api/a", 9, "work", 6, 2),
               ("/api/b", 2, "memcpy", 2, 1)], got
PY

# the tag filters: exact tables, then against go tool pprof
report_is "--tag-focus KEY=REGEX: samples with a matching label" \
'# r.pb.gz: 9 of 20 samples (cpu-clock 99 Hz), 2 processes
  self%  total%  samples  module             function
  66.67   66.67        6  app                work
  33.33   33.33        3  [kernel.kallsyms]  sys_read
   0.00  100.00        0  app                main
' --tag-focus 'http_route=^/api/a$' r.pb.gz
report_is "--tag-ignore with --group-by: ignored values are gone" \
'# r.pb.gz: 11 of 20 samples (cpu-clock 99 Hz), 2 processes
 share%  samples  http_route  top function
  81.82        9  /api/a      work (66.67%)
  18.18        2  /api/b      memcpy (100.00%)
' --tag-ignore 'thread=idle|alpha' --group-by http_route r.pb.gz
if command -v go >/dev/null; then
	for c in "tagfocus http_route=/api/a" "tagfocus http_route=b,a$" "tagignore http_route=/b" \
		 "tagfocus thread=^worker" "tagignore comm=alpha" "tagfocus comm=x,idle"; do
		set -- $c
		o=--tag-${1#tag}
		go tool pprof -proto "-$1=$2" -output=go.pb.gz r.pb.gz >/dev/null 2>&1 &&
			"$FIRN" report --folded go.pb.gz | sort >want.txt
		"$FIRN" report --folded "$o" "$2" r.pb.gz | sort >got.txt
		[ -s want.txt ] && cmp -s want.txt got.txt && pass "$o '$2' keeps what go tool pprof's -$1 keeps" ||
			{ fail "$o '$2' as go tool pprof's -$1"; diff want.txt got.txt | head -5 | sed 's/^/    /'; }
		rm -f want.txt got.txt go.pb.gz
	done
else
	skip "tag filters against go tool pprof: no go"
fi

# usage errors: exit 2, one line
for bad in "--tag-focus nokey" "--tag-ignore =x" "--tag-focus k=a["; do
	expect_rc "bad $bad: exit 2" 2 "$FIRN" report $bad r.pb.gz
	msg=$(head -1 "$TMP/err")
	[ "${msg#"firn report: invalid value '${bad#* }' for ${bad% *}: "}" != "$msg" ] && [ ! -s "$TMP/out" ] &&
		pass "bad $bad: message" || fail "bad $bad: message is '$(head -1 "$TMP/err")'"
done
expect_rc "--group-by with --pprof: exit 2" 2 "$FIRN" report --group-by pid --pprof -o x.pb.gz r.pb.gz
grep -qx "firn report: --group-by does not apply to --pprof output" "$TMP/err" &&
	pass "--group-by with --pprof: message" || fail "--group-by with --pprof: '$(head -1 "$TMP/err")'"
expect_rc "--tag-focus in firn diff: the shared filters" 0 "$FIRN" diff --tag-focus comm=alpha r.pb.gz r.pb.gz

# a Go CPU profile with runtime/pprof labels: pprof.Do(endpoint=a) does n, endpoint=b 2n, and n/4
# runs outside both (no label), in 10 interleaved rounds. The ranking is b, a, (none); b's count
# of a+b's is 2/3 within 4 standard deviations of a binomial share over those samples (a CPU
# profile's samples are of CPU time, so load slows the run but does not change the shares); the
# totals are what go tool pprof -tagfocus keeps of the same file.
if command -v go >/dev/null; then
	export GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath"
	if go build -o golabels "$SRC/go/golabels.go" 2>go.err && ./golabels gl.pb.gz; then
		"$FIRN" report --group-by endpoint --json gl.pb.gz >gl.json
		read -r na nb nn order <<<"$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
t = {v["value"]: v["total"] for v in d["values"]}
top = {v["value"]: v["top_function"] for v in d["values"]}
ok = top.get("a") == "main.handleA" and top.get("b") == "main.handleB"
print(t.get("a", 0), t.get("b", 0), t.get("(none)", 0),
      ",".join(v["value"] for v in d["values"]) + ("" if ok else ":wrong-top"))' gl.json)"
		[ "$order" = "b,a,(none)" ] && pass "Go labels: --group-by endpoint ranks b, a, (none) ($nb, $na, $nn samples)" ||
			fail "Go labels: order '$order' ($nb, $na, $nn)"
		awk -v a="$na" -v b="$nb" 'BEGIN { m = a + b; s = sqrt(2 / 9 / (m ? m : 1));
			exit !(m >= 100 && b / m > 2 / 3 - 4 * s && b / m < 2 / 3 + 4 * s) }' &&
			pass "Go labels: b is 2/3 of a+b ($nb of $((na + nb)), >= 100 samples)" ||
			fail "Go labels: b $nb of a+b $((na + nb))"
		for e in a b; do
			go tool pprof -proto "-tagfocus=endpoint=^$e\$" -output=ge.pb.gz gl.pb.gz >/dev/null 2>&1
			want=$("$FIRN" report --json ge.pb.gz | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
			got=$("$FIRN" report --json --tag-focus "endpoint=^$e\$" gl.pb.gz |
				python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
			[ -n "$want" ] && [ "$want" = "$got" ] && [ "$got" = "$([ $e = a ] && echo "$na" || echo "$nb")" ] &&
				pass "Go labels: endpoint=$e's $got samples are go tool pprof -tagfocus's" ||
				fail "Go labels: endpoint=$e: go tool pprof $want, --tag-focus $got"
		done
	else
		fail "Go labels: cannot build or run golabels"; head -3 go.err | sed 's/^/    /'
	fi
else
	skip "Go labels: no go"
fi
