#!/usr/bin/env bash
# gmirror(8)/graid3(8) verbs on running arrays (through the daemon's control
# socket) and on member files: configure (balance, slice, priority,
# autosync/failsync), deactivate/activate, rebuild, forget, resize, destroy,
# dump; each checked by its effect (status, the metadata on disk, the data
# on each component), and refusals that leave everything as it was.
. "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
U=$URAID
cd "$T_TMP"
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do
		[ -e "$s" ] && "$U" stop "$(basename "$s" .sock)" >/dev/null 2>&1
	done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
jget() { "$U" status --json "$1" | python3 -c "import json,sys; a=json.load(sys.stdin)[0]; print($2)"; }
wait_idle() {
	for _ in $(seq 300); do
		[ "$(jget "$1" "a['sync']['action']")" = idle ] && return 0
		sleep 0.1
	done
	return 1
}
dump() { "$U" mirror dump "$1" | sed -n "s/^ *$2: //p"; }
md5of() { head -c "$2" "$1" | md5sum | cut -d' ' -f1; }
export U URAID_RUN_DIR
export -f dump jget md5of

# ---- gmirror, running ----
truncate -s 4M a b
truncate -s 8M c
check "label" "$U" mirror label gv a b
check "assemble" "$U" assemble a b
check "configure -b prefer -s 8192 -F (running)" "$U" mirror configure -b prefer -s 8192 -F gv
check "metadata on both disks says prefer / NOFAILSYNC" \
	bash -c "[ \"\$(dump a balance)/\$(dump b mflags)\" = prefer/NOFAILSYNC ]"
check "configure -p 9 b (running)" "$U" mirror configure -p 9 gv b
check "priority 9 in b's metadata" [ "$(dump b priority)" = 9 ]
check_fails "configure -a -n refused" "$U" mirror configure -a -n gv
check_fails "configure -b unknown refused" "$U" mirror configure -b fastest gv
check_fails "configure with nothing to change refused" "$U" mirror configure gv
head -c 1M /dev/urandom >d1
check "write 1 MiB" "$U" write gv <d1
check "deactivate b" "$U" mirror deactivate gv b
check "b inactive in status" [ "$(jget gv "a['members'][1]['state']")" = inactive ]
check "b's metadata has INACTIVE" bash -c "dump b dflags | grep -q INACTIVE"
check_fails "deactivate a (the last active one) refused" "$U" mirror deactivate gv a
head -c 1M /dev/urandom >d2
check "write while b is inactive" "$U" write gv <d2
check "b kept the old data" [ "$(md5of b 1048576)" = "$(md5sum <d1 | cut -d' ' -f1)" ]
check "activate b" "$U" mirror activate gv b
check "b synchronized" wait_idle gv
check "b holds the new data" [ "$(md5of b 1048576)" = "$(md5sum <d2 | cut -d' ' -f1)" ]
check "rebuild a" "$U" mirror rebuild gv a
check "rebuilt" wait_idle gv
check "mirror status (running): COMPLETE" bash -c "'$U' mirror status gv | grep -q 'mirror/gv *COMPLETE'"
check "mirror list (running): priority 9 shown" bash -c "'$U' mirror list gv | grep -q 'Priority: 9'"
check "insert c (bigger)" "$U" mirror insert gv c
check "c synchronized" wait_idle gv
check "remove a" "$U" mirror remove gv a
check "remove b" "$U" mirror remove gv b
check "resize to c's size" "$U" mirror resize gv
check "size is c less its metadata sector" \
	[ "$(jget gv "a['array_bytes']")" = $((8 * 1024 * 1024 - 512)) ]
check_fails "resize beyond c refused" "$U" mirror resize -s 16M gv
check_fails "clear of a running array's member refused" "$U" mirror clear c
check "c's metadata still there" [ "$(tail -c 512 c | head -c 12)" = GEOM::MIRROR ]
check_fails "mirror write to a running array's member refused" "$U" mirror write c <d1
check "mirror cat of a running array's member (read-only) = what was written" \
	[ "$("$U" mirror cat c | head -c 1048576 | md5sum)" = "$(md5sum <d2)" ]
