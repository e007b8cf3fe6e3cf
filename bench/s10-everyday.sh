#!/bin/bash
# bench/s10-everyday.sh: the commands users and servers run all day, on
# latencyfs: stock Git at the base, Debian stable's Git and nfsgit:
#   add + commit   "git add -A && git commit" of 100 changed files in
#                  Git 2.47.3's work tree (picked with a fixed seed)
#   stash -u       "git stash -u" of the same 100 changed files and 20
#                  untracked ones, 5 in each of 4 directories: three
#                  searches for untracked files (two by stash, one by the
#                  "git clean" it runs)
#   rm -r          "git rm -r t Documentation" in that work tree: 3311
#                  files in 125 directories
#   worktree remove
#                  "git worktree remove" of a worktree of Git 2.47.3
#                  (made with --relative-paths inside the main one, so
#                  that a copy works): its "git status" check, then
#                  its removal
#   clean          "git clean -ffdx" of 5000 build outputs, 20 in each of
#                  250 directories under build/, in that work tree
#   clean -ffd     "git clean -ffd" of the same tree: the outputs (*.o)
#                  are ignored, so none is removed; what is measured is
#                  the search without -x
#   prune-packed   "git prune-packed" in a bare repository whose 9122
#                  objects are all packed and all loose as well (as after
#                  unpack-objects and "repack -ad")
#   prune          "git prune" in a bare repository without refs whose
#                  9122 objects are all loose: all unreachable, all
#                  removed (its search for recent objects, then the
#                  removals, then prune-packed's walk)
#   gc             "git gc" in that repository without refs: a cruft pack
#                  of the 9122 objects (all recent), then prune-packed
#                  removes them
#   repack         "git repack -ad" in a bare repository whose 9122
#                  objects are all loose and all reachable (as after
#                  unpack-objects)
#   start-up       "git rev-parse --is-bare-repository" in a bare
#                  repository: finding the repository and reading its
#                  config, what every command does before its own work
#   rev-parse      "git rev-parse HEAD" there: start-up, then HEAD resolved
#                  (packed-refs, the look-ups of an ambiguity check)
#   fetch          an up-to-date "git fetch" of 1000 branches into a bare
#                  repository (files backend) on the mount, from one on
#                  the local disk
#
#   bench/s10-everyday.sh [--stock GIT] [--stable GIT] [--nfsgit GIT]
#                         [--delay-us N]... [--local] [--quick] [--reps N]
#                         [--out FILE] [--repo medium|linux|linux-6.1]
#
# --repo linux: only clean, in the work tree of Linux 6.12
# (bench-data/linux.git, make-data linux; about 87 k files); --repo
# linux-6.1: in that of Linux 6.1 (make-data linux-6.1).
#
# Each case's data is made once in the backing directory (latencyfs
# unmounted) as a template, and copied before every run (the copies of
# work trees get their index refreshed, as their files have new inode
# numbers and ctimes; the files are older than a second, so no entry is
# racily clean); latencyfs is remounted before each run. --quick leaves
# out stash -u, rm -r, worktree remove, prune-packed, prune, gc and
# repack.
#
# clean, prune-packed and prune are also measured against a floor, the variant
# "unlink()s only": bench/unlink-floor.c lists the same directories and
# removes their files and the directories from 64 threads, and nothing
# else, on the same mount; what it takes is what the simulator and this
# machine charge for the removals alone.
set -eu
. "$(dirname "$0")/lib.sh"
bench_parse_args "$@"
bench_repo_arg s10 linux-6.1
"$BENCH_DIR/make-data" $REPO
test "$REPO" != medium || "$BENCH_DIR/make-data" refs files 1000

FLOOR=$TOP/build/bench-unlink-floor
if ! test -x "$FLOOR" || test "$BENCH_DIR/unlink-floor.c" -nt "$FLOOR"
then
	${CC:-cc} -O2 -Wall -pthread -o "$FLOOR" "$BENCH_DIR/unlink-floor.c" ||
		bench_die "cannot build $FLOOR"
