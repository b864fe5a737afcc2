/*
 * test_parse.c: the parsers, through fixture /proc trees: every field of
 * every table read from where its defs/ row says, odd and hostile content
 * (comm with ") (", malformed, overflowing, truncated lines), and the
 * `changed` and `present` bitmaps: a changed bit is set exactly when that
 * datum changed, a present bit exactly when the kernel printed it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#define PID 42

static const vmon_store_desc_t *stat_desc = &vmon_proc_store_descs[VMON_STORE_PROC_STAT];
static const vmon_store_desc_t *extra_desc = &vmon_proc_store_descs[VMON_STORE_PROC_STAT_EXTRA];
static const vmon_store_desc_t *vm_desc = &vmon_proc_store_descs[VMON_STORE_PROC_VM];
static const vmon_store_desc_t *vm_status_desc = &vmon_proc_store_descs[VMON_STORE_PROC_VM_STATUS];
static const vmon_store_desc_t *io_desc = &vmon_proc_store_descs[VMON_STORE_PROC_IO];
static const vmon_store_desc_t *sys_stat_desc = &vmon_sys_store_descs[VMON_STORE_SYS_STAT];
static const vmon_store_desc_t *sys_vm_desc = &vmon_sys_store_descs[VMON_STORE_SYS_VM];

static const int no_bits[] = { -1 };

/* the two stores of the stat line, PROC_STAT and PROC_STAT_EXTRA: their wants, and each store's id */
#define STAT_WANTS	(VMON_WANT_PROC_STAT | VMON_WANT_PROC_STAT_EXTRA)
static const int stat_stores[] = { VMON_STORE_PROC_STAT, VMON_STORE_PROC_STAT_EXTRA };

/* a store's changed bitmap */
static const char *changed_of(vmon_proc_t *p, int id)
{
	return id == VMON_STORE_PROC_STAT ? pstat(p)->changed : pextra(p)->changed;
}

static const char *present_of(vmon_proc_t *p, int id)
{
	return (const char *)p->stores[id] + vmon_proc_store_descs[id].present_offset;
}

/* a root with init and one process, PID, whose stat line the test controls */
static void setup(fixture_t *fx, fixture_stat_t *st)
{
	static const char *const argv[] = { "/usr/bin/prog", "--opt", NULL };

	fixture_init(fx);
	fixture_system(fx);
	fixture_proc(fx, 1, 0, "init", 'S', 5, NULL);
	fixture_proc(fx, PID, 1, NULL, 'S', 500, argv);
	fixture_stat_init(st, PID, 1, "prog", 'S', 500);
}

static void write_stat(fixture_t *fx, const fixture_stat_t *st)
{
	fixture_stat_write(fx, "42/stat", st, FIXTURE_STAT_FIELDS, true);
}

static void start(fixture_t *fx, vmon_t *vmon, vmon_sys_wants_t sys, vmon_proc_wants_t wants)
{
	assert_true(fixture_vmon(fx, vmon, VMON_FLAG_PROC_ALL, sys, wants));
	assert_true(vmon_sample(vmon));
}

static void finish(fixture_t *fx, vmon_t *vmon)
{
	vmon_destroy(vmon);
	fixture_free(fx);
}

/* the value a stat field's text stands for, as field_value() gives it */
static unsigned long long text_value(const vmon_field_t *f, const char *text)
{
	if (f->type == VMON_TYPE_char)
		return (unsigned char)text[0];
	if (f->type == VMON_TYPE_int || f->type == VMON_TYPE_long || f->type == VMON_TYPE_longlong)
		return (unsigned long long)strtoll(text, NULL, 10);
	return strtoull(text, NULL, 10);
}

/* every stat row reads the field its defs/ row names, and only that one */
static void test_stat_every_field(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;
	int rows = 0;

	setup(&fx, &st);
	for (int n = 5; n <= FIXTURE_STAT_FIELDS; n++) {
		if (n != 22)
			fixture_stat_set(&st, n, "%d", 1000 + n);
	}
	fixture_stat_set(&st, 8, "-1");		/* no terminal */
	fixture_stat_set(&st, 18, "-3");	/* a real-time task's priority */
	fixture_stat_set(&st, 19, "-5");	/* nice */
	fixture_stat_set(&st, 25, "18446744073709551615");	/* RLIM_INFINITY */
	write_stat(&fx, &st);
	start(&fx, &vmon, 0, STAT_WANTS);
	p = must_find(&vmon, PID);
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT], 0);
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT_EXTRA], 0);

	for (size_t s = 0; s < sizeof(stat_stores) / sizeof(stat_stores[0]); s++) {
		const vmon_store_desc_t *desc = &vmon_proc_store_descs[stat_stores[s]];
		const void *store = p->stores[stat_stores[s]];

		for (int sym = 0; sym < desc->fields_nr; sym++) {
			const vmon_field_t *f = &desc->fields[sym];

			if (f->source != VMON_SOURCE_POS || strcmp(f->file, "stat") != 0 || f->n < 3)
				continue;
			rows++;
			if (field_value(f, store) != text_value(f, st.f[f->n]))
				fail_msg("%s (field %d) is %llu, the line says %s", f->name, f->n,
					 field_value(f, store), st.f[f->n]);
			if (!BITTEST(present_of(p, stat_stores[s]), sym) || !BITTEST(changed_of(p, stat_stores[s]), sym))
				fail_msg("%s: present and changed must be set by the first sample", f->name);
		}
	}
	assert_true(rows >= 40);
	assert_int_equal(pstat(p)->pid, PID);
	assert_int_equal(pstat(p)->nice, -5);
	assert_int_equal(pstat(p)->priority, -3);
	assert_int_equal(pstat(p)->tpgid, -1);
	finish(&fx, &vmon);
}

/* comm is whatever the task called itself: parentheses, spaces, field-like text, controls */
static void test_stat_comm_adversarial(void **state)
{
	static const char *const comms[] = {
		") (", "a) (b c", "x) R 1 2 3 (", "", "((", "))", " ", "\x1b[2J\n", "a)b) S 9 (",
	};

	for (size_t i = 0; i < sizeof(comms) / sizeof(comms[0]); i++) {
		fixture_t fx;
		fixture_stat_t st;
		vmon_t vmon;
		vmon_proc_t *p;

		setup(&fx, &st);
		snprintf(st.comm, sizeof(st.comm), "%s", comms[i]);
		fixture_stat_set(&st, 3, "R");
		fixture_stat_set(&st, 14, "777");
		write_stat(&fx, &st);
		start(&fx, &vmon, 0, VMON_WANT_PROC_STAT);
		p = must_find(&vmon, PID);
		assert_int_equal(p->errors[VMON_STORE_PROC_STAT], 0);
		assert_string_equal(pstat(p)->comm.array, comms[i]);
		assert_int_equal(pstat(p)->comm.len, strlen(comms[i]) + 1);
		assert_int_equal(pstat(p)->state, 'R');
		assert_int_equal(pstat(p)->ppid, 1);
		assert_int_equal(pstat(p)->start, 500);
		assert_int_equal(pstat(p)->utime, 777);
		assert_ptr_equal(p->parent, must_find(&vmon, 1));
		finish(&fx, &vmon);
	}
}

