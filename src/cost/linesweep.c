/*
 * linesweep.c - a 1F1B line of one chunk a rank, swept in an order fixed in advance
 * and carried past its transient (see cost/linesweep.h).
 */
#include "cost/linesweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The times rank k's row of done (by microbatch) holds that later ops still read,
 * [*lo, *hi): the ends its neighbour has yet to take, the figures a cycle moves
 * along one microbatch. */
typedef struct window {
    int64_t lo, hi;
} window;

/* Rank k's forwards read by rank k+1's next forwards (the last rank's by its own
 * backwards), and its backwards read by rank k-1's next backwards (none on the
 * first rank). */
static window forward_window(const ppl_line_state *s, int64_t k)
{
    const int64_t *tf = s->forwards;
    if (k + 1 < s->p)
        return (window){tf[k + 1], tf[k]};
    return (window){s->ops - tf[k], tf[k]};
}

static window backward_window(const ppl_line_state *s, int64_t k)
{
    if (k == 0)
        return (window){0, 0};
    return (window){s->ops - s->forwards[k - 1], s->ops - s->forwards[k]};
}

/* Whether the row's window moved by d, within tol, from one microbatch to the
 * next (each entry against the one before it, the cycle's start's). */
static int row_moved(const double *row, window w, double d, double tol)
{
    for (int64_t mb = w.lo; mb < w.hi; mb++)
        if (mb < 1 || !(fabs(row[mb] - row[mb - 1] - d) <= tol))
            return 0;
    return 1;
}

static void row_carry(double *row, window w, int64_t q, double shift_s)
{
    for (int64_t mb = w.hi - 1; mb >= w.lo; mb--) /* from the top: no source overwritten */
        row[mb + q] = row[mb] + shift_s;
}

int64_t ppl_line_steady_carry(ppl_line_state *s, const double *before_s)
{
    const int64_t p = s->p, m = s->m;
    if (p < 1)
        return 0;
    const double d = s->free_s[0] - before_s[0];
    double latest = 0.0;
    int64_t q = m;
    for (int64_t k = 0; k < p; k++) {
        latest = fmax(latest, fabs(s->free_s[k]));
        if (m - s->forwards[k] < q)
            q = m - s->forwards[k];
    }
    const double tol = PPL_STEADY_REL_TOL * latest;
    if (q < 1 || !(d > 0.0))
        return 0;
    for (int64_t k = 0; k < p; k++) {
        if (!(fabs(s->free_s[k] - before_s[k] - d) <= tol) ||
            !row_moved(s->done_f + k * m, forward_window(s, k), d, tol) ||
            !row_moved(s->done_b + k * m, backward_window(s, k), d, tol))
            return 0;
    }
    const double shift_s = (double)q * d;
    for (int64_t k = 0; k < p; k++) {
        row_carry(s->done_f + k * m, forward_window(s, k), q, shift_s);
        row_carry(s->done_b + k * m, backward_window(s, k), q, shift_s);
    }
    for (int64_t k = 0; k < p; k++) { /* after the windows, which read them */
        s->free_s[k] += shift_s;
        s->forwards[k] += q;
    }
    s->ops += 2 * q;
    return q;
}

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
 * loop (the most warm-up forwards, all run before any other rank's).  Past every
 * rank's warm-up (warm[0] the most) the state is looked at a cycle apart, and
 * carried once it repeated; the peak in flight is each cycle's again.  A cycle
 * that did not is looked at again after twice as many cycles as the last wait, so
 * that a line whose transient lasts pays little. */
void ppl_line_sweep_run(ppl_line_sweep *sw)
{
    const int64_t m = sw->m, p = sw->p;
    const int64_t *warm = sw->warm;
    double *free_s = sw->free_s, *held = sw->held, *done_f = sw->done_f, *done_b = sw->done_b;
    int64_t *tf = sw->forwards, *pc = sw->ops;
    double peak = sw->peak_in_flight, time_s = sw->time_s;
    int64_t peak_rank = sw->peak_rank;
    int64_t snap_at = warm[0] + 3, check_at = -1, wait = 1;
    double *before_s = m - snap_at / 2 > 4 ? malloc((size_t)p * sizeof *before_s) : NULL;
    for (int64_t i = 0; i < 2 * m; i++) {
        if (before_s && i == check_at) {
            ppl_line_state ls = {p, m, free_s, done_f, done_b, tf, i};
            const int64_t q = ppl_line_steady_carry(&ls, before_s);
            if (q > 0) {
                i = ls.ops;
                sw->cycles_carried += q;
                for (int64_t k = 0; k < p; k++)
                    pc[k] = i;
                free(before_s), before_s = NULL;
            } else {
                snap_at = i + 2 * wait, wait *= 2;
            }
        }
        if (before_s && i == snap_at) {
            memcpy(before_s, free_s, (size_t)p * sizeof *before_s);
            check_at = i + 2;
        }
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
    free(before_s);
    for (int64_t k = 0; k < p; k++)
        if (free_s[k] > time_s)
            time_s = free_s[k];
    sw->peak_in_flight = peak;
    sw->peak_rank = peak_rank;
    sw->time_s = time_s;
}