fi
bench_init

G=$SETUP_GIT
CASES="add stash rm wtrm clean cleand prune unreach gc repack startup revparse fetch"
test -z "$QUICK" || CASES="add clean cleand startup revparse fetch"
TAG=v2.47.3
case $REPO in
linux) CASES=clean TAG=v6.12 ;;
linux-6.1) CASES=clean TAG=v6.1 ;;
esac
CASES=${S10_CASES:-$CASES}	# override for development

# worktree DIR: DIR/wt-template, Git 2.47.3's work tree
worktree () {
	local t=$1/wt-template

	test -d "$t" && return 0
	"$G" clone -q --no-checkout "$BENCH_DATA/$REPO.git" "$t"
	"$G" -C "$t" checkout -q --detach $TAG
}

# prep DIR CASE: DIR/template for CASE
prep () {
	local dir=$1 t=$1/template

	rm -rf "$t" "$dir/wt"
	case $2 in
	add|stash)
		worktree "$dir"
		cp -a "$dir/wt-template" "$t"
		(cd "$t" && "$G" ls-files | "$PYTHON" -c '
import random, sys
paths = sorted(l.rstrip("\n") for l in sys.stdin)
for p in random.Random(42).sample(paths, 100):
    with open(p, "a") as f:
        f.write("changed\n")
')
		test "$2" = add ||
		for d in builtin t/helper Documentation compat
		do
			for i in 1 2 3 4 5
			do
				echo untracked >"$t/$d/untracked$i.txt"
			done
		done ;;
	rm)
		worktree "$dir"
		cp -a "$dir/wt-template" "$t" ;;
	wtrm)
		worktree "$dir"
		cp -a "$dir/wt-template" "$t"
		"$G" -C "$t" worktree add -q --relative-paths --detach wtx ;;
	clean|cleand)
		worktree "$dir"
		cp -a "$dir/wt-template" "$t"
		"$PYTHON" -c '
import os, sys
for d in range(250):
    p = os.path.join(sys.argv[1], "build", "d%03d" % d)
    os.makedirs(p)
    for f in range(20):
        with open(os.path.join(p, "f%02d.o" % f), "w") as o:
            o.write("object %d %d\n" % (d, f))
' "$t" ;;
	prune)
		# all loose, then the pack beside them ("repack -d" would
		# prune the loose ones itself)
		"$G" init -q --bare "$t"
		"$G" -C "$t" unpack-objects -q <"$BENCH_DATA/packs/medium.pack"
		cp "$BENCH_DATA/packs/medium.pack" "$t/objects/pack/pack-medium.pack"
		"$G" -C "$t" index-pack "$t/objects/pack/pack-medium.pack" >/dev/null ;;
	unreach|gc)
		"$G" init -q --bare "$t"
		"$G" -C "$t" unpack-objects -q <"$BENCH_DATA/packs/medium.pack" ;;
	repack)
		"$G" init -q --bare "$t"
		"$G" -C "$t" unpack-objects -q <"$BENCH_DATA/packs/medium.pack"
		"$G" -C "$t" update-ref refs/heads/main \
			"$("$G" -C "$BENCH_DATA/medium.git" rev-parse HEAD)" ;;
	startup|revparse)
		"$G" clone -q --bare "$BENCH_DATA/medium.git" "$t" ;;
	fetch)
		"$G" clone -q --bare "$BENCH_DATA/refs/files-1000.git" "$t"
		"$G" -C "$t" config remote.origin.fetch '+refs/heads/*:refs/remotes/origin/*'
		"$G" -C "$t" fetch -q origin
		"$G" -C "$t" pack-refs --all ;;
	esac
	sleep 1
}

