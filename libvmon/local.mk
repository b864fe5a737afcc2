# libvmon/local.mk: the library, its public headers, the defs tables it is
# generated from, and vmondump (vmon_dump_procs() over the whole system).

lib_LTLIBRARIES += libvmon/libvmon.la

# what libvmon shares with vtop (which links it too) and the tests: util/clock.h, util/hash.h,
# util/intern.h, util/pidmap.h
noinst_LTLIBRARIES += libvmon/util/libvmonutil.la
libvmon_util_libvmonutil_la_SOURCES = libvmon/util/clock.c libvmon/util/clock.h \
	libvmon/util/hash.c libvmon/util/hash.h \
	libvmon/util/pidmap.c libvmon/util/pidmap.h \
	libvmon/util/intern.c libvmon/util/intern.h

# One folder per concern: core/ (the instance, the pass, the tree), sources/
# (where a pass reads tasks from: /proc, the task iterator, a log's replay),
# stores/ (one sampler per want, the parser and field tables), feed/ (the
# event feed and its backends), log/ (the log's codec, writer and reader), util/ (what several concerns use), tools/ (programs).
libvmon_libvmon_la_SOURCES = \
	libvmon/core/internal.h libvmon/core/instance.h libvmon/core/node.h \
	libvmon/core/tree.h libvmon/core/ended.h \
	libvmon/core/vmon.c \
	libvmon/core/tree.c \
	libvmon/core/ended.c \
	libvmon/core/pidfd.c \
	libvmon/core/dump.c \
	libvmon/sources/source.c libvmon/sources/source.h \
	libvmon/sources/procfs.c libvmon/sources/procfs.h libvmon/sources/procfs_source.c \
	libvmon/sources/iter.c libvmon/sources/iter_held.c libvmon/sources/iter_held.h \
	libvmon/sources/log_replay.c \
	libvmon/stores/parse.c libvmon/stores/parse.h \
	libvmon/stores/stores.h \
	libvmon/stores/fields.c \
	libvmon/stores/sys_stat.c \
	libvmon/stores/sys_vm.c \
	libvmon/stores/sys_loadavg.c \
	libvmon/stores/sys_sockets.c \
	libvmon/stores/proc_stat.c \
	libvmon/stores/proc_vm.c \
	libvmon/stores/proc_io.c \
	libvmon/stores/proc_env.c \
	libvmon/stores/proc_sched.c \
	libvmon/stores/proc_rollup.c \
	libvmon/stores/proc_stat_extra.c \
	libvmon/stores/proc_vm_status.c \
	libvmon/stores/proc_follow.c \
	libvmon/stores/proc_files.c \
	libvmon/stores/fobject.c libvmon/stores/fobject.h \
	libvmon/feed/feed.c libvmon/feed/feed.h libvmon/feed/pass.h \
	libvmon/feed/stream.c libvmon/feed/stream.h \
	libvmon/feed/feed_perf.c \
	libvmon/feed/feed_netlink.c \
	libvmon/log/log.h \
	libvmon/log/log_codec.c \
	libvmon/log/log_write.c \
	libvmon/log/log_read.c \
	libvmon/util/buf.c libvmon/util/buf.h \
	libvmon/util/escape.c \
	libvmon/util/host.c libvmon/util/host.h
libvmon_libvmon_la_CFLAGS = $(AM_CFLAGS)
VMON_UTIL_LIBS = libvmon/util/libvmonutil.la
libvmon_libvmon_la_LIBADD = $(VMON_UTIL_LIBS)
libvmon_libvmon_la_LDFLAGS = -version-info $(LIBVMON_LT_VERSION) -export-symbols-regex '^vmon_' $(VMON_LDFLAGS)

# installed as <libvmon/vmon.h>, with the tables it includes beside it
libvmonincludedir = $(includedir)/libvmon
libvmoninclude_HEADERS = libvmon/vmon.h libvmon/vmon_log.h libvmon/bitmap.h libvmon/list.h
libvmondefsdir = $(includedir)/libvmon/defs
libvmondefs_DATA = $(VMON_DEFS)

VMON_DEFS = \
	defs/_begin.def defs/_end.def \
	defs/sys_wants.def defs/proc_wants.def \
	defs/sys_stat.def defs/sys_vm.def defs/sys_loadavg.def defs/sys_sockets.def \
	defs/proc_stat.def defs/proc_vm.def defs/proc_io.def defs/proc_env.def defs/proc_files.def \
	defs/proc_sched.def defs/proc_rollup.def defs/proc_stat_extra.def defs/proc_vm_status.def \
	defs/fobject_types.def defs/fobject_socket.def
EXTRA_DIST += $(VMON_DEFS) libvmon/libvmon.pc.in

pkgconfig_DATA = libvmon/libvmon.pc


noinst_PROGRAMS += libvmon/vmondump
libvmon_vmondump_SOURCES = libvmon/tools/vmondump.c
libvmon_vmondump_LDADD = libvmon/libvmon.la
libvmon_vmondump_LDFLAGS = $(VMON_LDFLAGS)

# make installcheck (and so make distcheck): a client builds against the
# installed tree through pkg-config, both ways of including the header
installcheck-local: installcheck-libvmon
installcheck-libvmon:
	CC='$(CC)' DESTDIR='$(DESTDIR)' $(SHELL) $(srcdir)/libvmon/check-installed.sh '$(pkgconfigdir)' '$(mandir)'
.PHONY: installcheck-libvmon
EXTRA_DIST += libvmon/check-installed.sh
