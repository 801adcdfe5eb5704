// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A repository (include/cfs/repo.h, docs/repository.md): the digest store
 * REPO/objects, the images REPO/images/<64 hex> named by their own
 * fs-verity digests, and the names REPO/images/refs/<name>, symlinks to
 * them. An image is written to a temporary in REPO/images and renamed to
 * its digest once complete; a name is a symlink made under a temporary
 * name and renamed over the old one, so a name always points at a whole
 * image, the old one or the new. The lock is the digest store's, on
 * REPO/objects: builds and pulls hold it shared until their name is set,
 * gc exclusively, so a gc never sees an image that is about to be named.
 */
#include <dirent.h>
#include <openssl/evp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfs/repo.h"
#include "cfs/store.h"
#include "base/internal.h"
#include "private.h"

#define TMP_PREFIX CFS_BUILD_TMP_PREFIX
#define TMP_SEP CFS_BUILD_TMP_SEP
#define REFS_DEPTH_MAX 128 /* directories of names below refs/ */

struct cfs_repo {
	char *path;
	char *objects;
	int fd, objects_fd, images_fd;
};

static atomic_uint tmp_counter;

const char *cfs_repo_path(const struct cfs_repo *repo)
{
	return repo->path;
}

const char *cfs_repo_objects(const struct cfs_repo *repo)
{
	return repo->objects;
}

static int open_dir(int dirfd, const char *name, bool create, const char *repo)
{
	int fd;

	if (create) {
		int r = cfs_private_mkdirat(dirfd, name);

		if (r < 0) {
			cfs_msg("cannot create '%s/%s': %s", repo, name, strerror(-r));
			return r;
		}
	}
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int r = -errno;

		if (r == -ENOENT && !create)
			cfs_msg("'%s' is not a repository: it has no %s/ directory", repo, name);
		else
			cfs_msg("cannot open '%s/%s': %s", repo, name, strerror(errno));
		return r;
	}
	return fd;
}

int cfs_repo_open(const char *path, bool create, struct cfs_repo **out)
{
	struct cfs_repo *repo = calloc(1, sizeof(*repo));
	int r, fd;

	*out = NULL;
	if (!repo)
		return -ENOMEM;
	repo->fd = repo->objects_fd = repo->images_fd = -1;
	repo->path = strdup(path);
	if (!repo->path || asprintf(&repo->objects, "%s/objects", path) < 0) {
		repo->objects = NULL;
		r = -ENOMEM;
		goto fail;
	}
	if (create) {
		r = cfs_private_mkdirat(AT_FDCWD, path);
		if (r < 0) {
			cfs_msg("cannot create repository '%s': %s", path, strerror(-r));
			goto fail;
		}
	}
	repo->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (repo->fd < 0) {
		r = -errno;
		if (r == -ENOENT)
			cfs_msg("no repository '%s': %s", path, strerror(errno));
		else
			cfs_msg("cannot open repository '%s': %s", path, strerror(errno));
		goto fail;
	}
	r = repo->objects_fd = open_dir(repo->fd, "objects", create, path);
	if (r < 0)
		goto fail;
	r = repo->images_fd = open_dir(repo->fd, "images", create, path);
	if (r < 0)
		goto fail;
	if (create) {
		r = fd = open_dir(repo->images_fd, "refs", true, path);
		if (r < 0)
			goto fail;
		close(fd);
	}
	/* An older cfs made its folders open to all: a write closes them. */
	if (create && cfs_store_exposed(repo->fd) > 0)
		cfs_repo_folders_close(repo->fd, path);
	cfs_store_check_private(repo->fd, "repository", path);
	*out = repo;
	return 0;
fail:
	cfs_repo_close(repo);
	return r;
}

void cfs_repo_close(struct cfs_repo *repo)
{
	if (!repo)
		return;
	if (repo->images_fd >= 0)
		close(repo->images_fd);
	if (repo->objects_fd >= 0)
		close(repo->objects_fd);
	if (repo->fd >= 0)
		close(repo->fd);
	free(repo->objects);
	free(repo->path);
	free(repo);
}

int cfs_repo_exposed(const struct cfs_repo *repo)
{
	return cfs_store_exposed(repo->fd);
}

