/*
 * runs.c - loading a measured-runs file (see studies/runs.h).
 */
#include "studies/runs.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonread.h"
#include "cost/knobs.h"
#include "base/catalog.h"

static const char *const entry_keys[] = {"id",       "source", "model", "topology",   "config",
                                         "measured", "notes",  "stack", "confidence", "software",
                                         "family",   "kind",   NULL};
static const char *const kinds[] = {"train", NULL};
static const char *const software_keys[] = {"framework", "version", NULL};
static const char *const measured_keys[] = {"step_time_s", "tflops_per_gpu", "mfu", "memory_bytes",
                                            NULL};

ppl_status ppl_run_load_part(ppl_jr_ctx *ctx, const json_t *entry, const char *path,
                             const char *key, ppl_catalog_kind kind, void *out)
{
    char full[PPL_ERROR_KEY_MAX], file[PATH_MAX];
    json_t *v;
    ppl_status st = ppl_jr_get(ctx, entry, path, key, PPL_JR_REQUIRED, &v);
    if (st != PPL_OK)
        return st;
    ppl_jr_path(full, sizeof full, path, key);
    if (json_is_string(v)) {
        ppl_error inner;
        if (ppl_catalog_resolve(kind, json_string_value(v), file, sizeof file, &inner) != PPL_OK)
            return ppl_jr_fail(ctx, full, "%s", inner.message);
        st = kind == PPL_CATALOG_MODELS ? ppl_model_load(file, file, ctx->diag, out, ctx->err)
                                        : ppl_topology_load(file, file, ctx->diag, out, ctx->err);
        return st;
    }
    if (kind == PPL_CATALOG_MODELS)
        return ppl_model_from_json(v, ctx->file, full, ctx->diag, out, ctx->err);
    return ppl_topology_from_json(v, ctx->file, full, ctx->diag, out, ctx->err);
}

/* config.stage_layers: transformer layers per pipeline stage, first to last.  It
 * must make up the model's layers over pp stages of at least one layer, and only
 * the first and last stage may differ from the rest (what Megatron-LM's
 * --decoder-first/last-pipeline-num-layers express); it pins those two. */
static ppl_status read_stage_layers(ppl_jr_ctx *ctx, const json_t *cfg, const char *cpath,
                                    ppl_run *r)
{
    char full[PPL_ERROR_KEY_MAX], item[PPL_ERROR_KEY_MAX], found[64];
    json_t *v;
    ppl_status st = ppl_jr_get(ctx, cfg, cpath, "stage_layers", PPL_JR_OPTIONAL, &v);
    if (st != PPL_OK || !v)
        return st;
    ppl_jr_path(full, sizeof full, cpath, "stage_layers");
    size_t n = json_array_size(v);
    if (!json_is_array(v) || n == 0) {
        ppl_jr_describe(v, found, sizeof found);
        return ppl_jr_fail(
            ctx, full, "expected an array of layer counts, first stage to last, found %s", found);
    }
    ppl_pins *a = &r->pins;
    const int64_t layers = r->model.layers;
    if (a->pp != PPL_UNSET && (int64_t)n != a->pp)
        return ppl_jr_fail(ctx, full, "%zu stages, but pp is %lld", n, (long long)a->pp);
    int64_t sum = 0, count[3] = {0, 0, 0}; /* first, a middle one, last */
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(v, i);
        ppl_jr_index(item, sizeof item, full, i);
        if (!json_is_integer(e) || json_integer_value(e) < 1 || json_integer_value(e) > layers) {
            ppl_jr_describe(e, found, sizeof found);
            return ppl_jr_fail(ctx, item, "expected a layer count from 1 to %lld, found %s",
                               (long long)layers, found);
        }
        int64_t k = (int64_t)json_integer_value(e);
        sum += k;
        size_t slot = i == 0 ? 0 : i + 1 == n ? 2 : 1;
        if (slot == 1 && count[1] != 0 && k != count[1])
            return ppl_jr_fail(ctx, item,
                               "%lld, but stage 1 has %lld: only the first and last stage may "
                               "differ from the others",
                               (long long)k, (long long)count[1]);
        count[slot] = k;
    }
    if (sum != layers)
        return ppl_jr_fail(ctx, full, "the stages hold %lld layers, but %s has %lld",
                           (long long)sum, r->model.name, (long long)layers);
    a->pp = (int64_t)n;
    if (n >= 2) {
        a->first_stage_layers = count[0];
        a->last_stage_layers = count[2];
    }
    return PPL_OK;
}

