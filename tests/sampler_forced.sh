#!/bin/sh
# tests/sampler_forced.sh: the core tests again, with each sampling source
# forced through VMON_SAMPLER (vmon_set_sampler(3)): "iter" takes the task
# iterator in explicit monitoring too, "proc" keeps VMON_FLAG_PROC_ALL on
# /proc files (a plain make check as root samples PROC_ALL through the
# iterator).  Where the iterator cannot load (not root), "iter" runs on /proc
# and says so.  Run from the build directory, as make check does.
status=0
for sampler in iter proc; do
	for t in tests/test_tree tests/test_live tests/test_compat tests/test_wants tests/test_sched tests/test_iter; do
		if VMON_SAMPLER=$sampler ./$t >"$t.$sampler.out" 2>&1; then
			echo "PASS: $t with VMON_SAMPLER=$sampler"
		else
			echo "FAIL: $t with VMON_SAMPLER=$sampler"
			cat "$t.$sampler.out"
			status=1
		fi
	done
done
exit $status
