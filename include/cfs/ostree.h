/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Images of ostree commits (lib/ostree/ostree.c, through libostree): the tree of a
 * commit over ostree's own objects, the composefs digest that newer ostree
 * keeps in a commit's metadata (ostree.composefs.digest.v0), a new commit
 * that carries it, and the checks of the chain from a GPG-signed commit to
 * the objects an image of it names.
 */
#ifndef CFS_OSTREE_H
#define CFS_OSTREE_H

#include <stdbool.h>
#include <stdint.h>

#include "cfs/build.h"
#include "cfs/util.h"

/*
 * The format of the image whose fs-verity digest ostree.composefs.digest.v0
 * records: composefs 1.0's, as newer ostree's own images are.
 */
#define CFS_OSTREE_DIGEST_FORMAT CFS_FORMAT_EROFS

/* The commit metadata key of the image's fs-verity digest (type "ay"). */
#define CFS_OSTREE_DIGEST_KEY "ostree.composefs.digest.v0"

/* The hex checksum of an ostree object, with its NUL */
#define CFS_OSTREE_CHECKSUM_SIZE 65

struct cfs_ostree; /* an open repository and one of its commits */

/**
 * cfs_ostree_open() - open the repository and commit that @spec names
 * @spec: "REPO:REF", REF a branch ("main", "remote:main") or a commit
 *	  checksum; REPO is what comes before the first ':'
 *
 * A partial commit (objects missing, as an unfinished pull leaves it) is
 * refused. Return: 0 and *@out, -EINVAL for a malformed @spec, -ENOENT for
 * a missing repository, ref or commit, -ENODATA for a partial commit, or
 * another -errno; each with a message.
 */
int cfs_ostree_open(const char *spec, struct cfs_ostree **out);

void cfs_ostree_close(struct cfs_ostree *o);

/** cfs_ostree_checksum() - the hex checksum of the open commit */
const char *cfs_ostree_checksum(const struct cfs_ostree *o);

/** cfs_ostree_objects_dir() - "REPO/objects", the basedir of in-place images */
const char *cfs_ostree_objects_dir(const struct cfs_ostree *o);

/**
 * cfs_ostree_is_archive() - does the repository keep contents compressed
 * (mode archive: .filez objects), so that an image needs them unpacked?
 */
bool cfs_ostree_is_archive(const struct cfs_ostree *o);

/**
 * struct cfs_tree_from_ostree_options - how cfs_tree_from_ostree() reads the commit
 * @enable_verity: enable fs-verity on the objects (in place, or unpacked
 *	into @build->digest_store) where the filesystem allows it
 * @check_objects: check every object the tree reads against its ostree
 *	checksum first (a changed object is -EUCLEAN, named)
 * @digest_only: an archive repository's contents are only hashed, not
 *	unpacked (the tree is for its image's digest alone)
 * @n_objects: set to the number of objects read
 */
struct cfs_tree_from_ostree_options {
	bool enable_verity;
	bool check_objects;
	bool digest_only;
	uint64_t n_objects;
};

/**
 * cfs_tree_from_ostree() - the tree of the open commit, ready for cfs_tree_finish()
 *
 * Every entry is its own inode (no hardlinks) with mtime 0; owners, modes
 * and xattrs are ostree's (bare-user: user.ostreemeta's). A regular file
 * with content has the payload "xx/<62 hex>.file" of its ostree object
 * below REPO/objects, or with @build->digest_store (which an archive
 * repository needs) below that directory, where it is unpacked, and the
 * fs-verity digest of that file. @build->require_verity makes fs-verity
 * on the objects mandatory. The same commit gives the same tree on any
 * repository that holds it.
 *
 * Return: 0 and *@root, or -errno with a message naming the object.
 */
int cfs_tree_from_ostree(struct cfs_ostree *o, const struct cfs_build_options *build,
			 struct cfs_tree_from_ostree_options *topts, struct cfs_node **root);

/**
 * cfs_ostree_read_digest() - the image digest in the commit's metadata
 *
 * Return: 0 and @digest; -ENOENT when the commit has no
 * CFS_OSTREE_DIGEST_KEY, -EINVAL when its value is not 32 bytes of type
 * "ay"; each with a message.
 */
int cfs_ostree_read_digest(struct cfs_ostree *o, uint8_t digest[CFS_DIGEST_SIZE]);

/**
 * cfs_ostree_write_digest() - commit the same tree again with @digest
 *
 * The new commit has the parent, subject, body, timestamp and metadata of
 * the open one, with CFS_OSTREE_DIGEST_KEY set to @digest. When the spec
 * named a branch, the branch is moved to it. Detached metadata (the
 * signatures) is not carried over: the new commit needs signing anew.
 * Return: 0 and @checksum, or -errno with a message.
 */
int cfs_ostree_write_digest(struct cfs_ostree *o, const uint8_t digest[CFS_DIGEST_SIZE],
			    char checksum[CFS_OSTREE_CHECKSUM_SIZE]);

/**
 * cfs_ostree_verify_signature() - check the commit's GPG signature
 * @gpg_homedir: a GnuPG home whose public keys are the trusted ones, or
 *	NULL (then @system_keyrings)
 * @system_keyrings: also trust the keys of ostree's system keyrings
 *	(/usr/share/ostree/trusted.gpg.d, or the directory $OSTREE_GPG_HOME)
 * @signer: set to a description of the valid signature's key, or ""
 * @size: of @signer
 *
 * The keys are exported from @gpg_homedir with gpg(1) and the signature is
 * checked by libostree, which adds its system keyrings whatever it is
 * told: so a valid signature counts only when its key (or the key's
 * primary key) is one that gpg lists in @gpg_homedir, unless
 * @system_keyrings.
 * Return: 0, -ENOKEY when the commit has no signature, -EKEYREJECTED when
 * no signature is valid by a trusted key, or another -errno; each with a
 * message.
 */
int cfs_ostree_verify_signature(struct cfs_ostree *o, const char *gpg_homedir,
				bool system_keyrings, char *signer, size_t size);

#endif /* CFS_OSTREE_H */
