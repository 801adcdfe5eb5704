// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs-vmtool: the small, statically linked probe the VM tests use where
 * busybox has no tool: a canonical listing of a tree (every stat field,
 * symlink target, xattrs, a content hash) to compare a mount with its
 * source, fs-verity enable/measure, mount(2) with the errno by name, an
 * O_EXCL open of a block device, and
 * probes of mmap, sendfile, file handles, getdents/seekdir, readdir
 * against its own reference (buffer sizes, telldir/seekdir, lseek to
 * d_off), FIBMAP, xattr ERANGE, mincore residency, statfs and EROFS,
 * O_DIRECT through fcntl, opens of one file from many processes with
 * their own flags and positions, SEEK_DATA, SEEK_HOLE and SEEK_END,
 * inotify events on a file, and running
 * a command with fewer capabilities, as another user or beside a user
 * namespace. Each command prints a result and
 * exits 0 when the probe behaved as expected, 1 otherwise.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sched.h>
#include <poll.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case 0: return "OK";
	case EIO: return "EIO";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	case EUCLEAN: return "EUCLEAN";
	case ELOOP: return "ELOOP";
	case EROFS: return "EROFS";
	case ENODATA: return "ENODATA";
	case ERANGE: return "ERANGE";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOTDIR: return "ENOTDIR";
	case EXDEV: return "EXDEV";
	case ESTALE: return "ESTALE";
	case ENOTSUP: return "EOPNOTSUPP";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case EOVERFLOW: return "EOVERFLOW";
	case ENOMEM: return "ENOMEM";
	case EBUSY: return "EBUSY";
	case EFBIG: return "EFBIG";
	case ENODEV: return "ENODEV";
	case EBADMSG: return "EBADMSG";
	case ENOTCONN: return "ENOTCONN";
	case ETIMEDOUT: return "ETIMEDOUT";
	default: return strerror(e);
	}
}

static int die(const char *what, const char *path)
{
	printf("%s: %s: %s\n", what, path, errname(errno));
	return 1;
}

/* ---- walk: a canonical listing of a tree ---- */

static void put_escaped(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c <= ' ' || c >= 0x7f || c == '\\' || c == '=')
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Hash of the content: all of it up to 64 MiB, else the first and last MiB
 * and every SEEK_DATA extent start, so that a 4 GiB sparse file is quick.
 */
static int hash_file(int fd, off_t size, uint64_t *out)
{
	static unsigned char buf[1 << 16];
	uint64_t h = 0xcbf29ce484222325ULL;
	off_t pos = 0, limit = size;
	ssize_t n;

	if (size > (64 << 20))
		limit = 1 << 20;
	while (pos < limit) {
		n = pread(fd, buf, sizeof(buf) < (size_t)(limit - pos) ? sizeof(buf) : (size_t)(limit - pos), pos);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		h = fnv(h, buf, n);
		pos += n;
	}
	if (size > (64 << 20)) {
		pos = size - (1 << 20);
		while (pos < size) {
			n = pread(fd, buf, sizeof(buf), pos);
			if (n < 0)
				return -errno;
			if (n == 0)
				break;
			h = fnv(h, buf, n);
			pos += n;
		}
	}
	*out = h;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_xattrs(const char *path)
{
	char names[65536], *v = NULL, *list[1024];
	ssize_t len = llistxattr(path, names, sizeof(names));
	int n = 0;

	if (len < 0)
		return errno == ENOTSUP ? 0 : -errno;
	for (char *p = names; p < names + len; p += strlen(p) + 1)
		if (n < 1024)
			list[n++] = p;
	qsort(list, n, sizeof(list[0]), cmp_str);
	v = malloc(65536);
	if (!v)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		ssize_t vl = lgetxattr(path, list[i], v, 65536);

		if (vl < 0) {
			printf(" xattr:%s:%s", list[i], errname(errno));
			continue;
		}
		printf(" xattr:");
		put_escaped(list[i], strlen(list[i]));
		putchar('=');
		for (ssize_t j = 0; j < vl; j++)
			printf("%02x", (unsigned char)v[j]);
	}
	free(v);
	return 0;
}

static int walk_one(const char *root, const char *rel, int *bad);

static int walk_dir(const char *root, const char *rel, int *bad)
{
	char path[8192];
	struct dirent **ents;
	int n;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	n = scandir(path, &ents, NULL, alphasort);
	if (n < 0) {
		printf("%s: scandir: %s\n", rel, errname(errno));
		*bad = 1;
		return 0;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;

		if (strcmp(name, ".") && strcmp(name, "..")) {
			char child[8192];

			snprintf(child, sizeof(child), "%s%s%s", rel, *rel ? "/" : "", name);
			walk_one(root, child, bad);
		}
		free(ents[i]);
	}
	free(ents);
	return 0;
}

static int walk_one(const char *root, const char *rel, int *bad)
{
	char path[8192], target[8192];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (lstat(path, &st)) {
		printf("%s: lstat: %s\n", rel, errname(errno));
		*bad = 1;
		return 0;
	}
	putchar('/');
	put_escaped(rel, strlen(rel));
	printf(" mode=%o uid=%u gid=%u nlink=%lu mtime=%lld.%09ld",
	       st.st_mode, st.st_uid, st.st_gid, (unsigned long)st.st_nlink,
	       (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		printf(" rdev=%u:%u", major(st.st_rdev), minor(st.st_rdev));
	if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
		printf(" size=%lld", (long long)st.st_size);
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(path, target, sizeof(target));

		if (n < 0) {
			printf(" target:%s", errname(errno));
			*bad = 1;
		} else {
			printf(" target=");
			put_escaped(target, n);
		}
	}
	if (S_ISREG(st.st_mode)) {
		int fd = open(path, O_RDONLY);
		uint64_t h = 0;

		if (fd < 0 || hash_file(fd, st.st_size, &h)) {
			printf(" content:%s", errname(errno));
			*bad = 1;
		} else {
			printf(" content=%016llx", (unsigned long long)h);
		}
		if (fd >= 0)
			close(fd);
	}
	int xr = list_xattrs(path);
	if (xr) {
		printf(" xattrs:%s", errname(-xr));
		*bad = 1;
	}
	putchar('\n');
	if (S_ISDIR(st.st_mode))
		walk_dir(root, rel, bad);
	return 0;
}

static int cmd_walk(int argc, char **argv)
{
	int bad = 0;

	if (argc != 1)
		return 2;
	walk_one(argv[0], "", &bad);
	return bad;
}

/* ---- fs-verity ---- */

static int cmd_verity_enable(int argc, char **argv)
{
	struct fsverity_enable_arg arg = {
		.version = 1,
		.hash_algorithm = FS_VERITY_HASH_ALG_SHA256,
		.block_size = 4096,
	};

	for (int i = 0; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);

		if (fd < 0)
			return die("open", argv[i]);
		if (ioctl(fd, FS_IOC_ENABLE_VERITY, &arg) && errno != EEXIST)
			return die("enable verity", argv[i]);
		close(fd);
	}
	return 0;
}

static int cmd_verity_measure(int argc, char **argv)
{
	struct {
		struct fsverity_digest d;
		unsigned char buf[64];
	} m = { .d.digest_size = 64 };
	int fd;

	if (argc != 1)
		return 2;
	fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		return die("open", argv[0]);
	if (ioctl(fd, FS_IOC_MEASURE_VERITY, &m))
		return die("measure", argv[0]);
	for (int i = 0; i < m.d.digest_size; i++)
		printf("%02x", m.d.digest[i]);
	putchar('\n');
	return 0;
}

/* ---- mount / open / read: print the errno by name ---- */

static int cmd_mount(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	if (mount(argv[0], argv[1], "composefs", MS_RDONLY, argv[2])) {
		printf("%s\n", errname(errno));
		return 1;
	}
	printf("OK\n");
	return 0;
}

/* Remount MNT read-only with exactly OPTIONS (busybox mount would add
 * those of /proc/mounts); print OK or the errno name.
 */
static int cmd_remount(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	if (mount("none", argv[0], NULL, MS_REMOUNT | MS_RDONLY, argv[1])) {
		printf("%s\n", errname(errno));
		return 1;
	}
	printf("OK\n");
	return 0;
}

/* Open a block device with O_EXCL, as mkfs does, and close it; print OK or
 * the errno name (EBUSY while a filesystem holds it).
 */
