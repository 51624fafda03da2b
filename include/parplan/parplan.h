/*
 * parplan/parplan.h - libparplan's public interface: load a model and a cluster,
 * cost one configuration, search the best, sweep what-ifs, size a cluster,
 * check the model against measured runs, and render the results.
 *
 * Link with `pkg-config --cflags --libs --static parplan` (meson install puts
 * libparplan.a, parplan/parplan.h, parplan/error.h and parplan.pc in place);
 * examples/plan.c plans a model on a cluster with nothing else.
 *
 * Conventions.  Calls never print and never exit: they return a ppl_status (0 ok,
 * 1 nothing feasible, 2 bad knob or value, 3 bad input file, 4 internal: the
 * command line's exit codes) and describe a failure in a caller-allocated
 * ppl_error (parplan/error.h).  Every object is opaque, made by a call that
 * returns it through an out pointer and released by its _close or _free (NULL
 * is accepted and ignored); strings a call returns are released with ppl_free.
 * Units are in names: _s seconds, _bytes bytes, _per_s per second.  Knobs are
 * named as the command line's flags without '--' and with '_' for '-' ("tp",
 * "recompute", "first_stage_layers") and take the flags' values ("4", "full",
 * "yes"); a knob left free is searched by ppl_plan_search and takes the
 * command line's default in ppl_estimate_pins.
 *
 * Stability: this header and parplan/error.h are the whole interface; what
 * src/ declares is the library's inside and may change in any release.  Within
 * a major version, names here keep their meaning; a minor version only adds.
 */
#ifndef PARPLAN_PARPLAN_H
#define PARPLAN_PARPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parplan/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PPL_VERSION_MAJOR 0
#define PPL_VERSION_MINOR 1
#define PPL_VERSION_PATCH 0
#define PPL_VERSION_STRING "0.1.0"
/* The version the library was built as ("0.1.0"): PPL_VERSION_STRING when the
 * header and the library agree. */
const char *ppl_version(void);

typedef struct ppl_model ppl_model;       /* a transformer */
typedef struct ppl_topology ppl_topology; /* a cluster: GPUs, NVLink, rails, tiers */
typedef struct ppl_context ppl_context;   /* a model on a cluster under a software stack */
typedef struct ppl_pins ppl_pins;         /* knobs fixed by the caller, the rest free */
typedef struct ppl_result ppl_result;     /* one configuration, costed */
typedef struct ppl_plan ppl_plan;         /* the best configurations, ranked */
typedef struct ppl_grid ppl_grid;         /* the best plan at each point of a what-if grid */

/* ---- load ------------------------------------------------------------------ */

/* A catalogue name ("llama3-70b"), a model file or a Hugging Face config.json. */
ppl_status ppl_model_open(const char *name_or_path, ppl_model **out, ppl_error *err);
void ppl_model_close(ppl_model *model);
const char *ppl_model_title(const ppl_model *model);

/* A catalogue name ("dgx-h100-superpod") or a topology file. */
ppl_status ppl_topology_open(const char *name_or_path, ppl_topology **out, ppl_error *err);
void ppl_topology_close(ppl_topology *topology);
const char *ppl_topology_title(const ppl_topology *topology);
int64_t ppl_topology_gpu_count(const ppl_topology *topology);

/* ---- context --------------------------------------------------------------- */

/* The model on the cluster, under a stack profile ("nemo-2025", "megatron-lm-2021",
 * ...; NULL: the newest) and the committed fitted constants.  The context refers
 * to model and topology, which must outlive it. */
ppl_status ppl_context_open(const ppl_model *model, const ppl_topology *topology, const char *stack,
                            ppl_context **out, ppl_error *err);
void ppl_context_close(ppl_context *context);

/* ---- knobs ----------------------------------------------------------------- */

/* Every knob free (bf16, Adam, 1F1B); NULL when out of memory. */
ppl_pins *ppl_pins_new(void);
/* Pins one knob: a usage error naming it when the knob or the value is unknown. */
ppl_status ppl_pins_set(ppl_pins *pins, const char *knob, const char *value, ppl_error *err);
void ppl_pins_free(ppl_pins *pins);

/* ---- estimate and search ------------------------------------------------------ */

