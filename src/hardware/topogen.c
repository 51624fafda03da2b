/*
 * topogen.c - a topology for a parametric cluster.
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
#include "hardware/topogen.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "base/output.h"

/* A usage error naming the option (its field in ppl_topogen_opts) at fault. */
#define bad(err, knob, ...) ppl_error_set((err), PPL_EUSAGE, "", (knob), __VA_ARGS__)

void ppl_topogen_opts_init(ppl_topogen_opts *opts)
{
    *opts = (ppl_topogen_opts){.switch_radix = PPL_DEFAULT_SWITCH_RADIX};
    for (int i = 0; i < PPL_MAX_TIERS; i++)
        opts->oversubscription[i] = 1.0;
}

/* The options with their defaults from the GPU kind: a NIC per GPU, each the
 * platform's (ConnectX-7 400 Gb/s on HGX H100, ConnectX-8 800 Gb/s on B300 and
 * GB300: gpu.c). */
static ppl_topogen_opts resolved(const ppl_topogen_opts *o)
{
    ppl_topogen_opts d = *o;
    const ppl_gpu_spec *g = ppl_gpu_lookup(o->gpu);
    if (d.rails == 0 && d.gpus_per_server > 0)
        d.rails = d.gpus_per_server;
    if (d.nic_bandwidth_bps == 0.0 && g && g->nic_bps > 0.0 && d.rails > 0)
        d.nic_bandwidth_bps = g->nic_bps * (double)d.gpus_per_server / (double)d.rails;
    return d;
}

static ppl_status check(const ppl_topogen_opts *o, ppl_error *err);

ppl_status ppl_topogen_check(const ppl_topogen_opts *opts, ppl_error *err)
{
    ppl_topogen_opts o = resolved(opts);
    return check(&o, err);
}

static ppl_status check(const ppl_topogen_opts *o, ppl_error *err)
{
    char kinds[128];
    if (!ppl_gpu_lookup(o->gpu)) {
        ppl_gpu_kinds(kinds, sizeof kinds);
        if (!o->gpu)
            return bad(err, "gpu", "expected a GPU kind (known: %s)", kinds);
        return bad(err, "gpu", "unknown GPU kind '%.40s' (known: %s)", o->gpu, kinds);
    }
    /* ranges: what the sizing below divides by or multiplies */
    if (o->servers < 1)
        return bad(err, "servers", "expected at least 1, found %lld", (long long)o->servers);
    if (o->gpus_per_server < 1)
        return bad(err, "gpus_per_server", "expected at least 1, found %lld",
                   (long long)o->gpus_per_server);
    if (o->rails < 1)
        return bad(err, "rails", "expected at least 1, found %lld", (long long)o->rails);
    if (!(o->nic_bandwidth_bps > 0) || !isfinite(o->nic_bandwidth_bps))
        return bad(err, "nic_bandwidth_bps", "expected a positive number of bytes/s, found %g",
                   o->nic_bandwidth_bps);
    if (o->leaf_servers < 1)
        return bad(err, "leaf_servers", "expected at least 1, found %lld",
                   (long long)o->leaf_servers);
    /* a switch below the top needs a port down and one up */
    if (o->switch_radix < 2)
        return bad(err, "switch_radix", "expected at least 2 ports, found %lld",
                   (long long)o->switch_radix);
    if (o->servers > INT64_MAX / o->switch_radix || o->servers > INT64_MAX / o->gpus_per_server)
        return bad(err, "servers", "%lld is too many to count switch ports and GPUs of",
                   (long long)o->servers);
    if (o->tiers < 0 || o->tiers > PPL_MAX_TIERS)
        return bad(err, "tiers", "expected 0 (as many as needed) to %d, found %d", PPL_MAX_TIERS,
                   o->tiers);
    if (o->ntier_servers < 0 || o->ntier_servers > PPL_MAX_TIERS)
        return bad(err, "ntier_servers", "expected 0 to %d, found %d", PPL_MAX_TIERS,
                   o->ntier_servers);
    if (o->ntier_servers > 0 && o->tiers != 0 && o->tiers != o->ntier_servers)
        return bad(err, "tiers", "%d, but tier_servers gives %d tiers", o->tiers, o->ntier_servers);
    for (int i = 0; i < PPL_MAX_TIERS; i++)
        if (!(o->oversubscription[i] > 0) || !isfinite(o->oversubscription[i]))
            return bad(err, "oversubscription", "expected positive numbers, found %g at tier %d",
                       o->oversubscription[i], i);
    if (o->nvlink_domain_gpus < 0)
        return bad(err, "nvlink_domain_gpus", "expected at least 0 (the GPU's own), found %lld",
                   (long long)o->nvlink_domain_gpus);
    /* pairs of options */
    const int64_t S = o->servers, G = o->gpus_per_server, rails = o->rails, K = o->leaf_servers;
    if (rails > G || G % rails != 0)
        return bad(err, "rails", "%lld must divide gpus_per_server (%lld)", (long long)rails,
                   (long long)G);
    if (K > S || S % K != 0)
        return bad(err, "leaf_servers", "%lld must divide servers (%lld)", (long long)K,
                   (long long)S);
    return PPL_OK;
}