static int cmd_open_excl(int argc, char **argv)
{
	int fd;

	if (argc != 1)
		return 2;
	fd = open(argv[0], O_RDONLY | O_EXCL);
	if (fd < 0) {
		printf("%s\n", errname(errno));
		return 1;
	}
	close(fd);
	printf("OK\n");
	return 0;
}

/* Open and read the whole file; print OK or the errno of the failing step. */
static int cmd_read(int argc, char **argv)
{
	static char buf[1 << 16];
	int fd;
	ssize_t n;

	if (argc != 1)
		return 2;
	fd = open(argv[0], O_RDONLY);
	if (fd < 0) {
		printf("open %s\n", errname(errno));
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0) {
		printf("read %s\n", errname(errno));
		return 1;
	}
	close(fd);
	printf("OK\n");
	return 0;
}

/* O_DIRECT read of the first 4 KiB, compared with a buffered read. */
static int cmd_direct(int argc, char **argv)
{
	static char want[4096], got[4096] __attribute__((aligned(4096)));
	int fd;
	ssize_t n, m;

	if (argc != 1)
		return 2;
	fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		return die("open", argv[0]);
	n = read(fd, want, sizeof(want));
	close(fd);
	fd = open(argv[0], O_RDONLY | O_DIRECT);
	if (fd < 0)
		return die("open O_DIRECT", argv[0]);
	m = read(fd, got, sizeof(got));
	if (m < 0)
		return die("read O_DIRECT", argv[0]);
	if (m != n || memcmp(want, got, n)) {
		printf("O_DIRECT read differs (%zd vs %zd bytes)\n", m, n);
		return 1;
	}
	printf("OK\n");
	return 0;
}

/* ---- mmap, sendfile, splice ---- */

static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	char *buf;

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	buf = malloc(st.st_size + 1);
	*len = 0;
	while (buf && *len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + *len, st.st_size - *len);

		if (n <= 0)
			break;
		*len += n;
	}
	close(fd);
	return buf;
}

static int cmd_mmap(int argc, char **argv)
{
	size_t len;
	char *want = slurp(argv[0], &len);
	int fd, flags[2] = { MAP_SHARED, MAP_PRIVATE };

	if (argc != 1 || !want || !len)
		return die("read", argv[0]);
	fd = open(argv[0], O_RDONLY);
	for (int i = 0; i < 2; i++) {
		char *p = mmap(NULL, len, PROT_READ, flags[i], fd, 0);

		if (p == MAP_FAILED)
			return die("mmap", argv[0]);
		if (memcmp(p, want, len)) {
			printf("mmap %s: content differs from read()\n",
			       i ? "private" : "shared");
			return 1;
		}
		munmap(p, len);
	}
	/* A private writable mapping is allowed (copy on write). */
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return die("mmap private rw", argv[0]);
	p[0] ^= 1;
	munmap(p, len);
	/* A shared writable one is not: the file is open read-only. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED || errno != EACCES) {
		printf("mmap shared rw: expected EACCES, got %s\n",
		       p == MAP_FAILED ? errname(errno) : "success");
		return 1;
	}
	printf("OK\n");
	return 0;
}

/* An empty file maps, and touching the mapping raises SIGBUS. */
static int cmd_mmap_empty(int argc, char **argv)
{
	int fd, status;
	char *p;
	pid_t pid;

	if (argc != 1)
		return 2;
	fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		return die("open", argv[0]);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return die("mmap", argv[0]);
	pid = fork();
	if (pid == 0)
		_exit(p[0] == 42 ? 3 : 4);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return die("fork", argv[0]);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGBUS) {
		printf("touching the mapping: want SIGBUS, got status %d\n", status);
		return 1;
	}
	printf("OK\n");
	return 0;
}

static int cmd_sendfile(int argc, char **argv)
{
	size_t len, got = 0;
	char *want = slurp(argv[0], &len), *buf;
	int fd, pfd[2];

	if (argc != 1 || !want)
		return die("read", argv[0]);
	fd = open(argv[0], O_RDONLY);
	if (fd < 0 || pipe(pfd))
		return die("open", argv[0]);
	fcntl(pfd[0], F_SETPIPE_SZ, 1 << 20);
	fcntl(pfd[1], F_SETPIPE_SZ, 1 << 20);
	buf = malloc(len + 1);
	while (got < len) {
		ssize_t n = sendfile(pfd[1], fd, NULL, len - got > 65536 ? 65536 : len - got);

		if (n < 0)
			return die("sendfile", argv[0]);
		if (n == 0)
			break;
		for (ssize_t r = 0; r < n;) {
			ssize_t m = read(pfd[0], buf + got + r, n - r);

			if (m <= 0)
				return die("pipe read", argv[0]);
			r += m;
		}
		got += n;
	}
	if (got != len || memcmp(buf, want, len)) {
		printf("sendfile: got %zu bytes, want %zu, or content differs\n", got, len);
		return 1;
	}
	/* splice from the file into the pipe too */
	loff_t off = 0;
	ssize_t n = splice(fd, &off, pfd[1], NULL, len < 4096 ? len : 4096, 0);
	if (len && n <= 0)
		return die("splice", argv[0]);
	printf("OK\n");
	return 0;
}

/* ---- file handles ---- */

static int cmd_fhandle(int argc, char **argv)
{
	struct {
		struct file_handle fh;
		unsigned char buf[128];
	} h = { .fh.handle_bytes = 128 };
	size_t len, len2;
	char *want, *got;
	int mnt_id, mfd, fd;

	if (argc != 2)
		return 2;
	if (name_to_handle_at(AT_FDCWD, argv[1], &h.fh, &mnt_id, 0))
		return die("name_to_handle_at", argv[1]);
	mfd = open(argv[0], O_RDONLY | O_DIRECTORY);
	if (mfd < 0)
		return die("open", argv[0]);
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY);
	if (fd < 0)
		return die("open_by_handle_at", argv[1]);
	want = slurp(argv[1], &len);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	got = slurp(path, &len2);
	if (!want || !got || len != len2 || memcmp(want, got, len)) {
		printf("content through the handle differs\n");
		return 1;
	}
	/* A handle naming no inode of the image must be refused, not crash. */
	memset(h.fh.f_handle, 0xff, h.fh.handle_bytes);
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY);
	if (fd >= 0 || errno != ESTALE) {
		printf("bogus handle: expected ESTALE, got %s\n", fd >= 0 ? "success" : errname(errno));
		return 1;
	}
	printf("OK\n");
	return 0;
}

/*
 * Forged handles: FILE's own handle must be of the kernel's
 * FILEID_INO64_GEN type (0x81), carry FILE's st_ino in its first 8 bytes
 * and open; the same handle with OTHER's st_ino, with a bit of the
 * rest flipped, all zeros, or cut to 4 bytes must each give ESTALE.
 * Prints OK or what went wrong.
 */
static int cmd_fhandle_forge(int argc, char **argv)
{
	struct hbuf {
		struct file_handle fh;
		unsigned char buf[128];
	} h = { .fh.handle_bytes = 128 }, f;
	struct stat st, other;
	uint64_t ino;
	int mnt_id, mfd, fd, bad = 0;

	if (argc != 3)
		return 2;
	if (stat(argv[1], &st) || stat(argv[2], &other))
		return die("stat", argv[1]);
	if (name_to_handle_at(AT_FDCWD, argv[1], &h.fh, &mnt_id, 0))
		return die("name_to_handle_at", argv[1]);
	mfd = open(argv[0], O_RDONLY | O_DIRECTORY);
	if (mfd < 0)
		return die("open", argv[0]);
	memcpy(&ino, h.fh.f_handle, sizeof(ino));
	if (h.fh.handle_bytes < 12 || ino != (uint64_t)st.st_ino) {
		printf("handle does not start with st_ino %llu\n",
		       (unsigned long long)st.st_ino);
		bad = 1;
	}
	if (h.fh.handle_type != 0x81) {
		printf("handle type 0x%x, not FILEID_INO64_GEN (0x81)\n",
		       (unsigned int)h.fh.handle_type);
		bad = 1;
	}
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY);
	if (fd < 0) {
		printf("real handle: %s\n", errname(errno));
		bad = 1;
	}
	for (int v = 0; v < 4; v++) {
		static const char *what[] = { "other st_ino", "flipped bit",
					      "zeros", "4 zero bytes" };

		f = h;
		switch (v) {
		case 0:
			ino = other.st_ino;
			memcpy(f.fh.f_handle, &ino, sizeof(ino));
			break;
		case 1:
			((unsigned char *)&f.fh)[sizeof(f.fh) + f.fh.handle_bytes - 1] ^= 1;
			break;
		case 2:
			memset(f.fh.f_handle, 0, f.fh.handle_bytes);
			break;
		case 3:
			f.fh.handle_bytes = 4;
			memset(f.fh.f_handle, 0, 4);
			break;
		}
		fd = open_by_handle_at(mfd, &f.fh, O_RDONLY);
		if (fd >= 0 || errno != ESTALE) {
			printf("forged handle (%s): %s, want ESTALE\n", what[v],
			       fd >= 0 ? "opened" : errname(errno));
			bad = 1;
		}
	}
	if (!bad)
		printf("OK\n");
	return bad;
}

