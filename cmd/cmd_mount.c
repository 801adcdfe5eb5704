// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl mount: mount an image, building what the kernel takes from
 * friendlier arguments. "--digest auto" measures the image's fs-verity
 * digest and passes it, so the image is then checked against it and
 * verified backing files are required. How an image is mounted, and what
 * its mount takes, is its format's business (libcfs's cfs_image_mount());
 * this verb checks its arguments against the caps the image's mount has.
 *
 * --lazy-url starts "cfsctl lazy" on a directory of its own and appends
 * that directory to the basedir list; --idmap makes the mount idmapped
 * with a user namespace's mapping. --from-ostree mounts an ostree commit
 * once its chain checks (cmd/ostree.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cfsctl.h"
#include "cfs/mount.h"
#include "cfs/ostree.h"
#include "cfs/store.h"
#include "cfs/util.h"

static const struct option long_options[] = {
	CLI_OPTION_BASEDIR,
	CLI_OPTION_REPO,
	{ "digest", required_argument, NULL, 'd' },
	{ "verity-check", required_argument, NULL, 'v' },
	{ "upperdir", required_argument, NULL, 'u' },
	{ "workdir", required_argument, NULL, 'w' },
	{ "lazy-url", required_argument, NULL, 'L' },
	{ "authfile", required_argument, NULL, 'A' },
	{ "idmap", required_argument, NULL, 'i' },
	{ "from-ostree", no_argument, NULL, 'O' },
	{ "gpg-homedir", required_argument, NULL, 'G' },
	{ "format", required_argument, NULL, 'F' },
	{ "fuse", no_argument, NULL, 'f' },
	{ "foreground", no_argument, NULL, 'g' },
	{ "allow-other", no_argument, NULL, 'a' },
	CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

/* cfsctl mount --help, and its man page (docs/mkman.py) */
const char cmd_mount_usage[] =
	  "Usage: cfsctl mount [OPTIONS] IMAGE MOUNTPOINT\n"
	  "       cfsctl mount --from-ostree [--gpg-homedir=DIR] [--format=v1|erofs]\n"
	  "                    REPO:REF MOUNTPOINT\n"
	  "       cfsctl mount [OPTIONS] --repo DIR IMAGE MOUNTPOINT\n"
	  "       cfsctl mount --fuse [--foreground] [--allow-other] [OPTIONS] IMAGE MOUNTPOINT\n"
	  "\n"
	  "Mount IMAGE on MOUNTPOINT, read-only unless --upperdir. A v1 image goes to the composefs\n"
	  "kernel module (mount -t composefs); an EROFS image (composefs 1.0) is\n"
	  "mounted as erofs on a private directory with overlayfs on top\n"
	  "(metacopy=on,redirect_dir=on, the basedirs as data-only layers), the\n"
	  "erofs mount then detached. File contents come from the backing files\n"
	  "the image names, looked up beneath each basedir in turn.\n"
	  "\n"
	  "Options:\n"
	  "  --basedir=DIR[:DIR...]  directories holding the backing files, tried\n"
	  "                          in order ('\\:' for a colon in a name, '\\\\'\n"
	  "                          for a backslash; no name may be empty)\n"
	  "  --repo=DIR              IMAGE is a name or an image digest in the\n"
	  "                          repository DIR (see cfsctl images); the\n"
	  "                          basedir is DIR/objects unless --basedir is\n"
	  "                          given; --digest=auto also requires the\n"
	  "                          measured digest to be the image's name\n"
	  "  --digest=auto|HEX       the fs-verity digest the image must have;\n"
	  "                          'auto' measures IMAGE (fs-verity must be\n"
	  "                          enabled on it). Implies --verity-check=2\n"
	  "                          unless given\n"
	  "  --verity-check=0|1|2    0: never check backing files; 1: check those\n"
	  "                          the image records a digest for; 2: also refuse\n"
	  "                          files without a recorded digest. Default 1\n"
	  "                          (2 with --digest); mount -t composefs without\n"
	  "                          verity_check= means 0 (2 with digest=).\n"
	  "                          v1 images, and --fuse\n"
	  "  --upperdir=DIR          EROFS images: a writable overlayfs upper layer\n"
	  "  --workdir=DIR           its overlayfs work directory (with --upperdir)\n"
	  "  --lazy-url=URL[,URL...] v1 images: start 'cfsctl lazy --store DIR --url\n"
	  "                          URL' in the background, DIR the first --basedir,\n"
	  "                          on a new directory under /run/cfs-lazy, and add\n"
	  "                          it as the last basedir: each object the store\n"
	  "                          lacks is fetched when first opened. It keeps\n"
	  "                          running after the image is unmounted; umount\n"
	  "                          its directory (type fuse.cfs-lazy) to stop it.\n"
	  "                          With --fuse (either format) no second daemon:\n"
	  "                          the mount's own fetches an object missing\n"
	  "                          from every basedir into the first one when\n"
	  "                          its file is first opened, verified, of the\n"
	  "                          size the image records\n"
	  "  --authfile=FILE         with --lazy-url: the mirrors' credentials (HTTP\n"
	  "                          Basic), in containers-auth.json format, for\n"
	  "                          cfsctl lazy. A URL's own USER:PASSWORD@ is\n"
	  "                          handed to it in a file of its own, never in an\n"
	  "                          argv that ps shows\n"
	  "  --idmap=USERNS          make the mount idmapped with the mapping of\n"
	  "                          the user namespace file USERNS (such as\n"
	  "                          /proc/PID/ns/user): an owner N in the image\n"
	  "                          shows, and is checked, as the id that the\n"
	  "                          namespace's uid_map or gid_map maps N to\n"
	  "  --from-ostree           mount the ostree commit REPO:REF (a bare or\n"
	  "                          bare-user repository) after the checks of\n"
	  "                          'verify --from-ostree': its EROFS image is\n"
	  "                          rebuilt into REPO/tmp (fs-verity enabled on\n"
	  "                          it), mounted with basedir=REPO/objects and the\n"
	  "                          digest in the commit, then unlinked. Takes no\n"
	  "                          other option but --gpg-homedir and --format\n"
	  "  --format=v1|erofs       with --from-ostree: mount the EROFS image\n"
	  "                          (default) or, once it has checked, the v1 image\n"
	  "                          of the same tree with its own digest and\n"
	  "                          verity_check=2 (the module)\n"
	  "  --gpg-homedir=DIR       with --from-ostree: the commit must be signed\n"
	  "                          by a key of the GnuPG home DIR\n"
	  "  --fuse                  serve the image from userspace through FUSE,\n"
	  "                          either format, without the module or root\n"
	  "                          (see FUSE below)\n"
	  "  --foreground            with --fuse: stay attached, serving, until\n"
	  "                          unmounted or sent SIGTERM\n"
	  "  --allow-other           with --fuse: let other users than the one\n"
	  "                          who mounted in (FUSE's allow_other; an\n"
	  "                          ordinary user needs user_allow_other in\n"
	  "                          /etc/fuse.conf)\n"
	  "  -h, --help              show this help\n"
	  "\n"
	  "For an EROFS image --digest is checked before mounting and adds\n"
	  "verity=require: every backing file must have fs-verity with the digest\n"
	  "the image records (a wrong one reads as EIO). A refusal names the layer\n"
	  "(erofs or overlayfs) and quotes the last kernel log line if /dev/kmsg\n"
	  "is readable.\n"
	  "\n"
	  "FUSE: with --fuse, or without root (CAP_SYS_ADMIN in the first user\n"
	  "namespace: an ordinary user, or root of a user namespace such as\n"
	  "unshare -Urm makes), which it then says in one line on stderr, the\n"
	  "image is read into memory (checked against --digest first, measured\n"
	  "by the kernel where it has fs-verity, else computed) and served by a\n"
	  "daemon, as the kernel mount shows it: owners, modes, times, devices,\n"
	  "hardlinks with one inode number, every xattr under its own name. The\n"
	  "kernel checks owners, modes and ACLs for every reader\n"
	  "(default_permissions) and caches what it is shown for the life of\n"
	  "the mount. Backing files are opened as the user who mounted, and no\n"
	  "byte of one is served before its fs-verity digest matches the one\n"
	  "the image records (with --verity-check 1 or 2): the kernel's where\n"
	  "the file has fs-verity, else computed when it is opened, the hash\n"
	  "of each 4 KiB block kept for the mount's life (1/128 of its size,\n"
	  "16 MiB in all) to check every block read later: a file changed after\n"
	  "its open reads EIO. That open reads and hashes the whole file. At\n"
	  "mount every backing file is looked for (one stat each); where all\n"
	  "are there, the kernel opens files without asking the daemon, and\n"
	  "each is opened and checked at its first read instead: one removed\n"
	  "or changed since the mount fails that read with EIO. Where one is\n"
	  "missing at mount, each open asks, and a missing or changed backing\n"
	  "file fails its open with EIO (ENOENT when missing). Either way one\n"
	  "line on stderr names the path and the object, and\n"
	  "the rest reads on. The command returns once the mount is there;\n"
	  "fusermount3 -u, umount or SIGTERM to the daemon unmount it, and the\n"
	  "daemon exits. An ordinary user's mount is nosuid,nodev; root's shows\n"
	  "setuid bits and devices as the kernel's mount does.\n"
	  "\n"
	  "The kernel's mounts need CAP_SYS_ADMIN (root). Checked before anything is mounted: that\n"
	  "CAP_SYS_ADMIN is there, that MOUNTPOINT is a directory, and that an\n"
	  "EROFS image without --upperdir has --basedir or --repo (overlayfs\n"
	  "needs it as a second lower layer). Details of a refused mount are in\n"
	  "the kernel log.\n"
	  "\n"
	  "Examples:\n"
	  "  cfsctl mount --basedir objects --digest auto rootfs.cfs /mnt\n"
	  "  cfsctl mount --repo /var/lib/cfs os/1 /mnt\n"
	  "  cfsctl mount --from-ostree --gpg-homedir keys repo:os /mnt\n"
	  "  cfsctl mount --fuse --repo ~/cfs os/1 ~/mnt\n"
	  "\n"
	  "Exit status: 0 success, 1 failure, 2 usage error.\n";

/* Open @path and check it is a user namespace; the fd, or -1 after saying why. */
/* The hint for an image whose filesystem has no fs-verity. */
#define NO_VERITY_HINT \
	"its filesystem has no fs-verity, which --digest needs (on ext4: tune2fs -O verity)"

/* Library messages during the mount, said as the verb's own, with what to do. */
static void mount_message(void *ctx, const char *msg)
{
	const char *unsupported = strerror(EOPNOTSUPP);
	size_t len = strlen(msg), n = strlen(unsupported);

	(void)ctx;
	if (strncmp(msg, "measuring '", 11) == 0 && len > n &&
	    strcmp(msg + len - n, unsupported) == 0)
		cli_error("mount: %.*s%s", (int)(len - n), msg, NO_VERITY_HINT);
	else
		cli_error("mount: %s", msg);
}

/* Does this process have CAP_SYS_ADMIN (-1: cannot tell)? */
static int have_sys_admin(void)
{
	unsigned long long eff;
	char line[256];
	int r = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			r = !!(eff & (1ULL << 21)); /* CAP_SYS_ADMIN */
			break;
		}
	fclose(f);
	return r;
}

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
 * Start "cfsctl lazy --store STORE --url URLS DIR" in the background on a
 * new directory DIR under /run/cfs-lazy, and wait until its FUSE
 * filesystem is mounted there. Fills @dir and @pid; EXIT_OK or EXIT_FAIL.
 */
/* %XX-decode @len bytes of @s into @out (which holds @len + 1): its length */
static size_t unescape(const char *s, size_t len, char *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned int c;

		if (s[i] == '%' && i + 2 < len + 0 + 1 && sscanf(s + i + 1, "%2x", &c) == 1) {
			out[n++] = (char)c;
			i += 2;
		} else {
			out[n++] = s[i];
		}
	}
	out[n] = '\0';
	return n;
}

