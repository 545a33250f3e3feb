# OpenTelemetry thread contexts (OTEP 4947) on samples, read in the kernel (bpf/otelctx.bpf.h,
# lib/runtimes/otelthread.c): the otelctx fixture's main thread spins in span a 1 s, span b 2 s,
# no span 1 s, its worker in span c 2 s (CPU time), each span with an http_route attribute that
# its OTEP 4719 process context's key map names.
#  - local-exec, at 1999 Hz: samples labelled a:b:c at 1:2:2, each share within 10 % (the
#    issue's bound; with enough samples that 3 binomial standard deviations are under it: the
#    threads' shares of a loaded host's CPU sampling move b and c by more than 3 sd, 0.424 and
#    0.383 once at a load of 7); labels trace_id, span_id (lowercase hex)
#    and http_route, read back by go tool pprof -tags and report --group-by, which ranks b and c
#    above a; the summary's otel line (3 contexts, none folded);
#  - every TLS model build (initial-exec, TLSDESC, general-dynamic, and dlopen: TLSDESC in static
#    and in dynamic TLS, general-dynamic): each span's samples carry its own span_id (a sample
#    under in_span without one: at most 5 % of them), and the main thread's spin after the
#    record was cleared carries none (no stale id);
#  - off-CPU: a 0.6 s sleep inside span a is counted under span a's span_id;
#  - bounded: a flood of spans (a new one every 100 us, at 4999 Hz) keeps 4096 contexts, the
#    samples of later ones labelled span_id "other", as many as the summary says it folded;
#  - continuous: the same flood recorded with --every 0.5: the contexts no cut used are let go
#    (their ids taken out of the kernel's table), so more than 4096 get ids and none is folded;
#  - switching: the main thread alternating spans a and b every few us in one record rewritten
#    in place (same address, valid cleared meanwhile): each of switch_in_a's and switch_in_b's
#    samples carries its own span's id, none the other's (the kernel's per-thread memory of the
#    last record checks its header, not only its address);
#  - the process context (OTEP 4719, issue 50): every sample of the process, in a span or not,
#    carries its service.name and its attribute deployment.environment.name; record --push with
#    no service_name pushes as otelctx-fixture, with --label service_name=mine as mine, and
#    firn push of its profile as otelctx-fixture;
#  - --no-otel: no labels, no otel line.
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording thread contexts (needs root)"; exit 0; fi
OTEL="$FIX/otelctx"
[ -x "$OTEL" ] || { fail "$OTEL is missing (make fixtures)"; exit 0; }
A=a0a1a2a3a4a5a6a7 B=b0b1b2b3b4b5b6b7 C=c0c1c2c3c4c5c6c7

# group FILE: "span_id=X;stack N" folded lines of FILE grouped by span_id, __libc frames dropped
group() {
	"$FIRN" report --group-by span_id --folded "$@" 2>/dev/null | sed 's/;__libc[^;]*//g'
}
# counts FOLDED: "a b c inspan_unlabelled stale" samples: under span a, b, c; under in_span with no
# span_id; main's spin outside in_span with a span_id (a stale one)
counts() {
	awk -v A="$A" -v B="$B" -v C="$C" '{ n = $NF; split($1, f, ";"); s = f[1]; sub(/^span_id=/, "", s)
		if (s == A) a += n; else if (s == B) b += n; else if (s == C) c += n
		if ($1 ~ /;in_span;/ && s == "(none)") u += n
		if ($1 ~ /;main;spin/ && $1 !~ /in_span/ && s != "(none)") st += n }
		END { printf "%d %d %d %d %d\n", a, b, c, u, st }' "$1"
}

# ---- local-exec, the shares ----
OTELCTX_SCALE_MS=600 "$FIRN" record -F 1999 -o "$TMP/le.pb.gz" -- sh "$CPUTIME" "$TMP/le.cpu" \
	"$OTEL" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && pass "record the local-exec build: exit 0" || { fail "record: exit $rc"; sed 's/^/    /' "$TMP/err"; }
