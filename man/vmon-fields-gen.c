/*
 * vmon-fields-gen: write vmon_fields(7), the reference of every datum, from
 * the field tables the library itself uses (vmon_sys_store_descs[] and
 * vmon_proc_store_descs[], generated from defs/).  The page is built at
 * build time, so it cannot say anything the tables do not.
 *
 *	vmon-fields-gen DATE > vmon_fields.7
 *
 * What the tables do not hold is the prose about each store (what the want
 * is for, when its files are read); it is here, keyed by store name, and a
 * store without it is an error: a new want cannot reach the page undescribed.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmon.h"

static const struct store_text {
	const char	*name;
	const char	*type;		/* of the store, or of each element it describes */
	const char	*text;		/* roff text lines */
} store_texts[] = {
	{ "sys_stat", "vmon_sys_stat_t",
	  "CPU times and system counters from\n.Pa /proc/stat ,\n"
	  "and the time since boot from\n.Pa /proc/uptime .\n"
	  "The cpu columns are the\n.Dq cpu\ntotal line's; each\n.Dq cpuN\n"
	  "line fills\n.Fa cpus[N] ,\na\n.Vt vmon_sys_cpu_t\nwith the same members\n"
	  "and its own\n.Fa changed\nbitmap\n.Po\n.Fa cpus_nr\nis one more than the highest N seen;\n"
	  ".Fa online\nis set for the lines of the last sample\n.Pc .\n" },
	{ "sys_vm", "vmon_sys_vm_t",
	  "System memory, from\n.Pa /proc/meminfo\nparsed by key.\n"
	  "A key the running kernel does not print is left 0 with its\n.Fa present\nbit clear.\n" },
	{ "sys_loadavg", "vmon_sys_loadavg_t",
	  "The load averages and task counts of\n.Pa /proc/loadavg .\n"
	  "The averages are kept in hundredths (the kernel prints two decimals of a fixed-point value:\n"
	  "0.27 is 27), so no floating point enters a store.\n" },
	{ "sys_sockets", "vmon_sys_sockets_t",
	  "The socket tables of\n.Pa /proc/net\n(unix, tcp, tcp6, udp, udp6) of libvmon's network namespace, counted.\n"
	  "Each row with an inode also makes its socket a\n.Vt vmon_fobject_t\n"
	  "with the row in\n.Fa object->socket ;\nsee\n.Xr vmon_fobject 3 .\n"
	  "A line that does not parse is skipped and counted in\n.Fa malformed .\n" },
	{ "proc_follow_children", "vmon_proc_follow_children_t",
	  "No data of its own: it builds the tree.\n"
	  "Outside\n.Dv VMON_FLAG_PROC_ALL\nit reads\n.Pa /proc/PID/task/TID/children\n"
	  "of every task of the process and hangs the children found under it;\n"
	  "with\n.Dv VMON_FLAG_PROC_ALL\nthe tree comes from every process's ppid and this want has nothing to do.\n" },
	{ "proc_follow_threads", "vmon_proc_follow_threads_t",
	  "No data of its own: it lists\n.Pa /proc/PID/task\n"
	  "when the process has more than one thread and keeps one thread node per task,\n"
	  "the leader included, on\n.Fa proc->threads .\n" },
	{ "proc_files", "vmon_proc_fd_t",
	  "Open file descriptors, one\n.Vt vmon_proc_fd_t\nper descriptor on the\n.Fa fds\n"
	  "list of the process's\n.Vt vmon_proc_files_t ,\n"
	  "shared by its threads; each points at the\n.Vt vmon_fobject_t\nof its file.\n"
	  "A process that did not run is not listed again; see\n.Xr vmon_proc_files 3 .\n"
	  "Another user's process gives\n.Er EACCES\nin\n.Fa proc->errors[VMON_STORE_PROC_FILES]\nand no fds.\n" },
	{ "proc_stat", "vmon_proc_stat_t",
	  "Sampled for every process and thread whatever the wants say.\n"
	  "Fields numbered as in\n.Xr proc 5\ncome from\n.Pa /proc/PID/stat\n"
	  "(for a thread,\n.Pa /proc/PID/task/TID/stat ) ,\n"
	  "counted from the last\n.Ql \\&)\nso that a command name with spaces and parentheses cannot shift them.\n"
	  "A thread's\n.Fa cmdline ,\n.Fa argv\nand\n.Fa exe\nare empty: they are its process's.\n"
	  "The\n.Fa exe\nof another user's process cannot be read: it is empty with its\n.Fa present\nbit clear,\n"
	  "and that is no error of the store.\n"
	  "With the task iterator\n.Pq Xr vmon_set_sampler 3\n"
	  "the numbers, the command name, the owner and, for a task that ran, the wait channel come from its\n"
	  "record instead, with the same values but where\n.Xr vmon 3\nsays they cannot be equal.\n"
	  "See\n.Xr vmon 3\nfor when each file is read again.\n" },
	{ "proc_stat_extra", "vmon_proc_stat_extra_t",
	  "The fields of\n.Pa /proc/PID/stat\nthat\n.Vt vmon_proc_stat_t\ndoes not keep, as the original libvmon's did not:\n"
	  "the addresses of the program's text, data, heap, stack, arguments and environment,\n"
	  "the four signal masks, the exit signal, the real-time priority and the scheduling policy.\n"
	  "Its own want, so that a client of\n.Dv VMON_WANT_PROC_STAT\ndoes not hold them for every task\n"
	  "(136 bytes a task).\n"
	  "No file of its own: they come from the same stat line, or task iterator record, as\n"
	  ".Vt vmon_proc_stat_t\nin the same sample\n"
	  "(but once, for a want added to a node whose record the iterator no longer holds).\n"
	  "The kernel shows the addresses of another user's process as 0 without ptrace access.\n" },
	{ "proc_vm", "vmon_proc_vm_t",
	  "Memory:\n.Pa /proc/PID/statm\nunless the stat line shows it cannot have moved (see\n.Xr vmon 3 ) ,\n"
	  "as the original libvmon's.\n" },
	{ "proc_vm_status", "vmon_proc_vm_status_t",
	  "The memory lines of\n.Pa /proc/PID/status ,\nits own want so that a client of\n.Dv VMON_WANT_PROC_VM\n"
	  "does not hold them for every task (112 bytes a task).\n"
	  "status costs more than stat, statm and io together: it is read again only when the memory can have moved\n"
	  "(with\n.Dv VMON_WANT_PROC_VM ,\nwhen statm moved; see\n.Xr vmon 3 ) ,\nor from the task iterator's record.\n"
	  "Kernel threads have no memory lines: those fields keep their\n.Fa present\nbit clear.\n" },
	{ "proc_env", "vmon_proc_env_t",
	  "What a process runs in: its environment strings from\n.Pa /proc/PID/environ\n"
	  "(split into\n.Fa envc\nand\n.Fa envv\nas the command line into\n.Fa argc\nand\n.Fa argv )\n"
	  "and the targets of its\n.Pa cwd\nand\n.Pa root\nlinks, read through the process's own directory.\n"
	  "Another user's process needs ptrace access: the error is recorded in\n"
	  ".Fa proc->errors[VMON_STORE_PROC_ENV]\nand what could not be read keeps its\n.Fa present\nbit clear.\n"
	  "A kernel thread and a zombie have no environment (and a zombie no directories):\n"
	  "those fields keep their\n.Fa present\nbit clear, with no error.\n"
	  "Meant for the few processes a caller looks at closely: set it on one node with\n"
	  ".Xr vmon_proc_set_wants 3 .\n" },
	{ "proc_sched", "vmon_proc_sched_t",
	  "How the task is scheduled and how the OOM killer sees it, each the task's own\n"
	  "(a process's are its main thread's, as\n.Pa /proc/PID/status\nshows them).\n"
	  "The context switches come from status, read only when the task ran since the last sample,\n"
	  "or from the task iterator;\n.Pa oom_score_adj\nis read at every sample and\n.Pa oom_score\n"
	  "when the adjustment changed, the task ran, its memory moved, or 5 seconds after the last read,\n"
	  "and the I/O priority and CPU affinity asked of\n.Xr ioprio_get 2\nand\n.Xr sched_getaffinity 2\n"
	  "(on the live\n.Pa /proc\nonly), kept only when a read through the process's own directory\n"
	  "after them shows the id was still its own.\n"
	  "An I/O class of 0 (none) means best-effort at the level the nice value gives:\n"
	  ".Ql (nice + 20) / 5 .\n"
	  "It costs a file read and two system calls per task and sample: measured at 3,000 idle processes\n"
	  "(2 CPUs, loaded), 9.5 microseconds per process per sample on top of the task iterator's 2.2.\n" },
	{ "proc_rollup", "vmon_proc_rollup_t",
	  "Proportional set size and its parts, from\n.Pa /proc/PID/smaps_rollup ,\n"
	  "for which the kernel walks every page table of the process under its mmap lock.\n"
	  "Measured on a 2-CPU machine (Linux 6.18, loaded): 70 microseconds for a 1.7 MB\n.Xr sleep 1 ,\n"
	  "250 for a 14 MB Python, 5,100 for one with 200 MB resident (about 25 microseconds per MB),\n"
	  "where statm takes 2 and status 13.\n"
	  "So it is read only for the processes that want it, at every sample\n"
	  "(pages others map or unmap move it while the process sleeps):\n"
	  "set it with\n.Xr vmon_proc_set_wants 3\non the few processes a viewer shows and drop it after,\n"
	  "never for every process.\n"
	  "Threads leave it empty (it is their process's); a kernel thread's fields are absent.\n"
	  "Another user's process needs ptrace access: the error is recorded in\n"
	  ".Fa proc->errors[VMON_STORE_PROC_ROLLUP] .\n" },
	{ "proc_io", "vmon_proc_io_t",
	  "I/O counters from\n.Pa /proc/PID/io .\n"
	  "Reading another user's process needs ptrace access: the error\n.Po\n.Er EACCES\n.Pc\n"
	  "is recorded in\n.Fa proc->errors[VMON_STORE_PROC_IO]\nand the fields are cleared with their\n.Fa present\nbits.\n" },
};

