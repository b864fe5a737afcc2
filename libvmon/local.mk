# libvmon/local.mk: the library, its public headers, the defs tables it is
# generated from, and vmondump (vmon_dump_procs() over the whole system).

lib_LTLIBRARIES += libvmon/libvmon.la

libvmon_libvmon_la_SOURCES = \
	libvmon/internal.h \
	libvmon/pidmap.c libvmon/pidmap.h \
	libvmon/vmon.c \
	libvmon/tree.c \
	libvmon/ended.c \
	libvmon/procfs.c \
	libvmon/pidfd.c \
	libvmon/parse.c \
	libvmon/fields.c \
	libvmon/escape.c \
	libvmon/dump.c \
	libvmon/sys_stat.c \
	libvmon/sys_vm.c \
	libvmon/sys_loadavg.c \
	libvmon/proc_stat.c \
	libvmon/proc_vm.c \
	libvmon/proc_io.c \
	libvmon/proc_env.c \
	libvmon/proc_sched.c \
	libvmon/proc_rollup.c \
	libvmon/proc_follow.c \
	libvmon/proc_files.c \
	libvmon/fobject.c libvmon/fobject.h \
	libvmon/sys_sockets.c \
	libvmon/log.h \
	libvmon/log_codec.c \
	libvmon/log_write.c \
	libvmon/log_read.c \
	libvmon/log_replay.c \
	libvmon/feed.c libvmon/feed.h \
	libvmon/feed_perf.c \
	libvmon/feed_netlink.c \
	libvmon/iter.c
libvmon_libvmon_la_CFLAGS = $(AM_CFLAGS)
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
	defs/proc_sched.def defs/proc_rollup.def \
	defs/fobject_types.def defs/fobject_socket.def
EXTRA_DIST += $(VMON_DEFS) libvmon/libvmon.pc.in

pkgconfig_DATA = libvmon/libvmon.pc


noinst_PROGRAMS += libvmon/vmondump
libvmon_vmondump_SOURCES = libvmon/vmondump.c
libvmon_vmondump_LDADD = libvmon/libvmon.la
libvmon_vmondump_LDFLAGS = $(VMON_LDFLAGS)

# make installcheck (and so make distcheck): a client builds against the
# installed tree through pkg-config, both ways of including the header
installcheck-local: installcheck-libvmon
installcheck-libvmon:
	CC='$(CC)' DESTDIR='$(DESTDIR)' $(SHELL) $(srcdir)/libvmon/check-installed.sh '$(pkgconfigdir)' '$(mandir)'
.PHONY: installcheck-libvmon
EXTRA_DIST += libvmon/check-installed.sh
