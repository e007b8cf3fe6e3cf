#!/bin/bash
# bench/s11-add-many.sh: the CPU time of "git add ." of many new small
# files, stock Git at the base against nfsgit, in network mode: each
# file's blob goes through nfsgit's ODB transaction that packs blobs, so
# a cost per blob that grows with the number of blobs written before it
# (a search of the transaction's list) shows as user time growing faster
# than the number of files.
#
#   bench/s11-add-many.sh [--files N] [--reps N] [--stock GIT]
#                         [--nfsgit GIT] [--also LABEL=GIT]...
#
# It makes N files (default 160000; 1000 a directory, each holding its
# own number, so every blob is new) on the local disk, in
# build/bench-tmp.s11.* (removed on exit), then, for each Git, --reps
# times (default 3): removes .git, runs "git init" (with the setup Git)
# and times "git add ." with /usr/bin/time. GIT_TEST_NETFS=1 tells
# nfsgit that the repository is on a network filesystem, so it takes
# the paths it takes on NFS (stock ignores the variable): this measures
# CPU, not round trips (bench/s10 counts those on latencyfs). --also
# adds another Git to the table, e.g. an older nfsgit tree's
# bin-wrappers/git:
#
#   bench/s11-add-many.sh --files 80000 \
#           --also before=build/git/bin-wrappers/git
#
# Prints a markdown table: the median (by user+sys) of each Git's runs,
# user, sys, user+sys and wall seconds, user+sys against stock's, and
# where that run left the objects (count-objects: loose / in packs).
# Needs no root, no latencyfs and no hyperfine; about 3 minutes at the
# default size on two cores (stock and nfsgit), more with --also.
set -eu
. "$(dirname "$0")/lib.sh"

files=160000
reps=3
stock=$TOP/build/stock-install/bin/git
nfsgit=$TOP/build/install/bin/git
also=()
while test $# -gt 0
do
	case $1 in
	--files) files=$2; shift ;;
	--reps) reps=$2; shift ;;
	--stock) stock=$2; shift ;;
	--nfsgit) nfsgit=$2; shift ;;
	--also)
		case $2 in
		?*=?*) also+=("$2") ;;
		*) bench_die "--also wants LABEL=GIT, not '$2'" ;;
		esac
		shift ;;
	-h|--help)
		sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
		exit 0 ;;
	*) bench_die "unknown option '$1'" ;;
	esac
	shift
done
case $files$reps in
*[!0-9]*) bench_die "--files and --reps want numbers" ;;
esac
test -x /usr/bin/time || bench_die "no /usr/bin/time"
test -x "$SETUP_GIT" || bench_die "no setup git at '$SETUP_GIT' (make stock)"

labels=()
gits=()
add_git () {
	local dir

	test -x "$2" || bench_die "no git binary at '$2'"
	dir=$(cd "$(dirname "$2")" && pwd) || bench_die "no directory of '$2'"
	labels+=("$1")
	gits+=("$dir/$(basename "$2")")
}
add_git "stock $(bench_version "$stock")" "$stock"
add_git nfsgit "$nfsgit"
for a in "${also[@]}"
do
	add_git "${a%%=*}" "${a#*=}"
done

WORK=$(mktemp -d "$TOP/build/bench-tmp.s11.XXXXXX") ||
	bench_die "cannot create a work directory"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM HUP
W=$WORK/tree

bench_say "making $files files in $W"
mkdir -p "$W"
(
	cd "$W" &&
	seq 0 $(((files - 1) / 1000)) | sed 's/^/d/' | xargs mkdir &&
	awk -v n="$files" 'BEGIN {
		for (i = 0; i < n; i++) {
			f = sprintf("d%d/f%d", int(i / 1000), i)
			print "file " i > f
			close(f)
		}
	}'
) || bench_die "cannot make the files"

# run_add GIT OUT: one timed "git add ." in a new repository; appends
# "user sys wall loose/packed" to OUT
run_add () {
	local git=$1 out=$2 t=$WORK/time n

	rm -rf "$W/.git"
	"$SETUP_GIT" init -q "$W" || bench_die "git init failed"
	(
		cd "$W" &&
		GIT_TEST_NETFS=1 /usr/bin/time -f '%U %S %e' -o "$t" \
			"$git" add .
	) || bench_die "'$git add .' failed"
	n=$("$git" -C "$W" ls-files | wc -l)
	test "$n" -eq "$files" ||
		bench_die "'$git add .' added $n files, not $files"
	# where the blobs went: loose, or into packs
	"$SETUP_GIT" -C "$W" count-objects -v >"$WORK/counts"
	printf '%s %s/%s\n' "$(cat "$t")" \
		"$(sed -n 's/^count: //p' "$WORK/counts")" \
		"$(sed -n 's/^in-pack: //p' "$WORK/counts")" >>"$out"
}

for i in "${!gits[@]}"
do
	bench_say "${labels[$i]}: git add . of $files files, $reps runs"
	: >"$WORK/runs.$i"
	for _ in $(seq "$reps")
	do
		run_add "${gits[$i]}" "$WORK/runs.$i"
	done
done

echo
echo "\`git add .\` of $files new small files, local disk, GIT_TEST_NETFS=1;"
echo "median of $reps runs by user+sys (seconds)"
echo
echo "| git | user | sys | user+sys | wall | user+sys / stock | objects loose/packed |"
echo "|---|---:|---:|---:|---:|---:|---:|"
base=
for i in "${!gits[@]}"
do
	# the median run by user+sys
	line=$(awk '{ printf "%.2f %s %s %s %s\n", $1 + $2, $1, $2, $3, $4 }' \
		"$WORK/runs.$i" | sort -n | sed -n "$(((reps + 1) / 2))p")
	set -- $line
	test -n "$base" || base=$1
	echo "| ${labels[$i]} | $2 | $3 | $1 | $4 |" \
		"$(awk -v a="$1" -v b="$base" \
			'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }') |" \
		"$5 |"
done
