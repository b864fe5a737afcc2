/*
 * columns.c: every column vtop can show, print or sort by.
 *
 * Most columns are the fields of the defs tables, taken from
 * vmon_proc_store_descs[] at start-up: name, label, description and type
 * come from the field's row, the text from vmon_field_format(), the order
 * from vmon_field_compare(), what it measures and its unit (metrics, hex
 * for addresses) from its kind and unit.  So a row added to a .def file is a
 * column of the list, of the setup screen, of -o, json, csv and the metrics,
 * with no line here.  vtop's own columns (CPU%, MEM%, TIME+, USER, COMMAND...) are
 * what it computes from several fields or from two samples: they are the
 * small table derived[] below.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "data/columns.h"

const char *const vt_default_columns = "pid,user,priority,nice,virt,res,state,cpu_percent,mem_percent,time,command";

static const vmon_proc_stat_t *stat_of(const vt_row_t *row)
{
	return row->stores[VMON_STORE_PROC_STAT];
}

/* the stat store when it has the field: a process only the event feed saw has no memory figures */
static const vmon_proc_stat_t *stat_with(const vt_row_t *row, int sym)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_STAT];

	return vmon_field_present(desc, &desc->fields[sym], row->stores[VMON_STORE_PROC_STAT]) ? stat_of(row) : NULL;
}

static int order_double(double a, double b)
{
	return (a > b) - (a < b);
}

static int order_ull(unsigned long long a, unsigned long long b)
{
	return (a > b) - (a < b);
}

/*
 * The text of a formatted number, with snprintf()'s contract: at most
 * size - 1 bytes and a NUL, and the length the whole would have.  The
 * formatters below write a few thousand numbers per refresh; printf's
 * parsing of its format and its floating-point path were most of vtop -b's
 * own time.
 */
static int put_text(char *buf, size_t size, const char *text, size_t len)
{
	if (size) {
		size_t n = len < size ? len : size - 1;

		memcpy(buf, text, n);
		buf[n] = '\0';
	}
	return (int)len;
}

