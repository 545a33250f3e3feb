# firn top driven as a user would: full screen in tmux (send-keys, capture-pane) against the busy
# fixture (busy_hot ~90 %, busy_cold ~10 %): the hot function leads within 3 s, s and / change the
# table as they should, Enter annotates with shares that add up to the function's share, c shows
# callers, a resize redraws, and q, Ctrl-C and SIGTERM exit 0 with the terminal restored; in the
# callers/callees view the cursor stays on function rows and [kernel.kallsyms] is shown whole.
# Then --stdio (-n, -- CMD and its status, a pipe, no target = the whole system), usage errors,
# -e usdt:... (the probed function, exact hit counts), -e off-cpu (the shares of offcpu_mix's
# waits; --sample-type), -z (each refresh is one cut of the
# recording: every sample in exactly one table), and report --annotate on a saved profile of the fixture (the hot loop's instructions, build id
# checks, missing binaries).
. "$(dirname "$0")/lib.sh"

BUSY="$FIX/busy"

# ---- usage errors (no root needed) ----
expect_rc "-a and -p: exit 2" 2 "$FIRN" top -a -p 1
expect_rc "--sort bad: exit 2" 2 "$FIRN" top -a --sort sideways
expect_rc "--delay 0: exit 2" 2 "$FIRN" top -a --delay 0
expect_rc "--call-graph bad: exit 2" 2 "$FIRN" top -a --call-graph lbr
expect_rc "-n 0: exit 2" 2 "$FIRN" top -a -n 0
expect_rc "-e bogus: exit 2" 2 "$FIRN" top -a -e bogus
grep -q "^firn top: invalid event 'bogus' (cpu-clock, off-cpu, usdt:PATH:PROVIDER:NAME or alloc)" "$TMP/err" \
	&& pass "-e bogus: message" || fail "-e bogus: $(head -1 "$TMP/err")"
expect_rc "-e usdt:PATH:NAME (no provider): exit 2" 2 "$FIRN" top -a -e usdt:/bin/true:hit
expect_rc "--off-cpu-min without -e off-cpu: exit 2" 2 "$FIRN" top -a --off-cpu-min 10
grep -qx "firn top: --off-cpu-min needs -e off-cpu" "$TMP/err" \
	&& pass "--off-cpu-min without -e off-cpu: message" || fail "--off-cpu-min: $(head -1 "$TMP/err")"
expect_rc "--focus with a bad expression: exit 2" 2 "$FIRN" top -a --focus '('
grep -q "^firn top: invalid regular expression '(' for --focus: ." "$TMP/err" \
	&& pass "--focus with a bad expression: message" || fail "--focus '(': $(head -1 "$TMP/err")"
expect_rc "--runtime ruby: exit 2" 2 "$FIRN" top -a --runtime ruby
expect_rc "report --annotate with --folded: exit 2" 2 "$FIRN" report --annotate f --folded x.pb.gz
expect_rc "report --annotate with --top: exit 2" 2 "$FIRN" report --annotate f --top 3 x.pb.gz
grep -q "^firn report: --top does not apply to --annotate output" "$TMP/err" \
	&& pass "report --annotate with --top: message" || fail "report --annotate --top: $(head -1 "$TMP/err")"

if ! is_root; then skip "top and recording tests need root"; exit 0; fi
[ -x "$BUSY" ] || { fail "no fixture '$BUSY' (make fixtures)"; exit 0; }
# --no-idle leaves out what idle CPUs run (pid 0: pv_native_safe_halt and its callers here);
# first, before this script's own workloads keep the CPUs busy
idle_re='pv_native_safe_halt|default_idle|cpuidle_enter|do_idle'
"$FIRN" top --stdio -a -n 3 -d 0.5 --rows 0 >"$TMP/idle.out" 2>/dev/null
"$FIRN" top --stdio -a --no-idle -n 3 -d 0.5 --rows 0 >"$TMP/noidle.out" 2>/dev/null
if grep -qE "  ($idle_re)\$" "$TMP/idle.out"; then
	pass "top -a shows the idle task's functions"
	! grep -qE "  ($idle_re)\$" "$TMP/noidle.out" && pass "top --no-idle leaves them out" \
		|| { fail "top --no-idle still shows idle functions"; grep -E "$idle_re" "$TMP/noidle.out" | head -3; }
	grep -q "^ *[0-9.]* *[0-9.]* *[1-9][0-9]* " "$TMP/noidle.out" && pass "top --no-idle still lists the work done" \
		|| fail "top --no-idle: empty table"
else
	skip "top --no-idle: no idle samples (busy CPUs)"
fi

"$BUSY" 120 &
BP=$!
CP=
trap 'kill $BP $CP 2>/dev/null; tmux -L "$SOCK" kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
sleep 0.2

expect_rc "no such pid: exit 1" 1 "$FIRN" top -p 999999
grep -q "no process with pid 999999" "$TMP/err" && pass "no such pid: message" || fail "no such pid: $(head -1 "$TMP/err")"

# within VALUE LO HI
within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v + 0 >= lo && v + 0 <= hi) }'; }

# table_rows FILE: the rows of the (first) table in FILE as "self total samples module function".
table_rows() {
	awk '/^  self%  total%/ { on = 1; next } on && (/^$/ || /^firn top:/) { exit } on { print }' "$1"
}

# ---- --stdio ----
# no target: the whole system, as perf top (-a)
"$FIRN" top --stdio -n 1 -d 0.5 --rows 0 >"$TMP/all.out" 2>"$TMP/all.err"
rc=$?
[ $rc -eq 0 ] && grep -q '^firn top: all CPUs ' "$TMP/all.out" \
	&& pass "no target: exit 0, the header says all CPUs" || { fail "no target: exit $rc"; head -3 "$TMP/all.err" "$TMP/all.out"; }