/* an older kernel prints fewer fields: those it lacks are zero and absent, and that is no error */
static void test_stat_short_line(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;

	setup(&fx, &st);
	fixture_stat_write(&fx, "42/stat", &st, 44, true);
	start(&fx, &vmon, 0, STAT_WANTS);
	p = must_find(&vmon, PID);
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT], 0);
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT_EXTRA], 0);
	assert_int_equal(pstat(p)->cguest_time, 0);
	assert_true(BITTEST(pstat(p)->present, VMON_PROC_STAT_CGUEST_TIME));
	assert_int_equal(pextra(p)->start_data, 0);
	assert_false(BITTEST(pextra(p)->present, VMON_PROC_STAT_EXTRA_START_DATA));
	assert_true(BITTEST(pextra(p)->present, VMON_PROC_STAT_EXTRA_POLICY));
	assert_false(BITTEST(pstat(p)->present, VMON_PROC_STAT_EXIT_CODE));

	/* the kernel is upgraded under us (a fixture can): the fields appear, changed */
	write_stat(&fx, &st);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pextra(p)->start_data, 6291456);
	assert_true(BITTEST(pextra(p)->present, VMON_PROC_STAT_EXTRA_START_DATA));
	assert_true(BITTEST(pextra(p)->changed, VMON_PROC_STAT_EXTRA_START_DATA));
	assert_true(BITTEST(pstat(p)->present, VMON_PROC_STAT_EXIT_CODE));
	finish(&fx, &vmon);
}

/*
 * A line cut short (no newline: the kernel ends every line with one) is an
 * error, and the field it was cut in is not taken: 1234 cut to 12 would be
 * a wrong value, not a value.
 */
static void test_stat_truncated(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;

	setup(&fx, &st);
	fixture_stat_set(&st, 30, "987654");
	fixture_stat_write(&fx, "42/stat", &st, 30, false);
	/* cut within field 30 */
	fixture_printf(&fx, "42/stat.cut", "%s", "");
	{
		char line[4096];
		FILE *f;
		size_t n;
		char path[512];

		snprintf(path, sizeof(path), "%s/42/stat", fx.root);
		f = fopen(path, "r");
		assert_non_null(f);
		n = fread(line, 1, sizeof(line), f);
		fclose(f);
		assert_true(n > 3);
		fixture_write(&fx, "42/stat", line, n - 3);	/* "987" of "987654" */
	}
	start(&fx, &vmon, 0, STAT_WANTS);
	p = must_find(&vmon, PID);
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT], EPROTO);
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT_EXTRA], EPROTO);
	assert_int_equal(pstat(p)->start, 500);
	assert_int_equal(pstat(p)->utime, 7);
	assert_true(BITTEST(pstat(p)->present, VMON_PROC_STAT_RSS));
	assert_true(BITTEST(pextra(p)->present, VMON_PROC_STAT_EXTRA_STARTSTACK));
	/* field 30 is not in the tables; field 31 (signal) is, after the cut */
	assert_false(BITTEST(pextra(p)->present, VMON_PROC_STAT_EXTRA_SIGNAL));
	assert_int_equal(pextra(p)->signal, 0);
	assert_false(BITTEST(pstat(p)->present, VMON_PROC_STAT_PROCESSOR));

	/* cut within a field we keep: startstack (28), 140730000000000 cut to 1407 */
	fixture_stat_write(&fx, "42/stat", &st, 27, true);
	{
		char line[4096];
		int n = snprintf(line, sizeof(line), "42 (prog) S 1 42 42 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 1 0 500 "
				 "10485760 300 18446744073709551615 4194304 4198400 1407");

		fixture_write(&fx, "42/stat", line, (size_t)n);
	}
	assert_true(vmon_sample(&vmon));
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT], EPROTO);
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT_EXTRA], EPROTO);
	assert_int_equal(pextra(p)->endcode, 4198400);
	assert_int_equal(pextra(p)->startstack, 0);
	assert_false(BITTEST(pextra(p)->present, VMON_PROC_STAT_EXTRA_STARTSTACK));
	assert_true(BITTEST(pextra(p)->changed, VMON_PROC_STAT_EXTRA_STARTSTACK));

	/* whole again: no error, the values back */
	write_stat(&fx, &st);
	fixture_ran(&fx, PID);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT], 0);
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT_EXTRA], 0);
	assert_int_equal(pextra(p)->startstack, 140730000000000ULL);
	assert_true(BITTEST(pextra(p)->present, VMON_PROC_STAT_EXTRA_STARTSTACK));
	finish(&fx, &vmon);
}

/* a stat line too short to say who the process is: an error on the process, the pass goes on */
static void test_stat_unusable(void **state)
{
	static const char *const lines[] = {
		"42 (prog) S 1 42 42 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 1 0",	/* no start time */
		"42 prog S 1 42 42 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 1 0 500 0\n",	/* no parentheses */
		"42 (prog S 1 42 42 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 1 0 500 0\n",	/* no ')' */
		"42 (prog)",
		"",
		"42 (prog) S x 42 42 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 1 0 500 0\n",	/* ppid not a number */
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		fixture_t fx;
		fixture_stat_t st;
		vmon_t vmon;
		vmon_proc_t *p;

		setup(&fx, &st);
		fixture_write(&fx, "42/stat", lines[i], strlen(lines[i]));
		start(&fx, &vmon, 0, VMON_WANT_PROC_STAT | VMON_WANT_PROC_VM);
		p = vmon_proc_lookup(&vmon, PID);
		assert_non_null(p);
		if (p->errors[VMON_STORE_PROC_STAT] != EPROTO)
			fail_msg("line %zu: errors[PROC_STAT] is %d, not EPROTO", i, p->errors[VMON_STORE_PROC_STAT]);
		/* nothing made up: no field claims to be known */
		for (int sym = 0; sym < stat_desc->fields_nr; sym++) {
			if (BITTEST(pstat(p)->present, sym))
				fail_msg("line %zu: %s is present", i, stat_desc->fields[sym].name);
		}
		/* init is unaffected */
		assert_int_equal(must_find(&vmon, 1)->errors[VMON_STORE_PROC_STAT], 0);
		finish(&fx, &vmon);
	}
}

/* numbers are checked whole: junk, overflow and out-of-range values are errors of their store, not values */
static void test_stat_bad_numbers(void **state)
{
	static const struct {
		int		field;
		const char	*text;
		int		store, sym;
	} cases[] = {
		{ 14, "12x", VMON_STORE_PROC_STAT, VMON_PROC_STAT_UTIME },
		{ 14, "18446744073709551616", VMON_STORE_PROC_STAT, VMON_PROC_STAT_UTIME },	/* 2^64 */
		{ 14, "-7", VMON_STORE_PROC_STAT, VMON_PROC_STAT_UTIME },			/* unsigned */
		{ 38, "4294967313", VMON_STORE_PROC_STAT_EXTRA, VMON_PROC_STAT_EXTRA_EXITSIGNAL },	/* int */
		{ 40, "4294967296", VMON_STORE_PROC_STAT_EXTRA, VMON_PROC_STAT_EXTRA_RT_PRIORITY },	/* unsigned int */
		{ 19, "--5", VMON_STORE_PROC_STAT, VMON_PROC_STAT_NICE },
		{ 19, "9223372036854775808", VMON_STORE_PROC_STAT, VMON_PROC_STAT_NICE },	/* long long */
		{ 24, "0x10", VMON_STORE_PROC_STAT, VMON_PROC_STAT_RSS },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int bad = cases[i].store, good = bad == VMON_STORE_PROC_STAT ? VMON_STORE_PROC_STAT_EXTRA :
									       VMON_STORE_PROC_STAT;
		const vmon_field_t *f = &vmon_proc_store_descs[bad].fields[cases[i].sym];
		fixture_t fx;
		fixture_stat_t st;
		vmon_t vmon;
		vmon_proc_t *p;

		setup(&fx, &st);
		fixture_stat_set(&st, cases[i].field, "%s", cases[i].text);
		write_stat(&fx, &st);
		start(&fx, &vmon, 0, STAT_WANTS);
		p = must_find(&vmon, PID);
		if (p->errors[bad] != EPROTO || BITTEST(present_of(p, bad), cases[i].sym) ||
		    field_value(f, p->stores[bad]) != 0)
			fail_msg("%s \"%s\": error %d, present %d, value %llu", f->name, cases[i].text,
				 p->errors[bad], !!BITTEST(present_of(p, bad), cases[i].sym),
				 field_value(f, p->stores[bad]));
		/* the other fields are read, and the other store has no error */
		if (p->errors[good] || pstat(p)->stime != 3 || pextra(p)->start_data != 6291456)
			fail_msg("%s \"%s\": error of the other store %d, stime %llu, start_data %llu", f->name,
				 cases[i].text, p->errors[good], pstat(p)->stime, pextra(p)->start_data);
		finish(&fx, &vmon);
	}
}

