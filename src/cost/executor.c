/*
 * executor.c - the pipeline executor (see cost/executor.h): each rank's program
 * (cost/programs.h: routes and op orders, with their sources) run over the
 * stages' passes and sends.  The W of the zero-bubble lines and of ZB-V are
 * deferred, filling the bubbles (Qi et al. ICLR 2024 §2.1), run at once past k,
 * 2k (§3: (i-1), (2i-2) M_W on worker i) and p held; DualPipe's and DualPipeV's
 * where they enable zero bubble, run in FIFO order.  An F&B op takes its forward
 * and backward times scaled by the two stages' F&B share (fb_s over f_s + b_s +
 * w_s: the all-to-all hidden, stage.c).
 */
#include "cost/executor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/minmax.h"
#include "base/heap.h"
#include "base/pages.h"
#include "cost/recall.h"
#include "cost/programs.h"
#include "cost/linesweep.h"

typedef struct sim {
    const ppl_pipe_in *in;
    /* every rank's program: its shape, ranks p, microbatches m, chunks a rank v,
     * virtual stages S and whether W fill the bubbles */
    ppl_programs g;
    double frac;             /* share of a stage's passes one chunk runs */
    double wrap_s;           /* the send from the last rank to the first: the slowest link's */
    void *cells;             /* the four arrays below, in one block (ppl_pages_alloc) */
    size_t cells_bytes;
    double *done_f, *done_b; /* finish time + 1 by virtual stage x microbatch (0: not yet) */
    int32_t *wait_f, *wait_b; /* the rank waiting for it + 1 (0: none) */
    int32_t *pend;            /* rank k's deferred W (mb, j) pairs, FIFO */
    int64_t *pend_head, *pend_tail;
    int64_t *w_cap; /* deferred W a rank holds before it must run one */
    /* by virtual stage, worked out once (the routes and passes below): an op's
     * duration by kind (PPL_OP_F .. PPL_OP_BW), and for each direction (DualPipe's
     * second runs the stages backwards) the hop its forward input and its backward
     * input take to reach it */
    double *dur[PPL_OP_BW + 1];
    double *hop_in_f[2], *hop_in_b[2];
} sim;

/* ---- routes ---------------------------------------------------------------- */

static int dir_of(const sim *s, int64_t mb)
{
    return s->g.shape == PPL_SHAPE_DUAL && mb >= s->g.m / 2;
}

static int64_t rank_of(const sim *s, int64_t mb, int64_t j)
{
    switch (s->g.shape) {
    case PPL_SHAPE_V: return j < s->g.p ? j : 2 * s->g.p - 1 - j;
    case PPL_SHAPE_DUAL: return dir_of(s, mb) ? s->g.p - 1 - j : j;
    default: return j % s->g.p;
    }
}

/* the stage whose passes virtual stage j runs */
static int64_t stage_of(const sim *s, int64_t mb, int64_t j)
{
    return s->g.shape == PPL_SHAPE_DUAL ? j : rank_of(s, mb, j);
}

static double hop(const sim *s, int64_t a, int64_t b)
{
    if (a == b || !s->in->hop_s)
        return 0.0;
    if (a - b == 1 || b - a == 1)
        return s->in->hop_s[a < b ? a : b];
    return s->wrap_s; /* interleaving's wrap from the last rank to the first */
}

static double pass_s(const sim *s, int kind, int64_t mb, int64_t j)
{
    const ppl_passes *st = &s->in->stage[stage_of(s, mb, j)];
    switch (kind) {
    case PPL_OP_F:
        return s->frac * st->f_s;
    case PPL_OP_B:
        return s->frac * st->b_s;
    case PPL_OP_W:
        return s->frac * st->w_s;
    default:
        return s->frac * (st->b_s + st->w_s);
    }
}

/* ---- the run -------------------------------------------------------------------- */

/* When the input of F (fwd) or B/BW (!fwd) of (mb, j) is there: its time, or NAN
 * with *wait the slot to wait on. */
