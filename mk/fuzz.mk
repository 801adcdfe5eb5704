# SPDX-License-Identifier: GPL-2.0 OR MIT
# Fuzzing: libFuzzer targets built with clang, ASan and UBSan (included by
# the top Makefile; make fuzz, and the smoke runs of make check).
FUZZ_CC ?= clang
FUZZ_BUILD := build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 15
# The module's descriptor reader is fuzzed when the tree has the module.
FUZZ_TARGETS := image dump tar oci registry toc policy sigpayload fuse $(if $(wildcard kmod/reader.c),kreader)
FUZZ_SAN := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
# clang warns of a GNU extension gcc accepts silently (verity.c)
FUZZ_WARN := -Wno-gnu-variable-sized-type-not-at-end
# Does this clang have the libFuzzer runtime (Debian: libclang-rt-14-dev)?
FUZZ_OK = $(shell printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' | \
	$(FUZZ_CC) -fsanitize=fuzzer -x c - -o /dev/null >/dev/null 2>&1 && echo yes)
FUZZ_BINS := $(patsubst %,$(FUZZ_BUILD)/fuzz_%,$(FUZZ_TARGETS))

$(FUZZ_BUILD)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@";)
	$(Q)$(FUZZ_CC) $(BASE_CFLAGS) $(call inc,$<) $(FUZZ_WARN) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_BUILD)/libcfs.a: $(call obj,$(FUZZ_BUILD),$(LIB_SRC))
	@$(if $(Q),echo "  AR      $@";)
	$(Q)rm -f $@ && ar qcs $@ $^

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/fuzz/fuzz_%.o $(FUZZ_BUILD)/fuzz/common.o $(FUZZ_BUILD)/libcfs.a
	@$(if $(Q),echo "  LD      $@";)
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -pthread -o $@ $^ $(LDLIBS)

# mount --fuse's operations (cmd/fuse-ops.c) fuzzed, without libfuse.
$(FUZZ_BUILD)/fuzz_fuse: $(FUZZ_BUILD)/fuzz/fuzz_fuse.o $(FUZZ_BUILD)/cmd/fuse-ops.o \
		$(FUZZ_BUILD)/fuzz/common.o $(FUZZ_BUILD)/libcfs.a
	@$(if $(Q),echo "  LD      $@";)
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -pthread -o $@ $^ $(LDLIBS)

# kmod/reader.c fuzzed (KSHIM_CFLAGS above).
$(FUZZ_BUILD)/fuzz_kreader: fuzz/fuzz_kreader.c fuzz/kshim/kshim.c kmod/reader.c \
		kmod/cfs-internal.h common/cfs-format.h common/cfs-kshim.h $(wildcard fuzz/kshim/*.h fuzz/kshim/linux/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC LD   $@";)
	$(Q)$(FUZZ_CC) $(KSHIM_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ \
		fuzz/fuzz_kreader.c fuzz/kshim/kshim.c kmod/reader.c

fuzz-build: $(FUZZ_BINS)

# Seed corpora, made from images and dumps that cfsctl builds here.
fuzz-seeds: all
	$(Q)fuzz/make-seeds.sh $(BUILD)/cfsctl $(FUZZ_BUILD)/seeds

# make fuzz: each target for FUZZ_SECONDS; new inputs collect in
# build/fuzz/corpus/, crashes in build/fuzz/artifacts/.
fuzz: fuzz-build fuzz-seeds
	$(Q)for t in $(FUZZ_TARGETS); do \
		fuzz/run.sh $(FUZZ_BUILD) $$t $(FUZZ_SECONDS) || exit 1; done

# Build the fuzz targets for make check when clang can; else run.sh skips them.
.PHONY: check-fuzz-build
check-fuzz-build:
	$(Q)$(if $(FUZZ_OK),$(MAKE) --no-print-directory fuzz-build fuzz-seeds,\
		echo "fuzz: $(FUZZ_CC) has no libFuzzer runtime; the fuzz smoke runs will skip")
