#!/usr/bin/env bash
# Runs libFuzzer harnesses: each replays its corpus (tests/fuzz/corpus/NAME: seeds and the crashes
# kept as regressions), then mutates for SECONDS; new inputs go to $BUILD/fuzz/corpus/NAME, a
# crash to $BUILD/fuzz/NAME-crash-*, the log to $BUILD/fuzz/NAME.log. Prints one line per
# harness: "ok   fuzz/NAME (RUNS runs in S s, N corpus files)", or FAIL and the log's end.
# usage: tests/fuzz/run.sh SECONDS HARNESS...
set -u
BUILD=${BUILD:-build}
secs=$1
shift
for bin in "$@"; do
	name=$(basename "$bin")
	seeds=$(dirname "$0")/corpus/$name
	log=$BUILD/fuzz/$name.log
	mkdir -p "$BUILD/fuzz/corpus/$name"
	dirs=("$BUILD/fuzz/corpus/$name")
	[ -d "$seeds" ] && dirs+=("$seeds")
	if ! "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 \
		-artifact_prefix="$BUILD/fuzz/$name-" "${dirs[@]}" >"$log" 2>&1; then
		echo "FAIL fuzz/$name (log: $log)"
		tail -40 "$log"
		if [ -n "${FIRN_SUMMARY:-}" ]; then echo "0 1 0" >>"$FIRN_SUMMARY"; fi
		exit 1
	fi
	runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) .*/\1 runs in \2 s/p' "$log")
	echo "ok   fuzz/$name ($runs, $(ls "$seeds" 2>/dev/null | wc -l) corpus files)"
	if [ -n "${FIRN_SUMMARY:-}" ]; then echo "1 0 0" >>"$FIRN_SUMMARY"; fi
done
