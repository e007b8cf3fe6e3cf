/*
 * latencyfs: mirror BACKING_DIR at MOUNTPOINT, make every request that is a
 * round trip on NFS wait for a configurable delay, count requests by type
 * and inject errors, so that Git can be measured and tested on a simulated
 * NFS mount (lookupcache=pos) on one machine. Listings can leave chosen
 * entries out and chosen requests can be held until released (pause
 * points), to reproduce races.
 *
 *   latencyfs [-f] [-d] [-o OPTION[,OPTION...]] BACKING_DIR MOUNTPOINT
 *
 * README.md describes the options, the counters, the control file
 * MOUNTPOINT/.latencyfs, the fault syntax, hide globs and pause points.
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 317

#include <fuse_lowlevel.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <search.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define UNUSED __attribute__((unused))
#define CTL_NAME ".latencyfs"
#define STATS_MAX 4096
#define RECENT 256

enum op {
	OP_LOOKUP, OP_LOOKUP_NEGATIVE, OP_GETATTR, OP_SETATTR, OP_ACCESS,
	OP_READLINK, OP_OPENDIR, OP_READDIR, OP_READDIRPLUS, OP_RELEASEDIR,
	OP_FSYNCDIR, OP_MKDIR, OP_RMDIR, OP_MKNOD, OP_SYMLINK, OP_LINK,
	OP_UNLINK, OP_RENAME, OP_CREATE, OP_OPEN, OP_READ, OP_WRITE, OP_FLUSH,
	OP_FSYNC, OP_RELEASE, OP_STATFS, OP_FAULTS, NR_OPS
};

static const char *const op_names[NR_OPS] = {
	[OP_LOOKUP] = "lookup", [OP_LOOKUP_NEGATIVE] = "lookup_negative",
	[OP_GETATTR] = "getattr", [OP_SETATTR] = "setattr",
	[OP_ACCESS] = "access", [OP_READLINK] = "readlink",
	[OP_OPENDIR] = "opendir", [OP_READDIR] = "readdir",
	[OP_READDIRPLUS] = "readdirplus",
	[OP_RELEASEDIR] = "releasedir", [OP_FSYNCDIR] = "fsyncdir",
	[OP_MKDIR] = "mkdir", [OP_RMDIR] = "rmdir", [OP_MKNOD] = "mknod",
	[OP_SYMLINK] = "symlink", [OP_LINK] = "link", [OP_UNLINK] = "unlink",
	[OP_RENAME] = "rename", [OP_CREATE] = "create", [OP_OPEN] = "open",
	[OP_READ] = "read", [OP_WRITE] = "write", [OP_FLUSH] = "flush",
	[OP_FSYNC] = "fsync", [OP_RELEASE] = "release",
	[OP_STATFS] = "statfs", [OP_FAULTS] = "faults",
};

static struct options {
	unsigned delay_us, rw_delay_us, threads, readdir_size;
	double entry_timeout, attr_timeout;
	char *stats, *pidfile;
	int casefold, nordirplus, foreground, help;
} opt = {
	.delay_us = 500, .threads = 64, .readdir_size = 32768,
	.entry_timeout = 30, .attr_timeout = 3,
};

static char *backing, *mountpoint;
static size_t backing_len;

static atomic_ulong counts[NR_OPS], nr_round_trips;

/*
 * A file or directory of the backing tree the kernel knows about. The
 * kernel forgets inodes only under memory pressure, so a descriptor for
 * each would run out on a tree of 80 000 files: a directory holds an
 * O_PATH descriptor, anything else is reached through its parent's and
 * the name it was last seen under (kept up to date by lookup, link and
 * rename). If that name now holds another inode, the request fails with
 * ESTALE, as NFS fails a stale file handle.
 *
 * Its address is the kernel's inode number for it, plus a tag in the low
 * bits for a name looked up under another case (casefold, see
 * spelling_tag()): nodes are aligned so that the tags are free.
 */
struct node {
	int fd;			/* O_PATH descriptor of a directory, or -1 */
	dev_t dev;
	ino_t ino;
	/*
	 * A file holds no descriptor, so the backing filesystem may give
	 * its inode number to a new file once it is removed, before the
	 * kernel forgets the node: the birth time tells them apart.
	 */
	struct timespec born;
	/*
	 * S_IFMT bits, part of the key too: where the backing filesystem
	 * gives no birth time (FUSE, NFS), a new directory may get the
	 * inode number of a removed file whose node the kernel still holds
	 * (say, by a name in another case), and must not become that node,
	 * which has no descriptor.
	 */
	mode_t type;
	/* under nodes_lock: */
	uint64_t nlookup;	/* kernel references */
	uint64_t children;	/* names of other nodes in this directory */
	struct name *names;	/* of a non-directory, newest first */
	struct file *files;	/* open, to stat it once it is unlinked */
	struct spelling *spellings;	/* tags in use (casefold) */
	atomic_llong attr_time;	/* when NFS would have fetched attributes */
} __attribute__((aligned(8)));

#define TAG_MASK ((uintptr_t)7)

/* A tag of a node: the kernel's inode for a name spelled in another case */
struct spelling {
	uintptr_t tag;
	char *name;		/* the first spelling given this tag */
	uint64_t nlookup;	/* kernel references to node | tag */
	struct spelling *next;
};

static struct node root = { .fd = -1 }, ctl = { .fd = -1 };
static void *nodes;		/* tsearch() tree of struct node by dev, ino */
static pthread_mutex_t nodes_lock = PTHREAD_MUTEX_INITIALIZER;

/* fstatat(), with the inode's birth time (0 where not known) */
static int stat_born(int dirfd, const char *name, struct stat *st,
		     struct timespec *born)
{
	struct statx x;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH),
		  STATX_BASIC_STATS | STATX_BTIME, &x))
		return -1;
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(x.stx_dev_major, x.stx_dev_minor);
	st->st_ino = x.stx_ino;
	st->st_mode = x.stx_mode;
	st->st_nlink = x.stx_nlink;
	st->st_uid = x.stx_uid;
	st->st_gid = x.stx_gid;
	st->st_rdev = makedev(x.stx_rdev_major, x.stx_rdev_minor);
	st->st_size = x.stx_size;
	st->st_blksize = x.stx_blksize;
	st->st_blocks = x.stx_blocks;
	st->st_atim.tv_sec = x.stx_atime.tv_sec;
	st->st_atim.tv_nsec = x.stx_atime.tv_nsec;
	st->st_mtim.tv_sec = x.stx_mtime.tv_sec;
	st->st_mtim.tv_nsec = x.stx_mtime.tv_nsec;
	st->st_ctim.tv_sec = x.stx_ctime.tv_sec;
	st->st_ctim.tv_nsec = x.stx_ctime.tv_nsec;
	born->tv_sec = x.stx_mask & STATX_BTIME ? x.stx_btime.tv_sec : 0;
	born->tv_nsec = x.stx_mask & STATX_BTIME ? x.stx_btime.tv_nsec : 0;
	return 0;
}

static int same_inode(const struct node *nd, const struct stat *st,
		      const struct timespec *born)
{
	return st->st_dev == nd->dev && st->st_ino == nd->ino &&
		born->tv_sec == nd->born.tv_sec &&
		born->tv_nsec == nd->born.tv_nsec;
}

/* Where a node is: a directory's descriptor and a name in it ("" for itself) */
struct place {
	int dirfd;
	char name[NAME_MAX + 1];
};

/* A name of a non-directory node: hard links give it several */
struct name {
	struct node *parent;
	char *name;
	struct name *next;
};

struct file {
	int fd;
	atomic_int dirty;	/* written since the last flush or fsync */
	struct node *nd;
	struct file *next;	/* open files of nd, under nodes_lock */
};

struct dir {
	DIR *dp;
	off_t offset;
	struct dirent *next;	/* read from dp but not sent yet */
	uint64_t bytes;		/* sent so far, for readdir_size */
};

struct snapshot {
	size_t len;
	char buf[STATS_MAX];
};

struct rule {
	char *op, *glob;
	int err;
	unsigned long after, times, seen, failed;
	double prob;
	uint64_t rng;
	struct rule *next;
};

static struct rule *rules;
static atomic_int have_rules;
static pthread_mutex_t rules_lock = PTHREAD_MUTEX_INITIALIZER;

/* Globs of paths that listings leave out (hide=GLOB, "hide GLOB") */
struct hide {
	char *glob;
	struct hide *next;
};

static struct hide *hides;
static atomic_int have_hides;
static pthread_mutex_t hides_lock = PTHREAD_MUTEX_INITIALIZER;

/* Pause points ("pause OP:GLOB[:times=N]"), released by "go" */
struct pause {
	char *op, *glob;
	unsigned long times, paused;
	struct pause *next;
};

static struct pause *pauses;
static atomic_int have_pauses;
static unsigned long pause_generation;	/* incremented by each release */
static unsigned nr_paused;		/* requests blocked now */
static pthread_mutex_t pauses_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pauses_cond;	/* CLOCK_MONOTONIC, set up in main() */

static struct fuse_session *session;

