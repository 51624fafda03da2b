/*
 * whatif.c - sweeps over the GPU count, the global batch and topology paths, and
 * the best plan at each point.
 *
 * A sweep point patches the topology file's JSON at the swept path and loads it
 * again, so every swept value passes the same checks as a hand-written file.  The
 * paths a sweep may set are the settable rows of the topology loader's own key
 * table (ppl_topology_keys), so the loader and the sweeps know one schema.
 */
#include "studies/whatif.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonread.h"
#include "base/output.h"
#include "base/units.h"
#include "cost/rules.h"

#define SWEEP "sweep" /* the key of every error here: the command line says --sweep */
#define TIER_PREFIX "tiers[]."

/* A settable topology path outside the tiers ("rails.nic_bandwidth"). */
static bool settable_path(const char *path)
{
    const ppl_topology_key *k = strchr(path, '[') ? NULL : ppl_topology_key_find(path);
    return k && k->settable;
}

/* A settable key of every tier ("oversubscription"). */
static bool settable_tier_field(const char *field)
{
    char path[64];
    if ((size_t)snprintf(path, sizeof path, TIER_PREFIX "%s", field) >= sizeof path)
        return false;
    const ppl_topology_key *k = ppl_topology_key_find(path);
    return k && k->settable;
}

/* "servers, oversubscription, latency, rail_optimized": a tier's settable keys. */
static void tier_fields(char *buf, size_t size)
{
    size_t used = 0, plen = strlen(TIER_PREFIX);
    buf[0] = '\0';
    for (const ppl_topology_key *k = ppl_topology_keys; k->path; k++)
        if (k->settable && strncmp(k->path, TIER_PREFIX, plen) == 0 && used < size)
            used +=
                (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", k->path + plen);
}

/* Whether key names something a point sets; the usage error when not. */
static ppl_status check_key(const char *k, const json_t *topology, ppl_error *err)
{
    if (strcmp(k, "gpus") == 0 || strcmp(k, "global_batch") == 0 || strcmp(k, "seq_len") == 0 ||
        strcmp(k, "spares") == 0 || settable_path(k))
        return PPL_OK;
    int tier, n = 0;
    char field[32];
    /* a pool's settable key: "pools[1].servers", "pools[0].nvlink.bandwidth" (a
     * pool is a topology of its own: pools.h) */
    if (sscanf(k, "pools[%d].%n", &tier, &n) == 1 && n > 0) {
        json_t *pools = json_object_get(topology, "pools");
        if (tier < 0 || (size_t)tier >= json_array_size(pools))
            return ppl_error_set(err, PPL_EUSAGE, "", SWEEP,
                                 "unknown key '%s': the topology has %zu pools", k,
                                 json_array_size(pools));
        if (!settable_path(k + n))
            return ppl_error_set(err, PPL_EUSAGE, "", SWEEP,
                                 "unknown key '%s' (a pool has the settable keys of a topology "
                                 "outside its tiers: servers, nvlink.bandwidth, gpu.memory, ...)",
                                 k);
        return PPL_OK;
    }
    n = 0;
    if (sscanf(k, "tiers[%d].%31s%n", &tier, field, &n) == 2 && k[n] == '\0') {
        json_t *tiers = json_object_get(topology, "tiers");
        bool known = settable_tier_field(field);
        if (tier >= 0 && (size_t)tier < json_array_size(tiers) && known)
            return PPL_OK;
        if (!known) {
            char fields[128];
            tier_fields(fields, sizeof fields);
            return ppl_error_set(err, PPL_EUSAGE, "", SWEEP, "unknown key '%s' (a tier has %s)", k,
                                 fields);
        }
        return ppl_error_set(err, PPL_EUSAGE, "", SWEEP,
                             "unknown key '%s': the topology has %zu tiers", k,
                             json_array_size(tiers));
    }
    return ppl_error_set(
        err, PPL_EUSAGE, "", SWEEP,
        "unknown key '%s' (use gpus, global_batch, seq_len, spares or a topology path such as "
        "rails.nic_bandwidth, nvlink.domain_gpus, tiers[1].oversubscription, "
        "rail_only, transport.loss_rate)",
        k);
}

const char *ppl_sweep_value(const ppl_sweep *sweep, int i)
{
    return sweep->text + sweep->at[i];
}

ppl_status ppl_sweep_parse(const char *spec, const json_t *topology, ppl_sweep *sw, ppl_error *err)
{
    const char *eq = strchr(spec, '=');
    if (!eq)
        return ppl_error_set(err, PPL_EUSAGE, "", SWEEP, "expected KEY=V1,V2,..., found '%.40s'",
                             spec);
    size_t klen = (size_t)(eq - spec);
    if (klen >= sizeof sw->key)
        return ppl_error_set(err, PPL_EUSAGE, "", SWEEP, "key too long");
    memcpy(sw->key, spec, klen);
    sw->key[klen] = '\0';
    const size_t len = strlen(eq + 1);
    if (len >= sizeof sw->text) /* never cut: a cut list sweeps other values */
        return ppl_error_set(err, PPL_EUSAGE, "", SWEEP,
                             "%s: the values take %zu characters, at most %zu", sw->key, len,
                             sizeof sw->text - 1);
    memcpy(sw->text, eq + 1, len + 1);
    sw->nvalues = 0;
    if (len == 0)
        return ppl_error_set(err, PPL_EUSAGE, "", SWEEP, "%s: no values", sw->key);
    /* every comma separates two values: an empty one ("64,,128", a trailing comma)
     * and one given twice are typing slips, not points to drop or run twice */
    for (char *tok = sw->text;;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        if (*tok == '\0')
            return ppl_error_set(err, PPL_EUSAGE, "", SWEEP, "%s: value %d is empty", sw->key,
                                 sw->nvalues + 1);
        for (int i = 0; i < sw->nvalues; i++)
            if (strcmp(ppl_sweep_value(sw, i), tok) == 0)
                return ppl_error_set(err, PPL_EUSAGE, "", SWEEP, "%s: '%.40s' is given twice",
                                     sw->key, tok);
        if (sw->nvalues == PPL_SWEEP_MAX_VALUES)
            return ppl_error_set(err, PPL_EUSAGE, "", SWEEP, "%s: at most %d values", sw->key,
                                 PPL_SWEEP_MAX_VALUES);
        sw->at[sw->nvalues++] = (unsigned short)(tok - sw->text);
        if (!comma)
            break;
        tok = comma + 1;
    }
    sw->kind = strcmp(sw->key, "gpus") == 0           ? PPL_SWEEP_GPUS
               : strcmp(sw->key, "global_batch") == 0 ? PPL_SWEEP_GLOBAL_BATCH
               : strcmp(sw->key, "seq_len") == 0      ? PPL_SWEEP_SEQ_LEN
               : strcmp(sw->key, "spares") == 0       ? PPL_SWEEP_SPARES
                                                      : PPL_SWEEP_TOPOLOGY;
    return check_key(sw->key, topology, err);
}

ppl_status ppl_sweeps_parse(const char *const *specs, int n, const json_t *topology,
                            ppl_sweep *sweeps, size_t *points, ppl_error *err)
{
    *points = 1;
    for (int i = 0; i < n; i++) {
        ppl_status st = ppl_sweep_parse(specs[i], topology, &sweeps[i], err);
        if (st != PPL_OK)
            return st;
        *points *= (size_t)sweeps[i].nvalues;
        if (*points > PPL_WHATIF_MAX_POINTS)
            return ppl_error_set(err, PPL_EUSAGE, "", SWEEP, "the grid has more than %d points",
                                 PPL_WHATIF_MAX_POINTS);
    }
    return PPL_OK;
}

void ppl_sweep_point(const ppl_sweep *sweeps, int n, size_t p, int *idx)
{
    for (int i = n - 1; i >= 0; i--) {
        idx[i] = (int)(p % (size_t)sweeps[i].nvalues);
        p /= (size_t)sweeps[i].nvalues;
    }
}

json_t *ppl_sweep_value_json(const char *v)
{
    const char *end;
    double d = ppl_decimal(v, &end);
    if (*v && end != v && *end == '\0' && isfinite(d)) {
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

/* Sets a checked path (a.b, tiers[i].x, pools[i].a.b) in the topology object,
 * creating objects on the way; takes value. */
static void set_path(json_t *root, const char *path, json_t *value)
{
    char buf[PPL_SWEEP_KEY_MAX];
    snprintf(buf, sizeof buf, "%s", path); /* checked keys are shorter */
    json_t *node = root;
    int tier, n = 0;
    char field[32];
    if (sscanf(buf, "pools[%d].%n", &tier, &n) == 1 && n > 0) { /* checked: the pool exists */
        set_path(json_array_get(json_object_get(root, "pools"), (size_t)tier), path + n, value);
        return;
    }
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

ppl_status ppl_topology_patch(json_t *topology, const char *path, const char *value, ppl_error *err)
{
    ppl_status st;
    if (strlen(path) >= PPL_SWEEP_KEY_MAX)
        return ppl_error_set(err, PPL_EUSAGE, "", SWEEP, "key too long");
    if (strcmp(path, "gpus") == 0 || strcmp(path, "global_batch") == 0 ||
        strcmp(path, "seq_len") == 0)
        return ppl_error_set(err, PPL_EUSAGE, "", SWEEP,
                             "%s is a pin of the plan, not a topology path", path);
    if ((st = check_key(path, topology, err)) != PPL_OK)
        return st;
    json_t *v = ppl_sweep_value_json(value);
    if (!v)
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    set_path(topology, path, v);
    return PPL_OK;
}

ppl_status ppl_topology_document(const char *path, const ppl_diag *diag, json_t **doc,
                                 ppl_error *err)
{
    return ppl_jr_read(path, diag, doc, err);
}

ppl_status ppl_whatif_point(const json_t *topology, const char *file, const ppl_sweep *sweeps,
                            int n, const int *idx, ppl_pins *pins, ppl_topology *topo,
                            ppl_error *err)
{
    ppl_status st = PPL_OK;
    json_t *patched = json_deep_copy(topology);
    if (!patched)
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    for (int i = 0; i < n; i++) {
        const char *k = sweeps[i].key, *v = ppl_sweep_value(&sweeps[i], idx[i]);
        char why[160];
        double d;
        if (sweeps[i].kind == PPL_SWEEP_TOPOLOGY) {
            set_path(patched, k, ppl_sweep_value_json(v));
            continue;
        }
        /* spares may be 0: the point without them */
        double lo = sweeps[i].kind == PPL_SWEEP_SPARES ? 0 : 1;
        if (ppl_parse_quantity(v, PPL_UNIT_COUNT, &d, why, sizeof why) != PPL_OK || d < lo ||
            d != floor(d) || d > 1e12) {
            st = ppl_error_set(err, PPL_EUSAGE, "", SWEEP, "%s=%.40s: expected a %s integer", k, v,
                               lo > 0 ? "positive" : "non-negative");
            break;
        }
        if (sweeps[i].kind == PPL_SWEEP_GPUS)
            pins->gpus = (int64_t)d;
        else if (sweeps[i].kind == PPL_SWEEP_GLOBAL_BATCH)
            pins->global_batch = (int64_t)d;
        /* seq_len sets the model, which ppl_whatif_run copies per point; spares
         * the goodput options there */
    }
    ppl_error lerr;
    ppl_diag quiet = {0};
    if (st == PPL_OK && ppl_topology_from_json(patched, file, "", &quiet, topo, &lerr) != PPL_OK) {
        char line[1024];
        ppl_error_format(&lerr, line, sizeof line);
        st = ppl_error_set(err, PPL_EUSAGE, "", SWEEP, "this point gives an invalid topology: %s",
                           line);
    }
    json_decref(patched);
    if (st != PPL_OK)
        return st;
    int64_t all = topo->servers * topo->gpus_per_server;
    if (pins->gpus != PPL_UNSET && pins->gpus > all)
        return ppl_error_set(err, PPL_EUSAGE, "", SWEEP,
                             "gpus=%lld exceeds the topology's %lld GPUs", (long long)pins->gpus,
                             (long long)all);
    return PPL_OK;
}

void ppl_search_totals_add(ppl_search_totals *acc, const ppl_search_result *r)
{
    acc->plans++;
    acc->candidates += r->candidates;
    acc->evaluated += r->evaluated;
    acc->feasible += r->feasible;
    acc->seconds += r->seconds;
}

json_t *ppl_search_totals_json(const ppl_search_totals *s, bool with_seconds)
{
    json_t *o = json_object();
    json_object_set_new(o, "plans", json_integer((json_int_t)s->plans));
    json_object_set_new(o, "candidates", json_integer((json_int_t)s->candidates));
    json_object_set_new(o, "evaluated", json_integer((json_int_t)s->evaluated));
    json_object_set_new(o, "feasible", json_integer((json_int_t)s->feasible));
    json_object_set_new(o, "seconds", with_seconds ? ppl_json_real(s->seconds) : json_null());
    return o;
}

ppl_status ppl_best_plan(const ppl_eval_ctx *ctx, const ppl_pins *pins, const ppl_search_opts *opts,
                         ppl_estimate *best, ppl_search_totals *acc, ppl_error *err)
{
    ppl_search_opts o = *opts;
    o.pins = pins;
    o.top = 1;
    ppl_search_result r;
    ppl_error lerr;
    ppl_status st = ppl_search(ctx, &o, &r, &lerr);
    if (st == PPL_OK)
        *best = r.results[0];
    else if (st != PPL_INFEASIBLE)
        *err = lerr;
    ppl_search_totals_add(acc, &r);
    ppl_search_free(&r);
    return st;
}

static bool swept(const ppl_whatif_opts *o, ppl_sweep_kind kind)
{
    for (int i = 0; i < o->nsweeps; i++)
        if (o->sweeps[i].kind == kind)
            return true;
    return false;
}

/* The first point that differs from point p in its spares alone (p itself when
 * none before it does): they share one plan, only the goodput changes.  The
 * grid's points run through every combination (ppl_sweep_point), so it is p
 * with each spares value at its first. */
static size_t plan_point(const ppl_whatif_opts *o, size_t p)
{
    int idx[PPL_WHATIF_MAX_SWEEPS];
    ppl_sweep_point(o->sweeps, o->nsweeps, p, idx);
    size_t q = 0;
    for (int i = 0; i < o->nsweeps; i++)
        q = q * (size_t)o->sweeps[i].nvalues +
            (size_t)(o->sweeps[i].kind == PPL_SWEEP_SPARES ? 0 : idx[i]);
    return q;
}

bool ppl_whatif_in_shard(const ppl_whatif_opts *o, size_t p)
{
    /* the points of one plan (ppl_sweep_point order) stay in one shard */
    return o->shards == 0 || plan_point(o, p) % o->shards == o->shard;
}

/* Point p's topology, pins, model (its sequence length) and context. */
static ppl_status point_env(const ppl_whatif_opts *o, size_t p, ppl_whatif_result *r,
                            ppl_pins *pins, ppl_topology *t, ppl_model *m, ppl_eval_ctx *ctx,
                            ppl_error *err)
{
    ppl_sweep_point(o->sweeps, o->nsweeps, p, r->idx);
    *pins = o->pins;
    ppl_status st =
        ppl_whatif_point(o->topology, o->file, o->sweeps, o->nsweeps, r->idx, pins, t, err);
    if (st != PPL_OK)
        return st;
    *m = *o->model;
    for (int i = 0; i < o->nsweeps; i++) {
        double s;
        char why[160];
        if (o->sweeps[i].kind != PPL_SWEEP_SEQ_LEN)
            continue;
        /* a positive integer: ppl_whatif_point checked it */
        ppl_parse_quantity(ppl_sweep_value(&o->sweeps[i], r->idx[i]), PPL_UNIT_COUNT, &s, why,
                           sizeof why);
        if ((st = ppl_model_set_seq_len(m, (int64_t)s, err)) != PPL_OK)
            return ppl_error_set(err, PPL_EUSAGE, "", SWEEP, "seq_len=%lld: %s", (long long)s,
                                 err->message);
    }
    if (o->default_batch)
        pins->global_batch = ppl_default_global_batch(m);
    if (o->ctx_init)
        o->ctx_init(o->ctx_user, ctx, m, t);
    else
        ppl_eval_ctx_init(ctx, m, t, PPL_STACK_MODERN);
    return PPL_OK;
}

/* What follows from point p's plan (r->best): time to train, goodput,
 * GPU-hours. */
static void point_finish(const ppl_whatif_opts *o, const ppl_topology *t, const ppl_eval_ctx *ctx,
                         ppl_whatif_result *r)
{
    r->ok = true;
    if (!(o->tokens > 0))
        return;
    ppl_goodput_opts g;
    if (o->goodput)
        g = *o->goodput;
    else
        ppl_goodput_opts_init(&g);
    g.gpus_per_server = (int)t->gpus_per_server;
    for (int i = 0; i < o->nsweeps; i++) {
        if (o->sweeps[i].kind != PPL_SWEEP_SPARES)
            continue;
        double s;
        char why[160];
        /* a non-negative integer: ppl_whatif_point checked it */
        ppl_parse_quantity(ppl_sweep_value(&o->sweeps[i], r->idx[i]), PPL_UNIT_COUNT, &s, why,
                           sizeof why);
        g.spare_gpus = (int64_t)s;
        g.spare_fraction = 0;
    }
    ppl_goodput_of(&g, ctx->figures.params_total, &ctx->memory, &r->best.config, ctx->stack.stack,
                   &r->goodput);
    r->failure_free_s = ppl_time_to_train_s(o->tokens, r->best.tokens_per_s);
    r->time_to_train_s = ppl_time_with_failures_s(r->failure_free_s, r->goodput.goodput);
    r->time_to_train_days = r->time_to_train_s / 86400.0;
    /* hot spares are held beside the job for the whole run */
    r->gpu_hours = ppl_gpu_hours(r->best.config.gpus + r->goodput.spare_gpus, r->time_to_train_s);
}

static ppl_status check_opts(const ppl_whatif_opts *o, ppl_error *err)
{
    if (o->nsweeps < 0 || o->nsweeps > PPL_WHATIF_MAX_SWEEPS)
        return ppl_error_set(err, PPL_EUSAGE, "", "sweep", "at most %d sweeps",
                             PPL_WHATIF_MAX_SWEEPS);
    if (swept(o, PPL_SWEEP_SPARES) && !(o->tokens > 0))
        return ppl_error_set(err, PPL_EUSAGE, "", SWEEP,
                             "spares: hot spares change the time to train; give --tokens");
    return PPL_OK;
}

/* The point before p, searched in this run, that differs from it in its GPU
 * ceiling alone, the largest of those below p's (ceiling[], 0 where not searched):
 * the best plan at a ceiling is the better of that point's and the best above its
 * ceiling.  p when there is none or the objective is not time alone. */
static size_t smaller_ceiling(const ppl_whatif_opts *o, const ppl_whatif_result *out,
                              const int64_t *ceiling, size_t p)
{
    if (o->search.objective != PPL_OBJECTIVE_TIME || o->search.no_prune)
        return p;
    size_t best = p;
    for (size_t q = 0; q < p; q++) {
        if (ceiling[q] <= 0 || ceiling[q] >= ceiling[p] ||
            (best < p && ceiling[q] <= ceiling[best]))
            continue;
        bool same = true;
        for (int i = 0; i < o->nsweeps && same; i++)
            same = o->sweeps[i].kind == PPL_SWEEP_GPUS || out[q].idx[i] == out[p].idx[i];
        if (same)
            best = q;
    }
    return best;
}

ppl_status ppl_whatif_run(const ppl_whatif_opts *o, ppl_whatif_result *out, size_t npoints,
                          ppl_error *err)
{
    ppl_status st = check_opts(o, err);
    if (st != PPL_OK)
        return st;
    ppl_search_opts search = o->search;
    search.gpus_at_most = swept(o, PPL_SWEEP_GPUS);
    memset(out, 0, npoints * sizeof *out);
    /* each point's GPU ceiling, for the points that differ from it in the GPUs alone */
    int64_t *ceiling = search.gpus_at_most ? calloc(npoints, sizeof *ceiling) : NULL;
    if (search.gpus_at_most && !ceiling)
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    for (size_t p = 0; p < npoints; p++) {
        if (o->progress)
            o->progress(o->progress_ctx, (double)p / (double)npoints);
        ppl_whatif_result *r = &out[p];
        if (!ppl_whatif_in_shard(o, p)) {
            ppl_sweep_point(o->sweeps, o->nsweeps, p, r->idx);
            continue;
        }
        ppl_pins pins;
        ppl_topology t;
        ppl_model m;
        ppl_eval_ctx ctx;
        if ((st = point_env(o, p, r, &pins, &t, &m, &ctx, err)) != PPL_OK) {
            free(ceiling);
            return st;
        }
        size_t q = plan_point(o, p);
        if (q != p) { /* the same plan as point q (in this shard too) */
            if (!out[q].ok)
                continue;
            r->best = out[q].best;
        } else {
            ppl_search_opts at = search;
            if (ceiling) {
                ceiling[p] = pins.gpus;
                size_t below = smaller_ceiling(o, out, ceiling, p);
                if (below < p) { /* its counts were searched: only those above it */
                    at.gpus_searched = ceiling[below];
                    at.seed = out[below].ok ? &out[below].best : NULL;
                    at.nseed = out[below].ok ? 1 : 0;
                }
            }
            st = ppl_best_plan(&ctx, &pins, &at, &r->best, &r->search, err);
            if (st == PPL_INFEASIBLE)
                continue;
            if (st != PPL_OK) {
                free(ceiling);
                return st;
            }
        }
        point_finish(o, &t, &ctx, r);
    }
    free(ceiling);
    return PPL_OK;
}

ppl_status ppl_whatif_merge_point(const ppl_whatif_opts *o, size_t p, const ppl_pins *plan,
                                  const ppl_search_totals *totals, ppl_whatif_result *out,
                                  ppl_error *err)
{
    ppl_status st = check_opts(o, err);
    if (st != PPL_OK)
        return st;
    memset(out, 0, sizeof *out);
    ppl_pins pins;
    ppl_topology t;
    ppl_model m;
    ppl_eval_ctx ctx;
    if ((st = point_env(o, p, out, &pins, &t, &m, &ctx, err)) != PPL_OK)
        return st;
    if (totals)
        out->search = *totals;
    if (!plan)
        return PPL_OK; /* nothing fit there */
    /* the plan a shard found at this point: within its batch and its GPUs */
    if (pins.global_batch != PPL_UNSET && plan->global_batch != pins.global_batch)
        return ppl_error_set(err, PPL_EUSAGE, "", "global_batch",
                             "%lld sequences where the point's batch is %lld",
                             (long long)plan->global_batch, (long long)pins.global_batch);
    if (pins.gpus != PPL_UNSET && plan->gpus > pins.gpus)
        return ppl_error_set(err, PPL_EUSAGE, "", "gpus", "%lld GPUs where the point offers %lld",
                             (long long)plan->gpus, (long long)pins.gpus);
    ppl_config c;
    if ((st = ppl_config_from_pins(plan, &m, &t, &c, err)) != PPL_OK)
        return st;
    ppl_estimate_config(&ctx, &c, &out->best);
    if ((st = ppl_estimate_check(&out->best, err)) != PPL_OK)
        return st;
    point_finish(o, &t, &ctx, out);
    return PPL_OK;
}

double ppl_time_to_train_s(double tokens, double tokens_per_s)
{
    return tokens / tokens_per_s;
}

double ppl_time_to_train_days(double tokens, double tokens_per_s)
{
    return ppl_time_to_train_s(tokens, tokens_per_s) / 86400.0;
}

double ppl_cost_per_million_tokens(double gpu_hour_price, int64_t gpus, double tokens_per_s)
{
    return gpu_hour_price * (double)gpus / 3600.0 / tokens_per_s * 1e6;
}

double ppl_gpu_hours(int64_t gpus, double seconds)
{
    return seconds * (double)gpus / 3600.0;
}
