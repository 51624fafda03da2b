/*
 * linesweep.c - a 1F1B line swept in an order fixed in advance and carried past
 * its transient (see cost/linesweep.h).
 */
#include "cost/linesweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the table's order ------------------------------------------------------ */

/* Where (mb, chunk c) stands in the table (programs.c table_entry: groups of n
 * microbatches, each run chunk by chunk, the last group what is left): the
 * entries of a chunk of mb's group are group_size apart. */
static int64_t group_size(const ppl_line_state *s, int64_t mb)
{
    const int64_t first = mb / s->n * s->n;
    return s->m - first < s->n ? s->m - first : s->n;
}

static int64_t table_pos(const ppl_line_state *s, int64_t mb, int64_t c)
{
    const int64_t first = mb / s->n * s->n;
    return first * s->v + c * group_size(s, mb) + (mb - first);
}

static int64_t clamp(int64_t x, int64_t hi)
{
    return x < 0 ? 0 : x > hi ? hi : x;
}

/* How many of the table's first t entries are of chunk c, t within its whole groups
 * (where the carry looks: every rank a period or more from the last group). */
static int64_t chunk_count(const ppl_line_state *s, int64_t t, int64_t c)
{
    const int64_t n = s->n, g = t / (n * s->v);
    return g * n + clamp(t - g * n * s->v - c * n, n);
}

/* ---- the carry --------------------------------------------------------------- */

/* Virtual stage j's forwards, read by stage j+1's forwards (the last stage's by its
 * own backwards), and its backwards, read by stage j-1's (none on the first);
 * written[j] and read counts from each rank's forwards and backwards. */
static void windows_of(const ppl_line_state *s, ppl_line_window *fw, ppl_line_window *bw)
{
    const int64_t p = s->p, v = s->v, S = p * v;
    for (int64_t j = 0; j < S; j++) {
        const int64_t k = j % p, c = j / p, tb = s->ops - s->forwards[k];
        fw[j].hi = chunk_count(s, s->forwards[k], c);
        bw[j].hi = chunk_count(s, tb, v - 1 - c); /* backwards run the chunks down */
    }
    for (int64_t j = 0; j < S; j++) {
        fw[j].lo = j + 1 < S ? fw[j + 1].hi : bw[S - 1].hi;
        bw[j].lo = j > 0 ? bw[j - 1].hi : bw[j].hi;
    }
}

/* Whether the row's window moved by d, within tol, over one period of n
 * microbatches (each entry against the one n before it, the period's start's). */
static bool row_moved(const double *row, ppl_line_window w, int64_t n, double d, double tol)
{
    for (int64_t mb = w.lo; mb < w.hi; mb++)
        if (mb < n || !(fabs(row[mb] - row[mb - n] - d) <= tol))
            return false;
    return true;
}

static void row_carry(double *row, ppl_line_window w, int64_t by, double shift_s)
{
    for (int64_t mb = w.hi - 1; mb >= w.lo; mb--) /* from the top: no source overwritten */
        row[mb + by] = row[mb] + shift_s;
}

int64_t ppl_line_steady_carry(ppl_line_state *s, const double *before_s, ppl_line_window *windows)
{
    const int64_t p = s->p, n = s->n, nv = s->n * s->v, S = s->p * s->v;
    if (p < 1 || n < 1)
        return 0;
    const double d = s->free_s[0] - before_s[0];
    double latest = 0.0;
    int64_t q = INT64_MAX; /* periods every rank has forwards for, in whole groups */
    for (int64_t k = 0; k < p; k++) {
        latest = fmax(latest, fabs(s->free_s[k]));
        const int64_t left = (s->m / n * nv - s->forwards[k]) / nv;
        if (left < q)
            q = left;
    }
    const double tol = PPL_STEADY_REL_TOL * latest;
    if (q < 1 || !(d > 0.0))
        return 0;
    for (int64_t k = 0; k < p; k++)
        if (!(fabs(s->free_s[k] - before_s[k] - d) <= tol))
            return 0;
    ppl_line_window *fw = windows, *bw = windows + S;
    windows_of(s, fw, bw);
    for (int64_t j = 0; j < S; j++)
        if (!row_moved(s->done_f + j * s->m, fw[j], n, d, tol) ||
            !row_moved(s->done_b + j * s->m, bw[j], n, d, tol))
            return 0;
    const double shift_s = (double)q * d;
    for (int64_t j = 0; j < S; j++) {
        row_carry(s->done_f + j * s->m, fw[j], q * n, shift_s);
        row_carry(s->done_b + j * s->m, bw[j], q * n, shift_s);
    }
    for (int64_t k = 0; k < p; k++) {
        s->free_s[k] += shift_s;
        s->forwards[k] += q * nv;
    }
    s->ops += 2 * q * nv;
    return q;
}

/* ---- the sweep --------------------------------------------------------------- */

bool ppl_line_sweepable(const ppl_programs *g)
{
    bool ok = g->shape == PPL_SHAPE_LINE && !g->fill && !g->gpipe && (g->v == 1 || g->table);
    for (int64_t k = 0; ok && k < g->p; k++)
        ok = g->len[k] == 2 * g->m * g->v && g->warm[k] >= 0 &&
             (k == 0 || g->warm[k] <= g->warm[k - 1]);
    return ok;
}

