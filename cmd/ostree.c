// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The --from-ostree forms of build, verify and mount (libcfs's ostree.c):
 * an image of an ostree commit over the repository's own objects, a new
 * commit that carries the image's digest, and the chain from a signed
 * commit to what is mounted, checked link by link:
 *   1. the commit's GPG signature, by a key of --gpg-homedir;
 *   2. every object of the commit against its ostree checksum;
 *   3. the digest in the commit's metadata against the image rebuilt from it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/build.h"
#include "cfs/mount.h"
#include "cfs/ostree.h"
#include "cfs/util.h"

static const char *verb_name = "verify";
/* verify --gpg-system-keyrings: ostree's system keyrings are trusted too */
static bool gpg_system_keyrings;

/*
 * libostree's advice for a commit with no signature is for a remote's
 * config; a local commit wants signing.
 */
#define OSTREE_REMOTE_ADVICE " (use gpg-verify=false in remote config to disable)"

static void say(void *ctx, const char *msg)
{
	size_t len = strlen(msg), n = strlen(OSTREE_REMOTE_ADVICE);

	(void)ctx;
	if (len > n && strcmp(msg + len - n, OSTREE_REMOTE_ADVICE) == 0)
		cli_error("%s: %.*s: sign it with ostree gpg-sign --repo=REPO COMMIT KEY-ID, or verify without --gpg-homedir",
			  verb_name, (int)(len - n), msg);
	else
		cli_error("%s: %s", verb_name, msg);
}

int cli_ostree_build(struct cli_build *b, const char *spec, const char *image,
		     bool commit_digest)
{
	struct cfs_tree_from_ostree_options topts = { .enable_verity = true };
	char checksum[CFS_OSTREE_CHECKSUM_SIZE];
	uint8_t digest[CFS_DIGEST_SIZE];
	struct cfs_ostree *o;
	struct cfs_node *root;
	int r, fd;

	r = cfs_ostree_open(spec, &o);
	if (r) {
		cli_build_end(b);
		return cli_build_fail("reading ostree commit", spec, r);
	}
	if (b->repo_dir && !cfs_ostree_is_archive(o)) {
		cfs_ostree_close(o);
		cli_build_end(b);
		cli_error("build: '%s': --repo takes the commits of archive repositories, whose contents are unpacked into it; an image of a bare repository points at its own objects (build it with or without --digest-store)",
			  spec);
		return EXIT_FAIL;
	}
	r = cfs_tree_from_ostree(o, &b->o, &topts, &root);
	if (r) {
		cfs_ostree_close(o);
		cli_build_end(b);
		return cli_build_fail("reading ostree commit", spec, r);
	}
	r = cli_build_write(b, root, spec, image);
	if (r != EXIT_OK || !commit_digest) {
		cfs_ostree_close(o);
		return r;
	}
	/* The image is complete and in place: only now the new commit. */
	if (b->repo_dir) {
		memcpy(digest, b->digest, CFS_DIGEST_SIZE);
		r = 0;
	} else {
		fd = open(image, O_RDONLY | O_CLOEXEC);
		r = fd < 0 ? -errno : cfs_verity_digest_fd(fd, digest);
		if (fd >= 0)
			close(fd);
	}
	if (r) {
		cfs_ostree_close(o);
		cli_error("measuring '%s': %s", image, strerror(-r));
		return EXIT_FAIL;
	}
	r = cfs_ostree_write_digest(o, digest, checksum);
	cfs_ostree_close(o);
	if (r)
		return cli_build_fail("writing a commit", spec, r);
	printf("%s\n", checksum);
	return cli_close_stdout();
}

/* Open @spec's commit: 0 and *@o, or -errno after saying why. */
static int open_commit(const char *spec, struct cfs_ostree **o)
{
	int r = cfs_ostree_open(spec, o);

	if (r)
		cli_error("%s: '%s': the commit failed", verb_name, spec);
	return r;
}

/*
 * Check the chain of @o, the commit @spec names (see the top of this
 * file), printing each link on stdout when @report; the image rebuilt from
 * the commit goes to @image_fd, and with @other_fd >= 0 the image of the
 * same tree (the same objects, checked once) in @other_format to
 * @other_fd, its digest to @other_digest. 0 and @digest, or -errno after saying
 * which link failed.
 */