/* n in decimal at the end of a buffer that ends at end; the first digit */
static char *digits_before(char *end, unsigned long long n)
{
	do {
		*--end = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	return end;
}

/* n (below 100) as "%02llu" before end */
static char *two_digits(char *end, unsigned long long n)
{
	*--end = (char)('0' + n % 10);
	*--end = (char)('0' + n / 10 % 10);
	return end;
}

/* q as "%.*f" prints q / 10^decimals (decimals 0 to 2), then unit if not '\0' */
static int put_scaled(char *buf, size_t size, unsigned long long q, int decimals, char unit)
{
	char tmp[32], *end = tmp + sizeof(tmp), *p = end;

	if (unit)
		*--p = unit;
	for (int d = 0; d < decimals; d++) {
		*--p = (char)('0' + q % 10);
		q /= 10;
	}
	if (decimals)
		*--p = '.';
	p = digits_before(p, q);
	return put_text(buf, size, p, (size_t)(end - p));
}

/*
 * Whether v is a whole number in [0, limit) (limit at most 2^64): a size
 * in bytes the integer paths below can print exactly.  A cast, not
 * floor(), which is all vtop took from libm (a shared library resident in
 * every vtop for a comparison).
 */
static bool whole_below(double v, double limit)
{
	return v >= 0 && v < limit && v == (double)(unsigned long long)v;
}

/*
 * "%.1f" or "%.2f" of x, the same text as snprintf() gives (the exact value
 * of x rounded to nearest, ties to even), without its floating-point path.
 * p = x * 10^decimals as a double is within FIXED_SLACK of the exact product
 * while x < FIXED_MAX (p < 2^37: half its last place is at most 2^-16), so
 * when p is more than that slack inside half of n, its nearest integer, the
 * exact product is too and n is the answer.  The rest (a tie or close to
 * one, negative, huge, not finite) goes to snprintf().
 */
#define FIXED_MAX	1e9
#define FIXED_SLACK	(1.0 / 65536)

static int format_fixed(char *buf, size_t size, double x, int decimals)
{
	double scale = decimals == 1 ? 10.0 : 100.0, p, err;
	unsigned long long n;

	if (x >= 0 && !signbit(x) && x < FIXED_MAX) {
		p = x * scale;
		n = (unsigned long long)(p + 0.5);
		err = p - (double)n;	/* exact: p and n are within 1 of each other */
		if (err > -0.5 + FIXED_SLACK && err < 0.5 - FIXED_SLACK)
			return put_scaled(buf, size, n, decimals, '\0');
	}
	return snprintf(buf, size, decimals == 1 ? "%.1f" : "%.2f", x);
}

/*
 * bytes / 1024^u as "%.*f" prints it, then the unit, when bytes is a whole
 * number (memory sizes): the quotient by a power of two is exact, so the
 * rounding (to nearest, ties to even) is done on integers.  Rates, which
 * are not whole, go to snprintf().
 */
static void format_units(char *buf, size_t size, double bytes, int u, int decimals, char unit)
{
	double scaled = bytes;

	for (int i = 0; i < u; i++)
		scaled /= 1024;
	if (whole_below(bytes, 1e16) && u <= 5) {
		unsigned long long v = (unsigned long long)bytes * (decimals == 2 ? 100 : decimals == 1 ? 10 : 1);
		unsigned shift = 10 * (unsigned)u;
		unsigned long long q = shift ? v >> shift : v, r = shift ? v & ((1ULL << shift) - 1) : 0;
		unsigned long long half = shift ? 1ULL << (shift - 1) : 1;

		if (shift && (r > half || (r == half && (q & 1))))
			q++;
		put_scaled(buf, size, q, decimals, unit);
		return;
	}
	snprintf(buf, size, decimals == 2 ? "%.2f%c" : decimals == 1 ? "%.1f%c" : "%.0f%c", scaled, unit);
}

/* bytes as at most five characters and a unit: 0, 512B, 1023K, 9.99M, 99.9G, 999T */
void vt_format_size(char *buf, size_t size, double bytes)
{
	static const char units[] = "BKMGTPE";
	double scaled = bytes;
	int u = 0;

	if (bytes < 0.5) {
		snprintf(buf, size, "0");
		return;
	}
	while (scaled >= 1024 && units[u + 1]) {
		scaled /= 1024;
		u++;
	}
	if (u == 0 || scaled >= 99.95)
		format_units(buf, size, bytes, u, 0, units[u]);
	else if (scaled >= 9.995)
		format_units(buf, size, bytes, u, 1, units[u]);
	else
		format_units(buf, size, bytes, u, 2, units[u]);
}

/* a decimal integer that does not fit in width: scaled by powers of 1000 with k M G T P E */
void vt_format_number(char *buf, size_t size, const char *digits, int width)
{
	static const char units[] = " kMGTPE";
	long double v;
	int u = 0;

	if (width <= 0 || (int)strlen(digits) <= width) {
		snprintf(buf, size, "%s", digits);
		return;
	}
	v = strtold(digits, NULL);
	while ((fabsl(v) >= 999.5L || u == 0) && units[u + 1]) {
		v /= 1000;
		u++;
		if (fabsl(v) < 999.5L)
			break;
	}
	if (fabsl(v) < 9.95L && width >= 4)
		snprintf(buf, size, "%.1Lf%c", v, units[u]);
	else
		snprintf(buf, size, "%.0Lf%c", v, units[u]);
}

/* --- vtop's own columns --- */

static int fmt_user(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	const char *user = row->user ? row->user : "?";

	(void)snap;
	(void)machine;
	return put_text(buf, size, user, strlen(user));
}

static int cmp_user(const vt_row_t *a, const vt_row_t *b)
{
	return strcmp(a->user ? a->user : "", b->user ? b->user : "");
}

static int fmt_bytes(double bytes, char *buf, size_t size, bool machine)
{
	if (machine && whole_below(bytes, 1e18)) {
		char tmp[24], *p = digits_before(tmp + sizeof(tmp), (unsigned long long)bytes);

		return put_text(buf, size, p, (size_t)(tmp + sizeof(tmp) - p));
	}
	if (machine)
		return snprintf(buf, size, "%.0f", bytes);
	vt_format_size(buf, size, bytes);
	return (int)strlen(buf);
}

static int fmt_virt(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	(void)snap;
	if (!stat_with(row, VMON_PROC_STAT_VSIZE))
		return -1;
	return fmt_bytes((double)stat_of(row)->vsize, buf, size, machine);
}

static int cmp_virt(const vt_row_t *a, const vt_row_t *b)
{
	return order_ull(stat_of(a) ? stat_of(a)->vsize : 0, stat_of(b) ? stat_of(b)->vsize : 0);
}

/*
 * RES and MEM%: statm's resident, every CPU's share of the kernel's
 * counters added, as ps, top and htop show it; stat's rss (the RSS column)
 * is the counters without those shares, up to 32 pages per CPU less.
 */
static const vmon_proc_vm_t *vm_with(const vt_row_t *row, int sym)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_VM];
	const vmon_proc_vm_t *vm = row->stores[VMON_STORE_PROC_VM];

	return vmon_field_present(desc, &desc->fields[sym], vm) ? vm : NULL;
}

static unsigned long long resident_pages(const vt_row_t *row)
{
	const vmon_proc_vm_t *vm = vm_with(row, VMON_PROC_VM_RESIDENT_PAGES);

	return vm ? vm->resident_pages : 0;
}