/*
 * The URLs of @urls (comma-separated) with their USER:PASSWORD@ taken out,
 * in *@plain, and each one's credentials written to a new containers-auth
 * file in @dir, keyed HOST[:PORT]/PATH as cfsctl lazy --authfile looks
 * them up; its name in @auth, or "" when no URL has credentials. So that
 * the daemon's argv, which every user's ps shows, holds no password.
 * Return: EXIT_OK, or EXIT_FAIL after saying why.
 */
static int split_userinfo(const char *urls, const char *dir, char **plain, char *auth,
			  size_t size)
{
	char *out = malloc(strlen(urls) + 1), *o = out;
	FILE *f = NULL;
	int fd, n = 0;

	auth[0] = '\0';
	if (!out)
		goto nomem;
	for (const char *u = urls; *u;) {
		const char *next = strchr(u, ','), *end = next ? next : u + strlen(u);
		const char *host = strstr(u, "://"), *hend, *at;

		host = host && host < end ? host + 3 : NULL;
		hend = host ? host + strcspn(host, "/?#,") : NULL;
		if (hend && hend > end)
			hend = end;
		at = host ? memrchr(host, '@', (size_t)(hend - host)) : NULL;
		if (!at) {
			memcpy(o, u, (size_t)(end - u));
			o += end - u;
		} else {
			size_t ulen = (size_t)(at - host), plen;
			char *cred = malloc(ulen + 1), *b64 = malloc(4 * (ulen / 3 + 1) + 1);
			const char *path = at + 1;
			size_t keylen = (size_t)(end - path);

			if (!cred || !b64) {
				free(cred);
				free(b64);
				goto nomem;
			}
			plen = unescape(host, ulen, cred);
			EVP_EncodeBlock((unsigned char *)b64, (unsigned char *)cred, (int)plen);
			explicit_bzero(cred, ulen + 1);
			free(cred);
			if (!f) {
				snprintf(auth, size, "%s/auth.XXXXXX", dir);
				fd = mkostemp(auth, O_CLOEXEC); /* 0600 */
				f = fd >= 0 ? fdopen(fd, "w") : NULL;
				if (!f) {
					cli_error("mount: creating '%s': %s", auth, strerror(errno));
					if (fd >= 0)
						close(fd);
					explicit_bzero(b64, strlen(b64));
					free(b64);
					goto fail;
				}
				fputs("{\"auths\": {", f);
			}
			while (keylen && path[keylen - 1] == '/')
				keylen--;
			fprintf(f, "%s\"%.*s\": {\"auth\": \"%s\"}", n++ ? ", " : "", (int)keylen,
				path, b64);
			explicit_bzero(b64, strlen(b64));
			free(b64);
			memcpy(o, u, (size_t)(host - u));
			o += host - u;
			memcpy(o, at + 1, (size_t)(end - at - 1));
			o += end - at - 1;
		}
		if (!next)
			break;
		*o++ = ',';
		u = next + 1;
	}
	*o = '\0';
	if (f && (fputs("}}\n", f) < 0 || fclose(f) != 0)) {
		f = NULL;
		cli_error("mount: writing '%s': %s", auth, strerror(errno));
		goto fail;
	}
	*plain = out;
	return EXIT_OK;
nomem:
	cli_error("mount: %s", strerror(ENOMEM));
fail:
	if (f)
		fclose(f);
	if (auth[0])
		unlink(auth);
	auth[0] = '\0';
	free(out);
	return EXIT_FAIL;
}

