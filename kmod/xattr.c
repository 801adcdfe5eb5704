// SPDX-License-Identifier: GPL-2.0
/*
 * composefs extended attributes: listxattr, getxattr (a handler for each of
 * the user, trusted and security namespaces; the image stores full names
 * with their namespace prefix) and POSIX ACLs, which the VFS asks for
 * through ->get_inode_acl. A name of any other namespace the image holds
 * is neither listed nor read (EOPNOTSUPP, as the VFS answers for a
 * namespace without a handler), and listxattr lists exactly what getxattr
 * answers. An inode's xattr set is read in place in the image's page
 * cache, each element's lengths once and checked before its name or value
 * is used. An inode without xattrs has no ACL, which inode.c tells the VFS
 * up front.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <linux/slab.h>
#include <linux/unaligned.h>
#include <linux/xattr.h>

#include "cfs-internal.h"

/*
 * A walk over an inode's xattr set, in place in the image's page cache (the
 * page rule keeps a set inside one page). Each element's lengths are read
 * once and checked against what is left of the set before its key and
 * value are touched; the bytes themselves may change under us, so callers
 * check what they copy out.
 */
struct cfs_xattr_iter {
	struct cfs_map map;
	u32 len; /* of the set */
	u16 n_attr;
	u16 i; /* next element */
	u32 pos; /* of its key */
};

struct cfs_xattr_ent {
	const char *key;
	u16 key_len;
	const u8 *value;
	u16 value_len;
};

static int cfs_xattr_corrupt(struct inode *inode)
{
	pr_warn_ratelimited(CFS_FS_NAME ": %pD: corrupt image: inode %llu: bad xattr set at %llu\n",
			    CFS_FS(inode->i_sb)->descriptor, CFS_I(inode)->index,
			    CFS_I(inode)->xattrs_offset);
	return -EFSCORRUPTED;
}

static int cfs_xattr_begin(struct inode *inode, struct cfs_xattr_iter *it)
{
	struct cfs_inode_info *ci = CFS_I(inode);
	int err;

	it->len = ci->xattrs_len;
	err = cfs_map(CFS_FS(inode->i_sb), ci->xattrs_offset, it->len, &it->map);
	if (err)
		return err;
	it->n_attr = get_unaligned_le16(it->map.data);
	it->i = 0;
	if (cfs_xattr_header_size(it->n_attr) > it->len) {
		cfs_unmap(&it->map);
		return cfs_xattr_corrupt(inode);
	}
	it->pos = cfs_xattr_header_size(it->n_attr);
	return 0;
}

/* The next element: 1, 0 at the end, or -EFSCORRUPTED. */
static int cfs_xattr_next(struct inode *inode, struct cfs_xattr_iter *it,
			  struct cfs_xattr_ent *x)
{
	const struct cfs_xattr_element *el;
	u32 klen, vlen;

	if (it->i >= it->n_attr)
		return 0;
	el = (const void *)(it->map.data + sizeof(struct cfs_xattr_header) +
			    (size_t)it->i * sizeof(*el));
	klen = get_unaligned_le16(&el->key_length);
	vlen = get_unaligned_le16(&el->value_length);
	if (klen == 0 || klen > XATTR_NAME_MAX || it->len - it->pos < klen + vlen)
		return cfs_xattr_corrupt(inode);
	x->key = (const char *)it->map.data + it->pos;
	x->key_len = klen;
	x->value = it->map.data + it->pos + klen;
	x->value_len = vlen;
	it->pos += klen + vlen;
	it->i++;
	return 1;
}

static void cfs_xattr_end(struct cfs_xattr_iter *it)
{
	cfs_unmap(&it->map);
}

/*
 * Find @name; on success copy its value (up to @size bytes when @value) and
 * return the value's length. -ENODATA when absent, -ERANGE when @size is
 * too small.
 */
static ssize_t cfs_xattr_get(struct inode *inode, const char *name,
			     void *value, size_t size)
{
	size_t name_len = strlen(name);
	struct cfs_xattr_iter it;
	struct cfs_xattr_ent x;
	ssize_t ret;
	int r;

	if (!CFS_I(inode)->xattrs_len)
		return -ENODATA;
	ret = cfs_xattr_begin(inode, &it);
	if (ret)
		return ret;
	ret = -ENODATA;
	while ((r = cfs_xattr_next(inode, &it, &x)) > 0) {
		if (x.key_len != name_len || memcmp(x.key, name, name_len))
			continue;
		if (value && size) {
			if (size < x.value_len) {
				ret = -ERANGE;
				break;
			}
			memcpy(value, x.value, x.value_len);
		}
		ret = x.value_len;
		break;
	}
	if (r < 0)
		ret = r;
	cfs_xattr_end(&it);
	return ret;
}

static bool cfs_key_is(const struct cfs_xattr_ent *x, const char *s,
		       size_t len, bool prefix)
{
	return (prefix ? x->key_len > len : x->key_len == len) &&
	       !memcmp(x->key, s, len);
}

#define CFS_KEY_IS(x, s, prefix) cfs_key_is(x, s, sizeof(s) - 1, prefix)

/*
 * Whether getxattr of @x would answer on @inode, as the VFS decides
 * (xattr_permission()) and the handlers below: user.* only on regular
 * files and directories, trusted.* only for CAP_SYS_ADMIN, security.*,
 * and the two POSIX ACLs (read through ->get_inode_acl); no other name.
 */
