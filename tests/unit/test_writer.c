// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit tests of the image encoder (lib/format/v1/writer.c): trees are built in memory,
 * written, and taken apart again by a small independent decoder here, which
 * checks every flag and field, the entry order, chunk splitting, the page
 * rule of the variable data section, xattr set sharing and reproducibility.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "base/tree.h"
#include "cfs-format.h"

/* ---- a tiny decoder, independent of lib/format/reader.c ---- */

struct image {
	uint8_t *data;
	size_t len;
	uint64_t data_offset;
	uint64_t root;
};

struct dinode {
	uint64_t index;
	uint32_t flags, payload_len, mode, nlink, uid, gid, rdev;
	uint64_t mtime, ctime, size, xoff;
	uint32_t mtime_nsec, ctime_nsec, xlen, encoded_size;
	const uint8_t *payload;
	uint8_t digest[CFS_DIGEST_SIZE];
	bool has_digest;
};

struct dentry {
	char name[256];
	size_t name_len;
	uint64_t ino;
	uint8_t d_type;
};

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void decode(const struct image *img, uint64_t index, struct dinode *d)
{
	const uint8_t *base = img->data + CFS_INODE_SECTION_OFFSET + index, *p = base;

	memset(d, 0, sizeof(*d));
	d->index = index;
	d->flags = le32(p), p += 4;
	d->mode = CFS_INODE_DEFAULT_MODE;
	if (d->flags & CFS_INODE_FLAGS_PAYLOAD)
		d->payload_len = le32(p), p += 4;
	if (d->flags & CFS_INODE_FLAGS_MODE)
		d->mode = le32(p), p += 4;
	d->nlink = S_ISDIR(d->mode) ? 2 : 1;
	if (d->flags & CFS_INODE_FLAGS_NLINK)
		d->nlink = le32(p), p += 4;
	if (d->flags & CFS_INODE_FLAGS_UIDGID) {
		d->uid = le32(p), p += 4;
		d->gid = le32(p), p += 4;
	}
	if (d->flags & CFS_INODE_FLAGS_RDEV)
		d->rdev = le32(p), p += 4;
	if (d->flags & CFS_INODE_FLAGS_TIMES) {
		d->mtime = le64(p), p += 8;
		d->ctime = le64(p), p += 8;
	}
	if (d->flags & CFS_INODE_FLAGS_TIMES_NSEC) {
		d->mtime_nsec = le32(p), p += 4;
		d->ctime_nsec = le32(p), p += 4;
	}
	if (d->flags & CFS_INODE_FLAGS_LOW_SIZE)
		d->size = le32(p), p += 4;
	if (d->flags & CFS_INODE_FLAGS_HIGH_SIZE)
		d->size += (uint64_t)le32(p) << 32, p += 4;
	if (d->flags & CFS_INODE_FLAGS_XATTRS) {
		d->xoff = le64(p), p += 8;
		d->xlen = le32(p), p += 4;
	}
	if (d->flags & CFS_INODE_FLAGS_DIGEST) {
		memcpy(d->digest, p, CFS_DIGEST_SIZE);
		p += CFS_DIGEST_SIZE;
		d->has_digest = true;
	}
	d->payload = base - d->payload_len;
	if (d->flags & CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD && !d->has_digest)
		d->has_digest = cfs_digest_from_payload((const char *)d->payload, d->payload_len,
							d->digest) == 0;
	d->encoded_size = (uint32_t)(p - base);
}

static bool crosses_page(const struct image *img, uint64_t off, uint64_t len)
{
	uint64_t abs = img->data_offset + off;

	return len > 0 && abs / CFS_PAGE_SIZE != (abs + len - 1) / CFS_PAGE_SIZE;
}

