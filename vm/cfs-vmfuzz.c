// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs-vmfuzz: mounts mutated composefs images in the VM ('make vm-fuzz',
 * and a short run in the VM test suite), and reads images hard for the
 * soak (vm/tests/4218-soak.sh).
 *
 * From valid seed images it derives mutants: bit flips, interesting bytes,
 * interesting values written into the fields the seed's structure has
 * (offsets, lengths, counts, flags, modes, sizes), boundary values in the
 * counts, lengths, offsets and sizes (around the module's limits, ending
 * at or just past the image's end), huge sparse images whose root claims
 * up to 2^32 chunks, directory entries turned to an ancestor (cycles) or
 * to another inode, truncations, and swapped or copied byte ranges. Each
 * mutant is written into a --work file (in turn, when there are several:
 * ext4 and tmpfs) with one pwrite, mounted with composefs at --mnt and
 * walked by a child process (one for all mutants): readdir, lstat,
 * readlink, listxattr and getxattr, open and read of every file (the first
 * 64 KiB and the last 4 KiB; in a directory of more than 32 entries, a
 * sample), statfs; then unmounted. The parent is the watchdog: a child not done within
 * --watchdog seconds is a hang; while a huge mutant is mounted it also
 * watches MemAvailable. After every mutant the kernel log (/dev/kmsg) is
 * checked for warnings, oopses and corruption reports. A mutant depends
 * only on (--seed, its number, the seed images), so 'cfs-vmfuzz mutate'
 * rebuilds it anywhere.
 *
 * Usage:
 *   cfs-vmfuzz run [--seconds N] [--max N] [--seed S] [--watchdog S]
 *                  --work FILE [--work FILE...] --mnt DIR --opts MOUNT-OPTIONS
 *                  SEED.cfs...
 *   cfs-vmfuzz mutate --seed S --iter N OUT SEED.cfs...
 *   cfs-vmfuzz leaks      composefs allocations still live (slub_debug=U,
 *                         debugfs mounted)
 *   cfs-vmfuzz soak [--seconds S] [--id N] ROOT SUMS [ROOT SUMS]...
 *                         hash every file under each ROOT, again and again,
 *                         against SUMS (sha256sum output)
 *
 * 'run' prints progress lines, one "FAIL vmfuzz/..." line per failure, and
 * "vmfuzz: N mutants in S s (R per second), ..." at the end, then where
 * the time went; it exits 0 when no mutant failed, 1 otherwise.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cfs-format.h"

/* ---- the seeds and the fields found in them ---- */

/*
 * What a field holds, for the size mutants: a count of things that follow,
 * a length in bytes, an offset into the image, or a file size.
 */
enum role { PLAIN, COUNT, LEN, OFFSET, SIZE };

/* A field of the seed's structure: where, how wide (1, 2, 4 or 8 bytes). */
struct field {
	uint32_t off;
	uint8_t width;
	uint8_t role;
};

/* A directory entry's inode_index, with the directory and its parent. */
struct dref {
	uint32_t off;
	uint64_t dir, parent;
};

struct seed {
	const char *path;
	uint8_t *buf;
	size_t len;
	uint64_t root;
	struct field *fields;
	size_t n_fields, fields_alloc;
	size_t *sized; /* indices of the fields with a role */
	size_t n_sized, sized_alloc;
	struct dref *drefs;
	size_t n_drefs, drefs_alloc;
	uint64_t *inodes; /* every inode index reached */
	size_t n_inodes, inodes_alloc;
};

#define MAX_DEPTH 128

static void *grow(void *p, size_t *alloc, size_t n, size_t size)
{
	if (n < *alloc)
		return p;
	*alloc = *alloc ? 2 * *alloc : 64;
	p = realloc(p, *alloc * size);
	if (!p) {
		perror("cfs-vmfuzz");
		exit(2);
	}
	return p;
}

static void add_role(struct seed *s, uint64_t off, unsigned int width, enum role role)
{
	if (off + width > s->len)
		return;
	if (role != PLAIN) {
		s->sized = grow(s->sized, &s->sized_alloc, s->n_sized, sizeof(*s->sized));
		s->sized[s->n_sized++] = s->n_fields;
	}
	s->fields = grow(s->fields, &s->fields_alloc, s->n_fields, sizeof(*s->fields));
	s->fields[s->n_fields++] = (struct field){ (uint32_t)off, (uint8_t)width, (uint8_t)role };
}

static void add_field(struct seed *s, uint64_t off, unsigned int width)
{
	add_role(s, off, width, PLAIN);
}

static uint64_t get_le(const uint8_t *p, unsigned int width)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < width; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void put_le(uint8_t *p, unsigned int width, uint64_t v)
{
	for (unsigned int i = 0; i < width; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static bool seen(const struct seed *s, uint64_t index)
{
	for (size_t i = 0; i < s->n_inodes; i++)
		if (s->inodes[i] == index)
			return true;
	return false;
}

static void parse_xattrs(struct seed *s, uint64_t off, uint32_t len)
{
	uint64_t n;

	if (off + sizeof(struct cfs_xattr_header) > s->len || off + len > s->len)
		return;
	add_role(s, off, 2, COUNT);
	n = get_le(s->buf + off, 2);
	for (uint64_t i = 0; i < n && 2 + 4 * i + 4 <= len; i++) {
		add_role(s, off + 2 + 4 * i, 2, LEN);
		add_role(s, off + 2 + 4 * i + 2, 2, LEN);
	}
}

/* Record the fields of inode @index and, for a directory, of its entries. */
static void parse_inode(struct seed *s, uint64_t index, uint64_t parent, int depth)
{
	uint64_t data = get_le(s->buf + 8, 8), pos = CFS_INODE_SECTION_OFFSET + index;
	uint32_t flags, payload_len = 0, mode = CFS_INODE_DEFAULT_MODE, xlen = 0;
	uint64_t xoff = 0;
	static const struct {
		uint32_t flag;
		unsigned int widths[2];
		enum role roles[2];
	} layout[] = {
		{ CFS_INODE_FLAGS_PAYLOAD, { 4 }, { LEN } },
		{ CFS_INODE_FLAGS_MODE, { 4 }, { PLAIN } },
		{ CFS_INODE_FLAGS_NLINK, { 4 }, { COUNT } },
		{ CFS_INODE_FLAGS_UIDGID, { 4, 4 }, { PLAIN, PLAIN } },
		{ CFS_INODE_FLAGS_RDEV, { 4 }, { PLAIN } },
		{ CFS_INODE_FLAGS_TIMES, { 8, 8 }, { PLAIN, PLAIN } },
		{ CFS_INODE_FLAGS_TIMES_NSEC, { 4, 4 }, { PLAIN, PLAIN } },
		{ CFS_INODE_FLAGS_LOW_SIZE, { 4 }, { SIZE } },
		{ CFS_INODE_FLAGS_HIGH_SIZE, { 4 }, { SIZE } },
		{ CFS_INODE_FLAGS_XATTRS, { 8, 4 }, { OFFSET, LEN } },
		{ CFS_INODE_FLAGS_DIGEST, { 1 }, { PLAIN } },
	};
	uint64_t p;

	if (depth > MAX_DEPTH || seen(s, index) || pos + CFS_INODE_MAX_ENCODED_SIZE > s->len ||
	    pos >= data)
		return;
	s->inodes = grow(s->inodes, &s->inodes_alloc, s->n_inodes, sizeof(*s->inodes));
	s->inodes[s->n_inodes++] = index;
	flags = (uint32_t)get_le(s->buf + pos, 4);
	add_field(s, pos, 4);
	p = pos + 4;
	for (size_t i = 0; i < sizeof(layout) / sizeof(layout[0]); i++) {
		if (!(flags & layout[i].flag))
			continue;
		if (layout[i].flag == CFS_INODE_FLAGS_PAYLOAD)
			payload_len = (uint32_t)get_le(s->buf + p, 4);
		if (layout[i].flag == CFS_INODE_FLAGS_MODE)
			mode = (uint32_t)get_le(s->buf + p, 4);
		if (layout[i].flag == CFS_INODE_FLAGS_XATTRS) {
			xoff = get_le(s->buf + p, 8);
			xlen = (uint32_t)get_le(s->buf + p + 8, 4);
		}
		for (int w = 0; w < 2 && layout[i].widths[w]; w++) {
			add_role(s, p, layout[i].widths[w], layout[i].roles[w]);
			p += layout[i].widths[w];
		}
		if (layout[i].flag == CFS_INODE_FLAGS_DIGEST)
			p += CFS_DIGEST_SIZE - 1;
	}
	if (xlen)
		parse_xattrs(s, data + xoff, xlen);
	if (!S_ISDIR(mode) || payload_len < sizeof(struct cfs_dir_header) || payload_len > pos)
		return;

	uint64_t hdr = pos - payload_len, n_chunks = get_le(s->buf + hdr, 4);

	add_role(s, hdr, 4, COUNT);
	for (uint64_t c = 0; c < n_chunks && cfs_dir_header_size(c + 1) <= payload_len; c++) {
		uint64_t ch = hdr + cfs_dir_header_size(c);
		uint64_t n = get_le(s->buf + ch, 2), start = data + get_le(s->buf + ch + 4, 8);

		add_role(s, ch, 2, COUNT);
		add_role(s, ch + 2, 2, LEN);
		add_role(s, ch + 4, 8, OFFSET);
		for (uint64_t e = 0; e < n; e++) {
			uint64_t de = start + e * sizeof(struct cfs_dentry);

			if (de + sizeof(struct cfs_dentry) > s->len)
				break;
			add_role(s, de, 8, OFFSET);
			add_field(s, de + 8, 1);
			add_role(s, de + 9, 1, LEN);
			add_role(s, de + 10, 2, OFFSET);
			s->drefs = grow(s->drefs, &s->drefs_alloc, s->n_drefs, sizeof(*s->drefs));
			s->drefs[s->n_drefs++] = (struct dref){ (uint32_t)de, index, parent };
			parse_inode(s, get_le(s->buf + de, 8), index, depth + 1);
		}
	}
}

static void load_seed(struct seed *s, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	memset(s, 0, sizeof(*s));
	s->path = path;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "cfs-vmfuzz: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	s->len = (size_t)st.st_size;
	s->buf = malloc(s->len + 1);
	if (!s->buf || read(fd, s->buf, s->len) != (ssize_t)s->len ||
	    s->len < sizeof(struct cfs_header)) {
		fprintf(stderr, "cfs-vmfuzz: %s: cannot read a whole image\n", path);
		exit(2);
	}
	close(fd);
	add_field(s, 0, 1);
	add_field(s, 4, 4);
	add_role(s, 8, 8, OFFSET);
	add_role(s, 16, 8, OFFSET);
	s->root = get_le(s->buf + 16, 8);
	parse_inode(s, s->root, s->root, 0);
}

/* ---- mutations ---- */

/* splitmix64: one independent stream per mutant. */
static uint64_t rnd(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

enum kind { BITFLIP, BYTE, FIELD, CYCLE, REDIRECT, TRUNCATE, SWAP, COPY, SIZEVAL, N_KINDS };
static const char *const kind_names[N_KINDS] = {
	"bitflip", "byte", "field", "cycle", "redirect", "truncate", "swap", "copy", "size",
};

/*
 * The sparse part of a mutant: the file is @file_len bytes long (0: just
 * the mutant's bytes), with @tail_len bytes of @tail at @tail_off and holes
 * between them and the mutant's bytes.
 */
struct sparse {
	uint64_t file_len, tail_off;
	uint8_t tail[64];
	size_t tail_len;
};

/* One in HUGE_EVERY mutants is a huge sparse image (huge_image()). */
#define HUGE_EVERY 32

/* A value worth writing into a field of @width bytes that held @old. */
static uint64_t interesting(uint64_t *r, const struct seed *s, unsigned int width, uint64_t old)
{
	uint64_t ones = width == 8 ? ~0ULL : (1ULL << (8 * width)) - 1;
	const struct field *other;

	switch (below(r, 12)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return ones;
	case 3: return ones >> 1;
	case 4: return (ones >> 1) + 1;
	case 5: return old + 1;
	case 6: return old - 1;
	case 7: return s->len + below(r, 3) - 1;
	case 8: return 4096 + below(r, 3) - 1;
	case 9: return old * 2;
	case 10: /* another field's value: a valid offset in the wrong place */
		other = &s->fields[below(r, s->n_fields)];
		return get_le(s->buf + other->off, other->width);
	default: return rnd(r);
	}
}

/*
 * A boundary value for a field with a role: counts around the module's
 * limits and around what the image can hold, lengths and offsets that end
 * exactly at, just before or just past the end of the image (from each of
 * the bases offsets count from: the file, the inode section, the data
 * section), sizes at the signed and unsigned limits.
 */
static uint64_t size_value(uint64_t *r, const struct seed *s, const struct field *f, size_t len)
{
	uint64_t ones = f->width == 8 ? ~0ULL : (1ULL << (8 * f->width)) - 1;
	uint64_t data = get_le(s->buf + 8, 8), base, end;
	static const int64_t near[] = { -4096, -12, -8, -2, -1, 0, 1, 2, 12, 4096 };

	switch (f->role) {
	case COUNT:
		switch (below(r, 8)) {
		case 0: return CFS_MAX_DIR_CHUNKS - 1 + below(r, 3);
		case 1: return 1ULL << 27;
		case 2: return ones;
		case 3: return (ones >> 1) + below(r, 2);
		case 4: return 0xffff + below(r, 2);
		case 5: return len / sizeof(struct cfs_dir_chunk) + below(r, 3) - 1;
		case 6: return len / sizeof(struct cfs_dentry) + below(r, 3) - 1;
		default: return below(r, 2);
		}
	case LEN:
	case OFFSET:
		base = (uint64_t[]){ 0, CFS_INODE_SECTION_OFFSET, data }[below(r, 3)];
		end = f->role == LEN ? f->off + f->width : base;
		switch (below(r, 6)) {
		case 0: return ones;
		case 1: return CFS_PAGE_SIZE - 1 + below(r, 3);
		case 2: return CFS_MAX_PAYLOAD_PATH + below(r, 2);
		case 3: /* to the last page boundary */
			return (len & ~(uint64_t)(CFS_PAGE_SIZE - 1)) - end + near[below(r, 10)];
		default: /* to the end of the image, give or take */
			return len - end + near[below(r, 10)];
		}
	case SIZE:
		switch (below(r, 5)) {
		case 0: return ones;
		case 1: return (ones >> 1) + below(r, 2);
		case 2: return ones - 1;
		default: return rnd(r) & ones;
		}
	default:
		return rnd(r) & ones;
	}
}

/*
 * A huge sparse image, made from @s's header: a root directory whose chunk
 * table claims 2^27 chunks (1.5 GiB of holes), just past or at the
 * module's limit, the most a u32 payload holds, or a count its payload
 * length does not match; or a root inode 5 GiB into the file. What is
 * written is the header, the chunk count and the root inode (the tail);
 * the rest is holes.
 */
static size_t huge_image(uint64_t *r, const struct seed *s, uint8_t *out, struct sparse *sp,
			 char *desc, size_t desc_size)
{
	static const uint64_t counts[] = {
		1ULL << 27, CFS_MAX_DIR_CHUNKS + 1, CFS_MAX_DIR_CHUNKS,
		(0xffffffffULL - 4) / sizeof(struct cfs_dir_chunk), 0xffffffffULL,
	};
	uint64_t v = below(r, 7), n = counts[v < 5 ? v : 0], plen, root, data;

	plen = cfs_dir_header_size(n);
	if (v == 5) /* the payload length does not match the count */
		plen = cfs_dir_header_size(1 + below(r, 4));
	if (plen > 0xffffffffULL)
		plen = 0xffffffffULL;
	root = plen;
	if (v == 6) { /* a small root directory far into the file */
		n = 1;
		plen = cfs_dir_header_size(1);
		root = (5ULL << 30) + below(r, CFS_PAGE_SIZE);
	}
	data = CFS_INODE_SECTION_OFFSET + root + 12;
	memcpy(out, s->buf, CFS_INODE_SECTION_OFFSET);
	put_le(out + 8, 8, data);
	put_le(out + 16, 8, root);
	sp->tail_off = CFS_INODE_SECTION_OFFSET + root;
	if (v == 6) {
		/* The whole payload in the tail: one chunk of one entry in a hole. */
		sp->tail_off -= plen;
		put_le(sp->tail, 4, n);
		put_le(sp->tail + 4, 2, 1);
		put_le(sp->tail + 6, 2, sizeof(struct cfs_dentry) + 1);
		put_le(sp->tail + 8, 8, 0);
		sp->tail_len = plen;
	} else {
		/* The chunk count where the payload starts; holes after it. */
		put_le(out + CFS_INODE_SECTION_OFFSET + root - plen, 4, n);
	}
	put_le(sp->tail + sp->tail_len, 4, CFS_INODE_FLAGS_PAYLOAD | CFS_INODE_FLAGS_MODE);
	put_le(sp->tail + sp->tail_len + 4, 4, plen);
	put_le(sp->tail + sp->tail_len + 8, 4, 040755);
	sp->tail_len += 12;
	sp->file_len = data + CFS_PAGE_SIZE;
	snprintf(desc, desc_size, "%s: huge: %llu chunks, payload %llu, root at %llu, %llu bytes",
		 s->path, (unsigned long long)n, (unsigned long long)plen,
		 (unsigned long long)root, (unsigned long long)sp->file_len);
	return CFS_INODE_SECTION_OFFSET + 4;
}

/*
 * Mutant @iter of @seed: into @out (s->len + 1 bytes at least) and, for a
 * huge sparse one, @sp; returns the length of @out and describes the
 * mutations in @desc.
 */
static size_t mutate(const struct seed *seeds, size_t n_seeds, uint64_t seed, uint64_t iter,
		     uint8_t *out, char *desc, size_t desc_size, size_t *which, struct sparse *sp)
{
	uint64_t r = seed ^ (iter * 0xd1342543de82ef95ULL);
	const struct seed *s;
	size_t len, n, used;

	rnd(&r);
	*which = below(&r, n_seeds);
	s = &seeds[*which];
	memset(sp, 0, sizeof(*sp));
	if (below(&r, HUGE_EVERY) == 0)
		return huge_image(&r, s, out, sp, desc, desc_size);
	memcpy(out, s->buf, s->len);
	len = s->len;
	n = 1 + (below(&r, 4) == 0 ? below(&r, 4) : 0);
	used = (size_t)snprintf(desc, desc_size, "%s:", s->path);
	for (size_t m = 0; m < n && len > 0; m++) {
		enum kind k = (enum kind)below(&r, N_KINDS);
		const struct field *f;
		const struct dref *d;
		size_t a, b, l;
		uint64_t v;

		/* Without entries the targeted kinds fall back to a field. */
		if ((k == CYCLE || k == REDIRECT) && !s->n_drefs)
			k = FIELD;
		switch (k) {
		case BITFLIP:
			/* Half the flips land in the structure, half anywhere. */
			a = below(&r, 2) ? s->fields[below(&r, s->n_fields)].off : below(&r, len);
			if (a >= len)
				a = below(&r, len);
			out[a] ^= (uint8_t)(1u << below(&r, 8));
			used += snprintf(desc + used, desc_size - used, " bitflip@%zu", a);
			break;
		case BYTE:
			a = below(&r, len);
			out[a] = (uint8_t[]){ 0, 1, 0x7f, 0x80, 0xff }[below(&r, 5)];
			used += snprintf(desc + used, desc_size - used, " byte@%zu=%u", a, out[a]);
			break;
		case FIELD:
			f = &s->fields[below(&r, s->n_fields)];
			if (f->off + f->width > len)
				break;
			v = interesting(&r, s, f->width, get_le(out + f->off, f->width));
			put_le(out + f->off, f->width, v);
			used += snprintf(desc + used, desc_size - used, " field@%u/%u=%llu", f->off,
					 f->width, (unsigned long long)(v & (f->width == 8 ? ~0ULL :
						(1ULL << (8 * f->width)) - 1)));
			break;
		case CYCLE:
		case REDIRECT:
			d = &s->drefs[below(&r, s->n_drefs)];
			if (d->off + 8 > len)
				break;
			v = k == REDIRECT ? s->inodes[below(&r, s->n_inodes)] :
			    below(&r, 3) == 0 ? s->root : below(&r, 2) ? d->dir : d->parent;
			put_le(out + d->off, 8, v);
			used += snprintf(desc + used, desc_size - used, " %s@%u=%llu", kind_names[k],
					 d->off, (unsigned long long)v);
			break;
		case TRUNCATE:
			/* Only ever shorter: a field may lie past an earlier cut. */
			a = below(&r, 2) ? below(&r, len) : s->fields[below(&r, s->n_fields)].off;
			if (a < len)
				len = a;
			used += snprintf(desc + used, desc_size - used, " truncate=%zu", len);
			break;
		case SWAP:
		case COPY:
			l = 1 + below(&r, 256);
			if (l * 2 > len)
				break;
			a = below(&r, len - 2 * l + 1);
			b = a + l + below(&r, len - a - 2 * l + 1);
			if (k == SWAP) {
				for (size_t i = 0; i < l; i++) {
					uint8_t t = out[a + i];

					out[a + i] = out[b + i];
					out[b + i] = t;
				}
			} else if (below(&r, 2)) {
				memmove(out + a, out + b, l);
			} else {
				memmove(out + b, out + a, l);
			}
			used += snprintf(desc + used, desc_size - used, " %s@%zu,%zu/%zu", kind_names[k],
					 a, b, l);
			break;
		case SIZEVAL:
			if (!s->n_sized)
				break;
			f = &s->fields[s->sized[below(&r, s->n_sized)]];
			if (f->off + f->width > len)
				break;
			v = size_value(&r, s, f, len);
			put_le(out + f->off, f->width, v);
			used += snprintf(desc + used, desc_size - used, " size@%u/%u=%llu", f->off,
					 f->width, (unsigned long long)(v & (f->width == 8 ? ~0ULL :
						(1ULL << (8 * f->width)) - 1)));
			break;
		case N_KINDS:
			break;
		}
		if (used >= desc_size)
			used = desc_size - 1;
	}
	return len;
}

/* ---- the walk, in the child ---- */

static unsigned long walked;
static uint64_t walk_rnd;

/*
 * A directory's first WALK_ALL entries are all visited, of the rest one in
 * WALK_EVERY, chosen by the mutant's number: readdir still reads every
 * entry, but a mutant of a seed with thousands of files costs a few
 * hundred lookups, not thousands.
 */
#define WALK_ALL 32
#define WALK_EVERY 16

static void walk(const char *path, int depth)
{
	static char buf[65536];
	char target[4096], names[8192];
	struct stat st;
	ssize_t n;

	if (++walked > 200000 || depth > MAX_DEPTH || lstat(path, &st) < 0)
		return;
	n = listxattr(path, names, sizeof(names));
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1)
		(void)lgetxattr(path, names + i, buf, sizeof(buf));
	if (S_ISLNK(st.st_mode))
		(void)readlink(path, target, sizeof(target));
	if (S_ISREG(st.st_mode)) {
		int fd = open(path, O_RDONLY | O_NONBLOCK);

		if (fd >= 0) {
			(void)read(fd, buf, sizeof(buf));
			if (st.st_size > 4096)
				(void)pread(fd, buf, 4096, st.st_size - 4096);
			close(fd);
		}
	}
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		unsigned long e = 0;

		if (!d)
			return;
		while ((de = readdir(d))) {
			char sub[8192];

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (e++ >= WALK_ALL && below(&walk_rnd, WALK_EVERY))
				continue;
			if (snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= (int)sizeof(sub))
				continue;
			walk(sub, depth + 1);
		}
		closedir(d);
	}
}

/* The child: mount, walk, unmount. 0: walked, 1: refused to mount, >1: failed. */
/* Where the children's time goes, in a page shared with the parent. */
struct phases {
	double mount, walk, umount;
};
static struct phases *phases;

static double now(void);

static int try_image(const char *image, const char *mnt, const char *opts, uint64_t rnd_state)
{
	struct statfs sfs;
	double t = now(), t2;

	walk_rnd = rnd_state;
	if (mount(image, mnt, "composefs", MS_RDONLY, opts) < 0) {
		phases->mount += now() - t;
		return errno == EBUSY ? 3 : 1;
	}
	t2 = now();
	phases->mount += t2 - t;
	(void)statfs(mnt, &sfs);
	walk(mnt, 0);
	t = now();
	phases->walk += t - t2;
	if (umount(mnt) < 0) {
		fprintf(stderr, "umount %s: %s\n", mnt, strerror(errno));
		return 4;
	}
	phases->umount += now() - t;
	return 0;
}

/* ---- the kernel log ---- */

static const char *const bad_words[] = {
	"BUG:", "WARNING:", "Oops", "general protection fault", "refcount_t:",
	"list_add corruption", "list_del corruption", "UBSAN:", "KASAN:", "stack-protector",
	"hung_task", "soft lockup", "Slab cache still has objects", "Poison overwritten",
	"Redzone", "Object already free", "kernel BUG",
};

/* Read what the kernel logged since the last call; the first bad line into @bad. */
static void read_kmsg(int fd, char *bad, size_t bad_size, unsigned long *corrupt_msgs)
{
	char rec[8192];
	ssize_t n;

	if (fd < 0)
		return;
	while ((n = read(fd, rec, sizeof(rec) - 1)) != 0) {
		if (n < 0) {
			if (errno == EPIPE) /* records overwritten: go on reading */
				continue;
			break; /* EAGAIN: all read */
		}
		rec[n] = '\0';
		char *msg = strchr(rec, ';');

		msg = msg ? msg + 1 : rec;
		msg[strcspn(msg, "\n")] = '\0';
		if (strstr(msg, "composefs") && strstr(msg, "corrupt"))
			(*corrupt_msgs)++;
		for (size_t i = 0; i < sizeof(bad_words) / sizeof(bad_words[0]); i++) {
			if (!bad[0] && strstr(msg, bad_words[i])) {
				snprintf(bad, bad_size, "%.*s", (int)bad_size - 1, msg);
				break;
			}
		}
	}
}

/* ---- commands ---- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int write_all(int fd, const uint8_t *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, buf + done, len - done, (off_t)(off + done));

		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/*
 * Put a mutant into the open file @fd: its bytes with one pwrite, then cut
 * the file to its length. A sparse mutant first empties the file, so that
 * what lies between its bytes and its tail is holes.
 */
static int write_mutant(int fd, const uint8_t *buf, size_t len, const struct sparse *sp)
{
	if (sp->file_len) {
		if (ftruncate(fd, 0) < 0 || write_all(fd, buf, len, 0) < 0 ||
		    write_all(fd, sp->tail, sp->tail_len, sp->tail_off) < 0)
			return -1;
		return ftruncate(fd, (off_t)sp->file_len);
	}
	if (write_all(fd, buf, len, 0) < 0)
		return -1;
	return ftruncate(fd, (off_t)len);
}

static int write_file(const char *path, const uint8_t *buf, size_t len, const struct sparse *sp)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	if (write_mutant(fd, buf, len, sp) < 0) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* MemAvailable in kB, or -1. */
static long mem_available(void)
{
	static int fd = -1;
	char buf[4096], *p;
	ssize_t n;

	if (fd < 0)
		fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = pread(fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "MemAvailable:");
	return p ? strtol(p + 13, NULL, 10) : -1;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: cfs-vmfuzz run [--seconds N] [--max N] [--seed S] [--watchdog S]\n"
		"                      --work FILE [--work FILE...] --mnt DIR --opts OPTIONS\n"
		"                      SEED.cfs...\n"
		"       cfs-vmfuzz mutate --seed S --iter N OUT SEED.cfs...\n"
		"       cfs-vmfuzz leaks\n"
		"       cfs-vmfuzz soak [--seconds S] [--id N] ROOT SUMS [ROOT SUMS]...\n");
	return 2;
}

static struct seed *load_seeds(int argc, char **argv)
{
	struct seed *seeds = calloc((size_t)argc, sizeof(*seeds));

	if (!seeds)
		exit(2);
	for (int i = 0; i < argc; i++)
		load_seed(&seeds[i], argv[i]);
	return seeds;
}

static size_t max_len(const struct seed *seeds, int n)
{
	size_t m = 0;

	for (int i = 0; i < n; i++)
		if (seeds[i].len > m)
			m = seeds[i].len;
	return m;
}

/*
 * The walker: one child process that mounts, walks and unmounts mutant
 * after mutant, told which by a pipe and answering with try_image()'s
 * result on another. One process for all mutants instead of a fork and
 * an exit each, which cost more than a small mutant's mount and walk in
 * TCG. When it dies (a signal, the alarm of a stuck walk), the next
 * mutant starts a new one.
 */
struct walker {
	pid_t pid;
	int cmd, res;
};

struct job {
	int work;
	uint64_t rnd;
};

static int start_walker(struct walker *wk, const char *const *work, const char *mnt,
			const char *opts, double watchdog)
{
	int cmd[2], res[2];

	if (pipe2(cmd, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(res, O_CLOEXEC) < 0) {
		close(cmd[0]);
		close(cmd[1]);
		return -1;
	}
	fflush(stdout);
	wk->pid = fork();
	if (wk->pid < 0)
		return -1;
	if (wk->pid == 0) {
		struct job j;

		close(cmd[1]);
		close(res[0]);
		while (read(cmd[0], &j, sizeof(j)) == (ssize_t)sizeof(j)) {
			int r;

			alarm((unsigned int)watchdog + 5); /* a stuck walk in user space */
			r = try_image(work[j.work], mnt, opts, j.rnd);
			alarm(0);
			if (write(res[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
				break;
		}
		_exit(0);
	}
	close(cmd[0]);
	close(res[1]);
	wk->cmd = cmd[1];
	wk->res = res[0];
	return 0;
}

/* Reap a walker that died or is to end; its wait status. */
static int stop_walker(struct walker *wk)
{
	int status = 0;

	close(wk->cmd);
	close(wk->res);
	if (wk->pid > 0)
		waitpid(wk->pid, &status, 0);
	wk->pid = 0;
	return status;
}

/*
 * Run job @j in the walker, waiting at most @secs seconds: try_image()'s
 * result (>= 0), -1 on a timeout, or -2 when the walker died, its wait
 * status in @status. With @min_avail it wakes every 5 ms to keep there
 * the lowest MemAvailable seen.
 */
static int run_job(struct walker *wk, const struct job *j, double secs, long *min_avail,
		   int *status)
{
	double end = now() + secs;
	int r;

	if (write(wk->cmd, j, sizeof(*j)) != (ssize_t)sizeof(*j)) {
		*status = stop_walker(wk);
		return -2;
	}
	for (;;) {
		struct pollfd p = { .fd = wk->res, .events = POLLIN };
		double left = end - now();
		int n;

		if (left <= 0)
			return -1;
		n = poll(&p, 1, min_avail ? 5 : (int)(left * 1000) + 1);
		if (min_avail) {
			long a = mem_available();

			if (a >= 0 && (*min_avail < 0 || a < *min_avail))
				*min_avail = a;
		}
		if (n > 0)
			break;
	}
	if (read(wk->res, &r, sizeof(r)) != (ssize_t)sizeof(r)) {
		*status = stop_walker(wk);
		return -2;
	}
	return r;
}

/* A huge sparse mutant may take this much memory while mounted, at most. */
#define HUGE_MEM_KB (64 * 1024)
#define MAX_WORK 4

static int cmd_run(int argc, char **argv)
{
	double seconds = 60, watchdog = 30, start, last_report, t, t_write = 0, t_kmsg = 0;
	double t_seed[64] = { 0 };
	unsigned long long max = ~0ULL, seed = 1, iter;
	const char *work[MAX_WORK], *mnt = NULL, *opts = NULL;
	unsigned long mounted = 0, corrupt_msgs = 0, failures = 0;
	unsigned long per_seed[64] = { 0 }, huge[MAX_WORK] = { 0 };
	long huge_drop = 0;
	int n_work = 0, work_fd[MAX_WORK], r_last = 0;
	struct walker wk = { 0 };
	struct statfs work_fs[MAX_WORK];
	struct seed *seeds;
	uint8_t *buf;
	char desc[1024], bad[512];
	int i, kmsg;

	for (i = 0; i < argc && argv[i][0] == '-'; i += 2) {
		if (i + 1 >= argc)
			return usage();
		if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--max"))
			max = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--watchdog"))
			watchdog = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--work") && n_work < MAX_WORK)
			work[n_work++] = argv[i + 1];
		else if (!strcmp(argv[i], "--mnt"))
			mnt = argv[i + 1];
		else if (!strcmp(argv[i], "--opts"))
			opts = argv[i + 1];
		else
			return usage();
	}
	if (!n_work || !mnt || !opts || i >= argc || argc - i > 64)
		return usage();
	seeds = load_seeds(argc - i, argv + i);
	buf = malloc(max_len(seeds, argc - i) + 64);
	if (!buf)
		return 2;
	for (int k = 0; k < argc - i; k++)
		printf("vmfuzz: seed %s: %zu bytes, %zu fields (%zu counts, lengths, offsets, sizes), "
		       "%zu entries, %zu inodes\n", seeds[k].path, seeds[k].len, seeds[k].n_fields,
		       seeds[k].n_sized, seeds[k].n_drefs, seeds[k].n_inodes);
	/* The work files stay open: each mutant is one pwrite and a truncate. */
	for (int w = 0; w < n_work; w++) {
		work_fd[w] = open(work[w], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (work_fd[w] < 0 || fstatfs(work_fd[w], &work_fs[w]) < 0) {
			printf("FAIL vmfuzz/work: %s: %s\n", work[w], strerror(errno));
			return 1;
		}
	}
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg >= 0)
		lseek(kmsg, 0, SEEK_END);
	else
		printf("vmfuzz: no /dev/kmsg (%s): the kernel log is checked only at the end\n",
		       strerror(errno));
	mkdir(mnt, 0755);
	phases = mmap(NULL, sizeof(*phases), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (phases == MAP_FAILED)
		return 2;
	memset(phases, 0, sizeof(*phases));
	start = last_report = now();
	for (iter = 0; iter < max && now() - start < seconds; iter++) {
		struct sparse sp;
		size_t which, len = mutate(seeds, (size_t)(argc - i), seed, iter, buf, desc,
					   sizeof(desc), &which, &sp);
		int w = (int)(iter % (unsigned long long)n_work), status = 0, r;
		struct job job = { w, seed ^ ~iter };
		long avail = -1, min_avail = -1;

		t = now();
		if (write_mutant(work_fd[w], buf, len, &sp) < 0) {
			printf("FAIL vmfuzz/write: %s: %s\n", work[w], strerror(errno));
			return 1;
		}
		t_write += now() - t;
		t = now();
		if (sp.file_len)
			avail = min_avail = mem_available();
		if (!wk.pid && start_walker(&wk, work, mnt, opts, watchdog) < 0) {
			printf("FAIL vmfuzz/fork: %s\n", strerror(errno));
			return 1;
		}
		r = run_job(&wk, &job, watchdog, sp.file_len ? &min_avail : NULL, &status);
		r_last = r;
		t_seed[which] += now() - t;
		t = now();
		bad[0] = '\0';
		read_kmsg(kmsg, bad, sizeof(bad), &corrupt_msgs);
		t_kmsg += now() - t;
		per_seed[which]++;
		if (r == -1) {
			printf("FAIL vmfuzz/hang: mutant %llu (seed %llu) not done in %.0f s: %s\n",
			       iter, seed, watchdog, desc);
			failures++;
			break; /* a task stuck in the kernel: nothing after it is sound */
		}
		if (sp.file_len) {
			huge[w]++;
			if (avail >= 0 && min_avail >= 0 && avail - min_avail > huge_drop)
				huge_drop = avail - min_avail;
			if (avail >= 0 && min_avail >= 0 && avail - min_avail > HUGE_MEM_KB) {
				printf("FAIL vmfuzz/huge-memory: mutant %llu (seed %llu) on %s: "
				       "MemAvailable %ld -> %ld kB while mounted: %s\n", iter, seed,
				       work[w], avail, min_avail, desc);
				failures++;
			}
		}
		if (r == -2 || r > 1 || bad[0]) {
			printf("FAIL vmfuzz/mutant-%llu: %s%s%s (result %d, wait status %d): %s\n",
			       iter, bad[0] ? "kernel: " : "", bad, bad[0] ? "" : "walker failed", r,
			       status, desc);
			failures++;
			umount2(mnt, MNT_DETACH);
			if (bad[0])
				break; /* the kernel is not to be trusted after a warning */
			continue;
		}
		if (r == 0)
			mounted++;
		if (now() - last_report >= 30) {
			last_report = now();
			printf("vmfuzz: %llu mutants in %.0f s\n", iter + 1, last_report - start);
		}
	}
	double secs = now() - start, t_mount = 0;

	if (wk.pid > 0 && r_last != -1)
		stop_walker(&wk);

	printf("vmfuzz: %llu mutants in %.1f s (%.1f per second), seed %llu; %lu mounted and "
	       "walked, the rest refused; %lu corruption reports in the kernel log; per seed:",
	       iter, secs, secs > 0 ? (double)iter / secs : 0.0, seed, mounted, corrupt_msgs);
	for (int k = 0; k < argc - i; k++)
		printf(" %lu", per_seed[k]);
	printf("\n");
	for (int w = 0; w < n_work; w++) {
		printf("vmfuzz: %lu huge sparse mutants on %s (%s)%s", huge[w], work[w],
		       work_fs[w].f_type == 0xef53 ? "ext4" :
		       work_fs[w].f_type == 0x01021994 ? "tmpfs" : "other",
		       w + 1 < n_work ? "; " : "");
		close(work_fd[w]);
	}
	printf("; MemAvailable fell by at most %ld kB while one was mounted\n", huge_drop);
	printf("vmfuzz: ms per mutant: write %.2f, log check %.2f; mount, walk, umount by seed:", iter ? 1000 * t_write / (double)iter : 0.0,
	       iter ? 1000 * t_kmsg / (double)iter : 0.0);
	for (int k = 0; k < argc - i; k++) {
		printf(" %.1f", per_seed[k] ? 1000 * t_seed[k] / (double)per_seed[k] : 0.0);
		t_mount += t_seed[k];
	}
	printf("; the rest %.2f\n", iter ? 1000 * (secs - t_write - t_kmsg - t_mount) / (double)iter
				       : 0.0);
	if (iter)
		printf("vmfuzz: ms per mutant in the walker: mount %.2f, walk %.2f, umount %.2f; "
		       "passing the job and its result %.2f\n", 1000 * phases->mount / (double)iter,
		       1000 * phases->walk / (double)iter, 1000 * phases->umount / (double)iter,
		       1000 * (t_mount - phases->mount - phases->walk - phases->umount) /
			       (double)iter);
	return failures ? 1 : 0;
}

static int cmd_mutate(int argc, char **argv)
{
	unsigned long long seed = 1, iter = 0;
	struct seed *seeds;
	char desc[1024];
	size_t which, len;
	struct sparse sp;
	uint8_t *buf;
	int i;

	for (i = 0; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--iter"))
			iter = strtoull(argv[i + 1], NULL, 0);
		else
			return usage();
	}
	if (argc - i < 2)
		return usage();
	seeds = load_seeds(argc - i - 1, argv + i + 1);
	buf = malloc(max_len(seeds, argc - i - 1) + 1);
	if (!buf)
		return 2;
	len = mutate(seeds, (size_t)(argc - i - 1), seed, iter, buf, desc, sizeof(desc), &which,
		     &sp);
	if (write_file(argv[i], buf, len, &sp) < 0) {
		fprintf(stderr, "cfs-vmfuzz: %s: %s\n", argv[i], strerror(errno));
		return 1;
	}
	printf("%s\n", desc);
	return 0;
}

/* ---- the soak reader ---- */

/* SHA-256 (FIPS 180-4), for comparing contents with the sums of the source. */
struct sha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t block[64];
	size_t used;
};

static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

static uint32_t ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha256_block(struct sha256 *c, const uint8_t *p)
{
	uint32_t w[64], v[8];

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++)
		w[i] = w[i - 16] + (ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3)) +
		       w[i - 7] + (ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10));
	memcpy(v, c->h, sizeof(v));
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = v[7] + (ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25)) +
			      ((v[4] & v[5]) ^ (~v[4] & v[6])) + sha256_k[i] + w[i];
		uint32_t t2 = (ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22)) +
			      ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));

		memmove(v + 1, v, 7 * sizeof(v[0]));
		v[4] += t1;
		v[0] = t1 + t2;
	}
	for (int i = 0; i < 8; i++)
		c->h[i] += v[i];
}

