/*
 * calibrate.c - measured runs against the model (see studies/calibrate.h).
 *
 * Unknown configuration fields of a run are searched over exactly as plan does
 * (with the known fields pinned) and the best predicted configuration is taken
 * as a tuned run's.  Where the run leaves unsaid a setting its software has a
 * default for (ppl_calib_spanned), the software's defaults give the span's
 * other end, and the measurement is compared with the centre.  The fit
 * alternates two steps: choose each run's configurations under the current
 * constants, then, with those configurations fixed, adjust one constant at a
 * time (multiplicative steps, shrinking) while the error falls.
 */
#include "studies/calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/knobs.h"
#include "plan/search.h"

/* The constants a prediction runs under: the committed ones, a constants file,
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
    roomier.topology.gpu.memory_bytes *= 1.0 + PPL_CALIB_MEMORY_UNCERTAINTY;
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

const char *const ppl_calib_spanned[PPL_CALIB_SPANNED] = {"recompute", "sequence_parallel", "zero",
                                                          "flash_attention", "vp"};

/* The software's own value of spanned setting k (ppl_calib_spanned order). */
static double unasked_value(ppl_stack stack, size_t k)
{
    const ppl_stack_unasked *u = ppl_stack_unasked_of(stack);
    switch (k) {
    case 0: return u->recompute;
    case 1: return u->sequence_parallel;
    case 2: return u->zero;
    case 3: return u->flash_attention;
    default: return 1.0; /* vp: no stack interleaves unasked */
    }
}

/* The spanned settings the run leaves unsaid where its software could have
 * run another value than its default. */
static unsigned unstated_of(const ppl_run *r)
{
    const ppl_stack_support *can = ppl_stack_supports(r->stack);
    const ppl_pins *a = &r->pins;
    unsigned mask = 0;
    for (size_t k = 0; k < PPL_CALIB_SPANNED; k++) {
        if (ppl_knob_pin(ppl_knob_find(ppl_calib_spanned[k]), a) != PPL_UNSET)
            continue;
        bool choice = k == 0   ? true
                      : k == 1 ? can->sequence_parallel && a->tp > 1
                      : k == 2 ? can->max_zero >= 1
                      : k == 3 ? can->flash_attention
                               : can->interleaving && a->pp != 1;
        mask |= choice ? 1u << k : 0u;
    }
    return mask;
}

/* The span's unasked end: as many of the unsaid settings `mask` at their
 * software's defaults as can run (ppl_calib_predict's rule within the pins),
 * the fastest of those; *kept the settings left at their defaults.
 * PPL_INFEASIBLE when no default can run. */
static ppl_status predict_unasked(const ppl_run *r, const ppl_constants *p, unsigned mask,
                                  ppl_estimate *out, unsigned *kept)
{
    ppl_run pinned = *r;
    for (int size = __builtin_popcount(mask); size > 0; size--) {
        bool found = false;
        for (unsigned sub = mask; sub != 0; sub = (sub - 1) & mask) {
            if (__builtin_popcount(sub) != size)
                continue;
            pinned.pins = r->pins;
            for (size_t k = 0; k < PPL_CALIB_SPANNED; k++)
                if (sub & (1u << k))
                    ppl_knob_set_pin(ppl_knob_find(ppl_calib_spanned[k]), &pinned.pins,
                                     unasked_value(r->stack, k));
            ppl_estimate e;
            ppl_error ignored;
            bool over;
            if (predict_as_made(&pinned, p, &e, NULL, &ignored, &over) == PPL_OK &&
                (!found || e.step_time_s < out->step_time_s)) {
                *out = e;
                *kept = sub;
                found = true;
            }
        }
        if (found)
            return PPL_OK;
    }
    return PPL_INFEASIBLE;
}

/* The span of a predicted run: its unasked end when it has one, and what is
 * scored. */
static void span_of(const ppl_run *r, const ppl_constants *k, ppl_calib_prediction *out)
{
    double t = out->best.step_time_s;
    out->unstated = unstated_of(r);
    out->ranged = out->unstated && predict_unasked(r, k, out->unstated, &out->unasked,
                                                   &out->defaults_kept) == PPL_OK;
    double u = out->ranged ? out->unasked.step_time_s : t;
    out->lo_s = t < u ? t : u;
    out->hi_s = t < u ? u : t;
    out->step_time_s = 0.5 * (out->lo_s + out->hi_s);
}

