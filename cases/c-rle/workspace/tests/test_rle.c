#include <stdio.h>
#include <string.h>
#include "rle.h"

static int failures = 0;

static void expect(const char *in, const char *want, size_t cap, int want_len) {
    char out[64] = {0};
    int got = rle_encode(in, out, cap);
    if (got != want_len || (want_len >= 0 && strcmp(out, want) != 0)) {
        printf("FAIL rle_encode(\"%s\") = %d \"%s\", want %d \"%s\"\n", in, got, out, want_len, want);
        failures++;
    }
}

int main(void) {
    expect("aaab", "3a1b", 64, 4);
    expect("", "", 64, 0);
    expect("abc", "1a1b1c", 64, 6);
    expect("xxxxxxxxxxxx", "9x3x", 64, 4);
    expect("aaab", "", 4, -1);
    if (failures) {
        printf("%d test(s) failed\n", failures);
        return 1;
    }
    printf("all tests passed\n");
    return 0;
}
