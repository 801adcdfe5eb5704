/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Simple signing at push (sign.c): the payload, its GPG signature,
 * and the lookaside staging that registries.d names. Internal to libcfs.
 */
#ifndef CFS_SIGN_H
#define CFS_SIGN_H

#include <stddef.h>

/** cfs_sign_payload() - the simple-signing payload of @digest for @reference (malloc()ed): 0 or -ENOMEM */
int cfs_sign_payload(const char *reference, const char *digest, char **out);

/**
 * cfs_sign_gpg() - @payload signed by the secret key @fpr of the GnuPG home
 * @homedir (NULL: gpg's default), as a binary OpenPGP message (malloc()ed)
 *
 * Return: 0, -ENOKEY for no such key that can sign, or -errno; with a message.
 */
int cfs_sign_gpg(const char *payload, const char *fpr, const char *homedir, void **sig,
		 size_t *sig_len);

/**
 * cfs_sign_staging() - the lookaside staging URL for @name (HOST/REPO) that
 * the registries.d directory @dir (NULL: /etc/containers/registries.d, which
 * may be missing) configures, or containers/image's default (malloc()ed)
 *
 * Return: 0, or -errno with a message for a directory or file that cannot
 * be read or parsed.
 */
int cfs_sign_staging(const char *dir, const char *name, char **url);

/**
 * cfs_sign_store() - write the signature @sig as the first free
 * signature-N of @repo's manifest @digest under the file:// @url
 * @written: out, the file written (malloc()ed)
 *
 * Return: 0, or -errno with a message (-EOPNOTSUPP: not file://).
 */
int cfs_sign_store(const char *url, const char *repo, const char *digest, const void *sig,
		   size_t len, char **written);

/* ---- cosign signatures (sign-cosign.c) ---- */

struct cfs_cosign_sig;
struct cfs_registry;

/**
 * cfs_sign_cosign() - sign, as cosign does, the manifest @digest for
 * @reference (HOST/REPO:TAG) with the ECDSA P-256 key of the PEM file
 * @key_path: the payload made and signed, for cfs_sign_cosign_attach()
 *
 * Return: 0 and *@out (cfs_sign_cosign_free()), or -errno with a message
 * naming the key file (-EOPNOTSUPP: cosign's encrypted format).
 */
int cfs_sign_cosign(const char *key_path, const char *reference, const char *digest,
		    struct cfs_cosign_sig **out);

/**
 * cfs_sign_cosign_attach() - attach @s in @r's repository (@name,
 * HOST/REPO, for messages): the layer appended to the manifest tagged
 * sha256-<hex>.sig, made if missing
 * @written: out, "HOST/REPO:sha256-<hex>.sig" (malloc()ed)
 *
 * Return: 0 written, 1 when a layer of the same payload signed by the same
 * key is there already (nothing written), or -errno with a message.
 */
int cfs_sign_cosign_attach(struct cfs_registry *r, const char *name,
			   const struct cfs_cosign_sig *s, char **written);

/** cfs_sign_cosign_free() - free @s; NULL is ignored */
void cfs_sign_cosign_free(struct cfs_cosign_sig *s);

#endif /* CFS_SIGN_H */
