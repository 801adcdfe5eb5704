// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Fuzz target for the kernel module's descriptor reader, kmod/reader.c,
 * compiled unchanged for userspace against the stand-ins in fuzz/kshim/.
 * It does with the input what a mount and a full tree walk make the module
 * do: read the header, then for every inode reachable from the root (each
 * once, up to a bound) decode it, read its payload, and for a directory
 * read its chunk table, load every chunk as readdir does, and look every
 * name up again as the VFS does, along with some names that are not there.
 * Beyond "no crash, no leak", it checks what the module's callers rely on:
 * payloads come back NUL-terminated with no NUL inside, entries returned
 * by a loaded chunk lie inside it, a chunk is accepted only in order
 * after the one before, and in a directory whose chunks all load in
 * order, lookup finds every entry at its own inode.
 */
#include <stdio.h>

#include "kshim.h"
#include "cfs-internal.h"

#define MAX_INODES 4096

struct walk {
	struct cfs_fs *fs;
	u64 queue[MAX_INODES];
	unsigned int head, tail;
};

static void enqueue(struct walk *w, u64 index)
{
	for (unsigned int i = 0; i < w->tail; i++)
		if (w->queue[i] == index)
			return;
	if (w->tail < MAX_INODES)
		w->queue[w->tail++] = index;
}

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_kreader: property broken: %s\n", what);
	abort();
}

static void check_entry(const struct cfs_chunk_buf *buf, const struct cfs_entry *e)
{
	const char *names = (const char *)buf->data + (size_t)buf->n_dentries * sizeof(struct cfs_dentry);

	if (e->name < names || e->name + e->name_len > (const char *)buf->data + buf->size)
		fail("an entry's name lies outside its chunk");
}

