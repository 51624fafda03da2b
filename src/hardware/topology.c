/*
 * topology.c - loading topology files and deriving fabric figures.
 *
 * Bandwidths are bytes/s per direction; a "400 Gb/s" NIC is 50e9 bytes/s.
 * Switch counts follow the folded-Clos (fat-tree) construction of Al-Fares et al.,
 * SIGCOMM'08: a switch of radix R below the top tier gives R*o/(o+1) ports to the
 * tier below and R/(o+1) to the tier above (o = oversubscription, down:up); a
 * top-tier switch gives all R ports downwards.  With R = 64 and o = 1 this yields
 * NVIDIA's DGX H100 SuperPOD figures (RA-11333-001: 4 SUs of 32 servers x 8 rails
 * = 32 leaf and 16 spine switches).  Bisection bandwidth is the injection bandwidth
 * of half the cluster divided by the oversubscription of every tier it crosses.
 */
#include "hardware/topology.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/constants.h"
#include "base/jsonread.h"

#define MAX_SERVERS (1LL << 24)
#define MAX_GPUS_PER_SERVER 1024
#define MAX_DOMAIN_GPUS (1LL << 20)
/* What a topology may state, per figure: wide enough for any machine built or
 * announced, narrow enough that every time the model derives stays finite (a
 * 1e-300 B/s link made step times overflow to infinity).  The lower ends sit far
 * below any hardware one trains on:
 *   memory     1 GiB      (P100, 2016: 16 GiB; the smallest data-centre GPUs: 16 GiB)
 *   HBM        10 GB/s    (one DDR4 channel is 25 GB/s; HBM stacks are TB/s)
 *   FLOP rate  1 TFLOP/s  (V100, 2017: 125 TFLOP/s fp16; a server CPU: a few)
 *   links      1 Gb/s     (1 GbE, the slowest network a cluster was ever wired with)
 *   RTT        100 ns     (one switch hop alone is about that)
 * and the upper ends far above any (1 PiB per GPU, 1 EFLOP/s, 1 PB/s, 1 s). */
#define MIN_MEMORY_BYTES 1073741824.0
#define MAX_MEMORY_BYTES 1125899906842624.0 /* 1 PiB */
#define MIN_HBM_BPS 1e10
#define MIN_FLOPS 1e12
#define MAX_FLOPS 1e18
#define MIN_LINK_BPS 1.25e8 /* 1 Gb/s */
#define MAX_BANDWIDTH_BPS 1e15
#define MIN_RTT_S 1e-7
#define MAX_LATENCY_S 1.0
#define MAX_OVERSUBSCRIPTION 1000.0

/* Defaults for optional latencies and transport: the assumed constants
 * (constants.c, each with why). */
#define DEFAULT_NVLINK_LATENCY_S (ppl_assumed_values()->nvlink_latency_s)
#define DEFAULT_RAIL_LATENCY_S (ppl_assumed_values()->rail_latency_s)
#define DEFAULT_TIER_LATENCY_S (ppl_assumed_values()->tier_latency_s)
#define DEFAULT_MTU_BYTES ((int64_t)ppl_assumed_values()->mtu_bytes)
#define DEFAULT_RTT_S (ppl_assumed_values()->rtt_s)

const char *const ppl_transport_names[] = {"infiniband", "rocev2", NULL};

static const char *const retransmit_names[] = {"go-back-n", "selective", "ooo", NULL};
static const char *const fabric_names[] = {"switch", "mesh", NULL};

const char *ppl_protocol_name(ppl_protocol p)
{
    return (unsigned)p < 2 ? ppl_transport_names[p] : "?";
}
const char *ppl_retransmit_name(ppl_retransmit r)
{
    return (unsigned)r < 3 ? retransmit_names[r] : "?";
}

/*
 * Every key a topology file may hold, by its path in the document.  The loader
 * takes each object's known keys from here, in table order, which is the order
 * in which an unknown key's closest match is looked for (the first of equals
 * wins).  A tier's keys are listed as `whatif` names them, rail_optimized last:
 * no two are within four edits of each other, so a misspelling within two edits
 * of one (the most a suggestion allows) is three or more from every other, and
 * their order decides nothing.  `whatif` sets the settable keys: every figure of
 * the cluster the cost model reads; not names, sources or whole objects, nor the
 * peaks of precisions no training runs in (tf32, fp32, fp64, fp4, mxfp4: the training
 * precisions are ppl_precision_names in config.h).
 */