static void sha256_init(struct sha256 *c)
{
	static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

	memcpy(c->h, h0, sizeof(h0));
	c->len = 0;
	c->used = 0;
}

static void sha256_update(struct sha256 *c, const uint8_t *p, size_t n)
{
	c->len += n;
	if (c->used) {
		size_t k = 64 - c->used < n ? 64 - c->used : n;

		memcpy(c->block + c->used, p, k);
		c->used += k;
		p += k;
		n -= k;
		if (c->used < 64)
			return;
		sha256_block(c, c->block);
		c->used = 0;
	}
	for (; n >= 64; p += 64, n -= 64)
		sha256_block(c, p);
	memcpy(c->block, p, n);
	c->used = n;
}

static void sha256_hex(struct sha256 *c, char out[65])
{
	uint64_t bits = c->len * 8;
	uint8_t pad[72] = { 0x80 };
	size_t n = (c->used < 56 ? 56 : 120) - c->used;

	for (int i = 0; i < 8; i++)
		pad[n + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(c, pad, n + 8);
	for (int i = 0; i < 8; i++)
		sprintf(out + 8 * i, "%08x", c->h[i]);
}

/* One image of the soak: its root, held open, and its files' sums. */
struct soak_image {
	const char *root;
	int fd;
	char **paths; /* sorted; each "HEX  PATH" as sha256sum prints it */
	size_t n;
	uint64_t *seen; /* the pass in which each file was last read */
	unsigned long passes, complete;
};

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a + 66, *(char *const *)b + 66);
}