/* All entries of directory @d, in stored order; returns how many. */
static size_t entries(const struct image *img, const struct dinode *d, struct dentry *out,
		      size_t max, size_t *n_chunks)
{
	size_t n = 0, nc;

	*n_chunks = 0;
	if (d->payload_len == 0)
		return 0;
	nc = le32(d->payload);
	*n_chunks = nc;
	CHECK(d->payload_len == cfs_dir_header_size(nc), "dir payload %u for %zu chunks",
	      d->payload_len, nc);
	for (size_t c = 0; c < nc; c++) {
		const uint8_t *ch = d->payload + 4 + 12 * c;
		uint16_t nd = le16(ch), size = le16(ch + 2);
		uint64_t off = le64(ch + 4);
		const uint8_t *de = img->data + img->data_offset + off;
		const uint8_t *names = de + 12 * nd;

		CHECK(nd > 0 && size <= CFS_MAX_DIR_CHUNK_SIZE, "chunk %zu: %u entries, %u bytes",
		      c, nd, size);
		CHECK(!crosses_page(img, off, size), "chunk at %llu crosses a page",
		      (unsigned long long)off);
		CHECK(img->data_offset + off + size <= img->len, "chunk beyond the image");
		for (size_t i = 0; i < nd && n < max; i++, de += 12, n++) {
			out[n].ino = le64(de);
			out[n].d_type = de[8];
			out[n].name_len = de[9];
			memcpy(out[n].name, names + le16(de + 10), de[9]);
			out[n].name[de[9]] = '\0';
		}
	}
	return n;
}

static int load_image(struct cfs_node *root, struct image *img)
{
	FILE *f = tmpfile();
	long len;
	int r;

	if (!f)
		return -errno;
	r = cfs_tree_write(root, CFS_FORMAT_V1, NULL, fileno(f));
	if (r) {
		fclose(f);
		return r;
	}
	len = lseek(fileno(f), 0, SEEK_END);
	img->len = (size_t)len;
	img->data = malloc(img->len);
	if (!img->data || pread(fileno(f), img->data, img->len, 0) != len) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	CHECK(img->data[0] == CFS_VERSION, "version %u", img->data[0]);
	CHECK(le32(img->data + 4) == CFS_MAGIC, "magic");
	img->data_offset = le64(img->data + 8);
	img->root = le64(img->data + 16);
	return 0;
}

/* ---- building trees ---- */

static struct cfs_node *add(struct cfs_node *dir, const char *name, uint32_t mode)
{
	struct cfs_node *n = cfs_node_new(name, strlen(name));

	if (!n || cfs_node_add_child(dir, n)) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	n->mode = mode;
	return n;
}

static struct cfs_node *new_root(void)
{
	struct cfs_node *r = cfs_node_new("", 0);

	r->mode = S_IFDIR | 0755;
	return r;
}

static const struct dentry *find(const struct dentry *e, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(e[i].name, name) == 0)
			return &e[i];
	return NULL;
}

static void set_digest(struct cfs_node *n, uint8_t seed)
{
	for (int i = 0; i < CFS_DIGEST_SIZE; i++)
		n->digest[i] = (uint8_t)(seed + i);
	n->has_digest = true;
}

