// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl verify: check an image thoroughly, and with --basedir the objects
 * it needs, without mounting anything and without changing anything. The
 * checking is lib/image/verify.c; this file parses options, prints one line per
 * problem (or a JSON document), draws the progress line while objects are
 * hashed, and closes with a summary. Exit 0 when everything checks, 1 when
 * anything is wrong (warnings alone do not count), 2 on usage errors.
 * --from-ostree checks an ostree commit's chain instead (cmd/ostree.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/store.h"
#include "cfs/util.h"
#include "cfs/verify.h"


static char last_msg[1024];

static void keep_msg(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

struct out {
	bool json;
	json_t *doc, *problems; /* --json: the document, and its list of problems */
	size_t n; /* problems printed */
	struct cli_progress progress;
	bool progress_started;
};

static void escaped(const char *s)
{
	cfs_escape(stdout, s, strlen(s), 0);
}

static void on_problem(void *ctx, const struct cfs_verify_problem *p)
{
	struct out *o = ctx;
	const char *sev = p->severity == CFS_VERIFY_ERROR ? "error" : "warning";

	if (o->progress_started)
		cli_progress_end(&o->progress);
	if (o->json) {
		json_t *j = json_object(), *users;

		cli_json_set(j, "severity", json_string(sev));
		cli_json_set(j, "kind", json_string(p->kind));
		if (p->object) {
			cli_json_set(j, "object", cli_json_text(p->object));
			users = json_array();
			for (size_t i = 0; i < p->n_users; i++)
				cli_json_push(users, cli_json_text(p->users[i].path));
			cli_json_set(j, "users", users);
		} else {
			cli_json_set(j, "path", cli_json_text(p->path));
			if (p->offset != UINT64_MAX)
				cli_json_set(j, "offset", json_integer((json_int_t)p->offset));
		}
		cli_json_set(j, "message", cli_json_text(p->message));
		cli_json_push(o->problems, j);
	} else if (p->object) {
		printf("%s: %s: object '", sev, p->kind);
		escaped(p->object);
		printf("' %s; used by", p->message);
		for (size_t i = 0; i < p->n_users; i++) {
			printf("%s '", i ? "," : "");
			escaped(p->users[i].path);
			printf("'");
		}
		printf("\n");
	} else {
		printf("%s: %s: ", sev, p->kind);
		if (p->path) {
			printf("'");
			escaped(p->path);
			printf("'");
		} else if (p->offset == UINT64_MAX) {
			printf("%s\n", p->message); /* about the whole image or a basedir */
			o->n++;
			return;
		} else {
			printf("image");
		}
		if (p->offset != UINT64_MAX)
			printf(" (offset %" PRIu64 ")", p->offset);
		printf(": %s\n", p->message);
	}
	o->n++;
}

static void on_progress(void *ctx, uint64_t done, uint64_t total, uint64_t done_bytes,
			uint64_t total_bytes)
{
	struct out *o = ctx;

	if (!o->progress_started) {
		cli_progress_start(&o->progress, "verify: hashing objects", total, total_bytes);
		o->progress_started = true;
	}
	cli_progress_update(&o->progress, done, done_bytes);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static void summary_text(const char *image, const struct cfs_verify_options *opts,
			 const struct cfs_verify_result *r)
{
	printf("verify: '");
	escaped(image);
	printf("': %" PRIu64 " inodes, %" PRIu64 " directories, %" PRIu64 " entries\n", r->inodes,
	       r->directories, r->entries);
	if (opts->basedirs->n)
		printf("verify: %" PRIu64 " %s in %zu %s: %" PRIu64 " ok, %" PRIu64
		       " with problems; digests %" PRIu64 " measured (fs-verity), %" PRIu64
		       " computed (%" PRIu64 " bytes read)\n",
		       r->objects, plural(r->objects, "object", "objects"), opts->basedirs->n,
		       plural(opts->basedirs->n, "basedir", "basedirs"),
		       r->objects_ok, r->objects - r->objects_ok, r->objects_measured,
		       r->objects_computed, r->bytes_hashed);
	if (opts->image_digest) {
		char hex[CFS_DIGEST_HEX_SIZE];

		cfs_digest_to_hex(r->image_digest, hex);
		printf("verify: image fs-verity digest %s (%s): %s\n", hex,
		       r->image_digest_measured ? "measured" : "computed",
		       memcmp(r->image_digest, opts->image_digest, CFS_DIGEST_SIZE) ? "WRONG" : "as expected");
	}
	printf("verify: %s: %" PRIu64 " %s, %" PRIu64 " %s\n", r->errors ? "FAILED" : "OK",
	       r->errors, plural(r->errors, "error", "errors"), r->warnings,
	       plural(r->warnings, "warning", "warnings"));
}

/* The rest of the document @doc (image and problems are in it), printed. */
static int summary_json(json_t *doc, const struct cfs_verify_options *opts,
			const struct cfs_verify_result *r)
{
	cli_json_set(doc, "ok", json_boolean(!r->errors));
	cli_json_set(doc, "errors", json_integer((json_int_t)r->errors));
	cli_json_set(doc, "warnings", json_integer((json_int_t)r->warnings));
	cli_json_set(doc, "inodes", json_integer((json_int_t)r->inodes));
	cli_json_set(doc, "directories", json_integer((json_int_t)r->directories));
	cli_json_set(doc, "entries", json_integer((json_int_t)r->entries));
	if (opts->basedirs->n)
		cli_json_set(doc, "objects",
			     json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "total",
				       (json_int_t)r->objects, "ok", (json_int_t)r->objects_ok,
				       "with_problems", (json_int_t)(r->objects - r->objects_ok),
				       "measured", (json_int_t)r->objects_measured, "computed",
				       (json_int_t)r->objects_computed, "bytes_read",
				       (json_int_t)r->bytes_hashed));
	if (opts->image_digest) {
		char hex[CFS_DIGEST_HEX_SIZE], want[CFS_DIGEST_HEX_SIZE];

		cfs_digest_to_hex(r->image_digest, hex);
		cfs_digest_to_hex(opts->image_digest, want);
		cli_json_set(doc, "image_digest",
			     json_pack("{s:s, s:s, s:s, s:b}", "digest", hex, "expected", want, "how",
				       r->image_digest_measured ? "measured" : "computed", "ok",
				       strcmp(hex, want) == 0));
	}
	return cli_json_print(doc, CLI_JSON_LINES);
}

/*
 * A repository open to other users shows them every image and object in
 * it: a warning of its own kind, "store-open", beside the image's problems.
 */
static void check_repo_open(const char *repo, struct out *out, struct cfs_verify_result *r)
{
	struct cfs_verify_problem p = { .severity = CFS_VERIFY_WARNING, .kind = "store-open",
					.offset = UINT64_MAX };
	char *msg = NULL;
	int fd;

	fd = open(repo, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return; /* it was open a moment ago: verify said what it found */
	if (cfs_store_exposed(fd) > 0 &&
	    asprintf(&msg, "repository '%s' is open to other users, who can read what it holds; make it private: chmod 0700 '%s'",
		     repo, repo) >= 0) {
		p.message = msg;
		on_problem(out, &p);
		r->warnings++;
		free(msg);
	}
	close(fd);
}

struct opts {
	struct cfs_verify_options vo;
	uint8_t digest[CFS_DIGEST_SIZE];
};

static int verify_option(void *ctx, int c, const char *arg)
{
	struct opts *o = ctx;

	switch (c) {
	case 'd':
		if (cfs_digest_from_hex(arg, o->digest) < 0)
			return cli_usage("verify", "--digest wants 64 hex digits, not '%s'", arg);
		o->vo.image_digest = o->digest;
		return EXIT_OK;
	case 'j':
		o->vo.jobs = cli_parse_count(arg);
		if (!o->vo.jobs)
			return cli_usage("verify", "--jobs wants a number from 1 to 4096, not '%s'",
					 arg);
		return EXIT_OK;
	}
	return -1;
}

/* cfsctl verify --help, and its man page (docs/mkman.py) */
const char cmd_verify_usage[] =
	  "Usage: cfsctl verify [OPTIONS] IMAGE\n"
	  "       cfsctl verify --from-ostree [--gpg-homedir=DIR] [--gpg-system-keyrings] REPO:REF\n"
	  "       cfsctl verify [OPTIONS] --repo DIR IMAGE\n"
	  "\n"
	  "Check every structural rule of the image format on every reachable inode,\n"
	  "more strictly than mounting needs: directories sorted and without\n"
	  "duplicate names, chunks and xattr sets within bounds and within one 4 KiB\n"
	  "page, names valid, entry types matching their inodes, no directory\n"
	  "cycles or directory hardlinks. Unreachable bytes of the inode section,\n"
	  "link counts that do not match and encodings a correct writer would not\n"
	  "produce are warnings. With --basedir, also check that each backing file\n"
	  "the image references is found (the first base directory holding it\n"
	  "wins, as in the kernel), is a regular file of the recorded size and has\n"
	  "the recorded fs-verity digest: measured by the kernel where fs-verity is\n"
	  "enabled on the file, computed from its content otherwise. Each object is\n"
	  "hashed once, however many paths use it. Nothing is ever written.\n"
	  "\n"
	  "A composefs 1.0 (EROFS) image is checked as strictly: the superblock and\n"
	  "each inode, xattr (inline and shared) and directory block within bounds,\n"
	  "names valid, directories sorted, without duplicates or cycles, \".\" and\n"
	  "\"..\" naming the right inodes, entry types matching, each\n"
	  "trusted.overlay.redirect the object path of the digest in its\n"
	  "trusted.overlay.metacopy, and no other overlay xattr overlayfs would act\n"
	  "on; offsets are file offsets.\n"
	  "\n"
	  "Options:\n"
	  "  --basedir=DIR[:DIR...]  directories holding the backing files (may be\n"
	  "                          given more than once; searched in order;\n"
	  "                          '\\:' for a colon in a name, '\\\\' for a\n"
	  "                          backslash)\n"
	  "  --repo=DIR              IMAGE is a name or an image digest in the\n"
	  "                          repository DIR (see cfsctl images): the\n"
	  "                          image's fs-verity digest must be its name;\n"
	  "                          a repository open to other users is a\n"
	  "                          warning (store-open)\n"
	  "                          (unless --digest), and the objects are\n"
	  "                          checked in DIR/objects unless --basedir\n"
	  "  --digest=HEX            the image's own fs-verity digest must be HEX\n"
	  "                          (measured where fs-verity is enabled on it,\n"
	  "                          computed otherwise)\n"
	  "  --require-verity        an object without fs-verity whose digest the\n"
	  "                          image records is an error, not a warning\n"
	  "  --jobs=N                hash objects with N threads (default: all CPUs)\n"
	  "  --json                  the same report as a JSON document\n"
	  "  --from-ostree           check the chain of the ostree commit REPO:REF\n"
	  "                          instead, link by link, and say which failed:\n"
	  "                          1. with --gpg-homedir or\n"
	  "                          --gpg-system-keyrings, its GPG signature;\n"
	  "                          2. every object of the commit against its\n"
	  "                          ostree checksum; 3. its\n"
	  "                          ostree.composefs.digest.v0 against the\n"
	  "                          digest of the EROFS image rebuilt from it (as\n"
	  "                          build --from-ostree --format=erofs makes it).\n"
	  "                          Prints one line per link, then \"verify: OK\".\n"
	  "                          Takes no other option but --gpg-homedir and\n"
	  "                          --gpg-system-keyrings\n"
	  "  --gpg-homedir=DIR       with --from-ostree: the commit must be signed\n"
	  "                          by a key of the GnuPG home DIR, and by no\n"
	  "                          other: a signature by a key of ostree's\n"
	  "                          system keyrings, which libostree also\n"
	  "                          reads, does not count\n"
	  "  --gpg-system-keyrings   with --from-ostree: trust the keys of\n"
	  "                          ostree's system keyrings too\n"
	  "                          (/usr/share/ostree/trusted.gpg.d, or the\n"
	  "                          directory $OSTREE_GPG_HOME)\n"
	  "  -h, --help              show this help\n"
	  "\n"
	  "Output: one line per problem, \"error: KIND: 'PATH' (offset N): what\" or\n"
	  "\"error: KIND: object 'xx/...' what; used by 'PATH', ...\", paths escaped as\n"
	  "in dumpfiles; then a summary. A progress line is drawn on stderr while\n"
	  "objects are hashed, when stderr is a terminal.\n"
	  "\n"
	  "Examples:\n"
	  "  cfsctl verify --basedir objects rootfs.cfs\n"
	  "  cfsctl verify --repo /var/lib/cfs --json os/1\n"
	  "  cfsctl verify --from-ostree --gpg-homedir keys repo:os\n"
	  "\n"
	  "Exit status: 0 everything checks (warnings allowed), 1 any error or a\n"
	  "failure to read, 2 usage error.\n";

int cmd_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_OPTION_BASEDIR,
		CLI_OPTION_REPO,
		{ "digest", required_argument, NULL, 'd' },
		{ "jobs", required_argument, NULL, 'j' },
		CLI_OPTION_JSON,
		{ "require-verity", no_argument, NULL, 'r' },
		{ "from-ostree", no_argument, NULL, 'O' },
		{ "gpg-homedir", required_argument, NULL, 'G' },
		{ "gpg-system-keyrings", no_argument, NULL, 'K' },
		CLI_OPTION_HELP,
		{ NULL, 0, NULL, 0 },
	};
	struct cfs_basedirs dirs = { 0 };
	const char *image, *repo = NULL;
	struct opts o = { 0 };
	struct cfs_verify_result r;
	struct out out = { 0 };
	const char *gpg_homedir = NULL;
	bool from_ostree = false, gpg_system = false;
	const struct cli_var vars[] = {
		{ CLI_OPT_JSON, .flag = &out.json },
		{ 'r', .flag = &o.vo.require_verity },
		{ 'O', .flag = &from_ostree },
		{ 'G', .str = &gpg_homedir },
		{ 'K', .flag = &gpg_system },
		{ 0 },
	};
	const struct cli_parse p = {
		.verb = "verify", .shortopts = "h", .longopts = longopts,
		.help = cmd_verify_usage, .vars = vars,
		.basedirs = &dirs, .repo = &repo, .take = verify_option, .ctx = &o,
	};
	char *repo_image = NULL, *repo_basedir = NULL;
	int ret, rc;

	rc = cli_parse(&p, argc, argv);
	if (rc >= 0)
		goto out;
	if (repo && from_ostree) {
		rc = cli_usage("verify", "--from-ostree takes only --gpg-homedir and --gpg-system-keyrings");
		goto out;
	}
	if (repo && argc - optind == 1) {
		/* A name or digest: its image, which must have that digest, and its objects */
		rc = cli_repo_image("verify", repo, argv[optind], &repo_image,
				    dirs.n ? NULL : &repo_basedir,
				    o.vo.image_digest ? NULL : o.digest);
		if (rc != EXIT_OK)
			goto out;
		o.vo.image_digest = o.digest;
		if (repo_basedir) {
			rc = cli_basedirs("verify", &dirs, repo_basedir);
			if (rc != EXIT_OK)
				goto out;
		}
		argv[optind] = repo_image;
	}
	o.vo.basedirs = &dirs;
	if (o.vo.require_verity && !dirs.n) {
		rc = cli_usage("verify", "--require-verity needs --basedir");
		goto out;
	}
	if (argc - optind != 1) {
		if (argc - optind == 0)
			rc = cli_usage("verify", "missing IMAGE");
		else
			rc = cli_usage("verify", "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	image = argv[optind];
	if ((gpg_homedir || gpg_system) && !from_ostree) {
		rc = cli_usage("verify", "%s needs --from-ostree",
			       gpg_homedir ? "--gpg-homedir" : "--gpg-system-keyrings");
		goto out;
	}
	if (from_ostree) {
		if (dirs.n || o.vo.image_digest || o.vo.require_verity || out.json)
			rc = cli_usage("verify", "--from-ostree takes only --gpg-homedir and --gpg-system-keyrings");
		else
			rc = cli_ostree_verify(image, gpg_homedir, gpg_system);
		goto out;
	}

	cfs_set_message_handler(keep_msg, NULL);
	o.vo.progress = on_progress;
	o.vo.progress_ctx = &out;
	if (out.json) {
		out.doc = json_object();
		out.problems = json_array();
		cli_json_set(out.doc, "image", cli_json_text(image));
		cli_json_set(out.doc, "problems", json_incref(out.problems));
	}
	ret = cfs_verify_image(image, &o.vo, on_problem, &out, &r);
	if (out.progress_started)
		cli_progress_end(&out.progress);
	if (ret < 0) {
		fflush(stdout);
		cli_error("verify: '%s': %s", image, last_msg[0] ? last_msg : strerror(-ret));
		rc = EXIT_FAIL;
		goto out;
	}
	if (repo)
		check_repo_open(repo, &out, &r);
	if (out.json) {
		ret = summary_json(out.doc, &o.vo, &r);
		out.doc = NULL;
		if (ret < 0) {
			cli_error("verify: '%s': %s", image, strerror(-ret));
			rc = EXIT_FAIL;
			goto out;
		}
	} else {
		summary_text(image, &o.vo, &r);
	}
	rc = cli_close_stdout();
	if (rc == EXIT_OK && r.errors)
		rc = EXIT_FAIL;
out:
	json_decref(out.doc);
	json_decref(out.problems);
	free(repo_image);
	free(repo_basedir);
	cfs_basedirs_free(&dirs);
	return rc;
}
