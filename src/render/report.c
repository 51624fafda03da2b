/*
 * report.c - SPEC output objects shared by the commands.
 */
#include "render/report.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/jsonread.h"
#include "cost/knobs.h"
#include "cost/shard.h"
#include "render/launch.h"
#include "base/units.h"

/* A knob's value in JSON (knobs.h). */
static json_t *knob_json(const ppl_knob_value *v)
{
    if (v->null)
        return json_null();
    switch (v->kind) {
    case PPL_KNOB_INT: return json_integer(v->i);
    case PPL_KNOB_SHARE: return ppl_json_real(v->share);
    case PPL_KNOB_BOOL: return json_boolean(v->on);
    case PPL_KNOB_ENUM: return json_string(v->word);
    }
    return json_null();
}

json_t *ppl_config_json(const ppl_config *c, const ppl_model *m)
{
    json_t *o = json_object();
    size_t n;
    const ppl_knob *k = ppl_knob_rows(&n);
    /* every knob the configuration's JSON carries (its row says when), then what
     * is derived from them */
    for (size_t i = 0; i < n; i++) {
        ppl_knob_value v;
        if (k[i].value && k[i].value(c, m, &v))
            json_object_set_new(o, k[i].name, knob_json(&v));
    }
    if (c->cp > 1 && c->cp_comm == PPL_CP_COMM_A2A_P2P)
        json_object_set_new(o, "cp_a2a", json_integer(c->cp_a2a));
    json_object_set_new(o, "microbatches", json_integer(c->microbatches));
    json_t *stages = json_array();
    for (int64_t s = 0; s < c->pp; s++)
        json_array_append_new(stages, json_integer(ppl_stage_layers(c, s)));
    json_object_set_new(o, "stage_layers", stages);
    return o;
}

/* The keys of a configuration object: the knobs' and the derived ones. */
static const char *const derived_keys[] = {"cp_a2a", "microbatches", "stage_layers", NULL};

