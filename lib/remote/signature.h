/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Container image signatures (signature.c): the simple-signing payload of
 * containers-signature(5), its OpenPGP signature checked through gpgme, a
 * cosign signature (ECDSA over the payload) through libcrypto, and the
 * signatures read from a lookaside. Internal to libcfs; policy.c decides
 * which signatures count.
 */
#ifndef CFS_SIGNATURE_H
#define CFS_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The type a payload's critical section names, by signature kind. */
#define CFS_SIG_TYPE_GPG "atomic container signature"
#define CFS_SIG_TYPE_COSIGN "cosign container image signature"

/* A signature or payload bigger than this is refused unread (containers/image's bound). */
#define CFS_SIG_MAX_SIZE ((size_t)4 << 20)
/* Signatures read for one image, from a lookaside or the .sig manifest's layers. */
#define CFS_SIG_MAX_COUNT 128

/** struct cfs_sig_payload - the critical section of a verified payload */
struct cfs_sig_payload {
	char *digest; /* docker-manifest-digest */
	char *identity; /* docker-reference */
};

/**
 * cfs_sig_payload_parse() - the critical section of the payload @text
 * @type: the "type" it must name (CFS_SIG_TYPE_*)
 *
 * Strict: the top level has exactly "critical" and "optional"; critical
 * exactly type, image and identity; image exactly docker-manifest-digest;
 * identity exactly docker-reference; no member twice. Call it only on
 * bytes whose signature verified.
 * Return: 0 and @out (cfs_sig_payload_free() it), -EINVAL with a message
 * naming @what, -ENOMEM.
 */
int cfs_sig_payload_parse(const char *text, size_t len, const char *type, const char *what,
			  struct cfs_sig_payload *out);
void cfs_sig_payload_free(struct cfs_sig_payload *p);

struct cfs_gpg_keys;

/**
 * cfs_gpg_keys_new() - a keyring of its own (a temporary GnuPG home) with
 * the public keys of @n_files files and of @data (@data_len bytes; NULL
 * for none) imported
 * Return: 0 and *@kp, -EINVAL with a message naming the file whose keys
 * would not import, -errno.
 */
int cfs_gpg_keys_new(char *const *files, size_t n_files, const void *data, size_t data_len,
		     struct cfs_gpg_keys **kp);
void cfs_gpg_keys_free(struct cfs_gpg_keys *k);

/**
 * cfs_gpg_verify() - check the OpenPGP signed message @sig (the form
 * containers/image writes: the payload inside) against the keys @k
 * @payload, @payload_len: out: the signed bytes (malloc()ed)
 * @fpr: out: the signing key's fingerprint (a buffer of 41 or more)
 * @why: out: the reason, when it fails (a buffer of @why_size)
 * Return: 0; -EACCES with @why for a signature that does not verify
 * (garbage, a key not in @k, a bad signature); -ENOMEM.
 */
int cfs_gpg_verify(const struct cfs_gpg_keys *k, const void *sig, size_t sig_len,
		   char **payload, size_t *payload_len, char *fpr, size_t fpr_size, char *why,
		   size_t why_size);

/**
 * cfs_cosign_verify() - check the base64 ECDSA signature @sig_b64 over
 * @payload with the PEM public key @pem
 * Return: 0; -EACCES with @why when it does not verify; -EINVAL with a
 * message for a key that is not a PEM public key; -ENOMEM.
 */
int cfs_cosign_verify(const void *pem, size_t pem_len, const char *key_what, const char *sig_b64,
		      const void *payload, size_t payload_len, char *why, size_t why_size);

/**
 * cfs_lookaside_get() - signature @index (from 1) of a lookaside URL
 * @url: "file://PATH..." or "http(s)://..." of the signature itself
 * @cainfo, @timeout: for https, as for the registry
 * @data, @len: out, malloc()ed; at most CFS_SIG_MAX_SIZE bytes
 *
 * A redirect is followed only to the same scheme, host and port.
 * Return: 0; -ENOENT when there is no such signature (404, no file),
 * the end of the list; another -errno with a message naming @url.
 */
int cfs_lookaside_get(const char *url, const char *cainfo, unsigned int timeout, char **data,
		      size_t *len);

#endif /* CFS_SIGNATURE_H */
