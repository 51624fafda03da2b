/*
 * studies/rl.h - an RL post-training step (GRPO, PPO and their kin) planned on
 * one cluster: the rollout on an inference engine, the scoring, the update on
 * the trainer, the weights moved back to the engine (rl.c).
 *
 * Each step generates prompts x samples responses with the engine of
 * cost/serve.h, scores them (a time the user gives: a rule or a reward model run
 * elsewhere), runs forward-only passes over them (old-policy and reference
 * log-probs) and `updates` optimizer steps on the trainer (the best training plan
 * of plan/search.h on its GPUs, sequences packed to prompt + mean response
 * tokens), then moves the new weights to the engine.  Two placements are weighed:
 *
 *   colocated      every GPU rolls out, then trains (the engine asleep: weights
 *                  and cache freed, as vLLM's sleep mode does; the trainer's
 *                  model states either kept on the GPU, out of the engine's
 *                  memory, or moved to the host and back each step);
 *   disaggregated  the GPUs split between engine and trainer (whole servers, the
 *                  split searched), the step either synchronous or one step
 *                  off-policy (the rollout of step k+1 beside the update of
 *                  step k: the step is the longer of the two, plus the sync).
 *
 * The rollout waits for its longest response: it takes at least the decode of
 * the batch's tokens at the engine's throughput and at least the longest
 * response's decode at one sequence a step (the larger of the two lower bounds;
 * what a scheduler loses between them is not costed).
 */
#ifndef PARPLAN_RL_H
#define PARPLAN_RL_H

#include <stdbool.h>
#include <stdint.h>

#include "cost/estimate.h"
#include "cost/serve.h"
#include "plan/search.h"
#include "studies/whatif.h" /* ppl_search_totals */

typedef struct ppl_rl_workload {
    int64_t prompts;         /* prompts a step */
    int64_t samples;         /* responses a prompt (GRPO's group size) */
    int64_t input_tokens;    /* a prompt's length */
    int64_t output_tokens;   /* a response's mean length */
    int64_t output_max;      /* the longest response a step waits for (>= output_tokens) */
    int64_t updates;         /* optimizer steps a rollout feeds (PPO mini-batches); divides
                                prompts x samples */
    int64_t forward_passes;  /* forward-only passes over the batch before the update */
    double reward_s;         /* scoring a step's responses, seconds, off the GPUs */
    ppl_precision precision; /* the engine's weights and cache: bf16 or fp8 */
} ppl_rl_workload;

typedef enum ppl_rl_placement { PPL_RL_COLOCATED, PPL_RL_DISAGGREGATED } ppl_rl_placement;
typedef enum ppl_rl_pipeline { PPL_RL_SYNC, PPL_RL_ASYNC } ppl_rl_pipeline;

/* "colocated", "disaggregated" (NULL-terminated, indexed by ppl_rl_placement) */
extern const char *const ppl_rl_placement_names[];

/* "colocated", "disaggregated"; "sync", "one-step-async". */
const char *ppl_rl_placement_name(ppl_rl_placement placement);
const char *ppl_rl_pipeline_name(ppl_rl_pipeline pipeline);

/* The rollout of a step on `gpus` GPUs with one engine layout. */
typedef struct ppl_rl_rollout {
    ppl_serve_layout engine;
    int64_t replicas;        /* gpus / a replica's (ppl_serve_replica_gpus) */
    int64_t batch;           /* sequences decoded together by an attention group (a
                                replica without expert parallelism) */
    ppl_serve_estimate cost; /* the engine at that batch */
    double work_s;           /* every replica's prefills and decode steps at its batch */
    double tail_s;           /* the longest response alone */
    double time_s;           /* max(work_s, tail_s) */
} ppl_rl_rollout;

