/*
 * hardware/comm.h - communication on the topology: where a parallel group sits,
 * and what each collective costs there.
 *
 * Two layers over net.h's per-topology figures (the NCCL "tune" pass):
 *  - ppl_group: where the ranks of one parallel group sit (ranks per NVLink node,
 *    nodes, the highest switch tier their traffic climbs to, members inside each
 *    tier's groups), from Megatron's rank order;
 *  - ppl_collective(): alpha-beta time of one collective with the algorithms NCCL
 *    uses (ring, double binary tree), a hierarchical all-reduce, all-to-all (direct
 *    or rail-local through NVLink, NCCL's PXN) and send/recv, with the bytes each
 *    GPU sends over NVLink, inside a leaf group, and above it.
 *
 * Units: bytes, seconds, bytes/s per direction.
 */
#ifndef PARPLAN_COMM_H
#define PARPLAN_COMM_H

#include <stdbool.h>
#include <stdint.h>

#include "hardware/net.h"
#include "hardware/topology.h"

typedef enum ppl_collective_op {
    PPL_OP_ALLREDUCE = 0,
    PPL_OP_ALLGATHER,
    PPL_OP_REDUCESCATTER,
    PPL_OP_ALLTOALL,
    PPL_OP_SENDRECV
} ppl_collective_op;

/* The collective algorithms: X(ENUM, name), in enum order; each is a row of
 * comm.c's table (the operations it serves, when it applies, its cost). */
#define PPL_ALGO_LIST(X)                                                                           \
    X(AUTO, "auto") /* the fastest of the rows that apply, as NCCL's tuner */                      \
    X(RING, "ring")                                                                                \
    X(TREE, "tree")                 /* double binary tree, across nodes */                         \
    X(HIERARCHICAL, "hierarchical") /* reduce-scatter in the node, across, all-gather */           \
    X(DIRECT, "direct")             /* all-to-all straight to each peer */                         \
    X(PXN, "pxn")                   /* all-to-all through NVLink to the destination rail first */  \
    X(P2P, "p2p")                   /* send/recv */                                                \
    X(NVLS, "nvls")   /* all-reduce in the NVSwitch (NVLink SHARP), inside one NVLink domain */    \
    X(SHARP, "sharp") /* all-reduce in the InfiniBand switches across domains (CollNet) */

typedef enum ppl_algo {
#define PPL_ALGO_ENUM(e, name) PPL_ALGO_##e,
    PPL_ALGO_LIST(PPL_ALGO_ENUM)
#undef PPL_ALGO_ENUM
        PPL_ALGO_COUNT
} ppl_algo;

/* "allreduce", ... and "auto", "ring", ..., in enum order, NULL-terminated. */
extern const char *const ppl_collective_op_names[];
extern const char *const ppl_algo_names[];
const char *ppl_collective_op_name(int op); /* "?" out of range */
const char *ppl_algo_name(int algo);

/* NCCL's per-step software latencies for the Simple protocol (src/graph/tuning.cc). */
/* NVLS and CollNet (Simple): tuning.cc hwLatencies, NVLink NVLS 25 us; NET
 * CollNetDirect 31 us. */
#define PPL_NCCL_NVLS_LATENCY_S 25e-6
#define PPL_NCCL_COLLNET_LATENCY_S 31e-6
#define PPL_NCCL_BASE_LATENCY_S 8.4e-6
#define PPL_NCCL_NVLINK_RING_STEP_S 3.4e-6
#define PPL_NCCL_NVLINK_TREE_STEP_S 4.0e-6
#define PPL_NCCL_NET_STEP_S 14.0e-6
/* NCCL derates the tree's bus bandwidth (tuning.cc: busBw * .9). */
#define PPL_NCCL_TREE_BW_FACTOR 0.9

typedef struct ppl_group {
    int64_t n;                              /* ranks */
    int64_t m;                              /* ranks per NVLink node */
    int64_t nodes;                          /* n / m */
    int tier;                               /* highest tier crossed; -1 inside one NVLink node */
    int64_t members_in_tier[PPL_MAX_TIERS]; /* ranks inside one group of tier i */
} ppl_group;

/* A group of n ranks spaced `stride` GPUs apart from GPU `base` (ranks map to
 * GPUs in order: GPU g is local GPU g % gpus_per_server of server g / gpus_per_server). */
void ppl_group_place(const ppl_net *net, int64_t n, int64_t stride, int64_t base, ppl_group *out);
/* The GPUs of each NVLink domain a job of `job_gpus` takes: the whole domain when
 * the domain is one server or the job fits in one; else, on domains of several
 * servers (NVL72 racks), the most whole servers of a domain whose GPUs divide the
 * job, so that every domain holds the same share and no group of a power-of-two
 * size straddles two (256 GPUs on 72-GPU racks: 64 of each, as a scheduler's
 * segments of 16 trays allocate them).  A job that no share of at least half a
 * domain divides fills domains in order (the domain size). */
