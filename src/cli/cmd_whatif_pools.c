/*
 * cmd_whatif_pools.c - `parplan whatif` on a mixed cluster: at every point of a
 * sweep of topology paths ("pools[1].servers=8,16,32", "cross_pool.bandwidth=..."),
 * the best pipeline across the pools and the best of each pool alone, under the
 * pipeline model of pools.h.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_POINTS 64 /* each point searches every pool and every order */

/* One point: the pools as patched, the best across them and of each alone. */
typedef struct pool_point {
    ppl_pools pools;
    size_t nmixed, nalone;
    ppl_mixed_plan mixed, alone[PPL_MAX_POOLS];
} pool_point;

static ppl_status cost_point(cli *c, const ppl_model *model, const json_t *doc, const char *path,
                             const ppl_sweep *sw, int nsw, size_t p, const ppl_pins *pins,
                             pool_point *out)
{
    int idx[PPL_WHATIF_MAX_SWEEPS];
    ppl_sweep_point(sw, nsw, p, idx);
    json_t *copy = json_deep_copy(doc);
    if (!copy)
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    ppl_status st = PPL_OK;
    for (int k = 0; k < nsw && st == PPL_OK; k++)
        st = ppl_topology_patch(copy, sw[k].key, ppl_sweep_value(&sw[k], idx[k]), &c->err);
    if (st == PPL_OK)
        st = ppl_pools_from_json(copy, path, &c->diag, &out->pools, &c->err);
    json_decref(copy);
    if (st == PPL_EINPUT) /* a swept value the loader refuses: the sweep's fault */
        st = PPL_EUSAGE;
    if (st != PPL_OK)
        return st;
    ppl_eval_ctx ctx[PPL_MAX_POOLS];
    for (int i = 0; i < out->pools.n; i++)
        cli_eval_ctx(c, &ctx[i], model, &out->pools.pool[i]);
    out->nmixed = ppl_mixed_search(ctx, &out->pools, pins, true, &out->mixed, 1, NULL);
    out->nalone = ppl_mixed_search(ctx, &out->pools, pins, false, out->alone, 1, NULL);
    return PPL_OK;
}

static int64_t pool_gpus(const ppl_pools *pools)
{
    int64_t n = 0;
    for (int i = 0; i < pools->n; i++)
        n += pools->pool[i].servers * pools->pool[i].gpus_per_server;
    return n;
}

