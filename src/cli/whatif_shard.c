/*
 * whatif_shard.c - whatif's sweeps split over machines (cli.h): --shard K/N
 * searches every N-th point and writes JSON Lines, --merge reads them back into
 * the answer one run gives.
 *
 * A line holds a point's index, the configuration of the plan its shard found
 * and the search's figures; merging costs that configuration again under the
 * point's topology (ppl_whatif_merge_point), which gives what the run found, so
 * that the table, CSV, JSON and plot are those of one run byte for byte
 * (tests/cli/test_whatif_shard.sh).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cost/knobs.h"

ppl_status cli_whatif_shard_of(cli *c, const char *spec, size_t *k, size_t *n)
{
    long long a, b;
    int used = 0;
    if (sscanf(spec, "%lld/%lld%n", &a, &b, &used) != 2 || spec[used] != '\0' || b < 1 ||
        b > 1000000 || a < 1 || a > b)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "shard",
                             "'%s': K/N with 1 <= K <= N <= 1000000, e.g. 2/4", spec);
    *k = (size_t)(a - 1);
    *n = (size_t)b;
    return PPL_OK;
}

/* The settings the search of every point reads beyond the grid, as one text:
 * every knob's pin (the registry's, knobs.h), the sequence length, the stack,
 * the memory options, the objective, the spares and tokens, and --constants' values.
 * A merge under other settings would cost the shards' configurations under its
 * own, and print what no single run prints. */
static json_t *settings_json(const cli *c)
{
    const ppl_args *a = c->args;
    ppl_buf b;
    ppl_buf_init(&b);
    size_t n = 0;
    const ppl_knob *k = ppl_knob_rows(&n);
    for (size_t i = 0; i < n; i++)
        ppl_buf_printf(&b, "%s=%.17g ", k[i].name, ppl_knob_pin(&k[i], &a->pins));
    ppl_buf_printf(&b,
                   "seq_len=%lld stack=%d conservative=%d overhead=%.17g fragmentation=%.17g "
                   "headroom=%.17g,%.17g objective=%d within=%.17g tp_across_servers=%d "
                   "spares=%lld,%.17g tokens=%.17g",
                   (long long)a->seq_len, a->stack, (int)a->conservative, a->overhead_bytes,
                   a->fragmentation, a->headroom_fraction, a->headroom_bytes, a->objective,
                   a->within, (int)a->allow_tp_across_servers, (long long)a->spare_gpus,
                   a->spare_fraction, a->tokens);
    if (a->constants_path) {
        json_t *k_json = ppl_constants_json(&c->constants);
        char *text =
            k_json ? json_dumps(k_json, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17))
                   : NULL;
        ppl_buf_printf(&b, " constants=%s", text ? text : "?");
        free(text);
        json_decref(k_json);
    }
    json_t *out = b.failed ? NULL : json_string(b.data);
    ppl_buf_free(&b);
    return out;
}

/* What every line of a sharded run carries, so that --merge refuses another
 * run's lines: the model and topology arguments, the sweeps, the point count,
 * the settings. */
static json_t *grid_json(const cli *c, size_t npts)
{
    const ppl_args *a = c->args;
    json_t *g = json_object(), *sweeps = json_array();
    json_object_set_new(g, "model", json_string(a->model));
    json_object_set_new(g, "topology", json_string(a->topology));
    for (int i = 0; i < a->nsweeps; i++)
        json_array_append_new(sweeps, json_string(a->sweeps[i]));
    json_object_set_new(g, "sweeps", sweeps);
    json_object_set_new(g, "points", json_integer((json_int_t)npts));
    if (a->pins.global_batch != PPL_UNSET)
        json_object_set_new(g, "global_batch", json_integer(a->pins.global_batch));
    json_object_set_new(g, "settings", settings_json(c));
    return g;
}

