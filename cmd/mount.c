// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl mount: mount an image with the composefs kernel module, building
 * the option string from friendlier arguments. "--digest auto" measures the
 * image's fs-verity digest and passes it, so the kernel then checks the
 * image against it and requires verified backing files.
 *
 * An EROFS image (composefs 1.0) is mounted as composefs 1.0's
 * mount.composefs does on a stock kernel: the image read-only as erofs on
 * a private directory (the file itself, or a loop device where erofs
 * cannot mount a file), overlayfs on top with the basedirs as data-only
 * lower layers, then the erofs mount detached so only MOUNTPOINT remains.
 *
 * --idmap makes the mount idmapped: a clone of it is made, the mount
 * itself detached, the user namespace's mapping set on the clone, and the
 * clone attached in its place. For an EROFS image that is done to the erofs
 * layer, since an overlayfs mount cannot be idmapped but its layers can.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/loop.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/image.h"
#include "cfs/store.h"
#include "cfs/util.h"

static const struct option long_options[] = {
	{ "basedir", required_argument, NULL, 'b' },
	{ "digest", required_argument, NULL, 'd' },
	{ "verity-check", required_argument, NULL, 'v' },
	{ "upperdir", required_argument, NULL, 'u' },
	{ "workdir", required_argument, NULL, 'w' },
	{ "lazy-url", required_argument, NULL, 'L' },
	{ "idmap", required_argument, NULL, 'i' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* What a failed mount(2) most likely means, for the message. */
static const char *mount_hint(int err, bool digest)
{
	switch (err) {
	case ENODEV:
		return "the composefs module is not loaded";
	case EUCLEAN:
		return "the image is corrupt (see the kernel log)";
	case EIO:
		return digest ? "the image's fs-verity digest is not the one given" :
				"I/O error reading the image";
	case ENODATA:
		return "the image has no fs-verity, but a digest was given";
	case EINVAL:
		return "invalid option or image (see the kernel log)";
	default:
		return NULL;
	}
}

/* /dev/kmsg opened at its end, so that what a refused mount logs can be
 * quoted; -1 where the log is not readable.
 */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The last kernel log line since kmsg_open(), without its prefix. */
static bool kmsg_last(int fd, char *buf, size_t size)
{
	char rec[1024];
	bool found = false;
	ssize_t n;

	if (fd < 0)
		return false;
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		char *msg, *nl;

		if (n <= 0)
			continue; /* EPIPE: records were overwritten */
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = '\0';
		snprintf(buf, size, "%s", msg);
		found = true;
	}
	return found;
}

static void kmsg_skip(int fd)
{
	char buf[1];

	kmsg_last(fd, buf, sizeof(buf));
}

/* Report a refused mount of one layer: the kernel's last word, or errno. */
static void layer_error(const char *layer, const char *src, int kfd, int err)
{
	char msg[512];

	if (kmsg_last(kfd, msg, sizeof(msg)))
		cli_error("mount: %s refused '%s': %s (kernel: %s)", layer, src, strerror(err), msg);
	else
		cli_error("mount: %s refused '%s': %s", layer, src, strerror(err));
}

/* Attach @image read-only to a free loop device; its path into @dev. The
 * device goes away by itself once unmounted (autoclear).
 */
static int loop_attach(const char *image, char *dev, size_t size, int *loopfd)
{
	struct loop_config cfg = { 0 };
	int ctl, nr, fd, lfd, r = 0;

	fd = open(image, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		r = -errno;
		goto out;
	}
	for (int tries = 0; tries < 8; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0) {
			r = -errno;
			break;
		}
		snprintf(dev, size, "/dev/loop%d", nr);
		lfd = open(dev, O_RDONLY | O_CLOEXEC);
		if (lfd < 0) {
			r = -errno;
			break;
		}
		cfg.fd = fd;
		cfg.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0) {
			*loopfd = lfd;
			r = 0;
			break;
		}
		r = -errno;
		close(lfd);
		if (r != -EBUSY) /* EBUSY: someone else took it first */
			break;
	}
	close(ctl);
out:
	close(fd);
	return r;
}

/* Append @path to @out escaped for overlayfs's lowerdir (',' ':' '\'). */
static void ovl_escape(char *out, const char *path, size_t len)
{
	size_t n = strlen(out);

	for (; *path && n + 2 < len; path++) {
		if (*path == ',' || *path == ':' || *path == '\\')
			out[n++] = '\\';
		out[n++] = *path;
	}
	out[n] = '\0';
}