check "mirror stop (running)" "$U" mirror stop gv
check "c's metadata: 1 disk, new size" \
	bash -c "[ \"\$(dump c all)/\$(dump c mediasize)\" = 1/$((8 * 1024 * 1024 - 512)) ]"
check "c still holds the data" [ "$(md5of c 1048576)" = "$(md5sum <d2 | cut -d' ' -f1)" ]

# ---- forget: a disk that is gone ----
truncate -s 4M f0 f1
check "label f" "$U" mirror label gf f0 f1
check "assemble without f1" "$U" assemble f0
check "2 disks counted, 1 there" [ "$(jget gf "a['raid_disks'], a['working']")" = "2 1" ]
check "forget" "$U" mirror forget gf
check "1 disk counted" [ "$(jget gf "a['raid_disks'], a['degraded']")" = "1 0" ]
check "destroy (running)" "$U" mirror destroy gf
check "daemon gone" bash -c "! '$U' status gf 2>/dev/null"
check "f0's metadata cleared" bash -c "[ \"\$(tail -c 512 f0 | tr -d '\\0' | wc -c)\" = 0 ]"
check "f1 untouched (not connected)" [ "$(tail -c 512 f1 | head -c 12)" = GEOM::MIRROR ]

# ---- offline (member files) ----
truncate -s 4M o0 o1
check "label o" "$U" mirror label go o0 o1
truncate -s 4M blank
check "assemble with a blank member first: refused, the blank one named" \
	bash -c "! '$U' assemble blank o0 o1 2>err && grep -q 'blank: no gmirror metadata' err"
check "deactivate o1 on the files" "$U" mirror deactivate go o1 o0
check "o1 INACTIVE on disk" bash -c "dump o1 dflags | grep -q INACTIVE"
check "activate o1 on the files (synchronized before exit)" "$U" mirror activate go o1 o0
check "o1 active again" bash -c "! dump o1 dflags | grep -q INACTIVE"
check "configure -n on the files" "$U" mirror configure -n go o0 o1
check "NOAUTOSYNC on disk" bash -c "dump o0 mflags | grep -q NOAUTOSYNC"
check_fails "name mismatch refused" "$U" mirror forget other o0 o1
check_fails "dump of a blank file refused" "$U" mirror dump d1
check "destroy on the files" "$U" mirror destroy go o0 o1
check "both cleared" bash -c "! '$U' mirror dump o0 2>/dev/null && ! '$U' mirror dump o1 2>/dev/null"

# ---- graid3, running ----
truncate -s 4M r0 r1 r2 r3
check "raid3 label" "$U" raid3 label gr r0 r1 r2
check "raid3 assemble" "$U" assemble r0 r1 r2
check "raid3 configure -w (running)" "$U" raid3 configure -w gr
check "VERIFY in status and on disk" bash -c "[ \"\$(jget gr \"a['geom']['flags']\")\" = VERIFY ] && '$U' raid3 dump r2 | grep -q 'mflags: VERIFY'"
check_fails "raid3 configure -r with -w set refused" "$U" raid3 configure -r gr
check "raid3 configure -W -r" "$U" raid3 configure -W -r gr
head -c 2M /dev/urandom >rd
check "raid3 write" "$U" write gr <rd
check "raid3 remove -n 1 (running)" "$U" raid3 remove -n 1 gr
check "r1 metadata cleared" bash -c "! '$U' raid3 dump r1 2>/dev/null"
check "raid3 insert -n 1 r3 (running)" "$U" raid3 insert -n 1 gr r3
check "r3 rebuilt" wait_idle gr
check "raid3 rebuild r0 (running)" "$U" raid3 rebuild gr r0
check "r0 rebuilt" wait_idle gr
check_fails "graid3 has no deactivate" "$U" raid3 deactivate gr r0
check "raid3 stop" "$U" raid3 stop gr
check "data on r0 r3 r2" [ "$("$U" raid3 cat r0 r3 r2 | head -c 2097152 | md5sum)" = "$(md5sum <rd)" ]
check "data without parity" [ "$("$U" raid3 cat r0 r3 | head -c 2097152 | md5sum)" = "$(md5sum <rd)" ]
t_done
