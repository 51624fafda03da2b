/*
 * knobs.c - the knob registry (see cost/knobs.h): one row per knob, in the order
 * the diff between two plans lists them.
 *
 * Ranges are the command line's: a parallel degree, microbatch or layer count up
 * to 2^20 (far above any model's heads or layers), a GPU count or batch up to
 * 2^40.  Plan files carry what plan --json wrote (ppl_config_json), so a key a plan
 * omits means what the writer omits it for (cp 1, ZeRO 0, no offload, ...);
 * measured runs state what their source reports and leave the rest to the search.
 */
#include "cost/knobs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/units.h"
#include "cost/pipeline.h"

#define DEGREE (1LL << 20)
#define COUNT (1LL << 40)
#define LAYERS ((int64_t)PPL_MAX_LAYERS)
#define PIN(field) offsetof(ppl_pins, field)
#define FREE ((double)PPL_UNSET)

static const char *const bool_words[] = {"no", "yes", NULL};

/* ---- values ------------------------------------------------------------------ */

static bool integer(ppl_knob_value *out, int64_t v)
{
    memset(out, 0, sizeof *out);
    out->kind = PPL_KNOB_INT;
    out->i = v;
    return true;
}

static bool word(ppl_knob_value *out, const char *w)
{
    memset(out, 0, sizeof *out);
    out->kind = PPL_KNOB_ENUM;
    out->word = w;
    return true;
}

static bool flag(ppl_knob_value *out, bool on)
{
    memset(out, 0, sizeof *out);
    out->kind = PPL_KNOB_BOOL;
    out->on = on;
    return true;
}

#define INT_VALUE(name, expr)                                                                      \
    static bool name(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)                 \
    {                                                                                              \
        (void)m;                                                                                   \
        return integer(out, (expr));                                                               \
    }
INT_VALUE(v_gpus, c->gpus)
INT_VALUE(v_tp, c->tp)
INT_VALUE(v_pp, c->pp)
INT_VALUE(v_dp, c->dp)
INT_VALUE(v_cp, c->cp)
INT_VALUE(v_ep, c->ep)
INT_VALUE(v_vp, c->vp)
INT_VALUE(v_mbs, c->mbs)
INT_VALUE(v_global_batch, c->global_batch)
INT_VALUE(v_zero, c->zero)

#define BOOL_VALUE(name, expr)                                                                     \
    static bool name(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)                 \
    {                                                                                              \
        (void)m;                                                                                   \
        return flag(out, (expr));                                                                  \
    }
BOOL_VALUE(v_sequence_parallel, c->sequence_parallel)
BOOL_VALUE(v_flash_attention, c->flash_attention)

/* a model without experts has no expert layout */
static bool v_etp(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    integer(out, ppl_config_etp(c));
    return m && m->has_moe;
}

/* hierarchical sharding (shard.h) only */
static bool v_shard_group(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    (void)m;
    integer(out, ppl_config_shard_group(c));
    return ppl_config_shard_replicas(c) > 1;
}

static bool v_offload(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    (void)m;
    memset(out, 0, sizeof *out);
    out->kind = PPL_KNOB_SHARE;
    out->share = c->offload_optimizer;
    return c->offload_optimizer > 0.0;
}

static bool v_recompute(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    (void)m;
    return word(out, ppl_recompute_name(c->recompute));
}

/* with full recomputation; null: every layer of a stage */
static bool v_recompute_layers(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    (void)m;
    integer(out, c->recompute_layers);
    out->null = c->recompute_layers <= 0;
    return c->recompute == PPL_RECOMPUTE_FULL;
}

static bool v_cp_comm(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    (void)m;
    word(out, ppl_cp_comm_name(c->cp_comm));
    return c->cp > 1;
}

static bool v_ep_overlap(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    (void)m;
    flag(out, c->ep_overlap);
    return c->ep > 1;
}

/* carried only where it is turned off: on, it is the stack's (whose overlap the
 * configuration does not hold) */
static bool v_tp_overlap(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    (void)m;
    flag(out, !c->tp_overlap_off);
    return c->tp_overlap_off && c->tp > 1;
}

/* "interleaved" for 1F1B with vp > 1 (pipeline.h) */
static bool v_schedule(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    (void)m;
    return word(out, ppl_config_schedule_name(c));
}

static bool v_precision(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    (void)m;
    return word(out, ppl_precision_name(c->precision));
}

static bool v_optimizer(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    (void)m;
    return word(out, ppl_optimizer_name(c->optimizer));
}

static bool v_fp8_recipe(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    (void)m;
    word(out,
         (unsigned)c->fp8_recipe <= PPL_FP8_BLOCKWISE ? ppl_fp8_recipe_names[c->fp8_recipe] : "?");
    return c->precision == PPL_PRECISION_FP8;
}

