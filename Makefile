# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfs: composefs toolkit. The front door: make deps, make, make check, make demo.
# This file builds, checks and installs; mk/*.mk holds the rest: deps, fuzz,
# valgrind, vm, kernels, bench, deb and help.
# Quiet by default; V=1 shows full commands. See 'make help'.

CC ?= cc
CFLAGS ?= -O2 -g
PREFIX ?= /usr/local
DESTDIR ?=
# The 6.12 build tree: the headers 'make deps' fetched (vm/fetch-headers.sh), or KDIR=.
KDIR ?= $(shell vm/kdir.sh 2>/dev/null | head -n 1)

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo 0.1)
BUILD ?= build
SAN_BUILD := build/san

WARN := -Wall -Wextra -Werror
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 $(WARN) \
	-DCFS_VERSION_STRING='"$(VERSION)"' -pthread
# Who sees which headers: the verbs and boot/ only the public ones
# (include/cfs/), the library its private ones too (lib/, common/), the fuzz
# targets and unit tests what they test (fuzz/). Plus the system libraries'.
SYS_INC := $(shell pkg-config --cflags-only-I fuse3 2>/dev/null) \
	$(shell pkg-config --cflags-only-I ostree-1 2>/dev/null)
CMD_INC := -Iinclude $(SYS_INC)
LIB_INC := -Iinclude -Icommon -Ilib $(SYS_INC)
TEST_INC := -Iinclude -Icommon -Ilib -Ifuzz $(SYS_INC)
# $(call inc,SOURCE): the include flags SOURCE is compiled with
inc = $(if $(filter cmd/% boot/%,$(1)),$(CMD_INC),$(if $(filter lib/%,$(1)),$(LIB_INC),$(TEST_INC)))
LDLIBS := -lfsverity -larchive -lcrypto -lcurl -lzstd -lz -lgpgme -lyaml -ljansson -lncursesw -lfuse3 -lpthread \
	$(shell pkg-config --libs ostree-1 2>/dev/null)

ifeq ($(V),1)
Q :=
else
Q := @
endif

