#!/bin/bash
# bench/s6-writer.sh: the checkout part of nfsgit's clone against a writer
# that does nothing but create the same files (bench/writer.c: one mkdir
# per directory, an O_EXCL create, the writes and a close per file, from
# 64 threads), on the same latencyfs mount. Issue 6 asks for the checkout
# part of a clone within 1.5x of the interleaved writer.
#
#   bench/s6-writer.sh [--nfsgit GIT] [--delay-us N]... [--reps N]
#                      [--quick] [--repo medium|linux]
#
# The writer copies the tree of HEAD, unpacked once on the local disk, in
# the order of the index and interleaved across directories (largest
# first). The checkout part of a clone is the time from the start of its
# unpack_trees region to the end of its do_write_index region (trace2):
# making the leading directories, writing and removing files, workers
# included, and the new index. Before every run the destination is
# removed and latencyfs remounted. Prints a markdown table.
set -eu
. "$(dirname "$0")/lib.sh"
bench_parse_args "$@"
bench_repo_arg s6
"$BENCH_DIR/make-data" $REPO
bench_init

WRITER=$TOP/build/bench-writer
if ! test -x "$WRITER" || test "$BENCH_DIR/writer.c" -nt "$WRITER"
then
	${CC:-cc} -O2 -Wall -pthread -o "$WRITER" "$BENCH_DIR/writer.c" ||
		bench_die "cannot build $WRITER"
fi
SRC=$LOCAL/src
mkdir -p "$SRC"
"$SETUP_GIT" -C "$BENCH_DATA/$REPO.git" archive HEAD | tar -x -C "$SRC" ||
	bench_die "cannot unpack HEAD of $REPO.git"
files=$("$SETUP_GIT" -C "$BENCH_DATA/$REPO.git" ls-tree -r HEAD | wc -l)

# run1 DELAY NAME COMMAND: one run on a fresh mount; appends
# "NAME SECONDS ROUND_TRIPS" to $BENCH_WORK/runs. COMMAND prints the
# seconds to count (or nothing: the wall time of COMMAND is used).
run1 () {
	local delay=$1 name=$2 cmd=$3 t0 t1 secs

	lfs_umount
	rm -rf "$BACKING/dst" "$BACKING/clone" "$BENCH_WORK/trace.json"
	lfs_mount "$delay"
	lfs_reset
	t0=$(date +%s%N)
	secs=$(cd "$MNT" && eval "$cmd") || bench_die "failed: $cmd"
	t1=$(date +%s%N)
	test -n "$secs" || secs=$(echo "$t0 $t1" | awk '{ printf "%.3f", ($2 - $1) / 1e9 }')
	echo "$name $secs $(lfs_stats | awk '$1 == "round_trips" { print $2 }')" \
		>>"$BENCH_WORK/runs"
	bench_say "s6 | $name | lfs:$delay | $secs s"
}

# the checkout part of the clone traced in $BENCH_WORK/trace.json
checkout_part () {
	"$PYTHON" - "$BENCH_WORK/trace.json" <<-\EOF
	import datetime, json, sys
	start = end = None
	for line in open(sys.argv[1]):
	    e = json.loads(line)
	    if "/" in e["sid"] or e["event"] not in ("region_enter", "region_leave"):
	        continue
	    t = datetime.datetime.strptime(e["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
	    if e["event"] == "region_enter" and e["label"] == "unpack_trees" and not start:
	        start = t
	    if e["event"] == "region_leave" and e["label"] == "do_write_index" and start:
	        end = t
	print("%.3f" % (end - start).total_seconds())
	EOF
}

echo "### The checkout part of nfsgit's clone against a bare writer ($REPO repository)"
echo
echo "| case | round trip | $files files: median (min–max) | round trips |"
echo "|---|---|---|---|"
for delay in $DELAYS
do
	: >"$BENCH_WORK/runs"
	for _ in $(seq "$REPS")
	do
		run1 "$delay" "writer-index" "'$WRITER' -o index '$SRC' dst"
		run1 "$delay" "writer-interleaved" "'$WRITER' -o interleaved '$SRC' dst"
		run1 "$delay" "clone" \
			"GIT_TRACE2_EVENT='$BENCH_WORK/trace.json' '$NFSGIT' clone -q --no-local 'file://$BENCH_DATA/$REPO.git' clone >/dev/null"
		echo "clone-checkout $(checkout_part) -" >>"$BENCH_WORK/runs"
	done
	"$PYTHON" - "$BENCH_WORK/runs" "$delay" <<-\EOF
	import statistics, sys
	runs = {}
	for line in open(sys.argv[1]):
	    name, secs, rt = line.split()
	    runs.setdefault(name, []).append((float(secs), rt))
	label = {"writer-index": "writer, 64 threads, index order",
	         "writer-interleaved": "writer, 64 threads, interleaved",
	         "clone": "nfsgit clone --no-local, whole",
	         "clone-checkout": "nfsgit clone, checkout part"}
	med = {}
	for name in label:
	    secs = sorted(s for s, _ in runs[name])
	    med[name] = statistics.median(secs)
	    rts = sorted(int(r) for _, r in runs[name] if r != "-")
	    print("| %s | %s µs | %.2f s (%.2f–%.2f) | %s |" % (
	        label[name], sys.argv[2], med[name], secs[0], secs[-1],
	        statistics.median(rts) if rts else "—"))
	print("| checkout part / interleaved writer | %s µs | %.2f× | |" % (
	    sys.argv[2], med["clone-checkout"] / med["writer-interleaved"]))
	EOF
done
