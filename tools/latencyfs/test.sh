#!/bin/sh
# Tests for latencyfs; prints TAP. From the Makefile (make test) or:
#
#   LATENCYFS=/abs/path/to/latencyfs prove --exec sh tools/latencyfs/test.sh
#
# Needs /dev/fuse, root or fusermount3, and python3 (for exact syscalls and
# errnos). Mounts live under $TMPDIR (default /tmp) and are removed on exit,
# whether the tests pass or not. Assertions are on request counts; the few
# timing checks have bounds of several round trips.

here=$(cd "$(dirname "$0")" && pwd)
LATENCYFS=${LATENCYFS:-$here/../../build/latencyfs/latencyfs}
OPS=$here/latencyfs-ops

if ! test -c /dev/fuse
then
	echo "1..0 # SKIP no /dev/fuse"
	exit 0
fi
if ! test -x "$LATENCYFS" || ! command -v python3 >/dev/null
then
	echo "Bail out! need python3 and LATENCYFS (not '$LATENCYFS')"
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/latencyfs-test.XXXXXX") || exit 1
n=0
failed=0

mounted () {
	awk -v m="$1" '$2 == m { found = 1 } END { exit !found }' /proc/mounts
}

cleanup () {
	left=
	for d in "$tmp"/*/
	do
		test -d "${d}mnt" || continue
		pid=$(cat "${d}pid" 2>/dev/null) && kill "$pid" 2>/dev/null
		if mounted "${d}mnt"
		then
			fusermount3 -u -z "${d}mnt" 2>/dev/null ||
			umount -l "${d}mnt" 2>/dev/null
		fi
		mounted "${d}mnt" && left=1
	done
	if test -n "$left"
	then
		echo >&2 "# mounts left under $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# The syscalls of each test, with errnos printed by name.
cat >"$tmp/sys.py" <<\EOF
import errno, os, sys, threading, time

def stat(p):
    os.stat(p)

def create(p):
    os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))

def write(p, data):
    fd = os.open(p, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data.encode())
    finally:
        os.close(fd)

def read(p):
    fd = os.open(p, os.O_RDONLY)
    try:
        os.read(fd, 65536)
    finally:
        os.close(fd)

def timed(n, d, parallel):
    """stat n missing names in d, one after the other or all at once"""
    names = ["%s/m%d-%d" % (d, i, time.time_ns()) for i in range(n)]
    def missing(p):
        try:
            os.stat(p)
        except OSError:
            pass
    start = time.monotonic()
    if parallel:
        go = threading.Barrier(n + 1)
        def run(p):
            go.wait()
            missing(p)
        threads = [threading.Thread(target=run, args=(p,)) for p in names]
        for t in threads:
            t.start()
        go.wait()
        start = time.monotonic()
        for t in threads:
            t.join()
    else:
        for p in names:
            missing(p)
    return "%d" % ((time.monotonic() - start) * 1000)

ops = {"stat": stat, "create": create, "write": write, "read": read,
       "mkdir": os.mkdir, "rmdir": os.rmdir, "unlink": os.unlink,
       "rename": os.rename, "list": lambda p: os.listdir(p) and None,
       "seq": lambda n, d: timed(int(n), d, False),
       "par": lambda n, d: timed(int(n), d, True)}
nargs = {"write": 2, "rename": 2, "seq": 2, "par": 2}
args, out = sys.argv[1:], []
while args:
    op, n = args[0], nargs.get(args[0], 1)
    try:
        out.append(ops[op](*args[1:1 + n]) or "ok")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
    args = args[1 + n:]
print(" ".join(out))
EOF

sys () {
	python3 -I "$tmp/sys.py" "$@"
}

# t DESCRIPTION COMMAND...: run one test
t () {
	desc=$1
	shift
	n=$((n + 1))
	if ("$@")
	then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		failed=$((failed + 1))
	fi
}

# wait_for COMMAND...: poll for up to 10 seconds
wait_for () {
	i=0
	until "$@"
	do
		i=$((i + 1))
		test $i -le 200 || return 1
		sleep 0.05
	done
}

# start NAME [OPTIONS]: mount $tmp/NAME/back at $tmp/NAME/mnt, daemonized
start () {
	d=$tmp/$1
	mkdir -p "$d/back" "$d/mnt" &&
	"$LATENCYFS" -o "pidfile=$d/pid,stats=$d/stats${2:+,$2}" \
		"$d/back" "$d/mnt"
}

# ops NAME SYS-ARGS...: run sys with the counters of mount NAME reset;
# its output goes to $tmp/out, the counters to $tmp/ops
ops () {
	m=$tmp/$1/mnt
	shift
	"$OPS" -a -o "$tmp/ops" "$m" python3 -I "$tmp/sys.py" "$@" >"$tmp/out"
}

# has 'NAME VALUE'...: the counters of the last ops include these
has () {
	for want
	do
		grep -qx "$want" "$tmp/ops" && continue
		echo >&2 "# want '$want', got:" \
			"$(grep -v ' 0$' "$tmp/ops" | tr '\n' ' ')"
		return 1
	done
}

# out WORDS: the output of the last ops or sys
out () {
	test "$(cat "$tmp/out")" = "$*" && return
	echo >&2 "# want '$*', got '$(cat "$tmp/out")'"
	return 1
}

# ms WHAT: report the time in $tmp/out as a TAP comment
ms () {
	echo "# $*: $(cat "$tmp/out") ms"
}

at_least () {
	test "$1" -ge "$2" || { echo >&2 "# $1 < $2"; return 1; }
}

below () {
	test "$1" -lt "$2" || { echo >&2 "# $1 >= $2"; return 1; }
}

# Round trips and concurrency, with a 50 ms round trip

S=$tmp/slow/mnt

test_ready () {
	start slow delay_us=50000 &&
	mounted "$S" &&
	test -s "$tmp/slow/pid" &&
	grep -qx "round_trips 0" "$S/.latencyfs"
}
t "the mount and pid file are ready when latencyfs returns" test_ready

test_one_delay () {
	ops slow seq 1 "$S" &&
	ms "1 stat, 50 ms round trip" &&
	at_least "$(cat "$tmp/out")" 50 &&
	has "round_trips 1" "lookup 1" "lookup_negative 1"
}
t "a stat of a missing name costs one round trip" test_one_delay

test_sequential () {
	ops slow seq 10 "$S" &&
	ms "10 sequential stats" &&
	at_least "$(cat "$tmp/out")" 500 &&
	has "round_trips 10" "lookup_negative 10"
}
t "10 stats one after the other take 10 round trips" test_sequential

test_parallel () {
	mkdir "$tmp/slow/back/dir" &&
	sys stat "$S/dir" par 16 "$S/dir" >/dev/null &&	# start the threads
	ops slow par 16 "$S/dir" &&
	ms "16 concurrent stats in one directory" &&
	below "$(cat "$tmp/out")" 200 &&
	has "round_trips 16" "lookup_negative 16"
}
t "16 concurrent stats in one directory overlap (parallel dirops)" \
	test_parallel

test_threads () {
	start one delay_us=20000,threads=1 &&
	ops one par 8 "$tmp/one/mnt" &&
	ms "8 concurrent stats, threads=1, 20 ms round trip" &&
	at_least "$(cat "$tmp/out")" 160
}
t "threads=1 serializes requests" test_threads

# Request counts, with a 1 ms round trip

C=$tmp/count/mnt
start count delay_us=1000 || echo >&2 "# cannot mount $C"

test_negative () {
	ops count stat "$C/x" stat "$C/x" &&
	out ENOENT ENOENT &&
	has "round_trips 2" "lookup 2" "lookup_negative 2"
}
t "negative lookups are not cached" test_negative

test_positive () {
	: >"$tmp/count/back/file" &&
	ops count stat "$C/file" stat "$C/file" &&
	out ok ok &&
	has "round_trips 1" "lookup 1" "lookup_negative 0" "getattr 0"
}
t "positive lookups and attributes are cached" test_positive

test_mkdir_create () {
	ops count mkdir "$C/d" create "$C/d/f" &&
	out ok ok &&
	has "round_trips 2" "lookup 2" "lookup_negative 2" "mkdir 1" \
		"create 1" "flush 1"
}
t "mkdir, then an O_EXCL create in it: one round trip each" \
	test_mkdir_create

test_write () {
	ops count write "$C/d/g" hello &&
	out ok &&
	has "round_trips 2" "lookup 1" "create 1" "write 1" "flush 1" &&
	test "$(cat "$tmp/count/back/d/g")" = hello
}
t "creating and writing a file: create, then a flush of dirty data" \
	test_write

test_rename () {
	ops count rename "$C/d/g" "$C/d/f" &&
	out ok &&
	has "round_trips 1" "rename 1"
}
t "a rename onto an existing name is one round trip" test_rename

# bigdir DIR: 2000 files with names of 40 bytes
bigdir () {
	mkdir "$1" &&
	for i in $(seq 1000 2999)
	do
		: >"$1/f$i-0123456789012345678901234567890123" || return 1
	done
}

# entry_bytes SIZE DIR: the bytes of FUSE directory entries in a listing
# of DIR (with . and ..): SIZE and the name padded to 8 each
entry_bytes () {
	{ echo .; echo ..; ls -A "$2"; } |
	LC_ALL=C awk -v size="$1" '
		{ n += size + int((length($0) + 7) / 8) * 8 }
		END { print n }'
}

# plain READDIR (as before READDIRPLUS, which is tested below)
P=$tmp/plain/mnt
start plain delay_us=1000,nordirplus || echo >&2 "# cannot mount $P"

test_listing () {
	bigdir "$tmp/plain/back/big" &&
	sys stat "$P/big" >/dev/null &&
	ops plain list "$P/big" &&
	# FUSE dirents are 24 bytes and the name padded to 8: 64 for ours,
	# 32 for . and ..; 128064 bytes are 4 NFS READDIRs of 32 KiB
	test "$(entry_bytes 24 "$tmp/plain/back/big")" = 128064 &&
	has "round_trips 5" "opendir 1" "readdir 5" "readdirplus 0"
}
t "nordirplus: a listing is opendir, one round trip per 32 KiB, the EOF free" \
	test_listing

test_ops_status () {
	"$OPS" "$C" false 2>/dev/null
	test $? = 1 &&
	"$OPS" "$C" sh -c "stat $C/nothing" 2>"$tmp/ops.err" >/dev/null
	test $? = 1 &&
	grep -qx "lookup_negative 1" "$tmp/ops.err"
}
t "latencyfs-ops prints the counters and keeps the exit status" \
	test_ops_status

# Faults, set through the control file

ctl () {
	printf '%s\n' "$@" >"$C/.latencyfs"
}

test_eio () {
	ctl "fault read:*/f:EIO" &&
	sys read "$C/d/f" stat "$C/d/f" >"$tmp/out" &&
	out EIO ok
}
t "fault read EIO" test_eio