failed=0
for fs in $(bench_fs_list)
do
	dir=$(bench_fs_dir "$fs")
	for c in $CASES
	do
		bench_say "s10: preparing $c on $fs"
		prep "$dir" "$c"
		setup='rm -rf wt && cp -a template wt'
		case $c in
		add)
			label="add -A && commit, 100 files changed"
			setup="$setup"' && "$SETUP_GIT" -C wt update-index -q --refresh'
			cmd='git add -A && git commit -q -m changes' ;;
		stash)
			label="stash -u, 100 files changed and 20 untracked"
			setup="$setup"' && "$SETUP_GIT" -C wt update-index -q --refresh'
			cmd='git stash -q -u' ;;
		rm)
			label="rm -r of 3311 files in 125 directories"
			setup="$setup"' && "$SETUP_GIT" -C wt update-index -q --refresh'
			cmd='git rm -q -r t Documentation' ;;
		wtrm)
			label="worktree remove, 4539 files in 225 directories"
			setup="$setup"' && "$SETUP_GIT" -C wt update-index -q --refresh && "$SETUP_GIT" -C wt/wtx update-index -q --refresh'
			cmd='git worktree remove wtx' ;;
		clean)
			label="clean -ffdx, 5000 files in 250 directories"
			setup="$setup"' && "$SETUP_GIT" -C wt update-index -q --refresh'
			cmd='git clean -q -ffdx' ;;
		cleand)
			label="clean -ffd, the same 5000 files (ignored: none removed)"
			setup="$setup"' && "$SETUP_GIT" -C wt update-index -q --refresh'
			cmd='git clean -q -ffd' ;;
		prune)
			label="prune-packed, 9122 loose objects all packed"
			cmd='git prune-packed' ;;
		unreach)
			label="prune, 9122 unreachable loose objects"
			cmd='git prune' ;;
		gc)
			label="gc, 9122 unreachable loose objects"
			cmd='git gc -q' ;;
		repack)
			label="repack -ad, 9122 reachable loose objects"
			cmd='git repack -adq' ;;
		startup)
			label="start-up in a bare repository (rev-parse --is-bare-repository)"
			cmd='git rev-parse --is-bare-repository' ;;
		revparse)
			label="rev-parse HEAD in a bare repository"
			cmd='git rev-parse HEAD' ;;
		fetch)
			label="up-to-date fetch of 1000 branches"
			cmd='git fetch -q origin' ;;
		esac
		test "$REPO" = medium || label="$label ($REPO)"
		for v in $BENCH_VARIANTS
		do
			# 2.47.3 cannot use a worktree with relative paths
			if test $c = wtrm && test $v = stable &&
				! "$(bench_git stable)" -C "$dir/template/wtx" \
					rev-parse --git-dir >/dev/null 2>&1
			then
				continue
			fi
			g=$(bench_git "$v")
			bench_case s10 "$label" "$fs" "$v" "$setup" \
				"cd \"\$R/wt\" && ${cmd//git /$g }" ||
				failed=1
		done
		floor=
		case $c in
		clean) floor="'$FLOOR' build/d* && rmdir build" ;;
		prune|unreach) floor="'$FLOOR' objects/??" ;;
		esac
		if test -n "$floor"
		then
			bench_case s10 "$label" "$fs" "unlink()s only" "$setup" \
				"cd \"\$R/wt\" && $floor" || failed=1
		fi
		rm -rf "$dir/template" "$dir/wt"
	done
	rm -rf "$dir/wt-template"
done

case $REPO in
medium) bench_table s10 "### everyday commands (Git 2.47.3's work tree, 4539 files; bare repositories)" ;;
*) bench_table s10 "### everyday commands ($REPO: $TAG's work tree)" ;;
esac
cat <<EOF
Wall time: median (min–max) of $REPS runs, each on a fresh copy of the
data, latencyfs remounted before each run (cold caches). Ratios: each
stock Git's median / nfsgit's (above 1: nfsgit is faster); against
"unlink()s only", what the removals alone allow (clean also searches
the work tree, the floor does not). Round trips:
total delayed requests (latencyfs "round_trips"); by type below (median
over the runs; "neg" = negative lookups).

EOF
exit $failed