ppl_status ppl_pins_from_config_json(const json_t *cfg, const char *file, const char *path,
                                     const ppl_diag *diag, ppl_pins *a, ppl_error *err)
{
    ppl_jr_ctx ctx = {.file = file, .err = err, .diag = diag};
    const char *keys[64];
    size_t n, nkeys = 0;
    const ppl_knob *k = ppl_knob_rows(&n);
    ppl_status st;
    ppl_pins_init(a);
    if ((st = ppl_jr_expect_object(&ctx, cfg, path)) != PPL_OK)
        return st;
    for (size_t i = 0; i < n && nkeys + 1 < sizeof keys / sizeof keys[0]; i++)
        if (k[i].plan != PPL_KNOB_UNREAD)
            keys[nkeys++] = k[i].name;
    for (size_t i = 0; derived_keys[i] && nkeys + 1 < sizeof keys / sizeof keys[0]; i++)
        keys[nkeys++] = derived_keys[i];
    keys[nkeys] = NULL;
    ppl_jr_warn_unknown_keys(&ctx, cfg, path, keys);
    /* each knob as its row says (what the writer omits, the default it omits it
     * for); the schedule's words include "interleaved", 1F1B with vp > 1 */
    for (size_t i = 0; i < n; i++) {
        if (k[i].plan == PPL_KNOB_UNREAD)
            continue;
        const bool schedule = strcmp(k[i].name, "schedule") == 0;
        if ((st = ppl_knob_from_json(&ctx, cfg, path, &k[i], k[i].plan == PPL_KNOB_REQUIRED,
                                     k[i].plan_default, schedule ? ppl_schedule_config_names : NULL,
                                     a)) != PPL_OK)
            return st;
    }
    /* the ends of the stage split; the middle stages take the rest */
    json_t *stages = json_object_get(cfg, "stage_layers");
    size_t ns = json_array_size(stages);
    char at[PPL_ERROR_KEY_MAX], full[PPL_ERROR_KEY_MAX];
    ppl_jr_path(at, sizeof at, path, "stage_layers");
    if (stages && (!json_is_array(stages) || (int64_t)ns != a->pp))
        return ppl_jr_fail(&ctx, at, "expected an array of pp (%lld) layer counts",
                           (long long)a->pp);
    /* each a whole count of layers; the middle stages equal, as parplan splits */
    const json_t *middle = json_array_get(stages, 1);
    for (size_t i = 0; i < ns; i++) {
        const json_t *v = json_array_get(stages, i);
        ppl_jr_index(full, sizeof full, at, i);
        if (!json_is_integer(v) || json_integer_value(v) < 1 ||
            json_integer_value(v) > PPL_MAX_LAYERS) {
            char found[64];
            ppl_jr_describe(v, found, sizeof found);
            return ppl_jr_fail(&ctx, full,
                               "expected a whole number of layers from 1 to %lld, "
                               "found %s",
                               (long long)PPL_MAX_LAYERS, found);
        }
        if (i > 1 && i + 1 < ns && !json_equal(v, middle))
            return ppl_jr_fail(&ctx, full,
                               "%lld layers where stage 1 has %lld: parplan splits the middle "
                               "stages evenly",
                               (long long)json_integer_value(v),
                               (long long)json_integer_value(middle));
    }
    if (ns >= 2) {
        a->first_stage_layers = json_integer_value(json_array_get(stages, 0));
        a->last_stage_layers = json_integer_value(json_array_get(stages, ns - 1));
    }
    /* microbatches a step, derived: what the batch, replicas and microbatch give */
    const json_t *m = json_object_get(cfg, "microbatches");
    if (m && a->global_batch > 0 && a->dp > 0 && a->mbs > 0) {
        const int64_t want = a->global_batch / (a->dp * a->mbs);
        if (!json_is_integer(m) || json_integer_value(m) != want) {
            char found[64];
            ppl_jr_describe(m, found, sizeof found);
            ppl_jr_path(full, sizeof full, path, "microbatches");
            return ppl_jr_fail(&ctx, full, "expected global_batch / (dp x mbs) = %lld, found %s",
                               (long long)want, found);
        }
    }
    return PPL_OK;
}

json_t *ppl_memory_json(const ppl_memory *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "weights", ppl_json_real(m->weights));
    json_object_set_new(o, "gradients", ppl_json_real(m->gradients));
    json_object_set_new(o, "optimizer", ppl_json_real(m->optimizer));
    json_object_set_new(o, "activations", ppl_json_real(m->activations));
    json_object_set_new(o, "other", ppl_json_real(m->other));
    if (m->host > 0.0) /* offloaded optimizer state, in host memory (not in total) */
        json_object_set_new(o, "host", ppl_json_real(m->host));
    json_object_set_new(o, "total", ppl_json_real(m->total));
    json_object_set_new(o, "capacity", ppl_json_real(m->capacity));
    json_object_set_new(o, "headroom", ppl_json_real(m->headroom));
    json_object_set_new(o, "fits", json_boolean(m->fits));
    json_object_set_new(o, "worst_stage", json_integer(m->stage));
    return o;
}

const char *ppl_recompute_label(const ppl_config *c, char *buf, size_t size)
{
    ppl_knob_text(ppl_knob_find("recompute"), c, NULL, buf, size);
    return buf;
}

const char *ppl_zero_label(const ppl_config *c, char *buf, size_t size)
{
    char group[24] = "";
    if (ppl_config_shard_replicas(c) > 1) /* sharded in groups (HSDP) */
        snprintf(group, sizeof group, "/%lld", (long long)ppl_config_shard_group(c));
    snprintf(buf, size, "%d%s%s", c->zero, group, c->offload_optimizer > 0.0 ? "+off" : "");
    return buf;
}