test_enospc () {
	ctl clear-faults "fault create:*.c:ENOSPC" &&
	ops count create "$C/d/a.c" create "$C/d/a.h" &&
	out ENOSPC ok &&
	has "faults 1" "create 2"
}
t "fault create ENOSPC" test_enospc

test_estale () {
	ctl clear-faults "fault open:*.h:ESTALE" &&
	sys read "$C/d/a.h" read "$C/d/f" >"$tmp/out" &&
	out ESTALE ok
}
t "fault open ESTALE" test_estale

test_edquot () {
	ctl clear-faults "fault write:*:EDQUOT" &&
	sys write "$C/d/w" data >"$tmp/out" &&
	out EDQUOT
}
t "fault write EDQUOT" test_edquot

test_clear () {
	ctl clear-faults &&
	sys write "$C/d/w" data read "$C/d/f" create "$C/d/b.c" >"$tmp/out" &&
	out ok ok ok
}
t "clear-faults" test_clear

test_after () {
	ctl clear-faults "fault mkdir:after/*:EACCES:after=2" &&
	sys mkdir "$C/after" mkdir "$C/after/1" mkdir "$C/after/2" \
		mkdir "$C/after/3" mkdir "$C/after/4" mkdir "$C/5" \
		>"$tmp/out" &&
	out ok ok ok EACCES EACCES ok
}
t "a fault after N matching requests, then every time" test_after

