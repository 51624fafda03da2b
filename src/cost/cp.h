/*
 * cost/cp.h - context parallelism's exchange per algorithm and its overlap
 * (cp.c): ring (p2p), all-to-all (a2a), all-gather, and all-to-all inside groups
 * with a ring across them (a2a+p2p), Megatron-Core's --cp-comm-type.
 */
#ifndef PARPLAN_CP_H
#define PARPLAN_CP_H

#include "cost/config.h"
#include "cost/evalctx.h"
#include "model/model.h"

/*
 * Context parallelism's exchange of one layer, per microbatch (context.c): the
 * time of each part before overlap, and what overlaps.  A ring of R ranks passes
 * K/V chunks in R - 1 steps, each under the attention of one step (1/R of the
 * layer's); all-to-all and all-gather run before (and after) attention, in the
 * open.
 */
typedef struct ppl_cp_cost {
    double fwd_s, bwd_s;           /* all of it, forward and backward */
    double ring_ranks;             /* R, 0 without a ring */
    double step_fwd_s, step_bwd_s; /* one ring step: K/V forward, K/V and dK/dV backward */
    double open_fwd_s, open_bwd_s; /* never overlapped: all-to-all, all-gather */
} ppl_cp_cost;

/* The exchange of configuration c on its layout; zero with cp 1. */
void ppl_cp_cost_of(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                    ppl_cp_cost *out);
/* Exposed part of one layer's exchange, given the layer's attention core forward
 * and backward (seconds per microbatch) and its forward passes (1, or 1 plus the
 * recomputed share under full recomputation). */
double ppl_cp_exposed(const ppl_cp_cost *cp, double attn_fwd_s, double attn_bwd_s, double forwards);
/* A ring of `ranks` ranks: ranks - 1 transfers of transfer_s, each under one
 * step's compute (step_compute_s); what shows. */
double ppl_cp_ring_exposed(double ranks, double transfer_s, double step_compute_s);
/* Bytes of each GPU's all-to-all buffers in one layer (a2a and a2a+p2p; 0 for
 * the others), forward and backward, 16-bit. */
void ppl_cp_a2a_bytes(const ppl_model *m, const ppl_config *c, double *fwd_bytes,
                      double *bwd_bytes);
/* The algorithms to try for c (tp, cp and cp_a2a set), bit k for algorithm k:
 * the pinned one (pinned >= 0), else every one the stack runs that fits the
 * heads; p2p's bit alone with cp 1, where there is no exchange.  a2a+p2p only
 * when both of its levels have more than one rank (else it is a2a or p2p). */
unsigned ppl_cp_comms_tried(const ppl_eval_ctx *ctx, int pinned, const ppl_config *c);
/* The exchange of each algorithm of `tried` for c (costs indexed by algorithm;
 * c->cp_comm is left changed) and those worth costing: all of them, but with
 * prune_dominated (the time and cost objectives) the ones no other dominates. */
unsigned ppl_cp_comms_costed(const ppl_eval_ctx *ctx, ppl_config *c, const ppl_layout *l,
                             unsigned tried, bool prune_dominated,
                             ppl_cp_cost costs[PPL_CP_COMM_COUNT]);
/* Adds `count` layers' exchanges to the traffic. */
void ppl_cp_traffic(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l, double count,
                    ppl_traffic *traffic);

#endif
