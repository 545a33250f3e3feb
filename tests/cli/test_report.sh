# firn report on saved profiles: the exact table, folded and JSON outputs of a folded fixture,
# --top/--sort/--lines/--inline, pid/comm filters and the header on a labelled pprof fixture,
# pprof round trip, -o, error messages and exit codes, and that -o never clobbers on failure.
. "$(dirname "$0")/lib.sh"

SRC="$ROOT/tests/fixtures"
cp "$SRC/simple.folded" "$TMP/simple.folded"
cd "$TMP" || exit 1

# same NAME WANT_FILE GOT_FILE: passes when the files have the same bytes (shows a diff if not)
same() {
	if cmp -s "$2" "$3"; then pass "$1"; else
		fail "$1"; diff "$2" "$3" | head -20 | sed 's/^/    /'; fi
}

# report_is NAME WANT ARGS...: runs firn report ARGS, expects exit 0, stdout WANT, empty stderr
report_is() {
	local name=$1 want=$2; shift 2
	printf '%s' "$want" >"$TMP/want"
	"$FIRN" report "$@" >"$TMP/got" 2>"$TMP/got.err"
	local rc=$?
	if [ "$rc" -ne 0 ] || [ -s "$TMP/got.err" ]; then
		fail "$name (exit $rc)"; head -3 "$TMP/got.err" | sed 's/^/    stderr: /'
	else
		same "$name" "$TMP/want" "$TMP/got"
	fi
}

# fails_with NAME RC STDERR_LINE ARGS...: exit RC, nothing on stdout, first stderr line exact
fails_with() {
	local name=$1 rc=$2 msg=$3; shift 3
	expect_rc "$name: exit $rc" "$rc" "$FIRN" report "$@"
	[ ! -s "$TMP/out" ] && pass "$name: no output" || fail "$name: no output"
	local first
	first=$(head -1 "$TMP/err")
	[ "$first" = "$msg" ] && pass "$name: message" || fail "$name: message is '$first', wanted '$msg'"
}

# ---- the table ----
report_is "default table" \
'# simple.folded: 100 samples
  self%  total%  samples  module             function
  40.00   55.00       40  -                  hot_loop
  15.00   15.00       15  -                  helper
  12.00   12.00       12  -                  fib
  10.00   10.00       10  -                  read_input
   8.00    8.00        8  [kernel.kallsyms]  vfs_write
   5.00   60.00        5  -                  compute
   5.00   15.00        5  -                  parse
   5.00   13.00        5  -                  write_output
   0.00  100.00        0  -                  app
   0.00  100.00        0  -                  main
   0.00    8.00        0  [kernel.kallsyms]  sys_write
   0.00    8.00        0  -                  write
' simple.folded

report_is "--top 3 --sort total (options after FILE too)" \
'# simple.folded: 100 samples
  self%  total%  samples  module  function
   0.00  100.00        0  -       app
   0.00  100.00        0  -       main
   5.00   60.00        5  -       compute
' simple.folded --top 3 --sort total

report_is "--top 2, module column as wide as its widest row" \
'# simple.folded: 100 samples
  self%  total%  samples  module  function
  40.00   55.00       40  -       hot_loop
  15.00   15.00       15  -       helper
' --top 2 simple.folded

# 12 functions: --top 0 shows all, the default (20) too, --top 12 as well
for top in 0 20 12; do
	n=$("$FIRN" report --top "$top" simple.folded | tail -n +3 | wc -l)
	[ "$n" -eq 12 ] && pass "--top $top: 12 rows" || fail "--top $top: $n rows"
done
n=$("$FIRN" report --top 5 simple.folded | tail -n +3 | wc -l)
[ "$n" -eq 5 ] && pass "--top 5: 5 rows" || fail "--top 5: $n rows"

cat "$SRC/simple.folded" | "$FIRN" report --top 1 - >got 2>&1
printf '# <stdin>: 100 samples\n  self%%  total%%  samples  module  function\n  40.00   55.00       40  -       hot_loop\n' >want
same "'-' reads stdin" want got

report_is "--no-kernel: the user caller gets the kernel's self" \
'# simple.folded: 100 samples
  self%  total%  samples  module  function
  40.00   55.00       40  -       hot_loop
  15.00   15.00       15  -       helper
  12.00   12.00       12  -       fib
  10.00   10.00       10  -       read_input
   8.00    8.00        8  -       write
