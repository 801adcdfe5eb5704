# SPDX-License-Identifier: GPL-2.0 OR MIT
# Benchmarks against composefs 1.0, squashfs and erofs, in QEMU (bench/run.sh,
# docs/bench.md); its part 'scale' runs bench/scale.sh on the host.
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

# cfsctl push of the same Debian image as zstd:chunked against skopeo copy
# --dest-compress-format zstd:chunked, and a pull under a signedBy policy
# against one that accepts anything (bench/push.sh, docs/bench.md); RUNS=
# rounds (default 5).
bench-push-run: all
	$(Q)bench/push.sh $(if $(RUNS),--runs $(RUNS))

# cfsctl mount --fuse against squashfuse_ll and the plain tree, on this
# machine's kernel (bench/fuse.sh, docs/bench.md); RUNS= runs of each (default 5).
bench-fuse-run: all
	$(Q)bench/fuse.sh $(if $(RUNS),--runs $(RUNS))