static const struct store_text *store_text(const char *name)
{
	for (size_t i = 0; i < sizeof(store_texts) / sizeof(store_texts[0]); i++) {
		if (strcmp(store_texts[i].name, name) == 0)
			return &store_texts[i];
	}
	return NULL;
}

static const char *type_name(vmon_type_t type)
{
	switch (type) {
	case VMON_TYPE_char:		return "char";
	case VMON_TYPE_int:		return "int";
	case VMON_TYPE_uint:		return "unsigned int";
	case VMON_TYPE_long:		return "long";
	case VMON_TYPE_ulong:		return "unsigned long";
	case VMON_TYPE_longlong:	return "long long";
	case VMON_TYPE_ulonglong:	return "unsigned long long";
	case VMON_TYPE_char_array:	return "vmon_char_array_t";
	case VMON_TYPE_str_array:	return "char **";
	case VMON_TYPE_cstr:		return "const char *";
	}
	return NULL;
}

/* what the number measures and in which unit (vmon_field_t's kind and unit), "" for a plain gauge or text */
static const char *measure(const vmon_field_t *f)
{
	static const char *const units[] = {
		[VMON_UNIT_none] = "", [VMON_UNIT_ticks] = " of clock ticks", [VMON_UNIT_pages] = " of pages",
		[VMON_UNIT_kb] = " of kB", [VMON_UNIT_bytes] = " of bytes", [VMON_UNIT_seconds] = " of seconds",
		[VMON_UNIT_hundredths] = " of hundredths",
	};
	static char buf[64];

	switch (f->kind) {
	case VMON_KIND_counter:
		snprintf(buf, sizeof(buf), "a counter%s", units[f->unit]);
		return buf;
	case VMON_KIND_gauge:
		if (f->unit == VMON_UNIT_none)
			return "";
		snprintf(buf, sizeof(buf), "a gauge%s", units[f->unit]);
		return buf;
	case VMON_KIND_id:
		return "an identifier or code";
	case VMON_KIND_address:
		return "an address";
	case VMON_KIND_bitmap:
		return "a bitmap";
	case VMON_KIND_text:
		return "";
	}
	return NULL;
}

