#!/usr/bin/env bash
# An interrupted mdadm --replace: md copies member 1 of raid1/5/6/10 arrays
# (1.2, and a raid5 with 1.0) onto a replacement and is stopped part-way;
# uraid reads it, examines it and resumes the replacement as the kernel does:
# the replacement takes member 1's role, the old member leaves
# (partial_sync_mdvm.bash says what is checked).
MODE=replace
CASES="a:1:2:1.2: b:5:3:1.2: c:6:4:1.2: e:10:3:1.2:--layout=n2 f:5:3:1.0:"
source "$(dirname "$0")/partial_sync_mdvm.bash"
