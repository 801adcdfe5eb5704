# SPDX-License-Identifier: GPL-2.0 OR MIT
# The kernel lines the module is built and tested on (docs/kernel.md):
# Debian's 6.12, whose headers 'make deps' fetches, and the newest kernel of
# Debian unstable, resolved when 'make kernels' makes its cache.
#
#   make kernels         the newest kernel's build root and image (cached,
#                        vm/fetch-newest.sh), and the module built, without
#                        a warning, for both lines
#   make kmod KREL=R     the module for cached release R into build/kmod/R/
#                        (KREL=newest: the one 'make kernels' resolved)
#   make vm-test KREL=R  the VM tests on that kernel
#   make check-kernels   what 'make check' runs of this: the newest
#                        kernel's cache, the static checks
#                        (vm/kmod-static.sh: W=1, sparse, checkpatch) and
#                        the newest kernel's VM suite, which builds the
#                        module for it

.PHONY: kernels kernels-run check-kernels

# The newest kernel's VM suite: options and mounts (01), reads (02),
# verity_check and digest= (03), mmap and splice (06), the crafted-image
# refusals (07), composefs 1.0's erofs and overlayfs mounts (09), the
# block device held while mounted (25); the guest's teardown unloads the
# module and fails on any kernel warning.
KERNELS_VM_TESTS ?= 4201 4202 4203 4206 4207 4209 4225

kernels: deps
	$(Q)$(MAKE) --no-print-directory kernels-run

kernels-run:
	$(Q)krel=$$(vm/fetch-newest.sh) && \
	for r in $$(vm/kdir.sh | sed -n 2p) "$$krel"; do \
		vm/kmod-build.sh "$$r" "build/kmod/$$r" >/dev/null || exit 1; \
		echo "kernels: build/kmod/$$r/composefs.ko"; \
	done

# Each part prints PASS or FAIL (with the log to read) and the target fails
# when one does. No module is built twice: the static checks' W=1 build is
# 6.12's warning-free build, and the VM harness's (vm/kmod-build.sh, which
# fails on a warning) the newest kernel's. It needs cfsctl for the VM's
# disk, built first: make check runs this beside check-run, and one make
# builds it for both.
check-kernels: all
	$(Q)rc=0; mkdir -p build; \
	if krel=$$(vm/fetch-newest.sh 2> build/kernels-fetch.log); then \
		echo "PASS kernels/newest ($$krel)"; \
	else echo "FAIL kernels/newest: $$(tail -n 1 build/kernels-fetch.log) (log: build/kernels-fetch.log)"; rc=1; fi; \
	vm/kmod-static.sh || rc=1; \
	if [ -n "$$krel" ]; then \
		KREL=$$krel CFS_VM_TESTS='$(KERNELS_VM_TESTS)' vm/run-tests.sh > build/kernels-vm.log 2>&1; vrc=$$?; \
		sed -n "s#^\(PASS\|FAIL\|SKIP\) #\1 $$krel/#p" build/kernels-vm.log; \
		[ $$vrc -eq 0 ] || { echo "FAIL kernels/vm-$$krel (log: build/kernels-vm.log)"; rc=1; }; \
	fi; \
	exit $$rc
