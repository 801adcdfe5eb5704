// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A list of base directories (struct cfs_basedirs, cfs/store.h): made from
 * a command line's list once, at the edge, or a name at a time, and opened
 * for lookups (cfs_objects_locate(), verify's hashing).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Append @name, which @b then owns (freed on failure). */
static int basedirs_push(struct cfs_basedirs *b, char *name)
{
	char **dirs = cfs_grow(b->dirs, &b->cap, b->n, sizeof(*dirs), 8);

	if (!dirs) {
		free(name);
		return -ENOMEM;
	}
	b->dirs = dirs;
	b->dirs[b->n++] = name;
	return 0;
}

int cfs_basedirs_add(struct cfs_basedirs *b, const char *dir)
{
	char *name;

	if (!*dir) {
		cfs_msg("empty directory name in a basedir list");
		return -EINVAL;
	}
	name = strdup(dir);
	return name ? basedirs_push(b, name) : -ENOMEM;
}

int cfs_basedirs_parse(struct cfs_basedirs *b, const char *list)
{
	size_t n0 = b->n, len = strlen(list);
	const char *s = list;
	int ret = 0;

	for (;;) {
		/* one name: at most what is left of the list */
		char *name = malloc(len + 1), *d = name;

		if (!name) {
			ret = -ENOMEM;
			goto err;
		}
		for (; *s && *s != ':'; s++) {
			if (*s == '\\' && s[1])
				s++;
			*d++ = *s;
		}
		*d = '\0';
		if (d == name) {
			free(name);
			cfs_msg("empty directory name in the basedir list '%s'", list);
			ret = -EINVAL;
			goto err;
		}
		ret = basedirs_push(b, name);
		if (ret < 0)
			goto err;
		if (!*s)
			return 0;
		s++; /* the ':' */
	}
err:
	while (b->n > n0)
		free(b->dirs[--b->n]);
	return ret;
}

void cfs_basedirs_free(struct cfs_basedirs *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->dirs[i]);
	free(b->dirs);
	b->dirs = NULL;
	b->n = b->cap = 0;
}

int cfs_basedirs_open(const struct cfs_basedirs *b, int **fds)
{
	size_t n = b ? b->n : 0, opened;
	int ret;

	*fds = calloc(n ? n : 1, sizeof(**fds));
	if (!*fds)
		return -ENOMEM;
	for (opened = 0; opened < n; opened++) {
		(*fds)[opened] = open(b->dirs[opened], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if ((*fds)[opened] < 0) {
			ret = -errno;
			cfs_msg("opening basedir '%s': %s", b->dirs[opened], strerror(errno));
			cfs_basedirs_close(*fds, opened);
			*fds = NULL;
			return ret;
		}
	}
	return 0;
}

void cfs_basedirs_close(int *fds, size_t n)
{
	while (fds && n-- > 0)
		close(fds[n]);
	free(fds);
}
