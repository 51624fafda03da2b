/*
 * programs.c - each schedule's op order on each rank (see cost/programs.h).
 */
#include "cost/programs.h"

#include <stdlib.h>
#include <string.h>

static void emit(ppl_programs *g, int64_t k, int kind, int64_t mb, int64_t j)
{
    ppl_op *o = &g->ops[k * g->cap + g->len[k]++];
    o->kind = (uint8_t)kind;
    o->mb = (int32_t)mb;
    o->j = (int32_t)j;
    o->mb2 = -1;
    o->j2 = -1;
}

static void emit_fb(ppl_programs *g, int64_t k, int64_t mf, int64_t jf, int64_t mb, int64_t jb)
{
    emit(g, k, PPL_OP_FB, mf, jf);
    ppl_op *o = &g->ops[k * g->cap + g->len[k] - 1];
    o->mb2 = (int32_t)mb;
    o->j2 = (int32_t)jb;
}

/* Megatron-Core's schedule table: the t-th chunk-microbatch of a rank */
static void table_entry(const ppl_programs *g, int64_t t, int64_t *mb, int64_t *chunk)
{
    const int64_t n = g->group, v = g->v, m = g->m;
    int64_t first = t / (n * v) * n; /* the group's first microbatch */
    int64_t size = m - first < n ? m - first : n;
    int64_t r = t - first * v;
    *chunk = r / size;
    *mb = first + r % size;
}

static void program_zb_v(ppl_programs *g, int64_t k)
{
    const int64_t p = g->p, m = g->m, c0 = k, c1 = 2 * p - 1 - k;
    int64_t f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    for (int64_t i = 0; i < 2 * (p - k) - 1 && f0 < m; i++)
        emit(g, k, PPL_OP_F, f0++, c0);
    for (int64_t i = 0; i < k; i++) {
        if (f1 < m)
            emit(g, k, PPL_OP_F, f1++, c1);
        if (f0 < m)
            emit(g, k, PPL_OP_F, f0++, c0);
    }
    for (int64_t i = 0; i < p - k; i++) {
        if (f1 < m)
            emit(g, k, PPL_OP_F, f1++, c1);
        if (b1 < f1)
            emit(g, k, PPL_OP_B, b1++, c1);
    }
    while (b0 < m || b1 < m) {
        if (f0 < m)
            emit(g, k, PPL_OP_F, f0++, c0);
        if (b0 < f0 && b0 < m)
            emit(g, k, PPL_OP_B, b0++, c0);
        if (f1 < m)
            emit(g, k, PPL_OP_F, f1++, c1);
        if (b1 < f1 && b1 < m)
            emit(g, k, PPL_OP_B, b1++, c1);
    }
}

/* DualPipe's and DualPipeV's step() on rank k.  Phase 0 and 1 are the rank's two
 * chunks: in a V its first (going down) and second (coming back); in DualPipe the
 * direction entering at this rank's end of the pipeline and the other. */
typedef struct dual {
    ppl_programs *g;
    int64_t k;
    int64_t next_f[2], next_b[2];
} dual;

static void dual_at(const dual *d, int phase, int64_t i, int64_t *mb, int64_t *j)
{
    const ppl_programs *g = d->g;
    const int64_t p = g->p, k = d->k;
    if (g->shape == PPL_SHAPE_V) {
        *mb = i;
        *j = phase == 0 ? k : 2 * p - 1 - k;
        return;
    }
    int dir = phase ^ (k >= p / 2); /* dualpipe.py: phase ^= is_in_second_half */
    *mb = dir * (g->m / 2) + i;
    *j = dir ? p - 1 - k : k;
}

static void dual_f(dual *d, int ph)
{
    int64_t mb, j;
    dual_at(d, ph, d->next_f[ph]++, &mb, &j);
    emit(d->g, d->k, PPL_OP_F, mb, j);
}

static void dual_b(dual *d, int ph, bool zb)
{
    int64_t mb, j;
    dual_at(d, ph, d->next_b[ph]++, &mb, &j);
    emit(d->g, d->k, zb ? PPL_OP_B : PPL_OP_BW, mb, j);
}

static void dual_fb(dual *d, int phf, int phb)
{
    int64_t mf, jf, mb, jb;
    dual_at(d, phf, d->next_f[phf]++, &mf, &jf);
    dual_at(d, phb, d->next_b[phb]++, &mb, &jb);
    emit_fb(d->g, d->k, mf, jf, mb, jb);
}