/* every stat field: change it alone, and only its changed bit is set */
static void test_stat_changed_exactly(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;

	setup(&fx, &st);
	write_stat(&fx, &st);
	start(&fx, &vmon, 0, STAT_WANTS);
	p = must_find(&vmon, PID);

	assert_true(vmon_sample(&vmon));
	assert_bits_exactly(pstat(p)->changed, stat_desc, no_bits, "changed, nothing changed:");
	assert_bits_exactly(pextra(p)->changed, extra_desc, no_bits, "changed, nothing changed:");
	assert_int_equal(p->activity, 0);

	for (size_t s = 0; s < sizeof(stat_stores) / sizeof(stat_stores[0]); s++) {
		int id = stat_stores[s], other = stat_stores[!s];
		const vmon_store_desc_t *desc = &vmon_proc_store_descs[id];

		for (int sym = 0; sym < desc->fields_nr; sym++) {
			const vmon_field_t *f = &desc->fields[sym];
			char saved[48];
			int want[] = { sym, -1 };

			/* field 22 is the identity: changing it is another process (test_fixtures) */
			if (f->source != VMON_SOURCE_POS || strcmp(f->file, "stat") != 0 || f->n < 3 || f->n == 22)
				continue;
			snprintf(saved, sizeof(saved), "%s", st.f[f->n]);
			fixture_stat_set(&st, f->n, "%s", f->n == 3 ? "D" : "12345");
			write_stat(&fx, &st);
			assert_true(vmon_sample(&vmon));
			assert_int_equal(p->errors[id], 0);
			assert_bits_exactly(changed_of(p, id), desc, want, f->name);
			assert_bits_exactly(changed_of(p, other), &vmon_proc_store_descs[other], no_bits, f->name);
			assert_int_equal(p->activity, 1L << id);
			/* and back: the same bit again, then nothing */
			snprintf(st.f[f->n], sizeof(st.f[f->n]), "%s", saved);
			write_stat(&fx, &st);
			assert_true(vmon_sample(&vmon));
			assert_bits_exactly(changed_of(p, id), desc, want, f->name);
			assert_true(vmon_sample(&vmon));
			assert_bits_exactly(changed_of(p, id), desc, no_bits, f->name);
			assert_int_equal(p->activity, 0);
		}
	}

	/* comm */
	snprintf(st.comm, sizeof(st.comm), "renamed");
	write_stat(&fx, &st);
	assert_true(vmon_sample(&vmon));
	assert_bits_exactly(pstat(p)->changed, stat_desc, (const int[]){ VMON_PROC_STAT_COMM, -1 }, "comm");
	assert_string_equal(pstat(p)->comm.array, "renamed");

	/* wchan moves only for a task that ran */
	fixture_printf(&fx, "42/wchan", "%s", "pipe_read");
	fixture_ran(&fx, PID);
	assert_true(vmon_sample(&vmon));
	assert_bits_exactly(pstat(p)->changed, stat_desc, (const int[]){ VMON_PROC_STAT_WCHAN, -1 }, "wchan");
	assert_string_equal(pstat(p)->wchan.array, "pipe_read");
	finish(&fx, &vmon);
}

/*
 * cmdline and exe are read when a process is new and after it execs (the
 * stat line shows new code addresses): then cmdline, argv and argc change
 * together.  The addresses that betrayed the exec are PROC_STAT_EXTRA's,
 * which this client does not want: the node tells the exec all the same.
 */
static void test_exec_rereads_cmdline(void **state)
{
	static const char cmdline[] = "/bin/other\0a\0b\0c";
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;

	setup(&fx, &st);
	write_stat(&fx, &st);
	start(&fx, &vmon, 0, VMON_WANT_PROC_STAT);
	p = must_find(&vmon, PID);
	assert_int_equal(pstat(p)->argc, 2);
	assert_string_equal(pstat(p)->exe.array, "/usr/bin/prog");

	fixture_write(&fx, "42/cmdline", cmdline, sizeof(cmdline));
	fixture_symlink(&fx, "42/exe", "/bin/other");
	snprintf(st.comm, sizeof(st.comm), "other");
	fixture_stat_set(&st, 26, "5000000");
	fixture_stat_set(&st, 27, "5004096");
	write_stat(&fx, &st);
	assert_true(vmon_sample(&vmon));
	assert_bits_exactly(pstat(p)->changed, stat_desc, (const int[]){
		VMON_PROC_STAT_COMM, VMON_PROC_STAT_CMDLINE, VMON_PROC_STAT_ARGC, VMON_PROC_STAT_ARGV,
		VMON_PROC_STAT_EXE, -1 }, "exec");
	assert_int_equal(pstat(p)->argc, 4);
	assert_string_equal(pstat(p)->argv[0], "/bin/other");
	assert_string_equal(pstat(p)->argv[3], "c");
	assert_null(pstat(p)->argv[4]);
	assert_int_equal(pstat(p)->cmdline.len, sizeof(cmdline));
	assert_string_equal(pstat(p)->exe.array, "/bin/other");

	/* an exec that keeps argc: argv changes, argc does not */
	fixture_write(&fx, "42/cmdline", "/bin/other\0x\0y\0z", sizeof(cmdline));
	fixture_stat_set(&st, 28, "140730000004096");
	write_stat(&fx, &st);
	assert_true(vmon_sample(&vmon));
	assert_bits_exactly(pstat(p)->changed, stat_desc, (const int[]){
		VMON_PROC_STAT_CMDLINE, VMON_PROC_STAT_ARGV, -1 }, "exec, same argc");
	assert_string_equal(pstat(p)->argv[1], "x");
	finish(&fx, &vmon);
}

