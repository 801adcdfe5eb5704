// SPDX-License-Identifier: GPL-2.0
/*
 * composefs extended attributes: listxattr, getxattr (one catch-all
 * handler, since the image stores full names with their namespace prefix)
 * and POSIX ACLs, which the VFS asks for through ->get_inode_acl. An inode's
 * xattr set is copied out of the image and validated before any name or
 * value in it is used.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <linux/slab.h>
#include <linux/unaligned.h>
#include <linux/xattr.h>

#include "cfs-internal.h"

struct cfs_xattr_set {
	u16 n_attr;
	u8 data[CFS_MAX_XATTRS_SIZE];
};

struct cfs_xattr_ent {
	const char *key;
	u16 key_len;
	const u8 *value;
	u16 value_len;
};

/* Copy the inode's xattr set and check that every element fits in it. */
static int cfs_load_xattrs(struct inode *inode, struct cfs_xattr_set *set)
{
	struct cfs_fs *fs = CFS_FS(inode->i_sb);
	struct cfs_inode_info *ci = CFS_I(inode);
	u32 len = ci->xattrs_len, used;
	unsigned int i;
	int err;

	err = cfs_read_bytes(fs, ci->xattrs_offset, set->data, len);
	if (err)
		return err;
	set->n_attr = get_unaligned_le16(set->data);
	if (cfs_xattr_header_size(set->n_attr) > len)
		goto corrupt;
	used = cfs_xattr_header_size(set->n_attr);
	for (i = 0; i < set->n_attr; i++) {
		const struct cfs_xattr_element *el = (const void *)(set->data +
			sizeof(struct cfs_xattr_header) + i * sizeof(*el));
		u32 klen = get_unaligned_le16(&el->key_length);
		u32 vlen = get_unaligned_le16(&el->value_length);

		if (klen == 0 || klen > XATTR_NAME_MAX || vlen > XATTR_SIZE_MAX ||
		    len - used < klen + vlen)
			goto corrupt;
		if (memchr(set->data + used, 0, klen))
			goto corrupt;
		used += klen + vlen;
	}
	return 0;
corrupt:
	pr_warn_ratelimited(CFS_FS_NAME ": %pD: corrupt image: inode %llu: bad xattr set at %llu\n",
			    fs->descriptor, ci->index, ci->xattrs_offset);
	return -EFSCORRUPTED;
}

/* Entry @i of a set validated by cfs_load_xattrs(); @pos walks the data. */
static void cfs_xattr_at(const struct cfs_xattr_set *set, unsigned int i,
			 u32 *pos, struct cfs_xattr_ent *x)
{
	const struct cfs_xattr_element *el = (const void *)(set->data +
		sizeof(struct cfs_xattr_header) + i * sizeof(*el));

	if (i == 0)
		*pos = cfs_xattr_header_size(set->n_attr);
	x->key_len = get_unaligned_le16(&el->key_length);
	x->value_len = get_unaligned_le16(&el->value_length);
	x->key = (const char *)set->data + *pos;
	x->value = set->data + *pos + x->key_len;
	*pos += x->key_len + x->value_len;
}

/*
 * Find @name; on success copy its value (up to @size bytes when @value) and
 * return the value's length. -ENODATA when absent, -ERANGE when @size is
 * too small.
 */
static ssize_t cfs_xattr_get(struct inode *inode, const char *name,
			     void *value, size_t size)
{
	struct cfs_xattr_set *set;
	size_t name_len = strlen(name);
	ssize_t ret = -ENODATA;
	unsigned int i;
	u32 pos = 0;

	if (!CFS_I(inode)->xattrs_len)
		return -ENODATA;
	set = kmalloc(sizeof(*set), GFP_KERNEL);
	if (!set)
		return -ENOMEM;
	ret = cfs_load_xattrs(inode, set);
	if (ret)
		goto out;
	ret = -ENODATA;
	for (i = 0; i < set->n_attr; i++) {
		struct cfs_xattr_ent x;

		cfs_xattr_at(set, i, &pos, &x);
		if (x.key_len != name_len || memcmp(x.key, name, name_len))
			continue;
		if (value && size) {
			if (size < x.value_len) {
				ret = -ERANGE;
				goto out;
			}
			memcpy(value, x.value, x.value_len);
		}
		ret = x.value_len;
		break;
	}
out:
	kfree(set);
	return ret;
}

static bool cfs_xattr_visible(const struct cfs_xattr_ent *x)
{
	static const char trusted[] = XATTR_TRUSTED_PREFIX;

	if (x->key_len >= sizeof(trusted) - 1 &&
	    !memcmp(x->key, trusted, sizeof(trusted) - 1))
		return capable(CAP_SYS_ADMIN);
	return true;
}

/**
 * cfs_listxattr() - ->listxattr: the names of the inode's xattrs
 * @dentry: the file
 * @names: buffer for NUL-terminated names, or NULL with @size 0 to ask for
 *	   the size needed
 * @size: its size
 *
 * trusted.* names are listed only for CAP_SYS_ADMIN, as on other
 * filesystems. Return: bytes used or needed, -ERANGE when @size is too small.
 */
ssize_t cfs_listxattr(struct dentry *dentry, char *names, size_t size)
{
	struct inode *inode = d_inode(dentry);
	struct cfs_xattr_set *set;
	ssize_t ret, total = 0;
	unsigned int i;
	u32 pos = 0;

	if (!CFS_I(inode)->xattrs_len)
		return 0;
	set = kmalloc(sizeof(*set), GFP_KERNEL);
	if (!set)
		return -ENOMEM;
	ret = cfs_load_xattrs(inode, set);
	if (ret)
		goto out;
	for (i = 0; i < set->n_attr; i++) {
		struct cfs_xattr_ent x;

		cfs_xattr_at(set, i, &pos, &x);
		if (!cfs_xattr_visible(&x))
			continue;
		if (names) {
			if (size - total < (size_t)x.key_len + 1) {
				ret = -ERANGE;
				goto out;
			}
			memcpy(names + total, x.key, x.key_len);
			names[total + x.key_len] = 0;
		}
		total += x.key_len + 1;
	}
	ret = total;
out:
	kfree(set);
	return ret;
}

static int cfs_xattr_handler_get(const struct xattr_handler *handler,
				 struct dentry *dentry, struct inode *inode,
				 const char *name, void *value, size_t size)
{
	return cfs_xattr_get(inode, name, value, size);
}

/* The image holds full names, so one handler with an empty prefix takes
 * every name; the VFS hands it the full name.
 */
static const struct xattr_handler cfs_xattr_handler = {
	.prefix = "",
	.get = cfs_xattr_handler_get,
};

const struct xattr_handler * const cfs_xattr_handlers[] = {
	&cfs_xattr_handler,
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
	value = kmalloc(CFS_MAX_XATTRS_SIZE, GFP_KERNEL);
	if (!value)
		return ERR_PTR(-ENOMEM);
	len = cfs_xattr_get(inode, name, value, CFS_MAX_XATTRS_SIZE);
	if (len == -ENODATA)
		acl = NULL;
	else if (len < 0)
		acl = ERR_PTR(len);
	else
		acl = posix_acl_from_xattr(inode->i_sb->s_user_ns, value, len);
	kfree(value);
	return acl;
}