table_rows "$TMP/all.out" | grep -q ' busy_hot$' \
	&& pass "no target: the busy fixture (another process) is in the table" || { fail "no target: no busy_hot"; cat "$TMP/all.out"; }

"$FIRN" top --stdio -n 2 -p "$BP" >"$TMP/stdio.out" 2>"$TMP/stdio.err"
rc=$?
[ $rc -eq 0 ] && pass "--stdio -n 2 exits 0" || { fail "--stdio -n 2 exit $rc"; head -3 "$TMP/stdio.err"; }
n=$(grep -c '^firn top: pid '"$BP"' (busy)' "$TMP/stdio.out")
[ "$n" -eq 2 ] && pass "--stdio -n 2 prints two tables" || fail "--stdio -n 2 printed $n tables"
firsts=$(awk '/^  self%  total%/ { getline; print $5 }' "$TMP/stdio.out" | sort -u)
[ "$firsts" = busy_hot ] && pass "--stdio: both tables lead with busy_hot" || { fail "--stdio leaders: $firsts"; cat "$TMP/stdio.out"; }
# the second table's window holds 1.5 s of samples (the first only 0.5 s)
self=$(awk '/^firn top:/ { n++ } n == 2' "$TMP/stdio.out" >"$TMP/second.out"; table_rows "$TMP/second.out" | awk '$5 == "busy_hot" { print $1; exit }')
within "$self" 70 100 && pass "--stdio: busy_hot self $self% is about 90" || { fail "--stdio: busy_hot self '$self'"; cat "$TMP/stdio.out"; }
[ ! -s "$TMP/stdio.err" ] && pass "--stdio: nothing on stderr" || fail "--stdio stderr: $(head -2 "$TMP/stdio.err")"

# not a terminal: --stdio by itself; --rows cuts the table
"$FIRN" top -n 1 --rows 2 --sort total -p "$BP" | cat >"$TMP/pipe.out"
[ "$(grep -c '^firn top:' "$TMP/pipe.out")" -eq 1 ] && [ "$(table_rows "$TMP/pipe.out" | wc -l)" -eq 2 ] \
	&& grep -q 'sort: total' "$TMP/pipe.out" \
	&& pass "a pipe gets one --stdio table of 2 rows sorted by total" || { fail "pipe output"; cat "$TMP/pipe.out"; }

# the stack filters, over the window: busy_cold's stacks alone; busy_hot's cut at busy_hot
# (the last of three tables: busy_cold has a tenth of the samples)
"$FIRN" top --stdio -n 3 -d 1 --rows 0 -p "$BP" --focus '^busy_cold$' 2>&1 |
	awk '/^firn top:/ { l = "" } { l = l $0 "\n" } END { printf "%s", l }' >"$TMP/focus.out"
rows=$(table_rows "$TMP/focus.out")
[ "$(printf '%s\n' "$rows" | awk 'NR == 1 { print $5 }')" = busy_cold ] &&
	! printf '%s\n' "$rows" | grep -q ' busy_hot$' && grep -q '   stacks: filtered$' "$TMP/focus.out" &&
	pass "--focus busy_cold: busy_cold leads, busy_hot is not there, the header says stacks are filtered" || { fail "--focus busy_cold"; cat "$TMP/focus.out"; }
"$FIRN" top --stdio -n 2 -d 0.5 --rows 0 -p "$BP" --show-from '^busy_hot$' >"$TMP/from.out" 2>&1
rows=$(table_rows "$TMP/from.out")
[ "$(printf '%s\n' "$rows" | awk 'NR == 1 { print $5 }')" = busy_hot ] &&
	! printf '%s\n' "$rows" | grep -qE ' (main|_start|busy_cold)$' &&
	awk '$5 == "busy_hot" { exit !($2 == "100.00") }' <<<"$rows" &&
	pass "--show-from busy_hot: busy_hot is every stack's root, its callers and busy_cold gone" ||
	{ fail "--show-from busy_hot"; cat "$TMP/from.out"; }

# -- CMD: follows the command's children, prints a last table, exits with the command's status
"$FIRN" top --stdio -d 0.5 -- sh -c "'$BUSY' 1.2; exit 3" >"$TMP/cmd.out" 2>"$TMP/cmd.err"
rc=$?
[ $rc -eq 3 ] && pass "--stdio -- CMD exits with the command's status" || { fail "--stdio -- CMD exit $rc"; head -3 "$TMP/cmd.err"; }
grep -q 'command exited, status 3' "$TMP/cmd.out" && pass "--stdio -- CMD: the header says it exited" || fail "--stdio -- CMD: no exit note"
grep -q ' busy_hot$' "$TMP/cmd.out" && pass "--stdio -- CMD names the child's hot function" || { fail "--stdio -- CMD: no busy_hot"; cat "$TMP/cmd.out"; }

# the decaying window: busy_hot runs 1.5 s, then only busy_cold; busy_hot's weight then halves
# every 2 s (a factor 2^-0.25 = 0.84 per 0.5 s table) and busy_cold leads
"$FIRN" top --stdio -d 0.5 -- sh -c "'$BUSY' 1.5; '$BUSY' 3.5 cold" >"$TMP/decay.out" 2>&1
awk '/^firn top:/ { t++ } / busy_hot$/ { h[t] = $3 } END { for (i = t - 3; i <= t; i++) print h[i] }' \
	"$TMP/decay.out" >"$TMP/hot.samples"
