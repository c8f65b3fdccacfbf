#!/usr/bin/env bash
# uraid status and detail against the kernel and mdadm (shared/mdvm): the
# same member images (made by mdadm: raid5 1.2, raid1 1.2 with a bitmap,
# raid10 n2, raid1 0.90) are assembled in the guest and by uraid, taken
# through the same states (clean; a member failed and removed; a spare
# added, recovering slowly; checking slowly; the raid5's chunk changed
# 64K -> 32K and the raid10 grown 4 -> 5, slowly: md's chunk and reshape
# total), and /proc/mdstat vs `uraid
# status`, mdadm --detail vs `uraid detail`, --detail --export vs `uraid
# detail --export` compared line by line. Normalised, because they must
# differ: member names (vdX / files; mapped to the disk names), the detail's
# first line (/dev/md0 / the array name), Major/Minor (block devices / image
# files: 0 0), "(local to host mdvm)" (another host here), Update Time, the
# progress numbers and bitmap pages in use (timing: bar, done, per mille,
# finish, speed; the total is compared), and the order of mdadm's export
# device lines (sysfs directory order). Also: the raid1's b0 failed,
# removed, the array written, b0 re-added (mdstat, detail, export and b0's
# examine, once both marked the array clean); a linear array built of d0 d1
# (super non-persistent); the raid5's held recovery 4 s on: md's speed and
# finish over its marks vs uraid's over its own (within a factor 3, never 0
# where md's is not, each finish its rest at its speed).
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
export URAID_RUN_DIR=$T_TMP/run
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP/img
mkdir -p "$d"
disks=()
for n in a0 a1 a2 a3 a4 b0 b1 b2 c0 c1 c2 c3 c4 d0 d1 d2; do
	truncate -s 8M "$d/$n"
	disks+=(--disk "$n=$d/$n")
done
run_vm() {
	{ echo "MODE=$1"; cat "$TOP/tests/integration/mdstat_mdvm.job"; } >"$T_TMP/$1.sh"
	"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 400 ${2:+"$2"} "${disks[@]}" \
		--script "$T_TMP/$1.sh" >"$T_TMP/$1.log" 2>&1
}
run_vm make
check "VM: mdadm made the four arrays (rc $?)" grep -q '^MDVM-RC=0' "$T_TMP/make.log"
run_vm judge --snapshot
rc=$?
check "VM: the kernel went through the states of each (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { grep -E 'mdadm:|!!!' "$T_TMP/judge.log" | head -30; t_done; }

# the guest's captures, one file per array/state/what, vdX named as the disk
sedmap=$(awk '/^MAP /{printf "s#(/dev/)?\\b%s\\b#%s#g;s#_dev_%s_#_%s_#g;", $2, $3, $2, $3}' "$T_TMP/judge.log")
# (kernel messages on the console, e.g. a clocksource warning on a loaded
# host, are not the guest's captures)
awk -v dir="$T_TMP" '/^=== end/{f=""; next} /^=== /{f=dir"/k."$2"."$3"."$4; printf "" >f; next}
	/^\[ *[0-9]+\.[0-9]+\] /{next} f{print >>f}' "$T_TMP/judge.log"
for f in "$T_TMP"/k.*; do sed -E -i "$sedmap" "$f"; done