/* A directory handle after the dcache was dropped: prints OK or the errno. */
static int cmd_fhandle_dir(int argc, char **argv)
{
	struct {
		struct file_handle fh;
		unsigned char buf[128];
	} h = { .fh.handle_bytes = 128 };
	int mnt_id, mfd, fd, dc;

	if (argc != 2)
		return 2;
	if (name_to_handle_at(AT_FDCWD, argv[1], &h.fh, &mnt_id, 0))
		return die("name_to_handle_at", argv[1]);
	mfd = open(argv[0], O_RDONLY | O_DIRECTORY);
	if (mfd < 0)
		return die("open", argv[0]);
	dc = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (dc < 0 || write(dc, "2", 1) != 1)
		return die("drop_caches", argv[0]);
	close(dc);
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY);
	printf("%s\n", fd >= 0 ? "OK" : errname(errno));
	return 0;
}

/* ---- directories: getdents with a small buffer, telldir/seekdir ---- */

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static int cmd_getdents(int argc, char **argv)
{
	char buf[280]; /* room for about one long name per call */
	long count = 0, calls = 0;
	int fd;

	if (argc != 1)
		return 2;
	fd = open(argv[0], O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return die("open", argv[0]);
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));

		if (n < 0)
			return die("getdents64", argv[0]);
		if (n == 0)
			break;
		calls++;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);

			if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
				count++;
			off += d->d_reclen;
		}
	}
	printf("%ld\n", count);
	return 0;
}

static int cmd_seekdir(int argc, char **argv)
{
	DIR *d = opendir(argv[0]);
	struct dirent *e;
	long *pos = NULL;
	char **names = NULL;
	int n = 0;

	if (argc != 1 || !d)
		return die("opendir", argv[0]);
	for (;;) {
		long p = telldir(d);

		e = readdir(d);
		if (!e)
			break;
		pos = realloc(pos, (n + 1) * sizeof(*pos));
		names = realloc(names, (n + 1) * sizeof(*names));
		pos[n] = p;
		names[n] = strdup(e->d_name);
		n++;
	}
	if (n < 3) {
		printf("too few entries\n");
		return 1;
	}
	/* Revisit from the end backwards and in the middle. */
	for (int i = n - 1; i >= 0; i -= (n / 7) + 1) {
		seekdir(d, pos[i]);
		e = readdir(d);
		if (!e || strcmp(e->d_name, names[i])) {
			printf("seekdir to entry %d gave %s, want %s\n", i,
			       e ? e->d_name : "(end)", names[i]);
			return 1;
		}
	}
	printf("OK %d\n", n);
	return 0;
}

/*
 * readdir-check [--cold] DIR SEED [NAMES]: one directory, listed every way
 * a program can. The reference is one getdents64 pass with a 32 KiB
 * buffer: "." and ".." once each, no name twice, and (with NAMES, one name
 * a line) exactly those names besides. Then each of these must give the
 * reference, entry for entry (name, d_ino, d_type, d_off): listings with
 * buffers of the longest entry's size, 24 bytes (one dot), 100, 333, 4096
 * and 32768, where a buffer too small for the next entry must fail with
 * EINVAL and leave the position alone; after the end, nothing more, and
 * after lseek to 0 all again; after every other call, back by one entry
 * (so across every place a call ends); two descriptors read in turn; at random
 * points, the position (the last entry's d_off) read on, sought back to
 * and read on again; lseek to a d_off the reference gave; telldir, seekdir
 * and rewinddir through libc, in random order. A seek to the end or past
 * it gives the end (or EINVAL from lseek). With --cold, page cache,
 * dentries and inodes are dropped before each listing and between a tell
 * and its seek. Prints "OK N entries, M checks" or the first differences,
 * and exits 1 on any.
 */
struct rd_ent {
	char *name;
	uint64_t ino;
	int64_t off;
	unsigned char type;
};

struct rd_list {
	struct rd_ent *e;
	size_t n, cap;
};

static struct {
	struct rd_list ref;
	size_t maxreclen;
	unsigned long checks, bad;
	bool cold;
	uint64_t rng;
	const char *dir;
} rd;

static uint64_t rd_rand(uint64_t below)
{
	rd.rng ^= rd.rng << 13;
	rd.rng ^= rd.rng >> 7;
	rd.rng ^= rd.rng << 17;
	return below ? rd.rng % below : 0;
}

static void rd_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rd_bad(const char *fmt, ...)
{
	va_list ap;

	if (rd.bad++ < 10) {
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
	}
}

static void rd_drop(void)
{
	int fd;

	if (!rd.cold)
		return;
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0 || write(fd, "3", 1) != 1)
		rd_bad("drop_caches: %s", errname(errno));
	if (fd >= 0)
		close(fd);
}

static size_t rd_reclen(const char *name)
{
	return (offsetof(struct linux_dirent64, d_name) + strlen(name) + 1 + 7) & ~(size_t)7;
}

static void rd_free(struct rd_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->e[i].name);
	free(l->e);
	memset(l, 0, sizeof(*l));
}

/*
 * getdents64 on @fd with @bufsz-byte buffers until @l has @max entries
 * more or the directory ends; the next entry is reference entry @at. A
 * call that fails with EINVAL must be one whose next entry does not fit
 * (checked against the reference); it is then made again with a buffer
 * that fits. Returns the entries added, or -1 after reporting an error.
 */
static long rd_read(int fd, size_t bufsz, size_t at, size_t max, struct rd_list *l,
		    const char *what)
{
	static char buf[65536] __attribute__((aligned(8)));
	size_t start = l->n;

	while (l->n - start < max) {
		size_t next = at + (l->n - start), want = bufsz;
		long n = syscall(SYS_getdents64, fd, buf, want);

		if (n < 0 && errno == EINVAL && rd.maxreclen) {
			if (next >= rd.ref.n || rd_reclen(rd.ref.e[next].name) <= bufsz) {
				rd_bad("%s: buffer %zu: EINVAL before entry %zu, which fits", what,
				       bufsz, next);
				return -1;
			}
			want = rd.maxreclen;
			n = syscall(SYS_getdents64, fd, buf, want);
		}
		if (n < 0) {
			rd_bad("%s: getdents64 (buffer %zu) at entry %zu: %s", what, want, next,
			       errname(errno));
			return -1;
		}
		if (n == 0)
			break;
		for (long o = 0; o < n;) {
			struct linux_dirent64 *d = (void *)(buf + o);

			if (l->n == l->cap) {
				l->cap = l->cap ? 2 * l->cap : 256;
				l->e = realloc(l->e, l->cap * sizeof(*l->e));
				if (!l->e)
					abort();
			}
			l->e[l->n].name = strdup(d->d_name);
			l->e[l->n].ino = d->d_ino;
			l->e[l->n].off = d->d_off;
			l->e[l->n].type = d->d_type;
			l->n++;
			o += d->d_reclen;
		}
	}
	return l->n - start;
}

/* @l against the reference from entry @at; with @to_end, it must end
 * where the reference does. Frees @l.
 */
