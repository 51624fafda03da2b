/*
 * parplan/pipeline.h - the pipeline schedules that split the backward pass:
 * ZB-H1, ZB-H2, ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024),
 * DualPipe (DeepSeek-V3 Technical Report, arXiv 2412.19437, §3.2.1 and Table 2)
 * and DualPipeV (github.com/deepseek-ai/DualPipe, README): their bubble, the
 * microbatches of activations they keep in flight, the copies of the parameters
 * a rank holds, the configurations they can run and the software that runs them.
 *
 * A stage's time per microbatch (schedule.c) is split into three passes: F the
 * forward, B the backward to the input (activation gradients) and W the backward to
 * the weights (weight gradients: the weighted layers' GEMMs once more, as many
 * FLOPs as their forward GEMMs; the attention core, norms, element-wise kernels
 * and recomputation belong to B).  F + B + W is the stage's time of 1F1B.  FB is a
 * forward and a backward of two microbatches run together (DualPipe's F&B), which
 * hides the expert-parallel all-to-all of each under the other's compute.
 */
#ifndef PARPLAN_PIPELINE_H
#define PARPLAN_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "parplan/config.h"
#include "parplan/error.h"

/* One stage's passes per microbatch, seconds (or a sum of them over stages). */
typedef struct ppl_passes {
    double f_s;  /* forward, with its exposed communication */
    double b_s;  /* backward to the input, with its exposed communication */
    double w_s;  /* backward to the weights */
    double fb_s; /* a forward and a whole backward (B + W) of two microbatches overlapped */
} ppl_passes;

/* Whether the schedule is one of this module's (its bubble from split passes). */
bool ppl_schedule_splits_backward(int schedule);

/* The model chunks a rank holds under the schedule: 2 for the V-shaped ZB-V and
 * DualPipeV, 1 for ZB-H1, ZB-H2, DualPipe and GPipe, 0 for 1F1B (any vp). */
int64_t ppl_schedule_chunks(int schedule);

/* Whether one forward and one backward run overlapped in the steady state, hiding
 * the expert all-to-all (DualPipe and DualPipeV). */
bool ppl_schedule_overlaps_fb(int schedule);

/*
 * The bubble, seconds, of `schedule` on pp ranks (vp chunks each, 1F1B only) from
 * the sum of the passes of the pp - 1 stages other than the slowest one (the
 * slowest stage's own m passes are the steady state; schedule.c).  With equal
 * stages, others = (pp - 1) x one stage's passes and the formulas are the papers':
 *   1F1B, GPipe  (p-1)(F+B+W)                       Narayanan et al. SC'21 §2.2
 *   interleaved  (p-1)(F+B+W)/v                     Narayanan et al. SC'21 §2.2.2
 *   ZB-H1        (p-1)(F+B-W)                       Qi et al. ICLR 2024, Table 2
 *   ZB-H2        (p-1)(F+B-2W), at least 0          Qi et al. ICLR 2024, Table 2
 *   ZB-V         (p-1)(F+B-2W)/2, at least 0        see pipeline.c
 *   DualPipe     (p/2-1)(FB+B-2W)                   DeepSeek-V3 report, Table 2
 *   DualPipeV    (p-1)(FB+B-2W)/2                   DualPipe README, bubble table
 * B is the backward to the input throughout: DeepSeek's table writes the whole
 * backward, B + W, so its (PP/2-1)(F&B+B-3W) is (p/2-1)(FB+B-2W) here and its ZB1P
 * (PP-1)(F+B-2W) is ZB-H1's (p-1)(F+B-W).
 */
double ppl_pipeline_bubble_s(int schedule, int64_t pp, int64_t vp, const ppl_passes *others);

/* Microbatches of a stage's activations that stage `stage` of this module's
 * schedules keeps in flight (the peak), at most the m there are; see pipeline.c. */
double ppl_pipeline_in_flight(const ppl_config *config, int64_t stage);

/* Copies of a stage's parameters (and their gradients and optimizer states) a rank
 * holds: 2 under DualPipe (its stage and the mirrored one), else 1. */
double ppl_pipeline_param_copies(int schedule);

/* The schedule's rules for the configuration (ranks, chunks, microbatches); a
 * usage error naming the knob, PPL_OK for the schedules not of this module. */
ppl_status ppl_pipeline_check(const ppl_config *config, ppl_error *err);

/* Why Megatron-LM (as parplan emits its flags) cannot run the schedule, or NULL
 * when it can (1F1B). */
const char *ppl_schedule_megatron_error(int schedule);

/* Which software runs the schedule, one sentence (for --help, README, reports). */
const char *ppl_schedule_launchers(int schedule);

#endif
