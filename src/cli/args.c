/*
 * args.c - command-line parsing into ppl_args (see args.h).
 *
 * One table lists every option: its name, what it takes, which commands accept
 * it and its help line.  Values are converted and range-checked here, so a
 * command body only ever sees valid numbers.  `--flag=value` and `--flag value`
 * are both accepted; optional booleans take `--flag`, `--flag=yes`, `--flag=no`.
 */
#include "args.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parplan/goodput.h"
#include "parplan/schedule.h"
#include "parplan/topology.h"
#include "parplan/units.h"

#define MAX_DEGREE (1LL << 20) /* any one parallel degree */
#define MAX_GPUS (1LL << 40)   /* GPUs, global batch */
#define MAX_SERVERS_ARG (1LL << 24)

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
    K_SWEEP      /* KEY=V1,V2,... repeatable */
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
    O_RECOMPUTE,
    O_SP,
    O_FLASH,
    O_EP_OVERLAP,
    O_PRECISION,
    O_OPTIMIZER,
    O_TOP,
    O_OBJECTIVE,
    O_ALLOW_TP,
    O_PRICE,
    O_SWEEP,
    O_TOKENS,
    O_DAYS,
    O_MTBF,
    O_CKPT_BW,
    O_RESTART,
    O_FIT_ONLY,
    O_CSV,
    O_PLOT,
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
    O_RADIX,
    O_NAME,
    O_RUNS,
    O_FIRST_LAYERS,
    O_LAST_LAYERS,
    O_SCHEDULE,
    O_OVERHEAD,
    O_FRAGMENTATION,
    O_STACK,
    O_FIT,
    O_CV,
    O_CONSTANTS,
    O_TIMING,
    O_RECOMPUTE_LAYERS,
    O_SEQ_LEN,
    O_CP_COMM
} opt_id;

#define C(x) (1u << (x))
#define CMDS_ALL (~0u & ~C(PPL_CMD_NONE))
#define CMDS_CONFIG                                                                                \
    (C(PPL_CMD_PLAN) | C(PPL_CMD_ESTIMATE) | C(PPL_CMD_MEMORY) | C(PPL_CMD_WHATIF) |               \
     C(PPL_CMD_SIZE))
#define CMDS_SEARCH (C(PPL_CMD_PLAN) | C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE))
#define CMDS_DATA (CMDS_ALL & ~C(PPL_CMD_TOPOLOGY_GENERATE))

/* An option, declaratively: the commands that take it and those that require it
 * (bit masks of ppl_command), and where its value goes in ppl_args (offsetof, or
 * NOFIELD for the few that set_value parses itself: bounded quantities, the ZeRO
 * stage, sweeps, sizes).  A kind's value type: K_INT int64_t, K_ENUM and K_OPTBOOL
 * int, K_STRING const char *, K_FLAG bool. */
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

