/*
 * options.h - the option and command tables of the command line (private to
 * the CLI): what each option takes, which commands accept or require it, where
 * its value goes in ppl_args and its help line.  args.c parses against them.
 */
#ifndef PARPLAN_CLI_OPTIONS_H
#define PARPLAN_CLI_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "args.h"

#define MAX_DEGREE (1LL << 20) /* any one parallel degree */
#define MAX_GPUS (1LL << 40)   /* GPUs, global batch */
#define MAX_SERVERS_ARG (1LL << 24)
/* The most results plan ranks (--top): O(n log K) to keep them, and a JSON of
 * that many (about 6 KB a result) stays within the 64 MiB an input file may be. */
#define PPL_TOP_MAX 5000

typedef enum opt_kind {
    K_FLAG,    /* no value */
    K_OPTBOOL, /* optional =yes|no */
    K_STRING,
    K_INT,
    K_ENUM,
    K_COUNT,     /* a count with an optional K/M/G/T suffix */
    K_REAL,      /* a plain positive real */
    K_BANDWIDTH, /* a bandwidth quantity */
    K_BYTES,     /* a byte size */
    K_SIZES,     /* a byte size or a range lo:hi */
    K_SWEEP,     /* KEY=V1,V2,... repeatable */
    K_SHARE,     /* a share from 0 to 1 */
    K_KNOB       /* a configuration knob: kind, range, words and field from its row in the
                    knob registry (cost/knobs.h), named by the flag without '--' */
} opt_kind;

typedef enum opt_id {
    O_HELP,
    O_JSON,
    O_OUTPUT,
    O_MODEL,
    O_TOPOLOGY,
    O_GPUS,
    O_TP,
    O_PP,
    O_DP,
    O_CP,
    O_EP,
    O_ETP,
    O_VP,
    O_MBS,
    O_GLOBAL_BATCH,
    O_ZERO,
    O_SHARD_GROUP,
    O_OFFLOAD,
    O_RECOMPUTE,
    O_SP,
    O_FLASH,
    O_EP_OVERLAP,
    O_TP_OVERLAP,
    O_PRECISION,
    O_FP8_RECIPE,
    O_BF16_LAYERS,
    O_CUDA_GRAPHS,
    O_OPTIMIZER,
    O_TOP,
    O_OBJECTIVE,
    O_WITHIN,
    O_ALLOW_TP,
    O_PRICE,
    O_SWEEP,
    O_TOKENS,
    O_DAYS,
    O_MTBF,
    O_CKPT_BW,
    O_RESTART,
    O_SPARES,
    O_SPARE_RESTART,
    O_REPAIR,
    O_FIT_ONLY,
    O_CSV,
    O_PLOT,
    O_SHARD,
    O_MERGE,
    O_REPORT,
    O_OP,
    O_ALGO,
    O_SERVERS,
    O_GPS,
    O_SIZES,
    O_GPU,
    O_RAILS,
    O_NIC_BW,
    O_LEAF_SERVERS,
    O_TIERS,
    O_OVERSUB,
    O_NVLINK_DOMAIN,
    O_RAIL_ONLY,
    O_NVLS,
    O_SHARP,
    O_GPU_MEMORY,
    O_NVLINK_BW,
    O_TRANSPORT,
    O_LOSS,
    O_RADIX,
    O_NAME,
    O_RUNS,
    O_FIRST_LAYERS,
    O_LAST_LAYERS,
    O_SCHEDULE,
    O_OVERHEAD,
    O_FRAGMENTATION,
    O_HEADROOM,
    O_FROM,
    O_STACK,
    O_FIT,
    O_CV,
    O_CONSTANTS,
    O_TIMING,
    O_CONSERVATIVE,
    O_RECOMPUTE_LAYERS,
    O_SEQ_LEN,
    O_CP_COMM,
    O_INPUT_LEN,
    O_OUTPUT_LEN,
    O_TPOT,
    O_TTFT,
    O_PROMPTS,
    O_SAMPLES,
    O_OUTPUT_MAX,
    O_UPDATES,
    O_FORWARD_PASSES,
    O_REWARD_TIME,
    O_OFF_POLICY,
    O_PLACEMENT,
    O_ENGINE_TP,
    O_ROLLOUT_GPUS,
    O_COUNT /* options in all */
} opt_id;

#define C(x) (1u << (x))
#define CMDS_ALL (~0u & ~C(PPL_CMD_NONE))
#define CMDS_CONFIG                                                                                \
    (C(PPL_CMD_PLAN) | C(PPL_CMD_ESTIMATE) | C(PPL_CMD_MEMORY) | C(PPL_CMD_WHATIF) |               \
     C(PPL_CMD_SIZE))
#define CMDS_SEARCH (C(PPL_CMD_PLAN) | C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE))
#define CMDS_INFER (C(PPL_CMD_SERVE) | C(PPL_CMD_RL)) /* an inference engine's workload */
#define CMDS_DATA (CMDS_ALL & ~C(PPL_CMD_TOPOLOGY_GENERATE))

/* An option, declaratively: the commands that take it and those that require it
 * (bit masks of ppl_command), and where its value goes in ppl_args (offsetof, or
 * NOFIELD for the few that set_value parses itself: bounded quantities, the ZeRO
 * stage, sweeps, sizes).  A kind's value type: K_INT int64_t, K_ENUM and K_OPTBOOL
 * int, K_STRING const char *, K_FLAG bool, K_SHARE double.  A K_KNOB row leaves
 * offset, min, max and names to the knob's registry row. */
#define F(field) offsetof(ppl_args, field)
#define NOFIELD ((size_t)-1)
typedef struct opt_def {
    opt_id id;
    const char *name;
    char short_name;
    opt_kind kind;
    unsigned commands; /* accepted by */
    unsigned required; /* required by */
    size_t offset;     /* into ppl_args, or NOFIELD */
    const char *metavar;
    int64_t min, max;         /* K_INT */
    const char *const *names; /* K_ENUM */
    const char *help;
} opt_def;

typedef struct command_def {
    ppl_command cmd;
    const char *word1, *word2;
    const char *summary;
} command_def;

extern const opt_def ppl_cli_options[];
/* The option as the parser takes it: a K_KNOB row completed from the knob
 * registry (its kind, range, words and field); other rows as they are. */
const opt_def *ppl_cli_option_resolved(const opt_def *o);
extern const size_t ppl_cli_noptions;
extern const command_def ppl_cli_commands[];
extern const size_t ppl_cli_ncommands;

#endif
