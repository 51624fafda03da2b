/*
 * studies/runs.h - measured runs (SPEC "Measured-runs file") for parplan validate.
 *
 * Each entry names a model and a topology (catalogue names or inline objects), the
 * configuration as far as it is known (missing or null fields are searched over)
 * and what was measured.  `software` ({framework, version}, SPEC 1.1) says what ran
 * and picks the stack profile (ppl_stack_for_software); a `stack` key names a
 * profile outright.  Without either, or for software parplan does not know, the
 * profile is an assumption (stack_assumed): a run that used flash attention is
 * taken as Megatron-Core, any other as Megatron-LM 2021.
 *
 * Each run belongs to a source family, what `validate --cv family` leaves out
 * together: a paper, a vendor's document or a benchmark round.  A `family` key
 * names it outright; else it is read off `source` (ppl_run_family_of).
 */
#ifndef PARPLAN_RUNS_H
#define PARPLAN_RUNS_H

#include <stddef.h>

#include "base/catalog.h"
#include "base/jsonread.h"
#include "cost/config.h"
#include "model/model.h"
#include "cost/estimate.h"
#include "hardware/topology.h"

typedef struct ppl_run {
    char id[128];
    char family[96]; /* the source family (never empty: the id when nothing else names one) */
    ppl_model model;
    ppl_topology topology;
    ppl_pins pins; /* known configuration fields; PPL_UNSET where unknown */
    ppl_stack stack;
    bool stack_assumed;    /* neither a known `software` nor a `stack` named it */
    char software[96];     /* "megatron-lm 2021", as the file says it; "" when absent */
    double step_time_s;    /* measured; 0 when absent */
    double tflops_per_gpu; /* measured; 0 when absent */
    double mfu;            /* measured; 0 when absent */
    double memory_bytes;   /* measured; 0 when absent */
} ppl_run;

/*
 * The source family a `source` string names, into out (size bytes, truncated):
 * the arXiv identifier when it cites one ("arXiv:2104.04473": every table of one
 * paper), else its first two words with trailing punctuation dropped, which for a
 * repository document is "owner/repo path" ("NVIDIA/NeMo docs/.../summary.md":
 * every table of one document), else the whole string.  "" for a NULL or blank
 * source.
 */
void ppl_run_family_of(const char *source, char *out, size_t size);

struct json_t;

/* entry's source family into family (size bytes): its `family`, else what its
 * `source` names (ppl_run_family_of), else `id`: a run alone in its family.
 * `source`, when given, must be a string. */
ppl_status ppl_run_read_family(ppl_jr_ctx *ctx, const struct json_t *entry, const char *path,
                               const char *id, char *family, size_t size);

/* entry[key], a model or a topology (kind) given as a catalogue name or as an
 * object, into *out (a ppl_model or a ppl_topology). */
ppl_status ppl_run_load_part(ppl_jr_ctx *ctx, const struct json_t *entry, const char *path,
                             const char *key, ppl_catalog_kind kind, void *out);

ppl_status ppl_runs_load(const char *path, const ppl_diag *diag, ppl_run **runs, size_t *count,
                         ppl_error *err);
/* The same from a JSON array already parsed; `file` names it in messages. */
ppl_status ppl_runs_from_json(const struct json_t *root, const char *file, const ppl_diag *diag,
                              ppl_run **runs, size_t *count, ppl_error *err);
void ppl_runs_free(ppl_run *runs);

#endif
