/*
 * screens.c: what the screen shows besides the list: the help, the details
 * of a process, the event log (full-screen views that share one way of
 * drawing scrollable lines), and the dialogs over the list: signal, renice,
 * confirmation, sort column, user.
 *
 * Kill and renice act on what was selected or tagged when the dialog
 * opened, identified by pid and start time.  The snapshot they were seen in
 * may be minutes old (paused), and the pid another process's by now: each
 * target is opened with vmon_pidfd_open(), which gives a pidfd only for the
 * process of that identity, and signalled through it.  setpriority() has no
 * pidfd form: the identity is checked before it, and the pidfd asked after
 * it whether the process is still there (a pid is not reused before its
 * process is reaped); if it went in between, that is said, since the pid
 * could have been reniced as another's.  The dialogs say when a target has
 * exited while they are open; each failure is shown with the pid and the
 * reason.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tui.h"

/* linux/pidfd.h of Linux 6.9, newer than the headers this may be built with */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD			O_EXCL
#endif
#ifndef PIDFD_SIGNAL_THREAD_GROUP
#define PIDFD_SIGNAL_THREAD_GROUP	(1U << 1)
#endif

/* --- a scrollable page of lines (tui.h) --- */

void page_add(page_t *p, const char *fmt, ...)
{
	va_list ap;
	char *line;

	if (p->nr == p->cap) {
		int cap = p->cap ? p->cap * 2 : 64;
		char **v = realloc(p->lines, sizeof(*v) * (size_t)cap);

		if (!v)
			return;
		p->lines = v;
		p->cap = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&line, fmt, ap) >= 0)
		p->lines[p->nr++] = line;
	va_end(ap);
}

void page_free(page_t *p)
{
	for (int i = 0; i < p->nr; i++)
		free(p->lines[i]);
	free(p->lines);
}

void page_draw(tui_t *t, int *scroll, const page_t *p, const char *hint)
{
	int h = LINES, w = COLS, body = h - 2;

	if (body < 1)
		body = h > 0 ? h : 0;
	if (*scroll > p->nr - body)
		*scroll = p->nr - body;
	if (*scroll < 0)
		*scroll = 0;
	for (int i = 0; i < body - (h > 2 ? 0 : 1) && *scroll + i < p->nr; i++)
		tui_text(1 + i, 0, w, p->lines[*scroll + i], 0);
	if (h >= 3) {
		tui_fill(h - 1, 0, w, t->attrs[C_FKEY_LABEL]);
		attron(t->attrs[C_FKEY_LABEL]);
		tui_text(h - 1, 0, w, hint, 0);
		attroff(t->attrs[C_FKEY_LABEL]);
	}
}

bool page_key(int *scroll, int ch)
{
	int body = LINES - 2 > 1 ? LINES - 2 : 1;

	switch (ch) {
	case KEY_UP:
		(*scroll)--;
		break;
	case KEY_DOWN:
		(*scroll)++;
		break;
	case KEY_PPAGE:
		*scroll -= body;
		break;
	case KEY_NPAGE:
	case ' ':
		*scroll += body;
		break;
	case KEY_HOME:
		*scroll = 0;
		break;
	case KEY_END:
		*scroll = 1 << 30;
		break;
	case 27:
	case 'q':
	case KEY_F(10):
		return true;
	}
	return false;
}

/* --- help --- */

static void help_page(page_t *p)
{
	page_add(p, "vtop %s: the process tree, sampled by libvmon. Keys (htop's, and a few more):", PACKAGE_VERSION);
	page_add(p, "%s", "");
	for (int i = 0; i < tui_key_help_nr(); i++) {
		if (tui_key_help_keys(i))
			page_add(p, "  %-12s %s", tui_key_help_keys(i), tui_key_help_text(i));
	}
	page_add(p, "%s", "");
	page_add(p, "Marks in the first column (and their colours):");
	page_add(p, "  X  exited: gone since a recent refresh, shown for a few more (red)");
	page_add(p, "  N  new: first seen in this refresh (green)");
	page_add(p, "  *  tagged with Space or c (yellow); the column header counts the tags, a tag goes with its process");
	page_add(p, "  dim lines are not matches but the ancestors of one, kept to show where it is");
	page_add(p, "Meters: CPU  | user  + nice  # system  * irq, softirq and steal");
	page_add(p, "        Mem  | used  * buffers and cache;  Swp  | used");
	page_add(p, "In the search and filter prompts: Enter keeps, Esc goes back, ^U erases;");
	page_add(p, "  search: F3 or ^N next, ^P previous; filter: ^R switches substring and regex.");
	page_add(p, "  A prompt turns red, and says \"no match\", when nothing matches what is typed.");
	page_add(p, "Text from processes (names, arguments, paths, environment) is shown escaped: \\xNN.");
}

static int help_scroll;

void screens_open_help(tui_t *t)
{
	help_scroll = 0;
	tui_open(t, &help_panel);
}

static void help_title(tui_t *t, char *buf, size_t size)
{
	(void)t;
	snprintf(buf, size, " vtop help");
}

static void help_draw(tui_t *t)
{
	page_t p = { 0 };

	help_page(&p);
	page_draw(t, &help_scroll, &p, " Esc q h: back   Up Down PgUp PgDn: scroll");
	page_free(&p);
}

static panel_next_t help_key(tui_t *t, int ch)
{
	(void)t;
	if (page_key(&help_scroll, ch) || ch == 'h' || ch == KEY_F(1) || ch == '?')
		return PANEL_CLOSE;
	return PANEL_STAY;
}

