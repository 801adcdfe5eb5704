// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Fuzz target for the parser of simple-signing payloads (signature.c), the
 * bytes a signature covers, read once it verified: any input must parse or
 * be refused without a crash or a leak, as an OpenPGP signature's payload
 * and as a cosign one. One that parses names a manifest digest and an
 * identity, and its critical section has exactly the members the strict
 * parse allows: the same text with one more critical member is refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "remote/signature.h"

static void one(const char *text, size_t size, const char *type)
{
	struct cfs_sig_payload p;
	const char *c;
	char *more;
	int r;

	r = cfs_sig_payload_parse(text, size, type, "fuzz", &p);
	if (r) {
		if (p.digest || p.identity)
			fuzz_fail("a refused payload left its strings");
		if (r != -EINVAL && r != -EFBIG && r != -ENOMEM)
			fuzz_fail("parse returned %d", r);
		return;
	}
	if (!p.digest || !p.identity)
		fuzz_fail("a payload parsed without a digest or an identity");
	cfs_sig_payload_free(&p);
	/* add a member at the start of the critical section: refused */
	c = memmem(text, size, "\"critical\"", 10);
	if (!c)
		fuzz_fail("a payload parsed without a critical section");
	c = memchr(c + 10, '{', size - (size_t)(c + 10 - text));
	if (!c)
		return;
	more = malloc(size + 16);
	if (!more)
		return;
	memcpy(more, text, (size_t)(c + 1 - text));
	memcpy(more + (c + 1 - text), "\"zz\":1,", 7);
	memcpy(more + (c + 1 - text) + 7, c + 1, size - (size_t)(c + 1 - text));
	if (cfs_sig_payload_parse(more, size + 7, type, "fuzz", &p) == 0)
		fuzz_fail("an extra critical member was taken");
	free(more);
}

int fuzz_sigpayload_one(const uint8_t *data, size_t size)
{
	one((const char *)data, size, CFS_SIG_TYPE_GPG);
	one((const char *)data, size, CFS_SIG_TYPE_COSIGN);
	return 0;
}

#ifndef CFS_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_sigpayload_one(data, size);
}
#endif
