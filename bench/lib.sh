# shellcheck shell=bash
# bench/lib.sh: shared helpers of the side-by-side benchmarks on the
# simulated NFS mount tools/latencyfs: nfsgit against its two peers, stock
# Git at the base of the series (build/stock-install) and Debian stable's
# Git (build/stable-install), both from "make stock".
#
#   . "$(dirname "$0")/lib.sh"          from a bench/ script (bash)
#   bash bench/lib.sh --prepare         hyperfine's --prepare step (internal)
#
# What it provides:
#   bench_init            a work area: a tmpfs at $BACKING (the latencyfs
#                         backing directory), the mount point $MNT and a
#                         local-disk directory $LOCAL; removed on exit (trap)
#   lfs_mount DELAY_US    mount latencyfs $BACKING on $MNT; lfs_umount
#   lfs_reset, lfs_stats  reset / print the request counters of the mount
#   bench_case ...        time one command REPS times with hyperfine, the
#                         mount remounted (cold kernel caches) and the
#                         data set up again before every run, and append one
#                         JSON record (times, median request counts) to
#                         $BENCH_OUT
#   bench_table ...       print the markdown table of records (tables.py)
#   bench_parse_args      the options every scenario takes (see below)
#   $BENCH_VARIANTS       the variant ids every scenario runs, in table
#                         order: stock stable nfsgit
#   bench_git VARIANT     the binary of a variant id
#   bench_label VARIANT   its label in the tables: "stock VERSION" for
#                         the peers (from "git version"), "nfsgit"
#
# Scenario options (bench_parse_args):
#   --stock GIT                stock Git at the base of the series (default
#                              build/stock-install/bin/git)
#   --stable GIT               Debian stable's Git (default build/stable-
#                              install/bin/git), or an earlier nfsgit to
#                              compare with (labelled "before: ...")
#   --nfsgit GIT               nfsgit (default build/install/bin/git)
#   --delay-us N               simulated round trip; repeatable (default 500)
#   --local                    also run on the local disk where the scenario
#                              has a local case
#   --local-only               only on the local disk (no latencyfs run)
#   --nfsgit-first             run nfsgit before the stock Gits (on the
#                              local disk the Git that runs later is slower:
#                              the disk is still busy with the runs before)
#   --quick                    CI-sized: fewer cases and repetitions
#   --reps N                   runs per measurement (default 5, quick 2)
#   --out FILE                 append the JSON records here (default: a
#                              file in the work area)

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(dirname "$BENCH_DIR")
LATENCYFS=${LATENCYFS:-$TOP/build/latencyfs/latencyfs}
BENCH_DATA=${BENCH_DATA:-$TOP/build/bench-data}
BENCH_RESULTS=${BENCH_RESULTS:-$TOP/build/bench-results}
# git used to build data and reset state between runs (never measured)
SETUP_GIT=${SETUP_GIT:-$TOP/build/stock-install/bin/git}
if test -x /usr/bin/python3
then
	PYTHON=${PYTHON:-/usr/bin/python3}
else
	PYTHON=${PYTHON:-python3}
fi
export BENCH_DIR TOP LATENCYFS BENCH_DATA BENCH_RESULTS SETUP_GIT PYTHON

# Fixed identity and dates for everything the benchmarks create.
export GIT_AUTHOR_NAME="nfsgit bench" GIT_AUTHOR_EMAIL="bench@nfsgit.invalid"
export GIT_COMMITTER_NAME="nfsgit bench" GIT_COMMITTER_EMAIL="bench@nfsgit.invalid"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_TERMINAL_PROMPT=0 GIT_ADVICE=0 LC_ALL=C TZ=UTC

bench_die () {
	echo >&2 "bench: $*"
	exit 1
}

bench_say () {
	echo >&2 "[$(date +%H:%M:%S)] $*"
}

# The variants every scenario compares, in the order of the table columns.
# tables.py takes every variant whose label starts with "stock" for a peer
# and gives the ratio of each peer to each other variant.
export BENCH_VARIANTS="stock stable nfsgit"

