/*
 * cmd_whatif.c - `parplan whatif`: the best plan at every point of a sweep, as a
 * table, CSV, JSON and an SVG chart.
 *
 * The sweeps, the patched topology of each point, the plan there, the time to
 * train and the GPU-hours are the library's (studies/whatif.h); this file
 * parses, calls and renders.
 */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void short_config(const ppl_config *c, char *buf, size_t size)
{
    char rc[32], etp[24] = "", zero[40];
    if (ppl_config_etp(c) != c->tp)
        snprintf(etp, sizeof etp, " etp%lld", (long long)ppl_config_etp(c));
    snprintf(buf, size, "%lld/%lld/%lld/%lld/%lld%s vp%lld mbs%lld z%s %s%s%s%s%s",
             (long long)c->tp, (long long)c->pp, (long long)c->dp, (long long)c->cp,
             (long long)c->ep, etp, (long long)c->vp, (long long)c->mbs,
             ppl_zero_label(c, zero, sizeof zero), ppl_recompute_label(c, rc, sizeof rc),
             c->sequence_parallel ? " sp" : "", c->flash_attention ? " fa" : "",
             c->cp > 1 ? " " : "", c->cp > 1 ? ppl_cp_comm_name(c->cp_comm) : "");
}

/* One point of the grid: its value indices and the best plan there. */
typedef ppl_whatif_result point;

/* A sweep value as a number, the leading figure of its text ("400Gb/s" -> 400);
 * false when it has none. */
static bool sweep_number(const ppl_sweep *sw, int i, double *x, const char **unit)
{
    const char *v = ppl_sweep_value(sw, i);
    const char *end;
    *x = ppl_decimal(v, &end);
    *unit = end;
    return end != v && isfinite(*x);
}

typedef enum plot_kind { PLOT_TOKENS, PLOT_DAYS, PLOT_MFU, PLOT_STEP, PLOT_MEMORY } plot_kind;

static double plot_y(const point *p, plot_kind k, bool failure_free)
{
    if (!p->ok)
        return NAN;
    switch (k) {
    case PLOT_TOKENS: return p->best.tokens_per_s;
    case PLOT_DAYS: return failure_free ? p->failure_free_s / 86400.0 : p->time_to_train_days;
    case PLOT_MFU: return 100.0 * p->best.mfu;
    case PLOT_STEP: return p->best.step_time_s;
    case PLOT_MEMORY: return p->best.memory.total / (1024.0 * 1024.0 * 1024.0);
    }
    return NAN;
}

/*
 * The first sweep along x, one chart per figure (time to train with --tokens,
 * tokens/s, MFU, step time, memory per GPU of each point's best plan), a line per
 * combination of the other sweeps' values (the first 8).  x is numeric where the
 * values are: log2 for GPUs, global batch and sequence length (so 992 and 1000
 * sit together, 1024 and 2048 one step apart), linear for other figures; a sweep
 * of names is drawn in its order.  A GPU sweep's point sits at the GPUs its plan
 * uses (1,000 asked may plan 896), as the table's GPUs column says.
 */
