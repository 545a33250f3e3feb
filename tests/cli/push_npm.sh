# The npm packages the push tests decode with, pinned, installed under build/npm on first use
# (test_push.sh, test_push_tls.sh). Source after lib.sh; then push_npm_setup: 0, or it prints a
# FAIL line and returns 1 (no node or npm, or the install failed).
PARCA_CLIENT_VERSION=0.17.24
PPROF_FORMAT_VERSION=2.3.2
NPM_DIR="$ROOT/${BUILD%%/*}/npm" # one copy for build/ and build/asan/

# npm_have PACKAGE VERSION: that version is installed
npm_have() { [ "$(node -p "require('$NPM_DIR/node_modules/$1/package.json').version" 2>/dev/null)" = "$2" ]; }
push_npm_setup() {
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		fail "node and npm are needed (make deps installs nodejs)"; return 1
	fi
	npm_have @parca/client $PARCA_CLIENT_VERSION && npm_have pprof-format $PPROF_FORMAT_VERSION && return 0
	mkdir -p "$NPM_DIR" && npm install --no-audit --no-fund --silent --prefix "$NPM_DIR" \
		"@parca/client@$PARCA_CLIENT_VERSION" "pprof-format@$PPROF_FORMAT_VERSION" >"$TMP/npm.log" 2>&1 && return 0
	fail "npm install @parca/client pprof-format"; tail -5 "$TMP/npm.log"; return 1
}