/* empty, huge, unterminated and empty-argument command lines */
static void test_cmdlines(void **state)
{
	static const struct {
		const char	*text;
		size_t		len;
		int		argc;
		const char	*argv[4];
	} cases[] = {
		{ "", 0, 0, { NULL } },
		{ "a\0\0b", 5, 3, { "a", "", "b", NULL } },
		{ "set proc title", 14, 1, { "set proc title", NULL } },	/* setproctitle(): no NUL */
		{ "x\0y", 3, 2, { "x", "y", NULL } },
		{ "\0", 1, 1, { "", NULL } },
	};
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;
	size_t big_len = 100 * 1024, args = 0;
	char *big = malloc(big_len);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setup(&fx, &st);
		fixture_write(&fx, "42/cmdline", cases[i].text, cases[i].len);
		start(&fx, &vmon, 0, VMON_WANT_PROC_STAT);
		p = must_find(&vmon, PID);
		assert_int_equal(p->errors[VMON_STORE_PROC_STAT], 0);
		assert_int_equal(pstat(p)->cmdline.len, cases[i].len);
		assert_memory_equal(pstat(p)->cmdline.array, cases[i].text, cases[i].len);
		assert_int_equal(pstat(p)->cmdline.array[cases[i].len], '\0');
		assert_int_equal(pstat(p)->argc, cases[i].argc);
		for (int a = 0; a < cases[i].argc; a++)
			assert_string_equal(pstat(p)->argv[a], cases[i].argv[a]);
		assert_null(pstat(p)->argv[cases[i].argc]);
		assert_true(BITTEST(pstat(p)->present, VMON_PROC_STAT_CMDLINE));
		finish(&fx, &vmon);
	}

	/* 100 KiB: arguments "0000000" "0000001" ... each 8 bytes with its NUL */
	assert_non_null(big);
	for (size_t off = 0; off + 8 <= big_len; off += 8, args++)
		snprintf(big + off, 8, "%07zu", args), big[off + 7] = '\0';
	setup(&fx, &st);
	fixture_write(&fx, "42/cmdline", big, args * 8);
	start(&fx, &vmon, 0, VMON_WANT_PROC_STAT);
	p = must_find(&vmon, PID);
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT], 0);
	assert_int_equal(pstat(p)->cmdline.len, args * 8);
	assert_int_equal(pstat(p)->argc, args);
	for (size_t a = 0; a < args; a++) {
		char want[8];

		snprintf(want, sizeof(want), "%07zu", a);
		assert_string_equal(pstat(p)->argv[a], want);
	}
	assert_null(pstat(p)->argv[args]);
	finish(&fx, &vmon);
	free(big);
}

/* exe: a long target, and none at all (a kernel thread, a zombie): empty and absent */
static void test_exe(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;
	char target[3001];

	memset(target, 'd', sizeof(target) - 1);
	for (size_t i = 0; i < sizeof(target) - 1; i += 100)
		target[i] = '/';
	target[sizeof(target) - 1] = '\0';
	setup(&fx, &st);
	fixture_symlink(&fx, "42/exe", target);
	start(&fx, &vmon, 0, VMON_WANT_PROC_STAT);
	p = must_find(&vmon, PID);
	assert_string_equal(pstat(p)->exe.array, target);
	assert_int_equal(pstat(p)->exe.len, strlen(target));
	finish(&fx, &vmon);

	setup(&fx, &st);
	fixture_remove(&fx, "42/exe");
	start(&fx, &vmon, 0, VMON_WANT_PROC_STAT);
	p = must_find(&vmon, PID);
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT], 0);
	assert_int_equal(pstat(p)->exe.len, 0);
	assert_string_equal(pstat(p)->exe.array, "");
	assert_false(BITTEST(pstat(p)->present, VMON_PROC_STAT_EXE));
	finish(&fx, &vmon);

	/*
	 * A failure other than a refusal (EACCES, EPERM: test_live's
	 * test_eacces, as another user) is an error of the store, and exe
	 * is absent, not its old path; here exe is no symlink (EINVAL).
	 */
	setup(&fx, &st);
	start(&fx, &vmon, 0, VMON_WANT_PROC_STAT);
	p = must_find(&vmon, PID);
	assert_string_equal(pstat(p)->exe.array, "/usr/bin/prog");
	fixture_remove(&fx, "42/exe");
	fixture_printf(&fx, "42/exe", "not a link");
	snprintf(st.comm, sizeof(st.comm), "other");	/* an exec: exe is read again */
	write_stat(&fx, &st);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT], EINVAL);
	assert_string_equal(pstat(p)->exe.array, "");
	assert_false(BITTEST(pstat(p)->present, VMON_PROC_STAT_EXE));
	assert_true(BITTEST(pstat(p)->changed, VMON_PROC_STAT_EXE));
	finish(&fx, &vmon);
}

/* the fields read from cmdline: the text, and argc and argv built on it */
static const int cmdline_syms[] = { VMON_PROC_STAT_CMDLINE, VMON_PROC_STAT_ARGC, VMON_PROC_STAT_ARGV };

/* a cmdline that cannot be read is an error, and absent with argv: not the old arguments */
static void test_cmdline_unreadable(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;

	setup(&fx, &st);
	start(&fx, &vmon, 0, VMON_WANT_PROC_STAT);
	p = must_find(&vmon, PID);
	assert_int_equal(pstat(p)->argc, 2);

	/* a directory where cmdline was: EISDIR */
	fixture_remove(&fx, "42/cmdline");
	fixture_printf(&fx, "42/cmdline/x", "x");
	snprintf(st.comm, sizeof(st.comm), "other");	/* an exec: cmdline is read again */
	write_stat(&fx, &st);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT], EISDIR);
	assert_int_equal(pstat(p)->cmdline.len, 0);
	assert_int_equal(pstat(p)->argc, 0);
	assert_null(pstat(p)->argv[0]);
	for (size_t i = 0; i < sizeof(cmdline_syms) / sizeof(cmdline_syms[0]); i++) {
		assert_false(BITTEST(pstat(p)->present, cmdline_syms[i]));
		assert_true(BITTEST(pstat(p)->changed, cmdline_syms[i]));
	}
	/* the rest of the store is read as ever */
	assert_string_equal(pstat(p)->comm.array, "other");
	assert_string_equal(pstat(p)->exe.array, "/usr/bin/prog");

	/* still unreadable after another exec: still the error, and no change */
	snprintf(st.comm, sizeof(st.comm), "third");
	write_stat(&fx, &st);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT], EISDIR);
	for (size_t i = 0; i < sizeof(cmdline_syms) / sizeof(cmdline_syms[0]); i++) {
		assert_false(BITTEST(pstat(p)->present, cmdline_syms[i]));
		assert_false(BITTEST(pstat(p)->changed, cmdline_syms[i]));
	}
	finish(&fx, &vmon);
}

/* the ctor of PID takes its stat and cmdline away: it dies while it is read */
static fixture_t *dying_fx;

static void dying_ctor(vmon_t *vmon, vmon_proc_t *proc)
{
	if (proc->pid == PID) {
		fixture_remove(dying_fx, "42/stat");
		fixture_remove(dying_fx, "42/cmdline");
	}
}

/*
 * A process gone while its stat store is read (cmdline: ESRCH) is gone with
 * what was read (new in this sample, stale in the next), even when a later
 * read of the store fails otherwise (wchan, a directory here: EISDIR): the
 * store reports that it is gone.
 */