const ppl_topology_key ppl_topology_keys[] = {
    {"schema_version", false},
    {"name", false},
    {"source", false},
    {"gpu", false},
    {"gpu.name", false},
    {"gpu.memory", true},
    {"gpu.flops", false},
    {"gpu.flops.bf16", true},
    {"gpu.flops.fp16", true},
    {"gpu.flops.fp8", true},
    {"gpu.flops.mxfp8", true},
    {"gpu.flops.nvfp4", true},
    {"gpu.flops.tf32", false},
    {"gpu.flops.fp32", false},
    {"gpu.flops.fp64", false},
    {"gpu.flops.fp4", false},
    {"gpu.flops.mxfp4", false},
    {"gpu.hbm_bandwidth", true},
    {"gpu.host_link", true},
    {"servers", true},
    {"gpus_per_server", true},
    {"nvlink", false},
    {"nvlink.domain_gpus", true},
    {"nvlink.bandwidth", true},
    {"nvlink.latency", true},
    {"nvlink.sharp", true},
    {"nvlink.fabric", true},
    {"rails", false},
    {"rails.count", true},
    {"rails.nic_bandwidth", true},
    {"rails.latency", true},
    {"tiers", false},
    {"tiers[].name", false},
    {"tiers[].servers", true},
    {"tiers[].oversubscription", true},
    {"tiers[].latency", true},
    {"tiers[].rail_optimized", true},
    {"rail_only", true},
    {"switch_radix", true},
    {"transport", false},
    {"transport.protocol", true},
    {"transport.mtu", true},
    {"transport.loss_rate", true},
    {"transport.retransmit", true},
    {"transport.rtt", true},
    {"transport.sharp", true},
    /* a mixed cluster (pools.h): each pool an object of the keys above, the root
     * keeping transport, switch_radix, rail_only and source for every pool that
     * states none; whatif sets a pool's settable key as pools[i].KEY (whatif.c) */
    {"pools", false},
    {"cross_pool", false},
    {"cross_pool.bandwidth", true},
    {"cross_pool.latency", true},
    {NULL, false},
};

const ppl_topology_key *ppl_topology_key_find(const char *path)
{
    for (const ppl_topology_key *k = ppl_topology_keys; k->path; k++)
        if (strcmp(k->path, path) == 0)
            return k;
    return NULL;
}

#define MAX_OBJECT_KEYS 16 /* the most keys one object of the table holds, and its NULL */

/* The keys of the object at parent ("" for the root, "gpu.flops", "tiers[]"), in
 * table order and NULL-terminated: the known keys its reader warns against. */
static const char *const *keys_under(const char *parent, const char *out[MAX_OBJECT_KEYS])
{
    size_t n = 0, plen = strlen(parent);
    for (const ppl_topology_key *k = ppl_topology_keys; k->path && n + 1 < MAX_OBJECT_KEYS; k++) {
        const char *rest = k->path;
        if (plen > 0) {
            if (strncmp(rest, parent, plen) != 0 || rest[plen] != '.')
                continue;
            rest += plen + 1;
        }
        if (!strchr(rest, '.'))
            out[n++] = rest;
    }
    out[n] = NULL;
    return out;
}

/* "gpu": a known kind ("H100"), or an object; an object whose name is a known kind
 * takes the datasheet figures for what it leaves out. */
