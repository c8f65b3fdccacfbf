#!/usr/bin/env bash
# Discards against the real kernel (issue #17): uraid arrays on small member
# files take random discards, write-zeroes and writes through the NBD
# export (qemu-io: whole stripes and odd pieces, trim and zero with and
# without may-trim) on a raid5 and a raid10; a raid6 is made with
# `create --discard` over random data (P = Q = 0 must be md's parity of
# zeros). The same requests go to a plain shadow file. Then one boot of
# shared/mdvm: md assembles each array's members, reads the shadow's md5,
# and its check finds mismatch_cnt 0. In the same boot uraid runs in the
# guest on block devices (discard_mdvm.job): raid5 on members that zero
# what they discard gives whole stripes back, raid5 on members that do not
# writes zeros and discards nothing, raid1 and raid10 there pass the
# discard down; md assembles them after with the expected content.
source "$(dirname "$0")/../lib.sh"
source "$TOP/tests/mdvm/lib.sh"
source "$(dirname "$0")/export_common.bash"
need nbdkit nbdinfo nbdcopy qemu-io
if ! mdvm_ready; then
	fail "mdvm is not set up (see the message above); cannot run the kernel checks"
	t_done
fi

# ops NAME SEED: random writes, discards and zeroes through the export and
# on $T_TMP/NAME.shadow (the array's expected content)
ops() {
	local name=$1 uri=$2 size=$3
	python3 - "$2" "$3" "$4" "$T_TMP/$name.shadow" "$T_TMP/$name.cmds" <<'PY'
import random, sys
uri, size, seed, shadow, cmds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
r = random.Random(seed)
f = open(shadow, "r+b")
out = []
for i in range(40):
    k = r.randrange(10)
    if k < 3:  # whole 192K/256K multiples: stripes of every layout here
        n = r.choice([1, 2, 3]) * 768 * 1024
    else:
        n = r.randrange(1, 400) * 512
    off = r.randrange(0, (size - n) // 512 + 1) * 512
    if k >= 7:
        v = r.randrange(1, 256)
        out.append(f"write -P {v} {off} {n}")
        f.seek(off); f.write(bytes([v]) * n)
    else:
        out.append(["discard", "write -z -u", "write -z"][k % 3] + f" {off} {n}")
        f.seek(off); f.write(bytes(n))
open(cmds, "w").write("\n".join(out) + "\n")
PY
	local args=()
	while read -r c; do args+=(-c "$c"); done <"$T_TMP/$name.cmds"
	qemu-io -f raw "${args[@]}" -c flush "$uri" >"$T_TMP/$name.qio" 2>&1 &&
		! grep -qi 'fail\|error' "$T_TMP/$name.qio"
}

disks=()
for spec in "d5 5 4" "d10 10 4"; do
	set -- $spec
	name=$1 level=$2 n=$3
	mk_array $name $level $n 64K 6M || { fail "$name: create"; continue; }
	uri=$("$URAID" serve $(members $name) 2>"$T_TMP/$name.serve.err")
	size=$(nbdinfo --size "$uri")
	head -c "$size" /dev/urandom >"$T_TMP/$name.shadow"
	check "$name: fill with random data" nbdcopy "$T_TMP/$name.shadow" "$uri"
	check "$name: 40 random writes, discards and zeroes" ops $name "$uri" "$size" $level
	check "$name: the export reads the shadow" cmp -s <(nbdcopy "$uri" -) "$T_TMP/$name.shadow"
	"$URAID" stop $name
	i=0
	for m in $(members $name); do
		disks+=(--disk "$name$i=$m")
		i=$((i + 1))
	done
done
# raid6 made by create --discard over random data
mkdir -p "$T_TMP/d6"
for i in 0 1 2 3 4; do head -c 6M /dev/urandom >"$T_TMP/d6/m$i.img"; disks+=(--disk "d6$i=$T_TMP/d6/m$i.img"); done
check "d6: create --discard over random data" "$URAID" create --level=6 --raid-devices=5 --chunk=64K \
	--discard --name=d6 --run --no-daemon $(members d6)
size6=$("$URAID" cat $(members d6) | wc -c)
head -c "$size6" /dev/zero >"$T_TMP/d6.shadow"

cat >"$T_TMP/job.sh" <<'JOB'
echo 1000000 >/proc/sys/dev/raid/speed_limit_min
echo 2000000 >/proc/sys/dev/raid/speed_limit_max
for a in d5 d10 d6; do
	M=$(for n in $MDVM_DISKS; do case $n in $a[0-9]) echo /dev/disk-$n ;; esac; done)
	run mdadm --assemble --run --readonly /dev/md/$a $M || { echo "!!! $a: assemble"; continue; }
	dev=$(readlink -f /dev/md/$a)
	echo "MD5_$a=$(md5_range $dev)"
	run mdadm --readwrite /dev/md/$a
	echo "CHECK_$a=$(md_check ${dev#/dev/} | grep -o 'mismatch_cnt=[0-9]*' | tail -1)"
	run mdadm --stop /dev/md/$a
done
. /root/bdev.job
JOB
head -c 12M /dev/urandom >"$T_TMP/pat" # the guest's data (discard_mdvm.job)
disks+=(--disk "pat=$T_TMP/pat")
exes=()
for p in "$URAID" nbdkit blkdiscard dmsetup; do
	e=$(command -v "$p") || { fail "$p not found on the host"; t_done; }
	exes+=(--put-exe "$e")
done
PLUG=$(dirname "$URAID")/nbdkit-uraid-plugin.so
[ -f "$PLUG" ] || { fail "no plugin at $PLUG (make all)"; t_done; }
mdvm_run --snapshot --timeout 600 "${disks[@]}" "${exes[@]}" \
	--put "$PLUG=/usr/local/bin/nbdkit-uraid-plugin.so" \
	--put "$TOP/tests/integration/discard_mdvm.job=/root/bdev.job" \
	--script "$T_TMP/job.sh" --log "$T_TMP/vm.log" >/dev/null 2>&1
cp "$T_TMP/vm.log" "$TOP/build/test-logs/discard_mdvm.vm.log" 2>/dev/null
for a in d5 d10 d6; do
	want=$(md5sum <"$T_TMP/$a.shadow" | cut -d' ' -f1)
	check "$a: the kernel reads the shadow's md5" grep -qx "MD5_$a=$want" "$T_TMP/vm.log"
	check "$a: the kernel's check: mismatch_cnt=0" grep -qx "CHECK_$a=mismatch_cnt=0" "$T_TMP/vm.log"
done
grep -q "mismatch_cnt=0" "$T_TMP/vm.log" || grep -E '^(!!!|mdadm|MD5|CHECK)' "$T_TMP/vm.log" | tail -20
sed -n 's/^T //p' "$T_TMP/vm.log"
grep -q '^T not ok' "$T_TMP/vm.log" && { T_FAILED=1; grep -E '^(# |uraid:|!!!)' "$T_TMP/vm.log" | tail -30; }
n=$(grep -c '^T ok' "$T_TMP/vm.log")
check "all 31 block-device checks in the guest ran ($n passed)" [ "$n" -eq 31 ]
t_done
