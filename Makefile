# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfs: composefs toolkit. The front door: make deps, make, make check, make demo.
# Quiet by default; V=1 shows full commands. See 'make help'.

CC ?= cc
CFLAGS ?= -O2 -g
PREFIX ?= /usr/local
DESTDIR ?=
# The 6.12 build tree: the headers 'make deps' fetched into the cache
# (vm/fetch-headers.sh; no kernel is installed here), or KDIR=.
KDIR ?= $(shell vm/kdir.sh 2>/dev/null | head -n 1)

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo 0.1)
BUILD ?= build
SAN_BUILD := build/san

WARN := -Wall -Wextra -Werror
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 $(WARN) \
	-DCFS_VERSION_STRING='"$(VERSION)"' -pthread
# Who sees which headers: the verbs only the public ones (include/cfs/),
# the library its private ones too (lib/), the fuzz targets and unit tests
# what they test (lib/, fuzz/). The initramfs's program (boot/) is a verb's
# kin: public headers only. Plus the system libraries' own.
SYS_INC := $(shell pkg-config --cflags-only-I fuse3 2>/dev/null) \
	$(shell pkg-config --cflags-only-I ostree-1 2>/dev/null)
CMD_INC := -Iinclude $(SYS_INC)
LIB_INC := -Iinclude -Icommon -Ilib $(SYS_INC)
TEST_INC := -Iinclude -Icommon -Ilib -Ifuzz $(SYS_INC)
# $(call inc,SOURCE): the include flags SOURCE is compiled with
inc = $(if $(filter cmd/% boot/%,$(1)),$(CMD_INC),$(if $(filter lib/%,$(1)),$(LIB_INC),$(TEST_INC)))
LDLIBS := -lfsverity -larchive -lcrypto -lcurl -lzstd -ljansson -lgpgme -lyaml -lncursesw -lfuse3 -lpthread \
	$(shell pkg-config --libs ostree-1 2>/dev/null)

# Every Debian package the project needs, for building, testing, the VM and
# the benchmarks. 'make deps' installs what is missing.
DEB_PACKAGES := build-essential pkg-config libfsverity-dev fsverity \
	libarchive-dev libssl-dev libcurl4-openssl-dev libjansson-dev libgpgme-dev libyaml-dev curl libncurses-dev clang libclang-rt-14-dev valgrind \
	dwarves dkms qemu-system-x86 busybox-static cpio e2fsprogs \
	xz-utils kmod attr acl nginx-light tmux squashfs-tools erofs-utils \
	hyperfine gnuplot-nox fio python3 openssl zstd libzstd-dev linux-perf \
	libfuse3-dev fuse3 man-db umoci docker-registry apache2-utils skopeo debootstrap time strace \
	libostree-dev ostree gnupg \
	dpkg-dev debhelper dh-dkms lintian initramfs-tools-core

ifeq ($(V),1)
Q :=
else
Q := @
endif