/* Servers per group of each tier, innermost first: as given, or sized from the
 * radix for o->tiers tiers (0: as many as the servers need). */
static ppl_status size_tiers(const ppl_topogen_opts *o, int64_t *sizes, int *count, ppl_error *err)
{
    const int64_t S = o->servers, rails = o->rails, K = o->leaf_servers, R = o->switch_radix;
    const double *os = o->oversubscription;
    const int want = o->tiers;
    int ntiers = 0;
    if (o->ntier_servers > 0) {
        for (int i = 0; i < o->ntier_servers; i++)
            sizes[i] = o->tier_servers[i];
        *count = o->ntier_servers;
        return PPL_OK;
    }
    /* the leaf: one switch per rail when the leaf group fits its down ports */
    int64_t down, up;
    ppl_switch_ports(R, os[0], false, &down, &up);
    int64_t switches = K <= down ? rails : ppl_ceil_div(K * rails, down);
    sizes[ntiers++] = K;
    while (sizes[ntiers - 1] < S) {
        if (ntiers == PPL_MAX_TIERS)
            return bad(err, "servers",
                       "%lld servers need more than %d tiers of radix-%lld switches", (long long)S,
                       PPL_MAX_TIERS, (long long)R);
        int64_t inner = sizes[ntiers - 1];
        bool last = want ? ntiers == want - 1 : inner * R >= S;
        if (last) {
            /* the top joins R inner groups, one link from each to every top switch */
            if (inner * R < S)
                return bad(err, "tiers",
                           "%d tiers of radix-%lld switches hold at most %lld servers "
                           "in leaf groups of %lld",
                           want, (long long)R, (long long)(inner * R), (long long)K);
            sizes[ntiers++] = S;
            break;
        }
        /* an oversubscription so large that floor(R o/(o+1)) is R leaves the inner
         * switches no uplinks: nothing above can join their groups */
        if (switches == 0) /* only from the second middle tier on: the uplinks of tier n - 2 */
            return bad(err, "oversubscription",
                       "%g at tier %d leaves its radix-%lld switches no uplinks", os[ntiers - 2],
                       ntiers - 2, (long long)R);
        /* a middle tier's switch links to each inner switch of its group once */
        int64_t d, d_up;
        ppl_switch_ports(R, os[ntiers], false, &d, &d_up);
        int64_t next = inner * (d / switches);
        if (next <= inner)
            return bad(err, "leaf_servers",
                       "radix-%lld switches cannot join groups of %lld servers "
                       "(%lld switches each) into larger ones; give tier_servers explicitly",
                       (long long)R, (long long)inner, (long long)switches);
        if (next > S)
            next = S;
        /* a group must divide the cluster: take the largest that does */
        while (next > inner && S % next != 0)
            next -= inner;
        if (next <= inner)
            return bad(err, "servers",
                       "%lld servers do not split into groups of tier %d; give "
                       "tier_servers explicitly",
                       (long long)S, ntiers);
        sizes[ntiers++] = next;
        switches = up; /* switches of the new group: the inner switches' uplinks / d x d */
        up = d_up;
    }
    if (want && ntiers != want)
        return bad(err, "tiers", "%lld servers in leaf groups of %lld take %d tiers, not %d",
                   (long long)S, (long long)K, ntiers, want);
    *count = ntiers;
    return PPL_OK;
}

