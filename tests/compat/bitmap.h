/*
 * tests/compat/bitmap.h: a client's own bitmap.h, with the original
 * libvmon's guard and macros (see list.h beside it).
 */
#ifndef _BITMAP_H
#define _BITMAP_H

#include <limits.h>

#define BITMASK(b)	(1 << ((b) % CHAR_BIT))
#define BITSLOT(b)	((b) / CHAR_BIT)
#define BITSET(a, b)	((a)[BITSLOT(b)] |= BITMASK(b))
#define BITCLEAR(a, b)	((a)[BITSLOT(b)] &= ~BITMASK(b))
#define BITTEST(a, b)	((a)[BITSLOT(b)] & BITMASK(b))
#define BITNSLOTS(nb)	(((nb) + CHAR_BIT - 1) / CHAR_BIT)

#endif
