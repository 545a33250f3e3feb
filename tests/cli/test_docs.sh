# The option tables are the source of truth: every command has a man page naming each of its
# options, firn.1 names every command, and the shell completions offer every command and option.
. "$(dirname "$0")/lib.sh"

cmds=$("$FIRN" help --commands)
[ -n "$cmds" ] && pass "firn help --commands lists commands" || fail "firn help --commands is empty"

for c in $cmds; do
	page="$ROOT/man/firn-$c.1"
	if [ ! -f "$page" ]; then fail "man/firn-$c.1 exists"; continue; fi
	grep -q "^\.B[RI]* *$c\b\|firn-$c\b" "$ROOT/man/firn.1" && pass "firn.1 names $c" || fail "firn.1 names $c"
	missing=
	for o in $("$FIRN" help --options "$c" | grep '^--' | sed 's/=$//'); do
		# roff writes dashes as \- ; accept both spellings
		roff=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
		grep -q -- "$roff\|$o" "$page" || missing="$missing $o"
	done
	[ -z "$missing" ] && pass "man/firn-$c.1 names every option" || fail "man/firn-$c.1 lacks:$missing"
	# every event of the event table that -e takes (`firn help --values`) has its own entry
	events=$("$FIRN" help --values "$c" | sed -n 's/^--event //p')
	missing=
	for e in $events; do
		roff=$(printf '%s' "$e" | sed 's/-/\\\\-/g')
		grep -q -- "^\.B[IR]* *\($e\|$roff\)" "$page" || missing="$missing $e"
	done
	[ -z "$events" ] || { [ -z "$missing" ] && pass "man/firn-$c.1 describes every event:$(echo " $events")" \
		|| fail "man/firn-$c.1 does not describe the events:$missing"; }
	# --help shows every option of the table
	help=$("$FIRN" "$c" --help)
	missing=
	for o in $("$FIRN" help --options "$c" | sed 's/=$//'); do
		printf '%s\n' "$help" | grep -q -- "$o\b" || missing="$missing $o"
	done
	[ -z "$missing" ] && pass "firn $c --help names every option" || fail "firn $c --help lacks:$missing"
	if command -v man >/dev/null; then
		warn=$(LC_ALL=C man --warnings -l "$page" 2>&1 >/dev/null | head -3)
		[ -z "$warn" ] && pass "man/firn-$c.1 renders without warnings" || fail "man/firn-$c.1: $warn"
	fi
done

# one style for help texts, as git's: command summaries (firn help, CMD --help, the man pages'
# NAME lines) and option help start in lower case (a capitalised first word is wrong, an acronym
# is fine) and end without a period
style_bad() { grep -E '^[A-Z][a-z]|\.$'; }
bad=$("$FIRN" help | sed -nE 's/^  [a-z-]+ +//p' | style_bad)
[ -z "$bad" ] && pass "firn help: summaries in one style" || fail "firn help: summaries not like the others: $bad"
for c in $cmds; do
	bad=$( { "$FIRN" "$c" --help | sed -n '/^$/{n;p;q}'; "$FIRN" "$c" --help | grep -E '^  -' | cut -c32-; } | style_bad)
	[ -z "$bad" ] && pass "firn $c --help: summary and option help in one style" || fail "firn $c --help: not like the others: $bad"
	bad=$(sed -n '/^\.SH NAME/{n;p}' "$ROOT/man/firn-$c.1" | sed 's/^[^ ]* \\- //' | style_bad)
	[ -z "$bad" ] && pass "man/firn-$c.1: NAME line in the same style" || fail "man/firn-$c.1 NAME: $bad"
done

# bash completion: ask it as bash would, with firn on PATH.
export PATH="$(dirname "$FIRN"):$PATH"
complete_bash() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _firn; printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$ROOT/completions/firn.bash" "$@"
}
got=$(complete_bash firn "")
missing=
for c in $cmds; do printf '%s\n' "$got" | grep -qx "$c" || missing="$missing $c"; done
[ -z "$missing" ] && pass "bash completion offers every command" || fail "bash completion lacks:$missing"
for c in $cmds; do
	got=$(complete_bash firn "$c" --)
	missing=
	for o in $("$FIRN" help --options "$c" | grep '^--' | sed 's/=$//'); do
		printf '%s\n' "$got" | grep -qx -- "$o" || missing="$missing $o"
	done
	[ -z "$missing" ] && pass "bash completion offers every option of $c" || fail "bash completion of $c lacks:$missing"
done
# zsh and fish scripts take their lists from the same binary queries
for f in _firn firn.fish; do
	grep -q 'firn help --options' "$ROOT/completions/$f" && grep -q 'firn help --commands' "$ROOT/completions/$f" \
		&& pass "completions/$f asks the binary for commands and options" \
		|| fail "completions/$f does not ask the binary"
done
if command -v zsh >/dev/null; then
	zsh -n "$ROOT/completions/_firn" && pass "zsh completion parses" || fail "zsh completion parses"
fi
if command -v fish >/dev/null; then
	fish -n "$ROOT/completions/firn.fish" && pass "fish completion parses" || fail "fish completion parses"
fi
