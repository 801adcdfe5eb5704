// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs-mount-root: the mounts of the boot script (scripts/local-bottom/
 * composefs, docs/boot.md). Given the root device mounted on ROOT by
 * initramfs-tools' local script, it
 *
 *   1. moves the device to DEVICE (left alone when DEVICE is already a
 *      mount, as after a first call that failed later) and makes it
 *      writable, for the repository's state;
 *   2. mounts DEVICE/REPO/images/DIGEST on ROOT, as "cfsctl mount
 *      --digest=DIGEST --basedir=DEVICE/REPO/objects" does it: the image
 *      must have the fs-verity digest DIGEST and every file's object the
 *      digest the image records (v1: the composefs module with
 *      verity_check=2; composefs 1.0: erofs under overlayfs with
 *      verity=require);
 *   3. reads the image's init through the mount, so that an object without
 *      fs-verity or changed stops the boot here rather than later;
 *   4. puts an overlayfs on ROOT/etc whose changes go to REPO/state/etc;
 *   5. binds REPO/state/var on ROOT/var, copied from the image's /var (by
 *      "cp -a", found in PATH) on the first boot.
 *
 * One program for all of it because the initramfs runs it on every boot:
 * each program started there costs a dynamic link (tens of milliseconds
 * under emulation, as much as the mount it does), and this one takes from
 * libcfs only the mount and the image's probe, where cfsctl needs some
 * seventy libraries (a registry client, ostree, a terminal UI).
 *
 * Prints on stdout a line for each step done, so that the script can say
 * what failed: "device", "format NAME" (the image's format from its magic,
 * before it is mounted: "v1", "EROFS"), "root", "init", "etc", "var". When
 * a step after the image's mount fails, ROOT is unmounted again (with what
 * was mounted under it): the root is never left mounted half-made.
 *
 * Usage: cfs-mount-root [--repo=PATH] [--init=PATH] DIGEST ROOT DEVICE
 * Exits 0 when all is mounted, 1 when not, 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfs/mount.h"
#include "cfs/store.h"
#include "cfs/util.h"

extern char **environ;

static void say(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "cfs-mount-root: %s\n", msg);
}

static int fail(const char *fmt, ...)
{
	char msg[PATH_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say(NULL, msg);
	return -1;
}

/* A step done, for the script. */
static int done(const char *step, const char *arg)
{
	printf(arg ? "%s %s\n" : "%s\n", step, arg);
	if (fflush(stdout) != 0)
		return fail("writing to stdout: %s", strerror(errno));
	return 0;
}

static int join(char *out, const char *a, const char *b)
{
	int n = snprintf(out, PATH_MAX, "%s%s", a, b);

	if (n < 0 || n >= PATH_MAX)
		return fail("'%s%s': the path is too long", a, b);
	return 0;
}

static int is_mount(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, 0, &stx) < 0)
		return -errno;
	if (!(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return -EOPNOTSUPP;
	return !!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

static int make_dir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return fail("cannot create '%s': %s", path, strerror(errno));
	return 0;
}

/* Step 1: the device off ROOT, onto DEVICE, writable. */
static int move_device(const char *root, const char *dev)
{
	static const struct { unsigned long st, ms; } keep[] = {
		{ ST_NOSUID, MS_NOSUID }, { ST_NODEV, MS_NODEV }, { ST_NOEXEC, MS_NOEXEC },
		{ ST_SYNCHRONOUS, MS_SYNCHRONOUS }, { ST_NOATIME, MS_NOATIME },
		{ ST_NODIRATIME, MS_NODIRATIME }, { ST_RELATIME, MS_RELATIME },
	};
	char parent[PATH_MAX], *slash;
	struct statvfs sv;
	unsigned long flags = MS_REMOUNT;
	size_t i;
	int r;

	if (join(parent, dev, "") < 0)
		return -1;
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		if (make_dir(parent) < 0)
			return -1;
	}
	if (make_dir(dev) < 0)
		return -1;
	r = is_mount(dev);
	if (r < 0)
		return fail("'%s': %s", dev, strerror(-r));
	if (!r && mount(root, dev, NULL, MS_MOVE, NULL) < 0)
		return fail("cannot move the root device from '%s' to '%s': %s", root, dev,
			    strerror(errno));
	if (statvfs(dev, &sv) < 0)
		return fail("'%s': %s", dev, strerror(errno));
	if (sv.f_flag & ST_RDONLY) {
		/* a remount keeps only the flags it is given */
		for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
			if (sv.f_flag & keep[i].st)
				flags |= keep[i].ms;
		if (mount(NULL, dev, NULL, flags, NULL) < 0)
			return fail("cannot make the root device '%s' writable (for the state): %s",
				    dev, strerror(errno));
	}
	return done("device", NULL);
}

