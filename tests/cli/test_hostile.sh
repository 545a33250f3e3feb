# Names that try to command the terminal: a function name, a "comm" label and an
# executable's file name holding ESC ] 0 ; ... BEL (retitles an xterm), ESC [ 3 1 m (colors it)
# and a UTF-8 C1 control (U+009B, CSI). Every text output of report (table, folded, JSON, SVG),
# diff's table and top --stdio shows them as visible escapes ("\x1b"), never as the raw bytes;
# folded output read back gives the same text.
. "$(dirname "$0")/lib.sh"

cd "$TMP" || exit 1
python3 "$ROOT/tests/fixtures/bad_pprof.py" "$TMP"
ESC=$'\e' BEL=$'\a' CSI=$'\xc2\x9b'
printf 'evil\e]0;pwned\a;main;f\e[31mred 7\nevil;g\xc2\x9b2J 3\n' >hostile.folded

# raw FILE: FILE holds no ESC, BEL or C1 CSI byte
raw() { ! grep -q -e "$ESC" -e "$BEL" -e "$CSI" "$1"; }

# ---- report: every output format ----
for input in hostile.folded hostile-names.pb.gz; do
	for mode in "" --folded --json --svg "--comm $ESC[31mevil"; do
		# shellcheck disable=SC2086
		"$FIRN" report $mode "$input" >"$TMP/got" 2>"$TMP/err"
		rc=$?
		name="report ${mode:-(table)} $input"
		name=${name//$ESC/\\e}
		if [ "$rc" -eq 0 ] && [ -s "$TMP/got" ] && raw "$TMP/got" && raw "$TMP/err"; then
			pass "$name: no control bytes"
		else
			fail "$name: exit $rc, $(grep -c -e "$ESC" -e "$BEL" "$TMP/got") lines with control bytes"
			head -3 "$TMP/got" | od -c | head -5
		fi
	done
done
"$FIRN" diff hostile.folded hostile-names.pb.gz >"$TMP/got" 2>"$TMP/err"
check "diff (table): no control bytes" raw "$TMP/got"
check "diff (table): the name shows escaped" grep -qF '  \x1b]0;pwned\x07' "$TMP/got"
"$FIRN" diff --fail-on 'self:*>+1pp' hostile.folded hostile-names.pb.gz >/dev/null 2>"$TMP/err"
check "diff gate: the finding names the function escaped" \
	grep -qF "tripped: \x1b]0;pwned\x07 (app) self" "$TMP/err"
check "diff gate: no control bytes on stderr" raw "$TMP/err"
"$FIRN" report hostile.folded >"$TMP/table"
check "report table: ESC shows as \\x1b" grep -qF '  evil\x1b]0' "$TMP/table"
check "report table: BEL shows as \\x07" grep -qF '  pwned\x07' "$TMP/table"
check "report table: C1 shows as \\xc2\\x9b" grep -qF 'g\xc2\x9b2J' "$TMP/table"
"$FIRN" report hostile-names.pb.gz >"$TMP/table"
check "report table (pprof): the function name shows escaped" grep -qF '  \x1b]0;pwned\x07' "$TMP/table"
"$FIRN" report --json hostile-names.pb.gz >"$TMP/json"
check "report --json: the name is \\u001b]0;pwned\\u0007" grep -qF '"\u001b]0;pwned\u0007"' "$TMP/json"
"$FIRN" report --folded hostile-names.pb.gz >"$TMP/folded"
check "report --folded: the comm label is escaped" \
	[ "$(cat "$TMP/folded")" = "# firn folded stacks: the first frame is the process name
"'\x1b[31mevil;\x1b]0:pwned\x07 5' ]
"$FIRN" report --folded hostile.folded >"$TMP/once"
"$FIRN" report --folded "$TMP/once" >"$TMP/twice"
check "report --folded: escaped text reads back as itself" cmp -s "$TMP/once" "$TMP/twice"
check "report --folded: the counts stay" [ "$(awk '{ s += $NF } END { print s }' "$TMP/once")" = 10 ]

# ---- a newline or a bidi control in a function name: one row, escaped, in every table ----
RLO=$'\u202e'
# rows FILE: FILE holds no raw U+202E and no line starting "row" (the tail of a forged row)
rows() { ! grep -q -e "$RLO" -e '^row' "$1"; }
python3 "$ROOT/tests/fixtures/names_pprof.py" lf.pb.gz --func $'evil\nrow' --func "x${RLO}gnp.exe"
python3 "$ROOT/tests/fixtures/names_pprof.py" lf2.pb.gz --func $'evil\nrow' --func $'evil\nrow' \
	--func "x${RLO}gnp.exe"
for c in "report lf.pb.gz" "diff lf.pb.gz lf2.pb.gz"; do
	# shellcheck disable=SC2086
	"$FIRN" $c >"$TMP/got" 2>"$TMP/err"
	check "$c: a newline in a name shows as \x0a in its row" grep -qF ' evil\x0arow' "$TMP/got"
	check "$c: U+202E shows as \u202e" grep -qF ' x\u202egnp.exe' "$TMP/got"
	check "$c: no forged row, no raw bidi control" rows "$TMP/got"
done

# usdt-list: an object whose path holds a tab and U+202E (a process's executable, -p; a newline
# would show in /proc/PID/maps as \012, a file that is not there)
EVILX=$TMP/$'u\t'"${RLO}x"
cp "$FIX/usdtfix" "$EVILX"
"$EVILX" 0 0 3000 >/dev/null 2>&1 &
UP=$!
sleep 0.3
UP=$(pgrep -P "$UP" | head -1 || true) UP=${UP:-$!} # (bash may run it in a subshell)
"$FIRN" usdt-list -p "$UP" 'usdtfix:*' >"$TMP/got" 2>"$TMP/err"
kill "$UP" 2>/dev/null
check "usdt-list -p: the object's tab and U+202E show as \x09 and \u202e" \
	grep -qF "$TMP/u\x09\u202ex " "$TMP/got"
check "usdt-list -p: one line per probe ($(wc -l <"$TMP/got") for 5), no raw bidi control" \
	test "$(wc -l <"$TMP/got")" = 5 -a -z "$(grep -e "$RLO" -e '^[^:]*$' "$TMP/got")"

# ---- top --stdio: a process whose executable (and so comm and module) is named with escapes ----
if ! is_root; then skip "top --stdio needs root"; exit 0; fi
[ -x "$FIX/busy" ] || { fail "no fixture '$FIX/busy' (make fixtures)"; exit 0; }
evil="$TMP/x$ESC]0;pwned$BEL"
cp "$FIX/busy" "$evil"
"$evil" 30 &
BP=$!
trap 'kill $BP 2>/dev/null; rm -rf "$TMP"' EXIT
sleep 0.3
check "the fixture's comm holds ESC" grep -q "$ESC" "/proc/$BP/comm"
"$FIRN" top --stdio -n 1 -p "$BP" >"$TMP/top" 2>"$TMP/top.err"
rc=$?
check "top --stdio: exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "top --stdio: the comm shows escaped" grep -qF '(x\x1b]0;pwned\x07)' "$TMP/top"
check "top --stdio: busy_hot is in the table" grep -q 'busy_hot' "$TMP/top"
check "top --stdio: no control bytes" raw "$TMP/top"
kill "$BP" 2>/dev/null
# a function named "evil\nrow\u202ex" (the fixture's busy_hot renamed, its debug info gone)
objcopy --strip-debug --redefine-sym busy_hot=$'evil\nrow'"${RLO}x" "$FIX/busy" "$TMP/lfbusy"
"$TMP/lfbusy" 30 &
BP=$!
sleep 0.3
"$FIRN" top --stdio -n 1 -p "$BP" >"$TMP/top" 2>"$TMP/top.err"
check "top --stdio: a newline and U+202E in a name show as \x0a and \u202e in its row" \
	grep -qE '^ +[0-9.]+ +[0-9.]+ +[0-9]+  lfbusy +evil\\x0arow\\u202ex$' "$TMP/top"
check "top --stdio: no forged row, no raw bidi control" rows "$TMP/top"
# the full screen (in tmux): the same row, escaped as in --stdio
if command -v tmux >/dev/null; then
	SOCK=firn-hostile-$$
	tmux -L "$SOCK" new-session -d -s h -x 120 -y 30 "'$FIRN' top -p $BP; sleep 30"
	for i in $(seq 50); do
		tmux -L "$SOCK" capture-pane -p -t h >"$TMP/screen"
		grep -qF 'lfbusy' "$TMP/screen" && grep -q 'row' "$TMP/screen" && break
		sleep 0.2
	done
	tmux -L "$SOCK" kill-server 2>/dev/null
	check "top (full screen): the name shows as evil\\x0arow\\u202ex in its row" \
		grep -qE 'lfbusy +evil\\x0arow\\u202ex' "$TMP/screen"
	check "top (full screen): no forged row, no raw bidi control" rows "$TMP/screen"
else
	skip "top full screen: no tmux"
fi
kill "$BP" 2>/dev/null