ratios=$(awk 'NR > 1 && prev > 0 { printf "%.2f ", $1 / prev } { prev = $1 }' "$TMP/hot.samples")
bad=$(for r in $ratios; do within "$r" 0.70 0.95 || echo "$r"; done)
[ "$(echo $ratios | wc -w)" -eq 3 ] && [ -z "$bad" ] \
	&& pass "decay: busy_hot's weight falls by about 0.84 a table once it stops ($ratios)" \
	|| { fail "decay: ratios '$ratios'"; cat "$TMP/decay.out"; }
last=$(awk '/^firn top:/ { t++ } { l[t] = l[t] "\n" $0 } END { print l[t] }' "$TMP/decay.out" | \
	awk '/^  self%/ { getline; print $5; exit }')
[ "$last" = busy_cold ] && pass "decay: busy_cold leads the last table" || { fail "decay: last leader '$last'"; tail -12 "$TMP/decay.out"; }

# ---- -e usdt: a stack at every probe hit ----
# usdtfix fires usdtfix:hit 300 times through path_a, then 200 times through path_b (once the
# probe is attached), then lingers LINGER ms; top -e must show fire, hit 500 times, 60 % of it
# through path_a.
FX=$(readlink -f "$FIX/usdtfix")
"$FIRN" top --stdio -d 0.5 --rows 0 -e "usdt:$FX:usdtfix:hit" -- "$FX" 300 200 5000 600 \
	>"$TMP/usdt.out" 2>"$TMP/usdt.err"
rc=$?
[ $rc -eq 0 ] && grep -q "^firn top: command .*   event usdt:$FX:usdtfix:hit   " "$TMP/usdt.out" \
	&& pass "top -e usdt: exit 0, the header names the event" || { fail "top -e usdt: exit $rc"; head -3 "$TMP/usdt.err" "$TMP/usdt.out"; }
grep -q '^  self%  total%      hits  module' "$TMP/usdt.out" && grep -qE '^[0-9]+ hits/s ' "$TMP/usdt.out" \
	&& pass "top -e usdt: the table and the header count hits" || fail "top -e usdt: no hits column"
# the last table (the hits come within a few ms, about 250 ms after the start: normally all in
# the first interval, then decayed alike; should a refresh split them, path_a's share moves
# toward 51 %)
awk '/^firn top:/ { t++; l = "" } { l = l $0 "\n" } END { printf "%s", l }' "$TMP/usdt.out" >"$TMP/usdt1.out"
first=$(table_rows "$TMP/usdt1.out" | awk 'NR == 1 { print $1, $5 }')
hits=$(table_rows "$TMP/usdt1.out" | awk 'NR == 1 { print $3 }')
pa=$(table_rows "$TMP/usdt1.out" | awk '$5 == "path_a" { print $2 }')
pb=$(table_rows "$TMP/usdt1.out" | awk '$5 == "path_b" { print $2 }')
[ "$first" = "100.00 fire" ] && within "$hits" 1 500 \
	&& pass "top -e usdt: fire leads, self 100% ($hits decayed hits)" \
	|| { fail "top -e usdt: first row '$first' ($hits hits)"; cat "$TMP/usdt.out"; }
within "$pa" 50 62 && within "$pb" 38 50 && pass "top -e usdt: path_a has $pa% of the hits (60), path_b $pb% (40)" \
	|| fail "top -e usdt: path_a '$pa', path_b '$pb'"