int64_t ppl_net_job_domain(const ppl_net *net, int64_t job_gpus);
/* ppl_group_place for ranks of a job that takes `job_domain` GPUs of each NVLink
 * domain (ppl_net_job_domain): rank r on GPU r / job_domain x domain + r %
 * job_domain. */
void ppl_group_place_job(const ppl_net *net, int64_t job_domain, int64_t n, int64_t stride,
                         int64_t base, ppl_group *out);
/* The worst of `copies` such groups of the job, the i-th starting at base + i *
 * copy_stride: the highest tier reached and the fewest members per tier group. */
void ppl_group_place_worst(const ppl_net *net, int64_t job_domain, int64_t n, int64_t stride,
                           int64_t base, int64_t copies, int64_t copy_stride, ppl_group *out);

/* The first `servers` servers of the topology, `per_server` GPUs each (local GPUs
 * 0 .. per_server-1): the group nccl-tests runs over. */
void ppl_group_servers(const ppl_net *net, int64_t servers, int64_t per_server, ppl_group *out);

typedef struct ppl_coll {
    double time_s;
    ppl_algo algo;       /* the algorithm that gave time_s */
    double nvlink_bytes; /* sent per GPU over NVLink */
    double rail_bytes;   /* sent per GPU into the network, staying under one leaf group */
    double spine_bytes;  /* sent per GPU through switches above the leaf */
} ppl_coll;

/* nccl-tests' figures for a collective of `bytes` over `ranks` that took r->time_s
 * (nccl-tests doc/PERFORMANCE.md): algbw = bytes / time, busbw = algbw x
 * ppl_busbw_factor(op, ranks); bytes/s. */
void ppl_coll_bandwidths(ppl_collective_op op, int64_t ranks, double bytes, const ppl_coll *r,
                         double *algbw_bps, double *busbw_bps);

/*
 * Time of one collective of `bytes` (nccl-tests' size: the buffer of an
 * all-reduce, the whole gathered or scattered buffer, each rank's all-to-all
 * buffer, one send) on group g.  algo PPL_ALGO_AUTO picks the fastest
 * applicable, as NCCL's tuner does.  Returns false when algo does not apply
 * (tree or hierarchical for other operations, or a group inside one node).
 */
bool ppl_collective(const ppl_net *net, ppl_collective_op op, const ppl_group *g, double bytes,
                    ppl_algo algo, ppl_coll *out);

/* Bytes sent per GPU at each level of the network, summed over collectives. */
typedef struct ppl_traffic {
    double nvlink, rail, spine; /* bytes sent per GPU per step at each level */
} ppl_traffic;

/* One collective by NCCL's automatic algorithm, `count` times, in seconds; adds
 * its bytes to *traffic when not NULL; 0 for a group of one or no bytes. */
double ppl_collective_count(const ppl_net *net, ppl_collective_op op, const ppl_group *g,
                            double bytes, double count, ppl_traffic *traffic);

/* nccl-tests bus bandwidth factor: 2(n-1)/n all-reduce, (n-1)/n all-gather,
 * reduce-scatter and all-to-all, 1 send/recv. */
double ppl_busbw_factor(ppl_collective_op op, int64_t n);

/*
 * An MoE layer's token dispatch (its combine is the same bytes back) over the
 * expert-parallel group g: each of this GPU's tokens goes to top_k experts,
 * copy_bytes a copy.  Without dedup (Megatron-Core's alltoall dispatcher) every
 * copy is its own message, spread evenly over the group.  With dedup (DeepEP,
 * Megatron-Core's flex dispatcher; DeepSeek-V3 report §3.2.2) a token crosses the
 * network once per remote server its experts sit on, at most node_limit servers,
 * and is forwarded over NVLink inside it.  skew scales the busiest rank's share
 * (its tokens over the mean: routing imbalance, bounded by a capacity factor).
 */
typedef struct ppl_dispatch {
    double top_k;
    int64_t node_limit; /* 0: none */
    bool dedup;
    double skew; /* >= 1 */
} ppl_dispatch;
void ppl_ep_dispatch(const ppl_net *net, const ppl_group *g, double copy_bytes,
                     const ppl_dispatch *dispatch, ppl_coll *out);
/* The servers a token's top_k experts reach among `servers` (uniform routing,
 * capped by node_limit when > 0). */
double ppl_dispatch_servers(double servers, double top_k, int64_t node_limit);

#endif