static void test_gone_wins(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;

	setup(&fx, &st);
	fixture_remove(&fx, "42/wchan");
	fixture_printf(&fx, "42/wchan/x", "x");
	assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, 0, VMON_WANT_PROC_STAT));
	dying_fx = &fx;
	vmon.proc_ctor_cb = dying_ctor;
	assert_true(vmon_sample(&vmon));
	assert_null(vmon_proc_lookup(&vmon, PID));
	p = find_child(&vmon, must_find(&vmon, 1), PID);
	assert_non_null(p);
	assert_true(p->is_new);
	assert_false(p->is_stale);
	assert_int_equal(pstat(p)->state, 'X');
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT], 0);
	assert_string_equal(pstat(p)->comm.array, "prog");
	assert_true(vmon_sample(&vmon));
	assert_ptr_equal(find_child(&vmon, must_find(&vmon, 1), PID), p);
	assert_true(p->is_stale && !p->is_new);
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT], 0);
	finish(&fx, &vmon);
}

/*
 * A process found gone: its stat store's changed bits are that sample's,
 * the state X of its end, not the bits of the sample before, which was
 * its first read (every field changed).  The end's write was the store's
 * only one in that sample, and started nothing over: its parent and start
 * read as changed again.
 */
static void test_gone_changed_bits(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;

	(void)state;
	setup(&fx, &st);
	write_stat(&fx, &st);
	start(&fx, &vmon, 0, VMON_WANT_PROC_STAT);
	p = must_find(&vmon, PID);
	assert_true(BITTEST(pstat(p)->changed, VMON_PROC_STAT_PPID));
	assert_true(BITTEST(pstat(p)->changed, VMON_PROC_STAT_START));

	fixture_remove(&fx, "42");
	assert_true(vmon_sample(&vmon));
	assert_ptr_equal(find_child(&vmon, must_find(&vmon, 1), PID), p);
	assert_true(p->is_stale);
	assert_int_equal(pstat(p)->state, 'X');
	assert_true(BITTEST(pstat(p)->changed, VMON_PROC_STAT_STATE));
	assert_false(BITTEST(pstat(p)->changed, VMON_PROC_STAT_PPID));
	assert_false(BITTEST(pstat(p)->changed, VMON_PROC_STAT_START));
	assert_true(p->activity & VMON_WANT_PROC_STAT);
	finish(&fx, &vmon);
}

/* statm and the memory lines of status */
/*
 * The process ran since the last sample (its schedstat count moved): statm
 * is read again whatever the stat line says.  Without that, a statm change
 * alone is left for its documented bound (test_skip.c tests that rule).
 */
static void ran(fixture_t *fx)
{
	static unsigned count = 100;

	fixture_printf(fx, "42/schedstat", "1000000 2000 %u\n", ++count);
}

static void test_vm(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;

	setup(&fx, &st);
	fixture_printf(&fx, "42/statm", "11 22 33 44 0 66 0\n");
	start(&fx, &vmon, 0, VMON_WANT_PROC_VM | VMON_WANT_PROC_VM_STATUS);
	p = must_find(&vmon, PID);
	assert_int_equal(p->errors[VMON_STORE_PROC_VM], 0);
	assert_int_equal(p->errors[VMON_STORE_PROC_VM_STATUS], 0);
	assert_int_equal(pvm(p)->size_pages, 11);
	assert_int_equal(pvm(p)->resident_pages, 22);
	assert_int_equal(pvm(p)->shared_pages, 33);
	assert_int_equal(pvm(p)->text_pages, 44);
	assert_int_equal(pvm(p)->data_pages, 66);
	assert_int_equal(pvmst(p)->locked_kb, 0);
	assert_int_equal(pvmst(p)->hwm_kb, 1300);
	assert_int_equal(pvmst(p)->rss_anon_kb, 400);
	assert_int_equal(pvmst(p)->rss_file_kb, 800);
	assert_int_equal(pvmst(p)->data_kb, 1600);
	assert_int_equal(pvmst(p)->stack_kb, 132);
	assert_int_equal(pvmst(p)->lib_kb, 1500);
	assert_int_equal(pvmst(p)->pte_kb, 44);
	for (int sym = 0; sym < vm_desc->fields_nr; sym++) {
		if (!BITTEST(pvm(p)->present, sym))
			fail_msg("%s is not present", vm_desc->fields[sym].name);
	}
	for (int sym = 0; sym < vm_status_desc->fields_nr; sym++) {
		if (!BITTEST(pvmst(p)->present, sym))
			fail_msg("%s is not present", vm_status_desc->fields[sym].name);
	}

	/* every statm field alone: its bit, and status is re-read (nothing there changed) */
	assert_true(vmon_sample(&vmon));
	assert_bits_exactly(pvm(p)->changed, vm_desc, no_bits, "changed, nothing changed:");
	for (int n = 1; n <= 7; n++) {
		unsigned long long v[8] = { 0, 11, 22, 33, 44, 0, 66, 0 };
		int sym = -1;

		for (int s = 0; s < vm_desc->fields_nr; s++) {
			if (vm_desc->fields[s].source == VMON_SOURCE_POS && vm_desc->fields[s].n == n)
				sym = s;
		}
		v[n] += 1000;
		fixture_printf(&fx, "42/statm", "%llu %llu %llu %llu %llu %llu %llu\n", v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
		ran(&fx);
		assert_true(vmon_sample(&vmon));
		if (sym < 0) {
			/* lib and dt: always 0 since 2.6 and not in the table */
			assert_bits_exactly(pvm(p)->changed, vm_desc, no_bits, "statm, untabled field");
		} else {
			assert_bits_exactly(pvm(p)->changed, vm_desc, (const int[]){ sym, -1 }, vm_desc->fields[sym].name);
			assert_int_equal(field_value(&vm_desc->fields[sym], pvm(p)), v[n]);
		}
		assert_bits_exactly(pvmst(p)->changed, vm_status_desc, no_bits, "status, as it was");
		fixture_printf(&fx, "42/statm", "11 22 33 44 0 66 0\n");
		ran(&fx);
		assert_true(vmon_sample(&vmon));
	}

	/* a status line that moves with statm: both stores' bits */
	fixture_printf(&fx, "42/status", "Name:\tprog\nVmLck:\t 8 kB\nVmHWM:\t1300 kB\nRssAnon:\t400 kB\n");
	fixture_printf(&fx, "42/statm", "12 22 33 44 0 66 0\n");
	ran(&fx);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pvmst(p)->locked_kb, 8);
	assert_int_equal(pvm(p)->size_pages, 12);
	assert_true(BITTEST(pvmst(p)->changed, VMON_PROC_VM_STATUS_LOCKED_KB));
	assert_true(BITTEST(pvm(p)->changed, VMON_PROC_VM_SIZE_PAGES));
	assert_false(BITTEST(pvmst(p)->changed, VMON_PROC_VM_STATUS_HWM_KB));
	assert_false(BITTEST(pvmst(p)->changed, VMON_PROC_VM_STATUS_RSS_ANON_KB));
	assert_int_equal(p->activity, VMON_WANT_PROC_VM | VMON_WANT_PROC_VM_STATUS);
	/* the lines the new status lacks: zero, absent, changed */
	assert_int_equal(pvmst(p)->rss_file_kb, 0);
	assert_false(BITTEST(pvmst(p)->present, VMON_PROC_VM_STATUS_RSS_FILE_KB));
	assert_true(BITTEST(pvmst(p)->changed, VMON_PROC_VM_STATUS_RSS_FILE_KB));

	/* a status line that moves while statm stays put: not read (the documented bound) until statm moves */
	fixture_printf(&fx, "42/status", "Name:\tprog\nVmLck:\t 16 kB\nVmHWM:\t1300 kB\nRssAnon:\t400 kB\n");
	ran(&fx);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pvmst(p)->locked_kb, 8);
	fixture_printf(&fx, "42/statm", "13 22 33 44 0 66 0\n");
	ran(&fx);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pvmst(p)->locked_kb, 16);
	finish(&fx, &vmon);
}

