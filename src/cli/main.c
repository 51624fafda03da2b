/*
 * main.c - the parplan executable: parse, dispatch, report.
 *
 * The one place that prints diagnostics and picks the exit code (SPEC: 0 ok,
 * 1 nothing feasible, 2 usage, 3 invalid input file, 4 internal failure).  Data
 * go to stdout, or atomically to -o FILE; diagnostics to stderr, one line each.
 */
#include <glpk.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Warnings shown before the rest are only counted: a file with thousands of
 * unknown keys must not bury the answer (or the one line of an error). */
#define MAX_WARNINGS 20

/* A byte as the terminal is given it: a control character (but the line breaks
 * and tabs of text) as '?', so that a file name or a value from an input file
 * never drives the terminal. */
static char shown(unsigned char ch, bool text)
{
    return (ch < 0x20 && !(text && (ch == '\n' || ch == '\t'))) || ch == 0x7f ? '?' : (char)ch;
}

/* Writes "parplan: " and the line to stderr, shown, in one write where it fits
 * (stderr is unbuffered: byte by byte, the lines of processes sharing it, as a
 * sharded sweep's do, would interleave). */
static void print_line(const char *line)
{
    char out[4096];
    size_t n = (size_t)snprintf(out, sizeof out, "parplan: ");
    for (const unsigned char *p = (const unsigned char *)line; *p; p++) {
        if (n + 1 >= sizeof out) { /* full but for the line break */
            fwrite(out, 1, n, stderr);
            n = 0;
        }
        out[n++] = shown(*p, false);
    }
    out[n++] = '\n';
    fwrite(out, 1, n, stderr);
}

static void print_warning(void *ctx, const char *file, const char *key, const char *message)
{
    long *count = ctx;
    if (++*count > MAX_WARNINGS)
        return;
    char line[PPL_ERROR_FILE_MAX + PPL_ERROR_KEY_MAX + PPL_ERROR_MSG_MAX + 32];
    if (file[0] && key[0])
        snprintf(line, sizeof line, "warning: %s: %s: %s", file, key, message);
    else if (file[0] || key[0])
        snprintf(line, sizeof line, "warning: %s: %s", file[0] ? file : key, message);
    else
        snprintf(line, sizeof line, "warning: %s", message);
    print_line(line);
}

static ppl_status dispatch(cli *c)
{
    switch (c->args->command) {
    case PPL_CMD_COLLECTIVE: return cmd_collective(c);
    case PPL_CMD_ESTIMATE: return cmd_estimate(c);
    case PPL_CMD_MEMORY: return cmd_memory(c);
    case PPL_CMD_SIZE: return cmd_size(c);
    case PPL_CMD_WHATIF: return cmd_whatif(c);
    case PPL_CMD_TOPOLOGY_GENERATE: return cmd_generate(c);
    case PPL_CMD_PLAN: return cmd_plan(c);
    case PPL_CMD_VALIDATE: return cmd_validate(c);
    case PPL_CMD_COMPARE: return cmd_compare(c);
    case PPL_CMD_REPORT: return cmd_report(c);
    case PPL_CMD_SERVE: return cmd_serve(c);
    case PPL_CMD_RL: return cmd_rl(c);
    case PPL_CMD_MODELS: return cmd_models(c);
    case PPL_CMD_MODEL_SHOW: return cmd_model_show(c);
    case PPL_CMD_TOPOLOGIES: return cmd_topologies(c);
    case PPL_CMD_TOPOLOGY_SHOW: return cmd_topology_show(c);
    case PPL_CMD_NONE:
    case PPL_CMD_COUNT: break;
    }
    return ppl_error_set(&c->err, PPL_EINTERNAL, "", "", "no such command");
}

/* Checks -o and --plot before any work: a directory, or a file the command reads
 * (the model, the topology, the runs; the catalogue name resolved), is exit 2 and
 * stays as it is. */
static ppl_status check_outputs(cli *c)
{
    const ppl_args *a = c->args;
    const char *outs[] = {a->output_path, a->plot_path, a->report_path};
    const char *flags[] = {"-o", "--plot", "--report"};
    struct input {
        const char *arg, *flag;
        int kind; /* ppl_catalog_kind, or -1: a plain path */
    } ins[] = {
        {a->model, "--model", PPL_CATALOG_MODELS},
        {a->topology, "--topology", PPL_CATALOG_TOPOLOGIES},
        {a->runs, "--runs", -1},
        {a->constants_path, "--constants", -1},
        {a->merge_path && strcmp(a->merge_path, "-") != 0 ? a->merge_path : NULL, "--merge", -1},
        {a->positional, "", -1}};
    /* PLAN.json#K: the file before '#' */
    char plans[2 + PPL_COMPARE_MAX][1024];
    size_t nplans = 0;
    const char *specs[2 + PPL_COMPARE_MAX] = {a->from_plan, a->positional};
    for (int i = 0; i < a->ncompared; i++)
        specs[2 + i] = a->compared[i];
    for (size_t i = 0; i < 2 + (size_t)a->ncompared; i++)
        if (specs[i])
            snprintf(plans[nplans++], sizeof plans[0], "%.*s", (int)cli_plan_file_len(specs[i]),
                     specs[i]);
    for (size_t i = 0; i < 3; i++) {
        if (outs[i] && outs[i][0] == '\0')
            return ppl_error_set(&c->err, PPL_EUSAGE, "", flags[i],
                                 "expected a file name (or - for stdout), found an empty one");
        if (!outs[i] || strcmp(outs[i], "-") == 0)
            continue;
        for (size_t k = 0; k < nplans; k++)
            if (ppl_same_file(outs[i], plans[k]))
                return ppl_error_set(&c->err, PPL_EUSAGE, "", flags[i],
                                     "%s is the plan this command reads: writing it would "
                                     "destroy the input",
                                     outs[i]);
        ppl_status st = ppl_output_check(outs[i], &c->err);
        if (st != PPL_OK) {
            snprintf(c->err.key, sizeof c->err.key, "%s", flags[i]);
            return st;
        }
        if (i > 0 && outs[0] && (strcmp(outs[0], outs[i]) == 0 || ppl_same_file(outs[0], outs[i])))
            return ppl_error_set(&c->err, PPL_EUSAGE, "", flags[i], "%s is also the -o file",
                                 outs[i]);
        for (size_t k = 0; k < sizeof ins / sizeof *ins; k++) {
            char path[PATH_MAX];
            ppl_error ignored;
            if (!ins[k].arg)
                continue;
            if (ins[k].kind < 0 || ppl_catalog_resolve((ppl_catalog_kind)ins[k].kind, ins[k].arg,
                                                       path, sizeof path, &ignored) != PPL_OK)
                snprintf(path, sizeof path, "%s", ins[k].arg);
            if (ppl_same_file(outs[i], path))
                return ppl_error_set(&c->err, PPL_EUSAGE, "", flags[i],
                                     "%s is the file this command reads%s%s: writing it would "
                                     "destroy the input",
                                     outs[i], ins[k].flag[0] ? " as " : "", ins[k].flag);
        }
    }
    return PPL_OK;
}

static int finish(int status)
{
    glp_free_env();
    ppl_jr_release();
    return status;
}

/* The library names a configuration knob ("first_stage_layers"), or the model,
 * topology or sweep, where the user gave a flag: say the flag. */
static void knob_to_flag(ppl_error *err)
{
    static const char *const others[] = {"model", "topology", "sweep", "seq_len", NULL};
    if (err->status != PPL_EUSAGE || err->file[0])
        return;
    bool named = ppl_knob_find(err->key) != NULL;
    for (size_t i = 0; others[i] && !named; i++)
        named = strcmp(err->key, others[i]) == 0;
    if (named) {
        char flag[PPL_ERROR_KEY_MAX];
        cli_flag_of(err->key, flag, sizeof flag);
        memcpy(err->key, flag, strlen(flag) + 1);
    }
}

