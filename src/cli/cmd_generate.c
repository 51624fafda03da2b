/*
 * cmd_generate.c - `parplan topology generate`: a topology file for a parametric
 * cluster.
 *
 * The flags fill a ppl_topogen_opts; the library sizes the tiers and writes the
 * document (topogen.c), and this prints it.  What stays here is the command
 * line's own: reading the comma lists of --tiers and --oversubscription, and
 * saying the flag where the library names an option by its field.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* "4" or "1,4,1": one value for every tier below the top, or one per tier. */
static ppl_status parse_list(cli *c, const char *flag, const char *text, double *out, int max,
                             int *count)
{
    char buf[256], why[160];
    int n = 0;
    const size_t len = strlen(text);
    if (len >= sizeof buf) /* never cut: a cut list is another list */
        return ppl_error_set(&c->err, PPL_EUSAGE, "", flag, "at most %zu characters, found %zu",
                             sizeof buf - 1, len);
    memcpy(buf, text, len + 1);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (n >= max)
            return ppl_error_set(&c->err, PPL_EUSAGE, "", flag, "at most %d values", max);
        if (ppl_parse_quantity(tok, PPL_UNIT_COUNT, &out[n], why, sizeof why) != PPL_OK ||
            !(out[n] > 0))
            return ppl_error_set(&c->err, PPL_EUSAGE, "", flag,
                                 "expected positive numbers, found '%.40s'", tok);
        n++;
    }
    if (n == 0)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", flag, "expected a value");
    *count = n;
    return PPL_OK;
}

/* Replaces the first `from` in msg (of size bytes) with `to`, when it fits. */
static void replace_once(char *msg, size_t size, const char *from, const char *to)
{
    char *at = strstr(msg, from);
    if (!at)
        return;
    char rest[PPL_ERROR_MSG_MAX];
    snprintf(rest, sizeof rest, "%s", at + strlen(from));
    snprintf(at, size - (size_t)(at - msg), "%s%s", to, rest);
}

/* The library names an option by its field of ppl_topogen_opts, as the key and
 * where a message refers to another option; the command line says the flag, so
 * that its messages read as they always have. */
static ppl_status say_flags(ppl_error *err)
{
    static const struct {
        const char *field, *flag;
    } keys[] = {
        {"gpu", "--gpu"},
        {"servers", "--servers"},
        {"gpus_per_server", "--gpus-per-server"},
        {"rails", "--rails"},
        {"nic_bandwidth_bps", "--nic-bandwidth"},
        {"leaf_servers", "--leaf-servers"},
        {"tiers", "--tiers"},
        {"ntier_servers", "--tiers"},
        {"oversubscription", "--oversubscription"},
        {"nvlink_domain_gpus", "--nvlink-domain"},
        {"switch_radix", "--switch-radix"},
    };
    /* the references, with the words that make them unambiguous in a message */
    static const struct {
        const char *library, *cli;
    } refs[] = {
        {"must divide gpus_per_server", "must divide --gpus-per-server"},
        {"must divide servers", "must divide --servers"},
        {"give tier_servers explicitly", "give --tiers sizes explicitly"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(err->key, keys[i].field) == 0) {
            snprintf(err->key, sizeof err->key, "%s", keys[i].flag);
            break;
        }
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
        replace_once(err->message, sizeof err->message, refs[i].library, refs[i].cli);
    return err->status;
}

ppl_status cmd_generate(cli *c)
{
    const ppl_args *a = c->args;
    ppl_topogen_opts o;
    ppl_topogen_opts_init(&o);
    o.gpu = a->gpu_name;
    o.servers = a->servers;
    o.gpus_per_server = a->gpus_per_server;
    o.rails = a->rails == PPL_UNSET ? 0 : a->rails;
    o.nic_bandwidth_bps = a->nic_bandwidth_bps;
    o.leaf_servers = a->leaf_servers;
    if (a->nvlink_domain != PPL_UNSET)
        o.nvlink_domain_gpus = a->nvlink_domain;
    o.rail_only = a->rail_only == 1;
    o.nvls = a->nvls == 1;
    o.sharp = a->sharp == 1;
    o.gpu_memory_bytes = a->gpu_memory_bytes;
    o.nvlink_bandwidth_bps = a->nvlink_bandwidth_bps;
    o.transport = ppl_transport_names[a->transport];
    o.loss_rate = a->loss_rate;
    if (a->switch_radix != PPL_UNSET)
        o.switch_radix = a->switch_radix;
    o.name = a->name;
    /* --gpu, --rails and --leaf-servers are judged before the lists are read */
    if (ppl_topogen_check(&o, &c->err) != PPL_OK)
        return say_flags(&c->err);

    ppl_status st;
    int n = 0;
    if (a->oversubscription) {
        if ((st = parse_list(c, "--oversubscription", a->oversubscription, o.oversubscription,
                             PPL_MAX_TIERS, &n)))
            return st;
        if (n == 1) /* one value for every tier */
            for (int i = 1; i < PPL_MAX_TIERS; i++)
                o.oversubscription[i] = o.oversubscription[0];
    }
    /* "N", a count of tiers, or "S1,S2,..", the servers per group of each */
    if (a->tiers) {
        double given[PPL_MAX_TIERS];
        if ((st = parse_list(c, "--tiers", a->tiers, given, PPL_MAX_TIERS, &n)))
            return st;
        /* whole numbers a count holds, checked before the cast (a larger double
         * has no int64 value) */
        for (int i = 0; i < n; i++)
            if (given[i] != floor(given[i]) || given[i] > 1e15)
                return ppl_error_set(&c->err, PPL_EUSAGE, "", "--tiers",
                                     "expected whole numbers up to 1e15, found %.6g", given[i]);
        if (n == 1 && given[0] <= PPL_MAX_TIERS)
            o.tiers = (int)given[0];
        else {
            for (int i = 0; i < n; i++)
                o.tier_servers[i] = (int64_t)given[i];
            o.ntier_servers = n;
        }
    }

    json_t *t;
    if (ppl_topogen(&o, &t, NULL, &c->err) != PPL_OK) {
        if (!c->err.file[0])
            return say_flags(&c->err);
        /* the document failed the topology loader: its error, after what caused it */
        char line[1024];
        ppl_error_format(&c->err, line, sizeof line);
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "",
                             "these flags give an invalid topology: %s", line);
    }
    return cli_emit_json(c, t);
}
