/*
 * cli.h - the parplan executable's internals: one function per command.
 *
 * Each command renders into c->out and returns a status; on failure it fills
 * c->err.  main.c prints errors and warnings and chooses the exit code; besides
 * it only notes go to stderr: the assumed global batch (common.c) and the
 * progress of a long search or fit (cmd_plan.c, cmd_validate.c).
 */
#ifndef PARPLAN_CLI_INTERNAL_H
#define PARPLAN_CLI_INTERNAL_H

#include "args.h"
#include "modules.h"

typedef struct cli {
    const ppl_args *args;
    ppl_diag diag;
    ppl_error err;
    ppl_buf out;
    ppl_constants constants; /* the committed ones, or --constants FILE's */
    /* the documents of the model and topology (or pools) loaded last: a plan embeds
     * them as inputs.model and inputs.topology */
    struct json_t *model_doc, *topology_doc;
    /* while a plan file's result is costed again: the file and the inputs it
     * embeds (NULL: the flags', or the catalogue's by the plan's names) */
    struct {
        const char *file;
        char config_key[64]; /* "results[K-1].config" */
        struct json_t *model, *topology, *stage_layers;
        bool has_constants;
        bool own_model; /* the plan's model, not --model's */
        ppl_constants constants;
    } from;
} cli;

/* Resolves a --model/--topology argument (name or path) and loads it. */
ppl_status cli_load_model(cli *c, const char *arg, ppl_model *model);
ppl_status cli_load_topology(cli *c, const char *arg, ppl_topology *topo);
/* The pools of a --topology argument (pools->n = 0 when it has none). */
ppl_status cli_load_pools(cli *c, const char *arg, ppl_pools *pools);

/* The inputs a plan document embeds: the documents last loaded and the constants. */
struct json_t *cli_plan_inputs_json(cli *c);
/* Drops what cli_pins_from_plan kept (cli_setup does once it has loaded). */
void cli_from_clear(cli *c);

/* An evaluation context with the stack and memory options of the flags. */
void cli_eval_ctx(cli *c, ppl_eval_ctx *ctx, const ppl_model *model, const ppl_topology *topo);

/* Lists a catalogue: for each entry, entry() appends a JSON object to list (with
 * --json) or a row to the table whose header is given. */
typedef ppl_status (*cli_entry_fn)(cli *c, const char *name, struct json_t *list, ppl_table *t);
ppl_status cli_list_catalog(cli *c, ppl_catalog_kind kind, const char *key, size_t ncols,
                            const char *align, const char *const *header, cli_entry_fn entry);

/* Says on stderr the global batch assumed when --global-batch is not given
 * (whatif, size): never silently. */
/* The note on stderr that a global batch was assumed (PPL_UNSET: one per swept
 * sequence length). */
void cli_note_batch(int64_t batch, const ppl_model *model);

/* PLAN.json[#K] (spec): result K's configuration as a's pins, and the plan's
 * model, topology and constants where a names none: the ones it embeds (in
 * c->from until cli_setup has loaded them), else the catalogue's of the names it
 * gives (kept in `names`; never opened as paths). */
ppl_status cli_pins_from_plan(cli *c, const char *spec, ppl_args *a, char names[2][256]);
/* A usage error the configuration's rules gave for a knob read from a file (a
 * plan's result, a shard's line): the file's, exit 3, its key config_key.KNOB
 * (the split's ends as stage_layers); any other error as it is.  Its status. */
ppl_status cli_config_error(cli *c, const char *file, const char *config_key);
/* --from PLAN.json[#K] of estimate and memory: c->args becomes a copy (static:
 * main reads it after the command returns) with the plan's pins; nothing where
 * --from is not given. */
ppl_status cli_args_from_plan(cli *c);
/* The same from the plan document already read from path (kept by the caller
 * while c->from is in use), result rank (from 1). */
ppl_status cli_pins_from_plan_doc(cli *c, const struct json_t *doc, const char *path, long rank,
                                  ppl_args *a, char names[2][256]);
/* PLAN.json[#K] split into the file and K (1 when absent); a usage error
 * otherwise. */
#define CLI_PLAN_PATH_MAX 1024
ppl_status cli_plan_spec(cli *c, const char *spec, char path[CLI_PLAN_PATH_MAX], long *rank);
/* The length of PLAN.json[#K]'s file part: what comes before the last '#'. */
size_t cli_plan_file_len(const char *spec);
/* Costs spec (PLAN.json#K) as estimate --from does, on the plan's model and
 * topology (or --model, --topology); ctx, when not NULL, receives the context
 * (it points into *model and *topo). */
ppl_status cli_cost_plan_result(cli *c, const char *spec, ppl_model *model, ppl_topology *topo,
                                ppl_eval_ctx *ctx, ppl_estimate *out);