static double input_at(const sim *s, bool fwd, int64_t mb, int64_t j, int32_t **wait)
{
    int64_t from;
    const double *done;
    int32_t *w;
    if (fwd) {
        if (j == 0)
            return 0.0;
        from = j - 1;
        done = s->done_f;
        w = s->wait_f;
    } else if (j == s->g.S - 1) {
        from = j; /* the last stage's backward follows its own forward */
        done = s->done_f;
        w = s->wait_f;
    } else {
        from = j + 1;
        done = s->done_b;
        w = s->wait_b;
    }
    double t = done[from * s->g.m + mb];
    if (t == 0.0) {
        *wait = &w[from * s->g.m + mb];
        return NAN;
    }
    const int dir = dir_of(s, mb);
    return t - 1.0 + (fwd ? s->hop_in_f[dir][j] : s->hop_in_b[dir][j]);
}

typedef struct run_state {
    ppl_heap h;        /* fill mode: ranks by the time they are free or their input is due */
    int64_t *stack;    /* fixed order: ranks whose input may have arrived */
    size_t nstack;
    double *free_s;    /* fixed order: when each rank is free */
    double *inflight;  /* chunk-microbatches whose B has not run, per rank */
    int64_t *forwards; /* run_line: the forwards each rank has run */
    ppl_pipe_out *out;
    bool keep;
    /* each rank's op at cur_at (an op waiting for its input is looked at again
     * when the input comes) */
    ppl_op *cur;
    int64_t *cur_at;
} run_state;

/* Rank k's op i (ppl_program_op), worked out once however often the rank looks at it. */
static const ppl_op *op_of(const sim *s, run_state *st, int64_t k, int64_t i)
{
    if (st->cur_at[k] != i) {
        ppl_program_op(&s->g, k, i, &st->cur[k]);
        st->cur_at[k] = i;
    }
    return &st->cur[k];
}

/* An op's output is there at t: the rank waiting for it (if any) looks again. */
static void finish(const sim *s, run_state *st, double *done, int32_t *wait, int64_t idx, double t)
{
    done[idx] = t + 1.0;
    if (wait[idx] > 0) {
        if (s->g.fill)
            ppl_heap_push(&st->h, t, wait[idx] - 1);
        else
            st->stack[st->nstack++] = wait[idx] - 1;
        wait[idx] = 0;
    }
}

static void record(sim *s, run_state *st, int64_t k, int kind, const ppl_op *o, double t0,
                   double t1)
{
    if (t1 > st->out->time_s)
        st->out->time_s = t1;
    if (!st->keep)
        return;
    ppl_pipe_event *e = &st->out->events[st->out->n_events++];
    e->start_s = t0;
    e->end_s = t1;
    e->rank = (int32_t)k;
    e->op = (uint8_t)kind;
    e->microbatch = o->mb;
    e->microbatch2 = kind == PPL_OP_FB ? o->mb2 : -1;
    /* the chunk on this rank: its position among the rank's virtual stages */
    int64_t j = o->j;
    e->chunk = (int16_t)(s->g.shape == PPL_SHAPE_LINE ? j / s->g.p
                         : s->g.shape == PPL_SHAPE_V  ? (j >= s->g.p)
                                                      : dir_of(s, o->mb));
}

static void in_flight(sim *s, run_state *st, int64_t k, double delta)
{
    st->inflight[k] += delta;
    double held = st->inflight[k] * s->frac;
    if (st->out->in_flight_by_rank && held > st->out->in_flight_by_rank[k])
        st->out->in_flight_by_rank[k] = held;
    if (held > st->out->peak_in_flight) {
        st->out->peak_in_flight = held;
        st->out->peak_rank = k;
    }
}

/* Runs rank k's oldest deferred W at t: its duration, or -1 when there is none. */
static double run_w(sim *s, run_state *st, int64_t k, double t)
{
    if (s->pend_head[k] == s->pend_tail[k])
        return -1.0;
    int32_t *pw = &s->pend[2 * (k * s->g.cap + s->pend_head[k]++)];
    ppl_op o = {PPL_OP_W, pw[0], pw[1], -1, -1};
    double d = s->dur[PPL_OP_W][o.j];
    record(s, st, k, PPL_OP_W, &o, t, t + d);
    return d;
}

/* When op o's inputs are there, or NAN with *wait the slot to wait on. */
static double ready_at(const sim *s, const ppl_op *o, int32_t **wait)
{
    if (o->kind == PPL_OP_FB) {
        double a = input_at(s, true, o->mb, o->j, wait);
        double b = isnan(a) ? NAN : input_at(s, false, o->mb2, o->j2, wait);
        return isnan(a) || isnan(b) ? NAN : ppl_max(a, b);
    }
    return input_at(s, o->kind == PPL_OP_F, o->mb, o->j, wait);
}

