#!/usr/bin/env bash
# A member the kernel left half-rebuilt: md fails member 1 of raid1/5/6/10
# arrays (1.2; a raid1 with 1.0, which records a recovery offset too, and
# one with 0.90, which records none: md restarts its recovery), recovers onto
# a fresh spare and is stopped part-way; uraid reads, examines and resumes
# it as the kernel does (partial_sync_mdvm.bash says what is checked).
MODE=recover
CASES="a:1:2:1.2: b:5:3:1.2: c:6:4:1.2: e:10:3:1.2:--layout=n2 f:1:2:1.0: g:1:2:0.90:"
source "$(dirname "$0")/partial_sync_mdvm.bash"