static void load_sums(struct soak_image *im, const char *file)
{
	FILE *f = fopen(file, "r");
	char line[8192];
	size_t alloc = 0;

	if (!f) {
		fprintf(stderr, "cfs-vmfuzz: %s: %s\n", file, strerror(errno));
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strlen(line) < 67 || line[64] != ' ' || line[65] != ' ') {
			fprintf(stderr, "cfs-vmfuzz: %s: not a sha256sum line: %s\n", file, line);
			exit(2);
		}
		/* "./a/b" and "a/b" name the same file */
		if (!strncmp(line + 66, "./", 2))
			memmove(line + 66, line + 68, strlen(line + 68) + 1);
		im->paths = grow(im->paths, &alloc, im->n, sizeof(*im->paths));
		im->paths[im->n] = strdup(line);
		if (!im->paths[im->n++])
			exit(2);
	}
	fclose(f);
	qsort(im->paths, im->n, sizeof(*im->paths), cmp_path);
	im->seen = calloc(im->n + 1, sizeof(*im->seen));
	if (!im->seen)
		exit(2);
}

static long soak_find(const struct soak_image *im, const char *path)
{
	size_t lo = 0, hi = im->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(path, im->paths[mid] + 66);

		if (!c)
			return (long)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

enum { BY_READ, BY_MMAP, BY_SENDFILE, N_METHODS };
static const char *const method_names[N_METHODS] = { "read", "mmap", "sendfile" };

struct soak_stats {
	unsigned long files, errors;
	unsigned long long bytes;
};

/* Hash the open file @fd of @size bytes by @method into @hex; -errno on failure. */
static int soak_hash(int fd, off_t size, int method, char hex[65])
{
	static uint8_t buf[1 << 16];
	static int pipefd[2] = { -1, -1 };
	struct sha256 c;
	off_t pos = 0;

	sha256_init(&c);
	if (method == BY_MMAP && size > 0) {
		uint8_t *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED)
			return -errno;
		for (pos = 0; pos < size; pos += sizeof(buf)) {
			size_t k = (size_t)(size - pos) < sizeof(buf) ? (size_t)(size - pos) : sizeof(buf);

			sha256_update(&c, p + pos, k);
		}
		munmap(p, (size_t)size);
	} else if (method == BY_SENDFILE) {
		if (pipefd[0] < 0 && pipe(pipefd) < 0)
			return -errno;
		for (;;) {
			ssize_t n = sendfile(pipefd[1], fd, &pos, sizeof(buf));

			if (n < 0)
				return -errno;
			if (n == 0)
				break;
			for (ssize_t got = 0; got < n;) {
				ssize_t k = read(pipefd[0], buf, (size_t)(n - got));

				if (k <= 0)
					return k < 0 ? -errno : -EIO;
				sha256_update(&c, buf, (size_t)k);
				got += k;
			}
		}
	} else {
		for (;;) {
			ssize_t n = read(fd, buf, sizeof(buf));

			if (n < 0)
				return -errno;
			if (n == 0)
				break;
			sha256_update(&c, buf, (size_t)n);
			pos += n;
		}
	}
	sha256_hex(&c, hex);
	return 0;
}