/* Step 2: the image on ROOT, its digest and every object's required. */
static int mount_image(const char *digest_hex, const uint8_t *digest, const char *repo,
		       const char *root)
{
	struct cfs_basedirs dirs = { 0 };
	struct cfs_mount_options mo = { 0 };
	struct cfs_mount_caps caps;
	char image[PATH_MAX], objects[PATH_MAX], name[CFS_DIGEST_HEX_SIZE + 16];
	int r;

	snprintf(name, sizeof(name), "/images/%s", digest_hex);
	if (join(image, repo, name) < 0 || join(objects, repo, "/objects") < 0)
		return -1;
	r = cfs_image_mount_caps(image, &caps);
	if (r < 0)
		return fail("'%s': %s", image, strerror(-r));
	if (done("format", caps.format) < 0)
		return -1;
	r = cfs_basedirs_add(&dirs, objects);
	if (r < 0)
		return fail("'%s': %s", objects, strerror(-r));
	mo.basedirs = &dirs;
	mo.digest = digest;
	/* v1: the module's strictest level; EROFS: overlayfs's verity=require,
	 * which the digest implies */
	mo.verity_check = caps.verity_check ? 2 : -1;
	mo.userns_fd = -1;
	r = cfs_image_mount(image, root, &mo);
	cfs_basedirs_free(&dirs);
	if (r < 0)
		return -1; /* libcfs said why, through say() */
	return done("root", NULL);
}

/* Step 3: the image's init, read through the mount as the image sees it
 * (its absolute symlinks resolved under ROOT). */
static int read_init(const char *root, const char *init)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
	static char buf[1 << 16];
	int dfd, fd, err = 0;
	ssize_t n;

	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return fail("'%s': %s", root, strerror(errno));
	fd = (int)syscall(SYS_openat2, dfd, init, &how, sizeof(how));
	if (fd < 0)
		err = errno;
	close(dfd);
	while (!err && (n = read(fd, buf, sizeof(buf))) != 0)
		if (n < 0 && errno != EINTR)
			err = errno;
	if (fd >= 0)
		close(fd);
	if (err)
		return fail("'%s' in the image cannot be read: %s", init, strerror(err));
	return done("init", NULL);
}

/* A path that goes into overlayfs's options: no separator of theirs. */
static int option_path(const char *path)
{
	if (strpbrk(path, ",:\\"))
		return fail("'%s': a path with ',', ':' or '\\' cannot be given to overlayfs", path);
	return 0;
}

/* Step 4: /etc writable, its changes kept in STATE/etc. */
static int mount_etc(const char *root, const char *state)
{
	char lower[PATH_MAX], etc[PATH_MAX], upper[PATH_MAX], work[PATH_MAX];
	char opts[3 * PATH_MAX + 64];

	if (join(lower, root, "/etc") < 0 || join(etc, state, "/etc") < 0 ||
	    join(upper, state, "/etc/upper") < 0 || join(work, state, "/etc/work") < 0)
		return -1;
	if (option_path(lower) < 0 || option_path(upper) < 0 || option_path(work) < 0)
		return -1;
	if (make_dir(state) < 0 || make_dir(etc) < 0 || make_dir(upper) < 0 || make_dir(work) < 0)
		return -1;
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
	if (mount("composefs-etc", lower, "overlay", 0, opts) < 0)
		return fail("cannot mount the writable /etc (an overlayfs on '%s'): %s", lower,
			    strerror(errno));
	return done("etc", NULL);
}