' --no-kernel --top 5 simple.folded

# ---- inline frames (folded _[i] frames) ----
printf 'app;main;caller;inl_[i] 5\napp;main;caller;inl_[i];leaf 2\napp;main;caller 1\n' >inline.folded
report_is "inline frames fold into their caller" \
'# inline.folded: 8 samples
  self%  total%  samples  module  function
  75.00  100.00        6  -       caller
  25.00   25.00        2  -       leaf
   0.00  100.00        0  -       app
   0.00  100.00        0  -       main
' inline.folded
report_is "--inline: inline frames are functions" \
'# inline.folded: 8 samples
  self%  total%  samples  module  function
  62.50   87.50        5  -       inl
  25.00   25.00        2  -       leaf
  12.50  100.00        1  -       caller
   0.00  100.00        0  -       app
   0.00  100.00        0  -       main
' --inline inline.folded
report_is "--folded --inline annotates _[i]" \
'app;main;caller 1
app;main;caller;inl_[i] 5
app;main;caller;inl_[i];leaf 2
' --folded --inline inline.folded

# ---- folded output ----
report_is "--folded: sorted stacks, kernel frames _[k]" \
'app;main;compute 5
app;main;compute;hot_loop 40
app;main;compute;hot_loop;helper 15
app;main;fib;fib;fib 12
app;main;parse 5
app;main;parse;read_input 10
app;main;write_output 5
app;main;write_output;write;sys_write_[k];vfs_write_[k] 8
' --folded simple.folded
report_is "--folded --no-kernel drops kernel frames" \
'app;main;compute 5
app;main;compute;hot_loop 40
app;main;compute;hot_loop;helper 15
app;main;fib;fib;fib 12
app;main;parse 5
app;main;parse;read_input 10
app;main;write_output 5
app;main;write_output;write 8
' --folded --no-kernel simple.folded

# ---- JSON ----
if "$FIRN" report --json --top 3 simple.folded >out.json 2>err; then
	python3 - out.json <<'EOF' && pass "--json: values" || fail "--json: values"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["file"] == "simple.folded" and d["sample_type"] == "samples" and d["unit"] == "count", d
assert d["total"] == 100, d
f = d["functions"]
assert [x["name"] for x in f] == ["hot_loop", "helper", "fib"], f
assert f[0] == {"name": "hot_loop", "module": "", "self": 40, "total": 55,
                "self_pct": 40, "total_pct": 55}, f[0]
assert d["sample_types"] == [{"index": 0, "name": "samples", "unit": "count", "default": True,
                              "chosen": True}], d["sample_types"]
assert d["all_total"] == 100 and d["runtime"] == "" and d["without_runtime"] == 0, d
assert set(d) == {"file", "sample_type", "unit", "sample_types", "total", "all_total", "runtime",
                  "without_runtime", "functions"}, d.keys()
EOF
else
	fail "--json: exit 0"
fi
"$FIRN" report --json --top 0 --sort total simple.folded | python3 -c '
import json, sys
f = json.load(sys.stdin)["functions"]
assert len(f) == 12, len(f)
assert [x["name"] for x in f[:3]] == ["app", "main", "compute"], f[:3]
k = [x for x in f if x["name"] == "vfs_write"][0]
assert k["module"] == "[kernel.kallsyms]" and k["self_pct"] == 8, k
' && pass "--json --top 0 --sort total" || fail "--json --top 0 --sort total"
printf 'a;b\xff\x01 3\n' >weird.folded
"$FIRN" report --json weird.folded | python3 -c '
import json, sys
f = json.load(sys.stdin)["functions"]
assert f[0]["name"] == "b\ufffd\u0001", f
' && pass "--json escapes control bytes and invalid UTF-8" || fail "--json escaping"

# ---- pprof ----
expect_rc "--pprof -o" 0 "$FIRN" report --pprof -o simple.pb.gz simple.folded
[ "$(head -c 2 simple.pb.gz | od -An -tx1 | tr -d ' ')" = 1f8b ] && pass "--pprof writes gzip" \
	|| fail "--pprof writes gzip"
"$FIRN" report simple.pb.gz | tail -n +2 >got
"$FIRN" report simple.folded | tail -n +2 >want
same "pprof round trip: same table" want got
"$FIRN" report --folded simple.pb.gz >got
"$FIRN" report --folded simple.folded >want
same "pprof round trip: same folded stacks" want got
"$FIRN" report --pprof simple.folded | "$FIRN" report --folded - >got
same "--pprof to a pipe, read back from stdin" want got