/* The names looked up last, by parent and hash of the name. */
static struct {
	fuse_ino_t parent;
	uint64_t hash;
} recent[RECENT];
static unsigned recent_next;
static pthread_mutex_t recent_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct {
	const char *name;
	int err;
} errnos[] = {
	{ "EIO", EIO }, { "ENOSPC", ENOSPC }, { "ESTALE", ESTALE },
	{ "EDQUOT", EDQUOT }, { "EACCES", EACCES }, { "EPERM", EPERM },
	{ "EROFS", EROFS }, { "ENOENT", ENOENT }, { "EEXIST", EEXIST },
	{ "ENOTEMPTY", ENOTEMPTY }, { "EBUSY", EBUSY },
	{ "ETIMEDOUT", ETIMEDOUT }, { "EAGAIN", EAGAIN },
	{ "EINTR", EINTR }, { "ENAMETOOLONG", ENAMETOOLONG },
};

static struct node *node(fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &root :
		(struct node *)((uintptr_t)ino & ~TAG_MASK);
}

static int is_ctl(fuse_ino_t ino)
{
	return node(ino) == &ctl;
}

/* The descriptor of a directory node */
static int node_fd(fuse_ino_t ino)
{
	return node(ino)->fd;
}

/* The i-th name of nd (0: the newest) into pl; 0 if it has no such name */
static int nth_name(struct node *nd, int i, struct place *pl)
{
	struct name *n;

	pthread_mutex_lock(&nodes_lock);
	for (n = nd->names; n && i; n = n->next)
		i--;
	if (n) {
		pl->dirfd = n->parent->fd;
		snprintf(pl->name, sizeof(pl->name), "%s", n->name);
	}
	pthread_mutex_unlock(&nodes_lock);
	return !!n;
}

/*
 * Where the node is now: a directory by its own descriptor, anything else
 * by the newest of its names that still holds this inode. Fills st (if
 * not NULL). Returns 0, or an errno: ENOENT or ESTALE when no name holds
 * it any more (pl is then its newest name, for messages).
 */
static int locate(fuse_ino_t ino, struct place *pl, struct stat *st)
{
	struct node *nd = node(ino);
	struct timespec born;
	struct place other;
	struct stat tmp;
	int i, err = ENOENT;

	if (!st)
		st = &tmp;
	if (nd->fd >= 0 || !nth_name(nd, 0, pl)) {
		pl->dirfd = nd->fd;
		pl->name[0] = '\0';
		if (nd->fd < 0)
			return ENOENT;
		return stat_born(nd->fd, "", st, &born) ? errno : 0;
	}
	for (i = 0; nth_name(nd, i, &other); i++) {
		if (stat_born(other.dirfd, other.name, st, &born)) {
			if (errno != ENOENT)
				err = errno;
		} else if (same_inode(nd, st, &born)) {
			*pl = other;
			return 0;
		} else {
			err = ESTALE;
		}
	}
	return err;
}

/* A path that reaches pl through /proc, for calls that take no dirfd */
static void place_path(char *buf, size_t len, const struct place *pl)
{
	snprintf(buf, len, "/proc/self/fd/%d%s%s", pl->dirfd,
		 pl->name[0] ? "/" : "", pl->name);
}

/*
 * Stat the node, failing with ESTALE if its place holds another inode;
 * an open file removed from its place is still there (NFS clients
 * rename such a file aside instead of removing it).
 */
static int stat_node(fuse_ino_t ino, struct stat *st)
{
	struct node *nd = node(ino);
	struct place pl;
	int err = locate(ino, &pl, st);

	if (err == ENOENT || err == ESTALE) {
		pthread_mutex_lock(&nodes_lock);
		if (nd->files && !fstat(nd->files->fd, st))
			err = 0;
		pthread_mutex_unlock(&nodes_lock);
	}
	return err;
}

static void attach_file(struct fuse_file_info *fi, fuse_ino_t ino)
{
	struct file *f = (struct file *)(uintptr_t)fi->fh;

	pthread_mutex_lock(&nodes_lock);
	f->nd = node(ino);
	f->next = f->nd->files;
	f->nd->files = f;
	pthread_mutex_unlock(&nodes_lock);
}

static void detach_file(struct file *f)
{
	struct file **p;

	pthread_mutex_lock(&nodes_lock);
	for (p = &f->nd->files; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	pthread_mutex_unlock(&nodes_lock);
}

static struct file *file(struct fuse_file_info *fi)
{
	return (struct file *)(uintptr_t)fi->fh;
}

/* Counting and charging */

static void count(enum op op)
{
	atomic_fetch_add_explicit(&counts[op], 1, memory_order_relaxed);
}

static void wait_us(unsigned long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void round_trips(unsigned n)
{
	if (!n)
		return;
	atomic_fetch_add_explicit(&nr_round_trips, n, memory_order_relaxed);
	wait_us((unsigned long)n * opt.delay_us);
}

/* A request that is one round trip on NFS. */
static void rpc(enum op op)
{
	count(op);
	round_trips(1);
}

/* A READ or WRITE: not a metadata round trip, delayed by rw_delay_us. */
static void data(enum op op)
{
	count(op);
	if (opt.rw_delay_us)
		wait_us(opt.rw_delay_us);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * NFS keeps attributes for attr_timeout seconds after it fetched them:
 * with a LOOKUP or GETATTR, on open (close-to-open) and, for a directory,
 * from the reply to a change in it. FUSE drops them more often (atime
 * after a read or a listing, a directory after a change in it); a GETATTR
 * that NFS would have answered from its cache is free.
 */
static void attrs_fetched(fuse_ino_t ino)
{
	atomic_store(&node(ino)->attr_time, now_ns());
}

static int attrs_cached(fuse_ino_t ino)
{
	return now_ns() - atomic_load(&node(ino)->attr_time) <
	       opt.attr_timeout * 1e9;
}

static uint64_t name_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325;

	while (*name)
		h = (h ^ (unsigned char)*name++) * 0x100000001b3;
	return h;
}

static void note_lookup(fuse_ino_t parent, const char *name)
{
	uint64_t h = name_hash(name);

	pthread_mutex_lock(&recent_lock);
	recent[recent_next % RECENT].parent = parent;
	recent[recent_next % RECENT].hash = h;
	recent_next++;
	pthread_mutex_unlock(&recent_lock);
}

static int take_lookup(fuse_ino_t parent, const char *name)
{
	uint64_t h = name_hash(name);
	int i, found = 0;

	pthread_mutex_lock(&recent_lock);
	for (i = 1; i <= RECENT && !found; i++) {
		unsigned k = (recent_next - i) % RECENT;

		if (recent[k].parent == parent && recent[k].hash == h) {
			recent[k].parent = 0;
			found = 1;
		}
	}
	pthread_mutex_unlock(&recent_lock);
	return found;
}

/*
 * The kernel looks a name up before it creates, links or renames onto it
 * (and for a rename target it does so even when the name is cached); NFS
 * sends only the CREATE, MKDIR, SYMLINK, LINK or RENAME, which finds the
 * name on the server. That LOOKUP has been charged, so the request that
 * follows it is free.
 */
static void rpc_create(enum op op, fuse_ino_t parent, const char *name)
{
	count(op);
	round_trips(!take_lookup(parent, name));
	attrs_fetched(parent);
}

static void reset_counts(void)
{
	int i;

	atomic_store(&nr_round_trips, 0);
	for (i = 0; i < NR_OPS; i++)
		atomic_store(&counts[i], 0);
}

static size_t format_stats(char *buf, size_t len)
{
	size_t n;
	int i;

	n = snprintf(buf, len, "round_trips %lu\n",
		     atomic_load(&nr_round_trips));
	for (i = 0; i < NR_OPS && n < len; i++)
		n += snprintf(buf + n, len - n, "%s %lu\n", op_names[i],
			      atomic_load(&counts[i]));
	return n < len ? n : len - 1;
}

static void write_file(const char *path, const char *buf, size_t len)
{
	char tmp[PATH_MAX];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd) ||
	    rename(tmp, path))
		fprintf(stderr, "latencyfs: cannot write '%s': %s\n", path,
			strerror(errno));
}

static void write_stats(void)
{
	char buf[STATS_MAX];

	if (opt.stats)
		write_file(opt.stats, buf, format_stats(buf, sizeof(buf)));
}

/* Faults */

static double next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
	z ^= z >> 31;
	return (z >> 11) * 0x1.0p-53;
}

static int parse_errno(const char *s)
{
	size_t i;
	char *end;
	long n;

	for (i = 0; i < sizeof(errnos) / sizeof(*errnos); i++)
		if (!strcmp(s, errnos[i].name))
			return errnos[i].err;
	n = strtol(s, &end, 10);
	return *s && !*end && n > 0 && n < 4096 ? n : 0;
}

static int parse_ulong(const char *s, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return !*s || *end || errno || *s == '-' ? -1 : 0;
}

static void free_rule(struct rule *r)
{
	free(r->op);
	free(r->glob);
	free(r);
}