static const opt_def options[] = {
    {O_MODEL, "--model", 0, K_STRING, CMDS_CONFIG, CMDS_CONFIG, F(model), "M", 0, 0, NULL,
     "model: a catalogue name (see 'parplan models') or a JSON file"},
    {O_TOPOLOGY, "--topology", 0, K_STRING, CMDS_CONFIG | C(PPL_CMD_COLLECTIVE),
     CMDS_CONFIG | C(PPL_CMD_COLLECTIVE), F(topology), "T", 0, 0, NULL,
     "cluster: a catalogue name (see 'parplan topologies') or a JSON file"},
    {O_GPUS, "--gpus", 0, K_INT,
     C(PPL_CMD_PLAN) | C(PPL_CMD_ESTIMATE) | C(PPL_CMD_MEMORY) | C(PPL_CMD_WHATIF), 0, F(pins.gpus),
     "N", 1, MAX_GPUS, NULL, "GPUs to use (default: all GPUs of the topology)"},
    {O_TP, "--tp", 0, K_INT, CMDS_CONFIG, C(PPL_CMD_ESTIMATE) | C(PPL_CMD_MEMORY), F(pins.tp), "N",
     1, MAX_DEGREE, NULL, "tensor-parallel size"},
    {O_PP, "--pp", 0, K_INT, CMDS_CONFIG, C(PPL_CMD_ESTIMATE) | C(PPL_CMD_MEMORY), F(pins.pp), "N",
     1, MAX_DEGREE, NULL, "pipeline-parallel stages"},
    {O_DP, "--dp", 0, K_INT, CMDS_CONFIG, 0, F(pins.dp), "N", 1, MAX_GPUS, NULL,
     "data-parallel replicas (default: gpus / (tp*pp*cp))"},
    {O_CP, "--cp", 0, K_INT, CMDS_CONFIG, 0, F(pins.cp), "N", 1, MAX_DEGREE, NULL,
     "context-parallel size"},
    {O_CP_COMM, "--cp-comm", 0, K_ENUM, CMDS_CONFIG, 0, F(pins.cp_comm), "ALGO", 0, 0,
     ppl_cp_comm_names,
     "context-parallel algorithm (Megatron-Core --cp-comm-type): p2p ring, a2a (Ulysses), "
     "allgather or a2a+p2p; default: searched (plan, whatif, size), else p2p, Megatron's"},
    {O_EP, "--ep", 0, K_INT, CMDS_CONFIG, 0, F(pins.ep), "N", 1, MAX_DEGREE, NULL,
     "expert-parallel size (MoE models): ranks the experts are spread over, out of a "
     "stage's tp*cp*dp"},
    {O_ETP, "--etp", 0, K_INT, CMDS_CONFIG, 0, F(pins.etp), "N", 1, MAX_DEGREE, NULL,
     "expert tensor-parallel size (MoE models): ranks each expert is split over "
     "(default tp; etp*ep divides tp*cp*dp)"},
    {O_VP, "--vp", 0, K_INT, CMDS_CONFIG, 0, F(pins.vp), "N", 1, MAX_DEGREE, NULL,
     "virtual pipeline stages per GPU (interleaved schedule)"},
    {O_SEQ_LEN, "--seq-len", 0, K_INT, CMDS_CONFIG, 0, F(seq_len), "N", 1, 1LL << 26, NULL,
     "sequence length in tokens (default: the model's seq_len)"},
    {O_MBS, "--mbs", 0, K_INT, CMDS_CONFIG, C(PPL_CMD_ESTIMATE) | C(PPL_CMD_MEMORY), F(pins.mbs),
     "N", 1, MAX_DEGREE, NULL, "microbatch size, in sequences"},
    {O_GLOBAL_BATCH, "--global-batch", 0, K_INT, CMDS_CONFIG,
     C(PPL_CMD_PLAN) | C(PPL_CMD_ESTIMATE) | C(PPL_CMD_MEMORY), F(pins.global_batch), "B", 1,
     MAX_GPUS, NULL, "global batch, in sequences per step"},
    {O_ZERO, "--zero", 0, K_INT, CMDS_CONFIG, 0, NOFIELD, "Z", 0, 3, NULL,
     "ZeRO stage: 0 none, 1 optimizer, 2 + gradients, 3 + weights"},
    {O_RECOMPUTE, "--recompute", 0, K_ENUM, CMDS_CONFIG, 0, F(pins.recompute), "MODE", 0, 0,
     ppl_recompute_names, "activation recomputation: none, selective or full"},
    {O_SP, "--sequence-parallel", 0, K_OPTBOOL, CMDS_CONFIG, 0, F(pins.sequence_parallel),
     "[=yes|no]", 0, 0, NULL, "sequence parallelism (with tp > 1)"},
    {O_FLASH, "--flash-attention", 0, K_OPTBOOL, CMDS_CONFIG, 0, F(pins.flash_attention),
     "[=yes|no]", 0, 0, NULL, "flash attention (no s x s score matrix kept)"},
    {O_EP_OVERLAP, "--ep-overlap", 0, K_OPTBOOL, CMDS_CONFIG, 0, F(pins.ep_overlap), "[=yes|no]", 0,
     0, NULL,
     "MoE: Megatron-Core's 1F1B expert all-to-all overlap (--overlap-moe-expert-parallel-comm, "
     "core_v0.14; opt-in there and here, never searched)"},
    {O_RECOMPUTE_LAYERS, "--recompute-layers", 0, K_INT, CMDS_CONFIG, 0, F(pins.recompute_layers),
     "N", 1, 100000, NULL,
     "with --recompute full: recompute only N layers of each stage (Megatron-LM "
     "--recompute-method block); default all, or the fewest that fit when searched"},
    {O_FIRST_LAYERS, "--first-stage-layers", 0, K_INT, CMDS_CONFIG, 0, F(pins.first_stage_layers),
     "N", 1, 100000, NULL,
     "layers on the first pipeline stage (Megatron-LM --decoder-first-pipeline-num-layers)"},
    {O_LAST_LAYERS, "--last-stage-layers", 0, K_INT, CMDS_CONFIG, 0, F(pins.last_stage_layers), "N",
     1, 100000, NULL, "layers on the last pipeline stage (--decoder-last-pipeline-num-layers)"},
    {O_SCHEDULE, "--schedule", 0, K_ENUM, CMDS_CONFIG, 0, F(pins.schedule), "S", 0, 0,
     ppl_schedule_names, "pipeline schedule: 1f1b (default; interleaved with --vp > 1) or gpipe"},
    {O_PRECISION, "--precision", 0, K_ENUM, CMDS_CONFIG, 0, F(pins.precision), "P", 0, 0,
     ppl_precision_names, "bf16 (default), fp16 or fp8"},
    {O_OPTIMIZER, "--optimizer", 0, K_ENUM, CMDS_CONFIG, 0, F(pins.optimizer), "O", 0, 0,
     ppl_optimizer_names, "adam (default) or sgd"},
    {O_STACK, "--stack", 0, K_ENUM, CMDS_CONFIG, 0, F(stack), "S", 0, 0, ppl_stack_names,
     "training software, by what ran: nemo-2025 (default), megatron-core, nemo-2024, "
     "fsdp (overlap communication); megatron-lm-2023, megatron-lm-2022, megatron-lm-2021, "
     "megatron-deepspeed, deepspeed-zero3-2021 (do not); modern and legacy name the "
     "newest and the oldest"},
    {O_OVERHEAD, "--overhead-memory", 0, K_BYTES, CMDS_CONFIG, 0, NOFIELD, "SIZE", 0, 0, NULL,
     "fixed framework memory per GPU (default: CUDA context + NCCL per group)"},
    {O_FRAGMENTATION, "--fragmentation", 0, K_REAL, CMDS_CONFIG, 0, NOFIELD, "F", 0, 0, NULL,
     "allocator loss as a fraction of activations (default 0.05)"},
    {O_TOP, "--top", 0, K_INT, C(PPL_CMD_PLAN), 0, F(top), "K", 1, 100000, NULL,
     "how many ranked configurations to print (default 10)"},
    {O_OBJECTIVE, "--objective", 0, K_ENUM, CMDS_SEARCH, 0, F(objective), "OBJ", 0, 0,
     ppl_objective_names, "rank by time (default), cost or memory"},
    {O_ALLOW_TP, "--allow-tp-across-servers", 0, K_FLAG, CMDS_SEARCH, 0, F(allow_tp_across_servers),
     NULL, 0, 0, NULL, "let tensor parallelism leave the NVLink domain"},
    {O_PRICE, "--gpu-hour-price", 0, K_REAL, CMDS_SEARCH, 0, NOFIELD, "USD", 0, 0, NULL,
     "price of one GPU-hour, for cost figures"},
    {O_SWEEP, "--sweep", 0, K_SWEEP, C(PPL_CMD_WHATIF), C(PPL_CMD_WHATIF), NOFIELD, "KEY=V1,V2,...",
     0, 0, NULL, "a swept key and its values; repeat for a grid"},
    {O_TOKENS, "--tokens", 0, K_COUNT, C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE), C(PPL_CMD_SIZE),
     NOFIELD, "N", 0, 0, NULL, "training tokens, e.g. 450e9 or 15.6T"},
    {O_DAYS, "--days", 0, K_REAL, C(PPL_CMD_SIZE), C(PPL_CMD_SIZE), NOFIELD, "D", 0, 0, NULL,
     "days allowed for training"},
    {O_MTBF, "--mtbf-gpu-hours", 0, K_REAL, C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE), 0, NOFIELD, "H", 0,
     0, NULL,
     "GPU-hours between job-interrupting failures over all the job's GPUs (default 50677: "
     "Llama 3 paper Table 5, 419 unexpected interruptions in 54 days on 16384 H100, "
     "54 x 24 h / 419 = 3.09 h x 16384)"},
    {O_CKPT_BW, "--checkpoint-bandwidth", 0, K_BANDWIDTH, C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE), 0,
     NOFIELD, "BW", 0, 0, NULL,
     "aggregate checkpoint write and read bandwidth to storage (default 2TB/s: Llama 3 "
     "paper 3.3.1, Tectonic's sustained throughput)"},
    {O_RESTART, "--restart-time", 0, K_REAL, C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE), 0, NOFIELD, "T",
     0, 0, NULL,
     "time to restart after a failure before reloading the checkpoint, e.g. 600 (seconds), "
     "10min (default 10min: an assumption for rescheduling, process start, NCCL init)"},
    {O_FIT_ONLY, "--fit-only", 0, K_FLAG, C(PPL_CMD_SIZE), 0, F(fit_only), NULL, 0, 0, NULL,
     "the fewest GPUs that hold one replica at all"},
    {O_CSV, "--csv", 0, K_FLAG, C(PPL_CMD_WHATIF), 0, F(csv), NULL, 0, 0, NULL,
     "print CSV instead of a table"},
    {O_PLOT, "--plot", 0, K_STRING, C(PPL_CMD_WHATIF), 0, F(plot_path), "FILE.svg", 0, 0, NULL,
     "also draw the swept figure as an SVG chart"},
    {O_OP, "--op", 0, K_ENUM, C(PPL_CMD_COLLECTIVE), 0, F(op), "OP", 0, 0, ppl_collective_op_names,
     "allreduce, allgather, reducescatter, alltoall or sendrecv"},
    {O_ALGO, "--algo", 0, K_ENUM, C(PPL_CMD_COLLECTIVE), 0, F(algo), "A", 0, 0, ppl_algo_names,
     "auto (default), ring, tree, hierarchical (all-reduce), direct or pxn (all-to-all)"},
    {O_SERVERS, "--servers", 0, K_INT, C(PPL_CMD_COLLECTIVE) | C(PPL_CMD_TOPOLOGY_GENERATE),
     C(PPL_CMD_COLLECTIVE) | C(PPL_CMD_TOPOLOGY_GENERATE), F(servers), "S", 1, MAX_SERVERS_ARG,
     NULL, "servers taking part / in the cluster"},
    {O_GPS, "--gpus-per-server", 0, K_INT, C(PPL_CMD_COLLECTIVE) | C(PPL_CMD_TOPOLOGY_GENERATE),
     C(PPL_CMD_TOPOLOGY_GENERATE), F(gpus_per_server), "G", 1, 1024, NULL,
     "GPUs per server (collective: taking part, default all)"},
    {O_SIZES, "--sizes", 0, K_SIZES, C(PPL_CMD_COLLECTIVE), 0, NOFIELD, "SIZE|LO:HI", 0, 0, NULL,
     "message size, or a range doubling from LO to HI (e.g. 1MiB:8GiB)"},
    {O_GPU, "--gpu", 0, K_STRING, C(PPL_CMD_TOPOLOGY_GENERATE), C(PPL_CMD_TOPOLOGY_GENERATE),
     F(gpu_name), "NAME", 0, 0, NULL, "GPU kind: A100, H100, H800, H200, B200, GB200"},
    {O_RAILS, "--rails", 0, K_INT, C(PPL_CMD_TOPOLOGY_GENERATE), C(PPL_CMD_TOPOLOGY_GENERATE),
     F(rails), "R", 1, 1024, NULL, "NICs (rails) per server"},
    {O_NIC_BW, "--nic-bandwidth", 0, K_BANDWIDTH, C(PPL_CMD_TOPOLOGY_GENERATE),
     C(PPL_CMD_TOPOLOGY_GENERATE), NOFIELD, "BW", 0, 0, NULL, "per NIC, e.g. 400Gb/s"},
    {O_LEAF_SERVERS, "--leaf-servers", 0, K_INT, C(PPL_CMD_TOPOLOGY_GENERATE),
     C(PPL_CMD_TOPOLOGY_GENERATE), F(leaf_servers), "K", 1, MAX_SERVERS_ARG, NULL,
     "servers under one leaf group"},
    {O_TIERS, "--tiers", 0, K_STRING, C(PPL_CMD_TOPOLOGY_GENERATE), 0, F(tiers), "N|S1,S2,..", 0, 0,
     NULL, "number of switch tiers, or servers per group of each tier"},
    {O_OVERSUB, "--oversubscription", 0, K_STRING, C(PPL_CMD_TOPOLOGY_GENERATE), 0,
     F(oversubscription), "X|X1,X2,..", 0, 0, NULL,
     "down:up at each tier's uplinks (one value for all, or one per tier)"},
    {O_NVLINK_DOMAIN, "--nvlink-domain", 0, K_INT, C(PPL_CMD_TOPOLOGY_GENERATE), 0,
     F(nvlink_domain), "D", 1, 1LL << 20, NULL,
     "GPUs per NVLink domain (default: GPUs per server)"},
    {O_RAIL_ONLY, "--rail-only", 0, K_OPTBOOL, C(PPL_CMD_TOPOLOGY_GENERATE), 0, F(rail_only),
     "[=yes|no]", 0, 0, NULL, "no switch joins different rails"},
    {O_RADIX, "--switch-radix", 0, K_INT, C(PPL_CMD_TOPOLOGY_GENERATE), 0, F(switch_radix), "R", 4,
     4096, NULL, "ports per switch (default 64)"},
    {O_NAME, "--name", 0, K_STRING, C(PPL_CMD_TOPOLOGY_GENERATE), 0, F(name), "NAME", 0, 0, NULL,
     "name written into the topology"},
    {O_RUNS, "--runs", 0, K_STRING, C(PPL_CMD_VALIDATE), C(PPL_CMD_VALIDATE), F(runs), "FILE", 0, 0,
     NULL, "measured runs (JSON array, SPEC format)"},
    {O_CONSTANTS, "--constants", 0, K_STRING, CMDS_CONFIG | C(PPL_CMD_VALIDATE), 0,
     F(constants_path), "FILE", 0, 0, NULL,
     "fitted constants to cost with (what validate --fit --json writes); default the "
     "committed ones"},
    {O_CV, "--cv", 0, K_INT, C(PPL_CMD_VALIDATE), 0, F(cv_folds), "K", 2, 1000, NULL,
     "K-fold cross-validation: fit on the other folds, predict each run held out"},
    {O_FIT, "--fit", 0, K_FLAG, C(PPL_CMD_VALIDATE), 0, F(fit), NULL, 0, 0, NULL,
     "fit the efficiency constants to the runs and print them"},
    {O_TIMING, "--timing", 0, K_FLAG, C(PPL_CMD_PLAN) | C(PPL_CMD_WHATIF) | C(PPL_CMD_SIZE), 0,
     F(timing), NULL, 0, 0, NULL,
     "report the search's wall time in the table and in --json (else null there); output "
     "then varies run to run"},
    {O_JSON, "--json", 0, K_FLAG, CMDS_DATA, 0, F(json), NULL, 0, 0, NULL,
     "write JSON instead of a table"},
    {O_OUTPUT, "--output", 'o', K_STRING, CMDS_ALL, 0, F(output_path), "FILE", 0, 0, NULL,
     "write the output to FILE (atomically) instead of stdout"},
    {O_HELP, "--help", 'h', K_FLAG, CMDS_ALL, 0, F(help), NULL, 0, 0, NULL, "show this help"},
};
#define NOPTIONS (sizeof options / sizeof options[0])

