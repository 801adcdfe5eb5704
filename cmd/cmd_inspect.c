// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl inspect: show what an image holds without mounting it. A summary
 * (default), an ls -l style listing, everything about one inode, the image
 * as a dumpfile, the backing files it references, and which of those are
 * missing from a set of base directories. Summary, ls and stat also speak
 * JSON. The image is untrusted input: a corrupt one is reported with the
 * reader's message, which names the offset, and exit status 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/image.h"
#include "cfs/store.h"
#include "cfs/util.h"

static char last_msg[1024];

static void keep_msg(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

/* "cfsctl: inspect: 'IMAGE': <reason>"; the library's message if it left one */
static int fail(const char *path, int err)
{
	cli_error("inspect: '%s': %s", path, last_msg[0] ? last_msg : strerror(err < 0 ? -err : err));
	last_msg[0] = '\0';
	return EXIT_FAIL;
}

static void time_string(int64_t sec, char *buf, size_t size)
{
	time_t t = (time_t)sec;
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, size, "%" PRId64, sec);
}

/* ---- options ---- */

static const struct option json_opts[] = {
	CLI_OPTION_REPO,
	CLI_OPTION_JSON,
	CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

static const struct option objects_opts[] = {
	CLI_OPTION_REPO,
	CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};
/* The summary's: --json, or --karg for the kernel parameter alone. */
static const struct option summary_opts[] = {
	CLI_OPTION_REPO,
	CLI_OPTION_JSON,
	{ "karg", no_argument, NULL, 'k' },
	CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};
static bool karg;

static const struct option dump_opts[] = {
	CLI_OPTION_REPO,
	{ "as-mounted", no_argument, NULL, 'm' },
	CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

static const struct option missing_opts[] = {
	CLI_OPTION_REPO,
	CLI_OPTION_BASEDIR,
	CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

/* cfsctl inspect --help, and its man page (docs/mkman.py) */
const char cmd_inspect_usage[] =
	  "Usage: cfsctl inspect [--json] [--repo DIR] IMAGE\n"
	  "       cfsctl inspect --karg [--repo DIR] IMAGE\n"
	  "       cfsctl inspect ls [--json] [--repo DIR] IMAGE [PATH]\n"
	  "       cfsctl inspect stat [--json] [--repo DIR] IMAGE PATH\n"
	  "       cfsctl inspect dump [--as-mounted] [--repo DIR] IMAGE\n"
	  "       cfsctl inspect objects [--repo DIR] IMAGE\n"
	  "       cfsctl inspect missing --basedir DIR[:DIR...] IMAGE\n"
	  "       cfsctl inspect missing --repo DIR [--basedir DIR[:DIR...]] IMAGE\n"
	  "\n"
	  "Show what a composefs image holds, without mounting it.\n"
	  "\n"
	  "  (no verb)  summary: format and version, inodes by type, directories and\n"
	  "             entries, hardlinks, xattr sets and how many inodes share each,\n"
	  "             objects (distinct backing files) and their bytes, content\n"
	  "             bytes, image size and the image's fs-verity digest; in JSON,\n"
	  "             \"format\" is \"composefs-v1\" or \"erofs\" (composefs 1.0) and\n"
	  "             \"version\" the format version or the composefs_version\n"
	  "  ls         list the directory PATH (default /) like ls -l; a PATH that\n"
	  "             is not a directory lists just that entry\n"
	  "  stat       everything the image records about the inode at PATH\n"
	  "  dump       the image as a composefs-dump(5) file; building that dump\n"
	  "             gives the same image, with cfsctl or with mkcomposefs, and\n"
	  "             for an image mkcomposefs made it is what composefs-info\n"
	  "             dump prints: a file whose content is in the image has no\n"
	  "             DIGEST (one would ask for a trusted.overlay.metacopy xattr),\n"
	  "             and the root shows the overlay.opaque xattrs composefs sets\n"
	  "  objects    the backing paths of all regular files, sorted, unique\n"
	  "  missing    the backing paths no base directory provides (the first\n"
	  "             holding a path decides; it must be a regular file of the\n"
	  "             recorded size); exits 0 whether or not any are missing\n"
	  "             (no output: nothing is missing)\n"
	  "\n"
	  "Options:\n"
	  "  --json           JSON output (summary, ls, stat); a string that is not\n"
	  "                   valid UTF-8 is written as an array of its byte values\n"
	  "  --karg           print only the kernel parameter that boots the image\n"
	  "                   as the root filesystem: composefs=<its fs-verity\n"
	  "                   digest> (docs/boot.md)\n"
	  "  --as-mounted     dump: the tree as a mount shows it instead, as ls,\n"
	  "                   stat, diff and tui do: the digest of each content in\n"
	  "                   the image, without the xattrs composefs sets for its\n"
	  "                   whiteouts; it may not build the same image\n"
	  "  --basedir=DIRS   colon-separated directories that hold the objects\n"
	  "                   ('\\:' for a colon in a name, '\\\\' for a backslash)\n"
	  "  --repo=DIR       IMAGE is a name or an image digest (64 hex digits) in\n"
	  "                   the repository DIR (see cfsctl images); missing looks\n"
	  "                   in DIR/objects unless --basedir is given\n"
	  "  --help           show this help\n"
	  "\n"
	  "Names, targets and paths in text output are escaped as in dumpfiles\n"
	  "(\\xXY for spaces, control and non-ASCII bytes). A corrupt image is an\n"
	  "error naming what is wrong and at which offset (exit 1).\n"
	  "\n"
	  "Examples:\n"
	  "  cfsctl inspect rootfs.cfs\n"
	  "  cfsctl inspect ls rootfs.cfs /etc\n"
	  "  cfsctl inspect stat --json --repo /var/lib/cfs os/1 /etc/os-release\n"
	  "  cfsctl inspect missing --basedir objects rootfs.cfs\n";

/* With --repo, the image file IMAGE names and the repository's objects. */
static char *repo_image, *repo_basedir;

/*
 * Parse "[--json] ARGS..." for a subcommand; @min..@max positional
 * arguments; with --repo, IMAGE (the first) is a name or digest, replaced
 * by its file, and a missing --basedir is the repository's objects. *@flag is set by its one flag, --json or dump's --as-mounted.
 * Returns -1 to go on, or an exit status.
 */
static int parse(int argc, char **argv, const struct option *opts, bool *flag,
		 const char **basedir, int min, int max)
{
	static const char *repo;
	const struct cli_var vars[] = {
		{ CLI_OPT_JSON, .flag = flag },
		{ 'm', .flag = flag },
		{ 'k', .flag = &karg },
		{ CLI_OPT_BASEDIR, .str = basedir },
		{ 0 },
	};
	const struct cli_parse p = {
		.verb = "inspect", .shortopts = "", .longopts = opts, .vars = vars,
		.help = cmd_inspect_usage,
		.repo = &repo,
	};
	int rc;

	rc = cli_parse(&p, argc, argv);
	if (rc >= 0)
		return rc;
	if (argc - optind < min)
		return cli_usage("inspect", "%s: missing IMAGE%s", argv[0],
				 min > 1 ? " or PATH" : "");
	if (argc - optind > max)
		return cli_usage("inspect", "%s: unexpected argument '%s'", argv[0], argv[optind + max]);
	if (repo) {
		/* IMAGE is a name or digest: its file, and the store as basedir */
		rc = cli_repo_image("inspect", repo, argv[optind], &repo_image,
				    basedir && !*basedir ? &repo_basedir : NULL, NULL);
		if (rc != EXIT_OK)
			return rc;
		argv[optind] = repo_image;
		if (basedir && !*basedir)
			*basedir = repo_basedir;
	}
	return -1;
}

/*
 * --karg: "composefs=<the image's fs-verity digest>", the kernel parameter
 * under which the initramfs mounts it as the root (docs/boot.md). The image
 * is opened first, so that only an image cfsctl can read gets one.
 */
static int print_karg(const char *path)
{
	char hex[CFS_DIGEST_HEX_SIZE];
	uint8_t digest[CFS_DIGEST_SIZE];
	struct cfs_image *img = NULL;
	int fd, ret;

	ret = cfs_image_open(path, &img);
	if (ret < 0)
		return fail(path, ret);
	cfs_image_close(img);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(path, -errno);
	ret = cfs_verity_digest_fd(fd, digest);
	close(fd);
	if (ret < 0)
		return fail(path, ret);
	cfs_digest_to_hex(digest, hex);
	printf("composefs=%s\n", hex);
	return cli_close_stdout();
}

/* ---- summary ---- */

struct xref {
	uint64_t off;
	uint32_t len;
	uint64_t ino;
};

struct obj {
	const char *path;
	uint32_t len;
	uint64_t size;
};

struct stats {
	struct cfs_image *img;
	uint64_t by_type[16];
	uint64_t inodes, dirs, entries, extra_links, reg_bytes;
	struct xref *x;
	size_t nx, xcap;
	struct obj *o;
	size_t no, ocap;
};

static int count_one(void *opaque, const struct cfs_walk_entry *e)
{
	struct stats *s = opaque;
	const struct cfs_inode *in = e->inode;
	struct xref *x;
	struct obj *o;

	if (e->depth > 0)
		s->entries++;
	if (e->first_path) {
		s->extra_links++;
		return 0;
	}
	s->inodes++;
	s->by_type[(in->mode & S_IFMT) >> 12]++;
	if (S_ISDIR(in->mode))
		s->dirs++;
	if (in->xattrs_len) {
		struct cfs_inode_desc d;

		x = cfs_grow(s->x, &s->xcap, s->nx, sizeof(*x), 256);
		if (!x)
			return -ENOMEM;
		s->x = x;
		cfs_inode_describe(s->img, in, &d);
		s->x[s->nx++] = (struct xref){ d.xattrs_offset, in->xattrs_len, in->ino };
	}
	if (S_ISREG(in->mode)) {
		s->reg_bytes += in->size;
		if (in->payload_len) {
			o = cfs_grow(s->o, &s->ocap, s->no, sizeof(*o), 256);
			if (!o)
				return -ENOMEM;
			s->o = o;
			s->o[s->no++] = (struct obj){ in->payload, in->payload_len, in->size };
		}
	}
	return 0;
}

static int cmp_xref(const void *a, const void *b)
{
	const struct xref *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

static int cmp_obj(const void *a, const void *b)
{
	const struct obj *x = a, *y = b;
	int r = memcmp(x->path, y->path, x->len < y->len ? x->len : y->len);

	return r ? r : (x->len < y->len ? -1 : x->len > y->len);
}

/* Walk the image; objects sorted and made unique; xattr refs sorted. */
static int gather(struct cfs_image *img, struct stats *s)
{
	size_t i, n = 0;
	int ret;

	memset(s, 0, sizeof(*s));
	s->img = img;
	ret = cfs_image_walk(img, count_one, s);
	if (ret)
		return ret < 0 ? ret : -EIO;
	if (s->nx)
		qsort(s->x, s->nx, sizeof(*s->x), cmp_xref);
	if (s->no)
		qsort(s->o, s->no, sizeof(*s->o), cmp_obj);
	for (i = 0; i < s->no; i++)
		if (n == 0 || cmp_obj(&s->o[n - 1], &s->o[i]) != 0)
			s->o[n++] = s->o[i];
	s->no = n;
	return 0;
}

static void stats_free(struct stats *s)
{
	free(s->x);
	free(s->o);
}

struct xset {
	uint64_t off;
	uint32_t len, n_attr;
	uint64_t users;
};

static int count_attr(void *ctx, const struct cfs_xattr *x)
{
	(void)x;
	(*(uint32_t *)ctx)++;
	return 0;
}

static int cmp_xset(const void *a, const void *b)
{
	const struct xset *x = a, *y = b;

	if (x->users != y->users)
		return x->users > y->users ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* The distinct xattr sets, most shared first. */
static int xattr_sets(struct stats *s, struct xset **out, size_t *n_out)
{
	struct xset *v;
	size_t i, n = 0;
	int ret;

	v = calloc(s->nx ? s->nx : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < s->nx; i++) {
		if (i && s->x[i - 1].off == s->x[i].off && s->x[i - 1].len == s->x[i].len) {
			v[n - 1].users++;
			continue;
		}
		struct cfs_inode_desc d;
		struct cfs_inode in;

		ret = cfs_image_inode(s->img, s->x[i].ino, &in);
		if (ret == 0)
			ret = cfs_image_xattrs(s->img, &in, count_attr, &v[n].n_attr);
		if (ret < 0) {
			free(v);
			return ret;
		}
		cfs_inode_describe(s->img, &in, &d);
		v[n].off = d.xattrs_offset;
		v[n].len = s->x[i].len;
		v[n].users = 1;
		n++;
	}
	qsort(v, n, sizeof(*v), cmp_xset);
	*out = v;
	*n_out = n;
	return 0;
}

static const unsigned int type_order[] = { S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, S_IFBLK, S_IFIFO,
					   S_IFSOCK };

static int summary(const char *path, bool json)
{
	char hex[CFS_DIGEST_HEX_SIZE] = "-";
	uint8_t digest[CFS_DIGEST_SIZE];
	struct cfs_image *img = NULL;
	struct xset *sets = NULL;
	size_t n_sets = 0, i;
	uint64_t obj_bytes = 0;
	struct stats s = { 0 };
	struct cfs_image_desc desc;
	int fd, ret;

	ret = cfs_image_open(path, &img);
	if (ret < 0)
		return fail(path, ret);
	ret = gather(img, &s);
	if (ret == 0)
		ret = xattr_sets(&s, &sets, &n_sets);
	if (ret < 0)
		goto err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto err;
	}
	ret = cfs_verity_digest_fd(fd, digest);
	close(fd);
	if (ret < 0)
		goto err;
	cfs_digest_to_hex(digest, hex);
	cfs_image_describe(img, &desc);
	for (i = 0; i < s.no; i++)
		obj_bytes += s.o[i].size;

	if (json) {
		json_t *doc = json_object(), *types = json_object(), *list = json_array();

		cli_json_set(doc, "image", cli_json_text(path));
		cli_json_set(doc, "format", json_string(desc.format));
		cli_json_set(doc, "version", json_integer(cfs_image_version(img)));
		cli_json_set(doc, "size", json_integer((json_int_t)cfs_image_size(img)));
		cli_json_set(doc, "fsverity_digest", json_string(hex));
		cli_json_set(types, "total", json_integer((json_int_t)s.inodes));
		for (i = 0; i < sizeof(type_order) / sizeof(type_order[0]); i++)
			cli_json_set(types, cfs_type_plural(type_order[i]),
				     json_integer((json_int_t)s.by_type[type_order[i] >> 12]));
		cli_json_set(doc, "inodes", types);
		cli_json_set(doc, "directories", json_integer((json_int_t)s.dirs));
		cli_json_set(doc, "entries", json_integer((json_int_t)s.entries));
		cli_json_set(doc, "hardlinks", json_integer((json_int_t)s.extra_links));
		for (i = 0; i < n_sets; i++)
			cli_json_push(list, json_pack("{s:I, s:i, s:i, s:I}", "offset",
						      (json_int_t)sets[i].off, "bytes", (int)sets[i].len,
						      "xattrs", (int)sets[i].n_attr, "inodes",
						      (json_int_t)sets[i].users));
		cli_json_set(doc, "xattr_sets", list);
		cli_json_set(doc, "objects", json_integer((json_int_t)s.no));
		cli_json_set(doc, "object_bytes", json_integer((json_int_t)obj_bytes));
		cli_json_set(doc, "content_bytes", json_integer((json_int_t)s.reg_bytes));
		ret = cli_json_print(doc, CLI_JSON_LINES);
		if (ret < 0)
			goto err;
	} else {
		uint64_t users = 0;
		bool first = true;

		for (i = 0; i < n_sets; i++)
			users += sets[i].users;
		printf("image:          %s\n", path);
		printf("%s:%*s%s\n", desc.label, (int)(15 - strlen(desc.label)), "", desc.text);
		printf("image size:     %" PRIu64 " bytes\n", cfs_image_size(img));
		printf("fs-verity:      %s\n", hex);
		printf("inodes:         %" PRIu64 " (", s.inodes);
		for (i = 0; i < sizeof(type_order) / sizeof(type_order[0]); i++) {
			uint64_t n = s.by_type[type_order[i] >> 12];

			if (!n)
				continue;
			printf("%s%" PRIu64 " %s", first ? "" : ", ", n,
			       (n == 1 ? cfs_type_name : cfs_type_plural)(type_order[i]));
			first = false;
		}
		printf(")\n");
		printf("directories:    %" PRIu64 ", holding %" PRIu64 " entries\n", s.dirs, s.entries);
		printf("hardlinks:      %" PRIu64 " extra name%s\n", s.extra_links,
		       s.extra_links == 1 ? "" : "s");
		printf("xattr sets:     %zu, used by %" PRIu64 " inodes\n", n_sets, users);
		for (i = 0; i < n_sets && i < 10; i++)
			printf("  set at offset %" PRIu64 " (%u xattr%s, %u bytes): %" PRIu64 " inode%s\n",
			       sets[i].off, sets[i].n_attr, sets[i].n_attr == 1 ? "" : "s",
			       sets[i].len, sets[i].users,
			       sets[i].users == 1 ? "" : "s");
		if (n_sets > 10)
			printf("  ... and %zu more sets\n", n_sets - 10);
		printf("objects:        %zu backing files, %" PRIu64 " bytes\n", s.no, obj_bytes);
		printf("content:        %" PRIu64 " bytes in %" PRIu64 " regular files\n", s.reg_bytes,
		       s.by_type[S_IFREG >> 12]);
	}
	ret = 0;
err:
	free(sets);
	stats_free(&s);
	cfs_image_close(img);
	if (ret < 0)
		return fail(path, ret);
	return cli_close_stdout();
}

/* ---- ls, stat ---- */

static void print_size_column(const struct cfs_inode *in)
{
	if (S_ISCHR(in->mode) || S_ISBLK(in->mode))
		printf("%u, %u", major(in->rdev), minor(in->rdev));
	else
		printf("%" PRIu64, in->size);
}

static void ls_line(const char *name, size_t len, const struct cfs_inode *in)
{
	char mode[11], when[32];

	cli_mode_string(in->mode, mode);
	time_string(in->mtime_sec, when, sizeof(when));
	printf("%s %" PRIu32 " %" PRIu32 " %" PRIu32 " ", mode, in->nlink, in->uid, in->gid);
	print_size_column(in);
	printf(" %s ", when);
	cfs_escape(stdout, name, len, 0);
	if (S_ISLNK(in->mode)) {
		fputs(" -> ", stdout);
		cfs_escape(stdout, in->payload, in->payload_len, 0);
	}
	fputc('\n', stdout);
}

/* The fields of @in that ls and stat print, into the object @o. */
static void json_inode_fields(json_t *o, const struct cfs_inode *in)
{
	char perm[8];

	snprintf(perm, sizeof(perm), "%04o", in->mode & 07777);
	cli_json_set(o, "ino", json_integer((json_int_t)in->ino));
	cli_json_set(o, "type", json_string(cfs_type_name(in->mode)));
	cli_json_set(o, "mode", json_integer(in->mode));
	cli_json_set(o, "permissions", json_string(perm));
	cli_json_set(o, "nlink", json_integer(in->nlink));
	cli_json_set(o, "uid", json_integer(in->uid));
	cli_json_set(o, "gid", json_integer(in->gid));
	cli_json_set(o, "size", json_integer((json_int_t)in->size));
	if (S_ISCHR(in->mode) || S_ISBLK(in->mode)) {
		cli_json_set(o, "rdev", json_integer(in->rdev));
		cli_json_set(o, "major", json_integer(major(in->rdev)));
		cli_json_set(o, "minor", json_integer(minor(in->rdev)));
	}
	cli_json_set(o, "mtime", json_pack("{s:I, s:I}", "sec", (json_int_t)in->mtime_sec, "nsec",
					   (json_int_t)in->mtime_nsec));
	if (S_ISLNK(in->mode))
		cli_json_set(o, "target", cli_json_bytes(in->payload, in->payload_len));
	else if (S_ISREG(in->mode) && in->payload_len)
		cli_json_set(o, "backing_path", cli_json_bytes(in->payload, in->payload_len));
	if (in->has_digest) {
		char hex[CFS_DIGEST_HEX_SIZE];

		cfs_digest_to_hex(in->digest, hex);
		cli_json_set(o, "digest", json_string(hex));
	}
}

/* An entry of ls: its name, then the fields of its inode. */
static json_t *json_entry(const char *name, size_t len, const struct cfs_inode *in)
{
	json_t *o = json_object();

	cli_json_set(o, "name", cli_json_bytes(name, len));
	json_inode_fields(o, in);
	return o;
}

/*
 * Open the image @path and find @where in it: -1 to go on with *@img open,
 * or an exit status after saying why.
 */
static int open_where(const char *path, const char *where, struct cfs_image **img,
		      struct cfs_inode *in)
{
	int ret = cfs_image_open(path, img);

	if (ret < 0)
		return fail(path, ret);
	ret = cfs_image_resolve(*img, where, in);
	if (ret >= 0)
		return -1;
	cfs_image_close(*img);
	if (ret == -ENOENT || ret == -ENOTDIR) {
		cli_error("inspect: '%s': '%s': %s", path, where, strerror(-ret));
		return EXIT_FAIL;
	}
	return fail(path, ret);
}

static int do_ls(const char *path, const char *where, bool json)
{
	struct cfs_image *img = NULL;
	struct cfs_inode dir, in;
	struct cfs_dir_iter it;
	struct cfs_dirent d;
	json_t *list = NULL;
	int ret;

	ret = open_where(path, where, &img, &dir);
	if (ret >= 0)
		return ret;
	if (json)
		list = json_array();
	if (!S_ISDIR(dir.mode)) {
		if (json)
			cli_json_push(list, json_entry(where, strlen(where), &dir));
		else
			ls_line(where, strlen(where), &dir);
		goto done;
	}
	ret = cfs_dir_iter_init(img, &dir, &it);
	if (ret < 0)
		goto err;
	while ((ret = cfs_dir_iter_next(&it, &d)) > 0) {
		ret = cfs_image_inode(img, d.ino, &in);
		if (ret < 0)
			goto err;
		if (json)
			cli_json_push(list, json_entry(d.name, d.name_len, &in));
		else
			ls_line(d.name, d.name_len, &in);
	}
	if (ret < 0)
		goto err;
done:
	cfs_image_close(img);
	if (json && (ret = cli_json_print(list, CLI_JSON_LINES)) < 0)
		return fail(path, ret);
	return cli_close_stdout();
err:
	cfs_image_close(img);
	json_decref(list);
	return fail(path, ret);
}

struct xattr_out {
	json_t *json; /* the array of --json, or NULL */
};

static int print_xattr(void *ctx, const struct cfs_xattr *x)
{
	struct xattr_out *o = ctx;

	if (o->json) {
		cli_json_push(o->json, json_pack("{s:o, s:o}", "key", cli_json_bytes(x->key, x->key_len),
						 "value", cli_json_bytes(x->value, x->value_len)));
	} else {
		fputs("  ", stdout);
		cfs_escape(stdout, x->key, x->key_len, CFS_ESCAPE_EQUAL);
		fputc('=', stdout);
		cfs_escape(stdout, x->value, x->value_len, CFS_ESCAPE_LONE_DASH);
		fputc('\n', stdout);
	}
	return 0;
}

static int do_stat(const char *path, const char *where, bool json)
{
	struct xattr_out xo = { 0 };
	struct cfs_image *img = NULL;
	char mode[11], when[32];
	struct cfs_inode_desc d;
	struct cfs_inode in;
	int ret;

	ret = open_where(path, where, &img, &in);
	if (ret >= 0)
		return ret;
	cli_mode_string(in.mode, mode);
	cfs_inode_describe(img, &in, &d);
	if (json) {
		json_t *doc = json_object();

		cli_json_set(doc, "path", cli_json_text(where));
		json_inode_fields(doc, &in);
		cli_json_set(doc, "ctime", json_pack("{s:I, s:I}", "sec", (json_int_t)in.ctime_sec,
						     "nsec", (json_int_t)in.ctime_nsec));
		cli_json_set(doc, "flags", json_integer(d.flags));
		cli_json_set(doc, "offset", json_integer((json_int_t)in.offset));
		xo.json = json_array();
		cli_json_set(doc, "xattrs", json_incref(xo.json));
		ret = cfs_image_xattrs(img, &in, print_xattr, &xo);
		json_decref(xo.json);
		if (ret < 0) {
			json_decref(doc);
			goto err;
		}
		ret = cli_json_print(doc, CLI_JSON_LINES);
		if (ret < 0)
			goto err;
	} else {
		printf("path:    ");
		cfs_escape(stdout, where, strlen(where), 0);
		printf("\ninode:   %" PRIu64 " (%s at offset %" PRIu64 ")\n", in.ino,
		       d.ino_kind, in.offset);
		if (d.has_flags)
			printf("flags:   0x%03x %s\n", d.flags, d.flag_names);
		printf("type:    %s\nmode:    0%o (%s)\n", cfs_type_name(in.mode), in.mode, mode);
		printf("nlink:   %" PRIu32 "\nuid:     %" PRIu32 "\ngid:     %" PRIu32 "\n", in.nlink,
		       in.uid, in.gid);
		if (S_ISCHR(in.mode) || S_ISBLK(in.mode))
			printf("rdev:    %u, %u\n", major(in.rdev), minor(in.rdev));
		printf("size:    %" PRIu64 "\n", in.size);
		time_string(in.mtime_sec, when, sizeof(when));
		printf("mtime:   %" PRId64 ".%09" PRIu32 " (%s UTC)\n", in.mtime_sec, in.mtime_nsec, when);
		time_string(in.ctime_sec, when, sizeof(when));
		printf("ctime:   %" PRId64 ".%09" PRIu32 " (%s UTC)\n", in.ctime_sec, in.ctime_nsec, when);
		if (S_ISDIR(in.mode) && d.has_chunks)
			printf("chunks:  %" PRIu32 "\n", d.n_chunks);
		if ((S_ISREG(in.mode) || S_ISLNK(in.mode)) && in.payload_len) {
			printf("%s", S_ISLNK(in.mode) ? "target:  " : "backing: ");
			cfs_escape(stdout, in.payload, in.payload_len, 0);
			fputc('\n', stdout);
		}
		if (in.has_digest) {
			char hex[CFS_DIGEST_HEX_SIZE];

			cfs_digest_to_hex(in.digest, hex);
			printf("digest:  %s%s\n", hex, d.digest_note);
		}
		if (in.xattrs_len)
			printf("xattrs:  set at offset %" PRIu64 ", %" PRIu32 " bytes\n", d.xattrs_offset,
			       in.xattrs_len);
		else
			printf("xattrs:  none\n");
		ret = cfs_image_xattrs(img, &in, print_xattr, &xo);
		if (ret < 0)
			goto err;
	}
	cfs_image_close(img);
	return cli_close_stdout();
err:
	cfs_image_close(img);
	return fail(path, ret);
}

/* ---- dump, objects, missing ---- */

/*
 * The dump that builds the image again, or with @as_mounted the tree as a
 * mount shows it (the digests of contents in the image, without the
 * markers composefs adds for its whiteouts).
 */
static int do_dump(const char *path, bool as_mounted)
{
	struct cfs_image *img;
	int ret;

	ret = cfs_image_open(path, &img);
	if (ret < 0)
		return fail(path, ret);
	cfs_image_set_view(img, as_mounted ? CFS_VIEW_MOUNTED : CFS_VIEW_STORED);
	ret = cfs_image_write_dump(img, stdout);
	cfs_image_close(img);
	if (ret == -EIO && ferror(stdout))
		return cli_close_stdout();
	if (ret < 0)
		return fail(path, ret);
	return cli_close_stdout();
}

static int do_objects(const char *path)
{
	struct cfs_image *img;
	struct stats s;
	int ret, rc;

	ret = cfs_image_open(path, &img);
	if (ret < 0)
		return fail(path, ret);
	ret = gather(img, &s);
	if (ret < 0) {
		cfs_image_close(img);
		return fail(path, ret);
	}
	for (size_t i = 0; i < s.no; i++) {
		cfs_escape(stdout, s.o[i].path, s.o[i].len, 0);
		fputc('\n', stdout);
	}
	rc = cli_close_stdout();
	stats_free(&s);
	cfs_image_close(img);
	return rc;
}

static int cmp_object_path(const void *a, const void *b)
{
	return strcmp(((const struct cfs_object *)a)->path, ((const struct cfs_object *)b)->path);
}

/*
 * The objects present in no basedir, by the same rule as the kernel and
 * cfsctl fetch (cfs_objects_locate): the first basedir that has the path
 * decides, and there it must be a regular file of the recorded size.
 */
static int do_missing(const char *path, const char *basedir_list)
{
	struct cfs_basedirs dirs = { 0 };
	struct cfs_objects set;
	struct cfs_image *img = NULL;
	int ret, rc;

	cfs_objects_init(&set);
	rc = cli_basedirs("inspect", &dirs, basedir_list);
	if (rc != EXIT_OK)
		goto out;
	rc = EXIT_FAIL;
	ret = cfs_image_open(path, &img);
	if (ret < 0) {
		rc = fail(path, ret);
		goto out;
	}
	ret = cfs_objects_add_image(&set, img);
	if (ret < 0) {
		rc = fail(path, ret);
		goto out;
	}
	ret = cfs_objects_locate(&set, &dirs);
	if (ret < 0) {
		cli_error("inspect: %s", last_msg[0] ? last_msg : strerror(-ret));
		goto out;
	}
	qsort(set.objs, set.n, sizeof(set.objs[0]), cmp_object_path);
	for (size_t i = 0; i < set.n; i++) {
		if (set.objs[i].state == CFS_OBJECT_PRESENT)
			continue;
		cfs_escape(stdout, set.objs[i].path, strlen(set.objs[i].path), 0);
		fputc('\n', stdout);
	}
	rc = cli_close_stdout();
out:
	if (img)
		cfs_image_close(img);
	cfs_objects_free(&set);
	cfs_basedirs_free(&dirs);
	return rc;
}

static int inspect(int argc, char **argv);

int cmd_inspect(int argc, char **argv)
{
	int rc = inspect(argc, argv);

	free(repo_image);
	free(repo_basedir);
	return rc;
}

static int inspect(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";
	const char *basedir = NULL;
	bool json = false, as_mounted = false;
	int ret;

	cfs_set_message_handler(keep_msg, NULL);
	if (strcmp(sub, "ls") == 0) {
		ret = parse(argc - 1, argv + 1, json_opts, &json, NULL, 1, 2);
		if (ret >= 0)
			return ret;
		return do_ls(argv[optind + 1], optind + 1 < argc - 1 ? argv[optind + 2] : "/", json);
	}
	if (strcmp(sub, "stat") == 0) {
		ret = parse(argc - 1, argv + 1, json_opts, &json, NULL, 2, 2);
		if (ret >= 0)
			return ret;
		return do_stat(argv[optind + 1], argv[optind + 2], json);
	}
	if (strcmp(sub, "dump") == 0) {
		ret = parse(argc - 1, argv + 1, dump_opts, &as_mounted, NULL, 1, 1);
		if (ret >= 0)
			return ret;
		return do_dump(argv[optind + 1], as_mounted);
	}
	if (strcmp(sub, "objects") == 0) {
		ret = parse(argc - 1, argv + 1, objects_opts, &json, NULL, 1, 1);
		if (ret >= 0)
			return ret;
		return do_objects(argv[optind + 1]);
	}
	if (strcmp(sub, "missing") == 0) {
		ret = parse(argc - 1, argv + 1, missing_opts, &json, &basedir, 1, 1);
		if (ret >= 0)
			return ret;
		if (!basedir)
			return cli_usage("inspect", "missing: --basedir or --repo is required");
		return do_missing(argv[optind + 1], basedir);
	}
	ret = parse(argc, argv, summary_opts, &json, NULL, 1, 1);
	if (ret >= 0)
		return ret;
	if (karg && json)
		return cli_usage("inspect", "--karg and --json do not go together");
	return karg ? print_karg(argv[optind]) : summary(argv[optind], json);
}