const panel_t help_panel = { "help", false, help_title, help_draw, help_key };

/* --- details --- */

static int details_scroll;

void screens_open_details(tui_t *t)
{
	const vt_row_t *row = tui_selected(t);

	if (!row)
		return;
	t->detail.pid = row->pid;
	t->detail.start = row->start;
	details_scroll = 0;
	tui_open(t, &details_panel);
	/* the environment is read for this process only, from the next sample: asked for now */
	vt_sampler_set_detail(t->sampler, row->pid);
	t->detail_asked = true;
}

static void close_details(tui_t *t)
{
	vt_sampler_set_detail(t->sampler, 0);
	t->detail_asked = false;
}

static const char *state_name(char s)
{
	switch (s) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk sleep";
	case 'Z': return "zombie";
	case 'T': return "stopped";
	case 't': return "traced";
	case 'I': return "idle";
	case 'X': return "exited";
	default: return "?";
	}
}

static void escaped(char *buf, size_t size, const char *s, size_t len)
{
	vmon_escape(buf, size, s, len, 0);
}

/*
 * Why a field has no value, when the library records no errno for it: it
 * leaves out, without an error, what the kernel does not have (a kernel
 * thread's executable, a zombie's) or refuses to an unprivileged caller (the
 * executable, and a real wait channel, of another user's process: the
 * ptrace access check), so the reason is what the row says about the
 * process, and who we are.
 */
static const char *no_value_why(const tui_t *t, const vt_row_t *row, int store, char *buf, size_t size)
{
	if (row->errors[store]) {
		snprintf(buf, size, "not readable: %s", strerror(row->errors[store]));
		return buf;
	}
	if (row->flags & VT_ROW_EXITED)
		return "not read before it exited";
	if (t->replay)
		return "not in the recording";
	if (row->flags & VT_ROW_KTHREAD)
		return "none: a kernel thread runs no program";
	if (row->state == 'Z')
		return "none: a zombie has no program left (it exited; its parent has not reaped it)";
	if (geteuid() != 0 && row->uid != geteuid())
		return "not shown to us: another user's process (permission denied, EACCES)";
	if (store == VMON_STORE_PROC_ENV && !row->stores[store])
		return "reading...";
	return "not known: the library gave no value and no reason";
}

static void add_field(page_t *p, const tui_t *t, const char *what, const vt_row_t *row, int store, int sym)
{
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[store];
	const vmon_field_t *f = &desc->fields[sym];
	char buf[4096];

	if (vmon_field_present(desc, f, row->stores[store])) {
		vmon_field_format(f, row->stores[store], buf, sizeof(buf), 0);
		page_add(p, "%-18s %s", what, buf[0] ? buf : "(none)");
	} else {
		page_add(p, "%-18s %s", what, no_value_why(t, row, store, buf, sizeof(buf)));
	}
}

/* a thread has no executable of its own: its process's */
static void add_exe(page_t *p, const tui_t *t, const vt_row_t *row)
{
	const vt_row_t *proc = (row->flags & VT_ROW_THREAD) && row->parent >= 0 ? &t->snap->rows[row->parent] : NULL;
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_STAT];
	const vmon_field_t *exe = &desc->fields[VMON_PROC_STAT_EXE];
	char buf[4096];

	if (proc && !vmon_field_present(desc, exe, row->stores[VMON_STORE_PROC_STAT])) {
		if (vmon_field_present(desc, exe, proc->stores[VMON_STORE_PROC_STAT]) &&
		    vmon_field_format(exe, proc->stores[VMON_STORE_PROC_STAT], buf, sizeof(buf), 0) >= 0)
			page_add(p, "%-18s %s (its process's, %d)", "Executable:", buf, proc->pid);
		else
			page_add(p, "%-18s see its process, %d", "Executable:", proc->pid);
		return;
	}
	add_field(p, t, "Executable:", row, VMON_STORE_PROC_STAT, VMON_PROC_STAT_EXE);
}

/*
 * The kernel prints 0 for the wait channel of a task that is running, of
 * another user's task (to an unprivileged reader), and of one whose sleep
 * it cannot place: each said in words, not as 0.
 */
static void add_wchan(page_t *p, const tui_t *t, const vt_row_t *row)
{
	const vmon_proc_stat_t *s = row->stores[VMON_STORE_PROC_STAT];
	const vmon_store_desc_t *desc = &vmon_proc_store_descs[VMON_STORE_PROC_STAT];
	const char *w = "Waiting in:";

	if (!vmon_field_present(desc, &desc->fields[VMON_PROC_STAT_WCHAN], s) ||
	    (s->wchan.len > 1 && strcmp(s->wchan.array, "0"))) {
		add_field(p, t, w, row, VMON_STORE_PROC_STAT, VMON_PROC_STAT_WCHAN);
	} else if (row->flags & VT_ROW_EXITED) {
		page_add(p, "%-18s nothing: it has exited", w);
	} else if (row->state == 'R') {
		page_add(p, "%-18s nothing: it is running", w);
	} else if (row->state == 'Z') {
		page_add(p, "%-18s nothing: a zombie (it exited; its parent has not reaped it)", w);
	} else if (!t->replay && geteuid() != 0 && row->uid != geteuid()) {
		page_add(p, "%-18s not shown to us: another user's process (the kernel gives 0 for it)", w);
	} else {
		page_add(p, "%-18s not known: the kernel gives 0 (state %c: it could not tell where the task sleeps)", w,
			 row->state);
	}
}

