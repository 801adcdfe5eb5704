// SPDX-License-Identifier: GPL-2.0
/*
 * composefs directories: readdir and lookup. A directory's position is the
 * number of entries before it (0 and 1 are "." and ".."), so telldir and
 * seekdir work with any getdents buffer size. An open directory keeps the
 * chunk it is reading, validated, between getdents calls, and resumes from
 * f_pos without reading the chunks before it again. A directory found
 * under a second parent (a directory hardlink, or a cycle back to one
 * above) is refused with EUCLEAN.
 */
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/rhashtable.h>
#include <linux/siphash.h>
#include <linux/slab.h>

#include "cfs-internal.h"

/*
 * The parent and name of each directory a lookup has reached, for the life
 * of the mount (inodes come and go, this does not): a directory met under
 * a second parent or name is reachable under two names, a directory
 * hardlink, which the format forbids; and get_parent (export.c) reads it to reconnect a
 * directory file handle. The root is its own parent. Entries are freed
 * only with the table, so a pointer found in it stays valid.
 */
struct cfs_parent {
	struct rhash_head node;
	u64 index;
	u64 parent;
	u64 name_hash; /* of the entry's name, keyed by fs->fh_key */
};

static const struct rhashtable_params cfs_parent_params = {
	.key_len = sizeof(u64),
	.key_offset = offsetof(struct cfs_parent, index),
	.head_offset = offsetof(struct cfs_parent, node),
};

/**
 * cfs_parents_init() - set up fs->parents (at mount)
 * @fs: the mount
 *
 * Return: 0 or -errno.
 */
int cfs_parents_init(struct cfs_fs *fs)
{
	int err = rhashtable_init(&fs->parents, &cfs_parent_params);

	fs->parents_init = !err;
	return err;
}

static void cfs_parent_free(void *ptr, void *arg)
{
	kfree(ptr);
}

/**
 * cfs_parents_destroy() - free fs->parents (at unmount)
 * @fs: the mount
 */
void cfs_parents_destroy(struct cfs_fs *fs)
{
	if (fs->parents_init)
		rhashtable_free_and_destroy(&fs->parents, cfs_parent_free, NULL);
	fs->parents_init = false;
}

/**
 * cfs_parent_of() - the parent recorded for directory @index
 * @fs: the mount
 * @index: a directory's inode index
 * @parent: out
 *
 * Return: 0, or -ENOENT when no lookup has reached the directory yet.
 */
int cfs_parent_of(struct cfs_fs *fs, u64 index, u64 *parent)
{
	struct cfs_parent *p;

	rcu_read_lock();
	p = rhashtable_lookup(&fs->parents, &index, cfs_parent_params);
	if (p)
		*parent = p->parent;
	rcu_read_unlock();
	return p ? 0 : -ENOENT;
}

/**
 * cfs_set_parent() - record that directory @index is entry @name of @parent
 * @fs: the mount
 * @index: the directory
 * @parent: the directory holding the entry
 * @name: the entry's name (NULL for the root)
 * @len: its length
 *
 * Return: 0, -EFSCORRUPTED when another parent or name was recorded (the
 * directory has two names), or -ENOMEM.
 */
int cfs_set_parent(struct cfs_fs *fs, u64 index, u64 parent,
		   const char *name, size_t len)
{
	u64 hash = name ? siphash(name, len, &fs->fh_key) : 0;
	struct cfs_parent *p, *old;

	rcu_read_lock();
	old = rhashtable_lookup(&fs->parents, &index, cfs_parent_params);
	rcu_read_unlock();
	if (old)
		goto check;
	p = kmalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return -ENOMEM;
	p->index = index;
	p->parent = parent;
	p->name_hash = hash;
	old = rhashtable_lookup_get_insert_fast(&fs->parents, &p->node,
						cfs_parent_params);
	if (!old)
		return 0;
	kfree(p);
	if (IS_ERR(old))
		return PTR_ERR(old);
	/* A concurrent lookup recorded it first. */
check:
	if (old->parent == parent && old->name_hash == hash)
		return 0;
	pr_warn_ratelimited(CFS_FS_NAME ": %pD: corrupt image: directory %llu has a second name, '%.*s' in directory %llu\n",
			    fs->descriptor, index, (int)len, name ?: "", parent);
	return -EFSCORRUPTED;
}

