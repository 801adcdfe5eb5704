// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs_tree_from_dir(): turn a directory tree into a struct cfs_node tree.
 * Every entry is looked at with lstat semantics (symlinks are recorded,
 * never followed), every file type is kept, hardlinks are found by device
 * and inode number, and xattrs of every namespace are read. File contents
 * are not read here: cfs_tree_finish() hashes them later, in parallel.
 * Errors name the path below the source directory that caused them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/tree.h"
#include "cfs-format.h"
#include "base/internal.h"

static size_t link_hash(uint64_t dev, uint64_t ino)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15ULL ^ dev * 0xc2b2ae3d27d4eb4fULL;

	return (size_t)(h ^ (h >> 29));
}

static size_t node_link_hash(const struct cfs_node *n)
{
	return link_hash(n->src_dev, n->src_ino);
}

/*
 * (dev, ino) -> the first node seen for that inode: the node already seen
 * for @n's, or NULL after adding @n for it.
 */
static int link_map_find_or_add(struct cfs_node_table *m, struct cfs_node *n,
				struct cfs_node **found)
{
	int r = cfs_node_table_reserve(m, 256, node_link_hash);
	size_t j;

	if (r)
		return r;
	for (j = link_hash(n->src_dev, n->src_ino) & (m->n_slots - 1); m->slots[j];
	     j = (j + 1) & (m->n_slots - 1)) {
		if (m->slots[j]->src_dev == n->src_dev && m->slots[j]->src_ino == n->src_ino) {
			*found = m->slots[j];
			return 0;
		}
	}
	m->slots[j] = n;
	m->used++;
	*found = NULL;
	return 0;
}

struct scan {
	const struct cfs_build_options *opts;
	const char *root_path; /* as the caller named it, for messages */
	bool use_proc; /* /proc/self/fd works: short paths for xattr calls */
	struct cfs_node_table links;
	uint64_t entries, meta; /* what the tree holds so far, for --max-entries */
};

/* The tree stays within --max-entries once it holds @n, at @msgpath. */
static int too_many(struct scan *s, const struct cfs_node *n, const char *msgpath)
{
	s->meta += cfs_node_meta(n);
	return cfs_entries_check(s->opts ? s->opts->max_entries : 0, s->entries, s->meta, "'%s'",
				 msgpath);
}

/* Copy the xattrs of the entry into @n; @path is a path usable with l*xattr(). */
static int read_xattrs(struct cfs_node *n, int fd, const char *path, const char *msgpath)
{
	char *names = NULL, *value = NULL;
	ssize_t len;
	size_t value_alloc = 0;
	int r = 0;

	for (;;) {
		len = fd >= 0 ? flistxattr(fd, NULL, 0) : llistxattr(path, NULL, 0);
		if (len < 0) {
			if (errno == ENOTSUP)
				return 0;
			goto err_errno;
		}
		if (len == 0)
			return 0;
		free(names);
		names = malloc((size_t)len);
		if (!names) {
			r = -ENOMEM;
			goto out;
		}
		len = fd >= 0 ? flistxattr(fd, names, (size_t)len) : llistxattr(path, names, (size_t)len);
		if (len >= 0)
			break;
		if (errno != ERANGE) /* ERANGE: the list grew in between; again */
			goto err_errno;
	}

	for (char *key = names; key < names + len; key += strlen(key) + 1) {
		ssize_t vlen;

		for (;;) {
			vlen = fd >= 0 ? fgetxattr(fd, key, NULL, 0) : lgetxattr(path, key, NULL, 0);
			if (vlen >= 0 && (size_t)vlen >= value_alloc) {
				free(value);
				value_alloc = (size_t)vlen + 1;
				value = malloc(value_alloc);
				if (!value) {
					r = -ENOMEM;
					goto out;
				}
			}
			if (vlen >= 0)
				vlen = fd >= 0 ? fgetxattr(fd, key, value, value_alloc)
					       : lgetxattr(path, key, value, value_alloc);
			if (vlen >= 0 || errno == ENODATA) /* ENODATA: removed meanwhile */
				break;
			if (errno != ERANGE) /* ERANGE: it grew meanwhile; again */
				goto err_errno;
		}
		if (vlen < 0)
			continue;
		if (strlen(key) > CFS_MAX_NAME_LEN) {
			cfs_msg("reading xattrs of '%s': key '%s' is longer than %d bytes", msgpath,
				key, CFS_MAX_NAME_LEN);
			r = -ENAMETOOLONG;
			goto out;
		}
		r = cfs_node_add_xattr(n, key, strlen(key), value, (size_t)vlen);
		if (r == -EEXIST)
			r = 0;
		if (r)
			goto out;
	}
	goto out;

err_errno:
	r = -errno;
	cfs_msg("reading xattrs of '%s': %s", msgpath, strerror(errno));
out:
	free(names);
	free(value);
	return r;
}

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 2);

	if (!s)
		return NULL;
	memcpy(s, a, la);
	s[la] = '/';
	memcpy(s + la + 1, b, lb + 1);
	return s;
}