static ppl_status svg_plot(cli *c, const ppl_sweep *sw, int nsw, const point *pts, size_t npts,
                           bool ttt)
{
    const int nx = sw[0].nvalues;
    const size_t series = npts / (size_t)nx;
    const size_t ns = series < PPL_SVG_COLOURS ? series : PPL_SVG_COLOURS;
    double xs[PPL_SWEEP_MAX_VALUES];
    const char *unit = "", *labels[PPL_SWEEP_MAX_VALUES];
    bool numeric = true, positive = true;
    for (int i = 0; i < nx; i++) {
        const char *u;
        numeric = numeric && sweep_number(&sw[0], i, &xs[i], &u);
        positive = positive && numeric && xs[i] > 0;
        if (i == 0 && numeric)
            unit = u;
        labels[i] = ppl_sweep_value(&sw[0], i);
    }
    const bool log2_axis = numeric && positive &&
                           (sw[0].kind == PPL_SWEEP_GPUS || sw[0].kind == PPL_SWEEP_GLOBAL_BATCH ||
                            sw[0].kind == PPL_SWEEP_SEQ_LEN);
    if (!numeric)
        for (int i = 0; i < nx; i++)
            xs[i] = i;
    char xlabel[PPL_SWEEP_KEY_MAX + 40];
    snprintf(xlabel, sizeof xlabel, "%s%s%s%s", sw[0].key, unit[0] ? " (" : "", unit,
             unit[0] ? ")" : "");
    /* each line's name: the other sweeps' values */
    char names[PPL_SVG_COLOURS * 2][128];
    for (size_t s = 0; s < ns; s++) {
        size_t used = 0;
        names[s][0] = '\0';
        for (int k = 1; k < nsw && used < sizeof names[s]; k++)
            used += (size_t)snprintf(names[s] + used, sizeof names[s] - used, "%s%s=%s",
                                     k > 1 ? " " : "", sw[k].key,
                                     ppl_sweep_value(&sw[k], pts[s].idx[k]));
        if (!names[s][0])
            snprintf(names[s], sizeof names[s], "best plan");
        /* through a copy: the compiler cannot tell that the two rows never overlap */
        char base[101];
        size_t len = strnlen(names[s], sizeof base - 1);
        memcpy(base, names[s], len);
        base[len] = '\0';
        snprintf(names[PPL_SVG_COLOURS + s], sizeof names[0], "%s, no failures", base);
    }
    static const struct {
        plot_kind kind;
        const char *title, *y;
    } charts[] = {
        {PLOT_DAYS, "Time to train (with failures, checkpoints and restarts; and without)", "days"},
        {PLOT_TOKENS, "Throughput of the best plan", "tokens/s"},
        {PLOT_MFU, "Model FLOPs utilisation of the best plan", "MFU (%)"},
        {PLOT_STEP, "Step time of the best plan", "s"},
        {PLOT_MEMORY, "Memory per GPU of the best plan (worst stage)", "GiB"},
    };
    const double W = 900, H = 330;
    const int ncharts = (int)(sizeof charts / sizeof charts[0]) - (ttt ? 0 : 1);
    double *ys = malloc(2 * ns * (size_t)nx * sizeof *ys);
    double *used_x = malloc(ns * (size_t)nx * sizeof *used_x);
    for (size_t s = 0; used_x && s < ns; s++)
        for (int i = 0; i < nx; i++) {
            const point *p = &pts[(size_t)i * series + s];
            used_x[s * (size_t)nx + (size_t)i] =
                sw[0].kind == PPL_SWEEP_GPUS && p->ok ? (double)p->best.config.gpus : xs[i];
        }
    if (!ys || !used_x) {
        free(ys);
        free(used_x);
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    }
    ppl_buf svg;
    ppl_buf_init(&svg);
    ppl_buf_printf(&svg,
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n"
                   "<style>\n%s</style>\n",
                   W, H * ncharts, ppl_svg_css);
    for (int k = ttt ? 0 : 1, row = 0; k < (int)(sizeof charts / sizeof charts[0]); k++, row++) {
        ppl_svg_series se[2 * PPL_SVG_COLOURS];
        int nse = 0;
        for (int pass = 0; pass < (charts[k].kind == PLOT_DAYS ? 2 : 1); pass++)
            for (size_t s = 0; s < ns; s++) {
                double *y = ys + ((size_t)pass * ns + s) * (size_t)nx;
                for (int i = 0; i < nx; i++)
                    y[i] = plot_y(&pts[(size_t)i * series + s], charts[k].kind, pass == 1);
                se[nse++] = (ppl_svg_series){.name = names[pass * PPL_SVG_COLOURS + (int)s],
                                             .x = used_x + s * (size_t)nx,
                                             .y = y,
                                             .n = (size_t)nx,
                                             .dashed = pass == 1,
                                             .colour = (int)s};
            }
        ppl_buf_printf(&svg, "<g transform=\"translate(0 %.0f)\" data-figure=\"%s\">\n", H * row,
                       charts[k].y);
        ppl_svg_line(&svg, &(ppl_svg_line_chart){.title = charts[k].title,
                                                 .x_label = xlabel,
                                                 .y_label = charts[k].y,
                                                 .x_log2 = log2_axis,
                                                 .x_labels = numeric ? NULL : labels,
                                                 .nx_labels = numeric ? 0 : nx,
                                                 .series = se,
                                                 .nseries = nse,
                                                 .width = W,
                                                 .height = H});
        ppl_buf_printf(&svg, "</g>\n");
    }
    ppl_buf_printf(&svg, "</svg>\n");
    free(ys);
    free(used_x);
    ppl_status st = ppl_output_write(c->args->plot_path, &svg, &c->err);
    ppl_buf_free(&svg);
    return st == PPL_OK ? PPL_OK : PPL_EINTERNAL;
}

