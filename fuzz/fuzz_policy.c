// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Fuzz target for the reader of containers-policy.json(5) (policy.c): any
 * input must parse or be refused without a crash or a leak. A policy that
 * parses is then applied to a few references with no registry and no
 * lookaside: it must accept (naming what accepted) or refuse, and never
 * look for signatures it has no way to read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfs/policy.h"
#include "cfs/registry.h"
#include "fuzz.h"

#define DIGEST "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

int fuzz_policy_one(const uint8_t *data, size_t size)
{
	static const char *const refs[] = {
		"example.com/ns/app:1",
		("example.com:5000/app@" DIGEST),
		"registry.example.org/a/b/c:latest",
		"docker.io/library/debian:12",
	};
	struct cfs_policy *p = NULL;
	int r;

	r = cfs_policy_parse((const char *)data, size, "fuzz", &p);
	if (r) {
		if (p)
			fuzz_fail("a refused policy was returned");
		if (r != -EINVAL && r != -EOPNOTSUPP && r != -EFBIG && r != -ENOMEM)
			fuzz_fail("parse returned %d", r);
		return 0;
	}
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		struct cfs_registry_ref ref;
		char *passed = NULL;

		if (cfs_registry_ref_parse(refs[i], &ref))
			fuzz_fail("the reference '%s' does not parse", refs[i]);
		r = cfs_policy_check(p, NULL, &ref, NULL, DIGEST, &passed);
		if (r == 0 && !passed)
			fuzz_fail("accepted '%s' with nothing named", refs[i]);
		if (r && passed)
			fuzz_fail("refused '%s' yet named what accepted it", refs[i]);
		if (r && r != -EACCES && r != -ENOMEM)
			fuzz_fail("check of '%s' returned %d", refs[i], r);
		free(passed);
		cfs_registry_ref_free(&ref);
	}
	cfs_policy_free(p);
	return 0;
}

#ifndef CFS_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_policy_one(data, size);
}
#endif