void ppl_config_describe(const ppl_config *c, char *buf, size_t size)
{
    char layers[48] = "", etp[32] = "";
    if (ppl_config_etp(c) != c->tp) /* Megatron's default, etp = tp, goes unsaid */
        snprintf(etp, sizeof etp, ", etp %lld", (long long)ppl_config_etp(c));
    if (c->recompute == PPL_RECOMPUTE_FULL && c->recompute_layers > 0)
        snprintf(layers, sizeof layers, " (%lld layers a stage)", (long long)c->recompute_layers);
    char cp_comm[48] = "", shard[96] = "", prec[64];
    snprintf(prec, sizeof prec, "%s%s%s", ppl_precision_name(c->precision),
             c->precision == PPL_PRECISION_FP8 && c->fp8_recipe != PPL_FP8_DELAYED ? " " : "",
             c->precision == PPL_PRECISION_FP8 && c->fp8_recipe != PPL_FP8_DELAYED
                 ? ppl_fp8_recipe_names[c->fp8_recipe]
                 : "");
    if (c->bf16_layers > 0)
        snprintf(prec + strlen(prec), sizeof prec - strlen(prec), " (first/last %lld in bf16)",
                 (long long)c->bf16_layers);
    if (ppl_config_shard_replicas(c) > 1)
        snprintf(shard, sizeof shard, " in groups of %lld", (long long)ppl_config_shard_group(c));
    if (c->offload_optimizer > 0.0)
        snprintf(shard + strlen(shard), sizeof shard - strlen(shard), ", optimizer %g offloaded",
                 c->offload_optimizer);
    if (c->cp > 1 && c->cp_comm == PPL_CP_COMM_A2A_P2P)
        snprintf(cp_comm, sizeof cp_comm, " (a2a+p2p: a2a %lld x ring %lld)", (long long)c->cp_a2a,
                 (long long)(c->cp / c->cp_a2a));
    else if (c->cp > 1)
        snprintf(cp_comm, sizeof cp_comm, " (%s)", ppl_cp_comm_name(c->cp_comm));
    char graphs[48] = "";
    if (c->cuda_graphs != PPL_CUDA_GRAPHS_NONE)
        snprintf(graphs, sizeof graphs, ", CUDA graphs %s", ppl_cuda_graphs_name(c->cuda_graphs));
    snprintf(buf, size,
             "tp %lld x pp %lld x dp %lld x cp %lld%s, ep %lld%s, vp %lld, mbs %lld, batch %lld "
             "(%lld microbatches), ZeRO %d%s, recompute %s%s, SP %s, flash %s, %s, %s%s",
             (long long)c->tp, (long long)c->pp, (long long)c->dp, (long long)c->cp, cp_comm,
             (long long)c->ep, etp, (long long)c->vp, (long long)c->mbs, (long long)c->global_batch,
             (long long)c->microbatches, c->zero, shard, ppl_recompute_name(c->recompute), layers,
             c->sequence_parallel ? "on" : "off", c->flash_attention ? "on" : "off", prec,
             ppl_config_schedule_label(c), graphs);
}

/* The passes of the slowest stage and what the schedule costs and keeps
 * (pipeline.h), for the schedules that split the backward. */
static json_t *pipeline_json(const ppl_estimate *e)
{
    const ppl_config *c = &e->config;
    json_t *o = json_object();
    json_object_set_new(o, "schedule", json_string(ppl_schedule_name(c->schedule)));
    json_object_set_new(o, "forward_s", ppl_json_real(e->passes.f_s));
    json_object_set_new(o, "backward_input_s", ppl_json_real(e->passes.b_s));
    json_object_set_new(o, "backward_weight_s", ppl_json_real(e->passes.w_s));
    if (ppl_schedule_of(c->schedule)->overlaps_fb)
        json_object_set_new(o, "overlapped_forward_backward_s", ppl_json_real(e->passes.fb_s));
    json_object_set_new(o, "bubble_s", ppl_json_real(e->time.bubble));
    json_object_set_new(o, "in_flight_microbatches", ppl_json_real(e->memory.in_flight));
    json_object_set_new(o, "parameter_copies",
                        ppl_json_real(ppl_schedule_of(c->schedule)->param_copies));
    json_object_set_new(o, "runs_on", json_string(ppl_schedule_of(c->schedule)->launchers));
    json_t *stages = json_array(); /* each run of equal stages */
    for (int i = 0; i < e->n_stage_passes; i++) {
        const ppl_stage_passes *sp = &e->stage_passes[i];
        json_t *x = json_object();
        json_object_set_new(x, "first_stage", json_integer(sp->first_stage));
        json_object_set_new(x, "stages", json_integer(sp->count));
        json_object_set_new(x, "forward_s", ppl_json_real(sp->passes.f_s));
        json_object_set_new(x, "backward_input_s", ppl_json_real(sp->passes.b_s));
        json_object_set_new(x, "backward_weight_s", ppl_json_real(sp->passes.w_s));
        json_array_append_new(stages, x);
    }
    json_object_set_new(o, "stages", stages);
    return o;
}

