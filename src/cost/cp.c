/*
 * cp.c - context parallelism's exchange per layer, and what of it shows.
 *
 * cp ranks each hold b*s/cp tokens of the sequence, split into 2cp chunks with
 * rank i holding chunks i and 2cp-1-i, so that causal attention gives every rank
 * the same work (Megatron-Core / Transformer Engine's load balancing; arguments.py
 * asks seq_length % (2 cp) == 0).  With T = b*s/cp tokens per rank, q and kv the
 * query and key/value columns a tensor-parallel rank holds, 16-bit elements, the
 * four algorithms of Megatron-Core's --cp-comm-type (transformer_config.py,
 * cp_comm_type; Transformer Engine transformer_engine/pytorch/attention/
 * dot_product_attention/context_parallel.py):
 *
 *   p2p      ring attention (Liu et al. 2023; TE AttnFuncWithCPAndKVP2P): R = cp
 *            steps, each computing attention against one rank's K/V chunk while
 *            the next chunk, 2*T*kv*2 bytes, comes from the previous rank: R-1
 *            transfers a layer forward, each under one step's attention (1/R of
 *            the layer's: the load balancing makes the steps equal); backward
 *            passes K/V and their gradients, twice the bytes, under one step's
 *            backward each.  Exposed per step: max(0, transfer - step compute).
 *   a2a      DeepSpeed-Ulysses (Jacobs et al. 2023; TE AttnFuncWithCPAndQKVOA2A):
 *            all-to-all of Q, K, V (sequence gathered, heads scattered) before
 *            attention and of its output after: buffers of T*(2q + 2kv)*2 bytes
 *            per GPU forward; backward the output and its gradient before, dQ,
 *            dK, dV after: T*(3q + 2kv)*2 bytes.  Attention waits for them: none
 *            is hidden.  The heads of each rank must divide by cp (config.c).
 *   allgather the whole sequence's K and V, 2*b*s*kv*2 bytes gathered before
 *            attention; backward gathered again and their gradients
 *            reduce-scattered (TE AttnFuncWithCPAndKVAllGather: "KV all-gather
 *            between CP ranks is exposed"; Megatron-Core: "not async, and cannot
 *            be overlapped").
 *   a2a+p2p  all-to-all inside groups of A = cp_a2a adjacent CP ranks (NVLink),
 *            then a ring of R = cp/A ranks across them on sequences of A*T tokens
 *            and 1/A of the heads: the same K/V bytes a step as p2p
 *            (--hierarchical-context-parallel-sizes A R; TE's a2a+p2p).
 *
 * Full recomputation runs a layer's forward again in its backward, exchange
 * included (Korthikanti et al. 2022 §5: the whole forward is recomputed).
 *
 * Memory: every variant keeps the same activations for backward.  An all-to-all
 * trades sequence for heads, b*s x (q/cp) being the bytes of b*(s/cp) x q, so Q,
 * K, V and the output saved after it weigh what the ring's local ones do
 * (AttnFuncWithCPAndQKVOA2A saves q, k, v, out after the exchange).  The
 * transient buffers (two K/V chunks in flight for the ring, the gathered K/V of
 * one layer, 2*b*s*kv*2 bytes, for allgather) live one layer at a time and are
 * not counted.
 */
#include "cost/cp.h"

#include "base/minmax.h"
#include "cost/stack.h"

#include <string.h>

/* Bytes per GPU of one all-to-all buffer of q and of kv columns, 16-bit. */
static void a2a_buffers(const ppl_model *m, const ppl_config *c, double *q_bytes, double *kv_bytes)
{
    ppl_layer_shape shape;
    ppl_layer_shape_of(m, c->tp, &shape);
    double tokens = (double)c->mbs * (double)m->seq_len / (double)c->cp;
    *q_bytes = tokens * shape.q_cols * 2.0;
    *kv_bytes = tokens * shape.kv_cols * 2.0;
}

