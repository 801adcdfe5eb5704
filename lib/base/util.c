// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Small helpers every part of libcfs uses: the message callback, digest hex
 * conversion, arrays that grow by doubling, object store paths,
 * composefs-dump(5) escaping, the removal of temporary files that dead runs
 * left in a store, and the splitting of basedir lists that every command
 * taking --basedir shares with the module.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cfs/store.h"
#include "internal.h"
#include "cfs-format.h"
#include "cfs/version.h"

static cfs_message_fn message_fn;
static void *message_ctx;
static _Thread_local char *capture;
static _Thread_local size_t capture_size;
static _Thread_local unsigned int msg_count;

void cfs_set_message_handler(cfs_message_fn fn, void *ctx)
{
	message_fn = fn;
	message_ctx = ctx;
}

void cfs_get_message_handler(cfs_message_fn *fn, void **ctx)
{
	*fn = message_fn;
	*ctx = message_ctx;
}

void cfs_msg_capture(char *buf, size_t size)
{
	capture = size ? buf : NULL;
	capture_size = size;
	if (capture)
		capture[0] = '\0';
}

unsigned int cfs_msg_count(void)
{
	return msg_count;
}

void cfs_msg(const char *fmt, ...)
{
	char *raw = NULL, *msg;
	va_list ap;
	int len;

	msg_count++;
	if (!capture && !message_fn)
		return;
	va_start(ap, fmt);
	len = vasprintf(&raw, fmt, ap);
	va_end(ap);
	/* Names in it come from input: escaped, and shortened in the middle. */
	msg = len < 0 ? NULL : cfs_printable(raw, (size_t)len, CFS_MSG_MAX, 0);
	free(raw);
	if (capture)
		snprintf(capture, capture_size, "%s", msg ? msg : "out of memory");
	else
		message_fn(message_ctx, msg ? msg : "out of memory");
	free(msg);
}

static const char hexdigits[] = "0123456789abcdef";

void *cfs_grow(void *p, size_t *alloc, size_t n, size_t elem, size_t first)
{
	size_t a = *alloc ? 2 * *alloc : first;

	if (n < *alloc)
		return p;
	if (a < *alloc || a > SIZE_MAX / elem)
		return NULL;
	p = realloc(p, a * elem);
	if (p)
		*alloc = a;
	return p;
}

size_t cfs_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c;
	size_t len;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