typedef struct command_def {
    ppl_command cmd;
    const char *word1, *word2;
    const char *summary;
} command_def;

static const command_def commands[] = {
    {PPL_CMD_PLAN, "plan", NULL, "search the configuration space and rank the best plans"},
    {PPL_CMD_ESTIMATE, "estimate", NULL, "predict one configuration's step time in detail"},
    {PPL_CMD_MEMORY, "memory", NULL, "per-GPU memory of one configuration, broken down"},
    {PPL_CMD_WHATIF, "whatif", NULL, "best plan at every point of a sweep (GPUs, NICs, ...)"},
    {PPL_CMD_SIZE, "size", NULL, "fewest GPUs that train N tokens within D days"},
    {PPL_CMD_COLLECTIVE, "collective", NULL, "predict one collective, nccl-tests style"},
    {PPL_CMD_TOPOLOGY_SHOW, "topology", "show", "describe a topology: tiers, bandwidths, switches"},
    {PPL_CMD_TOPOLOGY_GENERATE, "topology", "generate",
     "write a topology for a parametric cluster"},
    {PPL_CMD_TOPOLOGIES, "topologies", NULL, "list the topology catalogue"},
    {PPL_CMD_MODELS, "models", NULL, "list the model catalogue with derived figures"},
    {PPL_CMD_MODEL_SHOW, "model", "show", "show a model's parameters and FLOPs per token"},
    {PPL_CMD_VALIDATE, "validate", NULL, "predict measured runs and report the error"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

const char *ppl_command_name(ppl_command cmd)
{
    static const char *const full[] = {
        [PPL_CMD_TOPOLOGY_SHOW] = "topology show",
        [PPL_CMD_TOPOLOGY_GENERATE] = "topology generate",
        [PPL_CMD_MODEL_SHOW] = "model show",
    };
    if (cmd == PPL_CMD_TOPOLOGY_SHOW || cmd == PPL_CMD_TOPOLOGY_GENERATE ||
        cmd == PPL_CMD_MODEL_SHOW)
        return full[cmd];
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (commands[i].cmd == cmd)
            return commands[i].word1;
    return "";
}

const char *ppl_command_summary(ppl_command cmd)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (commands[i].cmd == cmd)
            return commands[i].summary;
    return "";
}

void ppl_command_options(ppl_command cmd, void (*fn)(void *ctx, const ppl_option_info *opt),
                         void *ctx)
{
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (!(options[i].commands & C(cmd)))
            continue;
        ppl_option_info info = {options[i].name, options[i].metavar, options[i].help};
        fn(ctx, &info);
    }
}

