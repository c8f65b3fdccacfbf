#!/usr/bin/env bash
# Cross-checks the reference arrays and vectors_cat.sh itself with the
# independent Python reader tests/mdvm/pyraid.py standing in for uraid: every
# array's full read must give the kernel's md5 and the superblock fields must
# parse the same as mdadm printed them.  When this passes and vectors_cat.sh
# fails, the fault is in uraid, not in the vectors or the test.  Degraded reads
# are left to vectors_cat.sh (pyraid is slow); run them by hand with
#   URAID=tests/mdvm/pyraid.py tests/integration/vectors_cat.sh
# Not part of make check (it checks the vectors, not uraid; ~2 minutes): run by hand.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
URAID=$TOP/tests/mdvm/pyraid.py VECTORS_NO_DEGRADED=1 exec bash "$TOP/tests/integration/vectors_cat.sh"
