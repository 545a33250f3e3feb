# Pushing over TLS, with a bearer token, and the per-request time-out. A throwaway CA and a
# certificate it signs for 127.0.0.1 (openssl), a loopback HTTPS Pyroscope server
# (tests/cli/pyroscope_server.py --tls: Python's ssl and email modules) that notes each request's
# Authorization header, its profile part (decoded by go tool pprof) and each failed handshake.
# firn push --cacert trusts the CA and the token arrives; without it (the system's store), with
# another CA, or to a name the certificate lacks, the push fails in one line naming the
# certificate and nothing is accepted; a --cacert that is missing or no PEM file is refused
# before any connection. Parca's WriteRaw (HTTP/2 by ALPN) and OTLP go over TLS the same way
# (tests/cli/push_server.mjs with TLS; @parca/client, protoc). As root, record --push
# --push-cacert --push-token-file delivers every interval over TLS with the token. A server
# that takes the connection and never answers: the push gives up after --timeout (push) and
# --push-timeout (record), which are 300 s at most. As root, the end of a recording against such a
# server: the drain ends by its bound (the time-out plus 2 s) even with a request under way, a
# second SIGINT ends it at once, and what was not sent is saved.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/push_npm.sh"
LOOP='while :; do :; done'
srvs=
trap 'for p in $srvs; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

for c in openssl go python3; do
	command -v "$c" >/dev/null || { fail "$c is needed (make deps installs it)"; exit 0; }
done

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# go tool pprof's sample total of a pprof file (every sample type's first value)
total() { go tool pprof -raw "$1" 2>/dev/null | awk '/^Samples:/{s=1;next} /^Locations/{s=0} s&&/^ *[0-9]+ +[0-9]+:/{n+=$1} END{print n+0}'; }
# ms since the epoch
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# ---- the certificates: ca.pem signs srv.pem (CN and SAN 127.0.0.1); other.pem signs nothing ----
mkca() { # NAME: NAME.pem and NAME.key, a CA
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=firn test $1" -addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign -keyout "$TMP/$1.key" -out "$TMP/$1.pem" 2>>"$TMP/openssl.log"
}
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$TMP/srv.ext"
if ! mkca ca || ! mkca other ||
	! openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 \
		-keyout "$TMP/srv.key" -out "$TMP/srv.csr" 2>>"$TMP/openssl.log" ||
	! openssl x509 -req -in "$TMP/srv.csr" -CA "$TMP/ca.pem" -CAkey "$TMP/ca.key" -CAcreateserial \
		-days 2 -extfile "$TMP/srv.ext" -out "$TMP/srv.pem" 2>>"$TMP/openssl.log"; then
	fail "openssl could not make the certificates: $(tail -3 "$TMP/openssl.log")"; exit 0
fi
openssl verify -CAfile "$TMP/ca.pem" "$TMP/srv.pem" >/dev/null 2>&1 && pass "openssl: ca.pem verifies srv.pem" ||
	fail "openssl: srv.pem does not verify"

