#!/usr/bin/env bash
# Short libFuzzer runs of every fuzz/fuzz_*.c target (FUZZ_SMOKE_SECONDS each,
# default 2) over its seed corpus; passes when nothing crashes. A crash
# leaves its input in build/fuzz-crashes/ (add it to a unit test). The
# regressions are the seeds (fuzz/corpus/NAME), replayed in full whatever
# the time; longer runs are `make fuzz`. The build runs one job per CPU.
. "$(dirname "$0")/../lib.sh"
cd "$TOP"
secs=${FUZZ_SMOKE_SECONDS:-2}
if ! make -s -j"$(nproc 2>/dev/null || echo 1)" fuzz-build >"$T_TMP/build.log" 2>&1; then
	fail "make fuzz-build"; sed 's/^/# /' "$T_TMP/build.log" | tail -20; t_done
fi
ok "make fuzz-build"
mkdir -p build/fuzz-crashes
quiet() { "$@" >/dev/null 2>&1; }
for src in fuzz/fuzz_*.c; do
	[ -f "$src" ] || continue
	name=$(basename "$src" .c)
	bin=build/fuzz/$name
	work=$T_TMP/corpus-$name
	mkdir -p "$work"
	seeds=()
	[ -d "fuzz/corpus/$name" ] && seeds=("fuzz/corpus/$name")
	if "$bin" -max_total_time="$secs" -runs=10000000 -max_len=8192 -timeout=10 \
		-artifact_prefix="build/fuzz-crashes/$name-" "$work" "${seeds[@]}" >"$T_TMP/$name.log" 2>&1; then
		ok "$name: $(grep -Eo 'Done [0-9]+ runs' "$T_TMP/$name.log" | head -1) without a crash"
	else
		fail "$name crashed (input saved under build/fuzz-crashes/)"
		grep -E "ERROR|SUMMARY|#[0-9]+ 0x" "$T_TMP/$name.log" | head -15 | sed 's/^/# /'
	fi
	# the seeds alone must also pass (regression inputs live there)
	if [ ${#seeds[@]} -gt 0 ]; then
		check "$name: seed corpus replays" quiet "$bin" -runs=0 "${seeds[@]}"
	fi
done
t_done
