// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Stores private to their owner (docs/security.md). What cfs makes is so
 * from its first moment: every directory of a digest store or repository
 * is made mode 0700 (cfs_private_mkdirat(), base/util.c), every object and
 * repository image 0400. Here, the stores made otherwise, by hand or by an
 * older cfs: one whose top directory lets other users in, and which holds
 * a directory that lets them in too, shows them what it holds. That is
 * said once a run, naming the fix. A repository's own folders (objects/,
 * images/, index/) are cfs's making, so a write into the repository makes
 * them private, and says so; a directory cfs may not have made (a store's
 * or repository's top directory above all) is never changed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfs/store.h"
#include "base/internal.h"
#include "private.h"

/* a directory with any of these lets someone other than its owner in */
#define OPEN_BITS (S_IRWXG | S_IRWXO)

static atomic_bool warned;

int cfs_store_exposed(int dirfd)
{
	struct dirent *e;
	struct stat st;
	int fd, r = 0;
	DIR *d;

	if (fstat(dirfd, &st) < 0)
		return -errno;
	if (!(st.st_mode & OPEN_BITS))
		return 0;
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode) && (st.st_mode & OPEN_BITS)) {
			r = 1;
			break;
		}
	}
	closedir(d);
	return r;
}

int cfs_store_check_private(int dirfd, const char *kind, const char *path)
{
	int r = cfs_store_exposed(dirfd);

	if (r > 0 && !atomic_exchange(&warned, true))
		cfs_msg("warning: %s '%s' is open to other users, who can read what it holds; "
			"make it private: chmod 0700 '%s'", kind, path, path);
	return r;
}

int cfs_repo_folders_close(int repo_fd, const char *path)
{
	static const char *const folders[] = { "objects", "images", "index" };
	char done[64] = "";
	int r = 0;

	for (size_t i = 0; i < sizeof(folders) / sizeof(folders[0]); i++) {
		struct stat st;
		int fd;

		fd = openat(repo_fd, folders[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* a folder as cfs made it: owned by whoever writes the repository */
		if (fstat(fd, &st) == 0 && (st.st_mode & OPEN_BITS) && st.st_uid == geteuid()) {
			if (fchmod(fd, CFS_STORE_DIR_MODE) < 0) {
				r = -errno;
				cfs_msg("cannot make '%s/%s' private: %s", path, folders[i],
					strerror(errno));
			} else {
				size_t n = strlen(done);

				snprintf(done + n, sizeof(done) - n, "%s%s/", n ? ", " : "",
					 folders[i]);
			}
		}
		close(fd);
	}
	if (done[0])
		cfs_msg("repository '%s' was open to other users: made its %s private (mode 0700)",
			path, done);
	return r;
}