void ppl_args_init(ppl_args *a)
{
    memset(a, 0, sizeof *a);
    ppl_pins_init(&a->pins);
    a->seq_len = PPL_UNSET;
    a->overhead_bytes = -1;
    a->fragmentation = -1;
    a->top = 10;
    a->mtbf_gpu_hours = PPL_MTBF_GPU_HOURS_DEFAULT;
    a->checkpoint_bps = PPL_CHECKPOINT_BPS_DEFAULT;
    a->restart_s = PPL_RESTART_S_DEFAULT;
    a->objective = PPL_OBJECTIVE_TIME;
    a->op = PPL_OP_ALLREDUCE;
    a->algo = PPL_ALGO_AUTO;
    a->servers = a->gpus_per_server = PPL_UNSET;
    a->size_min_bytes = a->size_max_bytes = 0;
    a->rails = a->leaf_servers = a->nvlink_domain = a->switch_radix = PPL_UNSET;
    a->rail_only = PPL_UNSET;
}

/* Short rendering of a user's value for messages (bounded, printable). */
static void shown(const char *value, char *buf, size_t size)
{
    size_t i = 0;
    for (; value[i] && i + 4 < size && i < 40; i++)
        buf[i] = (value[i] >= 0x20 && value[i] < 0x7f) ? value[i] : '?';
    buf[i] = '\0';
    if (value[i] && i + 4 <= size)
        strcat(buf, "...");
}