/*
 * PROC_VM_STATUS without PROC_VM: status is read again when the task ran or
 * its stat line's sizes moved (reclaim takes pages of a sleeper), not
 * otherwise.
 */
static void test_vm_status_alone(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;

	setup(&fx, &st);
	ran(&fx);
	start(&fx, &vmon, 0, VMON_WANT_PROC_VM_STATUS);
	p = must_find(&vmon, PID);
	assert_null(pvm(p));
	assert_int_equal(p->errors[VMON_STORE_PROC_VM_STATUS], 0);
	assert_int_equal(pvmst(p)->hwm_kb, 1300);
	assert_int_equal(pvmst(p)->locked_kb, 0);

	/* the task did not run, its stat line stayed: not read */
	fixture_printf(&fx, "42/status", "Name:\tprog\nVmLck:\t 8 kB\nVmHWM:\t1300 kB\nRssAnon:\t400 kB\n");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pvmst(p)->locked_kb, 0);
	assert_false(p->activity & VMON_WANT_PROC_VM_STATUS);
	/* it ran: read */
	ran(&fx);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pvmst(p)->locked_kb, 8);
	assert_true(BITTEST(pvmst(p)->changed, VMON_PROC_VM_STATUS_LOCKED_KB));
	assert_true(p->activity & VMON_WANT_PROC_VM_STATUS);
	/* its resident set moved in the stat line without a run: read */
	fixture_printf(&fx, "42/status", "Name:\tprog\nVmLck:\t 16 kB\nVmHWM:\t1300 kB\nRssAnon:\t400 kB\n");
	fixture_stat_set(&st, 24, "%llu", strtoull(st.f[24], NULL, 10) + 1);
	write_stat(&fx, &st);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(pvmst(p)->locked_kb, 16);
	finish(&fx, &vmon);
}

