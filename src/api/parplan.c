/*
 * parplan.c - the public interface (parplan/parplan.h) over the library's inside.
 *
 * Each handle is a library struct the caller holds by pointer: a model and a
 * topology as the loaders fill them, a context around ppl_eval_ctx, pins as
 * ppl_pins set through the knob registry (cost/knobs.h), a result as an estimate
 * with the model it was costed for.  Nothing here models anything: it loads,
 * calls and renders as the command line does, without printing.
 */
#include "parplan/parplan.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/catalog.h"
#include "base/output.h"
#include "cost/estimate.h"
#include "cost/knobs.h"
#include "cost/rules.h"
#include "plan/search.h"
#include "render/htmlreport.h"
#include "render/report.h"
#include "studies/calibrate.h"
#include "studies/runs.h"
#include "studies/sizing.h"
#include "studies/whatif.h"

struct ppl_context {
    ppl_eval_ctx eval;
};

struct ppl_result {
    ppl_estimate estimate;
    const ppl_model *model;
};

struct ppl_plan {
    const ppl_context *context;
    ppl_estimate *estimates; /* ranked, for the report */
    ppl_result *results;
    size_t count;
};

struct ppl_grid {
    size_t count;
    char (*values)[256];
    ppl_result *best;
    bool *ok;
    double *days;
};

static ppl_status out_of_memory(ppl_error *err)
{
    return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
}

/* ---- load -------------------------------------------------------------------- */

ppl_status ppl_model_open(const char *name, ppl_model **out, ppl_error *err)
{
    char path[PATH_MAX];
    *out = NULL;
    ppl_status st = ppl_catalog_resolve(PPL_CATALOG_MODELS, name, path, sizeof path, err);
    if (st != PPL_OK)
        return st;
    ppl_model *m = malloc(sizeof *m);
    if (!m)
        return out_of_memory(err);
    if ((st = ppl_model_load(path, NULL, NULL, m, err)) != PPL_OK) {
        free(m);
        return st;
    }
    *out = m;
    return PPL_OK;
}

void ppl_model_close(ppl_model *model)
{
    free(model);
}

const char *ppl_model_title(const ppl_model *model)
{
    return model->name;
}

ppl_status ppl_topology_open(const char *name, ppl_topology **out, ppl_error *err)
{
    char path[PATH_MAX];
    *out = NULL;
    ppl_status st = ppl_catalog_resolve(PPL_CATALOG_TOPOLOGIES, name, path, sizeof path, err);
    if (st != PPL_OK)
        return st;
    ppl_topology *t = malloc(sizeof *t);
    if (!t)
        return out_of_memory(err);
    if ((st = ppl_topology_load(path, NULL, NULL, t, err)) != PPL_OK) {
        free(t);
        return st;
    }
    *out = t;
    return PPL_OK;
}

void ppl_topology_close(ppl_topology *topology)
{
    free(topology);
}

const char *ppl_topology_title(const ppl_topology *topology)
{
    return topology->name;
}

int64_t ppl_topology_gpu_count(const ppl_topology *topology)
{
    return topology->servers * topology->gpus_per_server;
}

/* ---- context and pins ---------------------------------------------------------- */

ppl_status ppl_context_open(const ppl_model *model, const ppl_topology *topology, const char *stack,
                            ppl_context **out, ppl_error *err)
{
    ppl_stack profile = PPL_STACK_MODERN;
    *out = NULL;
    if (stack) {
        int i = 0;
        while (ppl_stack_names[i] && strcmp(ppl_stack_names[i], stack) != 0)
            i++;
        if (!ppl_stack_names[i])
            return ppl_error_set(err, PPL_EUSAGE, "", "stack", "unknown stack profile '%.40s'",
                                 stack);
        profile = ppl_stack_from_name_index(i);
    }
    ppl_context *c = malloc(sizeof *c);
    if (!c)
        return out_of_memory(err);
    ppl_eval_ctx_init(&c->eval, model, topology, profile);
    *out = c;
    return PPL_OK;
}

void ppl_context_close(ppl_context *context)
{
    free(context);
}

ppl_pins *ppl_pins_new(void)
{
    ppl_pins *p = malloc(sizeof *p);
    if (p)
        ppl_pins_init(p);
    return p;
}

