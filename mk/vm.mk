# SPDX-License-Identifier: GPL-2.0 OR MIT
# The kernel module, and the QEMU targets: the module's tests, a shell, the
# VM fuzzer and the soak (vm/run-tests.sh; included by the top Makefile, run
# as NAME-run after deps).

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
# the leak check (vm/tests/4218-soak.sh, docs/robustness.md).
VM_SOAK_SECONDS ?= 1200
vm-soak-run: all
	$(Q)CFS_SOAK_SECONDS=$(VM_SOAK_SECONDS) vm/run-tests.sh --soak