static void test_fields(void)
{
	struct cfs_node *root = new_root(), *n, *all, *fromp;
	struct dentry e[32];
	struct image img;
	struct dinode d, r;
	size_t ne, nc;
	char objpath[CFS_OBJECT_PATH_SIZE], longtarget[3001];

	/* Everything at its default: no optional field at all. */
	add(root, "def", S_IFREG | 0644);

	all = add(root, "all", S_IFREG | 04755);
	all->uid = 1;
	all->gid = 2;
	all->mtime_sec = 1234567890123LL;
	all->mtime_nsec = 999999999;
	all->size = 0x100000001ULL;
	set_digest(all, 1);
	cfs_node_set_payload(all, "custom/path", 11);
	cfs_node_add_xattr(all, "user.a", 6, "1", 1);

	fromp = add(root, "fromp", S_IFREG | 0644);
	fromp->size = 4096;
	set_digest(fromp, 7);
	cfs_object_path(fromp->digest, objpath);
	cfs_node_set_payload(fromp, objpath, strlen(objpath));

	n = add(root, "four-gib", S_IFREG | 0644);
	n->size = 1ULL << 32;
	set_digest(n, 9);
	cfs_object_path(n->digest, objpath);
	cfs_node_set_payload(n, objpath, strlen(objpath));

	n = add(root, "dev", S_IFBLK | 0600);
	n->rdev = 0x801;
	add(root, "whiteout", S_IFCHR);
	add(root, "fifo", S_IFIFO | 0644);
	n = add(root, "sym", S_IFLNK | 0777);
	memset(longtarget, 'x', 3000);
	cfs_node_set_payload(n, longtarget, 3000);
	n->size = 3000; /* not stored for symlinks */
	add(root, "empty", S_IFDIR | 0755);
	n = add(root, "nsec-only", S_IFREG | 0644);
	n->mtime_nsec = 5;
	n = add(root, "hl", 0);
	n->link_target = all;

	CHECK(cfs_tree_finish(root, NULL) == 0, "finish");
	CHECK(load_image(root, &img) == 0, "write");

	decode(&img, img.root, &r);
	CHECK(r.flags == (CFS_INODE_FLAGS_PAYLOAD | CFS_INODE_FLAGS_MODE | CFS_INODE_FLAGS_NLINK),
	      "root flags %#x", r.flags);
	CHECK(r.nlink == 3 && r.mode == (S_IFDIR | 0755), "root nlink %u mode %o", r.nlink,
	      r.mode);
	ne = entries(&img, &r, e, 32, &nc);
	CHECK(ne == 11 && nc == 1, "root has %zu entries in %zu chunks", ne, nc);

	decode(&img, find(e, ne, "def")->ino, &d);
	CHECK(d.flags == 0 && d.encoded_size == 4, "default inode flags %#x", d.flags);
	CHECK(find(e, ne, "def")->d_type == 8, "DT_REG");

	decode(&img, find(e, ne, "all")->ino, &d);
	CHECK(d.flags == (CFS_INODE_FLAGS_PAYLOAD | CFS_INODE_FLAGS_MODE | CFS_INODE_FLAGS_NLINK |
			  CFS_INODE_FLAGS_UIDGID | CFS_INODE_FLAGS_TIMES |
			  CFS_INODE_FLAGS_TIMES_NSEC | CFS_INODE_FLAGS_LOW_SIZE |
			  CFS_INODE_FLAGS_HIGH_SIZE | CFS_INODE_FLAGS_XATTRS |
			  CFS_INODE_FLAGS_DIGEST),
	      "all flags %#x", d.flags);
	CHECK(d.encoded_size == cfs_inode_encoded_size(d.flags), "encoded size");
	CHECK(d.mode == (S_IFREG | 04755) && d.uid == 1 && d.gid == 2 && d.nlink == 2,
	      "mode %o uid %u gid %u nlink %u", d.mode, d.uid, d.gid, d.nlink);
	CHECK(d.mtime == 1234567890123ULL && d.ctime == d.mtime && d.mtime_nsec == 999999999 &&
		      d.ctime_nsec == 999999999,
	      "times");
	CHECK(d.size == 0x100000001ULL, "size %llu", (unsigned long long)d.size);
	CHECK(d.payload_len == 11 && memcmp(d.payload, "custom/path", 11) == 0, "payload");
	CHECK(d.has_digest && memcmp(d.digest, all->digest, CFS_DIGEST_SIZE) == 0, "digest");
	CHECK(find(e, ne, "hl")->ino == find(e, ne, "all")->ino, "hardlink names the same inode");

	decode(&img, find(e, ne, "fromp")->ino, &d);
	CHECK(d.flags == (CFS_INODE_FLAGS_PAYLOAD | CFS_INODE_FLAGS_LOW_SIZE |
			  CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD),
	      "fromp flags %#x", d.flags);
	CHECK(d.has_digest && memcmp(d.digest, fromp->digest, CFS_DIGEST_SIZE) == 0,
	      "digest from payload");

	decode(&img, find(e, ne, "four-gib")->ino, &d);
	CHECK(d.flags == (CFS_INODE_FLAGS_PAYLOAD | CFS_INODE_FLAGS_HIGH_SIZE |
			  CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD),
	      "4 GiB flags %#x", d.flags);
	CHECK(d.size == 1ULL << 32, "4 GiB size");

	decode(&img, find(e, ne, "dev")->ino, &d);
	CHECK(d.flags == (CFS_INODE_FLAGS_MODE | CFS_INODE_FLAGS_RDEV) && d.rdev == 0x801,
	      "dev flags %#x rdev %#x", d.flags, d.rdev);
	CHECK(find(e, ne, "dev")->d_type == 6, "DT_BLK");
	decode(&img, find(e, ne, "whiteout")->ino, &d);
	CHECK(d.flags == CFS_INODE_FLAGS_MODE && d.mode == S_IFCHR && d.rdev == 0,
	      "whiteout flags %#x", d.flags);
	CHECK(find(e, ne, "whiteout")->d_type == 2, "DT_CHR");
	CHECK(find(e, ne, "fifo")->d_type == 1, "DT_FIFO");

	decode(&img, find(e, ne, "sym")->ino, &d);
	CHECK(d.flags == (CFS_INODE_FLAGS_PAYLOAD | CFS_INODE_FLAGS_MODE) &&
		      d.payload_len == 3000 && memcmp(d.payload, longtarget, 3000) == 0,
	      "symlink flags %#x, payload %u", d.flags, d.payload_len);
	CHECK(find(e, ne, "sym")->d_type == 10, "DT_LNK");

	decode(&img, find(e, ne, "empty")->ino, &d);
	CHECK(d.flags == CFS_INODE_FLAGS_MODE && d.payload_len == 0 && d.nlink == 2,
	      "empty dir flags %#x", d.flags);
	CHECK(find(e, ne, "empty")->d_type == 4, "DT_DIR");

	decode(&img, find(e, ne, "nsec-only")->ino, &d);
	CHECK(d.flags == CFS_INODE_FLAGS_TIMES_NSEC && d.mtime == 0 && d.mtime_nsec == 5,
	      "nsec-only flags %#x", d.flags);

	free(img.data);
	cfs_tree_free(root);
}

