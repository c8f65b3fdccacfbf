# shellcheck shell=sh
# Guest side of make-refs.sh (busybox sh inside shared/mdvm; the mdvm helpers
# run, md_wait, md_check, md5_range, bs_for are already defined).
#
#   mkref NAME ARRAY_ID PAT_MIB LEVEL LAYOUT CHUNK META EXTRA MEMBER...
#
# Creates one array with the real mdadm on MEMBER... (fresh, zeroed disks),
# waits for the initial resync, writes the md-vectors data pattern from the
# pattern disk (/dev/disk-pat, this array's region starts at PAT_MIB MiB),
# checks the md5 after dropping caches, runs a parity/mirror check, stops the
# array cleanly, records mdadm --examine of every member, then re-assembles it
# read-only to prove the stopped images hold the data and that this read-only
# pass did not change them.  LAYOUT/CHUNK/EXTRA are "-" when not given; EXTRA
# is extra mdadm --create options with "," for spaces.
# The full log goes to /root/logs/NAME.log; one summary line goes to the
# console:  REF NAME rc=.. bytes=.. md5w=.. md5r=.. mismatch=.. level=..
#           layout_num=.. chunk=.. offsets=..,.. layout_name=.. same=0|1

mkref_body() {
	name=$1 aid=$2 patmib=$3 level=$4 layout=$5 chunk=$6 meta=$7 extra=$8
	shift 8
	members="$*"
	n=$#
	echo "=== ARRAY $name ARRAY_ID=$aid"
	for m in $members; do echo "MEMBER_SECTORS $m $(blockdev --getsz "$m")"; done
	opts="--level=$level --raid-devices=$n --metadata=$meta"
	[ "$meta" = 0.90 ] || opts="$opts --name=$name"
	[ "$layout" = - ] || opts="$opts --layout=$layout"
	[ "$chunk" = - ] || opts="$opts --chunk=$chunk"
	[ "$extra" = - ] || opts="$opts $(echo "$extra" | tr , ' ')"
	case "$level:$extra" in
	linear:* | raid0:* | *--bitmap*) ;;
	*) opts="$opts --bitmap=none" ;;
	esac
	# shellcheck disable=SC2086
	run mdadm --create /dev/md0 --run --homehost=uraid $opts $members || return 1
	cat /proc/mdstat
	mdadm --wait /dev/md0
	md_wait md0
	cat /proc/mdstat
	bytes=$(blockdev --getsize64 /dev/md0)
	sect=$((bytes / 512))
	echo "ARRAY_BYTES=$bytes"
	# the region offset is a whole MiB, so any bs_for block size divides it
	b=$(bs_for "$sect")
	run dd if=/dev/disk-pat of=/dev/md0 bs=$((b * 512)) skip=$((patmib * 2048 / b)) \
		count=$((sect / b)) conv=fsync || return 1
	echo 3 >/proc/sys/vm/drop_caches
	md5w=$(md5_range /dev/md0)
	echo "MD5_AFTER_WRITE=$md5w"
	sys=/sys/block/md0/md
	mismatch=-
	if [ -e $sys/sync_action ]; then
		md_check md0
		mismatch=$(cat $sys/mismatch_cnt)
	fi
	lnum=$(cat $sys/layout 2>/dev/null || echo -)
	csz=$(cat $sys/chunk_size 2>/dev/null || echo 0)
	offs=
	i=0
	while [ $i -lt $n ]; do
		offs="$offs${offs:+,}$(cat $sys/rd$i/offset 2>/dev/null || echo ?)"
		i=$((i + 1))
	done
	echo "SYSFS level=$(cat $sys/level) layout=$lnum chunk_size=$csz offsets=$offs"
	run mdadm --detail /dev/md0
	lname=$(mdadm --detail /dev/md0 | sed -n 's/^ *Layout : *//p' | tr -d ' ')
	run mdadm --stop /dev/md0 || return 1
	echo "=== FINAL (after stop) examine"
	for m in $members; do
		run mdadm --examine "$m"
		case "$extra" in *bitmap=internal*) run mdadm --examine-bitmap "$m" ;; esac
	done
	sums1=
	for m in $members; do sums1="$sums1 $(md5_range "$m")"; done
	# shellcheck disable=SC2086
	run mdadm --assemble --readonly /dev/md0 $members || return 1
	md5r=$(md5_range /dev/md0)
	echo "MD5_REASSEMBLED_RO=$md5r"
	run mdadm --stop /dev/md0 || return 1
	sums2=
	for m in $members; do sums2="$sums2 $(md5_range "$m")"; done
	same=0
	[ "$sums1" = "$sums2" ] && same=1
	echo "MEMBER_MD5S$sums1 (unchanged by the read-only assembly: $same)"
	echo "REF $name rc=0 bytes=$bytes md5w=$md5w md5r=$md5r mismatch=$mismatch" \
		"level=$level layout_num=$lnum chunk=$csz offsets=$offs layout_name=${lname:--}" \
		"same=$same" >"/root/logs/$name.ref"
}

mkref() {
	mkdir -p /root/logs
	mkref_body "$@" >"/root/logs/$1.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || [ ! -s "/root/logs/$1.ref" ]; then
		echo "REF $1 rc=${rc:-1}"
		tail -n 30 "/root/logs/$1.log"
		# leave the VM usable for the next array
		mdadm --stop /dev/md0 >/dev/null 2>&1
		return 1
	fi
	cat "/root/logs/$1.ref"
	rm -f "/root/logs/$1.ref"
}
