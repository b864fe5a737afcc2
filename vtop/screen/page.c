/*
 * page.c: a scrollable page of lines, what the full-screen panels (help,
 * details, event log, open files) are drawn as, and the keys they share.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tui.h"

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
