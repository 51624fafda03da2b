/*
 * serveruns.c - measured inference-engine runs and their prediction
 * (studies/serveruns.h).
 */
#include "studies/serveruns.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonread.h"
#include "cost/evalctx.h"
#include "studies/runs.h" /* ppl_run_load_part, ppl_run_family_of */

/* The largest batch tried (as serve and rl try). */
#define SERVE_RUN_MAX_BATCH 4096

static const char *const entry_keys[] = {"id",       "kind",     "source", "family",
                                         "model",    "topology", "config", "workload",
                                         "measured", "notes",    NULL};
static const char *const config_keys[] = {"tp",    "ep",           "precision", "phase",
                                          "batch", "chunk_tokens", "kv_cache",  NULL};
static const char *const workload_keys[] = {"input_tokens", "output_tokens", NULL};
static const char *const measured_keys[] = {"output_tokens_per_s", "output_tokens_per_s_per_gpu",
                                            "input_tokens_per_s_per_gpu", NULL};
/* what a serve run measured: the replica's throughput under load (batch
 * searched), or one phase alone at its batch, a GPU's (ppl_serve_phase) */
const char *const ppl_serve_phase_names[] = {"throughput", "decode", "prefill", NULL};
static const char *const measured_of[] = {"output_tokens_per_s", "output_tokens_per_s_per_gpu",
                                          "input_tokens_per_s_per_gpu"};

const char *ppl_serve_phase_figure(ppl_serve_phase phase)
{
    return measured_of[phase];
}
static const char *const kv_caches[] = {"bf16", NULL};
static const char *const kinds[] = {"serve", "rl", NULL};
static const char *const precisions[] = {"bf16", "fp8", NULL};
static const char *const rl_config_keys[] = {"gpus",         "placement", "pipeline", "engine_tp",
                                             "rollout_gpus", "train",     NULL};
static const char *const rl_train_keys[] = {"tp", "pp", "cp", "ep", NULL};
static const char *const rl_workload_keys[] = {"prompts",        "samples",    "input_tokens",
                                               "output_tokens",  "output_max", "updates",
                                               "forward_passes", NULL};
static const char *const rl_measured_keys[] = {"step_time_s", NULL};
static const char *const pipelines[] = {"sync", "one-step-async", NULL};

/* Whether entry is an object whose "kind" is "serve" or "rl". */
static bool is_serve(const json_t *entry)
{
    const json_t *k = json_is_object(entry) ? json_object_get(entry, "kind") : NULL;
    return k && json_is_string(k) &&
           (strcmp(json_string_value(k), "serve") == 0 || strcmp(json_string_value(k), "rl") == 0);
}

