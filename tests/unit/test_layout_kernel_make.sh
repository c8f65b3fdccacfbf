#!/bin/bash
# Regenerates the kernel-made arrays behind test_layout_kernel.tab (dev tool,
# not run by tests/run; needs shared/mdvm set up, ~20 s per array under TCG).
#   tests/unit/test_layout_kernel_make.sh OUTDIR
#   tests/unit/test_layout_kernel.py OUTDIR > tests/unit/test_layout_kernel.tab
#   build/asan/tests/test_layout_md --dir OUTDIR     # full byte + P/Q check
# ONLY="name1 name2" limits the run to those arrays.
# MDVM_ACCEL defaults to tcg: on hosts where nested KVM rejects MSR 0x10a,
# mdvm's default (kvm) kills qemu at start.
set -u
OUT=${1:?usage: $0 OUTDIR}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
MDVM=$TOP/tests/mdvm/run
mkdir -p "$OUT"

JOB='MEMBERS=""
for n in $MDVM_DISKS; do case $n in m*) MEMBERS="$MEMBERS /dev/disk-$n";; esac; done
N=$(echo $MEMBERS | wc -w)
BM=--bitmap=none; case "@ARGS@" in *level=0*|*linear*) BM=;; esac
run mdadm --create /dev/md0 --run --homehost=lay $BM --raid-devices=$N @ARGS@ $MEMBERS || exit 1
md_wait md0
SECT=$(blockdev --getsz /dev/md0)
echo "ARRAY_SECTORS=$SECT"
B=$(bs_for $SECT)
run dd if=/dev/disk-pat of=/dev/md0 bs=$((B * 512)) count=$((SECT / B)) conv=fsync
echo 3 > /proc/sys/vm/drop_caches
echo "ARRAY_MD5=$(md5_range /dev/md0)"
run mdadm --stop /dev/md0'

# name|ARRAY_ID|member MiB|mdadm arguments
LIST='r5-la-5|101|8 8 8 8 8|--level=5 --layout=left-asymmetric --chunk=64 --metadata=1.2
r5-ra-5|102|8 8 8 8 8|--level=5 --layout=right-asymmetric --chunk=32 --metadata=1.2
r5-rs-4|103|8 8 8 8|--level=5 --layout=right-symmetric --chunk=128 --metadata=1.2
r5-pf-5|104|8 8 8 8 8|--level=5 --layout=parity-first --chunk=64 --metadata=1.2
r5-pl-3|105|8 8 8|--level=5 --layout=parity-last --chunk=16 --metadata=1.2
r5-ls-2|106|8 8|--level=5 --layout=left-symmetric --chunk=64 --metadata=1.2
r5-ls-e1.0|107|9 9 9 9|--level=5 --layout=left-symmetric --chunk=64 --metadata=1.0
r6-la-6|111|8 8 8 8 8 8|--level=6 --layout=left-asymmetric --chunk=64 --metadata=1.2
r6-ra-5|112|8 8 8 8 8|--level=6 --layout=right-asymmetric --chunk=32 --metadata=1.2
r6-rs-6|113|8 8 8 8 8 8|--level=6 --layout=right-symmetric --chunk=64 --metadata=1.2
r6-pf-5|114|8 8 8 8 8|--level=6 --layout=parity-first --chunk=64 --metadata=1.2
r6-pl-6|115|8 8 8 8 8 8|--level=6 --layout=parity-last --chunk=64 --metadata=1.2
r6-la6-5|116|8 8 8 8 8|--level=6 --layout=left-asymmetric-6 --chunk=64 --metadata=1.2
r6-ra6-6|117|8 8 8 8 8 8|--level=6 --layout=right-asymmetric-6 --chunk=64 --metadata=1.2
r6-ls6-5|118|8 8 8 8 8|--level=6 --layout=left-symmetric-6 --chunk=64 --metadata=1.2
r6-rs6-6|119|8 8 8 8 8 8|--level=6 --layout=right-symmetric-6 --chunk=32 --metadata=1.2
r6-pf6-5|120|8 8 8 8 8|--level=6 --layout=parity-first-6 --chunk=64 --metadata=1.2
r6-la-7|121|8 8 8 8 8 8 8|--level=6 --layout=left-asymmetric --chunk=32 --metadata=1.2
r6-ls-e0.90|122|8 8 8 8|--level=6 --layout=left-symmetric --chunk=64 --metadata=0.90
r10-n3-4|131|8 8 8 8|--level=10 --layout=n3 --chunk=64 --metadata=1.2
r10-f2-3|132|8 8 8|--level=10 --layout=f2 --chunk=64 --metadata=1.2
r10-f2-5|133|8 8 8 8 8|--level=10 --layout=f2 --chunk=32 --metadata=1.2
r10-o2-3|134|8 8 8|--level=10 --layout=o2 --chunk=64 --metadata=1.2
r10-o3-4|135|8 8 8 8|--level=10 --layout=o3 --chunk=64 --metadata=1.2
r10-o3-5|136|9 9 9 9 9|--level=10 --layout=o3 --chunk=128 --metadata=1.2
r10-f3-4|137|8 8 8 8|--level=10 --layout=f3 --chunk=64 --metadata=1.2
r10-n2-5|138|8 8 8 8 8|--level=10 --layout=n2 --chunk=256 --metadata=1.2
r10-n2-3|139|10 10 10|--level=10 --layout=n2 --chunk=64 --metadata=1.2
r10-f2-4-e1.0|140|8 8 8 8|--level=10 --layout=f2 --chunk=64 --metadata=1.0
r10-f4-5|141|8 8 8 8 8|--level=10 --layout=f4 --chunk=64 --metadata=1.2
r10-o2-4-e1.1|142|8 8 8 8|--level=10 --layout=o2 --chunk=64 --metadata=1.1
r0-mz-orig|151|8 12 16|--level=0 --chunk=64 --metadata=1.2
r0-mz-alt|152|8 12 16|--level=0 --layout=alternate --chunk=64 --metadata=1.2
r0-mz-orig-4|153|12 8 16 12|--level=0 --chunk=32 --metadata=1.2
r0-mz-alt-5|154|10 8 9 16 8|--level=0 --layout=alternate --chunk=128 --metadata=1.2
r0-c24|155|8 8 8|--level=0 --chunk=24 --metadata=1.2
lin-uneq|161|8 12 10|--level=linear --metadata=1.2
lin-e0.90|162|8 12 10|--level=linear --metadata=0.90
lin-e1.0|163|8 9 10|--level=linear --metadata=1.0
raid4-5|171|8 8 8 8 8|--level=4 --chunk=64 --metadata=1.2
raid4-e0.90|172|8 8 8|--level=4 --chunk=32 --metadata=0.90'

