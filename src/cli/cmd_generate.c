/*
 * cmd_generate.c - `parplan topology generate`: a topology file for a parametric
 * cluster.
 *
 * Tier sizes follow the folded-Clos construction (Al-Fares et al. SIGCOMM'08) with
 * switches of radix R and down:up ratio o (down ports R o/(o+1)): a group of a tier
 * below the top joins as many groups of the tier inside it as its switches have
 * down ports for (R o/(o+1) / the switches of one inner group); the top tier joins
 * R inner groups, one link from each to every top switch.  A radix-64,
 * non-blocking, rail-optimized fabric of 8-rail servers so gives leaf groups of
 * 32 servers, pods of 32 x 32 / 8 = 128 servers and a top of 64 pods = 8,192
 * servers: the 65,536-GPU cluster.  The result is checked by the topology loader.
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
    snprintf(buf, sizeof buf, "%s", text);
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

ppl_status cmd_generate(cli *c)
{
    const ppl_args *a = c->args;
    char kinds[128];
    const ppl_gpu_spec *gpu = ppl_gpu_lookup(a->gpu_name);
    if (!gpu) {
        ppl_gpu_kinds(kinds, sizeof kinds);
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--gpu",
                             "unknown GPU kind '%.40s' (known: %s)", a->gpu_name, kinds);
    }
    const int64_t S = a->servers, G = a->gpus_per_server, rails = a->rails, K = a->leaf_servers;
    const int64_t R = a->switch_radix != PPL_UNSET ? a->switch_radix : 64;
    if (rails > G || G % rails != 0)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--rails",
                             "%lld must divide --gpus-per-server (%lld)", (long long)rails,
                             (long long)G);
    if (K > S || S % K != 0)
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "--leaf-servers",
                             "%lld must divide --servers (%lld)", (long long)K, (long long)S);
    double os[PPL_MAX_TIERS] = {1, 1, 1, 1, 1, 1, 1, 1};
    int nos = 0;
    ppl_status st;
    if (a->oversubscription &&
        (st = parse_list(c, "--oversubscription", a->oversubscription, os, PPL_MAX_TIERS, &nos)))
        return st;
    if (nos == 1)
        for (int i = 1; i < PPL_MAX_TIERS; i++)
            os[i] = os[0];
    /* tier sizes: explicit list, a count, or as many as the servers need */
    int64_t sizes[PPL_MAX_TIERS];
    int ntiers = 0, want = 0;
    if (a->tiers) {
        double given[PPL_MAX_TIERS];
        int n;
        if ((st = parse_list(c, "--tiers", a->tiers, given, PPL_MAX_TIERS, &n)))
            return st;
        if (n == 1 && given[0] <= PPL_MAX_TIERS && given[0] == floor(given[0]))
            want = (int)given[0];
        else {
            for (int i = 0; i < n; i++)
                sizes[i] = (int64_t)given[i];
            ntiers = n;
        }
    }
    if (ntiers == 0) {
        /* the leaf: one switch per rail when the leaf group fits its down ports */
        int64_t down, up;
        ppl_switch_ports(R, os[0], false, &down, &up);
        int64_t switches = K <= down ? rails : ppl_ceil_div(K * rails, down);
        sizes[ntiers++] = K;
        while (sizes[ntiers - 1] < S) {
            if (ntiers == PPL_MAX_TIERS)
                return ppl_error_set(&c->err, PPL_EUSAGE, "", "--servers",
                                     "%lld servers need more than %d tiers of radix-%lld switches",
                                     (long long)S, PPL_MAX_TIERS, (long long)R);
            int64_t inner = sizes[ntiers - 1];
            bool last = want ? ntiers == want - 1 : inner * R >= S;
            if (last) {
                /* the top joins R inner groups, one link from each to every top switch */
                if (inner * R < S)
                    return ppl_error_set(
                        &c->err, PPL_EUSAGE, "", "--tiers",
                        "%d tiers of radix-%lld switches hold at most %lld servers "
                        "in leaf groups of %lld",
                        want, (long long)R, (long long)(inner * R), (long long)K);
                sizes[ntiers++] = S;
                break;
            }
            /* a middle tier's switch links to each inner switch of its group once */
            int64_t d, d_up;
            ppl_switch_ports(R, os[ntiers], false, &d, &d_up);
            int64_t next = inner * (d / switches);
            if (next <= inner)
                return ppl_error_set(
                    &c->err, PPL_EUSAGE, "", "--leaf-servers",
                    "radix-%lld switches cannot join groups of %lld servers "
                    "(%lld switches each) into larger ones; give --tiers sizes explicitly",
                    (long long)R, (long long)inner, (long long)switches);
            if (next > S)
                next = S;
            /* a group must divide the cluster: take the largest that does */
            while (next > inner && S % next != 0)
                next -= inner;
            if (next <= inner)
                return ppl_error_set(&c->err, PPL_EUSAGE, "", "--servers",
                                     "%lld servers do not split into groups of tier %d; give "
                                     "--tiers sizes explicitly",
                                     (long long)S, ntiers);
            sizes[ntiers++] = next;
            switches = up; /* switches of the new group: the inner switches' uplinks / d x d */
            up = d_up;
        }
        if (want && ntiers != want)
            return ppl_error_set(&c->err, PPL_EUSAGE, "", "--tiers",
                                 "%lld servers in leaf groups of %lld take %d tiers, not %d",
                                 (long long)S, (long long)K, ntiers, want);
    }
    int64_t domain = a->nvlink_domain != PPL_UNSET ? a->nvlink_domain
                     : gpu->domain_gpus > G        ? gpu->domain_gpus
                                                   : G;

    json_t *t = json_object();
    char name[128], source[768], bw[64];
    if (a->name)
        snprintf(name, sizeof name, "%s", a->name);
    else
        snprintf(name, sizeof name, "%s-%lldx%lld", gpu->kind, (long long)S, (long long)G);
    snprintf(source, sizeof source,
             "generated by parplan topology generate: %lld servers x %lld %s, %lld rails, leaf "
             "groups of %lld servers, radix-%lld switches (folded-Clos sizing, Al-Fares et al. "
             "SIGCOMM'08). GPU: %s",
             (long long)S, (long long)G, gpu->kind, (long long)rails, (long long)K, (long long)R,
             gpu->source);
    json_object_set_new(t, "schema_version", json_integer(1));
    json_object_set_new(t, "name", json_string(name));
    json_object_set_new(t, "source", json_string(source));
    json_object_set_new(t, "gpu", json_string(gpu->kind));
    json_object_set_new(t, "servers", json_integer(S));
    json_object_set_new(t, "gpus_per_server", json_integer(G));
    json_t *nv = json_object();
    json_object_set_new(nv, "domain_gpus", json_integer(domain));
    snprintf(bw, sizeof bw, "%.0f GB/s", gpu->nvlink_bps / 1e9);
    json_object_set_new(nv, "bandwidth", json_string(bw));
    json_object_set_new(nv, "latency", json_string("1 us"));
    json_object_set_new(t, "nvlink", nv);
    json_t *rl = json_object();
    json_object_set_new(rl, "count", json_integer(rails));
    snprintf(bw, sizeof bw, "%.6g Gb/s", a->nic_bandwidth_bps * 8.0 / 1e9);
    json_object_set_new(rl, "nic_bandwidth", json_string(bw));
    json_object_set_new(rl, "latency", json_string("2 us"));
    json_object_set_new(t, "rails", rl);
    json_t *tiers = json_array();
    static const char *const names3[] = {"leaf", "spine", "core"};
    for (int i = 0; i < ntiers; i++) {
        json_t *e = json_object();
        char tn[16];
        if (ntiers <= 3)
            snprintf(tn, sizeof tn, "%s", ntiers == 2 && i == 1 ? "spine" : names3[i]);
        else
            snprintf(tn, sizeof tn, "tier%d", i);
        json_object_set_new(e, "name", json_string(tn));
        json_object_set_new(e, "servers", json_integer(sizes[i]));
        json_object_set_new(e, "rail_optimized", json_boolean(i == 0 && rails > 1));
        json_object_set_new(e, "oversubscription", ppl_json_real(i == ntiers - 1 ? 1.0 : os[i]));
        json_object_set_new(e, "latency", json_string("1 us"));
        json_array_append_new(tiers, e);
    }
    json_object_set_new(t, "tiers", tiers);
    json_object_set_new(t, "rail_only", json_boolean(a->rail_only == 1));
    json_object_set_new(t, "switch_radix", json_integer(R));
    json_t *x = json_object();
    json_object_set_new(x, "protocol", json_string("infiniband"));
    json_object_set_new(x, "mtu", json_integer(4096));
    json_object_set_new(x, "loss_rate", ppl_json_real(0.0));
    json_object_set_new(x, "retransmit", json_string("go-back-n"));
    json_object_set_new(x, "rtt", json_string("10 us"));
    json_object_set_new(t, "transport", x);

    /* what we write must load */
    ppl_topology check;
    ppl_error err;
    if (ppl_topology_from_json(t, "(generated)", "", &c->diag, &check, &err) != PPL_OK) {
        char line[1024];
        ppl_error_format(&err, line, sizeof line);
        json_decref(t);
        return ppl_error_set(&c->err, PPL_EUSAGE, "", "",
                             "these flags give an invalid topology: %s", line);
    }
    return cli_emit_json(c, t);
}
