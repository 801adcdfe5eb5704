// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs_tree_from_tar(): a tree from a tar archive (plain, gzip, xz, zstd...,
 * the compression found from the data by libarchive), read as one stream and
 * never unpacked. Each entry keeps what the archive records: uid and gid
 * numbers (never names), mode, mtime with nanoseconds, xattrs, POSIX ACLs
 * (as the kernel's system.posix_acl_* xattrs), hardlinks, symlinks, devices
 * and fifos. A regular file's content is read once, as its entry comes by:
 * hashed, and with a digest store written to a temporary object there that
 * cfs_tree_finish() publishes. Entries are applied as tar extracts them: a
 * later entry for a path replaces the earlier one (a directory keeps its
 * entries and takes the new metadata); directories only implied by a path
 * are 0755, owned by 0:0, with mtime 0.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tree.h"

struct tar {
	struct archive *a;
	const char *name; /* the archive, for messages */
	const struct cfs_build_options *opts;
	int store_fd;
	struct cfs_node *root;
	char *entry; /* the entry being read, for messages */
	bool read_failed; /* the archive failed (not the store) */
	/* (directory, name) -> node: open addressing, a power of two in size */
	struct cfs_node **tab;
	size_t tab_size, tab_used;
};

static size_t slot_hash(const struct cfs_node *dir, const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)(uintptr_t)dir;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)name[i]) * 1099511628211ULL;
	return (size_t)(h ^ (h >> 29));
}

static struct cfs_node *lookup(struct tar *t, struct cfs_node *dir, const char *name, size_t len)
{
	if (!t->tab_size)
		return NULL;
	for (size_t i = slot_hash(dir, name, len) & (t->tab_size - 1);; i = (i + 1) & (t->tab_size - 1)) {
		struct cfs_node *n = t->tab[i];

		if (!n)
			return NULL;
		if (n->parent == dir && n->name_len == len && memcmp(n->name, name, len) == 0)
			return n;
	}
}

static int insert(struct tar *t, struct cfs_node *n)
{
	size_t i;

	if (2 * (t->tab_used + 1) > t->tab_size) {
		size_t size = t->tab_size ? 2 * t->tab_size : 1024;
		struct cfs_node **tab = calloc(size, sizeof(*tab));

		if (!tab)
			return -ENOMEM;
		for (size_t j = 0; j < t->tab_size; j++) {
			struct cfs_node *m = t->tab[j];

			if (!m)
				continue;
			for (i = slot_hash(m->parent, m->name, m->name_len) & (size - 1); tab[i];
			     i = (i + 1) & (size - 1))
				;
			tab[i] = m;
		}
		free(t->tab);
		t->tab = tab;
		t->tab_size = size;
	}
	for (i = slot_hash(n->parent, n->name, n->name_len) & (t->tab_size - 1); t->tab[i];
	     i = (i + 1) & (t->tab_size - 1))
		;
	t->tab[i] = n;
	t->tab_used++;
	return 0;
}

static int add_child(struct tar *t, struct cfs_node *dir, struct cfs_node *n)
{
	int r = cfs_node_add_child(dir, n);

	if (r)
		return r;
	r = insert(t, n);
	if (r) {
		dir->n_children--;
		n->parent = NULL;
	}
	return r;
}

static int bad(struct tar *t, int r, const char *why)
{
	cfs_msg("'%s': entry '%s': %s", t->name, t->entry, why);
	return r;
}

/*
 * The node for @path, directories on the way made as needed. *@name and
 * *@len are the last component, and the node is its directory; the root
 * itself has an empty last component.
 */
static int walk_path(struct tar *t, const char *path, bool create, struct cfs_node **dir,
		     const char **name, size_t *len)
{
	struct cfs_node *d = t->root;
	const char *p = path;

	*name = "";
	*len = 0;
	for (;;) {
		const char *c, *end;
		struct cfs_node *n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		c = p;
		end = strchr(c, '/');
		if (!end)
			end = c + strlen(c);
		p = end;
		if (end - c == 1 && c[0] == '.')
			continue;
		if (end - c == 2 && c[0] == '.' && c[1] == '.')
			return bad(t, -EINVAL, "a path with '..' would reach outside the tree");
		if ((size_t)(end - c) > CFS_MAX_NAME_LEN)
			return bad(t, -ENAMETOOLONG, "a name is longer than 255 bytes");
		while (*p == '/' || (p[0] == '.' && (p[1] == '/' || !p[1])))
			p++; /* a trailing "/" or "/." does not make c the parent */
		if (!*p) {
			*name = c;
			*len = (size_t)(end - c);
			break;
		}
		n = lookup(t, d, c, (size_t)(end - c));
		if (n && !cfs_node_is_dir(n))
			return bad(t, -ENOTDIR, "a directory on its path is not a directory");
		if (!n) {
			int r;

			if (!create)
				return -ENOENT;
			n = cfs_node_new(c, (size_t)(end - c));
			if (!n)
				return -ENOMEM;
			n->mode = S_IFDIR | 0755;
			r = add_child(t, d, n);
			if (r) {
				cfs_tree_free(n);
				return r;
			}
		}
		d = n;
	}
	*dir = d;
	return 0;
}