static ppl_status read_gpu(ppl_jr_ctx *ctx, const json_t *obj, const char *path, ppl_gpu *gpu)
{
    char gpath[PPL_ERROR_KEY_MAX], fpath[PPL_ERROR_KEY_MAX], full[PPL_ERROR_KEY_MAX];
    char kinds[128];
    const char *gpu_keys[MAX_OBJECT_KEYS], *flops_keys[MAX_OBJECT_KEYS];
    json_t *g, *fl;
    ppl_status st;
    ppl_jr_path(gpath, sizeof gpath, path, "gpu");
    g = json_object_get(obj, "gpu");
    if (json_is_string(g)) {
        const ppl_gpu_spec *spec = ppl_gpu_lookup(json_string_value(g));
        if (!spec) {
            ppl_gpu_kinds(kinds, sizeof kinds);
            return ppl_jr_fail(ctx, gpath,
                               "unknown GPU kind \"%.40s\" (known: %s; or give an object)",
                               json_string_value(g), kinds);
        }
        ppl_gpu_from_spec(spec, gpu);
        return PPL_OK;
    }
    if ((st = ppl_jr_object(ctx, obj, path, "gpu", PPL_JR_REQUIRED, keys_under("gpu", gpu_keys), &g,
                            gpath, sizeof gpath)))
        return st;
    if ((st = ppl_jr_string(ctx, g, gpath, "name", PPL_JR_OPTIONAL, "gpu", gpu->name,
                            sizeof gpu->name)))
        return st;
    const ppl_gpu_spec *spec = ppl_gpu_lookup(gpu->name);
    ppl_jr_need need = spec ? PPL_JR_OPTIONAL : PPL_JR_REQUIRED;
    if (spec) {
        char keep[PPL_NAME_MAX];
        snprintf(keep, sizeof keep, "%s", gpu->name);
        ppl_gpu_from_spec(spec, gpu);
        snprintf(gpu->name, sizeof gpu->name, "%s", keep);
    }
    if ((st = ppl_jr_quantity(ctx, g, gpath, "memory", PPL_UNIT_BYTES, need, gpu->memory_bytes,
                              PPL_JR_BETWEEN(MIN_MEMORY_BYTES, MAX_MEMORY_BYTES),
                              &gpu->memory_bytes)) ||
        (st = ppl_jr_quantity(
             ctx, g, gpath, "hbm_bandwidth", PPL_UNIT_BANDWIDTH, need, gpu->hbm_bandwidth_bps,
             PPL_JR_BETWEEN(MIN_HBM_BPS, MAX_BANDWIDTH_BPS), &gpu->hbm_bandwidth_bps)) ||
        /* GPU <-> host per direction; 0, unset: the family's (offload.c) */
        (st = ppl_jr_quantity(ctx, g, gpath, "host_link", PPL_UNIT_BANDWIDTH, PPL_JR_OPTIONAL, 0,
                              PPL_JR_BETWEEN(MIN_HBM_BPS / 10.0, MAX_BANDWIDTH_BPS),
                              &gpu->host_link_bps)))
        return st;
    if ((st = ppl_jr_object(ctx, g, gpath, "flops", need, keys_under("gpu.flops", flops_keys), &fl,
                            fpath, sizeof fpath)))
        return st;
    if (fl) {
        double given[PPL_PRECISION_COUNT]; /* 0: not given (a peak must be positive) */
        for (int p = 0; p < PPL_PRECISION_COUNT; p++)
            if ((st = ppl_jr_quantity(ctx, fl, fpath, ppl_peak_names[p], PPL_UNIT_FLOPS,
                                      PPL_JR_OPTIONAL, 0, PPL_JR_BETWEEN(MIN_FLOPS, MAX_FLOPS),
                                      &given[p])))
                return st;
        /* bf16 and fp16 run on the same tensor cores at the same rate on every GPU
         * parplan knows; one stands in for the other when only one is given */
        if (given[PPL_PRECISION_BF16] == 0)
            given[PPL_PRECISION_BF16] = given[PPL_PRECISION_FP16];
        if (given[PPL_PRECISION_FP16] == 0)
            given[PPL_PRECISION_FP16] = given[PPL_PRECISION_BF16];
        /* a precision left out keeps the datasheet figure of a known kind (0 else) */
        for (int p = 0; p < PPL_PRECISION_COUNT; p++)
            if (given[p] > 0)
                gpu->flops[p] = given[p];
    }
    if (gpu->flops[PPL_PRECISION_BF16] == 0) {
        ppl_jr_path(full, sizeof full, fpath, "bf16");
        return ppl_jr_fail(ctx, full,
                           "missing: give the dense bf16 (or fp16) peak, e.g. \"989 TFLOP/s\"");
    }
    return PPL_OK;
}

