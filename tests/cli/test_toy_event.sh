# The toy event: one row (tests/toy/toy_event.h, compiled only into build/tests/firn-toy's copy
# of the event table) plus its BPF program (bpf/toy.bpf.h) is all a new event is. The shipped
# firn does not know it; firn-toy's -e takes it, its --help, completions and `help --values` name
# it, the man-page check asks for its entry, report A B adds up its counter, and (root) a recording of a bash loop that forks 40
# times holds exactly 40 toy_hits with bash's fork path, the comment "toy.forks: 40" from its
# BPF counter and its summary line; a recording without -e toy loads none of it.
. "$(dirname "$0")/lib.sh"

TOY="$ROOT/$BUILD/tests/firn-toy"
if [ -n "${FIRN_SANITIZED:-}" ]; then skip "the toy event (the plain build's tests only)"; exit 0; fi
if [ ! -x "$TOY" ]; then fail "$TOY is missing (make $BUILD/tests/firn-toy)"; exit 0; fi

# the shipped table has no toy: an unknown event, the usage error listing the real ones
expect_rc "the shipped firn refuses -e toy" 2 "$FIRN" record -e toy -o "$TMP/x.pb.gz" -- true
grep -q "invalid event 'toy'" "$TMP/err" && pass "... as an invalid event" \
	|| fail "... as an invalid event: $(head -1 "$TMP/err")"
"$FIRN" help --values record | grep -q '^--event .*toy' && fail "the shipped values name toy" \
	|| pass "the shipped values do not name toy"

# firn-toy: the row reaches -e's help line, the values and the completions
"$TOY" record --help | grep -q -- "or toy (a stack at every fork)" && pass "firn-toy record --help names toy" \
	|| fail "firn-toy record --help: $("$TOY" record --help | grep -- '-e,')"
[ "$("$TOY" help --values record | sed -n 's/^--event //p')" = "cpu-clock off-cpu usdt: alloc toy" ] \
	&& pass "firn-toy help --values lists toy after the shipped events" \
	|| fail "firn-toy help --values: $("$TOY" help --values record | grep '^--event')"
mkdir -p "$TMP/bin" && ln -s "$TOY" "$TMP/bin/firn"
offered=$(PATH="$TMP/bin:$PATH" bash -c '. "$1"; COMP_WORDS=(firn record -e ""); COMP_CWORD=3; _firn
	printf "%s\n" "${COMPREPLY[@]}"' _ "$ROOT/completions/firn.bash" | sort | tr '\n' ' ')
[ "$offered" = "alloc cpu-clock off-cpu toy usdt: " ] && pass "bash completes -e with toy" \
	|| fail "bash completes -e with '$offered'"
# the man-page check (tests/cli/test_docs.sh) asks for the new event's entry in both pages
docs=$(FIRN="$TOY" bash "$ROOT/tests/cli/test_docs.sh" | grep 'describe')
for c in record top; do
	printf '%s\n' "$docs" | grep -qx "FAIL: man/firn-$c.1 does not describe the events: toy" \
		&& pass "the man-page check asks firn-$c.1 for toy" \
		|| fail "the man-page check on firn-toy $c: $(printf '%s' "$docs" | grep "firn-$c.1")"
done

# report A B adds up the counters of the event table's groups: firn-toy's toy.forks (its row's
# "toy." group) adds up where the shipped firn, whose table has no toy, keeps each file's line;
# the setting off_cpu.min_us is kept once, not added
for n in 3 4; do
	python3 "$ROOT/tests/fixtures/labels_pprof.py" "$TMP/f$n.pb.gz" "--comment=toy.forks: $n" \
		"--comment=off_cpu.min_us: 10" "--comment=off_cpu.waits: $n" || fail "labels_pprof.py"
done
# comments_of BIN: the comments of BIN's report --pprof of the two files (go tool pprof's reading)
comments_of() {
	"$1" report --pprof -o "$TMP/merged.pb.gz" "$TMP/f3.pb.gz" "$TMP/f4.pb.gz" 2>"$TMP/merr" &&
		go tool pprof -comments "$TMP/merged.pb.gz" 2>/dev/null
}
if ! command -v go >/dev/null; then skip "report A B's comments (no go tool pprof)"; else
	toy=$(comments_of "$TOY" | grep -E '^(toy|off_cpu)\.' | tr '\n' ';')
	[ "$toy" = "toy.forks: 7;off_cpu.min_us: 10;off_cpu.waits: 7;" ] \
		&& pass "firn-toy report A B adds toy.forks (its row's group), keeps off_cpu.min_us once" \
		|| fail "firn-toy report A B comments: '$toy' $(head -1 "$TMP/merr")"
	plain=$(comments_of "$FIRN" | grep -E '^toy\.' | tr '\n' ';')
	[ "$plain" = "toy.forks: 3;toy.forks: 4;" ] && pass "the shipped firn keeps each file's toy.forks line" \
		|| fail "firn report A B toy comments: '$plain'"
fi

# The toy runtime: one row in firn-toy's registry (tests/toy/toy_runtime.h) gives record its
# --no-toy (made from the row: cmd/record.c names no runtime), after the shipped runtimes' options,
# with its help line, in help --options (the completions) and in the man-page check
"$TOY" record --help | grep -qx -- "      --no-toy                 no toy frames (the tests' runtime row)" \
	&& "$TOY" record --help | grep -- '--no-' | tail -2 | head -1 | grep -q -- '--no-go ' \
	&& pass "firn-toy record --help: --no-toy with its row's help, after --no-go (the shipped registry's last)" \
	|| fail "firn-toy record --help: $("$TOY" record --help | grep -- '--no-' | tr -s ' ' | tr '\n' ';')"
"$FIRN" help --options record | grep -qx -- --no-toy && fail "the shipped firn has --no-toy" \
	|| pass "the shipped firn has no --no-toy"
"$TOY" help --options record | grep -qx -- --no-toy && pass "firn-toy help --options record lists --no-toy" \
	|| fail "firn-toy help --options record: $("$TOY" help --options record | grep -- --no- | tr '\n' ' ')"
offered=$(PATH="$TMP/bin:$PATH" bash -c '. "$1"; COMP_WORDS=(firn record --no-); COMP_CWORD=2; _firn
	printf "%s\n" "${COMPREPLY[@]}"' _ "$ROOT/completions/firn.bash" | sort | tr '\n' ' ')
case " $offered" in *" --no-toy "*) pass "bash completes record --no- with --no-toy" ;;
	*) fail "bash completes record --no- with '$offered'" ;; esac
