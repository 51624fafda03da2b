/*
 * studies/whatif.h - the best plan at every point of a sweep, and the figures
 * around it: the default global batch, time to train, GPU-hours.
 *
 * A sweep is KEY=V1,V2,... where KEY is gpus (what the cluster offers: every GPU
 * count up to it is a candidate), global_batch, or a settable topology path
 * (ppl_topology_keys: "rails.nic_bandwidth", "tiers[1].oversubscription"; in a
 * mixed cluster a pool's, "pools[1].servers", "cross_pool.bandwidth").  A
 * point of the grid patches the topology file's JSON at each swept path and
 * loads it again, so every swept value passes the same checks as a hand-written
 * file.  Errors are usage errors keyed "sweep" whose message names the sweep
 * key; nothing here prints.
 */
#ifndef PARPLAN_WHATIF_H
#define PARPLAN_WHATIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost/config.h"
#include "parplan/error.h"
#include "studies/goodput.h"
#include "model/model.h"
#include "cost/estimate.h"
#include "plan/search.h"
#include "hardware/topology.h"

struct json_t;

#define PPL_SWEEP_KEY_MAX 64        /* a key and its NUL */
#define PPL_SWEEP_MAX_VALUES 256    /* values of one sweep */
#define PPL_SWEEP_TEXT_MAX 8192     /* the values' text and its NUL (longer is refused) */
#define PPL_WHATIF_MAX_POINTS 10000 /* points of the whole grid */

typedef enum ppl_sweep_kind {
    PPL_SWEEP_TOPOLOGY = 0, /* a path of the topology file */
    PPL_SWEEP_GPUS,
    PPL_SWEEP_GLOBAL_BATCH,
    PPL_SWEEP_SEQ_LEN, /* the model's sequence length */
    PPL_SWEEP_SPARES   /* hot spare GPUs beside the job (goodput.h); needs tokens */
} ppl_sweep_kind;

/* One parsed sweep; a plain value, safe to copy. */
typedef struct ppl_sweep {
    char key[PPL_SWEEP_KEY_MAX];
    ppl_sweep_kind kind;
    int nvalues;
    unsigned short at[PPL_SWEEP_MAX_VALUES]; /* where value i starts in text */
    char text[PPL_SWEEP_TEXT_MAX];           /* the values, each NUL-terminated */
} ppl_sweep;

/* Value i (0-based) of a sweep, as given ("400Gb/s"). */
const char *ppl_sweep_value(const ppl_sweep *sweep, int i);

/* Parses "KEY=V1,V2,..." (empty values between commas are skipped) and checks the
 * key against the topology document (a tier's index must be one it has).  Usage
 * errors: a key too long, values longer than PPL_SWEEP_TEXT_MAX - 1 characters in
 * all, no values, more than PPL_SWEEP_MAX_VALUES, an unknown key. */
ppl_status ppl_sweep_parse(const char *spec, const struct json_t *topology, ppl_sweep *sweep,
                           ppl_error *err);

/* Parses n sweeps in turn into sweeps[n]; *points is the size of their grid,
 * which may not exceed PPL_WHATIF_MAX_POINTS (checked after each sweep). */
ppl_status ppl_sweeps_parse(const char *const *specs, int n, const struct json_t *topology,
                            ppl_sweep *sweeps, size_t *points, ppl_error *err);

/* The value index of each sweep at point p of the grid (the last sweep varies
 * fastest): idx[n]. */
void ppl_sweep_point(const ppl_sweep *sweeps, int n, size_t p, int *idx);

/* A value as JSON: an integer or a real when it is a finite number, true/false
 * for true/yes and false/no, else the string ("800Gb/s", which the loader reads
 * with its unit).  NULL when out of memory. */
struct json_t *ppl_sweep_value_json(const char *value);

/* Sets the settable topology path (a.b, tiers[i].x) of a topology document to
 * value (as ppl_sweep_value_json reads it), creating objects on the way; a
 * "gpu": "H100" becomes {"name": "H100", ...} so the datasheet fills the rest.
 * A usage error, the document untouched, when the path is not settable. */
ppl_status ppl_topology_patch(struct json_t *topology, const char *path, const char *value,
                              ppl_error *err);

/* Reads a topology file as a JSON document (to patch); on a parse error the
 * loader's own message.  Free with json_decref. */
ppl_status ppl_topology_document(const char *path, const ppl_diag *diag, struct json_t **doc,
                                 ppl_error *err);

/* Point idx of a grid: the topology patched at every swept path and loaded (file
 * is how errors name it), and pins with gpus and global_batch set where swept
 * (the rest as given).  Usage errors: a gpus or global_batch value that is not
 * a positive integer, a patched topology the loader refuses, gpus beyond the
 * topology's. */
ppl_status ppl_whatif_point(const struct json_t *topology, const char *file,
                            const ppl_sweep *sweeps, int n, const int *idx, ppl_pins *pins,
                            ppl_topology *topo, ppl_error *err);

/* What the searches behind an answer did, summed over the plans searched. */
typedef struct ppl_search_totals {
    size_t plans, candidates, evaluated, feasible;
    double seconds;
} ppl_search_totals;