/* only when the step launches CUDA graphs (a configuration's JSON before them had
 * no such key) */
static bool v_cuda_graphs(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    (void)m;
    word(out, ppl_cuda_graphs_name(c->cuda_graphs));
    return c->cuda_graphs != PPL_CUDA_GRAPHS_NONE;
}

static bool v_bf16_layers(const ppl_config *c, const ppl_model *m, ppl_knob_value *out)
{
    (void)m;
    integer(out, c->bf16_layers);
    return c->bf16_layers > 0;
}

/* ---- the diff ----------------------------------------------------------------- */

static bool always(const ppl_config *c)
{
    (void)c;
    return true;
}

static bool with_experts(const ppl_config *c)
{
    return c->ep > 1;
}

static bool with_graphs(const ppl_config *c)
{
    return c->cuda_graphs != PPL_CUDA_GRAPHS_NONE;
}

static bool with_cp(const ppl_config *c)
{
    return c->cp > 1;
}

/* the sharding group as the configuration holds it (0: every rank) */
static void t_shard_group(const ppl_config *c, char *buf, size_t size)
{
    snprintf(buf, size, "%lld", (long long)c->shard_group);
}

static void t_offload(const ppl_config *c, char *buf, size_t size)
{
    snprintf(buf, size, "%g", c->offload_optimizer);
}

/* "full:8" when only 8 layers of a stage are recomputed */
static void t_recompute(const ppl_config *c, char *buf, size_t size)
{
    if (c->recompute == PPL_RECOMPUTE_FULL && c->recompute_layers > 0)
        snprintf(buf, size, "full:%lld", (long long)c->recompute_layers);
    else
        snprintf(buf, size, "%s", ppl_recompute_name(c->recompute));
}

static void t_cp_comm(const ppl_config *c, char *buf, size_t size)
{
    snprintf(buf, size, "%s", c->cp > 1 ? ppl_cp_comm_name(c->cp_comm) : "none");
}

/* the schedule's own name: interleaving shows as vp */
static void t_schedule(const ppl_config *c, char *buf, size_t size)
{
    snprintf(buf, size, "%s", ppl_schedule_name(c->schedule));
}

/* fp8's recipe whatever the precision (the default, delayed, otherwise) */
static void t_fp8_recipe(const ppl_config *c, char *buf, size_t size)
{
    snprintf(buf, size, "%s",
             (unsigned)c->fp8_recipe <= PPL_FP8_BLOCKWISE ? ppl_fp8_recipe_names[c->fp8_recipe]
                                                          : "?");
}

static void t_bf16_layers(const ppl_config *c, char *buf, size_t size)
{
    snprintf(buf, size, "%lld", (long long)c->bf16_layers);
}

/* ---- the registry ---------------------------------------------------------------- */

#define R PPL_KNOB_REQUIRED
#define O PPL_KNOB_OPTIONAL
#define U PPL_KNOB_UNREAD