echo "$LIST" | while IFS='|' read -r name id sizes args; do
	case " ${ONLY:-$name} " in *" $name "*) ;; *) continue ;; esac
	D=$OUT/$name
	rm -rf "$D"
	mkdir -p "$D"
	disks=() total=0 i=0
	for s in $sizes; do
		disks+=(--disk "m$i=$D/m$i.img")
		total=$((total + s))
		i=$((i + 1))
	done
	python3 - "$id" $((total * 2048)) "$D/pat.bin" <<'PY'
import struct, sys
aid, n, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
K = 0x9E3779B97F4A7C15; M = (1 << 64) - 1
with open(out, 'wb') as f:
    f.write(b''.join(struct.pack('<Q', (s * K + aid) & M) * 64 for s in range(n)))
PY
	echo "${JOB//@ARGS@/$args}" >"$D/job.sh"
	for try in 1 2 3; do # TCG boots occasionally panic on the timer check
		i=0
		for s in $sizes; do
			rm -f "$D/m$i.img"
			truncate -s "${s}M" "$D/m$i.img"
			i=$((i + 1))
		done
		"$MDVM" --accel "${MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" --disk "pat=$D/pat.bin" \
			--script "$D/job.sh" --log "$D/log" >/dev/null 2>&1
		rc=$?
		[ $rc -ne 125 ] && break
	done
	sect=$(grep -a '^ARRAY_SECTORS=' "$D/log" | head -1 | cut -d= -f2 | tr -d '\r')
	md5=$(grep -a '^ARRAY_MD5=' "$D/log" | head -1 | cut -d= -f2 | tr -d '\r')
	want=$(head -c $((${sect:-0} * 512)) "$D/pat.bin" | md5sum | cut -d' ' -f1)
	rm -f "$D/pat.bin"
	if [ $rc -eq 0 ] && [ -n "$sect" ] && [ "$md5" = "$want" ]; then
		echo "$id" >"$D/id"
		echo "$sect" >"$D/sectors"
		echo "made $name: $sect sectors"
	else
		echo "FAILED $name (rc $rc; see $D/log)"
	fi
done