ppl_status ppl_pins_set(ppl_pins *pins, const char *knob, const char *value, ppl_error *err)
{
    const ppl_knob *k = ppl_knob_find(knob);
    if (!k)
        return ppl_error_set(err, PPL_EUSAGE, "", knob ? knob : "", "no such knob");
    return ppl_knob_parse(k, value ? value : "", pins, err);
}

void ppl_pins_free(ppl_pins *pins)
{
    free(pins);
}

/* ---- estimate and search ----------------------------------------------------------- */

ppl_status ppl_estimate_pins(const ppl_context *context, const ppl_pins *pins, ppl_result **out,
                             ppl_error *err)
{
    const ppl_eval_ctx *ctx = &context->eval;
    ppl_config config;
    *out = NULL;
    ppl_status st = ppl_config_from_pins(pins, ctx->model, ctx->topo, &config, err);
    if (st != PPL_OK)
        return st;
    ppl_result *r = malloc(sizeof *r);
    if (!r)
        return out_of_memory(err);
    ppl_estimate_config(ctx, &config, &r->estimate);
    r->model = ctx->model;
    if ((st = ppl_estimate_check(&r->estimate, err)) != PPL_OK) {
        free(r);
        return st;
    }
    *out = r;
    return PPL_OK;
}

void ppl_result_free(ppl_result *result)
{
    free(result);
}

ppl_status ppl_plan_search(const ppl_context *context, const ppl_pins *pins, size_t top,
                           ppl_plan **out, ppl_error *err)
{
    ppl_pins free_pins;
    ppl_search_result found;
    *out = NULL;
    if (!pins) {
        ppl_pins_init(&free_pins);
        pins = &free_pins;
    }
    ppl_search_opts opts = {
        .pins = pins, .top = top > 0 ? top : 1, .objective = PPL_OBJECTIVE_TIME};
    ppl_status st = ppl_search(&context->eval, &opts, &found, err);
    if (st == PPL_INFEASIBLE && found.empty_reason)
        ppl_error_set(err, PPL_INFEASIBLE, "", "", "%s", found.empty_reason);
    if (st != PPL_OK) {
        ppl_search_free(&found);
        return st;
    }
    ppl_plan *p = calloc(1, sizeof *p);
    if (p) {
        p->results = calloc(found.count, sizeof *p->results);
        p->estimates = calloc(found.count, sizeof *p->estimates);
    }
    if (!p || !p->results || !p->estimates) {
        ppl_plan_free(p);
        ppl_search_free(&found);
        return out_of_memory(err);
    }
    p->context = context;
    p->count = found.count;
    for (size_t i = 0; i < found.count; i++) {
        p->estimates[i] = found.results[i];
        p->results[i].estimate = found.results[i];
        p->results[i].model = context->eval.model;
    }
    ppl_search_free(&found);
    *out = p;
    return PPL_OK;
}

size_t ppl_plan_count(const ppl_plan *plan)
{
    return plan->count;
}

const ppl_result *ppl_plan_result(const ppl_plan *plan, size_t i)
{
    return i < plan->count ? &plan->results[i] : NULL;
}

void ppl_plan_free(ppl_plan *plan)
{
    if (!plan)
        return;
    free(plan->results);
    free(plan->estimates);
    free(plan);
}

/* ---- a result ------------------------------------------------------------------------- */

double ppl_result_step_time_s(const ppl_result *r)
{
    return r->estimate.step_time_s;
}

double ppl_result_tokens_per_s(const ppl_result *r)
{
    return r->estimate.tokens_per_s;
}

double ppl_result_mfu(const ppl_result *r)
{
    return r->estimate.mfu;
}

double ppl_result_memory_bytes(const ppl_result *r)
{
    return r->estimate.memory.total;
}

double ppl_result_capacity_bytes(const ppl_result *r)
{
    return r->estimate.memory.capacity;
}

bool ppl_result_fits(const ppl_result *r)
{
    return r->estimate.memory.fits;
}

size_t ppl_result_describe(const ppl_result *r, char *buf, size_t size)
{
    char line[512];
    ppl_config_describe(&r->estimate.config, line, sizeof line);
    int n = snprintf(buf, size, "%s", line);
    return n > 0 ? (size_t)n : 0;
}