/* OP:GLOB:ERRNO[:after=N][:times=N][:prob=P][:seed=N] */
static int add_rule(const char *spec)
{
	char *s = strdup(spec), *p = s, *f[3], *kv, *end;
	struct rule *r = calloc(1, sizeof(*r)), **tail;
	unsigned long seed = 1;
	int i;

	if (!s || !r)
		goto bad;
	for (i = 0; i < 3; i++)
		if (!(f[i] = strsep(&p, ":")) || !*f[i])
			goto bad;
	r->op = strdup(f[0]);
	r->glob = strdup(f[1]);
	r->err = parse_errno(f[2]);
	r->times = ULONG_MAX;
	r->prob = 1;
	if (!r->op || !r->glob || !r->err)
		goto bad;
	while ((kv = strsep(&p, ":"))) {
		if (!strncmp(kv, "after=", 6)) {
			if (parse_ulong(kv + 6, &r->after))
				goto bad;
		} else if (!strncmp(kv, "times=", 6)) {
			if (parse_ulong(kv + 6, &r->times))
				goto bad;
		} else if (!strncmp(kv, "seed=", 5)) {
			if (parse_ulong(kv + 5, &seed))
				goto bad;
		} else if (!strncmp(kv, "prob=", 5)) {
			r->prob = strtod(kv + 5, &end);
			if (!kv[5] || *end || !(r->prob >= 0 && r->prob <= 1))
				goto bad;
		} else {
			goto bad;
		}
	}
	r->rng = seed;
	free(s);
	pthread_mutex_lock(&rules_lock);
	for (tail = &rules; *tail; tail = &(*tail)->next)
		;
	*tail = r;
	atomic_store(&have_rules, 1);
	pthread_mutex_unlock(&rules_lock);
	return 0;
bad:
	free(s);
	if (r)
		free_rule(r);
	return -1;
}

static void clear_rules(void)
{
	struct rule *r;

	pthread_mutex_lock(&rules_lock);
	atomic_store(&have_rules, 0);
	while ((r = rules)) {
		rules = r->next;
		free_rule(r);
	}
	pthread_mutex_unlock(&rules_lock);
}

/* The path of ino (and name in it) relative to the mount root. */
static int rel_path(char *buf, size_t len, fuse_ino_t ino, const char *name)
{
	char proc[64], full[PATH_MAX];
	const char *rel = "", *part[2];
	struct place pl;
	size_t used;
	ssize_t n;
	int i;

	locate(ino, &pl, NULL);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pl.dirfd);
	n = readlink(proc, full, sizeof(full) - 1);
	if (n >= 0) {
		full[n] = '\0';
		rel = full;
		if (!strncmp(full, backing, backing_len))
			rel += backing_len;
		while (*rel == '/')
			rel++;
	}
	used = snprintf(buf, len, "%s", rel);
	part[0] = pl.name;
	part[1] = name ? name : "";
	for (i = 0; i < 2 && used < len; i++)
		if (*part[i])
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? "/" : "", part[i]);
	return used;
}

/*
 * Whether a rule (fault or pause) for OP and GLOB matches a request: its
 * path, or its second path (rename, link; path2 NULL if none), matches
 * the glob. A listing is a listing: readdir rules match READDIRPLUS too.
 */
static int rule_matches(const char *op_glob, const char *glob, enum op op,
			const char *path, const char *path2)
{
	if (fnmatch(op_glob, op_names[op], 0) &&
	    (op != OP_READDIRPLUS ||
	     fnmatch(op_glob, op_names[OP_READDIR], 0)))
		return 0;
	return !fnmatch(glob, path, 0) || (path2 && !fnmatch(glob, path2, 0));
}

/* The errno to fail this request with, 0 for none. */
static int fault(enum op op, fuse_ino_t ino, const char *name,
		 fuse_ino_t ino2, const char *name2)
{
	char path[2 * PATH_MAX], path2[2 * PATH_MAX];
	struct rule *r;
	int err = 0;

	if (!atomic_load(&have_rules))
		return 0;
	rel_path(path, sizeof(path), ino, name);
	if (ino2)
		rel_path(path2, sizeof(path2), ino2, name2);
	pthread_mutex_lock(&rules_lock);
	for (r = rules; r && !err; r = r->next) {
		if (!rule_matches(r->op, r->glob, op, path, ino2 ? path2 : NULL))
			continue;
		if (r->seen++ < r->after || r->failed >= r->times ||
		    (r->prob < 1 && next_random(&r->rng) >= r->prob))
			continue;
		r->failed++;
		err = r->err;
	}
	pthread_mutex_unlock(&rules_lock);
	if (err)
		count(OP_FAULTS);
	return err;
}

/* Listings that leave entries out */

static int add_hide(const char *glob)
{
	struct hide *h = calloc(1, sizeof(*h)), **tail;

	if (!h || !*glob || !(h->glob = strdup(glob))) {
		free(h);
		return -1;
	}
	pthread_mutex_lock(&hides_lock);
	for (tail = &hides; *tail; tail = &(*tail)->next)
		;
	*tail = h;
	atomic_store(&have_hides, 1);
	pthread_mutex_unlock(&hides_lock);
	return 0;
}

static void clear_hides(void)
{
	struct hide *h;

	pthread_mutex_lock(&hides_lock);
	atomic_store(&have_hides, 0);
	while ((h = hides)) {
		hides = h->next;
		free(h->glob);
		free(h);
	}
	pthread_mutex_unlock(&hides_lock);
}

/* Whether a listing of dir (its path, as rel_path() gives it) omits name */
static int hidden(const char *dir, const char *name)
{
	char path[3 * PATH_MAX];
	struct hide *h;
	int found = 0;

	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	snprintf(path, sizeof(path), "%s%s%s", dir, *dir ? "/" : "", name);
	pthread_mutex_lock(&hides_lock);
	for (h = hides; h && !found; h = h->next)
		found = !fnmatch(h->glob, path, 0);
	pthread_mutex_unlock(&hides_lock);
	return found;
}

/* Pause points */

static char *mount_path;	/* absolute, to find the mount in mountinfo */

/*
 * Whether the mount is still in /proc/self/mountinfo: a lazy unmount
 * (umount -l) while a request is paused detaches it without telling the
 * daemon, and the paused request keeps the filesystem alive. 1 when in
 * doubt.
 */
static int still_mounted(void)
{
	char *line = NULL, *p, *q, *field[5], *type;
	size_t len = 0;
	int i, found = 0;
	FILE *f;

	if (!mount_path || !(f = fopen("/proc/self/mountinfo", "r")))
		return 1;
	while (!found && getline(&line, &len, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - TYPE SOURCE ... */
		p = line;
		for (i = 0; i < 5; i++)
			if (!(field[i] = strsep(&p, " ")))
				break;
		if (i < 5 || !p || !(type = strstr(p, " - ")))
			continue;
		type += 3;
		if (strncmp(type, "fuse.latencyfs ", 15))
			continue;
		/* unescape \ooo (space, tab, newline, backslash) */
		for (p = q = field[4]; *p; q++) {
			if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' &&
			    p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
			    p[3] <= '7') {
				*q = (p[1] - '0') * 64 + (p[2] - '0') * 8 +
				     (p[3] - '0');
				p += 4;
			} else {
				*q = *p++;
			}
		}
		*q = '\0';
		found = !strcmp(field[4], mount_path);
	}
	free(line);
	fclose(f);
	return found;
}

static void free_pause(struct pause *r)
{
	free(r->op);
	free(r->glob);
	free(r);
}

/* OP:GLOB[:times=N] */
static int add_pause(const char *spec)
{
	char *s = strdup(spec), *p = s, *op, *glob, *kv;
	struct pause *r = calloc(1, sizeof(*r)), **tail;

	if (!s || !r || !(op = strsep(&p, ":")) || !*op ||
	    !(glob = strsep(&p, ":")) || !*glob ||
	    !(r->op = strdup(op)) || !(r->glob = strdup(glob)))
		goto bad;
	r->times = 1;
	while ((kv = strsep(&p, ":"))) {
		if (strncmp(kv, "times=", 6) || parse_ulong(kv + 6, &r->times))
			goto bad;
	}
	free(s);
	pthread_mutex_lock(&pauses_lock);
	for (tail = &pauses; *tail; tail = &(*tail)->next)
		;
	*tail = r;
	atomic_store(&have_pauses, 1);
	pthread_mutex_unlock(&pauses_lock);
	return 0;
bad:
	free(s);
	if (r)
		free_pause(r);
	return -1;
}

/* Release every request paused now; under pauses_lock */
static void release_locked(void)
{
	pause_generation++;
	pthread_cond_broadcast(&pauses_cond);
}

/* "go" */
static void release_pauses(void)
{
	pthread_mutex_lock(&pauses_lock);
	release_locked();
	pthread_mutex_unlock(&pauses_lock);
}

/* "clear-pauses": no more rules, and go */
static void clear_pauses(void)
{
	struct pause *r;

	pthread_mutex_lock(&pauses_lock);
	atomic_store(&have_pauses, 0);
	while ((r = pauses)) {
		pauses = r->next;
		free_pause(r);
	}
	release_locked();
	pthread_mutex_unlock(&pauses_lock);
}