static void details_page(tui_t *t, page_t *p, const vt_row_t *row, int index)
{
	const vt_snapshot_t *snap = t->snap;
	const vmon_proc_stat_t *s = row->stores[VMON_STORE_PROC_STAT];
	const vmon_proc_env_t *env = row->stores[VMON_STORE_PROC_ENV];
	char buf[4096], a[32], b[32], c[32];
	int col, n = 0;

	page_add(p, "PID %d   parent %d   user %s (%u)   state %c (%s)%s", row->pid, row->ppid, row->user,
		 (unsigned)row->uid, row->state, state_name(row->state), (row->flags & VT_ROW_THREAD) ? "   thread" :
		 (row->flags & VT_ROW_KTHREAD) ? "   kernel thread" : "");
	if (row->flags & VT_ROW_EXITED) {
		if (row->exit_code >= 0 && WIFSIGNALED(row->exit_code))
			page_add(p, "Exited, killed by SIG%s, %d refresh(es) ago", vt_signal_name(WTERMSIG(row->exit_code)),
				 row->exited_age);
		else if (row->exit_code >= 0)
			page_add(p, "Exited with status %d, %d refresh(es) ago", WEXITSTATUS(row->exit_code),
				 row->exited_age);
		else
			page_add(p, "Exited %d refresh(es) ago (its exit status was not seen%s)", row->exited_age,
				 snap->feed_active ? "" : ": no event feed");
	}
	col = vt_column_find("time");
	vt_column_format(&vt_columns[col], row, snap, a, sizeof(a), false);
	col = vt_column_find("started");
	vt_column_format(&vt_columns[col], row, snap, b, sizeof(b), false);
	page_add(p, "CPU %.1f%%   CPU time %s   started %s   threads %lld   nice %lld   priority %lld", row->cpu_pct,
		 a, b, s ? s->num_threads : 0, s ? s->nice : 0, s ? s->priority : 0);
	vt_format_size(a, sizeof(a), s ? (double)s->vsize : 0);
	/* resident as the RES and MEM% columns have it (statm's) */
	if (vt_column_format(&vt_columns[vt_column_find("res")], row, snap, b, sizeof(b), false) < 0)
		snprintf(b, sizeof(b), "-");
	if (vt_column_format(&vt_columns[vt_column_find("mem_percent")], row, snap, c, sizeof(c) - 1, false) < 0)
		snprintf(c, sizeof(c), "-");
	else
		strcat(c, "%");
	page_add(p, "Memory: virtual %s   resident %s (%s of RAM)", a, b, c);
	if (s) {
		add_field(p, t, "Name:", row, VMON_STORE_PROC_STAT, VMON_PROC_STAT_COMM);
		add_exe(p, t, row);
		add_wchan(p, t, row);
	}
	add_field(p, t, "Working directory:", row, VMON_STORE_PROC_ENV, VMON_PROC_ENV_CWD);
	add_field(p, t, "Root directory:", row, VMON_STORE_PROC_ENV, VMON_PROC_ENV_ROOT);
	page_add(p, "%s", "");
	if (s && s->argc > 0 && s->argv) {
		page_add(p, "Command line (%d argument%s):", s->argc, s->argc == 1 ? "" : "s");
		for (int i = 0; i < s->argc && s->argv[i]; i++) {
			escaped(buf, sizeof(buf), s->argv[i], strlen(s->argv[i]));
			page_add(p, "  [%d] %s", i, buf);
		}
	} else {
		page_add(p, "Command line: %s", (row->flags & VT_ROW_THREAD) ? "its process's" :
			 (row->flags & VT_ROW_KTHREAD) ? "none: a kernel thread runs no program" :
			 row->state == 'Z' ? "none left: a zombie's memory is gone" :
			 no_value_why(t, row, VMON_STORE_PROC_STAT, buf, sizeof(buf)));
	}
	page_add(p, "%s", "");
	if (env && vmon_field_present(&vmon_proc_store_descs[VMON_STORE_PROC_ENV],
				      &vmon_proc_store_descs[VMON_STORE_PROC_ENV].fields[VMON_PROC_ENV_ENVV], env)) {
		page_add(p, "Environment (%d variable%s):", env->envc, env->envc == 1 ? "" : "s");
		for (int i = 0; i < env->envc && env->envv[i]; i++) {
			escaped(buf, sizeof(buf), env->envv[i], strlen(env->envv[i]));
			page_add(p, "  %s", buf);
		}
	} else if (row->errors[VMON_STORE_PROC_ENV]) {
		page_add(p, "Environment: not readable: %s", strerror(row->errors[VMON_STORE_PROC_ENV]));
	} else if (row->flags & VT_ROW_EXITED) {
		page_add(p, "Environment: not read before it exited");
	} else {
		page_add(p, "Environment: reading...");
	}
	page_add(p, "%s", "");
	for (int i = 0; i < snap->rows_nr; i++)
		n += snap->rows[i].parent == index && !(snap->rows[i].flags & VT_ROW_THREAD);
	page_add(p, "Children (%d):", n);
	for (int i = 0; i < snap->rows_nr; i++) {
		const vt_row_t *r = &snap->rows[i];

		if (r->parent == index && !(r->flags & VT_ROW_THREAD))
			page_add(p, "  %7d %c %s%s", r->pid, r->state, r->command,
				 (r->flags & VT_ROW_EXITED) ? "  (exited)" : "");
	}
	n = 0;
	for (int i = 0; i < snap->rows_nr; i++)
		n += snap->rows[i].parent == index && (snap->rows[i].flags & VT_ROW_THREAD);
	if (n) {
		page_add(p, "Threads (%d):", n);
		for (int i = 0; i < snap->rows_nr; i++) {
			const vt_row_t *r = &snap->rows[i];

			if (r->parent == index && (r->flags & VT_ROW_THREAD))
				page_add(p, "  %7d %c %s  %.1f%%", r->pid, r->state, r->command, r->cpu_pct);
		}
	}
	for (int i = 0; i < VMON_STORE_PROC_NR; i++) {
		if (row->errors[i] && i != VMON_STORE_PROC_ENV)
			page_add(p, "Could not read %s: %s", vmon_proc_store_descs[i].name, strerror(row->errors[i]));
	}
}

