/*
 * args.h - the command line: commands, options, parsing into ppl_args.
 *
 * The parser is the command line's own (libparplan_cli, beside libparplan, which
 * never sees it), built as a library so that tests and fuzzers can drive it
 * without a process.  It never prints: a usage problem comes back as PPL_EUSAGE with the
 * offending flag as the error key.  Strings in ppl_args point into argv.
 */
#ifndef PARPLAN_CLI_ARGS_H
#define PARPLAN_CLI_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "hardware/comm.h"
#include "cost/config.h"
#include "parplan/error.h"
#include "plan/search.h"

#define PPL_COMPARE_MAX 8 /* configurations `compare` sets side by side */

typedef enum ppl_command {
    PPL_CMD_NONE = 0,
    PPL_CMD_PLAN,
    PPL_CMD_ESTIMATE,
    PPL_CMD_MEMORY,
    PPL_CMD_WHATIF,
    PPL_CMD_SIZE,
    PPL_CMD_COLLECTIVE,
    PPL_CMD_TOPOLOGY_SHOW,
    PPL_CMD_TOPOLOGY_GENERATE,
    PPL_CMD_TOPOLOGIES,
    PPL_CMD_MODELS,
    PPL_CMD_MODEL_SHOW,
    PPL_CMD_VALIDATE,
    PPL_CMD_COMPARE,
    PPL_CMD_REPORT,
    PPL_CMD_SERVE,
    PPL_CMD_RL,
    PPL_CMD_COUNT
} ppl_command;

#define PPL_MAX_SWEEPS 8

/* validate --cv family: one fold per source family */
#define PPL_CV_FAMILY (-1)

typedef struct ppl_args {
    ppl_command command;
    bool help;    /* --help given: print the command's help */
    bool version; /* --version */
    bool json;
    const char *output_path;               /* -o FILE */
    const char *positional;                /* model show M, topology show T */
    const char *compared[PPL_COMPARE_MAX]; /* compare PLAN.json#K ...: the positionals */
    int ncompared;
    const char *model;
    const char *topology;
    const char *from_plan; /* estimate --from PLAN.json[#RANK] */
    const char *runs;
    const char *constants_path; /* --constants FILE, or NULL */
    ppl_pins pins;              /* the configuration knobs; PPL_UNSET where free */
    int stack;                  /* ppl_stack */
    bool stack_given;           /* --stack was on the command line */
    int64_t seq_len;            /* --seq-len: overrides the model\'s; PPL_UNSET when not given */
    bool fit;                   /* validate --fit */
    int64_t cv_folds;           /* validate --cv K; PPL_CV_FAMILY for --cv family; 0: none */
    bool timing;                /* report wall time (not byte-identical) */
    bool conservative;          /* assumed overlaps costed exposed (stack.h) */
    double overhead_bytes;      /* framework memory per GPU; < 0 when not given */
    double fragmentation;       /* allocator loss, fraction of activations; < 0 when not given */
    double headroom_fraction, headroom_bytes; /* --memory-headroom: one of them, the other 0 */
    /* plan */
    int64_t top;
    int objective;
    double within; /* --within: share of the fastest step a cost or memory plan may add */
    bool allow_tp_across_servers;
    double gpu_hour_price;
    /* whatif and size */
    int nsweeps;
    const char *sweeps[PPL_MAX_SWEEPS];
    double tokens;
    double days;
    double mtbf_gpu_hours; /* GPU-hours between job-interrupting failures */
    double checkpoint_bps; /* aggregate checkpoint bandwidth to storage */
    double restart_s;      /* restart before the checkpoint reload */
    int64_t spare_gpus;    /* --spares N */
    double spare_fraction; /* --spares P% as a fraction */
    double spare_restart_s;
    double repair_s;
    bool fit_only;
    bool csv;
    const char *plot_path;
    const char *shard;       /* whatif --shard K/N */
    const char *merge_path;  /* whatif --merge FILE (- for stdin) */
    const char *report_path; /* plan --report FILE.html */
    /* serve */
    int64_t input_len, output_len; /* tokens a request's prompt and response */
    double tpot_s, ttft_s;         /* latency targets; 0 when not given */
    /* rl */
    int64_t prompts, samples; /* prompts a step, responses a prompt */
    int64_t output_max;       /* the longest response (PPL_UNSET: output_len) */
    int64_t updates;          /* optimizer steps a rollout feeds */
    int64_t forward_passes;   /* forward-only passes before the update */
    double reward_s;          /* scoring a step, seconds */
    int off_policy;           /* weigh one-step-async pipelines (default yes) */
    int placement;            /* ppl_rl_placement, or PPL_UNSET: both */
    int64_t engine_tp;        /* PPL_UNSET: searched */
    int64_t rollout_gpus;     /* PPL_UNSET: the split searched */
    /* collective */
    int op;
    int algo;
    int64_t servers;
    int64_t gpus_per_server;
    double size_min_bytes, size_max_bytes;
    /* topology generate */
    const char *gpu_name;
    int64_t rails;
    double nic_bandwidth_bps;
    int64_t leaf_servers;
    const char *tiers;
    const char *oversubscription;
    int64_t nvlink_domain;
    int rail_only;   /* 0, 1 or PPL_UNSET */
    int nvls, sharp; /* topology generate: 0, 1 or PPL_UNSET */
    double gpu_memory_bytes, nvlink_bandwidth_bps, loss_rate; /* topology generate; 0: keep */
    int transport;                                            /* ppl_transport_names index */
    int64_t switch_radix;
    const char *name;
} ppl_args;

/* Option metadata, for help text. */
typedef struct ppl_option_info {
    const char *name;    /* "--tp" */
    const char *metavar; /* "N", NULL for flags; "[=yes|no]" for optional booleans */
    const char *help;
} ppl_option_info;

void ppl_args_init(ppl_args *args);

/* Parses argv (argv[0] is the program).  PPL_OK with command PPL_CMD_NONE means
 * top-level --help/--version or no command at all. */
ppl_status ppl_args_parse(int argc, char *const *argv, ppl_args *args, ppl_error *err);

/* "plan", "topology show", ... */
const char *ppl_command_name(ppl_command cmd);
const char *ppl_command_summary(ppl_command cmd);

/* Calls fn for each option the command accepts, in help order. */
void ppl_command_options(ppl_command cmd, void (*fn)(void *ctx, const ppl_option_info *opt),
                         void *ctx);

#endif