static int check_chain(struct cfs_ostree *o, const char *spec, const char *gpg_homedir,
		       bool report, int image_fd, uint8_t digest[CFS_DIGEST_SIZE],
		       enum cfs_image_format other_format, int other_fd,
		       uint8_t other_digest[CFS_DIGEST_SIZE])
{
	const struct cfs_build_options bo = { .format = CFS_OSTREE_DIGEST_FORMAT };
	struct cfs_tree_from_ostree_options topts = { .check_objects = true, .digest_only = true };
	char signer[512], hex[CFS_DIGEST_HEX_SIZE], want_hex[CFS_DIGEST_HEX_SIZE];
	uint8_t want[CFS_DIGEST_SIZE];
	struct cfs_node *root;
	const char *link;
	int r;

	if (report)
		printf("commit: %s\n", cfs_ostree_checksum(o));
	if (gpg_homedir || gpg_system_keyrings) {
		link = "link 1, the signature";
		r = cfs_ostree_verify_signature(o, gpg_homedir, gpg_system_keyrings, signer,
						sizeof(signer));
		if (r)
			goto fail;
		if (report)
			printf("signature: good, by %s\n", signer);
	} else if (report) {
		printf("signature: not checked (no --gpg-homedir nor --gpg-system-keyrings)\n");
	}
	/* Before the rebuild: a commit without a digest has nothing to check against. */
	link = "link 3, the digest in the commit";
	r = cfs_ostree_read_digest(o, want);
	if (r)
		goto fail;
	link = "link 2, the objects";
	r = cfs_tree_from_ostree(o, &bo, &topts, &root);
	if (r)
		goto fail;
	if (report)
		printf("objects: %llu match their checksums\n", (unsigned long long)topts.n_objects);
	link = "link 3, the digest in the commit";
	r = cfs_tree_finish(root, &bo);
	if (r == 0)
		r = cfs_tree_write(root, CFS_OSTREE_DIGEST_FORMAT, NULL, image_fd);
	if (r == 0 && other_fd >= 0)
		r = cfs_tree_write(root, other_format, NULL, other_fd);
	cfs_tree_free(root);
	if (r == 0)
		r = cfs_verity_digest_fd(image_fd, digest);
	if (r == 0 && other_fd >= 0)
		r = cfs_verity_digest_fd(other_fd, other_digest);
	if (r) {
		cli_error("%s: rebuilding the image of '%s': %s", verb_name, spec, strerror(-r));
		goto fail;
	}
	cfs_digest_to_hex(digest, hex);
	if (memcmp(digest, want, CFS_DIGEST_SIZE) != 0) {
		cfs_digest_to_hex(want, want_hex);
		cli_error("%s: commit %s says the image has digest %s, but its image has %s",
			  verb_name, cfs_ostree_checksum(o), want_hex, hex);
		r = -EBADMSG;
		goto fail;
	}
	if (report)
		printf("digest: %s, as the commit says\n", hex);
	return 0;
fail:
	fflush(stdout);
	cli_error("%s: '%s': %s failed", verb_name, spec, link);
	return r;
}

int cli_ostree_spec(const char *verb, const char *spec)
{
	const char *colon = strchr(spec, ':');

	if (!colon || colon == spec || !colon[1])
		return cli_usage(verb,
				 "'%s' is not REPO:REF (the ostree repository, ':', and a branch or a commit checksum)",
				 spec);
	return EXIT_OK;
}

int cli_ostree_verify(const char *spec, const char *gpg_homedir, bool system_keyrings)
{
	uint8_t digest[CFS_DIGEST_SIZE];
	struct cfs_ostree *o;
	int fd, r;

	if (cli_ostree_spec("verify", spec) != EXIT_OK)
		return EXIT_USAGE;
	verb_name = "verify";
	gpg_system_keyrings = system_keyrings;
	cfs_set_message_handler(say, NULL);
	if (open_commit(spec, &o))
		return EXIT_FAIL;
	fd = memfd_create("cfs-ostree-image", MFD_CLOEXEC);
	if (fd < 0) {
		cli_error("verify: creating a memory file: %s", strerror(errno));
		cfs_ostree_close(o);
		return EXIT_FAIL;
	}
	r = check_chain(o, spec, gpg_homedir, true, fd, digest, CFS_OSTREE_DIGEST_FORMAT, -1, NULL);
	close(fd);
	cfs_ostree_close(o);
	if (r)
		return EXIT_FAIL;
	printf("verify: OK\n");
	return cli_close_stdout();
}

