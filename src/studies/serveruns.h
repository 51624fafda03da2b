/*
 * studies/serveruns.h - measured inference-engine runs and RL post-training
 * steps, predicted by cost/serve.h and studies/rl.h, for `parplan validate`
 * (serveruns.c).
 *
 * A serving runs file is an array of entries with "kind": "serve" or "rl", each
 * naming a model and a topology (catalogue names or inline objects).
 *  - serve: the engine's tensor-parallel size (and ep) and precision, the
 *    workload's prompt and response lengths, and the output tokens a second
 *    measured on one replica under maximum load.  The prediction is the
 *    engine's best output tokens a second over its batch (powers of two up to
 *    4,096 that hold their cache): what a throughput benchmark that queues every
 *    request at once reaches.  With "phase" "decode" or "prefill", one phase
 *    measured alone at the batch (or chunk) it ran, a GPU's tokens a second.
 *  - rl: the GPUs, the step's workload (prompts, samples, prompt, mean and
 *    longest response, updates, forward-only passes), the placement, pipeline
 *    and engine tensor-parallel size as far as the source states them, and the
 *    measured step time.  The prediction is `parplan rl`'s fastest plan under
 *    those pins.
 * Nothing is fitted on these runs.
 */
#ifndef PARPLAN_SERVERUNS_H
#define PARPLAN_SERVERUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost/serve.h"
#include "studies/rl.h"
#include "hardware/topology.h"
#include "model/model.h"

/* What a serve run measures: a replica's output tokens a second under maximum
 * load (its batch searched), or one phase alone at the batch it ran (the
 * disaggregated layouts' halves, measured apart): a GPU's output tokens a
 * second decoding, or its input tokens a second prefilling. */
typedef enum ppl_serve_phase {
    PPL_SERVE_THROUGHPUT = 0,
    PPL_SERVE_DECODE,
    PPL_SERVE_PREFILL
} ppl_serve_phase;

/* "throughput", "decode", "prefill" (the runs file's config.phase). */
extern const char *const ppl_serve_phase_names[];
/* The figure a run of the phase measures, by its key in the runs file:
 * output_tokens_per_s, output_tokens_per_s_per_gpu, input_tokens_per_s_per_gpu. */
const char *ppl_serve_phase_figure(ppl_serve_phase phase);

typedef struct ppl_serve_run {
    char id[128];
    char family[96]; /* as a training run's (studies/runs.h) */
    ppl_model model;
    ppl_topology topology;
    bool rl; /* an RL step, else an engine run */
    /* serve */
    int64_t tp;
    int64_t ep; /* GPUs the experts spread over, attention at tp in ep / tp groups; 0: none */
    ppl_precision precision;
    bool kv_16bit; /* the cache in bf16 beside fp8 weights */
    ppl_serve_phase phase;
    int64_t batch;        /* decode: sequences an attention group decodes */
    int64_t chunk_tokens; /* prefill: tokens an attention group prefills a forward */
    ppl_serve_workload workload;
    double tokens_per_s; /* measured: the replica's output tokens a second under load,
                            or a GPU's output (decode) or input (prefill) tokens */
    /* rl */
    ppl_rl_opts rl_opts; /* workload, GPUs and the pins (search.pins: train_pins) */
    ppl_pins train_pins; /* the trainer's layout as far as stated */
    double step_time_s;  /* measured */
} ppl_serve_run;

typedef struct ppl_serve_prediction {
    bool predicted;      /* false: no batch holds the weights and one sequence */
    double tokens_per_s; /* serve: the best over the batch */
    int64_t batch;       /* that batch */
    bool memory_bound;   /* its decode step is the HBM read */
    ppl_rl_plan plan;    /* rl: the fastest plan */
    double value;        /* tokens_per_s, or the plan's step time */
    double error;        /* predicted / measured - 1 (throughput, or step time) */
    char why[256];       /* when not predicted */
} ppl_serve_prediction;

/* Reads a runs file whose first entry has "kind": "serve" or "rl" (then every
 * entry must);
 * *count 0 and PPL_OK when the file is not one (a training runs file: runs.h
 * reads it). */
ppl_status ppl_serve_runs_load(const char *path, const ppl_diag *diag, ppl_serve_run **runs,
                               size_t *count, ppl_error *err);
void ppl_serve_runs_free(ppl_serve_run *runs);

void ppl_serve_run_predict(const ppl_serve_run *run, ppl_serve_prediction *out);

#endif