static int fmt_res(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	if (!vm_with(row, VMON_PROC_VM_RESIDENT_PAGES))
		return -1;
	return fmt_bytes((double)resident_pages(row) * (double)snap->page_size, buf, size, machine);
}

static int cmp_res(const vt_row_t *a, const vt_row_t *b)
{
	return order_ull(vm_with(a, VMON_PROC_VM_RESIDENT_PAGES) ? resident_pages(a) + 1 : 0,
			 vm_with(b, VMON_PROC_VM_RESIDENT_PAGES) ? resident_pages(b) + 1 : 0);
}

static const vmon_proc_vm_t *vm_of(const vt_row_t *row)
{
	return vm_with(row, VMON_PROC_VM_SHARED_PAGES);
}

static int fmt_shr(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	if (!vm_of(row))
		return -1;
	return fmt_bytes((double)vm_of(row)->shared_pages * (double)snap->page_size, buf, size, machine);
}

static int cmp_shr(const vt_row_t *a, const vt_row_t *b)
{
	return order_ull(vm_of(a) ? vm_of(a)->shared_pages + 1 : 0, vm_of(b) ? vm_of(b)->shared_pages + 1 : 0);
}

static int fmt_cpu(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	(void)snap;
	return format_fixed(buf, size, row->cpu_pct, machine ? 2 : 1);
}

static int cmp_cpu(const vt_row_t *a, const vt_row_t *b)
{
	return order_double(a->cpu_pct, b->cpu_pct);
}

static double mem_pct(const vt_row_t *row, const vt_snapshot_t *snap)
{
	if (!snap->mem_total_kb)
		return 0;
	return (double)resident_pages(row) * (double)snap->page_size * 100.0 / ((double)snap->mem_total_kb * 1024.0);
}

static int fmt_mem(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	if (!vm_with(row, VMON_PROC_VM_RESIDENT_PAGES) || !snap->mem_total_kb)
		return -1;
	return format_fixed(buf, size, mem_pct(row, snap), machine ? 2 : 1);
}

static int fmt_time(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	unsigned long long ticks, cs;
	char tmp[48], *end = tmp + sizeof(tmp), *p = end;

	if (!stat_of(row) || snap->ticks_per_sec <= 0)
		return -1;
	ticks = stat_of(row)->utime + stat_of(row)->stime;
	cs = ticks * 100 / (unsigned long long)snap->ticks_per_sec;
	if (machine)
		return put_scaled(buf, size, cs, 2, '\0');
	/*
	 * As top(1)'s TIME+: minutes:seconds.hundredths ("%llu:%02llu.%02llu"),
	 * hours when it gets long ("%lluh%02llu:%02llu"); written from the
	 * right, two digits at a time.
	 */
	if (cs < 360000ULL) {
		p = two_digits(p, cs % 100);
		*--p = '.';
		p = two_digits(p, cs / 100 % 60);
		*--p = ':';
		p = digits_before(p, cs / 6000);
	} else {
		p = two_digits(p, cs / 100 % 60);
		*--p = ':';
		p = two_digits(p, cs / 6000 % 60);
		*--p = 'h';
		p = digits_before(p, cs / 360000);
	}
	return put_text(buf, size, p, (size_t)(end - p));
}

static int cmp_time(const vt_row_t *a, const vt_row_t *b)
{
	return order_ull(stat_of(a) ? stat_of(a)->utime + stat_of(a)->stime : 0,
			 stat_of(b) ? stat_of(b)->utime + stat_of(b)->stime : 0);
}

static int fmt_command(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	const char *command = row->command ? row->command : "";

	(void)snap;
	(void)machine;
	return put_text(buf, size, command, strlen(command));
}

static int cmp_command(const vt_row_t *a, const vt_row_t *b)
{
	return strcmp(a->command ? a->command : "", b->command ? b->command : "");
}

static int fmt_rate(double rate, char *buf, size_t size, bool machine)
{
	if (rate < 0)
		return -1;
	if (machine)
		return snprintf(buf, size, "%.0f", rate);
	vt_format_size(buf, size, rate);
	return (int)strlen(buf);
}

static int fmt_rd(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	(void)snap;
	return fmt_rate(row->io_read_rate, buf, size, machine);
}

static int fmt_wr(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	(void)snap;
	return fmt_rate(row->io_write_rate, buf, size, machine);
}

static int cmp_rd(const vt_row_t *a, const vt_row_t *b)
{
	return order_double(a->io_read_rate, b->io_read_rate);
}

static int cmp_wr(const vt_row_t *a, const vt_row_t *b)
{
	return order_double(a->io_write_rate, b->io_write_rate);
}

