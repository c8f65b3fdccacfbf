#!/usr/bin/env bash
# md reshapes the real kernel (shared/mdvm) makes, finished by uraid, one
# boot; the checks run in the guest (tests/integration/reshape_mdvm.job)
# with uraid put there. Each reshape is made by mdadm --grow, throttled
# (sync_speed_max) and stopped mid-way, mdadm's background grow process
# ended and waited for before uraid takes the members: uraid's examine
# prints mdadm's reshape lines, cat reads the pattern written before, a
# read-write assembly finishes the reshape, then the kernel assembles the
# members with the pattern (zeros after it), check's mismatch_cnt 0 and
# no reshape bits left. Kinds: raid5 4->5 with an internal bitmap (mdadm
# -X: the bitmap as before), raid6 5->6, raid5 4->5 on 0.90 (in place,
# minor 91); raid5 5->4 (backwards, after --array-size); level changes:
# raid5 4 -> raid6 5 (backwards), raid6 5 -> raid5 (the move to
# left-symmetric-6), raid4 -> raid5 left-symmetric, raid0 3 -> raid5 5
# (takeover, then a grow with the parity slot empty); raid10 near-2 4->5,
# 5->4 (after --array-size) and a chunk change (raid6 -> raid5 and
# raid4 -> raid5 run to a mid-way sync_max, where md records the position);
# raid0 3 -> raid5 4 by takeover with md's recovery onto the added member
# frozen mid-way (its recovery offset), resumed there by uraid; and a
# 0.90 in-place grow with mdadm's --backup-file stopped in its critical
# section, restored and finished by uraid assemble --backup-file. The
# other direction (uraid's reshapes finished by the kernel) is
# reshape_rt_mdvm.sh; the helpers are reshape_common.bash and
# reshape_lib.job.
source "$(dirname "$0")/reshape_common.bash"
rs_setup
rs_add k 5
rs_add r 6
rs_add u 5
rs_add o 5 2
rs_boot reshape_mdvm
for n in k r z; do
	case $n in
	k) lv="raid5 4->5 with an internal bitmap" ;;
	r) lv="raid6 5->6" ;;
	z) lv="raid5 4->5, 0.90 metadata (in place, minor 91)" ;;
	esac
	want $n examine "$lv grown by the kernel, stopped mid-way: uraid examine's reshape lines are mdadm's"
	want $n ucat "... uraid cat reads the pattern written before the grow"
	want $n kquiet "... mdadm's background grow process ended before uraid takes the members"
	want $n ufinish "... uraid assembles it read-write and finishes the reshape"
	want $n kassemble "... the kernel assembles the members uraid finished"
	want $n kcontent "... and reads the pattern, zeros after it"
	want $n kcheck "... check: mismatch_cnt 0"
	want $n kfinal "... superblocks without reshape bits"
	[ $n = k ] && want $n bitmap "... mdadm -X: every member's bitmap as before the grow"
done
want t examine "backwards: raid5 5->4 shrunk by the kernel, stopped mid-way: uraid examine's reshape lines are mdadm's"
want t ucat "... uraid cat reads the pattern"
want t kquiet "... mdadm's background grow process ended before uraid takes the members"
want t ufinish "... uraid assembles it read-write and finishes the reshape"
want t kassemble "... the kernel assembles the members uraid finished"
want t kcontent "... and reads the pattern"
want t kcheck "... check: mismatch_cnt 0"
want t kfinal "... superblocks without reshape bits"
want x examine "raid10 near-2 4->5 grown by the kernel, stopped mid-way: uraid examine's reshape lines are mdadm's"
want x ucat "... uraid cat reads the pattern written before the grow"
want x kquiet "... mdadm's background grow process ended before uraid takes the members"
want x ufinish "... uraid assembles it read-write and finishes the reshape"
want x kassemble "... the kernel assembles the members uraid finished"
want x kcontent "... and reads the pattern, zeros after it"
want x kcheck "... check: mismatch_cnt 0"
want x kfinal "... superblocks without reshape bits"
want q kcut "0.90 raid5 4->5 grown in place by mdadm --backup-file, frozen once the backup is written"
want q ufinish "... uraid assemble --backup-file finishes the reshape"
want q urestore "... restoring the critical section from mdadm's backup where it stopped in it"
want q kassemble "... the kernel assembles the members uraid finished"
want q kcontent "... and reads the pattern, zeros after it"
want q kcheck "... check: mismatch_cnt 0"
want q kfinal "... superblocks without reshape bits"
want j kstopped "raid5 4 -> raid6 5 grown by the kernel (backwards), stopped once under way"
want j ucat "... uraid cat reads the pattern"
want j kquiet "... mdadm's background grow process ended before uraid takes the members"
want j ufinish "... uraid assembles it read-write and finishes the reshape"
want j kassemble "... the kernel assembles the members uraid finished"
want j kgeom "... raid6, left-symmetric, 5 members"
want j kcontent "... and reads the pattern"
want j kcheck "... check: mismatch_cnt 0"
want j kfinal "... superblocks without reshape bits"
for c in "i:raid6 5 -> raid5 (the move to left-symmetric-6)" "n:raid4 4 -> raid5 left-symmetric" \
	"o:raid0 3 -> raid5 5 (takeover, the parity slot empty)" \
	"a:raid10 near-2 5->4 (the array size cut first)" "b:raid10 near-2 chunk 64K->32K"; do
	n=${c%%:*}
	want $n kstopped "${c#*:} by the kernel, stopped under way with a reshape position"
	want $n examine "... uraid examine's reshape lines are mdadm's"
	want $n ucat "... uraid cat reads the pattern"
	want $n kquiet "... mdadm's background grow process ended before uraid takes the members"
	want $n ufinish "... uraid assembles it read-write and finishes the reshape"
	want $n kassemble "... the kernel assembles the members uraid finished"
	want $n kgeom "... the kernel's geometry at the end"
	want $n kcontent "... and reads the pattern, zeros after it"
	want $n kcheck "... check: mismatch_cnt 0"
	want $n kfinal "... superblocks without reshape bits"
done
want p krecovery "raid0 3 -> raid5 4 by the kernel's takeover, recovery onto the added member frozen mid-way (its recovery_offset)"
want p examine "... uraid examine's lines are mdadm's"
want p ucat "... uraid cat reads the pattern"
want p kquiet "... no mdadm process left"
want p uresume "... uraid assembles it and resumes the recovery at that offset, not from 0"
want p ufinish "... and finishes the recovery"
want p kassemble "... the kernel assembles the members uraid finished"
want p kgeom "... raid5 parity-last, 4 members"
want p kcontent "... and reads the pattern"
want p kcheck "... check: mismatch_cnt 0"
want p kfinal "... superblocks without reshape or recovery bits"
rs_done