/*
 * Text lines are at most 80 bytes (mandoc -T lint's rule of style): a long
 * one is broken at spaces, where roff joins it again.  A line never starts
 * with a control character.
 */
static void put_line(const char *s, size_t n)
{
	while (n > 80) {
		size_t cut = 80;

		while (cut > 0 && s[cut] != ' ')
			cut--;
		if (cut == 0)
			break;	/* one word longer than a line: as it is */
		fwrite(s, 1, cut, stdout);
		putchar('\n');
		s += cut + 1;
		n -= cut + 1;
		if (n && (*s == '.' || *s == '\''))
			fputs("\\&", stdout);
	}
	fwrite(s, 1, n, stdout);
	putchar('\n');
}

/* roff text of this file's own (store_texts[]): its text lines kept within 80 bytes, its macro lines as they are */
static void put_roff(const char *s)
{
	while (*s) {
		size_t n = strcspn(s, "\n");

		if (*s == '.')
			printf("%.*s\n", (int)n, s);
		else
			put_line(s, n);
		s += n + (s[n] == '\n');
	}
}

/* a text line of the table's own words: nothing in it may read as roff */
static void put_text(const char *s)
{
	char *line = malloc(2 * strlen(s) + 3);
	size_t len = 0;

	if (!line) {
		perror("vmon-fields-gen");
		exit(1);
	}
	if (*s == '.' || *s == '\'') {
		memcpy(line, "\\&", 2);
		len = 2;
	}
	for (; *s; s++) {
		if (*s == '\\') {
			memcpy(line + len, "\\e", 2);
			len += 2;
		} else {
			line[len++] = *s == '\n' ? ' ' : *s;
		}
	}
	put_line(line, len);
	free(line);
}