test_times () {
	ctl clear-faults "fault fsync:*:EIO:times=1" &&
	python3 -I -c '
import errno, os, sys
fd, out = os.open(sys.argv[1], os.O_WRONLY), []
for i in range(2):
    try:
        os.fsync(fd)
        out.append("ok")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
print(*out)' "$C/d/w" >"$tmp/out" &&
	out EIO ok
}
t "times=N fails only N times" test_times

# creates PREFIX: create PREFIX1 to PREFIX20 in one process
creates () {
	prefix=$1
	shift
	for i in $(seq 20)
	do
		set -- "$@" create "$prefix$i"
	done
	sys "$@"
}

test_prob () {
	ctl clear-faults "fault create:p/a*:EIO:prob=0.5:seed=7" &&
	mkdir "$tmp/count/back/p" &&
	creates "$C/p/a" >"$tmp/prob1" &&
	ctl clear-faults "fault create:p/b*:EIO:prob=0.5:seed=7" &&
	creates "$C/p/b" >"$tmp/prob2" &&
	ctl clear-faults &&
	cmp "$tmp/prob1" "$tmp/prob2" &&
	grep -q ok "$tmp/prob1" && grep -q EIO "$tmp/prob1"
}
t "prob=P with a seed fails a fixed subset" test_prob

# READDIRPLUS (the default)

test_listing_plus () {
	bigdir "$tmp/count/back/big" &&
	sys stat "$C/big" >/dev/null &&
	ops count list "$C/big" &&
	# a direntplus is a struct fuse_entry_out (128 bytes) before a dirent
	# (24) and the name padded to 8: 384384 bytes, 12 round trips
	bytes=$(entry_bytes 152 "$tmp/count/back/big") &&
	has "round_trips $((1 + (bytes + 32767) / 32768))" "opendir 1" \
		"readdir 0" "lookup 0" "getattr 0" &&
	at_least "$(awk '$1 == "readdirplus" { print $2 }' "$tmp/ops")" 12
}
t "readdirplus: a listing is opendir, one round trip per 32 KiB of direntplus" \
	test_listing_plus

