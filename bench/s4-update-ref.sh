#!/bin/bash
# bench/s4-update-ref.sh: git update-ref --stdin in a repository with many
# refs, files and reftable backends, stock Git at the base, Debian
# stable's Git and nfsgit:
#   create   K new refs (one transaction) next to COUNT existing, packed
#            refs (files: packed-refs; reftable: one compacted table)
#   recreate (reftable) all COUNT refs again after they were all deleted in
#            one transaction without auto-compaction: the tombstones stay
#
#   bench/s4-update-ref.sh [--stock GIT] [--stable GIT] [--nfsgit GIT]
#                          [--delay-us N]... [--local] [--quick] [--reps N]
#                          [--out FILE]
#
# Sizes: create: COUNT 100000, K 10000 (--quick: K 1000: stock needs about
# 15 round trips per new loose ref, so 10 k of them take over a minute per
# run at 500 us). recreate: 5000 refs (--quick: 2000): stock's cost grows
# with the square of the count (on the 2-core machine this was written on:
# 2 k refs 2.6 s, 5 k 16 s, 20 k 300 s of CPU), so the count stays small.
# The repositories are made once by make-data (refs, tomb) and copied into
# place before every run. Runs on latencyfs and, with --local, on the local
# disk.
set -eu
. "$(dirname "$0")/lib.sh"
bench_parse_args "$@"

COUNT=100000
NEW=10000
TOMB=5000
if test -n "$QUICK"
then
	NEW=1000
	TOMB=2000
fi
COUNT=${S4_COUNT:-$COUNT} NEW=${S4_NEW:-$NEW} TOMB=${S4_TOMB:-$TOMB}	# development

for b in files reftable
do
	"$BENCH_DIR/make-data" refs $b "$COUNT"
done
"$BENCH_DIR/make-data" tomb "$TOMB"
RD=$BENCH_DATA/refs
oid=$(cat "$RD/commit")
awk -v n="$NEW" -v oid="$oid" \
	'BEGIN { for (i = 0; i < n; i++) printf "create refs/heads/new-%05d %s\n", i, oid }' \
	>"$RD/create-new-$NEW.in"
test -f "$RD/create-branch-$TOMB.in" || bench_die "missing $RD/create-branch-$TOMB.in"
bench_init

failed=0
for fs in $(bench_fs_list)
do
	for b in files reftable
	do
		for v in $BENCH_VARIANTS
		do
			g=$(bench_git "$v")
			bench_case s4 "$b: create $NEW refs, $COUNT exist" "$fs" "$v" \
				"rm -rf repo.git && cp -a '$RD/$b-$COUNT.git' repo.git" \
				"$g -C \"\$R/repo.git\" update-ref --stdin <'$RD/create-new-$NEW.in'" ||
				failed=1
		done
	done
	for v in $BENCH_VARIANTS
	do
		g=$(bench_git "$v")
		bench_case s4 "reftable: recreate $TOMB deleted refs (tombstones)" "$fs" "$v" \
			"rm -rf repo.git && cp -a '$RD/reftable-$TOMB-tomb.git' repo.git" \
			"$g -C \"\$R/repo.git\" update-ref --stdin <'$RD/create-branch-$TOMB.in'" ||
			failed=1
	done
done

bench_table s4 "### update-ref --stdin with many refs"
cat <<EOF
Wall time: median (min–max) of $REPS runs; the repository is copied into
place (and latencyfs remounted) before each run. Ratios: each stock Git's
median / nfsgit's (above 1: nfsgit is faster). Existing refs are
refs/heads/branch-NNNNNN (packed), new ones refs/heads/new-NNNNN, all at
one commit. Round trips: total delayed requests (latencyfs "round_trips");
by type below (median over the runs; "neg" = negative lookups).

EOF
exit $failed
