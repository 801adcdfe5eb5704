# SPDX-License-Identifier: GPL-2.0 OR MIT
# make deps: the Debian packages the project needs, and the 6.12 kernel's
# headers for the module (included by the top Makefile).

# Every Debian package the project needs, for building, testing, the VM and
# the benchmarks. 'make deps' installs what is missing.
DEB_PACKAGES := build-essential pkg-config libfsverity-dev fsverity \
	libarchive-dev libssl-dev libcurl4-openssl-dev libjansson-dev curl libncurses-dev clang libclang-rt-14-dev valgrind \
	dwarves dkms qemu-system-x86 busybox-static cpio e2fsprogs \
	xz-utils kmod attr acl nginx-light tmux squashfs-tools squashfuse erofs-utils \
	hyperfine gnuplot-nox fio python3 openssl zstd libzstd-dev zlib1g-dev libgpgme-dev libyaml-dev linux-perf \
	libfuse3-dev fuse3 man-db umoci docker-registry apache2-utils skopeo debootstrap time strace \
	libostree-dev ostree gnupg \
	dpkg-dev debhelper dh-dkms lintian initramfs-tools-core sparse

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
