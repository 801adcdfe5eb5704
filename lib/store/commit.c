// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Writing a built tree's image where it is to stay (cfs_tree_commit(),
 * include/cfs/repo.h): the one sequence that build, pull and ostree's
 * builds share. The tree is finished (its contents hashed, new objects
 * written), and before any new object is published the image is written
 * to a temporary: beside the file the caller named, or in REPO/images,
 * where it is then stored under its digest and the name checked once more.
 * Only then are the objects published, and the image renamed into place
 * or named. A failure at any step removes what the steps before made: no
 * image, no name changed, no new object.
 *
 * A caller that stops on a signal learns the one file it would have to
 * remove (@pending), told inside @guard's bracket, so that no signal falls
 * between a file's making and its naming.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfs/repo.h"
#include "base/internal.h"
#include "base/tree.h"

struct commit {
	struct cfs_image_target *t;
	const struct cfs_build_options *opts; /* the tree's */
	int (*check)(void *ctx, struct cfs_node *root); /* the caller's before_publish */
	void *check_ctx;
	char *tmp;   /* the temporary's full path, or NULL */
	int fd;      /* with a repository: the open temporary */
	char repo_tmp[CFS_REPO_TMP_SIZE];
	char *added; /* an image stored here that was not there before, until named */
	char *added_seal; /* the same for the sealed form (@t->store_seal) */
};

static void guard(struct cfs_image_target *t, bool on)
{
	if (t->guard)
		t->guard(t->ctx, on);
}

static void pending(struct cfs_image_target *t, const char *path)
{
	if (t->pending)
		t->pending(t->ctx, path);
}

/* Forget the temporary of @c, removed or renamed. */
static void drop_tmp(struct commit *c)
{
	pending(c->t, NULL);
	free(c->tmp);
	c->tmp = NULL;
}

/* Remove the temporary of @c: written, but not to be kept. */
static void abort_tmp(struct commit *c)
{
	if (!c->tmp)
		return;
	if (c->t->repo) {
		cfs_repo_image_abort(c->t->repo, c->fd, c->repo_tmp);
		c->fd = -1;
	} else {
		unlink(c->tmp);
	}
	drop_tmp(c);
}

/* Remove the image that write_repo() stored, unnamed: a failure leaves no image. */
static void remove_added(struct commit *c)
{
	if (c->added_seal) {
		unlink(c->added_seal);
		free(c->added_seal);
		c->added_seal = NULL;
	}
	if (!c->added)
		return;
	unlink(c->added);
	pending(c->t, NULL);
	free(c->added);
	c->added = NULL;
}

/*
 * Is @e an entry whose content the image holds (a small regular file, which
 * the format keeps inline), and that others could not read in the tree: the
 * file is not readable by others, or a directory above it is not
 * searchable by them? An image that holds such content is written without
 * access for others: it keeps the same bytes as mkcomposefs's, and shows
 * no one what the tree did not (docs/security.md).
 */
static int private_content(void *ctx, struct cfs_node *e)
{
	const struct cfs_node *n = cfs_node_inode(e);

	(void)ctx;
	if (!S_ISREG(n->mode) || !n->content || n->size == 0)
		return 0;
	if (!(n->mode & S_IROTH))
		return 1;
	for (const struct cfs_node *d = e->parent; d; d = d->parent)
		if (!(d->mode & S_IXOTH))
			return 1;
	return 0;
}

/* A temporary beside @t->path, made and told to the caller at once. */
static int make_tmp(struct commit *c, struct cfs_node *root)
{
	struct cfs_image_target *t = c->t;
	const char *slash = strrchr(t->path, '/');
	int dlen = slash ? (int)(slash - t->path) + 1 : 0;
	mode_t mask;
	int fd, r;

	if (asprintf(&c->tmp, "%.*s.%s.tmpXXXXXX", dlen, t->path,
		     slash ? slash + 1 : t->path) < 0) {
		c->tmp = NULL;
		return -ENOMEM;
	}
	guard(t, true);
	fd = mkostemp(c->tmp, O_CLOEXEC);
	r = fd < 0 ? -errno : 0;
	if (fd >= 0)
		pending(t, c->tmp);
	guard(t, false);
	if (fd < 0) {
		free(c->tmp);
		c->tmp = NULL;
		cfs_msg("cannot create '%s': %s", t->path, strerror(-r));
		return r;
	}
	/*
	 * mkostemp() makes 0600; an image is as readable as any new file,
	 * unless it holds content others could not read in the tree.
	 */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, (cfs_tree_walk(root, private_content, NULL) ? 0600 : 0644) & ~mask) < 0) {
		r = -errno;
		close(fd);
		cfs_msg("writing '%s': %s", t->path, strerror(-r));
		abort_tmp(c);
		return r;
	}
	return fd;
}

