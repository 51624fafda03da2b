/*
 * cost/pipeline.h - the pipeline schedules: one row each with every fact the
 * cost model, the rules, the launch output and the reports read of it.
 *
 * The schedules (names and labels in config.h's PPL_SCHEDULE_LIST):
 *  - 1F1B (PipeDream-Flush, Megatron's default; interleaved with vp > 1) and GPipe
 *    (all forwards, then all backwards), Narayanan et al. SC'21 §2.2;
 *  - the ones that split the backward pass: ZB-H1, ZB-H2, ZB-V (Qi et al., "Zero
 *    Bubble Pipeline Parallelism", ICLR 2024), DualPipe (DeepSeek-V3 Technical
 *    Report, arXiv 2412.19437, §3.2.1 and Table 2) and DualPipeV
 *    (github.com/deepseek-ai/DualPipe, README).
 *
 * A stage's time per microbatch (stage.c) is split into three passes: F the
 * forward, B the backward to the input (activation gradients) and W the backward to
 * the weights (weight gradients: the weighted layers' GEMMs once more, as many
 * FLOPs as their forward GEMMs; the attention core, norms, element-wise kernels
 * and recomputation belong to B).  F + B + W is the stage's time of 1F1B.  FB is a
 * forward and a whole backward of two microbatches run together (DualPipe's F&B),
 * which hides the expert-parallel all-to-all of each under the other's compute.
 *
 * Adding a schedule: its entry in PPL_SCHEDULE_LIST and its row in pipeline.c (a
 * bubble, an in-flight count and a rule function); nothing else reads its enum.
 */
#ifndef PARPLAN_PIPELINE_H
#define PARPLAN_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "cost/config.h"
#include "parplan/error.h"

/* One stage's passes per microbatch, seconds (or a sum of them over stages). */
typedef struct ppl_passes {
    double f_s;  /* forward, with its exposed communication */
    double b_s;  /* backward to the input, with its exposed communication */
    double w_s;  /* backward to the weights */
    double fb_s; /* a forward and a whole backward (B + W) of two microbatches overlapped */
} ppl_passes;

/* One schedule. */
typedef struct ppl_schedule_row {
    /* model chunks a rank holds: 0 any (1F1B: vp chunks, interleaved when vp > 1),
     * 1, or 2 in a V (ZB-V, DualPipeV) */
    int64_t chunks;
    bool splits_backward; /* B and W apart: the bubble from split passes, deferred W */
    bool overlaps_fb;     /* F&B: one forward and one backward overlapped, hiding the
                             expert all-to-all (DualPipe and DualPipeV) */
    bool forwards_first;  /* every forward before any backward (GPipe): the last stage
                             holds every microbatch's output */
    double param_copies;  /* copies of a stage's parameters a rank holds */
    /* the bubble, seconds, on pp ranks (vp chunks each) from the sum of the passes
     * of the pp - 1 stages other than the slowest (pipeline.c cites each formula) */
    double (*bubble_s)(int64_t pp, int64_t vp, const ppl_passes *others);
    /* microbatches of a stage's activations stage `stage` keeps in flight (the
     * peak), at most the m there are */
    double (*in_flight)(const ppl_config *config, int64_t stage);
    /* the schedule's rules for the configuration (ranks, chunks, microbatches): a
     * usage error naming the knob */
    ppl_status (*check)(const ppl_config *config, ppl_error *err);
    const char *megatron_error; /* why Megatron-LM (as parplan emits it) cannot run
                                   it; NULL: it can */
    const char *launchers;      /* the software that runs it, one sentence */
    /* torchtitan's pipeline_parallel_schedule for it (PyTorch pipelining's class
     * name without "Schedule": torch/distributed/pipelining/schedules.py
     * get_schedule_class), with vp > 1 where it differs; NULL: torchtitan has no
     * schedule that runs it */
    const char *torchtitan, *torchtitan_vp;
} ppl_schedule_row;

/* The row of schedule s; 1F1B's when s is out of range. */
const ppl_schedule_row *ppl_schedule_of(int schedule);

