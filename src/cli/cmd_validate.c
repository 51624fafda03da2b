/*
 * cmd_validate.c - `parplan validate`: predict measured runs, report the error;
 * with --fit, fit the efficiency constants to them first.
 *
 * Unknown configuration fields of a run are searched over exactly as plan does
 * (with the known fields pinned) and the best predicted configuration is compared
 * with the measurement.  The fit alternates two steps: choose each run's best
 * configuration under the current constants, then, with those configurations
 * fixed, adjust one constant at a time (multiplicative steps, shrinking) while the
 * error falls.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"

/* The constants a prediction runs under: the committed ones, a --constants file,
 * or a fit's. */
static void ctx_for(const ppl_run *r, const ppl_constants *k, ppl_eval_ctx *ctx)
{
    ppl_eval_ctx_init(ctx, &r->model, &r->topology, r->stack);
    ppl_eval_ctx_set_constants(ctx, k, r->stack);
}

/* Best configuration of one run under the given constants. */
static ppl_status predict(const ppl_run *r, const ppl_constants *p, ppl_estimate *best,
                          ppl_search_result *stats, ppl_error *err)
{
    ppl_eval_ctx ctx;
    ctx_for(r, p, &ctx);
    ppl_search_opts o = {.pins = &r->pins, .top = 1, .objective = PPL_OBJECTIVE_TIME};
    ppl_search_result res;
    ppl_status st = ppl_search(&ctx, &o, &res, err);
    if (st == PPL_OK)
        *best = res.results[0];
    if (stats) {
        *stats = res;
        stats->results = NULL;
    }
    ppl_search_free(&res);
    return st;
}

/* The memory model's stated uncertainty.  A run was made, so a configuration the
 * model puts over the GPU's memory by less than this may be what ran: it counts as
 * feasible, ranked as if slower by the share of memory it is over, rather than
 * the run flipping to another schedule or going unpredicted. */
#define MEMORY_UNCERTAINTY 0.10

/* What the run most likely was: the best configuration that fits, or the best one
 * within the memory uncertainty when it is faster even after its penalty.  *over
 * says the second was taken and is over the GPU's memory. */
static ppl_status predict_as_made(const ppl_run *r, const ppl_constants *p, ppl_estimate *best,
                                  ppl_search_result *stats, ppl_error *err, bool *over)
{
    ppl_search_result s1 = {0}, s2 = {0};
    ppl_status st = predict(r, p, best, &s1, err);
    *over = false;
    if (stats)
        *stats = s1;
    if (st != PPL_OK && !(st == PPL_INFEASIBLE && s1.evaluated > 0))
        return st;
    ppl_run roomier = *r;
    roomier.topology.gpu.memory_bytes *= 1.0 + MEMORY_UNCERTAINTY;
    ppl_estimate near;
    ppl_error err2;
    if (predict(&roomier, p, &near, &s2, &err2) != PPL_OK)
        return st;
    double capacity = r->topology.gpu.memory_bytes;
    double share = near.memory.total / capacity - 1.0;
    if (share <= 0.0 || (st == PPL_OK && near.step_time_s * (1.0 + share) >= best->step_time_s))
        return st;
    *best = near;
    *over = true;
    /* report the real GPU: over its memory, by what the model says */
    best->memory.capacity = capacity;
    best->memory.fits = false;
    if (stats)
        *stats = s2;
    return PPL_OK;
}

/* Mean and max absolute relative step-time error with configurations fixed, over
 * the runs with a measured step time and a configuration (use[i]). */
static double fixed_error(const ppl_run *runs, size_t n, const ppl_config *configs, const bool *use,
                          const ppl_constants *p, double *max_err)
{
    double sum = 0.0, worst = 0.0;
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (runs[i].step_time_s <= 0 || !use[i])
            continue;
        ppl_eval_ctx ctx;
        ctx_for(&runs[i], p, &ctx);
        ppl_estimate e;
        ppl_estimate_config(&ctx, &configs[i], &e);
        double err = fabs(e.step_time_s - runs[i].step_time_s) / runs[i].step_time_s;
        sum += err;
        if (err > worst)
            worst = err;
        used++;
    }
    if (max_err)
        *max_err = worst;
    return used ? sum / (double)used : 0.0;
}

/* The fit's objective: the mean absolute step-time error, what validate reports.
 * (A pull on the worst run, mean + w x max with w = 0.1, 0.25, 0.5, gave 6.1-6.6%
 * cross-validated mean error against 5.9% for the mean alone: it bent the
 * constants to one run's structural error.) */
