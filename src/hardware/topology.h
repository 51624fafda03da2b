/*
 * hardware/topology.h - the cluster: GPUs, NVLink domain, rails, switch tiers, transport.
 *
 * A topology file (a topologies/ JSON file, SPEC "Topology file") is loaded into a
 * ppl_topology; ppl_topology_derive() computes what `topology show` prints and the
 * network model builds on: per-GPU bandwidth at each level, bisection bandwidth,
 * switch and cable counts.
 *
 * Conventions (all bandwidths per direction):
 *  - nvlink.bandwidth is per GPU; rails.nic_bandwidth is per NIC.
 *  - tiers[] are innermost first; tiers[i].servers servers form one group of tier i
 *    and traffic between two servers climbs to the first tier whose group holds both.
 *  - tiers[i].oversubscription is down:up at the uplinks of tier i's switches: it
 *    throttles traffic that leaves a tier-i group.  The top tier has no uplinks.
 */
#ifndef PARPLAN_TOPOLOGY_H
#define PARPLAN_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parplan/error.h"
#include "hardware/gpu.h"

struct json_t;

#define PPL_MAX_TIERS 8
/* Ports per fabric switch when a topology gives none: NVIDIA QM9700 NDR, 64 ports of
 * 400 Gb/s. */
#define PPL_DEFAULT_SWITCH_RADIX 64

typedef enum ppl_protocol { PPL_PROTOCOL_INFINIBAND = 0, PPL_PROTOCOL_ROCEV2 = 1 } ppl_protocol;

typedef enum ppl_retransmit {
    PPL_RETRANSMIT_GO_BACK_N = 0,
    PPL_RETRANSMIT_SELECTIVE = 1,
    PPL_RETRANSMIT_OOO = 2 /* NIC out-of-order placement: selective, and packets may spray */
} ppl_retransmit;

typedef struct ppl_tier {
    char name[PPL_NAME_MAX];
    int64_t servers;         /* servers in one group of this tier */
    bool rail_optimized;     /* one switch per rail per group: same-rail traffic is one hop */
    double oversubscription; /* down:up at this tier's uplinks (1 = non-blocking) */
    double latency_s;        /* per switch hop */
} ppl_tier;

typedef struct ppl_topology {
    char name[PPL_NAME_MAX];
    char source[PPL_SOURCE_MAX];
    char file[PPL_ERROR_FILE_MAX]; /* the file ppl_topology_load read; "" otherwise */
    ppl_gpu gpu;
    int64_t servers;
    int64_t gpus_per_server;
    struct {
        int64_t domain_gpus;  /* GPUs joined by NVLink (may span servers) */
        double bandwidth_bps; /* per GPU, per direction */
        double latency_s;
        bool sharp; /* the NVSwitches reduce in the switch (NVLink SHARP, NCCL's NVLS) */
        /* point-to-point links from each GPU to every other of its domain (AMD
         * Infinity Fabric), not a switch: bandwidth_bps is the sum over the
         * domain_gpus - 1 links, and a group reaches only its own members' links */
        bool mesh;
    } nvlink;
    struct {
        int64_t count;            /* NICs per server, NIC k on rail k */
        double nic_bandwidth_bps; /* per NIC, per direction */
        double latency_s;
    } rails;
    int ntiers;
    ppl_tier tiers[PPL_MAX_TIERS];
    bool rail_only;       /* no switch joins different rails */
    int64_t switch_radix; /* ports per fabric switch, for switch counts */
    struct {
        ppl_protocol protocol;
        int64_t mtu_bytes;
        double loss_rate; /* per packet */
        ppl_retransmit retransmit;
        double rtt_s;
        bool sharp; /* the InfiniBand switches reduce in the network (SHARP, NCCL's CollNet) */
    } transport;
} ppl_topology;

/* One level of the network, as `topology show` reports it. */
typedef struct ppl_tier_figures {
    int64_t groups; /* groups of this tier in the cluster */
    int64_t gpus_per_group;
    double gpu_bandwidth_bps; /* per GPU, for traffic that climbs to this tier */
    int64_t switches;         /* in the whole cluster */
    int64_t uplink_cables;    /* cables from this tier to the next (0 at the top) */
} ppl_tier_figures;