bool cfs_is_hex64(const char *s)
{
	for (int i = 0; i < 2 * CFS_DIGEST_SIZE; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool cfs_is_hex_digest(const char *s)
{
	return s && cfs_is_hex64(s) && s[2 * CFS_DIGEST_SIZE] == '\0';
}

bool cfs_is_sha256_digest(const char *s)
{
	return s && strncmp(s, "sha256:", 7) == 0 && cfs_is_hex_digest(s + 7);
}

void cfs_digest_to_hex(const uint8_t digest[CFS_DIGEST_SIZE], char hex[CFS_DIGEST_HEX_SIZE])
{
	for (int i = 0; i < CFS_DIGEST_SIZE; i++) {
		hex[2 * i] = hexdigits[digest[i] >> 4];
		hex[2 * i + 1] = hexdigits[digest[i] & 0xf];
	}
	hex[2 * CFS_DIGEST_SIZE] = '\0';
}

int cfs_digest_from_hex(const char *hex, uint8_t digest[CFS_DIGEST_SIZE])
{
	if (strlen(hex) != 2 * CFS_DIGEST_SIZE)
		return -EINVAL;
	for (int i = 0; i < CFS_DIGEST_SIZE; i++) {
		int hi = cfs_xdigit_value(hex[2 * i]);
		int lo = cfs_xdigit_value(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		digest[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

void cfs_object_path(const uint8_t digest[CFS_DIGEST_SIZE], char path[CFS_OBJECT_PATH_SIZE])
{
	char hex[CFS_DIGEST_HEX_SIZE];

	cfs_digest_to_hex(digest, hex);
	path[0] = hex[0];
	path[1] = hex[1];
	path[2] = '/';
	memcpy(path + 3, hex + 2, sizeof(hex) - 2);
}

/*
 * Whether the code point @cp (not ASCII) is shown as it is in text: no
 * control character (C1 ones are escape sequences on some terminals), and
 * none that reorders, hides or breaks the text around it.
 */
static bool shown_as_is(uint32_t cp)
{
	return cp >= 0xa0 && cp != 0xad && !(cp >= 0x200b && cp <= 0x200f) &&
	       !(cp >= 0x202a && cp <= 0x202e) && !(cp >= 0x2060 && cp <= 0x206f) &&
	       cp != 0x2028 && cp != 0x2029 && cp != 0xfeff && !(cp >= 0xfff9 && cp <= 0xfffb) &&
	       !(cp >= 0xfdd0 && cp <= 0xfdef) && (cp & 0xfffe) != 0xfffe &&
	       !(cp >= 0xe0000 && cp <= 0xe007f);
}

size_t cfs_escape_buf(char *out, size_t size, const void *buf, size_t len, int flags)
{
	const unsigned char *p = buf;
	size_t n = 0;
	char esc[5];

#define PUT(c)                           \
	do {                             \
		if (n + 1 < size)        \
			out[n] = (char)(c); \
		n++;                     \
	} while (0)
	for (size_t i = 0; i < len;) {
		unsigned char c = p[i];
		const char *e = NULL;
		uint32_t cp;
		size_t k = 1;

		if (c == '\\')
			e = flags & CFS_ESCAPE_NO_BACKSLASH ? NULL : "\\\\";
		else if (c == '\n')
			e = "\\n";
		else if (c == '\r')
			e = "\\r";
		else if (c == '\t')
			e = "\\t";
		else if (c == ' ' && ((flags & CFS_ESCAPE_SPACE) ||
				      ((flags & CFS_ESCAPE_INNER_SPACE) && i > 0 && i + 1 < len)))
			e = NULL;
		else if (c >= 0x80 && (flags & CFS_ESCAPE_UTF8) &&
			 (k = cfs_utf8_decode(p + i, len - i, &cp)) > 1 && shown_as_is(cp))
			e = NULL;
		else if (c <= ' ' || c >= 0x7f || ((flags & CFS_ESCAPE_EQUAL) && c == '='))
			k = 1, e = esc;
		else
			k = 1;
		if (e == esc) {
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = hexdigits[c >> 4];
			esc[3] = hexdigits[c & 15];
			esc[4] = '\0';
		}
		if (e) {
			for (; *e; e++)
				PUT(*e);
		} else {
			for (size_t j = 0; j < k; j++)
				PUT(p[i + j]);
		}
		i += e ? 1 : k;
	}
#undef PUT
	if (size)
		out[n < size ? n : size - 1] = '\0';
	return n;
}

int cfs_escape(FILE *out, const void *buf, size_t len, int flags)
{
	const unsigned char *p = buf;
	char tmp[256];

	if (len == 0)
		return fputc('-', out) == EOF ? -EIO : 0;
	if ((flags & CFS_ESCAPE_LONE_DASH) && len == 1 && p[0] == '-')
		return fputs("\\x2d", out) == EOF ? -EIO : 0;
	/* In pieces: an escape is never cut, as each byte escapes on its own. */
	for (size_t i = 0; i < len; i += 60) {
		size_t k = len - i < 60 ? len - i : 60;

		cfs_escape_buf(tmp, sizeof(tmp), p + i, k, flags & CFS_ESCAPE_EQUAL);
		if (fputs(tmp, out) == EOF)
			return -EIO;
	}
	return 0;
}

/* Bytes the token at @p (@n >= 1 bytes left) takes raw, into *@k, and escaped. */
static size_t token_len(const unsigned char *p, size_t n, int flags, size_t *k)
{
	uint32_t cp;

	*k = 1;
	if (p[0] == '\\')
		return flags & CFS_ESCAPE_NO_BACKSLASH ? 1 : 2;
	if (p[0] == '\n' || p[0] == '\r' || p[0] == '\t')
		return 2;
	if (p[0] >= ' ' && p[0] < 0x7f)
		return 1;
	if (p[0] >= 0x80 && (*k = cfs_utf8_decode(p, n, &cp)) > 1 && shown_as_is(cp))
		return *k;
	*k = 1;
	return 4;
}

size_t cfs_unescape_one(const char *s, size_t len, char *out)
{
	static const char from[] = "\\nrt", to[] = "\\\n\r\t";
	const char *c;
	int hi, lo;

	if (len < 2 || s[0] != '\\')
		return 0;
	if (s[1] == 'x') {
		if (len < 4)
			return 0;
		hi = cfs_xdigit_value(s[2]);
		lo = cfs_xdigit_value(s[3]);
		if (hi < 0 || lo < 0)
			return 0;
		*out = (char)(hi << 4 | lo);
		return 4;
	}
	c = s[1] ? strchr(from, s[1]) : NULL;
	if (!c)
		return 0;
	*out = to[c - from];
	return 2;
}

char *cfs_printable(const void *buf, size_t len, size_t max, int flags)
{
	const unsigned char *p = buf;
	size_t head = len, tail = len, total = 0, *cum = NULL, *pos = NULL, n = 0, need, h;
	char *out;

	flags = (flags & CFS_ESCAPE_NO_BACKSLASH) | CFS_ESCAPE_TEXT;
	for (size_t i = 0, k; i < len; i += k)
		total += token_len(p + i, len - i, flags, &k);
	if (max && total > max) {
		/*
		 * The middle goes: the start, and the end where the reason
		 * is, stay, cut between characters (never inside an escape).
		 */
		size_t budget_head = max / 3, budget_tail = max - max / 3 - 3, sum = 0;

		cum = malloc((len + 1) * sizeof(*cum));
		pos = malloc((len + 1) * sizeof(*pos));
		if (!cum || !pos) {
			free(cum);
			free(pos);
			return NULL;
		}
		for (size_t i = 0, k; i < len; i += k) {
			pos[n] = i;
			cum[n++] = sum;
			sum += token_len(p + i, len - i, flags, &k);
		}
		pos[n] = len;
		cum[n] = sum;
		head = 0;
		for (size_t j = 0; j <= n && cum[j] <= budget_head; j++)
			head = pos[j];
		tail = len;
		for (size_t j = n + 1; j-- > 0 && total - cum[j] <= budget_tail;)
			tail = pos[j];
		free(cum);
		free(pos);
		if (tail < head)
			tail = head;
	}
	need = cfs_escape_buf(NULL, 0, p, head, flags) + 3 +
	       cfs_escape_buf(NULL, 0, p + tail, len - tail, flags) + 1;
	out = malloc(need);
	if (!out)
		return NULL;
	h = cfs_escape_buf(out, need, p, head, flags);
	if (tail > head) {
		memcpy(out + h, "...", 4);
		cfs_escape_buf(out + h + 3, need - h - 3, p + tail, len - tail, flags);
	}
	return out;
}

int cfs_tmpfile_state(const char *name, const char *prefix, char sep)
{
	size_t plen = strlen(prefix);
	char *end;
	long pid;

	if (strncmp(name, prefix, plen) != 0)
		return -1;
	pid = strtol(name + plen, &end, 10);
	if (pid <= 0 || *end != sep)
		return -1;
	if (pid != getpid() && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 1;
	return 0;
}

char *cfs_url_redact(const char *url, char *buf, size_t size)
{
	const char *host = strstr(url, "://"), *end, *at;

	if (!host) {
		snprintf(buf, size, "%s", url);
		return buf;
	}
	host += 3;
	/* the authority ends at the first '/', '?' or '#'; its last '@' ends the userinfo */
	end = host + strcspn(host, "/?#");
	at = memrchr(host, '@', (size_t)(end - host));
	if (!at)
		snprintf(buf, size, "%s", url);
	else
		snprintf(buf, size, "%.*s%s", (int)(host - url), url, at + 1);
	return buf;
}

int cfs_private_mkdirat(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, CFS_STORE_DIR_MODE) == 0)
		return 1;
	return errno == EEXIST ? 0 : -errno;
}

int cfs_object_dir_open(int store_fd, const char *objpath)
{
	char dir[3] = { objpath[0], objpath[1], '\0' };
	int fd, r;

	for (int tries = 0;; tries++) {
		fd = openat(store_fd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		if (errno != ENOENT || tries > 0)
			return errno == ELOOP ? -ENOTDIR : -errno;
		r = cfs_private_mkdirat(store_fd, dir);
		if (r < 0)
			return r;
	}
}

void cfs_tmpfile_drop(int dirfd, int *fd, char *name)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	if (name[0])
		unlinkat(dirfd, name, 0);
	name[0] = '\0';
}

/* Whether @name is "<prefix><pid><sep>..." of the process @pid (@pid as text). */
static bool tmp_of(const char *name, const char *prefix, const char *pid, char sep)
{
	while (*prefix)
		if (*name++ != *prefix++)
			return false;
	while (*pid)
		if (*name++ != *pid++)
			return false;
	return *name == sep;
}

void cfs_store_remove_own_tmpfiles(int dirfd)
{
	/* getdents64(2) itself: readdir() may allocate, which a handler must not */
	struct ent {
		uint64_t ino;
		int64_t off;
		unsigned short reclen;
		unsigned char type;
		char name[];
	};
	static char buf[8192] __attribute__((aligned(8)));
	char pid[24], *p = pid + sizeof(pid);
	long v = (long)getpid(), n;

	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	/* Twice: a directory changed while read may hide a name once. */
	for (int pass = 0; pass < 2; pass++) {
		if (lseek(dirfd, 0, SEEK_SET) < 0)
			return;
		while ((n = syscall(SYS_getdents64, dirfd, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				struct ent *e = (struct ent *)(buf + off);

				off += e->reclen;
				if (tmp_of(e->name, CFS_BUILD_TMP_PREFIX, p, CFS_BUILD_TMP_SEP) ||
				    tmp_of(e->name, CFS_FETCH_TMP_PREFIX, p, CFS_FETCH_TMP_SEP))
					unlinkat(dirfd, e->name, 0);
			}
		}
	}
}

DIR *cfs_opendir_at(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), e;
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		e = errno;
		close(fd);
		errno = e;
	}
	return d;
}

void cfs_remove_dead_tmpfiles(int dirfd, const char *prefix, char sep)
{
	DIR *d = cfs_opendir_at(dirfd);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (cfs_tmpfile_state(de->d_name, prefix, sep) == 1)
			unlinkat(dirfd, de->d_name, 0);
	closedir(d);
}

/* What each file type is called: short, in words, and counted. */
static const struct {
	const char *name, *word, *plural;
} type_names[16] = {
	[S_IFREG >> 12] = { "regular", "regular file", "regular" },
	[S_IFDIR >> 12] = { "directory", "directory", "directories" },
	[S_IFLNK >> 12] = { "symlink", "symlink", "symlinks" },
	[S_IFCHR >> 12] = { "chardev", "character device", "chardevs" },
	[S_IFBLK >> 12] = { "blockdev", "block device", "blockdevs" },
	[S_IFIFO >> 12] = { "fifo", "fifo", "fifos" },
	[S_IFSOCK >> 12] = { "socket", "socket", "sockets" },
};

const char *cfs_type_name(uint32_t mode)
{
	const char *s = type_names[(mode & S_IFMT) >> 12].name;

	return s ? s : "unknown";
}

const char *cfs_type_word(uint32_t mode)
{
	const char *s = type_names[(mode & S_IFMT) >> 12].word;

	return s ? s : "?";
}

const char *cfs_type_plural(uint32_t mode)
{
	const char *s = type_names[(mode & S_IFMT) >> 12].plural;

	return s ? s : "unknown";
}

/* Both write loops in one: a negative @off writes at the file position. */
static int write_loop(int fd, const uint8_t *p, size_t len, int64_t off)
{
	while (len > 0) {
		ssize_t n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		if (off >= 0)
			off += n;
	}
	return 0;
}

int cfs_write_all(int fd, const void *buf, size_t len)
{
	return write_loop(fd, buf, len, -1);
}

int cfs_mkdir_p(const char *path, mode_t mode)
{
	char *p = strdup(path);
	int ret = 0;

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; ret == 0; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			ret = -errno;
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return ret;
}

int cfs_tmpfile(int dir_fd, const char *dir)
{
	const char *d = dir && dir[0] ? dir : getenv("TMPDIR");
	char path[PATH_MAX];
	int fd = -1, e;

	if (dir_fd >= 0)
		fd = openat(dir_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (!d || !d[0])
		d = "/tmp";
	fd = open(d, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR) &&
	    snprintf(path, sizeof(path), "%s/.cfs-tmp.XXXXXX", d) < (int)sizeof(path)) {
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
	}
	if (fd >= 0)
		return fd;
	e = errno;
	cfs_msg("cannot make a temporary file in '%s': %s", d, strerror(e));
	return -e;
}

int cfs_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	return write_loop(fd, buf, len, (int64_t)off);
}

int cfs_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int cfs_path_set(char **path, size_t *cap, size_t at, const void *name, size_t len)
{
	size_t need = at + 1 + len + 1;

	if (need > *cap) {
		size_t c = *cap;
		char *p;

		while (c < need)
			c *= 2;
		p = realloc(*path, c);
		if (!p)
			return -ENOMEM;
		*path = p;
		*cap = c;
	}
	(*path)[at] = '/';
	memcpy(*path + at + 1, name, len);
	(*path)[at + 1 + len] = '\0';
	return 0;
}

bool cfs_reserved_ok(const void *p, size_t n, const char *what)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i]) {
			cfs_msg("%s: a reserved field is set: this libcfs (%d.%d) has no such option",
				what, CFS_VERSION_MAJOR, CFS_VERSION_MINOR);
			return false;
		}
	return true;
}
