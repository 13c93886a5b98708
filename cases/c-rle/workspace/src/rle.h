#ifndef RLE_H
#define RLE_H
#include <stddef.h>

/* Run-length encode `in` as count+character pairs: "aaab" -> "3a1b".
 * Runs longer than 9 are split: twelve 'x' -> "9x3x".
 * Writes a NUL-terminated string to `out` (capacity `cap` bytes) and returns its
 * length, or -1 when `out` is too small. An empty input gives "" and 0. */
int rle_encode(const char *in, char *out, size_t cap);

#endif
