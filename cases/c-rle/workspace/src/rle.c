#include "rle.h"

int rle_encode(const char *in, char *out, size_t cap) {
    (void)in;
    (void)out;
    (void)cap;
    return -1; /* TODO: implement */
}
