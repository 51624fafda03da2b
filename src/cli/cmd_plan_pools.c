/*
 * cmd_plan_pools.c - `parplan plan` on a mixed cluster (a topology with pools):
 * the best plans of the whole job on each pool, by the full search, and the best
 * pipelines across the pools (pools.h), with their stage assignment.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define POOL_TOP 3 /* plans shown per pool */

/* "12 x3, 11": a stage range's layers, runs of equal counts folded. */
static void layers_text(const int64_t *layers, int64_t n, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int64_t k = 0; k < n && at < size;) {
        int64_t run = 1;
        while (k + run < n && layers[k + run] == layers[k])
            run++;
        int w = run > 1
                    ? snprintf(buf + at, size - at, "%s%lld x%lld", at ? ", " : "",
                               (long long)layers[k], (long long)run)
                    : snprintf(buf + at, size - at, "%s%lld", at ? ", " : "", (long long)layers[k]);
        if (w < 0)
            break;
        at += (size_t)w;
        k += run;
    }
}

void cli_mixed_assignment(const ppl_pools *pools, const ppl_mixed_plan *p, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < p->npools && at < size; i++) {
        int w = snprintf(buf + at, size - at, "%s%s x%lld", i ? " > " : "",
                         pools->pool[p->order[i]].name, (long long)p->stages[i]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
}

static void mixed_row(ppl_table *t, size_t rank, const ppl_pools *pools, const ppl_mixed_plan *p)
{
    char cells[10][160];
    const ppl_config *c = &p->config;
    snprintf(cells[0], 160, "%zu", rank);
    cli_mixed_assignment(pools, p, cells[1], 160);
    snprintf(cells[2], 160, "%lld/%lld/%lld", (long long)c->tp, (long long)c->pp, (long long)c->dp);
    snprintf(cells[3], 160, "%lld", (long long)c->mbs);
    snprintf(cells[4], 160, "%d", c->zero);
    ppl_recompute_label(c, cells[5], 160);
    snprintf(cells[6], 160, "%lld", (long long)c->gpus);
    ppl_format_time(p->step_time_s, cells[7], 160);
    ppl_format_count(p->tokens_per_s, cells[8], 160);
    snprintf(cells[9], 160, "%.1f%%", 100.0 * p->mfu);
    const char *row[10];
    for (int i = 0; i < 10; i++)
        row[i] = cells[i];
    ppl_table_row(t, row);
}

static void mixed_table(ppl_buf *out, const ppl_pools *pools, const ppl_mixed_plan *plans, size_t n)
{
    static const char *const header[] = {
        "#",         "pools x stages", "tp/pp/dp", "mbs",      "zero",
        "recompute", "GPUs",           "step",     "tokens/s", "MFU"};
    ppl_table t;
    ppl_table_init(&t, 10, "rlrrrlrrrr");
    ppl_table_row(&t, header);
    for (size_t i = 0; i < n; i++)
        mixed_row(&t, i + 1, pools, &plans[i]);
    ppl_table_render(&t, out, "  ");
    ppl_table_free(&t);
}

/* Where each stage runs: pool, stages, layers per stage, GPUs, stage time, memory. */
static void assignment_table(ppl_buf *out, const ppl_pools *pools, const ppl_mixed_plan *p)
{
    static const char *const header[] = {"pool", "GPU",           "stages",    "layers per stage",
                                         "GPUs", "slowest stage", "memory GiB"};
    ppl_table t;
    ppl_table_init(&t, 7, "lllrrrr");
    ppl_table_row(&t, header);
    int64_t first = 0;
    for (int i = 0; i < p->npools; i++) {
        const ppl_topology *pool = &pools->pool[p->order[i]];
        char cells[7][160];
        double worst = 0.0;
        for (int64_t k = first; k < first + p->stages[i]; k++)
            if (p->stage_s[k] > worst)
                worst = p->stage_s[k];
        snprintf(cells[0], 160, "%s", pool->name);
        snprintf(cells[1], 160, "%s", pool->gpu.name);
        snprintf(cells[2], 160, "%lld-%lld", (long long)first,
                 (long long)(first + p->stages[i] - 1));
        layers_text(p->layers + first, p->stages[i], cells[3], 160);
        snprintf(cells[4], 160, "%lld", (long long)p->gpus[i]);
        ppl_format_time(worst, cells[5], 160);
        snprintf(cells[6], 160, "%.1f/%.0f", p->memory[i] / 1073741824.0,
                 p->capacity[i] / 1073741824.0);
        const char *row[7];
        for (int j = 0; j < 7; j++)
            row[j] = cells[j];
        ppl_table_row(&t, row);
        first += p->stages[i];
    }
    ppl_table_render(&t, out, "  ");
    ppl_table_free(&t);
}

json_t *cli_mixed_json(const ppl_pools *pools, const ppl_mixed_plan *p)
{
    json_t *o = json_object(), *stages = json_array();
    const ppl_config *c = &p->config;
    json_object_set_new(o, "tp", json_integer(c->tp));
    json_object_set_new(o, "pp", json_integer(c->pp));
    json_object_set_new(o, "dp", json_integer(c->dp));
    json_object_set_new(o, "mbs", json_integer(c->mbs));
    json_object_set_new(o, "microbatches", json_integer(c->microbatches));
    json_object_set_new(o, "zero", json_integer(c->zero));
    json_object_set_new(o, "recompute", json_string(ppl_recompute_name(c->recompute)));
    json_object_set_new(o, "gpus", json_integer(c->gpus));
    json_object_set_new(o, "step_time_s", ppl_json_real(p->step_time_s));
    json_object_set_new(o, "pipeline_s", ppl_json_real(p->pipeline_s));
    json_object_set_new(o, "dp_exposed_s", ppl_json_real(p->dp_exposed_s));
    json_object_set_new(o, "overhead_s", ppl_json_real(p->overhead_s));
    json_object_set_new(o, "cross_send_s", ppl_json_real(p->npools > 1 ? p->cross_send_s : 0.0));
    json_object_set_new(o, "tokens_per_s", ppl_json_real(p->tokens_per_s));
    json_object_set_new(o, "mfu", ppl_json_real(p->mfu));
    json_object_set_new(o, "slowest_stage", json_integer(p->slowest_stage));
    int64_t first = 0;
    for (int i = 0; i < p->npools; i++) {
        json_t *s = json_object(), *layers = json_array(), *times = json_array();
        json_object_set_new(s, "pool", json_string(pools->pool[p->order[i]].name));
        json_object_set_new(s, "first_stage", json_integer(first));
        json_object_set_new(s, "stages", json_integer(p->stages[i]));
        json_object_set_new(s, "gpus", json_integer(p->gpus[i]));
        for (int64_t k = first; k < first + p->stages[i]; k++) {
            json_array_append_new(layers, json_integer(p->layers[k]));
            json_array_append_new(times, ppl_json_real(p->stage_s[k]));
        }
        json_object_set_new(s, "layers", layers);
        json_object_set_new(s, "stage_time_s", times);
        json_object_set_new(s, "memory_bytes", ppl_json_real(p->memory[i]));
        json_object_set_new(s, "capacity_bytes", ppl_json_real(p->capacity[i]));
        json_array_append_new(stages, s);
        first += p->stages[i];
    }
    json_object_set_new(o, "assignment", stages);
    return o;
}

static ppl_status plan_pools(cli *c, const ppl_model *model, const ppl_pools *pools,
                             ppl_eval_ctx *ctx)
{
    const ppl_args *a = c->args;
    ppl_status st = PPL_OK;
    ppl_pins pins = a->pins;
    if (pins.global_batch == PPL_UNSET)
        pins.global_batch = ppl_default_global_batch(model);
    const size_t top = a->top > 0 ? (size_t)a->top : 1;
    ppl_mixed_plan *mixed = calloc(top + PPL_MAX_POOLS, sizeof *mixed), *alone = mixed + top;
    ppl_search_result r[PPL_MAX_POOLS];
    memset(r, 0, sizeof r);
    if (!mixed)
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    /* the whole job on each pool: the full search, as on any topology */
    for (int i = 0; i < pools->n && st == PPL_OK; i++) {
        if (ppl_precision_check(pins.precision, &pools->pool[i], &c->err) != PPL_OK) {
            r[i].count = 0; /* this pool cannot run the precision: no plan on it */
            continue;
        }
        ppl_search_opts o = {.pins = &pins,
                             .top = POOL_TOP,
                             .objective = a->objective,
                             .allow_tp_across_servers = a->allow_tp_across_servers};
        st = ppl_search(&ctx[i], &o, &r[i], &c->err);
        if (st == PPL_INFEASIBLE)
            st = PPL_OK; /* reported as no plan on that pool */
    }
    ppl_mixed_search_stats sx = {0, 0}, sa = {0, 0};
    size_t nmixed = 0, nalone = 0;
    if (st == PPL_OK) {
        nmixed = ppl_mixed_search(ctx, pools, &pins, true, mixed, top, &sx);
        nalone = ppl_mixed_search(ctx, pools, &pins, false, alone, 1, &sa);
    }
    if (st == PPL_OK && a->json) {
        json_t *doc = ppl_json_document(), *plist = json_array(), *ml = json_array(),
               *al = json_array();
        json_object_set_new(doc, "model", json_string(model->name));
        json_object_set_new(doc, "topology", json_string(pools->name));
        json_object_set_new(doc, "stack", json_string(ppl_stack_name(ctx[0].stack.stack)));
        json_object_set_new(doc, "global_batch", json_integer(pins.global_batch));
        json_object_set_new(doc, "cross_pool_bandwidth_bps", ppl_json_real(pools->cross_bps));
        json_object_set_new(doc, "cross_pool_latency_s", ppl_json_real(pools->cross_latency_s));
        for (int i = 0; i < pools->n; i++) {
            json_t *p = json_object(), *res = json_array();
            const ppl_topology *t = &pools->pool[i];
            json_object_set_new(p, "name", json_string(t->name));
            json_object_set_new(p, "gpu", json_string(t->gpu.name));
            json_object_set_new(p, "gpus", json_integer(t->servers * t->gpus_per_server));
            for (size_t k = 0; k < r[i].count; k++)
                json_array_append_new(res, ppl_estimate_json(&r[i].results[k], model));
            json_object_set_new(p, "results", res);
            json_array_append_new(plist, p);
        }
        json_object_set_new(doc, "pools", plist);
        for (size_t k = 0; k < nmixed; k++)
            json_array_append_new(ml, cli_mixed_json(pools, &mixed[k]));
        for (size_t k = 0; k < nalone; k++)
            json_array_append_new(al, cli_mixed_json(pools, &alone[k]));
        json_object_set_new(doc, "mixed", ml);
        json_object_set_new(doc, "mixed_model_one_pool", al);
        json_object_set_new(doc, "mixed_not_costed",
                            model->has_moe ? json_string("the pipeline model covers dense "
                                                         "models only")
                                           : json_null());
        st = cli_emit_json(c, doc);
    } else if (st == PPL_OK) {
        ppl_buf *out = &c->out;
        char bw[32], lat[32];
        ppl_format_bandwidth(pools->cross_bps, bw, sizeof bw);
        ppl_format_time(pools->cross_latency_s, lat, sizeof lat);
        ppl_buf_printf(out, "plan      %s on %s: %d pools, global batch %lld, %s stack\n",
                       model->name, pools->name, pools->n, (long long)pins.global_batch,
                       ppl_stack_name(ctx[0].stack.stack));
        for (int i = 0; i < pools->n; i++) {
            const ppl_topology *t = &pools->pool[i];
            ppl_buf_printf(out, "pool      %s: %lld servers x %lld %s\n", t->name,
                           (long long)t->servers, (long long)t->gpus_per_server, t->gpu.name);
        }
        ppl_buf_printf(out, "between   %s per GPU, %s, each way\n", bw, lat);
        for (int i = 0; i < pools->n; i++) {
            const ppl_topology *t = &pools->pool[i];
            ppl_buf_printf(out, "\nthe whole job on %s (%lld GPUs), full model:\n", t->name,
                           (long long)(t->servers * t->gpus_per_server));
            if (r[i].count == 0)
                ppl_buf_printf(out, "  no plan fits\n");
            for (size_t k = 0; k < r[i].count; k++) {
                const ppl_estimate *e = &r[i].results[k];
                char step[32], tok[32], layers[128];
                ppl_format_time(e->step_time_s, step, sizeof step);
                ppl_format_count(e->tokens_per_s, tok, sizeof tok);
                ppl_stage_layers_text(&e->config, layers, sizeof layers);
                ppl_buf_printf(out,
                               "  #%zu  tp/pp/dp/cp/ep %lld/%lld/%lld/%lld/%lld vp %lld mbs %lld "
                               "zero %d: step %s, %s tokens/s, MFU %.1f%%, stage layers %s\n",
                               k + 1, (long long)e->config.tp, (long long)e->config.pp,
                               (long long)e->config.dp, (long long)e->config.cp,
                               (long long)e->config.ep, (long long)e->config.vp,
                               (long long)e->config.mbs, e->config.zero, step, tok, 100.0 * e->mfu,
                               layers);
            }
        }
        ppl_buf_printf(out,
                       "\nacross the pools (pipeline model of pools.h: %zu assignments "
                       "costed, %zu fit):\n",
                       sx.evaluated, sx.feasible);
        if (model->has_moe)
            ppl_buf_printf(out,
                           "  not costed: the pipeline model covers dense models only, and "
                           "%s is a mixture of experts\n",
                           model->name);
        else if (nmixed == 0)
            ppl_buf_printf(out, "  no pipeline across the pools fits\n");
        else
            mixed_table(out, pools, mixed, nmixed);
        ppl_buf_printf(
            out, "\nthe best of each pool alone under the same model (%zu costed, %zu fit):\n",
            sa.evaluated, sa.feasible);
        if (nalone == 0 && !model->has_moe)
            ppl_buf_printf(out, "  no plan fits\n");
        else
            mixed_table(out, pools, alone, nalone);
        if (nmixed > 0) {
            const ppl_mixed_plan *b = &mixed[0];
            char send[32], pipe[32], dp[32];
            ppl_format_time(b->cross_send_s, send, sizeof send);
            ppl_format_time(b->pipeline_s, pipe, sizeof pipe);
            ppl_format_time(b->dp_exposed_s, dp, sizeof dp);
            ppl_buf_printf(out, "\nstage assignment of #1 (each stage on tp x dp GPUs of its "
                                "pool; layers balanced to each pool's speed and memory):\n");
            assignment_table(out, pools, b);
            ppl_buf_printf(out,
                           "  slowest stage %lld; pipeline %s over %lld microbatches; a send "
                           "across pools %s per microbatch; gradient reduction exposed %s\n",
                           (long long)b->slowest_stage, pipe, (long long)b->config.microbatches,
                           send, dp);
        }
        ppl_buf_printf(out, "\nthe mixed model: 1F1B, vp 1, cp 1, ep 1, ZeRO 1, flash attention; "
                            "no optimizer-step time (an omission); compare pipelines across "
                            "pools with each pool alone under the same model\n");
    }
    for (int i = 0; i < pools->n; i++)
        ppl_search_free(&r[i]);
    free(mixed);
    return st;
}

ppl_status cli_pins_check_mixed(cli *c)
{
    const ppl_pins *p = &c->args->pins;
    ppl_status st = ppl_pins_check_fp8(p, &c->err);
    if (st == PPL_OK && p->bf16_layers > 0)
        st = ppl_error_set(&c->err, PPL_EUSAGE, "", "bf16_layers",
                           "a pipeline across pools keeps no layers in bf16 yet");
    return st;
}

ppl_status cmd_plan_pools(cli *c, const ppl_pools *pools)
{
    /* the page draws one pool's stages, memory and traffic: not a pipeline across pools */
    if (c->args->report_path)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--report",
                             "on a mixed cluster plan writes no HTML page yet; use --json");
    ppl_status st = cli_pins_check_mixed(c);
    if (st != PPL_OK)
        return st;
    ppl_model model;
    st = cli_load_model(c, c->args->model, &model);
    if (st != PPL_OK)
        return st;
    ppl_eval_ctx ctx[PPL_MAX_POOLS];
    for (int i = 0; i < pools->n; i++)
        cli_eval_ctx(c, &ctx[i], &model, &pools->pool[i]);
    return plan_pools(c, &model, pools, ctx);
}
