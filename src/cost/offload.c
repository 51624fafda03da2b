/*
 * offload.c - the host link of each GPU family and one step's optimizer offload
 * (see cost/offload.h).
 *
 * The host of each GPU kind (its link, memory bandwidth and capacity) is a
 * figure of the kind's row (gpu.c).
 *
 * CPU Adam: memory-bound, PPL_ADAM_BYTES_PER_PARAM bytes a parameter streamed at
 * the assumed cpu_adam_share (constants.c) of the GPU's share of the host's memory
 * bandwidth.  The
 * share is an assumption: ZeRO-Offload (Ren et al. ATC'21, §5 "Optimized CPU
 * Execution") vectorises and tiles its CPU-Adam to run 5-7x faster than PyTorch's
 * CPU Adam (DeepSpeed's ZeRO-Offload tutorial) without a bandwidth figure, and no
 * measured run here calibrates it.
 */
#include "cost/offload.h"

#include "base/minmax.h"
#include "base/constants.h"

#include <math.h>

#include "cost/evalctx.h"

void ppl_offload_time_of(double params, double grad_bytes, double weight_bytes,
                         const ppl_host_figures *link, bool overlapped, ppl_offload_time *out)
{
    /* hybrid_optimizer.py:114 copies each offloaded gradient to pinned host memory,
     * the CPU optimizer steps it, and :124 copies the updated parameter back */
    out->down_s = params * grad_bytes / link->link_bps;
    out->up_s = params * weight_bytes / link->link_bps;
    out->cpu_s = params * PPL_ADAM_BYTES_PER_PARAM /
                 (link->memory_bps * ppl_assumed_values()->cpu_adam_share);
    /* overlapped, one CPU optimizer per parameter with its copies on their own
     * streams (hybrid_optimizer.py:204-221): the slowest of the three; else in turn */
    out->total_s = overlapped ? ppl_max(out->down_s, ppl_max(out->cpu_s, out->up_s))
                              : out->down_s + out->cpu_s + out->up_s;
}

double ppl_optimizer_step_time(const ppl_eval_ctx *ctx, const ppl_config *c, double params)
{
    const double f = c->offload_optimizer > 0.0 ? c->offload_optimizer : 0.0;
    double gpu_s = ppl_optimizer_time((1.0 - f) * params, ctx->topo, &ctx->eff, c->optimizer);
    if (f <= 0.0)
        return gpu_s;
    ppl_host_figures link;
    ppl_offload_time t;
    ppl_gpu_host(&ctx->topo->gpu, &link);
    ppl_offload_time_of(f * params, ppl_grad_bytes(&ctx->memory, c->precision),
                        ctx->memory.weight_bytes, &link, ppl_stack_overlaps(ctx->stack.stack), &t);
    return ppl_max(gpu_s, t.total_s);
}
