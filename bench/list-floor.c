/*
 * bench/list-floor.c: the least that "git status" must do in a work tree,
 * as a floor to measure it against: list every directory once, to find
 * the untracked files. From N threads, one directory per thread at a
 * time, it opens and reads each directory named in a file, and nothing
 * else: no lstat(), no index, no .gitignore, no objects, no output.
 *
 *   list-floor [-j THREADS] FILE
 *
 * FILE names the directories, one a line, relative to the current
 * directory. THREADS defaults to 64 (Git's NETFS_MAX_THREADS). Exits 1
 * if a directory could not be read.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char **dirs;
static size_t nr_dirs;
static atomic_size_t next_dir;
static atomic_int failed;

static void *list_dirs(void *arg)
{
	size_t i;
	DIR *dh;

	(void)arg;
	while ((i = atomic_fetch_add(&next_dir, 1)) < nr_dirs) {
		dh = opendir(dirs[i]);
		if (!dh) {
			perror(dirs[i]);
			failed = 1;
			continue;
		}
		errno = 0;
		while (readdir(dh))
			;
		if (errno) {
			perror(dirs[i]);
			failed = 1;
		}
		closedir(dh);
	}
	return NULL;
}

static void read_names(const char *file)
{
	FILE *fh = fopen(file, "r");
	char *line = NULL;
	size_t alloc = 0, len = 0;
	ssize_t n;

	if (!fh) {
		perror(file);
		exit(1);
	}
	while ((n = getline(&line, &len, fh)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (!n)
			continue;
		if (nr_dirs == alloc) {
			alloc = alloc ? 2 * alloc : 256;
			dirs = realloc(dirs, alloc * sizeof(*dirs));
			if (!dirs)
				abort();
		}
		if (!(dirs[nr_dirs++] = strdup(line)))
			abort();
	}
	free(line);
	fclose(fh);
}

int main(int argc, char **argv)
{
	int threads = 64, opt, i;
	pthread_t *th;

	while ((opt = getopt(argc, argv, "j:")) != -1) {
		if (opt != 'j')
			goto usage;
		threads = atoi(optarg);
	}
	if (optind != argc - 1 || threads < 1)
		goto usage;
	read_names(argv[optind]);
	th = calloc(threads, sizeof(*th));
	if (!th)
		abort();
	for (i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, list_dirs, NULL))
			abort();
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	return failed;
usage:
	fprintf(stderr, "usage: list-floor [-j THREADS] FILE\n");
	return 129;
}
