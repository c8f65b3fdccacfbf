#!/usr/bin/env bash
# uraid assemble's refusals in mdadm 4.2's words: assemble_refuse.table's
# member sets (made by uraid: arrays created and stopped, a member failed
# and removed, superblocks marked not clean, a blank member, byte copies)
# and each row's uraid assemble, its status and every line wanted as the
# table says, every member a refused row names unchanged (md5).
# assemble_refuse_mdvm.sh runs mdadm 4.2 on the same rows (and uraid on
# mdadm's images).
source "$(dirname "$0")/../lib.sh"
t_own_run_dir
source "$TOP/tests/integration/assemble_refuse.bash"
check "uraid made the table's member sets" ar_images_uraid "$T_TMP/u"
ar_run_uraid "$T_TMP/u" >"$T_TMP/out.u"
ar_compare "$T_TMP/out.u" u "uraid assemble"
t_done