# list_then_stat NAME: list a directory of 200 files on mount NAME, then
# stat each; the counters of the listing in $tmp/ops.list, of the stats
# in $tmp/ops
list_then_stat () {
	dir=$tmp/$1/mnt/two
	mkdir "$tmp/$1/back/two" &&
	for i in $(seq 1000 1199)
	do
		: >"$tmp/$1/back/two/f$i" || return 1
	done &&
	sys stat "$dir" >/dev/null &&
	ops "$1" list "$dir" &&
	mv "$tmp/ops" "$tmp/ops.list" &&
	set -- "$1" &&
	for i in $(seq 1000 1199)
	do
		set -- "$@" stat "$dir/f$i"
	done &&
	ops "$@"
}

test_plus_stat () {
	list_then_stat count &&
	has "round_trips 0" "lookup 0" "getattr 0" &&
	bytes=$(entry_bytes 152 "$tmp/count/back/two") &&
	mv "$tmp/ops.list" "$tmp/ops" &&
	has "round_trips $((1 + (bytes + 32767) / 32768))" "lookup 0"
}
t "readdirplus: a stat of each listed name costs nothing" test_plus_stat

test_plain_stat () {
	list_then_stat plain &&
	has "round_trips 200" "lookup 200" &&
	mv "$tmp/ops.list" "$tmp/ops" &&
	has "round_trips 2" "readdirplus 0" "lookup 0"
}
t "nordirplus: a stat of each listed name is a LOOKUP" test_plain_stat

test_ls_l () {
	# names the kernel has not looked up yet
	mkdir "$tmp/count/back/three" "$tmp/plain/back/three" &&
	for i in $(seq 100)
	do
		: >"$tmp/count/back/three/f$i" &&
		: >"$tmp/plain/back/three/f$i" || return 1
	done &&
	"$OPS" -a -o "$tmp/ops" "$C" ls -l "$C/three" >/dev/null &&
	has "lookup 1" &&
	"$OPS" -a -o "$tmp/ops" "$P" ls -l "$P/three" >/dev/null &&
	has "lookup 101"
}
t "ls -l: no LOOKUP per entry with readdirplus, one each without" test_ls_l

test_plus_fault () {
	ctl clear-faults "fault readdir:two:EIO" &&
	ops count list "$C/two" &&
	out EIO &&
	has "faults 1" "readdir 0" "readdirplus 1" &&
	ctl clear-faults "fault readdirplus:two:ENOSPC" &&
	sys list "$C/two" >"$tmp/out" &&
	out ENOSPC &&
	ctl clear-faults &&
	sys list "$C/two" >"$tmp/out" &&
	out ok
}
t "a fault for readdir fails a READDIRPLUS listing" test_plus_fault

# fd_count PID N: the daemon PID has N descriptors open
fd_count () {
	test "$(ls "/proc/$1/fd" | wc -l)" = "$2"
}

test_plus_nodes () {
	start nodes delay_us=0 &&
	M=$tmp/nodes/mnt &&
	pid=$(cat "$tmp/nodes/pid") &&
	fds=$(ls "/proc/$pid/fd" | wc -l) &&
	mkdir "$tmp/nodes/back/d" &&
	for i in $(seq 1000 1299)
	do
		mkdir "$tmp/nodes/back/d/dir$i-0123456789" || return 1
	done &&
	# every directory listed becomes a node (with a descriptor), as
	# with a LOOKUP; more than one READDIRPLUS, so some entries did not
	# fit in the first
	ops nodes list "$M/d" &&
	at_least "$(awk '$1 == "readdirplus" { print $2 }' "$tmp/ops")" 3 &&
	wait_for fd_count "$pid" $((fds + 301)) &&
	if test -w /proc/sys/vm/drop_caches
	then
		# the kernel forgets them all: no reference left behind
		# (this drops the unused names and inodes of every mount)
		echo 2 >/proc/sys/vm/drop_caches &&
		wait_for fd_count "$pid" "$fds"
	else
		echo >&2 "# cannot drop caches: not checking FORGET"
	fi &&
	# a .latencyfs in the backing root stays hidden by the control file
	: >"$tmp/nodes/back/.latencyfs" &&
	ls -l "$M" >/dev/null &&
	grep -q "^readdirplus " "$M/.latencyfs"
}
t "readdirplus: listed entries are nodes until forgotten; the control file" \
	test_plus_nodes

test_bad_command () {
	! printf 'fault create:*:EWHAT\n' >"$C/.latencyfs" 2>/dev/null &&
	! printf 'frobnicate\n' >"$C/.latencyfs" 2>/dev/null
}
t "bad control commands fail" test_bad_command

test_option_fault () {
	start opt "fault=rmdir:*:ESTALE,fault=mkdir:*:EDQUOT:after=1" &&
	sys mkdir "$tmp/opt/mnt/a" mkdir "$tmp/opt/mnt/b" \
		rmdir "$tmp/opt/mnt/a" >"$tmp/out" &&
	out ok EDQUOT ESTALE
}
t "faults given with -o fault=" test_option_fault