ppl_status cmd_whatif_pools(cli *c, const ppl_model *model, const json_t *doc, const char *path,
                            const ppl_sweep *sw, int nsw, size_t npts)
{
    const ppl_args *a = c->args;
    for (int k = 0; k < nsw; k++)
        if (sw[k].kind != PPL_SWEEP_TOPOLOGY)
            return ppl_error_set(&c->err, PPL_EUSAGE, "", "sweep",
                                 "%s: on a mixed cluster whatif sweeps topology paths only "
                                 "(pools[1].servers, cross_pool.bandwidth, ...)",
                                 sw[k].key);
    if (model->has_moe)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "model",
                             "%s is a mixture of experts: on a mixed cluster whatif costs dense "
                             "models only",
                             model->name);
    if (a->tokens > 0 || a->plot_path || a->csv)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "sweep",
                             "on a mixed cluster whatif has no --tokens, --plot or --csv yet");
    ppl_status pins_ok = cli_pins_check_mixed(c);
    if (pins_ok != PPL_OK)
        return pins_ok;
    if (npts > MAX_POINTS)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "sweep",
                             "%zu points: on a mixed cluster whatif costs at most %d", npts,
                             MAX_POINTS);
    ppl_pins pins = a->pins;
    if (pins.global_batch == PPL_UNSET) {
        pins.global_batch = ppl_default_global_batch(model);
        cli_note_batch(pins.global_batch, model);
    }
    pool_point *pts = calloc(npts, sizeof *pts);
    if (!pts)
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    ppl_status st = PPL_OK;
    for (size_t p = 0; p < npts && st == PPL_OK; p++)
        st = cost_point(c, model, doc, path, sw, nsw, p, &pins, &pts[p]);
    if (st == PPL_OK && a->json) {
        json_t *out = ppl_json_document(), *list = json_array();
        json_object_set_new(out, "model", json_string(model->name));
        json_object_set_new(out, "topology", json_string(pts[0].pools.name));
        json_object_set_new(out, "global_batch", json_integer(pins.global_batch));
        for (size_t p = 0; p < npts; p++) {
            int idx[PPL_WHATIF_MAX_SWEEPS];
            ppl_sweep_point(sw, nsw, p, idx);
            json_t *e = json_object(), *alone = json_array();
            for (int k = 0; k < nsw; k++)
                json_object_set_new(e, sw[k].key,
                                    ppl_sweep_value_json(ppl_sweep_value(&sw[k], idx[k])));
            json_object_set_new(e, "gpus", json_integer(pool_gpus(&pts[p].pools)));
            json_object_set_new(e, "mixed",
                                pts[p].nmixed ? cli_mixed_json(&pts[p].pools, &pts[p].mixed)
                                              : json_null());
            for (size_t i = 0; i < pts[p].nalone; i++)
                json_array_append_new(alone, cli_mixed_json(&pts[p].pools, &pts[p].alone[i]));
            json_object_set_new(e, "alone", alone);
            json_array_append_new(list, e);
        }
        json_object_set_new(out, "points", list);
        st = cli_emit_json(c, out);
    } else if (st == PPL_OK) {
        ppl_buf_printf(&c->out,
                       "%s on %s, global batch %lld: the best pipeline across the pools and the "
                       "best of each pool alone (pipeline model of pools.h)\n",
                       model->name, pts[0].pools.name, (long long)pins.global_batch);
        ppl_table t;
        const int ncols = nsw + 6;
        char align[PPL_WHATIF_MAX_SWEEPS + 8];
        memset(align, 'r', (size_t)ncols);
        align[nsw + 2] = 'l';
        align[nsw + 5] = 'l';
        align[ncols] = '\0';
        ppl_table_init(&t, (size_t)ncols, align);
        const char *header[PPL_WHATIF_MAX_SWEEPS + 6];
        for (int k = 0; k < nsw; k++)
            header[k] = sw[k].key;
        header[nsw] = "GPUs";
        header[nsw + 1] = "used";
        header[nsw + 2] = "across: pools x stages, tp/dp";
        header[nsw + 3] = "step";
        header[nsw + 4] = "tokens/s";
        header[nsw + 5] = "each pool alone: tokens/s";
        ppl_table_row(&t, header);
        for (size_t p = 0; p < npts; p++) {
            const pool_point *q = &pts[p];
            int idx[PPL_WHATIF_MAX_SWEEPS];
            ppl_sweep_point(sw, nsw, p, idx);
            char gpus[24], used[24] = "-", across[160] = "no plan fits", step[32] = "-",
                           tok[32] = "-", alone[200] = "";
            snprintf(gpus, sizeof gpus, "%lld", (long long)pool_gpus(&q->pools));
            if (q->nmixed) {
                char assign[128];
                cli_mixed_assignment(&q->pools, &q->mixed, assign, sizeof assign);
                snprintf(used, sizeof used, "%lld", (long long)q->mixed.config.gpus);
                snprintf(across, sizeof across, "%s, %lld/%lld", assign,
                         (long long)q->mixed.config.tp, (long long)q->mixed.config.dp);
                ppl_format_time(q->mixed.step_time_s, step, sizeof step);
                ppl_format_count(q->mixed.tokens_per_s, tok, sizeof tok);
            }
            size_t at = 0;
            for (size_t i = 0; i < q->nalone && at < sizeof alone; i++) {
                char r[32];
                ppl_format_count(q->alone[i].tokens_per_s, r, sizeof r);
                int w = snprintf(alone + at, sizeof alone - at, "%s%s %s", i ? ", " : "",
                                 q->pools.pool[q->alone[i].order[0]].name, r);
                if (w < 0)
                    break;
                at += (size_t)w;
            }
            const char *row[PPL_WHATIF_MAX_SWEEPS + 6];
            for (int k = 0; k < nsw; k++)
                row[k] = ppl_sweep_value(&sw[k], idx[k]);
            row[nsw] = gpus;
            row[nsw + 1] = used;
            row[nsw + 2] = across;
            row[nsw + 3] = step;
            row[nsw + 4] = tok;
            row[nsw + 5] = alone;
            ppl_table_row(&t, row);
        }
        ppl_table_render(&t, &c->out, "");
        ppl_table_free(&t);
    }
    free(pts);
    return st;
}