/* An RL step's config, workload and measured step (studies/serveruns.h). */
static ppl_status read_rl(ppl_jr_ctx *ctx, const json_t *e, const char *path, ppl_serve_run *r)
{
    char sub[PPL_ERROR_KEY_MAX], tsub[PPL_ERROR_KEY_MAX], full[PPL_ERROR_KEY_MAX];
    json_t *o, *tr;
    ppl_rl_opts *q = &r->rl_opts;
    ppl_rl_workload *w = &q->workload;
    int placement, pipeline;
    int64_t all = r->topology.servers * r->topology.gpus_per_server;
    ppl_status st;
    memset(q, 0, sizeof *q);
    ppl_pins_init(&r->train_pins);
    if ((st = ppl_jr_object(ctx, e, path, "config", PPL_JR_REQUIRED, rl_config_keys, &o, sub,
                            sizeof sub)) ||
        (st = ppl_jr_int(ctx, o, sub, "gpus", PPL_JR_REQUIRED, 1, 1, all, &q->gpus)) ||
        (st = ppl_jr_enum(ctx, o, sub, "placement", PPL_JR_OPTIONAL, ppl_rl_placement_names, -1,
                          &placement)) ||
        (st = ppl_jr_enum(ctx, o, sub, "pipeline", PPL_JR_OPTIONAL, pipelines, -1, &pipeline)) ||
        (st = ppl_jr_int(ctx, o, sub, "engine_tp", PPL_JR_OPTIONAL, 0, 1, 1024, &q->engine_tp)) ||
        (st = ppl_jr_int(ctx, o, sub, "rollout_gpus", PPL_JR_OPTIONAL, 0, 1, all,
                         &q->rollout_gpus)) ||
        (st = ppl_jr_object(ctx, o, sub, "train", PPL_JR_OPTIONAL, rl_train_keys, &tr, tsub,
                            sizeof tsub)))
        return st;
    if (tr && ((st = ppl_jr_int(ctx, tr, tsub, "tp", PPL_JR_OPTIONAL, PPL_UNSET, 1, 1024,
                                &r->train_pins.tp)) ||
               (st = ppl_jr_int(ctx, tr, tsub, "pp", PPL_JR_OPTIONAL, PPL_UNSET, 1, 1024,
                                &r->train_pins.pp)) ||
               (st = ppl_jr_int(ctx, tr, tsub, "cp", PPL_JR_OPTIONAL, PPL_UNSET, 1, 1024,
                                &r->train_pins.cp)) ||
               (st = ppl_jr_int(ctx, tr, tsub, "ep", PPL_JR_OPTIONAL, PPL_UNSET, 1, 1024,
                                &r->train_pins.ep))))
        return st;
    if (q->rollout_gpus >= q->gpus) {
        ppl_jr_path(full, sizeof full, sub, "rollout_gpus");
        return ppl_jr_fail(ctx, full, "%lld leaves none of the %lld GPUs to train",
                           (long long)q->rollout_gpus, (long long)q->gpus);
    }
    q->one_placement = placement >= 0;
    q->placement = placement == 1 ? PPL_RL_DISAGGREGATED : PPL_RL_COLOCATED;
    /* a stated pipeline is the one weighed: async only when stated or unsaid */
    q->off_policy = pipeline != 0;
    q->search.objective = PPL_OBJECTIVE_TIME;
    if ((st = ppl_jr_object(ctx, e, path, "workload", PPL_JR_REQUIRED, rl_workload_keys, &o, sub,
                            sizeof sub)) ||
        (st = ppl_jr_int(ctx, o, sub, "prompts", PPL_JR_REQUIRED, 1, 1, 1LL << 24, &w->prompts)) ||
        (st = ppl_jr_int(ctx, o, sub, "samples", PPL_JR_OPTIONAL, 1, 1, 1024, &w->samples)) ||
        (st = ppl_jr_int(ctx, o, sub, "input_tokens", PPL_JR_REQUIRED, 1, 1, PPL_MAX_SEQ_LEN,
                         &w->input_tokens)) ||
        (st = ppl_jr_int(ctx, o, sub, "output_tokens", PPL_JR_REQUIRED, 1, 1, PPL_MAX_SEQ_LEN,
                         &w->output_tokens)) ||
        (st = ppl_jr_int(ctx, o, sub, "output_max", PPL_JR_OPTIONAL, w->output_tokens,
                         w->output_tokens, PPL_MAX_SEQ_LEN - w->input_tokens, &w->output_max)) ||
        (st = ppl_jr_int(ctx, o, sub, "updates", PPL_JR_OPTIONAL, 1, 1, 1024, &w->updates)) ||
        (st = ppl_jr_int(ctx, o, sub, "forward_passes", PPL_JR_OPTIONAL, 2, 0, 16,
                         &w->forward_passes)))
        return st;
    if ((w->prompts * w->samples) % w->updates != 0) {
        ppl_jr_path(full, sizeof full, sub, "updates");
        return ppl_jr_fail(ctx, full, "%lld does not divide the %lld sequences of a step",
                           (long long)w->updates, (long long)(w->prompts * w->samples));
    }
    w->precision = PPL_PRECISION_BF16;
    return (st = ppl_jr_object(ctx, e, path, "measured", PPL_JR_REQUIRED, rl_measured_keys, &o, sub,
                               sizeof sub))
               ? st
               : ppl_jr_real(ctx, o, sub, "step_time_s", PPL_JR_REQUIRED, 0,
                             PPL_JR_BETWEEN(1e-3, 1e7), &r->step_time_s);
}

