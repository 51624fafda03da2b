/*
 * args.c - command-line parsing into ppl_args (see args.h).
 *
 * One table (options.c) lists every option: its name, what it takes, which
 * commands accept it and its help line.  Values are converted and range-checked
 * here, so a command body only ever sees valid numbers.  `--flag=value` and `--flag value`
 * are both accepted; optional booleans take `--flag`, `--flag=yes`, `--flag=no`.
 */
#include "args.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "studies/goodput.h"
#include "cost/stack.h"
#include "hardware/topology.h"
#include "base/units.h"

#include "options.h"

#include "base/constants.h"
#include "cost/knobs.h"

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
    for (size_t i = 0; i < ppl_cli_ncommands; i++)
        if (ppl_cli_commands[i].cmd == cmd)
            return ppl_cli_commands[i].word1;
    return "";
}

const char *ppl_command_summary(ppl_command cmd)
{
    for (size_t i = 0; i < ppl_cli_ncommands; i++)
        if (ppl_cli_commands[i].cmd == cmd)
            return ppl_cli_commands[i].summary;
    return "";
}

void ppl_command_options(ppl_command cmd, void (*fn)(void *ctx, const ppl_option_info *opt),
                         void *ctx)
{
    for (size_t i = 0; i < ppl_cli_noptions; i++) {
        if (!(ppl_cli_options[i].commands & C(cmd)))
            continue;
        ppl_option_info info = {ppl_cli_options[i].name, ppl_cli_options[i].metavar,
                                ppl_cli_options[i].help};
        fn(ctx, &info);
    }
}

