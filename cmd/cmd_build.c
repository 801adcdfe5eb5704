// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl build: make an image from a directory tree, a dumpfile, a tar
 * archive or a container image, and fill a digest store with the file
 * contents. The image is written to a
 * temporary file next to IMAGE and renamed into place only when complete,
 * so a failed build leaves nothing at IMAGE. The options that choose how
 * the image is built, and the writing, are shared with cfsctl pull
 * (builder.c).
 * --from-ostree reads an ostree commit (cmd/ostree.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/build.h"
#include "cfs/oci.h"
#include "cfs/ostree.h"
#include "cfs/policy.h"
#include "cfs/repo.h"
#include "cfs/store.h"
#include "cfs/util.h"

enum {
	OPT_FROM_DUMP = CLI_OPT_BUILD_END,
	OPT_FROM_TAR,
	OPT_FROM_OCI,
	OPT_FROM_OSTREE,
	OPT_COMMIT_DIGEST,
	OPT_LAX_DUMP,
	OPT_POLICY,
};

static const struct option long_options[] = {
	{ "from-dump", no_argument, NULL, OPT_FROM_DUMP },
	{ "from-tar", no_argument, NULL, OPT_FROM_TAR },
	{ "from-oci", no_argument, NULL, OPT_FROM_OCI },
	{ "from-ostree", no_argument, NULL, OPT_FROM_OSTREE },
	{ "commit-digest", no_argument, NULL, OPT_COMMIT_DIGEST },
	CLI_BUILD_LONG_OPTIONS,
	{ "lax-dump", no_argument, NULL, OPT_LAX_DUMP },
	{ "policy", required_argument, NULL, OPT_POLICY },
	CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

/* cfsctl build --help, and its man page (docs/mkman.py) */
const char cmd_build_usage[] =
	  "Usage: cfsctl build [OPTIONS] SOURCE IMAGE\n"
	  "       cfsctl build [OPTIONS] --repo DIR SOURCE NAME\n"
	  "\n"
	  "Build the composefs image IMAGE from the directory SOURCE (or, with\n"
	  "--from-dump, from the dumpfile SOURCE; with --from-tar, from the tar\n"
	  "archive SOURCE; with --from-oci, from the container image SOURCE; with\n"
	  "--from-ostree, from the ostree commit SOURCE).\n"
	  "Symlinks are recorded, never followed. Each regular file is recorded\n"
	  "with its fs-verity sha256 digest and its backing path \"xx/<62 hex>\"\n"
	  "in a digest store; the same input always gives a byte-identical\n"
	  "image. IMAGE is written to a temporary file and renamed\n"
	  "into place: on any error nothing is left at IMAGE, and (as the image\n"
	  "is written before the new objects are published) no new object in\n"
	  "the digest store.\n"
	  "A digest store or repository that build makes is its owner's alone\n"
	  "(mode 0700; objects and a repository's images 0400). IMAGE is 0644\n"
	  "less the umask, or 0600 when it holds inline a file that others\n"
	  "could not read in SOURCE (docs/security.md).\n"
	  "\n"
	  "Options:\n"
	  "  --from-dump         SOURCE is a composefs-dump(5) file, '-' for stdin\n"
	  "  --from-tar          SOURCE is a tar archive (ustar, pax, GNU; plain or\n"
	  "                      compressed, the compression found from the data),\n"
	  "                      '-' for stdin; read once, never unpacked. Entries\n"
	  "                      keep the uid, gid, mode, mtime, xattrs and ACLs\n"
	  "                      the archive records; a later entry for a path\n"
	  "                      replaces an earlier one; directories only implied\n"
	  "                      by a path are 0755, 0:0, mtime 0; '..' is refused\n"
	  "  --from-oci          SOURCE is a container image: oci:DIR[:TAG] (an OCI\n"
	  "                      image layout directory), oci-archive:FILE[:TAG]\n"
	  "                      (a tar of one) or docker-archive:FILE[:TAG]. The\n"
	  "                      OCI layout's manifest tagged TAG (without\n"
	  "                      TAG: the only one, or 'latest'), from an image\n"
	  "                      index the one for --platform; its gzip, zstd or\n"
	  "                      plain layers are read once each, never unpacked,\n"
	  "                      and applied in order as --from-tar does, with the\n"
	  "                      OCI whiteouts (.wh.NAME, .wh..wh..opq), which never\n"
	  "                      appear in the image. Every blob must have the size\n"
	  "                      and sha256 digest its descriptor names, and each\n"
	  "                      layer uncompressed the sha256 of its diff_id in\n"
	  "                      the config. docker-archive:FILE[:TAG] is what\n"
	  "                      docker save and podman save write: the image\n"
	  "                      whose RepoTags in manifest.json hold TAG (e.g.\n"
	  "                      debian:12), without TAG the only one; its plain,\n"
	  "                      gzip or zstd layers are checked by their diff_ids\n"
	  "                      alone, as it has no descriptors. The image must\n"
	  "                      pass the containers-policy.json(5) policy (see\n"
	  "                      --policy) before anything of it is read\n"
	  "  --policy=FILE       with --from-oci: the containers-policy.json(5) the\n"
	  "                      image must pass; without it the first of\n"
	  "                      ~/.config/containers/policy.json and\n"
	  "                      /etc/containers/policy.json that exists, and with\n"
	  "                      none of them no check. The scope is that of the\n"
	  "                      transport oci, oci-archive or docker-archive: for\n"
	  "                      the first two DIR (or FILE), symlinks resolved,\n"
	  "                      with ':TAG', then DIR and each directory above it\n"
	  "                      but '/', then the transport's \"\", else \"default\".\n"
	  "                      Such an image carries no signatures: reject,\n"
	  "                      signedBy and sigstoreSigned refuse it (exit 1,\n"
	  "                      nothing written), insecureAcceptAnything accepts\n"
	  "                      it\n"
	  "  --from-ostree       SOURCE is REPO:REF, REF a branch or a commit\n"
	  "                      checksum of the ostree repository REPO (no ':' in\n"
	  "                      REPO), read with libostree. Owners, modes, xattrs\n"
	  "                      (bare-user: user.ostreemeta's) and symlinks as\n"
	  "                      ostree checks them out, mtime 0, no hardlinks.\n"
	  "                      Each regular file points at ostree's own object\n"
	  "                      \"xx/<62 hex>.file\": mount with\n"
	  "                      basedir=REPO/objects, nothing is copied, and\n"
	  "                      fs-verity is enabled on the objects where the\n"
	  "                      filesystem allows (--require-verity: must be).\n"
	  "                      An archive repository needs --digest-store DIR\n"
	  "                      or --repo DIR: the objects are unpacked into DIR\n"
	  "                      (DIR/objects) under the same names; --repo takes\n"
	  "                      no bare repository's commit, whose image points\n"
	  "                      at its own objects. A partial commit is refused.\n"
	  "                      The same commit gives the same image in any\n"
	  "                      repository mode.\n"
	  "  --commit-digest     with --from-ostree and --format=erofs: once IMAGE\n"
	  "                      is complete, write a new commit of the same tree\n"
	  "                      (parent, subject, body, timestamp and metadata\n"
	  "                      kept) with ostree.composefs.digest.v0, IMAGE's\n"
	  "                      fs-verity digest, move REF to it if a branch, and\n"
	  "                      print its checksum; sign it with ostree gpg-sign\n"
	  BUILD_OPTIONS_HELP
	  "  --lax-dump          read the dumpfile as mkcomposefs does when not\n"
	  "                      strict: missing trailing fields are '-', MODE\n"
	  "                      bits beyond 0177777 are dropped\n"
	  "  -h, --help          show this help\n"
	  "\n"
	  "Examples:\n"
	  "  cfsctl build --digest-store=objects rootfs/ rootfs.cfs\n"
	  "  cfsctl build --format=erofs --repo /var/lib/cfs rootfs/ os/1\n"
	  "  tar -C rootfs -c . | cfsctl build --from-tar --digest-store=objects - rootfs.cfs\n"
	  "  cfsctl build --from-oci --repo /var/lib/cfs oci:layout:latest app\n"
	  "\n"
	  "Exit status: 0 success, 1 failure, 2 usage error. SIGINT, SIGTERM or\n"
	  "SIGHUP removes its temporaries, then it dies of that signal (a shell\n"
	  "says 130, 143 or 129, and a loop stops).\n";

enum source_kind { FROM_DIR, FROM_DUMP, FROM_TAR, FROM_OCI, FROM_OSTREE };

/*
 * SOURCE opened for reading, @what it is ("archive", "dumpfile") for the
 * message when it cannot be; "-" is standard input, which stays open after.
 * Return: the descriptor, or -errno (said).
 */
static int open_source(const char *source, const char *what)
{
	int fd;

	if (strcmp(source, "-") == 0)
		return STDIN_FILENO;
	fd = open(source, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		cli_error("cannot open %s '%s': %s", what, source, strerror(-fd));
		cli_build_said();
	}
	return fd;
}

static int load_tree(const char *source, enum source_kind kind,
		     const struct cfs_oci_platform *platform, const struct cfs_build_options *o,
		     struct cfs_node **root)
{
	FILE *in = NULL;
	int fd, r;

	if (kind == FROM_DIR)
		return cfs_tree_from_dir(source, o, root);
	if (kind == FROM_OCI)
		return cfs_tree_from_oci(source, platform, o, root);
	fd = open_source(source, kind == FROM_TAR ? "archive" : "dumpfile");
	if (fd < 0)
		return fd;
	if (kind == FROM_TAR)
		r = cfs_tree_from_tar(fd, source, o, root);
	else if ((in = fd == STDIN_FILENO ? stdin : fdopen(fd, "r")))
		r = cfs_tree_from_dump(in, source, o, root);
	else
		r = -ENOMEM;
	if (in && in != stdin)
		fclose(in); /* and @fd with it */
	else if (fd != STDIN_FILENO)
		close(fd);
	return r;
}

struct source {
	enum source_kind kind;
	const char *policy_file;
};

/* --from-dump, --from-tar, --from-oci or --from-ostree into *@ctx, the source's kind; --policy */
static int source_option(void *ctx, int c, const char *arg)
{
	struct source *src = ctx;
	enum source_kind *kind = &src->kind;

	if (c == OPT_POLICY) {
		if (!arg[0])
			return cli_usage("build", "--policy needs a file");
		src->policy_file = arg;
		return EXIT_OK;
	}
	if (c != OPT_FROM_DUMP && c != OPT_FROM_TAR && c != OPT_FROM_OCI && c != OPT_FROM_OSTREE)
		return -1;
	if (*kind != FROM_DIR)
		return cli_usage("build",
				 "--from-dump, --from-tar, --from-oci and --from-ostree exclude each other");
	*kind = c == OPT_FROM_DUMP ? FROM_DUMP : c == OPT_FROM_TAR ? FROM_TAR :
		c == OPT_FROM_OCI  ? FROM_OCI  : FROM_OSTREE;
	return EXIT_OK;
}

/*
 * The policy @file (NULL: the default files; none of them: no check) must
 * accept the image @source, before anything of it is read.
 */
static int check_policy(const char *file, const char *source)
{
	struct cfs_policy *policy = NULL;
	char *passed = NULL;
	int r = cfs_policy_load(file, &policy);

	if (r == -ENOENT && !file)
		return EXIT_OK;
	if (r == 0)
		r = cfs_policy_check_layout(policy, source, &passed);
	cfs_policy_free(policy);
	free(passed);
	if (r == -ENOMEM)
		cli_error("build: the policy: %s", strerror(-r));
	return r ? EXIT_FAIL : EXIT_OK;
}

int cmd_build(int argc, char **argv)
{
	struct cli_build b;
	struct cfs_node *root = NULL;
	struct source src = { .kind = FROM_DIR };
	enum source_kind kind;
	bool commit_digest = false, require_verity;
	const struct cli_var vars[] = {
		{ OPT_LAX_DUMP, .flag = &b.o.lax_dump },
		{ OPT_COMMIT_DIGEST, .flag = &commit_digest },
		{ 0 },
	};
	const struct cli_parse p = {
		.verb = "build", .shortopts = "h", .longopts = long_options,
		.help = cmd_build_usage, .vars = vars, .take = source_option,
		.ctx = &src,
	};
	const char *source = NULL, *image = NULL;
	int r;

	r = cli_build_parse(&b, &p, "SOURCE", argc, argv, &source, &image);
	if (r >= 0)
		return r;
	kind = src.kind;
	if (src.policy_file && kind != FROM_OCI)
		return cli_usage("build", "--policy needs --from-oci");
	if (b.o.lax_dump && kind != FROM_DUMP)
		return cli_usage("build", "--lax-dump needs --from-dump");
	if (b.have_platform && kind != FROM_OCI)
		return cli_usage("build", "--platform needs --from-oci");
	if (kind == FROM_OCI && strncmp(source, "oci:", 4) != 0 &&
	    strncmp(source, "oci-archive:", 12) != 0 && strncmp(source, "docker-archive:", 15) != 0)
		return cli_usage("build",
				 "--from-oci needs oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:TAG], not '%s'",
				 source);
	if (kind == FROM_OSTREE && cli_ostree_spec("build", source) != EXIT_OK)
		return EXIT_USAGE;
	if (commit_digest && kind != FROM_OSTREE)
		return cli_usage("build", "--commit-digest needs --from-ostree");
	if (commit_digest && (b.o.format != CFS_OSTREE_DIGEST_FORMAT || b.writer_options || b.o.skip_xattrs))
		return cli_usage("build",
				 "--commit-digest needs --format=erofs, without --min-version, --max-version, --user-xattrs or --skip-xattrs (the image verify rebuilds)");
	/* ostree's objects in place need no store for --require-verity */
	require_verity = b.o.require_verity;
	if (kind == FROM_OSTREE)
		b.o.require_verity = false;
	r = cli_build_check(&b, "build");
	b.o.require_verity = require_verity;
	if (r)
		return r;
	if (kind == FROM_OCI) {
		r = check_policy(src.policy_file, source);
		if (r)
			return r;
	}

	r = cli_build_start(&b, "build");
	if (r)
		return r;
	if (kind == FROM_OSTREE)
		return cli_ostree_build(&b, source, image, commit_digest);
	/*
	 * A dumpfile's entries are lines it holds, a directory's inodes of its
	 * filesystem: neither grows from a few compressed bytes as an archive's
	 * can, so their default cap is higher.
	 */
	if ((kind == FROM_DIR || kind == FROM_DUMP) && !b.max_entries_given)
		b.o.max_entries = CLI_DEFAULT_MAX_ENTRIES_LOCAL;
	r = load_tree(source, kind, b.have_platform ? &b.platform : NULL, &b.o, &root);
	if (r) {
		cli_build_end(&b);
		return cli_build_fail(kind == FROM_DUMP  ? "reading dumpfile" :
				      kind == FROM_TAR ? "reading archive" :
				      kind == FROM_OCI ? "reading image" :
							 "reading directory",
				      source, r);
	}
	return cli_build_write(&b, root, source, image);
}