/* The JSON document: the grid's points, each with its values, plan, search
 * figures and (with --tokens) time to train and GPU-hours. */
static json_t *whatif_json(cli *c, const ppl_model *model, const ppl_topology *base,
                           const ppl_sweep *sw, const point *pts, size_t npts, int64_t batch,
                           bool batch_swept, bool batch_assumed)
{
    const ppl_args *a = c->args;
    bool ttt = a->tokens > 0;
    json_t *doc = ppl_json_document(), *list = json_array();
    json_object_set_new(doc, "model", json_string(model->name));
    json_object_set_new(doc, "topology", json_string(base->name));
    if (!batch_swept)
        json_object_set_new(doc, "global_batch", json_integer(batch));
    json_object_set_new(doc, "global_batch_assumed", json_boolean(batch_assumed));
    if (ttt)
        json_object_set_new(doc, "tokens", ppl_json_real(a->tokens));
    for (size_t p = 0; p < npts; p++) {
        json_t *e = json_object(), *values = json_object();
        for (int i = 0; i < a->nsweeps; i++)
            json_object_set_new(values, sw[i].key,
                                ppl_sweep_value_json(ppl_sweep_value(&sw[i], pts[p].idx[i])));
        json_object_set_new(e, "values", values);
        json_object_set_new(e, "result",
                            pts[p].ok ? ppl_estimate_json(&pts[p].best, model) : json_null());
        json_object_set_new(e, "search", ppl_search_totals_json(&pts[p].search, a->timing));
        if (ttt && pts[p].ok) {
            json_object_set_new(e, "time_to_train_s", ppl_json_real(pts[p].time_to_train_s));
            json_object_set_new(e, "days", ppl_json_real(pts[p].time_to_train_days));
            json_object_set_new(e, "days_failure_free",
                                ppl_json_real(pts[p].failure_free_s / 86400.0));
            json_object_set_new(e, "goodput", ppl_json_real(pts[p].goodput.goodput));
            json_object_set_new(e, "checkpoint_interval_s",
                                ppl_json_real(pts[p].goodput.interval_s));
            json_object_set_new(e, "spares", json_integer(pts[p].goodput.spare_gpus));
            if (pts[p].goodput.spare_gpus > 0)
                json_object_set_new(e, "spare_free", ppl_json_real(pts[p].goodput.spare_free));
            json_object_set_new(e, "gpu_hours", ppl_json_real(pts[p].gpu_hours));
            if (a->gpu_hour_price > 0 && pts[p].goodput.goodput > 0)
                json_object_set_new(e, "cost", ppl_json_real(pts[p].gpu_hours * a->gpu_hour_price));
        }
        if (a->gpu_hour_price > 0 && pts[p].ok)
            json_object_set_new(
                e, "cost_per_million_tokens",
                ppl_json_real(ppl_cost_per_million_tokens(
                    a->gpu_hour_price, pts[p].best.config.gpus, pts[p].best.tokens_per_s)));
        json_array_append_new(list, e);
    }
    json_object_set_new(doc, "points", list);
    return doc;
}