static void details_title(tui_t *t, char *buf, size_t size)
{
	snprintf(buf, size, " Process %d", t->detail.pid);
}

static void details_draw(tui_t *t)
{
	int index = vt_snapshot_find(t->snap, t->detail.pid, t->detail.start);
	page_t p = { 0 };

	if (index < 0)
		page_add(&p, "Process %d is no longer there (it exited, and its exited row has gone).", t->detail.pid);
	else
		details_page(t, &p, &t->snap->rows[index], index);
	page_draw(t, &details_scroll, &p, " Esc q Enter: back   k: kill   Up Down PgUp PgDn: scroll");
	page_free(&p);
}

static panel_next_t details_key(tui_t *t, int ch)
{
	if (ch == 'k' || ch == KEY_F(9)) {
		int line = vt_view_find_line(&t->view, t->snap, t->detail.pid);

		close_details(t);
		if (line >= 0) {
			vt_view_pick(&t->view, t->snap, line);
			screens_open_kill(t);
		}
		return PANEL_CLOSE;
	}
	if (page_key(&details_scroll, ch) || ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		close_details(t);
		return PANEL_CLOSE;
	}
	return PANEL_STAY;
}

const panel_t details_panel = { "details", false, details_title, details_draw, details_key };

/* --- the event log --- */

/*
 * Two rings: every event (the last TUI_EVENTS_MAX), and, while the list is
 * filtered, what the filter matches, kept as it arrives.  The log was the
 * first ring filtered when shown: in a fork storm, fifty matching runs were
 * "nothing that matches the filter yet" while their exited rows were on the
 * list, the storm having pushed them out.  A match is the whole story of a
 * process: its fork (which carries its parent's name) and the execs before
 * the one that matched, found back in the first ring, then every event of
 * that life of its pid until its exit.
 */

/* Linux's highest pid (PID_MAX_LIMIT on 64-bit): a bit each, for the lives that matched */
#define PID_LIMIT	(4 * 1024 * 1024)
/* how far back in the whole log the fork of a match is looked for */
#define FORK_LOOKBACK	1024

static void ring_push(vt_event_t *ring, int *nr, int *head, const vt_event_t *e)
{
	ring[*head] = *e;
	*head = (*head + 1) % TUI_EVENTS_MAX;
	if (*nr < TUI_EVENTS_MAX)
		(*nr)++;
}

/* the k-th newest event of a ring, 0 the newest */
static const vt_event_t *ring_at(const vt_event_t *ring, int head, int k)
{
	return &ring[(head - 1 - k + 2 * TUI_EVENTS_MAX) % TUI_EVENTS_MAX];
}

static bool filtering(const tui_t *t)
{
	return t->view.filter[0] && t->view.filter_ok;
}

static bool event_matches(const tui_t *t, const vt_event_t *e)
{
	char text[sizeof(e->comm) + sizeof(e->file) + sizeof(e->args) + 3];

	snprintf(text, sizeof(text), "%s %s %s", e->comm, e->args, e->file);
	return vt_view_text_matches(&t->view, text);
}

static bool pid_matched(const tui_t *t, int pid)
{
	return pid > 0 && pid < PID_LIMIT && (t->matched_pids[pid / 8] & (1 << (pid % 8)));
}

static void set_pid_matched(tui_t *t, int pid, bool on)
{
	if (pid <= 0 || pid >= PID_LIMIT)
		return;
	if (on)
		t->matched_pids[pid / 8] |= (unsigned char)(1 << (pid % 8));
	else
		t->matched_pids[pid / 8] &= (unsigned char)~(1 << (pid % 8));
}

static void keep_match(tui_t *t, const vt_event_t *e)
{
	if (t->matches_nr == TUI_EVENTS_MAX)
		t->matches_dropped++;
	ring_push(t->matches, &t->matches_nr, &t->matches_head, e);
}

/* e, the k-th newest of the whole log, against the filter */
static void match_event(tui_t *t, const vt_event_t *e, int k)
{
	bool text = event_matches(t, e);

	if (e->kind == 'N')
		set_pid_matched(t, e->pid, false);	/* a new life of the pid */
	if (text && e->kind == 'E' && !pid_matched(t, e->pid)) {
		int before[8], nr = 0;

		/* the fork and the execs of this life before this one, oldest first */
		for (int j = k + 1; j < t->events_nr && j <= k + FORK_LOOKBACK; j++) {
			const vt_event_t *f = ring_at(t->events, t->events_head, j);

			if (f->pid != e->pid)
				continue;
			if (f->kind == 'X')
				break;
			if (nr < 8)
				before[nr++] = j;
			if (f->kind == 'N')
				break;
		}
		while (nr > 0)
			keep_match(t, ring_at(t->events, t->events_head, before[--nr]));
	}
	if (text || pid_matched(t, e->pid)) {
		keep_match(t, e);
		set_pid_matched(t, e->pid, true);
	}
	if (e->kind == 'X')
		set_pid_matched(t, e->pid, false);
}

