/*
 * room.h: when an array (or a byte ring) that a storm grew is made small
 * again.  vtop's arrays grow with what they hold and did not shrink: after
 * a storm of short lives the snapshot's rows, the exited rows, the view's
 * lines and the event log's text kept the storm's room, and the memory
 * stayed.  One rule for all of them: once the use falls under a quarter of
 * the room, the room is cut back to twice the use, never under a least
 * size (the site's first room, or the size under which a cut is not worth
 * a copy).  Twice the use, not the use: a count that wanders a little
 * about the same figure neither grows nor is cut again at the next build,
 * since it must double to grow and halve to be cut.
 */
#ifndef VTOP_DATA_ROOM_H
#define VTOP_DATA_ROOM_H

#include <stddef.h>

/* the room for used (at most room) after a fit: room itself, or less when under a quarter is used */
static inline size_t vt_room_fit(size_t room, size_t used, size_t least)
{
	size_t fit = used * 2 > least ? used * 2 : least;

	if (used >= room / 4 || fit >= room)
		return room;
	return fit;
}

#endif