/* The table (or CSV with --csv): one row per point, "nothing fits" where so. */
static ppl_status whatif_table(cli *c, const ppl_sweep *sw, const point *pts, size_t npts,
                               int64_t batch, bool batch_swept, bool batch_assumed)
{
    const ppl_args *a = c->args;
    bool ttt = a->tokens > 0;
    const bool priced = a->gpu_hour_price > 0;
    size_t ncols = (size_t)a->nsweeps + 5 + (batch_swept ? 0 : 1) + (ttt ? 4 : 0) +
                   (priced ? (ttt ? 2 : 1) : 0);
    ppl_table tab;
    char align[PPL_TABLE_MAX_COLS + 1];
    memset(align, 'r', sizeof align);
    align[ncols] = '\0';
    align[(size_t)a->nsweeps + (batch_swept ? 4 : 5)] = 'l';
    ppl_table_init(&tab, ncols, align);
    const char *head[PPL_TABLE_MAX_COLS];
    size_t h = 0;
    for (int i = 0; i < a->nsweeps; i++)
        head[h++] = sw[i].key;
    head[h++] = "GPUs";
    if (!batch_swept)
        head[h++] = batch_assumed ? "batch (assumed)" : "batch";
    head[h++] = "step";
    head[h++] = "tokens/s";
    head[h++] = "MFU";
    head[h++] = "best tp/pp/dp/cp/ep";
    if (ttt) {
        head[h++] = "time to train";
        head[h++] = "failure-free";
        head[h++] = "goodput";
        head[h++] = "GPU-hours";
    }
    if (priced) /* --gpu-hour-price: per million tokens, and to train */
        head[h++] = "cost/Mtok";
    if (priced && ttt)
        head[h++] = "cost";
    if (!a->csv)
        ppl_table_row(&tab, head);
    else {
        for (size_t k = 0; k < ncols; k++)
            ppl_buf_printf(&c->out, "%s%s", k ? "," : "", head[k]);
        ppl_buf_printf(&c->out, "\n");
    }
    for (size_t p = 0; p < npts; p++) {
        char cells[PPL_TABLE_MAX_COLS][96];
        const char *row[PPL_TABLE_MAX_COLS];
        size_t k = 0;
        for (int i = 0; i < a->nsweeps; i++)
            snprintf(cells[k++], 96, "%s", ppl_sweep_value(&sw[i], pts[p].idx[i]));
        const ppl_estimate *e = &pts[p].best;
        if (pts[p].ok) {
            snprintf(cells[k++], 96, "%lld", (long long)e->config.gpus);
            if (!batch_swept)
                snprintf(cells[k++], 96, "%lld", (long long)e->config.global_batch);
            if (a->csv) {
                snprintf(cells[k++], 96, "%.6g", e->step_time_s);
                snprintf(cells[k++], 96, "%.6g", e->tokens_per_s);
                snprintf(cells[k++], 96, "%.4f", e->mfu);
            } else {
                ppl_format_time(e->step_time_s, cells[k++], 96);
                ppl_format_count(e->tokens_per_s, cells[k++], 96);
                snprintf(cells[k++], 96, "%.1f%%", 100.0 * e->mfu);
            }
            short_config(&e->config, cells[k++], 96);
            if (ttt) {
                const ppl_whatif_result *q = &pts[p];
                bool never = !(q->goodput.goodput > 0);
                if (never) {
                    snprintf(cells[k++], 96, "never");
                } else if (a->csv) {
                    snprintf(cells[k++], 96, "%.6g", q->time_to_train_s);
                } else {
                    ppl_format_time(q->time_to_train_s, cells[k++], 96);
                }
                if (a->csv) {
                    snprintf(cells[k++], 96, "%.6g", q->failure_free_s);
                    snprintf(cells[k++], 96, "%.4f", q->goodput.goodput);
                } else {
                    ppl_format_time(q->failure_free_s, cells[k++], 96);
                    snprintf(cells[k++], 96, "%.1f%%", 100.0 * q->goodput.goodput);
                }
                if (never)
                    snprintf(cells[k++], 96, "-");
                else
                    snprintf(cells[k++], 96, "%.4g", q->gpu_hours);
            }
            if (priced)
                snprintf(cells[k++], 96, a->csv ? "%.6g" : "%.3g",
                         ppl_cost_per_million_tokens(a->gpu_hour_price, e->config.gpus,
                                                     e->tokens_per_s));
            if (priced && ttt) {
                if (pts[p].goodput.goodput > 0)
                    snprintf(cells[k++], 96, "%.4g", pts[p].gpu_hours * a->gpu_hour_price);
                else
                    snprintf(cells[k++], 96, "-");
            }
        } else {
            snprintf(cells[k++], 96, "-");
            if (!batch_swept)
                snprintf(cells[k++], 96, "%lld", (long long)batch);
            snprintf(cells[k++], 96, "-");
            snprintf(cells[k++], 96, "-");
            snprintf(cells[k++], 96, "-");
            snprintf(cells[k++], 96, "nothing fits");
            for (size_t j = k; j < ncols; j++)
                snprintf(cells[k++], 96, "-");
        }
        for (size_t j = 0; j < ncols; j++)
            row[j] = cells[j];
        if (a->csv) {
            for (size_t j = 0; j < ncols; j++) {
                const char *q = strchr(row[j], ',') ? "\"" : "";
                ppl_buf_printf(&c->out, "%s%s%s%s", j ? "," : "", q, row[j], q);
            }
            ppl_buf_printf(&c->out, "\n");
        } else {
            ppl_table_row(&tab, row);
        }
    }
    if (!a->csv)
        ppl_table_render(&tab, &c->out, "");
    ppl_table_free(&tab);
    if (a->timing && !a->csv) {
        size_t evaluated = 0;
        double seconds = 0.0;
        for (size_t p = 0; p < npts; p++) {
            evaluated += pts[p].search.evaluated;
            seconds += pts[p].search.seconds;
        }
        ppl_buf_printf(&c->out, "\nsearch: %zu points, %zu configurations costed in %.3f s\n", npts,
                       evaluated, seconds);
    }
    return PPL_OK;
}

