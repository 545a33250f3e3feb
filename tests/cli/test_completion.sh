# The shell completions, driven as each shell would call them (bash: COMP_WORDS and _firn; zsh:
# _firn with words and CURRENT, compadd and friends stubbed; fish: complete -C), with firn on
# PATH: `firn help` completes commands, after `--` come commands and then their arguments, -e
# offers the events, and every option whose parser names a fixed set of values in its error
# message ("invalid value 'x' for --sort (self or total)") completes exactly those values.
. "$(dirname "$0")/lib.sh"

export PATH="$(dirname "$FIRN"):$PATH"
cd "$TMP" || exit 1
touch lfile
cmds=$("$FIRN" help --commands | sort)

# comp SHELL WORD...: what SHELL's completion offers for the command line WORD... (the last word
# is the one being completed), one per line, sorted
comp() {
	local sh=$1; shift
	case $sh in
	bash) bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _firn
		printf "%s\n" "${COMPREPLY[@]}"' _ "$ROOT/completions/firn.bash" "$@" ;;
	zsh) zsh -f -c '
		compadd() { while (( $# )); do case $1 in --) shift; break ;; -S) shift 2 ;; -*) shift ;;
			*) break ;; esac; done; print -rl -- "$@"; }
		_files() { print -rl -- *(N); }
		_pids() { print -r -- "<pids>"; }
		_normal() { print -r -- "<normal $CURRENT ${(j:,:)words}>"; }
		words=("${@:2}"); CURRENT=$(( $# - 1 )); PREFIX=${words[-1]}
		source "$1"' _ "$ROOT/completions/_firn" "$@" ;;
	fish) fish -c 'source $argv[1]; complete -C$argv[2] | string replace -r "\t.*" ""' \
		"$ROOT/completions/firn.fish" "$*" ;;
	esac | grep -v '^$' | sort -u
}

# want NAME EXPECTED GOT: EXPECTED and GOT (lines) are the same set
want() {
	[ "$(printf '%s\n' "$2" | sort -u)" = "$3" ] && pass "$1" \
		|| fail "$1: got '$(printf '%s' "$3" | tr '\n' ' ')', wanted '$(printf '%s' "$2" | tr '\n' ' ')'"
}

shells="bash"
command -v zsh >/dev/null && shells="$shells zsh" || skip "zsh completion: no zsh"
command -v fish >/dev/null && shells="$shells fish" || skip "fish completion: no fish"

# the events are the event table's rows, as the parser names them in its usage error
# ("cpu-clock, off-cpu or usdt:PATH:PROVIDER:NAME"): a "usdt:..." row is offered as "usdt:"
events=$("$FIRN" record -e @bogus@ 2>&1 | sed -nE "s/^firn record: invalid event '@bogus@' \((.*)\)$/\1/p" |
	sed 's/, /\n/g; s/ or /\n/g' | sed 's/:.*/:/')
for e in cpu-clock off-cpu usdt:; do
	printf '%s\n' "$events" | grep -qx -- "$e" && pass "the parser takes -e $e" || fail "the parser's events: $events"
done
for sh in $shells; do
	want "$sh: firn help <TAB> offers the commands (not files)" "$cmds" "$(comp $sh firn help "")"
	want "$sh: diff --color-by <TAB>" "$(printf 'self\ntotal')" "$(comp $sh firn diff --color-by "")"
	comp $sh firn report --colors "" | grep -qx default \
		&& pass "$sh: report --colors <TAB> offers default" || fail "$sh: report --colors: no default"
	for e in -e --event; do
		want "$sh: record $e <TAB> offers the events" "$events" "$(comp $sh firn record $e "")"
	done
	# the options that take a FILE of no fixed set: files (the CA and token files)
	for o in "push --cacert" "push --token-file" "record --push-cacert" "record --push-token-file"; do
		want "$sh: $o <TAB> offers files" lfile "$(comp $sh firn $o l)"
	done
	got=$(comp $sh firn record -F 99 -- l)
	if [ $sh = zsh ]; then
		want "$sh: after --, the command is completed as a command line of its own" \
			"<normal 1 l>" "$got"
		want "$sh: then its arguments" "<normal 2 ls,l>" "$(comp $sh firn record -- ls l)"
		continue
	fi
	printf '%s\n' "$got" | grep -qx ls && ! printf '%s\n' "$got" | grep -qx lfile \
		&& pass "$sh: after --, commands are offered" || fail "$sh: after --: $(echo $got | cut -c1-80)"
	comp $sh firn record -- ls l | grep -qx lfile \
		&& pass "$sh: after -- CMD, files are offered" || fail "$sh: after -- CMD: no files"
done

# the value sets: each option whose parser rejects a bad value with a list of words is completed
# with exactly those words (a completed "usdt:" stands for "usdt:PATH:PROVIDER:NAME"), and
# `firn help --values` names no other option
# matches VALUES EXPECTED: every expected word is offered (or starts with an offered "x:") and
# every offered word is expected
matches() {
	awk -v got="$1" -v want="$2" 'BEGIN {
		ng = split(got, g, "\n"); nw = split(want, w, "\n")
		for (i = 1; i <= nw; i++) { ok = 0
			for (j = 1; j <= ng; j++)
				if (g[j] == w[i] || (g[j] ~ /:$/ && index(w[i], g[j]) == 1)) { ok = 1; used[j] = 1 }
			if (!ok) exit 1 }
		for (j = 1; j <= ng; j++) if (!used[j]) exit 1
	}'
}
nsets=0
for c in $cmds; do
	sets=
	for o in $("$FIRN" help --options "$c" | sed -n 's/^\(--.*\)=$/\1/p'); do
		msg=$(timeout 10 "$FIRN" "$c" "$o" @bogus@ </dev/null 2>&1 >/dev/null | head -1)
		want=$(printf '%s\n' "$msg" | sed -nE "s/^firn $c: invalid [a-z]+ '@bogus@'.*\(([^()]*)\)$/\1/p" |
			sed 's/, /\n/g; s/ or /\n/g')
		# a list of words ("self or total"), not "an integer from 1 to 100000"
		[ "$(printf '%s\n' "$want" | grep -cE '^[a-z][A-Za-z0-9:_-]*$')" -ge 2 ] &&
			! printf '%s\n' "$want" | grep -q ' ' || continue
		list=$(echo $want)
		nsets=$((nsets + 1))
		sets="$sets $o"
		for sh in $shells; do
			got=$(comp $sh firn "$c" "$o" "")
			matches "$got" "$want" && pass "$sh: $c $o <TAB> offers $(echo $got)" \
				|| fail "$sh: $c $o <TAB> offers '$(echo $got | cut -c1-60)', the parser takes: $list"
		done
	done
	listed=$("$FIRN" help --values "$c" | awk '$1 ~ /^--/ { printf " %s", $1 }')
	[ "$listed" = "$sets" ] && pass "firn help --values $c names the options with a value set:${sets:- none}" \
		|| fail "firn help --values $c names '$listed', the parsers '$sets'"