group "$TMP/le.pb.gz" >"$TMP/le.folded"
read -r a b c u st < <(counts "$TMP/le.folded")
n=$((a + b + c))
floor=$(sample_floor "$TMP/le.cpu" 1999 80)
echo "# local-exec: a $a b $b c $c (n $n, floor $floor), unlabelled in a span $u, stale $st"
[ "$n" -ge "$floor" ] && pass "local-exec: $n samples in spans (>= $floor from CPU time)" \
	|| fail "local-exec: $n samples in spans (< $floor)"
for s in "a $a 1" "b $b 2" "c $c 2"; do
	set -- $s
	awk -v k="$2" -v n="$n" -v w="$3" -v name="$1" 'BEGIN {
		if (n == 0) exit 1; p = w / 5; sd = sqrt(p * (1 - p) / n); got = k / n
		tol = 3 * sd; printf "# share %s: %.4f, expected %.4f, 3 sd %.4f\n", name, got, p, tol
		exit !(got - p <= p * 0.10 && p - got <= p * 0.10 && tol <= p * 0.10) }' \
		&& pass "local-exec: span $1's share of a:b:c within 10 % of $3/5 (3 sd under 10 %)" \
		|| fail "local-exec: span $1: $2 of $n samples, expected $3/5 ±10 %"
done
[ "$st" -eq 0 ] && pass "local-exec: no sample after the record was cleared carries a span" \
	|| fail "local-exec: $st samples of main's spin outside a span carry a span_id"
"$FIRN" report --group-by span_id "$TMP/le.pb.gz" >"$TMP/rank" 2>&1
rank=$(awk '$3 ~ /^[0-9a-f]+$/ { printf "%s ", $3 }' "$TMP/rank")
case "$rank" in
"$B $C $A "|"$C $B $A ") pass "report --group-by span_id ranks b and c above a" ;;
*) fail "report --group-by span_id ranks '$rank'"; cat "$TMP/rank" ;;
esac
"$FIRN" report --group-by http_route "$TMP/le.pb.gz" >"$TMP/routes" 2>&1
for r in /route/a /route/b /route/c; do
	grep -q " $r " "$TMP/routes" && pass "report --group-by http_route: $r" || fail "no http_route $r"
done
if command -v go >/dev/null; then
	go tool pprof -tags "$TMP/le.pb.gz" >"$TMP/tags" 2>&1
	grep -q "^ http_route:" "$TMP/tags" && grep -q ": /route/b$" "$TMP/tags" &&
		grep -q ": 202122232425262728292a2b2c2d2e2f$" "$TMP/tags" && grep -q ": $B$" "$TMP/tags" \
		&& pass "go tool pprof -tags: http_route, trace_id and span_id labels" \
		|| { fail "go tool pprof -tags lacks the labels"; head -30 "$TMP/tags"; }
else
	skip "go tool pprof -tags (no go)"
fi
line=$(grep '^firn: otel: ' "$TMP/err")
echo "# $line"
case "$line" in
"firn: otel: 1 processes with a thread context, "*" samples in 3 contexts, 0 samples folded"*) pass "summary: 3 contexts, none folded" ;;
*) fail "summary: '$line'" ;;
esac
# every sample with a context is counted, those a CPU had not yet added to the shared counter too
said=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9]*\) samples in [0-9]* contexts.*/\1/p')
[ "${said:-x}" = "$n" ] && pass "summary: $said samples with a context, as many as the profile's labelled samples" \
	|| fail "summary: ${said:-no} samples with a context, the profile has $n labelled"

