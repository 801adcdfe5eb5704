/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Which container images a pull accepts (policy.c): a containers-policy.json(5)
 * file, the lookaside and sigstore settings of containers-registries.d(5),
 * and the check of an image's signatures against them, made once the
 * manifest's digest is known and before anything else is fetched.
 */
#ifndef CFS_POLICY_H
#define CFS_POLICY_H

#include <stddef.h>

struct cfs_policy;
struct cfs_registry;
struct cfs_registry_ref;
struct cfs_registry_options;

/**
 * cfs_policy_load() - read the policy file @path
 * @path: a containers-policy.json(5) file; NULL: the first that exists of
 *	  $HOME/.config/containers/policy.json and /etc/containers/policy.json
 *
 * Strict, as containers/image reads it: unknown members, a requirement of
 * an unknown type, an empty list of requirements, or a signedBy with other
 * than one of keyPath, keyPaths and keyData are errors. Keys named by
 * keyPath are read when an image is checked.
 * Return: 0 and *@pp; -ENOENT (no message) when @path is NULL and no
 * default file exists; -EINVAL with a message naming the file and the
 * member; -errno.
 */
int cfs_policy_load(const char *path, struct cfs_policy **pp);

/** cfs_policy_parse() - cfs_policy_load() of the text @text, named @what in messages */
int cfs_policy_parse(const char *text, size_t len, const char *what, struct cfs_policy **pp);

/**
 * cfs_policy_registries_d() - read the lookaside settings of containers-registries.d(5)
 * @dir: a directory of *.yaml files; NULL: $HOME/.config/containers/registries.d
 *	 when it exists, else /etc/containers/registries.d (a missing one is none)
 *
 * Read: default-docker and docker's namespaces, each with lookaside (or
 * its older name sigstore) and use-sigstore-attachments; the staging
 * settings are for writers and ignored.
 * Return: 0, -EINVAL with a message naming the file, -errno.
 */
int cfs_policy_registries_d(struct cfs_policy *p, const char *dir);

/** cfs_policy_free() - free @p (NULL is fine) */
void cfs_policy_free(struct cfs_policy *p);

/**
 * cfs_policy_check() - whether the policy accepts the image @ref names
 * @reg: the registry client for @ref's repository (sigstore attachments
 *	 are read through it)
 * @ropts: its options (the CA file and timeouts a lookaside is read with)
 * @digest: "sha256:<hex>" of the manifest or index @ref resolved to
 * @passed: out: what accepted it, e.g. "signedBy GPGKeys <fingerprint>"
 *	    (malloc()ed), on success
 *
 * The requirements of the most specific scope of transport "docker" that
 * matches @ref (REGISTRY/REPO:TAG or @DIGEST, then REGISTRY/REPO and its
 * namespaces up to REGISTRY, then "") or else "default" must all accept.
 * A signature is verified over its exact bytes before its payload is
 * parsed; the payload's critical section must name @digest and an identity
 * that the requirement's signedIdentity accepts.
 * Return: 0; -EACCES with a message naming @ref and the reason when the
 * policy refuses the image; another -errno with a message.
 */
int cfs_policy_check(const struct cfs_policy *p, struct cfs_registry *reg,
		     const struct cfs_registry_ref *ref, const struct cfs_registry_options *ropts,
		     const char *digest, char **passed);

/**
 * cfs_policy_check_layout() - whether the policy accepts the local image
 *	@source, as cfs_tree_from_oci() takes it: oci:DIR[:TAG],
 *	oci-archive:FILE[:TAG] or docker-archive:FILE[:TAG]
 * @passed: out: what accepted it ("insecureAcceptAnything"), malloc()ed
 *
 * The scope is that of containers-policy.json(5) for the transport (oci,
 * oci-archive, docker-archive): for the first two, DIR (or FILE) with
 * its symlinks resolved and ":TAG", then that path, then each directory
 * above it but "/"; then the transport's "", else "default". Such an
 * image carries no signatures (containers/image reads none from it
 * either): signedBy and sigstoreSigned refuse it, reject refuses it,
 * insecureAcceptAnything accepts it.
 * Return: 0; -EACCES with a message naming @source and the reason when
 * the policy refuses it; another -errno with a message (a DIR that does
 * not exist).
 */
int cfs_policy_check_layout(const struct cfs_policy *p, const char *source, char **passed);

#endif /* CFS_POLICY_H */
