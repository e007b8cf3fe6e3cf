/*
 * bench/writer.c: the least a checkout must do, as a floor to measure
 * Git's checkout against. Copies the files and symlinks of SRC to DST
 * from N threads, doing only what writing a fresh work tree needs: one
 * mkdir per directory, then per file an O_CREAT|O_EXCL create, the
 * writes and a close (per symlink, one symlink()). No lstat, no index,
 * no object reads: the contents come from SRC, on the local disk.
 *
 *   writer [-j THREADS] [-o index|interleaved] SRC DST
 *
 * -o index writes the files in the order of Git's index (sorted paths);
 * -o interleaved (the default) takes one file from each directory in
 * turn, largest directory first, so that concurrent creates land in
 * different directories (Linux serializes them within one). DST must
 * not exist; its parent must. Prints the seconds the copy took (from the
 * mkdir of DST to the last close), after SRC was read into memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct dir {
	char *path;		/* under DST */
	int parent;		/* index in dirs, -1 for DST itself */
	size_t nr_files;
	atomic_int made;
	pthread_mutex_t lock;
};

struct file {
	char *rel;		/* path under SRC and DST */
	int dir;
	mode_t mode;
	char *data;		/* contents, or a symlink's target */
	size_t len;
	size_t turn;		/* its place in its directory, for interleaving */
};

static struct dir *dirs;
static struct file *files, **order;
static size_t nr_dirs, nr_files, alloc_dirs, alloc_files;
static int dir_at_level[4096];
static const char *src, *dst;
static atomic_size_t next_file;
static atomic_int failed;

static void die(const char *msg, const char *path)
{
	fprintf(stderr, "writer: %s '%s': %s\n", msg, path, strerror(errno));
	exit(1);
}

static void *grow(void *p, size_t *alloc, size_t nr, size_t size)
{
	if (nr < *alloc)
		return p;
	*alloc = *alloc ? 2 * *alloc : 1024;
	p = realloc(p, *alloc * size);
	if (!p) {
		fputs("writer: out of memory\n", stderr);
		exit(1);
	}
	return p;
}

static char *read_all(const char *path, size_t size, size_t *len)
{
	char *buf = malloc(size ? size : 1);
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (!buf || fd < 0)
		die("cannot read", path);
	for (*len = 0; *len < size; *len += n)
		if ((n = read(fd, buf + *len, size - *len)) <= 0)
			break;
	close(fd);
	return buf;
}

static int scan(const char *path, const struct stat *st, int type,
		struct FTW *ftw)
{
	const char *rel = path + strlen(src);
	struct file *f;
	char target[4096];
	ssize_t n;

	while (*rel == '/')
		rel++;
	if (ftw->level >= 4096)
		return -1;
	if (type == FTW_D) {
		if (ftw->level && !strcmp(path + ftw->base, ".git"))
			return FTW_SKIP_SUBTREE;
		dirs = grow(dirs, &alloc_dirs, nr_dirs, sizeof(*dirs));
		memset(&dirs[nr_dirs], 0, sizeof(*dirs));
		if (asprintf(&dirs[nr_dirs].path, "%s%s%s", dst,
			     *rel ? "/" : "", rel) < 0)
			return -1;
		dirs[nr_dirs].parent = ftw->level ?
			dir_at_level[ftw->level - 1] : -1;
		pthread_mutex_init(&dirs[nr_dirs].lock, NULL);
		dir_at_level[ftw->level] = nr_dirs++;
		return FTW_CONTINUE;
	}
	if (type != FTW_F && type != FTW_SL)
		return FTW_CONTINUE;
	files = grow(files, &alloc_files, nr_files, sizeof(*files));
	f = &files[nr_files++];
	f->rel = strdup(rel);
	f->dir = dir_at_level[ftw->level - 1];
	f->turn = dirs[f->dir].nr_files++;
	f->mode = st->st_mode;
	if (S_ISLNK(st->st_mode)) {
		if ((n = readlink(path, target, sizeof(target) - 1)) < 0)
			die("cannot read link", path);
		target[n] = '\0';
		f->data = strdup(target);
		f->len = n;
	} else {
		f->data = read_all(path, st->st_size, &f->len);
	}
	return FTW_CONTINUE;
}

