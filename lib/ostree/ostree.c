// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ostree commits as images, read through libostree: a commit's dirtree and
 * dirmeta objects become the in-memory tree (tree.h), each regular file
 * pointing at ostree's own object ("xx/<62 hex>.file" below REPO/objects)
 * or, for archive repositories, at that object unpacked into a directory of
 * the same layout. Also the commit metadata key that newer ostree keeps the
 * image's fs-verity digest in, a new commit that carries it, and the GPG
 * check of a commit's signature, all by libostree.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ostree.h>

#include "cfs/ostree.h"
#include "cfs/store.h"
#include "base/internal.h"
#include "base/tree.h"

extern char **environ;

/* Deeper than any tree ostree itself checks out */
#define OSTREE_MAX_DEPTH 1024
#define OBJ_PATH_SIZE (3 + 62 + sizeof(".file"))
#define UNPACK_BUF_SIZE (256 * 1024)

struct cfs_ostree {
	OstreeRepo *repo;
	char *repo_path;
	char *objects_dir;
	char *ref; /* the branch, or NULL when the spec named a checksum */
	char checksum[CFS_OSTREE_CHECKSUM_SIZE];
	GVariant *commit;
	OstreeRepoMode mode;
};

/* How tree() works through one commit */
struct walk {
	struct cfs_ostree *o;
	const struct cfs_build_options *build;
	struct cfs_tree_from_ostree_options *topts;
	int repo_dfd;
	int store_fd; /* where contents are unpacked, or -1: in place */
	bool no_verity; /* the filesystem has none: stop trying */
	unsigned int tmp_n;
};

