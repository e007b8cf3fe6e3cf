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
# The second case is the same prologue on a real project's history
# (make-data ci): a work tree of 5,769 files in a deep tree, 934 refs (532
# remote branches, 399 tags), 200 commits behind origin (bench-data/
# ci/origin.git, 999 refs: 38 new branches, 29 moved, 29 new tags), with
# 500 build outputs (250 *.o next to the sources, 250 under build/); its
# HEAD is detached at origin/main, as the previous job's "checkout -f" left
# it. Besides the four commands together ("CI prologue: real history"),
# each step is timed alone ("CI step N: ..."), right after the same git
# ran the steps before it on the fresh mount (the warm-up, BENCH_WARM in
# lib.sh: not timed, not counted), so that each step has its own wall
# time and round trips, with the caches and racily clean entries the
# steps before leave. A last case runs reset --hard for every git after
# nfsgit ran the steps before it: how many entries a checkout leaves
# racily clean depends on its speed, and this compares the resets on the
# same work tree. Without --quick only.
#
#   bench/s9-ci-prologue.sh [--stock GIT] [--stable GIT] [--nfsgit GIT]
#                           [--delay-us N]... [--local] [--quick] [--reps N]
#                           [--out FILE]
set -eu
. "$(dirname "$0")/lib.sh"
bench_parse_args "$@"
"$BENCH_DIR/make-data" medium
"$BENCH_DIR/make-data" ci
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

# prep_ci DIR: DIR/ci-0, the runner's work tree
prep_ci () {
	rm -rf "$1/ci-0" "$1/wt"
	cp -a "$BENCH_DATA/ci/runner" "$1/ci-0"
	rm -f "$1/ci-0/.git/nfsgit-bench-complete"
	"$G" -C "$1/ci-0" remote set-url origin "$BENCH_DATA/ci/origin.git"
	"$G" -C "$1/ci-0" update-index -q --refresh
}

ci_steps=(
	"fetch -q origin"
	"checkout -q -f origin/main"
	"clean -q -ffdx"
	"reset -q --hard"
)
ci_names=(
	"fetch origin"
	"checkout -f origin/main"
	"clean -ffdx"
	"reset --hard"
)

# step_case N VARIANT WARM_GIT LABEL: CI step N alone for VARIANT, right
# after WARM_GIT ran the steps before it on the mount (BENCH_WARM: not
# timed, not counted)
step_case () {
	local n=$1 v=$2 wg=$3 label=$4 g i

	g=$(bench_git "$v")
	BENCH_WARM=
	if test $n -gt 0
	then
		BENCH_WARM="cd wt"
		for ((i = 0; i < n; i++))
		do
			BENCH_WARM="$BENCH_WARM && $wg ${ci_steps[$i]}"
		done
	fi
	bench_case s9 "CI step $((n + 1)): ${ci_names[$n]}$label (real history)" "$fs" "$v" \
		'rm -rf wt && cp -a ci-0 wt && "$SETUP_GIT" -C wt update-index -q --refresh' \
		"cd \"\$R/wt\" && $g ${ci_steps[$n]}"
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

	bench_say "s9: preparing the runner's work tree (ci) on $fs"
	prep_ci "$dir"
	for v in $BENCH_VARIANTS
	do
		g=$(bench_git "$v")
		bench_case s9 "CI prologue: real history (934 refs, 200 commits behind, 500 build outputs)" "$fs" "$v" \
			'rm -rf wt && cp -a ci-0 wt && "$SETUP_GIT" -C wt update-index -q --refresh' \
			"cd \"\$R/wt\" && $g ${ci_steps[0]} && $g ${ci_steps[1]} && $g ${ci_steps[2]} && $g ${ci_steps[3]}" ||
			failed=1
	done
	if test -z "$QUICK"
	then
		for n in 0 1 2 3
		do
			for v in $BENCH_VARIANTS
			do
				step_case $n "$v" "$(bench_git "$v")" "" || failed=1
			done
		done
		# reset --hard from the same state for every git: the steps
		# before it by nfsgit. How many entries a checkout leaves
		# racily clean (written in the second the index was) depends
		# on how fast it was, and the reset reads each of them again;
		# here each git resets the work tree nfsgit's checkout left.
		for v in $BENCH_VARIANTS
		do
			step_case 3 "$v" "$(bench_git nfsgit)" \
				" after nfsgit's steps before it" || failed=1
		done
		BENCH_WARM=
	fi
	rm -rf "$dir/ci-0" "$dir/wt"
done

bench_table s9 "### a CI job's prologue in a reused work tree (Git 2.47.3 → near, 1000 build outputs; a real history, make-data ci)"
cat <<EOF
Wall time: median (min–max) of $REPS runs, each on a fresh copy of the
work tree, latencyfs remounted before each run (cold caches). Ratios:
each stock Git's median / nfsgit's (above 1: nfsgit is faster). Round
trips: total delayed requests (latencyfs "round_trips"), of the four
commands together; by type below (median over the runs; "neg" =
negative lookups). A "CI step" row times and counts that step alone,
run right after the same git ran the steps before it on the fresh mount
(not timed, not counted); the last row runs reset --hard after nfsgit
ran the steps before it, for every git.


EOF
exit $failed