/* The image of @root to a temporary beside the file the caller named. */
static int write_path(struct commit *c, struct cfs_node *root)
{
	struct cfs_image_target *t = c->t;
	unsigned int said;
	int fd, r;

	fd = make_tmp(c, root);
	if (fd < 0)
		return fd;
	said = cfs_msg_count();
	r = cfs_tree_write(root, t->format, t->wo, fd);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && t->want_digest)
		r = cfs_verity_digest_fd(fd, t->digest);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r) {
		/* a write that failed (a full disk) said nothing: name the file */
		if (cfs_msg_count() == said)
			cfs_msg("writing '%s': %s", t->path, strerror(-r));
		abort_tmp(c);
	}
	return r;
}

/* The sealed form's digest @hex, against the seal @t wants (if any). */
static int seal_is(const struct cfs_image_target *t, const char *hex)
{
	if (!t->seal || strcmp(hex, t->seal) == 0)
		return 0;
	cfs_msg("the tree's composefs 1.0 image has the digest %s, not the image's seal %s: refused",
		hex, t->seal);
	return -EBADMSG;
}

/*
 * The sealed form of @root (the composefs 1.0 image with the defaults) to
 * a temporary in REPO/images, stored there under its digest; one that was
 * not there before is @c->added_seal, removed again on failure.
 */
static int write_seal(struct commit *c, struct cfs_node *root)
{
	struct cfs_image_target *t = c->t;
	const char *dir = cfs_repo_path(t->repo);
	char tmp[CFS_REPO_TMP_SIZE], hex[CFS_DIGEST_HEX_SIZE], *path = NULL;
	uint8_t digest[CFS_DIGEST_SIZE];
	unsigned int said = cfs_msg_count();
	bool existed;
	int fd, r;

	fd = cfs_repo_image_create(t->repo, tmp);
	if (fd < 0)
		return fd;
	r = cfs_seal_write(root, c->opts, fd);
	if (r == 0)
		r = cfs_verity_digest_fd(fd, digest);
	cfs_digest_to_hex(digest, hex);
	if (r == 0)
		r = seal_is(t, hex);
	if (r == 0 && asprintf(&path, "%s/images/%s", dir, hex) < 0) {
		path = NULL;
		r = -ENOMEM;
	}
	if (r) {
		if (cfs_msg_count() == said)
			cfs_msg("writing the sealed image into '%s/images': %s", dir, strerror(-r));
		cfs_repo_image_abort(t->repo, fd, tmp);
		return r;
	}
	existed = access(path, F_OK) == 0;
	r = cfs_repo_image_commit(t->repo, fd, tmp, t->require_verity, digest);
	if (r == 0 && !existed) {
		c->added_seal = path;
		path = NULL;
	}
	free(path);
	return r;
}

/*
 * The image of @root to a temporary in REPO/images, stored there under
 * its digest, and the name checked once more: all that can fail is found
 * before a new object is published. An image that was not there before
 * is removed again if the build fails after (@c->added).
 */