static const ppl_knob rows[] = {
    /* name, kind, pin, values, min, max, runs, plan, plan default, value, diffed, diff text */
    {"gpus", PPL_KNOB_INT, PIN(gpus), NULL, 1, COUNT, O, R, FREE, v_gpus, NULL, NULL},
    {"tp", PPL_KNOB_INT, PIN(tp), NULL, 1, DEGREE, O, R, FREE, v_tp, always, NULL},
    {"pp", PPL_KNOB_INT, PIN(pp), NULL, 1, DEGREE, O, R, FREE, v_pp, always, NULL},
    {"dp", PPL_KNOB_INT, PIN(dp), NULL, 1, COUNT, O, R, FREE, v_dp, always, NULL},
    {"cp", PPL_KNOB_INT, PIN(cp), NULL, 1, DEGREE, O, O, 1, v_cp, always, NULL},
    {"ep", PPL_KNOB_INT, PIN(ep), NULL, 1, DEGREE, O, O, 1, v_ep, always, NULL},
    {"etp", PPL_KNOB_INT, PIN(etp), NULL, 1, DEGREE, O, O, FREE, v_etp, with_experts, NULL},
    {"vp", PPL_KNOB_INT, PIN(vp), NULL, 1, DEGREE, O, O, 1, v_vp, always, NULL},
    {"mbs", PPL_KNOB_INT, PIN(mbs), NULL, 1, DEGREE, O, R, FREE, v_mbs, always, NULL},
    {"global_batch", PPL_KNOB_INT, PIN(global_batch), NULL, 1, COUNT, R, R, FREE, v_global_batch,
     NULL, NULL},
    {"zero", PPL_KNOB_INT, PIN(zero), NULL, 0, 3, O, O, 0, v_zero, always, NULL},
    {"shard_group", PPL_KNOB_INT, PIN(shard_group), NULL, 1, COUNT, U, O, 0, v_shard_group, always,
     t_shard_group},
    {"offload_optimizer", PPL_KNOB_SHARE, PIN(offload_optimizer), NULL, 0, 1, U, O, 0, v_offload,
     always, t_offload},
    {"recompute", PPL_KNOB_ENUM, PIN(recompute), ppl_recompute_names, 0, 0, O, O, 0, v_recompute,
     always, t_recompute},
    {"recompute_layers", PPL_KNOB_INT, PIN(recompute_layers), NULL, 1, LAYERS, U, O, FREE,
     v_recompute_layers, NULL, NULL},
    {"sequence_parallel", PPL_KNOB_BOOL, PIN(sequence_parallel), bool_words, 0, 1, O, O, 0,
     v_sequence_parallel, always, NULL},
    {"flash_attention", PPL_KNOB_BOOL, PIN(flash_attention), bool_words, 0, 1, O, O, 0,
     v_flash_attention, always, NULL},
    {"cp_comm", PPL_KNOB_ENUM, PIN(cp_comm), ppl_cp_comm_names, 0, 0, O, O, PPL_CP_COMM_P2P,
     v_cp_comm, with_cp, t_cp_comm},
    {"ep_overlap", PPL_KNOB_BOOL, PIN(ep_overlap), bool_words, 0, 1, U, O, 0, v_ep_overlap, always,
     NULL},
    {"tp_overlap", PPL_KNOB_BOOL, PIN(tp_overlap), bool_words, 0, 1, O, O, PPL_UNSET, v_tp_overlap,
     always, NULL},
    {"schedule", PPL_KNOB_ENUM, PIN(schedule), ppl_schedule_names, 0, 0, U, O, PPL_SCHEDULE_1F1B,
     v_schedule, always, t_schedule},
    {"precision", PPL_KNOB_ENUM, PIN(precision), ppl_precision_names, 0, 0, O, O,
     PPL_PRECISION_BF16, v_precision, always, NULL},
    {"optimizer", PPL_KNOB_ENUM, PIN(optimizer), ppl_optimizer_names, 0, 0, O, O,
     PPL_OPTIMIZER_ADAM, v_optimizer, NULL, NULL},
    {"fp8_recipe", PPL_KNOB_ENUM, PIN(fp8_recipe), ppl_fp8_recipe_names, 0, 0, O, O,
     PPL_FP8_DELAYED, v_fp8_recipe, always, t_fp8_recipe},
    {"bf16_layers", PPL_KNOB_INT, PIN(bf16_layers), NULL, 1, 1000000, U, O, 0, v_bf16_layers,
     always, t_bf16_layers},
    {"cuda_graphs", PPL_KNOB_ENUM, PIN(cuda_graphs), ppl_cuda_graphs_names, 0, 0, O, O,
     PPL_CUDA_GRAPHS_NONE, v_cuda_graphs, with_graphs, NULL},
    /* the stage split's ends: a plan file and a run state all stages (stage_layers),
     * read by their readers; the diff shows the split as one */
    {"first_stage_layers", PPL_KNOB_INT, PIN(first_stage_layers), NULL, 1, LAYERS, U, U, FREE, NULL,
     NULL, NULL},
    {"last_stage_layers", PPL_KNOB_INT, PIN(last_stage_layers), NULL, 1, LAYERS, U, U, FREE, NULL,
     NULL, NULL},
};

#undef R
#undef O
#undef U

const ppl_knob *ppl_knob_rows(size_t *count)
{
    *count = sizeof rows / sizeof rows[0];
    return rows;
}

const ppl_knob *ppl_knob_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(rows[i].name, name) == 0)
            return &rows[i];
    return NULL;
}

double ppl_knob_pin(const ppl_knob *k, const ppl_pins *pins)
{
    const char *at = (const char *)pins + k->pin;
    switch (k->kind) {
    case PPL_KNOB_INT: return (double)*(const int64_t *)at;
    case PPL_KNOB_SHARE: return *(const double *)at;
    default: return (double)*(const int *)at;
    }
}

void ppl_knob_set_pin(const ppl_knob *k, ppl_pins *pins, double value)
{
    char *at = (char *)pins + k->pin;
    switch (k->kind) {
    case PPL_KNOB_INT: *(int64_t *)at = (int64_t)value; break;
    case PPL_KNOB_SHARE: *(double *)at = value; break;
    default: *(int *)at = (int)value; break;
    }
}

#define bad(err, k, ...) ppl_error_set((err), PPL_EUSAGE, "", (k)->name, __VA_ARGS__)

