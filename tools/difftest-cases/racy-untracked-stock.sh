#!/bin/bash
# Stock 2.55.0 with core.untrackedCache misses, in the next status and
# every later one, a file another client creates after status read its
# directory, in the second of the directory's last change, when the
# index is written in the next second (stat data in seconds): the known
# class racy-untracked of tools/difftest.  Usage (as root, for FUSE):
#   tools/difftest-cases/racy-untracked-stock.sh [GIT]
# prints second=[...] third=[...]: the held status and the next one;
# third=[] is the miss.
set -e
TOP=$(cd "$(dirname "$0")/../.." && pwd)
G=${1:-$TOP/build/stock-install/bin/git}
S=$TOP/build/stock-install/bin/git
T=$(mktemp -d)
trap 'echo clear-pauses >$T/m/.latencyfs 2>/dev/null; umount $T/m 2>/dev/null; rm -rf $T' EXIT
mkdir -p $T/b/r/src $T/m
(cd $T/b/r && for f in src/c src/readme src/run.sh top a b; do echo $f >$f; done &&
 $S init -q && $S add . && $S -c user.name=x -c user.email=x@x commit -q -m files &&
 $S config core.untrackedCache true)
"$TOP/build/latencyfs/latencyfs" -o delay_us=0,entry_timeout=0,attr_timeout=0,nordirplus $T/b $T/m
touch -d '5 seconds ago' $T/b/r/.git/index
# the directory changes at the start of a second
python3 -c 'import time; time.sleep(1.02 - time.time() % 1)'
echo x >$T/b/r/src/.t; rm $T/b/r/src/.t
# hold status at its first write of index.lock (after its search)
echo "pause write:r/.git/index.lock" >$T/m/.latencyfs
(cd $T/m/r && $G status --porcelain >$T/second) &
for k in $(seq 500); do grep -qx "paused 1" $T/m/.latencyfs && break; sleep 0.01; done
echo other >$T/b/r/src/new            # another client, same second
python3 -c 'import time; time.sleep(1.02 - time.time() % 1)'
echo go >$T/m/.latencyfs; wait
echo "second=[$(tr '\n' ' ' <$T/second)] third=[$(cd $T/m/r && $G status --porcelain | tr '\n' ' ')]"
