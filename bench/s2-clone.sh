#!/bin/bash
# bench/s2-clone.sh: clone the medium repository onto latencyfs over
# file:// with --no-local (the pack goes through index-pack, then the work
# tree is checked out), stock Git at the base, Debian stable's Git and
# nfsgit, with the default configuration and with -c checkout.workers=32;
# and gitoxide's "gix clone" of the same URL where it is installed
# (bench_gix, see lib.sh; its own defaults).
#
#   bench/s2-clone.sh [--stock GIT] [--stable GIT] [--nfsgit GIT]
#                     [--delay-us N]... [--local] [--quick] [--reps N]
#                     [--out FILE] [--repo medium|linux]
#
# The source is bench-data/medium.git on the local disk (made by
# make-data); HEAD is "near" (the Git 2.47.3 tree, 4.5 k files). The clone
# is removed in the backing directory and latencyfs remounted before every
# run. --local adds the same clones onto the local disk. --repo linux
# clones bench-data/linux.git instead (the Linux 6.12 tree, 87 k files).
set -eu
. "$(dirname "$0")/lib.sh"
bench_parse_args "$@"
bench_repo_arg s2
"$BENCH_DIR/make-data" $REPO
bench_init

SRC=file://$BENCH_DATA/$REPO.git
objects=$("$SETUP_GIT" -C "$BENCH_DATA/$REPO.git" rev-list --objects --all | wc -l)
files=$("$SETUP_GIT" -C "$BENCH_DATA/$REPO.git" ls-tree -r HEAD | wc -l)

GIX=$(bench_gix)
failed=0
for fs in $(bench_fs_list)
do
	for conf in "default config" "checkout.workers=32"
	do
		case $conf in
		default*) opt= ;;
		*) opt="-c $conf" ;;
		esac
		for v in $BENCH_VARIANTS
		do
			g=$(bench_git "$v")
			bench_case s2 "clone, $conf" "$fs" "$v" 'rm -rf clone' \
				"$g $opt clone -q --no-local '$SRC' \"\$R/clone\"" \
				"$objects" || failed=1
		done
		test "$conf" = "default config" || continue
		if test -n "$GIX"
		then
			bench_case s2 "clone, $conf" "$fs" "$(bench_gix_label "$GIX")" \
				'rm -rf clone' "$GIX clone '$SRC' \"\$R/clone\" >/dev/null" \
				"$objects" || failed=1
		else
			bench_skip s2 "clone, $conf" "$fs" gitoxide "gix not installed (bench/README.md)"
		fi
	done
done

bench_table s2 "### clone --no-local of the $REPO repository ($objects objects, $files files checked out)"
cat <<EOF
Wall time: median (min–max) of $REPS runs; the clone is removed and
latencyfs remounted before each run. Ratios: each stock Git's median /
nfsgit's (above 1: nfsgit is faster). Round trips: total delayed requests
(latencyfs "round_trips"); by type below (median over the runs; "neg" =
negative lookups).

EOF
exit $failed