static ppl_status read_config(ppl_jr_ctx *ctx, const json_t *entry, const char *path, ppl_run *r)
{
    char cpath[PPL_ERROR_KEY_MAX];
    json_t *cfg;
    const char *config_keys[64];
    size_t nrows, nkeys = 0;
    const ppl_knob *rows = ppl_knob_rows(&nrows);
    for (size_t i = 0; i < nrows && nkeys + 3 < sizeof config_keys / sizeof config_keys[0]; i++)
        if (rows[i].runs != PPL_KNOB_UNREAD)
            config_keys[nkeys++] = rows[i].name;
    config_keys[nkeys++] = "microbatches";
    config_keys[nkeys++] = "stage_layers";
    config_keys[nkeys] = NULL;
    ppl_status st = ppl_jr_object(ctx, entry, path, "config", PPL_JR_REQUIRED, config_keys, &cfg,
                                  cpath, sizeof cpath);
    if (st != PPL_OK)
        return st;
    ppl_pins *a = &r->pins;
    ppl_pins_init(a);
    /* a run names no sharding group nor offload: it sharded over every rank, on the GPU */
    a->shard_group = 0;
    a->offload_optimizer = 0.0;
    /* each knob as its row says: what a run states is pinned, what it leaves out
     * (or gives as null) stays as ppl_pins_init leaves it, free */
    for (size_t i = 0; i < nrows; i++)
        if (rows[i].runs != PPL_KNOB_UNREAD &&
            (st = ppl_knob_from_json(ctx, cfg, cpath, &rows[i], rows[i].runs == PPL_KNOB_REQUIRED,
                                     ppl_knob_pin(&rows[i], a), NULL, a)) != PPL_OK)
            return st;
    /* stated by some sources, implied by the rest: checked, not pinned */
    int64_t microbatches;
    if ((st = ppl_jr_int(ctx, cfg, cpath, "microbatches", PPL_JR_OPTIONAL, PPL_UNSET, 1, 1LL << 40,
                         &microbatches)))
        return st;
    if ((st = read_stage_layers(ctx, cfg, cpath, r)) != PPL_OK)
        return st;
    /* a run's pinned split must multiply out to its GPUs (an unpinned cp takes the rest) */
    if (a->gpus != PPL_UNSET && a->tp != PPL_UNSET && a->pp != PPL_UNSET && a->dp != PPL_UNSET) {
        int64_t cp = a->cp != PPL_UNSET ? a->cp : 1, prod;
        bool over = __builtin_mul_overflow(a->tp, a->pp, &prod) ||
                    __builtin_mul_overflow(prod, a->dp, &prod) ||
                    __builtin_mul_overflow(prod, cp, &prod);
        if (over || (a->cp != PPL_UNSET ? prod != a->gpus : a->gpus % prod != 0)) {
            char cps[32] = "";
            if (a->cp != PPL_UNSET)
                snprintf(cps, sizeof cps, "*%lld", (long long)a->cp);
            return ppl_jr_fail(ctx, cpath,
                               "tp*pp*dp%s = %lld*%lld*%lld%s does not make up gpus (%lld)",
                               a->cp != PPL_UNSET ? "*cp" : "", (long long)a->tp, (long long)a->pp,
                               (long long)a->dp, cps, (long long)a->gpus);
        }
    }
    return PPL_OK;
}