/*
 * The ring of matches, for the list's filter as it is now: started again
 * from the whole log when the filter changed.  False without a filter (or
 * without the memory for the ring).
 */
static bool matches_sync(tui_t *t)
{
	if (!filtering(t)) {
		t->matches_filter[0] = '\0';	/* events arrive unmatched: stale for any filter */
		return false;
	}
	if (t->matches && !strcmp(t->matches_filter, t->view.filter) && t->matches_regex == t->view.filter_regex)
		return true;
	if (!t->matches)
		t->matches = calloc(TUI_EVENTS_MAX, sizeof(*t->matches));
	if (!t->matched_pids)
		t->matched_pids = calloc(PID_LIMIT / 8, 1);
	if (!t->matches || !t->matched_pids)
		return false;
	memset(t->matched_pids, 0, PID_LIMIT / 8);
	t->matches_nr = 0;
	t->matches_head = 0;
	t->matches_dropped = 0;
	snprintf(t->matches_filter, sizeof(t->matches_filter), "%s", t->view.filter);
	t->matches_regex = t->view.filter_regex;
	for (int k = t->events_nr - 1; k >= 0; k--)
		match_event(t, ring_at(t->events, t->events_head, k), k);
	return true;
}

static void log_event(tui_t *t, const vt_event_t *e, bool filtered)
{
	ring_push(t->events, &t->events_nr, &t->events_head, e);
	if (filtered)
		match_event(t, e, 0);
}

/*
 * After each snapshot: without the feed, the differences it found; with it,
 * the feed's events, taken from the sampler's ring (they do not travel in
 * snapshots, so a snapshot the screen skipped loses none of them).
 */
void screens_add_events(tui_t *t, const vt_snapshot_t *snap)
{
	bool filtered = matches_sync(t);
	vt_event_t batch[128];
	unsigned long long dropped;
	int n;

	for (int i = 0; i < snap->events_nr; i++)
		log_event(t, &snap->events[i], filtered);
	do {
		n = vt_sampler_take_events(t->sampler, batch, 128, &dropped);
		t->events_dropped += dropped;
		for (int i = 0; i < n; i++)
			log_event(t, &batch[i], filtered);
	} while (n == 128);
}

void screens_clear_events(tui_t *t)
{
	t->events_nr = 0;
	t->events_head = 0;
	t->events_dropped = 0;
	t->matches_nr = 0;
	t->matches_head = 0;
	t->matches_dropped = 0;
	if (t->matched_pids)
		memset(t->matched_pids, 0, PID_LIMIT / 8);
}

static void event_line(page_t *p, const vt_event_t *e)
{
	time_t when = (time_t)e->when;
	char ts[16], status[48] = "";
	struct tm tm;

	localtime_r(&when, &tm);
	strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
	if (e->kind == 'X' && e->exit_code >= 0 && WIFSIGNALED(e->exit_code))
		snprintf(status, sizeof(status), "  killed by SIG%s", vt_signal_name(WTERMSIG(e->exit_code)));
	else if (e->kind == 'X' && e->exit_code >= 0)
		snprintf(status, sizeof(status), "  exit code %d", WEXITSTATUS(e->exit_code));
	if (e->kind == 'E')
		page_add(p, "%s.%03d exec  %7d ppid %-7d %s  %s  [%s]", ts, (int)((e->when - (double)when) * 1000),
			 e->pid, e->ppid, e->comm, e->args, e->file);
	else
		page_add(p, "%s.%03d %-5s %7d ppid %-7d %s%s", ts, (int)((e->when - (double)when) * 1000),
			 e->kind == 'X' ? "exit" : e->from_feed ? "fork" : "new", e->pid, e->ppid, e->comm, status);
}

/* the matches newest first: a fork found back when its exec matched came into the ring after later events */
static int newer_first(const void *a, const void *b, void *arg)
{
	const tui_t *t = arg;
	int x = *(const int *)a, y = *(const int *)b;
	double wx = ring_at(t->matches, t->matches_head, x)->when, wy = ring_at(t->matches, t->matches_head, y)->when;

	if (wx != wy)
		return wx < wy ? 1 : -1;
	return (x > y) - (x < y);
}

static int events_scroll;

void screens_open_events(tui_t *t)
{
	events_scroll = 0;
	tui_open(t, &events_panel);
}

static void events_title(tui_t *t, char *buf, size_t size)
{
	bool filtered = matches_sync(t);

	snprintf(buf, size, " Event log (feed: %s): newest first%s%s%s", t->snap->feed[0] ? t->snap->feed : "none",
		 filtered ? "; filter: " : "", filtered ? t->view.filter : "", t->paused ? "; PAUSED" : "");
}

static void events_draw(tui_t *t)
{
	bool filtered = matches_sync(t);
	page_t p = { 0 };
	int *order = NULL;

	if (!t->snap->feed_active) {
		if (t->snap->feed_why[0])
			page_add(&p, "No event feed: %s.", t->snap->feed_why);
		page_add(&p, "Without the event feed these are the processes found new or gone by comparing samples");
		page_add(&p, "(every %g s); a process that lived between two samples is not seen.", t->cfg->delay);
		page_add(&p, "%s", "");
	}
	if (t->events_dropped)
		page_add(&p, "%llu events came faster than the screen took them: not shown", t->events_dropped);
	if (filtering(t) && !filtered)
		page_add(&p, "no memory to keep what the filter matches: every event is shown");
	if (filtered && t->matches_dropped)
		page_add(&p, "%llu older matching events dropped: more than %d matched", t->matches_dropped, TUI_EVENTS_MAX);
	if (filtered && (order = malloc(sizeof(*order) * (size_t)(t->matches_nr + 1)))) {
		for (int k = 0; k < t->matches_nr; k++)
			order[k] = k;
		qsort_r(order, (size_t)t->matches_nr, sizeof(*order), newer_first, t);
		for (int k = 0; k < t->matches_nr; k++)
			event_line(&p, ring_at(t->matches, t->matches_head, order[k]));
		free(order);
	} else if (!filtered) {
		for (int k = 0; k < t->events_nr; k++)
			event_line(&p, ring_at(t->events, t->events_head, k));
	}
	if (filtered ? !t->matches_nr : !t->events_nr)
		page_add(&p, filtered ? "nothing that matches the filter yet" : "nothing yet");
	page_draw(t, &events_scroll, &p, " Esc q e: back   c: clear   Z: pause   Up Down PgUp PgDn: scroll");
	page_free(&p);
}