# Case-insensitive names (casefold)

F=$tmp/fold/mnt
start fold casefold,delay_us=0,entry_timeout=0,attr_timeout=0 ||
	echo >&2 "# cannot mount $F"

# names MOUNT WORDS: the listing of MOUNT is WORDS
names () {
	got=$(LC_ALL=C ls "$1" | tr '\n' ' ')
	shift
	test "$got" = "$* " && return
	echo >&2 "# want '$*', got '$got'"
	return 1
}

test_fold_lookup () {
	echo x >"$F/a" &&
	test "$(cat "$F/A")" = x &&
	test "$F/a" -ef "$F/A" &&
	mkdir "$F/dir" &&
	echo z >"$F/DIR/f" &&
	test "$(cat "$F/Dir/F")" = z &&
	names "$F" a dir &&
	names "$F/dIr" f
}
t "casefold: a name finds an entry stored under another case" \
	test_fold_lookup

test_fold_create () {
	echo y >"$F/A" &&
	test "$(cat "$F/a")" = y &&
	names "$F" a dir &&
	mkdir "$F/d" &&
	: >"$F/f" &&
	mkfifo "$F/p" &&
	sys create "$F/A" mkdir "$F/D" mkdir "$F/F" >"$tmp/out" &&
	out EEXIST EEXIST EEXIST &&
	! mkdir "$F/D" 2>/dev/null &&
	! ln -s x "$F/F" 2>/dev/null &&
	! ln "$F/a" "$F/P" 2>/dev/null &&
	! mkfifo "$F/A" 2>/dev/null &&
	names "$F" a d dir f p
}
t "casefold: creating a name that exists under another case" \
	test_fold_create

# GNU mv stats both names, finds one file and refuses by itself ("are
# the same file", as on any case-insensitive mount): rename(2) directly
test_fold_rename () {
	sys rename "$F/a" "$F/A" rename "$F/d" "$F/D" >"$tmp/out" &&
	out ok ok &&
	names "$F" A D dir f p &&
	test "$(cat "$F/a")" = y &&
	names "$tmp/fold/back" A D dir f p &&
	echo new >"$F/n" &&
	# the replaced entry keeps its case, as on ext4 with casefold
	sys rename "$F/n" "$F/a" rename "$F/p" "$F/F" >"$tmp/out" &&
	out ok ok &&
	names "$F" A D dir f &&
	test "$(cat "$F/a")" = new &&
	test -p "$F/F" &&
	# between two spellings that are both not the stored one
	sys stat "$F/dIR" rename "$F/DIR" "$F/Dir" >"$tmp/out" &&
	out ok ok &&
	names "$F" A D Dir f &&
	test "$(cat "$F/dir/f")" = z
}
t "casefold: a rename replaces a name of another case or changes the case" \
	test_fold_rename

test_fold_remove () {
	rm "$F/a" "$F/f" &&
	rmdir "$F/d" &&
	names "$F" Dir &&
	sys stat "$F/A" stat "$F/D" >"$tmp/out" &&
	out ENOENT ENOENT
}
t "casefold: unlink and rmdir under another case" test_fold_remove

test_fold_stale () {
	# no cached name, positive or negative, outlives a change under
	# another case
	sys stat "$F/X" >"$tmp/out" &&
	out ENOENT &&
	echo 1 >"$F/x" &&
	test "$(cat "$F/X")" = 1 &&
	echo 2 >"$F/y" &&
	sys rename "$F/y" "$F/X" >"$tmp/out" &&
	out ok &&
	test "$(cat "$F/X")" = 2 &&
	rm "$F/x" &&
	sys stat "$F/X" stat "$F/x" >"$tmp/out" &&
	out ENOENT ENOENT &&
	# a backing directory may hold both: the exact name wins
	echo 3 >"$tmp/fold/back/c" &&
	echo 4 >"$tmp/fold/back/C" &&
	test "$(cat "$F/c")$(cat "$F/C")" = 34 &&
	rm "$tmp/fold/back/c" "$tmp/fold/back/C"
}
t "casefold: no stale names in the kernel's cache" test_fold_stale

N=$tmp/nofold/mnt

test_no_fold () {
	start nofold delay_us=0,entry_timeout=0,attr_timeout=0 &&
	echo x >"$N/a" &&
	sys stat "$N/A" >"$tmp/out" &&
	out ENOENT &&
	echo y >"$N/A" &&
	mkdir "$N/d" "$N/D" &&
	names "$N" A D a d &&
	test "$(cat "$N/a")$(cat "$N/A")" = xy
}
t "without casefold A is not a" test_no_fold