static int by_path(const void *a, const void *b)
{
	return strcmp((*(struct file **)a)->rel, (*(struct file **)b)->rel);
}

/* one file of each directory in turn, largest directories first */
static int by_turn(const void *a, const void *b)
{
	const struct file *x = *(struct file **)a, *y = *(struct file **)b;

	if (x->turn != y->turn)
		return x->turn < y->turn ? -1 : 1;
	if (dirs[x->dir].nr_files != dirs[y->dir].nr_files)
		return dirs[x->dir].nr_files > dirs[y->dir].nr_files ? -1 : 1;
	return x->dir - y->dir;
}

static void make_dir(int i)
{
	struct dir *d = &dirs[i];

	if (atomic_load(&d->made))
		return;
	pthread_mutex_lock(&d->lock);
	if (!atomic_load(&d->made)) {
		if (d->parent >= 0)
			make_dir(d->parent);
		if (mkdir(d->path, 0777) && errno != EEXIST) {
			fprintf(stderr, "writer: mkdir '%s': %s\n", d->path,
				strerror(errno));
			atomic_store(&failed, 1);
		}
		atomic_store(&d->made, 1);
	}
	pthread_mutex_unlock(&d->lock);
}

static void write_file(const struct file *f)
{
	char *path;
	int fd;

	if (asprintf(&path, "%s/%s", dst, f->rel) < 0)
		exit(1);
	make_dir(f->dir);
	if (S_ISLNK(f->mode)) {
		if (symlink(f->data, path))
			goto fail;
	} else {
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY,
			  f->mode & 0100 ? 0777 : 0666);
		if (fd < 0 || write(fd, f->data, f->len) != (ssize_t)f->len ||
		    close(fd))
			goto fail;
	}
	free(path);
	return;
fail:
	fprintf(stderr, "writer: '%s': %s\n", path, strerror(errno));
	atomic_store(&failed, 1);
	free(path);
}

static void *worker(void *arg)
{
	size_t i;

	(void)arg;
	while ((i = atomic_fetch_add(&next_file, 1)) < nr_files)
		write_file(order[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 64, interleaved = 1, opt, i;
	struct timespec t0, t1;
	pthread_t *tids;
	size_t k;

	while ((opt = getopt(argc, argv, "j:o:")) != -1) {
		if (opt == 'j' && atoi(optarg) > 0)
			threads = atoi(optarg);
		else if (opt == 'o' && !strcmp(optarg, "index"))
			interleaved = 0;
		else if (opt == 'o' && !strcmp(optarg, "interleaved"))
			interleaved = 1;
		else
			goto usage;
	}
	if (argc - optind != 2)
		goto usage;
	src = argv[optind];
	dst = argv[optind + 1];
	if (nftw(src, scan, 64, FTW_PHYS | FTW_ACTIONRETVAL) < 0)
		die("cannot scan", src);
	order = malloc(nr_files * sizeof(*order) + 1);
	tids = malloc(threads * sizeof(*tids));
	if (!order || !tids)
		return 1;
	for (k = 0; k < nr_files; k++)
		order[k] = &files[k];
	qsort(order, nr_files, sizeof(*order), interleaved ? by_turn : by_path);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	make_dir(0);
	for (i = 0; i < threads; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL))
			break;
	if (!i)
		worker(NULL);
	while (i--)
		pthread_join(tids[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.3f\n", (t1.tv_sec - t0.tv_sec) +
	       (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return atomic_load(&failed);
usage:
	fputs("usage: writer [-j THREADS] [-o index|interleaved] SRC DST\n",
	      stderr);
	return 129;
}
