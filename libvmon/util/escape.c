/*
 * escape.c: vmon_escape(), for showing text that came from a process.
 *
 * comm, argv, paths and the environment are whatever a process chose, and a
 * terminal obeys escape sequences: a process named "\e]2;...\a" would
 * retitle the window, one with "\e[2J" clear the screen.  So every byte that
 * is not printable text is shown as \xNN: the C0 controls, DEL, a backslash
 * (as \\, so the output reads back unambiguously), invalid UTF-8, and the
 * UTF-8 encodings of the C1 controls (U+0080..U+009F, CSI among them) and
 * of the bidirectional overrides that can make text read other than it is.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>

#include "core/internal.h"

/* length of the valid UTF-8 sequence at s, its code point in *cp; 0 if invalid */
static size_t utf8_sequence(const unsigned char *s, size_t len, unsigned *cp)
{
	unsigned c = s[0], min;
	size_t n;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2; c &= 0x1f; min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3; c &= 0x0f; min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4; c &= 0x07; min = 0x10000;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

static bool code_point_is_control(unsigned cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
	       (cp >= 0x200e && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029 || cp == 0xfeff;
}

/* one byte out, counted even when it no longer fits (the return value is the full length) */
static void emit(char *dst, size_t dst_size, size_t *out, int c)
{
	if (*out + 1 < dst_size)
		dst[*out] = (char)c;
	(*out)++;
}

size_t vmon_escape(char *dst, size_t dst_size, const char *src, size_t src_len, unsigned flags)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	size_t out = 0, i = 0;

	/* nowhere to write is a measure; nothing to read, an empty text */
	if (!dst)
		dst_size = 0;
	if (!src)
		src_len = 0;
	while (i < src_len) {
		unsigned cp = 0;
		size_t n = utf8_sequence(s + i, src_len - i, &cp);

		if (n == 0 || code_point_is_control(cp) || ((flags & VMON_ESCAPE_ASCII) && n > 1)) {
			/* escape every byte of what we refuse to show */
			size_t bytes = n ? n : 1;

			for (size_t b = 0; b < bytes; b++) {
				emit(dst, dst_size, &out, '\\');
				emit(dst, dst_size, &out, 'x');
				emit(dst, dst_size, &out, hex[s[i + b] >> 4]);
				emit(dst, dst_size, &out, hex[s[i + b] & 0xf]);
			}
			i += bytes;
			continue;
		}
		if (cp == '\\')
			emit(dst, dst_size, &out, '\\');
		for (size_t b = 0; b < n; b++)
			emit(dst, dst_size, &out, s[i + b]);
		i += n;
	}
	if (dst_size)
		dst[out < dst_size ? out : dst_size - 1] = '\0';
	return out;
}
