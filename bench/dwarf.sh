#!/usr/bin/env bash
# DWARF cost bench: the time firn takes to build and load the CFI unwind tables of a program's
# binaries (firn's own figure, the pprof comment "unwind.tables: ... built in X ms", with the rows
# and bytes), for a program whose code is libc (/bin/true: true + ld.so + libc), Debian's
# python3.11 and OpenJDK 17's java (libjvm.so); and the BPF map memory firn holds during a
# system-wide recording, beside the ring buffers perf record -a -g maps (its kernel-side memory).
# Prints result lines (see bench/bench_lib.sh). REPS (default 3); QUICK=1: 1 rep, libc only.
source "$(dirname "$0")/bench_lib.sh"
need_tools
W=$(workdir dwarf)
B=dwarf
REPS=${REPS:-3}
[ -n "$QUICK" ] && REPS=1
JAVA=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
PROGS=("libc" "python3.11" "libjvm.so")
declare -A CMD=([libc]="/bin/true" [python3.11]="/usr/bin/python3.11 -c pass"
	[libjvm.so]="$JAVA -Xshare:auto -version")
[ -n "$QUICK" ] && PROGS=("libc")
[ -x "$JAVA" ] || { PROGS=("libc" "python3.11"); emit N "$B" "no '$JAVA': no libjvm.so row"; }

emit H "$B" "DWARF cost: unwind table build + load, and BPF map memory"
for p in "${PROGS[@]}"; do
	emit C "$B" "tables for $p" firn "$(show "FIRN_UNWIND_CACHE=0 firn record --call-graph dwarf -F 999 -o OUT -- ${CMD[$p]}")"
done
emit C "$B" "BPF maps, system-wide" firn "firn record -a -F 99 -o OUT (3 s after start-up)"
emit C "$B" "BPF maps, system-wide" "perf -g" "perf record -a -g -F 99 -o OUT (its mmapped ring buffers)"
emit N "$B" "'table build ms' is firn's own measure (pprof comment unwind.tables, 'built in'): every table built while recording the command, i.e. the program and the libraries it maps (for java: java, libjli, libjvm.so, libc, ld.so and more, some loaded on a refresh after dlopen). rows and bytes are the table's size in the BPF array."
emit N "$B" "'kernel memory MB' is, for firn, the sum of bytes_memlock of every BPF map firn holds (bpftool): the unwind rows take 512 KiB chunks created as tables load (up to --unwind-memory), and the maps the recording does not use one entry each; the table bytes actually used are in the firn row (firn -v prints the same total as 'BPF maps: N, X MiB'). perf's figure is the size of its mmapped perf_event ring buffers."

# tables PROG: one recording of PROG's command; emits its table figures.
tables() {
	local p=$1 line ms rows bytes files
	# shellcheck disable=SC2086
	# without the on-disk table cache: the build is what is measured
	FIRN_UNWIND_CACHE=0 "$FIRN" record --call-graph dwarf -F 999 -o "$W/t.pb.gz" -- ${CMD[$p]} >/dev/null 2>"$W/t.err"
	local rc=$?
	line=$(pprof_comment "$W/t.pb.gz" unwind.tables 2>/dev/null)
	read -r files rows bytes ms < <(echo "$line" |
		sed -n 's/^\([0-9]*\) files, \([0-9]*\) rows, \([0-9]*\) bytes of .*built in \([0-9.]*\) ms.*/\1 \2 \3 \4/p')
	if [ "$rc" -ne 0 ] || [ -z "$ms" ] || [ "${rows:-0}" -le 0 ]; then
		emit V "$B" "tables for $p" firn FAIL "exit $rc; unwind.tables: '$line'; $(tail -1 "$W/t.err")"
		return
	fi
	emit V "$B" "tables for $p" firn ok "$files files, $rows rows, $bytes bytes"
	emit S "$B" "tables for $p" firn "table build ms" "$ms" ms
	emit S "$B" "tables for $p" firn "table rows" "$rows" rows
	emit S "$B" "tables for $p" firn "ns per row" "$(awk -v m="$ms" -v r="$rows" 'BEGIN { printf "%.0f", m * 1e6 / r }')" ns
}

# perf_ring_mb PID: the size of PID's mmapped perf_event buffers, in MB.
perf_ring_mb() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { pe = ($6 == "anon_inode:[perf_event]") } /^Size:/ && pe { s += $2 }
		END { printf "%.2f\n", s / 1024 }' "/proc/$1/smaps" 2>/dev/null
}

# maps: BPF map memory of a system-wide firn recording, and perf's ring buffers.
maps() {
	local n bytes used
	bg_start firn "$W" "$FIRN" record -a -F 99 -o "$W/m.pb.gz"
	bg_start perf "$W" "$PERF" record -a -g -F 99 -q -o "$W/m.data"
	bg_ready firn && bg_ready perf
	sleep 2
	read -r n bytes < <(bpf_map_bytes "${BG_PID[firn]}")
	local ring
	ring=$(perf_ring_mb "${BG_PID[perf]}")
	bg_stop firn
	local frc=$RU_RC
	bg_stop perf
	used=$(sed -n 's/.*tables: [0-9]* files, [0-9]* rows, \([0-9.]*\) MiB.*/\1/p' "$W/firn.err")
	if [ "$frc" -eq 0 ] && [ "${n:-0}" -gt 0 ] && "$FIRN" report "$W/m.pb.gz" >/dev/null 2>&1; then
		emit V "$B" "BPF maps, system-wide" firn ok "$n maps; unwind tables in use: ${used:-?} MiB"
		emit S "$B" "BPF maps, system-wide" firn "kernel memory MB" "$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')" MB
		[ -n "$used" ] && emit S "$B" "BPF maps, system-wide" firn "of which unwind rows in use MB" "$used" MB
	else
		emit V "$B" "BPF maps, system-wide" firn FAIL "exit $frc; $n maps; $(tail -1 "$W/firn.err")"
	fi
	if [ "$RU_RC" -eq 130 ] || [ "$RU_RC" -eq 0 ] && [ -n "$ring" ]; then
		emit V "$B" "BPF maps, system-wide" "perf -g" ok "ring buffers $ring MB"
		emit S "$B" "BPF maps, system-wide" "perf -g" "kernel memory MB" "$ring" MB
	else
		emit V "$B" "BPF maps, system-wide" "perf -g" FAIL "exit $RU_RC"
	fi
}

for ((rep = 1; rep <= REPS; rep++)); do
	for p in "${PROGS[@]}"; do
		say "dwarf: rep $rep/$REPS, tables for $p"
		tables "$p"
	done
done
say "dwarf: BPF map memory"
maps
# a bench that ran exits 0: its failed checks are V lines in its output
exit 0