# The options every scenario takes; sets STOCK, STABLE, NFSGIT (and their
# labels STOCK_LABEL, STABLE_LABEL), DELAYS, LOCAL_DISK, QUICK, REPS,
# BENCH_OUT. Unknown options are left in EXTRA_ARGS.
bench_parse_args () {
	STOCK=$TOP/build/stock-install/bin/git
	STABLE=$TOP/build/stable-install/bin/git
	NFSGIT=$TOP/build/install/bin/git
	DELAYS=
	LOCAL_DISK=
	LOCAL_ONLY=
	QUICK=
	REPS=
	BENCH_OUT=
	EXTRA_ARGS=()
	while test $# -gt 0
	do
		case $1 in
		--stock) STOCK=$2; shift ;;
		--stable) STABLE=$2; shift ;;
		--nfsgit) NFSGIT=$2; shift ;;
		--delay-us) DELAYS="$DELAYS $2"; shift ;;
		--local) LOCAL_DISK=1 ;;
		--local-only) LOCAL_DISK=1 LOCAL_ONLY=1 ;;
		--nfsgit-first) BENCH_VARIANTS="nfsgit stock stable" ;;
		--quick) QUICK=1 ;;
		--reps) REPS=$2; shift ;;
		--out) BENCH_OUT=$2; shift ;;
		-h|--help)
			sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
			exit 0 ;;
		*) EXTRA_ARGS+=("$1") ;;
		esac
		shift
	done
	if test -n "$LOCAL_ONLY"
	then
		DELAYS=
	else
		DELAYS=${DELAYS:-500}
	fi
	if test -z "$REPS"
	then
		if test -n "$QUICK"; then REPS=2; else REPS=5; fi
	fi
	for g in "$STOCK" "$STABLE" "$NFSGIT"
	do
		test -x "$g" || bench_die "no git binary at '$g' (make, make stock)"
	done
	test -x "$LATENCYFS" || bench_die "no latencyfs at '$LATENCYFS' (make -C tools/latencyfs)"
	test -x "$SETUP_GIT" || bench_die "no setup git at '$SETUP_GIT' (make stock)"
	command -v hyperfine >/dev/null || bench_die "hyperfine not installed"
	STOCK=$(cd "$(dirname "$STOCK")" && pwd)/$(basename "$STOCK")
	STABLE=$(cd "$(dirname "$STABLE")" && pwd)/$(basename "$STABLE")
	NFSGIT=$(cd "$(dirname "$NFSGIT")" && pwd)/$(basename "$NFSGIT")
	STOCK_LABEL="stock $(bench_version "$STOCK")"
	STABLE_LABEL="stock $(bench_version "$STABLE")"
	if test "$STABLE_LABEL" = "$STOCK_LABEL"
	then
		STABLE_LABEL="$STABLE_LABEL (stable)"
	fi
	# another nfsgit in the stable column (--stable, e.g. the series
	# before a change): name it as one
	case $STABLE_LABEL in
	*nfsgit*) STABLE_LABEL="before: ${STABLE_LABEL#stock }" ;;
	esac
	export STOCK STABLE NFSGIT STOCK_LABEL STABLE_LABEL QUICK REPS
}

# bench_version GIT: the version GIT reports ("2.55.0")
bench_version () {
	local v

	v=$("$1" version) || bench_die "cannot run '$1 version'"
	echo "${v#git version }"
}

# bench_git VARIANT: the binary of a variant id (stock, stable, nfsgit)
bench_git () {
	case $1 in
	stock) echo "$STOCK" ;;
	stable) echo "$STABLE" ;;
	nfsgit) echo "$NFSGIT" ;;
	*) bench_die "unknown variant '$1'" ;;
	esac
}

# bench_label VARIANT: the label of a variant in the records and tables;
# other strings (s1's nfsgit with a configuration) are their own label.
bench_label () {
	case $1 in
	stock) echo "$STOCK_LABEL" ;;
	stable) echo "$STABLE_LABEL" ;;
	*) echo "$1" ;;
	esac
}

