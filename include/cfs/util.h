/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libcfs, the userspace composefs library behind cfsctl: what every part of it
 * shares. Its functions never print and never exit: they return 0 (or a
 * count) on success and a negative errno on failure, and report the detail
 * of a failure through the message callback installed with
 * cfs_set_message_handler().
 *
 * The other headers of cfs/ each cover one area: image.h (reading images),
 * build.h, store.h (the digest store and the objects images use), verify.h,
 * diff.h, fetch.h, registry.h and oci.h.
 */
#ifndef CFS_UTIL_H
#define CFS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What this header declares is libcfs.so's API: exported (the library
 * is built with -fvisibility=hidden), and nothing else is. */
#pragma GCC visibility push(default)

#ifndef EFSCORRUPTED
#define EFSCORRUPTED EUCLEAN /* the image is corrupt */
#endif

/*
 * A digest is fs-verity's sha256: the same value as common/cfs-format.h's, which
 * the compiler checks wherever both are included (a redefinition must match).
 */
#define CFS_DIGEST_SIZE 32
#define CFS_DIGEST_HEX_SIZE (2 * CFS_DIGEST_SIZE + 1)
/* "xx/" + 62 hex digits + NUL */
#define CFS_OBJECT_PATH_SIZE (CFS_DIGEST_HEX_SIZE + 1)

/* ---- messages (util.c) ---- */

/**
 * typedef cfs_message_fn - receives one message, without trailing newline
 */
typedef void (*cfs_message_fn)(void *ctx, const char *msg);

/**
 * cfs_set_message_handler() - where the library's error details go
 * @fn: handler, or NULL to drop messages
 * @ctx: passed back to @fn
 *
 * The handler may be called from several threads at once.
 */
void cfs_set_message_handler(cfs_message_fn fn, void *ctx);

/** cfs_get_message_handler() - the handler and context set last, to put them back */
void cfs_get_message_handler(cfs_message_fn *fn, void **ctx);

/* ---- small helpers (util.c) ---- */

/**
 * cfs_utf8_decode() - the valid UTF-8 sequence at @s (at most @n bytes, @n >= 1)
 *
 * Return: its length (1..4), with its code point in *@cp, or 0 when the
 * bytes are no valid sequence (overlong, a surrogate, beyond U+10FFFF, cut).
 */
size_t cfs_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/**
 * cfs_grow() - room for one more element in an array that grows by doubling
 * @p: the array, of @n elements of @elem bytes (NULL while *@alloc is 0)
 * @alloc: how many it has room for; @first the first time, then twice as
 *	   many each time @n reaches it
 *
 * Return: the array, moved or not, or NULL when out of memory (@p and
 * *@alloc are as they were then).
 */
void *cfs_grow(void *p, size_t *alloc, size_t n, size_t elem, size_t first);

/**
 * cfs_type_name() - the short name of @mode's file type, as cfsctl prints it
 *
 * "regular", "directory", "symlink", "chardev", "blockdev", "fifo" or
 * "socket"; "unknown" for any other type bits.
 */
const char *cfs_type_name(uint32_t mode);

/** cfs_type_word() - @mode's file type in words ("regular file", "character device"; "?") */
const char *cfs_type_word(uint32_t mode);

/** cfs_type_plural() - the short name for several ("regular", "directories"; "unknown") */
const char *cfs_type_plural(uint32_t mode);

/** cfs_digest_to_hex() - 64 lowercase hex digits and a NUL into @hex */
void cfs_digest_to_hex(const uint8_t digest[CFS_DIGEST_SIZE], char hex[CFS_DIGEST_HEX_SIZE]);

/** cfs_digest_from_hex() - parse exactly 64 hex digits; -EINVAL otherwise */
int cfs_digest_from_hex(const char *hex, uint8_t digest[CFS_DIGEST_SIZE]);

/**
 * cfs_is_hex64() - are the first 64 characters of @s lowercase hex digits?
 * Reads no further than the first that is not (a NUL included).
 */
bool cfs_is_hex64(const char *s);

/**
 * cfs_is_hex_digest() - is @s 64 lowercase hex digits and nothing else?
 * The form of a seal and of an image's name in a repository. NULL is not.
 */
bool cfs_is_hex_digest(const char *s);

