#!/usr/bin/env bash
# Discard through the NBD export (issue #17): qemu-io's discard (NBD trim)
# and write -z -u (zero with MAY_TRIM) on a raid5 and a raid1 served by
# `uraid serve`. The members are sparse files: what the clients discard
# must come back to the filesystem (du of the members shrinks by most of
# it), read back as zeros, and leave data and parity consistent (uraid
# check: mismatch_cnt 0). A zero without MAY_TRIM keeps the space
# allocated. nbdinfo shows trim, zero and fast zero advertised; a fast zero
# works on file members. Degraded, the raid5 writes zeros instead (the
# members keep their blocks), still reads back zeros, and a fast zero is
# refused. End to end: `uraid attach` (loop device on nbdfuse), mkfs.xfs,
# a file written and deleted, fstrim: the loop device passes the discards
# down (FUSE fallocate -> NBD trim) and the members shrink again.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/export_common.bash"
need nbdkit nbdinfo qemu-io

alloc_kib() { du -k -c "$T_TMP/$1"/m*.img | awk '$2 == "total" {print $1}'; }

mk_array d5 5 4 64K 12M || { fail "create raid5"; t_done; }
mk_array d1 1 2 64K 12M || { fail "create raid1"; t_done; }
for name in d5 d1; do
	uri=$("$URAID" serve "$T_TMP/$name"/m*.img 2>"$T_TMP/$name.serve.err")
	check "$name: serve prints an NBD URI" [ "${uri#nbd+unix://}" != "$uri" ]
	[ -n "$uri" ] || { cat "$T_TMP/$name.serve.err"; continue; }
	info=$(nbdinfo "$uri")
	check "$name: can_trim, can_zero, can_fast_zero advertised" \
		bash -c "grep -q 'can_trim: true' <<<'$info' && grep -q 'can_zero: true' <<<'$info' && grep -q 'can_fast_zero: true' <<<'$info'"
	check "$name: geometry says discard is safe" bash -c "'$URAID' geometry $name | grep -q '^discard: safe'"
	qio() { qemu-io -f raw "$@" "$uri" >"$T_TMP/qio.log" 2>&1 && ! grep -qi 'fail\|error' "$T_TMP/qio.log"; }
	check "$name: write 8 MiB of 0x5a" qio -c 'write -P 0x5a 0 8M' -c flush
	full=$(alloc_kib "$name")
	# the ranges: whole stripes (raid5: 3 x 64K) and odd pieces
	check "$name: qemu-io discard 0+6M, 6M+100k (trim)" \
		qio -c 'discard 0 6M' -c 'discard 6M 100k' -c flush
	after=$(alloc_kib "$name")
	# 6 MiB on the members: raid5 of 4 holds 8 MiB, raid1 of 2 12 MiB; most
	# of it (3/4) must be freed
	want=$([ $name = d5 ] && echo 6144 || echo 9216)
	echo "# $name: members hold $full KiB, $after KiB after trimming 6 MiB"
	check "$name: du of the members shrank by >= $want KiB ($full -> $after)" \
		[ $((full - after)) -ge $want ]
	check "$name: trimmed ranges read back as zeros, the rest as written" \
		qio -c 'read -P 0 0 6M' -c 'read -P 0 6M 100k' -c 'read -P 0x5a 7M 1M'
	check "$name: write -z -u (zero, may trim) 7M+512k reads zeros" \
		qio -c 'write -z -u 7M 512k' -c 'read -P 0 7M 512k' -c 'read -P 0x5a 7680k 512k'
	check "$name: fast zero 0+1M" qio -c 'write -P 0x11 0 1M' -c 'write -z -u -n 0 1M' -c 'read -P 0 0 1M'
	before=$(alloc_kib "$name")
	check "$name: write -z (no trim) 0+2M reads zeros" qio -c 'write -z 0 2M' -c flush -c 'read -P 0 0 2M'
	check "$name: zero without trim allocated the range ($before -> $(alloc_kib "$name") KiB)" \
		[ "$(alloc_kib "$name")" -gt "$before" ]
	check "$name: uraid check: mismatch_cnt 0" \
		bash -c "'$URAID' check $name | grep -qx 'mismatch_cnt 0'"
	if [ $name = d5 ]; then
		check "$name: fail m3 (degraded)" "$URAID" fail $name "$T_TMP/$name/m3.img"
		check "$name: degraded: geometry says discard is not safe" \
			bash -c "'$URAID' geometry $name | grep -q '^discard: not safe'"
		check "$name: degraded: write then trim 3M+3M" \
			qio -c 'write -P 0x77 3M 3M' -c 'discard 3M 3M' -c 'read -P 0 3M 3M'
		qemu-io -f raw -c 'write -P 0x66 6M 64k' -c 'write -z -u -n 6M 64k' \
			-c 'read -P 0x66 6M 64k' "$uri" >"$T_TMP/qio.log" 2>&1
		check "$name: degraded: fast zero refused (not supported)" \
			grep -q 'write failed: Operation not supported' "$T_TMP/qio.log"
		check "$name: degraded: the refused fast zero changed nothing" \
			grep -q 'read 65536/65536' "$T_TMP/qio.log"
	fi
	"$URAID" stop $name
done

command -v mkfs.xfs >/dev/null && command -v fstrim >/dev/null && command -v nbdfuse >/dev/null || {
	fail "mkfs.xfs, fstrim and nbdfuse are needed for the attach part"
	t_done
}
mk_array fx 5 4 64K 200M # sparse; xfs wants 300 MiB and a 64 MiB log || { fail "create raid5 for attach"; t_done; }
L=$("$URAID" attach $(members fx) 2>"$T_TMP/fx.attach.err")
check "fx: attach prints a loop device" [ "${L#/dev/loop}" != "$L" ]
[ -b "$L" ] || { cat "$T_TMP/fx.attach.err"; t_done; }
check "fx: the loop device takes discards" [ "$(cat /sys/block/"${L#/dev/}"/queue/discard_max_bytes)" -gt 0 ]
check "fx: mkfs.xfs" mkfs.xfs -q -f $("$URAID" geometry fx | sed -n 's/^mkfs.xfs //p') "$L"
mnt=$T_TMP/mnt-fx
mkdir -p "$mnt"
check "fx: mount" mount -o noatime "$L" "$mnt"
mountpoint -q "$mnt" || { "$URAID" detach "$L"; t_done; }
check "fx: write a 40 MiB file" dd if=/dev/urandom of="$mnt/f" bs=1M count=40 conv=fsync status=none
full=$(alloc_kib fx)
rm -f "$mnt/f"
sync
check "fx: fstrim" fstrim "$mnt"
sync
after=$(alloc_kib fx)
echo "# fx: members hold $full KiB with the file, $after KiB after rm + fstrim"
# 40 MiB of data is 53 MiB on 4 raid5 members; most of it must come back
check "fx: fstrim freed >= 40 MiB on the members ($full -> $after KiB)" \
	[ $((full - after)) -ge 40960 ]
check "fx: umount" umount "$mnt"
check "fx: detach" "$URAID" detach "$L"
check "fx: assemble again" "$URAID" assemble $(members fx)
check "fx: uraid check after fstrim: mismatch_cnt 0" \
	bash -c "'$URAID' check fx | grep -qx 'mismatch_cnt 0'"
"$URAID" stop fx
t_done