/* A GError as -errno, with its message after @what; frees it. */
static int gerr(GError *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int gerr(GError *err, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	int r = -EIO;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (err && g_error_matches(err, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
		r = -ENOENT;
	else if (err && g_error_matches(err, G_IO_ERROR, G_IO_ERROR_NO_SPACE))
		r = -ENOSPC;
	else if (err && g_error_matches(err, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED))
		r = -EACCES;
	/* gpg's reasons come in several lines */
	if (err)
		for (char *p = err->message; *p; p++)
			if (*p == '\n')
				*p = ' ';
	cfs_msg("%s: %s", what, err ? err->message : strerror(-r));
	if (err)
		g_error_free(err);
	return r;
}

static bool is_checksum(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == 64;
}

int cfs_ostree_open(const char *spec, struct cfs_ostree **out)
{
	struct cfs_ostree *o;
	const char *colon = strchr(spec, ':');
	GError *err = NULL;
	GFile *path;
	char *rev = NULL;
	struct stat st;
	OstreeRepoCommitState state;
	int r;

	*out = NULL;
	if (!colon || colon == spec || !colon[1]) {
		cfs_msg("'%s': not REPO:REF", spec);
		return -EINVAL;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->repo_path = strndup(spec, (size_t)(colon - spec));
	if (!o->repo_path || asprintf(&o->objects_dir, "%s/objects", o->repo_path) < 0) {
		o->objects_dir = NULL;
		r = -ENOMEM;
		goto fail;
	}
	errno = 0;
	if (stat(o->repo_path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		r = errno == ENOENT ? -ENOENT : errno ? -errno : -ENOTDIR;
		cfs_msg("ostree repository '%s': %s", o->repo_path,
			r == -ENOENT ? "no such directory" : strerror(-r));
		goto fail;
	}
	path = g_file_new_for_path(o->repo_path);
	o->repo = ostree_repo_new(path);
	g_object_unref(path);
	if (!ostree_repo_open(o->repo, NULL, &err)) {
		r = gerr(err, "opening ostree repository '%s'", o->repo_path);
		goto fail;
	}
	o->mode = ostree_repo_get_mode(o->repo);
	if (!ostree_repo_resolve_rev(o->repo, colon + 1, FALSE, &rev, &err)) {
		r = gerr(err, "ref '%s' in '%s'", colon + 1, o->repo_path);
		if (r == -EIO)
			r = -ENOENT;
		goto fail;
	}
	if (!is_checksum(rev)) {
		cfs_msg("ref '%s' in '%s': not a commit checksum: '%s'", colon + 1, o->repo_path, rev);
		r = -EINVAL;
		goto fail;
	}
	memcpy(o->checksum, rev, CFS_OSTREE_CHECKSUM_SIZE);
	if (strcmp(rev, colon + 1) != 0) {
		o->ref = strdup(colon + 1);
		if (!o->ref) {
			r = -ENOMEM;
			goto fail;
		}
	}
	if (!ostree_repo_load_commit(o->repo, o->checksum, &o->commit, &state, &err)) {
		r = gerr(err, "commit %s in '%s'", o->checksum, o->repo_path);
		goto fail;
	}
	if (state & (OSTREE_REPO_COMMIT_STATE_PARTIAL | OSTREE_REPO_COMMIT_STATE_FSCK_PARTIAL)) {
		cfs_msg("commit %s in '%s': partial commit: objects are missing (an unfinished pull?)",
			o->checksum, o->repo_path);
		r = -ENODATA;
		goto fail;
	}
	g_free(rev);
	*out = o;
	return 0;
fail:
	g_free(rev);
	cfs_ostree_close(o);
	return r;
}

void cfs_ostree_close(struct cfs_ostree *o)
{
	if (!o)
		return;
	if (o->commit)
		g_variant_unref(o->commit);
	if (o->repo)
		g_object_unref(o->repo);
	free(o->repo_path);
	free(o->objects_dir);
	free(o->ref);
	free(o);
}

const char *cfs_ostree_checksum(const struct cfs_ostree *o)
{
	return o->checksum;
}

const char *cfs_ostree_objects_dir(const struct cfs_ostree *o)
{
	return o->objects_dir;
}

bool cfs_ostree_is_archive(const struct cfs_ostree *o)
{
	return o->mode == OSTREE_REPO_MODE_ARCHIVE;
}

/* ---- the tree ---- */

static void object_path(const char *checksum, char path[OBJ_PATH_SIZE])
{
	snprintf(path, OBJ_PATH_SIZE, "%.2s/%s.file", checksum, checksum + 2);
}

/* Load the variant of object @csum of @type, checked first if asked. */
static int load_variant(struct walk *w, OstreeObjectType type, const char *csum, GVariant **v)
{
	GError *err = NULL;

	w->topts->n_objects++;
	if (w->topts->check_objects &&
	    !ostree_repo_fsck_object(w->o->repo, type, csum, NULL, &err))
		goto changed;
	if (!ostree_repo_load_variant(w->o->repo, type, csum, v, &err))
		return gerr(err, "%s object %s in '%s'", ostree_object_type_to_string(type), csum,
			    w->o->repo_path);
	return 0;
changed:
	cfs_msg("%s object %s in '%s' does not match its checksum: %s",
		ostree_object_type_to_string(type), csum, w->o->repo_path, err->message);
	g_error_free(err);
	return -EUCLEAN;
}

/* Set @n's owner and mode from @mode, and its xattrs from @xattrs (a(ayay)). */
static int set_inode(struct cfs_node *n, uint32_t uid, uint32_t gid, uint32_t mode,
		     GVariant *xattrs, const char *what)
{
	size_t count = xattrs ? g_variant_n_children(xattrs) : 0;
	int r;

	n->uid = uid;
	n->gid = gid;
	n->mode = mode;
	n->mtime_sec = 0;
	n->mtime_nsec = 0;
	for (size_t i = 0; i < count; i++) {
		GVariant *name_v, *value_v;
		const char *name;
		const void *value;
		size_t name_len, value_len;

		g_variant_get_child(xattrs, i, "(@ay@ay)", &name_v, &value_v);
		name = g_variant_get_fixed_array(name_v, &name_len, 1);
		value = g_variant_get_fixed_array(value_v, &value_len, 1);
		/* ostree keeps the name's NUL */
		if (name_len > 0 && name[name_len - 1] == '\0')
			name_len--;
		r = 0;
		if (name_len == 0 || name_len > 255 || memchr(name, '\0', name_len))
			r = -EUCLEAN;
		else
			r = cfs_node_add_xattr(n, name, name_len, value, value_len);
		g_variant_unref(name_v);
		g_variant_unref(value_v);
		if (r == -EUCLEAN || r == -EEXIST) {
			cfs_msg("%s: bad extended attribute name", what);
			return -EUCLEAN;
		}
		if (r)
			return r;
	}
	cfs_node_sort_xattrs(n);
	return 0;
}

static int dirmeta(struct walk *w, struct cfs_node *n, const char *csum)
{
	GVariant *v = NULL, *xattrs = NULL;
	uint32_t uid, gid, mode;
	char what[128];
	int r;

	r = load_variant(w, OSTREE_OBJECT_TYPE_DIR_META, csum, &v);
	if (r)
		return r;
	g_variant_get(v, "(uuu@a(ayay))", &uid, &gid, &mode, &xattrs);
	uid = GUINT32_FROM_BE(uid);
	gid = GUINT32_FROM_BE(gid);
	mode = GUINT32_FROM_BE(mode);
	snprintf(what, sizeof(what), "dirmeta object %s", csum);
	if (!S_ISDIR(mode)) {
		cfs_msg("%s in '%s': not a directory's mode (0%o)", what, w->o->repo_path, mode);
		r = -EUCLEAN;
	} else {
		r = set_inode(n, uid, gid, mode, w->build->skip_xattrs ? NULL : xattrs, what);
	}
	g_variant_unref(xattrs);
	g_variant_unref(v);
	return r;
}

static bool valid_name(const char *name)
{
	size_t len = strlen(name);

	return len > 0 && len <= 255 && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

/*
 * The fs-verity digest of the object open as @fd (read-only), enabling
 * fs-verity on it first if asked and the filesystem allows.
 */
static int object_digest(struct walk *w, int fd, const char *where, uint8_t digest[CFS_DIGEST_SIZE])
{
	int r = cfs_verity_measure_fd(fd, digest);

	if (r == 0)
		return 0;
	if (r != -ENODATA && r != -EOPNOTSUPP && r != -ENOTTY)
		goto fail;
	if (w->topts->enable_verity && !w->no_verity) {
		r = cfs_verity_enable_fd(fd);
		if (r == 0 || r == -EEXIST)
			r = cfs_verity_measure_fd(fd, digest);
		if (r == 0)
			return 0;
		if (r != -EOPNOTSUPP)
			goto fail;
		w->no_verity = true;
	}
	if (w->build->require_verity) {
		cfs_msg("enabling fs-verity on '%s': not supported by the filesystem", where);
		return -EOPNOTSUPP;
	}
	r = cfs_verity_digest_fd(fd, digest);
	if (r == 0)
		return 0;
fail:
	cfs_msg("fs-verity digest of '%s': %s", where, strerror(-r));
	return r;
}

/* A regular file's content: ostree's object in place. */
static int content_in_place(struct walk *w, struct cfs_node *n, const char *objpath)
{
	char where[PATH_MAX];
	struct stat st;
	int fd, r;

	snprintf(where, sizeof(where), "%s/%s", w->o->objects_dir, objpath);
	fd = openat(w->repo_dfd, where + strlen(w->o->repo_path) + 1,
		    O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		cfs_msg("object '%s': %s", where, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		cfs_msg("object '%s': %s", where, strerror(-r));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != n->size) {
		cfs_msg("object '%s': changed: %s", where,
			S_ISREG(st.st_mode) ? "its size is not the commit's" : "not a regular file");
		r = -EUCLEAN;
		goto out;
	}
	r = object_digest(w, fd, where, n->digest);
out:
	close(fd);
	return r;
}

static int stream_read(void *ctx, void *buf, size_t count)
{
	GError *err = NULL;
	gsize got = 0;

	if (!g_input_stream_read_all(ctx, buf, count, &got, NULL, &err)) {
		g_error_free(err);
		return -EIO;
	}
	return got == count ? 0 : -EUCLEAN;
}

/* A regular file's content: unpacked from @in into the store at @objpath. */
static int content_unpack(struct walk *w, struct cfs_node *n, const char *objpath, GInputStream *in)
{
	char tmp[64], where[PATH_MAX], dir[3] = { objpath[0], objpath[1], 0 };
	uint8_t have[CFS_DIGEST_SIZE];
	uint64_t left = n->size;
	GError *err = NULL;
	char *buf = malloc(UNPACK_BUF_SIZE);
	int fd, r, dirfd;

	if (!buf)
		return -ENOMEM;
	snprintf(where, sizeof(where), "%s/%s", w->build->digest_store, objpath);
	snprintf(tmp, sizeof(tmp), "%s%d%c%u", CFS_BUILD_TMP_PREFIX, (int)getpid(),
		 CFS_BUILD_TMP_SEP, w->tmp_n++);
	fd = openat(w->store_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, CFS_OBJECT_MODE);
	if (fd < 0) {
		r = -errno;
		cfs_msg("creating a temporary in '%s': %s", w->build->digest_store, strerror(-r));
		free(buf);
		return r;
	}
	while (left) {
		size_t want = left < UNPACK_BUF_SIZE ? (size_t)left : UNPACK_BUF_SIZE;
		gsize got = 0;

		if (!g_input_stream_read_all(in, buf, want, &got, NULL, &err)) {
			r = gerr(err, "reading object %s in '%s'", objpath, w->o->repo_path);
			goto fail;
		}
		if (got != want) {
			cfs_msg("reading object %s in '%s': shorter than the commit says", objpath,
				w->o->repo_path);
			r = -EUCLEAN;
			goto fail;
		}
		r = cfs_write_all(fd, buf, got);
		if (r)
			goto fail_write;
		left -= got;
	}
	free(buf);
	buf = NULL;
	if (fsync(fd) < 0) {
		r = -errno;
		goto fail_write;
	}
	/* fs-verity wants no writer left */
	close(fd);
	fd = openat(w->store_fd, tmp, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		goto fail_write;
	}
	r = object_digest(w, fd, where, n->digest);
	close(fd);
	fd = -1;
	if (r)
		goto fail;
	/* One there with the same verified content stays: it may be in use. */
	fd = openat(w->store_fd, objpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && cfs_verity_measure_fd(fd, have) == 0 &&
	    memcmp(have, n->digest, CFS_DIGEST_SIZE) == 0) {
		close(fd);
		unlinkat(w->store_fd, tmp, 0);
		return 0;
	}
	if (fd >= 0)
		close(fd);
	fd = -1;
	dirfd = cfs_object_dir_open(w->store_fd, objpath);
	if (dirfd < 0) {
		r = dirfd;
		if (r == -ENOTDIR) {
			cfs_msg("unpacking into '%s': '%s' is a symlink or not a directory: refusing to write through it",
				where, dir);
			goto fail;
		}
		goto fail_write;
	}
	r = renameat(w->store_fd, tmp, dirfd, objpath + 3) < 0 ? -errno : 0;
	close(dirfd);
	if (r)
		goto fail_write;
	return 0;
fail_write:
	cfs_msg("unpacking into '%s': %s", where, strerror(-r));
fail:
	free(buf);
	if (fd >= 0)
		close(fd);
	unlinkat(w->store_fd, tmp, 0);
	return r;
}

static int file_node(struct walk *w, struct cfs_node *n, const char *csum)
{
	GInputStream *in = NULL;
	GFileInfo *info = NULL;
	GVariant *xattrs = NULL;
	GError *err = NULL;
	char objpath[OBJ_PATH_SIZE], what[128];
	bool unpack = w->store_fd >= 0 || cfs_ostree_is_archive(w->o);
	GFileType type;
	int r;

	w->topts->n_objects++;
	object_path(csum, objpath);
	snprintf(what, sizeof(what), "file object %s", csum);
	if (w->topts->check_objects &&
	    !ostree_repo_fsck_object(w->o->repo, OSTREE_OBJECT_TYPE_FILE, csum, NULL, &err)) {
		cfs_msg("file object %s in '%s' does not match its checksum: %s", csum,
			w->o->repo_path, err->message);
		g_error_free(err);
		return -EUCLEAN;
	}
	if (!ostree_repo_load_file(w->o->repo, csum, unpack ? &in : NULL, &info, &xattrs, NULL, &err))
		return gerr(err, "file object %s in '%s'", csum, w->o->repo_path);
	type = g_file_info_get_file_type(info);
	r = set_inode(n, g_file_info_get_attribute_uint32(info, "unix::uid"),
		      g_file_info_get_attribute_uint32(info, "unix::gid"),
		      g_file_info_get_attribute_uint32(info, "unix::mode"),
		      w->build->skip_xattrs ? NULL : xattrs, what);
	if (r)
		goto out;
	if (type == G_FILE_TYPE_SYMBOLIC_LINK && S_ISLNK(n->mode)) {
		const char *target = g_file_info_get_symlink_target(info);
		size_t len = target ? strlen(target) : 0;

		if (len == 0 || len > 4095) {
			cfs_msg("%s in '%s': bad symlink target", what, w->o->repo_path);
			r = -EUCLEAN;
			goto out;
		}
		r = cfs_node_set_payload(n, target, len);
		goto out;
	}
	if (type != G_FILE_TYPE_REGULAR || !S_ISREG(n->mode)) {
		cfs_msg("%s in '%s': neither a regular file nor a symlink (mode 0%o)", what,
			w->o->repo_path, n->mode);
		r = -EUCLEAN;
		goto out;
	}
	n->size = (uint64_t)g_file_info_get_size(info);
	if (n->size > cfs_format_max_file_size(w->build)) {
		cfs_msg("%s in '%s': too large for the image format", what, w->o->repo_path);
		r = -EFBIG;
		goto out;
	}
	if (n->size == 0)
		goto out; /* no backing file */
	if (!unpack) {
		r = content_in_place(w, n, objpath);
	} else if (w->store_fd >= 0) {
		r = content_unpack(w, n, objpath, in);
	} else {
		r = cfs_verity_digest_stream(in, stream_read, n->size, n->digest);
		if (r)
			cfs_msg("reading %s in '%s': %s", what, w->o->repo_path,
				r == -EUCLEAN ? "shorter than the commit says" : strerror(-r));
	}
	if (r)
		goto out;
	r = cfs_node_set_payload(n, objpath, strlen(objpath));
	n->has_digest = r == 0;
out:
	if (in)
		g_object_unref(in);
	if (info)
		g_object_unref(info);
	if (xattrs)
		g_variant_unref(xattrs);
	return r;
}

static int dirtree(struct walk *w, struct cfs_node *dir, const char *csum, unsigned int depth)
{
	GVariant *v = NULL, *files = NULL, *dirs = NULL;
	size_t nfiles, ndirs;
	int r;

	if (depth > OSTREE_MAX_DEPTH) {
		cfs_msg("dirtree object %s in '%s': deeper than %d directories", csum,
			w->o->repo_path, OSTREE_MAX_DEPTH);
		return -ELOOP;
	}
	r = load_variant(w, OSTREE_OBJECT_TYPE_DIR_TREE, csum, &v);
	if (r)
		return r;
	files = g_variant_get_child_value(v, 0);
	dirs = g_variant_get_child_value(v, 1);
	nfiles = g_variant_n_children(files);
	ndirs = g_variant_n_children(dirs);
	for (size_t i = 0; r == 0 && i < nfiles + ndirs; i++) {
		GVariant *c1 = NULL, *c2 = NULL;
		const char *name;
		char sum1[CFS_OSTREE_CHECKSUM_SIZE], sum2[CFS_OSTREE_CHECKSUM_SIZE];
		struct cfs_node *n;

		if (i < nfiles)
			g_variant_get_child(files, i, "(&s@ay)", &name, &c1);
		else
			g_variant_get_child(dirs, i - nfiles, "(&s@ay@ay)", &name, &c1, &c2);
		if (!valid_name(name) || g_variant_get_size(c1) != 32 ||
		    (c2 && g_variant_get_size(c2) != 32)) {
			cfs_msg("dirtree object %s in '%s': bad entry", csum, w->o->repo_path);
			r = -EUCLEAN;
			goto next;
		}
		ostree_checksum_inplace_from_bytes(g_variant_get_data(c1), sum1);
		if (c2)
			ostree_checksum_inplace_from_bytes(g_variant_get_data(c2), sum2);
		n = cfs_node_new(name, strlen(name));
		if (!n) {
			r = -ENOMEM;
			goto next;
		}
		r = cfs_node_add_child(dir, n);
		if (r) {
			cfs_tree_free(n);
			goto next;
		}
		n->parent = dir;
		if (!c2)
			r = file_node(w, n, sum1);
		else if ((r = dirmeta(w, n, sum2)) == 0)
			r = dirtree(w, n, sum1, depth + 1);
next:
		if (c1)
			g_variant_unref(c1);
		if (c2)
			g_variant_unref(c2);
	}
	g_variant_unref(files);
	g_variant_unref(dirs);
	g_variant_unref(v);
	return r;
}

int cfs_tree_from_ostree(struct cfs_ostree *o, const struct cfs_build_options *build,
			 struct cfs_tree_from_ostree_options *topts, struct cfs_node **root)
{
	struct walk w = {
		.o = o, .build = build, .topts = topts, .repo_dfd = ostree_repo_get_dfd(o->repo),
		.store_fd = -1,
	};
	GVariant *tree_v, *meta_v;
	char tree[CFS_OSTREE_CHECKSUM_SIZE], meta[CFS_OSTREE_CHECKSUM_SIZE];
	struct cfs_node *r_node;
	int r, lock_fd = -1;

	*root = NULL;
	topts->n_objects = 0;
	if (cfs_ostree_is_archive(o) && !build->digest_store && !topts->digest_only) {
		cfs_msg("ostree repository '%s' is an archive: its contents need a digest store to be unpacked into",
			o->repo_path);
		return -EINVAL;
	}
	if (build->digest_store) {
		w.store_fd = cfs_store_dir_open(build->digest_store);
		if (w.store_fd < 0)
			return w.store_fd;
		lock_fd = cfs_store_lock(w.store_fd, false, true);
		if (lock_fd < 0) {
			r = lock_fd;
			cfs_msg("cannot lock digest store '%s': %s", build->digest_store, strerror(-r));
			close(w.store_fd);
			return r;
		}
		cfs_remove_dead_tmpfiles(w.store_fd, CFS_BUILD_TMP_PREFIX, CFS_BUILD_TMP_SEP);
	}
	r_node = cfs_node_new("", 0);
	if (!r_node) {
		r = -ENOMEM;
		goto out;
	}
	tree_v = g_variant_get_child_value(o->commit, 6);
	meta_v = g_variant_get_child_value(o->commit, 7);
	if (g_variant_get_size(tree_v) != 32 || g_variant_get_size(meta_v) != 32) {
		cfs_msg("commit %s in '%s': bad root checksums", o->checksum, o->repo_path);
		r = -EUCLEAN;
	} else {
		ostree_checksum_inplace_from_bytes(g_variant_get_data(tree_v), tree);
		ostree_checksum_inplace_from_bytes(g_variant_get_data(meta_v), meta);
		r = dirmeta(&w, r_node, meta);
		if (r == 0)
			r = dirtree(&w, r_node, tree, 0);
	}
	g_variant_unref(tree_v);
	g_variant_unref(meta_v);
	if (r)
		cfs_tree_free(r_node);
	else
		*root = r_node;
out:
	if (w.store_fd >= 0) {
		cfs_store_unlock(lock_fd);
		close(w.store_fd);
	}
	return r;
}

/* ---- the digest in the commit ---- */

int cfs_ostree_read_digest(struct cfs_ostree *o, uint8_t digest[CFS_DIGEST_SIZE])
{
	GVariant *meta = g_variant_get_child_value(o->commit, 0);
	GVariant *v = g_variant_lookup_value(meta, CFS_OSTREE_DIGEST_KEY, NULL);
	int r = 0;

	if (!v) {
		cfs_msg("commit %s in '%s' has no %s in its metadata", o->checksum, o->repo_path,
			CFS_OSTREE_DIGEST_KEY);
		r = -ENOENT;
	} else if (!g_variant_is_of_type(v, G_VARIANT_TYPE_BYTESTRING)) {
		cfs_msg("commit %s in '%s': %s has type '%s', not 'ay'", o->checksum, o->repo_path,
			CFS_OSTREE_DIGEST_KEY, g_variant_get_type_string(v));
		r = -EINVAL;
	} else if (g_variant_get_size(v) != CFS_DIGEST_SIZE) {
		cfs_msg("commit %s in '%s': %s is %zu bytes, not %d", o->checksum, o->repo_path,
			CFS_OSTREE_DIGEST_KEY, g_variant_get_size(v), CFS_DIGEST_SIZE);
		r = -EINVAL;
	} else {
		memcpy(digest, g_variant_get_data(v), CFS_DIGEST_SIZE);
	}
	if (v)
		g_variant_unref(v);
	g_variant_unref(meta);
	return r;
}

int cfs_ostree_write_digest(struct cfs_ostree *o, const uint8_t digest[CFS_DIGEST_SIZE],
			    char checksum[CFS_OSTREE_CHECKSUM_SIZE])
{
	GVariant *meta = NULL, *parent_v = NULL, *new_meta;
	GVariantBuilder b;
	GVariantIter it;
	const char *subject, *body, *key;
	guint64 ts;
	GVariant *value;
	GFile *root = NULL;
	GError *err = NULL;
	char *parent = NULL, *out = NULL, *remote = NULL, *branch = NULL;
	int r;

	g_variant_get(o->commit, "(@a{sv}@ay@a(say)&s&stayay)", &meta, &parent_v, NULL, &subject,
		      &body, &ts, NULL, NULL);
	parent = ostree_commit_get_parent(o->commit);
	g_variant_builder_init(&b, G_VARIANT_TYPE("a{sv}"));
	g_variant_iter_init(&it, meta);
	while (g_variant_iter_next(&it, "{&s@v}", &key, &value)) {
		if (strcmp(key, CFS_OSTREE_DIGEST_KEY) != 0)
			g_variant_builder_add(&b, "{s@v}", key, value);
		g_variant_unref(value);
	}
	g_variant_builder_add(&b, "{sv}", CFS_OSTREE_DIGEST_KEY,
			      g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, digest, CFS_DIGEST_SIZE, 1));
	new_meta = g_variant_ref_sink(g_variant_builder_end(&b));

	if (o->ref && !ostree_parse_refspec(o->ref, &remote, &branch, &err)) {
		r = gerr(err, "ref '%s'", o->ref);
		goto out;
	}
	if (!ostree_repo_read_commit(o->repo, o->checksum, &root, NULL, NULL, &err)) {
		r = gerr(err, "reading commit %s in '%s'", o->checksum, o->repo_path);
		goto out;
	}
	if (!ostree_repo_prepare_transaction(o->repo, NULL, NULL, &err)) {
		r = gerr(err, "starting a transaction in '%s'", o->repo_path);
		goto out;
	}
	if (!ostree_repo_write_commit_with_time(o->repo, parent, subject, body, new_meta,
						OSTREE_REPO_FILE(root), GUINT64_FROM_BE(ts), &out,
						NULL, &err))
		goto abort;
	if (o->ref)
		ostree_repo_transaction_set_ref(o->repo, remote, branch, out);
	if (!ostree_repo_commit_transaction(o->repo, NULL, NULL, &err))
		goto abort;
	snprintf(checksum, CFS_OSTREE_CHECKSUM_SIZE, "%s", out);
	r = 0;
	goto out;
abort:
	r = gerr(err, "writing a commit in '%s'", o->repo_path);
	ostree_repo_abort_transaction(o->repo, NULL, NULL);
out:
	if (root)
		g_object_unref(root);
	g_variant_unref(new_meta);
	g_variant_unref(meta);
	g_variant_unref(parent_v);
	g_free(parent);
	g_free(out);
	g_free(remote);
	g_free(branch);
	return r;
}

/* ---- the signature ---- */

/*
 * gpg --homedir @home @what into @file: the public keys (--export), or
 * their list (--with-colons --list-keys). 0, or -errno with a message.
 */
static int run_gpg(const char *home, bool list, const char *file)
{
	char *argv[] = { "gpg", "--batch", "--no-tty", "--homedir", (char *)home,
			 list ? "--with-colons" : "--export", list ? "--list-keys" : NULL, NULL };
	posix_spawn_file_actions_t fa;
	struct stat st;
	int status, r;
	pid_t pid;

	errno = 0;
	if (stat(home, &st) < 0 || !S_ISDIR(st.st_mode)) {
		r = errno ? -errno : -ENOTDIR;
		cfs_msg("GnuPG home '%s': %s", home, strerror(-r));
		return r;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	r = posix_spawnp(&pid, "gpg", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r) {
		cfs_msg("running gpg: %s", strerror(r));
		return -r;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(file, &st) < 0 ||
	    st.st_size == 0) {
		cfs_msg("GnuPG home '%s': no public keys to trust (gpg %s gave none)", home,
			list ? "--list-keys" : "--export");
		return -ENOKEY;
	}
	return 0;
}

/*
 * Is @fpr the fingerprint of a key or subkey of @list, the output of gpg
 * --with-colons --list-keys ("fpr" records, the fingerprint in field 10)?
 */
static bool listed(const char *list, const char *fpr)
{
	size_t n = strlen(fpr);

	if (n == 0)
		return false;
	for (const char *l = list; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *f = l;

		if (strncmp(l, "fpr:", 4) != 0)
			continue;
		for (int field = 1; field < 10 && f; field++) {
			f = strchr(f, ':');
			f = f ? f + 1 : NULL;
		}
		if (f && strncasecmp(f, fpr, n) == 0 && f[n] == ':')
			return true;
	}
	return false;
}

int cfs_ostree_verify_signature(struct cfs_ostree *o, const char *gpg_homedir,
				bool system_keyrings, char *signer, size_t size)
{
	char dir[] = "/tmp/cfs-ostree-keys.XXXXXX", file[sizeof(dir) + 16], list[sizeof(dir) + 16];
	char *keys = NULL, first[256] = "";
	OstreeGpgVerifyResult *res = NULL;
	GFile *keydir = NULL;
	GError *err = NULL;
	gsize keys_len;
	guint n;
	int r;

	signer[0] = '\0';
	if (!mkdtemp(dir)) {
		r = -errno;
		cfs_msg("creating '%s': %s", dir, strerror(-r));
		return r;
	}
	snprintf(file, sizeof(file), "%s/keys.gpg", dir);
	snprintf(list, sizeof(list), "%s/keys.txt", dir);
	if (gpg_homedir) {
		r = run_gpg(gpg_homedir, false, file);
		if (r == 0)
			r = run_gpg(gpg_homedir, true, list);
		if (r)
			goto out;
		if (!g_file_get_contents(list, &keys, &keys_len, &err)) {
			r = gerr(err, "reading the keys of GnuPG home '%s'", gpg_homedir);
			goto out;
		}
		unlink(list);
		keydir = g_file_new_for_path(dir);
	}
	/*
	 * libostree adds its system keyrings (/usr/share/ostree/trusted.gpg.d,
	 * or $OSTREE_GPG_HOME) to @keydir whatever we say: a signature it calls
	 * valid counts only when its key is one of @gpg_homedir's, unless the
	 * caller trusts the system keyrings too.
	 */
	res = ostree_repo_verify_commit_ext(o->repo, o->checksum, keydir, NULL, NULL, &err);
	if (!res) {
		bool none = g_error_matches(err, OSTREE_GPG_ERROR, OSTREE_GPG_ERROR_NO_SIGNATURE) ||
			    g_error_matches(err, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);

		r = gerr(err, "commit %s in '%s'", o->checksum, o->repo_path);
		r = none ? -ENOKEY : r;
		goto out;
	}
	n = ostree_gpg_verify_result_count_all(res);
	if (!ostree_gpg_verify_result_require_valid_signature(res, &err)) {
		r = gerr(err, "commit %s in '%s'", o->checksum, o->repo_path);
		r = n == 0 ? -ENOKEY : -EKEYREJECTED;
		goto out;
	}
	r = -EKEYREJECTED;
	for (guint i = 0; i < n && r; i++) {
		GVariant *all = ostree_gpg_verify_result_get_all(res, i);
		gboolean valid;
		const char *fpr, *primary, *user;

		g_variant_get_child(all, OSTREE_GPG_SIGNATURE_ATTR_VALID, "b", &valid);
		g_variant_get_child(all, OSTREE_GPG_SIGNATURE_ATTR_FINGERPRINT, "&s", &fpr);
		g_variant_get_child(all, OSTREE_GPG_SIGNATURE_ATTR_FINGERPRINT_PRIMARY, "&s", &primary);
		g_variant_get_child(all, OSTREE_GPG_SIGNATURE_ATTR_USER_NAME, "&s", &user);
		if (valid && !first[0])
			snprintf(first, sizeof(first), "%s", fpr);
		if (valid && (system_keyrings || listed(keys, fpr) || listed(keys, primary))) {
			snprintf(signer, size, user && *user ? "key %s (%s)" : "key %s", fpr, user);
			r = 0;
		}
		g_variant_unref(all);
	}
	if (r)
		cfs_msg("commit %s in '%s': signed by key %s, which is not in the GnuPG home '%s'",
			o->checksum, o->repo_path, first, gpg_homedir);
out:
	if (res)
		g_object_unref(res);
	if (keydir)
		g_object_unref(keydir);
	g_free(keys);
	unlink(file);
	unlink(list);
	rmdir(dir);
	return r;
}