void ppl_cp_a2a_bytes(const ppl_model *m, const ppl_config *c, double *fwd, double *bwd)
{
    *fwd = *bwd = 0.0;
    if (c->cp <= 1 || (c->cp_comm != PPL_CP_COMM_A2A && c->cp_comm != PPL_CP_COMM_A2A_P2P))
        return;
    double q, kv;
    a2a_buffers(m, c, &q, &kv);
    *fwd = 2.0 * q + 2.0 * kv; /* Q, K, V in; the output back */
    *bwd = 3.0 * q + 2.0 * kv; /* the output and its gradient in; dQ, dK, dV back */
}

/* The all-to-alls of one layer on group g: forward and backward times. */
static void a2a_times(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_group *g,
                      double count, double *fwd, double *bwd, ppl_traffic *traffic)
{
    double q, kv;
    a2a_buffers(ctx->model, c, &q, &kv);
    *fwd = ppl_collective_count(&ctx->net, PPL_OP_ALLTOALL, g, q, 2.0 * count, traffic) +
           ppl_collective_count(&ctx->net, PPL_OP_ALLTOALL, g, kv, 2.0 * count, traffic);
    *bwd = ppl_collective_count(&ctx->net, PPL_OP_ALLTOALL, g, q, 3.0 * count, traffic) +
           ppl_collective_count(&ctx->net, PPL_OP_ALLTOALL, g, kv, 2.0 * count, traffic);
}

/* Fills out for `count` layers, adding their traffic when asked. */
static void cp_cost(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l, double count,
                    ppl_cp_cost *out, ppl_traffic *traffic)
{
    const ppl_model *m = ctx->model;
    memset(out, 0, sizeof *out);
    if (c->cp <= 1)
        return;
    /* K and V of one rank's tokens, 16-bit: a ring step's message */
    const double kv_chunk = 2.0 * (double)c->mbs * (double)m->seq_len / (double)c->cp *
                            ppl_kv_columns_per_gpu(m, c->tp) * 2.0;
    const ppl_group *ring = NULL;
    switch (c->cp_comm) {
    case PPL_CP_COMM_P2P:
        ring = &l->g_cp;
        out->ring_ranks = (double)c->cp;
        break;
    case PPL_CP_COMM_A2A:
        a2a_times(ctx, c, &l->g_cp, count, &out->open_fwd_s, &out->open_bwd_s, traffic);
        break;
    case PPL_CP_COMM_ALLGATHER: {
        double whole = kv_chunk * (double)c->cp; /* the gathered buffer */
        out->open_fwd_s =
            ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER, &l->g_cp, whole, count, traffic);
        out->open_bwd_s =
            ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER, &l->g_cp, whole, count, traffic) +
            ppl_collective_count(&ctx->net, PPL_OP_REDUCESCATTER, &l->g_cp, whole, count, traffic);
        break;
    }
    case PPL_CP_COMM_A2A_P2P:
        a2a_times(ctx, c, &l->g_cp_a2a, count, &out->open_fwd_s, &out->open_bwd_s, traffic);
        ring = &l->g_cp_ring;
        out->ring_ranks = (double)l->g_cp_ring.n;
        break;
    }
    if (ring && ring->n > 1) {
        double steps = count * (out->ring_ranks - 1.0);
        out->step_fwd_s =
            ppl_collective_count(&ctx->net, PPL_OP_SENDRECV, ring, kv_chunk, 1.0, NULL);
        out->step_bwd_s =
            ppl_collective_count(&ctx->net, PPL_OP_SENDRECV, ring, 2.0 * kv_chunk, 1.0, NULL);
        if (traffic) {
            ppl_collective_count(&ctx->net, PPL_OP_SENDRECV, ring, kv_chunk, steps, traffic);
            ppl_collective_count(&ctx->net, PPL_OP_SENDRECV, ring, 2.0 * kv_chunk, steps, traffic);
        }
    } else {
        out->ring_ranks = 0.0;
    }
    double ring_steps = out->ring_ranks > 1.0 ? out->ring_ranks - 1.0 : 0.0;
    out->fwd_s = out->open_fwd_s + ring_steps * out->step_fwd_s;
    out->bwd_s = out->open_bwd_s + ring_steps * out->step_bwd_s;
}