static void test_vm_malformed(void **state)
{
	static const struct {
		const char	*statm;
		int		bad_sym;	/* -1: every field absent */
	} cases[] = {
		{ "2560 3x0 200 2 0 400 0\n", VMON_PROC_VM_RESIDENT_PAGES },
		{ "2560 300 -200 2 0 400 0\n", VMON_PROC_VM_SHARED_PAGES },
		{ "2560 300 200 2 0 40", VMON_PROC_VM_DATA_PAGES },	/* cut */
		{ "", -1 },
		{ "\n", -1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fixture_t fx;
		fixture_stat_t st;
		vmon_t vmon;
		vmon_proc_t *p;

		setup(&fx, &st);
		fixture_write(&fx, "42/statm", cases[i].statm, strlen(cases[i].statm));
		start(&fx, &vmon, 0, VMON_WANT_PROC_VM);
		p = must_find(&vmon, PID);
		if (p->errors[VMON_STORE_PROC_VM] != EPROTO)
			fail_msg("statm \"%s\": errors[PROC_VM] %d, not EPROTO", cases[i].statm, p->errors[VMON_STORE_PROC_VM]);
		if (cases[i].bad_sym >= 0) {
			const vmon_field_t *f = &vm_desc->fields[cases[i].bad_sym];

			assert_false(BITTEST(pvm(p)->present, cases[i].bad_sym));
			assert_int_equal(field_value(f, pvm(p)), 0);
			assert_true(BITTEST(pvm(p)->present, VMON_PROC_VM_SIZE_PAGES));
			assert_int_equal(pvm(p)->size_pages, 2560);
		} else {
			assert_false(BITTEST(pvm(p)->present, VMON_PROC_VM_SIZE_PAGES));
			assert_int_equal(pvm(p)->size_pages, 0);
		}
		/* the process itself is fine */
		assert_int_equal(p->errors[VMON_STORE_PROC_STAT], 0);
		assert_false(p->is_stale);
		finish(&fx, &vmon);
	}
}

static void test_io(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;
	static const char *const keys[] = {
		"rchar", "wchar", "syscr", "syscw", "read_bytes", "write_bytes", "cancelled_write_bytes",
	};
	unsigned long long v[7] = { 1000, 2000, 10, 20, 4096, 8192, 0 };

	setup(&fx, &st);
	start(&fx, &vmon, 0, VMON_WANT_PROC_IO);
	p = must_find(&vmon, PID);
	assert_int_equal(p->errors[VMON_STORE_PROC_IO], 0);
	assert_int_equal(pio(p)->rchars, 1000);
	assert_int_equal(pio(p)->wchars, 2000);
	assert_int_equal(pio(p)->syscr, 10);
	assert_int_equal(pio(p)->syscw, 20);
	assert_int_equal(pio(p)->read_bytes, 4096);
	assert_int_equal(pio(p)->write_bytes, 8192);
	assert_int_equal(pio(p)->cancelled_write_bytes, 0);

	/* each key alone: its bit only (the task ran, or io is not read again) */
	for (int k = 0; k < 7; k++) {
		char text[512];
		size_t len = 0;
		int sym = -1;

		for (int s = 0; s < io_desc->fields_nr; s++) {
			if (strcmp(io_desc->fields[s].key, keys[k]) == 0)
				sym = s;
		}
		assert_true(sym >= 0);
		v[k] += 77;
		for (int j = 0; j < 7; j++)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s: %llu\n", keys[j], v[j]);
		fixture_write(&fx, "42/io", text, len);
		fixture_ran(&fx, PID);
		assert_true(vmon_sample(&vmon));
		assert_bits_exactly(pio(p)->changed, io_desc, (const int[]){ sym, -1 }, keys[k]);
		assert_int_equal(field_value(&io_desc->fields[sym], pio(p)), v[k]);
		assert_int_equal(p->activity, VMON_WANT_PROC_IO);
	}

	/* an older kernel without cancelled_write_bytes: absent, and no error */
	fixture_printf(&fx, "42/io", "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 6\n");
	fixture_ran(&fx, PID);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(p->errors[VMON_STORE_PROC_IO], 0);
	assert_false(BITTEST(pio(p)->present, VMON_PROC_IO_CANCELLED_WRITEBYTES));
	assert_true(BITTEST(pio(p)->present, VMON_PROC_IO_WRITEBYTES));

	/* malformed: the bad value is absent, the rest read, the error recorded */
	fixture_printf(&fx, "42/io", "rchar: 1\nwchar: lots\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 6\n"
		       "cancelled_write_bytes: 7\n");
	fixture_ran(&fx, PID);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(p->errors[VMON_STORE_PROC_IO], EPROTO);
	assert_false(BITTEST(pio(p)->present, VMON_PROC_IO_WCHAR));
	assert_int_equal(pio(p)->wchars, 0);
	assert_int_equal(pio(p)->cancelled_write_bytes, 7);

	/* cut in the middle of a value */
	fixture_printf(&fx, "42/io", "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 6\n"
		       "cancelled_write_bytes: 12");
	fixture_ran(&fx, PID);
	assert_true(vmon_sample(&vmon));
	assert_int_equal(p->errors[VMON_STORE_PROC_IO], EPROTO);
	assert_false(BITTEST(pio(p)->present, VMON_PROC_IO_CANCELLED_WRITEBYTES));
	assert_int_equal(pio(p)->cancelled_write_bytes, 0);
	assert_int_equal(pio(p)->write_bytes, 6);
	finish(&fx, &vmon);
}

/*
 * A file the kernel does not have (io without CONFIG_TASK_IO_ACCOUNTING,
 * wchan without CONFIG_KALLSYMS) is an error on that store, not a sign the
 * process died: it stays, with its other data.
 */
static void test_missing_file_is_not_death(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_proc_t *p;

	setup(&fx, &st);
	fixture_remove(&fx, "42/io");
	fixture_remove(&fx, "1/io");
	start(&fx, &vmon, 0, VMON_WANT_PROC_STAT | VMON_WANT_PROC_IO);
	p = must_find(&vmon, PID);
	assert_false(p->is_stale);
	assert_int_equal(p->errors[VMON_STORE_PROC_IO], ENOENT);
	assert_int_equal(p->errors[VMON_STORE_PROC_STAT], 0);
	assert_int_equal(pstat(p)->utime, 7);
	assert_true(vmon_sample(&vmon));
	assert_ptr_equal(must_find(&vmon, PID), p);
	assert_false(p->is_stale);
	finish(&fx, &vmon);
}

static void test_meminfo(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_sys_vm_t *vm;

	setup(&fx, &st);
	start(&fx, &vmon, VMON_WANT_SYS_VM, 0);
	vm = vmon.stores[VMON_STORE_SYS_VM];
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_VM], 0);
	assert_int_equal(vm->total_kb, 16000000);
	assert_int_equal(vm->free_kb, 8000000);
	assert_int_equal(vm->buffers_kb, 100000);
	assert_int_equal(vm->cached_kb, 2000000);
	assert_int_equal(vm->swap_total_kb, 1000000);
	/* a key this kernel does not print: zero, absent, and no error */
	assert_int_equal(vm->mlocked_kb, 0);
	assert_false(BITTEST(vm->present, VMON_SYS_VM_MLOCKED_KB));
	assert_bits_exactly(vm->present, sys_vm_desc, (const int[]){
		VMON_SYS_VM_TOTAL_KB, VMON_SYS_VM_FREE_KB, VMON_SYS_VM_AVAILABLE_KB, VMON_SYS_VM_BUFFERS_KB,
		VMON_SYS_VM_CACHED_KB, VMON_SYS_VM_SWAP_TOTAL_KB, VMON_SYS_VM_SWAP_FREE_KB, -1 }, "present");
	assert_bits_exactly(vm->changed, sys_vm_desc, (const int[]){
		VMON_SYS_VM_TOTAL_KB, VMON_SYS_VM_FREE_KB, VMON_SYS_VM_AVAILABLE_KB, VMON_SYS_VM_BUFFERS_KB,
		VMON_SYS_VM_CACHED_KB, VMON_SYS_VM_SWAP_TOTAL_KB, VMON_SYS_VM_SWAP_FREE_KB, -1 }, "changed");
	assert_true(vmon.activity & VMON_WANT_SYS_VM);

	/* every key of the table in a real order, then each alone changed */
	{
		char text[8192];
		size_t len = 0;

		for (int sym = 0; sym < sys_vm_desc->fields_nr; sym++)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s:%*s%d kB\n",
						sys_vm_desc->fields[sym].key, 8, "", 1000 + sym);
		len += (size_t)snprintf(text + len, sizeof(text) - len, "SomeNewKey:  5 kB\n");
		fixture_write(&fx, "meminfo", text, len);
		assert_true(vmon_sample(&vmon));
		assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_VM], 0);
		for (int sym = 0; sym < sys_vm_desc->fields_nr; sym++) {
			const vmon_field_t *f = &sys_vm_desc->fields[sym];

			if (field_value(f, vm) != (unsigned long long)(1000 + sym) || !BITTEST(vm->present, sym))
				fail_msg("%s is %llu", f->key, field_value(f, vm));
		}
		assert_true(vmon_sample(&vmon));
		assert_bits_exactly(vm->changed, sys_vm_desc, no_bits, "changed, nothing changed:");
		assert_false(vmon.activity & VMON_WANT_SYS_VM);
		for (int sym = 0; sym < sys_vm_desc->fields_nr; sym += 5) {
			len = 0;
			for (int s = 0; s < sys_vm_desc->fields_nr; s++)
				len += (size_t)snprintf(text + len, sizeof(text) - len, "%s: %d kB\n",
							sys_vm_desc->fields[s].key, 1000 + s + (s == sym));
			fixture_write(&fx, "meminfo", text, len);
			assert_true(vmon_sample(&vmon));
			assert_bits_exactly(vm->changed, sys_vm_desc, (const int[]){ sym, -1 }, sys_vm_desc->fields[sym].key);
			fixture_write(&fx, "meminfo", text, 0);
			len = 0;
			for (int s = 0; s < sys_vm_desc->fields_nr; s++)
				len += (size_t)snprintf(text + len, sizeof(text) - len, "%s: %d kB\n",
							sys_vm_desc->fields[s].key, 1000 + s);
			fixture_write(&fx, "meminfo", text, len);
			assert_true(vmon_sample(&vmon));
		}
	}

	/* a key that goes away: zero, absent, changed */
	fixture_printf(&fx, "meminfo", "MemTotal: 5 kB\nMemFree: 4 kB\n");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vm->available_kb, 0);
	assert_false(BITTEST(vm->present, VMON_SYS_VM_AVAILABLE_KB));
	assert_true(BITTEST(vm->changed, VMON_SYS_VM_AVAILABLE_KB));
	assert_int_equal(vm->free_kb, 4);
	finish(&fx, &vmon);
}

static void test_meminfo_malformed(void **state)
{
	static const struct {
		const char	*text;
		int		bad_sym;
	} cases[] = {
		{ "MemTotal: 100 kB\nMemFree: abc kB\nCached: 7 kB\n", VMON_SYS_VM_FREE_KB },
		{ "MemTotal: 100 kB\nMemFree:\nCached: 7 kB\n", VMON_SYS_VM_FREE_KB },
		{ "MemTotal: 100 kB\nCached: 7 kB\nMemFree: 12", VMON_SYS_VM_FREE_KB },	/* cut */
		{ "MemTotal: 100 kB\nMemFree: 99999999999999999999999 kB\nCached: 7 kB\n", VMON_SYS_VM_FREE_KB },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fixture_t fx;
		fixture_stat_t st;
		vmon_t vmon;
		vmon_sys_vm_t *vm;

		setup(&fx, &st);
		fixture_write(&fx, "meminfo", cases[i].text, strlen(cases[i].text));
		assert_true(fixture_vmon(&fx, &vmon, VMON_FLAG_PROC_ALL, VMON_WANT_SYS_VM | VMON_WANT_SYS_STAT,
					 VMON_WANT_PROC_STAT));
		/* a bad system file fails its store, not the sample */
		assert_true(vmon_sample(&vmon));
		vm = vmon.stores[VMON_STORE_SYS_VM];
		if (vmon.sys_errors[VMON_STORE_SYS_VM] != EPROTO)
			fail_msg("case %zu: sys_errors[SYS_VM] %d, not EPROTO", i, vmon.sys_errors[VMON_STORE_SYS_VM]);
		assert_int_equal(vm->free_kb, 0);
		assert_false(BITTEST(vm->present, VMON_SYS_VM_FREE_KB));
		assert_int_equal(vm->total_kb, 100);
		assert_int_equal(vm->cached_kb, 7);
		assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_STAT], 0);
		assert_non_null(vmon_proc_lookup(&vmon, PID));
		finish(&fx, &vmon);
	}
}