static ppl_status read_entry(ppl_jr_ctx *ctx, const json_t *e, const char *path, ppl_serve_run *r)
{
    char sub[PPL_ERROR_KEY_MAX], full[PPL_ERROR_KEY_MAX];
    json_t *o;
    int kind, precision;
    ppl_status st;
    if ((st = ppl_jr_expect_object(ctx, e, path)))
        return st;
    ppl_jr_warn_unknown_keys(ctx, e, path, entry_keys);
    if ((st = ppl_jr_string(ctx, e, path, "id", PPL_JR_REQUIRED, "", r->id, sizeof r->id)) ||
        (st = ppl_jr_enum(ctx, e, path, "kind", PPL_JR_REQUIRED, kinds, 0, &kind)) ||
        (st = ppl_run_load_part(ctx, e, path, "model", PPL_CATALOG_MODELS, &r->model)) ||
        (st = ppl_run_load_part(ctx, e, path, "topology", PPL_CATALOG_TOPOLOGIES, &r->topology)))
        return st;
    r->rl = kind == 1;
    if (r->rl) {
        if ((st = read_rl(ctx, e, path, r)))
            return st;
        return ppl_run_read_family(ctx, e, path, r->id, r->family, sizeof r->family);
    }
    int phase = 0, kv = -1;
    if ((st = ppl_jr_object(ctx, e, path, "config", PPL_JR_REQUIRED, config_keys, &o, sub,
                            sizeof sub)) ||
        (st = ppl_jr_int(ctx, o, sub, "tp", PPL_JR_REQUIRED, 1, 1, 1024, &r->tp)) ||
        (st = ppl_jr_int(ctx, o, sub, "ep", PPL_JR_OPTIONAL, 0, 2, 1 << 20, &r->ep)) ||
        (st = ppl_jr_enum(ctx, o, sub, "precision", PPL_JR_REQUIRED, precisions, 0, &precision)) ||
        (st = ppl_jr_enum(ctx, o, sub, "phase", PPL_JR_OPTIONAL, ppl_serve_phase_names, 0,
                          &phase)) ||
        (st = ppl_jr_int(ctx, o, sub, "batch",
                         phase == PPL_SERVE_DECODE ? PPL_JR_REQUIRED : PPL_JR_OPTIONAL, 0, 1,
                         SERVE_RUN_MAX_BATCH, &r->batch)) ||
        (st = ppl_jr_int(ctx, o, sub, "chunk_tokens",
                         phase == PPL_SERVE_PREFILL ? PPL_JR_REQUIRED : PPL_JR_OPTIONAL, 0, 1,
                         1 << 24, &r->chunk_tokens)) ||
        (st = ppl_jr_enum(ctx, o, sub, "kv_cache", PPL_JR_OPTIONAL, kv_caches, -1, &kv)))
        return st;
    r->phase = (ppl_serve_phase)phase;
    r->kv_16bit = kv == 0;
    r->precision = precision == 1 ? PPL_PRECISION_FP8 : PPL_PRECISION_BF16;
    const int64_t gpus = r->topology.servers * r->topology.gpus_per_server;
    const int64_t domain = ppl_topology_server_domain(&r->topology);
    if (r->tp > domain || r->tp > gpus || r->model.heads % r->tp != 0) {
        ppl_jr_path(full, sizeof full, sub, "tp");
        return ppl_jr_fail(ctx, full,
                           "%lld must divide the model's %lld heads and fit one server's NVLink "
                           "domain (%lld GPUs)",
                           (long long)r->tp, (long long)r->model.heads, (long long)domain);
    }
    /* the experts over ep GPUs: a multiple of tp within the GPUs, at most one GPU
     * an expert (an uneven split is costed at its mean, serve.h) */
    if (r->ep > 0 &&
        (!r->model.has_moe || r->ep % r->tp != 0 || r->ep > gpus || r->ep > r->model.moe.experts)) {
        ppl_jr_path(full, sizeof full, sub, "ep");
        return ppl_jr_fail(ctx, full,
                           "%lld must be a multiple of tp (%lld) within the %lld GPUs and a "
                           "MoE model's experts",
                           (long long)r->ep, (long long)r->tp, (long long)gpus);
    }
    if ((st = ppl_jr_object(ctx, e, path, "workload", PPL_JR_REQUIRED, workload_keys, &o, sub,
                            sizeof sub)) ||
        (st = ppl_jr_int(ctx, o, sub, "input_tokens", PPL_JR_REQUIRED, 1, 1, PPL_MAX_SEQ_LEN,
                         &r->workload.input_tokens)) ||
        (st = ppl_jr_int(ctx, o, sub, "output_tokens", PPL_JR_REQUIRED, 1, 1, PPL_MAX_SEQ_LEN,
                         &r->workload.output_tokens)) ||
        (st = ppl_jr_object(ctx, e, path, "measured", PPL_JR_REQUIRED, measured_keys, &o, sub,
                            sizeof sub)) ||
        (st = ppl_jr_real(ctx, o, sub, measured_of[r->phase], PPL_JR_REQUIRED, 0,
                          PPL_JR_BETWEEN(1e-3, 1e12), &r->tokens_per_s)))
        return st;
    if (json_object_size(o) != 1) {
        ppl_jr_path(full, sizeof full, sub, measured_of[r->phase]);
        return ppl_jr_fail(ctx, full, "is the one figure a %s run measures",
                           ppl_serve_phase_names[r->phase]);
    }
    return ppl_run_read_family(ctx, e, path, r->id, r->family, sizeof r->family);
}

