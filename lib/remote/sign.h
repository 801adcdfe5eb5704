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

#endif /* CFS_SIGN_H */