typedef struct ppl_rl_plan {
    ppl_rl_placement placement;
    ppl_rl_pipeline pipeline;
    int64_t rollout_gpus, train_gpus; /* equal, all of them, when colocated */
    ppl_rl_rollout rollout;
    ppl_estimate train; /* the best training plan of one update */
    double train_s;     /* updates x its step + the forward-only passes */
    double forward_s;   /* of which the forward-only passes */
    double sync_s;      /* the new weights into the engine's layout */
    double sync_bytes;  /* received in all: every engine GPU the weights it loads */
    double offload_s;   /* colocated: the trainer's model states to the host and back */
    double reward_s;
    double step_s;
    double idle_share; /* GPU-seconds neither rolling out nor training, of the step's */
} ppl_rl_plan;

typedef struct ppl_rl_opts {
    ppl_rl_workload workload;
    int64_t gpus;           /* of the topology's, from the first */
    bool off_policy;        /* weigh the one-step asynchronous pipeline too */
    bool one_placement;     /* weigh `placement` alone (else both) */
    ppl_rl_placement placement;
    int64_t engine_tp;      /* the engine's tensor-parallel size; 0: searched */
    int64_t rollout_gpus;   /* disaggregated: the engine's GPUs; 0: the split searched */
    ppl_search_opts search; /* the trainer's search (pins, objective; gpus and
                               global_batch are set here) */
} ppl_rl_opts;

typedef struct ppl_rl_result {
    ppl_rl_plan *plans; /* every placement, pipeline and split that runs, fastest first */
    size_t count;
    size_t splits; /* disaggregated splits tried */
    ppl_search_totals search;
} ppl_rl_result;

/* The rollout of the workload on `gpus` GPUs with engine layout `engine`: each of
 * its replicas (each attention group of them, with expert parallelism) takes its
 * share of the sequences, prefills each prompt once
 * (its samples fork after the prefill, as vLLM's SamplingParams.n does), the
 * prompts in chunks as serve's engine takes them (prefill_share_s), and
 * decodes min(batch, share) sequences a step until the share's tokens are out;
 * the longest response alone takes its own length in steps of one sequence.
 * false when the layout does not hold the weights and the batch's cache. */
bool ppl_rl_rollout_of(const ppl_eval_ctx *ctx, const ppl_rl_workload *w, int64_t gpus,
                       const ppl_serve_layout *engine, ppl_rl_rollout *out);

/* The best rollout of ctx's model on `gpus` GPUs with `reserved_bytes` of each
 * GPU held by something else, the engine's tensor-parallel size `tp` alone (0:
 * the best within one server, a MoE's experts spread or not, ppl_serve_shapes);
 * false when no engine layout holds the weights and one sequence. */
bool ppl_rl_rollout_best(const ppl_eval_ctx *ctx, const ppl_rl_workload *w, int64_t gpus,
                         int64_t tp, double reserved_bytes, ppl_rl_rollout *out);

/* The weights moved after an update: bytes received in all and seconds.
 * Disaggregated: the trainer broadcasts every tensor whole from one rank to each
 * engine GPU, which keeps its shard (OpenRLHF's and Open-Instruct's
 * vllm_worker_wrap.py update_weight: a full-shape tensor, torch.distributed
 * broadcast over the model-update group): each of the rollout GPUs receives all
 * the weights, a ring broadcast over them and the sender, costed as the all-gather
 * that moves the same bytes on every link (comm.h).  Colocated: each GPU gathers
 * the whole weights from the training ranks that hold shards of them (verl's
 * sharding managers: the tensors gathered over tp and pp, then loaded): an
 * all-gather over one replica of the trainer's model-parallel ranks. */
void ppl_rl_sync(const ppl_eval_ctx *ctx, const ppl_rl_plan *plan, double *bytes, double *seconds);

/* Every plan of ctx's model on the first opts->gpus GPUs: colocated, and
 * disaggregated (sync and one-step async) at each split in whole servers (at
 * most 15, evenly spaced), or at the split opts->rollout_gpus pins; as far as
 * opts->placement allows; PPL_INFEASIBLE, with a message, when none runs. */
ppl_status ppl_rl_search(const ppl_eval_ctx *ctx, const ppl_rl_opts *opts, ppl_rl_result *out,
                         ppl_error *err);
void ppl_rl_result_free(ppl_rl_result *result);

#endif