/* One configuration: the pinned knobs, the command line's defaults for the rest
 * (all GPUs, ZeRO 0, no recomputation, ...), every framework rule checked. */
ppl_status ppl_estimate_pins(const ppl_context *context, const ppl_pins *pins, ppl_result **out,
                             ppl_error *err);
void ppl_result_free(ppl_result *result);

/* The `top` fastest configurations with the pinned knobs (pins NULL: all free);
 * PPL_INFEASIBLE, and err saying why, when none fits. */
ppl_status ppl_plan_search(const ppl_context *context, const ppl_pins *pins, size_t top,
                           ppl_plan **out, ppl_error *err);
size_t ppl_plan_count(const ppl_plan *plan);
/* Result i, best first; NULL past the end.  It belongs to the plan. */
const ppl_result *ppl_plan_result(const ppl_plan *plan, size_t i);
void ppl_plan_free(ppl_plan *plan);

/* ---- a result ----------------------------------------------------------------- */

double ppl_result_step_time_s(const ppl_result *result);
double ppl_result_tokens_per_s(const ppl_result *result);
double ppl_result_mfu(const ppl_result *result); /* model FLOPs over the 16-bit peak */
/* The fullest GPU's memory, and its capacity. */
double ppl_result_memory_bytes(const ppl_result *result);
double ppl_result_capacity_bytes(const ppl_result *result);
bool ppl_result_fits(const ppl_result *result);
/* The layout in one line ("tp 4 x pp 8 x dp 32 x cp 1, ep 1, vp 12, mbs 2, ...");
 * returns the length it needed, as snprintf. */
size_t ppl_result_describe(const ppl_result *result, char *buf, size_t size);
/* The contract's configuration result (docs/spec.md: config, step time, memory,
 * time, traffic, launch flags), as JSON; NULL when out of memory. */
char *ppl_result_json(const ppl_result *result);

/* ---- studies ------------------------------------------------------------------- */

/* The best plan at every point of a grid of sweeps ("gpus=1024,2048",
 * "rails.nic_bandwidth=400Gb/s,800Gb/s", "tiers[1].oversubscription=1,4"), with
 * the days to train `tokens` (failures, checkpoints and restarts counted; 0
 * tokens: none).  The model's and the cluster's files are read again at each
 * point, patched. */
ppl_status ppl_grid_run(const ppl_model *model, const ppl_topology *topology,
                        const char *const *sweeps, size_t nsweeps, const ppl_pins *pins,
                        double tokens, ppl_grid **out, ppl_error *err);
size_t ppl_grid_count(const ppl_grid *grid);
/* Point i's values, "gpus=1024 rails.nic_bandwidth=800Gb/s"; NULL past the end. */
const char *ppl_grid_values(const ppl_grid *grid, size_t i);
/* Point i's best plan; NULL when nothing fits there (or past the end). */
const ppl_result *ppl_grid_best(const ppl_grid *grid, size_t i);
/* Point i's days to train; 0 without tokens or a plan. */
double ppl_grid_days(const ppl_grid *grid, size_t i);
void ppl_grid_free(ppl_grid *grid);

/* The fewest of the cluster's GPUs whose best plan trains `tokens` within
 * `days` (failures counted), and that plan (*best, free it with ppl_result_free);
 * PPL_INFEASIBLE when no count will do. */
ppl_status ppl_size_cluster(const ppl_context *context, const ppl_pins *pins, double tokens,
                            double days, int64_t *gpus, ppl_result **best, ppl_error *err);

/* Each measured run of a runs file (docs/spec.md) predicted with the committed
 * constants: how many were predicted, and the mean and largest absolute
 * relative error of their step times. */
ppl_status ppl_calibrate_check(const char *runs_path, size_t *runs, double *mean_error,
                               double *max_error, ppl_error *err);

/* ---- output --------------------------------------------------------------------- */

/* The plan as one self-contained HTML page (step by part, memory per stage, one
 * step's pipeline, traffic, the ranked table); free it with ppl_free. */
ppl_status ppl_plan_html(const ppl_plan *plan, char **html, ppl_error *err);
/* Releases a string the library returned. */
void ppl_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