# bench_gix: gitoxide's gix (GIX, default build/gix/bin/gix from "make
# gix"), or nothing if it is not installed: the scenarios where it has the
# command (clone, status) then record why it did not run.
bench_gix () {
	local gix=${GIX:-$TOP/build/gix/bin/gix}

	if test -x "$gix"
	then
		echo "$gix"
	fi
}

# bench_gix_label GIX: its label in the tables ("gitoxide 0.61.0")
bench_gix_label () {
	echo "gitoxide $("$1" --version | sed -n 's/^gix //p')"
}

# bench_repo_arg SCRIPT [linux-6.1]: REPO from "--repo medium|linux" in
# EXTRA_ARGS (default medium); "--repo linux-6.1" too where the script
# says it can take that tree
# shellcheck disable=SC2034 # REPO is read by the scenario
bench_repo_arg () {
	REPO=medium
	case "${EXTRA_ARGS[*]:-}" in
	""|"--repo medium") ;;
	"--repo linux") REPO=linux ;;
	"--repo linux-6.1")
		test "${2:-}" = linux-6.1 || bench_die "$1: no --repo linux-6.1 here"
		REPO=linux-6.1 ;;
	*) bench_die "$1: unknown option '${EXTRA_ARGS[*]}'" ;;
	esac
}

# The work area. $BACKING is a tmpfs (creating files on ext4 would cost
# more than the simulated round trip), $MNT the latencyfs mount point,
# $LOCAL a directory on the local disk (the file system of build/).
bench_init () {
	BENCH_WORK=$(mktemp -d "${TMPDIR:-/tmp}/nfsgit-bench.XXXXXX") ||
		bench_die "cannot create a work directory"
	BACKING=$BENCH_WORK/backing
	MNT=$BENCH_WORK/mnt
	LOCAL=$TOP/build/bench-tmp/$(basename "$BENCH_WORK")
	BENCH_LOG=${BENCH_LOG:-$BENCH_RESULTS/logs/$(basename "$0").log}
	export BENCH_WORK BACKING MNT LOCAL BENCH_LOG
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM HUP
	mkdir -p "$BACKING" "$MNT" "$LOCAL" "$(dirname "$BENCH_LOG")" ||
		bench_die "cannot create the work area"
	mount -t tmpfs -o "size=${BENCH_TMPFS_SIZE:-12g},mode=0755" \
		nfsgit-bench "$BACKING" ||
		bench_die "cannot mount a tmpfs on '$BACKING' (root needed)"
	: >"$BENCH_LOG"
	if test -z "$BENCH_OUT"
	then
		BENCH_OUT=$BENCH_WORK/records.jsonl
	fi
	mkdir -p "$(dirname "$BENCH_OUT")"
	: >>"$BENCH_OUT"
	BENCH_OUT=$(cd "$(dirname "$BENCH_OUT")" && pwd)/$(basename "$BENCH_OUT")
	export BENCH_OUT
	BENCH_SEQ=0
}

bench_cleanup () {
	lfs_umount
	lfs_reap
	if test -n "${BACKING:-}" && mountpoint -q "$BACKING"
	then
		umount "$BACKING" || umount -l "$BACKING"
	fi
	if test -n "${BENCH_WORK:-}" && test -d "$BENCH_WORK"
	then
		rm -rf "$BENCH_WORK"
	fi
	if test -n "${LOCAL:-}" && test -d "$LOCAL"
	then
		rm -rf "$LOCAL"
		rmdir "$TOP/build/bench-tmp" 2>/dev/null || :
	fi
}

