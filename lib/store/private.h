/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Stores private to their owner (private.c): what the repository code asks
 * beyond cfs/store.h. Internal to libcfs.
 */
#ifndef CFS_STORE_PRIVATE_H
#define CFS_STORE_PRIVATE_H

/**
 * cfs_repo_folders_close() - make the repository @repo_fd's own folders
 *	(objects/, images/, index/) that let other users in, and that belong
 *	to the caller, mode 0700; say which, naming @path
 *
 * For a repository an older cfs made, on a write into it. The top
 * directory, which cfs may not have made, is left as it is.
 *
 * Return: 0, or -errno (with a message) when one could not be changed.
 */
int cfs_repo_folders_close(int repo_fd, const char *path);

#endif