# ---- every TLS model: each span's own id, no stale id ----
model() { # NAME EXE [ENV...]
	local name=$1 exe=$2
	shift 2
	env OTELCTX_SCALE_MS=150 LD_LIBRARY_PATH="$FIX" "$@" "$FIRN" record -F 499 -o "$TMP/m.pb.gz" \
		-- "$FIX/$exe" >/dev/null 2>"$TMP/merr" || { fail "$name: record failed"; return; }
	group "$TMP/m.pb.gz" >"$TMP/m.folded"
	read -r a b c u st < <(counts "$TMP/m.folded")
	echo "# $name: a $a b $b c $c, unlabelled in a span $u, stale $st"
	local ins=$((a + b + c + u))
	[ "$a" -ge 20 ] && [ "$b" -ge 40 ] && [ "$c" -ge 40 ] && [ $((u * 20)) -le "$ins" ] \
		&& pass "$name: spans a, b, c each labelled ($a, $b, $c), $u of $ins span samples without" \
		|| { fail "$name: a $a b $b c $c, $u of $ins span samples unlabelled"; grep otel "$TMP/merr"; }
	[ "$st" -eq 0 ] && pass "$name: no stale span after the record was cleared" \
		|| fail "$name: $st samples with a stale span_id"
}
model initial-exec otelctx-ie
model tlsdesc otelctx-desc
model general-dynamic otelctx-gd
model "dlopen tlsdesc (static TLS)" otelctx-dlopen OTELCTX_LIB=libotelctx-desc.so
model "dlopen tlsdesc (dynamic TLS)" otelctx-dlopen OTELCTX_LIB=libotelctx-desc.so \
	GLIBC_TUNABLES=glibc.rtld.optional_static_tls=0
model "dlopen general-dynamic" otelctx-dlopen OTELCTX_LIB=libotelctx-gd.so

# ---- off-CPU: the waiting thread's context ----
OTELCTX_SCALE_MS=200 OTELCTX_WAIT_MS=600 "$FIRN" record -e cpu-clock -e off-cpu -o "$TMP/off.pb.gz" \
	-- "$OTEL" >/dev/null 2>"$TMP/err" || fail "record -e off-cpu failed"
"$FIRN" report --sample-type off_cpu --group-by span_id --folded "$TMP/off.pb.gz" >"$TMP/off.folded" 2>/dev/null
offa=$(awk -v A="span_id=$A" '{ split($1, f, ";") } f[1] == A && /nanosleep/ { n += $NF } END { print n + 0 }' "$TMP/off.folded")
echo "# off-CPU under span a's nanosleep: $offa ns"
[ "$offa" -ge 500000000 ] && [ "$offa" -le 900000000 ] \
	&& pass "off-CPU: span a's 0.6 s sleep counted under its span_id ($offa ns)" \
	|| { fail "off-CPU: $offa ns under span a's nanosleep (wanted 0.5-0.9 s)"; cut -c1-160 "$TMP/off.folded"; }

# ---- bounded: a flood of contexts folds into 'other', counted ----
OTELCTX_FLOOD_MS=1000 "$FIRN" record -F 4999 -o "$TMP/fl.pb.gz" -- "$OTEL" >/dev/null 2>"$TMP/err" \
	|| fail "record the flood failed"
line=$(grep '^firn: otel: ' "$TMP/err")
read -r ctxs folded < <(printf '%s\n' "$line" | sed -n 's/.* samples in \([0-9]*\) contexts, \([0-9]*\) samples folded.*/\1 \2/p')
"$FIRN" report --group-by span_id "$TMP/fl.pb.gz" >"$TMP/fl" 2>&1
other=$(awk '$3 == "other" { print $2 }' "$TMP/fl")
spans=$(awk '$3 ~ /^[0-9a-f]+$/ && length($3) == 16' "$TMP/fl" | wc -l)
echo "# flood: $line; $spans span ids, ${other:-0} samples 'other'"
[ "${ctxs:-0}" -eq 4096 ] && [ "${folded:-0}" -gt 0 ] && [ "${other:-0}" -eq "$folded" ] && [ "$spans" -le 4096 ] \
	&& pass "flood: 4096 contexts kept, $folded samples folded into span_id 'other' (counted as many)" \
	|| fail "flood: ${ctxs:-?} contexts, ${folded:-?} folded, ${other:-0} samples 'other', $spans span ids"

# ---- continuous: the contexts no cut used are let go, new spans get ids again ----
# (before: the table kept the first 4096 contexts for good, every later span folded into 'other')
d=$TMP/every
mkdir -p "$d"
OTELCTX_FLOOD_MS=2500 "$FIRN" record -F 2999 --every 0.5 -o "$d/fe-%H%M%S.pb.gz" -- "$OTEL" \
	>/dev/null 2>"$TMP/err" || fail "record the flood with --every failed"
