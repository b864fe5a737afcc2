# bpf/local.mk: the eBPF program of the event feed, compiled with clang
# -target bpf against the running kernel's BTF and embedded in libvmon as a
# skeleton (bpftool gen skeleton): nothing extra is installed.
#
#   bpf/vmlinux.h	every kernel type, from $(VMLINUX_BTF) (bpftool btf dump);
#			CO-RE relocates the program to whatever kernel loads it
#   bpf/feed.bpf.o	the program, debug info stripped (BTF kept)
#   bpf/feed.skel.h	the skeleton libvmon/feed/feed_bpf.c includes
#   bpf/iter.bpf.o, bpf/iter.skel.h
#			the task iterator (libvmon/sources/iter.c), whose record
#			(bpf/iter.h) is generated from the defs/ tables
#
# A build machine without /sys/kernel/btf/vmlinux (no CONFIG_DEBUG_INFO_BTF)
# stops here with a message: point VMLINUX_BTF at a BTF file of any recent
# kernel (make VMLINUX_BTF=/path/to/vmlinux), or configure --disable-bpf.

EXTRA_DIST += bpf/feed.bpf.c bpf/feed.h bpf/iter.bpf.c bpf/iter.h

if HAVE_BPF
VMLINUX_BTF = /sys/kernel/btf/vmlinux
# BPF_TARGET_ARCH (configure): the kernel's name of the architecture, as bpf_tracing.h wants it
BPF_CFLAGS = -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_TARGET_ARCH) -Wall -Wno-unused-function

bpf/vmlinux.h:
	@if test ! -r '$(VMLINUX_BTF)'; then \
		echo "bpf/vmlinux.h: no kernel BTF at $(VMLINUX_BTF) on this build machine;" >&2; \
		echo "  make VMLINUX_BTF=<a vmlinux BTF file>, or configure --disable-bpf" >&2; \
		exit 1; \
	fi
	$(AM_V_GEN)$(MKDIR_P) bpf && $(BPFTOOL) btf dump file '$(VMLINUX_BTF)' format c >$@.tmp && mv $@.tmp $@

bpf/feed.bpf.o: $(srcdir)/bpf/feed.bpf.c $(srcdir)/bpf/feed.h bpf/vmlinux.h
	$(AM_V_GEN)$(BPF_CLANG) $(BPF_CFLAGS) -I$(builddir)/bpf -I$(srcdir)/bpf $(LIBBPF_CFLAGS) \
		-c $(srcdir)/bpf/feed.bpf.c -o $@.tmp && $(LLVM_STRIP) -g $@.tmp && mv $@.tmp $@

bpf/feed.skel.h: bpf/feed.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton bpf/feed.bpf.o name feed_bpf >$@.tmp && mv $@.tmp $@

bpf/iter.bpf.o: $(srcdir)/bpf/iter.bpf.c $(srcdir)/bpf/iter.h bpf/vmlinux.h $(VMON_DEFS:%=$(srcdir)/%)
	$(AM_V_GEN)$(BPF_CLANG) $(BPF_CFLAGS) -I$(builddir)/bpf -I$(srcdir)/bpf -I$(srcdir) $(LIBBPF_CFLAGS) \
		-c $(srcdir)/bpf/iter.bpf.c -o $@.tmp && $(LLVM_STRIP) -g $@.tmp && mv $@.tmp $@

bpf/iter.skel.h: bpf/iter.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton bpf/iter.bpf.o name iter_bpf >$@.tmp && mv $@.tmp $@

BUILT_SOURCES += bpf/feed.skel.h bpf/iter.skel.h
CLEANFILES += bpf/vmlinux.h bpf/vmlinux.h.tmp bpf/feed.bpf.o bpf/feed.bpf.o.tmp bpf/feed.skel.h bpf/feed.skel.h.tmp \
	bpf/iter.bpf.o bpf/iter.bpf.o.tmp bpf/iter.skel.h bpf/iter.skel.h.tmp

libvmon_libvmon_la_SOURCES += libvmon/feed/feed_bpf.c
nodist_libvmon_libvmon_la_SOURCES = bpf/feed.skel.h bpf/iter.skel.h
libvmon_libvmon_la_CPPFLAGS = $(AM_CPPFLAGS) $(LIBBPF_CFLAGS)
libvmon_libvmon_la_LIBADD = $(VMON_UTIL_LIBS) $(LIBBPF_LIBS) $(LIBELF_LIBS) $(ZLIB_LIBS)
else
libvmon_libvmon_la_LIBADD = $(VMON_UTIL_LIBS)
# (set in both branches: one set in a conditional alone is empty in the other, AM_CPPFLAGS left out)
libvmon_libvmon_la_CPPFLAGS = $(AM_CPPFLAGS)
endif