# serve DIR: an HTTPS store with srv.pem in the background, once it listens ($port, $srv)
serve() {
	port=$(free_port)
	mkdir -p "$1"
	python3 "$ROOT/tests/cli/pyroscope_server.py" "$port" "$1" --tls "$TMP/srv.pem" "$TMP/srv.key" 2>"$1.log" &
	srv=$!; srvs="$srvs $srv"
	for _ in $(seq 200); do [ -e "$1/ready" ] && return 0; sleep 0.05; done
	fail "the TLS server did not start: $(cat "$1.log")"; return 1
}
# accepted DIR: how many requests the server took; refused DIR: how many handshakes failed
accepted() { ls "$1"/*.url 2>/dev/null | wc -l; }
refused() { cat "$1/tls_failed" 2>/dev/null | wc -l; }

GO="$ROOT/tests/fixtures/go-cpu.pb.gz"
gototal=$(total "$GO")
TOKEN=firn-t0ken.Z9_x
printf '%s\nnot-this-line\n' "$TOKEN" >"$TMP/tok"

# ---- (a) firn push --cacert: TLS verified against the CA, the token arrives ----
serve "$TMP/a" || exit 0
url="https://127.0.0.1:$port/"
expect_rc "push --cacert ca.pem --token-file: exit 0" 0 timeout 30 "$FIRN" push --to pyroscope --cacert "$TMP/ca.pem" \
	--token-file "$TMP/tok" "$url" "$GO"
grep -qx "firn: push: 1 sent, 0 failed" "$TMP/err" && pass "push over TLS: 1 sent, 0 failed" || fail "push over TLS: $(cat "$TMP/err")"
[ "$(accepted "$TMP/a")" = 1 ] && [ "$(refused "$TMP/a")" = 0 ] && pass "the server took the profile once, no handshake failed" ||
	fail "the server took $(accepted "$TMP/a") requests, $(refused "$TMP/a") handshakes failed: $(cat "$TMP/a/tls_failed" 2>/dev/null)"
[ "$(sed -n 3p "$TMP/a/0.url" 2>/dev/null)" = "Bearer $TOKEN" ] && pass "Authorization: Bearer $TOKEN, exactly (the file's first line)" ||
	fail "Authorization: '$(sed -n 3p "$TMP/a/0.url" 2>/dev/null)'"
sed -n 1p "$TMP/a/0.url" 2>/dev/null | grep -q '^/ingest?name=firn%7B%7D&from=[0-9]*&until=[0-9]*&format=pprof&' &&
	pass "over TLS: POST /ingest with name, from/until, format=pprof" || fail "path: $(sed -n 1p "$TMP/a/0.url" 2>/dev/null)"
[ "$(total "$TMP/a/0.pb.gz")" = "$gototal" ] && [ "$gototal" -gt 0 ] &&
	pass "over TLS: the profile part has the file's $gototal samples (go tool pprof)" ||
	fail "over TLS: $(total "$TMP/a/0.pb.gz") samples arrived, the file has $gototal"

# ---- (b) no trusted CA: one line naming the certificate, nothing accepted ----
# tls_line: the one error line of $TMP/err names the certificate, and the summary follows it
tls_line() {
	[ "$(wc -l <"$TMP/err")" = 2 ] && sed -n 1p "$TMP/err" | grep -Eq "^firn: cannot push '.*go-cpu.pb.gz' to '$url': .*$1" &&
		sed -n 2p "$TMP/err" | grep -qx "firn: push: 0 sent, 1 failed"
}
expect_rc "push https:// without --cacert (the system's store): exit 1" 1 timeout 30 "$FIRN" push --token-file "$TMP/tok" "$url" "$GO"
tls_line 'SSL certificate problem: (unable to get local issuer certificate|self.signed)' &&
	pass "without --cacert: one line, 'SSL certificate problem: ...'" || fail "without --cacert: $(cat "$TMP/err")"
[ "$(accepted "$TMP/a")" = 1 ] && [ "$(refused "$TMP/a")" = 1 ] && pass "without --cacert: the handshake failed, nothing more accepted" ||
	fail "without --cacert: $(accepted "$TMP/a") accepted, $(refused "$TMP/a") refused"
expect_rc "push --cacert of a CA that did not sign the server's: exit 1" 1 timeout 30 "$FIRN" push --cacert "$TMP/other.pem" "$url" "$GO"
tls_line 'SSL certificate problem' && pass "another CA: one line, 'SSL certificate problem: ...'" || fail "another CA: $(cat "$TMP/err")"
[ "$(accepted "$TMP/a")" = 1 ] && [ "$(refused "$TMP/a")" = 2 ] && pass "another CA: nothing accepted" ||
	fail "another CA: $(accepted "$TMP/a") accepted, $(refused "$TMP/a") refused"
# the CA is trusted, the name is not the certificate's: the host is checked too
expect_rc "push --cacert to https://localhost (the certificate is 127.0.0.1's): exit 1" 1 timeout 30 \
	"$FIRN" push --cacert "$TMP/ca.pem" "https://localhost:$port" "$GO"
grep -Eq "^firn: cannot push '.*' to 'https://localhost:$port': .*(subject name|host name|certificate)" "$TMP/err" &&
	pass "another name: the host name check fails the push" || fail "localhost: $(cat "$TMP/err")"
[ "$(accepted "$TMP/a")" = 1 ] && pass "another name: nothing accepted" || fail "localhost: $(accepted "$TMP/a") accepted"

# ---- a --cacert that is no CA file: refused before any connection ----
n0=$(refused "$TMP/a")
expect_rc "push --cacert MISSING: exit 1" 1 timeout 30 "$FIRN" push --cacert "$TMP/missing.pem" "$url" "$GO"
[ "$(cat "$TMP/err")" = "firn: cannot use '$TMP/missing.pem' for --cacert: No such file or directory" ] &&
	pass "push --cacert MISSING: one line naming the file and why" || fail "--cacert missing: $(cat "$TMP/err")"
expect_rc "push --cacert of a key, no certificate: exit 1" 1 timeout 30 "$FIRN" push --cacert "$TMP/srv.key" "$url" "$GO"
[ "$(cat "$TMP/err")" = "firn: cannot use '$TMP/srv.key' for --cacert: no PEM certificate in it" ] &&
	pass "push --cacert KEYFILE: 'no PEM certificate in it'" || fail "--cacert key: $(cat "$TMP/err")"
[ "$(accepted "$TMP/a")" = 1 ] && [ "$(refused "$TMP/a")" = "$n0" ] && pass "a bad --cacert: no connection made" ||
	fail "bad --cacert: $(accepted "$TMP/a") accepted, $(refused "$TMP/a") refused (was $n0)"

# ---- Parca's WriteRaw (gRPC, HTTP/2 by ALPN) and OTLP over TLS (tests/cli/push_server.mjs) ----
# nserve MODE DIR: the node store of test_push.sh, TLS with srv.pem, once it listens ($port)
nserve() {
	port=$(free_port)
	mkdir -p "$2"
	FIRN_TEST_TLS_CERT="$TMP/srv.pem" FIRN_TEST_TLS_KEY="$TMP/srv.key" \
		node "$ROOT/tests/cli/push_server.mjs" "$1" "$port" "$2" "$NPM_DIR" 2>"$2.log" &
	srvs="$srvs $!"
	for _ in $(seq 400); do [ -e "$2/ready" ] && return 0; sleep 0.05; done
	fail "the $1 TLS server did not start: $(cat "$2.log")"; return 1
}
# jq-less JSON field access: js FILE EXPR (EXPR over j, the file's object)
js() { node -e "const j = JSON.parse(require('fs').readFileSync(process.argv[1])); console.log($2)" "$1" 2>/dev/null; }
if push_npm_setup && nserve parca "$TMP/p"; then
	expect_rc "push --to parca https:// --cacert --token-file: exit 0" 0 timeout 30 "$FIRN" push --to parca \
		--cacert "$TMP/ca.pem" --token-file "$TMP/tok" "https://127.0.0.1:$port" "$GO"
	j="$TMP/p/0.json"
	[ "$(ls "$TMP/p"/*.json 2>/dev/null | wc -l)" = 1 ] && [ "$(js "$j" 'j.error || "ok"')" = ok ] &&
		[ "$(js "$j" 'j.path + " " + j.auth')" = "/parca.profilestore.v1alpha1.ProfileStoreService/WriteRaw Bearer $TOKEN" ] &&
		pass "parca over TLS: one WriteRaw, @parca/client decodes it, Authorization: Bearer $TOKEN" ||
		fail "parca over TLS: $(cat "$TMP/p"/*.json 2>/dev/null) $(cat "$TMP/p/tls_failed" 2>/dev/null)"
	[ "$(js "$j" 'j.pprof.samples')" = "$gototal" ] && pass "parca over TLS: the raw profile's $gototal samples (pprof-format)" ||
		fail "parca over TLS: $(js "$j" 'j.pprof.samples') samples"
	expect_rc "push --to parca https:// without --cacert: exit 1" 1 timeout 30 "$FIRN" push --to parca "https://127.0.0.1:$port" "$GO"
	grep -q "^firn: cannot push '.*': .*SSL certificate problem" "$TMP/err" && [ ! -e "$TMP/p/1.json" ] &&
		[ "$(refused "$TMP/p")" = 1 ] && pass "parca without --cacert: 'SSL certificate problem', the handshake refused, nothing taken" ||
		fail "parca without --cacert: $(cat "$TMP/err"); $(refused "$TMP/p") refused"
fi
if command -v node >/dev/null && nserve http "$TMP/o"; then
	expect_rc "push --to otlp https:// --cacert --token-file: exit 0" 0 timeout 30 "$FIRN" push --to otlp \
		--cacert "$TMP/ca.pem" --token-file "$TMP/tok" "https://127.0.0.1:$port" "$GO"
	[ "$(js "$TMP/o/0.json" 'j.path + " " + j.headers.authorization')" = "/v1development/profiles Bearer $TOKEN" ] &&
		[ ! -e "$TMP/o/1.json" ] && pass "otlp over TLS: one POST /v1development/profiles, Authorization: Bearer $TOKEN" ||
		fail "otlp over TLS: $(cat "$TMP/o"/*.json 2>/dev/null) $(cat "$TMP/o/tls_failed" 2>/dev/null)"
	if command -v protoc >/dev/null; then
		protoc --proto_path="$ROOT/tests/proto" --decode=firn.test.otlp.ExportProfilesServiceRequest \
			"$ROOT/tests/proto/otlp_profiles_v1.11.0.proto" <"$TMP/o/0.body" >"$TMP/o.txt" 2>&1 &&
			grep -q 'service.name' "$TMP/o.txt" && pass "otlp over TLS: protoc decodes the request" ||
			fail "otlp over TLS: protoc: $(head -3 "$TMP/o.txt")"
	fi
fi

expect_rc "record --push-cacert without --push: usage error" 2 "$FIRN" record --push-cacert "$TMP/ca.pem" -- true
grep -qx "firn record: the push options need --push URL" "$TMP/err" && pass "record --push-cacert without --push: 'the push options need --push URL'" ||
	fail "record --push-cacert alone: $(cat "$TMP/err")"

# ---- the time-out: a server that takes the connection (the kernel's backlog) and never answers ----
sport=$(free_port)
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64); open(sys.argv[2], "w").close(); time.sleep(600)' \
	"$sport" "$TMP/silent.ready" &
srvs="$srvs $!"
for _ in $(seq 200); do [ -e "$TMP/silent.ready" ] && break; sleep 0.05; done
for scheme in http https; do
	t0=$(now_ms)
	expect_rc "push --timeout 1 to a $scheme server that never answers: exit 1" 1 timeout 30 "$FIRN" push --timeout 1 \
		--cacert "$TMP/ca.pem" "$scheme://127.0.0.1:$sport" "$GO"
	ms=$(( $(now_ms) - t0 ))
	[ "$ms" -ge 950 ] && [ "$ms" -lt 3000 ] && grep -Eq "^firn: cannot push '.*': (Operation|Connection) timed out after 1[0-9]{3} milliseconds" "$TMP/err" &&
		pass "$scheme: the push gives up after the 1 s time-out ($ms ms): $(sed -n 's/.*: \([A-Z][a-z]* timed out\).*/\1/p' "$TMP/err")" ||
		fail "$scheme time-out: $ms ms; $(cat "$TMP/err")"
done

# ---- a time-out past the documented 300 s: a usage error (the end would wait that long) ----
expect_rc "push --timeout 301: usage error" 2 timeout -k 5 30 "$FIRN" push --timeout 301 "http://127.0.0.1:$sport" "$GO"
grep -qx "firn push: invalid value '301' for --timeout (a number from 0.01 to 300)" "$TMP/err" && pass "push --timeout 301: its range named" ||
	fail "push --timeout 301: $(cat "$TMP/err")"
expect_rc "record --push-timeout 3600: usage error" 2 env TMPDIR="$TMP" timeout -k 5 30 "$FIRN" record --push "http://127.0.0.1:$sport" --push-timeout 3600 -- true

if ! is_root; then skip "record --push over TLS (needs root)"; exit 0; fi

# ---- --cacert is the only trust: the system's store beside it is not consulted ----
# In a mount namespace whose /etc/ssl/certs (libcurl's CAINFO bundle and CAPATH directory, as
# Debian builds it) trusts ca.pem, --cacert other.pem must still fail: libcurl would otherwise
# look the issuer up in that directory.
mkdir "$TMP/certs" && cp "$TMP/ca.pem" "$TMP/certs/firn-test.pem" && cp "$TMP/ca.pem" "$TMP/certs/ca-certificates.crt"
if command -v unshare >/dev/null && openssl rehash "$TMP/certs" >/dev/null 2>&1 &&
	unshare -m true 2>/dev/null; then
	in_ns() { unshare -m sh -c 'mount --bind "$1" /etc/ssl/certs && shift && exec "$@"' _ "$TMP/certs" "$@"; }
	expect_rc "a system store that trusts ca.pem: push without --cacert, exit 0" 0 in_ns timeout 30 "$FIRN" push "$url" "$GO"
	expect_rc "the same store, push --cacert other.pem: exit 1" 1 in_ns timeout 30 "$FIRN" push --cacert "$TMP/other.pem" "$url" "$GO"
	tls_line 'SSL certificate problem' && pass "--cacert other.pem: the system's directory is not consulted (one line, certificate)" ||
		fail "--cacert beside a trusting system store: $(cat "$TMP/err")"
else
	skip "--cacert beside a trusting system store: no unshare -m or openssl rehash"
fi

# ---- (c) record --push https:// --push-cacert --push-token-file: every interval, with the token ----
serve "$TMP/c" || exit 0
TMPDIR=$TMP timeout -k 5 60 "$FIRN" record --every 1 --push "https://127.0.0.1:$port" --push-cacert "$TMP/ca.pem" \
	--push-token-file "$TMP/tok" -d 2.5 -- sh -c "$LOOP" 2>"$TMP/rec.err"
iv=$(sed -n 's/^firn: intervals: \([0-9]*\) .*/\1/p' "$TMP/rec.err")
n=$(accepted "$TMP/c")
[ "${iv:-0}" -ge 3 ] && [ "$n" = "$iv" ] && grep -q "^firn: push: $iv sent, 0 retried, 0 dropped, 0 unsent$" "$TMP/rec.err" &&
	[ "$(refused "$TMP/c")" = 0 ] && pass "record over TLS: all $iv intervals sent, each taken once" ||
	fail "record over TLS: ${iv:-?} intervals, $n taken, $(refused "$TMP/c") handshakes failed; $(grep push: "$TMP/rec.err")"
bad=0; sum=0
for f in "$TMP/c"/*.url; do
	[ "$(sed -n 3p "$f" 2>/dev/null)" = "Bearer $TOKEN" ] || bad=$((bad + 1))
	sum=$((sum + $(total "${f%.url}.pb.gz")))
done
[ "$bad" = 0 ] && [ "$n" -gt 0 ] && pass "record over TLS: every request has Authorization: Bearer $TOKEN" ||
	fail "record over TLS: $bad requests without the token: $(cat "$TMP/c"/0.url 2>/dev/null)"
want=$(sed -n 's/^firn: intervals: [0-9]* of [0-9.]* s, \([0-9]*\) samples.*/\1/p' "$TMP/rec.err")
[ "$sum" = "${want:-x}" ] && [ "$sum" -gt 10 ] && pass "record over TLS: the bodies' samples (go tool pprof) add up to the summary's $sum" ||
	fail "record over TLS: $sum samples arrived, the summary says ${want:-?}"

# without --push-cacert: each push fails on the certificate, the recording goes on, the
# intervals are saved and the summary's last error names the certificate
n0=$(accepted "$TMP/c")
TMPDIR=$TMP timeout -k 5 60 "$FIRN" record --every 0.5 --push "https://127.0.0.1:$port" --push-timeout 1 -d 1.2 \
	-- sh -c "$LOOP" 2>"$TMP/rec.err"
grep -Eq "^firn: push: 0 sent, [1-9][0-9]* retried, 0 dropped, 3 unsent \(saved as .*; last error: .*SSL certificate problem" "$TMP/rec.err" &&
	[ "$(accepted "$TMP/c")" = "$n0" ] && [ "$(refused "$TMP/c")" -ge 1 ] &&
	pass "record without --push-cacert: nothing accepted, 3 intervals saved, 'SSL certificate problem'" ||
	fail "record without --push-cacert: $(grep push: "$TMP/rec.err")"
rm -f "$TMP"/firn-unsent-*

# a bad --push-cacert: refused before the recording starts (the command never runs)
expect_rc "record --push-cacert MISSING: exit 1" 1 timeout 30 "$FIRN" record --push "https://127.0.0.1:$port" \
	--push-cacert "$TMP/missing.pem" -- touch "$TMP/ran"
[ "$(cat "$TMP/err")" = "firn: cannot use '$TMP/missing.pem' for --push-cacert: No such file or directory" ] && [ ! -e "$TMP/ran" ] &&
	pass "record --push-cacert MISSING: one line, before the command runs" || fail "record --push-cacert missing: $(cat "$TMP/err")"

# a bad --push-token-file: refused just as early (the command never runs)
expect_rc "record --push-token-file MISSING: exit 1" 1 timeout 30 "$FIRN" record --push "https://127.0.0.1:$port" \
	--push-token-file "$TMP/missing.tok" -- touch "$TMP/ran"
[ "$(cat "$TMP/err")" = "firn: cannot read '$TMP/missing.tok': No such file or directory" ] && [ ! -e "$TMP/ran" ] &&
	pass "record --push-token-file MISSING: one line, before the command runs" || fail "record --push-token-file missing: $(cat "$TMP/err")"

# record --push-timeout against the silent server: the recording ends on time, the pushes give up
t0=$(now_ms)
TMPDIR=$TMP timeout -k 5 60 "$FIRN" record --every 0.5 --push "http://127.0.0.1:$sport" --push-timeout 0.5 -d 1 \
	-- sh -c "$LOOP" 2>"$TMP/rec.err"
ms=$(( $(now_ms) - t0 ))
# 1 s recording + the drain (time-out + 2 s) + start-up: ~3.6 s; without a time-out it never ends
[ "$ms" -lt 8000 ] && grep -Eq "^firn: push: 0 sent, [1-9][0-9]* retried, .*last error: Operation timed out after [0-9]* milliseconds" "$TMP/rec.err" &&
	pass "record --push-timeout 0.5 to a silent server: done in $ms ms, 'Operation timed out'" ||
	fail "record --push-timeout: $ms ms; $(grep push: "$TMP/rec.err")"
rm -f "$TMP"/firn-unsent-*

# ---- the end's drain against a store that takes the connection and never answers ----
# aserve NAME: such a store, accepting each connection; $TMP/NAME.acc gets the epoch ms of each
# accept ($aport its port)
aserve() {
	aport=$(free_port)
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64); open(sys.argv[2] + ".ready", "w").close()
held = []
while True:
    c, _ = s.accept(); held.append(c)
    with open(sys.argv[2] + ".acc", "a") as f: f.write("%d\n" % (time.time_ns() // 1000000))' "$aport" "$TMP/$1" &
	srvs="$srvs $!"
	for _ in $(seq 200); do [ -e "$TMP/$1.ready" ] && return 0; sleep 0.05; done
	fail "the silent store did not start"; return 1
}
# unsent ERR DIR: "N F" - the unsent count of the summary in ERR, the files saved in DIR
unsent() { echo "$(sed -n 's/^firn: push: .* \([0-9]*\) unsent (saved as .*/\1/p' "$1") $(ls "$2"/firn-unsent-*.pb.gz 2>/dev/null | wc -l)"; }

# -d 1, --push-timeout 6: the last interval's send starts as the drain does; its first request
# times out at 6 s, the retry is cut short at the bound, 8 s (6 + 2), not at its own 6 s; the
# summary's last error stays the time-out that says what the store did
aserve d1 || exit 0
mkdir "$TMP/d1"
TMPDIR=$TMP/d1 timeout -k 5 60 "$FIRN" record -d 1 --push "http://127.0.0.1:$aport" --push-timeout 6 -- sh -c "$LOOP" 2>"$TMP/d1.err"
ms=$(( $(now_ms) - $(head -1 "$TMP/d1.acc" 2>/dev/null || echo 0) ))
[ "$ms" -ge 7500 ] && [ "$ms" -lt 9500 ] && pass "record -d 1 --push-timeout 6 to a silent store: the drain ends by its bound, 8 s ($ms ms from its first request to the exit)" ||
	fail "record -d 1 to a silent store: $ms ms from the first request to the exit (bound 8000); $(grep push: "$TMP/d1.err")"
read -r n f < <(unsent "$TMP/d1.err" "$TMP/d1")
[ "${n:-x}" = 1 ] && [ "$f" = 1 ] && grep -q "^firn: push: 0 sent, 2 retried, 0 dropped, 1 unsent (.*; last error: Operation timed out after 6[0-9]* milliseconds" "$TMP/d1.err" &&
	[ "$(total "$TMP"/d1/firn-unsent-*.pb.gz)" -gt 0 ] && pass "the interval cut short is saved ($(total "$TMP"/d1/firn-unsent-*.pb.gz) samples), the summary says why" ||
	fail "the interval cut short: $n unsent, $f saved; $(grep push: "$TMP/d1.err")"

# a SIGINT ends the recording, a second one ends the drain at once (default time-out: 10 s), and
# what is unsent is saved
aserve d2 || exit 0
mkdir "$TMP/d2"
TMPDIR=$TMP/d2 "$FIRN" record --every 0.5 --push "http://127.0.0.1:$aport" -- sh -c "$LOOP" 2>"$TMP/d2.err" &
fp=$!
for _ in $(seq 300); do [ -s "$TMP/d2.acc" ] && break; sleep 0.05; done # the first interval is being sent
kill -INT "$fp"
sleep 1
t0=$(now_ms)
kill -INT "$fp"
wait "$fp"
ms=$(( $(now_ms) - t0 ))
[ -s "$TMP/d2.acc" ] && [ "$ms" -lt 1500 ] && pass "a second SIGINT ends the drain at once ($ms ms; its bound was 12 s)" ||
	fail "a second SIGINT: $ms ms to the exit; $(grep push: "$TMP/d2.err")"
read -r n f < <(unsent "$TMP/d2.err" "$TMP/d2")
[ "${n:-0}" -ge 2 ] && [ "$f" = "$n" ] && grep -q "; last error: cancelled at the end$" "$TMP/d2.err" &&
	pass "a second SIGINT: the $n unsent intervals are saved, the summary says so" ||
	fail "a second SIGINT: ${n:-?} unsent, $f saved; $(grep push: "$TMP/d2.err")"
