// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Fuzz target for cfsctl mount --fuse's operations (cmd/fuse-ops.c), as
 * the kernel would call them, without a kernel: the input is an image
 * served as the mount serves it (whether or not the checks at mount time
 * would refuse it, so that each operation meets corrupt parts too). From
 * the root, each directory is listed in small pieces, plain and with
 * attributes, each entry looked up again (and a name that is not there),
 * its attributes taken, its xattrs listed with no room, exact room and too
 * little, each read by name, each symlink read, and each regular file
 * opened and read in pieces at odd offsets (backing files are missing
 * here: their opens fail, as with an empty store). Any crash, sanitizer
 * report, leak or hang is a bug; so is, in an image the mount would serve
 * (its walk at mount time reads every path), a listing that shows an entry
 * lookup cannot find with the same node, or an xattr getxattr cannot find.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "../cmd/fuse.h"

/* The nodes visited, and the operations on each, stay bounded. */
#define MAX_NODES 400
#define MAX_ENTRIES 2000
#define MAX_READ (64 * 1024)

/* The daemon's messages go to stderr; here, nowhere (CFS_FUZZ_VERBOSE: stderr). */
void cli_error(const char *fmt, ...)
{
	va_list ap;

	if (!getenv("CFS_FUZZ_VERBOSE"))
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static volatile uint64_t sink;

struct walk {
	struct cfsfuse *fs;
	bool served; /* the mount would serve the image: its listings and lookups agree */
	uint64_t queue[MAX_NODES];
	size_t n_queued, n_done;
	unsigned long entries;
	uint64_t sum; /* touched bytes, so nothing is optimised away */
};

/* A listing's entry: checked and packed as a name, its node and its offset. */
struct packed {
	uint64_t node;
	off_t pos;
	uint32_t mode;
	uint16_t len;
	char name[];
};

static size_t pack(void *ctx, char *buf, size_t room, const struct cfsfuse_dirent *e)
{
	size_t len = strlen(e->name), need = (sizeof(struct packed) + len + 1 + 7) & ~(size_t)7;
	struct packed p = { .node = e->node ? e->node : (uint64_t)e->attr.st_ino,
			    .pos = e->pos, .mode = e->attr.st_mode, .len = (uint16_t)len };

	(void)ctx;
	if (len == 0 || len > 0xffff)
		fuzz_fail("a listing holds a name of %zu bytes", len);
	if (need > room)
		return need;
	memcpy(buf, &p, sizeof(p));
	memcpy(buf + sizeof(p), e->name, len + 1);
	return need;
}

static void queue(struct walk *w, uint64_t node)
{
	for (size_t i = 0; i < w->n_queued; i++)
		if (w->queue[i] == node)
			return;
	if (w->n_queued < MAX_NODES)
		w->queue[w->n_queued++] = node;
}

static void xattrs(struct walk *w, uint64_t node)
{
	char *list, *p;
	size_t len, len2;
	const void *value;
	size_t vlen;
	int r;

	if (cfsfuse_listxattr(w->fs, node, true, NULL, 0, &len) < 0 || len > 1 << 20)
		return;
	list = malloc(len + 1);
	if (!list)
		return;
	r = cfsfuse_listxattr(w->fs, node, true, list, len, &len2);
	if (r == 0 && len2 != len)
		fuzz_fail("listxattr: %zu bytes, then %zu", len, len2);
	/* size 0 asks for the length */
	if (len > 1 && cfsfuse_listxattr(w->fs, node, true, list, len - 1, &len2) != -ERANGE)
		fuzz_fail("listxattr with a byte too little is not ERANGE");
	cfsfuse_listxattr(w->fs, node, false, list, len, &len2);
	r = cfsfuse_listxattr(w->fs, node, true, list, len, &len2);
	list[len] = '\0';
	for (p = list; r == 0 && p < list + len; p += strlen(p) + 1) {
		r = cfsfuse_getxattr(w->fs, node, p, 0, &value, &vlen);
		if (r == -ENODATA && w->served)
			fuzz_fail("getxattr does not find an xattr listxattr named");
		if (r == 0 && vlen) {
			w->sum += ((const uint8_t *)value)[vlen - 1];
			/* size 0 asks for the length */
			if (vlen > 1 && cfsfuse_getxattr(w->fs, node, p, vlen - 1, &value, &vlen) != -ERANGE)
				fuzz_fail("getxattr with a byte too little is not ERANGE");
		}
		r = 0;
	}
	cfsfuse_getxattr(w->fs, node, "user.not-there", 0, &value, &vlen);
	free(list);
}

static void read_file(struct walk *w, uint64_t node)
{
	static const size_t sizes[] = { 4096, 1, 131072, 777 };
	struct cfsfuse_data d;
	struct ofile *f;
	off_t off = 0;

	if (cfsfuse_open(w->fs, node, O_WRONLY, &f) != -EROFS)
		fuzz_fail("an open for writing is not EROFS");
	if (cfsfuse_open(w->fs, node, O_RDONLY, &f) < 0)
		return;
	for (size_t i = 0; off < MAX_READ; i++) {
		size_t size = sizes[i % 4];

		if (cfsfuse_read(w->fs, f, size, off, &d) < 0)
			break;
		if (d.len > size)
			fuzz_fail("a read of %zu bytes answered %zu", size, d.len);
		if (d.len && d.fd < 0)
			w->sum += (uint8_t)d.data[d.len - 1];
		free(d.buf);
		if (d.len == 0)
			break;
		off += (off_t)d.len + (i & 1 ? 3 : 0);
	}
	cfsfuse_read(w->fs, f, 10, -1, &d);
	free(d.buf);
	cfsfuse_release(w->fs, f);
}

/* A read of @node with no open (the kernel opened it without asking): twice, the file kept. */
static void read_node(struct walk *w, uint64_t node)
{
	struct cfsfuse_data d;
	struct ofile *f;

	for (int i = 0; i < 2; i++) {
		if (cfsfuse_node_get(w->fs, node, &f) < 0)
			return;
		if (cfsfuse_read(w->fs, f, 4096, (off_t)i * 4096, &d) == 0) {
			if (d.len > 4096)
				fuzz_fail("a read of 4096 bytes answered %zu", d.len);
			if (d.len && d.fd < 0)
				w->sum += (uint8_t)d.data[d.len - 1];
			free(d.buf);
		}
		cfsfuse_node_put(w->fs, f);
	}
}

/* List @node in pieces of @size bytes, plain or with attributes; look up what it shows. */
static void list(struct walk *w, uint64_t node, size_t size, bool plus)
{
	char *buf = malloc(size), name[PATH_MAX];
	off_t off = 0;

	if (!buf)
		return;
	while (w->entries < MAX_ENTRIES) {
		size_t used = 0;

		if (cfsfuse_readdir(w->fs, node, buf, size, off, plus, pack, NULL, &used) < 0 ||
		    used == 0)
			break;
		for (size_t at = 0; at < used && w->entries < MAX_ENTRIES; w->entries++) {
			struct packed p;
			struct stat st;
			uint64_t found;
			int r;

			memcpy(&p, buf + at, sizeof(p));
			if (p.pos <= off)
				fuzz_fail("readdir went back from offset %lld to %lld",
					  (long long)off, (long long)p.pos);
			off = p.pos;
			if (p.len >= sizeof(name))
				fuzz_fail("a listing holds a name of %u bytes", p.len);
			memcpy(name, buf + at + sizeof(p), p.len + 1);
			at += (sizeof(p) + p.len + 1 + 7) & ~(size_t)7;
			if (!strcmp(name, ".") || !strcmp(name, ".."))
				continue;
			r = cfsfuse_lookup(w->fs, node, name, &found, &st);
			if (r == -ENOENT && w->served)
				fuzz_fail("lookup does not find '%s', which readdir listed", name);
			if (r == 0 && plus && found != p.node && w->served)
				fuzz_fail("lookup of '%s' found node %llu, readdirplus %llu", name,
					  (unsigned long long)found, (unsigned long long)p.node);
			if (r == 0)
				queue(w, found);
		}
	}
	free(buf);
}

int fuzz_fuse_one(const uint8_t *data, size_t size)
{
	struct cfsfuse fs = { .verity_check = 1 };
	struct walk w = { .fs = &fs };
	struct cfs_image *img;
	uint8_t *copy;
	char target[4096];
	struct stat st;
	uint64_t node;

	/* the daemon holds the image in memory, as read at mount */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (cfs_image_open_mem(copy, size, &img) < 0) {
		free(copy);
		return 0;
	}
	cfsfuse_init(&fs);
	fs.image_esc = cfsfuse_escaped("fuzz.cfs");
	/* an image the mount refuses is served all the same, for robustness */
	w.served = cfsfuse_start(&fs, img) == 0;
	queue(&w, CFSFUSE_ROOT);
	cfsfuse_getattr(&fs, 0, &st);
	cfsfuse_lookup(&fs, CFSFUSE_ROOT, "not-there", &node, &st);
	for (; w.n_done < w.n_queued; w.n_done++) {
		node = w.queue[w.n_done];
		if (cfsfuse_getattr(&fs, node, &st) < 0)
			continue;
		xattrs(&w, node);
		if (S_ISDIR(st.st_mode)) {
			list(&w, node, 512, false);
			list(&w, node, 4096, true);
		} else if (S_ISLNK(st.st_mode)) {
			if (cfsfuse_readlink(&fs, node, target, sizeof(target)) == 0 && !target[0])
				fuzz_fail("an empty symlink target");
		} else if (S_ISREG(st.st_mode)) {
			read_file(&w, node);
			read_node(&w, node);
		}
	}
	cfsfuse_fini(&fs);
	free(fs.image_esc);
	cfs_image_close(img);
	free(copy);
	sink = w.sum;
	return 0;
}

#ifndef CFS_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_fuse_one(data, size);
}
#endif