static unsigned paused_now(void)
{
	unsigned n;

	pthread_mutex_lock(&pauses_lock);
	n = nr_paused;
	pthread_mutex_unlock(&pauses_lock);
	return n;
}

/*
 * Block a request that matches a pause rule with pauses left until "go",
 * "clear-pauses" or the end of the session (a signal, the kernel ending
 * the connection, a lazy unmount). At most threads - 1 requests are
 * paused at once, so that a thread is left for the control file; a
 * request beyond that is not paused and takes nothing from the rules.
 */
static void pause_point(enum op op, fuse_ino_t ino, const char *name,
			fuse_ino_t ino2, const char *name2)
{
	char path[2 * PATH_MAX], path2[2 * PATH_MAX];
	unsigned long generation;
	struct timespec ts;
	struct pause *r;
	unsigned polls = 0;
	int mounted;

	if (!atomic_load(&have_pauses))
		return;
	rel_path(path, sizeof(path), ino, name);
	if (ino2)
		rel_path(path2, sizeof(path2), ino2, name2);
	pthread_mutex_lock(&pauses_lock);
	for (r = pauses; r; r = r->next)
		if (r->paused < r->times &&
		    rule_matches(r->op, r->glob, op, path, ino2 ? path2 : NULL))
			break;
	if (!r || nr_paused + 1 >= opt.threads) {
		pthread_mutex_unlock(&pauses_lock);
		return;
	}
	r->paused++;
	nr_paused++;
	generation = pause_generation;
	while (generation == pause_generation) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 100 * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&pauses_cond, &pauses_lock, &ts);
		if (generation != pause_generation)
			break;
		if (session && fuse_session_exited(session)) {
			release_locked();
			break;
		}
		if (++polls % 5)
			continue;
		pthread_mutex_unlock(&pauses_lock);
		mounted = still_mounted();
		pthread_mutex_lock(&pauses_lock);
		if (!mounted)
			release_locked();
	}
	nr_paused--;
	pthread_mutex_unlock(&pauses_lock);
}

/* Nodes */

static int node_cmp(const void *a, const void *b)
{
	const struct node *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->born.tv_sec != y->born.tv_sec)
		return x->born.tv_sec < y->born.tv_sec ? -1 : 1;
	if (x->born.tv_nsec != y->born.tv_nsec)
		return x->born.tv_nsec < y->born.tv_nsec ? -1 : 1;
	return 0;
}

/* Free nd if nothing refers to it any more; under nodes_lock */
static void release_node(struct node *nd)
{
	struct spelling *sp;
	struct name *n;

	if (nd == &root || nd == &ctl || nd->nlookup || nd->children)
		return;
	tdelete(nd, &nodes, node_cmp);
	if (nd->fd >= 0)
		close(nd->fd);
	while ((sp = nd->spellings)) {
		nd->spellings = sp->next;
		free(sp->name);
		free(sp);
	}
	while ((n = nd->names)) {
		nd->names = n->next;
		n->parent->children--;
		release_node(n->parent);
		free(n->name);
		free(n);
	}
	free(nd);
}

/* A non-directory nd is name in parent (its newest name); under nodes_lock */
static void add_name(struct node *nd, fuse_ino_t parent, const char *name)
{
	struct name **p, *n;

	if (nd->fd >= 0)
		return;
	for (p = &nd->names; (n = *p); p = &n->next)
		if (n->parent == node(parent) && !strcmp(n->name, name)) {
			*p = n->next;	/* to the front */
			break;
		}
	if (!n) {
		n = malloc(sizeof(*n));
		if (!n || !(n->name = strdup(name))) {
			free(n);
			return;
		}
		n->parent = node(parent);
		n->parent->children++;
	}
	n->next = nd->names;
	nd->names = n;
}

/* name in parent no longer holds nd; under nodes_lock */
static void drop_name(struct node *nd, fuse_ino_t parent, const char *name)
{
	struct name **p, *n;

	for (p = &nd->names; (n = *p); p = &n->next)
		if (n->parent == node(parent) && !strcmp(n->name, name)) {
			*p = n->next;
			n->parent->children--;
			release_node(n->parent);
			free(n->name);
			free(n);
			return;
		}
}

/* The node of the inode st, if the kernel knows it; under nodes_lock */
static struct node *find_node(const struct stat *st, const struct timespec *born)
{
	struct node key = { .dev = st->st_dev, .ino = st->st_ino,
			    .type = st->st_mode & S_IFMT, .born = *born }, **slot;

	slot = tfind(&key, &nodes, node_cmp);
	return slot ? *slot : NULL;
}

/*
 * Keep the names of the nodes that a rename or an unlink moves or removes:
 * "from" (in parent) moved to name2 in parent2 (NULL name2: removed), and
 * "to", what name2 held before (exchanged to name, or replaced).
 */
static void renamed(const struct stat *from, const struct timespec *from_born,
		    fuse_ino_t parent, const char *name,
		    const struct stat *to, const struct timespec *to_born,
		    fuse_ino_t parent2, const char *name2, int exchange)
{
	struct node *nd;

	pthread_mutex_lock(&nodes_lock);
	if (to && (nd = find_node(to, to_born))) {
		drop_name(nd, parent2, name2);
		if (exchange)
			add_name(nd, parent, name);
	}
	if (from && (nd = find_node(from, from_born))) {
		drop_name(nd, parent, name);
		if (name2)
			add_name(nd, parent2, name2);
	}
	pthread_mutex_unlock(&nodes_lock);
}

static void unref(fuse_ino_t ino, uint64_t n)
{
	struct node *nd = node(ino);
	struct spelling **p, *sp;

	if (nd == &root || nd == &ctl)
		return;
	pthread_mutex_lock(&nodes_lock);
	/* a tag the kernel forgot is free for another spelling */
	for (p = &nd->spellings; (sp = *p); p = &sp->next)
		if (sp->tag == (ino & TAG_MASK)) {
			sp->nlookup -= n < sp->nlookup ? n : sp->nlookup;
			if (!sp->nlookup) {
				*p = sp->next;
				free(sp->name);
				free(sp);
			}
			break;
		}
	nd->nlookup -= n < nd->nlookup ? n : nd->nlookup;
	release_node(nd);
	pthread_mutex_unlock(&nodes_lock);
}

/*
 * casefold: the entry of parent's backing directory that name stands for,
 * as a case-insensitive server would find it: name itself if the exact
 * name exists (or cannot be looked up for another reason), else the entry
 * equal to it ignoring ASCII case (the first by strcmp() if the backing
 * directory has several), else name. The server does this as part of the
 * request, so it is never charged. Returns name or buf (NAME_MAX + 1).
 */