static void rd_compare(struct rd_list *l, size_t at, bool to_end, const char *what)
{
	rd.checks++;
	for (size_t i = 0; i < l->n; i++) {
		const struct rd_ent *g = &l->e[i], *r = &rd.ref.e[at + i];

		if (at + i >= rd.ref.n) {
			rd_bad("%s: entry %zu '%s' after the end (%zu entries)", what, at + i,
			       g->name, rd.ref.n);
			break;
		}
		if (strcmp(g->name, r->name) || g->ino != r->ino || g->type != r->type ||
		    g->off != r->off) {
			rd_bad("%s: entry %zu is '%s' ino %llu type %u off %lld, want '%s' ino %llu type %u off %lld",
			       what, at + i, g->name, (unsigned long long)g->ino, g->type,
			       (long long)g->off, r->name, (unsigned long long)r->ino, r->type,
			       (long long)r->off);
			break;
		}
	}
	if (to_end && at + l->n < rd.ref.n)
		rd_bad("%s: ended after entry %zu, want %zu entries", what, at + l->n,
		       rd.ref.n);
	rd_free(l);
}

static int rd_cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **rd_sorted_names(const char *file, size_t *n)
{
	char line[512], **v = NULL;
	FILE *f = fopen(file, "r");

	*n = 0;
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		v = realloc(v, (*n + 1) * sizeof(*v));
		v[(*n)++] = strdup(line);
	}
	fclose(f);
	qsort(v, *n, sizeof(*v), rd_cmp_name);
	return v;
}

