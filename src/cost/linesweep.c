/*
 * linesweep.c - a 1F1B line of one chunk a rank, swept in an order fixed in advance
 * (see cost/linesweep.h).
 */
#include "cost/linesweep.h"

bool ppl_line_sweepable(const ppl_programs *g)
{
    bool ok = g->shape == PPL_SHAPE_LINE && !g->fill && !g->gpipe && g->v == 1;
    for (int64_t k = 0; ok && k < g->p; k++)
        ok = g->len[k] == 2 * g->m && g->warm[k] >= 0 && (k == 0 || g->warm[k] <= g->warm[k - 1]);
    return ok;
}

/* Rank k's forward of microbatch b is its op b (b <= W_k) or 2b - W_k + 1, its
 * backward of b its op W_k + 2b (b < m - W_k) or m + b.  Both fall as W grows, and W_k
 * does not grow with k (ppl_line_sweepable), so each op's input ran at no later index,
 * earlier in the sweep.  The peak in flight goes to rank 0, as in the executor's
 * loop (the most warm-up forwards, all run before any other rank's). */
void ppl_line_sweep_run(ppl_line_sweep *sw)
{
    const int64_t m = sw->m, p = sw->p;
    const int64_t *warm = sw->warm;
    double *free_s = sw->free_s, *held = sw->held, *done_f = sw->done_f, *done_b = sw->done_b;
    int64_t *tf = sw->forwards, *pc = sw->ops;
    double peak = sw->peak_in_flight, time_s = sw->time_s;
    int64_t peak_rank = sw->peak_rank;
    for (int64_t i = 0; i < 2 * m; i++) {
        for (int64_t k = 0; k < p; k++) {
            const int64_t mb = tf[k];
            if (!(mb < m && mb - (i - mb) <= warm[k]))
                continue; /* its op i is a backward */
            /* the input's time, as the executor reads it (rank 0's: 0) */
            const double ready = k > 0 ? done_f[(k - 1) * m + mb] - 1.0 + sw->hop_f[k] : 0.0;
            const double end = (ready > free_s[k] ? ready : free_s[k]) + sw->dur_f[k];
            held[k] += 1.0;
            if (held[k] * sw->frac > peak) {
                peak = held[k] * sw->frac;
                peak_rank = k;
            }
            done_f[k * m + mb] = end + 1.0;
            free_s[k] = end, tf[k] = mb + 1, pc[k] = i + 1;
        }
        for (int64_t k = p - 1; k >= 0; k--) {
            if (pc[k] != i)
                continue; /* its op i was a forward */
            const int64_t mb = i - tf[k];
            const double done = k == p - 1 ? done_f[k * m + mb] : done_b[(k + 1) * m + mb];
            const double ready = done - 1.0 + sw->hop_b[k];
            const double end = (ready > free_s[k] ? ready : free_s[k]) + sw->dur_bw[k];
            held[k] -= 1.0;
            done_b[k * m + mb] = end + 1.0;
            free_s[k] = end, pc[k] = i + 1;
        }
    }
    for (int64_t k = 0; k < p; k++)
        if (free_s[k] > time_s)
            time_s = free_s[k];
    sw->peak_in_flight = peak;
    sw->peak_rank = peak_rank;
    sw->time_s = time_s;
}