/* Runs op o (F, B, B+W or F&B) of rank k from t; its duration. */
static double execute(sim *s, run_state *st, int64_t k, const ppl_op *o, double t)
{
    double d;
    const int64_t M = s->g.m; /* finish times by virtual stage, then microbatch */
    switch (o->kind) {
    case PPL_OP_F:
        d = s->dur[PPL_OP_F][o->j];
        in_flight(s, st, k, 1.0);
        finish(s, st, s->done_f, s->wait_f, o->j * M + o->mb, t + d);
        break;
    case PPL_OP_FB: {
        const ppl_passes *a = &s->in->stage[stage_of(s, o->mb, o->j)];
        const ppl_passes *b = &s->in->stage[stage_of(s, o->mb2, o->j2)];
        d = (s->dur[PPL_OP_F][o->j] + s->dur[PPL_OP_BW][o->j2]) * 0.5 *
            (ppl_passes_fb_share(a) + ppl_passes_fb_share(b));
        in_flight(s, st, k, 1.0);
        in_flight(s, st, k, -1.0);
        finish(s, st, s->done_f, s->wait_f, o->j * M + o->mb, t + d);
        finish(s, st, s->done_b, s->wait_b, o->j2 * M + o->mb2, t + d);
        break;
    }
    default: /* B or BW */
        d = s->dur[o->kind][o->j];
        in_flight(s, st, k, -1.0);
        finish(s, st, s->done_b, s->wait_b, o->j * M + o->mb, t + d);
        if (o->kind == PPL_OP_B) {
            int32_t *pw = &s->pend[2 * (k * s->g.cap + s->pend_tail[k]++)];
            pw[0] = o->mb;
            pw[1] = o->j;
        }
        break;
    }
    record(s, st, k, o->kind, o, t, t + d);
    return d;
}

/* Fill mode: rank k is free at t (events in time order, so that a W fills only
 * a real wait).  Runs its next op, a W in its place, or waits for its input. */
static void step_fill(sim *s, run_state *st, int64_t *pc, int64_t k, double t)
{
    const ppl_op *o = pc[k] < s->g.len[k] ? op_of(s, st, k, pc[k]) : NULL;
    int64_t pending = s->pend_tail[k] - s->pend_head[k];
    double d;
    if (!o) { /* the program is done: the deferred W left */
        if ((d = run_w(s, st, k, t)) >= 0.0)
            ppl_heap_push(&st->h, t + d, k);
        return;
    }
    int32_t *wait = NULL;
    double ready = ready_at(s, o, &wait);
    if (pending > 0 && (pending > s->w_cap[k] || isnan(ready) || ready > t)) {
        ppl_heap_push(&st->h, t + run_w(s, st, k, t), k); /* a W fills the wait */
        return;
    }
    if (isnan(ready)) {
        *wait = (int32_t)k + 1;
        return;
    }
    if (ready > t) {
        ppl_heap_push(&st->h, ready, k);
        return;
    }
    d = execute(s, st, k, o, t);
    pc[k]++;
    ppl_heap_push(&st->h, t + d, k);
}

/* Fixed order: every op starts when its rank is free and its input is there, in
 * any processing order; runs rank k's program until its next input is missing. */
static void step_fixed(sim *s, run_state *st, int64_t *pc, int64_t k)
{
    while (pc[k] < s->g.len[k]) {
        const ppl_op *o = op_of(s, st, k, pc[k]);
        double t = st->free_s[k];
        if (o->kind == PPL_OP_W) { /* the program pops its oldest deferred W */
            double d = run_w(s, st, k, t);
            if (d > 0.0)
                st->free_s[k] = t + d;
            pc[k]++;
            continue;
        }
        int32_t *wait = NULL;
        double ready = ready_at(s, o, &wait);
        if (isnan(ready)) {
            *wait = (int32_t)k + 1;
            return;
        }
        if (ready > t)
            t = ready;
        st->free_s[k] = t + execute(s, st, k, o, t);
        pc[k]++;
    }
}

