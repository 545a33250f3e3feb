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