done
check "value sets found in the parsers' messages ($nsets >= 10)" [ "$nsets" -ge 10 ]

# --sample-type offers the sample types of the profile on the line, else those of firn.pb.gz
# (`firn help --sample-types FILE`)
python3 "$ROOT/tests/fixtures/types_pprof.py" types.pb.gz
python3 "$ROOT/tests/fixtures/types_pprof.py" firn.pb.gz --no-waits
all=$(printf 'samples\ncpu\nwaits\noff_cpu\nwall\nusdt_app_tick')
want "firn help --sample-types FILE lists its types" "$all" "$("$FIRN" help --sample-types types.pb.gz | sort -u)"
for sh in $shells; do
	want "$sh: report FILE --sample-type <TAB> offers FILE's types" "$all" \
		"$(comp $sh firn report types.pb.gz --sample-type "")"
	want "$sh: report -o OUT --sample-type <TAB> offers firn.pb.gz's types" \
		"$(printf 'samples\ncpu\noff_cpu\nwall\nusdt_app_tick')" \
		"$(comp $sh firn report -o types.pb.gz --sample-type "")"
	want "$sh: diff BASE NEW --sample-type <TAB> offers BASE's types" "$all" \
		"$(comp $sh firn diff types.pb.gz firn.pb.gz --sample-type "")"
