# bpf/local.mk: the eBPF program of the event feed, compiled with clang
# -target bpf against the running kernel's BTF and embedded in libvmon as a
# light skeleton (bpftool gen skeleton -L): nothing extra is installed.
#
# A light skeleton is loaded by a BPF program of its own, in the kernel,
# which does the CO-RE relocations and finds the attach points against the
# kernel's BTF where it already is: libbpf's skeleton parsed all of
# /sys/kernel/btf/vmlinux in the caller instead (5 to 6 MB read, copied and
# indexed for each object, about 9 MB of a start-up's peak RSS).  It needs
# Linux 5.17 (CO-RE relocations in BPF_PROG_LOAD); the backends and the
# /proc source that need no BPF remain for older kernels.  Nor does libvmon
# link libbpf: the generated code makes its own bpf(2) calls, and
# util/light_skel.c the one more the iterator needs (libbpf, libelf and zlib
# were about 0.4 MB of every client's RSS).  libbpf's headers are still
# needed to build: the programs' helpers and the skeleton's loader.
#
#   bpf/vmlinux.h	every kernel type, from $(VMLINUX_BTF) (bpftool btf dump);
#			CO-RE relocates the program to whatever kernel loads it
#   bpf/feed.bpf.o	the program, debug info stripped (BTF kept)
#   bpf/feed.lskel.h	the light skeleton libvmon/feed/feed_bpf.c includes, its
#			loader's blobs moved to a section libvmon gives back
#			after a load (bpf/lskel-sections.awk)
#   bpf/iter.bpf.o, bpf/iter.lskel.h
#			the task iterator (libvmon/sources/iter.c), whose record
#			(bpf/iter.h) is generated from the defs/ tables
#   bpf/iter_compat.bpf.o, bpf/iter_compat.lskel.h
#			the same without the walk of the task list (Linux 6.12),
#			loaded where the first is refused
#
# A build machine without /sys/kernel/btf/vmlinux (no CONFIG_DEBUG_INFO_BTF)
# stops here with a message: point VMLINUX_BTF at a BTF file of any recent
# kernel (make VMLINUX_BTF=/path/to/vmlinux), or configure --disable-bpf.

EXTRA_DIST += bpf/feed.bpf.c bpf/feed.h bpf/iter.bpf.c bpf/iter.h bpf/lskel-sections.awk

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

bpf/feed.lskel.h: bpf/feed.bpf.o $(srcdir)/bpf/lskel-sections.awk
	$(AM_V_GEN)$(BPFTOOL) gen skeleton -L bpf/feed.bpf.o name feed_bpf >$@.raw && \
		$(AWK) -f $(srcdir)/bpf/lskel-sections.awk $@.raw >$@.tmp && rm -f $@.raw && mv $@.tmp $@

bpf/iter.bpf.o: $(srcdir)/bpf/iter.bpf.c $(srcdir)/bpf/iter.h bpf/vmlinux.h $(VMON_DEFS:%=$(srcdir)/%)
	$(AM_V_GEN)$(BPF_CLANG) $(BPF_CFLAGS) -I$(builddir)/bpf -I$(srcdir)/bpf -I$(srcdir) $(LIBBPF_CFLAGS) \
		-c $(srcdir)/bpf/iter.bpf.c -o $@.tmp && $(LLVM_STRIP) -g $@.tmp && mv $@.tmp $@

bpf/iter.lskel.h: bpf/iter.bpf.o $(srcdir)/bpf/lskel-sections.awk
	$(AM_V_GEN)$(BPFTOOL) gen skeleton -L bpf/iter.bpf.o name iter_bpf >$@.raw && \
		$(AWK) -f $(srcdir)/bpf/lskel-sections.awk $@.raw >$@.tmp && rm -f $@.raw && mv $@.tmp $@

# the same program for kernels before Linux 6.12, whose walk says it cannot walk (iter.bpf.c)
bpf/iter_compat.bpf.o: $(srcdir)/bpf/iter.bpf.c $(srcdir)/bpf/iter.h bpf/vmlinux.h $(VMON_DEFS:%=$(srcdir)/%)
	$(AM_V_GEN)$(BPF_CLANG) $(BPF_CFLAGS) -DVMON_ITER_COMPAT -I$(builddir)/bpf -I$(srcdir)/bpf -I$(srcdir) \
		$(LIBBPF_CFLAGS) -c $(srcdir)/bpf/iter.bpf.c -o $@.tmp && $(LLVM_STRIP) -g $@.tmp && mv $@.tmp $@

bpf/iter_compat.lskel.h: bpf/iter_compat.bpf.o $(srcdir)/bpf/lskel-sections.awk
	$(AM_V_GEN)$(BPFTOOL) gen skeleton -L bpf/iter_compat.bpf.o name iter_compat_bpf >$@.raw && \
		$(AWK) -f $(srcdir)/bpf/lskel-sections.awk $@.raw >$@.tmp && rm -f $@.raw && mv $@.tmp $@

BUILT_SOURCES += bpf/feed.lskel.h bpf/iter.lskel.h bpf/iter_compat.lskel.h
CLEANFILES += bpf/vmlinux.h bpf/vmlinux.h.tmp bpf/feed.bpf.o bpf/feed.bpf.o.tmp bpf/feed.lskel.h bpf/feed.lskel.h.tmp \
	bpf/feed.lskel.h.raw bpf/iter.bpf.o bpf/iter.bpf.o.tmp bpf/iter.lskel.h bpf/iter.lskel.h.tmp bpf/iter.lskel.h.raw \
	bpf/iter_compat.bpf.o bpf/iter_compat.bpf.o.tmp bpf/iter_compat.lskel.h bpf/iter_compat.lskel.h.tmp \
	bpf/iter_compat.lskel.h.raw

libvmon_libvmon_la_SOURCES += libvmon/feed/feed_bpf.c libvmon/util/bpf_ring.c libvmon/util/bpf_ring.h \
	libvmon/util/light_skel.c libvmon/util/light_skel.h
nodist_libvmon_libvmon_la_SOURCES = bpf/feed.lskel.h bpf/iter.lskel.h bpf/iter_compat.lskel.h
libvmon_libvmon_la_CPPFLAGS = $(AM_CPPFLAGS) $(LIBBPF_CFLAGS)
else
# (set in both branches: one set in a conditional alone is empty in the other, AM_CPPFLAGS left out)
libvmon_libvmon_la_CPPFLAGS = $(AM_CPPFLAGS)
endif
