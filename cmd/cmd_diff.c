// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl diff: what differs between two images, or between an image and a
 * directory tree. A directory is first made into an image in memory (an
 * anonymous memfd, no object store, digests computed), exactly as cfsctl
 * build would record it, so both sides are compared the same way by
 * lib/image/diff.c. Prints one line per differing path and a closing summary
 * with the object counts; exits 0 when identical, 1 when different, 2 on
 * errors, like diff(1).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/build.h"
#include "cfs/diff.h"
#include "cfs/image.h"
#include "cfs/util.h"

#define EXIT_DIFFERENT 1
#define EXIT_TROUBLE 2

static char last_msg[1024];

static void keep_msg(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

/* An image to compare: opened from a file, or built from a directory. */
struct input {
	const char *name;
	char *path; /* with --repo, the image file NAME names */
	struct cfs_image *img;
	void *map;
	size_t map_len;
};

static void on_build_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct cli_progress *p = ctx;

	p->total = total;
	cli_progress_update(p, done, 0);
}

/* Build the image of directory @in->name into an anonymous file and map it. */
static int image_of_dir(struct input *in)
{
	struct cfs_build_options o = { 0 };
	struct cli_progress progress;
	struct cfs_node *root = NULL;
	struct stat st;
	int fd, ret;

	fd = memfd_create("cfsctl-diff", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	cli_progress_start(&progress, "diff: hashing files", 0, 0);
	o.progress = on_build_progress;
	o.progress_ctx = &progress;
	ret = cfs_tree_from_dir(in->name, &o, &root);
	if (ret == 0)
		ret = cfs_tree_finish(root, &o);
	cli_progress_end(&progress);
	if (ret == 0)
		ret = cfs_tree_write(root, o.format, NULL, fd);
	cfs_tree_free(root);
	if (ret < 0)
		goto out;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	in->map_len = (size_t)st.st_size;
	in->map = mmap(NULL, in->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (in->map == MAP_FAILED) {
		in->map = NULL;
		ret = -errno;
		goto out;
	}
	ret = cfs_image_open_mem(in->map, in->map_len, &in->img);
out:
	close(fd);
	return ret;
}

static int open_input(struct input *in)
{
	struct stat st;
	int ret;

	if (in->path)
		ret = cfs_image_open(in->path, &in->img);
	else if (stat(in->name, &st) < 0)
		ret = -errno;
	else if (S_ISDIR(st.st_mode))
		ret = image_of_dir(in);
	else
		ret = cfs_image_open(in->name, &in->img);
	if (ret < 0) {
		cli_error("diff: '%s': %s", in->name, last_msg[0] ? last_msg : strerror(-ret));
		last_msg[0] = '\0';
	}
	return ret;
}

static void close_input(struct input *in)
{
	cfs_image_close(in->img);
	free(in->path);
	if (in->map)
		munmap(in->map, in->map_len);
}

/* ---- text ---- */

static void put_escaped(const char *s, size_t len, int flags)
{
	cfs_escape(stdout, s, len, flags);
}

static void put_digest(const struct cfs_inode *in)
{
	char hex[CFS_DIGEST_HEX_SIZE];

	if (!in->has_digest) {
		fputs("-", stdout);
		return;
	}
	cfs_digest_to_hex(in->digest, hex);
	printf("%.16s", hex);
}

static void put_link(const char *link, uint32_t nlink)
{
	if (!link) {
		fputs("none", stdout);
		return;
	}
	put_escaped(link, strlen(link), 0);
	printf("[%" PRIu32 "]", nlink);
}

static void text_entry(const struct cfs_diff_entry *e)
{
	const struct cfs_inode *a = e->old, *b = e->new;

	printf("%c ", e->change);
	put_escaped(e->path, strlen(e->path), 0);
	if (e->change != 'M') {
		putchar('\n');
		return;
	}
	if (e->changes & CFS_DIFF_TYPE)
		printf(" type=%s->%s", cfs_type_name(a->mode), cfs_type_name(b->mode));
	if (e->changes & CFS_DIFF_CONTENT) {
		printf(" content");
		if (a->size != b->size)
			printf(" size=%" PRIu64 "->%" PRIu64, a->size, b->size);
		if (a->has_digest || b->has_digest) {
			if (a->has_digest != b->has_digest ||
			    memcmp(a->digest, b->digest, CFS_DIGEST_SIZE) != 0) {
				printf(" digest=");
				put_digest(a);
				printf("->");
				put_digest(b);
			}
		} else if (a->payload_len != b->payload_len ||
			   (a->payload_len && memcmp(a->payload, b->payload, a->payload_len) != 0)) {
			printf(" backing=");
			put_escaped(a->payload, a->payload_len, CFS_ESCAPE_LONE_DASH);
			printf("->");
			put_escaped(b->payload, b->payload_len, CFS_ESCAPE_LONE_DASH);
		}
	}
	if (e->changes & CFS_DIFF_MODE)
		printf(" mode=%04o->%04o", a->mode & 07777, b->mode & 07777);
	if (e->changes & CFS_DIFF_OWNER)
		printf(" owner=%" PRIu32 ":%" PRIu32 "->%" PRIu32 ":%" PRIu32, a->uid, a->gid, b->uid,
		       b->gid);
	if (e->changes & CFS_DIFF_MTIME)
		printf(" mtime=%" PRId64 ".%" PRIu32 "->%" PRId64 ".%" PRIu32, a->mtime_sec,
		       a->mtime_nsec, b->mtime_sec, b->mtime_nsec);
	if (e->changes & CFS_DIFF_RDEV)
		printf(" rdev=%u,%u->%u,%u", major(a->rdev), minor(a->rdev), major(b->rdev),
		       minor(b->rdev));
	if (e->changes & CFS_DIFF_TARGET) {
		printf(" target=");
		put_escaped(a->payload, a->payload_len, CFS_ESCAPE_LONE_DASH);
		printf("->");
		put_escaped(b->payload, b->payload_len, CFS_ESCAPE_LONE_DASH);
	}
	if (e->changes & CFS_DIFF_HARDLINK) {
		printf(" hardlink=");
		put_link(e->old_link, a->nlink);
		printf("->");
		put_link(e->new_link, b->nlink);
	}
	if (e->changes & CFS_DIFF_XATTRS) {
		printf(" xattrs=");
		for (size_t i = 0; i < e->n_xattrs; i++) {
			printf("%s%c", i ? "," : "", e->xattrs[i].change);
			put_escaped(e->xattrs[i].key, e->xattrs[i].key_len, CFS_ESCAPE_EQUAL);
		}
	}
	putchar('\n');
}

/* ---- JSON ---- */

static json_t *json_inode(const struct cfs_inode *in, const char *link)
{
	json_t *o = json_object();
	char hex[CFS_DIGEST_HEX_SIZE], perm[8];

	snprintf(perm, sizeof(perm), "%04o", in->mode & 07777);
	cli_json_set(o, "type", json_string(cfs_type_name(in->mode)));
	cli_json_set(o, "mode", json_string(perm));
	cli_json_set(o, "uid", json_integer(in->uid));
	cli_json_set(o, "gid", json_integer(in->gid));
	cli_json_set(o, "mtime", json_pack("{s:I, s:I}", "sec", (json_int_t)in->mtime_sec, "nsec",
					   (json_int_t)in->mtime_nsec));
	if (S_ISREG(in->mode)) {
		cli_json_set(o, "size", json_integer((json_int_t)in->size));
		if (in->has_digest) {
			cfs_digest_to_hex(in->digest, hex);
			cli_json_set(o, "digest", json_string(hex));
		}
		if (in->payload_len)
			cli_json_set(o, "backing_path", cli_json_bytes(in->payload, in->payload_len));
	}
	if (S_ISLNK(in->mode))
		cli_json_set(o, "target", cli_json_bytes(in->payload, in->payload_len));
	if (S_ISCHR(in->mode) || S_ISBLK(in->mode))
		cli_json_set(o, "rdev", json_integer(in->rdev));
	if (!S_ISDIR(in->mode)) {
		cli_json_set(o, "nlink", json_integer(in->nlink));
		cli_json_set(o, "hardlink", cli_json_text(link));
	}
	return o;
}

static const char *const change_names[] = { "type", "content", "mode", "owner", "mtime",
					     "xattrs", "target", "hardlink", "rdev" };

static json_t *json_entry(const struct cfs_diff_entry *e)
{
	json_t *o = json_object(), *what, *xattrs;
	char change[2] = { e->change, '\0' };

	cli_json_set(o, "change", json_string(change));
	cli_json_set(o, "path", cli_json_text(e->path));
	if (e->change == 'M') {
		what = json_array();
		for (unsigned int i = 0; i < sizeof(change_names) / sizeof(change_names[0]); i++)
			if (e->changes & (1U << i))
				cli_json_push(what, json_string(change_names[i]));
		cli_json_set(o, "what", what);
		if (e->changes & CFS_DIFF_XATTRS) {
			xattrs = json_array();
			for (size_t i = 0; i < e->n_xattrs; i++)
				cli_json_push(xattrs,
					      json_pack("{s:o, s:s}", "key",
							cli_json_bytes(e->xattrs[i].key,
								       e->xattrs[i].key_len),
							"change",
							e->xattrs[i].change == '+' ? "added" :
							e->xattrs[i].change == '-' ? "removed" :
										     "changed"));
			cli_json_set(o, "xattrs", xattrs);
		}
	}
	if (e->old)
		cli_json_set(o, "old", json_inode(e->old, e->old_link));
	if (e->new)
		cli_json_set(o, "new", json_inode(e->new, e->new_link));
	return o;
}

struct out {
	bool json, stat;
	json_t *changes; /* --json without --stat: the list of changes */
	uint64_t n;
};

static int on_entry(void *ctx, const struct cfs_diff_entry *e)
{
	struct out *o = ctx;

	if (!o->stat) {
		if (o->json)
			cli_json_push(o->changes, json_entry(e));
		else
			text_entry(e);
	}
	o->n++;
	return ferror(stdout) ? -EIO : 0;
}

/* cfsctl diff --help, and its man page (docs/mkman.py) */
const char cmd_diff_usage[] =
	  "Usage: cfsctl diff [--stat] [--json] OLD NEW\n"
	  "       cfsctl diff [--stat] [--json] --repo DIR OLD NEW\n"
	  "\n"
	  "Compare two composefs images path by path. OLD or NEW (or both) may be a\n"
	  "directory: it is compared as the image cfsctl build would make of it\n"
	  "(built in memory, no object store; file contents are hashed), so an\n"
	  "image compared with the tree it was built from shows no difference.\n"
	  "Both trees are walked at once in their stored (sorted) order.\n"
	  "\n"
	  "Output: one line per path that differs, depth first, each directory's\n"
	  "entries in byte order, names escaped as in dumpfiles:\n"
	  "  + PATH       only in NEW (and everything below it)\n"
	  "  - PATH       only in OLD (and everything below it)\n"
	  "  M PATH WHAT  in both, different; WHAT lists each change as\n"
	  "               type=OLD->NEW (nothing else is compared then),\n"
	  "               content size=OLD->NEW digest=OLD->NEW (16 hex digits),\n"
	  "               mode=, owner=UID:GID->UID:GID, mtime=SEC.NSEC->SEC.NSEC,\n"
	  "               rdev=MAJOR,MINOR->..., target= (symlinks),\n"
	  "               hardlink=FIRST[NLINK]->FIRST[NLINK] or none (which paths\n"
	  "               share the inode: the first of them and their count),\n"
	  "               xattrs=+KEY,-KEY,~KEY (added, removed, value changed)\n"
	  "then a summary: paths added, removed and changed, and the backing\n"
	  "objects (by digest) in both, only in OLD and only in NEW, with the\n"
	  "bytes a machine holding OLD's objects must fetch to have NEW's.\n"
	  "Identical inputs print nothing.\n"
	  "\n"
	  "Options:\n"
	  "  --stat      the summary only\n"
	  "  --repo=DIR  OLD and NEW are names or image digests in the repository\n"
	  "              DIR (see cfsctl images)\n"
	  "  --json      a JSON document: every change with both sides in full, and\n"
	  "              the counts (printed also when the inputs are identical)\n"
	  "  -h, --help  show this help\n"
	  "\n"
	  "Examples:\n"
	  "  cfsctl diff old.cfs new.cfs\n"
	  "  cfsctl diff --stat rootfs/ new.cfs\n"
	  "  cfsctl diff --repo /var/lib/cfs os/1 os/2\n"
	  "\n"
	  "Exit status: 0 identical, 1 different, 2 trouble (usage, unreadable or\n"
	  "corrupt input), as diff(1).\n";

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_OPTION_JSON,
		CLI_OPTION_REPO,
		{ "stat", no_argument, NULL, 's' },
		CLI_OPTION_HELP,
		{ NULL, 0, NULL, 0 },
	};
	struct input in[2] = { 0 };
	const char *repo = NULL;
	struct cfs_diff_stats st;
	struct out out = { 0 };
	json_t *doc = NULL;
	const struct cli_var vars[] = {
		{ CLI_OPT_JSON, .flag = &out.json },
		{ 's', .flag = &out.stat },
		{ 0 },
	};
	const struct cli_parse p = {
		.verb = "diff", .shortopts = "h", .longopts = longopts,
		.help = cmd_diff_usage, .vars = vars, .repo = &repo,
	};
	int ret, rc = EXIT_TROUBLE;

	ret = cli_parse(&p, argc, argv);
	if (ret >= 0)
		/* a usage error is EXIT_TROUBLE already; so is a failed --help */
		return ret == EXIT_OK ? EXIT_OK : EXIT_TROUBLE;
	if (argc - optind < 2)
		return cli_usage("diff", "missing %s", argc - optind ? "NEW" : "OLD and NEW");
	if (argc - optind > 2)
		return cli_usage("diff", "unexpected argument '%s'", argv[optind + 2]);
	in[0].name = argv[optind];
	in[1].name = argv[optind + 1];
	for (int i = 0; repo && i < 2; i++)
		if (cli_repo_image("diff", repo, in[i].name, &in[i].path, NULL, NULL) != EXIT_OK)
			goto out;

	cfs_set_message_handler(keep_msg, NULL);
	if (open_input(&in[0]) < 0 || open_input(&in[1]) < 0)
		goto out;
	if (out.json) {
		doc = json_object();
		cli_json_set(doc, "old", cli_json_text(in[0].name));
		cli_json_set(doc, "new", cli_json_text(in[1].name));
		if (!out.stat) {
			out.changes = json_array();
			cli_json_set(doc, "changes", json_incref(out.changes));
		}
	}
	ret = cfs_diff_images(in[0].img, in[1].img, on_entry, &out, &st);
	if (ret != 0) {
		if (ret == -EIO && ferror(stdout)) {
			cli_close_stdout();
			goto out;
		}
		fflush(stdout);
		cli_error("diff: '%s' and '%s': %s", in[0].name, in[1].name,
			  last_msg[0] ? last_msg : strerror(ret < 0 ? -ret : EIO));
		goto out;
	}
	if (out.json) {
		cli_json_set(doc, "added", json_integer((json_int_t)st.added));
		cli_json_set(doc, "removed", json_integer((json_int_t)st.removed));
		cli_json_set(doc, "changed", json_integer((json_int_t)st.modified));
		cli_json_set(doc, "objects",
			     json_pack("{s:I, s:I, s:I}", "both", (json_int_t)st.objects_both,
				       "only_old", (json_int_t)st.objects_old, "only_new",
				       (json_int_t)st.objects_new));
		cli_json_set(doc, "fetch_bytes", json_integer((json_int_t)st.fetch_bytes));
		ret = cli_json_print(doc, CLI_JSON_LINES);
		doc = NULL;
		if (ret < 0) {
			cli_error("diff: '%s' and '%s': %s", in[0].name, in[1].name, strerror(-ret));
			goto out;
		}
	} else if (out.n) {
		/* identical inputs print nothing at all, like diff(1) */
		printf("%" PRIu64 " added, %" PRIu64 " removed, %" PRIu64 " changed\n", st.added,
		       st.removed, st.modified);
		printf("objects: %" PRIu64 " in both, %" PRIu64 " only in OLD, %" PRIu64
		       " only in NEW; %" PRIu64 " bytes to fetch to have NEW\n",
		       st.objects_both, st.objects_old, st.objects_new, st.fetch_bytes);
	}
	if (cli_close_stdout() != EXIT_OK)
		goto out;
	rc = out.n ? EXIT_DIFFERENT : EXIT_OK;
out:
	json_decref(doc);
	json_decref(out.changes);
	close_input(&in[0]);
	close_input(&in[1]);
	return rc;
}