static panel_next_t events_key(tui_t *t, int ch)
{
	if (ch == 'Z' || ch == 'z')
		tui_toggle_pause(t);
	else if (ch == 'c')
		screens_clear_events(t);
	else if (page_key(&events_scroll, ch) || ch == 'e')
		return PANEL_CLOSE;
	return PANEL_STAY;
}

const panel_t events_panel = { "events", false, events_title, events_draw, events_key };

/* --- dialogs --- */

/* the processes a kill or renice is for: the tagged ones, else the selected one */
static bool take_targets(tui_t *t)
{
	const vt_row_t *sel = tui_selected(t);
	int nr = t->view.tagged_nr ? t->view.tagged_nr : sel ? 1 : 0;

	free(t->targets);
	t->targets = NULL;
	t->targets_nr = 0;
	if (!nr)
		return false;
	if (!t->view.tagged_nr && (sel->flags & VT_ROW_EXITED)) {
		tui_message(t, true, "%d has exited: there is nothing to signal or renice", sel->pid);
		return false;
	}
	t->targets = calloc((size_t)nr, sizeof(*t->targets));
	if (!t->targets)
		return false;
	for (int k = 0; k < nr; k++) {
		vt_key_t key = t->view.tagged_nr ? t->view.tagged[k] : (vt_key_t){ sel->pid, sel->start };
		int i = vt_snapshot_find(t->snap, key.pid, key.start);

		t->targets[k].pid = key.pid;
		t->targets[k].start = key.start;
		t->targets[k].thread = i >= 0 && (t->snap->rows[i].flags & VT_ROW_THREAD);
	}
	t->targets_nr = nr;
	return true;
}

static int target_pidfd(const tui_target_t *target)
{
	return vmon_pidfd_open(target->pid, target->start, target->thread ? PIDFD_THREAD : 0);
}

/*
 * Has the target gone?  The newest snapshot says so for any number; for a
 * few, the process itself is asked too, so that a dialog open on a paused
 * screen still says it.
 */
static bool target_gone(const tui_t *t, int k)
{
	int i = vt_snapshot_find(t->snap, t->targets[k].pid, t->targets[k].start), fd;

	if (i < 0 || (t->snap->rows[i].flags & VT_ROW_EXITED))
		return true;
	if (t->targets_nr > 32)
		return false;
	fd = target_pidfd(&t->targets[k]);
	if (fd >= 0)
		close(fd);
	return fd < 0 && errno == ESRCH;
}

/* "1234 (sleep)", "1234 (sleep), which has exited" or "3 tagged processes, 1 of them exited" */
static void targets_text(const tui_t *t, char *buf, size_t size)
{
	int i, gone = 0;

	if (t->targets_nr != 1) {
		for (int k = 0; k < t->targets_nr; k++)
			gone += target_gone(t, k);
		snprintf(buf, size, "%d tagged processes", t->targets_nr);
		if (gone)
			snprintf(buf + strlen(buf), size - strlen(buf), ", %d of them exited", gone);
		return;
	}
	i = vt_snapshot_find(t->snap, t->targets[0].pid, t->targets[0].start);
	snprintf(buf, size, "%d (%.40s)%s", t->targets[0].pid, i >= 0 ? t->snap->rows[i].command : "?",
		 target_gone(t, 0) ? ", which has exited" : "");
}

#define SIGNALS_NR 31

void screens_open_kill(tui_t *t)
{
	if (!take_targets(t))
		return;
	t->menu = MENU_KILL;
	t->menu_sel = SIGTERM - 1;
	t->menu_top = 0;
	t->menu_typed = 0;
	tui_open(t, &menu_panel);
}

void screens_open_renice(tui_t *t, int delta)
{
	int i;

	if (!take_targets(t))
		return;
	i = vt_snapshot_find(t->snap, t->targets[0].pid, t->targets[0].start);
	t->nice_value = i >= 0 && t->snap->rows[i].stores[VMON_STORE_PROC_STAT] ?
			(int)((vmon_proc_stat_t *)t->snap->rows[i].stores[VMON_STORE_PROC_STAT])->nice : 0;
	t->nice_value += delta;
	if (t->nice_value < -20)
		t->nice_value = -20;
	if (t->nice_value > 19)
		t->nice_value = 19;
	t->menu = MENU_RENICE;
	tui_open(t, &menu_panel);
}

void screens_open_sort(tui_t *t)
{
	t->menu = MENU_SORT;
	t->menu_sel = vt_view_sort_col(&t->view);
	t->menu_top = 0;
	tui_open(t, &menu_panel);
}

static int uid_cmp(const void *a, const void *b)
{
	uid_t x = *(const uid_t *)a, y = *(const uid_t *)b;

	return (x > y) - (x < y);
}