# -z: a refresh shows what was counted since the previous one alone. Every hit is in exactly one
# table (none twice, none lost), also those of a process that ended between two refreshes (its
# samples wait parked for the next cut); the table after the hits has none of them.
for linger in 600 0; do
	"$FIRN" top -z --stdio -d 0.3 --rows 0 -e "usdt:$FX:usdtfix:hit" -- \
		sh -c "'$FX' 300 200 5000 $linger; sleep 1" >"$TMP/zero.out" 2>"$TMP/zero.err"
	read -r sum tables next < <(awk '/^firn top:/ { t++ } / fire$/ { s += $3; n++; last = t }
		END { print s + 0, n + 0, (last && t > last) ? "after" : "none" }' "$TMP/zero.out")
	[ "$sum" = 500 ] && within "$tables" 1 2 && [ "$next" = after ] \
		&& pass "top -z (linger $linger ms): the 500 hits in $tables table(s), none in the next" \
		|| { fail "top -z (linger $linger ms): $sum hits in $tables tables ($next)"; cat "$TMP/zero.out"; }
	grep -q 'window: the last interval' "$TMP/zero.out" && pass "top -z: the header says so" || fail "top -z: header"
done
# -z with cpu-clock: each table holds the samples of its own interval, as many as the header's
# samples/s says it took in 0.5 s (give or take the 50 ms wake-ups; the first two intervals are
# left out: a late first table makes the second short). The decaying window would hold 2.5, 3.1
# and 3.6 times that in the 3rd, 4th and 5th tables.
"$FIRN" top -z --stdio -n 5 -d 0.5 --rows 0 -p "$BP" >"$TMP/zcpu.out" 2>&1
awk '/^firn top:/ { t++ } /^[0-9]+ samples\/s / { r[t] = $1 } /^ +[0-9.]+ +[0-9.]+ +[0-9]+  / { s[t] += $3 }
	END { for (i = 3; i <= 5; i++) print i, s[i] + 0, r[i] * 0.5 }' "$TMP/zcpu.out" >"$TMP/zcpu.sums"
bad=$(awk '{ d = $2 - $3; if (d < 0) d = -d; if (d > 2 + 0.15 * $3) print }' "$TMP/zcpu.sums")
total=$(awk '{ s += $2 } END { print s + 0 }' "$TMP/zcpu.sums")
[ "$(wc -l <"$TMP/zcpu.sums")" -eq 3 ] && [ -z "$bad" ] && [ "$total" -ge 3 ] \
	&& pass "top -z: each table holds one interval's samples ($(awk '{ printf "%s ", $2 }' "$TMP/zcpu.sums"))" \
	|| { fail "top -z: table samples vs the interval's: $(tr '\n' ';' <"$TMP/zcpu.sums")"; cat "$TMP/zcpu.out"; }

# ---- -e off-cpu: where the threads wait, live ----
# offcpu_mix waits per round 100 ms in sleep_short, 200 in sleep_long, 300 in wait_pipe (its
# child's waits are under main alone). -z tables, one per 0.5 s interval, every wait in exactly
# one of them: a function's milliseconds in a table are its total% of the table's (the ms column,
# self, adds up to it); summed over the tables they give the shares among the three waits, 1/6,
# 2/6, 3/6 (±2 pp: the waits are measured, not sampled, as in test_offcpu; 6 rounds), within 1 pp
# of the shares of the times the fixture measured itself, and each function's time within 10 %
# of its own clock.
MIX="$FIX/offcpu_mix"
"$FIRN" top -z --stdio -e off-cpu -d 0.5 --rows 0 -- "$MIX" 6 >"$TMP/off.out" 2>"$TMP/off.err"
rc=$?
[ $rc -eq 0 ] && pass "top -e off-cpu -- offcpu_mix: exit 0" || { fail "top -e off-cpu: exit $rc"; head -3 "$TMP/off.err"; }
grep -qE '^firn top: command .*offcpu_mix 6   event off-cpu   showing off_cpu \(ms\)   ' "$TMP/off.out" &&
	grep -qE '^[0-9]+ ms off_cpu/s   ' "$TMP/off.out" && grep -q '^  self%  total%        ms  module' "$TMP/off.out" \
	&& pass "top -e off-cpu: the header says off_cpu in ms, the column ms" || { fail "top -e off-cpu: header"; head -3 "$TMP/off.out"; }
# off_ms FILE: "sleep_short sleep_long wait_pipe" milliseconds summed over FILE's tables
off_ms() {
	awk 'function flush() { for (f in pct) ms[f] += pct[f] * tot / 100; delete pct; tot = 0 }
		/^firn top:/ { flush() } /^ +[0-9.]+ +[0-9.]+ +[0-9]+  / { tot += $3
			if ($NF ~ /^(sleep_short|sleep_long|wait_pipe)$/) pct[$NF] += $2 }
		END { flush(); printf "%.1f %.1f %.1f\n", ms["sleep_short"], ms["sleep_long"], ms["wait_pipe"] }' "$1"
}
read -r ms_s ms_l ms_p < <(off_ms "$TMP/off.out")
read -r own_s own_l own_p < <(awk '/^sleep_short / { s = $2 } /^sleep_long / { l = $2 } /^wait_pipe / { p = $2 }
	END { printf "%.1f %.1f %.1f\n", s / 1e6, l / 1e6, p / 1e6 }' "$TMP/off.err" "$TMP/off.out")
tot=$(awk -v a="$ms_s" -v b="$ms_l" -v c="$ms_p" 'BEGIN { print a + b + c }')
own=$(awk -v a="$own_s" -v b="$own_l" -v c="$own_p" 'BEGIN { print a + b + c }')
echo "# top -e off-cpu: sleep_short=$ms_s sleep_long=$ms_l wait_pipe=$ms_p ms (fixture's clock: $own_s $own_l $own_p)"
# a sleep lasts at least what it asks: 6 rounds x 600 ms, by the fixture's clock and in the tables
within "$own" 3600 100000 && within "$tot" 3500 100000 \
	&& pass "top -e off-cpu: the three waits took $own ms, the tables hold $tot ms (>= 3600)" \
	|| fail "top -e off-cpu: the three waits took $own ms, the tables hold $tot ms (wanted >= 3600)"
for f in "sleep_short $ms_s $own_s 16.67" "sleep_long $ms_l $own_l 33.33" "wait_pipe $ms_p $own_p 50"; do
	set -- $f
	sh=$(awk -v v="$2" -v t="$tot" 'BEGIN { printf "%.2f", t ? 100 * v / t : 0 }')
	osh=$(awk -v v="$3" -v t="$own" 'BEGIN { printf "%.2f", t ? 100 * v / t : 0 }')
	within "$sh" "$(awk -v w="$4" 'BEGIN { print w - 2 }')" "$(awk -v w="$4" 'BEGIN { print w + 2 }')" \
		&& pass "top -e off-cpu: $1 share $sh% is $4±2" || { fail "top -e off-cpu: $1 share $sh% not $4±2"; cat "$TMP/off.out" | head -40; }
	within "$sh" "$(awk -v w="$osh" 'BEGIN { print w - 1 }')" "$(awk -v w="$osh" 'BEGIN { print w + 1 }')" \
		&& pass "top -e off-cpu: $1 share $sh% is the fixture's $osh%±1" || fail "top -e off-cpu: $1 share $sh% not the fixture's $osh%±1"
	within "$2" "$(awk -v w="$3" 'BEGIN { print w * 0.9 }')" "$(awk -v w="$3" 'BEGIN { print w * 1.1 }')" \
		&& pass "top -e off-cpu: $1 $2 ms is the fixture's $3 ms±10%" || fail "top -e off-cpu: $1 $2 ms not the fixture's $3 ms±10%"
done
grep -qE '  (do_nanosleep|pipe_read|anon_pipe_read)$' "$TMP/off.out" \
	&& pass "top -e off-cpu: kernel frames say why" || fail "top -e off-cpu: no do_nanosleep/pipe_read rows"

# --sample-type: with cpu-clock and off-cpu the default is wall (as record writes it); a name or
# an index picks another; one that the events do not produce is a usage error, one line
"$FIRN" top --stdio -n 1 -d 0.3 -e cpu-clock -e off-cpu -p "$BP" >"$TMP/wall.out" 2>&1
grep -qE '^firn top: pid [0-9]+ \(busy\)   99 Hz x [0-9]+ CPUs   showing wall \(ms\)   ' "$TMP/wall.out" \
	&& pass "top -e cpu-clock -e off-cpu: shows wall by default" || { fail "top wall default"; head -3 "$TMP/wall.out"; }
"$FIRN" top --stdio -n 1 -d 0.3 -e cpu-clock -e off-cpu --sample-type off_cpu -p "$BP" >"$TMP/st.out" 2>&1
grep -qE '   showing off_cpu \(ms\)   ' "$TMP/st.out" && pass "--sample-type off_cpu: shown" || { fail "--sample-type off_cpu"; head -3 "$TMP/st.out"; }
"$FIRN" top --stdio -n 1 -d 0.3 -e cpu-clock -e off-cpu --sample-type 0 -p "$BP" >"$TMP/st.out" 2>&1
grep -qE '   showing samples   ' "$TMP/st.out" && grep -q '^  self%  total%   samples  module' "$TMP/st.out" \
	&& pass "--sample-type 0: samples" || { fail "--sample-type 0"; head -3 "$TMP/st.out"; }
expect_rc "--sample-type wall without cpu-clock: exit 2" 2 "$FIRN" top --stdio -n 1 -e off-cpu --sample-type wall -p "$BP"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -qx "firn top: no sample type 'wall' in this recording: it has 0 off_cpu/nanoseconds" "$TMP/err" \
	&& pass "--sample-type wall without cpu-clock: one line naming the types" || fail "--sample-type wall: $(cat "$TMP/err")"
expect_rc "--sample-type 9: exit 2" 2 "$FIRN" top --stdio -n 1 --sample-type 9 -p "$BP"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -qx "firn top: no sample type '9' in this recording: it has 0 samples/count, 1 cpu/nanoseconds" "$TMP/err" \
	&& pass "--sample-type 9: one line naming the types" || fail "--sample-type 9: $(cat "$TMP/err")"

# ---- full screen, in tmux ----
SOCK=firn-test-$$
TM() { tmux -L "$SOCK" "$@"; }
# screen: the pane's text into $TMP/screen
screen() { TM capture-pane -p -t top >"$TMP/screen"; }
# wait_screen REGEX SECONDS: polls the pane until REGEX matches a line; false after SECONDS
wait_screen() {
	local end=$(($(date +%s%N) + ${2%.*} * 1000000000 + 500000000))
	while [ "$(date +%s%N)" -lt "$end" ]; do
		screen
		grep -qE "$1" "$TMP/screen" && return 0
		sleep 0.1
	done
	return 1
}
# keys KEY...: sends keys, then lets the screen redraw
keys() { TM send-keys -t top "$@"; sleep 0.4; screen; }
show() { sed 's/^/    | /' "$TMP/screen"; }

# start_top: firn top -p BUSY full screen in a 120x40 pane; records stty before and after, and rc
start_top() {
	rm -f "$TMP/rc" "$TMP/stty.before" "$TMP/stty.after"
	TM new-session -d -s top -x 120 -y 40 \
		"stty -g >'$TMP/stty.before'; '$FIRN' top -p $BP; echo \$? >'$TMP/rc'; stty -g >'$TMP/stty.after'; sleep 60"
	T0=$(date +%s%N)
}
# ended_ok NAME: firn exited 0 and the terminal settings are as before
ended_ok() {
	local i
	for i in $(seq 50); do [ -s "$TMP/stty.after" ] && break; sleep 0.1; done
	[ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && pass "$1: exit 0" || fail "$1: exit '$(cat "$TMP/rc" 2>/dev/null)'"
	cmp -s "$TMP/stty.before" "$TMP/stty.after" && pass "$1: terminal settings restored" || fail "$1: stty differs"
	screen
	! grep -q '^firn top:' "$TMP/screen" && pass "$1: the screen is given back" || { fail "$1: firn's screen stays"; show; }
	TM kill-session -t top 2>/dev/null
}

start_top
if wait_screen '^ +[0-9.]+ +[0-9.]+ +[0-9]+  busy +busy_hot$' 3; then
	ms=$((($(date +%s%N) - T0) / 1000000))
	pass "busy_hot is in the table after ${ms} ms (<= 3 s)"
else
	fail "busy_hot not in the table within 3 s"; show
fi
sleep 1.2
screen
first=$(table_rows "$TMP/screen" | awk 'NR == 1 { print $5 }')
[ "$first" = busy_hot ] && pass "sorted by self, busy_hot is the first row" || { fail "first row is '$first'"; show; }
grep -q 'sort: self' "$TMP/screen" && pass "the header says sort: self" || fail "no 'sort: self'"
grep -q '^Enter annotate .* q quit' "$TMP/screen" && pass "the footer lists the keys" || fail "no footer"

keys s
grep -q 'sort: total' "$TMP/screen" && pass "s: the header says sort: total" || fail "s: no 'sort: total'"
table_rows "$TMP/screen" >"$TMP/rows"
first=$(awk 'NR == 1 { print $5 }' "$TMP/rows")
[ "$first" != busy_hot ] && awk '$5 == "main"' "$TMP/rows" | grep -q . \
	&& pass "s: busy_hot is no longer first ('$first' is), main is listed" || { fail "s: first row '$first'"; show; }
awk 'NR > 1 && $2 > prev + 0.001 { bad = 1 } { prev = $2 } END { exit bad }' "$TMP/rows" \
	&& pass "s: rows are in decreasing total%" || { fail "s: total% not decreasing"; show; }
htot=$(awk '$5 == "busy_hot" { print $2 }' "$TMP/rows")
mtot=$(awk '$5 == "main" { print $2 }' "$TMP/rows")
within "$mtot" "$htot" 100 && pass "s: main's total ($mtot%) >= busy_hot's ($htot%)" || fail "s: main $mtot busy_hot $htot"
keys s
grep -q 'sort: self' "$TMP/screen" && pass "s again: back to sort: self" || fail "s again: no 'sort: self'"

keys / c o l d
grep -q '^filter (regex' "$TMP/screen" && pass "/: the footer prompts for a regex" || { fail "/: no prompt"; show; }
keys Enter
table_rows "$TMP/screen" >"$TMP/rows"
if [ "$(awk '{ print $5 }' "$TMP/rows")" = busy_cold ] && grep -q 'filter: cold' "$TMP/screen" \
	&& grep -q '^1 function matches the filter' "$TMP/screen"; then
	pass "/cold: only busy_cold is listed"
else
	fail "/cold: rows are not just busy_cold"; show
fi
keys / '(' Enter
grep -q "invalid regex '('" "$TMP/screen" && grep -q 'filter: cold' "$TMP/screen" \
	&& pass "/(: an invalid regex is reported and the filter kept" || { fail "/(: no error"; show; }
keys / Enter
grep -q 'filter: (none)' "$TMP/screen" && table_rows "$TMP/screen" | grep -q ' busy_hot$' \
	&& pass "/ then Enter: the filter is gone" || { fail "empty filter"; show; }

keys Home Enter
hdr=$(grep -oE '^annotate busy_hot \(busy\): [0-9.]+% of the samples' "$TMP/screen")
share=$(printf '%s' "$hdr" | grep -oE '[0-9.]+%' | tr -d %)
if [ -n "$hdr" ]; then pass "Enter: the annotation of busy_hot is shown"; else fail "Enter: no annotation header"; show; fi
sum=$(awk '/^ share%   address/ { on = 1; next } on && /^ *([0-9]+\.[0-9][0-9])? +[0-9a-f]+:  / {
	v = substr($0, 1, 7); if (v ~ /[0-9]/) s += v } END { printf "%.2f", s }' "$TMP/screen")
within "$share" 75 100 && pass "Enter: busy_hot has $share% of the samples" || fail "Enter: share '$share'"
within "$sum" "$(awk -v s="$share" 'BEGIN { print s - 0.5 }')" "$(awk -v s="$share" 'BEGIN { print s + 0.5 }')" \
	&& pass "Enter: instruction shares add up to $sum% (function: $share%)" || { fail "Enter: shares add up to $sum%, function has $share%"; show; }
grep -qE '^ +([0-9.]+)? +[0-9a-f]+:  imul ' "$TMP/screen" && pass "Enter: the imul of the hot loop is listed" || fail "Enter: no imul"
grep -qE '^ +busy\.c:[0-9]+ +x = x \* 6364136223846793005UL' "$TMP/screen" \
	&& pass "Enter: source lines are interleaved" || { fail "Enter: no source line"; show; }
keys q
grep -q '^  self%  total%' "$TMP/screen" && pass "q: back to the table" || { fail "q: not back"; show; }

keys c
grep -q '^callers (who calls it) of busy_hot:' "$TMP/screen" && grep -qE '^ +[0-9.]+ +busy +main$' "$TMP/screen" \
	&& pass "c: main is busy_hot's caller" || { fail "c: no callers"; show; }
grep -qE '^ +[0-9.]+ +- +\[self\]$' "$TMP/screen" && pass "c: [self] is a callee" || fail "c: no [self]"
keys h
grep -q '^Keys of the table' "$TMP/screen" && pass "h: the help is shown" || { fail "h: no help"; show; }
keys Escape q
grep -q '^  self%  total%' "$TMP/screen" && pass "Esc, q: back to the table" || { fail "Esc, q: not back"; show; }

TM resize-window -t top -x 90 -y 20
sleep 1.3
screen
[ "$(wc -l <"$TMP/screen")" -eq 20 ] && tail -1 "$TMP/screen" | grep -q '^Enter annotate' \
	&& grep -q '^firn top: pid' "$TMP/screen" && pass "resize to 90x20: redrawn with the footer on the last line" \
	|| { fail "resize: not redrawn"; show; }
keys q
ended_ok "q"

start_top
wait_screen 'busy_hot' 3 >/dev/null
TM send-keys -t top C-c
ended_ok "Ctrl-C"

start_top
wait_screen 'busy_hot' 3 >/dev/null
kill -TERM "$(pgrep -P "$(TM list-panes -t top -F '#{pane_pid}')" firn)"
ended_ok "SIGTERM"

# ---- the callers/callees view of a function whose callees are in the kernel ----
# cat spends its time in read(2): libc's read wrapper calls into the kernel. With the table
# filtered to that one function (module libc.so.6, 9 characters), its callees' module
# [kernel.kallsyms] must still be shown whole, and the cursor must start (and stay) on function
# rows, never on the section headings or the blank line between them.
cat /dev/zero >/dev/null &
CP=$!
sleep 0.3
"$FIRN" top --stdio -n 2 -d 0.5 --rows 0 -p "$CP" >"$TMP/cat.out" 2>&1
readfn=$(table_rows "$TMP/cat.out" | awk '$4 == "libc.so.6" && $5 ~ /read/ { print $5; exit }')
# selected: the text of the highlighted list row (in reverse video; not the column line or the
# footer). tmux writes only attribute changes: reverse video stays on until an SGR turns it off.
selected() {
	TM capture-pane -p -e -t top | awk '{
		line = $0; text = ""; hit = 0
		while (match(line, /\033\[[0-9;]*m/)) {
			pre = substr(line, 1, RSTART - 1); text = text pre
			if (pre != "" && rev) hit = 1
			n = split(substr(line, RSTART + 2, RLENGTH - 3), p, ";")
			if (n == 0) rev = 0
			for (i = 1; i <= n; i++)
				if (p[i] == "" || p[i] == 0 || p[i] == 27) rev = 0; else if (p[i] == 7) rev = 1
			line = substr(line, RSTART + RLENGTH)
		}
		if (line != "" && rev) hit = 1
		if (hit) print text line
	}' | grep -vE '^ *(self|share)%|^Enter '
}
# wait_selected REGEX SECONDS: polls until the highlighted row matches REGEX
wait_selected() {
	local end=$(($(date +%s%N) + $2 * 1000000000))
	while [ "$(date +%s%N)" -lt "$end" ]; do
		selected >"$TMP/sel"
		[ "$(wc -l <"$TMP/sel")" -eq 1 ] && grep -qE -- "$1" "$TMP/sel" && return 0
		sleep 0.1
	done
	return 1
}
# wait_selected_fn "MODULE FUNCTION" SECONDS: polls until the highlighted row is that function's
# (its share changes with every refresh)
wait_selected_fn() {
	local end=$(($(date +%s%N) + $2 * 1000000000))
	while [ "$(date +%s%N)" -lt "$end" ]; do
		[ "$(selected | awk '{ print $(NF - 1), $NF }')" = "$1" ] && return 0
		sleep 0.1
	done
	selected >"$TMP/sel"
	return 1
}
if [ -z "$readfn" ]; then
	fail "calls view: no libc read function in cat's table"; cat "$TMP/cat.out"
else
	rm -f "$TMP/rc"
	TM new-session -d -s top -x 120 -y 40 "'$FIRN' top -p $CP; echo \$? >'$TMP/rc'; sleep 60"
	wait_screen " $readfn\$" 5 || { fail "calls view: $readfn not in the table"; show; }
	TM send-keys -t top / "^$readfn\$" Enter
	wait_screen '^1 function matches the filter' 5 || { fail "calls view: filter"; show; }
	TM send-keys -t top c
	if wait_screen "^callees \(.*\) of $readfn:\$" 5 && wait_screen '^ +[0-9.]+  \[kernel' 3; then
		pass "c: the callers/callees of $readfn are shown"
	else
		fail "c: no callees heading or kernel callee"; show
	fi
	FN_ROW='^ +[0-9]+\.[0-9]+  [^ ]+ +[^ ]+$'
	wait_selected "$FN_ROW" 3 && pass "c: the cursor starts on a function row ($(cat "$TMP/sel"))" \
		|| { fail "c: the highlighted row is '$(cat "$TMP/sel")'"; show; }
	grep -qE '^ +[0-9.]+  \[kernel\.kallsyms\]  [^ ]+$' "$TMP/screen" \
		&& pass "c: [kernel.kallsyms] is shown whole" || { fail "c: the module is cut"; show; }
	# the callers' rows end at the blank line. Up on the first caller stays there; then Down
	# once per caller skips the blank line and the callees' heading: the first callee
	awk '/^callers / { on = 1; next } on && /^$/ { exit } on { print $2, $3 }' "$TMP/screen" >"$TMP/callers"
	first_callee=$(awk '/^callees / { getline; print $2, $3; exit }' "$TMP/screen")
	TM send-keys -t top Up Up
	for _ in $(seq "$(wc -l <"$TMP/callers")"); do TM send-keys -t top Down; done
	wait_selected_fn "$first_callee" 3 \
		&& pass "Up, Up, then Down once per caller: the first callee is selected" \
		|| { fail "Up, Down: the highlighted row is '$(cat "$TMP/sel")', not '$first_callee'"; show; }
	TM send-keys -t top Up
	wait_selected_fn "$(tail -1 "$TMP/callers")" 3 \
		&& pass "Up from the first callee: the last caller is selected" \
		|| { fail "Up: the highlighted row is '$(cat "$TMP/sel")'"; show; }
	TM send-keys -t top End Home
	wait_selected_fn "$(head -1 "$TMP/callers")" 3 \
		&& pass "End, Home: the first caller is selected" \
		|| { fail "Home: the highlighted row is '$(cat "$TMP/sel")'"; show; }
	TM send-keys -t top q q q
	for _ in $(seq 50); do [ -s "$TMP/rc" ] && break; sleep 0.1; done
	[ "$(cat "$TMP/rc" 2>/dev/null)" = 0 ] && pass "calls view: q q q exits 0" || fail "calls view: exit '$(cat "$TMP/rc" 2>/dev/null)'"
	TM kill-session -t top 2>/dev/null
fi
kill "$CP" 2>/dev/null
TM kill-server 2>/dev/null

# ---- report --annotate on a saved profile ----
cp "$BUSY" "$TMP/busy-copy"
"$FIRN" record -q -F 999 -o "$TMP/busy.pb.gz" -- "$TMP/busy-copy" 2
expect_rc "report --annotate busy_hot: exit 0" 0 "$FIRN" report --annotate busy_hot "$TMP/busy.pb.gz"
cp "$TMP/out" "$TMP/annotate.out"
grep -q "^# busy_hot: symbol busy_hot at [0-9a-f]*-[0-9a-f]* in $TMP/busy-copy$" "$TMP/annotate.out" \
	&& pass "--annotate: the header names the symbol and the file" || { fail "--annotate header"; head -5 "$TMP/annotate.out"; }
share=$(sed -n 's/^# \([0-9.]*\)% of [0-9]* samples.*/\1/p' "$TMP/annotate.out")
# the hot loop: from the imul to the conditional jump back to it
loop=$(awk '/^ *([0-9.]+)? +[0-9a-f]+:  imul / { on = 1 } on && /^ *([0-9.]+)? +[0-9a-f]+:  / {
	v = substr($0, 1, 7); if (v ~ /[0-9]/) s += v } on && /:  jne / { exit } END { printf "%.2f", s }' "$TMP/annotate.out")
all=$(awk '/^ *([0-9.]+)? +[0-9a-f]+:  / { v = substr($0, 1, 7); if (v ~ /[0-9]/) s += v } END { printf "%.2f", s }' "$TMP/annotate.out")
within "$share" 75 100 && pass "--annotate: busy_hot has $share% of the samples" || fail "--annotate: share '$share'"
within "$all" "$(awk -v s="$share" 'BEGIN { print s - 0.5 }')" "$(awk -v s="$share" 'BEGIN { print s + 0.5 }')" \
	&& pass "--annotate: instruction shares add up to $all% ($share%)" || fail "--annotate: shares add up to $all%, not $share%"
within "$loop" "$(awk -v s="$share" 'BEGIN { print s * 0.95 }')" 100 \
	&& pass "--annotate: the hot loop (imul .. jne) holds $loop% of the function's $share%" \
	|| { fail "--annotate: the loop holds $loop% of $share%"; cat "$TMP/annotate.out"; }
mul_line=$(grep -n 'x = x \* 6364136223846793005UL' "$ROOT/tests/fixtures/busy.c" | cut -d: -f1)
grep -qE "^ +busy\.c:$mul_line +x = x \* 6364136223846793005UL" "$TMP/annotate.out" \
	&& pass "--annotate: the loop's source line is shown" || fail "--annotate: no source line"
[ ! -s "$TMP/err" ] && pass "--annotate: nothing on stderr" || fail "--annotate stderr: $(head -2 "$TMP/err")"

expect_rc "--annotate no such function: exit 1" 1 "$FIRN" report --annotate no_such_fn "$TMP/busy.pb.gz"
[ "$(head -1 "$TMP/err")" = "firn: cannot annotate 'no_such_fn': no samples of it in '$TMP/busy.pb.gz'" ] \
	&& pass "--annotate no such function: message" || fail "--annotate no such function: $(head -1 "$TMP/err")"

# the same code with another build id at the recorded path: annotated, with a warning
gcc -O2 -g -fno-omit-frame-pointer -Wl,--build-id=0x0123456789abcdef -o "$TMP/busy-copy" \
	"$ROOT/tests/fixtures/busy.c"
expect_rc "--annotate, build id changed: exit 0" 0 "$FIRN" report --annotate busy_hot "$TMP/busy.pb.gz"
grep -q "^firn: warning: build id of '$TMP/busy-copy' is 0123456789abcdef, the recording's was" "$TMP/err" \
	&& grep -q '^# build id 0123456789abcdef DIFFERS from the recorded' "$TMP/out" \
	&& pass "--annotate, build id changed: said on stderr and in the header" || { fail "--annotate build id"; cat "$TMP/err"; head -3 "$TMP/out"; }

rm -f "$TMP/busy-copy"
expect_rc "--annotate, binary gone: exit 1" 1 "$FIRN" report --annotate busy_hot "$TMP/busy.pb.gz"
[ "$(head -1 "$TMP/err")" = "firn: cannot annotate 'busy_hot': cannot open '$TMP/busy-copy': No such file or directory" ] \
	&& pass "--annotate, binary gone: message" || fail "--annotate binary gone: $(head -1 "$TMP/err")"

# a long session forgets the processes that end: churn starts 160+ of them in 4 s (longer on a
# loaded machine: top runs until churn exits, -n only bounds a runaway)
"$FIRN" -v top --stdio -n 200 -d 0.5 --rows 3 -- "$FIX/churn" 40 20 "$FIX/split" 5 \
	>"$TMP/out" 2>"$TMP/err"
read -r held ended < <(sed -nE 's/.*; ([0-9]+) snapshots held, ([0-9]+) processes ended and forgotten$/\1 \2/p' \
	"$TMP/err")
echo "# top: ${held:-?} snapshots held at the end, ${ended:-?} processes ended and forgotten"
check "top forgets ended processes (${ended:-none} > 40)" [ "${ended:-0}" -gt 40 ]
check "and holds fewer snapshots (${held:-?}) than it forgot" [ "${held:-999999}" -lt "${ended:-0}" ]
grep -q "burn" "$TMP/out" && pass "top still names churn's work (burn)" || fail "no burn in top's tables"