static ppl_status read_tiers(ppl_jr_ctx *ctx, const json_t *obj, const char *path, ppl_topology *t)
{
    char tpath[PPL_ERROR_KEY_MAX], ipath[PPL_ERROR_KEY_MAX], full[PPL_ERROR_KEY_MAX];
    char found[64];
    const char *tier_keys[MAX_OBJECT_KEYS];
    json_t *arr;
    ppl_status st = ppl_jr_get(ctx, obj, path, "tiers", PPL_JR_OPTIONAL, &arr);
    if (st != PPL_OK)
        return st;
    ppl_jr_path(tpath, sizeof tpath, path, "tiers");
    if (!arr) {
        /* no tiers: one non-blocking switch layer joins every server */
        t->ntiers = 1;
        snprintf(t->tiers[0].name, sizeof t->tiers[0].name, "fabric");
        t->tiers[0].servers = t->servers;
        t->tiers[0].rail_optimized = false;
        t->tiers[0].oversubscription = 1.0;
        t->tiers[0].latency_s = DEFAULT_TIER_LATENCY_S;
        return PPL_OK;
    }
    if (!json_is_array(arr)) {
        ppl_jr_describe(arr, found, sizeof found);
        return ppl_jr_fail(ctx, tpath, "expected an array of tiers, innermost first, found %s",
                           found);
    }
    size_t n = json_array_size(arr);
    if (n == 0)
        return ppl_jr_fail(ctx, tpath, "expected at least one tier, found an empty array");
    if (n > PPL_MAX_TIERS)
        return ppl_jr_fail(ctx, tpath, "expected at most %d tiers, found %zu", PPL_MAX_TIERS, n);
    t->ntiers = (int)n;
    for (size_t i = 0; i < n; i++) {
        ppl_tier *tier = &t->tiers[i];
        json_t *e = json_array_get(arr, i);
        ppl_jr_index(ipath, sizeof ipath, tpath, i);
        if ((st = ppl_jr_expect_object(ctx, e, ipath)))
            return st;
        ppl_jr_warn_unknown_keys(ctx, e, ipath, keys_under("tiers[]", tier_keys));
        char def_name[16];
        snprintf(def_name, sizeof def_name, "tier%zu", i);
        if ((st = ppl_jr_string(ctx, e, ipath, "name", PPL_JR_OPTIONAL, def_name, tier->name,
                                sizeof tier->name)) ||
            (st = ppl_jr_int(ctx, e, ipath, "servers", PPL_JR_REQUIRED, 0, 1, MAX_SERVERS,
                             &tier->servers)) ||
            (st = ppl_jr_bool(ctx, e, ipath, "rail_optimized", PPL_JR_OPTIONAL, false,
                              &tier->rail_optimized)) ||
            (st = ppl_jr_real(ctx, e, ipath, "oversubscription", PPL_JR_OPTIONAL, 1.0,
                              (ppl_jr_range){1.0, MAX_OVERSUBSCRIPTION, false, false},
                              &tier->oversubscription)) ||
            (st = ppl_jr_quantity(ctx, e, ipath, "latency", PPL_UNIT_TIME, PPL_JR_OPTIONAL,
                                  DEFAULT_TIER_LATENCY_S, PPL_JR_NON_NEGATIVE(MAX_LATENCY_S),
                                  &tier->latency_s)))
            return st;
        /* tiers are named in every breakdown (exposed comm, traffic, what-if
         * paths): a name must say which one */
        ppl_jr_path(full, sizeof full, ipath, "name");
        if (!tier->name[0])
            return ppl_jr_fail(ctx, full, "expected a tier name, found \"\"");
        for (size_t k = 0; k < i; k++)
            if (strcmp(t->tiers[k].name, tier->name) == 0)
                return ppl_jr_fail(ctx, full, "\"%s\" is also the name of tiers[%zu]", tier->name,
                                   k);
        ppl_jr_path(full, sizeof full, ipath, "servers");
        if (i > 0) {
            const ppl_tier *inner = &t->tiers[i - 1];
            if (tier->servers % inner->servers != 0)
                return ppl_jr_fail(ctx, full, "%lld is not a multiple of tiers[%zu].servers (%lld)",
                                   (long long)tier->servers, i - 1, (long long)inner->servers);
            if (tier->servers == inner->servers)
                return ppl_jr_fail(ctx, full,
                                   "%lld equals tiers[%zu].servers: each tier must group more "
                                   "servers than the one inside it",
                                   (long long)tier->servers, i - 1);
        }
        if (tier->servers > t->servers)
            return ppl_jr_fail(ctx, full, "%lld exceeds servers (%lld)", (long long)tier->servers,
                               (long long)t->servers);
    }
    const ppl_tier *top = &t->tiers[n - 1];
    if (top->servers != t->servers) {
        ppl_jr_index(ipath, sizeof ipath, tpath, n - 1);
        ppl_jr_path(full, sizeof full, ipath, "servers");
        return ppl_jr_fail(ctx, full, "%lld, but the last tier must hold all %lld servers",
                           (long long)top->servers, (long long)t->servers);
    }
    if (top->oversubscription != 1.0) {
        ppl_jr_index(ipath, sizeof ipath, tpath, n - 1);
        ppl_jr_path(full, sizeof full, ipath, "oversubscription");
        ppl_diag_warn(ctx->diag, ctx->file, full,
                      "%g on the top tier, which has no uplinks: ignored (oversubscription "
                      "throttles traffic leaving a tier's groups)",
                      top->oversubscription);
    }
    return PPL_OK;
}