/* "proc_stat" -> "PROC_STAT" */
static void put_upper(const char *s)
{
	for (; *s; s++)
		putchar(toupper((unsigned char)*s));
}

static void put_source(const vmon_field_t *f, const char *dir)
{
	switch (f->source) {
	case VMON_SOURCE_POS:
		printf("from\n.Pa %s%s ,\nfield %d.\n", dir, f->file, f->n);
		break;
	case VMON_SOURCE_KEY:
		printf("from\n.Pa %s%s ,\nthe line\n.Dq %s ,\n", dir, f->file, f->key);
		if (f->n == 1)
			printf("its value.\n");
		else
			printf("value %d.\n", f->n);
		break;
	case VMON_SOURCE_CPU:
		printf("from\n.Pa %s%s ,\ncolumn %d of the cpu lines.\n", dir, f->file, f->n);
		break;
	case VMON_SOURCE_FILE:
		printf("from\n.Pa %s%s ,\nthe whole file.\n", dir, f->file);
		break;
	case VMON_SOURCE_LINK:
		printf("from\n.Pa %s%s ,\nthe link's target.\n", dir, f->file);
		break;
	case VMON_SOURCE_DERIVED:
		printf("computed from\n");
		put_text(f->key);
		break;
	}
}

static int put_fields(const vmon_store_desc_t *desc, const char *dir);

static int put_store(const vmon_store_desc_t *desc, const char *kind, const char *dir)
{
	const struct store_text *t = store_text(desc->name);

	if (!t) {
		fprintf(stderr, "vmon-fields-gen: store \"%s\" has no text in store_texts[]: describe it\n", desc->name);
		return -1;
	}
	printf(".Ss %s\n", desc->name);
	printf("Want\n.Dv VMON_WANT_");
	put_upper(desc->name);
	printf(" ,\nstore\n.Fa %s->stores[VMON_STORE_", kind);
	put_upper(desc->name);
	printf("]");
	if (desc->fields_nr)
		printf(" ,\nfields of\n.Vt %s .\n", t->type);
	else
		printf(" ,\na\n.Vt %s .\n", t->type);
	put_roff(t->text);
	return put_fields(desc, dir);
}