void ppl_args_init(ppl_args *a)
{
    memset(a, 0, sizeof *a);
    ppl_pins_init(&a->pins);
    a->seq_len = PPL_UNSET;
    a->input_len = a->output_len = PPL_UNSET;
    a->prompts = PPL_UNSET;
    a->samples = 1;
    a->output_max = PPL_UNSET;
    a->updates = 1;
    a->forward_passes = 2;
    a->off_policy = 1;
    a->placement = PPL_UNSET;
    a->engine_tp = a->rollout_gpus = PPL_UNSET;
    a->overhead_bytes = -1;
    a->fragmentation = -1;
    a->headroom_fraction = PPL_MEMORY_HEADROOM_DEFAULT;
    a->headroom_bytes = 0;
    a->top = 10;
    a->mtbf_gpu_hours = PPL_MTBF_GPU_HOURS_DEFAULT;
    a->checkpoint_bps = PPL_CHECKPOINT_BPS_DEFAULT;
    a->restart_s = ppl_assumed_values()->restart_s;
    a->spare_restart_s = ppl_assumed_values()->spare_restart_s;
    a->repair_s = ppl_assumed_values()->repair_s;
    a->objective = PPL_OBJECTIVE_TIME;
    a->within = 0.10;
    a->op = PPL_OP_ALLREDUCE;
    a->algo = PPL_ALGO_AUTO;
    a->servers = a->gpus_per_server = PPL_UNSET;
    a->size_min_bytes = a->size_max_bytes = 0;
    a->rails = a->leaf_servers = a->nvlink_domain = a->switch_radix = PPL_UNSET;
    a->rail_only = PPL_UNSET;
    a->nvls = a->sharp = PPL_UNSET;
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
#define MAX_REPAIR_S (365.0 * 86400.0)
#define MAX_SPARES 1e7
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
        const char *end;
        (void)ppl_decimal(v, &end);
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

/* --memory-headroom: a share of the GPU's memory (0.05 or 5%) or a size (4GiB). */
static ppl_status parse_headroom(const opt_def *o, const char *v, ppl_args *a, ppl_error *err)
{
    const char *end;
    double x = ppl_decimal(v, &end);
    if (end != v && isfinite(x) && (*end == '\0' || strcmp(end, "%") == 0)) {
        double f = *end == '%' ? x / 100.0 : x;
        if (!(f >= 0.0 && f < 1.0))
            return ppl_error_set(err, PPL_EUSAGE, "", o->name,
                                 "expected a share from 0 to below 1 (or 0%% to 99%%), found '%s'",
                                 v);
        a->headroom_fraction = f;
        a->headroom_bytes = 0;
        return PPL_OK;
    }
    double bytes;
    ppl_status st = parse_quantity(o, v, PPL_UNIT_BYTES, true, 0, MAX_FLAG_BYTES, &bytes, err);
    if (st == PPL_OK) {
        a->headroom_bytes = bytes;
        a->headroom_fraction = 0;
    }
    return st;
}

/* --within: a share (0.1) or a percentage (10%) above 0, at most 100 (10000%). */
static ppl_status parse_within(const opt_def *o, const char *v, ppl_args *a, ppl_error *err)
{
    const char *end;
    double x = ppl_decimal(v, &end);
    double f = end != v && *end == '%' && end[1] == '\0' ? x / 100.0 : x;
    if (end == v || !isfinite(x) || (*end != '\0' && strcmp(end, "%") != 0) ||
        !(f > 0.0 && f <= 100.0))
        return ppl_error_set(err, PPL_EUSAGE, "", o->name,
                             "expected a share above 0 (0.1, 10%%), at most 100, found '%s'", v);
    a->within = f;
    return PPL_OK;
}

/* --spares: a GPU count (64) or a share of the job's GPUs (1%). */
static ppl_status parse_spares(const opt_def *o, const char *v, ppl_args *a, ppl_error *err)
{
    char show[48];
    shown(v, show, sizeof show);
    size_t n = strlen(v);
    bool share = n > 0 && v[n - 1] == '%';
    char num[48];
    if (n >= sizeof num)
        return ppl_error_set(err, PPL_EUSAGE, "", o->name,
                             "expected a GPU count or a share such as 1%%, found '%s'", show);
    memcpy(num, v, n + 1);
    if (share)
        num[n - 1] = '\0';
    const char *end;
    double x = ppl_decimal(num, &end);
    if (end == num || *end != '\0' || !isfinite(x) || x < 0 ||
        (share ? x > 100.0 : (x > MAX_SPARES || x != floor(x))))
        return ppl_error_set(err, PPL_EUSAGE, "", o->name,
                             "expected a GPU count up to %g or a share from 0%% to 100%%, "
                             "found '%s'",
                             MAX_SPARES, show);
    a->spare_gpus = share ? 0 : (int64_t)x;
    a->spare_fraction = share ? x / 100.0 : 0;
    return PPL_OK;
}

static ppl_status set_value(const opt_def *o, const char *v, ppl_args *a, ppl_error *err)
{
    switch (o->id) {
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
    case O_SPARE_RESTART:
        return parse_quantity(o, v, PPL_UNIT_TIME, true, 0, MAX_RESTART_S, &a->spare_restart_s,
                              err);
    case O_REPAIR:
        return parse_quantity(o, v, PPL_UNIT_TIME, false, 60.0, MAX_REPAIR_S, &a->repair_s, err);
    case O_SPARES: return parse_spares(o, v, a, err);
    case O_PRICE:
        return parse_quantity(o, v, PPL_UNIT_COUNT, false, 0, MAX_PRICE, &a->gpu_hour_price, err);
    case O_TPOT: return parse_quantity(o, v, PPL_UNIT_TIME, false, 1e-6, 3600.0, &a->tpot_s, err);
    case O_TTFT: return parse_quantity(o, v, PPL_UNIT_TIME, false, 1e-6, 3600.0, &a->ttft_s, err);
    case O_REWARD_TIME:
        return parse_quantity(o, v, PPL_UNIT_TIME, true, 0, 86400.0, &a->reward_s, err);
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
    case O_HEADROOM: return parse_headroom(o, v, a, err);
    case O_WITHIN: return parse_within(o, v, a, err);
    case O_GPU_MEMORY:
        return parse_quantity(o, v, PPL_UNIT_BYTES, false, 1e9, 1e15, &a->gpu_memory_bytes, err);
    case O_NVLINK_BW:
        return parse_quantity(o, v, PPL_UNIT_BANDWIDTH, false, 1e9, 1e15, &a->nvlink_bandwidth_bps,
                              err);
    case O_LOSS: {
        double p = 0;
        ppl_status st = parse_quantity(o, v, PPL_UNIT_COUNT, true, 0, 1.0, &p, err);
        if (st == PPL_OK && p >= 1.0)
            return ppl_error_set(err, PPL_EUSAGE, "", o->name, "expected below 1, found %g", p);
        a->loss_rate = p;
        return st;
    }
    case O_SIZES: return parse_sizes(o, v, a, err);
    case O_CV: /* K folds, or "family": leave one source family out */
        if (strcmp(v, "family") == 0) {
            a->cv_folds = PPL_CV_FAMILY;
            return PPL_OK;
        }
        if (parse_int(o, v, &a->cv_folds, err) != PPL_OK) {
            char show[48];
            shown(v, show, sizeof show);
            return ppl_error_set(err, PPL_EUSAGE, "", o->name,
                                 "expected a fold count from %lld to %lld or 'family', found '%s'",
                                 (long long)o->min, (long long)o->max, show);
        }
        return PPL_OK;
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
    case K_SHARE:
        return parse_quantity(o, v, PPL_UNIT_COUNT, true, 0, 1.0, (double *)field_of(o, a), err);
    default: return ppl_error_set(err, PPL_EINTERNAL, "", o->name, "no parser for this option");
    }
}

const opt_def *ppl_cli_option_resolved(const opt_def *o)
{
    static opt_def knobs[O_COUNT];
    static bool ready[O_COUNT];
    if (o->kind != K_KNOB || (unsigned)o->id >= O_COUNT)
        return o;
    if (!ready[o->id]) {
        char name[64];
        size_t n = 0;
        /* "--first-stage-layers" -> "first_stage_layers" */
        for (const char *f = o->name + 2; *f && n + 1 < sizeof name; f++)
            name[n++] = *f == '-' ? '_' : *f;
        name[n] = '\0';
        const ppl_knob *k = ppl_knob_find(name);
        opt_def r = *o;
        if (k) {
            static const opt_kind kinds[] = {[PPL_KNOB_INT] = K_INT,
                                             [PPL_KNOB_ENUM] = K_ENUM,
                                             [PPL_KNOB_BOOL] = K_OPTBOOL,
                                             [PPL_KNOB_SHARE] = K_SHARE};
            r.kind = kinds[k->kind];
            r.offset = offsetof(ppl_args, pins) + k->pin;
            r.min = k->min;
            r.max = k->max;
            r.names = k->values;
        }
        knobs[o->id] = r;
        ready[o->id] = true;
    }
    return &knobs[o->id];
}

static const opt_def *find_option(const char *name, size_t len, char short_name)
{
    for (size_t i = 0; i < ppl_cli_noptions; i++) {
        if (short_name) {
            if (ppl_cli_options[i].short_name == short_name)
                return ppl_cli_option_resolved(&ppl_cli_options[i]);
        } else if (strlen(ppl_cli_options[i].name) == len &&
                   strncmp(ppl_cli_options[i].name, name, len) == 0) {
            return ppl_cli_option_resolved(&ppl_cli_options[i]);
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
    for (size_t i = 0; i < ppl_cli_noptions; i++) {
        const opt_def *o = &ppl_cli_options[i];
        if (!(o->required & C(a->command)) || seen[o->id])
            continue;
        if (a->fit_only && (o->id == O_TOKENS || o->id == O_DAYS))
            continue;
        /* estimate and memory --from PLAN.json give the configuration, the model
         * and the topology */
        if (a->from_plan && (a->command == PPL_CMD_ESTIMATE || a->command == PPL_CMD_MEMORY))
            continue;
        return ppl_error_set(err, PPL_EUSAGE, "", o->name,
                             "required by '%s' (see 'parplan %s --help')",
                             ppl_command_name(a->command), ppl_command_name(a->command));
    }
    if (a->command == PPL_CMD_COMPARE && a->ncompared < 2)
        return ppl_error_set(
            err, PPL_EUSAGE, "", "",
            "compare needs two or more PLAN.json#K (see 'parplan compare --help')");
    if (a->command == PPL_CMD_REPORT && !a->positional)
        return ppl_error_set(err, PPL_EUSAGE, "", "",
                             "report needs a plan's --json output, PLAN.json (see 'parplan report "
                             "--help')");
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
    for (size_t i = 0; i < ppl_cli_ncommands; i++) {
        if (strcmp(ppl_cli_commands[i].word1, w1) != 0)
            continue;
        if (!ppl_cli_commands[i].word2) {
            a->command = ppl_cli_commands[i].cmd;
            *next = 2;
            return PPL_OK;
        }
        if (argc > 2 && strcmp(ppl_cli_commands[i].word2, argv[2]) == 0) {
            a->command = ppl_cli_commands[i].cmd;
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
    bool seen[O_COUNT] = {false};
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (!options_done && strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        if (options_done || arg[0] != '-' || arg[1] == '\0') {
            bool takes = a->command == PPL_CMD_MODEL_SHOW || a->command == PPL_CMD_TOPOLOGY_SHOW ||
                         a->command == PPL_CMD_REPORT;
            shown(arg, show, sizeof show);
            if (a->command == PPL_CMD_COMPARE) {
                if (a->ncompared == PPL_COMPARE_MAX)
                    return ppl_error_set(err, PPL_EUSAGE, "", "",
                                         "compare takes at most %d configurations, found '%s'",
                                         PPL_COMPARE_MAX, show);
                a->compared[a->ncompared++] = arg;
                continue;
            }
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
        seen[o->id] = true;
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
    a->stack_given = seen[O_STACK];
    return check_required(a, seen, err);
}