ppl_status ppl_knob_parse(const ppl_knob *k, const char *text, ppl_pins *pins, ppl_error *err)
{
    char *end;
    switch (k->kind) {
    case PPL_KNOB_INT: {
        long long v = strtoll(text, &end, 10);
        if (end == text || *end != '\0' || v < k->min || v > k->max)
            return bad(err, k, "expected an integer from %lld to %lld, found '%.40s'",
                       (long long)k->min, (long long)k->max, text);
        ppl_knob_set_pin(k, pins, (double)v);
        return PPL_OK;
    }
    case PPL_KNOB_SHARE: {
        const char *stop;
        double v = ppl_decimal(text, &stop);
        if (stop == text || *stop != '\0' || !(v >= 0.0 && v <= 1.0))
            return bad(err, k, "expected a share from 0 to 1, found '%.40s'", text);
        ppl_knob_set_pin(k, pins, v);
        return PPL_OK;
    }
    case PPL_KNOB_BOOL: {
        static const char *const on[] = {"yes", "true", "on", "1"}, *const off[] = {"no", "false",
                                                                                    "off", "0"};
        for (size_t i = 0; i < 4; i++)
            if (strcmp(text, on[i]) == 0 || strcmp(text, off[i]) == 0) {
                ppl_knob_set_pin(k, pins, strcmp(text, on[i]) == 0 ? 1 : 0);
                return PPL_OK;
            }
        return bad(err, k, "expected yes or no, found '%.40s'", text);
    }
    case PPL_KNOB_ENUM:
        for (int i = 0; k->values[i]; i++)
            if (strcmp(k->values[i], text) == 0) {
                ppl_knob_set_pin(k, pins, i);
                return PPL_OK;
            }
        return bad(err, k, "unknown value '%.40s'", text);
    }
    return bad(err, k, "no parser for this knob");
}

ppl_status ppl_knob_from_json(ppl_jr_ctx *ctx, const json_t *cfg, const char *path,
                              const ppl_knob *k, bool required, double fallback,
                              const char *const *words, ppl_pins *pins)
{
    json_t *v;
    ppl_status st =
        ppl_jr_get(ctx, cfg, path, k->name, required ? PPL_JR_REQUIRED : PPL_JR_OPTIONAL, &v);
    if (st != PPL_OK || !v) {
        if (st == PPL_OK)
            ppl_knob_set_pin(k, pins, fallback);
        return st;
    }
    switch (k->kind) {
    case PPL_KNOB_INT: {
        int64_t i;
        /* a fallback below the range (0: none) is a value the file may state too */
        int64_t lo =
            fallback != (double)PPL_UNSET && fallback < (double)k->min ? (int64_t)fallback : k->min;
        st =
            ppl_jr_int(ctx, cfg, path, k->name, PPL_JR_OPTIONAL, (int64_t)fallback, lo, k->max, &i);
        if (st == PPL_OK)
            ppl_knob_set_pin(k, pins, (double)i);
        return st;
    }
    case PPL_KNOB_SHARE: {
        double x;
        st = ppl_jr_real(ctx, cfg, path, k->name, PPL_JR_OPTIONAL, fallback,
                         PPL_JR_BETWEEN(0.0, 1.0), &x);
        if (st == PPL_OK)
            ppl_knob_set_pin(k, pins, x);
        return st;
    }
    case PPL_KNOB_BOOL: {
        bool b = false;
        st = ppl_jr_bool(ctx, cfg, path, k->name, PPL_JR_OPTIONAL, false, &b);
        if (st == PPL_OK)
            ppl_knob_set_pin(k, pins, b ? 1 : 0);
        return st;
    }
    case PPL_KNOB_ENUM: {
        int i, own = 0;
        while (k->values[own])
            own++;
        st = ppl_jr_enum(ctx, cfg, path, k->name, PPL_JR_OPTIONAL, words ? words : k->values,
                         (int)fallback, &i);
        if (st == PPL_OK)
            ppl_knob_set_pin(k, pins, i < own ? (double)i : fallback);
        return st;
    }
    }
    return st;
}

void ppl_knob_text(const ppl_knob *k, const ppl_config *c, const ppl_model *m, char *buf,
                   size_t size)
{
    ppl_knob_value v;
    if (k->diff_text) {
        k->diff_text(c, buf, size);
        return;
    }
    buf[0] = '\0';
    if (!k->value)
        return;
    k->value(c, m, &v);
    switch (v.kind) {
    case PPL_KNOB_INT: snprintf(buf, size, "%lld", (long long)v.i); break;
    case PPL_KNOB_SHARE: snprintf(buf, size, "%g", v.share); break;
    case PPL_KNOB_BOOL: snprintf(buf, size, "%s", v.on ? "on" : "off"); break;
    case PPL_KNOB_ENUM: snprintf(buf, size, "%s", v.word); break;
    }
}
