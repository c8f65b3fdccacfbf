#!/usr/bin/env bash
# The source tree's layering (docs/ARCHITECTURE.md): no two parts include or
# call each other through a loop, no files of one part call each other in a
# loop (but a pair sharing an internal header), the core never picks a level
# by hand (only engine/pers.c chooses the personality), and the installed
# library leaves the simulated members (src/sim/) out.
. "$(dirname "$0")/../lib.sh"
check "includes and calls between parts and files: no loop" \
	"$TOP/scripts/check-layers" --objects "$TOP/build/rel"
check "no level dispatch outside the personality choice" \
	sh -c '! grep -rn "eng_is_parity\|eng_is_mirror\|URAID_LEVEL_RAID[0-9]*:" "$1/src/engine" |
	       grep -v "^$1/src/engine/pers.c:"' sh "$TOP"
check "liburaid.so exports no simulated member (fault, crash, disk model)" \
	sh -c '! nm -D --defined-only "$1/build/rel/liburaid.so" | grep -q "member_fault\|member_crash\|member_sim\|sim_"' \
	sh "$TOP"
# The check itself can fail: a tree whose engine core calls up into a part.
mkdir -p "$T_TMP/tree/scripts" "$T_TMP/tree/src/a" "$T_TMP/tree/src/b" "$T_TMP/obj/src/a" "$T_TMP/obj/src/b"
cp "$TOP/scripts/check-layers" "$T_TMP/tree/scripts/"
printf '#include "b/b.h"\nint a(void) { return b(); }\n' >"$T_TMP/tree/src/a/a.c"
printf 'int a(void);\n' >"$T_TMP/tree/src/a/a.h"
printf '#include "a/a.h"\nint b(void) { return 1; }\nint c(void) { return a(); }\n' >"$T_TMP/tree/src/b/b.c"
printf 'int b(void);\n' >"$T_TMP/tree/src/b/b.h"
cc -c -I"$T_TMP/tree/src" -o "$T_TMP/obj/src/a/a.o" "$T_TMP/tree/src/a/a.c"
cc -c -I"$T_TMP/tree/src" -o "$T_TMP/obj/src/b/b.o" "$T_TMP/tree/src/b/b.c"
"$T_TMP/tree/scripts/check-layers" --objects "$T_TMP/obj" >"$T_TMP/out" 2>&1
rc=$?
check "a made-up loop between two parts is reported" \
	sh -c '[ "$0" -ne 0 ] && grep -q "the parts a, b include each other" "$1" &&
	       grep -q "the parts a, b call each other" "$1"' "$rc" "$T_TMP/out"
t_done
