#!/bin/bash
# bench/s5-small-push.sh: a small push (~400 objects) into a repository
# with 256 x 1000 loose objects, on latencyfs: stock Git at the base,
# Debian stable's Git and nfsgit:
#   index-pack   git index-pack --stdin <small.pack in the repository
#   git push     a real push over file:// (receive-pack, index-pack
#                --fix-thin, connectivity check, ref update)
#
#   bench/s5-small-push.sh [--stock GIT] [--stable GIT] [--nfsgit GIT]
#                          [--delay-us N]... [--local] [--quick] [--reps N]
#                          [--out FILE]
#
# The receiving repository is bench-data/push-remote.git (the medium
# repository up to "near", packed; receive.autogc off so that no gc runs)
# plus 256000 valid loose blobs (make-data loose --real: about 1000 per
# fan-out directory), made in the backing directory before latencyfs is
# mounted. The push sends near..push400 (399 objects) from bench-data/
# medium.git on the local disk; both ends are the binary under test (git
# runs receive-pack from its own exec path). Before every run the new packs
# and the pushed ref are removed. --local adds the same on the local disk
# (making 256 k files there takes a minute).
set -eu
. "$(dirname "$0")/lib.sh"
bench_parse_args "$@"
"$BENCH_DIR/make-data" medium
bench_init

LOOSE=${S5_LOOSE:-256000}	# override for development
objects=$(cat "$BENCH_DATA/packs/small.count")

failed=0
for fs in $(bench_fs_list)
do
	case $fs in
	local) dir=$LOCAL ;;
	*) dir=$BACKING ;;
	esac
	if ! test -d "$dir/remote.git"
	then
		bench_say "s5: making the receiving repository with $LOOSE loose objects in $dir"
		cp -a "$BENCH_DATA/push-remote.git" "$dir/remote.git"
		"$BENCH_DIR/make-data" loose --real "$LOOSE" "$dir/remote.git/objects"
		ls "$dir/remote.git/objects/pack" >"$dir/keep-packs"
	fi
	for v in $BENCH_VARIANTS
	do
		g=$(bench_git "$v")
		bench_case s5 "index-pack --stdin, $objects objects" "$fs" "$v" \
			'bench_rm_new_packs remote.git/objects keep-packs' \
			"cd \"\$R/remote.git\" && $g index-pack --stdin <'$BENCH_DATA/packs/small.pack' >/dev/null" \
			"$objects" || failed=1
	done
	for v in $BENCH_VARIANTS
	do
		g=$(bench_git "$v")
		bench_case s5 "git push file://, $objects objects" "$fs" "$v" \
			'bench_rm_new_packs remote.git/objects keep-packs && rm -f remote.git/refs/heads/topic' \
			"$g -C '$BENCH_DATA/medium.git' push -q \"file://\$R/remote.git\" refs/tags/push400:refs/heads/topic" \
			"$objects" || failed=1
	done
done

bench_table s5 "### small push into a repository with 256 × 1000 loose objects" --per-object
cat <<EOF
Wall time: median (min–max) of $REPS runs; new packs and the pushed ref are
removed and latencyfs remounted before each run. Ratios: each stock Git's
median / nfsgit's (above 1: nfsgit is faster). Round trips: total delayed
requests (latencyfs "round_trips"); by type below (median over the runs;
"neg" = negative lookups). Negative lookups per object = neg / $objects.

EOF
exit $failed
