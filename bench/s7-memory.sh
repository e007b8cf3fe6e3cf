#!/bin/bash
# bench/s7-memory.sh: peak memory (maximum resident set size, from
# /usr/bin/time -v) of receiving a large pack: stock Git at the base,
# Debian stable's Git and nfsgit:
#   index-pack, empty    git index-pack --stdin <many.pack in an empty
#                        bare repository
#   index-pack, loose    the same into a bare repository with 256 x 10
#                        loose objects, so that every received object's
#                        collision check is deferred and looked for among
#                        the loose objects (the network path)
#   clone --no-local     git clone --bare --no-local of the repository
#                        (upload-pack, pack-objects and index-pack; the
#                        peak is that of the largest process)
#
#   bench/s7-memory.sh [--stock GIT] [--stable GIT] [--nfsgit GIT]
#                      [--delay-us N]... [--local] [--quick] [--reps N]
#                      [--out FILE] [--files N]
#
# The data is bench-data/many/N.git (make-data many N; N = 200000 files,
# about 350 000 objects; --quick 50000). Each case runs --reps times
# (default 3, --quick 1) on latencyfs at each --delay-us (default 0: the
# mount makes the binaries take their network-filesystem paths, and the
# delay does not change what is allocated) and, with --local, on the local
# disk. The table gives the median peak RSS of each binary and nfsgit's
# over each stock Git's; issue 15's bound is 1.10 (against the base).
# Wall times are printed for information only (one run, a shared machine).
set -eu
. "$(dirname "$0")/lib.sh"
files=
args=()
while test $# -gt 0
do
	case $1 in
	--files) files=$2; shift ;;
	--reps) args+=("$1" "$2"); shift ;;
	*) args+=("$1") ;;
	esac
	shift
done
case " ${args[*]:-} " in
*" --delay-us "*) ;;
*) args+=(--delay-us 0) ;;
esac
case " ${args[*]:-} " in
*" --reps "*) ;;
*" --quick "*) args+=(--reps 1) ;;
*) args+=(--reps 3) ;;
esac
bench_parse_args "${args[@]}"
if test -z "$files"
then
	if test -n "$QUICK"; then files=50000; else files=200000; fi
fi
"$BENCH_DIR/make-data" many "$files"
bench_init
SRC=$BENCH_DATA/many/$files.git
PACK=$BENCH_DATA/packs/many-$files.pack
objects=$(cat "$BENCH_DATA/packs/many-$files.count")
records=$BENCH_WORK/rss.txt
: >"$records"

# measure CASE FS VARIANT GIT SETUP COMMAND: run SETUP in $B (latencyfs
# unmounted), then COMMAND in $R under /usr/bin/time -v; append
# "CASE|FS|VARIANT|KB|SECONDS" to $records.
measure () {
	local case=$1 fs=$2 variant=$3 setup=$4 cmd=$5 tv i kb s

	case $fs in
	lfs:*) B=$BACKING R=$MNT ;;
	local) B=$LOCAL R=$LOCAL ;;
	esac
	export B R
	for i in $(seq "$REPS")
	do
		mountpoint -q "$MNT" && lfs_umount
		(cd "$B" && eval "$setup") || bench_die "setup failed: $setup"
		case $fs in lfs:*) lfs_mount "${fs#lfs:}" ;; esac
		tv=$BENCH_WORK/time.$$.$i
		{
			echo "### $case | $fs | $variant | run $i"
			echo "### command: $cmd"
		} >>"$BENCH_LOG"
		if ! /usr/bin/time -v -o "$tv" sh -c "$cmd" >>"$BENCH_LOG" 2>&1
		then
			cat "$tv" >>"$BENCH_LOG"
			bench_die "$case ($variant) failed, see $BENCH_LOG"
		fi
		cat "$tv" >>"$BENCH_LOG"
		kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tv")
		s=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tv")
		echo "$case|$fs|$variant|$kb|$s" >>"$records"
		bench_say "  $case | $fs | $variant | run $i: $kb kB, $s"
	done
	mountpoint -q "$MNT" && lfs_umount
	return 0
}

# bench_rm_new_packs and a fresh bare repository, in $B
fresh_repo () {
	rm -rf "$B/repo.git" "$B/clone.git"
	"$SETUP_GIT" init -q --bare "$B/repo.git"
	"$SETUP_GIT" -C "$B/repo.git" config gc.auto 0
	if test "$1" != 0
	then
		"$BENCH_DIR/make-data" loose --fake "$1" "$B/repo.git/objects"
	fi
}
export -f fresh_repo
export SETUP_GIT BENCH_DIR

for fs in $(bench_fs_list)
do
	case $fs in
	local) src=$LOCAL/src.git ;;
	*) src=$BACKING/src.git ;;
	esac
	cp -a "$SRC" "$src"
	case $fs in lfs:*) src=$MNT/src.git ;; esac
	for v in $BENCH_VARIANTS
	do
		g=$(bench_git "$v")
		l=$(bench_label "$v")
		bench_say "s7: $l on $fs"
		measure "index-pack, empty" "$fs" "$l" 'fresh_repo 0' \
			"cd \"\$R/repo.git\" && $g index-pack --stdin <'$PACK' >/dev/null"
		measure "index-pack, 256 x 10 loose" "$fs" "$l" 'fresh_repo 10' \
			"cd \"\$R/repo.git\" && $g index-pack --stdin <'$PACK' >/dev/null"
		measure "clone --bare --no-local" "$fs" "$l" 'rm -rf clone.git' \
			"$g clone -q --bare --no-local '$src' \"\$R/clone.git\""
	done
	case $fs in
	local) rm -rf "$LOCAL/src.git" "$LOCAL/repo.git" "$LOCAL/clone.git" ;;
	*) rm -rf "$BACKING/src.git" "$BACKING/repo.git" "$BACKING/clone.git" ;;
	esac
done

# the table: median peak RSS per case, fs and binary; the labels of the
# variants follow the other arguments, in column order, nfsgit last
labels=()
for v in $BENCH_VARIANTS
do
	labels+=("$(bench_label "$v")")
done
"$PYTHON" - "$records" "$objects" "$files" "$REPS" "${labels[@]}" <<'EOF'
import statistics, sys
path, objects, files, reps = sys.argv[1:5]
variants = sys.argv[5:]
peers, new = variants[:-1], variants[-1]
rows = {}
order = []
for line in open(path):
    case, fs, variant, kb, secs = line.rstrip("\n").split("|")
    key = (case, fs)
    if key not in rows:
        rows[key] = {}
        order.append(key)
    rows[key].setdefault(variant, []).append((int(kb), secs))
print("### Peak memory: %s objects (%s files, 3 commits), %s run(s) per cell"
      % (objects, files, reps))
print()
head = ["case", "fs"]
head += ["%s peak RSS" % v for v in variants]
head += ["%s / %s" % (new, p) for p in peers]
head.append("wall (%s, last run)" % " / ".join(variants))
print("| " + " | ".join(head) + " |")
print("|" + "|".join(" --- " for _ in head) + "|")
for key in order:
    cell = rows[key]
    med = {v: statistics.median(k for k, _ in cell[v]) for v in cell}
    row = list(key)
    row += ["%.1f MiB" % (med[v] / 1024) if v in med else "—"
            for v in variants]
    row += ["%.3f" % (med[new] / med[p]) if new in med and p in med else "—"
            for p in peers]
    row.append(" / ".join(cell[v][-1][1] if v in cell else "—"
                          for v in variants))
    print("| " + " | ".join(row) + " |")
EOF