/* Each point's evaluation context: the flags' stack, constants and memory options. */
/* ---- a mixed cluster ------------------------------------------------------------ */

#define MAX_MIXED_POINTS 64 /* each point searches every pool and every order */

/* One point on a mixed cluster: the pools as patched, and the best plan there
 * (on one pool or across them; ok false when nothing fits). */
typedef struct mixed_point {
    ppl_pools pools;
    bool ok;
    ppl_mixed_plan best;
} mixed_point;

static ppl_status mixed_cost_point(cli *c, const ppl_model *model, const json_t *doc,
                                   const char *path, const ppl_sweep *sw, int nsw, size_t p,
                                   const ppl_pins *pins, mixed_point *out)
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
    ppl_search_opts o = {.pins = pins,
                         .top = 1,
                         .objective = c->args->objective,
                         .within = c->args->within,
                         .allow_tp_across_servers = c->args->allow_tp_across_servers};
    ppl_error_clear(&c->err);
    out->ok = ppl_mixed_plan_all(ctx, &out->pools, &o, &out->best, NULL, &c->err) > 0;
    return out->ok || c->err.status == PPL_OK ? PPL_OK : c->err.status;
}

static int64_t pool_gpus(const ppl_pools *pools)
{
    int64_t n = 0;
    for (int i = 0; i < pools->n; i++)
        n += pools->pool[i].servers * pools->pool[i].gpus_per_server;
    return n;
}

