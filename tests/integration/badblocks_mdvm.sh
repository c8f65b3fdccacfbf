#!/usr/bin/env bash
# md's bad block log against the real kernel (shared/mdvm, two boots).
# Kernel-made raid1/5/6/10 (1.2) with ranges recorded in members' logs
# through sysfs and garbage written over them afterwards: uraid cat
# --keep-going of the images must give the bytes the kernel reads (md reads
# around its bad blocks, zeros where it answers EIO: raid1/raid10 where every
# copy is bad, raid5/6 where too many members of a 4 KiB unit are), and
# uraid examine --badblocks must print what the guest's mdadm
# --examine-badblocks prints. raid0: md writes no superblock after creating
# it, so the host puts the log on (its own encoder, below) between the
# boots; md never consults it there and reads the garbage, uraid too.
# Round trip: members uraid wrote with a write error on one of them
# (test_engine_badblocks export_for_kernel, through the fault wrapper) must
# assemble in the kernel, read as expected, and list the recorded range.
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
bin=$TOP/build/asan/tests/test_engine_badblocks
[ -x "$bin" ] || { fail "$bin missing (make tests-build)"; t_done; }
d=$T_TMP
# TAG:LEVEL:MEMBERS, and each member's data-area bad ranges.
TAGS="a:1:2 f:5:3 s:6:4 t:10:4"
RAW="z:0:3"
declare -A BB=(
	[z0]="1000 8" [z1]="2001 5" [z2]=""
	[a0]="1000 16 5001 3" [a1]="1008 16 9000 20"
	[f0]="1000 8 3001 2" [f1]="3003 4 6000 10" [f2]="7000 1"
	[s0]="2000 8 4000 8" [s1]="2004 4 4000 8" [s2]="2007 1" [s3]="9000 3"
	[t0]="1000 8" [t1]="1000 8" [t2]="3000 5" [t3]="7000 3"
)
# md's EIO, as 4 KiB blocks: a1/a0 share 1008-1015; f0 (the row's parity)
# and f1 share the unit 3000-3007, f1's block lost, f2's read straight;
# s0/s1/s2 (P, Q and one data member of the row) share the unit 2000-2007,
# that data block lost, s3's read straight; t0/t1 are both copies of one
# block; raid0 none.
declare -A WANT_EIO=([z]=0 [a]=1 [f]=1 [s]=1 [t]=1)
disks=()
for spec in $TAGS $RAW; do
	tag=${spec%%:*}
	n=${spec##*:}
	for ((i = 0; i < n; i++)); do
		truncate -s 8M "$d/$tag$i"
		disks+=(--disk "$tag$i=$d/$tag$i")
	done
done
mkdir -p "$d/rt"
URAID_BBL_EXPORT=$d/rt "$bin" export_for_kernel >"$d/export.log" 2>&1
check "round-trip members exported (uraid recorded a write error)" \
	test -f "$d/rt/rt1.bbl" -a -f "$d/rt/rt5.bbl"
rtdisks=()
for i in 0 1; do rtdisks+=(--disk "rt1_$i=$d/rt/rt1_$i"); done
for i in 0 1 2; do rtdisks+=(--disk "rt5_$i=$d/rt/rt5_$i"); done
job() {
	for k in "${!BB[@]}"; do echo "BB_$k=\"${BB[$k]}\""; done
	cat "$TOP/tests/integration/badblocks_mdvm.job"
}
{
	echo "TAGS=\"$TAGS\" MAKE=\"$RAW\" READ= RT="
	job
} >"$d/job1.sh"
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 500 --mem 1024 "${disks[@]}" \
	--script "$d/job1.sh" >"$d/vm.log" 2>&1
rc=$?
check "VM 1: kernel arrays with bad blocks made, read, listed (rc $rc)" [ "$rc" -eq 0 ]
# The raid0's log, put on as md's super_1_sync would (tests/md_bbl_put.py,
# not uraid's codec), and garbage over its ranges.
for ((i = 0; i < 3; i++)); do
	python3 "$TOP/tests/md_bbl_put.py" --garbage "$d/z$i" ${BB[z$i]}
done
{
	echo "TAGS= MAKE= READ=\"z:3\" RT=\"rt1:2 rt5:3\""
	job
} >"$d/job2.sh"
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 300 --mem 1024 --disk z0="$d/z0" \
	--disk z1="$d/z1" --disk z2="$d/z2" "${rtdisks[@]}" --script "$d/job2.sh" >>"$d/vm.log" 2>&1
rc2=$?
check "VM 2: the raid0 and the members uraid wrote read, listed (rc $rc2)" [ "$rc2" -eq 0 ]
# the guest's console, for a failure's reader
mkdir -p "$TOP/build/test-logs" && cp "$d/vm.log" "$TOP/build/test-logs/badblocks_mdvm.vm.log"
[ "$rc" -eq 0 -a "$rc2" -eq 0 ] || { grep -E 'mdadm:|md/|!!!' "$d/vm.log" | head -30; t_done; }
val() { sed -n "s/^$1=\\([^ ]*\\).*/\\1/p" "$d/vm.log" | tr -d '\r' | head -1; }
check "the kernel took every range into its logs" sh -c "! grep -q '^!!! bad_blocks' '$d/vm.log'"
# mdadm's listing as printed for DEV (guest name), and uraid's for the image.
exbb() { sed -n "s/^EXBB $1: //p" "$d/vm.log" | tr -d '\r'; }
uexbb() { "$URAID" examine --badblocks "$2" 2>&1 | sed "s#$2#/dev/disk-$1#g"; }
for spec in $TAGS $RAW; do
	tag=${spec%%:*}
	n=${spec##*:}
	m=()
	for ((i = 0; i < n; i++)); do m+=("$d/$tag$i"); done
	rc=0
	"$URAID" cat --keep-going --map "$d/map_$tag" "${m[@]}" 2>"$d/cat_$tag.err" >"$d/cat_$tag" ||
		rc=$?
	# The kernel's dd read 4 KiB blocks and zeroed a whole block on EIO;
	# uraid's cat narrows a failed read down to sectors (a raid5 member's
	# sectors before its bad one read directly, as md would read them
	# alone): its unreadable areas widened to the 4 KiB blocks around them.
	python3 - "$d/cat_$tag" "$d/map_$tag" <<'PY'
import sys
img, mp = sys.argv[1:3]
with open(img, 'r+b') as f:
    for line in open(mp):
        v = line.split()
        if line.startswith('#') or len(v) != 3 or v[2] != '-':
            continue
        a, n = int(v[0], 16), int(v[1], 16)
        a0, a1 = a // 4096 * 4096, (a + n + 4095) // 4096 * 4096
        f.seek(a0)
        f.write(bytes(a1 - a0))
PY
	got=$(md5sum <"$d/cat_$tag" | cut -d' ' -f1)
	want=$(val "KMD5_$tag")
	check "$tag (level ${spec#*:}): uraid cat reads what the kernel reads ($want, kernel EIO blocks $(val "KEIO_$tag"))" \
		[ -n "$want" -a "$got" = "$want" ]
	check "$tag: the kernel's EIO blocks are the expected ${WANT_EIO[$tag]}" \
		[ "$(val "KEIO_$tag")" = "${WANT_EIO[$tag]}" ]
	if [ "${WANT_EIO[$tag]}" = 0 ]; then
		check "$tag: cat exits 0 (rc $rc)" [ "$rc" -eq 0 ]
	else
		check "$tag: cat --keep-going exits 3 (rc $rc)" [ "$rc" -eq 3 ]
	fi
	rm -f "$d/cat_$tag"
	for ((i = 0; i < n; i++)); do
		if [ -n "${BB[$tag$i]}" ]; then
			check "$tag$i: the kernel's log lists its ranges" grep -q ' for ' <(exbb "$tag$i")
		fi
		check "$tag$i: examine --badblocks prints mdadm's listing" \
			cmp -s <(exbb "$tag$i") <(uexbb "$tag$i" "$d/$tag$i")
	done
done
exbb a1 | sed 's/^/# mdadm: /'
for t in rt1 rt5; do
	n=2
	[ $t = rt5 ] && n=3
	read -r mem s len <"$d/rt/$t.bbl"
	line=$(printf '%20s for %s sectors' "$s" "$len")
	check "$t: mdadm --examine-badblocks lists the range uraid recorded ($s+$len on member $mem)" \
		sh -c "printf '%s\n' \"\$1\" | grep -qxF \"\$2\"" _ "$(exbb "${t}_$mem")" "$line"
	check "$t: the kernel reads what uraid wrote, around the bad block ($(val "KEIO_${t}_") EIO blocks)" \
		[ "$(val "KMD5_${t}_")" = "$(md5sum <"$d/rt/$t.exp" | cut -d' ' -f1)" ]
	for ((i = 0; i < n; i++)); do
		check "${t}_$i: examine --badblocks prints mdadm's listing" \
			cmp -s <(exbb "${t}_$i") <(uexbb "${t}_$i" "$d/rt/${t}_$i")
	done
done
t_done