lfs_mount () {
	local pidfile

	# a pid file per mount: a latencyfs that was unmounted takes a while
	# to exit and then removes its own pid file
	pidfile=$BENCH_WORK/lfs.$(date +%s%N).pid
	"$LATENCYFS" -o "delay_us=$1,pidfile=$pidfile${LATENCYFS_OPTS:+,$LATENCYFS_OPTS}" \
		"$BACKING" "$MNT" || bench_die "cannot mount latencyfs on '$MNT'"
	mountpoint -q "$MNT" || bench_die "latencyfs is not mounted on '$MNT'"
	cat "$pidfile" >"$BENCH_WORK/lfs.current"
	cat "$pidfile" >>"$BENCH_WORK/lfs.all"
}

# Unmount; the latencyfs process exits on its own (bench_cleanup waits).
lfs_umount () {
	test -n "${MNT:-}" || return 0
	if mountpoint -q "$MNT"
	then
		fusermount3 -u "$MNT" 2>/dev/null || umount "$MNT" 2>/dev/null ||
			umount -l "$MNT"
	fi
	rm -f "$BENCH_WORK/lfs.current"
}

# Wait for the latencyfs processes this run started to exit (10 s at most),
# then end those that did not, by pid.
lfs_reap () {
	local pid _

	test -f "$BENCH_WORK/lfs.all" || return 0
	while read -r pid
	do
		for _ in $(seq 200)
		do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		if kill -0 "$pid" 2>/dev/null &&
		   grep -q latencyfs "/proc/$pid/cmdline" 2>/dev/null
		then
			kill "$pid"
		fi
	done <"$BENCH_WORK/lfs.all"
	rm -f "$BENCH_WORK/lfs.all"
}

lfs_reset () {
	echo reset >"$MNT/.latencyfs"
}

# One "name count" per line; reading the control file costs no request.
lfs_stats () {
	cat "$MNT/.latencyfs"
}

# hyperfine's --prepare step: save the counters of the previous run and
# unmount, set the data up again in the backing directory (or the local
# directory), mount again and reset the counters.
bench_prepare () {
	case $BENCH_FS in
	lfs:*)
		if mountpoint -q "$MNT"
		then
			{ lfs_stats && echo --; } >>"$BENCH_STATS"
			lfs_umount
		fi ;;
	esac
	(cd "$B" && eval "$BENCH_SETUP") ||
		bench_die "setup failed: $BENCH_SETUP"
	case $BENCH_FS in
	lfs:*)
		lfs_mount "${BENCH_FS#lfs:}" ;;
	local)
		# the setup's writes reach the disk before the run, not
		# during it (they made the local rows depend on which Git
		# ran after a large setup)
		sync ;;
	esac
	if test -n "${BENCH_WARM:-}"
	then
		(cd "$R" && eval "$BENCH_WARM") ||
			bench_die "warm-up failed: $BENCH_WARM"
	fi
	case $BENCH_FS in
	lfs:*) lfs_reset ;;
	esac
}

