#include <stdio.h>
#include <string.h>
/* Not the workspace's rle.h: a header of the agent's could rewrite this test with macros.
 * The gate's grep check holds the header to this very prototype. */
int rle_encode(const char *in, char *out, size_t cap);

#ifndef BENCH_NONCE
#define BENCH_NONCE "no-nonce"
#endif

int main(void) {
    char out[8];
    int bad = 0;
    bad |= rle_encode("zzzzzzzzz", out, 8) != 2 || strcmp(out, "9z") != 0;
    bad |= rle_encode("ab", out, 5) != 4 || strcmp(out, "1a1b") != 0;
    bad |= rle_encode("ab", out, 4) != -1;
    bad |= rle_encode("aaaaaaaaaa", out, 8) != 4 || strcmp(out, "9a1a") != 0;
    puts(bad ? "hidden tests failed" : "hidden tests passed");
    if (!bad) puts(BENCH_NONCE); /* last, and only from a test that ran to its end */
    return bad;
}