static int write_repo(struct commit *c, struct cfs_node *root)
{
	struct cfs_image_target *t = c->t;
	const char *dir = cfs_repo_path(t->repo);
	char hex[CFS_DIGEST_HEX_SIZE], *path = NULL;
	unsigned int said = cfs_msg_count();
	bool existed;
	int r;

	guard(t, true);
	c->fd = cfs_repo_image_create(t->repo, c->repo_tmp);
	if (c->fd >= 0) {
		if (asprintf(&c->tmp, "%s/images/%s", dir, c->repo_tmp) < 0) {
			c->tmp = NULL;
			cfs_repo_image_abort(t->repo, c->fd, c->repo_tmp);
			c->fd = -ENOMEM;
		} else {
			pending(t, c->tmp);
		}
	}
	guard(t, false);
	if (c->fd < 0)
		return c->fd;
	r = cfs_tree_write(root, t->format, t->wo, c->fd);
	if (r) {
		if (cfs_msg_count() == said)
			cfs_msg("writing an image into '%s/images': %s", dir, strerror(-r));
		abort_tmp(c);
		return r;
	}
	r = cfs_verity_digest_fd(c->fd, t->digest);
	cfs_digest_to_hex(t->digest, hex);
	/* the image is the sealed form itself */
	if (r == 0 && t->store_seal && cfs_seal_is_image(t->format, t->wo) && seal_is(t, hex)) {
		abort_tmp(c);
		return -EBADMSG;
	}
	if (r || asprintf(&path, "%s/images/%s", dir, hex) < 0) {
		r = r ? r : -ENOMEM;
		cfs_msg("writing an image into '%s/images': %s", dir, strerror(-r));
		abort_tmp(c);
		return r;
	}
	existed = access(path, F_OK) == 0;
	guard(t, true);
	r = cfs_repo_image_commit(t->repo, c->fd, c->repo_tmp, t->require_verity, t->digest);
	c->fd = -1;
	drop_tmp(c);
	if (r == 0 && !existed) {
		c->added = path;
		path = NULL;
		pending(t, c->added);
	}
	guard(t, false);
	free(path);
	if (r)
		return r;
	if (t->store_seal && !cfs_seal_is_image(t->format, t->wo)) {
		r = write_seal(c, root);
		if (r) {
			remove_added(c);
			return r;
		}
	}
	/* The names may have changed while the build worked. */
	r = cfs_repo_name_usable(t->repo, t->name);
	if (r)
		remove_added(c);
	return r;
}

/* cfs_tree_finish()'s before_publish: the caller's check, then the image. */
static int write_image(void *ctx, struct cfs_node *root)
{
	struct commit *c = ctx;
	int r;

	if (c->check) {
		r = c->check(c->check_ctx, root);
		if (r)
			return r;
	}
	return c->t->repo ? write_repo(c, root) : write_path(c, root);
}

/* Point the name at the image write_repo() stored. */
static int name_image(struct commit *c)
{
	struct cfs_image_target *t = c->t;
	int r;

	guard(t, true);
	r = t->origin ? cfs_repo_set_origin(t->repo, t->name, t->digest, t->origin) : 0;
	if (r == 0)
		r = cfs_repo_set_name(t->repo, t->name, t->digest);
	if (r == 0) {
		pending(t, NULL); /* named: the image stays */
		free(c->added);
		c->added = NULL;
		free(c->added_seal);
		c->added_seal = NULL;
	}
	guard(t, false);
	/* Only a change of the names since write_repo() gets here. */
	if (r)
		remove_added(c);
	return r;
}

/* Rename the image that write_path() wrote into place. */
static int rename_image(struct commit *c)
{
	int r = 0;

	if (rename(c->tmp, c->t->path) < 0) {
		r = -errno;
		cfs_msg("writing '%s': %s", c->t->path, strerror(-r));
		unlink(c->tmp);
	}
	drop_tmp(c);
	return r;
}

int cfs_tree_commit(struct cfs_node *root, const struct cfs_build_options *opts,
		    struct cfs_image_target *t)
{
	struct commit c = {
		.t = t, .opts = opts, .check = opts->before_publish, .check_ctx = opts->before_publish_ctx,
		.fd = -1,
	};
	struct cfs_build_options o = *opts;
	int r;

	if (!cfs_reserved_ok(t->reserved, sizeof(t->reserved), "cfs_image_target"))
		return -EINVAL;
	if (!t->path == !t->repo || (t->repo && !t->name) || (t->store_seal && !t->repo) ||
	    (t->seal && (!t->store_seal || !cfs_is_hex_digest(t->seal)))) {
		cfs_msg("cfs_tree_commit: a path, or a repository and a name (and store_seal only with a repository, seal only with store_seal and 64 hex digits)");
		return -EINVAL;
	}
	/*
	 * The name is checked in write_repo(), inside cfs_tree_finish(): a
	 * failure there still removes what the source staged (a tar's
	 * contents). A caller checks it before its work as well.
	 */
	o.before_publish = write_image;
	o.before_publish_ctx = &c;
	r = cfs_tree_finish(root, &o);
	if (r) {
		abort_tmp(&c); /* the image was written, but the objects not all published */
		remove_added(&c);
		return r;
	}
	return t->repo ? name_image(&c) : rename_image(&c);
}