/* A JSON document rendered as the command line writes it, in a string of its own. */
static char *rendered(json_t *doc)
{
    if (!doc)
        return NULL;
    ppl_buf b;
    ppl_buf_init(&b);
    ppl_json_render(doc, &b);
    json_decref(doc);
    char *s = b.failed ? NULL : malloc(b.len + 1);
    if (s) {
        memcpy(s, b.data, b.len);
        s[b.len] = '\0';
    }
    ppl_buf_free(&b);
    return s;
}

char *ppl_result_json(const ppl_result *r)
{
    return rendered(ppl_estimate_json(&r->estimate, r->model));
}

/* ---- studies ------------------------------------------------------------------------------ */

void ppl_grid_free(ppl_grid *g)
{
    if (!g)
        return;
    free(g->values);
    free(g->best);
    free(g->ok);
    free(g->days);
    free(g);
}

static ppl_status grid_fill(ppl_grid *g, const ppl_sweep *sw, int nsw, const ppl_whatif_result *pts,
                            const ppl_model *model)
{
    for (size_t p = 0; p < g->count; p++) {
        size_t used = 0;
        g->values[p][0] = '\0';
        for (int k = 0; k < nsw && used < sizeof g->values[p]; k++)
            used +=
                (size_t)snprintf(g->values[p] + used, sizeof g->values[p] - used, "%s%s=%s",
                                 k ? " " : "", sw[k].key, ppl_sweep_value(&sw[k], pts[p].idx[k]));
        g->ok[p] = pts[p].ok;
        g->best[p].estimate = pts[p].best;
        g->best[p].model = model;
        g->days[p] = pts[p].ok ? pts[p].time_to_train_days : 0.0;
    }
    return PPL_OK;
}

ppl_status ppl_grid_run(const ppl_model *model, const ppl_topology *topology,
                        const char *const *sweeps, size_t nsweeps, const ppl_pins *pins,
                        double tokens, ppl_grid **out, ppl_error *err)
{
    json_t *doc = NULL;
    ppl_sweep sw[PPL_WHATIF_MAX_SWEEPS];
    size_t npts = 0;
    ppl_status st;
    *out = NULL;
    if (!topology->file[0])
        return ppl_error_set(err, PPL_EUSAGE, "", "topology",
                             "a what-if grid patches the topology's file: open it from one");
    if (nsweeps > PPL_WHATIF_MAX_SWEEPS)
        return ppl_error_set(err, PPL_EUSAGE, "", "sweep", "at most %d sweeps",
                             PPL_WHATIF_MAX_SWEEPS);
    if ((st = ppl_topology_document(topology->file, NULL, &doc, err)) != PPL_OK)
        return st;
    if ((st = ppl_sweeps_parse(sweeps, (int)nsweeps, doc, sw, &npts, err)) != PPL_OK) {
        json_decref(doc);
        return st;
    }
    ppl_grid *g = calloc(1, sizeof *g);
    ppl_whatif_result *pts = calloc(npts, sizeof *pts);
    if (g) {
        g->count = npts;
        g->values = calloc(npts, sizeof *g->values);
        g->best = calloc(npts, sizeof *g->best);
        g->ok = calloc(npts, sizeof *g->ok);
        g->days = calloc(npts, sizeof *g->days);
    }
    if (!g || !pts || !g->values || !g->best || !g->ok || !g->days) {
        json_decref(doc);
        free(pts);
        ppl_grid_free(g);
        return out_of_memory(err);
    }
    ppl_whatif_opts wo = {.model = model,
                          .topology = doc,
                          .file = topology->file,
                          .sweeps = sw,
                          .nsweeps = (int)nsweeps,
                          .tokens = tokens,
                          .search = {.objective = PPL_OBJECTIVE_TIME}};
    if (pins)
        wo.pins = *pins;
    else
        ppl_pins_init(&wo.pins);
    bool batch_swept = false;
    for (size_t i = 0; i < nsweeps; i++)
        batch_swept = batch_swept || sw[i].kind == PPL_SWEEP_GLOBAL_BATCH;
    wo.default_batch = !batch_swept && wo.pins.global_batch == PPL_UNSET;
    st = ppl_whatif_run(&wo, pts, npts, err);
    json_decref(doc);
    if (st == PPL_OK)
        st = grid_fill(g, sw, (int)nsweeps, pts, model);
    free(pts);
    if (st != PPL_OK) {
        ppl_grid_free(g);
        return st;
    }
    *out = g;
    return PPL_OK;
}