/** cfs_is_sha256_digest() - is @s "sha256:" and 64 lowercase hex digits? */
bool cfs_is_sha256_digest(const char *s);

/**
 * cfs_url_redact() - @url without its userinfo, for printing
 * @url: "SCHEME://[USER[:PASSWORD]@]HOST..." or anything else
 * @buf, @size: where the result goes, truncated to fit
 *
 * A password in a mirror's URL is never printed: "http://alice:x@host/s"
 * is written as "http://host/s". Return: @buf.
 */
char *cfs_url_redact(const char *url, char *buf, size_t size);

/** cfs_object_path() - the store-relative path "xx/<62 hex>" of a digest */
void cfs_object_path(const uint8_t digest[CFS_DIGEST_SIZE], char path[CFS_OBJECT_PATH_SIZE]);

/**
 * cfs_escape() - write @len bytes escaped as in composefs-dump(5) to @out
 * @flags: CFS_ESCAPE_EQUAL also escapes '='; CFS_ESCAPE_LONE_DASH writes a
 *	   value that is exactly "-" as "\x2d"
 *
 * Bytes outside printable ASCII, '\\' and (with the flags) '=' become \xXY
 * (or \\ \n \r \t). An empty value is written as "-".
 *
 * Return: 0, or -errno when writing to @out failed.
 */
#define CFS_ESCAPE_EQUAL 1
#define CFS_ESCAPE_LONE_DASH 2
int cfs_escape(FILE *out, const void *buf, size_t len, int flags);

/* More flags of cfs_escape_buf() */
#define CFS_ESCAPE_SPACE 4 /* ' ' stays */
#define CFS_ESCAPE_INNER_SPACE 8 /* ' ' stays but first and last */
#define CFS_ESCAPE_UTF8 16 /* valid UTF-8 of a printable character stays */
#define CFS_ESCAPE_NO_BACKSLASH 32 /* '\\' stays: the text holds escapes already */
#define CFS_ESCAPE_TEXT (CFS_ESCAPE_SPACE | CFS_ESCAPE_UTF8)

/**
 * cfs_escape_buf() - the one escaping of bytes from input for a terminal:
 *	write @len bytes escaped to @out as snprintf() does (NUL-terminated
 *	when @size > 0)
 * @flags: CFS_ESCAPE_*
 *
 * Printable ASCII stays (but ' ' only with CFS_ESCAPE_SPACE or
 * CFS_ESCAPE_INNER_SPACE, '=' not with CFS_ESCAPE_EQUAL); '\\' is "\\\\",
 * newline, return and tab "\\n", "\\r", "\\t"; with CFS_ESCAPE_UTF8 a
 * valid UTF-8 sequence stays unless it is a control character (C1 ones
 * included) or one that reorders or hides text (bidi overrides, zero-width
 * and line separators); every other byte (ESC, invalid UTF-8) is "\\xXY".
 * The output never holds a control byte.
 *
 * Return: the length of the escaped text, without the NUL.
 */
size_t cfs_escape_buf(char *out, size_t size, const void *buf, size_t len, int flags);

/**
 * cfs_unescape_one() - decode the escape that starts the @len bytes at @s:
 *	"\\\\", "\\n", "\\r", "\\t" or "\\xXY", the escapes of a dumpfile (and
 *	of cfs_escape_buf()), its byte into *@out
 *
 * Return: how many bytes of @s it is (2 or 4), or 0 when @s starts with
 * none of them.
 */
size_t cfs_unescape_one(const char *s, size_t len, char *out);

/**
 * cfs_printable() - @len bytes of text for a terminal, in a new string:
 *	escaped by cfs_escape_buf() with CFS_ESCAPE_TEXT (and
 *	CFS_ESCAPE_NO_BACKSLASH from @flags), and when that is longer than
 *	@max bytes (0: no limit) shortened in the middle, "...", so that its
 *	start and its end (the reason, in a message) stay
 *
 * Return: a malloc'd string, or NULL on ENOMEM.
 */
char *cfs_printable(const void *buf, size_t len, size_t max, int flags);

/* The longest message cfs_msg() hands over, its names shortened in the middle to fit. */
#define CFS_MSG_MAX 1000

