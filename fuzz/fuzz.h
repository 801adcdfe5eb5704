/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the fuzz targets share: their entry points, which libFuzzer calls
 * through LLVMFuzzerTestOneInput() and the regression test calls directly
 * on each committed input, and fuzz_fail() for a broken property.
 */
#ifndef CFS_FUZZ_H
#define CFS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/** fuzz_image_one() - read @data as an image every way inspect would; 0 */
int fuzz_image_one(const uint8_t *data, size_t size);

/** fuzz_dump_one() - parse @data as a dumpfile; if it parses, check that
 * parse -> write -> read -> dump -> parse -> write gives the same image; 0 */
int fuzz_dump_one(const uint8_t *data, size_t size);

/** fuzz_tar_one() - read @data as a tar archive into a tree, and write it */
int fuzz_tar_one(const uint8_t *data, size_t size);

/** fuzz_oci_one() - an image whose document (index.json, manifest, config
 * or docker manifest.json, by the first byte) is the rest of @data */
int fuzz_oci_one(const uint8_t *data, size_t size);

/** fuzz_registry_one() - @data as header lines, a challenge, base64, a
 * reference and an auth file */
int fuzz_registry_one(const uint8_t *data, size_t size);

/** fuzz_toc_one() - parse @data as a zstd:chunked TOC; if it parses, check
 * that its frames and names are what a partial pull may use; 0 */
int fuzz_toc_one(const uint8_t *data, size_t size);

/** fuzz_policy_one() - parse @data as a containers-policy.json; if it
 * parses, apply it to a few references with no signatures to read; 0 */
int fuzz_policy_one(const uint8_t *data, size_t size);

/** fuzz_fuse_one() - serve @data as an image through mount --fuse's
 * operations (cmd/fuse-ops.c), walking it as the kernel would; 0 */
int fuzz_fuse_one(const uint8_t *data, size_t size);

/** fuzz_sigpayload_one() - parse @data as a simple-signing payload of
 * each kind; one that parses must refuse an extra critical member; 0 */
int fuzz_sigpayload_one(const uint8_t *data, size_t size);

/**
 * fuzz_fail() - a property does not hold: say which and abort
 *
 * Aborting (rather than returning) is what makes libFuzzer keep the input.
 */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* CFS_FUZZ_H */