static ppl_status parse_int(const opt_def *o, const char *v, int64_t *out, ppl_error *err)
{
    char show[48], expect[96];
    shown(v, show, sizeof show);
    if (o->min == 1 && o->max >= MAX_DEGREE)
        snprintf(expect, sizeof expect, "a positive integer");
    else
        snprintf(expect, sizeof expect, "an integer from %lld to %lld", (long long)o->min,
                 (long long)o->max);
    const char *p = v;
    if (*p == '+')
        p++;
    if (*p < '0' || *p > '9')
        return ppl_error_set(err, PPL_EUSAGE, "", o->name, "expected %s, found '%s'", expect, show);
    int64_t value = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (value > (INT64_MAX - 9) / 10)
            return ppl_error_set(err, PPL_EUSAGE, "", o->name,
                                 "expected %s, found '%s' (too large)", expect, show);
        value = value * 10 + (*p - '0');
    }
    if (*p != '\0')
        return ppl_error_set(err, PPL_EUSAGE, "", o->name, "expected %s, found '%s'", expect, show);
    if (value < o->min || value > o->max)
        return ppl_error_set(err, PPL_EUSAGE, "", o->name, "expected %s, found %lld", expect,
                             (long long)value);
    *out = value;
    return PPL_OK;
}

static ppl_status parse_enum(const opt_def *o, const char *v, int *out, ppl_error *err)
{
    char show[48], list[160];
    for (int i = 0; o->names[i]; i++)
        if (strcmp(o->names[i], v) == 0) {
            *out = i;
            return PPL_OK;
        }
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; o->names[i] && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                 i == 0 ? "" : (o->names[i + 1] ? ", " : " or "), o->names[i]);
    shown(v, show, sizeof show);
    return ppl_error_set(err, PPL_EUSAGE, "", o->name, "expected %s, found '%s'", list, show);
}