static ppl_status read_measured(ppl_jr_ctx *ctx, const json_t *entry, const char *path, ppl_run *r)
{
    char mpath[PPL_ERROR_KEY_MAX];
    json_t *meas;
    ppl_status st = ppl_jr_object(ctx, entry, path, "measured", PPL_JR_REQUIRED, measured_keys,
                                  &meas, mpath, sizeof mpath);
    if (st != PPL_OK)
        return st;
    /* a training step takes from a millisecond to days: outside that, a slip of
     * the unit, never a figure to score against */
    if ((st = ppl_jr_real(ctx, meas, mpath, "step_time_s", PPL_JR_OPTIONAL, 0,
                          PPL_JR_BETWEEN(1e-3, 1e7), &r->step_time_s)) ||
        (st = ppl_jr_real(ctx, meas, mpath, "tflops_per_gpu", PPL_JR_OPTIONAL, 0,
                          PPL_JR_POSITIVE(1e9), &r->tflops_per_gpu)) ||
        (st = ppl_jr_real(ctx, meas, mpath, "mfu", PPL_JR_OPTIONAL, 0, PPL_JR_POSITIVE(1.0),
                          &r->mfu)) ||
        (st = ppl_jr_quantity(ctx, meas, mpath, "memory_bytes", PPL_UNIT_BYTES, PPL_JR_OPTIONAL, 0,
                              PPL_JR_POSITIVE(1e18), &r->memory_bytes)))
        return st;
    if (r->step_time_s <= 0 && r->tflops_per_gpu <= 0 && r->mfu <= 0 && r->memory_bytes <= 0)
        return ppl_jr_fail(ctx, mpath,
                           "expected at least one of step_time_s, tflops_per_gpu, mfu, "
                           "memory_bytes");
    return PPL_OK;
}

/* software: {framework, version}: the stack profile of what ran (SPEC 1.1);
 * without it, a guess from the configuration, marked as an assumption. */
static ppl_status read_software(ppl_jr_ctx *ctx, const json_t *entry, const char *path, ppl_run *r)
{
    char spath[PPL_ERROR_KEY_MAX], framework[48] = "", version[32] = "";
    json_t *sw;
    ppl_status st = ppl_jr_object(ctx, entry, path, "software", PPL_JR_OPTIONAL, software_keys, &sw,
                                  spath, sizeof spath);
    if (st != PPL_OK)
        return st;
    bool known = false;
    if (sw) {
        if ((st = ppl_jr_string(ctx, sw, spath, "framework", PPL_JR_REQUIRED, "", framework,
                                sizeof framework)) ||
            (st = ppl_jr_string(ctx, sw, spath, "version", PPL_JR_OPTIONAL, "", version,
                                sizeof version)))
            return st;
        snprintf(r->software, sizeof r->software, "%s%s%s", framework, version[0] ? " " : "",
                 version);
        r->stack = ppl_stack_for_software(framework, version, &known);
    }
    if (!known) /* flash attention marks a stack of its era (2022+) */
        r->stack =
            r->pins.flash_attention == 0 ? PPL_STACK_MEGATRON_LM_2021 : PPL_STACK_MEGATRON_CORE;
    r->stack_assumed = !known;
    return PPL_OK;
}

/* `family`, else what `source` names, else the id: a run alone in its family.
 * `source` is free text of any length: only the family is kept from it. */
ppl_status ppl_run_read_family(ppl_jr_ctx *ctx, const json_t *entry, const char *path,
                               const char *id, char *family, size_t size)
{
    json_t *source;
    ppl_status st = ppl_jr_string(ctx, entry, path, "family", PPL_JR_OPTIONAL, "", family, size);
    if (st != PPL_OK || (st = ppl_jr_get(ctx, entry, path, "source", PPL_JR_OPTIONAL, &source)))
        return st;
    if (source && !json_is_string(source)) {
        char full[PPL_ERROR_KEY_MAX], found[64];
        ppl_jr_path(full, sizeof full, path, "source");
        ppl_jr_describe(source, found, sizeof found);
        return ppl_jr_fail(ctx, full, "expected a string, found %s", found);
    }
    if (!family[0])
        ppl_run_family_of(source ? json_string_value(source) : "", family, size);
    if (!family[0])
        snprintf(family, size, "%s", id);
    return PPL_OK;
}

void ppl_run_family_of(const char *source, char *out, size_t size)
{
    const char *s = source ? source : "";
    const char *arxiv = strstr(s, "arXiv:");
    size_t n = 0;
    if (size == 0)
        return;
    out[0] = '\0';
    if (arxiv) { /* "arXiv:" and the identifier: digits and dots */
        s = arxiv;
        n = 6;
        while (s[n] == '.' || (s[n] >= '0' && s[n] <= '9'))
            n++;
    } else { /* the first two words */
        while (*s == ' ')
            s++;
        const char *space = strchr(s, ' ');
        const char *second = space ? strchr(space + 1, ' ') : NULL;
        n = second ? (size_t)(second - s) : strlen(s);
        while (n > 0 && strchr(" ,;:.(", s[n - 1]))
            n--;
    }
    snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), s);
}