static void mixed_points_text(cli *c, const ppl_sweep *sw, int nsw, const mixed_point *pts,
                              size_t npts)
{
    ppl_table t;
    const int ncols = nsw + 6;
    char align[PPL_WHATIF_MAX_SWEEPS + 8];
    memset(align, 'r', (size_t)ncols);
    align[nsw + 2] = 'l';
    align[ncols] = '\0';
    ppl_table_init(&t, (size_t)ncols, align);
    const char *header[PPL_WHATIF_MAX_SWEEPS + 6];
    for (int k = 0; k < nsw; k++)
        header[k] = sw[k].key;
    header[nsw] = "GPUs";
    header[nsw + 1] = "used";
    header[nsw + 2] = "best: pools x stages, tp/pp/dp";
    header[nsw + 3] = "step";
    header[nsw + 4] = "tokens/s";
    header[nsw + 5] = "MFU";
    ppl_table_row(&t, header);
    for (size_t p = 0; p < npts; p++) {
        const mixed_point *q = &pts[p];
        int idx[PPL_WHATIF_MAX_SWEEPS];
        ppl_sweep_point(sw, nsw, p, idx);
        char gpus[24], used[24] = "-", best[200] = "nothing fits", step[32] = "-", tok[32] = "-",
                       mfu[16] = "-";
        snprintf(gpus, sizeof gpus, "%lld", (long long)pool_gpus(&q->pools));
        if (q->ok) {
            const ppl_estimate *e = &q->best.estimate;
            char assign[128];
            ppl_pooled_assignment_text(&q->pools, &q->best, assign, sizeof assign);
            snprintf(used, sizeof used, "%lld", (long long)e->config.gpus);
            snprintf(best, sizeof best, "%s, %lld/%lld/%lld", assign, (long long)e->config.tp,
                     (long long)e->config.pp, (long long)e->config.dp);
            ppl_format_time(e->step_time_s, step, sizeof step);
            ppl_format_count(e->tokens_per_s, tok, sizeof tok);
            snprintf(mfu, sizeof mfu, "%.1f%%", 100.0 * e->mfu);
        }
        const char *row[PPL_WHATIF_MAX_SWEEPS + 6];
        for (int k = 0; k < nsw; k++)
            row[k] = ppl_sweep_value(&sw[k], idx[k]);
        row[nsw] = gpus;
        row[nsw + 1] = used;
        row[nsw + 2] = best;
        row[nsw + 3] = step;
        row[nsw + 4] = tok;
        row[nsw + 5] = mfu;
        ppl_table_row(&t, row);
    }
    ppl_table_render(&t, &c->out, "");
    ppl_table_free(&t);
}

/* whatif on a mixed cluster: at every point of a sweep of topology paths
 * ("pools[1].servers=8,16,32", "cross_pool.bandwidth=..."), the best plan, on one
 * pool or across them, as plan ranks them. */
