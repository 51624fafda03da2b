/*
 * testutil.h - helpers shared by the unit tests (cmocka).
 *
 * cmocka 1.1 has no floating-point assertion: assert_close() checks a relative
 * tolerance and prints both values when it fails.
 */
#ifndef PARPLAN_TESTUTIL_H
#define PARPLAN_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "modules.h"

#define assert_close(actual, expected, rel_tol)                                                    \
    do {                                                                                           \
        double a_ = (double)(actual), e_ = (double)(expected);                                     \
        double scale_ = fabs(e_) > 0 ? fabs(e_) : 1.0;                                             \
        if (!(fabs(a_ - e_) <= (rel_tol)*scale_))                                                  \
            fail_msg("%s = %.17g, expected %.17g (relative tolerance %g)", #actual, a_, e_,        \
                     (double)(rel_tol));                                                           \
    } while (0)

#define assert_contains(haystack, needle)                                                          \
    do {                                                                                           \
        const char *h_ = (haystack), *n_ = (needle);                                               \
        if (!h_ || !strstr(h_, n_))                                                                \
            fail_msg("'%s' does not contain '%s'", h_ ? h_ : "(null)", n_);                        \
    } while (0)

/* A GPT of L layers, hidden h, whose output layer is negligible (vocabulary 8). */
static inline ppl_model test_gpt(int64_t L, int64_t h, int64_t a, int64_t s)
{
    ppl_model m;
    memset(&m, 0, sizeof m);
    m.layers = L;
    m.hidden = h;
    m.heads = a;
    m.kv_heads = a;
    m.ffn_hidden = 4 * h;
    m.vocab = 8;
    m.seq_len = s;
    m.tied_embeddings = true;
    m.bias = true;
    m.dropout = true;
    return m;
}

/* A catalogue model or topology of the source tree; fails the test if it does not load. */
static inline ppl_model test_model(const char *name)
{
    char path[1024];
    ppl_model m;
    ppl_error err;
    snprintf(path, sizeof path, "%s/models/%s.json", PPL_TEST_SOURCE_ROOT, name);
    if (ppl_model_load(path, NULL, NULL, &m, &err) != PPL_OK)
        fail_msg("%s: %s", path, err.message);
    return m;
}

static inline ppl_topology test_topology(const char *name)
{
    char path[1024];
    ppl_topology t;
    ppl_error err;
    snprintf(path, sizeof path, "%s/topologies/%s.json", PPL_TEST_SOURCE_ROOT, name);
    if (ppl_topology_load(path, NULL, NULL, &t, &err) != PPL_OK)
        fail_msg("%s: %s", path, err.message);
    return t;
}

/* tp x pp on `gpus` GPUs (dp the rest), everything else off: the default split. */
static inline ppl_config test_config(int64_t gpus, int64_t tp, int64_t pp, int64_t mbs,
                                     int64_t batch, const ppl_model *m)
{
    ppl_config c;
    memset(&c, 0, sizeof c);
    c.gpus = gpus;
    c.tp = tp;
    c.pp = pp;
    c.cp = c.ep = c.vp = 1;
    c.dp = gpus / (tp * pp);
    c.mbs = mbs;
    c.global_batch = batch;
    c.microbatches = batch / (c.dp * mbs);
    c.precision = PPL_PRECISION_BF16;
    c.split = ppl_stage_split_default(m->layers, pp);
    return c;
}

/* c's layout and its microbatch's exchanges and compute parts. */
static inline void test_laid_out(const ppl_eval_ctx *ctx, const ppl_config *c, ppl_layout *l,
                                 ppl_micro *mi)
{
    ppl_layout_init(ctx, c, l);
    ppl_micro_comm_init(ctx, c, l, mi);
    ppl_micro_compute_init(ctx, c, mi);
}

/* A configuration of pp stages in vp chunks a rank, nothing else split, at the
 * default split with `shift` layers moved from the last stage to the first where
 * pp > 2 and the last keeps some (uneven ends). */
static inline ppl_config test_split_config(const ppl_model *m, int64_t pp, int64_t vp,
                                           int64_t shift)
{
    ppl_config c;
    memset(&c, 0, sizeof c);
    c.pp = pp, c.vp = vp, c.tp = c.cp = c.dp = c.ep = 1;
    c.split = ppl_stage_split_default(m->layers, pp);
    if (pp > 2 && shift > 0 && c.split.last > shift) {
        c.split.first += shift;
        c.split.last -= shift;
    }
    return c;
}

#endif