static double started_at(const vt_row_t *row, const vt_snapshot_t *snap)
{
	const vmon_sys_stat_t *ss = snap->sys_stores[VMON_STORE_SYS_STAT];

	if (!stat_of(row) || !ss || !ss->btime || snap->ticks_per_sec <= 0)
		return -1;
	return (double)ss->btime + (double)stat_of(row)->start / (double)snap->ticks_per_sec;
}

static int fmt_started(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	double at = started_at(row, snap);
	time_t t = (time_t)at, now = (time_t)snap->when;
	struct tm tm;

	if (at < 0)
		return -1;
	if (machine)
		return snprintf(buf, size, "%.2f", at);
	localtime_r(&t, &tm);
	/* today: the time; this year: the day; before: the year */
	if (now - t < 24 * 3600)
		return (int)strftime(buf, size, "%H:%M", &tm);
	if (now - t < 365 * 24 * 3600)
		return (int)strftime(buf, size, "%b%d", &tm);
	return (int)strftime(buf, size, "%Y", &tm);
}

static int cmp_started(const vt_row_t *a, const vt_row_t *b)
{
	return order_ull(a->start, b->start);
}

/*
 * How an exited process ended.  For a person, one column: the exit code,
 * or the signal by name.  For a program, two typed fields: exit_status
 * (the code, missing when a signal ended it) and term_signal (the signal's
 * number, missing when it exited), never the raw wait status.
 */
static int fmt_exit(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	(void)snap;
	if (!(row->flags & VT_ROW_EXITED) || row->exit_code < 0)
		return -1;
	if (!WIFSIGNALED(row->exit_code))
		return snprintf(buf, size, "%d", WEXITSTATUS(row->exit_code));
	if (machine)
		return -1;
	return snprintf(buf, size, "SIG%s", vt_signal_name(WTERMSIG(row->exit_code)));
}

static int fmt_signal(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	(void)snap;
	if (!(row->flags & VT_ROW_EXITED) || row->exit_code < 0 || !WIFSIGNALED(row->exit_code))
		return -1;
	if (machine)
		return snprintf(buf, size, "%d", WTERMSIG(row->exit_code));
	return snprintf(buf, size, "SIG%s", vt_signal_name(WTERMSIG(row->exit_code)));
}

static int cmp_exit(const vt_row_t *a, const vt_row_t *b)
{
	return (a->exit_code > b->exit_code) - (a->exit_code < b->exit_code);
}

static const vmon_proc_sched_t *sched_with(const vt_row_t *row, int sym)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_SCHED];
	const vmon_proc_sched_t *s = row->stores[VMON_STORE_PROC_SCHED];

	return vmon_field_present(desc, &desc->fields[sym], s) ? s : NULL;
}

/* the I/O class's name as ionice(1) abbreviates it ("none" for class 0: it follows nice) */
const char *vt_io_class_name(int io_class)
{
	static const char *const names[] = { "none", "rt", "be", "idle" };

	return io_class >= 0 && io_class < 4 ? names[io_class] : "?";
}

/* "be/4", "rt/0", "idle" (which has no levels), "none" */
static int fmt_io(const vt_row_t *row, const vt_snapshot_t *snap, char *buf, size_t size, bool machine)
{
	const vmon_proc_sched_t *s = sched_with(row, VMON_PROC_SCHED_IO_CLASS);

	(void)snap;
	(void)machine;
	if (!s)
		return -1;
	if (s->io_class == 1 || s->io_class == 2)
		return snprintf(buf, size, "%s/%d", vt_io_class_name(s->io_class), s->io_level);
	return snprintf(buf, size, "%s", vt_io_class_name(s->io_class));
}

/* by how soon the kernel serves its I/O: realtime, best-effort (none as best-effort), idle; then level */
static int io_rank(const vt_row_t *row)
{
	const vmon_proc_sched_t *s = sched_with(row, VMON_PROC_SCHED_IO_CLASS);
	static const int class_rank[] = { 2, 1, 2, 3 };

	if (!s || s->io_class < 0 || s->io_class > 3)
		return 0;
	return class_rank[s->io_class] * 16 + (s->io_class == 0 ? 8 : s->io_level + 1);
}

static int cmp_io(const vt_row_t *a, const vt_row_t *b)
{
	return (io_rank(a) > io_rank(b)) - (io_rank(a) < io_rank(b));
}