/* A line run's figures and arrays, as run_line and replay_line read them. */
typedef struct line_view {
    int64_t m, p;
    const double *dur_f, *dur_bw, *hop_f, *hop_b; /* by virtual stage */
    double *done_f, *done_b;
    double frac;
} line_view;

static line_view line_view_of(const sim *s)
{
    return (line_view){s->g.m,         s->g.p,         s->dur[PPL_OP_F], s->dur[PPL_OP_BW],
                       s->hop_in_f[0], s->hop_in_b[0], s->done_f,        s->done_b,
                       s->frac};
}

/* step_fixed for a line ppl_line_sweep_run does not take (GPipe's, or one it gave
 * up on), no events: the same ops and the same arithmetic (ppl_line_op, input_at,
 * execute), each rank's program run from the stack of ranks whose input may have
 * arrived in one loop, the search's pipelines being long and many.  A forward and
 * a backward each have their own branch, the arrays and the peak in locals; the
 * step's end is taken once a rank stops (its ops end in order, so its last end is
 * its latest). */
static size_t run_line(sim *s, run_state *st, int64_t *pc, ppl_line_step *rec)
{
    size_t nrec = 0;
    const line_view L = line_view_of(s);
    const int64_t m = L.m, S = s->g.S, p = L.p;
    ppl_line_rank line; /* a copy the loop's stores cannot reach; its k and warm by rank */
    ppl_line_rank_of(&s->g, 0, &line);
    int32_t *wait_f = s->wait_f, *wait_b = s->wait_b;
    ppl_pipe_out *out = st->out;
    double peak = out->peak_in_flight, time_s = out->time_s;
    int64_t peak_rank = out->peak_rank;
    while (st->nstack > 0) {
        const int64_t k = st->stack[--st->nstack];
        const int64_t len = s->g.len[k];
        line.k = k, line.warm = s->g.warm[k];
        int64_t i = pc[k];
        double free_s = st->free_s[k], held = st->inflight[k];
        /* the rank's order counted as it goes, tf forwards and tb backwards run
         * (ppl_line_next; GPipe's worked out op by op) */
        int64_t tf = st->forwards[k], tb = i - tf;
        while (i < len) {
            int64_t mb, j;
            double t0 = free_s, end;
            int32_t *w;
            const bool fwd =
                line.gpipe ? ppl_line_op(&line, i, &mb, &j) : ppl_line_next(&line, tf, tb, &mb, &j);
            if (fwd) {
                if (j > 0) {
                    const int64_t from = (j - 1) * m + mb;
                    const double done = L.done_f[from];
                    if (done == 0.0) {
                        wait_f[from] = (int32_t)k + 1;
                        break;
                    }
                    const double ready = done - 1.0 + L.hop_f[j];
                    if (ready > t0)
                        t0 = ready;
                } else if (0.0 > t0) {
                    t0 = 0.0;
                }
                end = t0 + L.dur_f[j];
                if (rec)
                    rec[nrec++] =
                        (ppl_line_step){(uint16_t)k, 1, (uint8_t)((j - k) / p), (uint32_t)mb};
                held += 1.0;
                if (held * L.frac > peak) {
                    peak = held * L.frac;
                    peak_rank = k;
                }
                const int64_t idx = j * m + mb;
                L.done_f[idx] = end + 1.0;
                w = &wait_f[idx];
            } else {
                /* the last stage's backward follows its own forward */
                const int64_t from = (j == S - 1 ? j : j + 1) * m + mb;
                const double done = (j == S - 1 ? L.done_f : L.done_b)[from];
                if (done == 0.0) {
                    (j == S - 1 ? wait_f : wait_b)[from] = (int32_t)k + 1;
                    break;
                }
                const double ready = done - 1.0 + L.hop_b[j];
                if (ready > t0)
                    t0 = ready;
                end = t0 + L.dur_bw[j];
                if (rec)
                    rec[nrec++] =
                        (ppl_line_step){(uint16_t)k, 0, (uint8_t)((j - k) / p), (uint32_t)mb};
                held -= 1.0; /* below what the peak already counted */
                const int64_t idx = j * m + mb;
                L.done_b[idx] = end + 1.0;
                w = &wait_b[idx];
            }
            if (*w > 0) {
                st->stack[st->nstack++] = *w - 1;
                *w = 0;
            }
            free_s = end;
            i++;
            tf += fwd, tb += !fwd;
        }
        if (free_s > time_s)
            time_s = free_s;
        pc[k] = i;
        st->forwards[k] = tf;
        st->free_s[k] = free_s;
        st->inflight[k] = held;
    }
    out->peak_in_flight = peak;
    out->peak_rank = peak_rank;
    out->time_s = time_s;
    return nrec;
}