/* Walk directory @dfd (@rel inside the image) and hash every file in it. */
static void soak_walk(struct soak_image *im, int dfd, const char *rel, int id, double end,
		      struct soak_stats *st, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (!d) {
		printf("FAIL soak/readdir: %s/%s: %s\n", im->root, rel, strerror(errno));
		st->errors++;
		close(dfd);
		return;
	}
	while ((de = readdir(d)) && now() < end) {
		char path[4096], hex[65];
		struct stat sb;
		int fd, method, e;
		long k;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "", de->d_name);
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &sb) < 0) {
			printf("FAIL soak/open: %s/%s: %s\n", im->root, path, strerror(errno));
			st->errors++;
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (S_ISDIR(sb.st_mode)) {
			if (depth < MAX_DEPTH)
				soak_walk(im, fd, path, id, end, st, depth + 1);
			else
				close(fd);
			continue;
		}
		k = soak_find(im, path);
		if (k < 0 || !S_ISREG(sb.st_mode)) {
			printf("FAIL soak/unexpected: %s/%s: not in the sums\n", im->root, path);
			st->errors++;
			close(fd);
			continue;
		}
		/* Each reader takes the files by turns through the three ways. */
		method = (int)((st->files + (unsigned long)id) % N_METHODS);
		e = soak_hash(fd, sb.st_size, method, hex);
		close(fd);
		if (e < 0) {
			printf("FAIL soak/read: %s/%s by %s: %s\n", im->root, path,
			       method_names[method], strerror(-e));
			st->errors++;
		} else if (memcmp(hex, im->paths[k], 64)) {
			printf("FAIL soak/digest: %s/%s by %s: sha256 %s, want %.64s\n", im->root,
			       path, method_names[method], hex, im->paths[k]);
			st->errors++;
		}
		im->seen[k] = im->passes + 1;
		st->files++;
		st->bytes += (unsigned long long)sb.st_size;
	}
	closedir(d);
}