static bool cfs_xattr_visible(struct inode *inode, const struct cfs_xattr_ent *x)
{
	if (CFS_KEY_IS(x, XATTR_USER_PREFIX, true))
		return S_ISREG(inode->i_mode) || S_ISDIR(inode->i_mode);
	if (CFS_KEY_IS(x, XATTR_TRUSTED_PREFIX, true))
		return capable(CAP_SYS_ADMIN);
	return CFS_KEY_IS(x, XATTR_SECURITY_PREFIX, true) ||
	       CFS_KEY_IS(x, XATTR_NAME_POSIX_ACL_ACCESS, false) ||
	       CFS_KEY_IS(x, XATTR_NAME_POSIX_ACL_DEFAULT, false);
}

/**
 * cfs_listxattr() - ->listxattr: the names of the inode's xattrs
 * @dentry: the file
 * @names: buffer for NUL-terminated names, or NULL with @size 0 to ask for
 *	   the size needed
 * @size: its size
 *
 * The names getxattr answers (cfs_xattr_visible()): trusted.* only for
 * CAP_SYS_ADMIN and user.* only on regular files and directories, as on
 * other filesystems, and no namespace without a handler.
 * Return: bytes used or needed, -ERANGE when @size is too small.
 */
ssize_t cfs_listxattr(struct dentry *dentry, char *names, size_t size)
{
	struct inode *inode = d_inode(dentry);
	struct cfs_xattr_iter it;
	struct cfs_xattr_ent x;
	ssize_t ret, total = 0;
	int r;

	if (!CFS_I(inode)->xattrs_len)
		return 0;
	ret = cfs_xattr_begin(inode, &it);
	if (ret)
		return ret;
	while ((r = cfs_xattr_next(inode, &it, &x)) > 0) {
		if (!cfs_xattr_visible(inode, &x))
			continue;
		if (names) {
			if (size - total < (size_t)x.key_len + 1) {
				r = -ERANGE;
				break;
			}
			/* Checked in the copy: the image may change. */
			memcpy(names + total, x.key, x.key_len);
			if (memchr(names + total, 0, x.key_len)) {
				r = cfs_xattr_corrupt(inode);
				break;
			}
			names[total + x.key_len] = 0;
		} else if (memchr(x.key, 0, x.key_len)) {
			r = cfs_xattr_corrupt(inode);
			break;
		}
		total += x.key_len + 1;
	}
	ret = r < 0 ? r : total;
	cfs_xattr_end(&it);
	return ret;
}

/* The image holds full names: the VFS hands a handler the name past its
 * prefix.
 */
static int cfs_xattr_handler_get(const struct xattr_handler *handler,
				 struct dentry *dentry, struct inode *inode,
				 const char *name, void *value, size_t size)
{
	return cfs_xattr_get(inode, xattr_full_name(handler, name), value, size);
}

static const struct xattr_handler cfs_xattr_user_handler = {
	.prefix = XATTR_USER_PREFIX,
	.get = cfs_xattr_handler_get,
};

static const struct xattr_handler cfs_xattr_trusted_handler = {
	.prefix = XATTR_TRUSTED_PREFIX,
	.get = cfs_xattr_handler_get,
};

static const struct xattr_handler cfs_xattr_security_handler = {
	.prefix = XATTR_SECURITY_PREFIX,
	.get = cfs_xattr_handler_get,
};

const struct xattr_handler * const cfs_xattr_handlers[] = {
	&cfs_xattr_user_handler,
	&cfs_xattr_trusted_handler,
	&cfs_xattr_security_handler,
	NULL,
};

/**
 * cfs_get_inode_acl() - ->get_inode_acl: a POSIX ACL from its xattr
 * @inode: the inode
 * @type: ACL_TYPE_ACCESS or ACL_TYPE_DEFAULT
 * @rcu: called under RCU; reading the image may sleep, so -ECHILD
 *
 * Return: the ACL, NULL when there is none, or ERR_PTR(-errno).
 */
struct posix_acl *cfs_get_inode_acl(struct inode *inode, int type, bool rcu)
{
	const char *name;
	struct posix_acl *acl;
	ssize_t len;
	void *value;

	if (rcu)
		return ERR_PTR(-ECHILD);
	if (!CFS_I(inode)->xattrs_len)
		return NULL;
	switch (type) {
	case ACL_TYPE_ACCESS:
		name = XATTR_NAME_POSIX_ACL_ACCESS;
		break;
	case ACL_TYPE_DEFAULT:
		name = XATTR_NAME_POSIX_ACL_DEFAULT;
		break;
	default:
		return ERR_PTR(-EINVAL);
	}
	/* The value is copied to a buffer of its own size, then parsed. */
	len = cfs_xattr_get(inode, name, NULL, 0);
	if (len == -ENODATA)
		return NULL;
	if (len < 0)
		return ERR_PTR(len);
	value = kmalloc(len ?: 1, GFP_KERNEL);
	if (!value)
		return ERR_PTR(-ENOMEM);
	len = cfs_xattr_get(inode, name, value, len);
	if (len == -ENODATA)
		acl = NULL;
	else if (len < 0) /* -ERANGE: the image changed between the two */
		acl = ERR_PTR(len == -ERANGE ? -EFSCORRUPTED : len);
	else
		acl = posix_acl_from_xattr(inode->i_sb->s_user_ns, value, len);
	kfree(value);
	return acl;
}