/* Upper ends of what a flag may say, far above any real figure, so that every
 * time derived from them stays finite: 1e18 tokens (a thousand times the largest
 * corpora), 100 years, a million per GPU-hour, 1 PiB per GPU. */
#define MAX_TOKENS 1e18
#define MAX_DAYS 36500.0
#define MAX_PRICE 1e6
#define MAX_FLAG_BYTES 1125899906842624.0
/* A NIC of 1 Gb/s to 1 PB/s: the range a topology file accepts (topology.c). */
/* Failures and checkpoints: an MTBF of 1 GPU-hour to 1e12 (a million GPUs for a
 * century), storage of 1 MB/s to 1 PB/s, a restart of up to a week. */
#define MAX_MTBF_GPU_HOURS 1e12
#define MIN_CKPT_BPS 1e6
#define MAX_CKPT_BPS 1e15
#define MAX_RESTART_S 604800.0
#define MIN_NIC_BPS 1.25e8
#define MAX_NIC_BPS 1e15

/* A quantity flag: positive (or zero when allow_zero) and within [min, max]. */
static ppl_status parse_quantity(const opt_def *o, const char *v, ppl_unit unit, bool allow_zero,
                                 double min, double max, double *out, ppl_error *err)
{
    char show[48], why[160], bound[32];
    double value;
    shown(v, show, sizeof show);
    if (ppl_parse_quantity(v, unit, &value, why, sizeof why) != PPL_OK)
        return ppl_error_set(err, PPL_EUSAGE, "", o->name, "%s, found '%s'", why, show);
    if (unit == PPL_UNIT_BANDWIDTH) {
        /* "400" is far more often 400 Gb/s written without its unit than 400 B/s */
        char *end;
        strtod(v, &end);
        while (*end == ' ')
            end++;
        if (*end == '\0')
            return ppl_error_set(err, PPL_EUSAGE, "", o->name,
                                 "'%s' has no unit: write it with one, as in '%s Gb/s' or "
                                 "'%s GB/s'",
                                 show, show, show);
    }
    if (!(value > 0) && !(allow_zero && value == 0))
        return ppl_error_set(err, PPL_EUSAGE, "", o->name, "expected a positive value, found '%s'",
                             show);
    if ((value > 0 && value < min) || value > max) {
        ppl_format_quantity(unit, value < min ? min : max, bound, sizeof bound);
        return ppl_error_set(err, PPL_EUSAGE, "", o->name, "expected %s %s, found '%s'",
                             value < min ? "at least" : "at most", bound, show);
    }
    *out = value;
    return PPL_OK;
}

static ppl_status parse_sizes(const opt_def *o, const char *v, ppl_args *a, ppl_error *err)
{
    char lo[64];
    const char *colon = strchr(v, ':');
    if (!colon) {
        ppl_status st =
            parse_quantity(o, v, PPL_UNIT_BYTES, false, 0, MAX_FLAG_BYTES, &a->size_min_bytes, err);
        a->size_max_bytes = a->size_min_bytes;
        return st;
    }
    size_t n = (size_t)(colon - v);
    if (n >= sizeof lo)
        return ppl_error_set(err, PPL_EUSAGE, "", o->name,
                             "expected SIZE or LO:HI such as 1MiB:8GiB");
    memcpy(lo, v, n);
    lo[n] = '\0';
    ppl_status st =
        parse_quantity(o, lo, PPL_UNIT_BYTES, false, 0, MAX_FLAG_BYTES, &a->size_min_bytes, err);
    if (st == PPL_OK)
        st = parse_quantity(o, colon + 1, PPL_UNIT_BYTES, false, 0, MAX_FLAG_BYTES,
                            &a->size_max_bytes, err);
    if (st == PPL_OK && a->size_max_bytes < a->size_min_bytes)
        return ppl_error_set(err, PPL_EUSAGE, "", o->name, "the range ends below where it starts");
    if (st == PPL_OK && a->size_max_bytes / a->size_min_bytes > 1e15)
        return ppl_error_set(err, PPL_EUSAGE, "", o->name,
                             "the range spans more than 50 doublings");
    return st;
}

/* Where an option's value goes. */
static void *field_of(const opt_def *o, ppl_args *a)
{
    return (char *)a + o->offset;
}