/* The same for result rank of a plan document already read from path. */
ppl_status cli_cost_plan_doc(cli *c, const struct json_t *doc, const char *path, long rank,
                             ppl_model *model, ppl_topology *topo, ppl_eval_ctx *ctx,
                             ppl_estimate *out);

/* whatif --shard and --merge (whatif_shard.c).  cli_whatif_shard_of reads K/N
 * as shard K-1 of N (a usage error otherwise); cli_whatif_shard_lines appends
 * the shard's points to the output as JSON Lines, each with the configuration of
 * its plan (null where nothing fits) and its search's figures;
 * cli_whatif_merge fills every point from --merge FILE's lines, each checked
 * against this run's grid, every point exactly once (input errors naming the
 * file and line). */
ppl_status cli_whatif_shard_of(cli *c, const char *spec, size_t *shard, size_t *shards);
ppl_status cli_whatif_shard_lines(cli *c, const ppl_model *model, const ppl_whatif_result *pts,
                                  size_t npts, const ppl_whatif_opts *opts);
ppl_status cli_whatif_merge(cli *c, const ppl_whatif_opts *opts, ppl_whatif_result *pts,
                            size_t npts);

/* Progress on stderr for work that runs longer than half a second, and only when
 * stderr is a terminal: "parplan: <what>... 42%".  cli_progress_show is a
 * progress callback (ctx: the cli_progress); cli_progress_done clears the line. */
typedef struct cli_progress {
    const char *what;
    double start;
    bool shown;
} cli_progress;
void cli_progress_show(void *ctx, double fraction);
void cli_progress_done(cli_progress *p);

/* The failure and checkpoint options of --mtbf-gpu-hours, --checkpoint-bandwidth
 * and --restart-time (size, whatif --tokens), defaults where not given. */
void cli_goodput_opts(const ppl_args *a, ppl_goodput_opts *out);

/* Loads --model and --topology. */
ppl_status cli_load(cli *c, ppl_model *model, ppl_topology *topo);
/* cli_load for an inference engine (serve, rl): --precision bf16 or fp8 (default
 * bf16) that the GPU runs, and --gpus at most the topology's (default all). */
ppl_status cli_load_engine(cli *c, ppl_model *model, ppl_topology *topo, ppl_precision *precision,
                           int64_t *gpus);

/* The flag of a knob: "first_stage_layers" -> "--first-stage-layers". */
const char *cli_flag_of(const char *knob, char *buf, size_t size);

/* What lets a family the default search leaves out in, as flags:
 * "--allow-tp-across-servers", "--zero 2 or --zero 3 (pinned)". */
const char *cli_family_allow(const ppl_family *family, char *buf, size_t size);

/* Renders a JSON document into c->out and takes ownership of doc. */
ppl_status cli_emit_json(cli *c, struct json_t *doc);

void cli_help(ppl_command cmd, ppl_buf *out);
void cli_version(ppl_buf *out);

/* Loads --model and --topology, builds the evaluation context and the pinned
 * configuration (estimate, memory). */
ppl_status cli_setup(cli *c, ppl_model *model, ppl_topology *topo, ppl_eval_ctx *ctx,
                     ppl_config *config);

ppl_status cmd_collective(cli *c);
ppl_status cmd_estimate(cli *c);
ppl_status cmd_compare(cli *c);
ppl_status cmd_report(cli *c);
ppl_status cmd_serve(cli *c);
ppl_status cmd_rl(cli *c);
/* validate's summaries (studies/calibrate.h): the error keys, after the run
 * counts when `counts`; the table of errors by source family, its header and a
 * family's row. */
void cli_summary_json(json_t *o, const ppl_calib_summary *s, bool counts);
void cli_families_table_init(ppl_table *t);
void cli_families_table_row(ppl_table *t, const char *family, const ppl_calib_summary *s);
/* validate on a serving runs file (runs: read by ppl_serve_runs_load; freed here) */
ppl_status cli_validate_serve(cli *c, ppl_serve_run *runs, size_t n);
/* The page of `page` written to path (plan --report, report). */
ppl_status cli_write_report(cli *c, const char *path, const ppl_report_page *page);
ppl_status cmd_generate(cli *c);
ppl_status cmd_memory(cli *c);
ppl_status cmd_size(cli *c);
ppl_status cmd_whatif(cli *c);
ppl_status cmd_plan(cli *c);
/* The pins a pipeline across pools can honour: the fp8 pins checked
 * (ppl_pins_check_fp8), bf16 layers and a GPU count refused. */
ppl_status cli_pins_check_mixed(cli *c);
ppl_status cmd_validate(cli *c);
ppl_status cmd_models(cli *c);
ppl_status cmd_model_show(cli *c);
ppl_status cmd_topologies(cli *c);
ppl_status cmd_topology_show(cli *c);

#endif