int cli_ostree_mount(const char *spec, const char *gpg_homedir, const char *mnt,
		     enum cfs_image_format format)
{
	uint8_t digest[CFS_DIGEST_SIZE], other_digest[CFS_DIGEST_SIZE];
	/* another format than the signed one: that image is only checked, this one mounted */
	bool other = format != CFS_OSTREE_DIGEST_FORMAT;
	struct cfs_mount_options mo = { .verity_check = -1, .userns_fd = -1 };
	struct cfs_basedirs dirs = { 0 };
	struct cfs_ostree *o = NULL;
	char *tmp = NULL, self[32];
	int fd = -1, signed_fd = -1, ro, r;

	verb_name = "mount";
	cfs_set_message_handler(say, NULL);
	if (open_commit(spec, &o))
		return EXIT_FAIL;
	if (cfs_ostree_is_archive(o)) {
		cli_error("mount: '%s': an archive repository has no objects to mount; build an image with --digest-store and mount that",
			  spec);
		goto fail;
	}
	/* The image goes next to the objects, where fs-verity is as they have it. */
	if (asprintf(&tmp, "%s/../tmp/cfs-image.XXXXXX", cfs_ostree_objects_dir(o)) < 0) {
		tmp = NULL;
		cli_error("mount: %s", strerror(ENOMEM));
		goto fail;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		cli_error("mount: creating '%s': %s", tmp, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto fail;
	}
	signed_fd = other ? memfd_create("cfs-ostree-image", MFD_CLOEXEC) : fd;
	if (signed_fd < 0) {
		cli_error("mount: creating a memory file: %s", strerror(errno));
		goto fail;
	}
	r = check_chain(o, spec, gpg_homedir, false, signed_fd, digest, format, other ? fd : -1,
			other_digest);
	if (r)
		goto fail;
	/* fs-verity wants the file read-only, with no writer left. The
	 * read-only open is of the file just written, through its
	 * /proc/self/fd link, never of its name again: a file swapped in
	 * under that name in the repository's tmp/ is not what is measured
	 * and mounted.
	 */
	if (fsync(fd) < 0) {
		cli_error("mount: writing '%s': %s", tmp, strerror(errno));
		goto fail;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	ro = open(self, O_RDONLY | O_CLOEXEC);
	if (ro < 0) {
		cli_error("mount: reopening '%s' read-only through %s: %s", tmp, self,
			  strerror(errno));
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		cli_error("mount: writing '%s': %s", tmp, strerror(errno));
		goto fail;
	}
	fd = ro;
	r = cfs_verity_enable_fd(fd);
	if (r) {
		cli_error("mount: enabling fs-verity on the image '%s': %s", tmp,
			  r == -EOPNOTSUPP ? "not supported by the filesystem" : strerror(-r));
		goto fail;
	}
	r = cfs_basedirs_add(&dirs, cfs_ostree_objects_dir(o));
	if (r) {
		cli_error("mount: %s", strerror(-r));
		goto fail;
	}
	mo.basedirs = &dirs;
	mo.digest = other ? other_digest : digest;
	r = cfs_image_mount_fd(fd, tmp, mnt, &mo);
	if (r)
		goto fail;
	/* The mount holds the image; its name is not needed any more. */
	close(fd);
	unlink(tmp);
	free(tmp);
	cfs_basedirs_free(&dirs);
	if (other)
		close(signed_fd);
	cfs_ostree_close(o);
	return EXIT_OK;
fail:
	if (other && signed_fd >= 0)
		close(signed_fd);
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	cfs_basedirs_free(&dirs);
	cfs_ostree_close(o);
	return EXIT_FAIL;
}