line=$(grep '^firn: otel: ' "$TMP/err")
read -r ctxs folded < <(printf '%s\n' "$line" | sed -n 's/.* samples in \([0-9]*\) contexts, \([0-9]*\) samples folded.*/\1 \2/p')
other=0 spans=0
for f in "$d"/fe-*.pb.gz; do
	group "$f" >"$d/r"
	read -r o n < <(awk '{ split($1, f, ";"); s = f[1]; sub(/^span_id=/, "", s)
		if (s == "other") o += $NF; else if (s ~ /^[0-9a-f]+$/ && length(s) == 16) n += $NF }
		END { print o + 0, n + 0 }' "$d/r")
	other=$((other + o)) spans=$((spans + n))
done
echo "# continuous flood: $line; $spans samples with a span id, $other 'other'"
[ "${ctxs:-0}" -gt 4096 ] && [ "${folded:-1}" -eq 0 ] && [ "$other" -eq 0 ] && [ "$spans" -gt 4096 ] \
	&& pass "continuous: $ctxs contexts over the intervals (more than the 4096 kept at once), none folded, $spans samples with a span id" \
	|| fail "continuous: ${ctxs:-?} contexts, ${folded:-?} samples folded, $other 'other', $spans with a span id"

# ---- switching: one record rewritten in place, each sample its own span ----
OTELCTX_SWITCH_MS=1500 "$FIRN" record -F 4999 -o "$TMP/sw.pb.gz" -- sh "$CPUTIME" "$TMP/sw.cpu" \
	"$OTEL" >/dev/null 2>"$TMP/err" || fail "record the switching spans failed"
group "$TMP/sw.pb.gz" >"$TMP/sw.folded"
read -r aa ab ba bb < <(awk -v A="$A" -v B="$B" '{ n = $NF; split($1, f, ";"); s = f[1]
	sub(/^span_id=/, "", s); fa = $1 ~ /;switch_in_a$/; fb = $1 ~ /;switch_in_b$/
	if (fa && s == A) aa += n; if (fa && s == B) ab += n; if (fb && s == A) ba += n
	if (fb && s == B) bb += n } END { printf "%d %d %d %d\n", aa, ab, ba, bb }' "$TMP/sw.folded")
floor=$(sample_floor "$TMP/sw.cpu" 4999 40)
echo "# switching: switch_in_a under a $aa, under b $ab; switch_in_b under a $ba, under b $bb (floor $floor each)"
[ "$aa" -ge "$floor" ] && [ "$bb" -ge "$floor" ] \
	&& pass "switching: $aa and $bb samples under each function's own span (>= $floor from CPU time)" \
	|| fail "switching: $aa, $bb samples under their own span (< $floor)"
[ "$ab" -eq 0 ] && [ "$ba" -eq 0 ] \
	&& pass "switching: no sample carries the other span's id" \
	|| fail "switching: $ab of switch_in_a's samples under span b, $ba of switch_in_b's under a"

# ---- --no-otel ----
OTELCTX_SCALE_MS=100 "$FIRN" record --no-otel -o "$TMP/no.pb.gz" -- "$OTEL" >/dev/null 2>"$TMP/err"
"$FIRN" report --group-by span_id "$TMP/no.pb.gz" >"$TMP/no" 2>&1
! grep -q "$A\|$B\|$C" "$TMP/no" && ! grep -q '^firn: otel' "$TMP/err" \
	&& pass "--no-otel: no span labels, no otel line" || fail "--no-otel: labels or line remain"

# ---- the process context (OTEP 4719): its service.name and attributes on every sample of the
# process, in spans and out of them, and the pushed service when none was given (issue 50) ----
# by KEY FILE: "VALUE N" per value of label KEY ("(none)" when a sample has none)
by() {
	"$FIRN" report --group-by "$1" --folded "$2" 2>/dev/null | awk '{ split($1, f, ";")
		v = f[1]; sub(/^[^=]*=/, "", v); n[v] += $NF } END { for (v in n) print v, n[v] }'
}
OTELCTX_SCALE_MS=300 "$FIRN" record -F 999 -o "$TMP/pc.pb.gz" -- "$OTEL" >/dev/null 2>"$TMP/err"
all=$(by comm "$TMP/pc.pb.gz" | awk '$1 == "otelctx" { print $2 }')
svc=$(by service.name "$TMP/pc.pb.gz" | awk '$1 == "otelctx-fixture" { print $2 }')
env=$(by deployment.environment.name "$TMP/pc.pb.gz" | awk '$1 == "fixture-env" { print $2 }')
spn=$(by span_id "$TMP/pc.pb.gz" | awk '$1 != "(none)" { n += $2 } END { print n + 0 }')
echo "# process context: otelctx $all samples, service.name $svc, deployment.environment.name $env, in spans $spn"
[ "${all:-0}" -gt 0 ] && [ "${svc:-0}" = "$all" ] && [ "${env:-0}" = "$all" ] && [ "$spn" -lt "$all" ] \
	&& pass "process context: all $all samples carry service.name=otelctx-fixture and deployment.environment.name=fixture-env ($spn of them in spans)" \
	|| fail "process context: ${all:-?} samples, service.name on ${svc:-0}, the attribute on ${env:-0}"