static ppl_status set_value(const opt_def *o, const char *v, ppl_args *a, ppl_error *err)
{
    switch (o->id) {
    case O_ZERO: {
        int64_t z;
        ppl_status st = parse_int(o, v, &z, err);
        if (st == PPL_OK)
            a->pins.zero = (int)z;
        return st;
    }
    case O_TOKENS:
        return parse_quantity(o, v, PPL_UNIT_COUNT, false, 0, MAX_TOKENS, &a->tokens, err);
    case O_DAYS: return parse_quantity(o, v, PPL_UNIT_COUNT, false, 0, MAX_DAYS, &a->days, err);
    case O_MTBF:
        return parse_quantity(o, v, PPL_UNIT_COUNT, false, 1.0, MAX_MTBF_GPU_HOURS,
                              &a->mtbf_gpu_hours, err);
    case O_CKPT_BW:
        return parse_quantity(o, v, PPL_UNIT_BANDWIDTH, false, MIN_CKPT_BPS, MAX_CKPT_BPS,
                              &a->checkpoint_bps, err);
    case O_RESTART:
        return parse_quantity(o, v, PPL_UNIT_TIME, true, 0, MAX_RESTART_S, &a->restart_s, err);
    case O_PRICE:
        return parse_quantity(o, v, PPL_UNIT_COUNT, false, 0, MAX_PRICE, &a->gpu_hour_price, err);
    case O_NIC_BW:
        return parse_quantity(o, v, PPL_UNIT_BANDWIDTH, false, MIN_NIC_BPS, MAX_NIC_BPS,
                              &a->nic_bandwidth_bps, err);
    case O_OVERHEAD:
        return parse_quantity(o, v, PPL_UNIT_BYTES, true, 0, MAX_FLAG_BYTES, &a->overhead_bytes,
                              err);
    case O_FRAGMENTATION: {
        double f = -1;
        ppl_status st = parse_quantity(o, v, PPL_UNIT_COUNT, true, 0, 1.0, &f, err);
        if (st == PPL_OK && f >= 1.0)
            return ppl_error_set(err, PPL_EUSAGE, "", o->name,
                                 "expected a fraction below 1, found %g", f);
        a->fragmentation = f;
        return st;
    }
    case O_SIZES: return parse_sizes(o, v, a, err);
    case O_SWEEP: {
        const char *eq = strchr(v, '=');
        char show[48];
        shown(v, show, sizeof show);
        if (!eq || eq == v || eq[1] == '\0')
            return ppl_error_set(err, PPL_EUSAGE, "", o->name, "expected KEY=V1,V2,..., found '%s'",
                                 show);
        for (int i = 0; i < a->nsweeps; i++) {
            size_t klen = (size_t)(eq - v);
            if (strncmp(a->sweeps[i], v, klen) == 0 && a->sweeps[i][klen] == '=')
                return ppl_error_set(err, PPL_EUSAGE, "", o->name, "key '%.*s' swept twice",
                                     (int)(klen > 40 ? 40 : klen), v);
        }
        if (a->nsweeps >= PPL_MAX_SWEEPS)
            return ppl_error_set(err, PPL_EUSAGE, "", o->name, "at most %d sweeps", PPL_MAX_SWEEPS);
        a->sweeps[a->nsweeps++] = v;
        return PPL_OK;
    }
    default: break;
    }
    switch (o->kind) {
    case K_INT: return parse_int(o, v, (int64_t *)field_of(o, a), err);
    case K_ENUM: return parse_enum(o, v, (int *)field_of(o, a), err);
    case K_STRING: *(const char **)field_of(o, a) = v; return PPL_OK;
    default: return ppl_error_set(err, PPL_EINTERNAL, "", o->name, "no parser for this option");
    }
}

static const opt_def *find_option(const char *name, size_t len, char short_name)
{
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (short_name) {
            if (options[i].short_name == short_name)
                return &options[i];
        } else if (strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0) {
            return &options[i];
        }
    }
    return NULL;
}

static ppl_status set_flag(const opt_def *o, const char *value, ppl_args *a, ppl_error *err)
{
    char show[48];
    int on = 1;
    if (o->kind == K_OPTBOOL && value) {
        if (strcmp(value, "yes") == 0 || strcmp(value, "true") == 0 || strcmp(value, "1") == 0)
            on = 1;
        else if (strcmp(value, "no") == 0 || strcmp(value, "false") == 0 || strcmp(value, "0") == 0)
            on = 0;
        else {
            shown(value, show, sizeof show);
            return ppl_error_set(err, PPL_EUSAGE, "", o->name, "expected yes or no, found '%s'",
                                 show);
        }
    } else if (value) {
        return ppl_error_set(err, PPL_EUSAGE, "", o->name, "takes no value");
    }
    if (o->kind == K_FLAG)
        *(bool *)field_of(o, a) = true;
    else
        *(int *)field_of(o, a) = on;
    return PPL_OK;
}

/* Missing required options, checked once parsing is done and --help is absent:
 * each option's `required` mask, in table order; size needs neither --tokens nor
 * --days with --fit-only. */