static json_t *document(const ppl_topogen_opts *o, const ppl_gpu_spec *gpu, const int64_t *sizes,
                        int ntiers)
{
    const int64_t S = o->servers, G = o->gpus_per_server, rails = o->rails, K = o->leaf_servers;
    const int64_t R = o->switch_radix;
    int64_t domain = o->nvlink_domain_gpus > 0 ? o->nvlink_domain_gpus
                     : gpu->domain_gpus > G    ? gpu->domain_gpus
                                               : G;
    double nvlink_bps = gpu->nvlink_bps;
    if (gpu->mesh) {
        /* a mesh stays inside its server (topology.c): with fewer GPUs than the
         * platform's, fewer links, each at the platform's per-link rate */
        if (o->nvlink_domain_gpus <= 0)
            domain = gpu->domain_gpus < G ? gpu->domain_gpus : G;
        if (domain > 1)
            nvlink_bps = gpu->nvlink_bps / (double)(gpu->domain_gpus - 1) * (double)(domain - 1);
    }
    json_t *t = json_object();
    char name[128], source[1536], bw[64];
    if (o->name)
        snprintf(name, sizeof name, "%s", o->name);
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
    if (o->gpu_memory_bytes > 0) { /* the kind's figures, its memory overridden */
        json_t *g = json_object();
        json_object_set_new(g, "name", json_string(gpu->full_name));
        json_object_set_new(g, "memory", ppl_json_real(o->gpu_memory_bytes));
        json_object_set_new(t, "gpu", g);
    } else {
        json_object_set_new(t, "gpu", json_string(gpu->kind));
    }
    json_object_set_new(t, "servers", json_integer(S));
    json_object_set_new(t, "gpus_per_server", json_integer(G));
    json_t *nv = json_object();
    json_object_set_new(nv, "domain_gpus", json_integer(domain));
    /* "%.6g": 537.6 GB/s (MI355X's 7 links) stays whole */
    if (o->nvlink_bandwidth_bps > 0) /* --nvlink-bandwidth */
        nvlink_bps = o->nvlink_bandwidth_bps;
    snprintf(bw, sizeof bw, "%.6g GB/s", nvlink_bps / 1e9);
    json_object_set_new(nv, "bandwidth", json_string(bw));
    json_object_set_new(nv, "latency", json_string("1 us"));
    if (o->nvls)
        json_object_set_new(nv, "sharp", json_true());
    /* AMD Infinity Fabric: a link from each GPU to every other, no switch; the
     * bandwidth above is the sum over the links (gpu.c) */
    if (gpu->mesh)
        json_object_set_new(nv, "fabric", json_string("mesh"));
    json_object_set_new(t, "nvlink", nv);
    json_t *rl = json_object();
    json_object_set_new(rl, "count", json_integer(rails));
    snprintf(bw, sizeof bw, "%.6g Gb/s", o->nic_bandwidth_bps * 8.0 / 1e9);
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
        json_object_set_new(e, "oversubscription",
                            ppl_json_real(i == ntiers - 1 ? 1.0 : o->oversubscription[i]));
        json_object_set_new(e, "latency", json_string("1 us"));
        json_array_append_new(tiers, e);
    }
    json_object_set_new(t, "tiers", tiers);
    json_object_set_new(t, "rail_only", json_boolean(o->rail_only));
    json_object_set_new(t, "switch_radix", json_integer(R));
    json_t *x = json_object();
    json_object_set_new(x, "protocol", json_string(o->transport ? o->transport : "infiniband"));
    json_object_set_new(x, "mtu", json_integer(4096));
    json_object_set_new(x, "loss_rate", ppl_json_real(o->loss_rate));
    json_object_set_new(x, "retransmit", json_string("go-back-n"));
    json_object_set_new(x, "rtt", json_string("10 us"));
    if (o->sharp)
        json_object_set_new(x, "sharp", json_true());
    json_object_set_new(t, "transport", x);
    return t;
}

ppl_status ppl_topogen(const ppl_topogen_opts *opts, json_t **out, ppl_topology *topo,
                       ppl_error *err)
{
    if (out)
        *out = NULL;
    const ppl_topogen_opts d = resolved(opts), *o = &d;
    ppl_status st = check(o, err);
    if (st != PPL_OK)
        return st;
    int64_t sizes[PPL_MAX_TIERS];
    int ntiers = 0;
    if ((st = size_tiers(o, sizes, &ntiers, err)) != PPL_OK)
        return st;
    json_t *t = document(o, ppl_gpu_lookup(o->gpu), sizes, ntiers);
    if (!t)
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    /* what we write must load; the document states every key the loader reads and
     * the top tier's oversubscription as 1, so the loader has nothing to warn of */
    ppl_topology check;
    if (ppl_topology_from_json(t, "(generated)", "", NULL, topo ? topo : &check, err) != PPL_OK) {
        json_decref(t);
        err->status = PPL_EUSAGE;
        return PPL_EUSAGE;
    }
    if (out)
        *out = t;
    else
        json_decref(t);
    return PPL_OK;
}
