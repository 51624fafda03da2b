/*
 * cost/estimate.h - one configuration's step time: pipeline schedule,
 * communication exposed on the critical path, optimizer and per-step cost.
 *
 * The pipeline is run op by op over every stage's passes and sends (executor.h);
 * with equal stages and enough microbatches it takes the papers' closed forms
 * (pipeline.h: 1F1B (p-1)/m of the ideal, Narayanan et al. SC'21 §2.2; with v
 * interleaved chunks (p-1)/(mv)), and never less than a microbatch's chain.  The data-parallel gradient reduction runs after each stage's last
 * backward, partly hidden by the stages that finish later and, on stacks that
 * overlap it, by that last backward itself.
 */
#ifndef PARPLAN_ESTIMATE_H
#define PARPLAN_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

#include "cost/config.h"
#include "parplan/error.h"
#include "cost/evalctx.h"
#include "cost/memory.h"
#include "cost/pipeline.h"
#include "cost/stage.h"

typedef struct ppl_step_time {
    double compute; /* compute on the critical path: m x the slowest stage */
    double bubble;  /* pipeline fill and drain */
    double tp_comm, cp_comm, pp_comm, dp_comm, ep_comm; /* communication time, each */
    double optimizer;
    double exposed_comm; /* communication not hidden under compute */
    double host;         /* the GPUs waiting for the host's launches (stage.h host_wait) */
    double overhead;     /* per-step cost */
} ppl_step_time;

/* The passes of a run of equal stages (a stage class), per microbatch. */
typedef ppl_pipe_span ppl_stage_passes; /* pipeline.h */
#define PPL_PASS_CLASSES 8 /* the stage classes whose passes an estimate lists */

typedef struct ppl_estimate {
    ppl_config config;
    ppl_memory memory;
    ppl_step_time time;
    ppl_traffic traffic;
    double step_time_s;
    double tokens_per_s;
    double model_tflops_per_gpu;
    double hardware_tflops_per_gpu;
    double mfu;      /* model FLOPs over the dense peak of the precision the GEMMs run
                        at (ppl_config precision): at most 1 */
    double mfu_bf16; /* the same against the bf16 dense peak, to compare precisions */
    int mfu_precision; /* the precision whose peak mfu is against (ppl_precision): the
                          GEMMs', or bf16 where the GPU has no figure for it */
    /* the largest lower bound the step respects (ppl_estimate_floor_s): a
     * microbatch's chain through the pipeline, the busiest rank's work, the FLOPs at
     * peak; ppl_estimate_check refuses a step below it */
    double floor_s;
    double pipeline_bound_s;        /* the pipeline's lower bound (ppl_pipe_bound_s) */
    double pipeline_peak_in_flight; /* microbatches of a stage's activations a rank
                                       held at most, as the executor ran it */
    int64_t slowest_stage;
    ppl_passes passes; /* the slowest stage's F, B, W (and F&B) per microbatch */
    /* every class's, in stage order (full estimates; the first PPL_PASS_CLASSES) */
    ppl_stage_passes stage_passes[PPL_PASS_CLASSES];
    int n_stage_passes;
    ppl_stack stack;        /* the software whose overlaps the figures assume */
    /* an overlap the step counts on that no calibration run measures (stack.h
     * conservative), said; NULL when none */
    const char *overlap_assumed;
    int64_t ep_servers;     /* servers one expert-parallel group spans (1: inside one) */
    const char *bottleneck; /* "compute", "bubble", "tp_comm", ... */
    /* where the largest exposed communication runs: "nvlink" or a tier's name (a
     * copy, so that the estimate outlives its topology) */
    char bottleneck_level[PPL_NAME_MAX];
} ppl_estimate;

/* Assembles an estimate from the pieces.  With full false it stops at whether the
 * configuration fits and its step time (no traffic, rates or bottleneck); returns
 * whether it fits. */
bool ppl_estimate_cached(const ppl_eval_ctx *ctx, const ppl_config *config,
                         const ppl_layout *layout, const ppl_micro *micro, ppl_classes *classes,
                         bool full, ppl_estimate *out);

/* Whether the configuration fits, as ppl_estimate_cached says, from the memory
 * of its stages alone (no step time). */
bool ppl_estimate_fits(const ppl_eval_ctx *ctx, const ppl_config *config, const ppl_layout *layout,
                       const ppl_micro *micro, const ppl_classes *classes);

/* The same, and *shown the memory ppl_estimate_cached reports (its out->memory:
 * the heaviest stage's, or the first that does not fit). */
bool ppl_estimate_memory(const ppl_eval_ctx *ctx, const ppl_config *config,
                         const ppl_layout *layout, const ppl_micro *micro,
                         const ppl_classes *classes, ppl_memory *shown);

/* Seconds: a floor on the pipeline and the exposed data-parallel reduction
 * together (the step less its optimizer and per-step cost), from pipe_floor_s, a
 * floor on the pipeline alone.  The first stage's class reduces its gradients
 * with no stage draining before it (estimate.c class_reduction: no slack), hiding
 * at most dp_overlap x passes of its backward, and on a line of ranks (not a V,
 * nor DualPipe) its rank works m microbatches of the stage, so its backward is at
 * most pipe / m.  What it hides, own <= min(reduce_0, h pipe) with h =
 * dp_overlap passes / m <= 1 (passes <= m), still slows its compute by oc x own
 * (oc, the overlap's cost, <= 1), and its parameters' gather costs at least oc x
 * gather_0, exposed or hidden:
 *   pipe + exposed >= pipe + reduce_0 - (1 - oc) own + oc gather_0
 *                  >= max(pipe + oc reduce_0, pipe (1 - (1 - oc) h) + reduce_0)
 *                     + oc gather_0,
 * which grows with pipe.  Tighter where few microbatches make pipe / m a loose
 * figure for the backward: the class's own exposure, as ppl_estimate_cached's walk
 * works it out from its stage's backward, on top of pipe (its first class has no
 * slack, and the step is the pipeline plus the largest class's exposure).  That
 * costs a stage evaluation, so it is done only where it can decide: where the
 * floor so far is at most decides_s and the most the exposure can be, (1 + oc)
 * reduce_0 + gather_0, would take it past (NAN: always, for the bounds' own
 * check).  Its reduction and gather are the ones ppl_estimate_cached then reads
 * (ppl_class_dp, kept in the class). */
double ppl_estimate_dp_floor_s(const ppl_eval_ctx *ctx, const ppl_config *config,
                               const ppl_layout *layout, const ppl_micro *micro,
                               ppl_classes *classes, double pipe_floor_s, double decides_s);

/* Under full recomputation (c, which fits with every layer recomputed), the
 * fewest recomputed layers per stage, in whole chunks of vp, that still fit:
 * Megatron-LM's --recompute-num-layers of the block method; 0 when every layer
 * must be. */
int64_t ppl_fewest_recomputed(const ppl_eval_ctx *ctx, const ppl_config *config,
                              const ppl_layout *layout, const ppl_micro *micro,
                              const ppl_classes *classes);

/* Evaluates one checked configuration. */
void ppl_estimate_config(const ppl_eval_ctx *ctx, const ppl_config *config, ppl_estimate *out);

/* PPL_OK when every figure of the estimate (times, rates, memory, traffic) is
 * finite and none is negative; else PPL_EINTERNAL naming the first that is not.
 * Loaded quantities are range-checked, so a failure here is a model bug: no
 * such figure is printed or ranked. */
ppl_status ppl_estimate_check(const ppl_estimate *estimate, ppl_error *err);

#endif
