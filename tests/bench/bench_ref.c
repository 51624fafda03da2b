/*
 * bench_ref.c - the benchmark's reference computation (bench_cli.py).
 *
 * A fixed amount of the work the planner does (floating-point arithmetic with
 * divisions and a walk over a few MiB of memory, branches on the data), so that
 * the CPU seconds of a parplan process can be read against what this machine, at
 * this moment, takes for a known job: a loaded or throttled machine slows both.
 * Prints a checksum so that nothing is optimised away.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    enum { CELLS = 1 << 19, ROUNDS = 24 }; /* 4 MiB of doubles, walked 24 times */
    double *a = malloc(CELLS * sizeof *a);
    if (!a)
        return 1;
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < CELLS; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        a[i] = 1.0 + (double)(x >> 11) / 9007199254740992.0;
    }
    double sum = 0.0;
    size_t j = 0;
    for (int r = 0; r < ROUNDS; r++)
        for (size_t i = 0; i < CELLS; i++) {
            j = (j + (size_t)(a[i] * 4099.0)) & (CELLS - 1); /* a data-dependent walk */
            double v = a[j] / (1.0 + a[i]);
            sum += v > 0.75 ? v : 0.5 * v;
            a[i] = 1.0 + (v - (double)(int)v);
        }
    printf("%.17g\n", sum);
    free(a);
    return 0;
}
