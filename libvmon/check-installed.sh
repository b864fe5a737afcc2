#!/bin/sh
# check-installed.sh: what `make install` put in place works for a client.
#
#	check-installed.sh PKGCONFIGDIR MANDIR	(env: CC; DESTDIR when staged)
#
# A program is compiled against the installed tree with the flags of
# `pkg-config --cflags --libs libvmon`, once including <vmon.h> and once
# "libvmon/vmon.h" (the original libvmon's clients do the latter), with
# warnings as errors, then run against the installed libvmon.so.  The man
# pages of every public function must be installed too.  Run by
# `make installcheck` (so by `make distcheck`).
set -eu

pcdir=$1
mandir=$2
CC=${CC:-cc}
DESTDIR=${DESTDIR:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/vmon-installcheck-XXXXXX")
trap 'rm -rf "$work"' EXIT

PKG_CONFIG_PATH="$DESTDIR$pcdir"
export PKG_CONFIG_PATH
if [ -n "$DESTDIR" ]; then
	# the .pc names the final prefix; pkg-config puts DESTDIR in front of its paths
	PKG_CONFIG_SYSROOT_DIR=$DESTDIR
	export PKG_CONFIG_SYSROOT_DIR
fi
cflags=$(pkg-config --cflags libvmon)
libs=$(pkg-config --libs libvmon)
libdir=$DESTDIR$(pkg-config --variable=libdir libvmon)
echo "pkg-config: $cflags $libs"

for include in '<vmon.h>' '"libvmon/vmon.h"'; do
	src=$work/client.c
	name=$(echo "$include" | tr -d '<>"')
	cat >"$src" <<EOF
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include $include

int main(void)
{
	vmon_proc_stat_t *stat;
	vmon_proc_t *self, *child;
	char text[64];
	vmon_t vmon;
	int ok, children = 0;

	if (!vmon_init(&vmon, VMON_FLAG_PROC_ALL, VMON_WANT_SYS_STAT, VMON_WANT_PROC_STAT))
		return 1;
	if (!vmon_sample(&vmon) || !(self = vmon_proc_lookup(&vmon, getpid()))) {
		vmon_destroy(&vmon);
		return 1;
	}
	stat = self->stores[VMON_STORE_PROC_STAT];
	list_for_each_entry(child, &self->children, siblings)
		children++;
	vmon_field_format(&vmon_proc_store_descs[VMON_STORE_PROC_STAT].fields[VMON_PROC_STAT_PID],
			  stat, text, sizeof(text), 0);
	ok = BITTEST(stat->changed, VMON_PROC_STAT_PID) && stat->pid == getpid() &&
	     strcmp(text, "") != 0 && children == 0 && vmon.stores[VMON_STORE_SYS_STAT];
	printf("#include %s: pid %s, %.*s\n", "$name", text, (int)stat->comm.len - 1, stat->comm.array);
	vmon_destroy(&vmon);
	return ok ? 0 : 1;
}
EOF
	# shellcheck disable=SC2086 # pkg-config's output is a list of words
	$CC -std=gnu11 -Wall -Wextra -Werror $cflags -o "$work/client" "$src" $libs
	LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/client"
done

# the log's header, installed beside vmon.h: a sample written to /dev/null
cat >"$work/log.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <libvmon/vmon_log.h>

int main(void)
{
	int fd = open("/dev/null", O_WRONLY);
	vmon_log_writer_t *w;
	vmon_t vmon;

	if (fd < 0 || !vmon_init(&vmon, VMON_FLAG_PROC_ALL, VMON_WANT_SYS_STAT, VMON_WANT_PROC_STAT))
		return 1;
	w = vmon_log_writer_open(fd, &vmon);
	if (!w || !vmon_sample(&vmon) || vmon_log_write_sample(w, &vmon, NULL) < 0 || vmon_log_writer_close(w) < 0)
		return 1;
	vmon_destroy(&vmon);
	close(fd);
	printf("#include <libvmon/vmon_log.h>: a sample written\n");
	return 0;
}
EOF
# shellcheck disable=SC2086 # pkg-config's output is a list of words
$CC -std=gnu11 -Wall -Wextra -Werror $cflags -o "$work/log" "$work/log.c" $libs
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/log"

missing=0
for page in vmon.3 vmon_init.3 vmon_init_attr.3 vmon_attr_default.3 vmon_destroy.3 vmon_sample.3 \
	    vmon_proc_monitor.3 vmon_proc_unmonitor.3 vmon_proc_lookup.3 vmon_dump_procs.3 \
	    vmon_get_stats.3 vmon_escape.3 vmon_field_format.3 vmon_fields.7 \
	    vmon_log.5 vmon_log_open.3 vmon_log_read.3 vmon_log_writer_open.3 vmon_log_replay.3; do
	section=${page##*.}
	if [ ! -f "$DESTDIR$mandir/man$section/$page" ]; then
		echo "not installed: $mandir/man$section/$page"
		missing=1
	fi
done
[ "$missing" -eq 0 ]
echo "the installed libvmon works for a client"
