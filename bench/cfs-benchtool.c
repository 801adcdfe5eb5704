// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The guest side of 'make bench': each command does one measured operation
 * on a mounted tree and prints one line, "NS COUNT BYTES PGPGIN", the
 * elapsed monotonic time in nanoseconds, how many things it did (inodes,
 * entries, files, reads), how many bytes it read, and how many KiB the
 * kernel read from block devices meanwhile (the pgpgin delta of
 * /proc/vmstat). Static, so it runs in the busybox initramfs; it stands in
 * for fio there (whose Debian build drags in 80 MB of shared libraries).
 *
 * Usage: cfs-benchtool walk DIR          lstat every inode below DIR
 *        cfs-benchtool run CMD [ARG]...  run CMD with stdout to /dev/null
 *        cfs-benchtool stat ROOT LIST [N]
 *                                        lstat each path of LIST under ROOT,
 *                                        N times over (1); the time and
 *                                        count printed are those of one pass
 *        cfs-benchtool readdir DIR       read the entries of DIR (no stat)
 *        cfs-benchtool readall DIR       read every regular file below DIR
 *        cfs-benchtool readlist ROOT LIST
 *                                        open and read each path of LIST
 *                                        under ROOT (the store's objects)
 *        cfs-benchtool seq FILE          read FILE in 4 KiB read()s
 *        cfs-benchtool rand FILE N       N 4 KiB pread()s at fixed random
 *                                        4 KiB-aligned offsets
 *        cfs-benchtool cached            print Cached+Buffers of
 *                                        /proc/meminfo in KiB
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t count, bytes, per_pass = 1;
static char buf[1 << 17];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t vmstat(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	uint64_t v = 0;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ' ') {
			v = strtoull(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static uint64_t meminfo_kib(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	uint64_t v = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = strtoull(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "cfs-benchtool: %s: '%s': %s\n", what, path, strerror(errno));
	exit(1);
}

static void read_fd(int fd, const char *path)
{
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		bytes += (uint64_t)n;
	if (n < 0)
		die("read", path);
}

/* Depth-first below the open directory dfd; readall reads regular files. */
static void walk(int dfd, const char *path, int readall, int depth)
{
	DIR *d;
	struct dirent *e;
	struct stat st;

	if (depth > 4096)
		return;
	d = fdopendir(dfd);
	if (!d)
		die("opendir", path);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			die("lstat", e->d_name);
		if (!readall)
			count++;
		if (S_ISDIR(st.st_mode)) {
			int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY);

			if (fd < 0)
				die("open", e->d_name);
			walk(fd, e->d_name, readall, depth + 1);
		} else if (readall && S_ISREG(st.st_mode)) {
			int fd = openat(dirfd(d), e->d_name, O_RDONLY);

			if (fd < 0)
				die("open", e->d_name);
			read_fd(fd, e->d_name);
			close(fd);
			count++;
		}
	}
	closedir(d);
}

static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0)
		die("open", path);
	return fd;
}

int main(int argc, char **argv)
{
	uint64_t t0, t1, pg0, pg1;
	const char *cmd = argc > 1 ? argv[1] : "";

	if (!strcmp(cmd, "cached")) {
		printf("%llu\n", (unsigned long long)(meminfo_kib("Cached") + meminfo_kib("Buffers")));
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: cfs-benchtool walk|run|stat|readdir|readall|readlist|seq|rand|cached ARGS\n");
		return 2;
	}
	pg0 = vmstat("pgpgin");
	t0 = now_ns();
	if (!strcmp(cmd, "walk") || !strcmp(cmd, "readall")) {
		walk(open_or_die(argv[2], O_RDONLY | O_DIRECTORY), argv[2], cmd[0] == 'r', 0);
	} else if (!strcmp(cmd, "run")) {
		pid_t pid = fork();
		int status;

		if (pid < 0)
			die("fork", argv[2]);
		if (pid == 0) {
			int fd = open_or_die("/dev/null", O_WRONLY);

			dup2(fd, 1);
			execvp(argv[2], argv + 2);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			die("run", argv[2]);
		count = 1;
	} else if (!strcmp(cmd, "stat") && (argc == 4 || argc == 5)) {
		FILE *f = fopen(argv[3], "r");
		char line[4096 + 2], path[8192];
		long pass, passes = argc == 5 ? atol(argv[4]) : 1;
		struct stat st;

		if (!f)
			die("open", argv[3]);
		if (passes < 1) {
			errno = EINVAL;
			die("passes", argv[4]);
		}
		/* Read the list before timing would be fairer, but it is on tmpfs. */
		for (pass = 0; pass < passes; pass++) {
			rewind(f);
			while (fgets(line, sizeof(line), f)) {
				line[strcspn(line, "\n")] = 0;
				snprintf(path, sizeof(path), "%s/%s", argv[2], line);
				if (lstat(path, &st))
					die("lstat", path);
				count++;
			}
		}
		fclose(f);
		per_pass = (uint64_t)passes;
	} else if (!strcmp(cmd, "readlist") && argc == 4) {
		FILE *f = fopen(argv[3], "r");
		char line[4096 + 2], path[8192];

		if (!f)
			die("open", argv[3]);
		while (fgets(line, sizeof(line), f)) {
			int fd;

			line[strcspn(line, "\n")] = 0;
			snprintf(path, sizeof(path), "%s/%s", argv[2], line);
			fd = open_or_die(path, O_RDONLY);
			read_fd(fd, path);
			close(fd);
			count++;
		}
		fclose(f);
	} else if (!strcmp(cmd, "readdir")) {
		DIR *d = opendir(argv[2]);

		if (!d)
			die("opendir", argv[2]);
		while (readdir(d))
			count++;
		closedir(d);
	} else if (!strcmp(cmd, "seq")) {
		int fd = open_or_die(argv[2], O_RDONLY);
		ssize_t n;

		while ((n = read(fd, buf, 4096)) > 0) {
			bytes += (uint64_t)n;
			count++;
		}
		if (n < 0)
			die("read", argv[2]);
		close(fd);
	} else if (!strcmp(cmd, "rand") && argc == 4) {
		int fd = open_or_die(argv[2], O_RDONLY);
		uint64_t blocks, x = 0x9e3779b97f4a7c15ull;
		long i, n = atol(argv[3]);
		struct stat st;

		if (fstat(fd, &st) || st.st_size < 4096)
			die("size", argv[2]);
		blocks = (uint64_t)st.st_size / 4096;
		for (i = 0; i < n; i++) {
			/* xorshift64: the same offsets on every system */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (pread(fd, buf, 4096, (off_t)((x % blocks) * 4096)) != 4096)
				die("pread", argv[2]);
			bytes += 4096;
			count++;
		}
		close(fd);
	} else {
		fprintf(stderr, "cfs-benchtool: unknown command '%s'\n", cmd);
		return 2;
	}
	t1 = now_ns();
	pg1 = vmstat("pgpgin");
	if (printf("%llu %llu %llu %llu\n", (unsigned long long)((t1 - t0) / per_pass),
		   (unsigned long long)(count / per_pass), (unsigned long long)bytes,
		   (unsigned long long)(pg1 - pg0)) < 0 || fflush(stdout))
		return 1;
	return 0;
}
