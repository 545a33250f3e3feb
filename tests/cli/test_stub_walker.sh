# The stub runtime with a BPF walker of its own (bpf/stub.bpf.h, tests/toy/stub_walker.h: in
# build/tests/firn-toy's registry only, on with FIRN_TOY_STUB): a runtime's walker reached by its
# tag alone. A recording of offcpu_mix (spins, sleeps, waits on a pipe) with -e cpu-clock
# -e off-cpu holds its frame, resolved to stub_frame, at the root of the process's cpu-clock
# samples (through the unwinders array) and of its waits, and a USDT probe's stacks (through
# take_stacks: one composition of the walkers for every event); its summary line reports its
# walker's counters (read by tag), which add up to at least the frames the profile holds. Without FIRN_TOY_STUB, and with the shipped firn, there is no stub frame nor line.
. "$(dirname "$0")/lib.sh"

TOY="$ROOT/$BUILD/tests/firn-toy"
MIX="$FIX/offcpu_mix"
if [ -n "${FIRN_SANITIZED:-}" ]; then skip "the stub walker (the plain build's tests only)"; exit 0; fi
if [ ! -x "$TOY" ]; then fail "$TOY is missing (make $BUILD/tests/firn-toy)"; exit 0; fi
if ! is_root; then skip "recording the stub walker (needs root)"; exit 0; fi

# of TYPE FOLDED: "with without" samples (or ns) of offcpu_mix's main process in FOLDED with and
# without stub_frame just under the process name (the root end of its user stack)
of() {
	awk '$1 ~ /^offcpu_mix;/ { n = $NF; if ($1 ~ /^offcpu_mix;stub_frame;/) w += n; else o += n }
		END { printf "%d %d\n", w, o }' "$1"
}

FIRN_TOY_STUB=1 "$TOY" record -F 199 -e cpu-clock -e off-cpu -o "$TMP/stub.pb.gz" \
	-- sh "$CPUTIME" "$TMP/mix.cpu" "$MIX" 3 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && pass "firn-toy record -e cpu-clock -e off-cpu with the stub exits 0" \
	|| { fail "firn-toy record with the stub: exit $rc"; sed 's/^/    /' "$TMP/err"; }
"$FIRN" report --folded --sample-type samples "$TMP/stub.pb.gz" >"$TMP/cpu.folded" 2>"$TMP/rerr" \
	|| fail "report --folded --sample-type samples: $(head -1 "$TMP/rerr")"
"$FIRN" report --folded --sample-type off_cpu "$TMP/stub.pb.gz" >"$TMP/off.folded" 2>"$TMP/rerr" \
	|| fail "report --folded --sample-type off_cpu: $(head -1 "$TMP/rerr")"

# cpu-clock: the spin samples (after the first, which attached the process) all carry the frame
read -r cw co < <(of "$TMP/cpu.folded")
floor=$(sample_floor "$TMP/mix.cpu" 199 50)
echo "# cpu-clock: $cw samples of offcpu_mix with stub_frame, $co without (floor $floor)"
[ "$cw" -ge "$floor" ] && [ "$co" -le 3 ] \
	&& pass "cpu-clock: $cw of offcpu_mix's samples under stub_frame (>= $floor), $co before its attach (<= 3)" \
	|| { fail "cpu-clock: $cw with stub_frame (>= $floor), $co without (<= 3)"; head -5 "$TMP/cpu.folded" | cut -c1-200; }
grep -q '^offcpu_mix;stub_frame;.*;spin' "$TMP/cpu.folded" && pass "cpu-clock: stub_frame;...;spin keeps the native frames under it" \
	|| fail "cpu-clock: no stub_frame;...;spin stack"