static ppl_status read_links(ppl_jr_ctx *ctx, const json_t *obj, const char *path, ppl_topology *t)
{
    char npath[PPL_ERROR_KEY_MAX], rpath[PPL_ERROR_KEY_MAX], full[PPL_ERROR_KEY_MAX];
    const char *nvlink_keys[MAX_OBJECT_KEYS], *rails_keys[MAX_OBJECT_KEYS];
    json_t *nv, *rails;
    int fabric = 0;
    ppl_status st;
    if ((st = ppl_jr_object(ctx, obj, path, "nvlink", PPL_JR_REQUIRED,
                            keys_under("nvlink", nvlink_keys), &nv, npath, sizeof npath)) ||
        (st = ppl_jr_int(ctx, nv, npath, "domain_gpus", PPL_JR_OPTIONAL, t->gpus_per_server, 1,
                         MAX_DOMAIN_GPUS, &t->nvlink.domain_gpus)) ||
        (st = ppl_jr_quantity(ctx, nv, npath, "bandwidth", PPL_UNIT_BANDWIDTH, PPL_JR_REQUIRED, 0,
                              PPL_JR_BETWEEN(MIN_LINK_BPS, MAX_BANDWIDTH_BPS),
                              &t->nvlink.bandwidth_bps)) ||
        (st = ppl_jr_quantity(ctx, nv, npath, "latency", PPL_UNIT_TIME, PPL_JR_OPTIONAL,
                              DEFAULT_NVLINK_LATENCY_S, PPL_JR_NON_NEGATIVE(MAX_LATENCY_S),
                              &t->nvlink.latency_s)) ||
        (st = ppl_jr_bool(ctx, nv, npath, "sharp", PPL_JR_OPTIONAL, false, &t->nvlink.sharp)) ||
        (st = ppl_jr_enum(ctx, nv, npath, "fabric", PPL_JR_OPTIONAL, fabric_names, 0, &fabric)))
        return st;
    t->nvlink.mesh = fabric == 1;
    if (t->nvlink.mesh &&
        (t->nvlink.domain_gpus > t->gpus_per_server || t->nvlink.domain_gpus < 2)) {
        ppl_jr_path(full, sizeof full, npath, "fabric");
        return ppl_jr_fail(ctx, full,
                           "a mesh joins the GPUs of one server point to point: domain_gpus (%lld) "
                           "must be 2 to gpus_per_server (%lld)",
                           (long long)t->nvlink.domain_gpus, (long long)t->gpus_per_server);
    }
    if (t->nvlink.mesh && t->nvlink.sharp) {
        ppl_jr_path(full, sizeof full, npath, "sharp");
        return ppl_jr_fail(ctx, full, "a point-to-point mesh has no switch to reduce in");
    }
    if (t->nvlink.sharp && ppl_gpu_nvls_efficiency(&t->gpu) <= 0.0) {
        ppl_jr_path(full, sizeof full, npath, "sharp");
        return ppl_jr_fail(ctx, full,
                           "%s's NVSwitches do not reduce in the switch: NVLink SHARP needs "
                           "third-generation NVSwitch (H100 and later)",
                           t->gpu.name);
    }
    int64_t d = t->nvlink.domain_gpus, g = t->gpus_per_server;
    ppl_jr_path(full, sizeof full, npath, "domain_gpus");
    if (d <= g) {
        if (g % d != 0)
            return ppl_jr_fail(ctx, full, "%lld does not divide gpus_per_server (%lld)",
                               (long long)d, (long long)g);
    } else {
        if (d % g != 0)
            return ppl_jr_fail(ctx, full,
                               "%lld is not a multiple of gpus_per_server (%lld): a multi-server "
                               "NVLink domain holds whole servers",
                               (long long)d, (long long)g);
        if (t->servers % (d / g) != 0)
            return ppl_jr_fail(ctx, full,
                               "a domain of %lld GPUs spans %lld servers, which does not divide "
                               "servers (%lld)",
                               (long long)d, (long long)(d / g), (long long)t->servers);
    }
    if ((st = ppl_jr_object(ctx, obj, path, "rails", PPL_JR_REQUIRED,
                            keys_under("rails", rails_keys), &rails, rpath, sizeof rpath)) ||
        (st = ppl_jr_int(ctx, rails, rpath, "count", PPL_JR_OPTIONAL, t->gpus_per_server, 1,
                         MAX_GPUS_PER_SERVER, &t->rails.count)) ||
        (st = ppl_jr_quantity(ctx, rails, rpath, "nic_bandwidth", PPL_UNIT_BANDWIDTH,
                              PPL_JR_REQUIRED, 0, PPL_JR_BETWEEN(MIN_LINK_BPS, MAX_BANDWIDTH_BPS),
                              &t->rails.nic_bandwidth_bps)) ||
        (st = ppl_jr_quantity(ctx, rails, rpath, "latency", PPL_UNIT_TIME, PPL_JR_OPTIONAL,
                              DEFAULT_RAIL_LATENCY_S, PPL_JR_NON_NEGATIVE(MAX_LATENCY_S),
                              &t->rails.latency_s)))
        return st;
    ppl_jr_path(full, sizeof full, rpath, "count");
    if (t->rails.count > g)
        return ppl_jr_fail(ctx, full, "%lld exceeds gpus_per_server (%lld): each rail needs a GPU",
                           (long long)t->rails.count, (long long)g);
    if (g % t->rails.count != 0)
        return ppl_jr_fail(
            ctx, full, "%lld does not divide gpus_per_server (%lld): GPUs must share NICs evenly",
            (long long)t->rails.count, (long long)g);
    return PPL_OK;
}

static ppl_status read_transport(ppl_jr_ctx *ctx, const json_t *obj, const char *path,
                                 ppl_topology *t)
{
    char xpath[PPL_ERROR_KEY_MAX];
    const char *transport_keys[MAX_OBJECT_KEYS];
    json_t *x;
    int protocol = PPL_PROTOCOL_INFINIBAND, retransmit = PPL_RETRANSMIT_GO_BACK_N;
    ppl_status st;
    if ((st = ppl_jr_object(ctx, obj, path, "transport", PPL_JR_OPTIONAL,
                            keys_under("transport", transport_keys), &x, xpath, sizeof xpath)))
        return st;
    /* an absent transport reads as an empty object: every key takes its default
     * (json_object_get on NULL finds nothing) */
    if ((st = ppl_jr_enum(ctx, x, xpath, "protocol", PPL_JR_OPTIONAL, ppl_transport_names,
                          PPL_PROTOCOL_INFINIBAND, &protocol)) ||
        (st = ppl_jr_int(ctx, x, xpath, "mtu", PPL_JR_OPTIONAL, DEFAULT_MTU_BYTES, 256, 65536,
                         &t->transport.mtu_bytes)) ||
        (st = ppl_jr_real(ctx, x, xpath, "loss_rate", PPL_JR_OPTIONAL, 0.0, PPL_JR_FRACTION,
                          &t->transport.loss_rate)) ||
        (st = ppl_jr_enum(ctx, x, xpath, "retransmit", PPL_JR_OPTIONAL, retransmit_names,
                          PPL_RETRANSMIT_GO_BACK_N, &retransmit)) ||
        (st = ppl_jr_quantity(ctx, x, xpath, "rtt", PPL_UNIT_TIME, PPL_JR_OPTIONAL, DEFAULT_RTT_S,
                              PPL_JR_BETWEEN(MIN_RTT_S, MAX_LATENCY_S), &t->transport.rtt_s)) ||
        (st = ppl_jr_bool(ctx, x, xpath, "sharp", PPL_JR_OPTIONAL, false, &t->transport.sharp)))
        return st;
    if (t->transport.sharp && protocol != PPL_PROTOCOL_INFINIBAND) {
        char full[PPL_ERROR_KEY_MAX];
        ppl_jr_path(full, sizeof full, xpath, "sharp");
        return ppl_jr_fail(ctx, full,
                           "in-network reduction (SHARP) is an InfiniBand switch feature, "
                           "not RoCE's");
    }
    t->transport.protocol = (ppl_protocol)protocol;
    t->transport.retransmit = (ppl_retransmit)retransmit;
    return PPL_OK;
}

