/*
 * studies/calibrate.h - measured runs against the model: prediction, error, fit.
 *
 * What `parplan validate` computes, as library calls.  A measured run (runs.h)
 * pins the configuration fields it knows; the others are searched over exactly
 * as plan does, and the fastest predicted configuration is taken as a tuned
 * run's (ppl_calib_predict); where the run leaves unsaid a setting its software
 * has a default for, the software's defaults give a span's other end, and the
 * run is scored on the span's centre.  With the configurations fixed, the error
 * of a set of runs is the mean absolute relative step-time error of their
 * predictions, a span's the mean of its two ends', what the fit lowers
 * (ppl_calib_fixed_error, for runs without spans).  The fit
 * (ppl_calib_fit) moves the constants of constants.h to lower that error:
 * coordinate descent, one constant at a time, multiplicative steps of 0.3
 * halving down to 0.005, each constant kept within its bounds
 * (ppl_constant_infos); the configurations are chosen again under the current
 * constants at the start of each of PPL_CALIB_FIT_ROUNDS rounds.  K-fold
 * cross-validation (ppl_calib_cv) predicts each run with constants fitted on the
 * other folds.
 *
 * Nothing here prints: progress goes through a callback, failures through the
 * status and a ppl_error.  Step times are in seconds, errors are fractions
 * (0.05 is 5%), memory in bytes.
 */
#ifndef PARPLAN_CALIBRATE_H
#define PARPLAN_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost/config.h"
#include "base/constants.h"
#include "parplan/error.h"
#include "studies/runs.h"
#include "cost/estimate.h"

/* The memory model's stated uncertainty, a fraction of the GPU's memory.  A run
 * was made, so a configuration the model puts over the GPU's memory by less than
 * this may be what ran: it counts as feasible, ranked as if slower by the share
 * of memory it is over, rather than the run flipping to another schedule or
 * going unpredicted. */
#define PPL_CALIB_MEMORY_UNCERTAINTY 0.10

/* Rounds of a fit unless its options say otherwise: the configurations are
 * chosen again at the start of each. */
#define PPL_CALIB_FIT_ROUNDS 3

/* How far a constant may move before the fit's error rises by this much (half
 * a point) gives its sensitivity range. */
#define PPL_CALIB_RANGE_RISE 0.005

/* The settings a measured run may leave unsaid that a team either leaves at
 * its software's default (ppl_stack_unasked) or sets as a tuned run would:
 * "recompute", "sequence_parallel", "zero", "flash_attention", "vp" (knob
 * names, knobs.h); PPL_CALIB_SPANNED of them. */
#define PPL_CALIB_SPANNED 5
extern const char *const ppl_calib_spanned[PPL_CALIB_SPANNED];

/* One run's prediction.  Where the run leaves some of ppl_calib_spanned unsaid
 * and its software's defaults could have run, the prediction is a span: the
 * tuned end (best: every unsaid setting searched, the fastest taken) and the
 * unasked end (unasked: as many unsaid settings at their defaults as fit, the
 * fastest of those); what is scored is its centre, never its fastest end. */
typedef struct ppl_calib_prediction {
    bool ok;           /* a configuration was found: best holds it */
    ppl_estimate best; /* the tuned end, and what ran when there is no span */
    unsigned unstated; /* bit k: ppl_calib_spanned[k] unsaid, and the stack has a choice */
    bool ranged;       /* unasked holds the other end of a span */
    ppl_estimate unasked;
    unsigned defaults_kept; /* bit k: ppl_calib_spanned[k] at its default in unasked */
    double step_time_s;     /* what is scored: the span's centre, else best's step time */
    double lo_s, hi_s;      /* the span's ends (both best's step time without one) */
    /* best is over the GPU's memory by less than PPL_CALIB_MEMORY_UNCERTAINTY
     * (best.memory.fits false, best.memory.capacity the real GPU's bytes) */
    bool over_memory;
    size_t searched; /* configurations the search evaluated (memory computed) */
    int fold;        /* ppl_calib_cv: the fold (1-based) the run was held out in; else 0 */
    char why[PPL_ERROR_MSG_MAX]; /* when !ok: why there is no prediction; else "" */
} ppl_calib_prediction;

/*
 * What `run` most likely was under the constants `k`: the fastest configuration
 * within its pins that fits in memory, or the fastest one that is over the GPU's
 * memory by less than PPL_CALIB_MEMORY_UNCERTAINTY when it is faster even after
 * its step time is raised by the share of memory it is over (then over_memory);
 * with the same rule under the software's defaults, the span's other end.
 * A run with no prediction is not a failure of the call: out->ok is false and
 * out->why says why; the status is the search's (PPL_INFEASIBLE when nothing fits
 * or nothing satisfies the divisibility rules, PPL_EINTERNAL for a model bug).
 */
ppl_status ppl_calib_predict(const ppl_run *run, const ppl_constants *k, ppl_calib_prediction *out);

/*
 * The mean absolute relative step-time error, |predicted - measured| / measured,
 * of the configurations configs[i] under the constants `k`, over the runs with a
 * measured step time and use[i] (use NULL: every run); 0 when there is none.
 * *max_err (when not NULL) receives the largest such error.
 */
double ppl_calib_fixed_error(const ppl_run *runs, size_t n, const ppl_config *configs,
                             const bool *use, const ppl_constants *k, double *max_err);