ppl_status ppl_calib_predict(const ppl_run *run, const ppl_constants *k, ppl_calib_prediction *out)
{
    ppl_error err;
    ppl_search_result stats = {0};
    ppl_error_clear(&err);
    memset(out, 0, sizeof *out);
    ppl_status st = predict_as_made(run, k, &out->best, &stats, &err, &out->over_memory);
    out->ok = st == PPL_OK;
    out->searched = stats.evaluated;
    if (out->ok)
        span_of(run, k, out);
    else
        snprintf(out->why, sizeof out->why, "%s",
                 st == PPL_INFEASIBLE && stats.empty_reason ? stats.empty_reason
                 : err.message[0]                           ? err.message
                                                            : "no prediction");
    return st;
}

/* What a fit holds fixed while it moves the constants: each run's tuned
 * configuration and, where the run has a span (ranged), its unasked end's; a run
 * no configuration predicts is not used.  ranged and use may be NULL: none, all. */
typedef struct {
    const ppl_config *tuned, *unasked;
    const bool *ranged, *use;
} fit_set;

/* The mean error under k, each run's context taken from ctxs[i] (built once by
 * the fit: a network's ECMP tables cost more than an estimate) with k set in it,
 * or, ctxs NULL, built here.  A run with a span is scored on its centre, as
 * validate scores it (span_of). */
static double fixed_error(const ppl_run *runs, size_t n, ppl_eval_ctx *ctxs, const fit_set *set,
                          const ppl_constants *k, double *max_err)
{
    double sum = 0.0, worst = 0.0;
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (runs[i].step_time_s <= 0 || (set->use && !set->use[i]))
            continue;
        ppl_eval_ctx own, *ctx = ctxs ? &ctxs[i] : &own;
        if (ctxs)
            ppl_eval_ctx_set_constants(ctx, k, runs[i].stack);
        else
            ctx_for(&runs[i], k, ctx);
        ppl_estimate e;
        ppl_estimate_config(ctx, &set->tuned[i], &e);
        double t = e.step_time_s;
        if (set->ranged && set->ranged[i]) {
            ppl_estimate_config(ctx, &set->unasked[i], &e);
            t = 0.5 * (t + e.step_time_s);
        }
        double err = fabs(t - runs[i].step_time_s) / runs[i].step_time_s;
        sum += err;
        if (err > worst)
            worst = err;
        used++;
    }
    if (max_err)
        *max_err = worst;
    return used ? sum / (double)used : 0.0;
}

double ppl_calib_fixed_error(const ppl_run *runs, size_t n, const ppl_config *configs,
                             const bool *use, const ppl_constants *k, double *max_err)
{
    const fit_set set = {.tuned = configs, .use = use};
    return fixed_error(runs, n, NULL, &set, k, max_err);
}

/* The fit's objective: the mean absolute step-time error as validate reports it,
 * a run with a span on its centre (span_of; the rule: never on the
 * fastest).  The configurations come from the search under the constants of the
 * round (the tuned end) and from the software's unasked defaults (the other end).
 * Fitted to the tuned end alone, as until December 2026, the constants predicted
 * every run whose end differs too slow at its centre: on the 61 runs of
 * tests/data/runs-fit.json, 4.7% in sample against 3.7%, and leaving each of the
 * 11 source families of the 58 shared runs out, 7.0% against 5.1% (llm-foundry's
 * 7.0% against 5.1%, Megatron-Bridge's 6.7% against 8.0%); H100's GEMMs went from
 * 0.56 to 0.64 of the peak, where llm-foundry's FSDP runs, which have no span,
 * had been 4-12% slow at 0.56.  The worry that kept the tuned end, that a centre
 * lets the constants absorb what nobody knows of a run, held when tensor-parallel
 * overlap was a fitted share (it reached its bound of 1.0, width_half fell to 11);
 * at the centre no constant now reaches a bound.  (A pull on the worst run, mean +
 * w x max with w = 0.1, 0.25, 0.5, gave 6.1-6.6% cross-validated mean error
 * against 5.9% for the mean alone: it bent the constants to one run's structural
 * error.) */
static double fit_objective(const ppl_run *runs, size_t n, ppl_eval_ctx *ctxs, const fit_set *set,
                            const ppl_constants *p)
{
    return fixed_error(runs, n, ctxs, set, p, NULL);
}

/* How far constant k can move, with the configurations fixed, before the mean
 * error rises by half a point: [lo, hi].  A range that reaches a bound of the
 * constant means the runs do not pin it down. */