static int start_lazy(const char *store, const char *urls, const char *authfile, char *dir,
		      size_t size, pid_t *pid)
{
	char auth[64], *plain = NULL;
	struct stat parent, st;
	int status, r;

	if (mkdir("/run", 0755) < 0 && errno != EEXIST)
		goto err_dir;
	if (mkdir("/run/cfs-lazy", 0755) < 0 && errno != EEXIST)
		goto err_dir;
	snprintf(dir, size, "/run/cfs-lazy/XXXXXX");
	if (!mkdtemp(dir) || stat("/run/cfs-lazy", &parent) < 0)
		goto err_dir;
	if (authfile) {
		plain = strdup(urls);
		auth[0] = '\0';
	} else if (split_userinfo(urls, "/run/cfs-lazy", &plain, auth, sizeof(auth)) != EXIT_OK) {
		rmdir(dir);
		return EXIT_FAIL;
	}
	if (!plain) {
		cli_error("mount: %s", strerror(ENOMEM));
		rmdir(dir);
		return EXIT_FAIL;
	}
	*pid = fork();
	if (*pid < 0) {
		cli_error("mount: starting cfsctl lazy: %s", strerror(errno));
		rmdir(dir);
		r = EXIT_FAIL;
		goto out;
	}
	if (*pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		setsid();
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
		}
		if (authfile || auth[0])
			execl("/proc/self/exe", "cfsctl", "lazy", "--store", store, "--url", plain,
			      "--authfile", authfile ? authfile : auth, dir, (char *)NULL);
		else
			execl("/proc/self/exe", "cfsctl", "lazy", "--store", store, "--url", plain,
			      dir, (char *)NULL);
		cli_error("mount: running cfsctl lazy: %s", strerror(errno));
		_exit(EXIT_FAIL);
	}
	/* Mounted when the directory is the root of another filesystem. The
	 * daemon has read its credentials by then: their file goes. */
	r = EXIT_FAIL;
	for (int i = 0; i < 200; i++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		if (stat(dir, &st) == 0 && st.st_dev != parent.st_dev) {
			r = EXIT_OK;
			goto out;
		}
		if (waitpid(*pid, &status, WNOHANG) == *pid) {
			cli_error("mount: cfsctl lazy on '%s' exited before serving", dir);
			rmdir(dir);
			goto out;
		}
		nanosleep(&ts, NULL);
	}
	cli_error("mount: cfsctl lazy on '%s' did not mount it within 10 s", dir);
	kill(*pid, SIGTERM);
	waitpid(*pid, &status, 0);
	rmdir(dir);
