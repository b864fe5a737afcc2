# man/local.mk: the manual, vmon_fields(7) generated from the field tables,
# and the check that every page's example compiles and runs.
#
# Conventions for every page (man/check-examples.sh enforces the starred ones):
# - Format: mdoc(7), as in quark and the BSDs.  Date every page with .Dd as
#   VMON_MAN_DATE below; .Os is left empty.  Order of sections (mdoc(7)'s,
#   which mandoc -T lint checks): NAME, LIBRARY, SYNOPSIS, DESCRIPTION,
#   RETURN VALUES, ENVIRONMENT, FILES, EXIT STATUS, EXAMPLES, ERRORS, SEE
#   ALSO (by section, then name), then STANDARDS/HISTORY/CAVEATS/BUGS where
#   they apply.  Text lines of at most 80 bytes.
# - Sections: 3 for library functions, 1 for programs (vtop.1), 5 for file
#   formats (a log stream), 7 for overviews and tables.
# * File naming: man/NAME.SECTION.  Every public function has a page named
#   after it (man/vmon_sample.3).  A page that documents several functions
#   lists them all with .Nm, and every other name gets an alias page of one
#   line, ".so man3/PAGE.3" (man/vmon_init_attr.3).  vmon(3) is the overview.
# * EXAMPLES: every section 3 page has at least one whole program, in a
#   .Bd -literal ... .Ed block right after a marker line:
#	.\" example: run	compiled with the project's warning flags (and
#				-Werror where configured), linked against the
#				built libvmon, run; it must exit 0 within a
#				minute on any machine, as any user, and free
#				everything (sanitizer builds run it under ASan)
#	.\" example: compile	compiled and linked only: for programs that
#				loop forever or need what a test machine lacks
#   Write the code as mdoc literal text: \e for a backslash, \&. for a line
#   that starts with a dot.  README.md marks its examples the same way, with
#   "<!-- example: run -->" on the line before a ```c block.
# * Every page renders through groff -mdoc -ww -z without a warning, passes
#   mandoc -T lint -W style (but for manuals the machine lacks), and renders
#   (groff and mandoc) with no quote opened again before it closes: an
#   enclosure macro (Dq, Sq, Ql, Pq...) runs to the end of its line, so
#   enclose a list with Po ... Pc and one macro a line.
# - Every page lives in man/ (vtop.1 too), so the check finds it.  List it in
#   VMON_MAN_PAGES (or VMON_MAN_ALIASES) below; a page of a program that is
#   built conditionally is listed by that program's local.mk, inside its
#   `if`, as dist_man_MANS += man/vtop.1.
# - vmon_fields(7) is generated at build time by man/vmon-fields-gen.c from
#   vmon_sys_store_descs[] and vmon_proc_store_descs[]: never edit it; a new
#   store needs a paragraph in that program's store_texts[].

VMON_MAN_DATE = November 22, 2026

VMON_MAN_PAGES = \
	man/vmon.3 \
	man/vmon_init.3 \
	man/vmon_destroy.3 \
	man/vmon_sample.3 \
	man/vmon_proc_monitor.3 \
	man/vmon_proc_lookup.3 \
	man/vmon_pidfd_open.3 \
	man/vmon_dump_procs.3 \
	man/vmon_get_stats.3 \
	man/vmon_escape.3 \
	man/vmon_field_format.3 \
	man/vmon_field_compare.3 \
	man/vmon_proc_set_wants.3 \
	man/vmon_proc_files.3 \
	man/vmon_fobject.3 \
	man/vmon_log_writer_open.3 \
	man/vmon_log_open.3 \
	man/vmon_log_replay.3 \
	man/vmon_log.5 \
	man/vmon_feed_get_stats.3 \
	man/vmon_feed_fd.3 \
	man/vmon_feed_set_callback.3 \
	man/vmon_feed_stream.3 \
	man/vmon_feed_lookup.3 \
	man/vmon_set_sampler.3 \
	man/vmon_feed.7
VMON_MAN_ALIASES = \
	man/vmon_init_attr.3 \
	man/vmon_attr_default.3 \
	man/vmon_proc_unmonitor.3 \
	man/vmon_field_present.3 \
	man/vmon_set_proc_wants.3 \
	man/vmon_set_sys_wants.3 \
	man/vmon_fobject_types.3 \
	man/vmon_fobject_socket_desc.3 \
	man/vmon_log_writer_set_keyframe_interval.3 \
	man/vmon_log_write_sample.3 \
	man/vmon_log_write_event.3 \
	man/vmon_log_writer_follow_feed.3 \
	man/vmon_log_write_drop.3 \
	man/vmon_log_write_user.3 \
	man/vmon_log_writer_get_stats.3 \
	man/vmon_log_writer_close.3 \
	man/vmon_log_read.3 \
	man/vmon_log_feed.3 \
	man/vmon_log_seek.3 \
	man/vmon_log_header.3 \
	man/vmon_log_error.3 \
	man/vmon_log_close.3 \
	man/vmon_log_replay_init.3 \
	man/vmon_log_replay_record.3 \
	man/vmon_feed_reason.3 \
	man/vmon_feed_backend_name.3 \
	man/vmon_feed_timeout.3 \
	man/vmon_feed_process.3 \
	man/vmon_feed_next.3 \
	man/vmon_get_sampler.3 \
	man/vmon_sampler_reason.3 \
	man/vmon_sampler_name.3 \
	man/vmon_page_size.3

dist_man_MANS += $(VMON_MAN_PAGES) $(VMON_MAN_ALIASES)
nodist_man_MANS += man/vmon_fields.7

noinst_PROGRAMS += man/vmon-fields-gen
man_vmon_fields_gen_SOURCES = man/vmon-fields-gen.c
man_vmon_fields_gen_LDADD = libvmon/libvmon.la
# a real executable, run from the build tree
man_vmon_fields_gen_LDFLAGS = -no-install $(VMON_LDFLAGS)

man/vmon_fields.7: man/vmon-fields-gen$(EXEEXT)
	$(AM_V_GEN)man/vmon-fields-gen$(EXEEXT) '$(VMON_MAN_DATE)' >$@.tmp && mv $@.tmp $@
CLEANFILES += man/vmon_fields.7 man/vmon_fields.7.tmp

# the examples of every page and of README.md, built and run as a test
TESTS += man/check-examples.sh
EXTRA_DIST += man/check-examples.sh
AM_TESTS_ENVIRONMENT += \
	VMON_EX_CC='$(CC)'; VMON_EX_CPPFLAGS='-I$(top_srcdir)/libvmon -I$(top_srcdir)'; \
	VMON_EX_CFLAGS='$(AM_CFLAGS) $(CFLAGS)'; VMON_EX_LDFLAGS='$(VMON_LDFLAGS) $(LDFLAGS)'; \
	LIBTOOL='$(LIBTOOL)'; export VMON_EX_CC VMON_EX_CPPFLAGS VMON_EX_CFLAGS VMON_EX_LDFLAGS LIBTOOL;

clean-local: clean-man-examples
clean-man-examples:
	-rm -rf man/examples.d
.PHONY: clean-man-examples
