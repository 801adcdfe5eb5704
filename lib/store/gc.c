// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The sweep behind cfsctl gc: removes from a digest store every object
 * ("xx/<62 hex>" regular file, or ostree's "xx/<62 hex>.file" that build
 * --from-ostree unpacks) that the given set does not keep, and the
 * temporaries of builds and fetches that died. The caller lists every image
 * first and holds the store's lock exclusively, so the set is complete and
 * no build or fetch publishes while we sweep. Anything that is not an object
 * or a temporary is reported and left alone; symlinks are never followed.
 * Entries are visited in sorted order, so reports are stable.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/internal.h"

/* Room for "xx/" and a longest name. */
#define GC_PATH_SIZE (3 + 256)

struct gc {
	int dirfd;
	const char *name;
	const struct cfs_objects *keep;
	bool dry_run;
	cfs_gc_fn fn;
	void *ctx;
	struct cfs_gc_stats *st;
	int first_err;
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The names in directory @dirfd (but . and ..), sorted. */
static int list_dir(int dirfd, char ***out, size_t *n_out)
{
	char **names = NULL, **grown;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = cfs_opendir_at(dirfd);
	int r = 0;

	if (!d)
		return -errno;
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			r = -errno;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		grown = cfs_grow(names, &cap, n, sizeof(*names), 64);
		if (!grown) {
			r = -ENOMEM;
			break;
		}
		names = grown;
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (r) {
		free_names(names, n);
		return r;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	*out = names;
	*n_out = n;
	return 0;
}

static bool is_hex(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[len] == '\0';
}

/*
 * An object's name in its "xx" directory: 62 hex digits, or ostree's
 * "<62 hex>.file", under which build --from-ostree unpacks an archive
 * repository's contents into a store (and images point at them).
 */
static bool is_object_name(const char *s)
{
	size_t len = 2 * CFS_DIGEST_SIZE - 2;

	if (strlen(s) == len + 5 && strcmp(s + len, ".file") == 0) {
		char hex[2 * CFS_DIGEST_SIZE - 1];

		memcpy(hex, s, len);
		hex[len] = '\0';
		return is_hex(hex, len);
	}
	return is_hex(s, len);
}

static void report(struct gc *g, enum cfs_gc_kind kind, const char *path, uint64_t size,
		   const char *why)
{
	struct cfs_gc_entry e = { .kind = kind, .path = path, .size = size, .why = why };

	if (kind == CFS_GC_OTHER)
		g->st->others++;
	if (g->fn)
		g->fn(g->ctx, &e);
}

static const char *type_words(mode_t mode)
{
	return S_ISDIR(mode) ? "a directory" : S_ISLNK(mode) ? "a symlink" : "not a regular file";
}

/* Remove @path (in @fd as @name) of @size bytes and report it. */
static void remove_one(struct gc *g, int fd, const char *name, const char *path,
		       enum cfs_gc_kind kind, uint64_t size)
{
	if (!g->dry_run && unlinkat(fd, name, 0) < 0) {
		int r = -errno;

		if (r == -ENOENT)
			return; /* gone already: nothing to free */
		cfs_msg("removing '%s/%s': %s", g->name, path, strerror(-r));
		g->st->failed++;
		if (!g->first_err)
			g->first_err = r;
		return;
	}
	if (kind == CFS_GC_OBJECT) {
		g->st->objects++;
		g->st->objects_bytes += size;
	} else {
		g->st->temporaries++;
		g->st->temporaries_bytes += size;
	}
	report(g, kind, path, size, NULL);
}

/* One "xx" directory: its objects, kept or removed, and whatever else is there. */
static int sweep_dir(struct gc *g, const char *dir)
{
	char **names = NULL, path[GC_PATH_SIZE];
	size_t n = 0;
	int fd, r;

	fd = openat(g->dirfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	r = fd < 0 ? -errno : list_dir(fd, &names, &n);
	if (r) {
		cfs_msg("reading '%s/%s': %s", g->name, dir, strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				report(g, CFS_GC_OTHER, path, 0, strerror(errno));
			continue;
		}
		if (!is_object_name(names[i]))
			report(g, CFS_GC_OTHER, path, 0,
			       "the name is not 62 hex digits (or ostree's <62 hex>.file)");
		else if (!S_ISREG(st.st_mode))
			report(g, CFS_GC_OTHER, path, 0, type_words(st.st_mode));
		else if (cfs_objects_find(g->keep, path)) {
			g->st->kept++;
			g->st->kept_bytes += (uint64_t)st.st_size;
		} else {
			remove_one(g, fd, names[i], path, CFS_GC_OBJECT, (uint64_t)st.st_size);
		}
	}
	close(fd);
	free_names(names, n);
	return 0;
}

/* A temporary: 1 when dead, 0 when of a live process, -1 when not one. */
static int temporary(const char *name)
{
	int s = cfs_tmpfile_state(name, CFS_BUILD_TMP_PREFIX, CFS_BUILD_TMP_SEP);

	return s >= 0 ? s : cfs_tmpfile_state(name, CFS_FETCH_TMP_PREFIX, CFS_FETCH_TMP_SEP);
}

int cfs_store_gc(int dirfd, const char *name, const struct cfs_objects *keep, bool dry_run,
		 cfs_gc_fn fn, void *ctx, struct cfs_gc_stats *st)
{
	struct gc g = { .dirfd = dirfd, .name = name, .keep = keep, .dry_run = dry_run,
			.fn = fn, .ctx = ctx, .st = st };
	char **names = NULL;
	size_t n = 0;
	int r;

	memset(st, 0, sizeof(*st));
	r = list_dir(dirfd, &names, &n);
	if (r) {
		cfs_msg("reading '%s': %s", name, strerror(-r));
		return r;
	}
	for (size_t i = 0; i < n; i++) {
		const char *e = names[i];
		struct stat sb;
		int t;

		if (fstatat(dirfd, e, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				report(&g, CFS_GC_OTHER, e, 0, strerror(errno));
			continue;
		}
		if (S_ISDIR(sb.st_mode) && is_hex(e, 2)) {
			r = sweep_dir(&g, e);
			if (r)
				break;
			continue;
		}
		t = temporary(e);
		if (t == 1 && S_ISREG(sb.st_mode))
			remove_one(&g, dirfd, e, e, CFS_GC_TEMPORARY, (uint64_t)sb.st_size);
		else if (t == 0)
			report(&g, CFS_GC_OTHER, e, 0, "a temporary of a running process");
		else if (is_hex(e, 2))
			report(&g, CFS_GC_OTHER, e, 0, type_words(sb.st_mode));
		else
			report(&g, CFS_GC_OTHER, e, 0,
			       S_ISDIR(sb.st_mode) ? "a directory whose name is not 2 hex digits" :
						     "not an object directory or a temporary");
	}
	free_names(names, n);
	if (r)
		return r;
	return g.first_err;
}
