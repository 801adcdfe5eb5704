# SPDX-License-Identifier: GPL-2.0 OR MIT
# Debian packages and a booted composefs root (docs/boot.md; included by the
# top Makefile).
# make deb: cfsctl and composefs-dkms into build/deb/, built by debhelper in
# a copy of the tree (build/deb/src/) with packaging/debian as its debian/,
# so that the tree's top level holds no debian/ and debhelper's files and
# the packages (written beside the source) stay under build/; then lintian.
# The version is VERSION's Debian spelling (packaging/deb-version.sh).
DEB_DIR := build/deb
DEB_VERSION = $(shell packaging/deb-version.sh '$(VERSION)')
# The Maintainer field: DEB_MAINTAINER, else Debian's DEBFULLNAME and
# DEBEMAIL (as dch takes them), else, said as a stand-in, git's user.
DEB_MAINTAINER ?= $(if $(DEBEMAIL),$(if $(DEBFULLNAME),$(DEBFULLNAME) <$(DEBEMAIL)>,$(DEBEMAIL)))
DEB_MAINTAINER_GIT = $(shell n=$$(git config user.name 2>/dev/null) && e=$$(git config user.email 2>/dev/null) && \
	echo "$$n <$$e>")
.PHONY: deb deb-run vm-boot vm-boot-run
deb: deps
	$(Q)$(MAKE) --no-print-directory deb-run

deb-run:
	@command -v dpkg-buildpackage >/dev/null && command -v dh_dkms >/dev/null || \
		{ echo "deb: needs debhelper and dh-dkms: run 'make deps' (as root) first" >&2; exit 2; }
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src/cfs
	$(Q)if git rev-parse --git-dir >/dev/null 2>&1; then \
		git ls-files -z -c -o --exclude-standard | \
			xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' _ | \
			tar --null -T - -cf - | tar -xf - -C $(DEB_DIR)/src/cfs; \
	else tar --exclude=./build -cf - . | tar -xf - -C $(DEB_DIR)/src/cfs; fi
	$(Q)rm -rf $(DEB_DIR)/src/cfs/debian && cp -r packaging/debian $(DEB_DIR)/src/cfs/debian
	$(Q)$(if $(DEB_MAINTAINER),:,echo "deb: no DEB_MAINTAINER, nor DEBFULLNAME and DEBEMAIL: the Maintainer is git's user, '$(or $(DEB_MAINTAINER_GIT),none)'; set them for a package to publish" >&2)
	$(Q)[ -n '$(or $(DEB_MAINTAINER),$(DEB_MAINTAINER_GIT))' ] || \
		{ echo "deb: no Maintainer: set DEBFULLNAME and DEBEMAIL (or DEB_MAINTAINER='Name <email>')" >&2; exit 2; }
	$(Q)sed -i 's|@MAINTAINER@|$(or $(DEB_MAINTAINER),$(DEB_MAINTAINER_GIT))|' \
		$(DEB_DIR)/src/cfs/debian/control
	$(Q)printf 'cfs (%s) unstable; urgency=medium\n\n  * Built from %s.\n\n -- %s  %s\n' \
		'$(DEB_VERSION)' '$(VERSION)' '$(or $(DEB_MAINTAINER),$(DEB_MAINTAINER_GIT))' \
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
# formats, and every refusal (vm/boot-test.sh, docs/boot.md); make
# check-long runs one v1 boot of it (tests/cli/0202-boot.sh).
vm-boot: deps
	$(Q)$(MAKE) --no-print-directory vm-boot-run

vm-boot-run: all
	$(Q)vm/boot-test.sh

# make check-long: the tests too long for make check, which says each one's
# SKIP ('# test: long' in the file): today tests/cli/0202-boot.sh, the
# packages installed into a Debian 12 root that boots from a v1 image.
.PHONY: check-long check-long-run
check-long: deps
	$(Q)$(MAKE) --no-print-directory check-long-run

check-long-run: all
	$(Q)tests/run.sh --build $(BUILD) --long --only cli
