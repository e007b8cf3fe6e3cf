#!/bin/bash
# bench/s3-checkout.sh: git checkout on latencyfs, stock Git at the base,
# Debian stable's Git and nfsgit, with the default configuration,
# checkout.workers=1 and checkout.workers=32:
#   Checkout I    distant trees: v2.39.5 -> v2.47.3 (2.3 k files change)
#   Checkout II   near trees: v2.47.3 -> near (40 files change)
#   checkout -f   at near, after deleting 10, 100, 1000 files (picked with
#                 a fixed seed), which checkout -f writes again
#
#   bench/s3-checkout.sh [--stock GIT] [--stable GIT] [--nfsgit GIT]
#                        [--delay-us N]... [--local] [--quick] [--reps N]
#                        [--out FILE] [--repo medium|linux]
#
# --repo linux: Checkout I is v6.1 -> v6.12 and Checkout II v6.12 -> near
# in bench-data/linux.git (the checkout -f cases are left out; each work
# tree is about 1.3 GB, and the pool holds variants x reps of them).
#
# Every run starts from its own fresh work tree: before the runs of a case
# and configuration, a pool of work trees is checked out in the backing directory (latencyfs
# unmounted), then, a second later, their indexes are refreshed and written
# again, so that no entry is racily clean (as in a work tree that was not
# just written); the prepare step of each run moves the next one into
# place. --quick leaves out the 100-file case.
set -eu
. "$(dirname "$0")/lib.sh"
bench_parse_args "$@"
bench_repo_arg s3
"$BENCH_DIR/make-data" $REPO
bench_init

G=$SETUP_GIT
CASES="I II del10 del100 del1000"
if test -n "$QUICK"
then
	CASES="I II del10 del1000"
fi
# Checkout I goes from OLD to NEW, Checkout II from NEW to near
OLD=v2.39.5 NEW=v2.47.3
if test $REPO = linux
then
	CASES="I II" OLD=v6.1 NEW=v6.12
fi
CASES=${S3_CASES:-$CASES}	# override for development
if test $REPO = linux
then
	WORKERS=${S3_WORKERS:-"default 32"}
else
	WORKERS=${S3_WORKERS:-"default 1 32"}
fi
POOL_SIZE=$(($(echo "$BENCH_VARIANTS" | wc -w) * REPS))	# variants x runs

# the files to delete, by a fixed seed, one list per count
"$G" -C "$BENCH_DATA/$REPO.git" ls-tree -r --name-only near |
"$PYTHON" -c '
import random, sys
paths = sorted(l.rstrip("\n") for l in sys.stdin)
for n in (10, 100, 1000):
    with open(sys.argv[1] + "/delete-%d" % n, "w") as f:
        f.write("\n".join(random.Random(42).sample(paths, n)) + "\n")
' "$BENCH_WORK"

# prep_pool DIR START [DELETE_LIST]: POOL_SIZE work trees at START
prep_pool () {
	local dir=$1 start=$2 list=${3:-} k

	rm -rf "$dir/pool" "$dir/wt"
	mkdir -p "$dir/pool"
	if ! test -d "$dir/template.git"
	then
		"$G" clone -q --no-checkout "$BENCH_DATA/$REPO.git" "$dir/template" &&
		mv "$dir/template/.git" "$dir/template.git" && rmdir "$dir/template"
	fi
	for k in $(seq $POOL_SIZE)
	do
		mkdir "$dir/pool/$k"
		cp -a "$dir/template.git" "$dir/pool/$k/.git"
		"$G" -C "$dir/pool/$k" checkout -q --detach "$start"
	done
	sleep 1
	for k in $(seq $POOL_SIZE)
	do
		"$G" -C "$dir/pool/$k" update-index -q --refresh --force-write-index
		if test -n "$list"
		then
			(cd "$dir/pool/$k" && xargs rm -f <"$list")
		fi
	done
}

failed=0
for fs in $(bench_fs_list)
do
	case $fs in
	local) dir=$LOCAL ;;
	*) dir=$BACKING ;;
	esac
	for c in $CASES
	do
		list=
		case $c in
		I)
			start=$OLD label="Checkout I: $OLD → $NEW"
			args="checkout -q $NEW" ;;
		II)
			start=$NEW label="Checkout II: $NEW → near"
			args="checkout -q near" ;;
		del*)
			n=${c#del} start=near label="checkout -f, $n files deleted"
			list=$BENCH_WORK/delete-$n
			args="checkout -q -f" ;;
		esac
		for w in $WORKERS
		do
			case $w in
			default) conf='' wl="default config" ;;
			*) conf="-c checkout.workers=$w" wl="workers=$w" ;;
			esac
			bench_say "s3: preparing $POOL_SIZE work trees for $c, $wl on $fs"
			prep_pool "$dir" "$start" "$list"
			for v in $BENCH_VARIANTS
			do
				g=$(bench_git "$v")
				bench_case s3 "$label, $wl" "$fs" "$v" \
					'bench_pool_next pool wt' \
					"cd \"\$R/wt\" && $g $conf $args" ||
					failed=1
			done
		done
		rm -rf "$dir/pool" "$dir/wt"
	done
done

bench_table s3 "### checkout ($REPO repository)"
cat <<EOF
Wall time: median (min–max) of $REPS runs, each on a fresh work tree,
latencyfs remounted before each run. Ratios: each stock Git's median /
nfsgit's (above 1: nfsgit is faster). Parallel checkout only starts at
checkout.thresholdForParallelism (default 100; nfsgit's default,
checkout.workers=auto, makes it 25 on a network filesystem) changed files,
so workers=32 runs sequentially in the small cases. Round trips: total
delayed requests (latencyfs "round_trips"); by type below (median over the
runs; "neg" = negative lookups).

EOF
exit $failed