static void fill_inode(struct scan *s, struct cfs_node *n, const struct stat *st)
{
	n->mode = st->st_mode;
	n->uid = st->st_uid;
	n->gid = st->st_gid;
	if (!s->opts || !s->opts->use_epoch) {
		n->mtime_sec = st->st_mtim.tv_sec;
		n->mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
	}
	n->src_dev = st->st_dev;
	n->src_ino = st->st_ino;
}

static int scan_dir(struct scan *s, int dirfd, struct cfs_node *dir, const char *rel);

/* Add the entry @name of directory @dirfd (@rel below the root) to @dir. */
static int scan_entry(struct scan *s, int dirfd, struct cfs_node *dir, const char *rel,
		      const char *name)
{
	size_t name_len = strlen(name);
	char *relpath = NULL, *msgpath = NULL;
	char xpath[64 + NAME_MAX];
	struct cfs_node *n = NULL, *first;
	struct stat st;
	int r = 0, fd = -1;

	relpath = rel[0] ? join(rel, name) : strdup(name);
	msgpath = relpath ? join(s->root_path, relpath) : NULL;
	if (!relpath || !msgpath) {
		r = -ENOMEM;
		goto out;
	}
	if (name_len > CFS_MAX_NAME_LEN) {
		cfs_msg("'%s': name longer than %d bytes", msgpath, CFS_MAX_NAME_LEN);
		r = -ENAMETOOLONG;
		goto out;
	}
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		r = -errno;
		cfs_msg("cannot stat '%s': %s", msgpath, strerror(errno));
		goto out;
	}
	if ((S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) && s->opts && s->opts->skip_devices)
		goto out;

	n = cfs_node_new(name, name_len);
	if (!n) {
		r = -ENOMEM;
		goto out;
	}
	fill_inode(s, n, &st);
	s->entries++;
	r = too_many(s, n, msgpath);
	if (r)
		goto out;

	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
		r = link_map_find_or_add(&s->links, n, &first);
		if (r)
			goto out;
		if (first) {
			/* Another name of an inode already seen: a hardlink. */
			n->link_target = first;
			r = cfs_node_add_child(dir, n);
			if (r == 0)
				n = NULL;
			goto out;
		}
	}

	switch (st.st_mode & S_IFMT) {
	case S_IFREG:
		n->size = (uint64_t)st.st_size;
		n->src_path = relpath;
		relpath = NULL;
		break;
	case S_IFLNK: {
		char target[PATH_MAX + 1];
		ssize_t len = readlinkat(dirfd, name, target, sizeof(target));

		if (len < 0) {
			r = -errno;
			cfs_msg("cannot read symlink '%s': %s", msgpath, strerror(errno));
			goto out;
		}
		if (len >= PATH_MAX) {
			cfs_msg("symlink '%s': target longer than %d bytes", msgpath, PATH_MAX - 1);
			r = -ENAMETOOLONG;
			goto out;
		}
		r = cfs_node_set_payload(n, target, (size_t)len);
		if (r)
			goto out;
		break;
	}
	case S_IFCHR:
	case S_IFBLK:
		if ((uint64_t)st.st_rdev > UINT32_MAX) {
			cfs_msg("device '%s': device number does not fit in 32 bits", msgpath);
			r = -EOVERFLOW;
			goto out;
		}
		n->rdev = (uint32_t)st.st_rdev;
		break;
	case S_IFDIR:
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			r = -errno;
			cfs_msg("cannot open directory '%s': %s", msgpath, strerror(errno));
			goto out;
		}
		break;
	case S_IFIFO:
	case S_IFSOCK:
		break;
	default:
		cfs_msg("'%s': unknown file type %o", msgpath, st.st_mode & S_IFMT);
		r = -EINVAL;
		goto out;
	}

	if (!s->opts || !s->opts->skip_xattrs) {
		if (fd >= 0) {
			r = read_xattrs(n, fd, NULL, msgpath);
		} else if (s->use_proc) {
			snprintf(xpath, sizeof(xpath), "/proc/self/fd/%d/%s", dirfd, name);
			r = read_xattrs(n, -1, xpath, msgpath);
		} else {
			r = read_xattrs(n, -1, msgpath, msgpath);
		}
		if (r)
			goto out;
	}
	r = too_many(s, n, msgpath);
	if (r)
		goto out;

	r = cfs_node_add_child(dir, n);
	if (r)
		goto out;
	if (fd >= 0) {
		struct cfs_node *d = n;

		n = NULL; /* owned by the tree now */
		r = scan_dir(s, fd, d, relpath ? relpath : "");
	} else {
		n = NULL;
	}
