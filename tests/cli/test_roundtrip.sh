# Reading firn's folded stacks back: the comm header line makes the first frame the process name
# again, so the table, --comm and the stacks are those of the profile they came from and
# `firn diff PROFILE FOLDED` finds no change; --folded-comm/--no-folded-comm; pprof made from
# folded stacks does not take the kernel for its main binary. Then report's filters on --pprof
# (--pid, --comm, --no-kernel), --comm globs, the idle task ([idle], --no-idle, not a process in
# the header) and NO_COLOR/TERM=dumb for --annotate. As root, the same on a real recording.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

HEADER='# firn folded stacks: the first frame is the process name'

# same NAME WANT_FILE GOT_FILE: passes when the files have the same bytes (shows a diff if not)
same() {
	if cmp -s "$2" "$3"; then pass "$1"; else
		fail "$1"; diff "$2" "$3" | head -10 | sed 's/^/    /'; fi
}

# functions FILE ARGS...: "name self total" per function of the report's JSON, names summed over
# modules (folded stacks record none), sorted; a row's total summed too, which is exact unless
# one sample has two functions of one name (a recursion across modules: not in these profiles).
functions() {
	"$FIRN" report --json --top 0 "$@" | python3 -c '
import json, sys
rows = {}
for f in json.load(sys.stdin)["functions"]:
    s, t = rows.get(f["name"], (0, 0))
    rows[f["name"]] = (s + f["self"], t + f["total"])
for name in sorted(rows):
    print(name, *rows[name])'
}

# no_change NAME BASE NEW: firn diff exits 0 and marks no function as significant
no_change() {
	"$FIRN" diff --top 0 "$2" "$3" >diff.out 2>diff.err
	local rc=$? stars
	stars=$(grep -v '^#' diff.out | grep -c '\*')
	if [ "$rc" -eq 0 ] && [ "$stars" -eq 0 ]; then pass "$1"; else
		fail "$1 (exit $rc, $stars significant rows)"; grep '\*' diff.out | head -3 | sed 's/^/    /'; fi
}

# roundtrip NAME PROFILE COMM: PROFILE's folded stacks read back as PROFILE itself
roundtrip() {
	local name=$1 pb=$2 comm=$3
	"$FIRN" report --folded "$pb" >"$name.folded"
	[ "$(head -1 "$name.folded")" = "$HEADER" ] && pass "$name: folded stacks start with the comm header" \
		|| fail "$name: first line '$(head -1 "$name.folded")'"
	functions "$pb" >want && functions "$name.folded" >got
	[ -s want ] && same "$name: the folded stacks give the profile's table" want got
	functions "$pb" --comm "$comm" >want && functions "$name.folded" --comm "$comm" >got
	[ -s want ] && same "$name: --comm $comm on the folded stacks" want got \
		|| fail "$name: --comm $comm matches nothing in the profile"
	"$FIRN" report --folded "$name.folded" >again
	same "$name: folded stacks read and written again are the same" "$name.folded" again
	no_change "$name: firn diff of the profile and its folded stacks finds no change" "$pb" "$name.folded"
}

python3 "$ROOT/tests/fixtures/labels_pprof.py" labels.pb.gz || fail "labels_pprof.py"
python3 "$ROOT/tests/fixtures/labels_pprof.py" idle.pb.gz --idle || fail "labels_pprof.py --idle"
roundtrip labels labels.pb.gz alpha

# ---- folded input of other tools ----
printf 'perl;main;run 3\nperl;main 1\npython3;main;loop 2\n' >perf.folded
"$FIRN" report --top 0 perf.folded | grep -q ' perl$' && pass "plain folded: the first frame is a function" \
	|| fail "plain folded: no function 'perl'"
functions --folded-comm perf.folded >got
printf 'loop 2 2\nmain 1 6\nrun 3 3\n' >want
same "--folded-comm: the first frame is the process name" want got
[ "$("$FIRN" report --json --folded-comm --comm python3 perf.folded | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')" = 2 ] \
	&& pass "--folded-comm --comm python3" || fail "--folded-comm --comm python3"
"$FIRN" report --top 0 --no-folded-comm labels.folded | grep -q ' alpha$' \
	&& pass "--no-folded-comm: the first frame is a function despite the header" \
	|| fail "--no-folded-comm: no function 'alpha'"
expect_rc "--folded-comm with --no-folded-comm: exit 2" 2 "$FIRN" report --folded-comm --no-folded-comm perf.folded

# ---- pprof from folded stacks: the kernel is not the main binary ----
if command -v go >/dev/null; then
	"$FIRN" report --pprof -o fromfolded.pb.gz labels.folded
	first=$(go tool pprof -raw fromfolded.pb.gz 2>/dev/null | sed -n '/^Mappings/{n;p;q}')
	case $first in
	*kallsyms*|'') fail "pprof from folded: first mapping '$first'" ;;
	*) pass "pprof from folded: the first mapping (main binary) is not the kernel's" ;;
	esac
	go tool pprof -top fromfolded.pb.gz 2>/dev/null | grep -q '^File: \[kernel' \
		&& fail "go tool pprof -top names the kernel as the file" || pass "go tool pprof -top: no kernel File: line"
else
	skip "go not installed: pprof main mapping"
fi

# ---- --comm globs ----
[ "$("$FIRN" report --json --comm 'al*' labels.pb.gz | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')" = 9 ] \
	&& pass "--comm 'al*' matches alpha" || fail "--comm 'al*'"
