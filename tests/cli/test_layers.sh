#!/bin/bash
# lib/ is in layers (lib/LAYERS: "RANK NAME  what it holds"): a file may include headers of its own
# layer and of layers with a lower rank, each named with its layer ("base/vec.h"); never a layer at
# its own rank or above, so the dependency graph stays a ladder a newcomer can read bottom-up; and
# a layer's objects use only symbols defined in it or below (nm), so calls climb no more than includes.
. "$(dirname "$0")/lib.sh"
LAYERS=$ROOT/lib/LAYERS
[ -f "$LAYERS" ] || { fail "layers: lib/LAYERS missing"; exit 0; }

declare -A rank
while read -r r name _; do
	[[ -z $r || $r == \#* ]] && continue
	rank[$name]=$r
done < "$LAYERS"

# check_file FILE LAYER: prints one line per include that breaks the ladder.
check_file() {
	local f=$1 own=$2 inc other
	grep -o '^#include "[^"]*"' "$f" | sed 's/#include "//; s/"$//' | while read -r inc; do
		case $inc in
		*.skel.h|../../bpf/*) continue ;;
		*/*) other=${inc%%/*} ;;
		*) if compgen -G "$ROOT/lib/*/$inc" >/dev/null; then echo "$f: '$inc' does not name its layer"; fi; continue ;;
		esac
		if [ -z "${rank[$other]:-}" ]; then
			echo "$f: '$inc' is in no layer of lib/LAYERS"
		elif [ "$other" != "$own" ] && [ "${rank[$other]}" -ge "${rank[$own]}" ]; then
			echo "$f: layer $own (${rank[$own]}) includes $inc (layer $other, ${rank[$other]})"
		fi
	done
}

# The real tree: every file in a known layer, no include upward or sideways.
bad=$(
	for d in "$ROOT"/lib/*/; do
		own=$(basename "$d")
		[ -n "${rank[$own]:-}" ] || { echo "lib/$own/ is not in lib/LAYERS"; continue; }
		for f in "$d"*.[ch]; do check_file "$f" "$own"; done
	done
	ls "$ROOT"/lib/*.[ch] 2>/dev/null | sed 's/$/: outside any layer folder/'
)
if [ -z "$bad" ]; then pass "layers: every lib/ file includes only its own and lower layers"
else fail "layers: $(echo "$bad" | head -5 | tr '\n' ';')"; fi

# The check must catch what it is for: an upward include planted in a copy of the lowest layer.
low=$(sort -n "$LAYERS" | grep -v '^#' | awk 'NF{print $2; exit}')
high=$(sort -rn "$LAYERS" | grep -v '^#' | awk 'NF{print $2; exit}')
tmp=$TMP/layers
hdr=$(cd "$ROOT/lib/$high" && ls *.h | head -1)
mkdir -p "$tmp/$low"
printf '#include "%s/%s"\n' "$high" "$hdr" > "$tmp/$low/planted.c"
out=$(check_file "$tmp/$low/planted.c" "$low")
case $out in *"includes $high/$hdr"*) pass "layers: an upward include is reported" ;;
*) fail "layers: planted upward include not reported: '$out'" ;; esac
printf '#include "%s"\n' "$hdr" > "$tmp/$low/bare.c"
out=$(check_file "$tmp/$low/bare.c" "$low")
case $out in *"does not name its layer"*) pass "layers: a bare lib include is reported" ;;
*) fail "layers: bare include not reported: '$out'" ;; esac

# Calls as well as includes: a layer's objects (build/lib/LAYER/*.o) may use a symbol of libfirn.a
# only where that symbol is defined in the same layer or a lower one, so a function declared in a
# layer's header is defined there and no call climbs (an include-only check misses a call made
# through a header of the caller's own layer that a higher layer defines).
OBJS=$ROOT/$BUILD/lib
declare -A defined
# defs_of LAYER: the symbols LAYER's objects define ("SYMBOL LAYER" lines).
defs_of() { nm -g --defined-only "$OBJS/$1"/*.o 2>/dev/null | awk -v l="$1" 'NF == 3 { print $3, l }'; }
# check_calls LAYER OBJ...: prints one line per symbol OBJ uses that a layer not below LAYER defines.
check_calls() {
	local own=$1 sym other; shift
	nm -u "$@" 2>/dev/null | awk 'NF == 2 && $1 == "U" { print $2 }' | sort -u | while read -r sym; do
		other=${defined[$sym]:-}
		[ -n "$other" ] && [ "$other" != "$own" ] && [ "${rank[$other]}" -ge "${rank[$own]}" ] &&
			echo "lib/$own uses $sym (defined in layer $other, ${rank[$other]})"
	done
}
if ! compgen -G "$OBJS/*/*.o" >/dev/null || ! command -v nm >/dev/null; then
	skip "layers: no objects in $BUILD/lib (or no nm) to check calls on"
else
	for d in "${!rank[@]}"; do
		while read -r sym l; do defined[$sym]=$l; done < <(defs_of "$d")
	done
	bad=$(for d in "${!rank[@]}"; do
		compgen -G "$OBJS/$d/*.o" >/dev/null && check_calls "$d" "$OBJS/$d"/*.o; done | sort)
	if [ -z "$bad" ]; then pass "layers: every symbol a layer uses is defined in it or below"
	else fail "layers: $(echo "$bad" | wc -l) calls climb: $(echo "$bad" | head -5 | tr '\n' ';')"; fi

	# The check must catch what it is for: a call to the highest layer planted in the lowest.
	sym=$(defs_of "$high" | awk '{ print $1; exit }')
	printf 'extern void %s(void);\nvoid planted(void) { %s(); }\n' "$sym" "$sym" > "$tmp/call.c"
	if ${CC:-cc} -c -o "$tmp/call.o" "$tmp/call.c" 2>/dev/null; then
		out=$(check_calls "$low" "$tmp/call.o")
		case $out in *"uses $sym (defined in layer $high"*) pass "layers: an upward call is reported" ;;
		*) fail "layers: planted upward call to '$sym' not reported: '$out'" ;; esac
	else skip "layers: no C compiler to plant an upward call"; fi
fi
