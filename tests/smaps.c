/* smaps.c: see smaps.h */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smaps.h"

/* the name after a mapping's first five fields ("from-to perms offset dev inode"), its newline cut */
static const char *map_name(char *line)
{
	char *p = line;

	for (int field = 0; field < 5; field++) {
		p += strspn(p, " \t");
		p += strcspn(p, " \t\n");
	}
	p += strspn(p, " \t");
	p[strcspn(p, "\n")] = '\0';
	return p;
}

int smaps_each(pid_t pid, void (*fn)(const smaps_map_t *map, void *arg), void *arg)
{
	char path[64], *line = NULL, *name = NULL;
	smaps_map_t map = { 0 };
	size_t cap = 0;
	int nr = 0;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/smaps");
	if (!(f = fopen(path, "re")))
		return -1;
	/* getline(): a mapping's line with a long path is one line, not two */
	while (getline(&line, &cap, f) > 0) {
		unsigned long from, to;

		/* a mapping's first line, "from-to perms ...": not a key ("Rss:"), whose first word ends in ':' */
		if (!memchr(line, ':', strcspn(line, " ")) && sscanf(line, "%lx-%lx ", &from, &to) == 2) {
			if (nr++)
				fn(&map, arg);
			free(name);
			name = strdup(map_name(line));
			map = (smaps_map_t){ .name = name ? name : "", .size = to - from };
		} else if (nr && !strncmp(line, "Rss:", 4)) {
			map.rss_kb = strtol(line + 4, NULL, 10);
		}
	}
	if (nr)
		fn(&map, arg);
	free(name);
	free(line);
	fclose(f);
	return nr ? nr : -1;
}