static double fit_objective(const ppl_run *runs, size_t n, const ppl_config *configs,
                            const bool *use, const ppl_constants *p)
{
    return fixed_error(runs, n, configs, use, p, NULL);
}

/* Fits p to the runs: choose each run's best configuration under the current
 * constants, then move one constant at a time while the error falls; three
 * rounds.  A run no configuration fits is left out of that round. */
/* How far constant k can move, with the configurations fixed, before the mean
 * error rises by half a point: [lo, hi].  A range that reaches a bound of the
 * constant means the runs do not pin it down. */
typedef struct pin_range {
    double lo, hi, mean;
} pin_range;

static void sensitivity(const ppl_run *runs, size_t n, const ppl_config *configs, const bool *use,
                        const ppl_constants *p, pin_range *out)
{
    size_t ninfo;
    const ppl_constant_info *info = ppl_constant_infos(&ninfo);
    double base = fixed_error(runs, n, configs, use, p, NULL);
    for (size_t k = 0; k < ninfo; k++) {
        double v = *ppl_constant_at((ppl_constants *)p, &info[k]);
        out[k].mean = base;
        for (int dir = -1; dir <= 1; dir += 2) {
            double ok = v;
            for (int j = 1; j <= 100; j++) {
                ppl_constants q = *p;
                double *w = ppl_constant_at(&q, &info[k]);
                double step = v != 0.0 ? v * 0.03 * j : (info[k].hi - info[k].lo) * 0.01 * j;
                *w = v + dir * step;
                bool at_bound = *w <= info[k].lo || *w >= info[k].hi;
                *w = *w < info[k].lo ? info[k].lo : *w > info[k].hi ? info[k].hi : *w;
                if (fixed_error(runs, n, configs, use, &q, NULL) > base + 0.005)
                    break;
                ok = *w;
                if (at_bound)
                    break;
            }
            if (dir < 0)
                out[k].lo = ok;
            else
                out[k].hi = ok;
        }
    }
}

static ppl_status fit(cli *c, const ppl_run *runs, size_t n, ppl_constants *p, const char *what,
                      pin_range *ranges)
{
    size_t ninfo;
    const ppl_constant_info *info = ppl_constant_infos(&ninfo);
    ppl_config *configs = calloc(n ? n : 1, sizeof *configs);
    bool *use = calloc(n ? n : 1, sizeof *use);
    if (!configs || !use) {
        free(configs);
        free(use);
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    }
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < n; i++) {
            ppl_estimate best;
            ppl_error err;
            bool over;
            use[i] = predict_as_made(&runs[i], p, &best, NULL, &err, &over) == PPL_OK;
            if (use[i])
                configs[i] = best.config;
        }
        double current = fit_objective(runs, n, configs, use, p);
        for (double step = 0.3; step > 0.005; step *= 0.5) {
            bool improved = true;
            while (improved) {
                improved = false;
                for (size_t k = 0; k < ninfo; k++) {
                    for (int dir = -1; dir <= 1; dir += 2) {
                        ppl_constants q = *p;
                        double *v = ppl_constant_at(&q, &info[k]);
                        double base = *v != 0.0 ? *v : (info[k].hi - info[k].lo) * 0.05;
                        *v = base * (1.0 + dir * step);
                        *v = *v < info[k].lo ? info[k].lo : *v > info[k].hi ? info[k].hi : *v;
                        double value = fit_objective(runs, n, configs, use, &q);
                        if (value < current - 1e-9) {
                            current = value;
                            *p = q;
                            improved = true;
                        }
                    }
                }
            }
        }
        fprintf(stderr, "parplan: %sfit round %d: objective %.4f\n", what, round + 1, current);
    }
    if (ranges)
        sensitivity(runs, n, configs, use, p, ranges);
    free(configs);
    free(use);
    return PPL_OK;
}

static void describe_short(const ppl_config *c, char *buf, size_t size)
{
    char cp[32] = "", rc[32];
    if (c->cp > 1)
        snprintf(cp, sizeof cp, " cp%lld", (long long)c->cp);
    snprintf(buf, size, "tp%lld pp%lld dp%lld%s vp%lld mbs%lld z%d %s%s%s", (long long)c->tp,
             (long long)c->pp, (long long)c->dp, cp, (long long)c->vp, (long long)c->mbs, c->zero,
             ppl_recompute_label(c, rc, sizeof rc), c->sequence_parallel ? " sp" : "",
             c->flash_attention ? " flash" : "");
}