void screens_open_user(tui_t *t)
{
	uid_t *u = malloc(sizeof(*u) * (size_t)(t->snap->rows_nr + 1));
	int nr = 0;

	if (!u)
		return;
	for (int i = 0; i < t->snap->rows_nr; i++)
		u[nr++] = t->snap->rows[i].uid;
	qsort(u, (size_t)nr, sizeof(*u), uid_cmp);
	free(t->users);
	t->users = u;
	t->users_nr = 0;
	for (int i = 0; i < nr; i++) {
		if (t->users_nr == 0 || u[t->users_nr - 1] != u[i])
			u[t->users_nr++] = u[i];
	}
	t->menu = MENU_USER;
	t->menu_sel = 0;
	t->menu_top = 0;
	tui_open(t, &menu_panel);
}

/* the entries of a list dialog */
static int menu_count(const tui_t *t)
{
	switch (t->menu) {
	case MENU_KILL:
		return SIGNALS_NR;
	case MENU_SORT:
		return vt_columns_nr;
	case MENU_USER:
		return t->users_nr + 1;
	default:
		return 0;
	}
}

static void menu_entry(const tui_t *t, int i, char *buf, size_t size)
{
	switch (t->menu) {
	case MENU_KILL:
		snprintf(buf, size, "%2d SIG%s", i + 1, vt_signal_name(i + 1));
		break;
	case MENU_SORT:
		snprintf(buf, size, "%-10s %s", vt_columns[i].label, vt_columns[i].desc);
		break;
	case MENU_USER: {
		char name[64];

		if (i == 0)
			snprintf(buf, size, "all users");
		else
			snprintf(buf, size, "%s (%u)", tui_user_name(t, t->users[i - 1], name, sizeof(name)),
				 (unsigned)t->users[i - 1]);
		break;
	}
	default:
		buf[0] = '\0';
	}
}

static void menu_draw(tui_t *t)
{
	int h = LINES, w = COLS, bw, bh, by, bx, n = menu_count(t);
	char title[160], what[80], line[256];
	int attr = t->attrs[C_DIALOG];

	targets_text(t, what, sizeof(what));
	if (t->menu == MENU_CONFIRM || t->menu == MENU_RENICE) {
		if (t->menu == MENU_CONFIRM)
			snprintf(line, sizeof(line), "Send SIG%s to %s?  y: yes  n Esc: no", vt_signal_name(t->signal), what);
		else
			snprintf(line, sizeof(line), "Renice %s to %d?  F7 -: lower  F8 +: higher  Enter: yes  Esc: no",
				 what, t->nice_value);
		bw = tui_text_width(line) + 4;
		if (bw > w)
			bw = w;
		bh = h >= 3 ? 3 : h;
		by = (h - bh) / 2;
		bx = (w - bw) / 2;
		tui_box(by, bx, bh, bw, t->menu == MENU_CONFIRM ? " Confirm " : " Renice ", attr);
		attron(attr);
		tui_text(by + (bh > 1), bx + (bw > 2 ? 2 : 0), bw - (bw > 4 ? 4 : 0), line, 0);
		attroff(attr);
		return;
	}
	if (t->menu == MENU_KILL)
		snprintf(title, sizeof(title), " Send a signal to %s ", what);
	else if (t->menu == MENU_SORT)
		snprintf(title, sizeof(title), " Sort by ");
	else
		snprintf(title, sizeof(title), " Show the processes of ");
	bw = t->menu == MENU_SORT ? 60 : 40;
	if (bw < tui_text_width(title) + 4)
		bw = tui_text_width(title) + 4;
	if (bw > w)
		bw = w;
	bh = n + 2 < h - 2 ? n + 2 : h - 2;
	if (bh < 3)
		bh = h < 3 ? h : 3;
	by = (h - bh) / 2;
	bx = (w - bw) / 2;
	tui_box(by, bx, bh, bw, title, attr);
	if (t->menu_sel < t->menu_top)
		t->menu_top = t->menu_sel;
	if (t->menu_sel >= t->menu_top + bh - 2)
		t->menu_top = t->menu_sel - (bh - 2) + 1;
	for (int i = 0; i < bh - 2 && t->menu_top + i < n; i++) {
		int e = t->menu_top + i, a = e == t->menu_sel ? t->attrs[C_SELECTED] : attr;

		menu_entry(t, e, line, sizeof(line));
		tui_fill(by + 1 + i, bx + 1, bw - 2, a);
		attron(a);
		tui_text(by + 1 + i, bx + 2, bw - 4, line, 0);
		attroff(a);
	}
}

/* the ways an action on a target can end, besides an errno */
enum { ACT_DONE = 0, ACT_RENICE_RACED = -1 };

/* a signal through the process's pidfd: never to another process that took its pid */
static int do_kill(const tui_target_t *target, int sig)
{
	int fd = target_pidfd(target), err = 0;

	if (fd < 0)
		return errno;
	/* a thread row's signal is for its process, as kill(2) of a thread id is */
	if (syscall(SYS_pidfd_send_signal, fd, sig, NULL, target->thread ? PIDFD_SIGNAL_THREAD_GROUP : 0) < 0)
		err = errno;
	close(fd);
	return err;
}

/* setpriority() takes a pid: the identity checked before, and the process asked after whether it is still there */
static int do_renice(const tui_target_t *target, int nice_value)
{
	int fd = target_pidfd(target), err = ACT_DONE;

	if (fd < 0)
		return errno;
	if (setpriority(PRIO_PROCESS, (id_t)target->pid, nice_value) < 0)
		err = errno;
	/* reaped meanwhile: the pid could have been another's when it was reniced */
	if (syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) < 0 && errno == ESRCH)
		err = err == ESRCH ? ESRCH : ACT_RENICE_RACED;
	close(fd);
	return err;
}

