#!/usr/bin/env bash
# BPF cost of Python frames: the run time of firn's on_sample program per sample of Debian's
# python3.11 spinning 30 Python frames deep (bench/pydeep.py, 3 threads), with Python frames
# (the interpreter unwinder and the splice, over the DWARF unwinder's native stack) and with
# --no-python (the native stack alone); beside it, frame-pointer-only native stacks (the deep-fp
# fixture, 35 frames, --call-graph fp). Per sample as in bench/bpf.sh: (run_time_ns - (run_cnt -
# target samples) x early return) / target samples. py-spy is no reference here: Debian 12 does
# not carry it (PyPI does, as a binary wheel; it reads stacks with process_vm_readv from user
# space, so it has no BPF run time to compare). The same for pyenv's 3.13 and Debian unstable's
# 3.14 (in the root tests/cli/sid_root.sh makes; its rows are left out where it cannot be made).
# Prints result lines (bench/bench_lib.sh).
source "$(dirname "$0")/bench_lib.sh"
source "$(dirname "$0")/../tests/cli/sid_root.sh"
need_tools
bpf_stats_on
W=$(workdir python)
B=python
REPS=${REPS:-3}
SECONDS_ON=2
[ -n "$QUICK" ] && REPS=1 SECONDS_ON=1 SETTLE=0.5
PYDEEP="/usr/bin/python3.11 $ROOT/bench/pydeep.py 3"
PY313=$(ls -d /root/.pyenv/versions/3.13.*/bin/python3.13 2>/dev/null | head -1)
SID=$(sid_root) && cp "$ROOT/bench/pydeep.py" "$SID/tmp/firn-pydeep.py" || SID=
VERSIONS="3.11${PY313:+ 3.13}${SID:+ 3.14}"
CASES=()
for v in $VERSIONS; do CASES+=("python $v, 30 Python frames" "python $v, 300 Python frames"); done
CASES+=("python 3.11, 30 Python frames, --no-python" "native, fp, 35 frames")

# pydeep VERSION: the command line of bench/pydeep.py under that version (3.14: chroot'ed, which
# execs the interpreter in the same process)
pydeep() {
	case $1 in
	3.11) echo "/usr/bin/python3.11 $ROOT/bench/pydeep.py" ;;
	3.13) echo "$PY313 $ROOT/bench/pydeep.py" ;;
	3.14) echo "chroot $SID python3.14 /tmp/firn-pydeep.py" ;;
	esac
}

# case_cmd CASE: "FIXTURE-COMMAND|FIRN-OPTIONS".
case_cmd() {
	case $1 in
	*--no-python) echo "$PYDEEP|--no-python" ;;
	*"300 Python frames") v=${1#python }; echo "$(pydeep "${v%%,*}") 3 298|" ;;
	python*) v=${1#python }; echo "$(pydeep "${v%%,*}") 3|" ;;
	native*) echo "$DEEP_FP -t 2 -1|--call-graph fp" ;;
	idle) echo "sleep 3600|" ;;
	esac
}

# measure CASE: runs the case's fixture and `firn record -p` for SECONDS_ON; sets CNT NS TAKEN.
measure() {
	local fix opts
	IFS='|' read -r fix opts <<<"$(case_cmd "$1")"
	# shellcheck disable=SC2086
	$fix >/dev/null 2>&1 &
	local fx=$!
	measure_attached "$fx" "$opts"
}

# depth_check DOWN: "N samples, P% with DOWN down() frames" from the last profile (the Python cases).
depth_check() {
	"$FIRN" report --folded "$W/prof.pb.gz" 2>/dev/null | awk -v d="$1" '
		{ n = $NF; t += n; if (gsub(/;down/, "") >= d) ok += n }
		END { printf "%d samples, %.1f%% with %d down() frames", t, t ? 100 * ok / t : 0, d }'
}

per_sample() {
	awk -v c="$CNT" -v n="$NS" -v t="$TAKEN" -v z="$1" 'BEGIN { printf "%.0f", (n - (c - t) * z) / t }'
}

emit H "$B" "BPF run time per sample with Python frames (999 Hz)"
emit C "$B" "early return" firn "sleep 3600 & firn record -F 999 -p PID -o OUT"
for c in "${CASES[@]}"; do
	IFS='|' read -r fix opts <<<"$(case_cmd "$c")"
	emit C "$B" "$c" firn "$(show "$fix") & firn record -F 999${opts:+ $opts} -p PID -o OUT"
done
for v in $VERSIONS; do
	emit C "$B" "python $v, per Python frame" firn "(ns/sample of 300 Python frames - ns/sample of 30) / 270"
done
emit N "$B" "python 3.13 = pyenv's $PY313; python 3.14 = Debian unstable's 3.14.10 in a root made by mmdebstrap (tests/cli/sid_root.sh), run as chroot ROOT python3.14: offsets from their _Py_DebugOffsets; 3.14's instruction loop lies in the cold part of _PyEval_EvalFrameDefault."
emit N "$B" "python 3.11 = Debian's /usr/bin/python3.11 (no frame pointers: the native stack is DWARF-unwound in both Python rows) running bench/pydeep.py: 3 threads, each 30 Python frames deep (<module> or Thread.run, run, 28 x down, spin); with Python frames the program also walks the interpreter's thread list and frame chain and splices the frames in. native, fp = the deep-fp fixture (clang -fno-omit-frame-pointer), bpf_get_stack."
emit N "$B" "py-spy: not in Debian 12 (PyPI carries it); it samples from user space with process_vm_readv, so it has no BPF run time to put beside these."

declare -A PER
for ((rep = 1; rep <= REPS; rep++)); do
	say "python: rep $rep/$REPS, early return"
	if measure idle; then
		C0=$((NS / CNT))
		emit S "$B" "early return" firn "ns/sample" "$C0" ns
	fi
	for c in "${CASES[@]}"; do
		say "python: rep $rep/$REPS, $c"
		if ! measure "$c" || [ "$TAKEN" -le 0 ]; then
			emit V "$B" "$c" firn FAIL "no samples counted; $(tail -1 "$W/prof.err")"
			continue
		fi
		detail="$TAKEN of $CNT program runs were the fixture's samples"
		[[ $c == python*" 30 Python frames" ]] && detail="$(depth_check 28); $detail"
		[[ $c == python*" 300 Python frames" ]] && detail="$(depth_check 298); $detail"
		emit V "$B" "$c" firn ok "$detail"
		PER[$c]=$(per_sample "${C0:-0}")
		emit S "$B" "$c" firn "ns/sample" "${PER[$c]}" ns
	done
	# the cost of one more Python frame: the 300-frame and 30-frame samples' difference / 270
	for v in $VERSIONS; do
		a=${PER["python $v, 300 Python frames"]:-} b=${PER["python $v, 30 Python frames"]:-}
		[ -n "$a" ] && [ -n "$b" ] &&
			emit S "$B" "python $v, per Python frame" firn "ns/frame" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.0f", (a - b) / 270 }')" ns
	done
done
[ -z "$SID" ] || rm -f "$SID/tmp/firn-pydeep.py"
exit 0