ctl() { # a control request uraid's CLI has no verb for (speed limits, idle)
	python3 - "$URAID_RUN_DIR/md0.sock" "$*" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall((sys.argv[2] + "\n").encode())
r = s.recv(256).decode(); sys.exit(0 if r.startswith("OK") else print(r) or 1)
PY
}
ushow() { # uraid's view, in the same files as the guest's
	"$URAID" status >"$T_TMP/u.$1.$2.mdstat"
	"$URAID" detail md0 >"$T_TMP/u.$1.$2.detail"
	"$URAID" detail --export md0 >"$T_TMP/u.$1.$2.export"
	cp "$URAID_RUN_DIR/mdstat" "$T_TMP/u.$1.$2.file"
	sed -i "s#$d/##g" "$T_TMP/u.$1.$2."*
}
# settle: until the run directory's mdstat is what status prints (it
# follows within 200 ms; polls of 0.05 s, 10 s at most)
settle() {
	for _ in $(seq 200); do
		"$URAID" status | cmp -s - "$URAID_RUN_DIR/mdstat" && return 0
		sleep 0.05
	done
}
# until_status WORDS: until status shows WORDS (the recovery, check or
# reshape held slow has started and shows its progress line; polls of 0.1 s)
until_status() {
	for _ in $(seq 600); do
		"$URAID" status md0 | grep -q "$1" && return 0
		sleep 0.1
	done
	fail "$a: no '$1' in uraid status after 60 s"
}
wait_idle() {
	for _ in $(seq 300); do
		"$URAID" status --json md0 | grep -q '"action":"idle"' && return 0
		sleep 0.2
	done
	return 1
}
for a in a b c d; do
	case $a in a) m="a0 a1 a2 a3" s=a4 ;; b) m="b0 b1" s=b2 ;; c) m="c0 c1 c2 c3" s=c4 ;; d) m="d0 d1" s=d2 ;; esac
	mem=()
	for n in $m; do mem+=("$d/$n"); done
	"$URAID" assemble --name md0 "${mem[@]}" 2>"$T_TMP/u.$a.err" ||
		{ fail "$a: uraid assemble: $(cat "$T_TMP/u.$a.err")"; continue; }
	settle
	ushow $a clean
	"$URAID" fail md0 "$d/${a}1" && "$URAID" remove md0 "$d/${a}1"
	settle
	ushow $a degraded
	ctl speed 100 200
	"$URAID" add md0 "$d/$s"
	until_status 'recovery ='
	ushow $a rebuilding
	if [ $a = a ]; then # as the guest: 4 s on, held at the same limit
		sleep 4
		"$URAID" status >"$T_TMP/u.a.speed.mdstat"
	fi
	ctl speed 0 0
	wait_idle
	ctl speed 100 200
	"$URAID" check md0 >/dev/null 2>&1 &
	cpid=$!
	until_status 'check ='
	ushow $a checking
	ctl idle
	wait "$cpid"
	ctl speed 0 0
	if [ $a = b ]; then # as the guest: b0 out and back, written meanwhile
		"$URAID" fail md0 "$d/${a}0" && "$URAID" remove md0 "$d/${a}0"
		head -c 262144 /dev/urandom | "$URAID" write md0 --offset 0
		"$URAID" re-add md0 "$d/${a}0" 2>"$T_TMP/u.$a.readd.err" ||
			fail "$a: uraid re-add: $(cat "$T_TMP/u.$a.readd.err")"
		wait_idle
		# md marks an idle array clean after 200 ms (safe_mode_delay),
		# uraid after 2 s: polls of 0.1 s, 5 s at most
		for _ in $(seq 50); do
			"$URAID" detail md0 | grep -q 'State : clean *$' && break
			sleep 0.1
		done
		settle
		ushow $a readded
		"$URAID" examine "$d/${a}0" | sed "s#$d/##g" >"$T_TMP/u.$a.readded.examine"
	fi
	if [ $a = a ]; then
		ctl speed 100 200
		"$URAID" grow md0 --chunk=32 >/dev/null 2>"$T_TMP/u.a.grow.err" ||
			fail "a: uraid grow --chunk=32: $(cat "$T_TMP/u.a.grow.err")"
		until_status 'reshape ='
		ushow a reshaping
		ctl speed 0 0
		wait_idle
	fi
	if [ $a = c ]; then
		mdadm --zero-superblock "$d/c1" 2>/dev/null
		"$URAID" add md0 "$d/c1" >/dev/null 2>&1
		ctl speed 100 200
		"$URAID" grow md0 --raid-devices=5 >/dev/null 2>&1
		until_status 'reshape ='
		ushow c reshaping
		ctl speed 0 0
		wait_idle
	fi
	"$URAID" stop md0
done

# built (no superblocks, the default rounding) of d0 d1, read-only as uraid builds
"$URAID" build --name md0 --level=linear --raid-devices=2 "$d/d0" "$d/d1" 2>"$T_TMP/u.e.err" ||
	fail "e: uraid build: $(cat "$T_TMP/u.e.err")"
"$URAID" status >"$T_TMP/u.e.built.mdstat" && sed -i "s#$d/##g" "$T_TMP/u.e.built.mdstat"
"$URAID" stop md0

norm() { # what must differ, as the header says
	sed -E -e 's#^(/dev/)?md0:$#md0:#' \
		-e 's#^(   [ 0-9-]{5})   [ 0-9]{5}    [ 0-9]{5}#\1       X        X#' \
		-e 's#  \(local to host [^)]*\)##; s# \(local to host [^)]*\)##' \
		-e 's#^(       Update Time : ).*#\1T#' \
		-e 's#\[[=>.]{21}\]  ([a-z]+) = *[0-9]+\.[0-9]% \([0-9]+/([0-9]+)\) finish=[0-9.]+min speed=[0-9]+K/sec#[BAR]  \1 = P% (D/\2) finish=F speed=S#' \
		-e 's#^( +[A-Za-z]+ Status : )[0-9]+%#\1P%#' \
		-e 's#bitmap: [0-9]+/([0-9]+) pages \[[0-9]+KB\]#bitmap: U/\1 pages [UKB]#' \
		-e "$2" "$1" |
		if [ "${1##*.}" = export ]; then sort; else cat; fi
}
for a in a b c d; do
	sts="clean degraded rebuilding checking"
	[ $a = a ] || [ $a = c ] && sts="$sts reshaping"
	[ $a = b ] && sts="$sts readded"
	for st in $sts; do
		for w in mdstat detail export; do
			k=$T_TMP/k.$a.$st.$w u=$T_TMP/u.$a.$st.$w
			[ -s "$k" ] || { fail "$a $st $w: the guest printed nothing"; continue; }
			# md counts more events than uraid once members change (each
			# recovery checkpoint, clean/active switch): compared when clean
			ev='s#^( +Events : )[0-9.]+$#\1E#'
			[ "$st" = clean ] && ev=
			if diff <(norm "$k" "$ev") <(norm "$u" "$ev") >"$T_TMP/diff"; then
				ok "$a $st: uraid's $w is the kernel's / mdadm's"
			else
				fail "$a $st: uraid's $w differs from the kernel's / mdadm's"
				sed 's/^/#   /' "$T_TMP/diff"
			fi
		done
		check "$a $st: \$URAID_RUN_DIR/mdstat holds what status printed" \
			cmp -s "$T_TMP/u.$a.$st.mdstat" "$T_TMP/u.$a.$st.file"
	done
	check "$a rebuilding: md's 21-wide progress bar" \
		grep -Eq '^      \[=*>\.*\]  recovery =' "$T_TMP/u.$a.rebuilding.mdstat"