out:
	if (auth[0])
		unlink(auth);
	free(plain);
	return r;
err_dir:
	cli_error("mount: creating a directory for cfsctl lazy under '/run/cfs-lazy': %s",
		  strerror(errno));
	return EXIT_FAIL;
}

/* --verity-check into *@ctx */
static int verity_check_option(void *ctx, int c, const char *arg)
{
	int *verity_check = ctx;

	if (c != 'v')
		return -1;
	if (strlen(arg) != 1 || arg[0] < '0' || arg[0] > '2')
		return cli_usage("mount", "--verity-check must be 0, 1 or 2");
	*verity_check = arg[0] - '0';
	return EXIT_OK;
}

/* With --repo: the image file the name or digest names, and the objects. */
static char *repo_image, *repo_basedir;
static uint8_t repo_digest[CFS_DIGEST_SIZE];

static int mount_image(int argc, char **argv);

int cmd_mount(int argc, char **argv)
{
	int rc = mount_image(argc, argv);

	free(repo_image);
	free(repo_basedir);
	return rc;
}

static int mount_image(int argc, char **argv)
{
	const char *basedir = NULL, *digest_arg = NULL, *image, *mnt, *repo = NULL;
	const char *upper = NULL, *work = NULL, *lazy_url = NULL, *idmap = NULL;
	const char *gpg_homedir = NULL, *format = NULL, *authfile = NULL;
	char *lazy_urls = NULL;
	bool from_ostree = false, fuse = false, foreground = false, allow_other = false;
	char lazy_dir[64];
	pid_t lazy_pid = -1;
	struct cfs_mount_options mo;
	struct cfs_mount_caps caps;
	uint8_t digest[CFS_DIGEST_SIZE];
	struct cfs_basedirs dirs = { 0 };
	int verity_check = -1, nsfd = -1, imgfd = -1, r, err;
	const struct cli_var vars[] = {
		{ CLI_OPT_BASEDIR, .str = &basedir },
		{ 'd', .str = &digest_arg },
		{ 'u', .str = &upper },
		{ 'w', .str = &work },
		{ 'L', .str = &lazy_url },
		{ 'A', .str = &authfile },
		{ 'i', .str = &idmap },
		{ 'O', .flag = &from_ostree },
		{ 'G', .str = &gpg_homedir },
		{ 'F', .str = &format },
		{ 'f', .flag = &fuse },
		{ 'g', .flag = &foreground },
		{ 'a', .flag = &allow_other },
		{ 0 },
	};
	const struct cli_parse p = {
		.verb = "mount", .shortopts = "h", .longopts = long_options,
		.help = cmd_mount_usage, .vars = vars, .repo = &repo,
		.take = verity_check_option, .ctx = &verity_check,
	};

	r = cli_parse(&p, argc, argv);
	if (r >= 0)
		return r;
	if (argc - optind != 2)
		return cli_usage("mount", "need IMAGE and MOUNTPOINT");
	image = argv[optind];
	mnt = argv[optind + 1];
	if ((gpg_homedir || format) && !from_ostree)
		return cli_usage("mount", "--gpg-homedir and --format need --from-ostree");
	if (from_ostree) {
		if (basedir || digest_arg || verity_check >= 0 || upper || work || lazy_url || authfile || idmap ||
		    repo || fuse || foreground || allow_other)
			return cli_usage("mount", "--from-ostree takes only --gpg-homedir and --format");
		enum cfs_image_format f = CFS_OSTREE_DIGEST_FORMAT;

		if (format && cfs_format_from_name(format, &f) < 0)
			return cli_usage("mount", "unknown --format '%s' (v1 or erofs)", format);
		if (cli_ostree_spec("mount", image) != EXIT_OK)
			return EXIT_USAGE;
		return cli_ostree_mount(image, gpg_homedir, mnt, f);
	}
	if (repo) {
		r = cli_repo_image("mount", repo, image, &repo_image, basedir ? NULL : &repo_basedir,
				   repo_digest);
		if (r != EXIT_OK)
			return r;
		image = repo_image;
		if (!basedir)
			basedir = repo_basedir;
	}
	/* mount(2) splits its option string at commas: no way to pass one. */
	if (basedir && (strchr(basedir, ',') || !*basedir))
		return cli_usage("mount", "--basedir must be non-empty and contain no ','");
	if (basedir) {
		/* parsed once, here: what the module would refuse, before anything */
		r = cli_basedirs("mount", &dirs, basedir);
		if (r != EXIT_OK)
			goto done;
	}

	if (!upper != !work) {
		r = cli_usage("mount", "--upperdir and --workdir go together");
		goto done;
	}
	/* Without root, FUSE: the one mount an ordinary user can make. */
	if (!fuse && !upper && !idmap && (have_sys_admin() == 0 || !cli_first_userns())) {
		fuse = true;
		cli_error("mount: not root: serving '%s' with FUSE (as --fuse)", image);
	}
	if (!fuse && (foreground || allow_other)) {
		r = cli_usage("mount", "--foreground and --allow-other are for --fuse");
		goto done;
	}
	if (fuse && (upper || idmap)) {
		r = cli_usage("mount", "--fuse takes no --upperdir or --idmap (stack overlayfs on it)");
		goto done;
	}
	if (lazy_url && !basedir) {
		r = cli_usage("mount", "--lazy-url needs --basedir; its first directory is the store to fill");
		goto done;
	}
	if (authfile && !lazy_url) {
		r = cli_usage("mount", "--authfile is for the mirrors of --lazy-url");
		goto done;
	}
	if (lazy_url) {
		/* a copy for the daemon; argv's own text shows no password */
		lazy_urls = strdup(lazy_url);
		if (!lazy_urls) {
			cli_error("mount: %s", strerror(ENOMEM));
			r = EXIT_FAIL;
			goto done;
		}
		cli_hide_userinfo((char *)lazy_url);
	}
	r = EXIT_FAIL;
	if (idmap) {
		nsfd = userns_open(idmap);
		if (nsfd < 0)
			goto done;
	}

	if (digest_arg && strcmp(digest_arg, "auto") != 0 &&
	    cfs_digest_from_hex(digest_arg, digest) < 0) {
		r = cli_usage("mount", "--digest must be 'auto' or 64 hex digits");
		goto done;
	}
	/* The image is opened once: what --digest=auto measures, and what the
	 * library measures against --digest, is the file that is mounted,
	 * whatever its name points at by then.
	 */
	imgfd = open(image, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (imgfd < 0) {
		cli_error("mount: opening '%s': %s", image, strerror(errno));
		goto done;
	}
	if (fuse && digest_arg && strcmp(digest_arg, "auto") == 0 && repo) {
		/* its name: checked by the daemon, measured or computed */
		memcpy(digest, repo_digest, CFS_DIGEST_SIZE);
	} else if (digest_arg && strcmp(digest_arg, "auto") == 0) {
		err = cfs_verity_measure_fd(imgfd, digest);
		if (err == -ENODATA) {
			cli_error("mount: measuring '%s': fs-verity is not enabled on the image", image);
			goto done;
		}
		if (err == -EOPNOTSUPP) {
			cli_error("mount: measuring '%s': %s", image, NO_VERITY_HINT);
			goto done;
		}
		if (err < 0) {
			cli_error("mount: measuring '%s': %s", image, strerror(-err));
			goto done;
		}
		if (repo && !fuse && memcmp(digest, repo_digest, CFS_DIGEST_SIZE) != 0) {
			cli_error("mount: '%s': its fs-verity digest is not its name", image);
			goto done;
		}
	}
	/* Said of the mount point, not of the image the kernel would name. */
	{
		struct stat st;

		if (stat(mnt, &st) < 0) {
			cli_error("mount: mount point '%s': %s", mnt, strerror(errno));
			goto done;
		}
		if (!S_ISDIR(st.st_mode)) {
			cli_error("mount: mount point '%s': %s", mnt, strerror(ENOTDIR));
			goto done;
		}
	}

	if (fuse) {
		struct cli_mirrors m;
		struct cli_fuse_options fo = {
			.image = image,
			.imgfd = imgfd,
			.mountpoint = mnt,
			.basedirs = basedir ? &dirs : NULL,
			.digest = digest_arg ? digest : NULL,
			.verity_check = verity_check >= 0 ? verity_check : digest_arg ? 2 : 1,
			.foreground = foreground,
			.allow_other = allow_other,
		};

		/* --lazy-url: the daemon fetches what the first basedir lacks itself */
		cli_mirrors_init(&m);
		if (lazy_url) {
			r = cli_mirrors_option(&m, "mount", 'u', lazy_urls);
			if (r == EXIT_OK && authfile)
				r = cli_mirrors_option(&m, "mount", 'A', authfile);
			if (r == EXIT_OK)
				r = cli_mirrors_check_urls(&m, "mount");
			if (r == EXIT_OK)
				r = cli_mirrors_logins(&m, "mount");
			if (r == EXIT_OK && cfs_fetch_init() < 0) {
				cli_error("mount: cannot initialise libcurl");
				r = EXIT_FAIL;
			}
			if (r != EXIT_OK) {
				cli_mirrors_free(&m);
				goto done;
			}
			fo.mirrors = &m;
		}
		r = cli_fuse_mount(&fo);
		if (lazy_url)
			cfs_fetch_exit();
		cli_mirrors_free(&m);
		goto done;
	}
	err = cfs_image_mount_caps(image, &caps);
	if (err < 0) {
		cli_error("mount: opening '%s': %s", image, strerror(-err));
		goto done;
	}
	if (upper && !caps.upper) {
		r = cli_usage("mount", "--upperdir: a %s image takes no upper directory", caps.format);
		goto done;
	}
	if (verity_check >= 0 && !caps.verity_check) {
		r = cli_usage("mount", "--verity-check is not for %s images; use --digest", caps.format);
		goto done;
	}
	if (lazy_url && !caps.extra_basedir) {
		r = cli_usage("mount", "--lazy-url is not for %s images", caps.format);
		goto done;
	}
	/* An image that takes an upper layer is overlayfs's, which needs two lower ones. */
	if (caps.upper && !basedir && !upper) {
		r = cli_usage("mount",
			      "%s images need --basedir DIR (or --repo DIR): the files' contents are there",
			      caps.format);
		goto done;
	}
	if (have_sys_admin() == 0) {
		cli_error("mount: mounting '%s' needs CAP_SYS_ADMIN: run it as root", image);
		goto done;
	}

	mo = (struct cfs_mount_options){
		.basedirs = basedir ? &dirs : NULL,
		.digest = digest_arg ? digest : NULL,
		.verity_check = verity_check,
		.upperdir = upper,
		.workdir = work,
		.userns_fd = nsfd,
		.userns = idmap,
	};
	if (lazy_url) {
		/* the store is the first basedir; the lazy directory is last */
		r = start_lazy(dirs.dirs[0], lazy_urls, authfile, lazy_dir, sizeof(lazy_dir),
			       &lazy_pid);
		if (r != EXIT_OK) {
			r = -1;
			goto out;
		}
		r = cfs_basedirs_add(&dirs, lazy_dir);
		if (r < 0) {
			cli_error("mount: %s", strerror(-r));
			goto out;
		}
	}
	/* What the library says of a failed mount is the verb's to say. */
	cfs_set_message_handler(mount_message, NULL);
	r = cfs_image_mount_fd(imgfd, image, mnt, &mo);
out:
	if (r < 0 && lazy_pid > 0) {
		kill(lazy_pid, SIGTERM); /* it unmounts its directory */
		waitpid(lazy_pid, NULL, 0);
		rmdir(lazy_dir);
	}
	r = r < 0 ? EXIT_FAIL : EXIT_OK;
done:
	free(lazy_urls);
	cfs_basedirs_free(&dirs);
	if (imgfd >= 0)
		close(imgfd);
	if (nsfd >= 0)
		close(nsfd);
	return r;
}