/* The reference: one pass, dots once, no name twice, NAMES if given. */
static int rd_reference(const char *names_file)
{
	size_t dots = 0, dotdots = 0, nn = 0, want = 0;
	char **sorted, **names;
	int fd = open(rd.dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		return die("open", rd.dir);
	if (rd_read(fd, 32768, 0, SIZE_MAX, &rd.ref, "reference") < 0)
		return 1;
	close(fd);
	sorted = malloc((rd.ref.n + 1) * sizeof(*sorted));
	for (size_t i = 0; i < rd.ref.n; i++) {
		const char *name = rd.ref.e[i].name;

		if (rd_reclen(name) > rd.maxreclen)
			rd.maxreclen = rd_reclen(name);
		if (!strcmp(name, "."))
			dots++;
		else if (!strcmp(name, ".."))
			dotdots++;
		else
			sorted[nn++] = rd.ref.e[i].name;
	}
	rd.checks++;
	if (dots != 1 || dotdots != 1)
		rd_bad("reference: '.' %zu times, '..' %zu times", dots, dotdots);
	qsort(sorted, nn, sizeof(*sorted), rd_cmp_name);
	for (size_t i = 1; i < nn; i++)
		if (!strcmp(sorted[i - 1], sorted[i]))
			rd_bad("reference: '%s' listed twice", sorted[i]);
	if (names_file) {
		names = rd_sorted_names(names_file, &want);
		if (!names)
			return die("open", names_file);
		rd.checks++;
		if (want != nn)
			rd_bad("reference: %zu names, %s has %zu", nn, names_file, want);
		for (size_t k = 0; k < want && k < nn; k++)
			if (strcmp(names[k], sorted[k])) {
				rd_bad("reference: the %zuth name in order is '%s', %s has '%s'", k,
				       sorted[k], names_file, names[k]);
				break;
			}
	}
	free(sorted);
	return 0;
}

static int rd_open(void)
{
	int fd = open(rd.dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		rd_bad("open %s: %s", rd.dir, errname(errno));
	return fd;
}

/* Read @max entries (SIZE_MAX: to the end) and compare from entry @at. */
static void rd_check_from(int fd, size_t bufsz, size_t at, size_t max, const char *what)
{
	struct rd_list l = { 0 };

	if (rd_read(fd, bufsz, at, max, &l, what) < 0) {
		rd_free(&l);
		return;
	}
	rd_compare(&l, at, max == SIZE_MAX, what);
}

static int cmd_readdir_check(int argc, char **argv)
{
	size_t sizes[] = { 0, 24, 100, 333, 4096, 32768 };
	const size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);
	size_t n;
	char what[160];
	int fd, fds[2];

	if (argc > 0 && !strcmp(argv[0], "--cold")) {
		rd.cold = true;
		argc--;
		argv++;
	}
	if (argc < 2 || argc > 3)
		return 2;
	rd.dir = argv[0];
	rd.rng = strtoull(argv[1], NULL, 0) * 2654435761u + 88172645463325252ULL;
	rd_drop();
	if (rd_reference(argc == 3 ? argv[2] : NULL))
		return 1;
	n = rd.ref.n;
	if (n < 3) {
		printf("%s: only %zu entries\n", rd.dir, n);
		return 1;
	}
	sizes[0] = rd.maxreclen;

	/* Whole listings with every buffer size; the end stays the end;
	 * lseek to 0 starts again.
	 */
	for (size_t s = 0; s < nsizes; s++) {
		struct rd_list l = { 0 };

		rd_drop();
		fd = rd_open();
		if (fd < 0)
			break;
		snprintf(what, sizeof(what), "listing with a %zu-byte buffer", sizes[s]);
		rd_check_from(fd, sizes[s], 0, SIZE_MAX, what);
		rd.checks++;
		if (rd_read(fd, sizes[s], n, 1, &l, what) != 0)
			rd_bad("%s: entries after the end", what);
		rd_free(&l);
		if (lseek(fd, 0, SEEK_SET) != 0)
			rd_bad("%s: lseek to 0: %s", what, errname(errno));
		snprintf(what, sizeof(what), "listing again after lseek to 0, %zu-byte buffer",
			 sizes[(s + 1) % nsizes]);
		rd_check_from(fd, sizes[(s + 1) % nsizes], 0, SIZE_MAX, what);
		close(fd);
	}

	/* After every other call, back by one entry: the call that follows
	 * starts one before where the last ended, which finds each place a
	 * call can end (a chunk's end, a buffer's) and steps back over it.
	 */
	for (size_t s = 0; s < nsizes; s += 3) {
		size_t at = 0, calls = 0;

		fd = rd_open();
		if (fd < 0)
			break;
		snprintf(what, sizeof(what), "stepping back one entry, %zu-byte buffer", sizes[s]);
		while (at < n) {
			struct rd_list l = { 0 };
			long got = rd_read(fd, sizes[s], at, 1, &l, what);

			if (got <= 0) {
				rd_free(&l);
				if (got == 0)
					rd_bad("%s: ended after %zu entries, want %zu", what, at, n);
				break;
			}
			rd_compare(&l, at, false, what);
			at += got;
			if (++calls % 2 == 0 || at < 2 || at == n)
				continue;
			at--;
			if (lseek(fd, rd.ref.e[at - 1].off, SEEK_SET) != rd.ref.e[at - 1].off) {
				rd_bad("%s: lseek to %lld: %s", what, (long long)rd.ref.e[at - 1].off,
				       errname(errno));
				break;
			}
		}
		close(fd);
	}

	/* Two descriptors, read in turn with different buffers. */
	fds[0] = rd_open();
	fds[1] = rd_open();
	if (fds[0] >= 0 && fds[1] >= 0) {
		size_t at[2] = { 0, 0 };
		bool end[2] = { false, false };

		while (!end[0] || !end[1]) {
			for (int i = 0; i < 2; i++) {
				struct rd_list l = { 0 };
				long got;

				if (end[i])
					continue;
				snprintf(what, sizeof(what), "descriptor %d of two", i + 1);
				got = rd_read(fds[i], i ? 4096 : 333, at[i], 1 + rd_rand(150), &l, what);
				if (got <= 0) {
					if (got == 0 && at[i] != n)
						rd_bad("%s: ended after %zu entries, want %zu", what, at[i], n);
					end[i] = true;
					rd_free(&l);
					continue;
				}
				rd_compare(&l, at[i], false, what);
				at[i] += got;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);

	/* At random points: tell, read on, seek back, read on again. */
	for (int k = 0; k < 40; k++) {
		size_t bufsz = sizes[rd_rand(nsizes)], at = 0;
		size_t calls = rd_rand(k < 20 ? 8 : 300), span = 1 + rd_rand(300);
		struct rd_list l = { 0 };
		long got = 0;
		off_t pos;

		fd = rd_open();
		if (fd < 0)
			break;
		for (size_t c = 0; c < calls; c++) {
			got = rd_read(fd, bufsz, at, 1, &l, "reading to a tell");
			if (got <= 0)
				break;
			at += got;
		}
		rd_free(&l);
		if (got < 0) {
			close(fd);
			continue;
		}
		pos = lseek(fd, 0, SEEK_CUR);
		rd.checks++;
		if (at > 0 && pos != rd.ref.e[at - 1].off)
			rd_bad("tell after %zu entries: %lld, want the last d_off %lld", at,
			       (long long)pos, (long long)rd.ref.e[at - 1].off);
		snprintf(what, sizeof(what), "reading on from a tell at entry %zu", at);
		rd_check_from(fd, sizes[rd_rand(nsizes)], at, span, what);
		rd_drop();
		if (lseek(fd, pos, SEEK_SET) != pos)
			rd_bad("seek back to %lld: %s", (long long)pos, errname(errno));
		snprintf(what, sizeof(what), "reading on after seeking back to entry %zu", at);
		rd_check_from(fd, sizes[rd_rand(nsizes)], at, k % 4 ? span : SIZE_MAX, what);
		close(fd);
	}

	/* lseek to the d_off of an entry: the next one follows. */
	fd = rd_open();
	for (int k = 0; fd >= 0 && k < 60; k++) {
		size_t i = k == 0 ? 0 : k == 1 ? n - 2 : rd_rand(n - 1);

		if (lseek(fd, rd.ref.e[i].off, SEEK_SET) != rd.ref.e[i].off) {
			rd_bad("lseek to the d_off of entry %zu (%lld): %s", i,
			       (long long)rd.ref.e[i].off, errname(errno));
			continue;
		}
		snprintf(what, sizeof(what), "after lseek to the d_off of entry %zu", i);
		rd_check_from(fd, sizes[rd_rand(nsizes)], i + 1, 1 + rd_rand(50), what);
	}
	/* To the end and past it: nothing more. */
	if (fd >= 0) {
		int64_t last = rd.ref.e[n - 1].off;
		int64_t past[] = { 0, 1, 4096, 1000000, (int64_t)1 << 40 };

		for (size_t e = 0; e < sizeof(past) / sizeof(past[0]); e++) {
			struct rd_list l = { 0 };
			int64_t to = past[e];
			long got;

			if (e < 4) { /* past the last d_off, unless that is an end marker */
				if (last > INT64_MAX - past[e])
					continue;
				to = last + past[e];
			} else if (to <= last) {
				continue;
			}
			rd.checks++;
			if (lseek(fd, to, SEEK_SET) != to) {
				if (errno != EINVAL)
					rd_bad("lseek past the end (%lld): %s", (long long)to,
					       errname(errno));
				continue;
			}
			got = rd_read(fd, 4096, n, 1, &l, "past the end");
			if (got != 0)
				rd_bad("getdents64 at %lld, at or past the end (%lld): %ld entries%s%s",
				       (long long)to, (long long)last, got, got > 0 ? ", the first " : "",
				       got > 0 ? l.e[0].name : "");
			rd_free(&l);
		}
		close(fd);
	}

	/* libc: telldir at random entries, seekdir to them in random order. */
	DIR *d = opendir(rd.dir);
	if (!d) {
		rd_bad("opendir: %s", errname(errno));
	} else {
		enum { NPOS = 30 };
		size_t idx[NPOS], i;
		long tells[NPOS];
		struct dirent *e;

		for (size_t t = 0; t < NPOS; t++)
			idx[t] = rd_rand(n);
		for (i = 0; i < n; i++) {
			for (size_t t = 0; t < NPOS; t++)
				if (idx[t] == i)
					tells[t] = telldir(d);
			e = readdir(d);
			if (!e || strcmp(e->d_name, rd.ref.e[i].name)) {
				rd_bad("readdir: entry %zu is '%s', want '%s'", i,
				       e ? e->d_name : "(end)", rd.ref.e[i].name);
				break;
			}
		}
		rd.checks++;
		if (i == n && readdir(d))
			rd_bad("readdir: entries after the end");
		for (size_t t = 0; t < NPOS && i == n; t++) {
			size_t p = rd_rand(NPOS);

			if (t % 10 == 0)
				rd_drop();
			seekdir(d, tells[p]);
			rd.checks++;
			for (size_t j = idx[p]; j < n && j < idx[p] + 20; j++) {
				e = readdir(d);
				if (!e || strcmp(e->d_name, rd.ref.e[j].name)) {
					rd_bad("seekdir to entry %zu: entry %zu is '%s', want '%s'",
					       idx[p], j, e ? e->d_name : "(end)", rd.ref.e[j].name);
					break;
				}
			}
		}
		rewinddir(d);
		rd.checks++;
		for (i = 0; i < n; i++) {
			e = readdir(d);
			if (!e || strcmp(e->d_name, rd.ref.e[i].name)) {
				rd_bad("after rewinddir: entry %zu is '%s', want '%s'", i,
				       e ? e->d_name : "(end)", rd.ref.e[i].name);
				break;
			}
		}
		closedir(d);
	}

	if (rd.bad) {
		printf("%s: %lu of %lu checks failed (seed %s%s)\n", rd.dir, rd.bad, rd.checks,
		       argv[1], rd.cold ? ", cold" : "");
		return 1;
	}
	printf("OK %zu entries, %lu checks\n", n, rd.checks);
	return 0;
}

/* fibmap FILE OFFSET: the byte offset on its device of the block holding
 * byte OFFSET of FILE (FIBMAP), to change a file's data behind its
 * filesystem. Prints the offset, or the errno.
 */
static int cmd_fibmap(int argc, char **argv)
{
	struct stat st;
	int fd, blk;

	if (argc != 2)
		return 2;
	fd = open(argv[0], O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		return die("open", argv[0]);
	blk = (int)(strtoull(argv[1], NULL, 0) / st.st_blksize);
	if (ioctl(fd, FIBMAP, &blk))
		return die("FIBMAP", argv[0]);
	if (blk == 0) {
		printf("%s: no block at %s\n", argv[0], argv[1]);
		return 1;
	}
	printf("%llu\n", (unsigned long long)blk * st.st_blksize);
	close(fd);
	return 0;
}

/* lstat DIR/NAME for each line NAME of LIST: prints ok=N enoent=N other=N,
 * with the first other errno.
 */
static int cmd_lookups(int argc, char **argv)
{
	long ok = 0, enoent = 0, other = 0;
	const char *first = "";
	char line[512], path[PATH_MAX];
	struct stat st;
	FILE *f;

	if (argc != 2)
		return 2;
	f = fopen(argv[1], "r");
	if (!f)
		return die("open", argv[1]);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(path, sizeof(path), "%s/%s", argv[0], line);
		if (!lstat(path, &st))
			ok++;
		else if (errno == ENOENT)
			enoent++;
		else if (other++ == 0)
			first = errname(errno);
	}
	fclose(f);
	printf("ok=%ld enoent=%ld other=%ld%s%s\n", ok, enoent, other,
	       *first ? ":" : "", first);
	return 0;
}

/* ---- xattrs ---- */

static int cmd_xattr_erange(int argc, char **argv)
{
	char small[1];
	ssize_t need;

	if (argc != 2)
		return 2;
	need = lgetxattr(argv[0], argv[1], NULL, 0);
	if (need < 2) {
		printf("size query: %zd (%s), want >= 2\n", need, errname(errno));
		return 1;
	}
	if (lgetxattr(argv[0], argv[1], small, 1) >= 0 || errno != ERANGE) {
		printf("getxattr short buffer: want ERANGE, got %s\n", errname(errno));
		return 1;
	}
	need = llistxattr(argv[0], NULL, 0);
	if (need < 2 || llistxattr(argv[0], small, 1) >= 0 || errno != ERANGE) {
		printf("listxattr short buffer: want ERANGE, got %s\n", errname(errno));
		return 1;
	}
	if (lgetxattr(argv[0], "user.no-such-attribute", NULL, 0) >= 0 || errno != ENODATA) {
		printf("missing xattr: want ENODATA, got %s\n", errname(errno));
		return 1;
	}
	printf("OK\n");
	return 0;
}

/* ---- page cache residency, statfs, EROFS ---- */

static int cmd_resident(int argc, char **argv)
{
	struct stat st;
	unsigned char *vec;
	long pages, res = 0, psz = sysconf(_SC_PAGESIZE);
	void *p;
	int fd;

	if (argc != 1)
		return 2;
	fd = open(argv[0], O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		return die("open", argv[0]);
	pages = (st.st_size + psz - 1) / psz;
	p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return die("mmap", argv[0]);
	vec = malloc(pages);
	if (mincore(p, st.st_size, vec))
		return die("mincore", argv[0]);
	for (long i = 0; i < pages; i++)
		res += vec[i] & 1;
	printf("%ld %ld\n", res, pages);
	return 0;
}

static int cmd_evict(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);

		if (fd < 0)
			return die("open", argv[i]);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	return 0;
}

static int cmd_statfs(int argc, char **argv)
{
	struct statfs s;

	if (argc != 1)
		return 2;
	if (statfs(argv[0], &s))
		return die("statfs", argv[0]);
	printf("type=%lx namelen=%ld blocks=%llu bsize=%ld\n", (unsigned long)s.f_type,
	       (long)s.f_namelen, (unsigned long long)s.f_blocks, (long)s.f_bsize);
	return 0;
}

static int expect_erofs(const char *what, int r)
{
	if (r >= 0 || errno != EROFS) {
		printf("%s: want EROFS, got %s\n", what, r >= 0 ? "success" : errname(errno));
		return 1;
	}
	return 0;
}

static int cmd_erofs(int argc, char **argv)
{
	const char *file = argv[0], *dir = argv[1];
	char p[8192];
	int bad = 0;

	if (argc != 2)
		return 2;
	snprintf(p, sizeof(p), "%s/new-file", dir);
	bad |= expect_erofs("open O_WRONLY", open(file, O_WRONLY));
	bad |= expect_erofs("open O_RDWR", open(file, O_RDWR));
	bad |= expect_erofs("open O_TRUNC", open(file, O_RDONLY | O_TRUNC));
	bad |= expect_erofs("create", open(p, O_CREAT | O_WRONLY, 0644));
	bad |= expect_erofs("mkdir", mkdir(p, 0755));
	bad |= expect_erofs("unlink", unlink(file));
	bad |= expect_erofs("chmod", chmod(file, 0777));
	bad |= expect_erofs("setxattr", lsetxattr(file, "user.x", "1", 1, 0));
	bad |= expect_erofs("truncate", truncate(file, 0));
	if (!bad)
		printf("OK\n");
	return bad;
}

/* ---- now, readlist: timing for bench/lazy.sh ---- */

static int cmd_now(int argc, char **argv)
{
	struct timespec ts;

	(void)argv;
	if (argc != 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("%lld%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	return 0;
}

/* Read every file LIST names (one path a line, relative to ROOT) in full. */
static int cmd_readlist(int argc, char **argv)
{
	static char buf[1 << 16];
	char line[8192], path[16384];
	unsigned long long files = 0, bytes = 0, errors = 0;
	FILE *list;

	if (argc != 2)
		return 2;
	list = fopen(argv[1], "r");
	if (!list)
		return die("open", argv[1]);
	while (fgets(line, sizeof(line), list)) {
		ssize_t n;
		int fd;

		line[strcspn(line, "\n")] = '\0';
		snprintf(path, sizeof(path), "%s/%s", argv[0], line);
		fd = open(path, O_RDONLY);
		if (fd < 0) {
			printf("error %s: open %s\n", line, errname(errno));
			errors++;
			continue;
		}
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			bytes += (unsigned long long)n;
		if (n < 0) {
			printf("error %s: read %s\n", line, errname(errno));
			errors++;
		}
		close(fd);
		files++;
	}
	fclose(list);
	printf("files=%llu bytes=%llu errors=%llu\n", files, bytes, errors);
	return errors ? 1 : 0;
}

/* ---- O_DIRECT changed by fcntl(F_SETFL) ---- */

/* An unaligned read (offset 1 into an unaligned buffer): 0 when it gave
 * the bytes @want holds there, else the errno (EINVAL: it went direct).
 */
static int unaligned_read(int fd, const char *want, size_t len)
{
	static char buf[4096 + 1];
	ssize_t n = pread(fd, buf + 1, 512, 1);

	if (n < 0)
		return errno;
	if ((size_t)n != (len > 513 ? 512 : len - 1) || memcmp(buf + 1, want + 1, n))
		return EBADMSG;
	return 0;
}

static int set_direct(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, on ? fl | O_DIRECT : fl & ~O_DIRECT);
}

/* FILE (at least 1 KiB, on a filesystem that does direct I/O): opened with
 * O_DIRECT an unaligned read fails; with O_DIRECT cleared by fcntl it
 * works; opened buffered, then O_DIRECT set by fcntl, it fails again.
 */
static int cmd_direct_fcntl(int argc, char **argv)
{
	size_t len;
	char *want;
	int fd, e;

	if (argc != 1)
		return 2;
	want = slurp(argv[0], &len);
	if (!want || len < 1024)
		return die("read", argv[0]);
	fd = open(argv[0], O_RDONLY | O_DIRECT);
	if (fd < 0)
		return die("open O_DIRECT", argv[0]);
	e = unaligned_read(fd, want, len);
	if (e != EINVAL) {
		printf("opened O_DIRECT: unaligned read gave %s, not EINVAL\n", errname(e));
		return 1;
	}
	if (set_direct(fd, false))
		return die("fcntl clear O_DIRECT", argv[0]);
	e = unaligned_read(fd, want, len);
	if (e) {
		printf("O_DIRECT cleared: unaligned read gave %s\n", errname(e));
		return 1;
	}
	close(fd);
	fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		return die("open", argv[0]);
	if (set_direct(fd, true))
		return die("fcntl set O_DIRECT", argv[0]);
	e = unaligned_read(fd, want, len);
	if (e != EINVAL) {
		printf("O_DIRECT set: unaligned read gave %s, not EINVAL\n", errname(e));
		return 1;
	}
	close(fd);
	printf("OK\n");
	return 0;
}

/* Open FILE with O_DIRECT and read it; print OK or the failing step. */
static int cmd_open_direct(int argc, char **argv)
{
	static char buf[4096] __attribute__((aligned(4096)));
	int fd;

	if (argc != 1)
		return 2;
	fd = open(argv[0], O_RDONLY | O_DIRECT);
	if (fd < 0) {
		printf("open %s\n", errname(errno));
		return 1;
	}
	if (read(fd, buf, sizeof(buf)) < 0) {
		printf("read %s\n", errname(errno));
		return 1;
	}
	close(fd);
	printf("OK\n");
	return 0;
}

/* ---- opens of one file that share its backing file ---- */

/* pread N bytes (at most 64 KiB) at OFF from FD and compare them with
 * WANT (LEN bytes) there: 0, the errno, or EBADMSG for other bytes. N is
 * asked for whole, so that an aligned O_DIRECT read stays aligned at the
 * end of the file. */
static int check_pread(int fd, const char *want, size_t len, off_t off, size_t n)
{
	static char buf[65536] __attribute__((aligned(4096)));
	size_t have;
	ssize_t got;

	if (off >= (off_t)len || n > sizeof(buf))
		return EINVAL;
	have = len - off < n ? len - off : n;
	got = pread(fd, buf, n, off);
	if (got < 0)
		return errno;
	if ((size_t)got != have || memcmp(buf, want + off, have))
		return EBADMSG;
	return 0;
}

/* read N bytes at FD's position and compare them with WANT at AT. */
static int check_read(int fd, const char *want, size_t len, off_t at, size_t n)
{
	char buf[4096];
	ssize_t got;

	if (n > sizeof(buf) || at + n > len)
		return EINVAL;
	got = read(fd, buf, n);
	if (got < 0)
		return errno;
	if ((size_t)got != n || memcmp(buf, want + at, n))
		return EBADMSG;
	return 0;
}

/* One of the processes of cmd_share: ROUNDS opens, each with flags of its
 * round (plain, O_NONBLOCK, O_DIRECT, O_NOATIME), a pread at an offset of
 * its own, and, on one kept descriptor, O_DIRECT set and cleared with
 * fcntl between them. Returns 0 or prints what went wrong. */
static int share_worker(const char *path, const char *want, size_t len,
			int id, int rounds, bool direct)
{
	static const int flags[] = { 0, O_NONBLOCK, O_DIRECT, O_NOATIME };
	int kept = open(path, O_RDONLY), e;

	if (kept < 0)
		return die("open", path);
	for (int i = 0; i < rounds; i++) {
		int fl = flags[(i + id) % 4], fd;
		/* aligned for O_DIRECT; the others at any offset */
		off_t off = (off_t)((i * 7919 + id * 104729) % (len ? len : 1));

		if (fl == O_DIRECT && !direct)
			fl = 0;
		if (fl == O_DIRECT)
			off &= ~(off_t)4095;
		fd = open(path, O_RDONLY | fl);
		if (fd < 0)
			return die("open", path);
		e = check_pread(fd, want, len, off, fl == O_DIRECT ? 4096 : 3000);
		if (e) {
			printf("worker %d: open flags %#x: pread at %lld: %s\n", id, fl,
			       (long long)off, errname(e));
			return 1;
		}
		close(fd);
		/* The kept descriptor: with O_DIRECT set an unaligned read fails,
		 * cleared it works; the other processes' opens must not see it. */
		if (direct && id == 0 && len > 1024) {
			if (set_direct(kept, i % 2 == 0))
				return die("fcntl", path);
			e = unaligned_read(kept, want, len);
			if (e != (i % 2 == 0 ? EINVAL : 0)) {
				printf("worker 0: O_DIRECT %s by fcntl: unaligned read gave %s\n",
				       i % 2 == 0 ? "set" : "cleared", errname(e));
				return 1;
			}
		} else if (len > 1024) {
			e = unaligned_read(kept, want, len);
			if (e) {
				printf("worker %d: unaligned read on a buffered open gave %s\n",
				       id, errname(e));
				return 1;
			}
		}
	}
	close(kept);
	return 0;
}

/* Is the mapping at P shown in /proc/self/maps with the path PATH? */
static bool maps_path(const void *p, const char *path)
{
	char line[4096], want[64];
	FILE *f = fopen("/proc/self/maps", "r");
	bool ok = false;

	if (!f)
		return false;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, want, strlen(want)))
			continue;
		line[strcspn(line, "\n")] = 0;
		ok = strlen(line) >= strlen(path) &&
		     !strcmp(line + strlen(line) - strlen(path), path);
		if (!ok)
			printf("maps: %s\n", line);
		break;
	}
	fclose(f);
	return ok;
}

/*
 * Opens of FILE (an absolute path, at least 8 KiB) that share one backing
 * file keep what is each open's own: positions (reads at independent
 * offsets), O_DIRECT set and cleared with fcntl on one while the others
 * read unaligned, O_NONBLOCK, O_DIRECT and O_NOATIME opens; then PROCS
 * processes opening it ROUNDS times each at once, and a mapping that
 * outlives its open, shown in /proc/self/maps with FILE's path.
 */
static int cmd_share(int argc, char **argv)
{
	const char *path;
	size_t len;
	char *want, *p;
	int a, b, c, n, procs, rounds, status, bad = 0;
	bool direct;

	if (argc != 3)
		return 2;
	path = argv[0];
	procs = atoi(argv[1]);
	rounds = atoi(argv[2]);
	want = slurp(path, &len);
	if (!want || len < 8192)
		return die("read", path);

	/* Positions: each descriptor reads on from where it was. */
	a = open(path, O_RDONLY);
	b = open(path, O_RDONLY | O_NONBLOCK);
	n = open(path, O_RDONLY | O_NOATIME);
	if (a < 0 || b < 0 || n < 0)
		return die("open", path);
	if (lseek(b, len / 2, SEEK_SET) != (off_t)len / 2 ||
	    check_read(a, want, len, 0, 1000) || check_read(b, want, len, len / 2, 1000) ||
	    check_read(n, want, len, 0, 10) || check_read(a, want, len, 1000, 1000) ||
	    check_read(b, want, len, len / 2 + 1000, 100) ||
	    lseek(a, 0, SEEK_CUR) != 2000 || lseek(b, 0, SEEK_CUR) != (off_t)len / 2 + 1100 ||
	    lseek(n, 0, SEEK_CUR) != 10) {
		printf("positions: a read or a position is not each descriptor's own\n");
		return 1;
	}

	/* O_DIRECT where the backing filesystem has it, on one descriptor. */
	c = open(path, O_RDONLY | O_DIRECT);
	direct = c >= 0;
	if (!direct && errno != EINVAL)
		return die("open O_DIRECT", path);
	if (direct) {
		if (unaligned_read(c, want, len) != EINVAL || unaligned_read(a, want, len) ||
		    unaligned_read(b, want, len)) {
			printf("O_DIRECT: an open's flag reached another open's reads\n");
			return 1;
		}
		if (set_direct(b, true) || unaligned_read(b, want, len) != EINVAL ||
		    unaligned_read(a, want, len) || set_direct(b, false) ||
		    unaligned_read(b, want, len) || set_direct(c, false) ||
		    unaligned_read(c, want, len)) {
			printf("fcntl O_DIRECT: not the descriptor's own\n");
			return 1;
		}
		close(c);
	}
	close(a);
	close(b);
	close(n);

	/* Many processes, many opens, all at once. */
	fflush(stdout);
	for (int i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return die("fork", path);
		if (pid == 0) {
			int r = share_worker(path, want, len, i, rounds, direct);

			fflush(stdout);
			_exit(r);
		}
	}
	for (int i = 0; i < procs; i++) {
		if (wait(&status) < 0)
			return die("wait", path);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	if (bad) {
		printf("%d of %d processes failed\n", bad, procs);
		return 1;
	}

	/* A mapping outlives its open, and shows the composefs path. */
	a = open(path, O_RDONLY);
	if (a < 0)
		return die("open", path);
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, a, 0);
	if (p == MAP_FAILED)
		return die("mmap", path);
	close(a);
	if (memcmp(p, want, len)) {
		printf("mmap: content differs after the open was closed\n");
		return 1;
	}
	if (!maps_path(p, path)) {
		printf("mmap: /proc/self/maps does not show %s\n", path);
		return 1;
	}
	munmap(p, len);
	printf("OK%s\n", direct ? "" : " (no O_DIRECT here)");
	return 0;
}

/* ---- credentials ---- */

/*
 * Run CMD as root without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: root's
 * capabilities after execve are its bounding set, so dropping them there
 * is enough.
 */
static int cmd_dropcaps(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	if (prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) ||
	    prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH, 0, 0, 0))
		return die("prctl", "PR_CAPBSET_DROP");
	execvp(argv[0], argv);
	return die("exec", argv[0]);
}