ppl_status cli_whatif_shard_lines(cli *c, const ppl_model *model, const ppl_whatif_result *pts,
                                  size_t npts, const ppl_whatif_opts *wo)
{
    const ppl_args *a = c->args;
    for (size_t p = 0; p < npts; p++) {
        if (!ppl_whatif_in_shard(wo, p))
            continue;
        json_t *line = json_object();
        json_object_set_new(line, "parplan_whatif_shard", json_integer(1));
        json_object_set_new(line, "shard", json_sprintf("%s", a->shard));
        json_object_set_new(line, "grid", grid_json(c, npts));
        json_object_set_new(line, "point", json_integer((json_int_t)p));
        json_object_set_new(line, "config",
                            pts[p].ok ? ppl_config_json(&pts[p].best.config, model) : json_null());
        json_object_set_new(line, "search", ppl_search_totals_json(&pts[p].search, true));
        char *text = json_dumps(line, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
        json_decref(line);
        if (!text)
            return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
        ppl_buf_printf(&c->out, "%s\n", text);
        free(text);
    }
    return PPL_OK;
}

/* A search figure of a shard's line: a non-negative integer. */
static bool totals_of(const json_t *s, ppl_search_totals *t)
{
    const char *keys[] = {"plans", "candidates", "evaluated", "feasible"};
    size_t *fields[] = {&t->plans, &t->candidates, &t->evaluated, &t->feasible};
    if (!json_is_object(s))
        return false;
    for (size_t i = 0; i < 4; i++) {
        const json_t *v = json_object_get(s, keys[i]);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return false;
        *fields[i] = (size_t)json_integer_value(v);
    }
    const json_t *sec = json_object_get(s, "seconds");
    t->seconds = json_is_number(sec) ? json_number_value(sec) : 0.0;
    return true;
}

ppl_status cli_whatif_merge(cli *c, const ppl_whatif_opts *wo, ppl_whatif_result *pts, size_t npts)
{
    const ppl_args *a = c->args;
    const char *path = a->merge_path, *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f)
        return ppl_error_set(&c->err, PPL_EINPUT, name, "", "cannot read: %s", strerror(errno));
    bool *seen = calloc(npts ? npts : 1, sizeof *seen);
    json_t *grid = grid_json(c, npts);
    char *line = NULL, where[64];
    size_t cap = 0, lineno = 0;
    ppl_status st = seen ? PPL_OK : ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    while (st == PPL_OK && getline(&line, &cap, f) >= 0) {
        lineno++;
        snprintf(where, sizeof where, "line %zu", lineno);
        if (line[strspn(line, " \t\r\n")] == '\0')
            continue;
        json_error_t jerr;
        json_t *doc = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
        const json_t *pt = json_object_get(doc, "point"), *cfg = json_object_get(doc, "config");
        ppl_search_totals totals = {0, 0, 0, 0, 0.0};
        if (!doc)
            st = ppl_error_set(&c->err, PPL_EINPUT, name, where, "not JSON: %s", jerr.text);
        else if (!json_is_integer(json_object_get(doc, "parplan_whatif_shard")))
            st = ppl_error_set(&c->err, PPL_EINPUT, name, where,
                               "not a line of 'parplan whatif --shard'");
        else if (!json_equal(json_object_get(doc, "grid"), grid))
            st = ppl_error_set(&c->err, PPL_EINPUT, name, where,
                               "grid: another sweep's line (give --merge the arguments the "
                               "shards had: model, topology, sweeps, batch, pins, settings)");
        else if (!json_is_integer(pt) || json_integer_value(pt) < 0 ||
                 (size_t)json_integer_value(pt) >= npts)
            st = ppl_error_set(&c->err, PPL_EINPUT, name, where, "point: not one of the %zu", npts);
        else if (seen[json_integer_value(pt)])
            st = ppl_error_set(&c->err, PPL_EINPUT, name, where,
                               "point %lld given twice (a shard merged twice?)",
                               (long long)json_integer_value(pt));
        else if (!(json_is_object(cfg) || json_is_null(cfg)) ||
                 !totals_of(json_object_get(doc, "search"), &totals))
            st = ppl_error_set(&c->err, PPL_EINPUT, name, where,
                               "config or search: missing or malformed");
        if (st == PPL_OK) {
            size_t p = (size_t)json_integer_value(pt);
            ppl_pins plan;
            seen[p] = true;
            snprintf(where, sizeof where, "line %zu: config", lineno);
            if (json_is_object(cfg))
                st = ppl_pins_from_config_json(cfg, name, where, &c->diag, &plan, &c->err);
            if (st == PPL_OK)
                st = ppl_whatif_merge_point(wo, p, json_is_object(cfg) ? &plan : NULL, &totals,
                                            &pts[p], &c->err);
            /* a value the configuration's rules refuse is the line's, not a flag's */
            if (st == PPL_EUSAGE)
                st = cli_config_error(c, name, where);
        }
        json_decref(doc);
    }
    if (st == PPL_OK && ferror(f))
        st = ppl_error_set(&c->err, PPL_EINPUT, name, "", "read error: %s", strerror(errno));
    for (size_t p = 0; st == PPL_OK && p < npts; p++)
        if (!seen[p])
            st = ppl_error_set(&c->err, PPL_EINPUT, name, "",
                               "point %zu of %zu is in no line: merge every shard's output", p,
                               npts);
    free(line);
    free(seen);
    json_decref(grid);
    if (f != stdin)
        fclose(f);
    return st;
}
