#!/bin/bash
# bench/s1-index-pack.sh: receive a pack with "git index-pack --stdin" into
# a bare repository whose objects/ holds 256 x N loose objects, on
# latencyfs: stock Git at the base, Debian stable's Git and nfsgit (and
# nfsgit with core.checkCollisions=false).
#
#   bench/s1-index-pack.sh [--stock GIT] [--stable GIT] [--nfsgit GIT]
#                          [--delay-us N]... [--local] [--quick] [--reps N]
#                          [--out FILE]
#
# N = 0 1 10 100 250 500 750 1000 (--quick: 0 10 1000). The loose objects
# are fake (make-data loose --fake): names that look like object names, made
# in the backing directory before latencyfs is mounted. The packs are
# bench-data/packs/small.pack (~400 objects) and medium.pack (every object
# of the medium repository). Before every run the packs index-pack wrote
# are removed and latencyfs is remounted (cold caches). Index-pack checks
# every received object for a collision with an existing object; the
# table shows what that costs per object in negative lookups.
set -eu
. "$(dirname "$0")/lib.sh"
bench_parse_args "$@"
"$BENCH_DIR/make-data" medium
bench_init

if test -n "$QUICK"
then
	NS="0 10 1000"
else
	NS="0 1 10 100 250 500 750 1000"
fi
NS=${S1_NS:-$NS}		# override for development: S1_NS="0 10"
FS_LIST=$(bench_fs_list)

NOCC="nfsgit checkCollisions=false"
variants=() gits=()
for v in $BENCH_VARIANTS
do
	variants+=("$v")
	gits+=("$(bench_git "$v")")
done
variants+=("$NOCC")
gits+=("$NFSGIT -c core.checkCollisions=false")
knob_note=
if ! grep -q -i checkcollisions "$NFSGIT"
then
	knob_note="core.checkCollisions is not known to this nfsgit build ($("$NFSGIT" version)); git ignores unknown keys, so the \"$NOCC\" column runs plain nfsgit."
fi

# make_repo DIR N: a bare repository with 256 x N fake loose objects
make_repo () {
	rm -rf "$1"
	"$SETUP_GIT" init -q --bare "$1"
	"$SETUP_GIT" -C "$1" config gc.auto 0
	"$BENCH_DIR/make-data" loose --fake "$2" "$1/objects"
}

failed=0
for n in $NS
do
	bench_say "s1: making 256 x $n loose objects"
	made_local=
	for fs in $FS_LIST
	do
		case $fs in
		local)
			test -n "$made_local" || make_repo "$LOCAL/repo.git" "$n"
			made_local=1 ;;
		*)
			test -d "$BACKING/repo.git" || make_repo "$BACKING/repo.git" "$n" ;;
		esac
	done
	for pack in small medium
	do
		objects=$(cat "$BENCH_DATA/packs/$pack.count")
		for fs in $FS_LIST
		do
			for i in "${!variants[@]}"
			do
				bench_case s1 "N=$n, $pack pack ($objects objects)" "$fs" "${variants[$i]}" \
					'bench_rm_new_packs repo.git/objects' \
					"cd \"\$R/repo.git\" && ${gits[$i]} index-pack --stdin <'$BENCH_DATA/packs/$pack.pack' >/dev/null" \
					"$objects" || failed=1
			done
		done
	done
	rm -rf "$BACKING/repo.git" "$LOCAL/repo.git"
done

bench_table s1 "### index-pack --stdin into a repository with 256 × N loose objects" --per-object
cat <<EOF
Wall time: median (min–max) of $REPS runs, latencyfs remounted before each
run. Ratios: each stock Git's median / each nfsgit variant's median (above
1: nfsgit is faster). Round trips: total delayed requests (latencyfs
"round_trips"); by type below (median over the runs; "neg" = negative
lookups, a subset of "lookup"). Negative lookups per object = neg / objects
in the pack.

EOF
if test -n "$knob_note"
then
	printf 'Note: %s\n\n' "$knob_note"
fi
exit $failed