/* Run CMD with uid and gid UID, no supplementary groups, no capabilities. */
static int cmd_asuser(int argc, char **argv)
{
	unsigned int id;

	if (argc < 2 || sscanf(argv[0], "%u", &id) != 1)
		return 2;
	if (setgroups(0, NULL) || setgid(id) || setuid(id))
		return die("setuid", argv[0]);
	execvp(argv[1], argv + 1);
	return die("exec", argv[1]);
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/*
 * userns "INSIDE OUTSIDE COUNT" CMD...: a child process makes a user
 * namespace, this one writes MAP as its uid_map and gid_map, then runs CMD
 * with CFS_USERNS=/proc/CHILD/ns/user; the child lives until CMD ends.
 * Exits with CMD's status.
 */
static int cmd_userns(int argc, char **argv)
{
	int ready[2], hold[2], status;
	char path[64], map[128], c;
	pid_t child, cmd;

	if (argc < 2 || pipe(ready) || pipe(hold))
		return 2;
	child = fork();
	if (child < 0)
		return die("fork", "userns");
	if (child == 0) {
		close(ready[0]);
		close(hold[1]);
		if (unshare(CLONE_NEWUSER))
			_exit(1);
		close(ready[1]);
		while (read(hold[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	if (read(ready[0], &c, 1) != 0 || waitpid(child, &status, WNOHANG) != 0) {
		printf("userns: the child could not unshare\n");
		return 1;
	}
	snprintf(map, sizeof(map), "%s\n", argv[0]);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", child);
	if (write_file(path, map))
		return die("write", path);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", child);
	if (write_file(path, map))
		return die("write", path);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", child);
	setenv("CFS_USERNS", path, 1);
	fflush(stdout);
	cmd = fork();
	if (cmd == 0) {
		close(hold[1]);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	status = 1 << 8;
	if (cmd > 0)
		waitpid(cmd, &status, 0);
	close(hold[1]);
	waitpid(child, NULL, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* ---- SEEK_DATA/SEEK_HOLE, fsnotify ---- */

/* The first data and hole from 0, and the data after that hole. */
static int cmd_seek(int argc, char **argv)
{
	off_t d0, h0, d1;
	int fd;

	if (argc != 1)
		return 2;
	fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		return die("open", argv[0]);
	d0 = lseek(fd, 0, SEEK_DATA);
	h0 = lseek(fd, 0, SEEK_HOLE);
	d1 = h0 < 0 ? -1 : lseek(fd, h0, SEEK_DATA);
	if (d0 < 0 || h0 < 0 || d1 < 0)
		return die("lseek", argv[0]);
	printf("data=%lld hole=%lld next-data=%lld\n", (long long)d0, (long long)h0,
	       (long long)d1);
	close(fd);
	return 0;
}

/* Where SEEK_END puts descriptor FD, inherited open (a new open may fail). */
static int cmd_seek_end(int argc, char **argv)
{
	char *end;
	long fd;
	off_t pos;

	if (argc != 1)
		return 2;
	fd = strtol(argv[0], &end, 10);
	if (*end || fd < 0 || fd > INT_MAX)
		return 2;
	pos = lseek((int)fd, 0, SEEK_END);
	if (pos < 0)
		return die("lseek", argv[0]);
	printf("%lld\n", (long long)pos);
	return 0;
}

/* Run @argv in a child, stdout flushed first: its PID, or -1. */
static pid_t spawn(char **argv)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Run CMD and print how many open and access events FILE saw meanwhile. */
static int cmd_inotify(int argc, char **argv)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int fd, status, events = 0;
	pid_t pid;
	ssize_t n;

	if (argc < 2)
		return 2;
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0 || inotify_add_watch(fd, argv[0], IN_ACCESS | IN_OPEN) < 0)
		return die("inotify", argv[0]);
	pid = spawn(argv + 1);
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return die("run", argv[1]);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n;
		     p += sizeof(struct inotify_event) + ((struct inotify_event *)p)->len)
			events++;
	printf("events=%d\n", events);
	return 0;
}

/*
 * swap-on-open N FILE OTHER CMD...: an attacker who swaps two names at the
 * worst moment, made exact. CMD runs while every open of FILE's inode
 * waits on a fanotify permission event; while the Nth open waits (its
 * path already looked up, so the file it opens is FILE's inode), FILE and
 * OTHER are exchanged by renameat2(RENAME_EXCHANGE), and then the open goes
 * on. A program that measures the file it opened and then looks the name
 * up again to use it is given OTHER from then on. Prints "opens=K
 * swapped=0|1" and exits with CMD's status.
 */
static int cmd_swap_on_open(int argc, char **argv)
{
	int fan, status = 0, opens = 0, swapped = 0, n;
	bool done = false;
	pid_t pid;

	if (argc < 4)
		return 2;
	n = atoi(argv[0]);
	fan = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY);
	if (fan < 0)
		return die("fanotify_init", argv[1]);
	if (fanotify_mark(fan, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, argv[1]) < 0)
		return die("fanotify_mark", argv[1]);
	pid = spawn(argv + 3);
	if (pid < 0)
		return die("run", argv[3]);
	while (!done) {
		struct fanotify_event_metadata buf[16], *ev;
		struct pollfd pfd = { .fd = fan, .events = POLLIN };
		ssize_t len;

		if (waitpid(pid, &status, WNOHANG) == pid)
			done = true;
		if (poll(&pfd, 1, done ? 0 : 50) <= 0)
			continue;
		len = read(fan, buf, sizeof(buf));
		for (ev = buf; len > 0 && FAN_EVENT_OK(ev, len); ev = FAN_EVENT_NEXT(ev, len)) {
			struct fanotify_response resp = { .fd = ev->fd, .response = FAN_ALLOW };

			if (++opens == n && syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD,
						    argv[2], RENAME_EXCHANGE) == 0)
				swapped = 1;
			if (write(fan, &resp, sizeof(resp)) < 0)
				return die("fanotify response", argv[1]);
			if (ev->fd >= 0)
				close(ev->fd);
		}
	}
	printf("opens=%d swapped=%d\n", opens, swapped);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* lsetxattr(PATH, NAME, VALUE): busybox has no setfattr. */
/*
 * xattrs PATH [NAME...]: the names llistxattr gives, sorted, each with
 * lgetxattr's answer ("name=hex" or "name:ERRNO"), then each NAME asked
 * for by lgetxattr the same way; on one line.
 */
static int cmd_xattrs(int argc, char **argv)
{
	char v[256];
	int err;

	if (argc < 1)
		return 2;
	printf("list");
	err = list_xattrs(argv[0]);
	if (err)
		printf(" listxattr:%s", errname(-err));
	for (int i = 1; i < argc; i++) {
		ssize_t vl = lgetxattr(argv[0], argv[i], v, sizeof(v));

		printf(" get:%s", argv[i]);
		if (vl < 0) {
			printf(":%s", errname(errno));
			continue;
		}
		putchar('=');
		for (ssize_t j = 0; j < vl; j++)
			printf("%02x", (unsigned char)v[j]);
	}
	putchar('\n');
	return 0;
}

static int cmd_setxattr(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	if (lsetxattr(argv[0], argv[1], argv[2], strlen(argv[2]), 0))
		return die("setxattr", argv[0]);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;
} cmds[] = {
	{ "walk", cmd_walk, "DIR" },
	{ "now", cmd_now, "" },
	{ "readlist", cmd_readlist, "ROOT LIST" },
	{ "verity-enable", cmd_verity_enable, "FILE..." },
	{ "verity-measure", cmd_verity_measure, "FILE" },
	{ "mount", cmd_mount, "IMAGE MNT OPTIONS" },
	{ "remount", cmd_remount, "MNT OPTIONS" },
	{ "read", cmd_read, "FILE" },
	{ "open-excl", cmd_open_excl, "DEV" },
	{ "mmap", cmd_mmap, "FILE" },
	{ "direct", cmd_direct, "FILE" },
	{ "mmap-empty", cmd_mmap_empty, "FILE" },
	{ "sendfile", cmd_sendfile, "FILE" },
	{ "fhandle", cmd_fhandle, "MNT FILE" },
	{ "fhandle-dir", cmd_fhandle_dir, "MNT DIR" },
	{ "fhandle-forge", cmd_fhandle_forge, "MNT FILE OTHER" },
	{ "getdents", cmd_getdents, "DIR" },
	{ "seekdir", cmd_seekdir, "DIR" },
	{ "readdir-check", cmd_readdir_check, "[--cold] DIR SEED [NAMES]" },
	{ "fibmap", cmd_fibmap, "FILE OFFSET" },
	{ "lookups", cmd_lookups, "DIR LIST" },
	{ "xattr-erange", cmd_xattr_erange, "PATH NAME" },
	{ "resident", cmd_resident, "FILE" },
	{ "evict", cmd_evict, "FILE..." },
	{ "statfs", cmd_statfs, "PATH" },
	{ "erofs", cmd_erofs, "FILE DIR" },
	{ "direct-fcntl", cmd_direct_fcntl, "FILE" },
	{ "open-direct", cmd_open_direct, "FILE" },
	{ "share", cmd_share, "FILE PROCS ROUNDS" },
	{ "seek", cmd_seek, "FILE" },
	{ "seek-end", cmd_seek_end, "FD" },
	{ "setxattr", cmd_setxattr, "PATH NAME VALUE" },
	{ "xattrs", cmd_xattrs, "PATH [NAME...]" },
	{ "inotify", cmd_inotify, "FILE CMD..." },
	{ "swap-on-open", cmd_swap_on_open, "N FILE OTHER CMD..." },
	{ "dropcaps", cmd_dropcaps, "CMD..." },
	{ "asuser", cmd_asuser, "UID CMD..." },
	{ "userns", cmd_userns, "'INSIDE OUTSIDE COUNT' CMD..." },
};

int main(int argc, char **argv)
{
	if (argc >= 2) {
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (!strcmp(argv[1], cmds[i].name)) {
				int r = cmds[i].fn(argc - 2, argv + 2);

				if (fflush(stdout))
					return 1;
				return r;
			}
	}
	fprintf(stderr, "usage: cfs-vmtool COMMAND ARGS\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(stderr, "  %s %s\n", cmds[i].name, cmds[i].args);
	return 2;
}