[ "$("$FIRN" report --json --comm '?eta' labels.pb.gz | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')" = 3 ] \
	&& pass "--comm '?eta' matches beta" || fail "--comm '?eta'"

# ---- the idle task ----
"$FIRN" report idle.pb.gz >idle.table
head -1 idle.table | grep -q '20 samples (cpu-clock 99 Hz), 3 processes$' \
	&& pass "the idle task (pid 0) is not counted as a process" || fail "idle header: $(head -1 idle.table)"
"$FIRN" report --no-idle idle.pb.gz >noidle.table
head -1 noidle.table | grep -q ': 12 of 20 samples' && ! grep -q pv_native_safe_halt noidle.table \
	&& grep -q '^  50.00   66.67        6  app  *work$' noidle.table \
	&& pass "--no-idle drops the idle samples, shares of the rest add up to 100 %" \
	|| { fail "--no-idle"; sed 's/^/    /' noidle.table; }
grep -q '^\[idle\];do_idle_\[k\];pv_native_safe_halt_\[k\] 8$' <("$FIRN" report --folded idle.pb.gz) \
	&& pass "--folded: the idle task's stacks under [idle]" || fail "--folded: no [idle] stack"
"$FIRN" report --folded --no-idle idle.pb.gz >noidle.folded && [ "$(wc -l <noidle.folded)" -eq 5 ] \
	&& ! grep -q '^\[idle\]' noidle.folded && pass "--folded --no-idle" || fail "--folded --no-idle"
printf 'swapper/1;do_idle_[k];halt_[k] 5\napp;main 5\n' >swapper.folded
"$FIRN" report --folded-comm --no-idle swapper.folded | head -1 | grep -q ': 5 of 10 samples' \
	&& pass "--no-idle on folded stacks: comm swapper/N is the idle task" || fail "--no-idle on swapper/N"

# ---- report --pprof with filters ----
if command -v go >/dev/null; then
	"$FIRN" report --pprof --pid 100 --no-kernel -o pid100.pb.gz idle.pb.gz
	go tool pprof -raw pid100.pb.gz >pid100.raw 2>&1 || fail "--pprof --pid 100 --no-kernel: go tool pprof -raw"
	npid=$(grep -o 'pid:\[[0-9]*\]' pid100.raw | sort -u | tr '\n' ' ')
	[ "$npid" = "pid:[100] " ] && pass "--pprof --pid 100: every sample has pid 100" \
		|| fail "--pprof --pid 100: pids '$npid'"
	grep -q '^Mappings' pid100.raw && ! grep -q 'kallsyms\|sys_read\|pv_native' pid100.raw \
		&& pass "--pprof --no-kernel: no kernel mapping, function or location" \
		|| fail "--pprof --no-kernel keeps kernel frames"
	go tool pprof -top pid100.pb.gz 2>/dev/null | grep -q '^File: app$' \
		&& pass "go tool pprof reads the filtered profile (main binary app)" \
		|| fail "go tool pprof -top on the filtered profile"
	"$FIRN" report --pprof --comm beta -o beta.pb.gz idle.pb.gz
	[ "$("$FIRN" report --json beta.pb.gz | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')" = 3 ] \
		&& pass "--pprof --comm beta: its 3 samples" || fail "--pprof --comm beta"
	"$FIRN" report --pprof --no-idle -o noidle.pb.gz idle.pb.gz
	"$FIRN" report noidle.pb.gz | head -1 | grep -q ': 12 samples' && pass "--pprof --no-idle" || fail "--pprof --no-idle"
else
	skip "go not installed: report --pprof filters"
fi

if ! is_root; then skip "recording tests need root"; exit 0; fi

# ---- a real recording ----
"$FIRN" record -q -F 499 -o split.pb.gz -- "$FIX/split" 300 >/dev/null 2>&1
roundtrip split split.pb.gz split
"$FIRN" record -q -F 499 --format folded -o rec.folded -- "$FIX/split" 100 >/dev/null 2>&1
[ "$(head -1 rec.folded)" = "$HEADER" ] && pass "record --format folded starts with the comm header" \
	|| fail "record --format folded: first line '$(head -1 rec.folded)'"

# the idle task of a system-wide recording is [idle], not swapper/N (none when the CPUs are busy)
"$FIRN" record -q -a -d 1 -o all.pb.gz >/dev/null 2>&1
"$FIRN" report --folded all.pb.gz >all.folded
if grep -q '^swapper' all.folded; then fail "system-wide: the idle task is named swapper"
elif grep -q '^\[idle\];' all.folded; then pass "system-wide: the idle task is [idle]"
else skip "system-wide: no idle samples (busy CPUs)"; fi

# ---- --annotate colours only a colour terminal ----
"$FIRN" record -q -F 999 -o busy.pb.gz -- "$FIX/busy" 1 >/dev/null 2>&1
# esc ENV...: the number of ESC bytes report --annotate writes to a terminal under ENV
esc() {
	script -qec "env $* '$FIRN' report --annotate busy_hot '$TMP/busy.pb.gz'" /dev/null </dev/null |
		tr -cd '\033' | wc -c
}
[ "$(esc TERM=xterm)" -gt 0 ] && pass "--annotate colours a terminal" || fail "--annotate: no colour on a terminal"
[ "$(esc TERM=xterm NO_COLOR=1)" -eq 0 ] && pass "--annotate: NO_COLOR=1, no escape sequences" \
	|| fail "--annotate ignores NO_COLOR"
[ "$(esc TERM=dumb)" -eq 0 ] && pass "--annotate: TERM=dumb, no escape sequences" \
	|| fail "--annotate ignores TERM=dumb"