/* run_line again on another run of its shape, from the order it recorded (recall.h):
 * each op starts when its rank is free and its input is there, ends its duration
 * later, and counts in flight, as run_line has it.  Every rank's program is then
 * done.  Two things keep the ranks' chains short, the arithmetic as it was: the
 * rank running holds its free time and count in registers until the order turns
 * to another rank, and a finish time is kept as its reader reads it, (end + 1) - 1
 * (run_line's encoding of "done"), worked out by the op that writes it, off its
 * rank's chain. */
static void replay_line(sim *s, run_state *st, int64_t *pc, const ppl_line_step *op, size_t n)
{
    const line_view L = line_view_of(s);
    const int64_t m = L.m, p = L.p, S = s->g.S;
    double *free_s = st->free_s, *held = st->inflight;
    ppl_pipe_out *out = st->out;
    double peak = out->peak_in_flight;
    int64_t peak_rank = out->peak_rank;
    int64_t k = n > 0 ? op->rank : 0;
    double free_k = free_s[k], held_k = held[k];
    for (const ppl_line_step *last = op + n; op < last; op++) {
        if (op->rank != k) {
            free_s[k] = free_k, held[k] = held_k;
            k = op->rank;
            free_k = free_s[k], held_k = held[k];
        }
        const int64_t j = op->chunk * p + k, cell = j * m + op->mb;
        double t0 = free_k, ready, end;
        if (op->fwd) { /* the previous stage's forward, none on the first */
            ready = j > 0 ? L.done_f[cell - m] + L.hop_f[j] : 0.0;
            if (ready > t0)
                t0 = ready;
            end = t0 + L.dur_f[j];
            held_k += 1.0;
            if (held_k * L.frac > peak) {
                peak = held_k * L.frac;
                peak_rank = k;
            }
            L.done_f[cell] = end + 1.0 - 1.0;
        } else { /* the next stage's backward, or on the last its own forward */
            ready = (j == S - 1 ? L.done_f[cell] : L.done_b[cell + m]) + L.hop_b[j];
            if (ready > t0)
                t0 = ready;
            end = t0 + L.dur_bw[j];
            held_k -= 1.0;
            L.done_b[cell] = end + 1.0 - 1.0;
        }
        free_k = end;
    }
    free_s[k] = free_k, held[k] = held_k;
    double time_s = out->time_s;
    for (int64_t r = 0; r < p; r++) {
        if (free_s[r] > time_s)
            time_s = free_s[r];
        pc[r] = s->g.len[r];
    }
    out->peak_in_flight = peak;
    out->peak_rank = peak_rank;
    out->time_s = time_s;
}