/* Forget what a node recorded, before a later entry of its path fills it again. */
static void reset_node(struct tar *t, struct cfs_node *n)
{
	cfs_store_drop(t->store_fd, n);
	if (n->link_target)
		n->link_target->nlink--; /* one link fewer to the inode */
	free(n->payload);
	n->payload = NULL;
	n->payload_len = 0;
	for (size_t i = 0; i < n->n_xattrs; i++) {
		free(n->xattrs[i].key);
		free(n->xattrs[i].value);
	}
	free(n->xattrs);
	n->xattrs = NULL;
	n->n_xattrs = 0;
	n->link_target = NULL;
	n->has_digest = false;
	n->size = 0;
	n->rdev = 0;
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

/* The kernel's encoding of a POSIX ACL (include/uapi/linux/posix_acl_xattr.h). */
struct acl_ent {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
};

static int acl_cmp(const void *a, const void *b)
{
	const struct acl_ent *x = a, *y = b;

	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Add @type's ACL of @e, when it has one, to @n as its system.posix_acl_* xattr. */
static int add_acl(struct tar *t, struct archive_entry *e, struct cfs_node *n, int type)
{
	const char *key = type == ARCHIVE_ENTRY_ACL_TYPE_ACCESS ? "system.posix_acl_access" :
								   "system.posix_acl_default";
	int count = archive_entry_acl_reset(e, type), etype, perm, tag, id, mask = -1, r;
	struct acl_ent *ents;
	uint8_t *buf;
	size_t k = 0;
	const char *uname;

	if (count <= 0)
		return 0;
	ents = calloc((size_t)count, sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	while (k < (size_t)count &&
	       archive_entry_acl_next(e, type, &etype, &perm, &tag, &id, &uname) == ARCHIVE_OK) {
		struct acl_ent *a = &ents[k++];

		a->perm = (uint16_t)(perm & 7);
		a->id = UINT32_MAX; /* ACL_UNDEFINED_ID */
		switch (tag) {
		case ARCHIVE_ENTRY_ACL_USER_OBJ: a->tag = 0x01; break;
		case ARCHIVE_ENTRY_ACL_USER: a->tag = 0x02; a->id = (uint32_t)id; break;
		case ARCHIVE_ENTRY_ACL_GROUP_OBJ: a->tag = 0x04; break;
		case ARCHIVE_ENTRY_ACL_GROUP: a->tag = 0x08; a->id = (uint32_t)id; break;
		case ARCHIVE_ENTRY_ACL_MASK: a->tag = 0x10; mask = a->perm; break;
		case ARCHIVE_ENTRY_ACL_OTHER: a->tag = 0x20; break;
		default:
			free(ents);
			return bad(t, -EINVAL, "an ACL entry of unknown kind");
		}
	}
	qsort(ents, k, sizeof(*ents), acl_cmp);
	buf = malloc(4 + 8 * k);
	if (!buf) {
		free(ents);
		return -ENOMEM;
	}
	put_le32(buf, 2); /* POSIX_ACL_XATTR_VERSION */
	for (size_t i = 0; i < k; i++) {
		put_le16(buf + 4 + 8 * i, ents[i].tag);
		put_le16(buf + 6 + 8 * i, ents[i].perm);
		put_le32(buf + 8 + 8 * i, ents[i].id);
	}
	/*
	 * libarchive folds the group:: entry into the mode; on disk, with a
	 * mask, the mode's group bits are the mask.
	 */
	if (type == ARCHIVE_ENTRY_ACL_TYPE_ACCESS && mask >= 0)
		n->mode = (n->mode & ~(uint32_t)070) | ((uint32_t)mask << 3);
	r = cfs_node_add_xattr(n, key, strlen(key), buf, 4 + 8 * k);
	free(buf);
	free(ents);
	return r;
}

static int add_xattrs(struct tar *t, struct archive_entry *e, struct cfs_node *n)
{
	const char *key;
	const void *value;
	size_t size;
	int r;

	r = add_acl(t, e, n, ARCHIVE_ENTRY_ACL_TYPE_ACCESS);
	if (r == 0)
		r = add_acl(t, e, n, ARCHIVE_ENTRY_ACL_TYPE_DEFAULT);
	if (r)
		return r;
	archive_entry_xattr_reset(e);
	while (archive_entry_xattr_next(e, &key, &value, &size) == ARCHIVE_OK) {
		size_t len = strlen(key);

		if (len == 0 || len > CFS_MAX_NAME_LEN)
			return bad(t, -EINVAL, "an xattr name is empty or longer than 255 bytes");
		r = cfs_node_add_xattr(n, key, len, value, size);
		if (r == -EEXIST)
			continue; /* an ACL given both ways: the ACL wins */
		if (r)
			return r;
	}
	return 0;
}

/* Content from the archive for cfs_store_stream(). */
static int pull(void *ctx, void *buf, size_t count)
{
	struct tar *t = ctx;
	uint8_t *p = buf;

	while (count > 0) {
		la_ssize_t n = archive_read_data(t->a, p, count);

		if (n <= 0) {
			t->read_failed = true;
			if (n == 0)
				cfs_msg("'%s': entry '%s': the archive ends inside its content",
					t->name, t->entry);
			else
				cfs_msg("'%s': entry '%s': %s", t->name, t->entry,
					archive_error_string(t->a));
			return -EIO;
		}
		p += n;
		count -= (size_t)n;
	}
	return 0;
}

static int read_content(struct tar *t, struct cfs_node *n)
{
	bool store_failed;
	int r;

	if (n->size == 0)
		return 0;
	if (t->opts && t->opts->format == CFS_FORMAT_EROFS && n->size <= CFS_EROFS_INLINE_MAX) {
		/*
		 * A composefs 1.0 image holds small files itself: keep the
		 * bytes, as a dumpfile's inline content is kept, and let
		 * cfs_tree_finish() hash (and store) them with the rest.
		 */
		n->content = malloc((size_t)n->size);
		if (!n->content)
			return -ENOMEM;
		return pull(t, n->content, (size_t)n->size);
	}
	r = cfs_store_stream(t->store_fd, pull, t, n, &store_failed);
	if (r && !t->read_failed)
	{
		if (store_failed)
			cfs_msg("'%s': entry '%s': writing its object in the digest store '%s': %s",
				t->name, t->entry, t->opts->digest_store, strerror(-r));
		else
			cfs_msg("'%s': entry '%s': hashing it: %s", t->name, t->entry,
				strerror(-r));
	}
	return r;
}

static int add_entry(struct tar *t, struct archive_entry *e)
{
	const char *path = archive_entry_pathname(e), *hl = archive_entry_hardlink(e), *name;
	mode_t type = archive_entry_filetype(e);
	struct cfs_node *dir, *n, *target = NULL;
	size_t len;
	bool fresh = false;
	int r;

	free(t->entry);
	t->entry = strdup(path ? path : "?");
	if (!t->entry)
		return -ENOMEM;
	if (!path)
		return bad(t, -EINVAL, "no path name");
	if (hl) {
		struct cfs_node *tdir;
		const char *tname;
		size_t tlen;

		r = walk_path(t, hl, false, &tdir, &tname, &tlen);
		if (r == 0)
			target = tlen ? lookup(t, tdir, tname, tlen) : NULL;
		if (r == -ENOENT || (r == 0 && !target))
			return bad(t, -EINVAL, "a hardlink to a path no earlier entry made");
		if (r)
			return r;
		if (cfs_node_is_dir(target))
			return bad(t, -EINVAL, "a hardlink to a directory");
		target = cfs_node_inode(target);
	} else if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK &&
		   type != AE_IFCHR && type != AE_IFBLK && type != AE_IFIFO) {
		return bad(t, -EINVAL, "an entry of an unknown type");
	}
	if (!hl && (type == AE_IFCHR || type == AE_IFBLK) && t->opts && t->opts->skip_devices)
		return 0;

	r = walk_path(t, path, true, &dir, &name, &len);
	if (r)
		return r;
	n = len ? lookup(t, dir, name, len) : t->root;
	if (n == target && n)
		return 0; /* a link to itself: nothing changes */
	if (n && (!len || cfs_node_is_dir(n)) && (hl || type != AE_IFDIR)) {
		if (!len || n->n_children)
			return bad(t, -EISDIR, "replaces a directory that has entries");
	}
	if (n && n->nlink)
		return bad(t, -EBUSY, "replaces a file that other entries link to (not supported)");
	if (!n) {
		n = cfs_node_new(name, len);
		if (!n)
			return -ENOMEM;
		fresh = true;
	} else {
		reset_node(t, n); /* a directory keeps its entries, gets new metadata */
	}

	if (hl) {
		n->link_target = target;
		target->nlink++; /* counted again by cfs_tree_finish() */
		n->mode = target->mode;
		goto add;
	}
	n->mode = archive_entry_mode(e);
	if (archive_entry_uid(e) < 0 || archive_entry_uid(e) > UINT32_MAX ||
	    archive_entry_gid(e) < 0 || archive_entry_gid(e) > UINT32_MAX) {
		r = bad(t, -EOVERFLOW, "uid or gid does not fit in 32 bits");
		goto err;
	}
	n->uid = (uint32_t)archive_entry_uid(e);
	n->gid = (uint32_t)archive_entry_gid(e);
	if (!t->opts || !t->opts->use_epoch) {
		n->mtime_sec = archive_entry_mtime(e);
		n->mtime_nsec = (uint32_t)archive_entry_mtime_nsec(e);
	} else {
		n->mtime_sec = 0;
		n->mtime_nsec = 0;
	}
	if (!t->opts || !t->opts->skip_xattrs) {
		r = add_xattrs(t, e, n);
		if (r)
			goto err;
	}

	switch (type) {
	case AE_IFREG:
		if (archive_entry_size(e) < 0) {
			r = bad(t, -EINVAL, "a negative size");
			goto err;
		}
		n->size = (uint64_t)archive_entry_size(e);
		r = read_content(t, n);
		if (r)
			goto err;
		break;
	case AE_IFLNK: {
		const char *target_path = archive_entry_symlink(e);

		if (!target_path || !target_path[0]) {
			r = bad(t, -EINVAL, "a symlink without a target");
			goto err;
		}
		r = cfs_node_set_payload(n, target_path, strlen(target_path));
		if (r)
			goto err;
		break;
	}
	case AE_IFCHR:
	case AE_IFBLK: {
		uint64_t dev = makedev(archive_entry_rdevmajor(e), archive_entry_rdevminor(e));

		if (dev > UINT32_MAX) {
			r = bad(t, -EOVERFLOW, "device number does not fit in 32 bits");
			goto err;
		}
		n->rdev = (uint32_t)dev;
		break;
	}
	default:
		break;
	}
add:
	if (fresh) {
		r = add_child(t, dir, n);
		if (r)
			goto err;
	}
	return 0;
err:
	if (fresh) {
		cfs_store_drop(t->store_fd, n);
		cfs_tree_free(n);
	}
	return r;
}

/* Remove the temporaries of a tree that will not be finished. */
static int drop_tmp(void *ctx, struct cfs_node *n)
{
	cfs_store_drop(*(int *)ctx, n);
	return 0;
}

int cfs_tree_from_tar(int fd, const char *name, const struct cfs_build_options *opts,
		      struct cfs_node **rootp)
{
	struct tar t = { .name = strcmp(name, "-") == 0 ? "stdin" : name, .opts = opts,
			 .store_fd = -1 };
	struct archive_entry *e;
	int r;

	t.root = cfs_node_new("", 0);
	t.a = archive_read_new();
	if (!t.root || !t.a) {
		r = -ENOMEM;
		goto out;
	}
	t.root->mode = S_IFDIR | 0755;
	if (opts && opts->digest_store) {
		t.store_fd = cfs_store_open(opts->digest_store);
		if (t.store_fd < 0) {
			r = t.store_fd;
			goto out;
		}
	}
	archive_read_support_filter_all(t.a);
	archive_read_support_format_tar(t.a);
	archive_read_support_format_gnutar(t.a);
	if (archive_read_open_fd(t.a, fd, 64 * 1024) != ARCHIVE_OK) {
		cfs_msg("'%s': %s", t.name, archive_error_string(t.a));
		r = -EINVAL;
		goto out;
	}
	for (;;) {
		r = archive_read_next_header(t.a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			if (t.entry)
				cfs_msg("'%s': after entry '%s': %s", t.name, t.entry,
					archive_error_string(t.a));
			else
				cfs_msg("'%s': %s", t.name, archive_error_string(t.a));
			r = -EINVAL;
			goto out;
		}
		r = add_entry(&t, e);
		if (r) {
			if (t.read_failed)
				r = -EINVAL;
			goto out;
		}
	}
	r = 0;
out:
	if (t.a)
		archive_read_free(t.a);
	free(t.tab);
	free(t.entry);
	if (r && t.root) {
		if (t.store_fd >= 0)
			cfs_tree_walk(t.root, drop_tmp, &t.store_fd);
		cfs_tree_free(t.root);
		t.root = NULL;
	}
	if (t.store_fd >= 0)
		close(t.store_fd);
	*rootp = t.root;
	return r;
}