static void walk_dir(struct walk *w, const struct cfs_dinode *di)
{
	struct cfs_inode_info *ci = calloc(1, sizeof(*ci));
	struct super_block sb = { .s_fs_info = w->fs };
	struct cfs_chunk_buf *buf = malloc(sizeof(*buf) + CFS_MAX_DIR_CHUNK_SIZE);
	struct cfs_entry e, first;
	struct cfs_dir_table *t;
	char last[CFS_MAX_NAME_LEN];
	u8 last_len = 0;
	bool whole = true, have_last = false;
	struct cfs_chunk ch;
	char name[260];
	u64 index;
	u8 dt;
	u32 i;
	int err;

	if (!ci || !buf)
		fail("out of memory");
	ci->vfs_inode.i_sb = &sb;
	ci->index = di->index;
	ci->payload_len = di->payload_len;
	t = cfs_dir_table(&ci->vfs_inode);
	if (IS_ERR(t))
		goto out;
	if (cfs_dir_table(&ci->vfs_inode) != t)
		fail("the chunk table is read again");
	if (t->n_checked > t->n_chunks || t->n_checked > CFS_DIR_CHECKED_MAX)
		fail("a bitmap of checked chunks larger than its bound");
	/* readdir, checking each chunk and its order as dir.c does */
	for (i = 0; i < t->n_chunks; i++) {
		if (cfs_dir_chunk(w->fs, t, i, &ch) || cfs_load_chunk(w->fs, &ch, buf)) {
			whole = false;
			have_last = false;
			continue;
		}
		for (unsigned int j = 0; j < buf->n_dentries; j++) {
			cfs_chunk_entry(buf, j, &e);
			check_entry(buf, &e);
			enqueue(w, e.index);
		}
		cfs_chunk_entry(buf, 0, &first);
		err = 0;
		if (i > 0 && !have_last)
			err = cfs_chunk_last_name(w->fs, t, i - 1, last, &last_len);
		if (i > 0 && !err)
			err = cfs_chunk_follows(w->fs, t, i, last, last_len, &first);
		if (err)
			whole = false;
		else if (i < t->n_checked)
			set_bit(i, t->checked);
		cfs_chunk_entry(buf, buf->n_dentries - 1, &e);
		memcpy(last, e.name, e.name_len);
		last_len = e.name_len;
		have_last = true;
	}
	/* A sealed descriptor's checked chunks are listed in place, as dir.c
	 * does: the entries must be the checked copy's.
	 */
	for (i = 0; i < t->n_checked; i++) {
		struct cfs_entry in_place;
		struct cfs_map m;

		if (!cfs_chunk_checked(t, i))
			continue;
		if (cfs_dir_chunk(w->fs, t, i, &ch) || cfs_load_chunk(w->fs, &ch, buf) ||
		    cfs_map(w->fs, ch.offset, ch.size, &m))
			fail("a checked chunk of a sealed descriptor does not load again");
		for (unsigned int j = 0; j < ch.n_dentries; j++) {
			cfs_chunk_entry(buf, j, &e);
			cfs_chunk_entry_at(m.data, ch.n_dentries, j, &in_place);
			if (in_place.index != e.index || in_place.d_type != e.d_type ||
			    in_place.name_len != e.name_len ||
			    memcmp(in_place.name, e.name, e.name_len))
				fail("an entry listed in place differs from the checked copy");
		}
		cfs_unmap(&m);
	}
	/* lookup, of every entry and of names next to it */
	for (i = 0; i < t->n_chunks; i++) {
		if (cfs_dir_chunk(w->fs, t, i, &ch) || cfs_load_chunk(w->fs, &ch, buf))
			continue;
		for (unsigned int j = 0; j < buf->n_dentries; j++) {
			cfs_chunk_entry(buf, j, &e);
			memcpy(name, e.name, e.name_len);
			err = cfs_dir_lookup(&ci->vfs_inode, name, e.name_len, &index, &dt);
			if (whole && err)
				fail("lookup misses an entry of a valid directory");
			if (whole && index != e.index)
				fail("lookup finds another inode than readdir");
			if (whole && dt != e.d_type)
				fail("lookup finds another type than readdir");
			if (j >= 4)
				continue; /* a few near misses per chunk are enough */
			name[e.name_len] = 'x';
			cfs_dir_lookup(&ci->vfs_inode, name, e.name_len + 1, &index, &dt);
			name[e.name_len - 1] ^= 1;
			cfs_dir_lookup(&ci->vfs_inode, name, e.name_len, &index, &dt);
			cfs_dir_lookup(&ci->vfs_inode, name, e.name_len - 1, &index, &dt);
		}
	}
out:
	kfree(ci->dir);
	free(ci);
	free(buf);
}

int fuzz_kreader_one(const uint8_t *data, size_t size)
{
	struct inode inode = { .i_size = (loff_t)size };
	struct address_space mapping = { .data = data, .size = size, .host = &inode };
	struct file file = { .f_mapping = &mapping, .f_inode = &inode };
	/* Both ways of reading the descriptor: odd sizes as if on tmpfs, and
	 * every other even size as if sealed by fs-verity (the chunk tables
	 * then carry their bitmap of checked chunks).
	 */
	struct cfs_fs fs = { .descriptor = &file, .read_by_kernel_read = size & 1,
			     .descriptor_sealed = (size & 3) == 2 };
	struct walk *w;

	if (cfs_reader_init(&fs))
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		fail("out of memory");
	w->fs = &fs;
	enqueue(w, fs.root_index);
	while (w->head < w->tail) {
		struct cfs_dinode di;
		char *payload;
		u8 digest[CFS_DIGEST_SIZE];

		if (cfs_read_dinode(&fs, w->queue[w->head++], &di))
			continue;
		switch (di.mode & S_IFMT) {
		case S_IFREG:
		case S_IFLNK:
			if (cfs_read_payload(&fs, &di, &payload))
				break;
			if (payload && strlen(payload) != di.payload_len)
				fail("payload not terminated at its length");
			if (payload && (di.flags & CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD))
				cfs_digest_from_payload(payload, di.payload_len, digest);
			kfree(payload);
			break;
		case S_IFDIR:
			walk_dir(w, &di);
			break;
		}
	}
	free(w);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_kreader_one(data, size);
}