static const vt_derived_t derived[] = {
	{ "user", "USER", "the process's owner (effective user)", 9, true, VT_VALUE_STRING, 0, fmt_user, cmp_user,
	  VMON_KIND_text },
	{ "virt", "VIRT", "virtual memory size (bytes)", 5, false, VT_VALUE_NUMBER, 0, fmt_virt, cmp_virt,
	  VMON_KIND_gauge, VMON_UNIT_bytes },
	{ "res", "RES", "resident memory, as statm and ps show it (bytes)", 5, false, VT_VALUE_NUMBER, VMON_WANT_PROC_VM,
	  fmt_res, cmp_res, VMON_KIND_gauge, VMON_UNIT_bytes },
	{ "shr", "SHR", "resident shared memory (bytes)", 5, false, VT_VALUE_NUMBER, VMON_WANT_PROC_VM, fmt_shr, cmp_shr,
	  VMON_KIND_gauge, VMON_UNIT_bytes },
	{ "cpu_percent", "CPU%", "CPU use over the last interval (percent of one CPU)", 5, false, VT_VALUE_NUMBER, 0,
	  fmt_cpu, cmp_cpu },
	{ "mem_percent", "MEM%", "resident memory (percent of RAM)", 5, false, VT_VALUE_NUMBER, VMON_WANT_PROC_VM,
	  fmt_mem, cmp_res },
	{ "time", "TIME+", "CPU time used, user and system (seconds)", 9, false, VT_VALUE_NUMBER, 0, fmt_time, cmp_time,
	  VMON_KIND_counter, VMON_UNIT_seconds },
	{ "io_read_rate", "DISK R/s", "reads from storage over the last interval (bytes/s)", 8, false, VT_VALUE_NUMBER,
	  VMON_WANT_PROC_IO, fmt_rd, cmp_rd, VMON_KIND_gauge, VMON_UNIT_bytes, true },
	{ "io_write_rate", "DISK W/s", "writes to storage over the last interval (bytes/s)", 8, false, VT_VALUE_NUMBER,
	  VMON_WANT_PROC_IO, fmt_wr, cmp_wr, VMON_KIND_gauge, VMON_UNIT_bytes, true },
	{ "started", "STARTED", "when the process started (seconds since the epoch)", 7, false, VT_VALUE_NUMBER, 0,
	  fmt_started, cmp_started, VMON_KIND_gauge, VMON_UNIT_seconds, false, NULL, true },
	{ "exit_status", "EXIT", "how an exited process ended: its exit code, or the signal that ended it", 7, false,
	  VT_VALUE_NUMBER, 0, fmt_exit, cmp_exit, VMON_KIND_gauge, VMON_UNIT_none, false, "term_signal" },
	{ "term_signal", "TERMSIG", "the signal that ended an exited process (its number, for a program)", 7, false,
	  VT_VALUE_NUMBER, 0, fmt_signal, cmp_exit },
	{ "io_priority", "IO", "I/O priority: class/level (rt realtime, be best-effort; 0 first), idle, or none "
	  "(best-effort by nice)", 6, true, VT_VALUE_STRING, VMON_WANT_PROC_SCHED, fmt_io, cmp_io, VMON_KIND_text },
	{ "command", "COMMAND", "the command line, or [name] without one", 0, true, VT_VALUE_STRING, 0,
	  fmt_command, cmp_command, VMON_KIND_text },
};

/* --- the table of all columns --- */

static vt_column_t *columns;
const vt_column_t *vt_columns;
int vt_columns_nr;

/* the stores whose fields are columns: per process, one value each */
static const int field_stores[] = {
	VMON_STORE_PROC_STAT, VMON_STORE_PROC_STAT_EXTRA, VMON_STORE_PROC_VM, VMON_STORE_PROC_VM_STATUS,
	VMON_STORE_PROC_IO, VMON_STORE_PROC_ENV, VMON_STORE_PROC_SCHED, VMON_STORE_PROC_ROLLUP,
};

/*
 * A field's width, from what it measures: a pid or another id takes the
 * seven digits of the largest pid_max, an address its hex digits, a plain
 * level (priority, nice, threads) a few, a count or a size eight (scaled
 * beyond: 12.3M).
 */
static int field_width(const vmon_field_t *f)
{
	int label = (int)strlen(f->label), w;

	switch (f->kind) {
	case VMON_KIND_text:
		w = f->type == VMON_TYPE_char ? 1 : 16;
		break;
	case VMON_KIND_id:
		w = 7;
		break;
	case VMON_KIND_address:
		w = 14;
		break;
	case VMON_KIND_bitmap:
		w = 10;
		break;
	default:
		w = f->kind == VMON_KIND_gauge && f->unit == VMON_UNIT_none ? 4 : 8;
		break;
	}
	return label > w ? label : w;
}

