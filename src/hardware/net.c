/*
 * net.c - per-topology network figures, derived once (the "tune" pass).
 *
 * Effective NVLink bandwidth per GPU follows NCCL's per-link figures and its
 * A100 cap on the bus bandwidth, from the GPU kind's row (gpu.c).  A NIC delivers PPL_NIC_GOODPUT
 * of its line rate (46-49 of 50 GB/s on ConnectX-7, nccl-tests #290).
 *
 * Loss recovery: with go-back-N a loss discards the W - 1 packets sent after it,
 * W = line rate x RTT / MTU + 1 packets in flight during the loss-detection
 * delay, so goodput is (1-p)/(1 + (W-1)p); selective retransmission (IRN, Mittal
 * et al. SIGCOMM'18) and NIC out-of-order placement lose only the packet: 1-p.  A
 * loss among a message's last W packets is not followed by enough packets to be
 * detected from a gap: it waits a retransmission timeout.
 *
 * ECMP: k flows hashed uniformly onto n links finish when the most loaded link
 * does; the expected maximum load is computed exactly for small k (balls into
 * bins: P(max <= j) = k!/n^k [x^k] (sum_{i<=j} x^i/i!)^n) and with the normal
 * approximation mean + sqrt(2 mean ln n) (Raab and Steger, RANDOM'98) beyond.
 * InfiniBand fabrics route adaptively, and packet spraying with out-of-order
 * placement removes the imbalance: only RoCE without them pays it.
 */
#include "hardware/net.h"
#include "base/constants.h"

#include <math.h>
#include <string.h>

double ppl_goodput_go_back_n(double p, double window)
{
    return (1.0 - p) / (1.0 + (window - 1.0) * p);
}

/* Exact E[max load] of k balls in n bins for every k <= kmax (<= 64) at once: for
 * each j the coefficients of the truncated series f = sum_{i<=j} x^i/i! raised to
 * the n-th power, P = f^n, up to x^kmax; the coefficient of x^k, times k!/n^k, is
 * P(max <= j) for k balls, and E[max] = sum_j P(max > j).  P follows from f P' =
 * n f' P (J. C. P. Miller's recurrence for a power of a series, Knuth TAOCP vol. 2,
 * 4.7): P_0 = 1, k P_k = sum_{i=1..min(k,j)} ((n+1) i - k) f_i P_{k-i}, kmax^3/3
 * multiply-adds in all.  Its terms are all positive where n + 1 > kmax; with
 * fewer bins some are negative and cancel: against exact rational arithmetic the
 * table is within 1e-12 relative wherever 4n >= kmax (kmax 4 to 64), but 0.2 off at
 * n = 8, kmax = 64.  There the series is raised by squaring instead, every term
 * positive, kmax^3 log2(n) multiply-adds. */
static void power_by_recurrence(int64_t n, int j, int kmax, const double *coef, double *p)
{
    p[0] = 1.0;
    for (int k = 1; k <= kmax; k++) {
        double s = 0.0;
        for (int i = 1; i <= (k < j ? k : j); i++)
            s += ((double)(n + 1) * i - k) * coef[i] * p[k - i];
        p[k] = s / k;
    }
}

/* a = a x b, both truncated to degree kmax (b may be a) */
static void times_truncated(double *a, const double *b, int kmax)
{
    double tmp[65];
    for (int i = 0; i <= kmax; i++) {
        double s = 0.0;
        for (int x = 0; x <= i; x++)
            s += a[x] * b[i - x];
        tmp[i] = s;
    }
    memcpy(a, tmp, sizeof(double) * (size_t)(kmax + 1));
}

static void power_by_squaring(int64_t n, int j, int kmax, const double *coef, double *acc)
{
    double poly[65];
    for (int i = 0; i <= kmax; i++) {
        acc[i] = i == 0 ? 1.0 : 0.0;
        poly[i] = i <= j ? coef[i] : 0.0;
    }
    for (int64_t e = n; e > 0; e >>= 1) {
        if (e & 1)
            times_truncated(acc, poly, kmax);
        if (e > 1)
            times_truncated(poly, poly, kmax);
    }
}

static void expected_max_table(int64_t n, int kmax, double *out)
{
    double coef[65], acc[65];
    const double logn = log((double)n);
    for (int i = 0; i <= kmax; i++)
        coef[i] = exp(-lgamma((double)i + 1.0));
    for (int k = 0; k <= kmax; k++)
        out[k] = 0.0;
    for (int j = 0; j < kmax; j++) {
        if (4 * n >= kmax)
            power_by_recurrence(n, j, kmax, coef, acc);
        else
            power_by_squaring(n, j, kmax, coef, acc);
        for (int k = j + 1; k <= kmax; k++) {
            double p_le = acc[k] * exp(lgamma((double)k + 1.0) - (double)k * logn);
            out[k] += 1.0 - (p_le > 1.0 ? 1.0 : p_le); /* E[max] = sum_j P(max > j) */
        }
    }
}

static double expected_max_approx(int64_t flows, int64_t links)
{
    double mean = (double)flows / (double)links;
    return mean + sqrt(2.0 * mean * log((double)links));
}