# ---- -o ----
expect_rc "-o FILE" 0 "$FIRN" report -o table.txt --top 1 simple.folded
[ ! -s "$TMP/out" ] && [ "$(tail -1 table.txt)" = "  40.00   55.00       40  -       hot_loop" ] \
	&& pass "-o writes the file, not stdout" || fail "-o writes the file, not stdout"
"$FIRN" report -o - --top 1 simple.folded >got
same "-o - is stdout" table.txt got

# ---- a pprof with pid/comm labels and record's comments ----
if python3 "$SRC/labels_pprof.py" labels.pb.gz; then
	report_is "pprof header: event, frequency, processes" \
'# labels.pb.gz: 12 samples (cpu-clock 99 Hz), 3 processes
  self%  total%  samples  module             function
  50.00   66.67        6  app                work
  25.00   25.00        3  [kernel.kallsyms]  sys_read
  16.67   16.67        2  libc.so.6          memcpy
   8.33  100.00        1  app                main
' labels.pb.gz
	report_is "--pid 100" \
'# labels.pb.gz: 8 of 12 samples (cpu-clock 99 Hz), 1 process
  self%  total%  samples  module     function
  75.00  100.00        6  app        work
  25.00   25.00        2  libc.so.6  memcpy
   0.00  100.00        0  app        main
' --pid 100 labels.pb.gz
	report_is "--pid 200,300 --no-kernel" \
'# labels.pb.gz: 4 of 12 samples (cpu-clock 99 Hz), 2 processes
  self%  total%  samples  module  function
 100.00  100.00        4  app     main
' --pid 200,300 --no-kernel labels.pb.gz
	report_is "--pid repeated" \
'# labels.pb.gz: 4 of 12 samples (cpu-clock 99 Hz), 2 processes
  self%  total%  samples  module  function
 100.00  100.00        4  app     main
' --pid 200 --pid 300 --no-kernel labels.pb.gz
	report_is "--comm alpha" \
'# labels.pb.gz: 9 of 12 samples (cpu-clock 99 Hz), 2 processes
  self%  total%  samples  module     function
  66.67   88.89        6  app        work
  22.22   22.22        2  libc.so.6  memcpy
  11.11  100.00        1  app        main
' --comm alpha labels.pb.gz
	report_is "--comm and --pid together" \
'# labels.pb.gz: 1 of 12 samples (cpu-clock 99 Hz), 1 process
  self%  total%  samples  module  function
 100.00  100.00        1  app     main
' --comm alpha --pid 300,200 labels.pb.gz
	report_is "--lines" \
'# labels.pb.gz: 12 samples (cpu-clock 99 Hz), 3 processes
  self%  total%  samples  module             function
  50.00   66.67        6  app                work (app.c:20)
  25.00   25.00        3  [kernel.kallsyms]  sys_read (app.c)
  16.67   16.67        2  libc.so.6          memcpy (app.c)
   8.33  100.00        1  app                main (app.c:10)
' --lines labels.pb.gz
	report_is "--folded: the comm header, then the process name first" \
'# firn folded stacks: the first frame is the process name
alpha;main 1
alpha;main;work 6
alpha;main;work;memcpy 2
beta;main;sys_read_[k] 3
' --folded labels.pb.gz
	report_is "--folded --comm beta" \
'# firn folded stacks: the first frame is the process name
beta;main;sys_read_[k] 3
' --folded --comm beta labels.pb.gz
	"$FIRN" report --json --pid 100 labels.pb.gz | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["total"] == 8 and d["functions"][0]["module"] == "app", d
assert abs(d["functions"][0]["self_pct"] - 75) < 1e-9, d
' && pass "--json --pid" || fail "--json --pid"
	# FILE...: the later files' comments are kept, counts added up (the header's lost samples
	# are both recordings'), other lines once per distinct text (each file's command)
	python3 "$SRC/labels_pprof.py" la.pb.gz --lost=3 "--comment=lost.stacks_full: 3" "--comment=command: ./a"
	python3 "$SRC/labels_pprof.py" lb.pb.gz --lost=4 "--comment=lost.counts_full: 4" \
		"--comment=lost.stacks_full: 0" "--comment=command: ./b"
	report_is "FILE...: the lost samples of every file in the header" \
