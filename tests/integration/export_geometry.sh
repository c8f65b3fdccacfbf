#!/usr/bin/env bash
# uraid geometry for every striping kind: data members from a shell table
# (raid0 all, raid4/5 n-1, raid6 n-2, raid10 near n/copies, far all, raid1 and
# linear none), sunit/swidth in sectors and bytes, and the printed mkfs
# options fed to the real tools: mkfs.xfs -N (dry run) must report that
# sunit/swidth, mkfs.ext4 must record that RAID stride / stripe width
# (dumpe2fs). By member files and by the name of a running array alike.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/export_common.bash"
need mkfs.xfs mkfs.ext4 dumpe2fs
export TEST_DIR=$T_TMP TEST_DEV=unused QA_CHECK_FS=1 # small mkfs.xfs (as fstests)

# name level n chunk_k layout data_members. The raid10 rows are what Linux
# 6.1 md reports as optimal_io_size / chunk (read in mdvm for 64K chunks:
# 3 n2 -> 3, 4 n2 -> 2, 4 f2 -> 4, 4 o2 -> 4, 4 n3 -> 4, 5 n2 -> 5).
while read -r name level n chunk_k layout data; do
	opt=()
	[ "$layout" = - ] || opt=(--layout="$layout")
	mk_array "$name" "$level" "$n" "${chunk_k}K" 8M "${opt[@]}" ||
		{ fail "$name: create ($(tail -1 "$T_TMP/$name.create.log"))"; continue; }
	g=$("$URAID" geometry $(members "$name"))
	chunk=$((chunk_k * 1024))
	check "$name: data disks $data" grep -qx "data disks: $data\( (no striping)\)\?" <<<"$g"
	if [ "$data" = 0 ]; then
		check "$name: no stripe options" grep -qx "mkfs.xfs: (no stripe options)" <<<"$g"
		continue
	fi
	check "$name: sunit $((chunk / 512)) sectors ($chunk bytes)" \
		grep -qx "sunit: $((chunk / 512)) sectors ($chunk bytes)" <<<"$g"
	check "$name: swidth $((chunk * data / 512)) sectors" \
		grep -qx "swidth: $((chunk * data / 512)) sectors ($((chunk * data)) bytes)" <<<"$g"
	xo=$(sed -n 's/^mkfs.xfs //p' <<<"$g")
	eo=$(sed -n 's/^mkfs.ext4 //p' <<<"$g")
	truncate -s 400M "$T_TMP/fs.img"
	check "$name: mkfs.xfs $xo -> sunit=$((chunk / 4096)) swidth=$((chunk * data / 4096)) blks" \
		bash -c "mkfs.xfs -N -f $xo '$T_TMP/fs.img' | grep -q 'sunit=$((chunk / 4096)) *swidth=$((chunk * data / 4096)) blks'"
	rm -f "$T_TMP/fs.img"
	truncate -s 64M "$T_TMP/fs.img"
	mkfs.ext4 -q -F -b 4096 $eo "$T_TMP/fs.img" >/dev/null 2>&1
	check "$name: mkfs.ext4 $eo -> RAID stride $((chunk / 4096)), stripe width $((chunk * data / 4096))" \
		bash -c "dumpe2fs -h '$T_TMP/fs.img' 2>/dev/null | grep -q '^RAID stride: *$((chunk / 4096))\$' &&
			dumpe2fs -h '$T_TMP/fs.img' 2>/dev/null | grep -q '^RAID stripe width: *$((chunk * data / 4096))\$'"
	rm -f "$T_TMP/fs.img"
done <<'EOF'
g0 0 3 64 - 3
g5 5 5 128 - 4
g4 4 4 64 - 3
g6 6 6 64 - 4
g10n 10 4 64 n2 2
g10f 10 4 64 f2 4
g10n3 10 3 64 n2 3
g10o 10 4 64 o2 4
g10n34 10 4 64 n3 4
g10n5 10 5 64 n2 5
g1 1 2 64 - 0
EOF

# by name: the same output from a running array
"$URAID" assemble $(members g6) 2>/dev/null
check "geometry NAME = geometry MEMBER..." \
	[ "$("$URAID" geometry g6)" = "$("$URAID" geometry $(members g6))" ]
"$URAID" stop g6
check_fails "geometry of a non-array" "$URAID" geometry /dev/null
check_fails "geometry of an unknown name" "$URAID" geometry no-such-array
t_done