# lib/ holds what the formats share; lib/format/<format>/ each one's reader,
# writer and verify checks.
LIB_SRC := $(sort $(wildcard lib/*/*.c lib/*/*/*.c))
CMD_SRC := $(sort $(wildcard cmd/*.c))
# test_v1_inodes runs the module's decoder too: only in a tree that has it.
UNIT_SRC := $(sort $(filter-out $(if $(wildcard kmod/reader.c),,tests/unit/test_v1_inodes.c),\
	$(wildcard tests/unit/*.c)))
HEADERS := $(wildcard include/cfs/*.h common/*.h lib/*/*.h lib/*/*/*.h cmd/*.h fuzz/*.h)

obj = $(patsubst %.c,$(1)/%.o,$(2))

.PHONY: all deps check check-unit check-cli check-san-build demo clean help install uninstall man \
	fuzz fuzz-build fuzz-seeds check-valgrind kmod vm-test vm-shell vm-fuzz vm-soak bench bench-quick bench-pull

all: need-deps $(BUILD)/cfsctl $(BUILD)/cfs-mount-root

# This make read pkg-config (BASE_CFLAGS) and vm/kdir.sh when it started, so
# a target that installs the packages first ('deps') builds in a second make,
# which reads them again: on a fresh machine the first make saw no fuse3.
# A plain build without the packages says what to run instead of failing on
# a missing header.
.PHONY: need-deps
need-deps:
	@pkg-config --exists fuse3 libarchive libcurl jansson ostree-1 2>/dev/null || \
		{ echo "cfs: the build needs Debian's -dev packages: run 'make deps' (as root) first" >&2; exit 2; }

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

# ---- fuzzing: libFuzzer targets built with clang, ASan and UBSan ----
FUZZ_CC ?= clang
FUZZ_BUILD := build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 15
# The module's descriptor reader is fuzzed when the tree has the module.
FUZZ_TARGETS := image dump tar oci registry toc policy sigpayload $(if $(wildcard kmod/reader.c),kreader)
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

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${db:Status-Status}\n' $$p 2>/dev/null | grep -qx installed || echo $$p; \
	done); \
	if [ -z "$$missing" ]; then echo "deps: all $(words $(DEB_PACKAGES)) packages present"; \
	else echo "deps: installing$$(echo $$missing | sed 's/^/ /')"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			-o DPkg::Lock::Timeout=600 --no-install-recommends $$missing; } || \
			{ echo "deps: apt-get could not install the packages above" >&2; exit 1; }; \
		case " $$missing " in *" docker-registry "*) $(MAKE) --no-print-directory deps-registry-off;; esac; fi
	@# The module's headers, unpacked into a cache: never a kernel on this host.
	@kdir=$$(vm/fetch-headers.sh) && echo "deps: kernel headers in $$kdir"

# docker-registry's package starts a registry on port 5000 for the whole
# machine; the tests start their own, on free ports. Stop and disable the
# service the install of the package just started (init scripts or systemd).
.PHONY: deps-registry-off
deps-registry-off:
	@if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then \
		systemctl disable --now docker-registry.service >/dev/null 2>&1; \
	else service docker-registry stop >/dev/null 2>&1; \
		update-rc.d docker-registry disable >/dev/null 2>&1; fi; \
	echo "deps: the docker-registry service is stopped and disabled (tests start their own)"

# The CLI tests make check also runs under valgrind: a representative few
# (the whole set is make check-valgrind).
CHECK_VALGRIND ?= 13-build-dump 42-inspect-dump 21-build-store-leftovers

# make check: every test; each line says PASS, FAIL or SKIP (with the reason),
# and the last line counts them.
check: deps
	$(Q)$(MAKE) --no-print-directory check-run

.PHONY: check-run
check-run: all $(call UNIT_BINS,$(BUILD)) check-san-build check-fuzz-build
	$(Q)FUZZ_SMOKE_SECONDS=$(FUZZ_SMOKE_SECONDS) tests/run.sh --build $(BUILD) \
		--san $(SAN_BUILD) --fuzz $(FUZZ_BUILD) --valgrind '$(CHECK_VALGRIND)' \
		--valgrind-skip '$(VALGRIND_SKIP)' $(CHECK_ARGS)

check-san-build: $(SAN_BUILD)/cfsctl $(SAN_BUILD)/cfs-mount-root $(call UNIT_BINS,$(SAN_BUILD))

check-unit: $(call UNIT_BINS,$(BUILD))
	$(Q)tests/run.sh --build $(BUILD) --only unit

# The CLI tests with cfsctl under valgrind (memcheck, leaks included;
# about half an hour here), but for those that cannot run there: 11 and 16
# hash a 5 GiB sparse file and 44 and 73 run cfsctl on thousands of
# corrupt images (each takes over 5 minutes under memcheck; 73 over an
# hour), 62 looks into /proc/PID/fd of the cfsctl it started and 93 sends
# it signals, where the process is the wrapper's shell (tests/valgrind-cfsctl)
# and not cfsctl. The sanitizer build runs all six.
VALGRIND_SKIP := 11-build-store 16-build-content 44-inspect-corrupt 62-fetch-kill \
	73-verify-corrupt 93-tui-terminal
check-valgrind: all
	$(Q)tests/run.sh --build $(BUILD) --only valgrind --valgrind '*' \
		--valgrind-skip '$(VALGRIND_SKIP)'

check-cli: all
	$(Q)tests/run.sh --build $(BUILD) --only cli

# The targets README names install what they need first ('deps'), then run
# as NAME-run in a second make that sees what deps installed.
demo bench bench-quick bench-pull vm-test vm-shell vm-fuzz vm-soak: deps
	$(Q)$(MAKE) --no-print-directory $@-run

.PHONY: demo-run bench-run bench-quick-run bench-pull-run vm-test-run vm-shell-run vm-fuzz-run vm-soak-run
demo-run: all
	$(Q)tests/demo.sh $(BUILD)/cfsctl

# The kernel module, built against KDIR (never loaded on this machine).
kmod:
	$(Q)$(MAKE) -C kmod $(if $(Q),-s) KDIR='$(KDIR)' modules

# The module's tests, in QEMU booting Debian's kernel (vm/run-tests.sh).
vm-test-run:
	$(Q)vm/run-tests.sh

vm-shell-run:
	$(Q)vm/run-tests.sh --shell

# Mutated images mounted in QEMU for VM_FUZZ_SECONDS, with a watchdog, the
# kernel log checked after each and a leak check at the end (docs/robustness.md).
VM_FUZZ_SECONDS ?= 600
vm-fuzz-run: all
	$(Q)CFS_VMFUZZ_SECONDS=$(VM_FUZZ_SECONDS) vm/run-tests.sh --fuzz

# The soak test alone, reading for VM_SOAK_SECONDS, with slab debugging and
# the leak check (vm/tests/18-soak.sh, docs/robustness.md).
VM_SOAK_SECONDS ?= 1200
vm-soak-run: all
	$(Q)CFS_SOAK_SECONDS=$(VM_SOAK_SECONDS) vm/run-tests.sh --soak

# Benchmarks against composefs 1.0, squashfs and erofs, in QEMU (bench/run.sh,
# docs/bench.md).
# Separate from 'make check': they take minutes to an hour.
# make bench INPUT=os (or PART=os-meta) measures one input (or part);
# FORCE=1 measures again what already has a result for this commit.
BENCH_ARGS = $(if $(INPUT),--input $(INPUT)) $(if $(PART),--part $(PART)) $(if $(FORCE),--force)
bench-run: all
	$(Q)bench/run.sh $(BENCH_ARGS)

bench-quick-run: all
	$(Q)bench/run.sh --quick $(BENCH_ARGS)

# cfsctl pull of a Debian image from a local registry against skopeo copy,
# umoci unpack and cfsctl build, on the host (bench/pull.sh, docs/bench.md);
# RUNS= runs of each (default 5).
bench-pull-run: all
	$(Q)bench/pull.sh $(if $(RUNS),--runs $(RUNS))

# Man pages: cfsctl(1) and cfsctl-VERB(1), written from cfsctl's --help
# (docs/mkman.py), so they say what the program does.
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
man: $(BUILD)/man/.stamp
$(BUILD)/man/.stamp: $(BUILD)/cfsctl docs/mkman.py
	@$(if $(Q),echo "  MAN     $(BUILD)/man";)
	$(Q)rm -rf $(BUILD)/man && python3 docs/mkman.py $(BUILD)/cfsctl $(BUILD)/man && touch $@

# What make install puts under DESTDIR/PREFIX; make uninstall removes just that.
# mount(8) runs a helper for 'mount -t composefs' only from /sbin (or
# /sbin/fs.d, /sbin/fs), so that is where mount.composefs goes; it runs the
# cfsctl of this PREFIX.
SBINDIR ?= /sbin
# cfs-mount-root is the initramfs's (boot/initramfs-tools), in LIBEXECDIR.
LIBEXECDIR ?= $(PREFIX)/lib/cfs
INSTALLED = $(PREFIX)/bin/cfsctl $(SBINDIR)/mount.composefs $(BASHCOMPDIR)/cfsctl \
	$(LIBEXECDIR)/cfs-mount-root \
	$(patsubst $(BUILD)/man/%,$(MANDIR)/man1/%,$(wildcard $(BUILD)/man/*.1))

install: all man
	install -D -m 0755 $(BUILD)/cfsctl $(DESTDIR)$(PREFIX)/bin/cfsctl
	install -D -m 0755 $(BUILD)/cfs-mount-root $(DESTDIR)$(LIBEXECDIR)/cfs-mount-root
	install -d $(DESTDIR)$(SBINDIR)
	sed 's|@CFSCTL@|$(PREFIX)/bin/cfsctl|' cmd/mount.composefs > $(DESTDIR)$(SBINDIR)/mount.composefs.tmp
	chmod 0755 $(DESTDIR)$(SBINDIR)/mount.composefs.tmp
	mv $(DESTDIR)$(SBINDIR)/mount.composefs.tmp $(DESTDIR)$(SBINDIR)/mount.composefs
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 0644 $(BUILD)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -D -m 0644 completion/cfsctl.bash $(DESTDIR)$(BASHCOMPDIR)/cfsctl

uninstall: man
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	if [ -d $(DESTDIR)$(LIBEXECDIR) ]; then rmdir --ignore-fail-on-non-empty $(DESTDIR)$(LIBEXECDIR); fi

# ---- Debian packages and a booted composefs root (docs/boot.md) ----
# make deb: cfsctl and composefs-dkms into build/deb/, built by debhelper in
# a copy of the tree (build/deb/src/) with packaging/debian as its debian/,
# so that the tree's top level holds no debian/ and debhelper's files and
# the packages (written beside the source) stay under build/; then lintian.
# The version is VERSION's Debian spelling (packaging/deb-version.sh).
DEB_DIR := build/deb
DEB_VERSION = $(shell packaging/deb-version.sh '$(VERSION)')
DEB_MAINTAINER = $(shell git log -1 --format='%an <%ae>' 2>/dev/null)
.PHONY: deb deb-run vm-boot vm-boot-run
deb: deps
	$(Q)$(MAKE) --no-print-directory deb-run

deb-run: need-deps
	@command -v dpkg-buildpackage >/dev/null && command -v dh_dkms >/dev/null || \
		{ echo "deb: needs debhelper and dh-dkms: run 'make deps' (as root) first" >&2; exit 2; }
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src/cfs
	$(Q)if git rev-parse --git-dir >/dev/null 2>&1; then \
		git ls-files -z -c -o --exclude-standard | \
			xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' _ | \
			tar --null -T - -cf - | tar -xf - -C $(DEB_DIR)/src/cfs; \
	else tar --exclude=./build -cf - . | tar -xf - -C $(DEB_DIR)/src/cfs; fi
	$(Q)rm -rf $(DEB_DIR)/src/cfs/debian && cp -r packaging/debian $(DEB_DIR)/src/cfs/debian
	$(Q)sed -i 's|@MAINTAINER@|$(or $(DEB_MAINTAINER),cfs maintainers <cfs@example.org>)|' \
		$(DEB_DIR)/src/cfs/debian/control
	$(Q)printf 'cfs (%s) unstable; urgency=medium\n\n  * Built from %s.\n\n -- %s  %s\n' \
		'$(DEB_VERSION)' '$(VERSION)' '$(or $(DEB_MAINTAINER),cfs maintainers <cfs@example.org>)' \
		"$$(date -R -d @$$(git log -1 --format=%ct 2>/dev/null || date +%s))" \
		> $(DEB_DIR)/src/cfs/debian/changelog
	@echo "  DEB     $(DEB_DIR) ($(DEB_VERSION))"
	$(Q)cd $(DEB_DIR)/src/cfs && CFS_VERSION='$(VERSION)' DEB_BUILD_OPTIONS=noautodbgsym \
		dpkg-buildpackage -b -us -uc \
		$(if $(Q),> ../build.log 2>&1 || { tail -n 30 ../build.log >&2; exit 1; })
	@echo "  LINTIAN $(DEB_DIR)"
	$(Q)lintian --fail-on error $(DEB_DIR)/src/*.changes > $(DEB_DIR)/src/lintian.log 2>&1; rc=$$?; \
		grep -v 'running with root privileges' $(DEB_DIR)/src/lintian.log; exit $$rc
	$(Q)mv $(DEB_DIR)/src/*.deb $(DEB_DIR)/

# make vm-boot: a Debian 12 booted in QEMU from composefs roots of both
# formats, and every refusal (vm/boot-test.sh, docs/boot.md); make check
# runs one v1 boot of it (tests/cli/89-boot.sh).
vm-boot: deps
	$(Q)$(MAKE) --no-print-directory vm-boot-run

vm-boot-run: all
	$(Q)vm/boot-test.sh

clean:
	rm -rf build
	rm -rf kmod/*.o kmod/*.ko kmod/*.mod kmod/*.mod.c kmod/.*.cmd kmod/Module.symvers \
		kmod/modules.order kmod/.tmp_versions

help:
	@echo "cfs make targets:"
	@echo "  deps        install the Debian packages the project needs (apt)"
	@echo "  deps-registry-off  stop and disable the docker-registry service (deps does, on install)"
	@echo "  all         build build/cfsctl (default)"
	@echo "  check       run every test (unit, CLI, sanitizer builds)"
	@echo "  check-unit  library unit tests only"
	@echo "  check-cli   cfsctl command tests only (one by name: tests/run.sh 10-build-basic)"
	@echo "  fuzz        run each fuzz target for FUZZ_SECONDS ($(FUZZ_SECONDS)) seconds"
	@echo "  fuzz-build  build the libFuzzer targets (clang) into $(FUZZ_BUILD)/"
	@echo "  check-valgrind  the CLI tests with cfsctl under valgrind"
	@echo "  demo        build an image of examples/tree with a digest store and inspect it"
	@echo "  kmod        build kmod/composefs.ko against KDIR"
	@echo "  vm-test     run the kernel module tests in QEMU (Debian's 6.12 kernel)"
	@echo "  vm-shell    boot the test VM to an interactive shell"
	@echo "  vm-fuzz     mount mutated images in QEMU for VM_FUZZ_SECONDS ($(VM_FUZZ_SECONDS)) seconds"
	@echo "  vm-soak     8 readers, dropped caches, a memory cgroup, a lazy umount, for VM_SOAK_SECONDS ($(VM_SOAK_SECONDS)) seconds"
	@echo "  bench       composefs against composefs 1.0, squashfs and erofs in QEMU, part by part (INPUT=, PART=, FORCE=1)"
	@echo "  bench-quick a reduced set (about 20 min under TCG)"
	@echo "  bench-pull  cfsctl pull against skopeo copy + umoci unpack + cfsctl build, on the host (RUNS=, 3 to 6 min)"
	@echo "  man         write the man pages into $(BUILD)/man from cfsctl --help"
	@echo "  install     install cfsctl, its man pages and bash completion under DESTDIR/PREFIX ($(PREFIX)), mount.composefs in SBINDIR ($(SBINDIR))"
	@echo "  uninstall   remove exactly what install installed"
	@echo "  deb         Debian packages cfsctl and composefs-dkms in $(DEB_DIR)/ (debhelper, lintian)"
	@echo "  vm-boot     boot a Debian 12 from a composefs root in QEMU, every check (vm/boot-test.sh)"
	@echo "  clean       remove build/"
	@echo "Variables: CC CFLAGS PREFIX DESTDIR MANDIR BASHCOMPDIR SBINDIR KDIR V=1 FUZZ_CC FUZZ_SECONDS FUZZ_SMOKE_SECONDS VM_FUZZ_SECONDS CHECK_VALGRIND"
.SECONDARY:
