/*
 * cmd_whatif.c - `parplan whatif` (the best plan at every point of a sweep) and
 * `parplan size` (the fewest GPUs that train N tokens in D days).
 *
 * A sweep point patches the topology file's JSON at the swept path and loads it
 * again, so every swept value passes the same checks as a hand-written file.
 */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_POINTS 10000
#define MAX_VALUES 256

/* Topology paths a sweep may set; "tiers[i]." takes any i the topology has. */
static const char *const topology_paths[] = {
    "gpu.memory",           "gpu.hbm_bandwidth",  "gpu.flops.bf16",
    "gpu.flops.fp16",       "gpu.flops.fp8",      "servers",
    "gpus_per_server",      "nvlink.domain_gpus", "nvlink.bandwidth",
    "nvlink.latency",       "rails.count",        "rails.nic_bandwidth",
    "rails.latency",        "rail_only",          "switch_radix",
    "transport.protocol",   "transport.mtu",      "transport.loss_rate",
    "transport.retransmit", "transport.rtt",      NULL};
static const char *const tier_fields[] = {"servers", "oversubscription", "latency",
                                          "rail_optimized", NULL};

typedef struct sweep {
    char key[64];
    char *values[MAX_VALUES];
    int nvalues;
    char storage[1024];
} sweep;

static bool listed(const char *const *list, const char *s)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(list[i], s) == 0)
            return true;
    return false;
}

static ppl_status parse_sweep(cli *c, const char *arg, const json_t *topo, sweep *sw)
{
    const char *eq = strchr(arg, '=');
    size_t klen = (size_t)(eq - arg);
    if (klen >= sizeof sw->key)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--sweep", "key too long");
    memcpy(sw->key, arg, klen);
    sw->key[klen] = '\0';
    snprintf(sw->storage, sizeof sw->storage, "%s", eq + 1);
    sw->nvalues = 0;
    for (char *save = NULL, *tok = strtok_r(sw->storage, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (sw->nvalues == MAX_VALUES)
            return ppl_error_set(&c->err, PPL_EUSAGE, "", "--sweep", "%s: at most %d values",
                                 sw->key, MAX_VALUES);
        sw->values[sw->nvalues++] = tok;
    }
    if (sw->nvalues == 0)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--sweep", "%s: no values", sw->key);
    const char *k = sw->key;
    if (strcmp(k, "gpus") == 0 || strcmp(k, "global_batch") == 0)
        return PPL_OK;
    if (listed(topology_paths, k))
        return PPL_OK;
    int tier, n = 0;
    char field[32];
    if (sscanf(k, "tiers[%d].%31s%n", &tier, field, &n) == 2 && k[n] == '\0') {
        json_t *tiers = json_object_get(topo, "tiers");
        if (tier >= 0 && (size_t)tier < json_array_size(tiers) && listed(tier_fields, field))
            return PPL_OK;
        if (!listed(tier_fields, field))
            return ppl_error_set(&c->err, PPL_EUSAGE, "", "--sweep",
                                 "unknown key '%s' (a tier has servers, oversubscription, latency, "
                                 "rail_optimized)",
                                 k);
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--sweep",
                             "unknown key '%s': the topology has %zu tiers", k,
                             json_array_size(tiers));
    }
    return ppl_error_set(&c->err, PPL_EUSAGE, "", "--sweep",
                         "unknown key '%s' (use gpus, global_batch or a topology path such as "
                         "rails.nic_bandwidth, nvlink.domain_gpus, tiers[1].oversubscription, "
                         "rail_only, transport.loss_rate)",
                         k);
}

/* A value as JSON: a number, true/false (yes/no), or a string ("800Gb/s"). */
static json_t *value_json(const char *v)
{
    char *end;
    double d = strtod(v, &end);
    if (*v && *end == '\0' && isfinite(d)) {
        if (d == floor(d) && fabs(d) < 9e15)
            return json_integer((json_int_t)d);
        return ppl_json_real(d);
    }
    if (strcmp(v, "true") == 0 || strcmp(v, "yes") == 0)
        return json_true();
    if (strcmp(v, "false") == 0 || strcmp(v, "no") == 0)
        return json_false();
    return json_string(v);
}

/* Sets path (a.b, tiers[i].x) in the topology object, creating objects on the way. */
static void set_path(json_t *root, const char *path, json_t *value)
{
    char buf[128];
    size_t len = strlen(path);
    if (len >= sizeof buf)
        len = sizeof buf - 1; /* keys are checked against a short list before this */
    memcpy(buf, path, len);
    buf[len] = '\0';
    json_t *node = root;
    int tier;
    char field[32];
    if (sscanf(buf, "tiers[%d].%31s", &tier, field) == 2) {
        json_t *t = json_array_get(json_object_get(root, "tiers"), (size_t)tier);
        json_object_set_new(t, field, value);
        return;
    }
    char *save = NULL, *tok = strtok_r(buf, ".", &save), *next;
    while ((next = strtok_r(NULL, ".", &save)) != NULL) {
        json_t *child = json_object_get(node, tok);
        if (json_is_string(child) && strcmp(tok, "gpu") == 0) {
            /* "gpu": "H100" becomes {"name": "H100"}: the datasheet fills the rest */
            json_t *obj = json_object();
            json_object_set(obj, "name", child);
            json_object_set_new(node, tok, obj);
            child = obj;
        }
        if (!json_is_object(child)) {
            child = json_object();
            json_object_set_new(node, tok, child);
        }
        node = child;
        tok = next;
    }
    json_object_set_new(node, tok, value);
}

static ppl_status load_topology_json(cli *c, const char *arg, json_t **out, char *path, size_t size)
{
    ppl_status st = ppl_catalog_resolve(PPL_CATALOG_TOPOLOGIES, arg, path, size, &c->err);
    if (st != PPL_OK)
        return st;
    json_error_t jerr;
    *out = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!*out) {
        ppl_topology t; /* the loader gives the precise message */
        return ppl_topology_load(path, path, &c->diag, &t, &c->err);
    }
    return PPL_OK;
}

/* What the searches behind an answer did: summed over the plans searched. */
typedef struct search_stats {
    size_t plans, candidates, evaluated, feasible;
    double seconds;
} search_stats;

static void stats_add(search_stats *acc, const ppl_search_result *r)
{
    acc->plans++;
    acc->candidates += r->candidates;
    acc->evaluated += r->evaluated;
    acc->feasible += r->feasible;
    acc->seconds += r->seconds;
}

/* SPEC-style search figures; wall time only with --timing (else null, so that
 * the same input gives byte-identical output). */
static json_t *stats_json(const search_stats *s, bool timing)
{
    json_t *o = json_object();
    json_object_set_new(o, "plans", json_integer((json_int_t)s->plans));
    json_object_set_new(o, "candidates", json_integer((json_int_t)s->candidates));
    json_object_set_new(o, "evaluated", json_integer((json_int_t)s->evaluated));
    json_object_set_new(o, "feasible", json_integer((json_int_t)s->feasible));
    json_object_set_new(o, "seconds", timing ? ppl_json_real(s->seconds) : json_null());
    return o;
}

/* The best plan for pins on a topology (every GPU count up to pins->gpus when
 * gpus_at_most); PPL_INFEASIBLE when nothing fits.  The search's figures are
 * added to acc. */
static ppl_status best_plan(cli *c, const ppl_model *m, const ppl_topology *t, const ppl_pins *pins,
                            bool gpus_at_most, ppl_estimate *out, search_stats *acc)
{
    ppl_eval_ctx ctx;
    cli_eval_ctx(c, &ctx, m, t);
    ppl_search_opts o = {.pins = pins,
                         .top = 1,
                         .objective = c->args->objective,
                         .allow_tp_across_servers = c->args->allow_tp_across_servers,
                         .gpus_at_most = gpus_at_most};
    ppl_search_result r;
    ppl_error err;
    ppl_status st = ppl_search(&ctx, &o, &r, &err);
    if (st == PPL_OK) {
        *out = r.results[0];
    } else if (st != PPL_INFEASIBLE) {
        c->err = err;
    }
    stats_add(acc, &r);
    ppl_search_free(&r);
    return st;
}

/* The global batch when --global-batch is not given: about 4M tokens per step
 * (GPT-3's 3.2M, Llama 2's 4M), in a power of two of sequences.  Said on stderr,
 * in the output and in the JSON (global_batch_assumed), never silently. */
static int64_t default_batch(cli *c, const ppl_model *m, bool *assumed)
{
    *assumed = c->args->pins.global_batch == PPL_UNSET;
    if (!*assumed)
        return c->args->pins.global_batch;
    double seqs = 4194304.0 / (double)m->seq_len;
    int64_t b = seqs < 1 ? 1 : (int64_t)pow(2.0, round(log2(seqs)));
    if (!c->batch_noted) {
        c->batch_noted = true;
        fprintf(stderr,
                "parplan: note: no --global-batch: assuming %lld sequences of %lld tokens "
                "(%.3g M tokens) per step\n",
                (long long)b, (long long)m->seq_len, (double)b * (double)m->seq_len / 1e6);
    }
    return b;
}

static void short_config(const ppl_config *c, char *buf, size_t size)
{
    char rc[32];
    snprintf(buf, size, "%lld/%lld/%lld/%lld/%lld vp%lld mbs%lld z%d %s%s%s", (long long)c->tp,
             (long long)c->pp, (long long)c->dp, (long long)c->cp, (long long)c->ep,
             (long long)c->vp, (long long)c->mbs, c->zero, ppl_recompute_label(c, rc, sizeof rc),
             c->sequence_parallel ? " sp" : "", c->flash_attention ? " fa" : "");
}

/* ------------------------------------------------------------------ whatif */

typedef struct point {
    int idx[PPL_MAX_SWEEPS];
    bool ok;
    ppl_estimate e;
    double time_to_train_s;
    search_stats search;
} point;

static void svg_plot(cli *c, const sweep *sw, int nsw, const point *pts, size_t npts, bool ttt)
{
    ppl_buf svg;
    ppl_buf_init(&svg);
    const double W = 720, H = 440, L = 80, R = 180, T = 40, B = 60;
    int nx = sw[0].nvalues;
    size_t series = npts / (size_t)nx;
    double ymax = 0;
    for (size_t i = 0; i < npts; i++) {
        double y = ttt ? pts[i].time_to_train_s / 86400.0 : pts[i].e.tokens_per_s;
        if (pts[i].ok && y > ymax)
            ymax = y;
    }
    if (ymax <= 0)
        ymax = 1;
    ppl_buf_printf(&svg,
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                   "font-family=\"sans-serif\" font-size=\"12\">\n"
                   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                   W, H);
    ppl_buf_printf(&svg, "<text x=\"%.0f\" y=\"24\" font-size=\"14\">%s vs %s</text>\n", L,
                   ttt ? "time to train (days)" : "tokens/s", sw[0].key);
    ppl_buf_printf(&svg,
                   "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n"
                   "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n",
                   L, H - B, W - R, H - B, L, T, L, H - B);
    for (int k = 0; k <= 4; k++) {
        double y = H - B - (H - T - B) * k / 4.0;
        ppl_buf_printf(&svg, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.3g</text>\n", L - 6,
                       y + 4, ymax * k / 4.0);
    }
    for (int i = 0; i < nx; i++) {
        double x = L + (W - L - R) * (nx == 1 ? 0.5 : (double)i / (nx - 1));
        ppl_buf_printf(&svg, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n", x,
                       H - B + 18, sw[0].values[i]);
    }
    ppl_buf_printf(&svg, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
                   (L + W - R) / 2, H - 16, sw[0].key);
    static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                          "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
    for (size_t s = 0; s < series && s < 8; s++) {
        ppl_buf_printf(&svg, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
                       colours[s]);
        for (int i = 0; i < nx; i++) {
            const point *p = &pts[(size_t)i * series + s];
            if (!p->ok)
                continue;
            double y = ttt ? p->time_to_train_s / 86400.0 : p->e.tokens_per_s;
            double x = L + (W - L - R) * (nx == 1 ? 0.5 : (double)i / (nx - 1));
            ppl_buf_printf(&svg, "%.1f,%.1f ", x, H - B - (H - T - B) * y / ymax);
        }
        ppl_buf_printf(&svg, "\"/>\n");
        if (nsw > 1) {
            char label[128] = "";
            size_t used = 0;
            for (int k = 1; k < nsw; k++)
                used += (size_t)snprintf(label + used, sizeof label - used, "%s%s=%s",
                                         k > 1 ? " " : "", sw[k].key, sw[k].values[pts[s].idx[k]]);
            ppl_buf_printf(&svg, "<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">%s</text>\n", W - R + 10,
                           T + 16.0 * (double)s, colours[s], label);
        }
    }
    ppl_buf_printf(&svg, "</svg>\n");
    ppl_error err;
    if (ppl_output_write(c->args->plot_path, &svg, &err) != PPL_OK)
        c->err = err;
    ppl_buf_free(&svg);
}

ppl_status cmd_whatif(cli *c)
{
    const ppl_args *a = c->args;
    ppl_model model;
    ppl_topology base;
    json_t *topo_json = NULL;
    char path[PATH_MAX];
    ppl_status st;
    if ((st = cli_load_model(c, a->model, &model)) != PPL_OK ||
        (st = cli_load_topology(c, a->topology, &base)) != PPL_OK ||
        (st = load_topology_json(c, a->topology, &topo_json, path, sizeof path)) != PPL_OK)
        return st;
    sweep sw[PPL_MAX_SWEEPS];
    size_t npts = 1;
    for (int i = 0; i < a->nsweeps; i++) {
        if ((st = parse_sweep(c, a->sweeps[i], topo_json, &sw[i])) != PPL_OK) {
            json_decref(topo_json);
            return st;
        }
        npts *= (size_t)sw[i].nvalues;
        if (npts > MAX_POINTS) {
            json_decref(topo_json);
            return ppl_error_set(&c->err, PPL_EUSAGE, "", "--sweep",
                                 "the grid has more than %d points", MAX_POINTS);
        }
    }
    point *pts = calloc(npts, sizeof *pts);
    if (!pts) {
        json_decref(topo_json);
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    }
    for (size_t p = 0; p < npts; p++) {
        size_t rest = p;
        for (int i = a->nsweeps - 1; i >= 0; i--) {
            pts[p].idx[i] = (int)(rest % (size_t)sw[i].nvalues);
            rest /= (size_t)sw[i].nvalues;
        }
    }
    bool gpus_swept = false, batch_swept = false, batch_assumed = false;
    for (int i = 0; i < a->nsweeps; i++) {
        gpus_swept = gpus_swept || strcmp(sw[i].key, "gpus") == 0;
        batch_swept = batch_swept || strcmp(sw[i].key, "global_batch") == 0;
    }
    int64_t batch = batch_swept ? PPL_UNSET : default_batch(c, &model, &batch_assumed);
    for (size_t p = 0; p < npts && st == PPL_OK; p++) {
        ppl_pins pins = a->pins;
        pins.global_batch = batch;
        json_t *patched = json_deep_copy(topo_json);
        for (int i = 0; i < a->nsweeps; i++) {
            const char *k = sw[i].key, *v = sw[i].values[pts[p].idx[i]];
            char why[160];
            double d;
            if (strcmp(k, "gpus") == 0 || strcmp(k, "global_batch") == 0) {
                if (ppl_parse_quantity(v, PPL_UNIT_COUNT, &d, why, sizeof why) != PPL_OK || d < 1 ||
                    d != floor(d) || d > 1e12) {
                    st = ppl_error_set(&c->err, PPL_EUSAGE, "", "--sweep",
                                       "%s=%.40s: expected a positive integer", k, v);
                    break;
                }
                if (k[0] == 'g' && k[1] == 'p')
                    pins.gpus = (int64_t)d;
                else
                    pins.global_batch = (int64_t)d;
                continue;
            }
            set_path(patched, k, value_json(v));
        }
        ppl_topology t;
        ppl_error err;
        ppl_diag quiet = {0};
        if (st == PPL_OK && ppl_topology_from_json(patched, path, "", &quiet, &t, &err) != PPL_OK) {
            char line[1024];
            ppl_error_format(&err, line, sizeof line);
            st = ppl_error_set(&c->err, PPL_EUSAGE, "", "--sweep",
                               "this point gives an invalid "
                               "topology: %s",
                               line);
        }
        json_decref(patched);
        if (st != PPL_OK)
            break;
        if (pins.gpus != PPL_UNSET && pins.gpus > t.servers * t.gpus_per_server) {
            st = ppl_error_set(&c->err, PPL_EUSAGE, "", "--sweep",
                               "gpus=%lld exceeds the topology's %lld GPUs", (long long)pins.gpus,
                               (long long)(t.servers * t.gpus_per_server));
            break;
        }
        /* "gpus=N" is what the cluster offers: a plan may leave some idle when
         * fewer train faster at this global batch, so every count up to N is a
         * candidate */
        ppl_status ps = best_plan(c, &model, &t, &pins, gpus_swept, &pts[p].e, &pts[p].search);
        if (ps == PPL_OK) {
            pts[p].ok = true;
            if (a->tokens > 0)
                pts[p].time_to_train_s = a->tokens / pts[p].e.tokens_per_s;
        } else if (ps != PPL_INFEASIBLE) {
            st = ps;
        }
    }
    json_decref(topo_json);
    if (st != PPL_OK) {
        free(pts);
        return st;
    }

    bool ttt = a->tokens > 0;
    if (a->plot_path)
        svg_plot(c, sw, a->nsweeps, pts, npts, ttt);
    if (c->err.message[0]) {
        free(pts);
        return PPL_EINTERNAL;
    }
    if (a->json) {
        json_t *doc = ppl_json_document(), *list = json_array();
        json_object_set_new(doc, "model", json_string(model.name));
        json_object_set_new(doc, "topology", json_string(base.name));
        if (!batch_swept)
            json_object_set_new(doc, "global_batch", json_integer(batch));
        json_object_set_new(doc, "global_batch_assumed", json_boolean(batch_assumed));
        if (ttt)
            json_object_set_new(doc, "tokens", ppl_json_real(a->tokens));
        for (size_t p = 0; p < npts; p++) {
            json_t *e = json_object(), *values = json_object();
            for (int i = 0; i < a->nsweeps; i++)
                json_object_set_new(values, sw[i].key, value_json(sw[i].values[pts[p].idx[i]]));
            json_object_set_new(e, "values", values);
            json_object_set_new(e, "result",
                                pts[p].ok ? ppl_estimate_json(&pts[p].e, &model) : json_null());
            json_object_set_new(e, "search", stats_json(&pts[p].search, a->timing));
            if (ttt && pts[p].ok) {
                json_object_set_new(e, "time_to_train_s", ppl_json_real(pts[p].time_to_train_s));
                json_object_set_new(
                    e, "gpu_hours",
                    ppl_json_real(pts[p].time_to_train_s * (double)pts[p].e.config.gpus / 3600.0));
            }
            json_array_append_new(list, e);
        }
        json_object_set_new(doc, "points", list);
        free(pts);
        return cli_emit_json(c, doc);
    }
    size_t ncols = (size_t)a->nsweeps + 5 + (batch_swept ? 0 : 1) + (ttt ? 2 : 0);
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
        head[h++] = "GPU-hours";
    }
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
            snprintf(cells[k++], 96, "%s", sw[i].values[pts[p].idx[i]]);
        const ppl_estimate *e = &pts[p].e;
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
                if (a->csv)
                    snprintf(cells[k++], 96, "%.6g", pts[p].time_to_train_s);
                else
                    ppl_format_time(pts[p].time_to_train_s, cells[k++], 96);
                snprintf(cells[k++], 96, "%.4g",
                         pts[p].time_to_train_s * (double)e->config.gpus / 3600.0);
            }
        } else {
            snprintf(cells[k++], 96, "-");
            if (!batch_swept)
                snprintf(cells[k++], 96, "%lld", (long long)batch);
            snprintf(cells[k++], 96, "-");
            snprintf(cells[k++], 96, "-");
            snprintf(cells[k++], 96, "-");
            snprintf(cells[k++], 96, "nothing fits");
            if (ttt) {
                snprintf(cells[k++], 96, "-");
                snprintf(cells[k++], 96, "-");
            }
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
    free(pts);
    return PPL_OK;
}

