#!/bin/sh
# header_check.sh: the public headers as their clients compile them.
#
#  - vmon.h and vmon_log.h alone, as strict ISO C99 (-std=c99 -pedantic;
#    vmon_log.h with POSIX's struct timespec) and as C++11 (their extern "C"
#    blocks must be enough), warnings as errors;
#  - a client's own copies of the original libvmon's list.h and bitmap.h
#    (tests/compat/), included after vmon.h as vwm's charts do, and before
#    it: one definition of each name, and the client's list walks and bit
#    tests work on the library's structs.
# Run by make check; VMON_HC_CC and VMON_HC_CXX name the compilers (a missing
# C++ compiler skips that part, saying so).
set -u

srcdir=${srcdir:-.}
CC=${VMON_HC_CC:-cc}
CXX=${VMON_HC_CXX:-c++}
inc="-I$srcdir/libvmon -I$srcdir"
work=$(mktemp -d "${TMPDIR:-/tmp}/vmon-hc.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
failures=0

check() {	# $1: what, $2: the file, rest: compiler and flags
	what=$1 file=$2
	shift 2
	if "$@" -c "$file" -o "$work/out.o" >"$work/log" 2>&1; then
		echo "ok: $what"
	else
		echo "FAIL: $what"
		sed 's/^/    /' "$work/log"
		failures=$((failures + 1))
	fi
}

printf '#include <vmon.h>\nint main(void) { return 0; }\n' >"$work/vmon.c"
check "vmon.h as C99 -pedantic" "$work/vmon.c" \
	$CC -std=c99 -pedantic -Wall -Wextra -Werror $inc
# vmon_log.h speaks of struct timespec: POSIX's, which strict C99 asks for by name
printf '#include <vmon.h>\n#include <vmon_log.h>\nint main(void) { return 0; }\n' >"$work/plain.c"
check "vmon.h, vmon_log.h as C99 -pedantic with _POSIX_C_SOURCE" "$work/plain.c" \
	$CC -std=c99 -pedantic -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror $inc

if command -v "$CXX" >/dev/null 2>&1; then
	cp "$work/plain.c" "$work/plain.cc"
	check "vmon.h, vmon_log.h as C++11" "$work/plain.cc" \
		$CXX -std=c++11 -pedantic -Wall -Wextra -Werror $inc
else
	echo "skip: C++11: no C++ compiler ($CXX)"
fi

# a client's walk over the tree and a changed bit, with its own list.h and bitmap.h
cat >"$work/walk.h" <<'EOC'
static int count_nodes(vmon_proc_t *proc)
{
	vmon_proc_t *child, *tmp;
	struct list_head *pos;
	int n = 1;

	list_for_each(pos, &proc->threads)
		n++;
	list_for_each_entry_safe(child, tmp, &proc->children, siblings)
		n += count_nodes(child);
	return n;
}

int main(void)
{
	vmon_proc_stat_t stat;
	vmon_proc_t *proc;
	vmon_t vmon;
	int n = 0;

	if (!vmon_init(&vmon, VMON_FLAG_PROC_ALL, VMON_WANT_SYS_NONE, VMON_WANT_PROC_STAT))
		return 1;
	list_for_each_entry(proc, &vmon.processes, siblings)
		n += count_nodes(proc);
	memset(&stat, 0, sizeof(stat));
	BITSET(stat.changed, VMON_PROC_STAT_UTIME);
	vmon_destroy(&vmon);
	return n < 0 || !BITTEST(stat.changed, VMON_PROC_STAT_UTIME);
}
EOC
printf '#include <string.h>\n#include "libvmon/vmon.h"\n#include "list.h"\n#include "bitmap.h"\n#include "walk.h"\n' >"$work/after.c"
printf '#include <string.h>\n#include "list.h"\n#include "bitmap.h"\n#include "libvmon/vmon.h"\n#include "walk.h"\n' >"$work/before.c"
cp "$srcdir/tests/compat/list.h" "$srcdir/tests/compat/bitmap.h" "$work/"
check "a client's own list.h and bitmap.h after vmon.h" "$work/after.c" \
	$CC -std=gnu99 -Wall -Wextra -Werror -I"$work" $inc
check "a client's own list.h and bitmap.h before vmon.h" "$work/before.c" \
	$CC -std=gnu99 -Wall -Wextra -Werror -I"$work" $inc

[ "$failures" -eq 0 ] || exit 1
exit 0