static void test_sys_stat(void **state)
{
	fixture_t fx;
	fixture_stat_t st;
	vmon_t vmon;
	vmon_sys_stat_t *ss;

	setup(&fx, &st);
	/* an older kernel: 7 cpu columns; cpu1 offline (no line), cpu2 online */
	fixture_printf(&fx, "stat",
		"cpu  1 2 3 4 5 6 7\n"
		"cpu0 10 20 30 40 50 60 70\n"
		"cpu2 11 21 31 41 51 61 71\n"
		"intr 99 1 2\n"
		"ctxt 5\n"
		"btime 1600000000\n"
		"processes 77\n"
		"procs_running 3\n"
		"procs_blocked 1\n");
	start(&fx, &vmon, VMON_WANT_SYS_STAT, 0);
	ss = vmon.stores[VMON_STORE_SYS_STAT];
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_STAT], 0);
	assert_int_equal(ss->user, 1);
	assert_int_equal(ss->softirq, 7);
	assert_int_equal(ss->steal, 0);
	assert_false(BITTEST(ss->present, VMON_SYS_STAT_CPU_STEAL));
	assert_false(BITTEST(ss->present, VMON_SYS_STAT_CPU_GUEST_NICE));
	assert_true(BITTEST(ss->present, VMON_SYS_STAT_CPU_SIRQ));
	assert_int_equal(ss->cpus_nr, 3);
	assert_true(ss->cpus[0].online);
	assert_false(ss->cpus[1].online);
	assert_true(ss->cpus[2].online);
	assert_int_equal(ss->cpus[2].idle, 41);
	assert_int_equal(ss->intr, 99);
	assert_int_equal(ss->procs_blocked, 1);

	/* a new kernel: every column; cpu0 goes offline; one column of cpu2 moves */
	fixture_printf(&fx, "stat",
		"cpu  1 2 3 4 5 6 7 8 9 10\n"
		"cpu2 11 21 31 41 51 61 72 0 0 0\n"
		"intr 99 1 2\n"
		"ctxt 5\n"
		"btime 1600000000\n"
		"processes 77\n"
		"procs_running 3\n"
		"procs_blocked 1\n");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_STAT], 0);
	assert_int_equal(ss->guest_nice, 10);
	assert_true(BITTEST(ss->present, VMON_SYS_STAT_CPU_GUEST_NICE));
	assert_bits_exactly(ss->changed, sys_stat_desc, (const int[]){
		VMON_SYS_STAT_CPU_STEAL, VMON_SYS_STAT_CPU_GUEST, VMON_SYS_STAT_CPU_GUEST_NICE, -1 }, "changed");
	assert_false(ss->cpus[0].online);
	assert_bits_exactly(ss->cpus[2].changed, sys_stat_desc, (const int[]){ VMON_SYS_STAT_CPU_SIRQ, -1 }, "cpu2 changed");
	assert_int_equal(ss->cpus[2].softirq, 72);

	/* each keyed line alone */
	{
		static const char *const keys[] = { "intr", "ctxt", "btime", "processes", "procs_running", "procs_blocked" };
		static const int syms[] = { VMON_SYS_STAT_INTR, VMON_SYS_STAT_CTXT_SWITCHES, VMON_SYS_STAT_BTIME,
					    VMON_SYS_STAT_FORKS, VMON_SYS_STAT_NRUNNABLE, VMON_SYS_STAT_NBLOCKED };
		static const unsigned long long base[] = { 99, 5, 1600000000, 77, 3, 1 };

		for (int k = 0; k < 6; k++) {
			char text[1024];
			size_t len = (size_t)snprintf(text, sizeof(text), "cpu  1 2 3 4 5 6 7 8 9 10\ncpu2 11 21 31 41 51 61 72 0 0 0\n");

			for (int j = 0; j < 6; j++)
				len += (size_t)snprintf(text + len, sizeof(text) - len, "%s %llu%s\n", keys[j],
							base[j] + (j == k), j == 0 ? " 1 2" : "");
			fixture_write(&fx, "stat", text, len);
			assert_true(vmon_sample(&vmon));
			assert_bits_exactly(ss->changed, sys_stat_desc, (const int[]){ syms[k], -1 }, keys[k]);
			fixture_printf(&fx, "stat", "cpu  1 2 3 4 5 6 7 8 9 10\ncpu2 11 21 31 41 51 61 72 0 0 0\n"
				       "intr 99 1 2\nctxt 5\nbtime 1600000000\nprocesses 77\nprocs_running 3\nprocs_blocked 1\n");
			assert_true(vmon_sample(&vmon));
		}
	}

	/* uptime moves: boottime, its bit only */
	fixture_printf(&fx, "uptime", "2000.5 10.00\n");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(ss->boottime, 2000 * vmon.ticks_per_sec + vmon.ticks_per_sec / 2);
	assert_bits_exactly(ss->changed, sys_stat_desc, (const int[]){ VMON_SYS_STAT_BOOTTIME, -1 }, "uptime");

	/* malformed: a cpu line, then uptime; the store's error, the rest still read */
	fixture_printf(&fx, "stat", "cpu  1 2 x 4 5 6 7 8 9 10\ncpu2 11 21 31 41 51 61 72 0 0 0\nctxt 6\n");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_STAT], EPROTO);
	assert_int_equal(ss->ctxt, 6);
	assert_false(BITTEST(ss->present, VMON_SYS_STAT_INTR));
	assert_int_equal(ss->system, 0);
	assert_false(BITTEST(ss->present, VMON_SYS_STAT_CPU_SYS));
	assert_int_equal(ss->user, 1);
	assert_int_equal(ss->idle, 4);
	assert_true(BITTEST(ss->present, VMON_SYS_STAT_CPU_IDLE));
	fixture_printf(&fx, "stat", "cpu  1 2 3 4 5 6 7 8 9 10\nctxt 6\n");
	fixture_printf(&fx, "uptime", "12:00 up\n");
	assert_true(vmon_sample(&vmon));
	assert_int_equal(vmon.sys_errors[VMON_STORE_SYS_STAT], EPROTO);
	assert_int_equal(ss->system, 3);
	finish(&fx, &vmon);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_every_field),
		cmocka_unit_test(test_stat_comm_adversarial),
		cmocka_unit_test(test_stat_short_line),
		cmocka_unit_test(test_stat_truncated),
		cmocka_unit_test(test_stat_unusable),
		cmocka_unit_test(test_stat_bad_numbers),
		cmocka_unit_test(test_stat_changed_exactly),
		cmocka_unit_test(test_exec_rereads_cmdline),
		cmocka_unit_test(test_cmdlines),
		cmocka_unit_test(test_exe),
		cmocka_unit_test(test_cmdline_unreadable),
		cmocka_unit_test(test_gone_wins),
		cmocka_unit_test(test_gone_changed_bits),
		cmocka_unit_test(test_vm),
		cmocka_unit_test(test_vm_status_alone),
		cmocka_unit_test(test_vm_malformed),
		cmocka_unit_test(test_io),
		cmocka_unit_test(test_missing_file_is_not_death),
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_meminfo_malformed),
		cmocka_unit_test(test_sys_stat),
	};

	return cmocka_run_group_tests(tests, NULL, fixtures_cleanup);
}