json_t *ppl_estimate_json(const ppl_estimate *e, const ppl_model *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "config", ppl_config_json(&e->config, m));
    json_object_set_new(o, "step_time_s", ppl_json_real(e->step_time_s));
    json_object_set_new(o, "tokens_per_s", ppl_json_real(e->tokens_per_s));
    json_object_set_new(o, "model_tflops_per_gpu", ppl_json_real(e->model_tflops_per_gpu));
    json_object_set_new(o, "hardware_tflops_per_gpu", ppl_json_real(e->hardware_tflops_per_gpu));
    json_object_set_new(o, "mfu", ppl_json_real(e->mfu));
    json_object_set_new(o, "mfu_precision", json_string(ppl_precision_names[e->mfu_precision]));
    json_object_set_new(o, "mfu_bf16", ppl_json_real(e->mfu_bf16));
    json_object_set_new(o, "floor_s", ppl_json_real(e->floor_s));
    if (e->overlap_assumed)
        json_object_set_new(o, "overlap_assumed", json_string(e->overlap_assumed));
    json_object_set_new(o, "memory", ppl_memory_json(&e->memory));
    json_t *t = json_object();
    json_object_set_new(t, "compute", ppl_json_real(e->time.compute));
    json_object_set_new(t, "bubble", ppl_json_real(e->time.bubble));
    json_object_set_new(t, "tp_comm", ppl_json_real(e->time.tp_comm));
    json_object_set_new(t, "cp_comm", ppl_json_real(e->time.cp_comm));
    json_object_set_new(t, "pp_comm", ppl_json_real(e->time.pp_comm));
    json_object_set_new(t, "dp_comm", ppl_json_real(e->time.dp_comm));
    json_object_set_new(t, "ep_comm", ppl_json_real(e->time.ep_comm));
    json_object_set_new(t, "optimizer", ppl_json_real(e->time.optimizer));
    json_object_set_new(t, "exposed_comm", ppl_json_real(e->time.exposed_comm));
    json_object_set_new(t, "host", ppl_json_real(e->time.host));
    json_object_set_new(t, "overhead", ppl_json_real(e->time.overhead));
    json_object_set_new(o, "time", t);
    json_t *tr = json_object();
    json_object_set_new(tr, "nvlink", ppl_json_real(e->traffic.nvlink));
    json_object_set_new(tr, "rail", ppl_json_real(e->traffic.rail));
    json_object_set_new(tr, "spine", ppl_json_real(e->traffic.spine));
    json_object_set_new(o, "traffic", tr);
    json_object_set_new(o, "bottleneck", json_string(e->bottleneck));
    json_object_set_new(o, "bottleneck_level", json_string(e->bottleneck_level));
    json_object_set_new(o, "launch", ppl_launch_json(e, m, NULL));
    if (ppl_schedule_of(e->config.schedule)->splits_backward) /* pipeline.h */
        json_object_set_new(o, "pipeline", pipeline_json(e));
    return o;
}

