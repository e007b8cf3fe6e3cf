#!/bin/bash
# bench/s8-status.sh: git status on latencyfs, cold caches: stock Git at
# the base, Debian stable's Git, nfsgit, and gitoxide's "gix status" where
# it is installed (bench_gix, see lib.sh):
#   clean         the work tree of Git 2.47.3 (4539 files, 225
#                 directories) as checked out, index refreshed
#   clean, warm   the same, right after a "status" of the same Git on
#                 the same mount (the kernel's caches are warm: names
#                 for 30 s, attributes for 3 s)
#   100 changed   the same with 100 files changed (a line appended;
#                 picked with a fixed seed) and 20 new untracked files
#   racy          the clean tree as right after a checkout that wrote
#                 the files and the index within a second: every file
#                 and the index have the same mtime, so every entry is
#                 racily clean and must be read (Git compares times to
#                 the second); status, diff --quiet and add -A, each
#                 from that index (restored before each run)
#
#   bench/s8-status.sh [--stock GIT] [--stable GIT] [--nfsgit GIT]
#                      [--delay-us N]... [--local] [--quick] [--reps N]
#                      [--out FILE] [--repo medium|linux|linux-6.1]
#
# --repo linux: the same two cases in the work tree of Linux 6.12
# (bench-data/linux.git, make-data linux; about 87 k files); --repo
# linux-6.1: in that of Linux 6.1 (make-data linux-6.1).
#
# Each case is also measured against a floor, the variant "listings
# only": bench/list-floor.c lists every directory of the work tree (as
# found on the backing directory before the runs) from 64 threads, and
# nothing else, on the same mount: what the simulator and this machine
# charge for the listings alone, which a status must make to find the
# untracked files.
#
# The work tree is made once in the backing directory (latencyfs
# unmounted): cloned from bench-data/medium.git, checked out at v2.47.3,
# then, a second later, its index refreshed, so that no entry is racily
# clean. status writes nothing that changes what the next run finds, so
# every run uses the same tree; latencyfs is remounted before each run.
# --quick leaves out the 100-file case.
set -eu
. "$(dirname "$0")/lib.sh"
bench_parse_args "$@"
bench_repo_arg s8 linux-6.1
"$BENCH_DIR/make-data" $REPO

FLOOR=$TOP/build/bench-list-floor
if ! test -x "$FLOOR" || test "$BENCH_DIR/list-floor.c" -nt "$FLOOR"
then
	${CC:-cc} -O2 -Wall -pthread -o "$FLOOR" "$BENCH_DIR/list-floor.c" ||
		bench_die "cannot build $FLOOR"
fi
bench_init
case $REPO in
medium) TAG=v2.47.3 TREE="Git 2.47.3's work tree" ;;
linux) TAG=v6.12 TREE="Linux 6.12's work tree" ;;
linux-6.1) TAG=v6.1 TREE="Linux 6.1's work tree" ;;
esac

G=$SETUP_GIT
CASES="clean warm changed racy"
test -z "$QUICK" || CASES="clean warm racy"
GIX=$(bench_gix)