/*
 * cfs-vmfuzz soak --seconds S --id N ROOT SUMS [ROOT SUMS]...: until S
 * seconds are over, walk every ROOT and hash every file in it, by read,
 * mmap and sendfile in turn, comparing with SUMS (sha256sum of the source
 * tree). Each ROOT is opened once, at the start, and walked from that
 * descriptor, so a walk goes on after the mount is lazily unmounted. A
 * pass that saw every file of SUMS counts as complete; every image needs
 * one, so an image without one by then is walked on for up to S/2 more
 * seconds. Prints "OK files N bytes N passes N complete N" or FAIL lines.
 */
static int cmd_soak(int argc, char **argv)
{
	double seconds = 60, end;
	struct soak_image im[8];
	struct soak_stats st = { 0 };
	unsigned long passes = 0, complete = 0;
	int i, n = 0, id = 0, bad = 0;

	for (i = 0; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--id"))
			id = atoi(argv[i + 1]);
		else
			return usage();
	}
	if (argc - i < 2 || (argc - i) % 2 || (argc - i) / 2 > 8)
		return usage();
	for (; i < argc; i += 2, n++) {
		memset(&im[n], 0, sizeof(im[n]));
		im[n].root = argv[i];
		im[n].fd = open(argv[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (im[n].fd < 0) {
			printf("FAIL soak/open: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		load_sums(&im[n], argv[i + 1]);
	}
	end = now() + seconds;
	/* Readers start on different images, so they do not move in step. */
	for (int k = id;; k++) {
		struct soak_image *m = &im[k % n];
		double limit = end;
		int fd, todo = 0;
		size_t seen = 0;

		if (now() >= end) {
			/* Time is up: only images not yet read in full go on. */
			for (int j = 0; j < n; j++)
				todo += !im[j].complete;
			if (!todo || now() >= end + seconds / 2)
				break;
			if (m->complete)
				continue;
			limit = end + seconds / 2;
		}
		fd = openat(m->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			printf("FAIL soak/open: %s: %s\n", m->root, strerror(errno));
			return 1;
		}
		soak_walk(m, fd, "", id, limit, &st, 0);
		for (size_t f = 0; f < m->n; f++)
			seen += m->seen[f] == m->passes + 1;
		m->passes++;
		if (seen == m->n)
			m->complete++;
		else if (now() < limit) {
			printf("FAIL soak/missing: %s: a pass saw %zu of %zu files\n", m->root, seen,
			       m->n);
			st.errors++;
		}
	}
	for (int k = 0; k < n; k++) {
		passes += im[k].passes;
		complete += im[k].complete;
		if (!im[k].complete) {
			printf("FAIL soak/no-complete-pass: %s: reader %d never read every file in %.0f s\n",
			       im[k].root, id, seconds * 1.5);
			bad = 1;
		}
	}
	if (st.errors || bad)
		return 1;
	printf("OK files %lu bytes %llu passes %lu complete %lu\n", st.files, st.bytes, passes,
	       complete);
	return 0;
}

/*
 * Allocations made by composefs that are still live: with slub_debug=U
 * debugfs lists, per slab cache, the call sites of the live objects
 * (slab/CACHE/alloc_traces): a line "COUNT CALLER [module] age=... pid=..."
 * per site, then that site's stack. Only the call site counts: an ext4
 * inode that stays cached after composefs opened a backing file has
 * composefs in its stack, but is ext4's to keep.
 */
static int cmd_leaks(void)
{
	const char *dir = "/sys/kernel/debug/slab";
	DIR *d = opendir(dir);
	struct dirent *de;
	int caches = 0, leaks = 0;

	if (!d) {
		printf("SKIP no %s (debugfs not mounted?)\n", dir);
		return 0;
	}
	while ((de = readdir(d))) {
		char path[512], line[1024];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s/alloc_traces", dir, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		caches++;
		while (fgets(line, sizeof(line), f)) {
			if (strstr(line, "[composefs]") && strstr(line, " age=")) {
				printf("LEAK %s: %s", de->d_name, line);
				leaks++;
			}
		}
		fclose(f);
	}
	closedir(d);
	if (!caches) {
		printf("SKIP no alloc_traces in %s (boot with slub_debug=U)\n", dir);
		return 0;
	}
	if (!leaks)
		printf("OK %d slab caches, no live allocation by composefs\n", caches);
	return leaks ? 1 : 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(argv[1], "mutate"))
		return cmd_mutate(argc - 2, argv + 2);
	if (!strcmp(argv[1], "leaks") && argc == 2)
		return cmd_leaks();
	if (!strcmp(argv[1], "soak"))
		return cmd_soak(argc - 2, argv + 2);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage();
		return 0;
	}
	return usage();
}