FIRN="$TOY" bash "$ROOT/tests/cli/test_docs.sh" | grep -qx 'FAIL: man/firn-record.1 lacks: --no-toy' \
	&& pass "the man-page check asks firn-record.1 for --no-toy" \
	|| fail "the man-page check on firn-toy: $(FIRN="$TOY" bash "$ROOT/tests/cli/test_docs.sh" | grep '^FAIL' | head -3)"
expect_rc "the shipped firn refuses --no-toy" 2 "$FIRN" record --no-toy -o "$TMP/x.pb.gz" -- true
grep -q "unknown option '--no-toy'" "$TMP/err" && pass "... as an unknown option" \
	|| fail "... as an unknown option: $(head -1 "$TMP/err")"
expect_rc "firn-toy takes --no-toy (the usage error is the missing target)" 2 "$TOY" record --no-toy
grep -q "nothing to profile" "$TMP/err" && pass "... and only that" || fail "firn-toy record --no-toy: $(head -1 "$TMP/err")"

if ! is_root; then skip "recording the toy event (needs root)"; exit 0; fi

# 40 forks of bash (fork(), not vfork: its frames unwind), each a hit with bash's stack
loop='for ((i = 0; i < 40; i++)); do /bin/true; done; exit 0'
expect_rc "firn-toy record -e toy" 0 "$TOY" record -e toy -o "$TMP/toy.pb.gz" -- bash -c "$loop"
grep -qx "firn: toy: forks 40, 40 hits" "$TMP/err" && pass "the summary counts 40 forks and 40 hits" \
	|| fail "the summary: $(grep 'toy' "$TMP/err")"
"$FIRN" report --folded "$TMP/toy.pb.gz" >"$TMP/folded" 2>"$TMP/rerr"
hits=$(awk '{ n += $NF } END { print n + 0 }' "$TMP/folded")
forked=$(awk '/;main;/ && /execute_command/ && /__libc_fork/ { n += $NF } END { print n + 0 }' "$TMP/folded")
[ "$hits" = 40 ] && [ "$forked" = 40 ] && pass "40 toy_hits, all in bash's main → execute_command → fork" \
	|| { fail "toy_hits: $hits, through bash's fork: $forked"; head -3 "$TMP/folded" | sed 's/^/    /'; }
"$FIRN" report "$TMP/toy.pb.gz" 2>/dev/null | head -1 | grep -q '40 toy_hits (toy)' \
	&& pass "the profile's sample type is toy_hits" || fail "report's header: $("$FIRN" report "$TMP/toy.pb.gz" | head -1)"
if command -v go >/dev/null; then
	go tool pprof -comments "$TMP/toy.pb.gz" 2>/dev/null | grep -qx "toy.forks: 40" \
		&& pass "go tool pprof reads the comment toy.forks: 40" \
		|| fail "comments: $(go tool pprof -comments "$TMP/toy.pb.gz" 2>&1 | grep toy)"
else
	skip "the toy's comment through go tool pprof (no go)"
fi

# without -e toy: its program is not loaded, the profile has cpu-clock only and no toy line
expect_rc "firn-toy record without -e toy" 0 "$TOY" record -o "$TMP/cpu.pb.gz" -- bash -c "$loop"
! grep -q "toy" "$TMP/err" && ! "$FIRN" report "$TMP/cpu.pb.gz" 2>/dev/null | head -1 | grep -q toy \
	&& pass "a recording without -e toy has no toy line or sample type" \
	|| fail "without -e toy: $(grep toy "$TMP/err")"