/*
 * act(target, arg) on each target; the failures, each with its pid and
 * reason, into errors.  Returns how many succeeded.
 */
static int each_target(tui_t *t, int (*act)(const tui_target_t *, int), int arg, char *errors, size_t size)
{
	int done = 0;

	errors[0] = '\0';
	for (int k = 0; k < t->targets_nr; k++) {
		int err = act(&t->targets[k], arg), pid = t->targets[k].pid;
		size_t len = strlen(errors);
		const char *sep = len ? "; " : "";

		if (err == ACT_DONE)
			done++;
		else if (err == ESRCH)
			snprintf(errors + len, size - len, "%s%d: it has exited", sep, pid);
		else if (err == ENOSYS)
			snprintf(errors + len, size - len, "%s%d: this kernel has no pidfd_open() (Linux 5.3): it "
				 "cannot be reached for sure, so it was not", sep, pid);
		else if (err == ACT_RENICE_RACED)
			snprintf(errors + len, size - len, "%s%d: it exited while being reniced (the pid may have "
				 "been another process's by then)", sep, pid);
		else
			snprintf(errors + len, size - len, "%s%d: %s", sep, pid, strerror(err));
	}
	/* show the result at the next sample, not a refresh later */
	vt_sampler_sample_now(t->sampler);
	return done;
}

static void send_signal(tui_t *t)
{
	char errors[400];
	int sent = each_target(t, do_kill, t->signal, errors, sizeof(errors));

	if (errors[0])
		tui_message(t, true, "kill SIG%s: %s%s", vt_signal_name(t->signal), errors,
			    sent ? " (sent to the others)" : "");
	else
		tui_message(t, false, "sent SIG%s to %d process%s", vt_signal_name(t->signal), sent, sent == 1 ? "" : "es");
}

static void renice(tui_t *t)
{
	char errors[400];
	int done = each_target(t, do_renice, t->nice_value, errors, sizeof(errors));

	if (errors[0])
		tui_message(t, true, "renice to %d: %s%s", t->nice_value, errors, done ? " (the others reniced)" : "");
	else
		tui_message(t, false, "reniced %d process%s to %d", done, done == 1 ? "" : "es", t->nice_value);
}

static void menu_choose(tui_t *t)
{
	switch (t->menu) {
	case MENU_KILL:
		t->signal = t->menu_sel + 1;
		t->menu = MENU_CONFIRM;
		return;
	case MENU_SORT:
		vt_view_set_sort(&t->view, t->menu_sel, vt_columns[t->menu_sel].kind == VT_VALUE_NUMBER);
		tui_rebuild(t);
		break;
	case MENU_USER:
		t->view.user_set = t->menu_sel > 0;
		if (t->menu_sel > 0)
			t->view.user_uid = t->users[t->menu_sel - 1];
		tui_rebuild(t);
		break;
	default:
		break;
	}
	t->menu = MENU_NONE;
}

static void menu_key_typed(tui_t *t, int ch)
{
	int n = menu_count(t);

	if (t->menu == MENU_CONFIRM) {
		if (ch == 'y' || ch == 'Y')
			send_signal(t);
		else
			tui_message(t, false, "no signal sent");
		t->menu = MENU_NONE;
		return;
	}
	if (t->menu == MENU_RENICE) {
		switch (ch) {
		case KEY_F(7): case ']': case '-': case KEY_LEFT:
			if (t->nice_value > -20)
				t->nice_value--;
			break;
		case KEY_F(8): case '[': case '+': case KEY_RIGHT:
			if (t->nice_value < 19)
				t->nice_value++;
			break;
		case '\n': case '\r': case KEY_ENTER: case 'y':
			renice(t);
			t->menu = MENU_NONE;
			break;
		case 27: case 'n': case 'q':
			t->menu = MENU_NONE;
			break;
		}
		return;
	}
	switch (ch) {
	case KEY_UP:
		t->menu_sel--;
		break;
	case KEY_DOWN:
		t->menu_sel++;
		break;
	case KEY_PPAGE:
		t->menu_sel -= 10;
		break;
	case KEY_NPAGE:
		t->menu_sel += 10;
		break;
	case KEY_HOME:
		t->menu_sel = 0;
		break;
	case KEY_END:
		t->menu_sel = n - 1;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		menu_choose(t);
		return;
	case 27:
	case 'q':
	case KEY_F(10):
		t->menu = MENU_NONE;
		return;
	default:
		/* the signal menu takes a number typed: 9 for KILL, 1 then 5 for TERM */
		if (t->menu == MENU_KILL && ch >= '0' && ch <= '9') {
			int v = t->menu_typed * 10 + (ch - '0');

			t->menu_typed = v <= SIGNALS_NR ? v : ch - '0';
			if (t->menu_typed >= 1)
				t->menu_sel = t->menu_typed - 1;
			return;
		}
		break;
	}
	t->menu_typed = 0;
	if (t->menu_sel < 0)
		t->menu_sel = 0;
	if (t->menu_sel >= n)
		t->menu_sel = n - 1;
}

static panel_next_t menu_key(tui_t *t, int ch)
{
	menu_key_typed(t, ch);
	return t->menu == MENU_NONE ? PANEL_CLOSE : PANEL_STAY;
}

const panel_t menu_panel = { "menu", true, NULL, menu_draw, menu_key };