LIB_SRC := $(sort $(wildcard lib/*/*.c lib/*/*/*.c))
CMD_SRC := $(sort $(wildcard cmd/*.c))
# test_v1_inodes runs the module's decoder too: only in a tree that has it.
UNIT_SRC := $(sort $(filter-out $(if $(wildcard kmod/reader.c),,tests/unit/test_v1_inodes.c),\
	$(wildcard tests/unit/*.c)))
HEADERS := $(wildcard include/cfs/*.h common/*.h lib/*/*.h lib/*/*/*.h cmd/*.h fuzz/*.h)

obj = $(patsubst %.c,$(1)/%.o,$(2))

.PHONY: all deps check check-unit check-cli check-san-build demo clean help install uninstall man \
	fuzz fuzz-build fuzz-seeds check-valgrind kmod vm-test vm-shell vm-fuzz vm-soak bench bench-quick bench-pull bench-push bench-fuse

all: $(BUILD)/cfsctl $(BUILD)/cfs-mount-root

# This make read pkg-config (BASE_CFLAGS) and vm/kdir.sh when it started, so
# a target that installs the packages first ('deps') builds in a second make,
# which reads them again: on a fresh machine the first make saw no fuse3.
# Any other build without the packages says what to run instead of failing
# on a missing header; it is checked here, when the Makefile is read, so
# that a make with nothing to do runs nothing (make -q all is satisfied).
DEPS_FIRST := deps check demo bench bench-quick bench-pull bench-push bench-fuse vm-test vm-shell vm-fuzz vm-soak \
	vm-boot deb clean help kmod deps-registry-off
ifneq ($(filter-out $(DEPS_FIRST),$(or $(MAKECMDGOALS),all)),)
ifneq ($(shell pkg-config --exists fuse3 libarchive libcurl jansson ostree-1 2>/dev/null && echo yes),yes)
$(error cfs: the build needs Debian's -dev packages: run 'make deps' (as root) first)
endif
endif

define build_rules
# $(1): build directory, $(2): extra CFLAGS
$(1)/%.o: %.c $(HEADERS)
	@mkdir -p $$(dir $$@)
	@$(if $(Q),echo "  CC      $$@";)
	$(Q)$(CC) $(BASE_CFLAGS) $$(call inc,$$<) $(CFLAGS) $(2) -c -o $$@ $$<

# q, not r: r would keep one of the members that share a name
# (lib/format/*/reader.o); the archive is made anew each time.
$(1)/libcfs.a: $(call obj,$(1),$(LIB_SRC))
	@$(if $(Q),echo "  AR      $$@";)
	$(Q)rm -f $$@ && ar qcs $$@ $$^

$(1)/cfsctl: $(call obj,$(1),$(CMD_SRC)) $(1)/libcfs.a
	@$(if $(Q),echo "  LD      $$@";)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(2) -pthread -o $$@ $$^ $(LDLIBS)

# The boot script's mount (boot/mount-root.c), for the initramfs: linked
# --as-needed, it takes from libcfs only what it calls, and so needs a few
# of cfsctl's libraries rather than all of them.
$(1)/cfs-mount-root: $(1)/boot/mount-root.o $(1)/libcfs.a
	@$(if $(Q),echo "  LD      $$@";)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(2) -Wl,--as-needed -pthread -o $$@ $$^ $(LDLIBS)

$(1)/tests/unit/%: $(1)/tests/unit/%.o $(1)/libcfs.a
	@$(if $(Q),echo "  LD      $$@";)
	$(Q)$(CC) $(CFLAGS) $(2) -pthread -o $$@ $$^ $(LDLIBS)

# The fuzz targets' entry points without libFuzzer, for the regression replay.
$(1)/fuzz-replay/%.o: fuzz/%.c $(HEADERS)
	@mkdir -p $$(dir $$@)
	@$(if $(Q),echo "  CC      $$@";)
	$(Q)$(CC) $(BASE_CFLAGS) $(TEST_INC) $(CFLAGS) $(2) -DCFS_FUZZ_REPLAY -c -o $$@ $$<

$(1)/tests/unit/test_fuzz_regressions: $(1)/tests/unit/test_fuzz_regressions.o \
		$(addprefix $(1)/fuzz-replay/,$(FUZZ_REPLAY_OBJ)) $(1)/libcfs.a
	@$(if $(Q),echo "  LD      $$@";)
	$(Q)$(CC) $(CFLAGS) $(2) -pthread -o $$@ $$^ $(LDLIBS)

# The module's decoder, unchanged, beside the library's, for the test that
# holds their rules equal (tests/unit/test_v1_inodes.c).
$(1)/kreader/%.o: %.c kmod/cfs-internal.h common/cfs-format.h common/cfs-kshim.h $(KSHIM_HEADERS)
	@mkdir -p $$(dir $$@)
	@$(if $(Q),echo "  CC      $$@";)
	$(Q)$(CC) $(KSHIM_CFLAGS) $(CFLAGS) $(2) -c -o $$@ $$<

$(1)/tests/unit/test_v1_inodes: $(1)/tests/unit/test_v1_inodes.o \
		$(addprefix $(1)/kreader/,$(KREADER_OBJ)) $(1)/libcfs.a
	@$(if $(Q),echo "  LD      $$@";)
	$(Q)$(CC) $(CFLAGS) $(2) -pthread -o $$@ $$^ $(LDLIBS)
endef

# ---- libcfs.so: the library other programs link ----
# What a program that reads, verifies, diffs, mounts and builds images
# needs: lib/ without the parts that bring libarchive, libcurl, zstd,
# jansson or libostree (tar archives, the registry client, ostree), which
# stay in libcfs.a for cfsctl. Built with hidden visibility: only what the
# installed headers declare is exported (their '#pragma GCC visibility').
# The SONAME's number is CFS_VERSION_MAJOR (include/cfs/version.h).
LIBCFS_MAJOR := $(shell sed -n 's/^\#define CFS_VERSION_MAJOR[[:space:]]*//p' include/cfs/version.h)
LIBCFS_MINOR := $(shell sed -n 's/^\#define CFS_VERSION_MINOR[[:space:]]*//p' include/cfs/version.h)
LIBCFS_SONAME := libcfs.so.$(LIBCFS_MAJOR)
LIBCFS_SRC := $(filter-out lib/remote/% lib/ostree/% lib/source/tar.c,$(LIB_SRC))
LIBCFS_LIBS := -lfsverity -lcrypto
LIBCFS_HEADERS := $(addprefix include/cfs/,util.h image.h mount.h build.h store.h repo.h \
	verify.h diff.h version.h)
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

$(BUILD)/pic/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@";)
	$(Q)$(CC) $(BASE_CFLAGS) $(LIB_INC) $(CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(BUILD)/$(LIBCFS_SONAME): $(call obj,$(BUILD)/pic,$(LIBCFS_SRC))
	@$(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -shared -pthread -Wl,-soname,$(LIBCFS_SONAME) \
		-Wl,--no-undefined -Wl,--as-needed -o $@ $^ $(LIBCFS_LIBS)

all: $(BUILD)/$(LIBCFS_SONAME)

# libcfs.pc names the directories of this install, so install writes it.
LIBCFS_PC_SED = -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	-e 's|@VERSION@|$(LIBCFS_MAJOR).$(LIBCFS_MINOR)|; s|@LIBS@|$(LIBCFS_LIBS)|'

# kmod/reader.c, unchanged, on the userspace stand-ins of fuzz/kshim/;
# built with the kernel's warnings (-Wall) and dialect (gnu11).
KSHIM_CFLAGS := -std=gnu11 -D_GNU_SOURCE -Wall -Werror -Ifuzz/kshim -Ikmod -Icommon -Ilib -Ifuzz
KSHIM_HEADERS := $(wildcard fuzz/kshim/*.h fuzz/kshim/linux/*.h tests/unit/kreader/*.h)
KREADER_OBJ := kmod/reader.o fuzz/kshim/kshim.o tests/unit/kreader/kinode.o

FUZZ_REPLAY_OBJ := fuzz_image.o fuzz_dump.o fuzz_tar.o fuzz_oci.o fuzz_registry.o fuzz_toc.o \
	fuzz_policy.o fuzz_sigpayload.o common.o

SAN_FLAGS := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
$(eval $(call build_rules,$(BUILD),))
$(eval $(call build_rules,$(SAN_BUILD),$(SAN_FLAGS)))

UNIT_BINS = $(patsubst tests/unit/%.c,$(1)/tests/unit/%,$(UNIT_SRC))

# make check: every test, a line each, then the counts; check-kernels (mk/kernels.mk) beside
# tests/run.sh, CHECK_JOBS tests at a time (the CPUs and one: many wait on servers).
CHECK_JOBS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
check: deps
	$(Q)$(MAKE) --no-print-directory -k -j2 check-kernels check-run

.PHONY: check-run
check-run: all $(call UNIT_BINS,$(BUILD)) check-san-build check-fuzz-build
	$(Q)FUZZ_SMOKE_SECONDS=$(FUZZ_SMOKE_SECONDS) tests/run.sh -j $(CHECK_JOBS) --build $(BUILD) \
		--san $(SAN_BUILD) --fuzz $(FUZZ_BUILD) --valgrind '$(CHECK_VALGRIND)' \
		--valgrind-skip '$(VALGRIND_SKIP)' $(CHECK_ARGS)

check-san-build: $(SAN_BUILD)/cfsctl $(SAN_BUILD)/cfs-mount-root $(call UNIT_BINS,$(SAN_BUILD))

check-unit: $(call UNIT_BINS,$(BUILD))
	$(Q)tests/run.sh --build $(BUILD) --only unit
check-cli: all
	$(Q)tests/run.sh --build $(BUILD) --only cli

# These install what they need first ('deps'), then run as NAME-run in a
# second make that sees what deps installed.
demo bench bench-quick bench-pull bench-push bench-fuse vm-test vm-shell vm-fuzz vm-soak: deps
	$(Q)$(MAKE) --no-print-directory $@-run

.PHONY: demo-run bench-run bench-quick-run bench-pull-run bench-push-run bench-fuse-run vm-test-run vm-shell-run vm-fuzz-run vm-soak-run
demo-run: all
	$(Q)tests/demo.sh $(BUILD)/cfsctl

# Man pages: cfsctl(1) and cfsctl-VERB(1), written from cfsctl's --help,
# and mount.composefs(8) from the helper's (docs/mkman.py).
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
man: $(BUILD)/man/.stamp
$(BUILD)/man/.stamp: $(BUILD)/cfsctl docs/mkman.py cmd/mount.composefs
	@$(if $(Q),echo "  MAN     $(BUILD)/man";)
	$(Q)rm -rf $(BUILD)/man && python3 docs/mkman.py $(BUILD)/cfsctl $(BUILD)/man && touch $@

# What make install puts under DESTDIR/PREFIX; make uninstall removes just that.
# mount.composefs goes in /sbin, where mount(8) looks; it runs this PREFIX's cfsctl.
SBINDIR ?= /sbin
# cfs-mount-root is the initramfs's (boot/initramfs-tools), in LIBEXECDIR.
LIBEXECDIR ?= $(PREFIX)/lib/cfs
INSTALLED = $(PREFIX)/bin/cfsctl $(SBINDIR)/mount.composefs $(BASHCOMPDIR)/cfsctl \
	$(LIBEXECDIR)/cfs-mount-root \
	$(patsubst $(BUILD)/man/%,$(MANDIR)/man1/%,$(wildcard $(BUILD)/man/*.1)) \
	$(patsubst $(BUILD)/man/%,$(MANDIR)/man8/%,$(wildcard $(BUILD)/man/*.8)) \
	$(LIBDIR)/$(LIBCFS_SONAME) $(LIBDIR)/libcfs.so $(PKGCONFIGDIR)/libcfs.pc \
	$(patsubst include/%,$(INCLUDEDIR)/%,$(LIBCFS_HEADERS))

install: all man
	install -D -m 0755 $(BUILD)/cfsctl $(DESTDIR)$(PREFIX)/bin/cfsctl
	install -D -m 0755 $(BUILD)/cfs-mount-root $(DESTDIR)$(LIBEXECDIR)/cfs-mount-root
	install -d $(DESTDIR)$(SBINDIR)
	sed 's|@CFSCTL@|$(PREFIX)/bin/cfsctl|' cmd/mount.composefs > $(DESTDIR)$(SBINDIR)/mount.composefs.tmp
	chmod 0755 $(DESTDIR)$(SBINDIR)/mount.composefs.tmp
	mv $(DESTDIR)$(SBINDIR)/mount.composefs.tmp $(DESTDIR)$(SBINDIR)/mount.composefs
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 0644 $(BUILD)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -d $(DESTDIR)$(MANDIR)/man8
	install -m 0644 $(BUILD)/man/*.8 $(DESTDIR)$(MANDIR)/man8/
	install -D -m 0644 completion/cfsctl.bash $(DESTDIR)$(BASHCOMPDIR)/cfsctl
	install -D -m 0755 $(BUILD)/$(LIBCFS_SONAME) $(DESTDIR)$(LIBDIR)/$(LIBCFS_SONAME)
	ln -sf $(LIBCFS_SONAME) $(DESTDIR)$(LIBDIR)/libcfs.so
	install -d $(DESTDIR)$(INCLUDEDIR)/cfs
	install -m 0644 $(LIBCFS_HEADERS) $(DESTDIR)$(INCLUDEDIR)/cfs/
	install -d $(DESTDIR)$(PKGCONFIGDIR)
	sed $(LIBCFS_PC_SED) libcfs.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libcfs.pc

uninstall: man
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	if [ -d $(DESTDIR)$(LIBEXECDIR) ]; then rmdir --ignore-fail-on-non-empty $(DESTDIR)$(LIBEXECDIR); fi
	if [ -d $(DESTDIR)$(INCLUDEDIR)/cfs ]; then rmdir --ignore-fail-on-non-empty $(DESTDIR)$(INCLUDEDIR)/cfs; fi

clean:
	rm -rf build
	rm -rf kmod/*.o kmod/*.ko kmod/*.mod kmod/*.mod.c kmod/.*.cmd kmod/Module.symvers \
		kmod/modules.order kmod/.tmp_versions

# Every target is a file make keeps, once made: none is an intermediate.
.SECONDARY:
include mk/deps.mk mk/fuzz.mk mk/valgrind.mk mk/vm.mk mk/kernels.mk mk/bench.mk mk/deb.mk mk/help.mk