static ppl_status whatif_mixed(cli *c, const ppl_model *model, const json_t *doc, const char *path,
                               const ppl_sweep *sw, int nsw, size_t npts)
{
    const ppl_args *a = c->args;
    for (int k = 0; k < nsw; k++)
        if (sw[k].kind != PPL_SWEEP_TOPOLOGY)
            return ppl_error_set(&c->err, PPL_EUSAGE, "", "sweep",
                                 "%s: on a mixed cluster whatif sweeps topology paths only "
                                 "(pools[1].servers, cross_pool.bandwidth, ...)",
                                 sw[k].key);
    if (a->tokens > 0 || a->plot_path || a->csv)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "sweep",
                             "on a mixed cluster whatif has no --tokens, --plot or --csv yet");
    ppl_status st = cli_pins_check_mixed(c);
    if (st != PPL_OK)
        return st;
    if (npts > MAX_MIXED_POINTS)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "sweep",
                             "%zu points: on a mixed cluster whatif costs at most %d", npts,
                             MAX_MIXED_POINTS);
    ppl_pins pins = a->pins;
    if (pins.global_batch == PPL_UNSET) {
        pins.global_batch = ppl_default_global_batch(model);
        cli_note_batch(pins.global_batch, model);
    }
    mixed_point *pts = calloc(npts, sizeof *pts);
    if (!pts)
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    for (size_t p = 0; p < npts && st == PPL_OK; p++)
        st = mixed_cost_point(c, model, doc, path, sw, nsw, p, &pins, &pts[p]);
    if (st == PPL_OK && a->json) {
        json_t *out = ppl_json_document(), *list = json_array();
        json_object_set_new(out, "model", json_string(model->name));
        json_object_set_new(out, "topology", json_string(pts[0].pools.name));
        json_object_set_new(out, "global_batch", json_integer(pins.global_batch));
        for (size_t p = 0; p < npts; p++) {
            int idx[PPL_WHATIF_MAX_SWEEPS];
            ppl_sweep_point(sw, nsw, p, idx);
            json_t *e = json_object(), *values = json_object();
            for (int k = 0; k < nsw; k++)
                json_object_set_new(values, sw[k].key,
                                    ppl_sweep_value_json(ppl_sweep_value(&sw[k], idx[k])));
            json_object_set_new(e, "values", values);
            json_object_set_new(e, "gpus", json_integer(pool_gpus(&pts[p].pools)));
            json_object_set_new(e, "result",
                                pts[p].ok ? ppl_pooled_json(&pts[p].pools, &pts[p].best, model)
                                          : json_null());
            json_array_append_new(list, e);
        }
        json_object_set_new(out, "points", list);
        st = cli_emit_json(c, out);
    } else if (st == PPL_OK) {
        ppl_buf_printf(&c->out,
                       "%s on %s, global batch %lld: the best plan at each point, on one pool or "
                       "across the pools\n",
                       model->name, pts[0].pools.name, (long long)pins.global_batch);
        mixed_points_text(c, sw, nsw, pts, npts);
    }
    free(pts);
    return st;
}

static void eval_ctx_of(void *user, ppl_eval_ctx *ctx, const ppl_model *model,
                        const ppl_topology *topo)
{
    cli_eval_ctx(user, ctx, model, topo);
}