int vt_columns_init(void)
{
	int nr = (int)(sizeof(derived) / sizeof(derived[0])), n = 0;

	if (columns)
		return 0;
	for (size_t s = 0; s < sizeof(field_stores) / sizeof(field_stores[0]); s++)
		nr += vmon_proc_store_descs[field_stores[s]].fields_nr;
	columns = calloc((size_t)nr, sizeof(*columns));
	if (!columns)
		return -1;
	for (size_t d = 0; d < sizeof(derived) / sizeof(derived[0]); d++) {
		vt_column_t *c = &columns[n++];
		const vt_derived_t *dv = &derived[d];

		c->name = dv->name;
		c->label = dv->label;
		c->desc = dv->desc;
		c->width = dv->width;
		c->left = dv->left;
		c->kind = dv->kind;
		c->measure = dv->kind == VT_VALUE_STRING ? VMON_KIND_text : dv->measure;
		c->unit = dv->unit;
		c->rate = dv->rate;
		c->wants = dv->wants | VMON_WANT_PROC_STAT;
		c->store = -1;
		c->derived = dv;
	}
	for (size_t s = 0; s < sizeof(field_stores) / sizeof(field_stores[0]); s++) {
		const vmon_store_desc_t *desc = &vmon_proc_store_descs[field_stores[s]];

		for (int i = 0; i < desc->fields_nr; i++) {
			const vmon_field_t *f = &desc->fields[i];
			vt_column_t *c = &columns[n++];
			bool text = f->kind == VMON_KIND_text;
			/* an address or a bitmap is written in hex: text to json, a label to metrics */
			bool hex = f->kind == VMON_KIND_address || f->kind == VMON_KIND_bitmap;

			c->name = f->name;
			c->label = f->label;
			c->desc = f->desc;
			c->width = field_width(f);
			c->left = text;
			c->kind = text || hex ? VT_VALUE_STRING : VT_VALUE_NUMBER;
			c->measure = f->kind;
			c->unit = f->unit;
			c->wants = (vmon_proc_wants_t)(1L << field_stores[s]) | VMON_WANT_PROC_STAT;
			if (field_stores[s] == VMON_STORE_PROC_STAT && i == VMON_PROC_STAT_WCHAN)
				c->wants |= VT_WANT_WCHAN;
			c->store = field_stores[s];
			c->field = f;
		}
	}
	/*
	 * Names are keys of json objects, csv headers, metric names and vtoprc
	 * values, labels the headers of the text and the screen: one each.
	 */
	for (int i = 0; i < n; i++) {
		columns[i].with = -1;
		for (int j = i + 1; j < n; j++) {
			if (strcasecmp(columns[i].name, columns[j].name) == 0 ||
			    strcasecmp(columns[i].label, columns[j].label) == 0) {
				free(columns);
				columns = NULL;
				errno = EEXIST;
				return -1;
			}
		}
	}
	vt_columns = columns;
	vt_columns_nr = n;
	for (int i = 0; i < n; i++) {
		if (columns[i].derived && columns[i].derived->with)
			columns[i].with = vt_column_find(columns[i].derived->with);
	}
	return 0;
}

int vt_column_find(const char *name)
{
	for (int i = 0; i < vt_columns_nr; i++) {
		if (strcasecmp(vt_columns[i].name, name) == 0)
			return i;
	}
	for (int i = 0; i < vt_columns_nr; i++) {
		if (strcasecmp(vt_columns[i].label, name) == 0)
			return i;
	}
	return -1;
}

/* "pid,user,CPU%,command": names or labels, comma-separated */
int vt_column_parse_list(const char *list, int *cols, int max, char *err, size_t err_size)
{
	const char *p = list;
	int nr = 0;

	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char name[64];
		int c;

		if (len == 0 || len >= sizeof(name)) {
			snprintf(err, err_size, "bad column name in \"%s\"", list);
			return -1;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		c = vt_column_find(name);
		if (c < 0) {
			snprintf(err, err_size, "no column \"%s\" (vtop -o help lists them)", name);
			return -1;
		}
		if (nr == max) {
			snprintf(err, err_size, "more than %d columns", max);
			return -1;
		}
		/* twice would be two json keys, two csv headers, one metric family twice */
		for (int i = 0; i < nr; i++) {
			if (cols[i] == c) {
				snprintf(err, err_size, "column \"%s\" given twice", vt_columns[c].name);
				return -1;
			}
		}
		cols[nr++] = c;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!nr) {
		snprintf(err, err_size, "no columns given");
		return -1;
	}
	return nr;
}

/*
 * A field of an integer type as vmon_field_format() writes it ("%d", "%lu",
 * ...), without printf; -2 for the other types.
 */