/* Rank k's op i is a forward while its forwards less its backwards are at most W_k
 * (ppl_line_next): W_k + 1 warm-up forwards, then a backward and a forward in turn.
 * With one chunk a rank its forward of microbatch b is its op b (b <= W_k) or
 * 2b - W_k + 1, its backward of b its op W_k + 2b (b < m - W_k) or m + b.  Both fall
 * as W grows, and W_k does not grow with k (ppl_line_sweepable), so each op's input
 * ran at no later index, earlier in the sweep.  With chunks (Megatron-Core's table)
 * an input may be a later rank's (the last rank's forward of the chunk before, the
 * first rank's backward of the chunk after): each op checks its input ran, from
 * the ranks' counts and the table, and the sweep gives up (false) if one did not.
 * The peak in flight goes to rank 0 first, as in the executor's loop (the most
 * warm-up forwards, all run before any other rank's).  Past every rank's warm-up
 * (warm[0] the most) the state is looked at a period apart (a group's forwards
 * and backwards on every rank; one of each with one chunk) and carried once it
 * repeated; the peak in flight is each period's again.  A period that did not is
 * looked at again after twice as many periods as the last wait, so that a line
 * whose transient lasts pays little. */
static inline bool sweep_loop(ppl_line_sweep *sw, const bool chunks)
{
    const int64_t m = sw->m, p = sw->p, v = chunks ? sw->v : 1, n = chunks ? sw->group : 1;
    const int64_t S = p * v, total = m * v, period = 2 * n * v;
    const int64_t *warm = sw->warm;
    const int32_t *table = sw->table;
    double *free_s = sw->free_s, *held = sw->held, *done_f = sw->done_f, *done_b = sw->done_b;
    int64_t *tf = sw->forwards, *pc = sw->ops;
    double peak = sw->peak_in_flight, time_s = sw->time_s;
    int64_t peak_rank = sw->peak_rank;
    ppl_line_state ls = {p, m, v, n, free_s, done_f, done_b, tf, 0};
    int64_t snap_at = warm[0] + 1, check_at = -1, wait = 1;
    double *before_s = NULL;
    ppl_line_window *windows = NULL;
    if (m / n - (snap_at + period) / period > 3) { /* periods enough to carry */
        before_s = malloc((size_t)p * sizeof *before_s);
        windows = malloc(2 * (size_t)S * sizeof *windows);
        if (!windows)
            free(before_s), before_s = NULL;
    }
    bool ok = true;
    for (int64_t i = 0; ok && i < 2 * total; i++) {
        if (before_s && i == check_at) {
            ls.ops = i;
            const int64_t q = ppl_line_steady_carry(&ls, before_s, windows);
            if (q > 0) {
                i = ls.ops;
                sw->cycles_carried += q * n * v;
                for (int64_t k = 0; k < p; k++)
                    pc[k] = i;
                free(before_s), before_s = NULL;
            } else {
                snap_at = i + period * wait, wait *= 2;
            }
        }
        if (before_s && i == snap_at) {
            memcpy(before_s, free_s, (size_t)p * sizeof *before_s);
            check_at = i + period;
        }
        for (int64_t k = 0; k < p; k++) {
            const int64_t f = tf[k];
            if (!(f < total && f - (i - f) <= warm[k]))
                continue; /* its op i is a backward */
            const int64_t mb = chunks ? table[2 * f] : f,
                          j = (chunks ? table[2 * f + 1] : 0) * p + k;
            /* the input's time, as the executor reads it (the first stage's: 0) */
            double ready = 0.0;
            if (j > 0) {
                /* the input is this entry on rank k - 1, or on the last rank the
                 * mb's entry a chunk before: its group's size of entries back */
                if (chunks &&
                    !((k > 0 ? f : f - group_size(&ls, mb)) < tf[k > 0 ? k - 1 : p - 1])) {
                    ok = false;
                    break;
                }
                ready = done_f[(j - 1) * m + mb] - 1.0 + sw->hop_f[j];
            }
            const double end = (ready > free_s[k] ? ready : free_s[k]) + sw->dur_f[j];
            held[k] += 1.0;
            if (held[k] * sw->frac > peak) {
                peak = held[k] * sw->frac;
                peak_rank = k;
            }
            done_f[j * m + mb] = end + 1.0;
            free_s[k] = end, tf[k] = f + 1, pc[k] = i + 1;
        }
        for (int64_t k = p - 1; ok && k >= 0; k--) {
            if (pc[k] != i)
                continue; /* its op i was a forward */
            const int64_t b = i - tf[k];
            const int64_t mb = chunks ? table[2 * b] : b;
            const int64_t j = (v - 1 - (chunks ? table[2 * b + 1] : 0)) * p + k;
            double done;
            if (j == S - 1) { /* the last stage's backward follows its own forward */
                if (chunks && !(table_pos(&ls, mb, v - 1) < tf[k])) {
                    ok = false;
                    break;
                }
                done = done_f[j * m + mb];
            } else {
                /* the next stage's rank and its backwards; its entry this one on
                 * rank k + 1, or on the first rank the mb's entry a chunk before */
                const int64_t r = k < p - 1 ? k + 1 : 0;
                if (chunks && !((r > 0 ? b : b - group_size(&ls, mb)) < pc[r] - tf[r])) {
                    ok = false;
                    break;
                }
                done = done_b[(j + 1) * m + mb];
            }
            const double ready = done - 1.0 + sw->hop_b[j];
            const double end = (ready > free_s[k] ? ready : free_s[k]) + sw->dur_bw[j];
            held[k] -= 1.0;
            done_b[j * m + mb] = end + 1.0;
            free_s[k] = end, pc[k] = i + 1;
        }
    }
    free(before_s);
    free(windows);
    if (!ok)
        return false;
    for (int64_t k = 0; k < p; k++)
        if (free_s[k] > time_s)
            time_s = free_s[k];
    sw->peak_in_flight = peak;
    sw->peak_rank = peak_rank;
    sw->time_s = time_s;
    return true;
}

bool ppl_line_sweep_run(ppl_line_sweep *sw)
{
    /* two loops, the one-chunk one free of the table's lookups and checks */
    return sw->v > 1 ? sweep_loop(sw, true) : sweep_loop(sw, false);
}
