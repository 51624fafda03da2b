/*
 * goodput.c - failures, checkpoints and restarts: the share of wall-clock time
 * that advances training (see parplan/goodput.h).
 *
 * Defaults and their sources:
 *  - 50,677 (about 50,680) GPU-hours between job-interrupting failures.
 *    Dubey et al. 2024, "The Llama 3 Herd of Models", §3.3.4 Reliability,
 *    Table 5: 466 job interruptions in a 54-day snapshot of pre-training on
 *    16,384 H100, 47 planned and 419 unexpected.  The unexpected ones: job MTBF
 *    = 54 x 24 h / 419 = 3.093 h, per GPU 3.093 h x 16,384 = 50,677 GPU-hours.
 *  - 2 TB/s aggregate storage bandwidth: the same paper, §3.3.1, Tectonic
 *    "2 TB/s sustained throughput, 7 TB/s peak"; the sustained figure.
 *  - 25 GB/s per GPU to host memory: an assumption, about 40% of PCIe Gen5 x16's
 *    64 GB/s per direction, the share left with the host link shared with the NIC
 *    traffic and pageable copies.
 *  - 10 min to restart, before the checkpoint is read back: an assumption
 *    (scheduler reallocation, process start, NCCL initialisation of a large job).
 */
#include "parplan/goodput.h"

#include <math.h>

void ppl_goodput_opts_init(ppl_goodput_opts *o)
{
    o->mtbf_gpu_hours = PPL_MTBF_GPU_HOURS_DEFAULT;
    o->storage_bps = PPL_CHECKPOINT_BPS_DEFAULT;
    o->host_bps = PPL_HOST_BPS_DEFAULT;
    o->restart_s = PPL_RESTART_S_DEFAULT;
}

bool ppl_stack_async_save(ppl_stack stack)
{
    /* Megatron-Core's --async-save first appears in core_v0.7.0 (May 2024,
     * megatron/training/arguments.py); NeMo 2025 runs it by default.  The
     * megatron-core profile (2023-24) is taken at its newest. */
    return stack == PPL_STACK_NEMO_2025 || stack == PPL_STACK_MEGATRON_CORE;
}

double ppl_checkpoint_bytes(double params_total, const ppl_memory_opts *m, ppl_optimizer optimizer)
{
    /* Megatron-Core distributed checkpoint (torch_dist): the 16-bit model
     * weights and the distributed optimizer's fp32 master weights and moments,
     * 2 + 4 + 8 = 14 B per parameter with Adam (ZeRO, Rajbhandari et al. SC'20
     * §3.1: K = 12 of optimizer state); gradients are not saved. */
    double per = m->weight_bytes + m->master_bytes +
                 (optimizer == PPL_OPTIMIZER_SGD ? m->sgd_bytes : m->adam_bytes);
    return params_total * per;
}

int64_t ppl_checkpoint_writers(const ppl_config *c)
{
    /* the distributed optimizer's shards are spread over the data-parallel ranks,
     * each saving its own; without it one replica holds every tensor */
    int64_t replica = c->tp * c->pp * c->cp;
    return c->zero >= 1 ? replica * c->dp : replica;
}

void ppl_checkpoint_cost(const ppl_goodput_opts *o, double params_total,
                         const ppl_memory_opts *memory, const ppl_config *config, ppl_stack stack,
                         ppl_checkpoint *out)
{
    out->bytes = ppl_checkpoint_bytes(params_total, memory, config->optimizer);
    out->writers = ppl_checkpoint_writers(config);
    if (out->writers < 1)
        out->writers = 1;
    out->shard_bytes = out->bytes / (double)out->writers;
    /* the slower of the storage system and the writers' host links */
    double bw = fmin(o->storage_bps, (double)out->writers * o->host_bps);
    out->write_s = out->bytes / bw;
    out->reload_s = out->write_s;
    out->async = ppl_stack_async_save(stack);
    /* async: training waits only for its shard's copy to host memory */
    out->stall_s = out->async ? out->shard_bytes / o->host_bps : out->write_s;
}

double ppl_young_daly_interval_s(double stall_s, double mtbf_s)
{
    /* Young 1974, "A first order approximation to the optimum checkpoint
     * interval", CACM 17(9); Daly 2006 (FGCS 22) to first order */
    return sqrt(2.0 * stall_s * mtbf_s);
}

double ppl_goodput_waste(double stall_s, double interval_s, double mtbf_s, double recovery_s)
{
    /* Young 1974 / Daly 2006: a save costs stall_s every interval_s; a failure,
     * every mtbf_s on average, loses half an interval of work plus the restart
     * and reload */
    return stall_s / interval_s + (interval_s / 2.0 + recovery_s) / mtbf_s;
}

void ppl_goodput_of(const ppl_goodput_opts *o, double params_total, const ppl_memory_opts *memory,
                    const ppl_config *config, ppl_stack stack, ppl_goodput *out)
{
    ppl_checkpoint_cost(o, params_total, memory, config, stack, &out->checkpoint);
    double gpus = config->gpus > 0 ? (double)config->gpus : 1.0;
    out->job_mtbf_s = o->mtbf_gpu_hours * 3600.0 / gpus;
    out->interval_s = ppl_young_daly_interval_s(out->checkpoint.stall_s, out->job_mtbf_s);
    /* an asynchronous save must finish writing before the next one starts */
    if (out->checkpoint.async && out->interval_s < out->checkpoint.write_s)
        out->interval_s = out->checkpoint.write_s;
    out->recovery_s = o->restart_s + out->checkpoint.reload_s;
    out->waste = out->interval_s > 0 ? ppl_goodput_waste(out->checkpoint.stall_s, out->interval_s,
                                                         out->job_mtbf_s, out->recovery_s)
                                     : out->recovery_s / out->job_mtbf_s;
    out->goodput = out->waste >= 1.0 ? 0.0 : 1.0 - out->waste;
    if (out->goodput > 1.0)
        out->goodput = 1.0;
}

double ppl_time_with_failures_s(double failure_free_s, double goodput)
{
    return goodput > 0 ? failure_free_s / goodput : INFINITY;
}