static int format_integer(const vmon_field_t *f, const void *store, char *buf, size_t size)
{
	const char *m = (const char *)store + f->offset;
	char tmp[24], *end = tmp + sizeof(tmp), *p;
	unsigned long long mag;
	bool neg = false;
	long long v;

	switch (f->type) {
	case VMON_TYPE_int:
		v = *(const int *)m;
		break;
	case VMON_TYPE_long:
		v = *(const long *)m;
		break;
	case VMON_TYPE_longlong:
		v = *(const long long *)m;
		break;
	case VMON_TYPE_uint:
		p = digits_before(end, *(const unsigned *)m);
		return put_text(buf, size, p, (size_t)(end - p));
	case VMON_TYPE_ulong:
		p = digits_before(end, *(const unsigned long *)m);
		return put_text(buf, size, p, (size_t)(end - p));
	case VMON_TYPE_ulonglong:
		p = digits_before(end, *(const unsigned long long *)m);
		return put_text(buf, size, p, (size_t)(end - p));
	default:
		return -2;
	}
	/* the magnitude in unsigned arithmetic: -LLONG_MIN does not fit a long long */
	if (v < 0) {
		neg = true;
		mag = 0ULL - (unsigned long long)v;
	} else {
		mag = (unsigned long long)v;
	}
	p = digits_before(end, mag);
	if (neg)
		*--p = '-';
	return put_text(buf, size, p, (size_t)(end - p));
}

