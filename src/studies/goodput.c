/*
 * goodput.c - failures, checkpoints and restarts: the share of wall-clock time
 * that advances training (see studies/goodput.h).
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
 *  - Hot spares: 78% of the unexpected interruptions were hardware (the same
 *    paper, §3.3.4: GPUs, HBM, hosts, network), each taking a server out.  A
 *    free spare replaces it in 2 min instead of the 10 min restart (an
 *    assumption: a warm standby skips reallocation; ByteDance's ByteRobust,
 *    Wan et al. 2025, keeps such warm standbys).  A failed server is back after
 *    48 h of repair (an assumption: diagnosis, part swap, burn-in).
 */
#include "studies/goodput.h"

#include <math.h>

#include "base/constants.h"

void ppl_goodput_opts_init(ppl_goodput_opts *o)
{
    o->mtbf_gpu_hours = PPL_MTBF_GPU_HOURS_DEFAULT;
    o->storage_bps = PPL_CHECKPOINT_BPS_DEFAULT;
    const ppl_assumed *a = ppl_assumed_values();
    o->host_bps = a->host_copy_bps;
    o->restart_s = a->restart_s;
    o->spare_gpus = 0;
    o->spare_fraction = 0;
    o->spare_restart_s = a->spare_restart_s;
    o->repair_s = a->repair_s;
    o->gpus_per_server = 8;
}

int64_t ppl_spare_gpus(const ppl_goodput_opts *o, int64_t gpus)
{
    int64_t per = o->gpus_per_server > 0 ? o->gpus_per_server : 1;
    double want =
        o->spare_fraction > 0 ? ceil(o->spare_fraction * (double)gpus) : (double)o->spare_gpus;
    if (!(want > 0))
        return 0;
    double servers = ceil(want / (double)per);
    return servers > 1e12 ? (int64_t)1e12 * per : (int64_t)servers * per;
}

double ppl_spare_free_probability(int64_t spare_servers, double mu)
{
    if (spare_servers <= 0)
        return 0.0;
    if (!(mu > 0))
        return 1.0;
    /* P(N < S) for N ~ Poisson(mu): the sum of its first S terms, each in log
     * space so that a large mu does not underflow e^-mu */
    if ((double)spare_servers > mu + 40.0 * sqrt(mu) + 50.0)
        return 1.0;
    double p = 0, lmu = log(mu);
    for (int64_t k = 0; k < spare_servers; k++)
        p += exp(-mu + (double)k * lmu - lgamma((double)k + 1.0));
    return p > 1.0 ? 1.0 : p;
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
    /* hot spares: a hardware failure that finds one free skips reallocation */
    out->spare_gpus = ppl_spare_gpus(o, config->gpus);
    int64_t per = o->gpus_per_server > 0 ? o->gpus_per_server : 1;
    out->servers_in_repair = PPL_HARDWARE_SHARE / out->job_mtbf_s * o->repair_s;
    out->spare_free = ppl_spare_free_probability(out->spare_gpus / per, out->servers_in_repair);
    double restart = o->restart_s;
    if (o->spare_restart_s < o->restart_s)
        restart -= PPL_HARDWARE_SHARE * out->spare_free * (o->restart_s - o->spare_restart_s);
    out->recovery_s = restart + out->checkpoint.reload_s;
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