/* Progress of a fit: after each round, the objective (the mean absolute error,
 * a fraction) it reached; `what` is "" for ppl_calib_fit unless its options
 * give a label, and "cv fold F/K" within ppl_calib_cv; round is 1-based. */
typedef void (*ppl_calib_progress_fn)(void *ctx, const char *what, int round, double objective);

typedef struct ppl_calib_fit_opts {
    int rounds;                     /* 0: PPL_CALIB_FIT_ROUNDS */
    const char *label;              /* passed to progress as `what`; NULL: "" */
    ppl_calib_progress_fn progress; /* NULL: silent */
    void *progress_ctx;
} ppl_calib_fit_opts;

/* How far one constant can move, with the fit's last configurations fixed, before
 * the mean error rises by PPL_CALIB_RANGE_RISE: [lo, hi], in the constant's unit.
 * A range that reaches a bound of the constant means the runs do not pin it down. */
typedef struct ppl_calib_range {
    double lo, hi;
} ppl_calib_range;

typedef struct ppl_calib_fit_record {
    double objective;        /* mean absolute error after the last round (fraction) */
    int rounds;              /* rounds run */
    size_t runs_used;        /* runs with a measured step time and a configuration in
                                the last round */
    ppl_calib_range *ranges; /* one per constant, in ppl_constant_infos order */
    size_t nranges;
} ppl_calib_fit_record;

/*
 * Fits the constants `*inout` (where the fit starts; receives the result) to the
 * n runs.  Each round chooses every run's configuration with ppl_calib_predict's
 * rule under the current constants (a run with none is left out of that round),
 * then descends on the constants with those configurations fixed.  `opts` may be
 * NULL.  `out` (may be NULL, which skips the sensitivity ranges) receives the
 * objective and the ranges; free it with ppl_calib_fit_record_free.  PPL_EUSAGE
 * for negative rounds, PPL_EINTERNAL when memory runs out; runs that cannot be
 * predicted are not an error.
 */
ppl_status ppl_calib_fit(const ppl_run *runs, size_t n, ppl_constants *inout,
                         const ppl_calib_fit_opts *opts, ppl_calib_fit_record *out, ppl_error *err);
void ppl_calib_fit_record_free(ppl_calib_fit_record *record);

/* A prediction's relative step-time error, (predicted - measured) / measured; NaN
 * when the run has no measured step time or was not predicted. */
double ppl_calib_error(const ppl_run *run, const ppl_calib_prediction *prediction);

/* The aggregate validate reports over the runs with an error. */
typedef struct ppl_calib_summary {
    size_t runs;              /* with a measured step time and a prediction */
    size_t not_predicted;     /* no configuration could be predicted */
    size_t within_10;         /* |error| <= 10% */
    double mean_abs, max_abs; /* absolute relative errors; 0 with no run */
    double share_within_10;   /* within_10 / runs; 0 with no run */
} ppl_calib_summary;
void ppl_calib_summarize(const ppl_run *runs, const ppl_calib_prediction *predictions, size_t n,
                         ppl_calib_summary *out);
/* The same over the runs i with group[i] == g. */
void ppl_calib_summarize_group(const ppl_run *runs, const ppl_calib_prediction *predictions,
                               size_t n, const int *group, int g, ppl_calib_summary *out);

/* Whether the runs leave a fitted constant loose: half a point of error lets it
 * move by half its value (or, at zero, by a tenth of its bounds' span). */
bool ppl_calib_loose(const ppl_constant_info *info, double value, const ppl_calib_range *range);

/*
 * Cross-validation over groups: run i belongs to group[i] (0 to groups - 1,
 * every group non-empty), and each group is predicted (out[i], n of them,
 * caller-allocated; out[i].fold = group[i] + 1) with the constants fitted by
 * ppl_calib_fit on the other groups' runs, starting from `start` each time.
 * opts->label is ignored: progress says "cv fold F/K".  PPL_EUSAGE unless
 * 1 <= groups <= n and every group[i] is in range.
 */
ppl_status ppl_calib_cv_groups(const ppl_run *runs, size_t n, const int *group, int groups,
                               const ppl_constants *start, const ppl_calib_fit_opts *opts,
                               ppl_calib_prediction *out, ppl_error *err);

/* K-fold cross-validation: ppl_calib_cv_groups with run i in group i mod folds.
 * PPL_EUSAGE unless 1 <= folds <= n. */
ppl_status ppl_calib_cv(const ppl_run *runs, size_t n, int folds, const ppl_constants *start,
                        const ppl_calib_fit_opts *opts, ppl_calib_prediction *out, ppl_error *err);

/* The source families of the runs (ppl_run.family): group[i] (n of them,
 * caller-allocated) is the index of run i's family in order of first appearance;
 * returns how many there are.  ppl_calib_cv_groups over them leaves one family
 * out at a time. */
int ppl_calib_families(const ppl_run *runs, size_t n, int *group);

/*
 * FNV-1a (64-bit) of a file's bytes, as 16 lowercase hex digits in out (at least
 * 17 bytes): which runs file a fit saw, for a constants file's record.
 * PPL_EINPUT naming the file when it cannot be opened or read; out then holds
 * the hash of the bytes read before (the FNV offset basis for none).
 */
ppl_status ppl_calib_file_hash(const char *path, char out[17], ppl_error *err);

#endif
