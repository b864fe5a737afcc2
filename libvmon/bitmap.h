/*
 * bitmap.h: bit arrays in char arrays, as libvmon's `changed` and `present`
 * bitmaps use them.
 *
 *	char bits[BITNSLOTS(n)];	room for n bits
 *	BITSET(bits, i)  BITCLEAR(bits, i)  BITTEST(bits, i)
 */
/* the original libvmon's guard: a client's own copy of its bitmap.h is then harmless */
#ifndef _BITMAP_H
#define _BITMAP_H

#include <limits.h>

#define BITMASK(_bit)		(1 << ((_bit) % CHAR_BIT))
#define BITSLOT(_bit)		((_bit) / CHAR_BIT)
#define BITSET(_bits, _bit)	((_bits)[BITSLOT(_bit)] |= BITMASK(_bit))
#define BITCLEAR(_bits, _bit)	((_bits)[BITSLOT(_bit)] &= ~BITMASK(_bit))
#define BITTEST(_bits, _bit)	((_bits)[BITSLOT(_bit)] & BITMASK(_bit))
#define BITNSLOTS(_nbits)	(((_nbits) + CHAR_BIT - 1) / CHAR_BIT)

#endif