'# la.pb.gz + 1 more: 24 samples (cpu-clock 99 Hz), 3 processes, 7 lost (counts map full 4, stack map full 3)
  self%  total%  samples  module  function
  50.00   66.67       12  app     work
' --top 1 la.pb.gz lb.pb.gz
	"$FIRN" report --pprof -o lab.pb.gz la.pb.gz lb.pb.gz
	go tool pprof -comments lab.pb.gz >lab.comments 2>&1
	printf '%s\n' "recorder: firn record" "event: cpu-clock" "frequency: 99" "lost: 7" \
		"lost.stacks_full: 3" "command: ./a" "lost.counts_full: 4" "command: ./b" >lab.want
	same "FILE... --pprof: counts added, each file's command kept, shared lines once (go tool pprof -comments)" \
		lab.want lab.comments
else
	fail "labels_pprof.py writes the fixture"
fi
report_is "--pid on a profile without pid labels matches nothing" \
'# simple.folded: 0 of 100 samples
  self%  total%  samples  module  function
' --pid 1 simple.folded

# ---- SVG (the flame graph's own tests check its content) ----
"$FIRN" report --svg simple.folded >flame.svg 2>err
rc=$?
[ $rc -eq 0 ] && head -c 5 flame.svg | grep -qx '<?xml' && grep -q hot_loop flame.svg \
	&& pass "--svg: an SVG naming the hot function" || fail "--svg (exit $rc)"
"$FIRN" report --svg --no-kernel simple.folded >flame.svg 2>err
rc=$?
[ $rc -eq 0 ] && grep -q hot_loop flame.svg && ! grep -q vfs_write flame.svg \
	&& pass "--svg --no-kernel: no kernel frame drawn" || fail "--svg --no-kernel (exit $rc)"
"$FIRN" report --svg --comm beta labels.pb.gz >flame.svg 2>err
rc=$?
[ $rc -eq 0 ] && grep -q sys_read flame.svg && ! grep -q memcpy flame.svg \
	&& pass "--svg --comm: only that process drawn" || fail "--svg --comm (exit $rc)"
fails_with "--svg with no sample left" 1 "firn: cannot report 'simple.folded': no samples to draw" \
	--svg --pid 1 simple.folded
fails_with "flame graph option without --svg" 2 "firn report: --width applies to --svg output only" \
	--width 500 simple.folded

# ---- malformed folded lines: a warning, exit 0 ----
printf 'main;a 3\nno_count_here\nmain;b -2\nmain;b 2\n' >bad.folded
expect_rc "malformed lines: exit 0" 0 "$FIRN" report bad.folded
[ "$(cat "$TMP/err")" = "firn: warning: skipped 2 malformed lines in 'bad.folded'" ] \
	&& pass "malformed lines: warning with the count" || fail "malformed lines: stderr '$(cat "$TMP/err")'"
[ "$(sed -n 3p "$TMP/out")" = "  60.00   60.00        3  -       a" ] \
	&& pass "malformed lines: the good ones count" || fail "malformed lines: the good ones count"

# ---- errors ----
fails_with "missing file" 1 "firn: cannot open 'nope.folded': No such file or directory" nope.folded
fails_with "missing default file" 1 "firn: cannot open 'firn.pb.gz': No such file or directory"
mkdir adir
fails_with "directory" 1 "firn: cannot open 'adir': Is a directory" adir
: >empty
fails_with "empty file" 1 "firn: cannot read 'empty': empty file" empty
head -c 200 /dev/zero >zeros
fails_with "binary garbage" 1 "firn: cannot read 'zeros': not a pprof or folded profile" zeros
printf '\037\213\010\000garbage, not deflate' >bad.gz
fails_with "corrupt gzip" 1 "firn: cannot read 'bad.gz': not a pprof or folded profile" bad.gz
printf 'no counts here\nnor here\n' >text.txt
fails_with "text without one stack" 1 "firn: cannot read 'text.txt': not a pprof or folded profile" text.txt

fails_with "unknown option" 2 "firn report: unknown option '--bogus'" --bogus simple.folded
fails_with "--top x" 2 "firn report: invalid value 'x' for --top (an integer from 0 to 2147483647)" \
	--top x simple.folded