go tool pprof -tags "$TMP/pc.pb.gz" 2>/dev/null | grep -q 'otelctx-fixture' \
	&& pass "process context: go tool pprof -tags reads the service.name label" \
	|| fail "process context: go tool pprof -tags has no otelctx-fixture"
# pushed: the process context's service.name names the service; the user's --label wins (the
# server numbers its requests on: the files of one run are removed before the next)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$TMP/got"
python3 "$ROOT/tests/cli/pyroscope_server.py" "$port" "$TMP/got" &
srv=$!
for i in $(seq 50); do [ -e "$TMP/got/ready" ] && break; sleep 0.1; done
OTELCTX_SCALE_MS=200 "$FIRN" record --every 1 --push "http://127.0.0.1:$port" -- "$OTEL" \
	>/dev/null 2>"$TMP/err"
n=$(cat "$TMP"/got/*.url 2>/dev/null | grep -c '^/ingest')
[ "$n" -gt 0 ] && [ "$(cat "$TMP"/got/*.url | grep -c '^/ingest?name=otelctx-fixture%7B')" = "$n" ] \
	&& pass "push: service_name is the process context's service.name when none was given" \
	|| fail "push: $(head -1 "$TMP"/got/*.url 2>/dev/null) ($(tail -2 "$TMP/err"))"
rm -f "$TMP/got"/*.url "$TMP/got"/*.pb.gz
OTELCTX_SCALE_MS=100 "$FIRN" record --every 1 --push "http://127.0.0.1:$port" \
	--label service_name=mine -- "$OTEL" >/dev/null 2>"$TMP/err"
head -1 "$TMP"/got/*.url 2>/dev/null | grep -q '^/ingest?name=mine%7B' \
	&& pass "push: the user's --label service_name=mine is kept" \
	|| fail "push with --label: $(head -1 "$TMP"/got/*.url 2>/dev/null)"
rm -f "$TMP/got"/*.url "$TMP/got"/*.pb.gz
"$FIRN" push "http://127.0.0.1:$port" "$TMP/pc.pb.gz" 2>"$TMP/err"
head -1 "$TMP"/got/*.url 2>/dev/null | grep -q '^/ingest?name=otelctx-fixture%7B' \
	&& pass "firn push: a profile whose samples carry one service.name is pushed as it" \
	|| fail "firn push: $(head -1 "$TMP"/got/*.url 2>/dev/null) ($(cat "$TMP/err"))"
# a profile whose other process has no context (as -a's would): no service.name names it
OTELCTX_SCALE_MS=100 "$FIRN" record -q -o "$TMP/mixed.pb.gz" -- sh -c \
	"\"$OTEL\" >/dev/null & timeout 1 sh -c 'while :; do :; done'; wait"
rm -f "$TMP/got"/*.url "$TMP/got"/*.pb.gz
"$FIRN" push "http://127.0.0.1:$port" "$TMP/mixed.pb.gz" 2>"$TMP/err"
head -1 "$TMP"/got/*.url 2>/dev/null | grep -q '^/ingest?name=firn%7B' \
	&& pass "firn push: samples of a process without a context keep the default service name" \
	|| fail "firn push of a mixed profile: $(head -1 "$TMP"/got/*.url 2>/dev/null) ($(cat "$TMP/err"))"
kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null || true # (its SIGTERM status is not the script's)
