# Helpers for CLI tests: source this file, then call check/expect_* ; each reports PASS:/FAIL: lines.
# $FIRN is the binary under test; $ROOT the repo; $BUILD the build folder; $TMP a fresh scratch dir.
set -u
: "${ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${BUILD:=build}"
: "${FIRN:=$ROOT/$BUILD/firn}"
FIX="$ROOT/$BUILD/fixtures"
TMP=$(mktemp -d /tmp/firn-cli.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; }
skip() { echo "SKIP: $*"; }

# check NAME CMD...: passes when CMD exits 0.
check() {
	local name=$1; shift
	if "$@"; then pass "$name"; else fail "$name"; fi
}

# expect_rc NAME RC CMD...: runs CMD (stdout/stderr into $TMP/out, $TMP/err), checks the exit code.
expect_rc() {
	local name=$1 want=$2; shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ "$rc" -eq "$want" ]; then pass "$name"; else
		fail "$name (exit $rc, wanted $want)"; head -5 "$TMP/err" | sed 's/^/    stderr: /'; fi
}

# is_root: true when running as root (recording tests need it), unless FIRN_NO_ROOT is set (the
# sanitizer run of `make check` runs only the tests that need no root).
is_root() { [ -z "${FIRN_NO_ROOT:-}" ] && [ "$(id -u)" -eq 0 ]; }

# CPUTIME: wrap a recorded workload in it (`firn record -- sh "$CPUTIME" FILE CMD...`) to learn the
# CPU time (ms) the workload got, for sample_floor.
CPUTIME="$ROOT/tests/cli/cputime.sh"

# sample_floor FILE HZ [PCT]: the fewest samples a recording at HZ must hold of code that takes PCT %
# (default 100) of the workload whose CPU time cputime.sh wrote to FILE. A thread on the CPU for C s
# gets C x HZ cpu-clock ticks, so on a loaded machine the workload gets less CPU and the floor falls
# with it; half of the expected count leaves room for start-up and the ticks of a busy CPU, and
# a recorder that loses most samples still fails. Never below 10, so that the shares checked on
# those samples mean something (and a workload that did not run fails).
sample_floor() {
	local ms
	ms=$(cat "$1" 2>/dev/null)
	awk -v ms="${ms:-0}" -v hz="$2" -v pct="${3:-100}" \
		'BEGIN { f = int(ms / 1000 * hz * pct / 100 / 2); print (f < 10 ? 10 : f) }'
}

# proc_cpu_ms PID: the CPU time (user + system, ms) process PID has used so far, from
# /proc/PID/stat (0 when it is gone); the difference of two readings around a recording of a
# process already running is what sample_floor wants in its FILE.
proc_cpu_ms() {
	awk -v tck="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / tck) }' \
		"/proc/$1/stat" 2>/dev/null || echo 0
}

# wait_recording PID: waits (up to 30 s) until the firn record running as PID has attached its BPF
# programs (it holds a BPF link), so that what a test starts next runs during the recording: a
# fixed sleep is not enough where a loaded machine's verifier takes most of a second.
wait_recording() {
	local i
	for i in $(seq 300); do
		ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'anon_inode:bpf_link' && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