/* ---- fs-verity (verity.c), on top of libfsverity ---- */

/** cfs_verity_digest_fd() - compute the fs-verity sha256 digest of @fd's content */
int cfs_verity_digest_fd(int fd, uint8_t digest[CFS_DIGEST_SIZE]);

/** cfs_verity_digest_mem() - the fs-verity sha256 digest of @len bytes at @buf */
int cfs_verity_digest_mem(const void *buf, size_t len, uint8_t digest[CFS_DIGEST_SIZE]);

/**
 * struct cfs_verity - an fs-verity digest computed as content comes, in
 *	data (cfs_verity_update()) and runs of zeros (cfs_verity_zeros()): a
 *	hole costs one hash per level of the tree, however long it is
 *
 * Fields are private. cfs_verity_init() with the content's size, feed
 * exactly that many bytes, cfs_verity_final(), cfs_verity_free().
 */
struct cfs_verity {
	void *md; /* EVP_MD_CTX */
	uint64_t size, fed;
	unsigned int levels; /* of hash blocks above the data */
	bool have_root;
	uint8_t root[CFS_DIGEST_SIZE];
	uint8_t zero_hash[CFS_DIGEST_SIZE]; /* of a zero block */
	uint8_t data[4096]; /* the data block begun */
	size_t data_len;
	struct {
		uint8_t buf[4096];
		unsigned int n; /* hashes in @buf */
	} lvl[8]; /* 4096 * 128^7 > 2^64 */
};

int cfs_verity_init(struct cfs_verity *v, uint64_t size);
int cfs_verity_update(struct cfs_verity *v, const void *buf, size_t len);
int cfs_verity_zeros(struct cfs_verity *v, uint64_t len);
int cfs_verity_final(struct cfs_verity *v, uint8_t digest[CFS_DIGEST_SIZE]);
void cfs_verity_free(struct cfs_verity *v);

/**
 * struct cfs_verity_leaves - the hash of each data block of a file, kept
 *	from computing its fs-verity digest, to check blocks read later
 * @hashes: @n sha256 hashes, one per 4096-byte block (the last one
 *	zero-padded), the Merkle tree's lowest level; NULL when @n is 0
 * @n: the number of data blocks
 * @size: the file's size when it was hashed
 */
struct cfs_verity_leaves {
	uint8_t *hashes;
	uint64_t n;
	uint64_t size;
};

/**
 * cfs_verity_leaves_fd() - compute the fs-verity digest of @fd's content
 *	(with libfsverity) and keep the hashes of its data blocks in *@l
 *
 * The file is read once, from offset 0, as long as fstat() says. The
 * hashes take 1/128 of the file's size. Return: 0, or -errno (nothing is
 * kept); release with cfs_verity_leaves_free().
 */
int cfs_verity_leaves_fd(int fd, uint8_t digest[CFS_DIGEST_SIZE], struct cfs_verity_leaves *l);

/**
 * cfs_verity_leaves_check() - is @len bytes at @data, from the file's
 *	offset @off, what was hashed into @l?
 *
 * @off is a multiple of 4096, and @len covers whole blocks but at the
 * file's end. Return: 0, -EIO where a block differs, -EINVAL for a range
 * outside the file, -ENOMEM.
 */
int cfs_verity_leaves_check(const struct cfs_verity_leaves *l, uint64_t off, const void *data,
			    size_t len);

/** cfs_verity_leaves_free() - release what @l holds */
void cfs_verity_leaves_free(struct cfs_verity_leaves *l);

/**
 * cfs_verity_measure_fd() - the digest the kernel holds for @fd
 *
 * Return: 0, -ENODATA when verity is not enabled on the file, -EOPNOTSUPP
 * when the filesystem has no verity, or another -errno.
 */
int cfs_verity_measure_fd(int fd, uint8_t digest[CFS_DIGEST_SIZE]);

/**
 * cfs_verity_enable_fd() - enable fs-verity (sha256, 4 KiB blocks) on @fd
 *
 * @fd must be open read-only with no writers. Return: 0, -EOPNOTSUPP where
 * the filesystem cannot, or another -errno.
 */
int cfs_verity_enable_fd(int fd);

#pragma GCC visibility pop

#endif /* CFS_UTIL_H */