/**
 * struct cfs_dir_cursor - where an open directory's readdir is (private_data)
 * @chunk: the chunk at the cursor
 * @first: entry number of its first entry
 * @loaded: @buf holds that chunk, validated, as @ch says
 * @ch: the chunk's descriptor when @loaded
 * @last_of: the chunk whose last name @last holds, or U32_MAX
 * @last_len: its length
 * @last: the last name of chunk @last_of, checked
 * @buf: the chunk's bytes, room for @cap of them
 * @cap: bytes @buf has room for
 */
struct cfs_dir_cursor {
	u32 chunk;
	u64 first;
	bool loaded;
	struct cfs_chunk ch;
	u32 last_of;
	u8 last_len;
	char last[CFS_MAX_NAME_LEN];
	struct cfs_chunk_buf *buf;
	u16 cap;
};

/* Emit entries @from.. of the checked chunk of @n entries at @data; false when @ctx is full. */
static bool cfs_emit_chunk(struct dir_context *ctx, const u8 *data, u16 n, unsigned int from)
{
	struct cfs_entry e;
	unsigned int i;

	for (i = from; i < n; i++) {
		cfs_chunk_entry_at(data, n, i, &e);
		if (!dir_emit(ctx, e.name, e.name_len, cfs_index_to_ino(e.index), e.d_type))
			return false;
		ctx->pos++;
	}
	return true;
}

/*
 * Copy chunk @i (descriptor @ch) into the cursor and check it: every entry
 * (cfs_load_chunk()) and its first name against the last of chunk @i - 1,
 * whose last name the cursor keeps from the chunk it listed before, or
 * reads. A sealed descriptor remembers the chunk as checked.
 */
static int cfs_load_cursor(struct cfs_fs *fs, struct cfs_dir_table *t,
			   struct cfs_dir_cursor *cur, u32 i,
			   const struct cfs_chunk *ch)
{
	struct cfs_entry e;
	int err;

	if (ch->size > cur->cap) {
		kfree(cur->buf);
		cur->buf = kmalloc(struct_size(cur->buf, data, ch->size), GFP_KERNEL);
		cur->cap = cur->buf ? ch->size : 0;
		if (!cur->buf)
			return -ENOMEM;
	}
	err = cfs_load_chunk(fs, ch, cur->buf);
	if (err)
		return err;
	if (i > 0) {
		if (cur->last_of != i - 1) {
			cur->last_of = U32_MAX;
			err = cfs_chunk_last_name(fs, t, i - 1, cur->last,
						  &cur->last_len);
			if (err)
				return err;
		}
		cfs_chunk_entry(cur->buf, 0, &e);
		err = cfs_chunk_follows(fs, t, i, cur->last, cur->last_len, &e);
		if (err)
			return err;
	}
	cfs_chunk_entry(cur->buf, cur->buf->n_dentries - 1, &e);
	memcpy(cur->last, e.name, e.name_len);
	cur->last_len = e.name_len;
	cur->last_of = i;
	cur->ch = *ch;
	cur->loaded = true;
	if (i < t->n_checked)
		set_bit(i, t->checked);
	return 0;
}