void ppl_search_totals_add(ppl_search_totals *acc, const ppl_search_result *r);
/* {plans, candidates, evaluated, feasible, seconds}; seconds is null unless
 * with_seconds, so that the same input gives byte-identical output. */
struct json_t *ppl_search_totals_json(const ppl_search_totals *totals, bool with_seconds);

/* The best plan for pins (PPL_UNSET where free) under opts (objective, families,
 * gpus_at_most; its pins and top are ignored): PPL_INFEASIBLE when nothing fits,
 * and then err is left as it was.  The search's figures are added to acc. */
ppl_status ppl_best_plan(const ppl_eval_ctx *ctx, const ppl_pins *pins, const ppl_search_opts *opts,
                         ppl_estimate *best, ppl_search_totals *acc, ppl_error *err);

/* One point of a what-if answer. */
#define PPL_WHATIF_MAX_SWEEPS 8
typedef struct ppl_whatif_result {
    int idx[PPL_WHATIF_MAX_SWEEPS]; /* each sweep's value index (ppl_sweep_point) */
    bool ok;                        /* a plan fits */
    ppl_estimate best;
    /* with tokens > 0: wall-clock time including failures, checkpoints and
     * restarts (infinite when goodput is 0), the failure-free time, GPU-hours of
     * the wall-clock time */
    double time_to_train_s, time_to_train_days, gpu_hours;
    double failure_free_s;
    ppl_goodput goodput;
    ppl_search_totals search;
} ppl_whatif_result;

/* Builds the evaluation context of a point (stack profile, constants, memory
 * options): the caller's; NULL takes ppl_eval_ctx_init's defaults. */
typedef void (*ppl_whatif_ctx_fn)(void *user, ppl_eval_ctx *ctx, const ppl_model *model,
                                  const ppl_topology *topo);

typedef struct ppl_whatif_opts {
    const ppl_model *model;
    const struct json_t *topology;   /* the document ppl_topology_document read */
    const char *file;                /* how errors name it */
    const ppl_sweep *sweeps;         /* from ppl_sweeps_parse */
    int nsweeps;                     /* at most PPL_WHATIF_MAX_SWEEPS */
    ppl_pins pins;                   /* the knobs pinned at every point */
    ppl_search_opts search;          /* objective and families; pins and top unused */
    double tokens;                   /* training tokens; 0: no time to train */
    bool default_batch;              /* each point's global batch: ppl_default_global_batch
                                        of its model (its seq_len), pins.global_batch unused */
    const ppl_goodput_opts *goodput; /* failures and checkpoints; NULL: the defaults */
    ppl_whatif_ctx_fn ctx_init;
    void *ctx_user;
    /* a shard of the grid: only the points ppl_whatif_in_shard gives shard
     * `shard` (0-based) of `shards`; 0 shards: every point */
    size_t shard, shards;
    /* called after each point with the share of the grid done (0..1); may be NULL */
    void (*progress)(void *ctx, double fraction);
    void *progress_ctx;
} ppl_whatif_opts;

/* The best plan at every point of the grid (out[npoints], npoints as
 * ppl_sweeps_parse counted them), with time to train and GPU-hours when tokens >
 * 0.  A swept gpus=N offers every GPU count up to N (what the cluster has: a plan
 * may leave some idle when fewer train faster).  A point where nothing fits has
 * ok false; any other failure stops the run with its error. */
ppl_status ppl_whatif_run(const ppl_whatif_opts *opts, ppl_whatif_result *out, size_t npoints,
                          ppl_error *err);

/* Whether point p is in opts' shard: the points are dealt out in turn, those of
 * one plan (differing in their spares alone) together, so that each shard
 * searches what one run would and the shards' points are the grid's. */
bool ppl_whatif_in_shard(const ppl_whatif_opts *opts, size_t p);

/* Point p of a sharded run again, from what its shard wrote: the plan it found
 * (every knob pinned, as ppl_pins_from_config_json reads a plan's config; NULL
 * when nothing fit) is costed under the point's topology and context as
 * ppl_whatif_run found it, with its time to train; *totals the point's search
 * figures.  Errors as ppl_whatif_run's, or the configuration's. */
ppl_status ppl_whatif_merge_point(const ppl_whatif_opts *opts, size_t p, const ppl_pins *plan,
                                  const ppl_search_totals *totals, ppl_whatif_result *out,
                                  ppl_error *err);

/* Time to train on tokens at tokens_per_s (global_batch * seq_len / step time),
 * failure-free: seconds, and days of 86,400 s (ppl_time_with_failures_s adds
 * failures). */
double ppl_time_to_train_s(double tokens, double tokens_per_s);
double ppl_time_to_train_days(double tokens, double tokens_per_s);

/* GPU-hours of gpus GPUs busy for seconds: gpus * seconds / 3,600. */
double ppl_gpu_hours(int64_t gpus, double seconds);
/* What a million tokens cost on `gpus` GPUs at `gpu_hour_price` per GPU-hour,
 * training at tokens_per_s: price x gpus / 3600 s / tokens_per_s x 1e6. */
double ppl_cost_per_million_tokens(double gpu_hour_price, int64_t gpus, double tokens_per_s);

#endif