static void report(ppl_error *err)
{
    char line[PPL_ERROR_FILE_MAX + PPL_ERROR_KEY_MAX + PPL_ERROR_MSG_MAX + 16];
    knob_to_flag(err);
    ppl_error_format(err, line, sizeof line);
    print_line(line);
}

int main(int argc, char **argv)
{
    ppl_args args;
    cli c;
    /* a closed pipe, or a write past the file-size limit (ulimit -f), is a write
     * error (exit 4), not a signal that kills the process mid-write */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
#ifdef __GLIBC__
    /* a search allocates and frees blocks of megabytes (caches, the pipeline
     * executor's tables) thousands of times: kept in the heap rather than mapped
     * and unmapped (or trimmed) each time, their pages fault in once, not on
     * every use (Megatron 1T on the mixed cluster: 40,000 faults, 0.31 s of
     * system time) */
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024); /* glibc's documented most */
    mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024);
#endif
    long warnings = 0;
    memset(&c, 0, sizeof c);
    c.args = &args;
    c.diag.warn = print_warning;
    c.diag.ctx = &warnings;
    ppl_buf_init(&c.out);

    ppl_status st = ppl_args_parse(argc, argv, &args, &c.err);
    if (st != PPL_OK) {
        report(&c.err);
        return finish(st);
    }
    if (args.version || args.help || args.command == PPL_CMD_NONE) {
        if (args.version)
            cli_version(&c.out);
        else
            cli_help(args.command, &c.out);
        /* bare `parplan` is a usage error: the overview is its diagnostic, on
         * stderr; --help and --version are data, on stdout */
        const bool bare = !args.version && !args.help;
        if (bare) {
            if (c.out.len > 0)
                (void)fwrite(c.out.data, 1, c.out.len, stderr);
            st = PPL_EUSAGE;
        } else if ((st = ppl_output_write(NULL, &c.out, &c.err)) != PPL_OK) {
            report(&c.err);
        }
        ppl_buf_free(&c.out);
        return finish(st);
    }
    c.constants = *ppl_constants_committed();
    st = check_outputs(&c);
    if (st == PPL_OK && args.constants_path) {
        st = ppl_constants_load(args.constants_path, &c.diag, &c.constants, &c.err);
        if (st == PPL_EINPUT && strcmp(c.err.message, "unknown constant") == 0)
            snprintf(c.err.message, sizeof c.err.message,
                     "unknown constant (see parplan validate --fit --json)");
    }
    if (st == PPL_OK)
        st = dispatch(&c);
    /* an infeasible result is written when the command has something to say
     * (estimate, memory); an empty one must not replace an -o file with nothing */
    if (st == PPL_OK || (st == PPL_INFEASIBLE && c.out.len > 0)) {
        /* a table or text never carries a control character from an input (a
         * model's source, a name) to the terminal; JSON escapes them itself */
        if (!args.json && args.command != PPL_CMD_REPORT &&
            args.command != PPL_CMD_TOPOLOGY_GENERATE)
            for (size_t i = 0; i < c.out.len; i++)
                c.out.data[i] = shown((unsigned char)c.out.data[i], true);
        ppl_status wst = ppl_output_write(args.output_path, &c.out, &c.err);
        if (wst != PPL_OK)
            st = wst;
    }
    if (warnings > MAX_WARNINGS)
        fprintf(stderr, "parplan: warning: %ld more warnings not shown\n", warnings - MAX_WARNINGS);
    if (st != PPL_OK && c.err.message[0])
        report(&c.err);
    ppl_buf_free(&c.out);
    cli_from_clear(&c);
    json_decref(c.model_doc);
    json_decref(c.topology_doc);
    return finish(st);
}