/* Open @path and check it is a user namespace; the fd, or -1 after saying why. */
static int userns_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), type;

	if (fd < 0) {
		cli_error("mount: opening '%s': %s", path, strerror(errno));
		return -1;
	}
	type = ioctl(fd, NS_GET_NSTYPE);
	if (type != CLONE_NEWUSER) {
		cli_error("mount: '%s': %s", path,
			  type < 0 && errno != ENOTTY ? strerror(errno) : "not a user namespace");
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Make the mount on @mnt idmapped with the mapping of user namespace
 * @nsfd (@userns names it, for messages). On failure nothing stays
 * mounted on @mnt.
 */
static int mount_idmap(const char *mnt, int nsfd, const char *userns)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = nsfd };
	const char *step = "cloning the mount";
	int tree, err = 0;

	tree = open_tree(AT_FDCWD, mnt, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		err = errno;
	/* The clone holds the filesystem now, or nothing does. */
	umount2(mnt, MNT_DETACH);
	if (!err) {
		step = "setting the idmap";
		if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
			err = errno;
	}
	if (!err) {
		step = "attaching the idmapped mount";
		if (move_mount(tree, "", AT_FDCWD, mnt, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			err = errno;
	}
	if (tree >= 0)
		close(tree);
	if (err) {
		cli_error("mount: --idmap '%s' on '%s': %s: %s%s", userns, mnt, step, strerror(err),
			  err == EINVAL ? " (the filesystem does not take idmapped mounts?)" : "");
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int mount_erofs(const char *image, const char *mnt, const char *basedir,
		       bool digest, const char *upper, const char *work, int nsfd,
		       const char *userns)
{
	char tmp[] = "/tmp/cfs-erofs.XXXXXX", dev[64], *opts = NULL;
	struct cfs_basedirs dirs = { 0 };
	int kfd, loopfd = -1, ret = EXIT_FAIL;
	size_t len;

	if (!mkdtemp(tmp)) {
		cli_error("mount: creating '%s': %s", tmp, strerror(errno));
		return EXIT_FAIL;
	}
	kfd = kmsg_open();
	if (mount(image, tmp, "erofs", MS_RDONLY | MS_NODEV | MS_NOSUID, NULL) < 0) {
		int err = errno, r;

		/* Not an erofs that reads files: through a loop device. */
		r = loop_attach(image, dev, sizeof(dev), &loopfd);
		if (r < 0) {
			layer_error("erofs", image, kfd, err);
			cli_error("mount: no loop device for '%s' either: %s", image, strerror(-r));
			goto out_rmdir;
		}
		kmsg_skip(kfd); /* what the first try logged */
		if (mount(dev, tmp, "erofs", MS_RDONLY | MS_NODEV | MS_NOSUID, NULL) < 0) {
			layer_error("erofs", dev, kfd, errno);
			goto out_rmdir;
		}
	}
	/* overlayfs mounts cannot be idmapped, but its layers can: the erofs
	 * layer holds every owner (the basedirs only hold contents).
	 */
	if (userns && mount_idmap(tmp, nsfd, userns) != EXIT_OK)
		goto out_rmdir;

	len = 3 * (strlen(tmp) + (basedir ? strlen(basedir) : 0) + (upper ? strlen(upper) : 0) +
		   (work ? strlen(work) : 0)) + 256;
	opts = malloc(len);
	if (!opts || (basedir && cfs_basedirs_parse(&dirs, basedir) < 0)) {
		cli_error("mount: %s", strerror(ENOMEM)); /* the list was checked before */
		goto out_umount;
	}
	strcpy(opts, "lowerdir=");
	ovl_escape(opts, tmp, len);
	/* The basedirs, as data-only layers: "::DIR" each. */
	for (size_t i = 0; i < dirs.n; i++) {
		strcat(opts, "::");
		ovl_escape(opts, dirs.dirs[i], len);
	}
	strcat(opts, ",metacopy=on,redirect_dir=on");
	if (digest)
		strcat(opts, ",verity=require");
	if (upper) {
		strcat(opts, ",upperdir=");
		ovl_escape(opts, upper, len);
		strcat(opts, ",workdir=");
		ovl_escape(opts, work, len);
	}
	kmsg_skip(kfd);
	if (mount("composefs", mnt, "overlay", upper ? 0 : MS_RDONLY, opts) < 0) {
		layer_error("overlayfs", image, kfd, errno);
		goto out_umount;
	}
	ret = EXIT_OK;
out_umount:
	/* overlayfs holds the erofs mount now (or nobody needs it). */
	umount2(tmp, MNT_DETACH);
out_rmdir:
	if (loopfd >= 0)
		close(loopfd);
	rmdir(tmp);
	if (kfd >= 0)
		close(kfd);
	free(opts);
	cfs_basedirs_free(&dirs);
	return ret;
}

/*
 * Start "cfsctl lazy --store STORE --url URLS DIR" in the background on a
 * new directory DIR under /run/cfs-lazy, and wait until its FUSE
 * filesystem is mounted there. Fills @dir and @pid; EXIT_OK or EXIT_FAIL.
 */
static int start_lazy(const char *store, const char *urls, char *dir, size_t size, pid_t *pid)
{
	struct stat parent, st;
	int status;

	if (mkdir("/run", 0755) < 0 && errno != EEXIST)
		goto err_dir;
	if (mkdir("/run/cfs-lazy", 0755) < 0 && errno != EEXIST)
		goto err_dir;
	snprintf(dir, size, "/run/cfs-lazy/XXXXXX");
	if (!mkdtemp(dir) || stat("/run/cfs-lazy", &parent) < 0)
		goto err_dir;
	*pid = fork();
	if (*pid < 0) {
		cli_error("mount: starting cfsctl lazy: %s", strerror(errno));
		rmdir(dir);
		return EXIT_FAIL;
	}
	if (*pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		setsid();
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
		}
		execl("/proc/self/exe", "cfsctl", "lazy", "--store", store, "--url", urls, dir,
		      (char *)NULL);
		cli_error("mount: running cfsctl lazy: %s", strerror(errno));
		_exit(EXIT_FAIL);
	}
	/* Mounted when the directory is the root of another filesystem. */
	for (int i = 0; i < 200; i++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		if (stat(dir, &st) == 0 && st.st_dev != parent.st_dev)
			return EXIT_OK;
		if (waitpid(*pid, &status, WNOHANG) == *pid) {
			cli_error("mount: cfsctl lazy on '%s' exited before serving", dir);
			rmdir(dir);
			return EXIT_FAIL;
		}
		nanosleep(&ts, NULL);
	}
	cli_error("mount: cfsctl lazy on '%s' did not mount it within 10 s", dir);
	kill(*pid, SIGTERM);
	waitpid(*pid, &status, 0);
	rmdir(dir);
	return EXIT_FAIL;
err_dir:
	cli_error("mount: creating a directory for cfsctl lazy under '/run/cfs-lazy': %s",
		  strerror(errno));
	return EXIT_FAIL;
}

int cmd_mount(int argc, char **argv)
{
	const char *basedir = NULL, *digest_arg = NULL, *image, *mnt;
	const char *upper = NULL, *work = NULL, *lazy_url = NULL, *idmap = NULL;
	char lazy_dir[64];
	pid_t lazy_pid = -1;
	int kind;
	char hex[CFS_DIGEST_HEX_SIZE], *opts = NULL;
	uint8_t digest[CFS_DIGEST_SIZE];
	int verity_check = -1, nsfd = -1, opt, r;
	size_t len;

	while ((opt = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
		switch (opt) {
		case 'b':
			basedir = optarg;
			break;
		case 'd':
			digest_arg = optarg;
			break;
		case 'v':
			if (strlen(optarg) != 1 || optarg[0] < '0' || optarg[0] > '2')
				return cli_usage("mount", "--verity-check must be 0, 1 or 2");
			verity_check = optarg[0] - '0';
			break;
		case 'u':
			upper = optarg;
			break;
		case 'w':
			work = optarg;
			break;
		case 'L':
			lazy_url = optarg;
			break;
		case 'i':
			idmap = optarg;
			break;
		case 'h':
			cli_print_help("mount", stdout);
			return cli_close_stdout();
		default:
			return cli_usage("mount", "invalid option");
		}
	}
	if (argc - optind != 2)
		return cli_usage("mount", "need IMAGE and MOUNTPOINT");
	image = argv[optind];
	mnt = argv[optind + 1];
	/* mount(2) splits its option string at commas: no way to pass one. */
	if (basedir && (strchr(basedir, ',') || !*basedir))
		return cli_usage("mount", "--basedir must be non-empty and contain no ','");
	if (basedir) {
		/* refuse what the module would refuse, before mounting anything */
		struct cfs_basedirs dirs = { 0 };

		r = cli_basedirs("mount", &dirs, basedir);
		cfs_basedirs_free(&dirs);
		if (r != EXIT_OK)
			return r;
	}

	if (!upper != !work)
		return cli_usage("mount", "--upperdir and --workdir go together");
	if (lazy_url && !basedir)
		return cli_usage("mount", "--lazy-url needs --basedir; its first directory is the store to fill");
	if (idmap) {
		nsfd = userns_open(idmap);
		if (nsfd < 0)
			return EXIT_FAIL;
	}

	if (digest_arg && strcmp(digest_arg, "auto") == 0) {
		int fd = open(image, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			cli_error("mount: opening '%s': %s", image, strerror(errno));
			return EXIT_FAIL;
		}
		r = cfs_verity_measure_fd(fd, digest);
		close(fd);
		if (r == -ENODATA) {
			cli_error("mount: measuring '%s': fs-verity is not enabled on the image", image);
			return EXIT_FAIL;
		}
		if (r < 0) {
			cli_error("mount: measuring '%s': %s", image, strerror(-r));
			return EXIT_FAIL;
		}
		cfs_digest_to_hex(digest, hex);
	} else if (digest_arg) {
		if (cfs_digest_from_hex(digest_arg, digest) < 0)
			return cli_usage("mount", "--digest must be 'auto' or 64 hex digits");
		cfs_digest_to_hex(digest, hex);
	}

	kind = cfs_image_mount_kind(image);
	if (kind < 0) {
		cli_error("mount: opening '%s': %s", image, strerror(-kind));
		return EXIT_FAIL;
	}
	if (kind != CFS_MOUNT_EROFS_OVERLAY && upper)
		return cli_usage("mount", "--upperdir needs an EROFS image");

	if (kind == CFS_MOUNT_EROFS_OVERLAY) {
		/* overlayfs takes no image digest: check it here. */
		if (digest_arg && strcmp(digest_arg, "auto") != 0) {
			uint8_t got[CFS_DIGEST_SIZE];
			char ghex[CFS_DIGEST_HEX_SIZE];
			int fd = open(image, O_RDONLY | O_CLOEXEC);

			if (fd < 0) {
				cli_error("mount: opening '%s': %s", image, strerror(errno));
				return EXIT_FAIL;
			}
			r = cfs_verity_measure_fd(fd, got);
			close(fd);
			if (r < 0) {
				cli_error("mount: measuring '%s': %s", image,
					  r == -ENODATA ? "fs-verity is not enabled on the image" :
							  strerror(-r));
				return EXIT_FAIL;
			}
			if (memcmp(got, digest, sizeof(got)) != 0) {
				cfs_digest_to_hex(got, ghex);
				cli_error("mount: '%s' has fs-verity digest %s, not %s", image, ghex, hex);
				return EXIT_FAIL;
			}
		}
		if (verity_check >= 0)
			return cli_usage("mount", "--verity-check is for v1 images; use --digest");
		if (lazy_url)
			return cli_usage("mount", "--lazy-url is for v1 images");
		return mount_erofs(image, mnt, basedir, digest_arg != NULL, upper, work, nsfd,
				   idmap);
	}

	len = (basedir ? strlen(basedir) : 0) + sizeof(lazy_dir) + 128;
	opts = malloc(len);
	if (!opts) {
		cli_error("mount: %s", strerror(ENOMEM));
		return EXIT_FAIL;
	}
	if (lazy_url) {
		/* the store is the first basedir */
		struct cfs_basedirs dirs = { 0 };

		r = cfs_basedirs_parse(&dirs, basedir) == 0 ?
			    start_lazy(dirs.dirs[0], lazy_url, lazy_dir, sizeof(lazy_dir), &lazy_pid) :
			    EXIT_FAIL;
		cfs_basedirs_free(&dirs);
		if (r != EXIT_OK) {
			free(opts);
			return EXIT_FAIL;
		}
	}
	opts[0] = '\0';
	if (basedir)
		snprintf(opts + strlen(opts), len - strlen(opts), "basedir=%s%s%s,", basedir,
			 lazy_url ? ":" : "", lazy_url ? lazy_dir : "");
	if (digest_arg)
		snprintf(opts + strlen(opts), len - strlen(opts), "digest=%s,", hex);
	/* Stricter than the kernel's default of 0: check every digest the
	 * image records unless told not to (with --digest the kernel's
	 * default, 2, is stricter still).
	 */
	if (verity_check < 0 && !digest_arg)
		verity_check = 1;
	if (verity_check >= 0)
		snprintf(opts + strlen(opts), len - strlen(opts), "verity_check=%d,", verity_check);
	if (opts[0])
		opts[strlen(opts) - 1] = '\0'; /* the last comma */

	if (mount(image, mnt, "composefs", MS_RDONLY, opts) < 0) {
		int err = errno;
		const char *hint = mount_hint(err, digest_arg != NULL);

		cli_error("mount: mounting '%s' on '%s': %s%s%s", image, mnt, strerror(err),
			  hint ? ": " : "", hint ? hint : "");
		free(opts);
		if (lazy_pid > 0) {
			kill(lazy_pid, SIGTERM); /* it unmounts its directory */
			waitpid(lazy_pid, NULL, 0);
			rmdir(lazy_dir);
		}
		return EXIT_FAIL;
	}
	free(opts);
	return idmap ? mount_idmap(mnt, nsfd, idmap) : EXIT_OK;
}
