/*
 * hardware/net.h - per-topology network figures, derived once (net.c): effective
 * NVLink and NIC bandwidth, transport goodput under loss, per-tier
 * oversubscription and path latency, ECMP or adaptive routing.  The NCCL "tune"
 * pass of the model; comm.h costs collectives on it.
 *
 * Units: bytes, seconds, bytes/s per direction.
 */
#ifndef PARPLAN_NET_H
#define PARPLAN_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "hardware/topology.h"

/* NIC goodput: 46-49 GB/s measured on a 400 Gb/s ConnectX-7 (nccl-tests #290). */
#define PPL_NIC_GOODPUT 0.96
/* Flows (queue pairs) one GPU opens per peer across the fabric: NCCL uses several
 * channels per NIC, one QP each by default (NCCL_IB_QPS_PER_CONNECTION = 1). */
#define PPL_FLOWS_PER_PEER 2
/* Up to this many flows the expected maximum load is computed exactly. */
#define PPL_ECMP_EXACT_FLOWS 64

typedef struct ppl_net {
    const ppl_topology *topo;
    int64_t node_gpus;        /* GPUs that reach each other over NVLink */
    double nvlink_bw;         /* effective per GPU (NCCL's per-link figures) */
    double nvlink_busbw_cap;  /* NCCL's cap on the bus bandwidth (A100: 235 GB/s) */
    double nvls_bw;           /* per GPU through the NVSwitch's reduction; 0: none */
    double link_bw;           /* a mesh's one point-to-point link (effective); 0: a switch */
    double nic_bw;            /* per GPU: its share of the NICs x goodput x transport */
    double transport_goodput; /* loss recovery: go-back-N or selective */
    double packets_in_flight; /* W = line rate x RTT / MTU + 1 */
    double tail_loss_s;       /* expected wait for a lost tail packet, per message */
    double os_below[PPL_MAX_TIERS + 1];   /* product of oversubscription of tiers < i */
    double path_latency_s[PPL_MAX_TIERS]; /* one-way, NIC to NIC, climbing to tier i */
    int64_t uplinks_per_switch[PPL_MAX_TIERS];
    int64_t gpus_per_switch[PPL_MAX_TIERS]; /* GPUs below one switch of tier i */
    int cross_rail_tier;                    /* first tier joining different rails; ntiers if none */
    bool ecmp; /* flows hashed onto uplinks (no spraying, no adaptive routing) */
    /* E[max load] of k flows on one switch of tier i, exact for k <= PPL_ECMP_EXACT_FLOWS */
    double ecmp_max[PPL_MAX_TIERS][PPL_ECMP_EXACT_FLOWS + 1];
} ppl_net;

void ppl_net_init(ppl_net *net, const ppl_topology *topo);

/* Go-back-N goodput (1-p)/(1 + (W-1)p); selective retransmission 1-p. */
double ppl_goodput_go_back_n(double loss, double window);
/* Expected maximum load of `flows` flows hashed uniformly onto `links` links. */
double ppl_ecmp_expected_max(int64_t flows, int64_t links);
/* The same for the uplinks of one switch of tier `tier`, from the table ppl_net_init fills. */
double ppl_net_ecmp_max(const ppl_net *net, int tier, int64_t flows);

#endif
