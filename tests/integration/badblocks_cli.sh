#!/usr/bin/env bash
# md's bad block log through the CLI, on member files uraid created (its
# logs placed as mdadm places them) with entries put on by
# tests/md_bbl_put.py (the kernel's packing, not uraid's codec) and garbage
# under them: examine --badblocks lists them as mdadm --examine-badblocks
# does, cat reads around them, assemble --update=no-bbl refuses while
# entries are recorded and writes nothing, --update=force-no-bbl removes
# the logs (the garbage is read like any other sectors then), no-bbl
# removes empty logs; a corrupt log is refused by examine, cat and assemble
# with a message naming it, and no member byte changes.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP
put() { python3 "$TOP/tests/md_bbl_put.py" "$@"; }
sums() { sha256sum "$d"/m0 "$d"/m1 "$d"/m2 | cut -d' ' -f1 | tr '\n' ' '; }
for i in 0 1 2; do truncate -s 8M "$d/m$i"; done
"$URAID" create --run --no-daemon --level=5 --raid-devices=3 --chunk=64 --assume-clean \
	--name=bbc "$d/m0" "$d/m1" "$d/m2" >"$d/create.out" 2>&1
check "raid5 created" [ $? -eq 0 ]
doff=$("$URAID" examine --json "$d/m0" | sed -n 's/.*"data_offset": \([0-9]*\).*/\1/p')
size=$("$URAID" cat "$d/m0" "$d/m1" "$d/m2" | wc -c)
zeros=$(head -c "$size" /dev/zero | md5sum | cut -d' ' -f1)
check "fresh: examine --badblocks says the log is empty" \
	grep -qx "Bad-blocks list is empty in $d/m1" <("$URAID" examine --badblocks "$d/m1")
put --garbage "$d/m1" 100 8 2001 3
put --garbage "$d/m2" 5000 16
"$URAID" examine --badblocks "$d/m1" "$d/m2" >"$d/ex.out" 2>&1
rc=$?
printf 'Bad-blocks on %s:\n%20d for 8 sectors\n%20d for 3 sectors\nBad-blocks on %s:\n%20d for 16 sectors\n' \
	"$d/m1" $((doff + 100)) $((doff + 2001)) "$d/m2" $((doff + 5000)) >"$d/ex.want"
check "examine --badblocks prints mdadm's listing (rc $rc)" cmp -s "$d/ex.out" "$d/ex.want"
[ "$rc" -eq 0 ] || cat "$d/ex.out"
check "examine --badblocks --json has the entries" \
	grep -q "\"bad_blocks\": \[\[$((doff + 100)), 8\], \[$((doff + 2001)), 3\]\]" \
	<("$URAID" examine --badblocks --json "$d/m1")
before=$(sums)
got=$("$URAID" cat "$d/m0" "$d/m1" "$d/m2" 2>"$d/cat.err" | md5sum | cut -d' ' -f1)
check "cat reads around the recorded ranges (zeros, not the garbage under them)" [ "$got" = "$zeros" ]
"$URAID" assemble --update=no-bbl --name=bbc "$d/m0" "$d/m1" "$d/m2" >"$d/nobbl.out" 2>&1
rc=$?
check "assemble --update=no-bbl refused while m1 records bad blocks (rc $rc)" [ "$rc" -ne 0 ]
check "... naming the member and force-no-bbl" grep -q "m1.*force-no-bbl" "$d/nobbl.out"
check "... nothing written" [ "$(sums)" = "$before" ]
"$URAID" assemble --update=bogus "$d/m0" "$d/m1" "$d/m2" >"$d/bogus.out" 2>&1
check "assemble --update=bogus refused" [ $? -ne 0 ]
check "... naming what is supported" grep -q "no-bbl" "$d/bogus.out"
# A corrupt log on a copy: an entry past the end of the member.
mkdir -p "$d/c"
cp "$d/m0" "$d/m1" "$d/m2" "$d/c/"
put "$d/c/m2" 16380 64
csum=$(sha256sum "$d"/c/m* | cut -d' ' -f1 | tr '\n' ' ')
"$URAID" examine --badblocks "$d/c/m2" >"$d/cex.out" 2>&1
check "examine --badblocks exits 1 on a corrupt log" [ $? -eq 1 ]
check "... naming the entry" grep -q "refused: .*bad block log entry 0 .*past the end of the member" "$d/cex.out"
"$URAID" cat "$d/c/m0" "$d/c/m1" "$d/c/m2" >/dev/null 2>"$d/ccat.err"
check "cat refuses the corrupt log" [ $? -ne 0 ]
check "... naming the member and the log" grep -q "c/m2: bad block log refused" "$d/ccat.err"
"$URAID" assemble --name=bbx "$d/c/m0" "$d/c/m1" "$d/c/m2" >"$d/casm.out" 2>&1
check "assemble refuses the corrupt log" [ $? -ne 0 ]
check "... nothing written" [ "$(sha256sum "$d"/c/m* | cut -d' ' -f1 | tr '\n' ' ')" = "$csum" ]
# force-no-bbl: the logs go, with their entries.
"$URAID" assemble --update=force-no-bbl --name=bbc "$d/m0" "$d/m1" "$d/m2" >"$d/force.out" 2>&1
rc=$?
check "assemble --update=force-no-bbl starts the array (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || cat "$d/force.out"
"$URAID" stop bbc >/dev/null 2>&1
for i in 0 1 2; do
	check "m$i: no log configured after force-no-bbl" \
		grep -qx "No bad-blocks list configured on $d/m$i" <("$URAID" examine --badblocks "$d/m$i")
done
got=$("$URAID" cat "$d/m0" "$d/m1" "$d/m2" | md5sum | cut -d' ' -f1)
check "the former ranges are read like any other (the garbage shows)" [ "$got" != "$zeros" ]
# no-bbl on empty logs removes them.
for i in 0 1 2; do truncate -s 0 "$d/n$i" && truncate -s 8M "$d/n$i"; done
"$URAID" create --run --no-daemon --level=1 --raid-devices=3 --assume-clean --name=bbn \
	"$d/n0" "$d/n1" "$d/n2" >/dev/null 2>&1
"$URAID" assemble --update=no-bbl --name=bbn "$d/n0" "$d/n1" "$d/n2" >"$d/n.out" 2>&1
rc=$?
check "assemble --update=no-bbl on empty logs starts (rc $rc)" [ "$rc" -eq 0 ]
"$URAID" stop bbn >/dev/null 2>&1
check "... and their logs are gone" \
	[ "$("$URAID" examine --badblocks "$d/n0" "$d/n1" "$d/n2" | grep -c '^No bad-blocks list configured')" = 3 ]
check "... the array still assembles" "$URAID" cat -o /dev/null "$d/n0" "$d/n1" "$d/n2"
t_done
