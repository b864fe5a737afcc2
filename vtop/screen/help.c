/*
 * help.c: the help panel (F1), made from the key table it is given (the
 * list's, process_list.c), so that it cannot leave a key out.
 */
#include "config.h"

#include <stdio.h>

#include "tui.h"

/* the key table shown, and how far down the page is */
static const help_keys_t *help_keys;
static int help_scroll;

static void help_page(page_t *p)
{
	page_add(p, "vtop %s: the process tree, sampled by libvmon. Keys (htop's, and a few more):", PACKAGE_VERSION);
	page_add(p, "%s", "");
	for (int i = 0; i < help_keys->nr; i++) {
		if (help_keys->names(i))
			page_add(p, "  %-12s %s", help_keys->names(i), help_keys->text(i));
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

void help_open(tui_t *t, const help_keys_t *keys)
{
	help_keys = keys;
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