void ppl_cp_cost_of(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                    ppl_cp_cost *out)
{
    cp_cost(ctx, c, l, 1.0, out, NULL);
}

void ppl_cp_traffic(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l, double count,
                    ppl_traffic *traffic)
{
    ppl_cp_cost scratch;
    cp_cost(ctx, c, l, count, &scratch, traffic);
}

double ppl_cp_ring_exposed(double ranks, double transfer_s, double step_compute_s)
{
    if (ranks <= 1.0)
        return 0.0;
    return (ranks - 1.0) * ppl_pos(transfer_s - step_compute_s);
}

double ppl_cp_exposed(const ppl_cp_cost *cp, double attn_fwd_s, double attn_bwd_s, double forwards)
{
    double R = cp->ring_ranks;
    double ring_f = R > 1.0 ? ppl_cp_ring_exposed(R, cp->step_fwd_s, attn_fwd_s / R) : 0.0;
    double ring_b = R > 1.0 ? ppl_cp_ring_exposed(R, cp->step_bwd_s, attn_bwd_s / R) : 0.0;
    return forwards * (cp->open_fwd_s + ring_f) + cp->open_bwd_s + ring_b;
}

unsigned ppl_cp_comms_tried(const ppl_eval_ctx *ctx, int pinned, const ppl_config *c)
{
    if (c->cp <= 1)
        return 1u << PPL_CP_COMM_P2P;
    if (pinned >= 0)
        return 1u << pinned;
    unsigned can = ppl_stack_supports(ctx->stack.stack)->cp_comms, out = 0;
    for (int k = 0; k < PPL_CP_COMM_COUNT; k++) {
        if (!(can & (1u << k)))
            continue;
        if (k == PPL_CP_COMM_A2A && !ppl_cp_heads_split(ctx->model, c->tp, c->cp))
            continue;
        if (k == PPL_CP_COMM_A2A_P2P && (c->cp_a2a < 2 || c->cp_a2a >= c->cp))
            continue;
        out |= 1u << k;
    }
    return out;
}

/* True when exchange x costs at least what y does in every stage: what x exposes
 * before attention alone (open_*) is at least all of y's, forward and backward,
 * so x's exposed time plus the overlap's cost on the rest is at least y's
 * whatever the attention (stage.c: exposed + overlap_cost x hidden, with
 * overlap_cost <= 1).  Ties go to the lower algorithm, as the ranking orders
 * them (plan/ranking.c). */
static bool dominated(const ppl_cp_cost *x, int xi, const ppl_cp_cost *y, int yi)
{
    if (x->open_fwd_s < y->fwd_s || x->open_bwd_s < y->bwd_s)
        return false;
    return x->open_fwd_s > y->fwd_s || x->open_bwd_s > y->bwd_s || yi < xi;
}

unsigned ppl_cp_comms_costed(const ppl_eval_ctx *ctx, ppl_config *c, const ppl_layout *l,
                             unsigned tried, bool prune_dominated,
                             ppl_cp_cost costs[PPL_CP_COMM_COUNT])
{
    for (int x = 0; x < PPL_CP_COMM_COUNT; x++)
        if (tried & (1u << x)) {
            c->cp_comm = (ppl_cp_comm)x;
            ppl_cp_cost_of(ctx, c, l, &costs[x]);
        }
    const bool prune = prune_dominated && ctx->stack.overlap_cost <= 1.0;
    unsigned out = 0;
    for (int x = 0; x < PPL_CP_COMM_COUNT; x++) {
        if (!(tried & (1u << x)))
            continue;
        bool under = false;
        for (int y = 0; prune && y < PPL_CP_COMM_COUNT && !under; y++)
            under = y != x && (tried & (1u << y)) && dominated(&costs[x], x, &costs[y], y);
        if (!under)
            out |= 1u << x;
    }
    return out;
}