/* Bounds of the cross-pool link, as every link's: 1 Gb/s to 1 PB/s, latency up to
 * 1 s; its default latency is assumed (constants.c). */
#define MIN_CROSS_BPS 1.25e8
#define MAX_CROSS_BPS 1e15
#define MAX_CROSS_LATENCY_S 1.0
#define DEFAULT_CROSS_LATENCY_S (ppl_assumed_values()->cross_pool_latency_s)

/* The root keys a pool takes from the root when it does not state its own (the
 * source: the cluster's, unless the pool cites its own). */
static const char *const shared_keys[] = {"transport", "switch_radix", "rail_only", "source", NULL};
/* The root keys that describe one pool: with pools, each pool states its own. */
static const char *const pool_only_keys[] = {
    "gpu", "servers", "gpus_per_server", "nvlink", "rails", "tiers", NULL};

ppl_status ppl_pools_from_json(const json_t *root, const char *file, const ppl_diag *diag,
                               ppl_pools *out, ppl_error *err)
{
    ppl_jr_ctx ctx = {.file = file, .err = err, .diag = diag};
    char ipath[PPL_ERROR_KEY_MAX], full[PPL_ERROR_KEY_MAX], xpath[PPL_ERROR_KEY_MAX];
    char found[64];
    static const char *const cross_keys[] = {"bandwidth", "latency", NULL};
    const char *root_keys[MAX_OBJECT_KEYS];
    memset(out, 0, sizeof *out);
    json_t *arr = json_object_get(root, "pools"), *x;
    ppl_status st;
    if (!arr)
        return PPL_OK;
    /* the cluster's own keys, checked on every path that reads pools (plan's, and
     * first_pool's for the commands that take one) */
    ppl_jr_warn_unknown_keys(&ctx, root, "", keys_under("", root_keys));
    if ((st = ppl_jr_schema_version(&ctx, root, "")))
        return st;
    if (!json_is_array(arr)) {
        ppl_jr_describe(arr, found, sizeof found);
        return ppl_jr_fail(&ctx, "pools", "expected an array of pools, found %s", found);
    }
    size_t n = json_array_size(arr);
    if (n == 0)
        return ppl_jr_fail(&ctx, "pools", "expected at least one pool, found an empty array");
    if (n > PPL_MAX_POOLS)
        return ppl_jr_fail(&ctx, "pools", "expected at most %d pools, found %zu", PPL_MAX_POOLS, n);
    if ((st = ppl_jr_string(&ctx, root, "", "name", PPL_JR_OPTIONAL, "", out->name,
                            sizeof out->name)))
        return st;
    for (const char *const *k = pool_only_keys; *k; k++)
        if (json_object_get(root, *k))
            return ppl_jr_fail(&ctx, *k, "with pools, each pool states its own %s", *k);
    if ((st = ppl_jr_object(&ctx, root, "", "cross_pool", PPL_JR_REQUIRED, cross_keys, &x, xpath,
                            sizeof xpath)) ||
        (st = ppl_jr_quantity(&ctx, x, xpath, "bandwidth", PPL_UNIT_BANDWIDTH, PPL_JR_REQUIRED, 0,
                              PPL_JR_BETWEEN(MIN_CROSS_BPS, MAX_CROSS_BPS), &out->cross_bps)) ||
        (st = ppl_jr_quantity(&ctx, x, xpath, "latency", PPL_UNIT_TIME, PPL_JR_OPTIONAL,
                              DEFAULT_CROSS_LATENCY_S, PPL_JR_NON_NEGATIVE(MAX_CROSS_LATENCY_S),
                              &out->cross_latency_s)))
        return st;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(arr, i);
        ppl_jr_index(ipath, sizeof ipath, "pools", i);
        if ((st = ppl_jr_expect_object(&ctx, e, ipath)))
            return st;
        if (json_object_get(e, "pools") || json_object_get(e, "cross_pool")) {
            ppl_jr_path(full, sizeof full, ipath,
                        json_object_get(e, "pools") ? "pools" : "cross_pool");
            return ppl_jr_fail(&ctx, full, "a pool is one GPU kind: it holds no pools");
        }
        json_t *copy = json_deep_copy(e);
        if (!copy)
            return ppl_error_set(err, PPL_EINTERNAL, file, ipath, "out of memory");
        for (const char *const *k = shared_keys; *k; k++) {
            json_t *v = json_object_get(root, *k);
            if (v && !json_object_get(copy, *k))
                json_object_set(copy, *k, v);
        }
        ppl_topology *t = &out->pool[i];
        st = ppl_topology_from_json(copy, file, ipath, diag, t, err);
        json_decref(copy);
        if (st != PPL_OK)
            return st;
        if (!t->name[0])
            snprintf(t->name, sizeof t->name, "pool%zu", i);
        for (size_t k = 0; k < i; k++)
            if (strcmp(out->pool[k].name, t->name) == 0) {
                ppl_jr_path(full, sizeof full, ipath, "name");
                return ppl_jr_fail(&ctx, full, "\"%s\" is also the name of pools[%zu]", t->name, k);
            }
    }
    out->n = (int)n;
    return PPL_OK;
}