static void program_dual(ppl_programs *g, int64_t k)
{
    dual d = {g, k, {0, 0}, {0, 0}};
    const bool v = g->shape == PPL_SHAPE_V;
    /* dualpipev.py runs p ranks over m microbatches as dualpipe.py's half */
    const int64_t half = v ? g->p : g->p / 2, r = v ? k : (k < g->p - 1 - k ? k : g->p - 1 - k);
    const int64_t chunks = v ? g->m : g->m / 2;
    for (int64_t i = 0; i < 2 * (half - r - 1); i++) /* step 1: nF0 */
        dual_f(&d, 0);
    for (int64_t i = 0; i < r + 1; i++) { /* step 2: nF0F1 */
        dual_f(&d, 0);
        dual_f(&d, 1);
    }
    for (int64_t i = 0; i < half - r - 1; i++) { /* step 3: nB1W1F1 */
        dual_b(&d, 1, true);
        emit(g, k, PPL_OP_W, -1, -1);
        dual_f(&d, 1);
    }
    for (int64_t i = 0; i < chunks - 2 * half + r + 1; i++) { /* step 4: nF0B1F1B0 */
        if (i == 0 && r == half - 1) {                        /* the middle rank: not overlapped */
            dual_f(&d, 0);
            dual_b(&d, 1, false);
        } else {
            dual_fb(&d, 0, 1);
        }
        dual_fb(&d, 1, 0);
    }
    for (int64_t i = 0; i < half - r - 1; i++) { /* step 5: nB1F1B0 */
        dual_b(&d, 1, false);
        dual_fb(&d, 1, 0);
    }
    bool zb = false; /* step 6: nB1B0, the second half with zero bubble */
    for (int64_t i = 0; i < r + 1; i++) {
        if (i == (r + 1) / 2 && r % 2 == 1)
            zb = true;
        dual_b(&d, 1, zb);
        if (i == (r + 1) / 2 && r % 2 == 0)
            zb = true;
        dual_b(&d, 0, zb);
    }
    for (int64_t i = 0; i < half - r - 1; i++) { /* step 7: nWB0 */
        emit(g, k, PPL_OP_W, -1, -1);
        dual_b(&d, 0, true);
    }
    for (int64_t i = 0; i < r + 1; i++) /* step 8: nW */
        emit(g, k, PPL_OP_W, -1, -1);
}

void ppl_program_op(const ppl_programs *g, int64_t k, int64_t i, ppl_op *o)
{
    if (g->ops) {
        *o = g->ops[k * g->cap + i];
        return;
    }
    ppl_line_rank r;
    ppl_line_rank_of(g, k, &r);
    int64_t mb, j;
    const bool fwd = ppl_line_op(&r, i, &mb, &j);
    o->kind = (uint8_t)(fwd ? PPL_OP_F : g->fill ? PPL_OP_B : PPL_OP_BW);
    o->mb = (int32_t)mb;
    o->j = (int32_t)j;
    o->mb2 = o->j2 = -1;
}

void ppl_programs_free(ppl_programs *g)
{
    free(g->ops), free(g->len), free(g->warm), free(g->table);
    memset(g, 0, sizeof *g);
}

bool ppl_programs_init(ppl_programs *g, const ppl_pipe_in *in)
{
    memset(g, 0, sizeof *g);
    g->p = in->pp;
    g->m = in->microbatches;
    g->group = in->group > 0 ? in->group : g->p;
    const int sch = in->schedule;
    g->shape = ppl_schedule_is_line(sch)           ? PPL_SHAPE_LINE
               : ppl_schedule_of(sch)->chunks == 2 ? PPL_SHAPE_V
                                                   : PPL_SHAPE_DUAL;
    g->v = g->shape == PPL_SHAPE_LINE ? in->vp : g->shape == PPL_SHAPE_V ? 2 : 1;
    g->S = g->shape == PPL_SHAPE_DUAL ? g->p : g->p * g->v;
    g->fill = sch == PPL_SCHEDULE_ZB_H1 || sch == PPL_SCHEDULE_ZB_H2 || sch == PPL_SCHEDULE_ZB_V;
    g->gpipe = sch == PPL_SCHEDULE_GPIPE;
    /* a rank's ops: a line's 2 m v forwards and backwards (not stored), or a
     * stored program's forwards, backwards and W pops; deferred W at most its Bs */
    const bool stored = g->shape != PPL_SHAPE_LINE;
    g->cap = stored ? 6 * g->m + 8 : g->m * g->v + 1;
    const size_t p = (size_t)g->p;
    g->ops = stored ? malloc(p * (size_t)g->cap * sizeof *g->ops) : NULL;
    g->len = calloc(p, sizeof *g->len);
    g->warm = calloc(p, sizeof *g->warm);
    const bool interleaved = g->shape == PPL_SHAPE_LINE && g->v > 1 && sch != PPL_SCHEDULE_GPIPE;
    if (interleaved)
        g->table = malloc(2 * (size_t)(g->m * g->v) * sizeof *g->table);
    if ((stored && !g->ops) || !g->len || !g->warm || (interleaved && !g->table)) {
        ppl_programs_free(g);
        return false;
    }
    for (int64_t t = 0; interleaved && t < g->m * g->v; t++) {
        int64_t mb, c;
        table_entry(g, t, &mb, &c);
        g->table[2 * t] = (int32_t)mb;
        g->table[2 * t + 1] = (int32_t)c;
    }
    const int64_t n = g->group;
    for (int64_t k = 0; k < g->p; k++) {
        switch (sch) {
        case PPL_SCHEDULE_ZB_V: program_zb_v(g, k); continue;
        case PPL_SCHEDULE_DUALPIPE:
        case PPL_SCHEDULE_DUALPIPEV: program_dual(g, k); continue;
        case PPL_SCHEDULE_ZB_H2: /* Qi et al. §3: 2(p-k-1) warm-up forwards */
            g->warm[k] = 2 * (g->p - k - 1);
            break;
        case PPL_SCHEDULE_1F1B: /* interleaved: Megatron-Core's 2(p-k-1) + (v-1)N */
            g->warm[k] = g->p - k - 1 + (g->v > 1 ? g->p - k - 1 + (g->v - 1) * n : 0);
            break;
        default: /* ZB-H1 as 1F1B; GPipe runs every forward first (ppl_program_op) */
            g->warm[k] = g->p - k - 1;
        }
        if (g->warm[k] > g->m * g->v)
            g->warm[k] = g->m * g->v;
        g->len[k] = 2 * g->m * g->v;
    }
    return true;
}