static int cfs_iterate(struct file *file, struct dir_context *ctx)
{
	struct inode *inode = file_inode(file);
	struct cfs_fs *fs = CFS_FS(inode->i_sb);
	struct cfs_dir_cursor *cur = file->private_data;
	struct cfs_dir_table *t;
	u64 skip;
	int err;

	t = cfs_dir_table(inode);
	if (IS_ERR(t))
		return PTR_ERR(t);
	if (!dir_emit_dots(file, ctx))
		return 0;
	if (!t->n_chunks)
		return 0;
	/* getdents on one file is serialised by f_pos_lock. */
	if (!cur) {
		cur = kzalloc(sizeof(*cur), GFP_KERNEL);
		if (!cur)
			return -ENOMEM;
		cur->last_of = U32_MAX;
		file->private_data = cur;
	}
	skip = ctx->pos - 2;
	if (skip < cur->first) { /* seekdir back: count again from the start */
		cur->chunk = 0;
		cur->first = 0;
		cur->loaded = false;
	}

	while (cur->chunk < t->n_chunks) {
		struct cfs_chunk ch;
		bool more;

		if (cur->loaded) {
			ch = cur->ch;
		} else {
			err = cfs_dir_chunk(fs, t, cur->chunk, &ch);
			if (err)
				return err;
		}
		if (skip < cur->first + ch.n_dentries) {
			unsigned int from = skip - cur->first;

			if (cfs_chunk_checked(t, cur->chunk)) {
				/* Sealed and checked before: list it in place. */
				struct cfs_map m;

				err = cfs_map(fs, ch.offset, ch.size, &m);
				if (err)
					return err;
				more = cfs_emit_chunk(ctx, m.data, ch.n_dentries, from);
				cfs_unmap(&m);
			} else {
				if (!cur->loaded) {
					err = cfs_load_cursor(fs, t, cur, cur->chunk, &ch);
					if (err)
						return err;
				}
				/* cfs_load_cursor() checked every entry. */
				more = cfs_emit_chunk(ctx, cur->buf->data, cur->buf->n_dentries, from);
			}
			if (!more)
				return 0;
			skip = ctx->pos - 2;
		}
		cur->first += ch.n_dentries;
		cur->chunk++;
		cur->loaded = false;
		cond_resched();
	}
	return 0;
}

static int cfs_dir_release(struct inode *inode, struct file *file)
{
	struct cfs_dir_cursor *cur = file->private_data;

	if (cur)
		kfree(cur->buf);
	kfree(cur);
	return 0;
}

static struct dentry *cfs_lookup(struct inode *dir, struct dentry *dentry,
				 unsigned int flags)
{
	struct cfs_fs *fs = CFS_FS(dir->i_sb);
	struct inode *inode = NULL;
	u64 index;
	u8 d_type;
	int err;

	if (dentry->d_name.len > CFS_MAX_NAME_LEN)
		return ERR_PTR(-ENAMETOOLONG);

	err = cfs_dir_lookup(dir, dentry->d_name.name, dentry->d_name.len,
			     &index, &d_type);
	if (err == -ENOENT)
		return d_splice_alias(NULL, dentry);
	if (err)
		return ERR_PTR(err);

	inode = cfs_iget(dir->i_sb, index);
	if (IS_ERR(inode))
		return ERR_CAST(inode);
	/* readdir reported d_type; an entry that names another type of inode
	 * is corrupt, not something to let through half-checked.
	 */
	if (d_type != fs_umode_to_dtype(inode->i_mode)) {
		pr_warn_ratelimited(CFS_FS_NAME ": %pD: corrupt image: entry '%pd' has type %u, inode %llu is 0%o\n",
				    fs->descriptor, dentry, d_type, index,
				    inode->i_mode & S_IFMT);
		iput(inode);
		return ERR_PTR(-EFSCORRUPTED);
	}
	if (S_ISDIR(inode->i_mode)) {
		err = cfs_set_parent(fs, index, CFS_I(dir)->index,
				     dentry->d_name.name, dentry->d_name.len);
		if (err) {
			iput(inode);
			return ERR_PTR(err);
		}
	}
	return d_splice_alias(inode, dentry);
}

const struct file_operations cfs_dir_operations = {
	.llseek = generic_file_llseek,
	.read = generic_read_dir,
	.iterate_shared = cfs_iterate,
	.release = cfs_dir_release,
};

const struct inode_operations cfs_dir_inode_operations = {
	.lookup = cfs_lookup,
	.listxattr = cfs_listxattr,
	.get_inode_acl = cfs_get_inode_acl,
};