# off-cpu: the waits of the main thread carry the frame, but those begun before its first sample
# was delivered (its attach): the first round's first sleeps at most (0.3 s of its 1.8 s off the CPU)
read -r ow oo < <(of "$TMP/off.folded")
echo "# off-cpu: $ow ns of offcpu_mix with stub_frame, $oo ns without"
awk -v w="$ow" -v o="$oo" 'BEGIN { exit !(w > 1e9 && o <= w / 3) }' \
	&& pass "off-cpu: $ow ns of offcpu_mix's waits under stub_frame (> 1 s), $oo ns without (<= a third)" \
	|| { fail "off-cpu: $ow ns with stub_frame, $oo ns without"; head -5 "$TMP/off.folded" | cut -c1-200; }
for f in sleep_long wait_pipe; do
	grep -q "^offcpu_mix;stub_frame;.*;$f;" "$TMP/off.folded" && pass "off-cpu: stub_frame;...;$f" \
		|| fail "off-cpu: no stub_frame;...;$f stack"
done

# the summary line: its walker's counters by tag, at least the cpu-clock frames the profile holds
# (each off-CPU wait added one more), none full
line=$(grep '^firn: stub: ' "$TMP/err")
read -r procs added full < <(printf '%s\n' "$line" |
	sed -n 's/^firn: stub: \([0-9]*\) processes, \([0-9]*\) frames added, \([0-9]*\) full$/\1 \2 \3/p')
echo "# summary: $line"
[ -n "${procs:-}" ] && [ "$procs" -ge 2 ] && [ "$added" -gt "$cw" ] && [ "$full" = 0 ] \
	&& pass "summary: $procs processes told (sh, offcpu_mix, its child), $added frames added (> $cw cpu-clock ones), 0 full" \
	|| fail "summary: '$line' (wanted >= 2 processes, > $cw frames, 0 full)"

# usdt: a probe's stacks get the walkers' frames as every event's do (bpf/walkers.h: one
# composition), the stub's too. usdtfix sleeps until the probe's semaphore is set and 200 ms
# more: its waits (-e off-cpu) have it attached before it fires 300 + 200 hits
FX=$(readlink -f "$FIX/usdtfix")
FIRN_TOY_STUB=1 "$TOY" record -e off-cpu -e "usdt:$FX:usdtfix:hit" -o "$TMP/usdt.pb.gz" \
	-- "$FX" 300 200 5000 >/dev/null 2>"$TMP/err"
rc=$?
"$FIRN" report --folded --sample-type usdt_usdtfix_hit "$TMP/usdt.pb.gz" >"$TMP/usdt.folded" 2>"$TMP/rerr" \
	|| fail "report --folded --sample-type usdt_usdtfix_hit: $(head -1 "$TMP/rerr")"
read -r uw uo < <(awk '{ n = $NF; if ($1 ~ /^usdtfix;stub_frame;.*;main;path_[ab];fire$/) w += n; else o += n }
	END { printf "%d %d\n", w, o }' "$TMP/usdt.folded")
echo "# usdt: $uw hits with stub_frame, $uo without"
[ $rc -eq 0 ] && [ "$uw" = 500 ] && [ "$uo" = 0 ] \
	&& pass "usdt: all 500 hits under stub_frame;...;main;path_X;fire, none without" \
	|| { fail "usdt: exit $rc, $uw hits with stub_frame, $uo without (wanted 500, 0)"; head -3 "$TMP/usdt.folded" | cut -c1-200; }

# off: firn-toy without FIRN_TOY_STUB, and the shipped firn, have no stub frame nor line
for bin in "$TOY" "$FIRN"; do
	"$bin" record -e cpu-clock -e off-cpu -o "$TMP/plain.pb.gz" -- "$MIX" 1 >/dev/null 2>"$TMP/err"
	"$FIRN" report --folded "$TMP/plain.pb.gz" >"$TMP/plain.folded" 2>/dev/null
	! grep -q stub_frame "$TMP/plain.folded" && ! grep -q '^firn: stub' "$TMP/err" && [ -s "$TMP/plain.folded" ] \
		&& pass "$(basename "$bin") without the stub: no stub_frame, no stub line" \
		|| fail "$(basename "$bin") without the stub: $(grep -c stub_frame "$TMP/plain.folded") stub stacks"
done