static void line(ppl_buf *out, const char *name, double seconds, double step)
{
    char t[32];
    ppl_format_time(seconds, t, sizeof t);
    ppl_buf_printf(out, "  %-14s %10s  %5.1f%%\n", name, t,
                   step > 0 ? 100.0 * seconds / step : 0.0);
}

void ppl_estimate_text(const ppl_estimate *e, ppl_buf *out)
{
    char a[64], b[64], d[64];
    const ppl_step_time *t = &e->time;
    double step = e->step_time_s;
    ppl_format_time(step, a, sizeof a);
    ppl_buf_printf(out, "step time   %s, %.0f tokens/s\n", a, e->tokens_per_s);
    ppl_buf_printf(out, "per GPU     %.1f model TFLOP/s (MFU %.1f%% of the %s peak",
                   e->model_tflops_per_gpu, 100.0 * e->mfu, ppl_precision_names[e->mfu_precision]);
    if (e->mfu_precision != PPL_PRECISION_BF16)
        ppl_buf_printf(out, ", %.1f%% of bf16's", 100.0 * e->mfu_bf16);
    ppl_buf_printf(out, "), %.1f hardware TFLOP/s\n", e->hardware_tflops_per_gpu);
    if (e->overlap_assumed)
        ppl_buf_printf(out, "assumed     %s\n", e->overlap_assumed);
    ppl_format_bytes(e->memory.total, a, sizeof a);
    ppl_format_bytes(e->memory.capacity, b, sizeof b);
    char h[48] = "";
    if (e->memory.headroom > 0) {
        char hb[32];
        ppl_format_bytes(e->memory.headroom, hb, sizeof hb);
        snprintf(h, sizeof h, ", keeping %s free", hb);
    }
    ppl_buf_printf(out, "memory      %s of %s on stage %lld%s%s\n", a, b,
                   (long long)e->memory.stage, h, e->memory.fits ? "" : " (does not fit)");
    if (ppl_schedule_of(e->config.schedule)->splits_backward) {
        char f[32], bi[32], w[32];
        ppl_format_time(e->passes.f_s, f, sizeof f);
        ppl_format_time(e->passes.b_s, bi, sizeof bi);
        ppl_format_time(e->passes.w_s, w, sizeof w);
        ppl_buf_printf(out,
                       "pipeline    %s: F %s, B %s, W %s a microbatch on stage %lld (the "
                       "slowest); %.1f microbatches in flight on stage %lld\n",
                       ppl_schedule_name(e->config.schedule), f, bi, w, (long long)e->slowest_stage,
                       e->memory.in_flight, (long long)e->memory.stage);
    }
    ppl_buf_printf(out, "\nstep (critical path):\n");
    line(out, "compute", t->compute, step);
    line(out, "bubble", t->bubble, step);
    line(out, "exposed comm", t->exposed_comm, step);
    if (t->host > 0.0)
        line(out, "host launches", t->host, step);
    line(out, "optimizer", t->optimizer, step);
    line(out, "overhead", t->overhead, step);
    ppl_buf_printf(out, "\ncommunication per step, before overlap:\n");
    line(out, "tensor (tp)", t->tp_comm, step);
    line(out, "context (cp)", t->cp_comm, step);
    line(out, "pipeline (pp)", t->pp_comm, step);
    line(out, "data (dp)", t->dp_comm, step);
    line(out, "expert (ep)", t->ep_comm, step);
    ppl_format_bytes(e->traffic.nvlink, a, sizeof a);
    ppl_format_bytes(e->traffic.rail, b, sizeof b);
    ppl_format_bytes(e->traffic.spine, d, sizeof d);
    ppl_buf_printf(out, "\ntraffic per GPU per step: NVLink %s, under the leaf %s, above it %s\n",
                   a, b, d);
    ppl_buf_printf(out, "bottleneck: %s", e->bottleneck);
    if (e->bottleneck_level[0])
        ppl_buf_printf(out, " (largest exposed communication runs over %s)", e->bottleneck_level);
    ppl_buf_printf(out, "\n");
}