# bench_case SCENARIO CASE FS VARIANT SETUP COMMAND [OBJECTS]
#
# Runs COMMAND (a sh command line) $REPS times with hyperfine; VARIANT is
# a variant id or label (recorded as bench_label VARIANT). FS is
# "lfs:DELAY_US" (latencyfs over the tmpfs) or "local". Before each run
# SETUP runs in $B with latencyfs unmounted; COMMAND finds the data in $R.
# If BENCH_WARM is set, it runs in $R after the mount, before the counters
# are reset: a command whose caches the timed one finds warm.
# For lfs, B=$BACKING and R=$MNT; for local, both are $LOCAL. OBJECTS, if
# given, is the number of objects the command receives (per-object
# counts). Appends a record to $BENCH_OUT; returns non-zero if a run failed
# (the record says so).
bench_case () {
	local scenario=$1 case=$2 fs=$3 variant=$4 setup=$5 cmd=$6
	local objects=${7:-} json stats rc=0

	variant=$(bench_label "$variant")
	BENCH_SEQ=$((BENCH_SEQ + 1))
	json=$BENCH_WORK/hf.$BENCH_SEQ.json
	stats=$BENCH_WORK/stats.$BENCH_SEQ
	: >"$stats"
	case $fs in
	lfs:*) B=$BACKING R=$MNT ;;
	local) B=$LOCAL R=$LOCAL ;;
	*) bench_die "bad fs '$fs'" ;;
	esac
	export B R BENCH_FS=$fs BENCH_SETUP=$setup BENCH_STATS=$stats
	export BENCH_WARM=${BENCH_WARM:-}
	bench_say "$scenario | $case | $fs | $variant ($REPS runs)"
	{
		echo "### $scenario | $case | $fs | $variant"
		echo "### setup: $setup"
		test -z "$BENCH_WARM" || echo "### warm-up: $BENCH_WARM"
		echo "### command: $cmd"
	} >>"$BENCH_LOG"
	hyperfine --style basic --runs "$REPS" --export-json "$json" \
		--prepare "bash '$BENCH_DIR/lib.sh' --prepare" \
		--command-name "$case" "$cmd" >>"$BENCH_LOG" 2>&1 || rc=$?
	case $fs in
	lfs:*)
		if mountpoint -q "$MNT"
		then
			{ lfs_stats && echo --; } >>"$stats"
			lfs_umount
		fi ;;
	esac
	if test $rc -ne 0
	then
		bench_say "  FAILED (exit $rc), see $BENCH_LOG"
		rm -f "$json"
	fi
	"$PYTHON" "$BENCH_DIR/tables.py" record --scenario "$scenario" \
		--case "$case" --fs "$fs" --variant "$variant" \
		--hyperfine "$json" --stats "$stats" ${objects:+--objects "$objects"} \
		--command "$cmd" >>"$BENCH_OUT" ||
		bench_die "cannot record the result"
	return $rc
}

# Record that a case could not run, and why; the table shows the reason.
bench_skip () {
	"$PYTHON" "$BENCH_DIR/tables.py" record --scenario "$1" --case "$2" \
		--fs "$3" --variant "$(bench_label "$4")" --skip "$5" >>"$BENCH_OUT"
}

# bench_table SCENARIO TITLE [tables.py options]: the markdown table of
# the records of SCENARIO in $BENCH_OUT.
bench_table () {
	local scenario=$1 title=$2

	shift 2
	"$PYTHON" "$BENCH_DIR/tables.py" table --scenario "$scenario" \
		--title "$title" "$@" "$BENCH_OUT"
}

# The fs labels to run on: lfs:D for every delay, and local if asked for.
bench_fs_list () {
	local d

	for d in $DELAYS
	do
		printf 'lfs:%s ' "$d"
	done
	if test -n "$LOCAL_DISK"
	then
		printf 'local'
	fi
}

# bench_fs_dir FS: where a scenario makes its data for FS (the backing
# directory of latencyfs, or the local-disk directory)
bench_fs_dir () {
	case $1 in
	local) echo "$LOCAL" ;;
	*) echo "$BACKING" ;;
	esac
}

# Setup helpers, usable in SETUP strings (they run with lib.sh sourced).

# Remove the packs in OBJDIR/pack that are not listed in KEEP (a file of
# names, one a line; no file: remove all) and leftover temporary files.
bench_rm_new_packs () {
	local objdir=$1 keep=${2:-} f

	for f in "$objdir"/pack/pack-* "$objdir"/pack/tmp_* "$objdir"/tmp_objdir-*
	do
		test -e "$f" || continue
		if test -n "$keep" && grep -qxF "$(basename "$f")" "$keep"
		then
			continue
		fi
		rm -rf "$f"
	done
}

# Replace DEST by the next directory of a pool (POOL/1, POOL/2, ...),
# prepared in advance; see s3-checkout.sh.
bench_pool_next () {
	local pool=$1 dest=$2 n

	n=$(cat "$pool/next" 2>/dev/null) || n=1
	test -d "$pool/$n" || bench_die "pool '$pool' is empty at $n"
	rm -rf "$dest"
	mv "$pool/$n" "$dest"
	echo $((n + 1)) >"$pool/next"
}

if test "${BASH_SOURCE[0]}" = "$0" && test "${1:-}" = --prepare
then
	bench_prepare
fi
