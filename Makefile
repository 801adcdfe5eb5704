# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfs: composefs toolkit. The front door: make deps, make, make check, make demo.
# Quiet by default; V=1 shows full commands. See 'make help'.

CC ?= cc
CFLAGS ?= -O2 -g
PREFIX ?= /usr/local
DESTDIR ?=
KDIR ?= /lib/modules/$(shell ls /lib/modules 2>/dev/null | grep -m1 '^6\.12\..*-amd64$$')/build

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo 0.1)
BUILD ?= build
SAN_BUILD := build/san

WARN := -Wall -Wextra -Werror
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 $(WARN) -Ilib -Icmd \
	-DCFS_VERSION_STRING='"$(VERSION)"' -pthread
LDLIBS := -lfsverity -lcurl -lncursesw -lpthread

# Every Debian package the project needs, for building, testing, the VM and
# the benchmarks. 'make deps' installs what is missing.
DEB_PACKAGES := build-essential pkg-config libfsverity-dev fsverity \
	libcurl4-openssl-dev curl libncurses-dev clang libclang-rt-14-dev valgrind \
	linux-headers-6.12-amd64 qemu-system-x86 busybox-static cpio e2fsprogs \
	xz-utils kmod attr acl nginx-light tmux squashfs-tools erofs-utils \
	hyperfine gnuplot-nox fio python3 openssl

ifeq ($(V),1)
Q :=
else
Q := @
endif

LIB_SRC := $(sort $(wildcard lib/*.c))
CMD_SRC := $(sort $(wildcard cmd/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
HEADERS := $(wildcard lib/*.h cmd/*.h)

obj = $(patsubst %.c,$(1)/%.o,$(2))

.PHONY: all deps check check-unit check-cli check-san-build demo clean help install \
	kmod vm-test vm-shell bench bench-quick

all: $(BUILD)/cfsctl

define build_rules
# $(1): build directory, $(2): extra CFLAGS
$(1)/%.o: %.c $(HEADERS)
	@mkdir -p $$(dir $$@)
	@$(if $(Q),echo "  CC      $$@";)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) $(2) -c -o $$@ $$<

$(1)/libcfs.a: $(call obj,$(1),$(LIB_SRC))
	@$(if $(Q),echo "  AR      $$@";)
	$(Q)rm -f $$@ && ar rcs $$@ $$^

$(1)/cfsctl: $(call obj,$(1),$(CMD_SRC)) $(1)/libcfs.a
	@$(if $(Q),echo "  LD      $$@";)
	$(Q)$(CC) $(CFLAGS) $(2) -pthread -o $$@ $$^ $(LDLIBS)

$(1)/tests/unit/%: $(1)/tests/unit/%.o $(1)/libcfs.a
	@$(if $(Q),echo "  LD      $$@";)
	$(Q)$(CC) $(CFLAGS) $(2) -pthread -o $$@ $$^ $(LDLIBS)
endef

SAN_FLAGS := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
$(eval $(call build_rules,$(BUILD),))
$(eval $(call build_rules,$(SAN_BUILD),$(SAN_FLAGS)))

UNIT_BINS = $(patsubst tests/unit/%.c,$(1)/tests/unit/%,$(UNIT_SRC))

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${db:Status-Status}\n' $$p 2>/dev/null | grep -qx installed || echo $$p; \
	done); \
	if [ -z "$$missing" ]; then echo "deps: all $(words $(DEB_PACKAGES)) packages present"; \
	else echo "deps: installing$$(echo $$missing | sed 's/^/ /')"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $$missing; fi

# make check: every test; each line says PASS, FAIL or SKIP (with the reason),
# and the last line counts them.
check: deps
	$(Q)$(MAKE) --no-print-directory check-run

.PHONY: check-run
check-run: all $(call UNIT_BINS,$(BUILD)) check-san-build
	$(Q)tests/run.sh --build $(BUILD) --san $(SAN_BUILD) $(CHECK_ARGS)

check-san-build: $(SAN_BUILD)/cfsctl $(call UNIT_BINS,$(SAN_BUILD))

check-unit: $(call UNIT_BINS,$(BUILD))
	$(Q)tests/run.sh --build $(BUILD) --only unit

check-cli: all
	$(Q)tests/run.sh --build $(BUILD) --only cli

demo: deps all
	$(Q)tests/demo.sh $(BUILD)/cfsctl

# The kernel module, built against KDIR (never loaded on this machine).
kmod:
	$(Q)$(MAKE) -C kmod $(if $(Q),-s) KDIR='$(KDIR)' modules

# The module's tests, in QEMU booting Debian's kernel (vm/run-tests.sh).
vm-test:
	$(Q)vm/run-tests.sh

vm-shell:
	$(Q)vm/run-tests.sh --shell

# Benchmarks against squashfs and erofs, in QEMU (bench/run.sh, docs/bench.md).
# Separate from 'make check': they take minutes to an hour.
bench: deps all
	$(Q)bench/run.sh

bench-quick: deps all
	$(Q)bench/run.sh --quick

install: all
	install -D -m 0755 $(BUILD)/cfsctl $(DESTDIR)$(PREFIX)/bin/cfsctl

clean:
	rm -rf build
	rm -rf kmod/*.o kmod/*.ko kmod/*.mod kmod/*.mod.c kmod/.*.cmd kmod/Module.symvers \
		kmod/modules.order kmod/.tmp_versions

help:
	@echo "cfs make targets:"
	@echo "  deps        install the Debian packages the project needs (apt)"
	@echo "  all         build build/cfsctl (default)"
	@echo "  check       run every test (unit, CLI, sanitizer builds)"
	@echo "  check-unit  library unit tests only"
	@echo "  check-cli   cfsctl command tests only"
	@echo "  demo        build an image of examples/tree with a digest store and inspect it"
	@echo "  kmod        build kmod/composefs.ko against KDIR"
	@echo "  vm-test     run the kernel module tests in QEMU (Debian's 6.12 kernel)"
	@echo "  vm-shell    boot the test VM to an interactive shell"
	@echo "  bench       composefs against squashfs and erofs in QEMU (an hour or more under TCG)"
	@echo "  bench-quick a reduced set (about 15 min under TCG)"
	@echo "  install     install cfsctl under PREFIX ($(PREFIX))"
	@echo "  clean       remove build/"
	@echo "Variables: CC CFLAGS PREFIX DESTDIR KDIR V=1"
.SECONDARY:
