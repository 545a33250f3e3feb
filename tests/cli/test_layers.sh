#!/bin/bash
# lib/ is in layers (lib/LAYERS: "RANK NAME  what it holds"): a file may include headers of its own
# layer and of layers with a lower rank, each named with its layer ("base/vec.h"); never a layer at
# its own rank or above, so the dependency graph stays a ladder a newcomer can read bottom-up.
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
