#!/usr/bin/env bash
# A re-add the kernel stopped part-way: md fails member 1 of a raid1 and a
# raid5 with an internal bitmap, rewrites most of the array, re-adds the
# member (a recovery of the chunks the bitmap marks) and is stopped part-way;
# the member's superblock then has md's MD_FEATURE_RECOVERY_BITMAP (0x80)
# beside its recovery offset. uraid reads, examines and resumes it as the
# kernel does (partial_sync_mdvm.bash says what is checked).
MODE=readd
CASES="a:1:2:1.2: b:5:3:1.2:"
source "$(dirname "$0")/partial_sync_mdvm.bash"