static ppl_status read_entry(ppl_jr_ctx *ctx, const json_t *entry, const char *path, ppl_run *r)
{
    ppl_status st;
    int stack = PPL_UNSET;
    if ((st = ppl_jr_expect_object(ctx, entry, path)))
        return st;
    /* a serving run (studies/serveruns.h) among training runs: said before its
     * keys are warned about as unknown */
    const json_t *k = json_object_get(entry, "kind");
    if (k && json_is_string(k) && strcmp(json_string_value(k), "serve") == 0) {
        char full[PPL_ERROR_KEY_MAX];
        ppl_jr_path(full, sizeof full, path, "kind");
        return ppl_jr_fail(ctx, full,
                           "a serving run in a training runs file: serving runs go in a file of "
                           "their own, every entry \"kind\": \"serve\"");
    }
    ppl_jr_warn_unknown_keys(ctx, entry, path, entry_keys);
    int kind;
    if ((st = ppl_jr_string(ctx, entry, path, "id", PPL_JR_REQUIRED, "", r->id, sizeof r->id)) ||
        (st = ppl_jr_enum(ctx, entry, path, "kind", PPL_JR_OPTIONAL, kinds, 0, &kind)))
        return st;
    if ((st = ppl_run_load_part(ctx, entry, path, "model", PPL_CATALOG_MODELS, &r->model)) ||
        (st = ppl_run_load_part(ctx, entry, path, "topology", PPL_CATALOG_TOPOLOGIES,
                                &r->topology)) ||
        (st = read_config(ctx, entry, path, r)) || (st = read_measured(ctx, entry, path, r)) ||
        (st = read_software(ctx, entry, path, r)) ||
        (st = ppl_run_read_family(ctx, entry, path, r->id, r->family, sizeof r->family)) ||
        (st = ppl_jr_enum(ctx, entry, path, "stack", PPL_JR_OPTIONAL, ppl_stack_names, PPL_UNSET,
                          &stack))) {
        /* name the run, not only its index */
        size_t len = strnlen(ctx->err->message, sizeof ctx->err->message - 1);
        snprintf(ctx->err->message + len, sizeof ctx->err->message - len, " (run \"%.60s\")",
                 r->id);
        return st;
    }
    if (stack != PPL_UNSET) { /* a stack named outright wins over software */
        r->stack = ppl_stack_from_name_index(stack);
        r->stack_assumed = false;
    }
    return PPL_OK;
}

ppl_status ppl_runs_from_json(const json_t *root, const char *file, const ppl_diag *diag,
                              ppl_run **runs_out, size_t *count_out, ppl_error *err)
{
    ppl_jr_ctx ctx = {.file = file, .err = err, .diag = diag};
    *runs_out = NULL;
    *count_out = 0;
    if (!json_is_array(root)) {
        char found[64];
        ppl_jr_describe(root, found, sizeof found);
        return ppl_jr_fail(&ctx, "(top level)", "expected an array of runs, found %s", found);
    }
    size_t n = json_array_size(root);
    if (n == 0)
        return ppl_jr_fail(&ctx, "(top level)", "expected at least one run, found an empty array");
    ppl_run *runs = calloc(n, sizeof *runs);
    if (!runs)
        return ppl_error_set(err, PPL_EINTERNAL, file, "", "out of memory");
    ppl_status st = PPL_OK;
    for (size_t i = 0; i < n && st == PPL_OK; i++) {
        char ipath[32];
        ppl_jr_index(ipath, sizeof ipath, "", i);
        st = read_entry(&ctx, json_array_get(root, i), ipath, &runs[i]);
    }
    if (st != PPL_OK) {
        free(runs);
        return st;
    }
    *runs_out = runs;
    *count_out = n;
    return PPL_OK;
}

ppl_status ppl_runs_load(const char *path, const ppl_diag *diag, ppl_run **runs_out,
                         size_t *count_out, ppl_error *err)
{
    ppl_jr_ctx ctx = {.file = path, .err = err, .diag = diag};
    *runs_out = NULL;
    *count_out = 0;
    json_t *root = ppl_jr_load_file(&ctx, path);
    if (!root)
        return PPL_EINPUT;
    ppl_status st = ppl_runs_from_json(root, path, diag, runs_out, count_out, err);
    json_decref(root);
    return st;
}

void ppl_runs_free(ppl_run *runs)
{
    free(runs);
}
