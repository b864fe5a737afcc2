/*
 * details.c: the details panel (Enter): a process's command line, exe,
 * cwd, environment, its fields with why one has no value, and its
 * children.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui.h"

/* the process shown, by identity, and how far down its page is */
static struct {
	vt_key_t	key;
	bool		asked;		/* its environment was asked of the sampler */
	int		scroll;
} details;

void details_open(tui_t *t)
{
	const vt_row_t *row = tui_selected(t);

	if (!row)
		return;
	details.key.pid = row->pid;
	details.key.start = row->start;
	details.scroll = 0;
	tui_open(t, &details_panel);
	/* the environment is read for this process only, from the next sample: asked for now */
	vt_sampler_set_detail(t->sampler, row->pid);
	details.asked = true;
}

static void close_details(tui_t *t)
{
	vt_sampler_set_detail(t->sampler, 0);
	details.asked = false;
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

/* as the list escapes its texts (--ascii or not) */
static void escaped(const tui_t *t, char *buf, size_t size, const char *s, size_t len)
{
	vmon_escape(buf, size, s, len, t->snap->escape_flags);
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
	int error = vt_row_errors(row)[store];

	if (error) {
		snprintf(buf, size, "not readable: %s", strerror(error));
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
	if (geteuid() != 0 && vt_row_uid(row) != geteuid())
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
		vmon_field_format(f, row->stores[store], buf, sizeof(buf), t->snap->escape_flags);
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
		    vmon_field_format(exe, proc->stores[VMON_STORE_PROC_STAT], buf, sizeof(buf), t->snap->escape_flags) >= 0)
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
	bool present = vmon_field_present(desc, &desc->fields[VMON_PROC_STAT_WCHAN], s);

	/* read only while something shows it (vt_source_set_detail()): this page asked for the next sample */
	if (!present && !t->snap->wchan_read && !(row->flags & VT_ROW_EXITED)) {
		page_add(p, "%-18s not read yet: from the next refresh on", w);
	} else if (!present || (s->wchan.len > 1 && strcmp(s->wchan.array, "0"))) {
		add_field(p, t, w, row, VMON_STORE_PROC_STAT, VMON_PROC_STAT_WCHAN);
	} else if (row->flags & VT_ROW_EXITED) {
		page_add(p, "%-18s nothing: it has exited", w);
	} else if (row->state == 'R') {
		page_add(p, "%-18s nothing: it is running", w);
	} else if (row->state == 'Z') {
		page_add(p, "%-18s nothing: a zombie (it exited; its parent has not reaped it)", w);
	} else if (!t->replay && geteuid() != 0 && vt_row_uid(row) != geteuid()) {
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
	const unsigned char *errors = vt_row_errors(row);
	char buf[4096], a[32], b[32], c[32];
	int col, n = 0;

	page_add(p, "PID %d   parent %d   user %s (%u)   state %c (%s)%s", row->pid, row->ppid, row->user,
		 (unsigned)vt_row_uid(row), row->state, state_name(row->state), (row->flags & VT_ROW_THREAD) ? "   thread" :
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
			escaped(t, buf, sizeof(buf), s->argv[i], strlen(s->argv[i]));
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
			escaped(t, buf, sizeof(buf), env->envv[i], strlen(env->envv[i]));
			page_add(p, "  %s", buf);
		}
	} else if (errors[VMON_STORE_PROC_ENV]) {
		page_add(p, "Environment: not readable: %s", strerror(errors[VMON_STORE_PROC_ENV]));
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
		if (errors[i] && i != VMON_STORE_PROC_ENV)
			page_add(p, "Could not read %s: %s", vmon_proc_store_descs[i].name, strerror(errors[i]));
	}
}

static void details_title(tui_t *t, char *buf, size_t size)
{
	snprintf(buf, size, " Process %d", details.key.pid);
}

static void details_draw(tui_t *t)
{
	int index = vt_snapshot_find(t->snap, details.key.pid, details.key.start);
	page_t p = { 0 };

	if (!t->snap->seq)
		page_add(&p, "No sample to show: none taken yet, or the last one failed (see the message line).");
	else if (index < 0)
		page_add(&p, "Process %d is no longer there (it exited, and its exited row has gone).", details.key.pid);
	else
		details_page(t, &p, &t->snap->rows[index], index);
	page_draw(t, &details.scroll, &p, " Esc q Enter: back   k: kill   Up Down PgUp PgDn: scroll");
	page_free(&p);
}

static panel_next_t details_key(tui_t *t, int ch)
{
	if (ch == 'k' || ch == KEY_F(9)) {
		/*
		 * This page's process, by pid and start time: not another that
		 * took its pid since (the page shows the one that exited), nor
		 * the processes tagged in the list.
		 */
		vt_key_t key = details.key;
		int line = vt_view_find_line(&t->view, t->snap, key.pid);
		const vt_row_t *row = line >= 0 ? vt_view_row(&t->view, t->snap, line) : NULL;

		close_details(t);
		if (!tui_not_in_replay(t, "its processes are not to be signalled"))
			return PANEL_CLOSE;
		if (row && row->start == key.start)
			vt_view_pick(&t->view, t->snap, line);
		dialog_open_kill_process(t, key);
		return PANEL_CLOSE;
	}
	if (page_key(&details.scroll, ch) || ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		close_details(t);
		return PANEL_CLOSE;
	}
	return PANEL_STAY;
}

const panel_t details_panel = { "details", false, details_title, details_draw, details_key };