ppl_status ppl_pools_load(const char *path, const char *display, const ppl_diag *diag,
                          ppl_pools *pools, ppl_error *err)
{
    return ppl_pools_load_doc(path, display, diag, pools, NULL, err);
}

/* The document as read, with the name the loader gave it (a copy), when asked. */
static ppl_status named_doc(const json_t *root, const char *name, json_t **doc, ppl_error *err)
{
    if (doc && !(*doc = ppl_jr_named_copy(root, name)))
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    return PPL_OK;
}

ppl_status ppl_pools_load_doc(const char *path, const char *display, const ppl_diag *diag,
                              ppl_pools *pools, json_t **doc, ppl_error *err)
{
    ppl_jr_ctx ctx = {.file = display ? display : path, .err = err, .diag = diag};
    json_t *root = ppl_jr_load_file(&ctx, path);
    if (!root)
        return PPL_EINPUT;
    ppl_status st = ppl_pools_from_json(root, ctx.file, diag, pools, err);
    if (st == PPL_OK && !pools->name[0])
        ppl_jr_file_stem(path, pools->name, sizeof pools->name);
    if (st == PPL_OK && pools->n > 0)
        st = named_doc(root, pools->name, doc, err);
    json_decref(root);
    return st;
}

/* A mixed cluster read as one topology: every pool is checked, the first one
 * returned, and a warning says so (plan places a job across the pools). */
static ppl_status first_pool(ppl_jr_ctx *ctx, const json_t *obj, ppl_topology *t)
{
    ppl_pools *pools = malloc(sizeof *pools);
    if (!pools)
        return ppl_error_set(ctx->err, PPL_EINTERNAL, ctx->file, "pools", "out of memory");
    ppl_status st = ppl_pools_from_json(obj, ctx->file, ctx->diag, pools, ctx->err);
    if (st == PPL_OK) {
        *t = pools->pool[0];
        if (pools->name[0]) /* "mixed-h100-b200/h100": the cluster's, and which pool */
            snprintf(t->name, sizeof t->name, "%.*s/%.*s", PPL_NAME_MAX / 2 - 1, pools->name,
                     PPL_NAME_MAX / 2 - 1, pools->pool[0].name);
        if (pools->n > 1)
            ppl_diag_warn(ctx->diag, ctx->file, "pools",
                          "a mixed cluster of %d pools: this command takes pools[0] (\"%s\") "
                          "alone; plan places a job on each pool and across them",
                          pools->n, pools->pool[0].name);
    }
    free(pools);
    return st;
}