static void test_sorting(void)
{
	static const char *const in[] = { "b", "ab", "a\xff", "a", "A", "\x01", "aa", "ba" };
	static const char *const want[] = { "\x01", "A", "a", "aa", "ab", "a\xff", "b", "ba" };
	struct cfs_node *root = new_root();
	struct dentry e[16];
	struct image img;
	struct dinode r;
	size_t ne, nc;

	for (size_t i = 0; i < 8; i++)
		add(root, in[i], S_IFREG | 0644);
	CHECK(cfs_tree_finish(root, NULL) == 0, "finish");
	CHECK(load_image(root, &img) == 0, "write");
	decode(&img, img.root, &r);
	ne = entries(&img, &r, e, 16, &nc);
	CHECK(ne == 8, "%zu entries", ne);
	for (size_t i = 0; i < ne && i < 8; i++)
		CHECK(strcmp(e[i].name, want[i]) == 0, "entry %zu is '%s'", i, e[i].name);
	free(img.data);
	cfs_tree_free(root);

	/* Two entries of one name are refused. */
	root = new_root();
	add(root, "x", S_IFREG | 0644);
	add(root, "x", S_IFDIR | 0755);
	CHECK(cfs_tree_finish(root, NULL) == -EEXIST, "duplicate names");
	cfs_tree_free(root);
}

static void test_chunks(void)
{
	enum { N = 3000 };
	struct cfs_node *root = new_root(), *d = add(root, "big", S_IFDIR | 0755);
	static struct dentry e[N + 1];
	struct image img;
	struct dinode r, dd;
	size_t ne, nc, total = 0;
	char name[64];

	for (int i = N - 1; i >= 0; i--) {
		/* Varying lengths, so chunks end at odd offsets. */
		snprintf(name, sizeof(name), "entry-%05d-%.*s", i, i % 40, "0123456789012345678901234567890123456789");
		add(d, name, S_IFREG | 0644);
	}
	CHECK(cfs_tree_finish(root, NULL) == 0, "finish");
	CHECK(load_image(root, &img) == 0, "write");
	decode(&img, img.root, &r);
	ne = entries(&img, &r, e, N, &nc);
	decode(&img, e[0].ino, &dd);
	CHECK(dd.nlink == 2, "subdir nlink");
	ne = entries(&img, &dd, e, N, &nc);
	CHECK(ne == N, "%zu entries", ne);
	CHECK(nc > 10, "only %zu chunks", nc);
	for (size_t i = 1; i < ne; i++)
		CHECK(cfs_name_cmp(e[i - 1].name, e[i].name_len, e[i].name, e[i].name_len) < 0,
		      "order at %zu", i);
	/* Each chunk is full: the next entry would not have fit. */
	for (size_t c = 0; c < nc; c++) {
		const uint8_t *ch = dd.payload + 4 + 12 * c;
		uint16_t n = le16(ch), size = le16(ch + 2);

		if (c + 1 < nc)
			CHECK(size + 12 + e[total + n].name_len > CFS_MAX_DIR_CHUNK_SIZE,
			      "chunk %zu (%u bytes) not filled", c, size);
		total += n;
	}
	CHECK(total == N, "%zu entries over the chunks", total);
	free(img.data);
	cfs_tree_free(root);
}

