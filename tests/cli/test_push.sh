# What firn sends to profile stores, decoded by code firn did not write: Parca's WriteRaw (gRPC
# over h2c, a node http2 server) with @parca/client's WriteRawRequest.fromBinary, its raw pprof
# with pprof-format and go tool pprof; OTLP requests with protoc --decode over a schema of
# opentelemetry-proto v1.11.0 (tests/proto); Pyroscope's form with Python's email parser and go
# tool pprof. firn push of saved files and its exit codes need no root; as root, record --push:
# each interval arrives once, contiguous, with its labels; a store that is down, then up, gets
# the queued intervals; SIGTERM sends the last interval.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/push_npm.sh"
PROTO="$ROOT/tests/proto/otlp_profiles_v1.11.0.proto"
LOOP='while :; do :; done'
srvs=
trap 'for p in $srvs; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

push_npm_setup || exit 0
command -v protoc >/dev/null || { fail "protoc is needed (make deps installs protobuf-compiler)"; exit 0; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# serve MODE PORT DIR: a loopback store (tests/cli/push_server.mjs) in the background, once it
# listens (with FIRN_TEST_LISTEN_ON_SIGNAL=1: once it waits for SIGUSR1 to listen; $srv its pid)
serve() {
	local want=ready
	[ "${FIRN_TEST_LISTEN_ON_SIGNAL:-}" = 1 ] && want=loaded
	mkdir -p "$3"
	node "$ROOT/tests/cli/push_server.mjs" "$1" "$2" "$3" "$NPM_DIR" 2>"$3.log" &
	srv=$!; srvs="$srvs $srv"
	for _ in $(seq 400); do [ -e "$3/$want" ] && return 0; sleep 0.05; done
	fail "the $1 server did not start: $(cat "$3.log")"; return 1
}
# jq-less JSON field access: js FILE EXPR (EXPR over j, the file's object)
js() { node -e "const j = JSON.parse(require('fs').readFileSync(process.argv[1])); console.log($2)" "$1"; }
# decode FILE: protoc's text of an OTLP request body, checked by otlp_check.py
decode() {
	protoc --proto_path="$(dirname "$PROTO")" --decode=firn.test.otlp.ExportProfilesServiceRequest \
		"$PROTO" <"$1" 2>&1 | python3 "$ROOT/tests/cli/otlp_check.py"
}
# go tool pprof's sample total of a pprof file (the "samples" type)
total() { go tool pprof -raw -sample_index=samples "$1" 2>/dev/null | awk '/^Samples:/{s=1;next} /^Locations/{s=0} s&&/^ *[0-9]+ +[0-9]+:/{n+=$1} END{print n+0}'; }
flat() { go tool pprof -top -sample_index=samples "$1" 2>/dev/null | awk -v f="$2" '$6 == f {print $1}'; }
# contiguous: "TIME DURATION" lines on stdin meet end to end (exact integers), prints the gaps
gaps() { python3 -c 'import sys; r=sorted(tuple(map(int,l.split())) for l in sys.stdin if l.strip()); print(sum(1 for a,b in zip(r,r[1:]) if a[0]+a[1]!=b[0]))'; }

GO="$ROOT/tests/fixtures/go-cpu.pb.gz"
FOLDED="$ROOT/tests/fixtures/simple.folded"
gototal=$(total "$GO")

# ---- firn push: Parca ----
port=$(free_port)
serve parca "$port" "$TMP/p1" || exit 0
expect_rc "push --to parca: 2 files sent, exit 0" 0 "$FIRN" push --to parca --label env=ci \
	--label service_name=ci --tenant t9 "http://127.0.0.1:$port" "$GO" "$FOLDED"
grep -qx "firn: push: 2 sent, 0 failed" "$TMP/err" && pass "push: the summary counts 2 sent" || fail "summary: $(cat "$TMP/err")"
n=$(ls "$TMP/p1"/*.json 2>/dev/null | wc -l)
[ "$n" = 2 ] && pass "parca: 2 WriteRaw requests arrived" || fail "parca: $n requests"
j="$TMP/p1/0.json"
[ "$(js "$j" 'j.error || "ok"')" = ok ] && pass "parca: @parca/client decodes WriteRawRequest" || fail "parca: $(cat "$j")"
[ "$(js "$j" 'j.series[0].labels.join(" ")')" = "__name__=process_cpu env=ci service_name=ci" ] &&
	pass "parca: the label set is __name__, env, service_name" || fail "parca labels: $(js "$j" 'j.series[0].labels')"
[ "$(js "$j" 'j.tenant + " " + j.contentType + " " + j.te')" = "t9 application/grpc trailers" ] &&
	pass "parca: tenant, content-type application/grpc, te: trailers" || fail "parca request: $(cat "$j")"
[ "$(js "$j" 'j.pprof.samples')" = "$gototal" ] && [ "$(total "$TMP/p1/0.pb.gz")" = "$gototal" ] &&
	pass "parca: the raw profile has the file's $gototal samples (pprof-format, go tool pprof)" ||
	fail "parca raw profile: pprof-format $(js "$j" 'j.pprof.samples'), go $(total "$TMP/p1/0.pb.gz"), file $gototal"
js "$TMP/p1/1.json" 'j.pprof.functions.join(" ")' | grep -qw hot_loop && pass "parca: the folded file's functions arrive" ||
	fail "parca: folded file: $(cat "$TMP/p1/1.json")"

# ---- firn push: OTLP (and a bearer token) ----
port=$(free_port)
serve http "$port" "$TMP/o1" || exit 0
echo s3cret >"$TMP/token"
expect_rc "push --to otlp: sent, exit 0" 0 "$FIRN" push --to otlp --tenant t2 --label container_id=c0ffee \
	--label env=ci --token-file "$TMP/token" "http://127.0.0.1:$port" "$GO"
decode "$TMP/o1/0.body" >"$TMP/o1.txt"
[ "$(js "$TMP/o1/0.json" 'j.path + " " + j.headers["content-type"] + " " + j.headers.authorization + " " + j.headers["x-scope-orgid"]')" = \
	"/v1development/profiles application/x-protobuf Bearer s3cret t2" ] && pass "otlp: POST /v1development/profiles, protobuf, the bearer token, X-Scope-OrgID" ||
	fail "otlp request: $(cat "$TMP/o1/0.json")"
grep -q '^error' "$TMP/o1.txt" && fail "otlp: $(grep '^error' "$TMP/o1.txt" | head -3)" ||
	pass "otlp: protoc decodes it; zero values at index 0, every index in its table"
want="attr service.name=firn
attr host.name=$(hostname)
attr container.id=c0ffee
attr env=ci"
[ "$(grep '^attr' "$TMP/o1.txt")" = "$want" ] && pass "otlp: resource service.name, host.name, container.id, env" ||
	fail "otlp resource: $(grep '^attr' "$TMP/o1.txt")"
read -r _ type _ _ _ tot < <(grep -m1 '^profile' "$TMP/o1.txt")
[ "$type" = samples/count ] && [ "$tot" = "$gototal" ] && pass "otlp: the first Profile is samples/count with the file's $gototal" ||
	fail "otlp first profile: $(grep '^profile' "$TMP/o1.txt")"
grep -q "^profile cpu/nanoseconds " "$TMP/o1.txt" && pass "otlp: one Profile per sample type (cpu/nanoseconds too)" || fail "otlp: $(grep '^profile' "$TMP/o1.txt")"
[ "$(sed -n 's/^leaf main.mix //p' "$TMP/o1.txt")" = "$(flat "$GO" main.mix)" ] &&
	pass "otlp: main.mix's leaf samples are go tool pprof's flat ($(flat "$GO" main.mix))" ||
	fail "otlp leaves: $(grep '^leaf' "$TMP/o1.txt"), go flat $(flat "$GO" main.mix)"

# ---- firn push: Pyroscope ----
expect_rc "push (pyroscope): sent" 0 "$FIRN" push --label env=ci "http://127.0.0.1:$port" "$GO"
url=$(js "$TMP/o1/1.json" j.path)
printf '%s\n' "$url" | grep -Eq '^/ingest\?name=firn%7Benv%3Dci%7D&from=1795974450&until=1795974452&format=pprof&sampleRate=100&spyName=firn$' &&
	pass "pyroscope: /ingest with name, the file's from/until, sampleRate from its period" || fail "pyroscope url: $url"
python3 - "$TMP/o1/1.body" "$(js "$TMP/o1/1.json" 'j.headers["content-type"]')" "$TMP/py.pb.gz" <<'PY'
import sys, email.parser, email.policy
body, ctype, out = open(sys.argv[1], 'rb').read(), sys.argv[2], sys.argv[3]
msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(b'Content-Type: ' + ctype.encode() + b'\r\n\r\n' + body)
for part in msg.iter_parts():
    if part.get_param('name', header='content-disposition') == 'profile':
        open(out, 'wb').write(part.get_payload(decode=True))
PY
[ "$(total "$TMP/py.pb.gz")" = "$gototal" ] && pass "pyroscope: the form's profile part has the $gototal samples (go tool pprof)" ||
	fail "pyroscope body: $(total "$TMP/py.pb.gz") samples"

# ---- firn push: failures and usage ----
expect_rc "push: a missing file fails (exit 1), the others are sent" 1 "$FIRN" push "http://127.0.0.1:$port" "$TMP/missing.pb.gz" "$GO"
grep -q "missing.pb.gz" "$TMP/err" && grep -qx "firn: push: 1 sent, 1 failed" "$TMP/err" && [ -e "$TMP/o1/2.json" ] &&
	pass "push: the missing file named, 1 sent, 1 failed" || fail "push missing: $(cat "$TMP/err")"
dead=$(free_port)
expect_rc "push: no server, exit 1" 1 "$FIRN" push --to parca --timeout 2 "http://127.0.0.1:$dead" "$GO"
grep -q "^firn: cannot push '.*go-cpu.pb.gz' to 'http://127.0.0.1:$dead': " "$TMP/err" && pass "push: the failed file and why, in one line" || fail "push dead: $(cat "$TMP/err")"
port=$(free_port)
FIRN_TEST_GRPC_FAIL=1 serve parca "$port" "$TMP/p4" || exit 0
expect_rc "push --to parca: a gRPC status but 0 in the trailers fails (exit 1)" 1 "$FIRN" push --to parca "http://127.0.0.1:$port" "$GO" "$GO"
grep -q "^firn: cannot push '.*go-cpu.pb.gz' to '.*': gRPC status 14$" "$TMP/err" && grep -qx "firn: push: 1 sent, 1 failed" "$TMP/err" &&
	pass "push: grpc-status 14 read from the trailers, named; the next file sent" || fail "push grpc-status: $(cat "$TMP/err")"
expect_rc "push https:// to a plain HTTP server: a TLS failure, exit 1" 1 "$FIRN" push --to otlp --timeout 5 "https://127.0.0.1:$(js "$TMP/o1/0.json" 'j.headers.host.split(":")[1]')" "$GO"
grep -Eiq "^firn: cannot push '.*' to 'https://.*': .*(SSL|TLS)" "$TMP/err" && pass "push: the TLS failure is named" || fail "push https: $(cat "$TMP/err")"
expect_rc "push --to nope: usage error" 2 "$FIRN" push --to nope "http://127.0.0.1:$port" "$GO"
expect_rc "push URL without FILE: usage error" 2 "$FIRN" push "http://127.0.0.1:$port"
expect_rc "push ftp://: usage error" 2 "$FIRN" push "ftp://127.0.0.1:$port" "$GO"
expect_rc "push --label with a brace: usage error" 2 "$FIRN" push --label 'a={b}' "http://127.0.0.1:$port" "$GO"

# ---- the store's URL: parsed at the start (libcurl's URL API), its path and query kept ----
port=$(free_port)
serve http "$port" "$TMP/q" || exit 0
expect_rc "push to a URL with a path and a query: sent" 0 "$FIRN" push --label env=ci "http://127.0.0.1:$port/base/?org=a%20b&x=1" "$GO"
expect_rc "push --to otlp to a URL with a query: sent" 0 "$FIRN" push --to otlp "http://127.0.0.1:$port/base?x=1" "$GO"
url=$(js "$TMP/q/0.json" j.path)
printf '%s\n' "$url" | grep -Eq '^/base/ingest\?org=a%20b&x=1&name=firn%7Benv%3Dci%7D&from=[0-9]+&until=[0-9]+&format=pprof&sampleRate=100&spyName=firn$' &&
	pass "pyroscope: the path before the store's query, which is kept: $url" || fail "pyroscope with a query: $url"
url=$(js "$TMP/q/1.json" j.path)
[ "$url" = "/base/v1development/profiles?x=1" ] && pass "otlp: the path before the store's query: $url" || fail "otlp with a query: $url"
expect_rc "push to a URL with a space: usage error" 2 "$FIRN" push "http://127.0.0.1:$port/a b" "$GO"
grep -qx "firn push: invalid URL 'http://127.0.0.1:$port/a b' (an http:// or https:// URL with a host, no spaces)" "$TMP/err" &&
	pass "push: the URL with a space refused at the start, in one line" || fail "push URL with a space: $(cat "$TMP/err")"
expect_rc "record --push to a URL with a space: usage error" 2 env TMPDIR="$TMP" "$FIRN" record --push "http://127.0.0.1:$port/a b" -- true
grep -q "^firn record: invalid value 'http://127.0.0.1:$port/a b' for --push (" "$TMP/err" &&
	pass "record: the URL with a space refused before recording" || fail "record URL with a space: $(cat "$TMP/err")"
expect_rc "push to http:// without a host: usage error" 2 "$FIRN" push "http://" "$GO"
[ ! -e "$TMP/q/2.json" ] && pass "no request for a refused URL" || fail "a refused URL was sent: $(cat "$TMP/q/2.json")"

# ---- no header injection: a CR/LF (any control character) in a value that goes into a header
# or the URL is a usage error, and nothing is sent ----
INJ=$'t1\r\nX-Injected: yes'
expect_rc "push --tenant with CR/LF: usage error" 2 "$FIRN" push --tenant "$INJ" "http://127.0.0.1:$port" "$GO"
[ "$(cat "$TMP/err" | head -1)" = "firn push: invalid value 't1\x0d\x0aX-Injected: yes' for --tenant (no control characters: it is sent in an HTTP header)" ] &&
	pass "push --tenant CR/LF: one line naming the option, the value escaped" || fail "push --tenant CR/LF: $(cat -A "$TMP/err")"
expect_rc "push --to otlp --tenant with CR/LF: usage error" 2 "$FIRN" push --to otlp --tenant "$INJ" "http://127.0.0.1:$port" "$GO"
expect_rc "push --label with CR: usage error" 2 "$FIRN" push --label $'env=a\rb' "http://127.0.0.1:$port" "$GO"
expect_rc "record --tenant with CR/LF: usage error" 2 env TMPDIR="$TMP" "$FIRN" record --push "http://127.0.0.1:$port" --tenant "$INJ" -- true
grep -qF "firn record: invalid value 't1\\x0d\\x0aX-Injected: yes' for --tenant" "$TMP/err" && pass "record --tenant CR/LF: refused, escaped" ||
	fail "record --tenant CR/LF: $(cat -A "$TMP/err")"
printf 'tok\001en\n' >"$TMP/badtok"
expect_rc "push --token-file with a control character: exit 1" 1 "$FIRN" push --token-file "$TMP/badtok" "http://127.0.0.1:$port" "$GO"
[ "$(cat "$TMP/err")" = "firn: cannot read '$TMP/badtok': a control character in the token" ] && pass "push --token-file: the control character named" ||
	fail "push bad token: $(cat -A "$TMP/err")"
[ ! -e "$TMP/q/2.json" ] && pass "no request for a refused value (no X-Injected header reached the store)" ||
	fail "sent with an injected value: $(cat "$TMP/q/2.json")"
expect_rc "push --tenant t1 (plain): sent" 0 "$FIRN" push --to otlp --tenant t1 "http://127.0.0.1:$port" "$GO"
[ "$(js "$TMP/q/2.json" 'j.headers["x-scope-orgid"] + " " + (j.headers["x-injected"] || "none")')" = "t1 none" ] &&
	pass "a plain tenant: X-Scope-OrgID t1, no other header" || fail "plain tenant: $(cat "$TMP/q/2.json")"

# ---- a password in the URL never reaches a message ----
PW=pw-s3cret
dead=$(free_port)
expect_rc "push with user:password, no server: exit 1" 1 "$FIRN" push --timeout 2 "http://firn:$PW@127.0.0.1:$dead/" "$GO"
! grep -q "$PW" "$TMP/err" && grep -q "^firn: cannot push '.*' to 'http://\*\*\*@127.0.0.1:$dead/': " "$TMP/err" &&
	pass "push: the failure shows the URL without its userinfo" || fail "push password: $(cat "$TMP/err")"
expect_rc "push with user:password and a space: usage error" 2 "$FIRN" push "http://firn:$PW@127.0.0.1:$dead/a b" "$GO"
! grep -q "$PW" "$TMP/err" && grep -q "'http://\*\*\*@127.0.0.1:$dead/a b'" "$TMP/err" &&
	pass "push: the usage error hides the password" || fail "push usage password: $(cat "$TMP/err")"
expect_rc "record --push with user:password and a space: usage error" 2 env TMPDIR="$TMP" "$FIRN" record --push "http://firn:$PW@127.0.0.1:$dead/a b" -- true
! grep -q "$PW" "$TMP/err" && pass "record: the usage error hides the password" || fail "record usage password: $(cat "$TMP/err")"

if ! is_root; then skip "record --push (needs root)"; exit 0; fi

# sum_summary ERR: the samples the summary's intervals line counts
summary_samples() { sed -n 's/^firn: intervals: [0-9]* of [0-9.]* s, \([0-9]*\) samples.*/\1/p' "$1"; }

# ---- record --push-to parca: every interval once, contiguous, labelled ----
port=$(free_port)
serve parca "$port" "$TMP/p2" || exit 0
TMPDIR=$TMP "$FIRN" record --every 0.5 --push "http://127.0.0.1:$port" --push-to parca --label env=test -d 1.7 -- sh -c "$LOOP" 2>"$TMP/rec.err"
n=$(ls "$TMP/p2"/*.json 2>/dev/null | wc -l)
[ "$n" = 4 ] && grep -q "push: 4 sent, 0 retried, 0 dropped, 0 unsent" "$TMP/rec.err" && pass "record parca: 4 intervals sent, 4 arrived" ||
	fail "record parca: $n arrived; $(grep push: "$TMP/rec.err")"
bad=0; sum=0
for j in "$TMP/p2"/*.json; do
	[ "$(js "$j" 'j.error ? j.error : j.series[0].labels.join(" ")')" = "__name__=process_cpu env=test service_name=sh" ] || bad=$((bad + 1))
	sum=$((sum + $(js "$j" 'j.pprof.samples')))
done
[ "$bad" = 0 ] && pass "record parca: every request decodes, labels __name__, env, service_name=sh" || fail "record parca: $bad bad: $(cat "$TMP/p2"/0.json)"
[ "$sum" = "$(summary_samples "$TMP/rec.err")" ] && [ "$sum" -gt 10 ] && pass "record parca: the intervals' samples (pprof-format) add up to the summary's $sum" ||
	fail "record parca: sum $sum, summary $(summary_samples "$TMP/rec.err")"
g=$(for j in "$TMP/p2"/*.json; do js "$j" 'j.pprof.time + " " + j.pprof.duration'; done | gaps)
[ "$g" = 0 ] && pass "record parca: intervals contiguous (time + duration = next time)" || fail "record parca: $g gaps"

# ---- record -p --push: named after the process (its comm), as after a command, not "firn" ----
port=$(free_port)
serve parca "$port" "$TMP/pp" || exit 0
sh -c "$LOOP" &
lpid=$!
TMPDIR=$TMP "$FIRN" record --every 0.5 --push "http://127.0.0.1:$port" --push-to parca -d 1.2 -p "$lpid" 2>"$TMP/recp.err"
kill "$lpid"; wait "$lpid" 2>/dev/null
names=$(for j in "$TMP/pp"/*.json; do js "$j" 'j.error ? j.error : j.series[0].labels.join(" ")'; done | sort -u)
check "record -p --push: every interval named after the process: '$names'" \
	test "$names" = "__name__=process_cpu service_name=sh"

# ---- record --push-to otlp: decoded, labelled, contiguous ----
port=$(free_port)
serve http "$port" "$TMP/o2" || exit 0
TMPDIR=$TMP "$FIRN" record --every 0.5 --push "http://127.0.0.1:$port" --push-to otlp --label container_id=c1 -d 1.2 -- sh -c "$LOOP" 2>"$TMP/rec.err"
n=$(ls "$TMP/o2"/*.body 2>/dev/null | wc -l)
[ "$n" = 3 ] && grep -q "push: 3 sent, 0 retried" "$TMP/rec.err" && pass "record otlp: 3 intervals arrived" || fail "record otlp: $n; $(grep push: "$TMP/rec.err")"
errs=0; sum=0; : >"$TMP/times"
for b in "$TMP/o2"/*.body; do
	decode "$b" >"$TMP/d.txt"
	grep -q '^error' "$TMP/d.txt" && errs=$((errs + 1))
	grep -qx "attr service.name=sh" "$TMP/d.txt" && grep -qx "attr container.id=c1" "$TMP/d.txt" || errs=$((errs + 1))
	read -r _ _ t dur _ tot < <(grep -m1 '^profile samples/count' "$TMP/d.txt")
	if [ "${tot:-0}" -gt 0 ]; then # an interval may have no sample on a loaded machine
		grep '^sample_attrs' "$TMP/d.txt" | grep -qw pid || errs=$((errs + 1))
		grep '^frame_types' "$TMP/d.txt" | grep -qw native || errs=$((errs + 1))
	fi
	echo "$t $dur" >>"$TMP/times"; sum=$((sum + ${tot:-0}))
done
[ "$errs" = 0 ] && pass "record otlp: every request decodes (protoc), service.name=sh, container.id=c1, pid attributes, native frames" ||
	fail "record otlp: $errs problems: $(head -20 "$TMP/d.txt")"
[ "$sum" = "$(summary_samples "$TMP/rec.err")" ] && pass "record otlp: the Profiles' samples add up to the summary's $sum" ||
	fail "record otlp: sum $sum, summary $(summary_samples "$TMP/rec.err")"
[ "$(gaps <"$TMP/times")" = 0 ] && pass "record otlp: intervals contiguous" || fail "record otlp: gaps: $(cat "$TMP/times")"

# ---- a store down, then up: the queued intervals arrive, none twice (and the URL's password is
# in no warning: the failure's, the recovery's, the summary's) ----
port=$(free_port)
FIRN_TEST_LISTEN_ON_SIGNAL=1 serve parca "$port" "$TMP/p3" || exit 0 # loaded, not listening
TMPDIR=$TMP "$FIRN" record --every 0.5 --push "http://firn:$PW@127.0.0.1:$port" --push-to parca --push-timeout 0.5 -d 3 -- sh -c "$LOOP" 2>"$TMP/rec.err" &
fp=$!
sleep 1
kill -USR1 "$srv"
wait "$fp"
iv=$(sed -n 's/^firn: intervals: \([0-9]*\) .*/\1/p' "$TMP/rec.err")
n=$(ls "$TMP/p3"/*.json 2>/dev/null | wc -l)
read -r sent retried < <(sed -n 's/^firn: push: \([0-9]*\) sent, \([0-9]*\) retried, 0 dropped, 0 unsent.*/\1 \2/p' "$TMP/rec.err")
[ -n "${sent:-}" ] && [ "$sent" = "$iv" ] && [ "$n" = "$iv" ] && [ "${retried:-0}" -ge 1 ] &&
	pass "down then up: all $iv intervals arrived once after $retried failed attempts" ||
	fail "down then up: $n arrived of ${iv:-?}; $(grep push: "$TMP/rec.err")"
g=$(for j in "$TMP/p3"/*.json; do js "$j" 'j.pprof.time + " " + j.pprof.duration'; done 2>/dev/null | gaps)
[ "$n" -gt 1 ] && [ "$g" = 0 ] && pass "down then up: the $n intervals that arrive are contiguous" || fail "down then up: $n arrived, $g gaps"
shown="http://\*\*\*@127.0.0.1:$port"
! grep -q "$PW" "$TMP/rec.err" && grep -q "^firn: warning: cannot push to '$shown': .*(queued, retrying)$" "$TMP/rec.err" &&
	grep -q "^firn: warning: pushing to '$shown' works again$" "$TMP/rec.err" && grep -q "pushed [0-9]* intervals to '$shown' " "$TMP/rec.err" &&
	pass "down then up: the warnings and the summary show the URL without its password" || fail "down then up, password: $(cat "$TMP/rec.err")"

# ---- SIGTERM sends the last interval (otlp) ----
port=$(free_port)
serve http "$port" "$TMP/o3" || exit 0
TMPDIR=$TMP "$FIRN" record --every 60 --push "http://127.0.0.1:$port" --push-to otlp -- sh -c "$LOOP" 2>"$TMP/rec.err" &
fp=$!
sleep 2.5 # startup takes well under 1 s; the interval is then over 1 s long
kill -TERM "$fp"
wait "$fp"
n=$(ls "$TMP/o3"/*.body 2>/dev/null | wc -l)
decode "$TMP/o3/0.body" >"$TMP/d.txt" 2>/dev/null
read -r _ _ t dur _ tot < <(grep -m1 '^profile samples/count' "$TMP/d.txt")
[ "$n" = 1 ] && [ "${tot:-0}" -gt 5 ] && [ "${dur:-0}" -gt 1000000000 ] && [ "${dur:-0}" -lt 30000000000 ] &&
	grep -q "push: 1 sent" "$TMP/rec.err" && pass "SIGTERM: the last interval ($tot samples, $((dur / 1000000)) ms) is sent" ||
	fail "SIGTERM: $n requests, ${tot:-?} samples, ${dur:-?} ns; $(tail -3 "$TMP/rec.err")"