fails_with "--top -1" 2 "firn report: invalid value '-1' for --top (an integer from 0 to 2147483647)" \
	--top -1 simple.folded
fails_with "--sort x" 2 "firn report: invalid value 'x' for --sort (self or total)" --sort x simple.folded
fails_with "--pid x" 2 "firn report: invalid value '1,x' for --pid (process ids separated by commas)" \
	--pid 1,x simple.folded
fails_with "--pid 1," 2 "firn report: invalid value '1,' for --pid (process ids separated by commas)" \
	--pid 1, simple.folded
fails_with "two output modes" 2 "firn report: --json and --svg cannot be used together" \
	--json --svg simple.folded
fails_with "two output modes (folded, pprof)" 2 "firn report: --folded and --pprof cannot be used together" \
	--folded simple.folded --pprof
fails_with "--top with --folded" 2 "firn report: --top does not apply to --folded output" \
	--folded --top 3 simple.folded
fails_with "two files, the second missing" 1 "firn: cannot open 'other': No such file or directory" simple.folded other
# several files: merged into one table, the sum of both, the header naming the first and the count
two=$("$FIRN" report --top 0 simple.folded simple.folded 2>&1)
one=$("$FIRN" report --top 0 simple.folded 2>&1 | sed -n 's/^# [^:]*: \([0-9,]*\) .*/\1/p' | tr -d ,)
printf '%s\n' "$two" | grep -q "^# simple.folded + 1 more: $(printf "%'d" $((one * 2))) " &&
	pass "report FILE FILE: one table of both" || fail "report FILE FILE: $(printf '%s\n' "$two" | head -1) (one: $one)"
expect_rc "missing option argument" 2 "$FIRN" report simple.folded --top

# ---- -o leaves an existing file alone when the report fails ----
printf 'precious\n' >keep.txt
for args in "nope.folded" "zeros" "--top x simple.folded" "--json --svg simple.folded" "empty"; do
	# shellcheck disable=SC2086
	"$FIRN" report -o keep.txt $args >/dev/null 2>&1
	rc=$?
	[ $rc -ne 0 ] && [ "$(cat keep.txt)" = precious ] && pass "-o kept on failure: $args" \
		|| fail "-o kept on failure: $args (exit $rc, content '$(cat keep.txt)')"
done
left=$(ls -A | grep -c '\.tmp\.' || true)
[ "$left" -eq 0 ] && pass "-o leaves no temporary file" || fail "-o leaves temporary files: $(ls -A)"
fails_with "-o into a missing directory" 1 \
	"firn: cannot write 'nodir/out.txt': No such file or directory" -o nodir/out.txt simple.folded

