#!/usr/bin/env bash
# Issue #24: `uraid serve NAME` of an array a daemon runs takes every part
# along. (1) A journaled raid5 with a spare is taken over by nbdkit: the
# status under nbdkit lists the same members and the journal, writes over
# NBD (nbdcopy) work (started without its journal the array refuses every
# write with EPERM), and after the stop mdadm --examine (the reference) shows
# the journal and the spare as they were and the data reads back. (2) A
# raid5 with a replacement under way and a spare keeps both.
# (A spare or replacement *added* to a journaled array gets the journal's
# device number: an engine bug, see the report; so (1) makes its spare at
# create time and (2) has no journal.)
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/export_common.bash"
need nbdkit nbdcopy python3 mdadm
D=$T_TMP/tk
mkdir -p "$D"
cd "$D" || exit 1
truncate -s 8M j.img
check "create a journaled raid5 with a spare" "$URAID" create --level=5 --raid-devices=3 \
	--spare-devices=1 --chunk=64K --size=16M --assume-clean --name=tk --write-journal j.img \
	m0.img m1.img m2.img sp.img
check "before: journal and spare" bash -c "'$URAID' detail tk | grep -q 'journal  *$D/j.img'"
uri=$("$URAID" serve tk 2>"$T_TMP/serve.err")
check "serve tk takes it over" [ -n "$uri" ]
check "... carrying all five parts" \
	grep -q "took tk over from its daemon (5 members with the journal)" "$T_TMP/serve.err"
check "the serve's record and nbdkit's log are 0600" \
	[ "$(stat -c %a "$URAID_RUN_DIR/tk.export" "$URAID_RUN_DIR/tk.nbdkit.log" | sort -u)" = 600 ]
after=$("$URAID" detail tk)
check "under nbdkit: the journal is there" grep -q "journal  *$D/j.img" <<<"$after"
check "... writes are not refused" bash -c "! grep -q 'writes refused' <<<'$after'"
check "... the spare is there" grep -q "spare  *$D/sp.img" <<<"$after"
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(7).randbytes(2 << 20))' >data
check "write 2 MiB over NBD (nbdcopy)" nbdcopy data "$uri"
check "read it back over NBD" bash -c "nbdcopy '$uri' - | head -c $((2 << 20)) | cmp -s - data"
"$URAID" stop tk
check "mdadm: j.img is the journal" bash -c "mdadm --examine j.img | grep -q 'Device Role : Journal'"
check "mdadm: sp.img is a spare" bash -c "mdadm --examine sp.img | grep -q 'Device Role : spare'"
check "mdadm: m0 has every slot active" \
	bash -c "mdadm --examine m0.img | grep -q 'Array State : AAA '"
check "assemble again with the journal" "$URAID" assemble --name=tk m0.img m1.img m2.img j.img
check "... data after restart" bash -c "'$URAID' cat tk --length $((2 << 20)) | cmp -s - data"
check "... the journal still works" bash -c "'$URAID' detail --verbose tk | grep -q '^journal : write-through'"
"$URAID" stop tk

# (2) a replacement being rebuilt, and a spare. A slow daemon, so the
# replacement is still under way when nbdkit (full speed) takes over.
URAID_SYNC_SPEED_MIN=100 URAID_SYNC_SPEED_MAX=200 "$URAID" create --level=5 --raid-devices=3 \
	--chunk=64K --size=16M --assume-clean --name=rp r0.img r1.img r2.img 2>/dev/null
truncate -s 16M rsp.img rnew.img
check "add a spare" "$URAID" add rp rsp.img
check "replace r1 by rnew" "$URAID" replace rp r1.img rnew.img 2>/dev/null
check "before: rnew is rebuilding" bash -c "'$URAID' detail rp | grep -q 'spare rebuilding *$D/rnew.img'"
uri=$("$URAID" serve rp 2>"$T_TMP/serve2.err")
check "serve rp takes it over with all five" \
	grep -q "took rp over from its daemon (5 members)" "$T_TMP/serve2.err"
after=$("$URAID" detail rp)
check "under nbdkit: the spare is there" grep -q "spare  *$D/rsp.img" <<<"$after"
check "... the replacement is rebuilding, or done in slot 1" \
	grep -Eq "(spare rebuilding +$D/rnew.img|1      active sync +$D/rnew.img)" <<<"$after"
"$URAID" stop rp
check "mdadm: rnew replaces slot 1 or holds it" \
	bash -c "mdadm --examine rnew.img | grep -Eq 'Device Role : (Replacement device|Active device) 1'"
check "mdadm: rsp is a spare" bash -c "mdadm --examine rsp.img | grep -q 'Device Role : spare'"
t_done
