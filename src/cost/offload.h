/*
 * cost/offload.h - optimizer state on the host: the link, the CPU step.
 *
 * A share f of each GPU's optimizer shard (fp32 master weights and Adam moments)
 * lives in host memory and is stepped by the CPU: Megatron-Core's
 * --optimizer-cpu-offload --optimizer-offload-fraction f (HybridDeviceOptimizer,
 * megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py) and DeepSpeed's
 * zero_optimization.offload_optimizer (ZeRO-Offload, Ren et al. ATC'21).  Per step
 * the offloaded gradients go down the host link, the CPU steps them, and the
 * updated 16-bit parameters come back up.
 */
#ifndef PARPLAN_OFFLOAD_H
#define PARPLAN_OFFLOAD_H

#include <stdbool.h>

#include "cost/config.h"
#include "cost/evalctx.h"
#include "hardware/topology.h"

/* Bytes the Adam step moves per parameter: fp32 master, momentum and variance
 * read and written (24), the gradient read (4) and the 16-bit weight written (2)
 * (the count compute.c takes for the GPU's step). */
#define PPL_ADAM_BYTES_PER_PARAM 30.0

/* One step's offload of `params` parameters (the offloaded part of a GPU's shard). */
typedef struct ppl_offload_time {
    double down_s; /* gradients to the host */
    double cpu_s;  /* the CPU's Adam step */
    double up_s;   /* updated parameters back */
    double total_s;
} ppl_offload_time;

/* grad_bytes and weight_bytes per parameter cross the link; overlapped: the
 * copies and the CPU step pipelined per parameter (Megatron-Core's
 * --overlap-cpu-optimizer-d2h-h2d), max of the three, else their sum. */
void ppl_offload_time_of(double params, double grad_bytes, double weight_bytes,
                         const ppl_host_figures *link, bool overlapped, ppl_offload_time *out);

/* The optimizer step of one GPU holding a shard of `params` parameters: the GPU's
 * share (ppl_optimizer_time) and the offloaded share (ppl_offload_time_of, over
 * the topology GPU's host link), which run at once (hybrid_optimizer.py:166-175:
 * the GPU optimizer is launched before the CPU ones step); the copies overlap the
 * CPU step on stacks that overlap communication (ppl_stack_overlaps). */
double ppl_optimizer_step_time(const ppl_eval_ctx *ctx, const ppl_config *config, double params);

#endif