test_fold_counts () {
	# the same requests and round trips as without casefold
	: >"$tmp/fold/back/k" &&
	ops fold stat "$F/K" stat "$F/missing" create "$F/new" &&
	out ok ENOENT ok &&
	mv "$tmp/ops" "$tmp/ops.fold" &&
	: >"$tmp/nofold/back/k" &&
	ops nofold stat "$N/k" stat "$N/missing" create "$N/new" &&
	out ok ENOENT ok &&
	# (RELEASE may be counted a moment late)
	grep -v ^release "$tmp/ops.fold" >"$tmp/ops.a" &&
	grep -v ^release "$tmp/ops" >"$tmp/ops.b" &&
	cmp "$tmp/ops.a" "$tmp/ops.b" &&
	has "lookup 3" "lookup_negative 2" "create 1" &&
	# entry_timeout=0 however it is given
	start fold30 casefold,delay_us=0 &&
	: >"$tmp/fold30/back/k" &&
	ops fold30 stat "$tmp/fold30/mnt/K" stat "$tmp/fold30/mnt/k" &&
	has "lookup 2" "lookup_negative 0"
}
t "casefold: one round trip per lookup; implies entry_timeout=0" \
	test_fold_counts

test_fold_reused_inode () {
	# A backing without birth times (here another latencyfs mount) may
	# give a new directory the inode number of a file just replaced,
	# which the kernel still knows by a name in another case ("C"); the
	# directory must get a node of its own, with its descriptor.
	start outer delay_us=0,entry_timeout=0,attr_timeout=0 &&
	mkdir -p "$tmp/inner/mnt" "$tmp/outer/mnt/back" &&
	"$LATENCYFS" -o "pidfile=$tmp/inner/pid,casefold,delay_us=0" \
		"$tmp/outer/mnt/back" "$tmp/inner/mnt" &&
	for i in 1 2 3 4 5 6 7 8 9 10
	do
		r=$tmp/inner/mnt/r$i &&
		mkdir "$r" && echo x >"$r/c" && test -f "$r/C" &&
		echo y >"$r/c.lock" && mv "$r/c.lock" "$r/c" &&
		mkdir "$r/o" && mkdir "$r/o/p" || return 1
	done
}
t "casefold: a directory that reuses a replaced file's inode number" \
	test_fold_reused_inode

test_fold_plus () {
	mkdir "$F/plus" &&
	echo 1 >"$F/plus/One" &&
	echo 2 >"$F/plus/two" &&
	"$OPS" -a -o "$tmp/ops" "$F" ls -l "$F/PLUS" >/dev/null &&
	has "readdir 0" &&
	at_least "$(awk '$1 == "readdirplus" { print $2 }' "$tmp/ops")" 1 &&
	test "$(cat "$F/plus/One")$(cat "$F/Plus/ONE")$(cat "$F/plus/TWO")" = 112 &&
	test "$F/plus/one" -ef "$F/pLus/One" &&
	# a listed name's case can still be changed by a rename
	sys rename "$F/plus/One" "$F/plus/ONE" >"$tmp/out" &&
	out ok &&
	names "$F/plus" ONE two &&
	names "$tmp/fold/back/plus" ONE two
}
t "casefold: a READDIRPLUS listing, then names in other cases" test_fold_plus

# Listings that leave entries out (hide)

H=$tmp/hide/mnt

test_hide () {
	start hide "delay_us=0,hide=d/h*" &&
	mkdir "$tmp/hide/back/d" &&
	for f in a b h1 h2
	do
		echo "$f" >"$tmp/hide/back/d/$f" || return 1
	done &&
	names "$H/d" a b &&
	# found by name all the same
	sys stat "$H/d/h1" read "$H/d/h2" >"$tmp/out" &&
	out ok ok &&
	test "$(cat "$H/d/h1")" = h1 &&
	ls "$H/d/h2" >/dev/null &&
	rm "$H/d/h1" &&
	test ! -e "$tmp/hide/back/d/h1" &&
	# from the control file, and a name in the root ("" as the directory)
	: >"$tmp/hide/back/top" &&
	ctl_h "hide */b" "hide top" &&
	names "$H/d" a &&
	names "$H" d &&
	ctl_h clear-hides &&
	names "$H/d" a b h2 &&
	names "$H" d top
}
ctl_h () {
	printf '%s\n' "$@" >"$H/.latencyfs"
}
t "hide: listings leave matching paths out; lookups, stat, unlink find them" \
	test_hide

# hidden_listing MOUNT: list big/ of MOUNT (2000 entries, several
# requests) with every name ending in 7-... hidden: what is left, no
# more, no less, in $tmp/listed and $tmp/want
hidden_listing () {
	printf 'hide big/f???7-*\n' >"$tmp/$1/mnt/.latencyfs" &&
	ops "$1" list "$tmp/$1/mnt/big" &&
	out ok &&
	LC_ALL=C ls "$tmp/$1/mnt/big" >"$tmp/listed" &&
	LC_ALL=C ls "$tmp/$1/back/big" | grep -v '^f...7-' >"$tmp/want" &&
	printf 'clear-hides\n' >"$tmp/$1/mnt/.latencyfs" &&
	test "$(wc -l <"$tmp/want")" = 1800 &&
	cmp "$tmp/listed" "$tmp/want" &&
	test "$(ls "$tmp/$1/mnt/big" | wc -l)" = 2000
}