/* FNV-1a (64-bit) of a file, in hex: which runs file a fit saw. */
static void file_hash(const char *path, char *out, size_t size)
{
    uint64_t h = 14695981039346656037ULL;
    FILE *f = fopen(path, "rb");
    int ch;
    while (f && (ch = getc(f)) != EOF)
        h = (h ^ (uint64_t)(unsigned char)ch) * 1099511628211ULL;
    if (f)
        fclose(f);
    snprintf(out, size, "%016llx", (unsigned long long)h);
}

/* One run's prediction: its best configuration, or why there is none. */
typedef struct prediction {
    bool ok;
    ppl_estimate best;
    size_t searched;
    int fold;         /* with --cv: the fold the run was held out in; else -1 */
    bool over_memory; /* fits only within the memory model's uncertainty */
    char why[PPL_ERROR_MSG_MAX];
} prediction;

static void predict_one(const ppl_run *r, const ppl_constants *p, prediction *out)
{
    ppl_error err;
    ppl_search_result stats = {0};
    ppl_error_clear(&err);
    ppl_status st = predict_as_made(r, p, &out->best, &stats, &err, &out->over_memory);
    out->ok = st == PPL_OK;
    out->searched = stats.evaluated;
    out->why[0] = '\0';
    if (!out->ok)
        snprintf(out->why, sizeof out->why, "%s",
                 st == PPL_INFEASIBLE && stats.empty_reason ? stats.empty_reason
                 : err.message[0]                           ? err.message
                                                            : "no prediction");
}

/* K-fold cross-validation: run i is in fold i mod K; each fold is predicted with
 * the constants fitted on the others, starting from the hand-set values (ppl_constants_start) or
 * --constants. */
static ppl_status cross_validate(cli *c, const ppl_run *runs, size_t n, int k,
                                 const ppl_constants *start, prediction *out)
{
    ppl_run *train = malloc((n ? n : 1) * sizeof *train);
    if (!train)
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    for (int f = 0; f < k; f++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if ((int)(i % (size_t)k) != f)
                train[m++] = runs[i];
        ppl_constants p = *start;
        char what[32];
        snprintf(what, sizeof what, "cv fold %d/%d: ", f + 1, k);
        ppl_status st = fit(c, train, m, &p, what, NULL);
        if (st != PPL_OK) {
            free(train);
            return st;
        }
        for (size_t i = (size_t)f; i < n; i += (size_t)k) {
            predict_one(&runs[i], &p, &out[i]);
            out[i].fold = f + 1;
        }
    }
    free(train);
    return PPL_OK;
}