static void sensitivity(const ppl_run *runs, size_t n, ppl_eval_ctx *ctxs, const fit_set *set,
                        const ppl_constants *p, ppl_calib_range *out)
{
    size_t ninfo;
    const ppl_constant_info *info = ppl_constant_infos(&ninfo);
    double base = fit_objective(runs, n, ctxs, set, p);
    for (size_t k = 0; k < ninfo; k++) {
        double v = *ppl_constant_at((ppl_constants *)p, &info[k]);
        for (int dir = -1; dir <= 1; dir += 2) {
            double ok = v;
            for (int j = 1; j <= 100; j++) {
                ppl_constants q = *p;
                double *w = ppl_constant_at(&q, &info[k]);
                /* 3% of the value a step, or 1% of the range for a value near 0
                 * (a multiple of 1e-6 would never leave it) */
                const double span = info[k].hi - info[k].lo;
                double step = fabs(v) >= 0.01 * span ? fabs(v) * 0.03 * j : span * 0.01 * j;
                *w = v + dir * step;
                bool at_bound = *w <= info[k].lo || *w >= info[k].hi;
                *w = *w < info[k].lo ? info[k].lo : *w > info[k].hi ? info[k].hi : *w;
                if (fit_objective(runs, n, ctxs, set, &q) > base + PPL_CALIB_RANGE_RISE)
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

/* Coordinate descent over the constants with the configurations fixed, from
 * the error `current` it has; returns the error reached. */
static double descend(const ppl_run *runs, size_t n, ppl_eval_ctx *ctxs, const fit_set *set,
                      ppl_constants *p, double current)
{
    size_t ninfo;
    const ppl_constant_info *info = ppl_constant_infos(&ninfo);
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
                    double value = fit_objective(runs, n, ctxs, set, &q);
                    if (value < current - 1e-9) {
                        current = value;
                        *p = q;
                        improved = true;
                    }
                }
            }
        }
    }
    return current;
}

ppl_status ppl_calib_fit(const ppl_run *runs, size_t n, ppl_constants *p,
                         const ppl_calib_fit_opts *opts, ppl_calib_fit_record *out, ppl_error *err)
{
    static const ppl_calib_fit_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    if (out)
        memset(out, 0, sizeof *out);
    if (opts->rounds < 0)
        return ppl_error_set(err, PPL_EUSAGE, "", "rounds", "a fit runs 0 or more rounds, not %d",
                             opts->rounds);
    int rounds = opts->rounds > 0 ? opts->rounds : PPL_CALIB_FIT_ROUNDS;
    const char *what = opts->label ? opts->label : "";
    size_t ninfo;
    ppl_constant_infos(&ninfo);
    ppl_config *tuned = calloc(n ? n : 1, sizeof *tuned);
    ppl_config *unasked = calloc(n ? n : 1, sizeof *unasked);
    bool *use = calloc(n ? n : 1, sizeof *use);
    bool *ranged = calloc(n ? n : 1, sizeof *ranged);
    ppl_calib_range *ranges = out ? calloc(ninfo, sizeof *ranges) : NULL;
    ppl_eval_ctx *ctxs = calloc(n ? n : 1, sizeof *ctxs);
    const fit_set set = {tuned, unasked, ranged, use};
    ppl_status st = PPL_OK;
    if (!tuned || !unasked || !use || !ranged || (out && !ranges) || !ctxs) {
        free(ranges);
        st = ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
        goto done;
    }
    /* each run's context once: the descent only sets the constants in it */
    for (size_t i = 0; i < n; i++)
        ppl_eval_ctx_init(&ctxs[i], &runs[i].model, &runs[i].topology, runs[i].stack);
    double current = 0.0;
    for (int round = 0; round < rounds; round++) {
        for (size_t i = 0; i < n; i++) {
            /* both ends as validate predicts them (ppl_calib_predict) */
            ppl_calib_prediction pr;
            use[i] = ppl_calib_predict(&runs[i], p, &pr) == PPL_OK;
            ranged[i] = use[i] && pr.ranged;
            if (use[i])
                tuned[i] = pr.best.config;
            if (ranged[i])
                unasked[i] = pr.unasked.config;
        }
        current = descend(runs, n, ctxs, &set, p, fit_objective(runs, n, ctxs, &set, p));
        if (opts->progress)
            opts->progress(opts->progress_ctx, what, round + 1, current);
    }
    if (out) {
        sensitivity(runs, n, ctxs, &set, p, ranges);
        out->objective = current;
        out->rounds = rounds;
        for (size_t i = 0; i < n; i++)
            out->runs_used += use[i] && runs[i].step_time_s > 0;
        out->ranges = ranges;
        out->nranges = ninfo;
    }
done:
    free(tuned);
    free(unasked);
    free(use);
    free(ranged);
    free(ctxs);
    return st;
}

double ppl_calib_error(const ppl_run *r, const ppl_calib_prediction *p)
{
    return p->ok && r->step_time_s > 0 ? (p->step_time_s - r->step_time_s) / r->step_time_s : NAN;
}