static ppl_status check_in(const ppl_pipe_in *in, ppl_error *err)
{
    if (in->pp < 1 || in->microbatches < 1 || in->vp < 1 || !in->stage)
        return ppl_error_set(err, PPL_EUSAGE, "", "pp",
                             "the pipeline needs at least one rank, chunk and microbatch "
                             "(pp %lld, vp %lld, m %lld)",
                             (long long)in->pp, (long long)in->vp, (long long)in->microbatches);
    const ppl_schedule_row *row = ppl_schedule_of(in->schedule);
    if (row->overlaps_fb && (in->microbatches < 2 * in->pp || in->pp < 2))
        return ppl_error_set(err, PPL_EUSAGE, "", "global_batch",
                             "%s needs pp >= 2 and at least 2*pp microbatches (pp %lld, m %lld)",
                             ppl_schedule_name(in->schedule), (long long)in->pp,
                             (long long)in->microbatches);
    if (in->schedule == PPL_SCHEDULE_DUALPIPE && (in->pp % 2 || in->microbatches % 2))
        return ppl_error_set(err, PPL_EUSAGE, "", "pp",
                             "dualpipe needs an even pp and an even number of microbatches "
                             "(pp %lld, m %lld)",
                             (long long)in->pp, (long long)in->microbatches);
    /* Megatron-Core's interleaved schedule: groups of N in [pp, m], the last one
     * whole or of at least pp (ppl_vp_group; N = pp when not given) */
    const int64_t n = in->group > 0 ? in->group : in->pp;
    if (row->chunks == 0 && in->vp > 1 &&
        (in->pp < 2 || in->microbatches < in->pp || n < in->pp || n > in->microbatches ||
         (in->microbatches % n != 0 && in->microbatches % n < in->pp)))
        return ppl_error_set(err, PPL_EUSAGE, "", "vp",
                             "interleaving needs pp >= 2 and microbatches in groups of pp to m "
                             "(pp %lld, m %lld, group %lld)",
                             (long long)in->pp, (long long)in->microbatches, (long long)in->group);
    /* sizes the arrays below take: ops a rank, finish times a pipeline */
    if (in->pp > 1 << 16 || in->microbatches > 1 << 22 || in->vp > 64 ||
        (double)in->microbatches * (double)in->vp * (double)in->pp > 1e8)
        return ppl_error_set(err, PPL_EUSAGE, "", "microbatches",
                             "the pipeline is too large to run op by op: pp %lld x vp %lld x "
                             "%lld microbatches",
                             (long long)in->pp, (long long)in->vp, (long long)in->microbatches);
    for (int64_t k = 0; k < in->pp; k++) {
        const ppl_passes *st = &in->stage[k];
        if (!(st->f_s >= 0.0 && st->b_s >= 0.0 && st->w_s >= 0.0 && st->fb_s >= 0.0) ||
            !isfinite(st->f_s + st->b_s + st->w_s + st->fb_s))
            return ppl_error_set(err, PPL_EINTERNAL, "", "stage",
                                 "stage %lld's passes are not finite non-negative times",
                                 (long long)k);
    }
    return PPL_OK;
}

static void sim_free(sim *s)
{
    ppl_programs_free(&s->g);
    ppl_pages_free(s->cells, s->cells_bytes);
    free(s->pend), free(s->pend_head), free(s->pend_tail), free(s->w_cap);
    free(s->dur[0]); /* one block holds every table by virtual stage */
}

/* The tables by virtual stage (sim's dur and hop_in_*), from the routes and passes
 * as input_at and execute would work them out op by op.  false: out of memory. */
static bool tables_init(sim *s)
{
    const size_t S = (size_t)s->g.S, kinds = PPL_OP_BW + 1;
    double *block = malloc((kinds + 4) * S * sizeof *block);
    if (!block)
        return false;
    for (size_t kind = 0; kind < kinds; kind++)
        s->dur[kind] = block + kind * S;
    for (int dir = 0; dir < 2; dir++) {
        s->hop_in_f[dir] = block + (kinds + 2 * (size_t)dir) * S;
        s->hop_in_b[dir] = block + (kinds + 2 * (size_t)dir + 1) * S;
    }
    for (int64_t j = 0; j < s->g.S; j++) {
        for (int kind = 0; kind < (int)kinds; kind++)
            s->dur[kind][j] = pass_s(s, kind, 0, j);
        for (int dir = 0; dir < 2; dir++) {
            const int64_t mb = dir ? s->g.m / 2 : 0; /* a microbatch going that way */
            const int64_t r = rank_of(s, mb, j);
            s->hop_in_f[dir][j] = j == 0 ? 0.0 : hop(s, rank_of(s, mb, j - 1), r);
            s->hop_in_b[dir][j] = j == s->g.S - 1 ? hop(s, r, r) : hop(s, rank_of(s, mb, j + 1), r);
        }
    }
    return true;
}