static int put_fields(const vmon_store_desc_t *desc, const char *dir)
{
	if (!desc->fields_nr)
		return 0;
	printf(".Bl -tag -width Ds\n");
	for (int i = 0; i < desc->fields_nr; i++) {
		const vmon_field_t *f = &desc->fields[i];
		const char *type = type_name(f->type), *what = measure(f);

		if (f->sym != i || !f->name || !f->symbol || !type || !what ||
		    (unsigned)f->unit > VMON_UNIT_hundredths) {
			fprintf(stderr, "vmon-fields-gen: %s field %d is not described whole\n", desc->name, i);
			return -1;
		}
		printf(".It Fa %s\n", f->name);
		put_text(f->desc);
		printf(".br\n.Vt %s ,\n.Dv %s ,\nlabel\n.Sy \"%s\" ;\n", type, f->symbol, f->label);
		if (*what)
			printf("%s;\n", what);
		if (f->flags & VMON_FIELD_SHARED)
			printf("shared;\n");
		put_source(f, dir);
	}
	printf(".El\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: vmon-fields-gen DATE\n");
		return 2;
	}
	printf(".\\\" vmon_fields.7: generated by man/vmon-fields-gen.c from the defs/ tables; do not edit.\n");
	printf(".Dd %s\n.Dt VMON_FIELDS 7\n.Os\n", argv[1]);
	printf(".Sh NAME\n.Nm vmon_fields\n.Nd every datum libvmon samples: stores, fields, symbols and sources\n");
	printf(".Sh DESCRIPTION\n"
	       "Each want of\n.Xr vmon 3\nfills a store, a struct reached through\n"
	       ".Fa vmon->stores[]\nfor the system wants and\n.Fa proc->stores[]\nfor the per-process wants.\n"
	       "Every field of a store is one row of a table under\n.Pa defs/\n"
	       "in the source, and this page is generated from those rows.\n"
	       ".Pp\n"
	       "For each field: its member name, its C type, its symbol and its label\n"
	       "(a short column header),\n"
	       "what it means with its unit, what it measures when it is not a plain level\n"
	       ".Po a counter, an identifier or code, an address, a bitmap, or a gauge with a unit:\n"
	       ".Fa kind\nand\n.Fa unit\nof its\n.Vt vmon_field_t\n.Pc ,\n"
	       "and where it comes from.\n"
	       "The symbol indexes the store's bitmaps:\n"
	       ".Fn BITTEST store->changed SYMBOL\n"
	       "is set when the field changed in the last sample (and for every field filled by\n"
	       "the store's first sample), and\n"
	       ".Fn BITTEST store->present SYMBOL\n"
	       "when the kernel gave a value for it.\n"
	       "The same descriptions are available to programs as\n"
	       ".Vt vmon_field_t\n"
	       "entries of\n.Va vmon_sys_store_descs[]\nand\n.Va vmon_proc_store_descs[] ,\n"
	       "indexed by store and then by symbol; see\n.Xr vmon_field_format 3 .\n"
	       ".Pp\n"
	       "A\n.Vt vmon_char_array_t\nholds\n.Fa array\n(always NUL-terminated) and\n.Fa len ,\n"
	       "the number of bytes the kernel gave.\n"
	       "The library's strings are to be read only, and valid until the next sample.\n"
	       "A field marked shared\n"
	       ".Pq Dv VMON_FIELD_SHARED\nin its\n.Vt vmon_field_t\n.Fa flags\n"
	       "is one copy for every process with the same bytes\n"
	       "(the threads and workers of a program): its\n.Fa alloc_len\nis 0,\n"
	       "and processes with the same text have the same\n.Fa array\npointer;\n"
	       "a shared argument vector is that text's own.\n"
	       "Numbers are as the kernel prints them; the units are in each description.\n"
	       "In per-process paths, PID is the process id; a thread's files are read under\n"
	       ".Pa /proc/PID/task/TID/ .\n");

	printf(".Sh SYSTEM STORES\n");
	for (int i = 0; i < VMON_STORE_SYS_NR; i++) {
		if (put_store(&vmon_sys_store_descs[i], "vmon", "/proc/") < 0)
			return 1;
	}
	printf(".Sh PROCESS STORES\n");
	for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
		if (put_store(&vmon_proc_store_descs[i], "proc", "/proc/PID/") < 0)
			return 1;
	}
	printf(".Sh SOCKET ROWS\n"
	       "Not a store: with\n.Dv VMON_WANT_SYS_SOCKETS ,\n"
	       "each socket's\n.Vt vmon_fobject_t\ncarries its row of the\n.Pa /proc/net\ntables in\n"
	       ".Fa object->socket ,\na\n.Vt vmon_fobject_socket_t\nwhose fields\n"
	       ".Va vmon_fobject_socket_desc\ndescribes; see\n.Xr vmon_fobject 3 .\n");
	if (put_fields(&vmon_fobject_socket_desc, "/proc/") < 0)
		return 1;
	printf(".Sh SEE ALSO\n.Xr vmon 3 ,\n.Xr vmon_field_format 3 ,\n.Xr vmon_fobject 3 ,\n.Xr vmon_proc_files 3 ,\n.Xr proc 5\n");
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("vmon-fields-gen: stdout");
		return 1;
	}
	return 0;
}