done

# --group-by offers the label keys of the profile on the line (`firn help --labels FILE`), and
# --tag-focus/--tag-ignore each key followed by '=' (the regular expression comes after it)
python3 "$ROOT/tests/fixtures/labels_pprof.py" labels.pb.gz --threads --routes
keys=$(printf 'pid\ncomm\nthread\nhttp_route')
want "firn help --labels FILE lists its label keys" "$keys" "$("$FIRN" help --labels labels.pb.gz | sort -u)"
for sh in $shells; do
	want "$sh: report FILE --group-by <TAB> offers FILE's label keys" "$keys" \
		"$(comp $sh firn report labels.pb.gz --group-by "")"
	want "$sh: diff BASE NEW --tag-focus <TAB> offers KEY=" "$(printf '%s=\n' $keys)" \
		"$(comp $sh firn diff labels.pb.gz labels.pb.gz --tag-focus "")"
	want "$sh: top --tag-ignore <TAB> offers firn.pb.gz's keys, KEY=" "$(printf '%s=\n' pid comm)" \
		"$(comp $sh firn top --tag-ignore "")"
done

# a profile's type names are data, never shell code: TAB after --sample-type in a folder holding
# a hostile firn.pb.gz offers its names as they are and runs nothing ($(...), backquotes, globs)
mkdir -p "$TMP/hostile" && cd "$TMP/hostile" || exit 1
touch afile
python3 "$ROOT/tests/fixtures/names_pprof.py" firn.pb.gz --type samples \
	--type '$(touch PWNED1)' --type '`touch PWNED2`' --type '*' --type 'a b'
hostile=$(printf '%s\n' samples '$(touch PWNED1)' '`touch PWNED2`' '*' 'a b')
for sh in $shells; do
	want "$sh: --sample-type <TAB> offers a hostile profile's names as they are" "$hostile" \
		"$(comp $sh firn report --sample-type "")"
	# (zsh and fish match the prefix themselves: the stubbed compadd and fish's $ do not show it)
	[ $sh = bash ] && want "$sh: --sample-type \$<TAB> offers the one name starting with \$" \
		'$(touch PWNED1)' "$(comp $sh firn report firn.pb.gz --sample-type '$')"
	check "$sh: completing a hostile profile's names ran none of them" \
		test ! -e PWNED1 -a ! -e PWNED2
	rm -f PWNED1 PWNED2
done

# a FIFO (or device) as the profile is refused at once, not waited on: `help --sample-types`
# says so in one line and exits 1, and TAB after --sample-type with a FIFO as ./firn.pb.gz
# returns at once with nothing
mkdir -p "$TMP/fifo" && cd "$TMP/fifo" || exit 1
mkfifo firn.pb.gz
timeout 10 "$FIRN" help --sample-types firn.pb.gz >out 2>err
rc=$?
check "help --sample-types FIFO: exit 1 at once (exit $rc), one line: $(head -1 err)" \
	test "$rc" = 1 -a "$(wc -l <err)" = 1 -a ! -s out
check "help --sample-types FIFO says it is not a regular file" \
	grep -qx "firn: cannot open 'firn.pb.gz': not a regular file" err
for sh in $shells; do
	got=$(ROOT=$ROOT timeout 10 bash -c "$(declare -f comp); comp $sh firn report --sample-type ''")
	rc=$?
	check "$sh: --sample-type <TAB> with a FIFO as firn.pb.gz returns at once with nothing (exit $rc)" \
		test "$rc" = 0 -a -z "$got"
done