static ppl_status sim_init(sim *s, const ppl_pipe_in *in, ppl_error *err)
{
    memset(s, 0, sizeof *s);
    s->in = in;
    if (!ppl_programs_init(&s->g, in))
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory running the pipeline");
    s->frac = 1.0 / (double)s->g.v;
    for (int64_t k = 0; k + 1 < s->g.p && in->hop_s; k++)
        s->wrap_s = ppl_max(s->wrap_s, in->hop_s[k]);
    const size_t p = (size_t)s->g.p, cells = (size_t)(s->g.m * s->g.S);
    /* finish times plus 1 s and waiting ranks plus 1, so that zeroes are "not yet"
     * and "nobody"; the run's largest arrays, on the pages the run before held */
    s->cells_bytes = cells * (2 * sizeof *s->done_f + 2 * sizeof *s->wait_f);
    s->cells = ppl_pages_alloc(s->cells_bytes);
    if (s->cells) { /* cleared by run_once, unless a kept order is walked */
        s->done_f = s->cells;
        s->done_b = s->done_f + cells;
        s->wait_f = (int32_t *)(s->done_b + cells);
        s->wait_b = s->wait_f + cells;
    }
    s->pend = malloc(2 * p * (size_t)s->g.cap * sizeof *s->pend);
    s->pend_head = calloc(p, sizeof *s->pend_head);
    s->pend_tail = calloc(p, sizeof *s->pend_tail);
    s->w_cap = calloc(p, sizeof *s->w_cap);
    if (!s->done_f || !s->done_b || !s->wait_f || !s->wait_b || !s->pend || !s->pend_head ||
        !s->pend_tail || !s->w_cap || !tables_init(s)) {
        sim_free(s);
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory running the pipeline");
    }
    const int sch = in->schedule;
    for (int64_t k = 0; k < s->g.p; k++)
        s->w_cap[k] = sch == PPL_SCHEDULE_ZB_H1 ? k : sch == PPL_SCHEDULE_ZB_H2 ? 2 * k : s->g.p;
    return PPL_OK;
}

static ppl_status run_once(const ppl_pipe_in *in, bool keep_events, ppl_pipe_out *out,
                           ppl_error *err);

ppl_status ppl_pipe_run(const ppl_pipe_in *in, bool keep_events, ppl_pipe_out *out, ppl_error *err)
{
    memset(out, 0, sizeof *out);
    ppl_status rc = check_in(in, err);
    if (rc != PPL_OK)
        return rc;
    if (keep_events)
        return run_once(in, true, out, err);
    ppl_run_figures run;
    if (!ppl_recall_run(in, &run)) {
        if ((rc = run_once(in, false, out, err)) != PPL_OK)
            return rc;
        run = (ppl_run_figures){out->time_s, out->bound_s, out->peak_in_flight, out->peak_rank};
        ppl_recall_keep_run(in, &run);
    }
    out->time_s = run.time_s;
    out->bound_s = run.bound_s;
    out->peak_in_flight = run.peak_in_flight;
    out->peak_rank = run.peak_rank;
    return PPL_OK;
}

/* The line swept (linesweep.h) into st->out, or false with every rank's count and
 * time back at zero if an op's input had not run at its turn. */
static bool sweep(sim *s, run_state *st, int64_t *pc)
{
    const line_view L = line_view_of(s);
    ppl_pipe_out *out = st->out;
    ppl_line_sweep sw = {.p = L.p,
                         .m = L.m,
                         .v = s->g.v,
                         .group = s->g.group,
                         .table = s->g.table,
                         .warm = s->g.warm,
                         .frac = L.frac,
                         .dur_f = L.dur_f,
                         .dur_bw = L.dur_bw,
                         .hop_f = L.hop_f,
                         .hop_b = L.hop_b,
                         .done_f = L.done_f,
                         .done_b = L.done_b,
                         .free_s = st->free_s,
                         .held = st->inflight,
                         .forwards = st->forwards,
                         .ops = pc,
                         .time_s = out->time_s,
                         .peak_in_flight = out->peak_in_flight,
                         .peak_rank = out->peak_rank};
    if (!ppl_line_sweep_run(&sw)) {
        const size_t p = (size_t)L.p;
        memset(pc, 0, p * sizeof *pc);
        memset(st->forwards, 0, p * sizeof *st->forwards);
        for (size_t k = 0; k < p; k++)
            st->free_s[k] = st->inflight[k] = 0.0;
        return false;
    }
    out->time_s = sw.time_s, out->peak_in_flight = sw.peak_in_flight;
    out->peak_rank = sw.peak_rank, out->cycles_carried = sw.cycles_carried;
    return true;
}