ppl_status cmd_validate(cli *c)
{
    const ppl_args *a = c->args;
    ppl_run *runs;
    size_t n;
    ppl_status st = ppl_runs_load(a->runs, &c->diag, &runs, &n, &c->err);
    if (st != PPL_OK)
        return st;
    prediction *pred = calloc(n ? n : 1, sizeof *pred);
    if (!pred) {
        ppl_runs_free(runs);
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    }
    char runs_hash[24];
    file_hash(a->runs, runs_hash, sizeof runs_hash);
    /* the committed constants, or those of --constants; a fit starts from them */
    ppl_constants params = c->constants;
    if ((a->fit || a->cv_folds > 0) && !a->constants_path)
        params = *ppl_constants_start();
    int folds = a->cv_folds > 0 ? (int)a->cv_folds : 0;
    if (folds > 0 && (size_t)folds > n)
        folds = (int)n;
    if (folds > 0)
        st = cross_validate(c, runs, n, folds, &params, pred);
    size_t ninfo;
    const ppl_constant_info *info = ppl_constant_infos(&ninfo);
    pin_range *ranges = calloc(ninfo, sizeof *ranges);
    if (!ranges) {
        free(pred);
        ppl_runs_free(runs);
        return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "out of memory");
    }
    if (folds == 0 && a->fit)
        st = fit(c, runs, n, &params, "", ranges);
    if (st != PPL_OK) {
        free(ranges);
        free(pred);
        ppl_runs_free(runs);
        return st;
    }
    if (folds == 0)
        for (size_t i = 0; i < n; i++) {
            predict_one(&runs[i], &params, &pred[i]);
            pred[i].fold = -1;
        }

    json_t *doc = NULL, *list = NULL;
    ppl_table t;
    ppl_table_init(&t, 8, "lrrrrrll");
    if (a->json) {
        doc = ppl_json_document();
        list = json_array();
        json_object_set_new(doc, "runs_file", json_string(a->runs));
        json_object_set_new(doc, "results", list);
    } else {
        static const char *const header[] = {
            "run",     "measured",  "predicted", "error",
            "TFLOP/s", "predicted", "stack",     "predicted configuration"};
        ppl_table_row(&t, header);
    }
    double sum = 0.0, worst = 0.0;
    size_t used = 0, within10 = 0, failed = 0, assumed = 0, over = 0;
    for (size_t i = 0; i < n; i++) {
        const ppl_run *r = &runs[i];
        const prediction *p = &pred[i];
        const ppl_estimate *best = &p->best;
        double error = p->ok && r->step_time_s > 0
                           ? (best->step_time_s - r->step_time_s) / r->step_time_s
                           : NAN;
        failed += !p->ok;
        if (isfinite(error)) {
            sum += fabs(error);
            worst = fabs(error) > worst ? fabs(error) : worst;
            within10 += fabs(error) <= 0.10;
            used++;
        }
        if (list) {
            json_t *e = json_object(), *meas = json_object();
            json_object_set_new(e, "id", json_string(r->id));
            json_object_set_new(e, "stack", json_string(ppl_stack_name(r->stack)));
            json_object_set_new(e, "stack_assumed", json_boolean(r->stack_assumed));
            if (r->software[0])
                json_object_set_new(e, "software", json_string(r->software));
            json_object_set_new(e, "predicted",
                                p->ok ? ppl_estimate_json(best, &r->model) : json_null());
            if (!p->ok)
                json_object_set_new(e, "error_message", json_string(p->why));
            if (r->step_time_s > 0)
                json_object_set_new(meas, "step_time_s", ppl_json_real(r->step_time_s));
            if (r->tflops_per_gpu > 0)
                json_object_set_new(meas, "tflops_per_gpu", ppl_json_real(r->tflops_per_gpu));
            if (r->mfu > 0)
                json_object_set_new(meas, "mfu", ppl_json_real(r->mfu));
            if (r->memory_bytes > 0)
                json_object_set_new(meas, "memory_bytes", ppl_json_real(r->memory_bytes));
            json_object_set_new(e, "measured", meas);
            json_object_set_new(e, "error", isfinite(error) ? ppl_json_real(error) : json_null());
            if (p->fold > 0)
                json_object_set_new(e, "fold", json_integer(p->fold));
            json_object_set_new(e, "over_memory", json_boolean(p->over_memory));
            json_object_set_new(e, "searched", json_integer((json_int_t)p->searched));
            json_array_append_new(list, e);
            continue;
        }
        char meas[32], prd[32], errs[32], cfg[PPL_ERROR_MSG_MAX + 16], tf[32], tfp[48];
        snprintf(meas, sizeof meas, r->step_time_s > 0 ? "%.3f s" : "-", r->step_time_s);
        snprintf(tf, sizeof tf, r->tflops_per_gpu > 0 ? "%.0f" : "-", r->tflops_per_gpu);
        if (p->ok) {
            snprintf(prd, sizeof prd, "%.3f s", best->step_time_s);
            snprintf(errs, sizeof errs, isfinite(error) ? "%+.1f%%" : "-", 100.0 * error);
            describe_short(&best->config, cfg, sizeof cfg);
            if (p->over_memory) {
                size_t len = strlen(cfg);
                snprintf(cfg + len, sizeof cfg - len, " (memory +%.0f%%)",
                         100.0 * MEMORY_UNCERTAINTY);
                over += 1;
            }
            snprintf(tfp, sizeof tfp, "%.0f (%.0f hw)", best->model_tflops_per_gpu,
                     best->hardware_tflops_per_gpu);
        } else {
            snprintf(prd, sizeof prd, "-");
            snprintf(errs, sizeof errs, "-");
            snprintf(tfp, sizeof tfp, "-");
            snprintf(cfg, sizeof cfg, "not predicted: %s", p->why);
        }
        char stack[48];
        snprintf(stack, sizeof stack, "%s%s", ppl_stack_name(r->stack),
                 r->stack_assumed ? "*" : "");
        assumed += r->stack_assumed;
        const char *row[8] = {r->id, meas, prd, errs, tf, tfp, stack, cfg};
        ppl_table_row(&t, row);
    }
    double mean = used ? sum / (double)used : 0.0;
    double share = used ? (double)within10 / (double)used : 0.0;
    const char *how = folds > 0 ? "cross-validated" : a->fit ? "fitted in sample" : "as committed";
    if (doc) {
        json_t *agg = json_object();
        json_object_set_new(agg, "runs", json_integer((json_int_t)used));
        json_object_set_new(agg, "not_predicted", json_integer((json_int_t)failed));
        json_object_set_new(agg, "mean_abs_error", ppl_json_real(mean));
        json_object_set_new(agg, "max_abs_error", ppl_json_real(worst));
        json_object_set_new(agg, "within_10_percent", ppl_json_real(share));
        json_object_set_new(agg, "constants", json_string(how));
        if (folds > 0)
            json_object_set_new(agg, "folds", json_integer(folds));
        json_object_set_new(doc, "aggregate", agg);
        if (a->fit && folds == 0) {
            /* a constants file (--constants): the values and how they were fitted */
            json_object_set_new(doc, "constants", ppl_constants_json(&params));
            json_t *rec = json_object(), *pins = json_object();
            json_object_set_new(rec, "runs", json_string(a->runs));
            json_object_set_new(rec, "runs_fnv1a64", json_string(runs_hash));
            json_object_set_new(rec, "start",
                                json_string(a->constants_path ? a->constants_path : "hand-set"));
            json_object_set_new(rec, "optimiser",
                                json_string("coordinate descent, multiplicative steps 0.3 "
                                            "halving to 0.005, objective the mean "
                                            "absolute error, configurations re-chosen in each "
                                            "of 3 rounds"));
            json_object_set_new(rec, "mean_abs_error", ppl_json_real(mean));
            for (size_t k = 0; k < ninfo; k++) {
                json_t *r = json_array();
                json_array_append_new(r, ppl_json_real(ranges[k].lo));
                json_array_append_new(r, ppl_json_real(ranges[k].hi));
                json_object_set_new(pins, info[k].name, r);
            }
            json_object_set_new(rec, "within_half_a_point", pins);
            json_object_set_new(doc, "fit", rec);
        }
        st = cli_emit_json(c, doc);
    } else {
        ppl_table_render(&t, &c->out, "");
        ppl_buf_printf(&c->out, "\nstep time over %zu runs (%s", used, how);
        if (folds > 0)
            ppl_buf_printf(&c->out, ", %d folds", folds);
        ppl_buf_printf(&c->out, "): mean absolute error %.1f%%, max %.1f%%, %.0f%% within 10%%\n",
                       100.0 * mean, 100.0 * worst, 100.0 * share);
        if (failed > 0)
            ppl_buf_printf(&c->out, "not predicted: %zu run%s\n", failed, failed == 1 ? "" : "s");
        if (over > 0)
            ppl_buf_printf(&c->out,
                           "(memory +%.0f%%): the model puts the configuration over the GPU's "
                           "memory by less than its uncertainty; taken as faster even when "
                           "ranked slower by the share it is over\n",
                           100.0 * MEMORY_UNCERTAINTY);
        if (assumed > 0)
            ppl_buf_printf(&c->out,
                           "* stack assumed: the run names no software parplan knows (flash "
                           "attention taken as megatron-core, none as megatron-lm-2021)\n");
        if (a->fit && folds == 0) {
            ppl_buf_printf(&c->out, "\nfitted constants (validate --fit --json writes a "
                                    "constants file for --constants):\n");
            ppl_buf_printf(&c->out, "  %-18s %10s  %-21s  %s\n", "constant", "value",
                           "range (+0.5 point)", "unit");
            for (size_t k = 0; k < ninfo; k++) {
                const ppl_constant_info *f = &info[k];
                /* loose: half a point of error lets it move by half its value */
                double v = *ppl_constant_at(&params, f);
                double span = f->hi - f->lo;
                bool loose = v > 1e-3 * span
                                 ? v - ranges[k].lo > 0.5 * v || ranges[k].hi - v > 0.5 * v
                                 : ranges[k].hi > 0.1 * span; /* at zero: may it leave it? */
                char range[48];
                snprintf(range, sizeof range, "%.4g..%.4g", ranges[k].lo, ranges[k].hi);
                ppl_buf_printf(&c->out, "  %-18s %10.4f  %-21s  %s%s\n", f->name,
                               *ppl_constant_at(&params, f), range, f->unit,
                               loose ? "  (not pinned down by these runs)" : "");
            }
        }
    }
    ppl_table_free(&t);
    free(ranges);
    free(pred);
    ppl_runs_free(runs);
    if (st == PPL_OK && failed > 0) {
        /* SPEC 1.1: every run is reported; exit 1 when one was not predicted */
        ppl_error_set(&c->err, PPL_INFEASIBLE, "", "", "%zu of %zu runs not predicted", failed, n);
        return PPL_INFEASIBLE;
    }
    return st;
}