static const char *fold_name(fuse_ino_t parent, const char *name, char *buf)
{
	struct dirent *de;
	struct stat st;
	DIR *dp;
	int fd;

	if (!opt.casefold ||
	    !fstatat(node_fd(parent), name, &st, AT_SYMLINK_NOFOLLOW) ||
	    errno != ENOENT)
		return name;
	fd = openat(node_fd(parent), ".", O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return name;
	if (!(dp = fdopendir(fd))) {
		close(fd);
		return name;
	}
	buf[0] = '\0';
	while ((de = readdir(dp))) {
		/* hidden by the control file, as in ll_lookup() */
		if (node(parent) == &root && !strcasecmp(de->d_name, CTL_NAME))
			continue;
		/* no setlocale(): strcasecmp() folds ASCII only */
		if (!strcasecmp(de->d_name, name) &&
		    (!buf[0] || strcmp(de->d_name, buf) < 0))
			snprintf(buf, NAME_MAX + 1, "%s", de->d_name);
	}
	closedir(dp);
	return buf[0] ? buf : name;
}

/*
 * The tag that makes the kernel's inode number of a name found under
 * another case (A for a stored a) differ from the node's own, taking a
 * kernel reference on it; under nodes_lock. With one inode for both, the
 * kernel takes a rename of a to A for a rename of a file onto itself and
 * never sends it, so the stored case could not be changed. The kernel
 * then knows one file as several inodes (it caches attributes for each);
 * every request on any of them reaches this node, whose reference count
 * is the sum of all. Each spelling in use gets a tag of its own while
 * there are tags left (7), so a rename between two of them is sent too;
 * then spellings share tags.
 */
static uintptr_t spelling_tag(struct node *nd, const char *name,
			      const char *stored)
{
	struct spelling *sp;
	uintptr_t tag, used = 0;

	if (name == stored || !strcmp(name, stored))
		return 0;
	for (sp = nd->spellings; sp; sp = sp->next) {
		if (!strcmp(sp->name, name))
			break;
		used |= (uintptr_t)1 << sp->tag;
	}
	for (tag = 1; !sp && tag <= TAG_MASK; tag++)
		if (!(used & (uintptr_t)1 << tag) &&
		    (sp = calloc(1, sizeof(*sp)))) {
			if (!(sp->name = strdup(name))) {
				free(sp);
				sp = NULL;
				break;
			}
			sp->tag = tag;
			sp->next = nd->spellings;
			nd->spellings = sp;
		}
	/* all taken (or no memory): share one */
	if (!sp) {
		tag = 1 + name_hash(name) % TAG_MASK;
		for (sp = nd->spellings; sp && sp->tag != tag; sp = sp->next)
			;
	}
	if (!sp)
		return 0;
	sp->nlookup++;
	return sp->tag;
}

/*
 * Look name up in parent, taking a kernel reference on its node. With
 * casefold, name may stand for an entry stored under another case.
 */
static int do_lookup(fuse_ino_t parent, const char *name,
		     struct fuse_entry_param *e)
{
	struct node key = { 0 }, *nd, **slot;
	char buf[NAME_MAX + 1];
	const char *stored = fold_name(parent, name, buf);
	uintptr_t tag = 0;
	int fd = -1, err;

	memset(e, 0, sizeof(*e));
	if (stat_born(node_fd(parent), stored, &e->attr, &key.born))
		return errno;
	if (S_ISDIR(e->attr.st_mode)) {
		fd = openat(node_fd(parent), stored,
			    O_PATH | O_NOFOLLOW | O_DIRECTORY);
		if (fd < 0)
			return errno;
		if (stat_born(fd, "", &e->attr, &key.born)) {
			err = errno;
			close(fd);
			return err;
		}
	}
	key.dev = e->attr.st_dev;
	key.ino = e->attr.st_ino;
	key.type = e->attr.st_mode & S_IFMT;
	pthread_mutex_lock(&nodes_lock);
	slot = tsearch(&key, &nodes, node_cmp);
	nd = slot ? *slot : NULL;
	if (nd == &key) {
		nd = malloc(sizeof(*nd));
		if (nd) {
			*nd = key;
			nd->fd = fd;
			*slot = nd;
			fd = -1;
		} else {
			tdelete(&key, &nodes, node_cmp);
		}
	}
	if (nd) {
		nd->nlookup++;
		add_name(nd, parent, stored);
		tag = spelling_tag(nd, name, stored);
	}
	pthread_mutex_unlock(&nodes_lock);
	if (fd >= 0)
		close(fd);
	if (!nd)
		return ENOMEM;
	e->ino = (uintptr_t)nd | tag;
	attrs_fetched(e->ino);
	e->entry_timeout = opt.entry_timeout;
	e->attr_timeout = opt.attr_timeout;
	return 0;
}

static void reply_entry(fuse_req_t req, int err, struct fuse_entry_param *e)
{
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_entry(req, e);
}

/* The control file */

static void ctl_stat(struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = 0x4c4653;
	st->st_mode = S_IFREG | 0600;
	st->st_nlink = 1;
	st->st_uid = getuid();
	st->st_gid = getgid();
}

/* The control file's entry if name in parent is its name, else 0 */
static int ctl_entry(fuse_ino_t parent, const char *name,
		     struct fuse_entry_param *e)
{
	if (parent != FUSE_ROOT_ID ||
	    (opt.casefold ? strcasecmp : strcmp)(name, CTL_NAME))
		return 0;
	memset(e, 0, sizeof(*e));
	e->ino = (uintptr_t)&ctl;
	ctl_stat(&e->attr);
	return 1;
}

static void ctl_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct snapshot *s = NULL;

	if ((fi->flags & O_ACCMODE) != O_WRONLY) {
		s = malloc(sizeof(*s));
		if (!s) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		s->len = format_stats(s->buf, sizeof(s->buf));
		s->len += snprintf(s->buf + s->len, sizeof(s->buf) - s->len,
				   "paused %u\n", paused_now());
		if (s->len >= sizeof(s->buf))
			s->len = sizeof(s->buf) - 1;
	}
	fi->fh = (uintptr_t)s;
	fi->direct_io = 1;
	fuse_reply_open(req, fi);
}

static void ctl_read(fuse_req_t req, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct snapshot *s = (struct snapshot *)(uintptr_t)fi->fh;

	if (!s || off < 0 || (size_t)off >= s->len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, s->buf + off,
			       size < s->len - off ? size : s->len - off);
}

static int ctl_command(char *line)
{
	size_t n = strlen(line);

	while (n && (line[n - 1] == ' ' || line[n - 1] == '\r'))
		line[--n] = '\0';
	if (!n)
		return 0;
	if (!strcmp(line, "reset"))
		reset_counts();
	else if (!strcmp(line, "clear-faults"))
		clear_rules();
	else if (!strncmp(line, "fault ", 6))
		return add_rule(line + 6);
	else if (!strcmp(line, "clear-hides"))
		clear_hides();
	else if (!strncmp(line, "hide ", 5))
		return add_hide(line + 5);
	else if (!strcmp(line, "go"))
		release_pauses();
	else if (!strcmp(line, "clear-pauses"))
		clear_pauses();
	else if (!strncmp(line, "pause ", 6))
		return add_pause(line + 6);
	else
		return -1;
	return 0;
}

static void ctl_write(fuse_req_t req, const char *buf, size_t size)
{
	char *s = strndup(buf, size), *p = s, *line;
	int err = 0;

	if (!s) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	while (!err && (line = strsep(&p, "\n")))
		if (ctl_command(line))
			err = EINVAL;
	free(s);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_write(req, size);
}

/* Requests */

static void ll_init(void *userdata UNUSED, struct fuse_conn_info *conn)
{
	if (!fuse_set_feature_flag(conn, FUSE_CAP_PARALLEL_DIROPS))
		fprintf(stderr, "latencyfs: kernel without parallel dirops\n");
	fuse_set_feature_flag(conn, FUSE_CAP_CACHE_SYMLINKS);
	/*
	 * NFS lists directories with READDIRPLUS, which fills the name and
	 * attribute caches: on every listing, not only where the kernel
	 * guesses that the entries will be stat()ed (READDIRPLUS_AUTO).
	 */
	if (opt.nordirplus)
		fuse_unset_feature_flag(conn, FUSE_CAP_READDIRPLUS);
	else if (!fuse_set_feature_flag(conn, FUSE_CAP_READDIRPLUS))
		fprintf(stderr, "latencyfs: kernel without readdirplus\n");
	fuse_unset_feature_flag(conn, FUSE_CAP_READDIRPLUS_AUTO);
	/*
	 * RELEASE is a background request, 12 at a time by default: a
	 * writer faster than that leaves thousands of closed files open
	 * here, and creates then fail with EMFILE.
	 */
	conn->max_background = opt.threads;
	conn->congestion_threshold = opt.threads * 3 / 4;
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int err;

	if (ctl_entry(parent, name, &e)) {
		fuse_reply_entry(req, &e);
		return;
	}
	pause_point(OP_LOOKUP, parent, name, 0, NULL);
	rpc(OP_LOOKUP);
	note_lookup(parent, name);
	err = fault(OP_LOOKUP, parent, name, 0, NULL);
	if (!err)
		err = do_lookup(parent, name, &e);
	if (err == ENOENT)
		count(OP_LOOKUP_NEGATIVE);
	/* No negative entry: lookupcache=pos */
	reply_entry(req, err, &e);
}

static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	unref(ino, nlookup);
	fuse_reply_none(req);
}

static void ll_forget_multi(fuse_req_t req, size_t n,
			    struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < n; i++)
		unref(forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct stat st;
	int err;

	if (is_ctl(ino)) {
		ctl_stat(&st);
		fuse_reply_attr(req, &st, 0);
		return;
	}
	pause_point(OP_GETATTR, ino, NULL, 0, NULL);
	count(OP_GETATTR);
	if (!attrs_cached(ino)) {
		round_trips(1);
		attrs_fetched(ino);
	}
	err = fault(OP_GETATTR, ino, NULL, 0, NULL);
	/* the kernel passes fi only for regular files: an open one may be unlinked */
	if (!err && fi && fstat(file(fi)->fd, &st))
		err = errno;
	else if (!err && !fi)
		err = stat_node(ino, &st);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, opt.attr_timeout);
}

static int do_setattr(fuse_ino_t ino, struct stat *attr, int to_set,
		      struct fuse_file_info *fi)
{
	int fd = fi ? file(fi)->fd : -1, err;
	struct timespec tv[2];
	char proc[PATH_MAX + 64];
	struct place pl;
	struct stat st;

	if (fd >= 0) {
		pl.dirfd = fd;
		pl.name[0] = '\0';
	} else if ((err = locate(ino, &pl, &st))) {
		return err;
	}
	place_path(proc, sizeof(proc), &pl);
	if ((to_set & FUSE_SET_ATTR_MODE) &&
	    (fd >= 0 ? fchmod(fd, attr->st_mode) :
		       chmod(proc, attr->st_mode)))
		return errno;
	if ((to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) &&
	    fchownat(pl.dirfd, pl.name,
		     to_set & FUSE_SET_ATTR_UID ? attr->st_uid : (uid_t)-1,
		     to_set & FUSE_SET_ATTR_GID ? attr->st_gid : (gid_t)-1,
		     AT_SYMLINK_NOFOLLOW | (pl.name[0] ? 0 : AT_EMPTY_PATH)))
		return errno;
	if ((to_set & FUSE_SET_ATTR_SIZE) &&
	    (fd >= 0 ? ftruncate(fd, attr->st_size) :
		       truncate(proc, attr->st_size)))
		return errno;
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
		tv[0] = attr->st_atim;
		tv[1] = attr->st_mtim;
		if (!(to_set & FUSE_SET_ATTR_ATIME))
			tv[0].tv_nsec = UTIME_OMIT;
		else if (to_set & FUSE_SET_ATTR_ATIME_NOW)
			tv[0].tv_nsec = UTIME_NOW;
		if (!(to_set & FUSE_SET_ATTR_MTIME))
			tv[1].tv_nsec = UTIME_OMIT;
		else if (to_set & FUSE_SET_ATTR_MTIME_NOW)
			tv[1].tv_nsec = UTIME_NOW;
		if (fd >= 0 ? futimens(fd, tv) :
			      utimensat(AT_FDCWD, proc, tv, 0))
			return errno;
	}
	return 0;
}