done
if [ -s "$T_TMP/k.e.built.mdstat" ] && [ -s "$T_TMP/u.e.built.mdstat" ] &&
	diff <(norm "$T_TMP/k.e.built.mdstat" "") <(norm "$T_TMP/u.e.built.mdstat" "") >"$T_TMP/diff"; then
	ok "e built: uraid's mdstat is the kernel's (super non-persistent)"
else
	fail "e built: uraid's mdstat differs from the kernel's"
	sed 's/^/#   /' "$T_TMP/diff"
fi
# the re-added member's own superblock, as md left it (its checksum, update
# time and events follow the writes)
exnorm() {
	sed -E -e 's#^(/dev/)?(disk-)?([bd]0):$#\3:#' -e 's#^( +Update Time : ).*#\1T#' \
		-e 's#^( +Checksum : )[0-9a-f]+ - correct$#\1C - correct#' \
		-e 's#  \(local to host [^)]*\)##; s# \(local to host [^)]*\)##' \
		-e 's#^( +Events : )[0-9]+$#\1E#' "$1"
}
for a in b; do
	if [ -s "$T_TMP/k.$a.readded.examine" ] && [ -s "$T_TMP/u.$a.readded.examine" ] &&
		diff <(exnorm "$T_TMP/k.$a.readded.examine") <(exnorm "$T_TMP/u.$a.readded.examine") >"$T_TMP/diff"; then
		ok "$a readded: the member's examine is mdadm's of the kernel's re-added one"
	else
		fail "$a readded: the member's examine differs from mdadm's of the kernel's"
		sed 's/^/#   /' "$T_TMP/diff"
	fi
done
# The raid5's recovery held at 200K/sec, 5 s on: md's speed and finish over
# its marks (db/dt), uraid's over its own. They run at different speeds, so
# within a factor of 3 of each other, never 0 where md's is not, and each
# finish is its own rest at its own speed (tenths of a minute, md's rounding).
rate() { # done total finish-tenths speed
	sed -nE 's#.*\(([0-9]+)/([0-9]+)\) finish=([0-9]+)\.([0-9])min speed=([0-9]+)K/sec.*#\1 \2 \3\4 \5#p' "$1"
}
read -r kd kt kf ks <<<"$(rate "$T_TMP/k.a.speed.mdstat")"
read -r ud ut uf us <<<"$(rate "$T_TMP/u.a.speed.mdstat")"
echo "# md: ${kd}/${kt} finish ${kf} tenths ${ks}K/sec; uraid: ${ud}/${ut} finish ${uf} tenths ${us}K/sec"
check "a held recovery: md's progress line 5 s on (${ks:-none}K/sec)" [ "${ks:-0}" -gt 0 ]
check "a held recovery: uraid's speed (${us:-none}K/sec) is not 0 where md's is ${ks:-?}K/sec" \
	[ "${us:-0}" -gt 0 ]
check "a held recovery: uraid's speed within a factor 3 of md's" \
	[ $((${us:-0} * 3)) -ge "${ks:-1}" -a "${us:-0}" -le $((${ks:-0} * 3)) ]
finish_ok() { # done total tenths speed: tenths = the rest at the speed, to a tenth and 10%
	local want=$((($2 - $1) / ($4 > 0 ? $4 : 1) / 6)) diff
	diff=$(($3 - want))
	[ "${diff#-}" -le $((1 + want / 10)) ]
}
check "a held recovery: md's finish is its rest at its speed (this test's arithmetic)" \
	finish_ok "${kd:-0}" "${kt:-0}" "${kf:-0}" "${ks:-0}"
check "a held recovery: uraid's finish is its rest at its speed" \
	finish_ok "${ud:-0}" "${ut:-0}" "${uf:-0}" "${us:-0}"
# what was compared, for a look after a failure
rm -rf "$TOP/build/test-logs/mdstat_mdvm.files"
mkdir -p "$TOP/build/test-logs/mdstat_mdvm.files" && cp "$T_TMP"/[ku].* "$T_TMP/judge.log" "$TOP/build/test-logs/mdstat_mdvm.files/"
t_done