static void test_xattrs_and_pages(void)
{
	struct cfs_node *root = new_root(), *a, *b, *c, *big;
	struct dentry e[600];
	struct image img;
	struct dinode r, da, db, dc;
	size_t ne, nc;
	char name[32], value[2000];

	a = add(root, "a", S_IFREG | 0644);
	b = add(root, "b", S_IFDIR | 0755);
	c = add(root, "c", S_IFREG | 0644);
	cfs_node_add_xattr(a, "user.x", 6, "1", 1);
	cfs_node_add_xattr(a, "trusted.y", 9, "", 0);
	cfs_node_add_xattr(b, "trusted.y", 9, "", 0); /* same set, other order */
	cfs_node_add_xattr(b, "user.x", 6, "1", 1);
	cfs_node_add_xattr(c, "user.x", 6, "2", 1);
	/* Many sets of ~1.5 KiB: they must be moved to page starts. */
	memset(value, 'v', sizeof(value));
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "f%03d", i);
		big = add(root, name, S_IFREG | 0644);
		cfs_node_add_xattr(big, "user.big", 8, value, 1400 + (size_t)i % 300);
	}
	CHECK(cfs_tree_finish(root, NULL) == 0, "finish");
	CHECK(load_image(root, &img) == 0, "write");
	decode(&img, img.root, &r);
	ne = entries(&img, &r, e, 600, &nc);
	CHECK(ne == 503, "%zu entries", ne);
	decode(&img, find(e, ne, "a")->ino, &da);
	decode(&img, find(e, ne, "b")->ino, &db);
	decode(&img, find(e, ne, "c")->ino, &dc);
	CHECK(da.xlen && da.xoff == db.xoff && da.xlen == db.xlen, "equal sets are shared");
	CHECK(dc.xoff != da.xoff, "different sets are not");
	/* Keys sorted inside the set: "trusted.y" before "user.x". */
	{
		const uint8_t *x = img.data + img.data_offset + da.xoff;

		CHECK(le16(x) == 2 && le16(x + 2) == 9 && memcmp(x + 10, "trusted.y", 9) == 0,
		      "xattr set is sorted by key");
	}
	for (size_t i = 0; i < ne; i++) {
		struct dinode d;

		decode(&img, e[i].ino, &d);
		CHECK(!crosses_page(&img, d.xoff, d.xlen), "xattrs of %s cross a page", e[i].name);
		CHECK(img.data_offset + d.xoff + d.xlen <= img.len, "xattrs beyond the image");
	}
	free(img.data);
	cfs_tree_free(root);

	/* A set over 4096 bytes is an error. */
	root = new_root();
	a = add(root, "a", S_IFREG | 0644);
	cfs_node_add_xattr(a, "user.a", 6, value, 2000);
	cfs_node_add_xattr(a, "user.b", 6, value, 2000);
	cfs_node_add_xattr(a, "user.c", 6, value, 200);
	CHECK(cfs_tree_finish(root, NULL) == 0, "finish");
	CHECK(load_image(root, &img) == -E2BIG, "oversized xattr set refused");
	cfs_tree_free(root);
}

static struct cfs_node *sample(bool reversed)
{
	static const char *const names[] = { "z", "m", "a", "dir", "q" };
	struct cfs_node *root = new_root(), *n;

	for (int k = 0; k < 5; k++) {
		int i = reversed ? 4 - k : k;

		n = add(root, names[i], names[i][0] == 'd' ? S_IFDIR | 0700 : S_IFREG | 0600);
		n->mtime_sec = i;
		cfs_node_add_xattr(n, "user.k", 6, names[i], 1);
		if (n->mode & S_IFDIR) {
			add(n, reversed ? "two" : "one", S_IFIFO | 0600);
			add(n, reversed ? "one" : "two", S_IFIFO | 0600);
		}
	}
	return root;
}

static void test_reproducible(void)
{
	struct cfs_node *a = sample(false), *b = sample(true);
	struct image ia, ib, ia2;

	CHECK(cfs_tree_finish(a, NULL) == 0 && cfs_tree_finish(b, NULL) == 0, "finish");
	CHECK(load_image(a, &ia) == 0 && load_image(b, &ib) == 0 && load_image(a, &ia2) == 0,
	      "write");
	CHECK(ia.len == ib.len && memcmp(ia.data, ib.data, ia.len) == 0,
	      "insertion order changes the image");
	CHECK(ia.len == ia2.len && memcmp(ia.data, ia2.data, ia.len) == 0,
	      "writing twice changes the image");
	free(ia.data);
	free(ib.data);
	free(ia2.data);
	cfs_tree_free(a);
	cfs_tree_free(b);
}

int main(void)
{
	test_fields();
	test_sorting();
	test_chunks();
	test_xattrs_and_pages();
	test_reproducible();
	return check_exit("writer");
}