static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct stat st;
	int err;

	if (is_ctl(ino)) {
		ctl_stat(&st);
		fuse_reply_attr(req, &st, 0);
		return;
	}
	pause_point(OP_SETATTR, ino, NULL, 0, NULL);
	rpc(OP_SETATTR);
	err = fault(OP_SETATTR, ino, NULL, 0, NULL);
	if (!err)
		err = do_setattr(ino, attr, to_set, fi);
	attrs_fetched(ino);
	if (!err && fi && fstat(file(fi)->fd, &st))
		err = errno;
	else if (!err && !fi)
		err = stat_node(ino, &st);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, opt.attr_timeout);
}

static void ll_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	char proc[PATH_MAX + 64];
	struct place pl;
	struct stat st;
	int err;

	if (is_ctl(ino)) {
		fuse_reply_err(req, 0);
		return;
	}
	pause_point(OP_ACCESS, ino, NULL, 0, NULL);
	rpc(OP_ACCESS);
	err = fault(OP_ACCESS, ino, NULL, 0, NULL);
	if (!err)
		err = locate(ino, &pl, &st);
	place_path(proc, sizeof(proc), &pl);
	if (!err && faccessat(AT_FDCWD, proc, mask, 0))
		err = errno;
	fuse_reply_err(req, err);
}

static void ll_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PATH_MAX];
	struct place pl;
	struct stat st;
	ssize_t n = -1;
	int err;

	pause_point(OP_READLINK, ino, NULL, 0, NULL);
	rpc(OP_READLINK);
	err = fault(OP_READLINK, ino, NULL, 0, NULL);
	if (!err)
		err = locate(ino, &pl, &st);
	if (!err)
		n = readlinkat(pl.dirfd, pl.name, buf, sizeof(buf) - 1);
	if (!err && n < 0)
		err = errno;
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	buf[n] = '\0';
	fuse_reply_readlink(req, buf);
}

static void make_node(fuse_req_t req, enum op op, fuse_ino_t parent,
		      const char *name, mode_t mode, dev_t rdev,
		      const char *link)
{
	struct fuse_entry_param e;
	char buf[NAME_MAX + 1];
	int fd = node_fd(parent), res, err;

	pause_point(op, parent, name, 0, NULL);
	rpc_create(op, parent, name);
	err = fault(op, parent, name, 0, NULL);
	/* the kernel looked the name up, but it may have been created since */
	if (!err && fold_name(parent, name, buf) != name)
		err = EEXIST;
	if (!err) {
		if (op == OP_MKDIR)
			res = mkdirat(fd, name, mode);
		else if (op == OP_SYMLINK)
			res = symlinkat(link, fd, name);
		else
			res = mknodat(fd, name, mode, rdev);
		if (res)
			err = errno;
	}
	if (!err)
		err = do_lookup(parent, name, &e);
	reply_entry(req, err, &e);
}

static void ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	make_node(req, OP_MKNOD, parent, name, mode, rdev, NULL);
}

static void ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	make_node(req, OP_MKDIR, parent, name, mode, 0, NULL);
}

static void ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	make_node(req, OP_SYMLINK, parent, name, 0, 0, link);
}

static void ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	struct fuse_entry_param e;
	char buf[NAME_MAX + 1];
	struct place pl;
	struct stat st;
	int err;

	pause_point(OP_LINK, newparent, newname, ino, NULL);
	rpc_create(OP_LINK, newparent, newname);
	err = fault(OP_LINK, newparent, newname, ino, NULL);
	if (!err && fold_name(newparent, newname, buf) != newname)
		err = EEXIST;
	if (!err)
		err = locate(ino, &pl, &st);
	/* never a directory, so pl.name is the file's name */
	if (!err && linkat(pl.dirfd, pl.name, node_fd(newparent), newname, 0))
		err = errno;
	if (!err)
		err = do_lookup(newparent, newname, &e);
	reply_entry(req, err, &e);
}

static void remove_name(fuse_req_t req, enum op op, fuse_ino_t parent,
			const char *name)
{
	char buf[NAME_MAX + 1];
	struct timespec born;
	struct stat st;
	int err, known = 0;

	pause_point(op, parent, name, 0, NULL);
	rpc(op);
	attrs_fetched(parent);
	err = fault(op, parent, name, 0, NULL);
	if (!err)
		name = fold_name(parent, name, buf);
	/* which inode loses this name, to forget the name */
	if (!err && op == OP_UNLINK)
		known = !stat_born(node_fd(parent), name, &st, &born);
	if (!err && unlinkat(node_fd(parent), name,
			     op == OP_RMDIR ? AT_REMOVEDIR : 0))
		err = errno;
	if (!err && known)
		renamed(&st, &born, parent, name, NULL, NULL, 0, NULL, 0);
	fuse_reply_err(req, err);
}

static void ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, OP_UNLINK, parent, name);
}

static void ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, OP_RMDIR, parent, name);
}

static void ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	char buf[NAME_MAX + 1], newbuf[NAME_MAX + 1];
	struct stat from, to;
	struct timespec from_born, to_born;
	const char *stored;
	int err, known = 0, replaced = 0;

	pause_point(OP_RENAME, parent, name, newparent, newname);
	rpc_create(OP_RENAME, newparent, newname);
	attrs_fetched(parent);
	err = fault(OP_RENAME, parent, name, newparent, newname);
	/*
	 * casefold: a target stored under another case is replaced (it
	 * keeps its stored case, as with ext4's casefold),
	 * unless it is the source itself: then only the case changes.
	 */
	if (!err) {
		name = fold_name(parent, name, buf);
		stored = fold_name(newparent, newname, newbuf);
		if (stored != newname && (node(parent) != node(newparent) ||
					  strcmp(name, stored) ||
					  (flags & RENAME_EXCHANGE)))
			newname = stored;
	}
	/* which inodes move or lose a name, to keep the names of their nodes */
	if (!err) {
		known = !stat_born(node_fd(parent), name, &from, &from_born);
		replaced = !stat_born(node_fd(newparent), newname, &to, &to_born);
		/* two names of one inode: rename does nothing */
		if (known && replaced && from.st_dev == to.st_dev &&
		    from.st_ino == to.st_ino)
			known = 0;
	}
	if (!err && renameat2(node_fd(parent), name, node_fd(newparent),
			      newname, flags))
		err = errno;
	if (!err && known)
		renamed(&from, &from_born, parent, name,
			replaced ? &to : NULL, &to_born, newparent, newname,
			!!(flags & RENAME_EXCHANGE));
	fuse_reply_err(req, err);
}

static int open_file(int fd, struct fuse_file_info *fi)
{
	struct file *f;

	if (fd < 0)
		return errno;
	f = calloc(1, sizeof(*f));
	if (!f) {
		close(fd);
		return ENOMEM;
	}
	f->fd = fd;
	fi->fh = (uintptr_t)f;
	return 0;
}

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct timespec born;
	struct place pl;
	struct stat st;
	int fd, err;

	if (is_ctl(ino)) {
		ctl_open(req, fi);
		return;
	}
	pause_point(OP_OPEN, ino, NULL, 0, NULL);
	rpc(OP_OPEN);
	err = fault(OP_OPEN, ino, NULL, 0, NULL);
	if (!err)
		err = locate(ino, &pl, &st);
	if (!err) {
		/* truncate only once it is known to be the right file */
		fd = openat(pl.dirfd, pl.name,
			    (fi->flags & ~O_TRUNC) | O_NOFOLLOW);
		if (fd < 0 || stat_born(fd, "", &st, &born))
			err = errno;
		else if (!same_inode(node(ino), &st, &born))
			err = ESTALE;
		else if ((fi->flags & O_TRUNC) && ftruncate(fd, 0))
			err = errno;
		if (err && fd >= 0)
			close(fd);
		else if (!err && !(err = open_file(fd, fi)))
			attach_file(fi, ino);
	}
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	attrs_fetched(ino);
	fuse_reply_open(req, fi);
}