# ---- stack filters (--focus, --ignore, --show-from, --thread, --module, --runtime) ----
# folded input: the exact stacks each keeps, and the shares over what is left
report_is "--focus keeps the stacks through a matching frame, whole" \
'app;main;compute 5
app;main;compute;hot_loop 40
app;main;compute;hot_loop;helper 15
' --folded --no-folded-comm --focus '^compute$' simple.folded
report_is "--ignore drops the stacks with a matching frame" \
'app;main;compute 5
app;main;parse 5
app;main;parse;read_input 10
app;main;write_output 5
app;main;write_output;write;sys_write_[k];vfs_write_[k] 8
' --folded --no-folded-comm --ignore 'hot|fib' simple.folded
report_is "--show-from: the callers of the outermost match go (recursion kept below it)" \
'fib;fib;fib 12
write_output 5
write_output;write;sys_write_[k];vfs_write_[k] 8
' --folded --no-folded-comm --show-from '^(fib|write_output)$' simple.folded
report_is "--module: stacks with a frame in a matching module (the kernel's)" \
'app;main;write_output;write;sys_write_[k];vfs_write_[k] 8
' --folded --no-folded-comm --module '^\[kernel' simple.folded
report_is "--focus: the table's shares are of what is left, the header says of how much" \
'# simple.folded: 60 of 100 samples
  self%  total%  samples  module  function
  66.67   91.67       40  -       hot_loop
  25.00   25.00       15  -       helper
   8.33  100.00        5  -       compute
   0.00  100.00        0  -       app
   0.00  100.00        0  -       main
' --no-folded-comm --focus compute simple.folded
# every output reads the filtered profile: JSON, SVG, pprof
"$FIRN" report --json --no-folded-comm --ignore compute simple.folded >f.json 2>&1
python3 -c 'import json,sys; d=json.load(open("f.json")); n={f["name"] for f in d["functions"]}
sys.exit(not (d["total"] == 40 and d["all_total"] == 100 and "hot_loop" not in n and "fib" in n))' &&
	pass "--ignore in --json: total 40 of all_total 100, no hot_loop" || fail "--ignore in --json: $(head -c 300 f.json)"
"$FIRN" report --svg --no-folded-comm --focus fib -o f.svg simple.folded &&
	grep -q '>fib' f.svg && ! grep -q 'hot_loop' f.svg && pass "--focus in --svg: fib drawn, hot_loop not" ||
	fail "--focus in --svg"
"$FIRN" report --pprof --no-folded-comm --show-from '^compute$' -o f.pb.gz simple.folded &&
	[ "$("$FIRN" report --folded f.pb.gz | sort | tr '\n' ' ')" = "compute 5 compute;hot_loop 40 compute;hot_loop;helper 15 " ] &&
	pass "--show-from in --pprof: the written profile holds the cut stacks" ||
	fail "--show-from in --pprof: $("$FIRN" report --folded f.pb.gz | tr '\n' ' ')"
# as go tool pprof's -focus, -ignore and -show_from, on a pprof of the folded fixture and on a Go
# profile with an inlined function (show_from cuts a location's lines above the match)
if command -v go >/dev/null && "$FIRN" report --pprof --no-folded-comm -o s.pb.gz simple.folded; then
	cp "$SRC/go-cpu.pb.gz" g.pb.gz
	for c in "s focus compute" "s ignore hot_loop$" "s focus sys_" "s ignore parse|fib" \
		 "s show_from ^fib$" "s show_from write" "s show_from helper|read" "g show_from mix" \
		 "g show_from busy" "g focus leaf" "g show_from gocpu"; do
		set -- $c
		o=$(echo "$2" | tr _ -)
		go tool pprof -proto "-$2=$3" -output=go.pb.gz "$1.pb.gz" >/dev/null 2>&1 &&
			"$FIRN" report --folded go.pb.gz | sort >want.txt
		"$FIRN" report --folded "--$o" "$3" "$1.pb.gz" | sort >got.txt
		[ -s want.txt ] && cmp -s want.txt got.txt && pass "--$o '$3' keeps what go tool pprof's -$2 keeps" ||
			{ fail "--$o '$3' as go tool pprof's -$2"; diff want.txt got.txt | head -5 | sed 's/^/    /'; }
		rm -f want.txt got.txt
	done
else
	skip "filters against go tool pprof: no go"
fi
# --thread: the thread label, as go tool pprof's -tagfocus=thread=REGEX
python3 "$SRC/labels_pprof.py" th.pb.gz --threads
report_is "--thread: samples of the matching threads" \
'# th.pb.gz: 8 of 12 samples (cpu-clock 99 Hz), 1 process
  self%  total%  samples  module     function
  75.00  100.00        6  app        work
  25.00   25.00        2  libc.so.6  memcpy
   0.00  100.00        0  app        main
' --thread '^worker-' th.pb.gz
report_is "--module: a module's base name, as its column shows it" \
'# th.pb.gz: 2 of 12 samples (cpu-clock 99 Hz), 1 process
  self%  total%  samples  module     function
 100.00  100.00        2  libc.so.6  memcpy
   0.00  100.00        0  app        main
   0.00  100.00        0  app        work
' --module '^libc\.so' th.pb.gz
fails_with "--thread on stacks without thread labels: nothing to draw" 1 \
	"firn: cannot report 'simple.folded': no samples to draw" --svg --thread . simple.folded
# bad expressions and runtimes are usage errors (the reason is regerror's, worded by the C library)
for o in focus ignore show-from thread module; do
	expect_rc "bad --$o: exit 2" 2 "$FIRN" report "--$o" 'a[' simple.folded
	grep -q "^firn report: invalid regular expression 'a\[' for --$o: ." "$TMP/err" && [ ! -s "$TMP/out" ] &&
		pass "bad --$o: message" || fail "bad --$o: message is '$(head -1 "$TMP/err")'"
done
fails_with "unknown --runtime" 2 "firn report: invalid value 'ruby' for --runtime (python, gpu, javascript or java)" \
	--runtime ruby simple.folded