ppl_status cmd_whatif(cli *c)
{
    const ppl_args *a = c->args;
    ppl_model model;
    ppl_topology base;
    json_t *topo_json = NULL;
    char path[PATH_MAX];
    ppl_status st;
    ppl_pools *pools = malloc(sizeof *pools);
    if (!pools)
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    /* the file read once by the loaders (which refuse what is not a regular file)
     * before its document is: a mixed cluster is whatif_mixed's */
    st = cli_load_model(c, a->model, &model);
    if (st == PPL_OK)
        st = cli_load_pools(c, a->topology, pools);
    bool mixed = st == PPL_OK && pools->n > 0;
    free(pools);
    if (st != PPL_OK || (!mixed && (st = cli_load_topology(c, a->topology, &base)) != PPL_OK) ||
        (st = ppl_catalog_resolve(PPL_CATALOG_TOPOLOGIES, a->topology, path, sizeof path,
                                  &c->err)) != PPL_OK ||
        (st = ppl_topology_document(path, &c->diag, &topo_json, &c->err)) != PPL_OK)
        return st;
    ppl_sweep sw[PPL_MAX_SWEEPS];
    size_t npts;
    if ((st = ppl_sweeps_parse(a->sweeps, a->nsweeps, topo_json, sw, &npts, &c->err)) != PPL_OK) {
        json_decref(topo_json);
        return st;
    }
    size_t shard = 0, shards = 0;
    if (a->shard && (st = cli_whatif_shard_of(c, a->shard, &shard, &shards)) == PPL_OK &&
        (a->merge_path || a->json || a->csv || a->plot_path))
        st = ppl_error_set(&c->err, PPL_EUSAGE, "", "shard",
                           "a shard writes JSON Lines for --merge, which prints the table, "
                           "--csv, --json or --plot: not with %s",
                           a->merge_path ? "--merge"
                           : a->json     ? "--json"
                           : a->csv      ? "--csv"
                                         : "--plot");
    if (st == PPL_OK && mixed && (a->shard || a->merge_path))
        st = ppl_error_set(&c->err, PPL_EUSAGE, "", a->shard ? "shard" : "merge",
                           "not on a mixed cluster yet: run its sweep whole");
    if (st != PPL_OK) {
        json_decref(topo_json);
        return st;
    }
    if (mixed) {
        st = whatif_mixed(c, &model, topo_json, path, sw, a->nsweeps, npts);
        json_decref(topo_json);
        return st;
    }
    point *pts = calloc(npts, sizeof *pts);
    if (!pts) {
        json_decref(topo_json);
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    }
    bool batch_swept = false, seq_swept = false;
    for (int i = 0; i < a->nsweeps; i++) {
        batch_swept = batch_swept || sw[i].kind == PPL_SWEEP_GLOBAL_BATCH;
        seq_swept = seq_swept || sw[i].kind == PPL_SWEEP_SEQ_LEN;
    }
    bool batch_assumed = !batch_swept && a->pins.global_batch == PPL_UNSET;
    int64_t batch = batch_swept ? PPL_UNSET : a->pins.global_batch;
    if (batch_assumed && seq_swept) {
        /* the assumed batch follows each point's sequence length */
        cli_note_batch(PPL_UNSET, &model);
    } else if (batch_assumed) {
        batch = ppl_default_global_batch(&model);
        cli_note_batch(batch, &model);
    }
    ppl_goodput_opts gopts;
    cli_goodput_opts(a, &gopts);
    ppl_whatif_opts wo = {.model = &model,
                          .topology = topo_json,
                          .file = path,
                          .sweeps = sw,
                          .nsweeps = a->nsweeps,
                          .pins = a->pins,
                          .search = {.objective = a->objective,
                                     .within = a->within,
                                     .allow_tp_across_servers = a->allow_tp_across_servers},
                          .tokens = a->tokens,
                          .goodput = &gopts,
                          .default_batch = batch_assumed,
                          .ctx_init = eval_ctx_of,
                          .ctx_user = c,
                          .shard = shard,
                          .shards = shards};
    wo.pins.global_batch = batch;
    if (a->merge_path) {
        st = cli_whatif_merge(c, &wo, pts, npts);
    } else {
        cli_progress prog = {.what = "whatif"};
        wo.progress = cli_progress_show;
        wo.progress_ctx = &prog;
        st = ppl_whatif_run(&wo, pts, npts, &c->err);
        cli_progress_done(&prog);
    }
    json_decref(topo_json);
    if (st == PPL_OK && a->shard) {
        st = cli_whatif_shard_lines(c, &model, pts, npts, &wo);
        free(pts);
        return st;
    }
    if (st == PPL_OK && a->plot_path)
        st = svg_plot(c, sw, a->nsweeps, pts, npts, a->tokens > 0);
    if (st == PPL_OK)
        /* a batch that differs from point to point (swept, or assumed per swept
         * seq_len) is each point's, not the answer's */
        st = a->json ? cli_emit_json(c, whatif_json(c, &model, &base, sw, pts, npts, batch,
                                                    batch_swept || (batch_assumed && seq_swept),
                                                    batch_assumed))
                     : whatif_table(c, sw, pts, npts, batch, batch_swept, batch_assumed);
    free(pts);
    return st;
}
