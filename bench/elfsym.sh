#!/usr/bin/env bash
# ELF symbol tables' cost: each of a set of big files indexed by lib/elf/elfsym as the
# symbolizer indexes every file a recording meets (bench/elfsym_index.c, one process a file):
# its symbols, the heap the index keeps, what malloc holds more after the call (the index and
# what the call freed but the allocator kept), the process's RssAnon and RssFile after it (the
# string tables are mapped, page cache: RssFile counts only the pages a name was read from), and
# the best time of RUNS indexings. Prints a Markdown table.
#
# usage: bench/elfsym.sh [FILE...]
#   FILE   default: this machine's libc, libstdc++, libpython3.11 (pyenv's or the system's), cc1,
#          the newest libLLVM and node, those present
#   env: BUILD (build), RUNS (5)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
RUNS=${RUNS:-5}
OUT=$ROOT/$BUILD/bench/elfsym
mkdir -p "$OUT"

# default_files: the big files of this machine that firn meets in a system-wide recording.
default_files() {
	local c
	ldd /bin/true | awk '/libc.so/ {print $3}'
	for c in /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
		"$HOME"/.pyenv/versions/3.11.*/lib/libpython3.11.so.1.0 \
		/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 \
		"$(gcc -print-prog-name=cc1 2>/dev/null || true)" \
		"$(ls /usr/lib/x86_64-linux-gnu/libLLVM-*.so.1 2>/dev/null | sort -V | tail -1)" \
		"$(command -v node || true)"; do
		[ -f "$c" ] && readlink -f "$c"
	done
}

make -s -C "$ROOT" BUILD="$BUILD" "$BUILD/libfirn.a" >/dev/null
PKGS="libbpf libelf libdw zlib ncursesw capstone"
cc -O2 -g -std=gnu11 -D_GNU_SOURCE -I"$ROOT/lib" -o "$OUT/elfsym_index" \
	"$ROOT/bench/elfsym_index.c" "$ROOT/$BUILD/libfirn.a" $(pkg-config --libs $PKGS) -liberty -lm

if [ $# -gt 0 ]; then files=("$@"); else mapfile -t files < <(default_files | awk '!seen[$0]++'); fi
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "\`bench/elfsym.sh\` (RUNS=$RUNS, $(date -u '+%Y-%m-%d'), load average $load):"
echo
printf '| file | size MB | symbols | kept on the heap | malloc'"'"'d after | RssAnon after |'
echo ' RssFile after | best init |'
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for f in "${files[@]}"; do
	line=$("$OUT/elfsym_index" -r "$RUNS" "$f") || continue
	IFS=$'\t' read -r path nsyms kept held anon file ms <<<"$line"
	awk -v p="$path" -v sz="$(stat -L -c %s "$f")" -v n="$nsyms" -v k="$kept" -v h="$held" \
		-v a="$anon" -v fl="$file" -v ms="$ms" 'BEGIN {
		printf "| %s | %.1f | %d | %.2f MB | %.2f MB | %.1f MB | %.1f MB | %.1f ms |\n",
			p, sz / 1e6, n, k / 1e6, h / 1e6, a / 1024, fl / 1024, ms }'
done