int cfs_repo_lock(struct cfs_repo *repo, bool exclusive, bool wait)
{
	return cfs_store_lock(repo->objects_fd, exclusive, wait);
}

/* 64 lowercase hex digits and nothing else: an image's name. */
static bool is_digest_name(const char *s, size_t len)
{
	return len == 2 * CFS_DIGEST_SIZE && cfs_is_hex64(s);
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("._-+@:=,~", c));
}

/* Why @name is not a name, or NULL when it is one. */
static const char *name_problem(const char *name)
{
	size_t len = strlen(name), comp = 0;

	if (len == 0)
		return "it is empty";
	if (len > CFS_REPO_NAME_MAX)
		return "it is longer than 1024 bytes";
	if (is_digest_name(name, len))
		return "64 hex digits name an image by its digest";
	if (name[0] == '-')
		return "it starts with '-'";
	for (size_t i = 0; i <= len; i++) {
		if (name[i] == '/' || name[i] == '\0') {
			if (comp == 0)
				return name[i] && i == 0 ? "it starts with '/'" :
				       name[i] ? "it holds an empty component ('//')" :
						 "it ends with '/'";
			comp = 0;
			continue;
		}
		if (comp == 0 && name[i] == '.')
			return "a component starts with '.'";
		if (!name_char(name[i]))
			return "it holds a byte other than letters, digits, '/' and \"._-+@:=,~\"";
		if (++comp > CFS_REPO_NAME_COMPONENT_MAX)
			return "a component is longer than 255 bytes";
	}
	return NULL;
}

int cfs_repo_name_check(const char *name)
{
	const char *why = name_problem(name);

	if (!why)
		return 0;
	cfs_msg("'%s' is not a valid name: %s", name, why);
	return -EINVAL;
}

