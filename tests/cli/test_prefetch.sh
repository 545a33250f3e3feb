#!/bin/bash
# A prefetch the source asks for is in the object code: gcc 12 took a function that only
# prefetches (hashtab_prefetch, before it was always_inline) for one without side effects and
# dropped its calls, so the folded reader's frame-cache slots were never prefetched and nothing
# said so. Each lib/ file calling __builtin_prefetch or hashtab_prefetch must hold at least as
# many prefetch instructions as it has such calls (inlining may copy one, never drop it).
. "$(dirname "$0")/lib.sh"
OBJS=$ROOT/$BUILD/lib

case $(uname -m) in
x86_64) INSN='prefetch' ;;
aarch64) INSN='prfm' ;;
*) skip "prefetch: no prefetch instruction known on $(uname -m)"; exit 0 ;;
esac
if ! compgen -G "$OBJS/*/*.o" >/dev/null || ! command -v objdump >/dev/null; then
	skip "prefetch: no objects in $BUILD/lib (or no objdump) to read"
	exit 0
fi

bad=0 files=0
for f in $(grep -rlE '(__builtin|hashtab)_prefetch\(' "$ROOT/lib" --include='*.c'); do
	rel=${f#"$ROOT"/lib/}
	o=$OBJS/${rel%.c}.o
	[ -f "$o" ] || { fail "prefetch: no object $BUILD/lib/${rel%.c}.o for lib/$rel"; bad=1; continue; }
	calls=$(grep -E '(__builtin|hashtab)_prefetch\(' "$f" | grep -cvE '^[[:space:]]*(\*|/\*|//)')
	insns=$(objdump -d --no-show-raw-insn "$o" | grep -cw "$INSN[a-z0-9]*")
	files=$((files + 1))
	if [ "$insns" -lt "$calls" ]; then
		fail "prefetch: lib/$rel asks for $calls prefetches, its object holds $insns"
		bad=1
	fi
done
[ "$files" -gt 0 ] || { fail "prefetch: no lib/ file calls a prefetch (the test's pattern is stale)"; exit 0; }
[ "$bad" -eq 0 ] && pass "prefetch: the $files lib/ files that prefetch hold their prefetch instructions"
exit 0