static ppl_status check_required(const ppl_args *a, const bool *seen, ppl_error *err)
{
    for (size_t i = 0; i < NOPTIONS; i++) {
        const opt_def *o = &options[i];
        if (!(o->required & C(a->command)) || seen[i])
            continue;
        if (a->fit_only && (o->id == O_TOKENS || o->id == O_DAYS))
            continue;
        return ppl_error_set(err, PPL_EUSAGE, "", o->name,
                             "required by '%s' (see 'parplan %s --help')",
                             ppl_command_name(a->command), ppl_command_name(a->command));
    }
    if ((a->command == PPL_CMD_MODEL_SHOW || a->command == PPL_CMD_TOPOLOGY_SHOW) && !a->positional)
        return ppl_error_set(
            err, PPL_EUSAGE, "", "", "'%s' needs a %s name or file (see 'parplan %s --help')",
            ppl_command_name(a->command), a->command == PPL_CMD_MODEL_SHOW ? "model" : "topology",
            ppl_command_name(a->command));
    return PPL_OK;
}

static ppl_status find_command(int argc, char *const *argv, int *next, ppl_args *a, ppl_error *err)
{
    char show[48];
    const char *w1 = argv[1];
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(commands[i].word1, w1) != 0)
            continue;
        if (!commands[i].word2) {
            a->command = commands[i].cmd;
            *next = 2;
            return PPL_OK;
        }
        if (argc > 2 && strcmp(commands[i].word2, argv[2]) == 0) {
            a->command = commands[i].cmd;
            *next = 3;
            return PPL_OK;
        }
    }
    shown(w1, show, sizeof show);
    if (strcmp(w1, "topology") == 0 || strcmp(w1, "model") == 0) {
        if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
            a->command = strcmp(w1, "model") == 0 ? PPL_CMD_MODEL_SHOW : PPL_CMD_TOPOLOGY_SHOW;
            a->help = true;
            *next = 3;
            return PPL_OK;
        }
        return ppl_error_set(err, PPL_EUSAGE, "", "", "'%s' needs a subcommand: %s", show,
                             strcmp(w1, "model") == 0 ? "show" : "show or generate");
    }
    return ppl_error_set(err, PPL_EUSAGE, "", "", "unknown command '%s' (see 'parplan --help')",
                         show);
}

ppl_status ppl_args_parse(int argc, char *const *argv, ppl_args *a, ppl_error *err)
{
    char show[48];
    ppl_args_init(a);
    if (argc < 2)
        return PPL_OK; /* no command: the caller prints the overview */
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        a->help = true;
        if (argc > 2 && strcmp(argv[1], "help") == 0) {
            char *sub[4] = {argv[0], argv[2], argc > 3 ? argv[3] : NULL, NULL};
            int sub_argc = argc > 3 ? 3 : 2;
            int next;
            if (find_command(sub_argc, sub, &next, a, err) != PPL_OK)
                return PPL_EUSAGE;
            a->help = true;
        }
        return PPL_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        a->version = true;
        return PPL_OK;
    }
    if (argv[1][0] == '-') {
        shown(argv[1], show, sizeof show);
        return ppl_error_set(err, PPL_EUSAGE, "", "",
                             "expected a command before '%s' (see 'parplan --help')", show);
    }
    int i;
    ppl_status st = find_command(argc, argv, &i, a, err);
    if (st != PPL_OK)
        return st;
    bool options_done = false;
    bool seen[NOPTIONS] = {false};
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (!options_done && strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        if (options_done || arg[0] != '-' || arg[1] == '\0') {
            bool takes = a->command == PPL_CMD_MODEL_SHOW || a->command == PPL_CMD_TOPOLOGY_SHOW;
            shown(arg, show, sizeof show);
            if (!takes)
                return ppl_error_set(err, PPL_EUSAGE, "", "", "unexpected argument '%s'", show);
            if (a->positional)
                return ppl_error_set(err, PPL_EUSAGE, "", "", "unexpected second argument '%s'",
                                     show);
            a->positional = arg;
            continue;
        }
        const opt_def *o;
        const char *value = NULL;
        if (arg[1] != '-') {
            /* a short option: -o FILE, -oFILE, -h */
            o = find_option(NULL, 0, arg[1]);
            if (o && arg[2] != '\0')
                value = arg + 2;
        } else {
            const char *eq = strchr(arg, '=');
            size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
            o = find_option(arg, len, 0);
            if (eq)
                value = eq + 1;
        }
        shown(arg, show, sizeof show);
        if (!o)
            return ppl_error_set(err, PPL_EUSAGE, "", "",
                                 "unknown option '%s' (see 'parplan %s --help')", show,
                                 ppl_command_name(a->command));
        if (!(o->commands & C(a->command)))
            return ppl_error_set(err, PPL_EUSAGE, "", o->name, "does not apply to '%s'",
                                 ppl_command_name(a->command));
        seen[o - options] = true;
        if (o->kind == K_FLAG || o->kind == K_OPTBOOL) {
            if ((st = set_flag(o, value, a, err)) != PPL_OK)
                return st;
            continue;
        }
        if (!value) {
            if (i + 1 >= argc)
                return ppl_error_set(err, PPL_EUSAGE, "", o->name, "missing value (%s)",
                                     o->metavar);
            value = argv[++i];
        }
        if ((st = set_value(o, value, a, err)) != PPL_OK)
            return st;
    }
    if (a->help)
        return PPL_OK;
    a->stack = ppl_stack_from_name_index(a->stack);
    return check_required(a, seen, err);
}
