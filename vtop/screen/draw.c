/*
 * draw.c: text of any width put on the screen, cut at a wide character's
 * edge, never in its middle; lines filled and boxes drawn for the panels.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tui.h"

static int char_width(const char *s, size_t *bytes)
{
	mbstate_t st;
	wchar_t wc;
	size_t n;
	int w;

	memset(&st, 0, sizeof(st));
	n = mbrtowc(&wc, s, MB_CUR_MAX, &st);
	if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
		*bytes = 1;
		return 1;
	}
	*bytes = n;
	w = wcwidth(wc);
	return w < 0 ? 1 : w;
}

int tui_text_width(const char *s)
{
	int w = 0;

	while (*s) {
		size_t n;

		w += char_width(s, &n);
		s += n;
	}
	return w;
}

/*
 * Draw s at (y, x), skipping its first `skip` columns and using at most
 * `width`: the text comes from vmon_escape(), so it is printable, but a
 * wide character must not be cut in half at either end.
 */
int tui_text(int y, int x, int width, const char *s, int skip)
{
	const char *start;
	int col = 0, used = 0;
	size_t n;

	if (width <= 0)
		return 0;
	while (*s && col < skip) {
		col += char_width(s, &n);
		s += n;
	}
	/* a wide character cut by the skip: a blank in its place */
	if (col > skip) {
		mvaddch(y, x++, ' ');
		used++;
	}
	start = s;
	while (*s) {
		int w = char_width(s, &n);

		if (used + w > width)
			break;
		used += w;
		s += n;
	}
	mvaddnstr(y, x, start, (int)(s - start));
	return used;
}

void tui_fill(int y, int x, int width, int attr)
{
	if (width <= 0)
		return;
	attron(attr);
	mvhline(y, x, ' ', width);
	attroff(attr);
}

void tui_box(int y, int x, int h, int w, const char *title, int attr)
{
	attron(attr);
	for (int i = 0; i < h; i++)
		mvhline(y + i, x, ' ', w);
	if (h >= 2 && w >= 2) {
		mvhline(y, x + 1, ACS_HLINE, w - 2);
		mvhline(y + h - 1, x + 1, ACS_HLINE, w - 2);
		mvvline(y + 1, x, ACS_VLINE, h - 2);
		mvvline(y + 1, x + w - 1, ACS_VLINE, h - 2);
		mvaddch(y, x, ACS_ULCORNER);
		mvaddch(y, x + w - 1, ACS_URCORNER);
		mvaddch(y + h - 1, x, ACS_LLCORNER);
		mvaddch(y + h - 1, x + w - 1, ACS_LRCORNER);
	}
	if (title && w > 4)
		tui_text(y, x + 2, w - 4, title, 0);
	attroff(attr);
}