static void ll_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	char buf[NAME_MAX + 1];
	const char *stored = name;
	int err;

	pause_point(OP_CREATE, parent, name, 0, NULL);
	rpc_create(OP_CREATE, parent, name);
	err = fault(OP_CREATE, parent, name, 0, NULL);
	/*
	 * casefold: a name stored under another case is the file to open,
	 * or EEXIST for O_EXCL (the kernel looked the name up first, but
	 * another client may have created it since)
	 */
	if (!err && (stored = fold_name(parent, name, buf)) != name &&
	    (fi->flags & O_EXCL))
		err = EEXIST;
	if (!err)
		err = open_file(openat(node_fd(parent), stored,
				       (fi->flags | O_CREAT) & ~O_NOFOLLOW,
				       mode), fi);
	if (!err && (err = do_lookup(parent, name, &e))) {
		close(file(fi)->fd);
		free(file(fi));
	}
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	attach_file(fi, e.ino);
	fuse_reply_create(req, &e, fi);
}

static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
	int err;

	if (is_ctl(ino)) {
		ctl_read(req, size, off, fi);
		return;
	}
	pause_point(OP_READ, ino, NULL, 0, NULL);
	data(OP_READ);
	err = fault(OP_READ, ino, NULL, 0, NULL);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	buf.buf[0].fd = file(fi)->fd;
	buf.buf[0].pos = off;
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

static void ll_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	ssize_t n = -1;
	int err;

	if (is_ctl(ino)) {
		ctl_write(req, buf, size);
		return;
	}
	pause_point(OP_WRITE, ino, NULL, 0, NULL);
	data(OP_WRITE);
	err = fault(OP_WRITE, ino, NULL, 0, NULL);
	if (!err && (n = pwrite(file(fi)->fd, buf, size, off)) < 0)
		err = errno;
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	atomic_store(&file(fi)->dirty, 1);
	fuse_reply_write(req, n);
}

/*
 * close() on NFS writes back dirty data and commits it (close-to-open):
 * one round trip if the file was written since the last flush or fsync.
 */
static void ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (is_ctl(ino)) {
		fuse_reply_err(req, 0);
		return;
	}
	pause_point(OP_FLUSH, ino, NULL, 0, NULL);
	count(OP_FLUSH);
	round_trips(atomic_exchange(&file(fi)->dirty, 0));
	fuse_reply_err(req, fault(OP_FLUSH, ino, NULL, 0, NULL));
}

/* Releasing a file is no request on NFSv3 (no CLOSE). */
static void ll_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	if (is_ctl(ino)) {
		free((void *)(uintptr_t)fi->fh);
	} else {
		pause_point(OP_RELEASE, ino, NULL, 0, NULL);
		count(OP_RELEASE);
		detach_file(file(fi));
		close(file(fi)->fd);
		free(file(fi));
	}
	fuse_reply_err(req, 0);
}

static void ll_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	int fd, err;

	if (is_ctl(ino)) {
		fuse_reply_err(req, 0);
		return;
	}
	fd = file(fi)->fd;
	pause_point(OP_FSYNC, ino, NULL, 0, NULL);
	rpc(OP_FSYNC);
	atomic_store(&file(fi)->dirty, 0);
	err = fault(OP_FSYNC, ino, NULL, 0, NULL);
	if (!err && (datasync ? fdatasync(fd) : fsync(fd)))
		err = errno;
	fuse_reply_err(req, err);
}

static void ll_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct dir *d = NULL;
	int fd = -1, err;

	pause_point(OP_OPENDIR, ino, NULL, 0, NULL);
	rpc(OP_OPENDIR);
	err = fault(OP_OPENDIR, ino, NULL, 0, NULL);
	if (!err)
		fd = openat(node_fd(ino), ".", O_RDONLY | O_DIRECTORY);
	if (!err && fd < 0)
		err = errno;
	if (!err && !(d = calloc(1, sizeof(*d))))
		err = ENOMEM;
	if (!err && !(d->dp = fdopendir(fd)))
		err = errno;
	if (err) {
		if (fd >= 0)
			close(fd);
		free(d);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uintptr_t)d;
	attrs_fetched(ino);
	fuse_reply_open(req, fi);
}

/*
 * An NFS READDIR reply carries up to readdir_size bytes of entries and
 * says whether the listing is complete; the kernel's READDIR buffers may
 * be smaller and it asks once more to learn that the listing ended. So
 * charge one round trip per readdir_size bytes sent through this handle.
 */
static unsigned readdir_round_trips(uint64_t start, size_t n)
{
	uint64_t c = opt.readdir_size;

	if (!n)
		return 0;
	if (!c)
		return 1;
	return (start + n + c - 1) / c - (start + c - 1) / c;
}

/* Add an entry to buf if it fits in len; returns its size either way */
static size_t add_entry(fuse_req_t req, int plus, char *buf, size_t len,
			const char *name, const struct fuse_entry_param *e,
			off_t off)
{
	return plus ? fuse_add_direntry_plus(req, buf, len, name, e, off) :
		fuse_add_direntry(req, buf, len, name, &e->attr, off);
}

/*
 * A READDIRPLUS entry: what a LOOKUP of the name would return, with the
 * reference to the node that the kernel takes for it (and gives back
 * with FORGET), but neither counted nor charged as a LOOKUP: NFS gets
 * attributes and file handles with the names. "." and ".." take no
 * reference; a name removed since it was read keeps e as it is (its
 * inode number and type: the kernel then only lists it).
 */
static void plus_entry(fuse_ino_t parent, const char *name,
		       struct fuse_entry_param *e)
{
	struct fuse_entry_param found;

	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return;
	if (ctl_entry(parent, name, &found) || !do_lookup(parent, name, &found))
		*e = found;
}

/*
 * READDIR, or READDIRPLUS with plus. Its entries carry a LOOKUP reply
 * each and are charged by their size too: an NFS READDIRPLUS reply, with
 * attributes and a file handle in each entry, holds fewer than a READDIR.
 */
static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
		       off_t off, struct fuse_file_info *fi, int plus)
{
	struct dir *d = (struct dir *)(uintptr_t)fi->fh;
	enum op op = plus ? OP_READDIRPLUS : OP_READDIR;
	char *buf = malloc(size), dir[2 * PATH_MAX];
	struct fuse_entry_param e;
	size_t pos = 0, n;
	int err, hiding = 0;

	pause_point(op, ino, NULL, 0, NULL);
	count(op);
	err = buf ? fault(op, ino, NULL, 0, NULL) : ENOMEM;
	if (!err && atomic_load(&have_hides)) {
		hiding = 1;
		rel_path(dir, sizeof(dir), ino, NULL);
	}
	if (!err && off != d->offset) {
		seekdir(d->dp, off);
		d->offset = off;
		d->next = NULL;
	}
	while (!err) {
		if (!d->next) {
			errno = 0;
			d->next = readdir(d->dp);
			if (!d->next) {
				err = errno;
				break;
			}
		}
		/*
		 * Left out, as if read before it was created: the next entry
		 * sent carries its own offset, so a listing resumed from any
		 * offset sent goes on where it should. d->offset stays that
		 * of the last entry sent, dp is past the hidden one.
		 */
		if (hiding && hidden(dir, d->next->d_name)) {
			d->next = NULL;
			continue;
		}
		memset(&e, 0, sizeof(e));
		e.attr.st_ino = d->next->d_ino;
		e.attr.st_mode = d->next->d_type << 12;
		/* sized first: an entry that does not fit takes no reference */
		n = add_entry(req, plus, NULL, 0, d->next->d_name, &e,
			      d->next->d_off);
		if (n > size - pos)
			break;
		if (plus)
			plus_entry(ino, d->next->d_name, &e);
		add_entry(req, plus, buf + pos, n, d->next->d_name, &e,
			  d->next->d_off);
		pos += n;
		d->offset = d->next->d_off;
		d->next = NULL;
	}
	if (err && pos)
		err = 0;
	round_trips(err ? 1 : readdir_round_trips(d->bytes, pos));
	d->bytes += pos;
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, pos);
	free(buf);
}

static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
		       off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, 0);
}

static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, 1);
}

static void ll_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct dir *d = (struct dir *)(uintptr_t)fi->fh;

	pause_point(OP_RELEASEDIR, ino, NULL, 0, NULL);
	count(OP_RELEASEDIR);
	closedir(d->dp);
	free(d);
	fuse_reply_err(req, 0);
}

static void ll_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	int fd = dirfd(((struct dir *)(uintptr_t)fi->fh)->dp), err;

	pause_point(OP_FSYNCDIR, ino, NULL, 0, NULL);
	rpc(OP_FSYNCDIR);
	err = fault(OP_FSYNCDIR, ino, NULL, 0, NULL);
	if (!err && (datasync ? fdatasync(fd) : fsync(fd)))
		err = errno;
	fuse_reply_err(req, err);
}

static void ll_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs st;
	struct place pl;
	int err;

	if (is_ctl(ino))
		ino = FUSE_ROOT_ID;
	pause_point(OP_STATFS, ino, NULL, 0, NULL);
	rpc(OP_STATFS);
	err = fault(OP_STATFS, ino, NULL, 0, NULL);
	if (locate(ino, &pl, NULL))
		pl.dirfd = root.fd;
	if (!err && fstatvfs(pl.dirfd, &st))
		err = errno;
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_statfs(req, &st);
}

