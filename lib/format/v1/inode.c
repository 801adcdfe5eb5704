// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The one decoder of a v1 inode (a fixed chunk and the payload before it),
 * for the reader and for cfsctl verify. The reader's mode stops at the
 * first error, with a message naming the inode and its offset; verify's
 * strict mode (a verifier given) reports every problem as a verify problem
 * and goes on wherever the rest of the inode still makes sense, and also
 * warns of encodings a correct writer would not produce. Both modes apply
 * the same rules of corruption, which tests/unit/test_v1_inodes.c runs
 * against the kernel module's decoder (kmod/reader.c) too. The checks of a
 * whole xattr set and of directory chunks are the callers'.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/bytes.h"
#include "format/reader.h"
#include "v1.h"
#include "format/verify-walk.h"

struct dec {
	uint64_t ino, off; /* the inode, and its file offset */
	struct cfs_verifier *v; /* strict mode, or NULL */
	bool failed; /* an error was reported */
};

static void problem(struct dec *d, bool error, const char *kind, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/*
 * One problem of the inode: in strict mode a verify problem (at @off), in
 * the reader's mode a message for an error (warnings are not looked for).
 */
static void problem(struct dec *d, bool error, const char *kind, uint64_t off, const char *fmt, ...)
{
	char body[512];
	va_list ap;

	if (error)
		d->failed = true;
	if (!d->v && !error)
		return;
	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	if (!d->v)
		cfs_msg("inode %llu at offset %llu: %s", cfs_ull(d->ino), cfs_ull(d->off), body);
	else
		cfs_vreport(d->v, error ? CFS_VERIFY_ERROR : CFS_VERIFY_WARNING, kind, d->v->cur_path,
			    off, "inode %llu: %s", cfs_ull(d->ino), body);
}

#define BAD(d, kind, ...) problem(d, true, kind, (d)->off, __VA_ARGS__)
#define ODD(d, ...) problem(d, false, "noncanonical", (d)->off, __VA_ARGS__)
/* In the reader's mode, the first error ends the decode. */
#define STOP(d) (!(d)->v && (d)->failed)

/* The xattr set the inode names: its size and its bounds (the set's content is the caller's). */
static bool xattr_ref(struct dec *d, uint64_t doff, uint64_t size, uint64_t xoff, uint32_t xlen)
{
	if (xlen < sizeof(struct cfs_xattr_header) || xlen > CFS_MAX_XATTRS_SIZE) {
		BAD(d, "xattr-size", "xattr set of %u bytes (must be 2..%u)", xlen, CFS_MAX_XATTRS_SIZE);
		if (STOP(d) || xlen < sizeof(struct cfs_xattr_header))
			return false;
	}
	if (!fits(xoff, xlen, size - doff)) {
		BAD(d, "xattr-bounds", "xattr set of %u bytes at data offset %llu runs past the end of the image",
		    xlen, cfs_ull(xoff));
		return false;
	}
	/* verify reports a set crossing a page once, however many inodes use it */
	if (!d->v && !(xlen <= CFS_PAGE_SIZE && (doff + xoff) % CFS_PAGE_SIZE + xlen <= CFS_PAGE_SIZE)) {
		BAD(d, "xattr-page", "xattr set of %u bytes at offset %llu crosses a %u-byte page boundary",
		    xlen, cfs_ull(doff + xoff), CFS_PAGE_SIZE);
		return false;
	}
	return true;
}

/* A regular file's or symlink's payload: the backing path or the target. */
static void path_payload(struct dec *d, const uint8_t *base, struct cfs_inode *in)
{
	uint32_t type = in->mode & S_IFMT, flags = CFS_V1_I(in)->flags;
	const char *what = type == S_IFLNK ? "symlink target" : "backing path";
	uint8_t from[CFS_DIGEST_SIZE];
	bool spells;

	if (in->payload_len > CFS_MAX_PAYLOAD_PATH || (type == S_IFLNK && in->payload_len == 0)) {
		BAD(d, "payload-size", "%s of %u bytes (must be %u..%u)", what, in->payload_len,
		    type == S_IFLNK ? 1 : 0, CFS_MAX_PAYLOAD_PATH);
		if (STOP(d))
			return;
	} else if (in->payload_len) {
		in->payload = (const char *)base + in->ino - in->payload_len;
		if (memchr(in->payload, '\0', in->payload_len)) {
			BAD(d, "payload-nul", "%s contains a NUL byte", what);
			if (STOP(d))
				return;
		}
	}
	if (type != S_IFREG)
		return;
	/* No payload when its size was wrong (reported above). */
	spells = in->payload && cfs_digest_from_payload(in->payload, in->payload_len, from) == 0;
	if (flags & CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD) {
		if (in->has_digest) {
			ODD(d, "both DIGEST and DIGEST_FROM_PAYLOAD");
			if (d->v && spells && memcmp(from, in->digest, CFS_DIGEST_SIZE))
				BAD(d, "digest-mismatch",
				    "the DIGEST field and the backing path name different digests");
		} else if (!spells && (in->payload || in->payload_len)) {
			BAD(d, "digest-payload", "backing path does not encode the digest its flags promise");
			if (STOP(d))
				return;
		} else if (!spells) {
			ODD(d, "DIGEST_FROM_PAYLOAD without a backing path");
		} else {
			memcpy(in->digest, from, CFS_DIGEST_SIZE);
			in->has_digest = true;
		}
	} else if (in->has_digest && spells && memcmp(from, in->digest, CFS_DIGEST_SIZE) == 0) {
		ODD(d, "DIGEST stored although the backing path spells it");
	}
	if (in->size && !in->payload_len)
		BAD(d, "no-backing", "regular file of %llu bytes without a backing path", cfs_ull(in->size));
}

int cfs_v1_decode_inode(const uint8_t *data, uint64_t size, uint64_t doff, uint64_t ino,
			struct cfs_inode *out, struct cfs_verifier *strict)
{
	uint64_t section = doff - CFS_INODE_SECTION_OFFSET;
	const uint8_t *base = data + CFS_INODE_SECTION_OFFSET, *p;
	struct dec d = { .ino = ino, .v = strict };
	uint32_t flags, esize, type;
	struct cfs_inode in;

	memset(&in, 0, sizeof(in));
	in.ino = ino;
	in.offset = d.off = ino > UINT64_MAX - CFS_INODE_SECTION_OFFSET ?
				    UINT64_MAX : ino + CFS_INODE_SECTION_OFFSET;
	if (!fits(ino, 4, section)) {
		problem(&d, true, "inode-bounds", CFS_NO_OFFSET,
			"lies outside the inode section (%llu..%llu)",
			cfs_ull(CFS_INODE_SECTION_OFFSET), cfs_ull(doff));
		goto bad;
	}
	p = base + ino;
	flags = get32(p);
	if (flags & ~CFS_INODE_FLAGS_KNOWN) {
		BAD(&d, "inode-flags", "unknown flags 0x%x", flags & ~CFS_INODE_FLAGS_KNOWN);
		goto bad;
	}
	esize = cfs_inode_encoded_size(flags);
	if (!fits(ino, esize, section)) {
		BAD(&d, "inode-bounds", "%u bytes of inode run past the inode section, which ends at %llu",
		    esize, cfs_ull(doff));
		goto bad;
	}
	CFS_V1_I(&in)->flags = flags;
	p += 4;

	if (flags & CFS_INODE_FLAGS_PAYLOAD) {
		in.payload_len = get32(p);
		p += 4;
		if (in.payload_len == 0)
			ODD(&d, "PAYLOAD flag with a length of 0");
	}
	in.mode = CFS_INODE_DEFAULT_MODE;
	if (flags & CFS_INODE_FLAGS_MODE) {
		in.mode = get32(p);
		p += 4;
		if (in.mode == CFS_INODE_DEFAULT_MODE)
			ODD(&d, "MODE flag with the default mode");
	}
	type = in.mode & S_IFMT;
	if (!cfs_mode_valid(in.mode & (S_IFMT | 07777))) { /* the type alone */
		BAD(&d, "inode-mode", "mode 0%o has no valid file type", in.mode);
		goto bad;
	}
	if (in.mode & ~(S_IFMT | 07777U)) {
		BAD(&d, "inode-mode", "mode 0%o has unknown bits set", in.mode);
		if (STOP(&d))
			goto bad;
	}
	in.nlink = type == S_IFDIR ? CFS_INODE_DEFAULT_NLINK_DIR : CFS_INODE_DEFAULT_NLINK;
	if (flags & CFS_INODE_FLAGS_NLINK) {
		uint32_t def = in.nlink;

		in.nlink = get32(p);
		p += 4;
		if (in.nlink == def)
			ODD(&d, "NLINK flag with the default count");
	}
	if (in.nlink == 0) {
		BAD(&d, "inode-nlink", "link count 0");
		if (STOP(&d))
			goto bad;
	}
	in.uid = in.gid = CFS_INODE_DEFAULT_UIDGID;
	if (flags & CFS_INODE_FLAGS_UIDGID) {
		in.uid = get32(p);
		in.gid = get32(p + 4);
		p += 8;
		if (in.uid == 0 && in.gid == 0)
			ODD(&d, "UIDGID flag with owner 0:0");
	}
	in.rdev = CFS_INODE_DEFAULT_RDEV;
	if (flags & CFS_INODE_FLAGS_RDEV) {
		in.rdev = get32(p);
		p += 4;
		if (type != S_IFCHR && type != S_IFBLK)
			ODD(&d, "RDEV flag on a file that is not a device");
		else if (in.rdev == 0)
			ODD(&d, "RDEV flag with device 0");
	}
	if (flags & CFS_INODE_FLAGS_TIMES) {
		in.mtime_sec = (int64_t)get64(p);
		in.ctime_sec = (int64_t)get64(p + 8);
		p += 16;
		if (in.mtime_sec == 0 && in.ctime_sec == 0)
			ODD(&d, "TIMES flag with times 0");
	}
	if (flags & CFS_INODE_FLAGS_TIMES_NSEC) {
		in.mtime_nsec = get32(p);
		in.ctime_nsec = get32(p + 4);
		p += 8;
		if (in.mtime_nsec >= 1000000000U || in.ctime_nsec >= 1000000000U) {
			BAD(&d, "inode-time", "nanoseconds %u/%u out of range", in.mtime_nsec,
			    in.ctime_nsec);
			if (STOP(&d))
				goto bad;
		} else if (in.mtime_nsec == 0 && in.ctime_nsec == 0) {
			ODD(&d, "TIMES_NSEC flag with nanoseconds 0");
		}
	}
	if (flags & CFS_INODE_FLAGS_LOW_SIZE) {
		in.size = get32(p);
		p += 4;
	}
	if (flags & CFS_INODE_FLAGS_HIGH_SIZE) {
		uint32_t high = get32(p);

		in.size |= (uint64_t)high << 32;
		p += 4;
		if (high == 0)
			ODD(&d, "HIGH_SIZE flag with high bits 0");
	}
	if (in.size > INT64_MAX) {
		BAD(&d, "inode-size", "size %llu is more than %lld", cfs_ull(in.size), (long long)INT64_MAX);
		if (STOP(&d))
			goto bad;
	}
	if ((flags & CFS_INODE_FLAGS_LOW_SIZE) && (in.size & 0xffffffffULL) == 0)
		ODD(&d, "LOW_SIZE flag with low bits 0");
	if (type != S_IFREG && in.size)
		ODD(&d, "a size of %llu on a file that is not regular", cfs_ull(in.size));
	if (flags & CFS_INODE_FLAGS_XATTRS) {
		uint64_t xoff = get64(p);
		uint32_t xlen = get32(p + 8);

		p += 12;
		if (xlen == 0) {
			ODD(&d, "XATTRS flag with an empty set");
		} else if (xattr_ref(&d, doff, size, xoff, xlen)) {
			CFS_V1_I(&in)->xattrs_off = xoff;
			in.xattrs_len = xlen;
		} else if (STOP(&d)) {
			goto bad;
		}
	}
	if (flags & CFS_INODE_FLAGS_DIGEST) {
		memcpy(in.digest, p, CFS_DIGEST_SIZE);
		in.has_digest = true;
		p += CFS_DIGEST_SIZE;
	}
	if ((flags & (CFS_INODE_FLAGS_DIGEST | CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD)) &&
	    type != S_IFREG)
		ODD(&d, "a digest flag on a file that is not regular");

	/* The payload: the payload_len bytes just before the fixed chunk. */
	if (in.payload_len > ino) {
		BAD(&d, "payload-bounds", "payload of %u bytes starts before the inode section",
		    in.payload_len);
		if (STOP(&d))
			goto bad;
		in.payload_len = 0;
	}
	CFS_V1_I(&in)->extent = in.payload_len + esize;
	if (type == S_IFDIR && in.payload_len) {
		const uint8_t *t = base + ino - in.payload_len;
		uint32_t n = in.payload_len >= sizeof(struct cfs_dir_header) ? get32(t) : 0;

		if (n == 0 || n > CFS_MAX_DIR_CHUNKS || in.payload_len != cfs_dir_header_size(n)) {
			BAD(&d, "dir-table",
			    "directory payload of %u bytes does not hold a chunk table of %u chunks (at most %u)",
			    in.payload_len, n, CFS_MAX_DIR_CHUNKS);
			if (STOP(&d))
				goto bad;
			in.payload_len = 0;
		} else {
			CFS_V1_I(&in)->n_chunks = n;
			in.payload = (const char *)t;
		}
	} else if (type == S_IFREG || type == S_IFLNK) {
		path_payload(&d, base, &in);
		if (STOP(&d))
			goto bad;
	} else if (in.payload_len) {
		/* Other types have no use for a payload; it is ignored. */
		ODD(&d, "a payload of %u bytes on a %s", in.payload_len,
		    type == S_IFDIR ? "directory" : "special file");
		in.payload_len = 0;
	}
	*out = in;
	return strict ? 1 : 0;
bad:
	return strict ? 0 : -EFSCORRUPTED;
}