/* -------------------------------------------------------------------- size */

/* The best plan on the first `gpus` GPUs; feasible when it trains in time. */
static ppl_status plan_at(cli *c, const ppl_model *m, const ppl_topology *t, int64_t gpus,
                          ppl_estimate *e, bool *meets, search_stats *acc)
{
    ppl_pins pins = c->args->pins;
    pins.gpus = gpus;
    bool assumed;
    pins.global_batch = default_batch(c, m, &assumed);
    ppl_status st = best_plan(c, m, t, &pins, false, e, acc);
    *meets = false;
    if (st == PPL_OK && !c->args->fit_only)
        *meets = c->args->tokens / e->tokens_per_s <= c->args->days * 86400.0;
    else if (st == PPL_OK)
        *meets = true;
    return st == PPL_INFEASIBLE ? PPL_OK : st;
}

ppl_status cmd_size(cli *c)
{
    const ppl_args *a = c->args;
    ppl_model model;
    ppl_topology topo;
    ppl_status st;
    if ((st = cli_load_model(c, a->model, &model)) != PPL_OK ||
        (st = cli_load_topology(c, a->topology, &topo)) != PPL_OK)
        return st;
    const int64_t per = topo.gpus_per_server, servers = topo.servers;
    ppl_estimate best, e;
    search_stats stats = {0};
    bool meets = false, found = false, batch_assumed = a->pins.global_batch == PPL_UNSET;
    int64_t answer = 0;
    if (a->fit_only) {
        /* one replica: the fewest GPUs (tp x pp x cp) any configuration fits on */
        ppl_pins pins = a->pins;
        pins.dp = 1;
        pins.global_batch = default_batch(c, &model, &batch_assumed);
        for (int64_t g = 1; g <= servers * per && !found; g = g < per ? g * 2 : g + per) {
            pins.gpus = g;
            st = best_plan(c, &model, &topo, &pins, false, &e, &stats);
            if (st == PPL_OK) {
                found = true;
                best = e;
                answer = g;
            } else if (st != PPL_INFEASIBLE) {
                return st;
            }
        }
    } else {
        /* doubling, then bisection on whole servers (below a server: 1, 2, 4 GPUs) */
        int64_t lo = 0, hi = 0;
        for (int64_t s = 1; s <= servers; s = s * 2 > servers && s < servers ? servers : s * 2) {
            if ((st = plan_at(c, &model, &topo, s * per, &e, &meets, &stats)) != PPL_OK)
                return st;
            if (meets) {
                hi = s;
                best = e;
                found = true;
                break;
            }
            lo = s;
            if (s == servers)
                break;
        }
        if (found) {
            while (hi - lo > 1) {
                int64_t mid = lo + (hi - lo) / 2;
                if ((st = plan_at(c, &model, &topo, mid * per, &e, &meets, &stats)) != PPL_OK)
                    return st;
                if (meets) {
                    hi = mid;
                    best = e;
                } else {
                    lo = mid;
                }
            }
            answer = hi * per;
        }
    }
    if (!found) {
        if (a->fit_only)
            return ppl_error_set(&c->err, PPL_INFEASIBLE, "", "",
                                 "one replica of %s does not fit on all %lld GPUs of %s",
                                 model.name, (long long)(servers * per), topo.name);
        /* the best the whole cluster can do */
        st = plan_at(c, &model, &topo, servers * per, &e, &meets, &stats);
        if (st != PPL_OK)
            return st;
        char when[32];
        if (e.tokens_per_s > 0) {
            ppl_format_time(a->tokens / e.tokens_per_s, when, sizeof when);
            return ppl_error_set(
                &c->err, PPL_INFEASIBLE, "", "",
                "not within %.4g days: all %lld GPUs of %s train %.4g tokens in %s "
                "at best",
                a->days, (long long)(servers * per), topo.name, a->tokens, when);
        }
        return ppl_error_set(&c->err, PPL_INFEASIBLE, "", "",
                             "not within %.4g days: nothing fits on %s", a->days, topo.name);
    }
    double seconds = a->fit_only ? 0.0 : a->tokens / best.tokens_per_s;
    double gpu_hours = seconds * (double)answer / 3600.0;
    if (a->json) {
        json_t *doc = ppl_json_document();
        json_object_set_new(doc, "model", json_string(model.name));
        json_object_set_new(doc, "topology", json_string(topo.name));
        json_object_set_new(doc, "gpus", json_integer(answer));
        json_object_set_new(doc, "global_batch", json_integer(best.config.global_batch));
        json_object_set_new(doc, "global_batch_assumed", json_boolean(batch_assumed));
        if (!a->fit_only) {
            json_object_set_new(doc, "tokens", ppl_json_real(a->tokens));
            json_object_set_new(doc, "days", ppl_json_real(seconds / 86400.0));
            json_object_set_new(doc, "days_allowed", ppl_json_real(a->days));
            json_object_set_new(doc, "gpu_hours", ppl_json_real(gpu_hours));
            if (a->gpu_hour_price > 0)
                json_object_set_new(doc, "cost", ppl_json_real(gpu_hours * a->gpu_hour_price));
        }
        json_object_set_new(doc, "result", ppl_estimate_json(&best, &model));
        json_object_set_new(doc, "search", stats_json(&stats, a->timing));
        return cli_emit_json(c, doc);
    }
    char desc[512];
    ppl_config_describe(&best.config, desc, sizeof desc);
    char batch_note[96] = "";
    if (batch_assumed)
        snprintf(batch_note, sizeof batch_note,
                 " at an assumed global batch of %lld (give --global-batch)",
                 (long long)best.config.global_batch);
    if (a->fit_only) {
        ppl_buf_printf(&c->out, "%lld GPUs hold one replica of %s on %s%s\n", (long long)answer,
                       model.name, topo.name, batch_note);
    } else {
        char when[32];
        ppl_format_time(seconds, when, sizeof when);
        ppl_buf_printf(&c->out,
                       "%lld GPUs of %s train %s on %.4g tokens in %s (%.4g allowed)%s, "
                       "%.4g GPU-hours",
                       (long long)answer, topo.name, model.name, a->tokens, when, a->days,
                       batch_note, gpu_hours);
        if (a->gpu_hour_price > 0)
            ppl_buf_printf(&c->out, ", cost %.4g", gpu_hours * a->gpu_hour_price);
        ppl_buf_printf(&c->out, "\n");
    }
    ppl_buf_printf(&c->out, "config   %s\n", desc);
    if (a->timing)
        ppl_buf_printf(&c->out, "search   %zu plans, %zu configurations costed in %.3f s\n",
                       stats.plans, stats.evaluated, stats.seconds);
    ppl_buf_printf(&c->out, "\n");
    ppl_estimate_text(&best, &c->out);
    return PPL_OK;
}