/* Runs ARGV (its program found in PATH); 0 when it exits 0. */
static int run(char *const argv[])
{
	pid_t pid;
	int r, status;

	r = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (r)
		return fail("cannot run %s: %s", argv[0], strerror(r));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return fail("waiting for %s: %s", argv[0], strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return fail("%s %s failed", argv[0], argv[1]);
	return 0;
}

/* Step 5: STATE/var on /var, a copy of the image's made on the first boot
 * (through var.new and a rename, so that a boot cut short copies again). */
static int mount_var(const char *root, const char *state)
{
	char var[PATH_MAX], keep[PATH_MAX], fresh[PATH_MAX];
	struct stat st;

	if (join(var, root, "/var") < 0 || join(keep, state, "/var") < 0 ||
	    join(fresh, state, "/var.new") < 0)
		return -1;
	if (stat(keep, &st) < 0 || !S_ISDIR(st.st_mode)) {
		char *rm[] = { "rm", "-rf", fresh, NULL };
		char *cp[] = { "cp", "-a", var, fresh, NULL };

		if (run(rm) < 0 || run(cp) < 0)
			return fail("cannot copy the image's /var to '%s'", fresh);
		if (rename(fresh, keep) < 0)
			return fail("cannot rename '%s' to '%s': %s", fresh, keep, strerror(errno));
	}
	if (mount(keep, var, NULL, MS_BIND, NULL) < 0)
		return fail("cannot bind '%s' on '%s': %s", keep, var, strerror(errno));
	return done("var", NULL);
}

static int usage(void)
{
	fputs("usage: cfs-mount-root [--repo=PATH] [--init=PATH] DIGEST ROOT DEVICE\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	const char *repo_path = "/cfs", *init = "/sbin/init", *hex, *root, *dev;
	char repo[PATH_MAX], state[PATH_MAX];
	uint8_t digest[CFS_DIGEST_SIZE];
	int i;

	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strncmp(argv[i], "--repo=", 7)) {
			repo_path = argv[i] + 7;
		} else if (!strncmp(argv[i], "--init=", 7)) {
			init = argv[i] + 7;
		} else {
			fprintf(stderr, "cfs-mount-root: unknown option '%s'\n", argv[i]);
			return usage();
		}
	}
	if (argc - i != 3)
		return usage();
	hex = argv[i];
	root = argv[i + 1];
	dev = argv[i + 2];
	if (strlen(hex) != 2 * CFS_DIGEST_SIZE || cfs_digest_from_hex(hex, digest) < 0) {
		fail("the digest must be %d hex digits: '%s'", 2 * CFS_DIGEST_SIZE, hex);
		return 2;
	}
	if (repo_path[0] != '/' || root[0] != '/' || dev[0] != '/') {
		fail("ROOT, DEVICE and --repo must be absolute paths");
		return 2;
	}
	cfs_set_message_handler(say, NULL);

	if (join(repo, dev, repo_path) < 0 || join(state, repo, "/state") < 0)
		return 1;
	if (move_device(root, dev) < 0 || mount_image(hex, digest, repo, root) < 0)
		return 1;
	if (read_init(root, init) < 0 || mount_etc(root, state) < 0 || mount_var(root, state) < 0) {
		/* never booted: the image and what is on it go */
		if (umount2(root, MNT_DETACH) < 0)
			fail("cannot unmount '%s': %s", root, strerror(errno));
		return 1;
	}
	return 0;
}