/* Whether the schedule lays its ranks on a line, rank k holding stages k, k + p,
 * ... (1F1B, interleaved or not, GPipe, ZB-H1, ZB-H2): not a V (chunks 2), nor
 * DualPipe's two directions (programs.c's routes). */
bool ppl_schedule_is_line(int schedule);

/* The schedule's name as flags, files and JSON spell it ("1f1b", "zb-h1"), and its
 * label as prose prints it ("1F1B", "ZB-H1"); "?" out of range. */
const char *ppl_schedule_name(int schedule);
const char *ppl_schedule_label(int schedule);
/* The same for a configuration: 1F1B with vp > 1 is "interleaved" ("interleaved
 * 1F1B" as a label). */
const char *ppl_config_schedule_name(const ppl_config *config);
const char *ppl_config_schedule_label(const ppl_config *config);
/* Names a plan file's config.schedule may hold: the schedules, then "interleaved"
 * (1F1B), NULL-terminated; the index of "interleaved" is PPL_SCHEDULE_COUNT. */
extern const char *const ppl_schedule_config_names[];

/*
 * The bubble of `schedule` (ppl_schedule_row bubble_s).  With equal stages,
 * others = (pp - 1) x one stage's passes and the formulas are the papers':
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

/* What one step's pipeline is made of. */
typedef struct ppl_pipe_in {
    int schedule;         /* ppl_schedule */
    int64_t pp;           /* ranks (pipeline stages) */
    int64_t vp;           /* model chunks a rank holds (1F1B: interleaved when > 1) */
    int64_t microbatches; /* m */
    int64_t group;        /* interleaved 1F1B: microbatches a chunk takes in turn
                             (Megatron-Core's group per virtual stage, ppl_vp_group) */
    const ppl_passes *stage; /* pp entries: stage k's passes per microbatch */
    const double *hop_s;     /* pp - 1 entries, or NULL (0): the time a microbatch's
                                activations (or their gradients) take from rank k to
                                k+1 or back, beyond what the passes hold */
} ppl_pipe_in;

/* The largest of the lower bounds every schedule's pipeline respects, without
 * running it:
 *  - the chain: one microbatch's forward through every stage and its backward to
 *    the input back, plus the first stage's W (sends included);
 *  - each rank's work after the earliest its first forward can start;
 *  - for the schedules that do not split the backward, that plus the backward of
 *    the last microbatch through the ranks before it after its own.
 * Cheap (O(pp)): the search prunes with it before running the executor
 * (executor.h), which never goes below it. */
double ppl_pipe_bound_s(const ppl_pipe_in *in);

/* A run of consecutive equal stages: their passes, and the sends out of them
 * (ppl_pipe_in hop_s): between two of them, and after the last (0 at the end). */
typedef struct ppl_pipe_span {
    int64_t first_stage, count;
    ppl_passes passes;
    double hop_s;      /* the send after each of its stages but the last */
    double last_hop_s; /* the send after its last stage (to another pool's stage) */
} ppl_pipe_span;

/* ppl_pipe_bound_s over runs of equal stages, in O(runs) where that one takes
 * O(pp): the same figure (test_executor holds them equal); n spans covering the
 * pp stages in order.  DualPipe, whose ranks pair stage k with stage p-1-k, is
 * expanded stage by stage. */
double ppl_pipe_bound_spans_s(int schedule, int64_t pp, int64_t vp, int64_t microbatches,
                              const ppl_pipe_span *spans, size_t n);
/* Fills stage[pp] and hop_s[pp - 1] from the spans. */
void ppl_pipe_spans_expand(const ppl_pipe_span *spans, size_t n, int64_t pp, ppl_passes *stage,
                           double *hop_s);

/* A stage's F&B time over its passes alone (1 when F&B hides nothing). */
double ppl_passes_fb_share(const ppl_passes *passes);

/* The schedule's rules for the configuration (ppl_schedule_row check). */
ppl_status ppl_pipeline_check(const ppl_config *config, ppl_error *err);

#endif