static ppl_status run_once(const ppl_pipe_in *in, bool keep_events, ppl_pipe_out *out,
                           ppl_error *err)
{
    ppl_status rc;
    sim s;
    if ((rc = sim_init(&s, in, err)) != PPL_OK)
        return rc;
    run_state st = {0};
    st.out = out;
    st.keep = keep_events;
    size_t total_ops = 0;
    for (int64_t k = 0; k < s.g.p; k++)
        total_ops += (size_t)s.g.len[k];
    int64_t *pc = calloc((size_t)s.g.p, sizeof *pc);
    st.inflight = calloc((size_t)s.g.p, sizeof *st.inflight);
    st.forwards = calloc((size_t)s.g.p, sizeof *st.forwards);
    st.free_s = calloc((size_t)s.g.p, sizeof *st.free_s);
    st.h.a = malloc((size_t)s.g.p * sizeof *st.h.a);
    st.stack = malloc((size_t)s.g.p * sizeof *st.stack);
    st.cur = malloc((size_t)s.g.p * sizeof *st.cur);
    st.cur_at = malloc((size_t)s.g.p * sizeof *st.cur_at);
    for (int64_t k = 0; st.cur_at && k < s.g.p; k++)
        st.cur_at[k] = -1;
    if (keep_events) {
        out->events = malloc((total_ops + (size_t)(s.g.m * s.g.S)) * sizeof *out->events);
        out->in_flight_by_rank = calloc((size_t)s.g.p, sizeof *out->in_flight_by_rank);
    }
    if (!pc || !st.inflight || !st.forwards || !st.free_s || !st.h.a || !st.stack || !st.cur ||
        !st.cur_at || (keep_events && (!out->events || !out->in_flight_by_rank))) {
        rc = ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory running the pipeline");
        goto done;
    }
    /* a 1F1B line without events: swept in a fixed order, or if that fails (an
     * input not run at its turn) its order, where a run of its shape kept it */
    const bool line = s.g.shape == PPL_SHAPE_LINE && !s.g.fill && !keep_events;
    const bool swept = line && ppl_line_sweepable(&s.g) && sweep(&s, &st, pc);
    size_t n_order = 0;
    const ppl_line_step *order = line && !swept ? ppl_recall_order(in, &n_order) : NULL;
    /* finish times and waits read before they are written: zero ("not yet",
     * "nobody") */
    if (!order && !swept)
        memset(s.cells, 0, s.cells_bytes);
    if (s.g.fill) {
        for (int64_t k = 0; k < s.g.p; k++)
            ppl_heap_push(&st.h, 0.0, k);
        while (st.h.n > 0) {
            ppl_heap_slot sl = ppl_heap_pop(&st.h);
            step_fill(&s, &st, pc, sl.id, sl.t);
        }
    } else if (!swept) {
        for (int64_t k = s.g.p - 1; k >= 0; k--)
            st.stack[st.nstack++] = k;
        if (order) {
            replay_line(&s, &st, pc, order, n_order);
            st.nstack = 0;
        } else if (line) {
            /* a whole order is kept (a deadlock, a bug, would stop it short) */
            const size_t ops = (size_t)(2 * s.g.m * s.g.S);
            ppl_line_step *rec = ppl_recall_order_room(in, ops);
            if (run_line(&s, &st, pc, rec) == ops && rec)
                ppl_recall_keep_order(in, ops);
        }
        while (st.nstack > 0) {
            int64_t k = st.stack[--st.nstack];
            step_fixed(&s, &st, pc, k);
        }
    }
    for (int64_t k = 0; k < s.g.p; k++)
        if (pc[k] < s.g.len[k] || s.pend_head[k] != s.pend_tail[k]) {
            rc = ppl_error_set(err, PPL_EINTERNAL, "", "schedule",
                               "%s's programs deadlock on rank %lld of %lld at %lld "
                               "microbatches (a bug: please report it with the inputs)",
                               ppl_schedule_name(in->schedule), (long long)k, (long long)s.g.p,
                               (long long)s.g.m);
            goto done;
        }
    out->bound_s = ppl_pipe_bound_s(in);
done:
    free(pc);
    free(st.inflight);
    free(st.forwards);
    free(st.free_s);
    free(st.h.a);
    free(st.stack);
    free(st.cur);
    free(st.cur_at);
    sim_free(&s);
    if (rc != PPL_OK)
        ppl_pipe_out_free(out);
    return rc;
}

void ppl_pipe_out_free(ppl_pipe_out *out)
{
    free(out->events);
    free(out->in_flight_by_rank);
    out->events = NULL;
    out->in_flight_by_rank = NULL;
    out->n_events = 0;
}