typedef struct ppl_topology_figures {
    int64_t gpus;
    int64_t nvlink_domains;
    double nic_bandwidth_per_gpu_bps; /* rails * nic / gpus_per_server */
    double injection_bps;             /* all NICs of the cluster */
    double bisection_bps;             /* network bisection, one direction; 0 for one server */
    double bisection_per_gpu_bps;     /* the bisection over the GPUs of one half, gpus / 2 */
    int64_t server_cables;            /* server NIC to first-tier switch */
    int64_t switches;
    int64_t cables;
    ppl_tier_figures tiers[PPL_MAX_TIERS];
} ppl_topology_figures;

/* Ports of a radix-R switch facing down and up at a tier of the given down:up
 * oversubscription o: down = floor(R o / (o + 1)) (at least 1), so the ratio is
 * never worse than declared; the top tier's switches face down only. */
void ppl_switch_ports(int64_t radix, double oversubscription, bool top, int64_t *down, int64_t *up);

/* Ceiling of a / b for positive integers. */
static inline int64_t ppl_ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/*
 * The keys of a topology file: one row per key, named by its path in the
 * document ("servers", "rails.nic_bandwidth", "gpu.flops.bf16"; "tiers[].latency"
 * for the key of every tier).  The loader warns about keys that are not here; a
 * what-if sweep may set the settable ones.  The last row's path is NULL.
 */
typedef struct ppl_topology_key {
    const char *path;
    bool settable; /* a figure the cost model reads: not a name, a source, an object */
} ppl_topology_key;

extern const ppl_topology_key ppl_topology_keys[];

/* The row of path exactly as the table spells it ("tiers[].servers"); NULL when
 * a topology file has no such key. */
const ppl_topology_key *ppl_topology_key_find(const char *path);

ppl_status ppl_topology_load(const char *path, const char *display, const ppl_diag *diag,
                             ppl_topology *topo, ppl_error *err);
/* The same, and the file's document with the topology's name (*doc, the caller's
 * to free; a plan embeds it). */
ppl_status ppl_topology_load_doc(const char *path, const char *display, const ppl_diag *diag,
                                 ppl_topology *topo, struct json_t **doc, ppl_error *err);
ppl_status ppl_topology_from_json(const struct json_t *obj, const char *file, const char *path,
                                  const ppl_diag *diag, ppl_topology *topo, ppl_error *err);

void ppl_topology_derive(const ppl_topology *topo, ppl_topology_figures *out);
/* The GPUs of one NVLink domain within one server: the most a tensor-parallel
 * group spans without leaving either (domain_gpus or gpus_per_server, the smaller). */
int64_t ppl_topology_server_domain(const ppl_topology *topo);

/* transport.protocol's values, in ppl_protocol order: "infiniband", "rocev2", NULL. */
extern const char *const ppl_transport_names[];
const char *ppl_protocol_name(ppl_protocol p);
const char *ppl_retransmit_name(ppl_retransmit r);

/*
 * Mixed clusters.  A topology file may hold a `pools` array instead of one GPU
 * kind: each pool is a topology of its own (gpu, servers, gpus_per_server,
 * nvlink, rails, tiers), sharing the root's transport, switch_radix, rail_only
 * and source unless it states its own, and `cross_pool` says how the pools are
 * joined: the bandwidth per GPU (per direction) and the latency of a transfer
 * from a GPU of one pool to a GPU of another (mixed.h costs pipelines across
 * them).  ppl_topology_load of such a file checks every pool and returns the
 * first, with a warning.
 */
#define PPL_MAX_POOLS 4

typedef struct ppl_pools {
    char name[PPL_NAME_MAX];          /* the cluster's: the file's name, else its stem */
    int n;                            /* 0: the document has no pools */
    ppl_topology pool[PPL_MAX_POOLS]; /* each a plain topology; its name is the pool's */
    double cross_bps;                 /* per GPU, per direction, between two pools */
    double cross_latency_s;
} ppl_pools;

/* Reads the pools of a topology document (n = 0 when it has none).  Input
 * errors name the file and the key ("pools[1].servers", "cross_pool.bandwidth"). */
ppl_status ppl_pools_from_json(const struct json_t *root, const char *file, const ppl_diag *diag,
                               ppl_pools *pools, ppl_error *err);
ppl_status ppl_pools_load(const char *path, const char *display, const ppl_diag *diag,
                          ppl_pools *pools, ppl_error *err);
/* The same, and, when the file has pools, its document with the cluster's name
 * (*doc, the caller's to free; untouched without pools). */
ppl_status ppl_pools_load_doc(const char *path, const char *display, const ppl_diag *diag,
                              ppl_pools *pools, struct json_t **doc, ppl_error *err);

#endif