ppl_status ppl_topology_from_json(const json_t *obj, const char *file, const char *path,
                                  const ppl_diag *diag, ppl_topology *t, ppl_error *err)
{
    ppl_jr_ctx ctx = {.file = file, .err = err, .diag = diag};
    const char *root_keys[MAX_OBJECT_KEYS];
    ppl_status st;
    memset(t, 0, sizeof *t);
    if ((st = ppl_jr_expect_object(&ctx, obj, path)) != PPL_OK)
        return st;
    if (path[0] == '\0' && json_object_get(obj, "pools"))
        return first_pool(&ctx, obj, t);
    ppl_jr_warn_unknown_keys(&ctx, obj, path, keys_under("", root_keys));
    if ((st = ppl_jr_schema_version(&ctx, obj, path)) ||
        (st = ppl_jr_string(&ctx, obj, path, "name", PPL_JR_OPTIONAL, "", t->name,
                            sizeof t->name)) ||
        (st = ppl_jr_string(&ctx, obj, path, "source", PPL_JR_OPTIONAL, "", t->source,
                            sizeof t->source)) ||
        (st = read_gpu(&ctx, obj, path, &t->gpu)) ||
        (st = ppl_jr_int(&ctx, obj, path, "servers", PPL_JR_REQUIRED, 0, 1, MAX_SERVERS,
                         &t->servers)) ||
        (st = ppl_jr_int(&ctx, obj, path, "gpus_per_server", PPL_JR_REQUIRED, 0, 1,
                         MAX_GPUS_PER_SERVER, &t->gpus_per_server)) ||
        (st = read_links(&ctx, obj, path, t)) || (st = read_tiers(&ctx, obj, path, t)) ||
        (st = ppl_jr_bool(&ctx, obj, path, "rail_only", PPL_JR_OPTIONAL, false, &t->rail_only)) ||
        (st = ppl_jr_int(&ctx, obj, path, "switch_radix", PPL_JR_OPTIONAL, PPL_DEFAULT_SWITCH_RADIX,
                         4, 4096, &t->switch_radix)) ||
        (st = read_transport(&ctx, obj, path, t)))
        return st;
    return PPL_OK;
}

ppl_status ppl_topology_load(const char *path, const char *display, const ppl_diag *diag,
                             ppl_topology *topo, ppl_error *err)
{
    return ppl_topology_load_doc(path, display, diag, topo, NULL, err);
}

ppl_status ppl_topology_load_doc(const char *path, const char *display, const ppl_diag *diag,
                                 ppl_topology *topo, json_t **doc, ppl_error *err)
{
    ppl_jr_ctx ctx = {.file = display ? display : path, .err = err, .diag = diag};
    json_t *root = ppl_jr_load_file(&ctx, path);
    if (!root)
        return PPL_EINPUT;
    ppl_status st = ppl_topology_from_json(root, ctx.file, "", diag, topo, err);
    if (st == PPL_OK && !topo->name[0])
        ppl_jr_file_stem(path, topo->name, sizeof topo->name);
    if (st == PPL_OK)
        snprintf(topo->file, sizeof topo->file, "%s", path);
    if (st == PPL_OK)
        st = named_doc(root, topo->name, doc, err);
    json_decref(root);
    return st;
}

void ppl_switch_ports(int64_t radix, double oversubscription, bool top, int64_t *down, int64_t *up)
{
    int64_t d =
        top ? radix : (int64_t)floor((double)radix * oversubscription / (oversubscription + 1.0));
    *down = d < 1 ? 1 : d;
    *up = radix - *down;
}

void ppl_topology_derive(const ppl_topology *t, ppl_topology_figures *out)
{
    memset(out, 0, sizeof *out);
    const int64_t g = t->gpus_per_server, rails = t->rails.count, R = t->switch_radix;
    out->gpus = t->servers * g;
    int64_t domain = t->nvlink.domain_gpus;
    out->nvlink_domains = out->gpus / domain;
    out->nic_bandwidth_per_gpu_bps = (double)rails * t->rails.nic_bandwidth_bps / (double)g;
    out->injection_bps = (double)t->servers * (double)rails * t->rails.nic_bandwidth_bps;
    out->server_cables = t->servers * rails;

    double below = 1.0;         /* product of oversubscription of the tiers below */
    int64_t ports_in_group = 0; /* links entering one group of the current tier */
    for (int i = 0; i < t->ntiers; i++) {
        const ppl_tier *tier = &t->tiers[i];
        ppl_tier_figures *f = &out->tiers[i];
        bool top = i == t->ntiers - 1;
        f->groups = t->servers / tier->servers;
        f->gpus_per_group = tier->servers * g;
        f->gpu_bandwidth_bps = out->nic_bandwidth_per_gpu_bps / below;
        if (i == 0)
            ports_in_group = tier->servers * rails;
        else
            ports_in_group = out->tiers[i - 1].uplink_cables / f->groups;
        double o = tier->oversubscription;
        int64_t down, up;
        ppl_switch_ports(R, o, top, &down, &up);
        int64_t per_group;
        if (tier->rail_optimized)
            per_group = rails * ppl_ceil_div(ppl_ceil_div(ports_in_group, rails), down);
        else
            per_group = ppl_ceil_div(ports_in_group, down);
        f->switches = per_group * f->groups;
        f->uplink_cables = top ? 0 : f->groups * (int64_t)ceil((double)ports_in_group / o);
        out->switches += f->switches;
        out->cables += f->uplink_cables;
        if (!top)
            below *= o;
    }
    out->cables += out->server_cables;
    out->bisection_bps = t->servers > 1 ? out->injection_bps / 2.0 / below : 0.0;
    out->bisection_per_gpu_bps =
        out->gpus > 0 ? out->bisection_bps / ((double)out->gpus / 2.0) : 0.0;
}

int64_t ppl_topology_server_domain(const ppl_topology *t)
{
    return t->nvlink.domain_gpus < t->gpus_per_server ? t->nvlink.domain_gpus : t->gpus_per_server;
}