/* an address or a bitmap as "0x" and hex digits, in every format (ps(1) and /proc/PID/maps write them so) */
static int format_hex(const vmon_field_t *f, const void *store, char *buf, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	const char *m = (const char *)store + f->offset;
	char tmp[24], *end = tmp + sizeof(tmp), *p = end;
	unsigned long long v;

	switch (f->type) {
	case VMON_TYPE_int:
	case VMON_TYPE_uint:
		v = *(const unsigned *)m;
		break;
	case VMON_TYPE_long:
	case VMON_TYPE_ulong:
		v = *(const unsigned long *)m;
		break;
	case VMON_TYPE_longlong:
	case VMON_TYPE_ulonglong:
		v = *(const unsigned long long *)m;
		break;
	default:
		return -1;
	}
	do {
		*--p = digits[v & 0xf];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	return put_text(buf, size, p, (size_t)(end - p));
}

/*
 * The column's text for the row.  For a person (machine false) numbers are
 * scaled to fit the column; for a program they are plain.  Text from the
 * process is escaped.  Returns the length, or -1 when there is no value
 * (shown as "-", written as null).
 */
int vt_column_format(const vt_column_t *col, const vt_row_t *row, const vt_snapshot_t *snap,
		     char *buf, size_t size, bool machine)
{
	const vmon_store_desc_t *desc;
	const void *store;
	int len;

	if (size)
		buf[0] = '\0';
	if (col->derived)
		return col->derived->format(row, snap, buf, size, machine);
	desc = &vmon_proc_store_descs[col->store];
	store = row->stores[col->store];
	if (!vmon_field_present(desc, col->field, store))
		return -1;
	if (col->measure == VMON_KIND_address || col->measure == VMON_KIND_bitmap)
		return format_hex(col->field, store, buf, size);
	len = format_integer(col->field, store, buf, size);
	if (len == -2)
		len = vmon_field_format(col->field, store, buf, size, snap ? snap->escape_flags : 0);
	/* a count or a size is scaled to fit a person's column, never an id */
	if (len >= 0 && !machine && col->kind == VT_VALUE_NUMBER && col->measure != VMON_KIND_id && len > col->width) {
		char digits[32];

		snprintf(digits, sizeof(digits), "%s", buf);
		vt_format_number(buf, size, digits, col->width);
		len = (int)strlen(buf);
	}
	return len;
}

int vt_column_compare(const vt_column_t *col, const vt_row_t *a, const vt_row_t *b)
{
	const vmon_store_desc_t *desc;
	bool pa, pb;

	if (col->derived)
		return col->derived->compare(a, b);
	desc = &vmon_proc_store_descs[col->store];
	pa = vmon_field_present(desc, col->field, a->stores[col->store]);
	pb = vmon_field_present(desc, col->field, b->stores[col->store]);
	/* a missing value sorts before any value */
	if (!pa || !pb)
		return (int)pa - (int)pb;
	return vmon_field_compare(col->field, a->stores[col->store], b->stores[col->store]);
}

vmon_proc_wants_t vt_columns_wants(const int *cols, int nr)
{
	vmon_proc_wants_t wants = VMON_WANT_PROC_STAT;

	for (int i = 0; i < nr; i++)
		wants |= vt_columns[cols[i]].wants;
	return wants;
}

/* --- the real text of escaped text, for programs --- */

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * How many bytes at s (n of them) are one valid UTF-8 sequence, as 0 - k:
 * the bytes that begin a sequence but do not end it (a "maximal subpart",
 * at least 1), which Unicode's recommended practice, WHATWG's decoder and
 * Python's errors="replace" each turn into one U+FFFD.
 */
static long utf8_valid(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 2;
	else if (c >= 0xe0 && c <= 0xef)
		need = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 4;
	else
		return -1;
	/* the second byte's range excludes overlong forms, surrogates and what lies past U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (i = 1; i < need; i++) {
		if (i >= n || s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
			return -(long)i;
	}
	return (long)need;
}

/*
 * The text a process gave, from what vmon_escape() made of it (\\ for a
 * backslash, \xNN for any other byte it would not show): the bytes, as
 * UTF-8, with each maximal subpart that is not UTF-8 replaced by U+FFFD.
 * dst holds VT_TEXT_REAL_SIZE(len) bytes and ends with a NUL; the length
 * is returned, for the text may hold NULs of its own (cmdline and environ
 * separate their strings with them).
 */
size_t vt_text_real(char *dst, const char *escaped, size_t len)
{
	unsigned char *out = (unsigned char *)dst, *raw = out + 2 * len;
	size_t n = 0, k = 0;

	/*
	 * The bytes go to the last third of dst, then come to its start made
	 * valid: a replacement (3 bytes) for at least one byte, so writing
	 * never overtakes reading.
	 */
	for (size_t i = 0; i < len; i++) {
		int h, l;

		if (escaped[i] == '\\' && i + 1 < len && escaped[i + 1] == '\\') {
			raw[n++] = '\\';
			i++;
		} else if (escaped[i] == '\\' && i + 3 < len && escaped[i + 1] == 'x' &&
			   (h = hex_digit(escaped[i + 2])) >= 0 && (l = hex_digit(escaped[i + 3])) >= 0) {
			raw[n++] = (unsigned char)(h << 4 | l);
			i += 3;
		} else {
			raw[n++] = (unsigned char)escaped[i];
		}
	}
	for (size_t i = 0; i < n;) {
		long v = utf8_valid(raw + i, n - i);

		if (v > 0) {
			memmove(out + k, raw + i, (size_t)v);
			k += (size_t)v;
			i += (size_t)v;
		} else {
			memcpy(out + k, "\xef\xbf\xbd", 3);
			k += 3;
			i += (size_t)-v;
		}
	}
	out[k] = '\0';
	return k;
}

/* escaped text (vmon_escape()'s) as a JSON string of the real text: control characters as \uXXXX */
void vt_json_string(FILE *out, const char *escaped)
{
	size_t len = strlen(escaped), n;
	char small[1024], *text = VT_TEXT_REAL_SIZE(len) <= sizeof(small) ? small : malloc(VT_TEXT_REAL_SIZE(len));
	const unsigned char *s, *end;

	if (!text) {
		fputs("null", out);
		return;
	}
	n = vt_text_real(text, escaped, len);
	fputc('"', out);
	for (s = (const unsigned char *)text, end = s + n; s < end; s++) {
		/* the C1 controls (U+0080..U+009F) too: a terminal showing the file must not obey them */
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n' || *s == '\t' || *s == '\r')
			fprintf(out, "\\%c", *s == '\n' ? 'n' : *s == '\t' ? 't' : 'r');
		else if (*s < 0x20 || *s == 0x7f)
			fprintf(out, "\\u%04x", *s);
		else if (*s == 0xc2 && s + 1 < end && s[1] >= 0x80 && s[1] <= 0x9f)
			fprintf(out, "\\u%04x", *++s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
	if (text != small)
		free(text);
}

/*
 * Escaped text (vmon_escape()'s output) into a fixed buffer.  When it does
 * not fit it is cut between two whole characters, never inside a UTF-8
 * sequence nor inside a \xNN or \\ escape, and "..." marks the cut, so that
 * a cut never reads as the whole or as something else.  dst may be
 * escaped itself (a text cut where it is).
 */
void vt_text_fit(char *dst, size_t size, const char *escaped, size_t len)
{
	size_t n = 0, limit;

	if (!size)
		return;
	if (len < size) {
		memmove(dst, escaped, len);
		dst[len] = '\0';
		return;
	}
	limit = size > 4 ? size - 4 : 0;
	while (n < len) {
		unsigned char c = (unsigned char)escaped[n];
		size_t step = 1;

		if (c == '\\')
			step = n + 1 < len && escaped[n + 1] == 'x' ? 4 : 2;
		else if (c >= 0xf0)
			step = 4;
		else if (c >= 0xe0)
			step = 3;
		else if (c >= 0xc0)
			step = 2;
		if (n + step > limit)
			break;
		n += step;
	}
	memmove(dst, escaped, n);
	memcpy(dst + n, "...", size > 4 ? 4 : 1);
	if (size <= 4)
		dst[n] = '\0';
}

const char *vt_signal_name(int sig)
{
	const char *name = sigabbrev_np(sig);

	return name ? name : "?";
}
