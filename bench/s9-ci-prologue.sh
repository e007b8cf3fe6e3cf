#!/bin/bash
# bench/s9-ci-prologue.sh: the prologue of a CI job in a reused work tree
# on latencyfs, stock Git at the base, Debian stable's Git and nfsgit:
#
#   git fetch origin && git checkout -f origin/main &&
#   git clean -ffdx && git reset --hard
#
# The work tree is a clone of Git 2.47.3 (4539 files) with origin/main at
# v2.47.3 and 1000 build outputs (untracked, 20 in each of 50
# directories); origin is bench-data/medium.git on the local disk, whose
# main is "near" (v2.47.3 with 40 files changed). Before each run the work
# tree is copied again from a template in the backing directory (latencyfs
# unmounted) and its index refreshed (the copies have new inode numbers
# and ctimes; the files are older than a second, so no entry is racily
# clean).
#
#   bench/s9-ci-prologue.sh [--stock GIT] [--stable GIT] [--nfsgit GIT]
#                           [--delay-us N]... [--local] [--quick] [--reps N]
#                           [--out FILE]
set -eu
. "$(dirname "$0")/lib.sh"
bench_parse_args "$@"
"$BENCH_DIR/make-data" medium
bench_init

G=$SETUP_GIT

# prep DIR: DIR/template
prep () {
	local t=$1/template

	rm -rf "$t" "$1/wt"
	"$G" init -q "$t"
	"$G" -C "$t" remote add origin "$BENCH_DATA/medium.git"
	"$G" -C "$t" fetch -q --no-tags origin +refs/tags/v2.47.3:refs/remotes/origin/main
	"$G" -C "$t" checkout -q --detach origin/main
	"$PYTHON" -c '
import os, sys
for d in range(50):
    os.makedirs(os.path.join(sys.argv[1], "build", "d%02d" % d))
    for f in range(20):
        with open(os.path.join(sys.argv[1], "build", "d%02d" % d, "f%02d.o" % f), "w") as o:
            o.write("object %d %d\n" % (d, f))
' "$t"
	sleep 1
	"$G" -C "$t" update-index -q --refresh
}

failed=0
for fs in $(bench_fs_list)
do
	case $fs in
	local) dir=$LOCAL ;;
	*) dir=$BACKING ;;
	esac
	bench_say "s9: preparing the template work tree on $fs"
	prep "$dir"
	for v in $BENCH_VARIANTS
	do
		g=$(bench_git "$v")
		bench_case s9 "CI prologue: fetch, checkout -f, clean -ffdx, reset --hard" "$fs" "$v" \
			'rm -rf wt && cp -a template wt && "$SETUP_GIT" -C wt update-index -q --refresh' \
			"cd \"\$R/wt\" && $g fetch -q origin && $g checkout -q -f origin/main && $g clean -q -ffdx && $g reset -q --hard" ||
			failed=1
	done
	rm -rf "$dir/template" "$dir/wt"
done

bench_table s9 "### a CI job's prologue in a reused work tree (Git 2.47.3 → near, 1000 build outputs)"
cat <<EOF
Wall time: median (min–max) of $REPS runs, each on a fresh copy of the
work tree, latencyfs remounted before each run (cold caches). Ratios:
each stock Git's median / nfsgit's (above 1: nfsgit is faster). Round
trips: total delayed requests (latencyfs "round_trips"), of the four
commands together; by type below (median over the runs; "neg" =
negative lookups).


EOF
exit $failed
