# SPDX-License-Identifier: GPL-2.0 OR MIT
# bounded.py ERR CMD...: run CMD, its stdout discarded and its stderr into
# ERR, for at most 10 s (BOUNDED_SECONDS: the sanitizer build, some ten
# times slower, gets 60); print its exit status ("timeout" when it ran out)
# and the largest resident size of what it ran, in KiB (tests/lib/common.sh's
# bounded).
import os, resource, subprocess, sys
try:
    rc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL,
                        stderr=open(sys.argv[1], "w"),
                        timeout=int(os.environ.get("BOUNDED_SECONDS", "10"))).returncode
except subprocess.TimeoutExpired:
    rc = "timeout"
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