ppl_status ppl_serve_runs_load(const char *path, const ppl_diag *diag, ppl_serve_run **runs_out,
                               size_t *count_out, ppl_error *err)
{
    ppl_jr_ctx ctx = {.file = path, .err = err, .diag = diag};
    *runs_out = NULL;
    *count_out = 0;
    json_t *root = ppl_jr_load_file(&ctx, path);
    if (!root)
        return PPL_EINPUT;
    const size_t n = json_is_array(root) ? json_array_size(root) : 0;
    if (n == 0 || !is_serve(json_array_get(root, 0))) {
        json_decref(root); /* not a serving runs file: runs.h reads it */
        return PPL_OK;
    }
    ppl_serve_run *runs = calloc(n, sizeof *runs);
    if (!runs) {
        json_decref(root);
        return ppl_error_set(err, PPL_EINTERNAL, path, "", "out of memory");
    }
    ppl_status st = PPL_OK;
    for (size_t i = 0; i < n && st == PPL_OK; i++) {
        char ipath[32];
        ppl_jr_index(ipath, sizeof ipath, "", i);
        st = read_entry(&ctx, json_array_get(root, i), ipath, &runs[i]);
        if (st != PPL_OK && runs[i].id[0]) {
            size_t len = strnlen(err->message, sizeof err->message - 1);
            snprintf(err->message + len, sizeof err->message - len, " (run \"%.60s\")", runs[i].id);
        }
    }
    json_decref(root);
    if (st != PPL_OK) {
        free(runs);
        return st;
    }
    *runs_out = runs;
    *count_out = n;
    return PPL_OK;
}

void ppl_serve_runs_free(ppl_serve_run *runs)
{
    free(runs);
}

void ppl_serve_run_predict(const ppl_serve_run *r, ppl_serve_prediction *out)
{
    memset(out, 0, sizeof *out);
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &r->model, &r->topology, PPL_STACK_NEMO_2025);
    if (r->rl) {
        ppl_rl_opts o = r->rl_opts;
        o.search.pins = &r->train_pins;
        ppl_rl_result res;
        ppl_error err;
        if (ppl_rl_search(&ctx, &o, &res, &err) != PPL_OK) {
            ppl_jr_name_copy(out->why, sizeof out->why, err.message, strlen(err.message));
            return;
        }
        out->predicted = true;
        out->plan = res.plans[0];
        out->value = out->plan.step_s;
        out->error = out->value / r->step_time_s - 1.0;
        ppl_rl_result_free(&res);
        return;
    }
    if (r->phase != PPL_SERVE_THROUGHPUT) {
        /* one phase alone at its batch: a decode step of every rank's batch, or a
         * forward of each rank's chunk of prompts; a GPU's tokens a second */
        const int64_t prompts = r->chunk_tokens / r->workload.input_tokens;
        ppl_serve_layout l = {.tp = r->tp,
                              .ep = r->ep,
                              .batch = r->phase == PPL_SERVE_DECODE ? r->batch
                                                                    : (prompts > 1 ? prompts : 1),
                              .precision = r->precision,
                              .chunk_tokens = r->chunk_tokens,
                              .kv_16bit = r->kv_16bit};
        ppl_serve_estimate e;
        ppl_serve_cost(&ctx, &l, &r->workload, &e);
        const double gpus = (double)ppl_serve_replica_gpus(&l);
        if (e.fits) {
            out->predicted = true;
            out->batch = l.batch;
            out->memory_bound = e.decode_memory_s >= e.decode_compute_s;
            out->tokens_per_s = r->phase == PPL_SERVE_DECODE
                                    ? (double)ppl_serve_replica_batch(&l) / e.decode_step_s / gpus
                                    : (double)ppl_serve_attention_groups(&l) *
                                          (double)r->workload.input_tokens / e.prefill_share_s /
                                          gpus;
        }
    }
    for (int64_t batch = 1; r->phase == PPL_SERVE_THROUGHPUT && batch <= SERVE_RUN_MAX_BATCH;
         batch *= 2) {
        ppl_serve_layout l = {.tp = r->tp, .ep = r->ep, .batch = batch, .precision = r->precision};
        ppl_serve_estimate e;
        ppl_serve_cost(&ctx, &l, &r->workload, &e);
        if (!e.fits)
            break; /* a larger batch holds more cache */
        if (!out->predicted || e.tokens_per_s > out->tokens_per_s) {
            out->predicted = true;
            out->tokens_per_s = e.tokens_per_s;
            out->batch = batch;
            out->memory_bound = e.decode_memory_s >= e.decode_compute_s;
        }
    }
    if (out->predicted) {
        out->value = out->tokens_per_s;
        out->error = out->tokens_per_s / r->tokens_per_s - 1.0;
    } else {
        snprintf(out->why, sizeof out->why, "no batch at tp %lld%s holds the weights and %s cache",
                 (long long)r->tp, r->ep > 0 ? " with its experts spread" : "",
                 r->phase == PPL_SERVE_THROUGHPUT ? "one sequence's" : "the batch's");
    }
}