static const struct fuse_lowlevel_ops ops = {
	.init = ll_init,
	.lookup = ll_lookup,
	.forget = ll_forget,
	.forget_multi = ll_forget_multi,
	.getattr = ll_getattr,
	.setattr = ll_setattr,
	.access = ll_access,
	.readlink = ll_readlink,
	.mknod = ll_mknod,
	.mkdir = ll_mkdir,
	.symlink = ll_symlink,
	.link = ll_link,
	.unlink = ll_unlink,
	.rmdir = ll_rmdir,
	.rename = ll_rename,
	.open = ll_open,
	.create = ll_create,
	.read = ll_read,
	.write = ll_write,
	.flush = ll_flush,
	.release = ll_release,
	.fsync = ll_fsync,
	.opendir = ll_opendir,
	.readdir = ll_readdir,
	.readdirplus = ll_readdirplus,
	.releasedir = ll_releasedir,
	.fsyncdir = ll_fsyncdir,
	.statfs = ll_statfs,
};

/* Start-up */

enum { KEY_FAULT, KEY_HIDE, KEY_DEBUG };

#define OPT(t, field) { t, offsetof(struct options, field), 1 }

static const struct fuse_opt opt_spec[] = {
	OPT("delay_us=%u", delay_us),
	OPT("rw_delay_us=%u", rw_delay_us),
	OPT("entry_timeout=%lf", entry_timeout),
	OPT("attr_timeout=%lf", attr_timeout),
	OPT("readdir_size=%u", readdir_size),
	OPT("threads=%u", threads),
	OPT("stats=%s", stats),
	OPT("pidfile=%s", pidfile),
	OPT("casefold", casefold),
	OPT("nordirplus", nordirplus),
	OPT("-f", foreground),
	OPT("-h", help),
	OPT("--help", help),
	FUSE_OPT_KEY("fault=", KEY_FAULT),
	FUSE_OPT_KEY("hide=", KEY_HIDE),
	FUSE_OPT_KEY("-d", KEY_DEBUG),
	FUSE_OPT_END
};

static const char usage[] =
"usage: latencyfs [-f] [-d] [-o OPTION[,OPTION...]] BACKING_DIR MOUNTPOINT\n"
"\n"
"  -f                    stay in the foreground\n"
"  -d                    print every request (implies -f)\n"
"  -o delay_us=N         round-trip delay in microseconds (500)\n"
"  -o rw_delay_us=N      delay of each read and write (0)\n"
"  -o entry_timeout=S    seconds a found name stays cached (30)\n"
"  -o attr_timeout=S     seconds attributes stay cached (3)\n"
"  -o readdir_size=N     bytes of entries per listing round trip (32768)\n"
"  -o nordirplus         list with READDIR: no attributes with the names\n"
"  -o threads=N          requests served at once (64)\n"
"  -o stats=PATH         write counters here on SIGUSR1 and unmount\n"
"  -o pidfile=PATH       write the pid here once mounted\n"
"  -o casefold           case-insensitive, case-preserving names (ASCII);\n"
"                        implies entry_timeout=0\n"
"  -o fault=OP:GLOB:ERRNO[:after=N][:times=N][:prob=P][:seed=N]\n"
"                        fail matching requests (repeatable)\n"
"  -o hide=GLOB          leave matching paths out of listings (repeatable)\n"
"\n"
"Other -o options go to libfuse (allow_other, ...). Counters and commands:\n"
"MOUNTPOINT/" CTL_NAME "; see README.md.\n";

static int opt_proc(void *data UNUSED, const char *arg, int key,
		    struct fuse_args *out UNUSED)
{
	switch (key) {
	case KEY_FAULT:
		if (!add_rule(arg + strlen("fault=")))
			return 0;
		fprintf(stderr, "latencyfs: bad fault '%s'\n", arg);
		return -1;
	case KEY_HIDE:
		if (!add_hide(arg + strlen("hide=")))
			return 0;
		fprintf(stderr, "latencyfs: bad hide '%s'\n", arg);
		return -1;
	case KEY_DEBUG:
		opt.foreground = 1;
		return 1;
	case FUSE_OPT_KEY_NONOPT:
		if (!backing)
			backing = strdup(arg);
		else if (!mountpoint)
			mountpoint = strdup(arg);
		else
			return -1;
		return 0;
	default:
		return 1;
	}
}

static char *absolute(char *path)
{
	char cwd[PATH_MAX], *abs;

	if (!path || *path == '/' || !getcwd(cwd, sizeof(cwd)) ||
	    asprintf(&abs, "%s/%s", cwd, path) < 0)
		return path;
	free(path);
	return abs;
}

static void write_pidfile(void)
{
	char buf[32];

	if (opt.pidfile)
		write_file(opt.pidfile, buf,
			   snprintf(buf, sizeof(buf), "%ld\n", (long)getpid()));
}

/*
 * Like fuse_daemonize(), but the parent returns only after the pid file is
 * written, so that a script can use both as soon as latencyfs returns.
 */
static int daemonize(void)
{
	int pipefd[2], fd;
	char c = 0;

	if (pipe(pipefd))
		return -1;
	switch (fork()) {
	case -1:
		return -1;
	case 0:
		break;
	default:
		close(pipefd[1]);
		_exit(read(pipefd[0], &c, 1) == 1 ? 0 : 1);
	}
	close(pipefd[0]);
	if (setsid() < 0 || chdir("/"))
		return -1;
	write_pidfile();
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (write(pipefd[1], &c, 1) != 1)
		return -1;
	close(pipefd[1]);
	return 0;
}

static void *signal_thread(void *arg)
{
	sigset_t *set = arg;
	int sig;

	for (;;) {
		if (sigwait(set, &sig))
			continue;
		if (sig == SIGUSR1)
			write_stats();
		else
			reset_counts();
	}
	return NULL;
}

/*
 * Every directory the kernel knows holds an O_PATH descriptor here, and
 * the kernel forgets inodes only under memory pressure: a tree of a few
 * thousand directories passes the usual limit of 1024. Raise the limit
 * as far as we may (root: up to fs.nr_open).
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	rlim_t want = 1 << 20;
	FILE *f = fopen("/proc/sys/fs/nr_open", "r");
	unsigned long nr_open;

	if (f) {
		if (fscanf(f, "%lu", &nr_open) == 1 && nr_open < want)
			want = nr_open;
		fclose(f);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_max < want) {
		struct rlimit raised = { want, want };

		if (!setrlimit(RLIMIT_NOFILE, &raised))
			return;
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_loop_config *config;
	struct fuse_session *se;
	static sigset_t set;
	pthread_condattr_t condattr;
	pthread_t thread;
	int ret = 1;

	/* pause points wait with timeouts on the monotonic clock */
	if (pthread_condattr_init(&condattr) ||
	    pthread_condattr_setclock(&condattr, CLOCK_MONOTONIC) ||
	    pthread_cond_init(&pauses_cond, &condattr))
		return 1;

	if (fuse_opt_parse(&args, &opt, opt_spec, opt_proc) ||
	    (!opt.help && (!backing || !mountpoint || !opt.threads ||
			   opt.entry_timeout < 0 || opt.attr_timeout < 0))) {
		fputs(usage, stderr);
		return 129;
	}
	if (opt.help) {
		fputs(usage, stdout);
		return 0;
	}
	/*
	 * The kernel caches names case-sensitively: a cached A would go on
	 * naming what a held before a was removed, renamed or replaced
	 * under another case. Negative entries are never cached anyway.
	 */
	if (opt.casefold)
		opt.entry_timeout = 0;
	umask(0);
	raise_fd_limit();
	if (!(backing = realpath(backing, NULL)) ||
	    (root.fd = open(backing, O_PATH | O_DIRECTORY)) < 0) {
		perror("latencyfs: backing directory");
		return 1;
	}
	backing_len = strlen(backing);
	/* libfuse unmounts by this path, after daemonize() went to / */
	mountpoint = absolute(mountpoint);
	opt.stats = absolute(opt.stats);
	opt.pidfile = absolute(opt.pidfile);
	prctl(PR_SET_TIMERSLACK, 1UL);
	mount_path = realpath(mountpoint, NULL);

	if (fuse_opt_insert_arg(&args, 1,
				"-ofsname=latencyfs,subtype=latencyfs"))
		return 1;
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se)
		return 1;
	session = se;
	if (fuse_set_signal_handlers(se) || fuse_session_mount(se, mountpoint))
		goto out;
	if (opt.foreground)
		write_pidfile();
	else if (daemonize())
		goto out_unmount;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&thread, NULL, signal_thread, &set) ||
	    !(config = fuse_loop_cfg_create()))
		goto out_unmount;
	fuse_loop_cfg_set_max_threads(config, opt.threads);
	ret = fuse_session_loop_mt(se, config) < 0;
	fuse_loop_cfg_destroy(config);
out_unmount:
	fuse_session_unmount(se);
	write_stats();
	if (opt.pidfile)
		unlink(opt.pidfile);
out:
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	fuse_opt_free_args(&args);
	return ret;
}