void ppl_calib_summarize_group(const ppl_run *runs, const ppl_calib_prediction *p, size_t n,
                               const int *group, int g, ppl_calib_summary *out)
{
    double sum = 0.0, worst = 0.0;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        if (group && group[i] != g)
            continue;
        double error = ppl_calib_error(&runs[i], &p[i]);
        out->not_predicted += !p[i].ok;
        if (isfinite(error)) {
            sum += fabs(error);
            worst = fabs(error) > worst ? fabs(error) : worst;
            out->within_10 += fabs(error) <= 0.10;
            out->runs++;
        }
    }
    out->mean_abs = out->runs ? sum / (double)out->runs : 0.0;
    out->max_abs = worst;
    out->share_within_10 = out->runs ? (double)out->within_10 / (double)out->runs : 0.0;
}

void ppl_calib_summarize(const ppl_run *runs, const ppl_calib_prediction *p, size_t n,
                         ppl_calib_summary *out)
{
    ppl_calib_summarize_group(runs, p, n, NULL, 0, out);
}

bool ppl_calib_loose(const ppl_constant_info *f, double v, const ppl_calib_range *r)
{
    double span = f->hi - f->lo;
    return v > 1e-3 * span ? v - r->lo > 0.5 * v || r->hi - v > 0.5 * v
                           : r->hi > 0.1 * span; /* at zero: may it leave it? */
}

void ppl_calib_fit_record_free(ppl_calib_fit_record *record)
{
    if (!record)
        return;
    free(record->ranges);
    memset(record, 0, sizeof *record);
}

/* Each group is predicted with the constants fitted on the others, starting
 * from `start`. */
ppl_status ppl_calib_cv_groups(const ppl_run *runs, size_t n, const int *group, int groups,
                               const ppl_constants *start, const ppl_calib_fit_opts *opts,
                               ppl_calib_prediction *out, ppl_error *err)
{
    if (groups < 1 || (size_t)groups > n)
        return ppl_error_set(err, PPL_EUSAGE, "", "folds",
                             "cross-validation needs 1 to %zu folds for %zu runs, not %d", n, n,
                             groups);
    for (size_t i = 0; i < n; i++)
        if (group[i] < 0 || group[i] >= groups)
            return ppl_error_set(err, PPL_EUSAGE, "", "folds",
                                 "run %zu is in fold %d, outside 1 to %d", i + 1, group[i] + 1,
                                 groups);
    ppl_run *train = malloc(n * sizeof *train);
    if (!train)
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    ppl_calib_fit_opts o = {0};
    if (opts)
        o = *opts;
    for (int f = 0; f < groups; f++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (group[i] != f)
                train[m++] = runs[i];
        ppl_constants p = *start;
        char what[32];
        snprintf(what, sizeof what, "cv fold %d/%d", f + 1, groups);
        o.label = what;
        ppl_status st = ppl_calib_fit(train, m, &p, &o, NULL, err);
        if (st != PPL_OK) {
            free(train);
            return st;
        }
        for (size_t i = 0; i < n; i++)
            if (group[i] == f) {
                ppl_calib_predict(&runs[i], &p, &out[i]);
                out[i].fold = f + 1;
            }
    }
    free(train);
    return PPL_OK;
}

ppl_status ppl_calib_cv(const ppl_run *runs, size_t n, int folds, const ppl_constants *start,
                        const ppl_calib_fit_opts *opts, ppl_calib_prediction *out, ppl_error *err)
{
    if (folds < 1 || (size_t)folds > n)
        return ppl_error_set(err, PPL_EUSAGE, "", "folds",
                             "cross-validation needs 1 to %zu folds for %zu runs, not %d", n, n,
                             folds);
    int *group = malloc(n * sizeof *group);
    if (!group)
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    for (size_t i = 0; i < n; i++)
        group[i] = (int)(i % (size_t)folds);
    ppl_status st = ppl_calib_cv_groups(runs, n, group, folds, start, opts, out, err);
    free(group);
    return st;
}

int ppl_calib_families(const ppl_run *runs, size_t n, int *group)
{
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        group[i] = count;
        for (size_t j = 0; j < i; j++)
            if (strcmp(runs[j].family, runs[i].family) == 0) {
                group[i] = group[j];
                break;
            }
        count += group[i] == count;
    }
    return count;
}

/* FNV-1a, 64-bit: offset basis 14695981039346656037, prime 1099511628211
 * (Fowler, Noll and Vo; the parameters of the IETF draft
 * draft-eastlake-fnv). */
ppl_status ppl_calib_file_hash(const char *path, char out[17], ppl_error *err)
{
    uint64_t h = 14695981039346656037ULL;
    FILE *f = fopen(path, "rb");
    int ch;
    while (f && (ch = getc(f)) != EOF)
        h = (h ^ (uint64_t)(unsigned char)ch) * 1099511628211ULL;
    bool failed = !f || ferror(f);
    if (f)
        fclose(f);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
    if (failed)
        return ppl_error_set(err, PPL_EINPUT, path, "", "cannot read the file to hash it");
    return PPL_OK;
}