test_hide_offsets () {
	hidden_listing count &&
	at_least "$(awk '$1 == "readdirplus" { print $2 }' "$tmp/ops")" 10 &&
	hidden_listing plain &&
	at_least "$(awk '$1 == "readdir" { print $2 }' "$tmp/ops")" 4
}
t "hide: a listing of many requests resumes at the right offsets" \
	test_hide_offsets

# Pause points

Z=$tmp/pause/mnt

# paused N: N requests of the pause mount are paused now
paused () {
	grep -qx "paused $1" "$Z/.latencyfs"
}

ctl_z () {
	printf '%s\n' "$@" >"$Z/.latencyfs"
}

test_pause () {
	start pause delay_us=0 &&
	mkdir "$tmp/pause/back/dir" &&
	: >"$tmp/pause/back/dir/a" &&
	paused 0 &&
	ctl_z "pause readdir:dir" &&
	{ timeout 20 ls "$Z/dir" >"$tmp/ls.out" & } &&
	bg=$! &&
	wait_for paused 1 &&
	kill -0 "$bg" &&
	# the control file and other directories work meanwhile; another
	# client creates a file in the directory (through the mount, a
	# create there would wait: the kernel holds the directory's lock
	# during a READDIR)
	ctl_z reset &&
	: >"$Z/elsewhere" &&
	sys stat "$Z/dir/a" >"$tmp/out" &&
	out ok &&
	: >"$tmp/pause/back/dir/new" &&
	paused 1 &&
	kill -0 "$bg" &&
	grep -qx "readdirplus 0" "$Z/.latencyfs" &&
	ctl_z go &&
	wait "$bg" &&
	test "$(cat "$tmp/ls.out" | tr '\n' ' ')" = "a new " &&
	paused 0 &&
	# paused once (times=1): the next listing goes through
	timeout 20 ls "$Z/dir" >/dev/null
}
t "pause: a listing blocks until go; the control file shows it" test_pause

test_pause_times () {
	mkdir "$tmp/pause/back/t" &&
	ctl_z clear-pauses "pause lookup:t/*:times=2" &&
	for i in 1 2 3
	do
		{ timeout 20 python3 -I "$tmp/sys.py" stat "$Z/t/x$i" \
			>"$tmp/stat$i.out" & }
	done &&
	wait_for paused 2 &&
	# the third is not paused, the other two are
	wait_for one_done &&
	sleep 0.2 &&
	one_done &&
	paused 2 &&
	ctl_z go &&
	wait &&
	test "$(cat "$tmp/stat1.out" "$tmp/stat2.out" "$tmp/stat3.out")" = \
		"$(printf 'ENOENT\nENOENT\nENOENT')" &&
	paused 0
}
# one_done: exactly one of the three stats has finished
one_done () {
	test "$(cat "$tmp/stat1.out" "$tmp/stat2.out" "$tmp/stat3.out" |
		wc -l)" = 1
}
t "pause: times=N pauses N requests, then none" test_pause_times

test_pause_clear () {
	ctl_z "pause opendir:dir" &&
	{ timeout 20 ls "$Z/dir" >/dev/null & } &&
	bg=$! &&
	wait_for paused 1 &&
	# no lock held during an OPENDIR: a create through the mount
	: >"$Z/dir/during" &&
	ctl_z clear-pauses &&
	wait "$bg" &&
	paused 0 &&
	# the rule is gone
	ctl_z "pause opendir:other" &&
	timeout 20 ls "$Z/dir" >/dev/null &&
	ctl_z clear-pauses
}
t "pause: clear-pauses releases the paused requests and removes the rules" \
	test_pause_clear

test_pause_bad () {
	! ctl_z "pause readdir" 2>/dev/null &&
	! ctl_z "pause readdir:" 2>/dev/null &&
	! ctl_z "pause readdir:dir:times=x" 2>/dev/null &&
	! ctl_z "pause readdir:dir:after=1" 2>/dev/null &&
	! ctl_z "hide " 2>/dev/null &&
	# and the stats file has the counters only
	pid=$(cat "$tmp/pause/pid") &&
	rm -f "$tmp/pause/stats" &&
	kill -USR1 "$pid" &&
	wait_for test -f "$tmp/pause/stats" &&
	! grep -q paused "$tmp/pause/stats" &&
	grep -q '^paused 0$' "$Z/.latencyfs"
}
t "pause and hide: bad commands fail; paused is not in the stats file" \
	test_pause_bad