# prep DIR CASE: the work tree DIR/wt for CASE
prep () {
	local dir=$1 case=$2

	rm -rf "$dir/wt"
	"$G" clone -q --no-checkout "$BENCH_DATA/$REPO.git" "$dir/wt"
	"$G" -C "$dir/wt" checkout -q --detach $TAG
	if test "$case" = changed
	then
		(cd "$dir/wt" && "$G" ls-files |
		"$PYTHON" -c '
import random, sys
paths = sorted(l.rstrip("\n") for l in sys.stdin)
for p in random.Random(42).sample(paths, 100):
    with open(p, "a") as f:
        f.write("changed\n")
for i in range(20):
    with open("untracked-%d.txt" % i, "w") as f:
        f.write("new\n")
') || bench_die "cannot change files"
	fi
	sleep 1
	"$G" -C "$dir/wt" update-index -q --refresh || :
	if test "$case" = racy
	then
		# every file and the index in one second, a minute ago; the
		# index that records those times is restored before each run
		(cd "$dir/wt" && "$G" ls-files -z |
		"$PYTHON" -c '
import os, sys, time
t = int(time.time()) - 60
for p in sys.stdin.buffer.read().split(b"\0"):
    if p:
        os.utime(p, (t, t), follow_symlinks=False)
with open(".git/racy-time", "w") as f:
    f.write("%d\n" % t)
') || bench_die "cannot set the times"
		"$G" -C "$dir/wt" update-index -q --refresh
		touch -d "@$(cat "$dir/wt/.git/racy-time")" "$dir/wt/.git/index"
		cp -p "$dir/wt/.git/index" "$dir/wt.racy-index"
	fi
	# the directories for the floor, outside the work tree
	(cd "$dir/wt" && find . -path ./.git -prune -o -type d -print) \
		>"$dir/wt.dirs" || bench_die "cannot list the work tree"
}

failed=0
for fs in $(bench_fs_list)
do
	dir=$(bench_fs_dir "$fs")
	for c in $CASES
	do
		case $c in
		clean) label="status, clean work tree" ;;
		warm) label="status, clean work tree, warm caches" ;;
		changed) label="status, 100 files changed, 20 untracked" ;;
		racy) label="status, every entry racily clean" ;;
		esac
		bench_say "s8: preparing the work tree for $c on $fs"
		prep "$dir" "$c"
		test "$REPO" = medium || label="$label ($REPO)"
		setup=:
		test "$c" != racy || setup="cp -p wt.racy-index wt/.git/index"
		for v in $BENCH_VARIANTS
		do
			g=$(bench_git "$v")
			if test "$c" = racy
			then
				for cmd in "diff --quiet" "add -A"
				do
					bench_case s8 "$cmd, every entry racily clean" \
						"$fs" "$v" "$setup" \
						"cd \"\$R/wt\" && $g $cmd" || failed=1
				done
			fi
			test "$c" != warm || BENCH_WARM="cd wt && $g status >/dev/null"
			bench_case s8 "$label" "$fs" "$v" "$setup" \
				"cd \"\$R/wt\" && $g status >/dev/null" ||
				failed=1
			BENCH_WARM=
		done
		if test -n "$GIX"
		then
			test "$c" != warm || BENCH_WARM="cd wt && $GIX status >/dev/null"
			bench_case s8 "$label" "$fs" "$(bench_gix_label "$GIX")" "$setup" \
				"cd \"\$R/wt\" && $GIX status >/dev/null" ||
				failed=1
			BENCH_WARM=
		else
			bench_skip s8 "$label" "$fs" gitoxide "gix not installed (bench/README.md)"
		fi
		# the floor is that of cold caches
		test "$c" = warm || test "$c" = racy ||
		bench_case s8 "$label" "$fs" "listings only" : \
			"cd \"\$R/wt\" && '$FLOOR' \"$dir/wt.dirs\"" ||
			failed=1
	done
	rm -rf "$dir/wt" "$dir/wt.dirs" "$dir/wt.racy-index"
done

case $REPO in
medium) bench_table s8 "### git status (Git 2.47.3's work tree, 4539 files, 225 directories)" ;;
*) bench_table s8 "### git status ($TREE)" ;;
esac
cat <<EOF
Wall time: median (min–max) of $REPS runs, latencyfs remounted before
each run (cold caches; for "warm caches", the same Git's or gitoxide's
status ran once on the new mount before the timed one, which finds the
names and attributes it brought in still cached). Ratios: each stock Git's median / nfsgit's (above
1: nfsgit is faster). gitoxide's \`gix status\` reads the same work tree
and index. "listings only" lists the work tree's directories and does
nothing else (bench/list-floor.c): what the listings alone cost.
Round trips: total delayed requests (latencyfs "round_trips");
by type below (median over the runs; "neg" = negative lookups).


EOF
exit $failed