out:
	if (fd >= 0)
		close(fd);
	if (n)
		cfs_tree_free(n);
	free(relpath);
	free(msgpath);
	return r;
}

/* Add every entry of the open directory @dirfd to @dir; closes nothing. */
static int scan_dir(struct scan *s, int dirfd, struct cfs_node *dir, const char *rel)
{
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	fd = dup(dirfd);
	if (fd < 0 || !(d = fdopendir(fd))) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		cfs_msg("cannot read directory '%s%s%s': %s", s->root_path, rel[0] ? "/" : "", rel,
			strerror(-r));
		return r;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno) {
				r = -errno;
				cfs_msg("cannot read directory '%s%s%s': %s", s->root_path,
					rel[0] ? "/" : "", rel, strerror(errno));
			}
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		r = scan_entry(s, dirfd, dir, rel, de->d_name);
		if (r)
			break;
	}
	closedir(d);
	return r;
}

int cfs_tree_from_dir(const char *path, const struct cfs_build_options *opts,
		      struct cfs_node **rootp)
{
	struct scan s = { .opts = opts, .root_path = path };
	struct cfs_node *root;
	struct stat st;
	int fd, r;

	if (opts && !cfs_reserved_ok(opts->reserved, sizeof(opts->reserved), "build options"))
		return -EINVAL;
	s.use_proc = access("/proc/self/fd", X_OK) == 0;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		cfs_msg("cannot open directory '%s': %s", path, strerror(errno));
		return r;
	}
	root = cfs_node_new("", 0);
	if (!root) {
		r = -ENOMEM;
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		cfs_msg("cannot stat '%s': %s", path, strerror(errno));
		goto out;
	}
	fill_inode(&s, root, &st);
	root->src_path = strdup(path);
	if (!root->src_path) {
		r = -ENOMEM;
		goto out;
	}
	if (!opts || !opts->skip_xattrs) {
		r = read_xattrs(root, fd, NULL, path);
		if (r)
			goto out;
	}
	r = scan_dir(&s, fd, root, "");
out:
	close(fd);
	free(s.links.slots);
	if (r) {
		cfs_tree_free(root);
		return r;
	}
	*rootp = root;
	return 0;
}