double ppl_ecmp_expected_max(int64_t flows, int64_t links)
{
    if (flows <= 0)
        return 0.0;
    if (links <= 1)
        return (double)flows;
    if (flows > PPL_ECMP_EXACT_FLOWS)
        return expected_max_approx(flows, links);
    double table[PPL_ECMP_EXACT_FLOWS + 1];
    expected_max_table(links, (int)flows, table);
    return table[flows];
}

double ppl_net_ecmp_max(const ppl_net *net, int tier, int64_t flows)
{
    int64_t links = net->uplinks_per_switch[tier];
    if (flows <= 0)
        return 0.0;
    if (links <= 1)
        return (double)flows;
    if (flows <= PPL_ECMP_EXACT_FLOWS && net->ecmp)
        return net->ecmp_max[tier][flows];
    return ppl_ecmp_expected_max(flows, links);
}

void ppl_net_init(ppl_net *net, const ppl_topology *t)
{
    memset(net, 0, sizeof *net);
    net->topo = t;
    net->node_gpus =
        t->nvlink.domain_gpus > t->gpus_per_server ? t->nvlink.domain_gpus : t->gpus_per_server;
    /* the kind's row: NCCL's figures for its links (gpu.c) */
    ppl_scaleup_figures up;
    ppl_gpu_scaleup(&t->gpu, &up);
    net->nvlink_bw = up.efficiency * t->nvlink.bandwidth_bps;
    net->nvlink_busbw_cap = up.busbw_cap_bps > 0 ? up.busbw_cap_bps : net->nvlink_bw;
    net->nvls_bw = t->nvlink.sharp ? ppl_gpu_nvls_efficiency(&t->gpu) * net->nvlink_bw : 0.0;
    /* a mesh: the bandwidth is the sum over the domain's other GPUs' links */
    net->link_bw = t->nvlink.mesh && t->nvlink.domain_gpus > 1
                       ? net->nvlink_bw / (double)(t->nvlink.domain_gpus - 1)
                       : 0.0;

    const double p = t->transport.loss_rate;
    net->packets_in_flight =
        t->rails.nic_bandwidth_bps * t->transport.rtt_s / (double)t->transport.mtu_bytes + 1.0;
    net->transport_goodput = t->transport.retransmit == PPL_RETRANSMIT_GO_BACK_N
                                 ? ppl_goodput_go_back_n(p, net->packets_in_flight)
                                 : 1.0 - p;
    net->tail_loss_s = (1.0 - pow(1.0 - p, net->packets_in_flight)) *
                       ppl_assumed_values()->tail_loss_timeout_s; /* assumed (constants.c) */
    double share = (double)t->rails.count / (double)t->gpus_per_server;
    net->nic_bw = t->rails.nic_bandwidth_bps * share * PPL_NIC_GOODPUT * net->transport_goodput;

    /* InfiniBand routes adaptively; RoCE hashes flows unless packets may spray */
    net->ecmp = t->transport.protocol == PPL_PROTOCOL_ROCEV2 &&
                t->transport.retransmit != PPL_RETRANSMIT_OOO;

    net->os_below[0] = 1.0;
    double latency = 0.0;
    net->cross_rail_tier = t->ntiers;
    for (int i = 0; i < t->ntiers; i++) {
        const ppl_tier *tier = &t->tiers[i];
        /* up through tiers 0..i and down again: 2i + 1 switches */
        latency += (i == 0 ? 1.0 : 2.0) * tier->latency_s;
        net->path_latency_s[i] = t->rails.latency_s + latency;
        net->os_below[i + 1] = net->os_below[i] * tier->oversubscription;
        int64_t down, up;
        ppl_switch_ports(t->switch_radix, tier->oversubscription, i == t->ntiers - 1, &down, &up);
        net->uplinks_per_switch[i] = up < 1 ? 1 : up;
        /* a rail-optimized switch serves one rail of its group's servers */
        int64_t gpus_per_port = t->gpus_per_server / t->rails.count;
        int64_t reach = tier->rail_optimized ? tier->servers * gpus_per_port
                                             : tier->servers * t->gpus_per_server;
        net->gpus_per_switch[i] = reach < down * gpus_per_port ? reach : down * gpus_per_port;
        if (!tier->rail_optimized && net->cross_rail_tier == t->ntiers)
            net->cross_rail_tier = i;
    }
    if (t->rail_only)
        net->cross_rail_tier = t->ntiers;
    /* exact expected maxima for few flows, once per distinct uplink count */
    for (int i = 0; net->ecmp && i < t->ntiers; i++) {
        int j = 0;
        while (j < i && net->uplinks_per_switch[j] != net->uplinks_per_switch[i])
            j++;
        if (j < i)
            memcpy(net->ecmp_max[i], net->ecmp_max[j], sizeof net->ecmp_max[i]);
        else if (net->uplinks_per_switch[i] > 1)
            expected_max_table(net->uplinks_per_switch[i], PPL_ECMP_EXACT_FLOWS, net->ecmp_max[i]);
    }
}