size_t ppl_grid_count(const ppl_grid *g)
{
    return g->count;
}

const char *ppl_grid_values(const ppl_grid *g, size_t i)
{
    return i < g->count ? g->values[i] : NULL;
}

const ppl_result *ppl_grid_best(const ppl_grid *g, size_t i)
{
    return i < g->count && g->ok[i] ? &g->best[i] : NULL;
}

double ppl_grid_days(const ppl_grid *g, size_t i)
{
    return i < g->count ? g->days[i] : 0.0;
}

ppl_status ppl_size_cluster(const ppl_context *context, const ppl_pins *pins, double tokens,
                            double days, int64_t *gpus, ppl_result **best, ppl_error *err)
{
    ppl_pins free_pins;
    ppl_sizing r;
    *best = NULL;
    *gpus = 0;
    if (!pins) {
        ppl_pins_init(&free_pins);
        pins = &free_pins;
    }
    ppl_sizing_opts opts = {
        .pins = pins, .search = {.objective = PPL_OBJECTIVE_TIME}, .tokens = tokens, .days = days};
    ppl_status st = ppl_size(&context->eval, &opts, &r, err);
    if (st != PPL_OK)
        return st;
    ppl_result *res = malloc(sizeof *res);
    if (!res)
        return out_of_memory(err);
    res->estimate = r.best;
    res->model = context->eval.model;
    *gpus = r.gpus;
    *best = res;
    return PPL_OK;
}

ppl_status ppl_calibrate_check(const char *runs_path, size_t *count, double *mean_error,
                               double *max_error, ppl_error *err)
{
    ppl_run *runs = NULL;
    size_t n = 0;
    *count = 0;
    *mean_error = *max_error = 0.0;
    ppl_status st = ppl_runs_load(runs_path, NULL, &runs, &n, err);
    if (st != PPL_OK)
        return st;
    ppl_calib_prediction *pred = calloc(n ? n : 1, sizeof *pred);
    if (!pred) {
        ppl_runs_free(runs);
        return out_of_memory(err);
    }
    for (size_t i = 0; i < n && st == PPL_OK; i++) {
        ppl_status one = ppl_calib_predict(&runs[i], ppl_constants_committed(), &pred[i]);
        if (one == PPL_EINTERNAL)
            st = ppl_error_set(err, PPL_EINTERNAL, runs_path, runs[i].id, "%s", pred[i].why);
    }
    if (st == PPL_OK) {
        ppl_calib_summary sum;
        ppl_calib_summarize(runs, pred, n, &sum);
        *count = sum.runs;
        *mean_error = sum.mean_abs;
        *max_error = sum.max_abs;
    }
    free(pred);
    ppl_runs_free(runs);
    return st;
}

/* ---- output ---------------------------------------------------------------------------------- */

ppl_status ppl_plan_html(const ppl_plan *plan, char **html, ppl_error *err)
{
    *html = NULL;
    const ppl_eval_ctx *ctx = &plan->context->eval;
    ppl_report_page page = {.model = ctx->model,
                            .topo = ctx->topo,
                            .memory = &ctx->memory,
                            .results = plan->estimates,
                            .nresults = plan->count,
                            .origin = "libparplan"};
    ppl_buf b;
    ppl_buf_init(&b);
    ppl_status st = ppl_report_html(&page, &b, err);
    if (st == PPL_OK && b.failed)
        st = out_of_memory(err);
    if (st == PPL_OK) {
        *html = malloc(b.len + 1);
        if (!*html)
            st = out_of_memory(err);
        else {
            memcpy(*html, b.data, b.len);
            (*html)[b.len] = '\0';
        }
    }
    ppl_buf_free(&b);
    return st;
}

void ppl_free(void *p)
{
    free(p);
}
