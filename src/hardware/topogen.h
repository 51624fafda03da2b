/*
 * hardware/topogen.h - a topology for a parametric cluster (folded-Clos sizing).
 *
 * From a GPU kind, the servers, their NICs (rails) and a switch radix,
 * ppl_topogen() sizes the switch tiers of a folded Clos (Al-Fares et al.
 * SIGCOMM'08; see topogen.c) and writes a topology document (SPEC "Topology
 * file") with the GPU figures of gpu.c, then loads it back with the topology
 * loader: what it returns always loads.
 *
 * Errors name the option at fault by its field below ("switch_radix",
 * "leaf_servers"), as err->key with status PPL_EUSAGE; a message that refers to
 * another option names its field too ("must divide gpus_per_server").  When the
 * options give a document the loader rejects, err is the loader's (err->file
 * "(generated)", err->key a path in the document such as "tiers[0].servers")
 * with status PPL_EUSAGE.
 */
#ifndef PARPLAN_TOPOGEN_H
#define PARPLAN_TOPOGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "parplan/error.h"
#include "hardware/topology.h"

struct json_t;

/* ppl_topogen_opts_init() sets the defaults; the fields marked required have
 * none (0 or NULL) and must be set. */
typedef struct ppl_topogen_opts {
    /* required: a kind ppl_gpu_lookup knows ("H100", "h100", "H100-SXM5-80GB") */
    const char *gpu;
    int64_t servers;         /* required: servers in the cluster */
    int64_t gpus_per_server; /* required */
    /* NICs per server, NIC k on rail k; divides gpus_per_server; 0 (default): one
     * per GPU */
    int64_t rails;
    /* per NIC, per direction, bytes/s (400 Gb/s = 50e9); 0 (default): the kind's
     * platform NIC (ppl_gpu_spec nic_bps, per GPU) shared out over the rails */
    double nic_bandwidth_bps;
    int64_t leaf_servers; /* required: servers under one leaf group; divides servers */
    /* Switch tiers: tier_servers[0..ntier_servers-1] when ntier_servers > 0 (servers
     * per group of each tier, innermost first, taken as given); else `tiers` tiers
     * sized from the radix, or as many as the servers need when tiers is 0. */
    int tiers;                           /* 0 (default) to PPL_MAX_TIERS */
    int ntier_servers;                   /* 0 (default) to PPL_MAX_TIERS */
    int64_t tier_servers[PPL_MAX_TIERS]; /* servers per group, when ntier_servers > 0 */
    /* down:up at tier i's uplinks, > 0; default 1 (non-blocking); the top tier's is
     * not used (it has no uplinks: written as 1) */
    double oversubscription[PPL_MAX_TIERS];
    /* GPUs per NVLink domain; 0 (default): the GPU kind's domain or gpus_per_server,
     * whichever is larger */
    int64_t nvlink_domain_gpus;
    bool rail_only; /* no switch joins different rails; default false */
    bool nvls;      /* the NVSwitches reduce (NVLink SHARP); H100 and later */
    bool sharp;     /* the InfiniBand switches reduce (SHARP) */
    /* overrides of the kind's figures and of the default transport; 0: keep */
    double gpu_memory_bytes;     /* GPU memory */
    double nvlink_bandwidth_bps; /* scale-up per GPU per direction */
    const char *transport;       /* "infiniband" (default) or "rocev2" */
    double loss_rate;            /* per packet, 0 (default) to below 1 */
    int64_t switch_radix;        /* ports per fabric switch, >= 2; default 64 */
    /* written into the document; NULL (default): "<kind>-<servers>x<gpus_per_server>",
     * as "H100-8192x8" */
    const char *name;
} ppl_topogen_opts;

void ppl_topogen_opts_init(ppl_topogen_opts *opts);

/* The checks of single options and pairs of them that need no sizing: the GPU
 * kind, the ranges, rails dividing gpus_per_server, leaf_servers dividing servers.
 * ppl_topogen() makes them first; a caller that reads its options in steps may
 * make them before the rest is read. */
ppl_status ppl_topogen_check(const ppl_topogen_opts *opts, ppl_error *err);

/* Sizes the tiers and builds the topology document into *out (a new reference,
 * the caller's to json_decref) and, when topo is not NULL, the topology it loads
 * as.  out may be NULL when only the topology is wanted.  On failure *out is NULL
 * and err says why. */
ppl_status ppl_topogen(const ppl_topogen_opts *opts, struct json_t **out, ppl_topology *topo,
                       ppl_error *err);

#endif
