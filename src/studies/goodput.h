/*
 * studies/goodput.h - the share of wall-clock time that advances training once
 * failures, checkpoint saves and restarts are counted.
 *
 * Failures interrupt the job at a rate proportional to its GPUs: job MTBF =
 * (GPU-hours between failures) / gpus.  The default per-GPU figure is from the
 * Llama 3 paper (Dubey et al. 2024, "The Llama 3 Herd of Models", §3.3.4,
 * Table 5): 419 unexpected interruptions in 54 days on 16,384 H100, so a job
 * MTBF of 54 x 24 h / 419 = 3.093 h and 3.093 h x 16,384 = 50,677 GPU-hours
 * (about 50,680).
 *
 * A checkpoint holds bf16 weights and the fp32 master weights and Adam moments
 * (2 + 12 bytes per parameter with Adam: Megatron-Core's distributed checkpoint
 * of the model and its distributed optimizer).  With ZeRO >= 1 every
 * data-parallel rank writes its shard; with ZeRO 0 one replica (tp*pp*cp ranks)
 * writes.  A synchronous save stalls training for bytes / min(storage bandwidth,
 * writers x per-GPU host bandwidth); an asynchronous one (Megatron-Core
 * --async-save, first in core_v0.7.0, 2024) only for the device-to-host copy of
 * each GPU's shard.
 *
 * The interval is Young's optimum (Young 1974; Daly 2006's first order)
 * tau = sqrt(2 delta M), and the time lost per unit of wall-clock time is
 * delta / tau + (tau / 2 + R) / M with R the restart plus the checkpoint reload.
 */
#ifndef PARPLAN_GOODPUT_H
#define PARPLAN_GOODPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "cost/config.h"
#include "cost/memory.h"
#include "cost/estimate.h"

/* Defaults, with their sources in goodput.c. */
#define PPL_MTBF_GPU_HOURS_DEFAULT (54.0 * 24.0 / 419.0 * 16384.0) /* Llama 3 §3.3.4: 50,677 */
#define PPL_CHECKPOINT_BPS_DEFAULT 2e12 /* Llama 3 §3.3.1: Tectonic, 2 TB/s sustained */
/* the host copy, restarts and repairs: assumed (constants.c, ppl_assumed) */
#define PPL_HARDWARE_SHARE 0.78 /* Llama 3 §3.3.4: unexpected interruptions from hardware */

typedef struct ppl_goodput_opts {
    double mtbf_gpu_hours; /* GPU-hours between job-interrupting failures */
    double storage_bps;    /* aggregate write (and read) bandwidth to storage */
    double host_bps;       /* per GPU: device-to-host copy and its share of the write */
    double restart_s;      /* rescheduling and restarting the job, before the reload */
    /* Hot spares held beside the job (whole servers): a failed server is swapped
     * for a free one in spare_restart_s instead of restart_s.  A failed server
     * stays in repair for repair_s, so spares run out when failures come faster
     * than repairs.  Give spare_gpus or spare_fraction (of the job's GPUs), not both. */
    int64_t spare_gpus;
    double spare_fraction;
    double spare_restart_s;
    double repair_s;
    int gpus_per_server; /* spares are whole servers of this many GPUs; < 1: 1 */
} ppl_goodput_opts;

void ppl_goodput_opts_init(ppl_goodput_opts *opts);

/* Whether a stack profile saves asynchronously (Megatron-Core --async-save):
 * nemo-2025 and megatron-core; the older profiles save synchronously. */
bool ppl_stack_async_save(ppl_stack stack);

/* Bytes of one checkpoint of the whole job: params x (weights + fp32 master +
 * optimizer moments) as the memory model counts them (14 B with Adam). */
double ppl_checkpoint_bytes(double params_total, const ppl_memory_opts *memory,
                            ppl_optimizer optimizer);

/* Ranks writing a checkpoint: every GPU of the job with ZeRO >= 1, one replica
 * (tp x pp x cp) with ZeRO 0. */
int64_t ppl_checkpoint_writers(const ppl_config *config);

/* What saving and restoring one checkpoint costs. */
typedef struct ppl_checkpoint {
    double bytes;       /* the whole checkpoint */
    int64_t writers;    /* ranks writing in parallel */
    double shard_bytes; /* per writer */
    double write_s;     /* bytes / min(storage, writers x host) */
    double stall_s;     /* training stalled per save: write_s, or the copy to host if async */
    double reload_s;    /* reading it back: the same bandwidth as writing */
    bool async;
} ppl_checkpoint;

void ppl_checkpoint_cost(const ppl_goodput_opts *opts, double params_total,
                         const ppl_memory_opts *memory, const ppl_config *config, ppl_stack stack,
                         ppl_checkpoint *out);

/* Spare GPUs held for a job of `gpus`: spare_gpus or spare_fraction x gpus,
 * rounded up to whole servers. */
int64_t ppl_spare_gpus(const ppl_goodput_opts *opts, int64_t gpus);

/* Probability that a server failure finds a spare free: servers in repair are
 * Poisson with mean servers_in_repair (an M/G/infinity queue: failure rate x
 * repair time), and a spare is free while fewer than spare_servers are out. */
double ppl_spare_free_probability(int64_t spare_servers, double servers_in_repair);

/* Young's interval sqrt(2 x stall_s x mtbf_s). */
double ppl_young_daly_interval_s(double stall_s, double mtbf_s);
/* Share of wall-clock time lost: stall/interval + (interval/2 + recovery)/mtbf. */
double ppl_goodput_waste(double stall_s, double interval_s, double mtbf_s, double recovery_s);

typedef struct ppl_goodput {
    ppl_checkpoint checkpoint;
    double job_mtbf_s;        /* mtbf_gpu_hours x 3,600 / gpus */
    double interval_s;        /* between checkpoints: Young's, at least one write (async) */
    double recovery_s;        /* restart (spares counted) + reload */
    int64_t spare_gpus;       /* hot spares beside the job, whole servers */
    double servers_in_repair; /* on average: hardware failures per second x repair_s */
    double spare_free;        /* probability a hardware failure finds a spare (0 without) */
    double waste;             /* share of wall-clock time lost */
    double goodput;           /* 1 - waste in (0, 1], 0 when waste >= 1: never finishes */
} ppl_goodput;

/* The goodput of a configuration of `config->gpus` GPUs. */
void ppl_goodput_of(const ppl_goodput_opts *opts, double params_total,
                    const ppl_memory_opts *memory, const ppl_config *config, ppl_stack stack,
                    ppl_goodput *out);

/* Wall-clock time of failure_free_s of training at goodput g: failure_free_s / g,
 * infinite at g = 0. */
double ppl_time_with_failures_s(double failure_free_s, double goodput);

#endif
