#include "rle.h"

int rle_encode(const char *in, char *out, size_t cap) {
    size_t len = 0;
    while (*in) {
        char c = *in;
        int run = 0;
        while (*in == c && run < 9) {
            in++;
            run++;
        }
        if (len + 3 > cap) {
            return -1;
        }
        out[len++] = (char)('0' + run);
        out[len++] = c;
    }
    if (cap == 0) {
        return -1;
    }
    out[len] = '\0';
    return (int)len;
}