test_pause_exit () {
	ctl_z "pause readdir:dir" &&
	{ timeout 20 ls "$Z/dir" >/dev/null 2>&1 & } &&
	bg=$! &&
	wait_for paused 1 &&
	pid=$(cat "$tmp/pause/pid") &&
	kill -TERM "$pid" &&
	# released, and the daemon is gone (no hang in the join of its
	# threads); the listing may fail, the connection ends
	wait_for test ! -e "$tmp/pause/pid" &&
	wait_for not_running "$pid" &&
	{ wait "$bg"; test $? != 124; } &&
	! mounted "$Z"
}
not_running () {
	! kill -0 "$1" 2>/dev/null
}
t "pause: the daemon exits on SIGTERM with a request paused" test_pause_exit

test_pause_lazy () {
	start lazy delay_us=0 &&
	mkdir "$tmp/lazy/back/dir" &&
	: >"$tmp/lazy/back/dir/a" &&
	pid=$(cat "$tmp/lazy/pid") &&
	printf 'pause readdir:dir\n' >"$tmp/lazy/mnt/.latencyfs" &&
	{ timeout 20 ls "$tmp/lazy/mnt/dir" >"$tmp/ls.out" & } &&
	bg=$! &&
	wait_for grep -qx "paused 1" "$tmp/lazy/mnt/.latencyfs" &&
	{ fusermount3 -u -z "$tmp/lazy/mnt" 2>/dev/null ||
	  umount -l "$tmp/lazy/mnt"; } &&
	# the daemon notices the mount is gone within a second
	wait "$bg" &&
	test "$(cat "$tmp/ls.out")" = a &&
	wait_for not_running "$pid"
}
t "pause: a lazy unmount releases the paused requests" test_pause_lazy

# Signals and unmounting

test_signals () {
	pid=$(cat "$tmp/count/pid") &&
	sys stat "$C/x" >/dev/null &&
	rm -f "$tmp/count/stats" &&
	kill -USR1 "$pid" &&
	wait_for test -f "$tmp/count/stats" &&
	at_least "$(awk '$1 == "lookup" { print $2 }' "$tmp/count/stats")" 1 &&
	kill -USR2 "$pid" &&
	wait_for grep -qx "lookup 0" "$C/.latencyfs"
}
t "SIGUSR1 writes the stats file, SIGUSR2 resets the counters" \
	test_signals

test_few_descriptors () {
	# 1000 files under a limit of 64 descriptors: only directories
	# hold one; files are reached through their parent and last name
	(ulimit -n 64 && start nofd "delay_us=0,attr_timeout=0") &&
	R=$tmp/nofd/mnt &&
	pid=$(cat "$tmp/nofd/pid") &&
	mkdir "$tmp/nofd/back/d" &&
	for i in $(seq 1000)
	do
		echo $i >"$tmp/nofd/back/f$i" || return 1
	done &&
	(
		cd "$R/d" &&
		for i in $(seq 1000)
		do
			test "$(cat "../f$i")" = $i || exit 1
		done
	) &&
	below "$(ls "/proc/$pid/fd" | wc -l)" 40 &&
	# a file keeps working under its new name after a rename or a link
	# and the removal of the old one
	mv "$R/f1" "$R/d/g1" &&
	test "$(cat "$R/d/g1")" = 1 &&
	ln "$R/f2" "$R/h2" &&
	rm "$R/f2" &&
	test "$(cat "$R/h2")" = 2 &&
	# and under an older name once its newest is removed
	ln "$R/h2" "$R/d/k2" &&
	rm "$R/d/k2" &&
	test "$(cat "$R/h2")" = 2 &&
	# and an open file can still be stat()ed once removed
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.unlink(sys.argv[1])
print(os.fstat(fd).st_size, os.read(fd, 9).decode().strip())' "$R/f3" >"$tmp/out" &&
	out 2 3
}
t "files hold no descriptor: a tree larger than the limit works" test_few_descriptors

test_sigterm () {
	pid=$(cat "$tmp/count/pid") &&
	echo reset >"$C/.latencyfs" &&
	sys stat "$C/y" >/dev/null &&
	kill -TERM "$pid" &&
	wait_for test ! -e "$tmp/count/pid" &&
	! mounted "$C" &&
	test -z "$(ls -A "$C")" &&
	grep -qx "lookup_negative 1" "$tmp/count/stats"
}
t "SIGTERM unmounts cleanly and writes the stats" test_sigterm

test_foreground () {
	d=$tmp/fg
	mkdir -p "$d/back" "$d/mnt" &&
	{ "$LATENCYFS" -f -o "pidfile=$d/pid" "$d/back" "$d/mnt" & } &&
	pid=$! &&
	wait_for test -f "$d/pid" &&
	test "$(cat "$d/pid")" = "$pid" &&
	mounted "$d/mnt" &&
	kill -TERM "$pid" &&
	wait_for test ! -e "$d/pid" &&
	wait "$pid" &&
	! mounted "$d/mnt"
}
t "-f stays in the foreground and exits cleanly on SIGTERM" test_foreground

echo "1..$n"
test $failed = 0