/* A new temporary ".tmp-<PID>-<N>" in @dirfd: a file, or with @target a symlink. */
static int make_tmp(int dirfd, const char *target, char tmp[CFS_REPO_TMP_SIZE])
{
	for (int tries = 0; tries < 1000; tries++) {
		int fd;

		snprintf(tmp, CFS_REPO_TMP_SIZE, "%s%ld%cr%u", TMP_PREFIX, (long)getpid(), TMP_SEP,
			 atomic_fetch_add(&tmp_counter, 1));
		if (target) {
			if (symlinkat(target, dirfd, tmp) == 0)
				return 0;
			if (errno != EEXIST)
				return -errno;
			continue;
		}
		/* an image, as an object, is its owner's to read alone */
		fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, CFS_OBJECT_MODE);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int cfs_repo_image_create(struct cfs_repo *repo, char tmp[CFS_REPO_TMP_SIZE])
{
	int fd = make_tmp(repo->images_fd, NULL, tmp);

	if (fd < 0) {
		tmp[0] = '\0';
		cfs_msg("cannot create a temporary in '%s/images': %s", repo->path, strerror(-fd));
	}
	return fd;
}

void cfs_repo_image_abort(struct cfs_repo *repo, int fd, const char *tmp)
{
	if (fd >= 0)
		close(fd);
	if (tmp && tmp[0])
		unlinkat(repo->images_fd, tmp, 0);
}

int cfs_repo_image_commit(struct cfs_repo *repo, int fd, const char *tmp, bool require_verity,
			  uint8_t digest[CFS_DIGEST_SIZE])
{
	uint8_t measured[CFS_DIGEST_SIZE];
	char hex[CFS_DIGEST_HEX_SIZE];
	const char *what = "syncing";
	int r;

	if (fsync(fd) < 0)
		goto fail_errno;
	what = "hashing";
	r = cfs_verity_digest_fd(fd, digest);
	if (r)
		goto fail;
	what = "closing";
	r = close(fd);
	fd = -1;
	if (r < 0)
		goto fail_errno;
	/* fs-verity wants a file no one has open for writing. */
	what = "opening";
	fd = openat(repo->images_fd, tmp, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail_errno;
	what = "enabling fs-verity on";
	r = cfs_verity_enable_fd(fd);
	if (r == -EOPNOTSUPP && !require_verity)
		r = 0;
	else if (r == 0 || r == -EEXIST) {
		r = cfs_verity_measure_fd(fd, measured);
		if (r == 0 && memcmp(measured, digest, CFS_DIGEST_SIZE) != 0)
			r = -EIO; /* the file changed under us */
	}
	if (r)
		goto fail;
	close(fd);
	fd = -1;
	cfs_digest_to_hex(digest, hex);
	what = "renaming";
	if (renameat2(repo->images_fd, tmp, repo->images_fd, hex, RENAME_NOREPLACE) < 0) {
		if (errno == EEXIST) {
			/* The same image is there already: it stays. */
			unlinkat(repo->images_fd, tmp, 0);
		} else if (errno == EINVAL || errno == ENOSYS) {
			if (linkat(repo->images_fd, tmp, repo->images_fd, hex, 0) < 0 &&
			    errno != EEXIST)
				goto fail_errno;
			unlinkat(repo->images_fd, tmp, 0);
		} else {
			goto fail_errno;
		}
	}
	what = "syncing";
	if (fsync(repo->images_fd) < 0) {
		r = -errno;
		cfs_msg("syncing '%s/images': %s", repo->path, strerror(-r));
		return r;
	}
	return 0;
fail_errno:
	r = -errno;
fail:
	cfs_msg("%s the image '%s/images/%s': %s", what, repo->path, tmp,
		r == -EOPNOTSUPP ? "fs-verity is not supported by the filesystem" : strerror(-r));
	cfs_repo_image_abort(repo, fd, tmp);
	return r;
}

/* The image @hex exists as a regular file in REPO/images: 0, or -errno. */
static int image_exists(struct cfs_repo *repo, const char *hex, uint64_t *size)
{
	struct stat st;

	if (fstatat(repo->images_fd, hex, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (size)
		*size = (uint64_t)st.st_size;
	return 0;
}

/*
 * Open (with @create: make) the directory of names that holds @name's last
 * component, which *@last points at. Return: a descriptor, or -errno.
 */
static int open_parent(struct cfs_repo *repo, const char *name, bool create, const char **last)
{
	char comp[CFS_REPO_NAME_COMPONENT_MAX + 1];
	const char *p = name, *slash;
	int fd;

	if (create && cfs_private_mkdirat(repo->images_fd, "refs") == 1)
		fsync(repo->images_fd);
	fd = openat(repo->images_fd, "refs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((slash = strchr(p, '/'))) {
		int next;

		memcpy(comp, p, (size_t)(slash - p));
		comp[slash - p] = '\0';
		if (create) {
			next = cfs_private_mkdirat(fd, comp);
			if (next == 1)
				fsync(fd); /* the new directory's entry, before a name in it */
			else if (next < 0) {
				close(fd);
				return next;
			}
		}
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			next = errno == ELOOP ? -ENOTDIR : -errno;
		close(fd);
		fd = next;
		if (fd < 0)
			return fd;
		p = slash + 1;
	}
	*last = p;
	return fd;
}

int cfs_repo_name_usable(struct cfs_repo *repo, const char *name)
{
	const char *last;
	struct stat st;
	int r, dirfd;

	r = cfs_repo_name_check(name);
	if (r)
		return r;
	dirfd = open_parent(repo, name, false, &last);
	if (dirfd == -ENOENT)
		return 0; /* its directories are made when it is set */
	if (dirfd == -ENOTDIR) {
		cfs_msg("naming '%s' in repository '%s': a part of it is a name, not a directory of names",
			name, repo->path);
		return -ENOTDIR;
	}
	if (dirfd < 0) {
		cfs_msg("reading the names of repository '%s': %s", repo->path, strerror(-dirfd));
		return dirfd;
	}
	r = 0;
	if (fstatat(dirfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
		cfs_msg("naming '%s' in repository '%s': it is a directory of names",
			name, repo->path);
		r = -EISDIR;
	}
	close(dirfd);
	return r;
}

/* "../" once for refs/ and once more for each '/' of @name, then @hex. */
static char *link_target(const char *name, const char *hex)
{
	size_t depth = 1, len;
	char *t;

	for (const char *p = name; *p; p++)
		depth += *p == '/';
	len = 3 * depth + strlen(hex);
	t = malloc(len + 1);
	if (!t)
		return NULL;
	for (size_t i = 0; i < depth; i++)
		memcpy(t + 3 * i, "../", 3);
	strcpy(t + 3 * depth, hex);
	return t;
}

int cfs_repo_set_name(struct cfs_repo *repo, const char *name,
		      const uint8_t digest[CFS_DIGEST_SIZE])
{
	char hex[CFS_DIGEST_HEX_SIZE], tmp[CFS_REPO_TMP_SIZE];
	const char *last, *what = "creating";
	char *target;
	int r, dirfd = -1;

	r = cfs_repo_name_check(name);
	if (r)
		return r;
	cfs_digest_to_hex(digest, hex);
	r = image_exists(repo, hex, NULL);
	if (r) {
		cfs_msg("naming '%s': no image %s in repository '%s'", name, hex, repo->path);
		return r == -EINVAL ? -ENOENT : r;
	}
	target = link_target(name, hex);
	if (!target)
		return -ENOMEM;
	/* A remove of another name may take away an empty directory we made. */
	for (int tries = 0; tries < 100; tries++) {
		dirfd = open_parent(repo, name, true, &last);
		if (dirfd < 0) {
			r = dirfd;
			if (r == -ENOENT)
				continue;
			break;
		}
		r = make_tmp(dirfd, target, tmp);
		if (r == -ENOENT) {
			close(dirfd);
			dirfd = -1;
			continue;
		}
		break;
	}
	if (r < 0) {
		if (r == -ENOTDIR || r == -EEXIST)
			cfs_msg("naming '%s' in repository '%s': a part of it is a name, not a directory of names",
				name, repo->path);
		else
			cfs_msg("%s the name '%s' in repository '%s': %s", what, name, repo->path,
				strerror(-r));
		goto out;
	}
	what = "setting";
	if (renameat(dirfd, tmp, dirfd, last) < 0) {
		r = -errno;
		unlinkat(dirfd, tmp, 0);
		if (r == -EISDIR || r == -ENOTEMPTY || r == -EEXIST) {
			r = -EISDIR;
			cfs_msg("naming '%s' in repository '%s': it is a directory of names",
				name, repo->path);
		} else {
			cfs_msg("%s the name '%s' in repository '%s': %s", what, name,
				repo->path, strerror(-r));
		}
		goto out;
	}
	if (fsync(dirfd) < 0) {
		r = -errno;
		cfs_msg("syncing the name '%s' in repository '%s': %s", name, repo->path,
			strerror(-r));
		goto out;
	}
	r = 0;
out:
	if (dirfd >= 0)
		close(dirfd);
	free(target);
	return r;
}

int cfs_repo_remove_name(struct cfs_repo *repo, const char *name)
{
	char *copy, *slash;
	const char *last;
	struct stat st;
	int r, dirfd, refs;

	r = cfs_repo_name_check(name);
	if (r)
		return r;
	dirfd = open_parent(repo, name, false, &last);
	if (dirfd < 0) {
		r = dirfd == -ENOTDIR ? -ENOENT : dirfd;
		goto fail;
	}
	if (fstatat(dirfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		r = -errno;
		close(dirfd);
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		close(dirfd);
		cfs_msg("removing the name '%s' in repository '%s': it is a directory of names",
			name, repo->path);
		return -EISDIR;
	}
	r = unlinkat(dirfd, last, 0) < 0 ? -errno : 0;
	if (r == 0 && fsync(dirfd) < 0)
		r = -errno;
	close(dirfd);
	if (r)
		goto fail;
	/* The directories of names it leaves empty, deepest first. */
	refs = openat(repo->images_fd, "refs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	copy = strdup(name);
	while (refs >= 0 && copy && (slash = strrchr(copy, '/'))) {
		*slash = '\0';
		if (unlinkat(refs, copy, AT_REMOVEDIR) < 0)
			break;
	}
	free(copy);
	if (refs >= 0)
		close(refs);
	return 0;
fail:
	if (r == -ENOENT)
		cfs_msg("no name '%s' in repository '%s'", name, repo->path);
	else
		cfs_msg("removing the name '%s' in repository '%s': %s", name, repo->path,
			strerror(-r));
	return r;
}

/*
 * The digest a name's symlink target @t names, when it is exactly
 * "../" x (1 + the '/' in @name) and 64 lowercase hex digits.
 */
static bool parse_target(const char *name, const char *t, char hex[CFS_DIGEST_HEX_SIZE])
{
	size_t depth = 1;

	for (const char *p = name; *p; p++)
		depth += *p == '/';
	for (size_t i = 0; i < depth; i++, t += 3)
		if (strncmp(t, "../", 3) != 0)
			return false;
	if (!is_digest_name(t, strlen(t)))
		return false;
	memcpy(hex, t, CFS_DIGEST_HEX_SIZE);
	return true;
}

/* readlinkat() of @name below refs/ into @t (size @size): 0 or -errno. */
static int read_name(struct cfs_repo *repo, const char *name, char *t, size_t size)
{
	const char *last;
	int dirfd = open_parent(repo, name, false, &last);
	ssize_t n;

	if (dirfd < 0)
		return dirfd == -ENOTDIR ? -ENOENT : dirfd;
	n = readlinkat(dirfd, last, t, size);
	if (n < 0) {
		struct stat st;
		int r = -errno;

		/* not a symlink: a directory of names is not a name */
		if (r == -EINVAL && fstatat(dirfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode))
			r = -EISDIR;
		close(dirfd);
		return r;
	}
	close(dirfd);
	if ((size_t)n >= size)
		return -EINVAL;
	t[n] = '\0';
	return 0;
}

#define TARGET_MAX (3 * (CFS_REPO_NAME_MAX / 2 + 2) + CFS_DIGEST_HEX_SIZE)

int cfs_repo_resolve(struct cfs_repo *repo, const char *what, uint8_t digest[CFS_DIGEST_SIZE],
		     char **path)
{
	char hex[CFS_DIGEST_HEX_SIZE], *t = NULL;
	int r;

	if (path)
		*path = NULL;
	if (is_digest_name(what, strlen(what))) {
		memcpy(hex, what, CFS_DIGEST_HEX_SIZE);
		r = image_exists(repo, hex, NULL);
		if (r) {
			cfs_msg("no image %s in repository '%s'", hex, repo->path);
			return r == -EINVAL ? -ENOENT : r;
		}
		goto found;
	}
	if (name_problem(what)) {
		cfs_msg("'%s' is neither a name nor a digest (64 hex digits): %s", what,
			name_problem(what));
		return -EINVAL;
	}
	t = malloc(TARGET_MAX + 1);
	if (!t)
		return -ENOMEM;
	r = read_name(repo, what, t, TARGET_MAX + 1);
	if (r == -ENOENT) {
		cfs_msg("no name '%s' in repository '%s'", what, repo->path);
		goto out;
	}
	if (r == -EISDIR) {
		cfs_msg("'%s' in repository '%s' is a directory of names, not a name: give one of the names in it (cfsctl images --repo lists them)",
			what, repo->path);
		goto out;
	}
	if (r == -EINVAL || (r == 0 && !parse_target(what, t, hex))) {
		r = -EINVAL;
		cfs_msg("the name '%s' in repository '%s' is not a symlink to ../<64 hex digits>",
			what, repo->path);
		goto out;
	}
	if (r) {
		cfs_msg("reading the name '%s' in repository '%s': %s", what, repo->path,
			strerror(-r));
		goto out;
	}
	r = image_exists(repo, hex, NULL);
	if (r) {
		cfs_msg("the name '%s' in repository '%s' points at image %s, which is missing",
			what, repo->path, hex);
		r = -ENOENT;
		goto out;
	}
found:
	r = 0;
	if (digest)
		cfs_digest_from_hex(hex, digest);
	if (path && asprintf(path, "%s/images/%s", repo->path, hex) < 0) {
		*path = NULL;
		r = -ENOMEM;
	}
out:
	free(t);
	return r;
}

static int cmp_image(const void *a, const void *b)
{
	return memcmp(((const struct cfs_repo_image *)a)->digest,
		      ((const struct cfs_repo_image *)b)->digest, CFS_DIGEST_SIZE);
}

static int cmp_digest(const void *a, const void *b)
{
	return memcmp(a, b, CFS_DIGEST_SIZE);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct cfs_repo_name *)a)->name,
		      ((const struct cfs_repo_name *)b)->name);
}

const struct cfs_repo_image *cfs_repo_list_find(const struct cfs_repo_list *list,
						const uint8_t digest[CFS_DIGEST_SIZE])
{
	struct cfs_repo_image key;

	if (!list->n_images)
		return NULL;
	memcpy(key.digest, digest, CFS_DIGEST_SIZE);
	return bsearch(&key, list->images, list->n_images, sizeof(key), cmp_image);
}

struct walk {
	struct cfs_repo *repo;
	struct cfs_repo_list *list;
	size_t cap_names;
	/* cfs_repo_gc(): remove dead temporaries instead of listing names */
	bool gc, dry_run;
	cfs_repo_gc_fn fn;
	void *ctx;
	struct cfs_repo_gc_stats *st;
	int err;
};

static int add_name(struct walk *w, int dirfd, const char *entry, const char *name)
{
	struct cfs_repo_list *l = w->list;
	struct cfs_repo_name *v = cfs_grow(l->names, &w->cap_names, l->n_names, sizeof(*v), 16);
	char t[TARGET_MAX + 1], hex[CFS_DIGEST_HEX_SIZE];
	struct cfs_repo_image *img;
	ssize_t n;

	if (!v)
		return -ENOMEM;
	l->names = v;
	v = &l->names[l->n_names];
	memset(v, 0, sizeof(*v));
	v->name = strdup(name);
	if (!v->name)
		return -ENOMEM;
	l->n_names++;
	n = readlinkat(dirfd, entry, t, sizeof(t));
	if (n < 0) {
		v->problem = errno == EINVAL ? "not a symlink" : "cannot be read";
		return 0;
	}
	if ((size_t)n >= sizeof(t)) {
		v->problem = "not a symlink to ../<64 hex digits>";
		return 0;
	}
	t[n] = '\0';
	if (!parse_target(name, t, hex)) {
		v->problem = "not a symlink to ../<64 hex digits>";
		return 0;
	}
	cfs_digest_from_hex(hex, v->digest);
	img = (struct cfs_repo_image *)cfs_repo_list_find(l, v->digest);
	if (!img) {
		v->problem = "its image is missing";
		return 0;
	}
	img->n_names++;
	v->ok = true;
	return 0;
}

static void gc_tmp(struct walk *w, int dirfd, const char *entry, const char *path)
{
	struct stat st;

	if (fstatat(dirfd, entry, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (!w->dry_run && unlinkat(dirfd, entry, 0) < 0) {
		if (errno == ENOENT)
			return;
		cfs_msg("removing '%s/%s': %s", w->repo->path, path, strerror(errno));
		w->st->failed++;
		if (!w->err)
			w->err = -errno;
		return;
	}
	w->st->temporaries++;
	w->st->temporaries_bytes += S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	if (w->fn)
		w->fn(w->ctx, path, S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0, true);
}

/* The names below the directory @fd, "@prefix" + entry; @fd is closed. */
static int walk_refs(struct walk *w, int fd, const char *prefix, unsigned int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while (r == 0 && (de = readdir(d))) {
		char *name;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (asprintf(&name, "%s%s", prefix, de->d_name) < 0)
			return closedir(d), -ENOMEM;
		if (w->gc) {
			if (cfs_tmpfile_state(de->d_name, TMP_PREFIX, TMP_SEP) == 1) {
				char *path;

				if (asprintf(&path, "images/refs/%s", name) >= 0) {
					gc_tmp(w, dirfd(d), de->d_name, path);
					free(path);
				}
			}
		}
		if (de->d_name[0] == '.' || strlen(name) > CFS_REPO_NAME_MAX ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			free(name);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub = depth < REFS_DEPTH_MAX ?
					  openat(dirfd(d), de->d_name,
						 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) :
					  -1;
			char *p = NULL;

			if (sub >= 0 && asprintf(&p, "%s/", name) >= 0)
				r = walk_refs(w, sub, p, depth + 1);
			else if (sub >= 0)
				close(sub), r = -ENOMEM;
			free(p);
		} else if (!w->gc && !name_problem(name)) {
			r = add_name(w, dirfd(d), de->d_name, name);
		}
		free(name);
	}
	closedir(d);
	return r;
}

/* The images of REPO/images (sorted), and in @w->gc mode its dead temporaries. */
static int list_images(struct walk *w)
{
	struct cfs_repo_list *l = w->list;
	DIR *d = cfs_opendir_at(w->repo->images_fd);
	size_t cap = 0;
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct cfs_repo_image *v;
		struct stat st;

		if (w->gc && cfs_tmpfile_state(de->d_name, TMP_PREFIX, TMP_SEP) == 1) {
			char path[sizeof(de->d_name) + 8];

			snprintf(path, sizeof(path), "images/%s", de->d_name);
			gc_tmp(w, dirfd(d), de->d_name, path);
			continue;
		}
		if (!is_digest_name(de->d_name, strlen(de->d_name)) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		v = cfs_grow(l->images, &cap, l->n_images, sizeof(*v), 16);
		if (!v) {
			r = -ENOMEM;
			break;
		}
		l->images = v;
		v = &l->images[l->n_images++];
		cfs_digest_from_hex(de->d_name, v->digest);
		v->size = (uint64_t)st.st_size;
		v->n_names = 0;
	}
	closedir(d);
	if (l->n_images)
		qsort(l->images, l->n_images, sizeof(*l->images), cmp_image);
	return r;
}

static int walk_all_refs(struct walk *w)
{
	int fd = openat(w->repo->images_fd, "refs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	return walk_refs(w, fd, "", 0);
}

/* The images and then every name of @w's repository; @doing names it in a failure's message. */
static int walk_repo(struct walk *w, const char *doing)
{
	int r = list_images(w);

	if (r == 0)
		r = walk_all_refs(w);
	if (r)
		cfs_msg("%s repository '%s': %s", doing, w->repo->path, strerror(-r));
	return r;
}

int cfs_repo_list(struct cfs_repo *repo, struct cfs_repo_list *list)
{
	struct walk w = { .repo = repo, .list = list };
	int r;

	memset(list, 0, sizeof(*list));
	r = walk_repo(&w, "listing");
	if (r) {
		cfs_repo_list_free(list);
		return r;
	}
	if (list->n_names)
		qsort(list->names, list->n_names, sizeof(*list->names), cmp_name);
	return 0;
}

void cfs_repo_list_free(struct cfs_repo_list *list)
{
	for (size_t i = 0; i < list->n_names; i++)
		free(list->names[i].name);
	free(list->names);
	free(list->images);
	memset(list, 0, sizeof(*list));
}

int cfs_repo_gc(struct cfs_repo *repo, const uint8_t (*keep)[CFS_DIGEST_SIZE], size_t n_keep,
		bool dry_run, cfs_repo_gc_fn fn, void *ctx, struct cfs_repo_gc_stats *st)
{
	struct cfs_repo_list l = { 0 };
	struct walk w = {
		.repo = repo, .list = &l, .gc = true, .dry_run = dry_run, .fn = fn, .ctx = ctx,
		.st = st,
	};
	char hex[CFS_DIGEST_HEX_SIZE], path[CFS_DIGEST_HEX_SIZE + 8];
	uint8_t(*sorted)[CFS_DIGEST_SIZE] = NULL;
	int r;

	memset(st, 0, sizeof(*st));
	r = walk_repo(&w, "reading");
	if (r)
		goto out;
	if (n_keep) {
		sorted = malloc(n_keep * sizeof(*sorted));
		if (!sorted) {
			r = -ENOMEM;
			goto out;
		}
		memcpy(sorted, keep, n_keep * sizeof(*sorted));
		qsort(sorted, n_keep, sizeof(*sorted), cmp_digest);
	}
	for (size_t i = 0; i < l.n_images; i++) {
		if (n_keep && bsearch(l.images[i].digest, sorted, n_keep, sizeof(*sorted), cmp_digest))
			continue;
		cfs_digest_to_hex(l.images[i].digest, hex);
		if (!dry_run && unlinkat(repo->images_fd, hex, 0) < 0) {
			cfs_msg("removing '%s/images/%s': %s", repo->path, hex, strerror(errno));
			st->failed++;
			if (!w.err)
				w.err = -errno;
			continue;
		}
		st->images++;
		st->images_bytes += l.images[i].size;
		snprintf(path, sizeof(path), "images/%s", hex);
		if (fn)
			fn(ctx, path, l.images[i].size, false);
	}
	if (!dry_run && st->images && fsync(repo->images_fd) < 0 && !w.err)
		w.err = -errno;
	r = w.err;
out:
	free(sorted);
	cfs_repo_list_free(&l);
	return r;
}

/*
 * The origin of a name: REPO/images/origins/<sha256 of the name, hex>, a
 * first line with the image's digest, then what the caller recorded. It
 * counts only while the name points at that image: a record that a later
 * build, tag or remove of the name left behind is never believed.
 */
static int origin_file(const char *name, char file[CFS_DIGEST_HEX_SIZE])
{
	uint8_t md[CFS_DIGEST_SIZE];

	if (!EVP_Digest(name, strlen(name), md, NULL, EVP_sha256(), NULL))
		return -ENOMEM;
	cfs_digest_to_hex(md, file);
	return 0;
}

int cfs_repo_set_origin(struct cfs_repo *repo, const char *name,
			const uint8_t digest[CFS_DIGEST_SIZE], const char *text)
{
	char hex[CFS_DIGEST_HEX_SIZE], file[CFS_DIGEST_HEX_SIZE], tmp[CFS_REPO_TMP_SIZE];
	int r, dirfd, fd;

	r = cfs_repo_name_check(name);
	if (r == 0)
		r = origin_file(name, file);
	if (r)
		return r;
	if (cfs_private_mkdirat(repo->images_fd, "origins") == 1)
		fsync(repo->images_fd);
	dirfd = openat(repo->images_fd, "origins", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		r = -errno;
		goto out;
	}
	fd = make_tmp(dirfd, NULL, tmp);
	if (fd < 0) {
		r = fd;
		close(dirfd);
		goto out;
	}
	cfs_digest_to_hex(digest, hex);
	hex[CFS_DIGEST_HEX_SIZE - 1] = '\n';
	r = cfs_write_all(fd, hex, CFS_DIGEST_HEX_SIZE);
	if (r == 0)
		r = cfs_write_all(fd, text, strlen(text));
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, file) < 0)
		r = -errno;
	if (r)
		unlinkat(dirfd, tmp, 0);
	else
		fsync(dirfd);
	close(dirfd);
out:
	if (r)
		cfs_msg("recording the origin of '%s' in repository '%s': %s", name, repo->path,
			strerror(-r));
	return r;
}

int cfs_repo_get_origin(struct cfs_repo *repo, const char *name,
			const uint8_t digest[CFS_DIGEST_SIZE], char **text)
{
	char hex[CFS_DIGEST_HEX_SIZE], file[CFS_DIGEST_HEX_SIZE + 8];
	struct stat st;
	ssize_t n;
	char *b;
	int fd, r;

	*text = NULL;
	r = origin_file(name, file + 8);
	if (r)
		return r;
	memcpy(file, "origins/", 8);
	fd = openat(repo->images_fd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < CFS_DIGEST_HEX_SIZE ||
	    st.st_size > (1 << 20)) {
		close(fd);
		return -EINVAL;
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, b, (size_t)st.st_size);
	close(fd);
	cfs_digest_to_hex(digest, hex);
	if (n != st.st_size || memcmp(b, hex, CFS_DIGEST_HEX_SIZE - 1) ||
	    b[CFS_DIGEST_HEX_SIZE - 1] != '\n') {
		free(b);
		return -ENOENT; /* not the origin of what the name points at now */
	}
	memmove(b, b + CFS_DIGEST_HEX_SIZE, (size_t)n - CFS_DIGEST_HEX_SIZE);
	b[(size_t)n - CFS_DIGEST_HEX_SIZE] = '\0';
	*text = b;
	return 0;
}
