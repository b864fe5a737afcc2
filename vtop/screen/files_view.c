/*
 * files_view.c: the open files of the selected process (key l), as lsof -p
 * lists them: fd, type, access mode, position and target, a socket's
 * addresses and state, and under each pipe and socket the other processes
 * that hold it (their pid, name, fd and access mode), so that both ends of
 * a pipeline can be found from either.
 *
 * The sampler reads open files only while this view is open
 * (vt_sampler_set_files()); the view draws the copy in the newest snapshot
 * (files.c), and marks the fds opened (+) and closed (-) since the sample
 * before.  Everything shown that a process chose (paths, socket names,
 * command names) was escaped when it was copied.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "tui.h"

/* the process shown, the first sample that read its fds, how far down its page is */
static struct {
	vt_key_t		key;
	unsigned long long	first_seq;
	int			scroll;
} fv;

void files_view_open(tui_t *t)
{
	const vt_row_t *row = tui_selected(t);

	if (!row)
		return;
	/* a thread's fds are its process's */
	if (row->flags & VT_ROW_THREAD) {
		int index = row->parent;

		if (index < 0)
			return;
		row = &t->snap->rows[index];
	}
	fv.key.pid = row->pid;
	fv.key.start = row->start;
	fv.first_seq = 0;
	fv.scroll = 0;
	vt_sampler_set_files(t->sampler, row->pid);
	tui_open(t, &files_panel);
}

static void files_view_close(tui_t *t)
{
	vt_sampler_set_files(t->sampler, 0);
}

static void add_file(page_t *p, const vt_file_t *f, bool marks)
{
	char mark = f->closed ? '-' : marks && f->is_new ? '+' : ' ';

	page_add(p, "%c %5d %-8s %-4s %12llu  %s%s%s", mark, f->fd, f->type, f->access, f->pos, f->name,
		 f->socket ? "  " : "", f->socket ? f->socket : "");
	for (int i = 0; i < f->holders_nr; i++) {
		const vt_file_holder_t *h = &f->holders[i];

		page_add(p, "%42s also in %d (%s) as fd %d %s", "", h->pid, h->comm, h->fd, h->access);
	}
	if (f->holders_more)
		page_add(p, "%42s and in %d more", "", f->holders_more);
}

static void files_page(tui_t *t, page_t *p, const vt_files_t *f)
{
	if (!f || f->pid != fv.key.pid || f->pending) {
		page_add(p, "Reading the open files of %d...", fv.key.pid);
		return;
	}
	if (f->gone) {
		page_add(p, "Process %d is no longer there.", fv.key.pid);
		return;
	}
	if (f->error && !f->nr) {
		page_add(p, "Cannot read the open files of %d: %s", fv.key.pid, strerror(f->error));
		if (f->error == EACCES)
			page_add(p, "(it is another user's process, and vtop runs as uid %d)", (int)geteuid());
		return;
	}
	/* the first listing is all new: marks start with the sample after it */
	if (!fv.first_seq)
		fv.first_seq = t->snap->seq;
	page_add(p, "  %5s %-8s %-4s %12s  %s", "FD", "TYPE", "RW", "OFFSET", "NAME");
	for (int i = 0; i < f->nr; i++)
		add_file(p, &f->files[i], t->snap->seq > fv.first_seq);
	if (f->error)
		page_add(p, "(not all could be read: %s)", strerror(f->error));
}

static void files_title(tui_t *t, char *buf, size_t size)
{
	const vt_files_t *f = t->snap->files;
	int index = vt_snapshot_find(t->snap, fv.key.pid, fv.key.start);

	if (f && f->pid == fv.key.pid && !f->pending && !f->gone)
		snprintf(buf, size, " Open files of %d (%s): %d", fv.key.pid,
			 index >= 0 ? t->snap->rows[index].command : "?", f->open_nr);
	else
		snprintf(buf, size, " Open files of %d", fv.key.pid);
}

static void files_draw(tui_t *t)
{
	page_t p = { 0 };

	files_page(t, &p, t->snap->files);
	page_draw(t, &fv.scroll, &p, " Esc q l: back   Up Down PgUp PgDn: scroll   +: opened  -: closed since the last refresh");
	page_free(&p);
}

static panel_next_t files_key(tui_t *t, int ch)
{
	if (page_key(&fv.scroll, ch) || ch == 'l') {
		files_view_close(t);
		return PANEL_CLOSE;
	}
	return PANEL_STAY;
}

const panel_t files_panel = { "files", false, files_title, files_draw, files_key };
