/*
 * bench/unlink-floor.c: the least that removing many files must do, as a
 * floor to measure "git clean" and "git prune-packed" against. From N
 * threads, one directory per thread at a time (Linux serializes the
 * removals within one directory, NFS servers too), lists a DIR, unlinks
 * its files and removes it. No lstat(), no index, no object store, no
 * messages: only the listings, the unlink()s and the rmdir()s.
 *
 *   unlink-floor [-j THREADS] DIR...
 *
 * The DIRs hold files only. THREADS defaults to 64 (Git's
 * NETFS_MAX_THREADS). Exits 1 if anything could not be removed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct dir {
	const char *path;
	char **files;		/* full paths */
	size_t nr;
};

static struct dir *dirs;
static size_t nr_dirs;
static atomic_size_t next_dir;
static atomic_int failed;

static void list_dir(struct dir *d)
{
	DIR *dh = opendir(d->path);
	struct dirent *e;
	size_t alloc = 0;

	if (!dh) {
		perror(d->path);
		failed = 1;
		return;
	}
	while ((e = readdir(dh))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (d->nr == alloc) {
			alloc = alloc ? 2 * alloc : 32;
			d->files = realloc(d->files, alloc * sizeof(*d->files));
			if (!d->files)
				abort();
		}
		if (asprintf(&d->files[d->nr++], "%s/%s", d->path, e->d_name) < 0)
			abort();
	}
	closedir(dh);
}

static void *remove_dirs(void *arg)
{
	size_t i, j;

	(void)arg;
	while ((i = atomic_fetch_add(&next_dir, 1)) < nr_dirs) {
		list_dir(&dirs[i]);
		for (j = 0; j < dirs[i].nr; j++)
			if (unlink(dirs[i].files[j])) {
				perror(dirs[i].files[j]);
				failed = 1;
			}
		if (rmdir(dirs[i].path)) {
			perror(dirs[i].path);
			failed = 1;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 64, opt, i;
	pthread_t *th;
	size_t k;

	while ((opt = getopt(argc, argv, "j:")) != -1) {
		if (opt != 'j')
			goto usage;
		threads = atoi(optarg);
	}
	if (optind >= argc || threads < 1)
		goto usage;
	nr_dirs = argc - optind;
	dirs = calloc(nr_dirs, sizeof(*dirs));
	th = calloc(threads, sizeof(*th));
	if (!dirs || !th)
		abort();
	for (k = 0; k < nr_dirs; k++)
		dirs[k].path = argv[optind + k];
	for (i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, remove_dirs, NULL))
			abort();
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	return failed;
usage:
	fprintf(stderr, "usage: unlink-floor [-j THREADS] DIR...\n");
	return 129;
}
