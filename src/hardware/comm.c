/*
 * comm.c - where parallel groups sit and what their collectives cost.
 *
 * Collective times follow NCCL's own model (src/graph/tuning.cc): time = latency +
 * bytes / bandwidth, with
 *   ring all-reduce   latency base + (2(n-1) - 2(N-1)) intra steps + 2(N-1) network
 *                     steps, bandwidth term 2(n-1)/n x S / busbw;
 *   ring all-gather / reduce-scatter: half the steps, (n-1)/n x S / busbw;
 *   double binary tree (Sanders et al.; NCCL 2.4): latency base + 2((m-1) intra +
 *                     log2(N) network steps); every node receives 2S in all (an
 *                     interior node takes two children at once, the 2:1 fan-in), so
 *                     time = 2S / busbw_tree with NCCL's busBw x 0.9;
 * where n ranks sit m to an NVLink node on N nodes.  A ring crossing nodes runs one
 * channel per NIC: its bus bandwidth is min(NVLink, m x NIC per GPU), which is why
 * multi-node all-reduce approaches the node's aggregate NIC bandwidth.
 *
 * Oversubscription: ring and tree edges leave a tier's group only at the group's
 * boundary: 1/k of the NIC traffic of a group with k members inside it, so the
 * uplinks (1/os of the NIC bandwidth) slow them only when os > k.  All-to-all
 * sends a share of every byte out of the group and is throttled accordingly.
 * All-to-all cannot spread one flow over several NICs (nccl-tests #267): each GPU
 * sends through its own NIC share.  Between rails it either climbs to the first
 * tier that joins rails, or first crosses NVLink to the GPU on the destination
 * rail (NCCL's PXN), the only way on a rail-only network (Wang et al. 2023).
 */
#include "hardware/comm.h"

#include <math.h>
#include <string.h>

const char *const ppl_collective_op_names[] = {"allreduce", "allgather", "reducescatter",
                                               "alltoall",  "sendrecv",  NULL};
const char *const ppl_algo_names[] = {
#define NAME(e, name) name,
    PPL_ALGO_LIST(NAME)
#undef NAME
        NULL};

const char *ppl_collective_op_name(int v)
{
    return (unsigned)v <= PPL_OP_SENDRECV ? ppl_collective_op_names[v] : "?";
}
const char *ppl_algo_name(int v)
{
    return (unsigned)v < PPL_ALGO_COUNT ? ppl_algo_names[v] : "?";
}

/* members of a strided set that fall inside the block of `block` GPUs holding `first` */
static int64_t members_in_block(int64_t n, int64_t stride, int64_t first, int64_t block)
{
    int64_t end = (first / block + 1) * block;
    int64_t k = ppl_ceil_div(end - first, stride);
    return k < n ? k : n;
}

int64_t ppl_net_job_domain(const ppl_net *net, int64_t job_gpus)
{
    const int64_t d = net->node_gpus, per = net->topo->gpus_per_server;
    if (d <= per || job_gpus <= d || per < 1)
        return d;
    for (int64_t s = d - d % per; 2 * s >= d; s -= per)
        if (job_gpus % s == 0)
            return s;
    return d;
}

/* The GPU a job's rank sits on when the job takes `s` GPUs of each domain of d */
static int64_t gpu_of(int64_t rank, int64_t s, int64_t d)
{
    return s == d ? rank : rank / s * d + rank % s;
}

/* The ranks of a job (s GPUs a domain of d) in a block of `block` GPUs: a block
 * of whole domains holds s of each, a server or a domain's part its own GPUs */
static int64_t ranks_in(int64_t block, int64_t s, int64_t d)
{
    if (s == d)
        return block;
    if (block % d == 0)
        return block / d * s;
    return block < s ? block : s;
}

void ppl_group_place(const ppl_net *net, int64_t n, int64_t stride, int64_t base, ppl_group *g)
{
    ppl_group_place_job(net, net->node_gpus, n, stride, base, g);
}

void ppl_group_place_job(const ppl_net *net, int64_t job_domain, int64_t n, int64_t stride,
                         int64_t base, ppl_group *g)
{
    const ppl_topology *t = net->topo;
    const int64_t d = net->node_gpus;
    const int64_t s = job_domain >= 1 && job_domain <= d ? job_domain : d;
    memset(g, 0, sizeof *g);
    if (stride < 1)
        stride = 1;
    g->n = n;
    g->m = members_in_block(n, stride, base, s);
    g->nodes = ppl_ceil_div(n, g->m);
    int64_t last = base + (n - 1) * stride;
    g->tier = -1;
    for (int i = t->ntiers - 1; i >= 0; i--)
        g->members_in_tier[i] = members_in_block(
            n, stride, base, ranks_in(t->tiers[i].servers * t->gpus_per_server, s, d));
    if (base / s == last / s)
        return;
    int64_t s0 = gpu_of(base, s, d) / t->gpus_per_server,
            s1 = gpu_of(last, s, d) / t->gpus_per_server;
    g->tier = t->ntiers - 1;
    for (int i = 0; i < t->ntiers; i++)
        if (s0 / t->tiers[i].servers == s1 / t->tiers[i].servers) {
            g->tier = i;
            break;
        }
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* How many of the copies are placed apart.  A copy's figures read its first rank
 * modulo the blocks it meets (in ranks: the job's share of an NVLink domain, and
 * of each tier's group of servers, ranks_in): members_in_block and whether its
 * first and last rank share a block.  A block beyond the last rank of every copy
 * holds each whole, alike.  So copies whose first ranks agree modulo the others'
 * least common multiple L are placed alike, and the first L / gcd(copy_stride, L)
 * are all the placements there are.  Tier groups that are not whole NVLink domains
 * (where a job takes part of each domain) map ranks to GPUs unevenly: every copy
 * then counts. */
static int64_t distinct_copies(const ppl_net *net, int64_t s, int64_t n, int64_t stride,
                               int64_t base, int64_t copies, int64_t copy_stride)
{
    const ppl_topology *t = net->topo;
    const int64_t d = net->node_gpus;
    const int64_t last = base + (copies - 1) * copy_stride + (n - 1) * stride;
    int64_t lcm = s <= last ? s : 1;
    for (int i = 0; i < t->ntiers; i++) {
        const int64_t gpus = t->tiers[i].servers * t->gpus_per_server;
        const int64_t block = ranks_in(gpus, s, d);
        if (block > last)
            continue;
        if (s != d && gpus % d != 0)
            return copies;
        const int64_t g = gcd64(lcm, block);
        if (lcm / g > last / block)
            return copies; /* the least common multiple passes the last rank: no repeat */
        lcm = lcm / g * block;
    }
    const int64_t period = lcm / gcd64(copy_stride, lcm);
    return period < copies ? period : copies;
}

void ppl_group_place_worst(const ppl_net *net, int64_t job_domain, int64_t n, int64_t stride,
                           int64_t base, int64_t copies, int64_t copy_stride, ppl_group *out)
{
    ppl_group_place_job(net, job_domain, n, stride, base, out);
    if (n <= 1) /* one rank sits inside every block wherever it is: each copy alike */
        return;
    const int64_t d = net->node_gpus;
    copies = distinct_copies(net, job_domain >= 1 && job_domain <= d ? job_domain : d, n,
                             stride < 1 ? 1 : stride, base, copies, copy_stride);
    for (int64_t c = 1; c < copies; c++) {
        ppl_group g;
        ppl_group_place_job(net, job_domain, n, stride, base + c * copy_stride, &g);
        if (g.tier > out->tier)
            out->tier = g.tier;
        if (g.m < out->m) {
            out->m = g.m;
            out->nodes = g.nodes;
        }
        for (int i = 0; i < net->topo->ntiers; i++)
            if (g.members_in_tier[i] < out->members_in_tier[i])
                out->members_in_tier[i] = g.members_in_tier[i];
    }
}

void ppl_group_servers(const ppl_net *net, int64_t servers, int64_t per_server, ppl_group *g)
{
    const ppl_topology *t = net->topo;
    memset(g, 0, sizeof *g);
    int64_t per_node = net->node_gpus / t->gpus_per_server; /* servers in one NVLink node */
    g->n = servers * per_server;
    g->m = per_server * (servers < per_node ? servers : per_node);
    g->nodes = ppl_ceil_div(servers, per_node);
    g->tier = -1;
    for (int i = t->ntiers - 1; i >= 0; i--) {
        int64_t inside = t->tiers[i].servers < servers ? t->tiers[i].servers : servers;
        g->members_in_tier[i] = inside * per_server;
        if (g->nodes > 1 && t->tiers[i].servers >= servers)
            g->tier = i;
    }
}

void ppl_coll_bandwidths(ppl_collective_op op, int64_t ranks, double bytes, const ppl_coll *r,
                         double *algbw_bps, double *busbw_bps)
{
    *algbw_bps = bytes / r->time_s;
    *busbw_bps = *algbw_bps * ppl_busbw_factor(op, ranks);
}

double ppl_busbw_factor(ppl_collective_op op, int64_t n)
{
    double nn = (double)n;
    switch (op) {
    case PPL_OP_ALLREDUCE: return 2.0 * (nn - 1.0) / nn;
    case PPL_OP_ALLGATHER:
    case PPL_OP_REDUCESCATTER:
    case PPL_OP_ALLTOALL: return (nn - 1.0) / nn;
    case PPL_OP_SENDRECV: break;
    }
    return 1.0;
}

/* Bandwidth per GPU inside the NVLink domain for traffic to `peers` other members
 * of its group: through a switch, the GPU's whole NVLink bandwidth; on a
 * point-to-point mesh (Infinity Fabric) only the links to those peers carry it,
 * so a group of 4 of 8 GPUs reaches 3 of 7 links (RCCL builds its rings and
 * direct sends over the links between members). */
static double nvl_bw(const ppl_net *net, double peers)
{
    if (net->link_bw <= 0.0)
        return net->nvlink_bw;
    return net->link_bw * (peers < 1.0 ? 1.0 : peers);
}

/* Latency of one step inside a node, and of one network step climbing to `tier`. */
static double nvlink_step(const ppl_net *net, bool tree)
{
    return (tree ? PPL_NCCL_NVLINK_TREE_STEP_S : PPL_NCCL_NVLINK_RING_STEP_S) +
           net->topo->nvlink.latency_s;
}

static double net_step(const ppl_net *net, int tier)
{
    return PPL_NCCL_NET_STEP_S + net->path_latency_s[tier < 0 ? 0 : tier];
}

/* ECMP slowdown of `crossing` GPUs under one switch each opening `flows` flows onto
 * the switch's uplinks: the ideal load over the expected maximum. */
static double ecmp_factor(const ppl_net *net, int below, double crossing, double flows)
{
    if (!net->ecmp)
        return 1.0;
    double f = crossing * flows;
    if (f < 1.0)
        f = 1.0;
    if (f > 1e9)
        f = 1e9;
    int64_t F = (int64_t)ceil(f), U = net->uplinks_per_switch[below];
    double ideal = ceil((double)F / (double)U);
    return ideal / ppl_net_ecmp_max(net, below, F);
}

/* Per-GPU bandwidth of a group's inter-node ring or tree edges. */
static double ring_net_bw(const ppl_net *net, const ppl_group *g)
{
    double bw = net->nic_bw, worst = 1.0;
    for (int j = 1; j <= g->tier; j++) {
        double members = (double)g->members_in_tier[j - 1];
        if (members < 1.0)
            members = 1.0;
        double factor = members / net->os_below[j];
        if (factor > 1.0)
            factor = 1.0;
        double crossing = (double)net->gpus_per_switch[j - 1] / members;
        factor *= ecmp_factor(net, j - 1, crossing < 1.0 ? 1.0 : crossing, PPL_FLOWS_PER_PEER);
        if (factor < worst)
            worst = factor;
    }
    return bw * worst;
}

/* Leaf groups a group spans, for the share of ring edges above the leaf. */
static double spine_share(const ppl_group *g)
{
    if (g->tier < 1 || g->nodes <= 1)
        return 0.0;
    double groups = ceil((double)g->n / (double)g->members_in_tier[0]);
    double share = groups / (double)g->nodes;
    return share > 1.0 ? 1.0 : share;
}

static void split_network(const ppl_group *g, double network, ppl_coll *out)
{
    double above = network * spine_share(g);
    out->spine_bytes = above;
    out->rail_bytes = network - above;
}

static double ring_busbw(const ppl_net *net, const ppl_group *g)
{
    double bw = nvl_bw(net, (double)g->m - 1.0);
    double nvl = net->nvlink_busbw_cap < bw ? net->nvlink_busbw_cap : bw;
    if (g->nodes <= 1)
        return nvl;
    double inter = (double)g->m * ring_net_bw(net, g);
    return inter < nvl ? inter : nvl;
}

static void ring(const ppl_net *net, ppl_collective_op op, const ppl_group *g, double S,
                 ppl_coll *out)
{
    double n = (double)g->n, N = (double)g->nodes;
    double steps = op == PPL_OP_ALLREDUCE ? 2.0 * (n - 1.0) : n - 1.0;
    double net_steps = g->nodes > 1 ? (op == PPL_OP_ALLREDUCE ? 2.0 * (N - 1.0) : N - 1.0) : 0.0;
    double latency = PPL_NCCL_BASE_LATENCY_S + (steps - net_steps) * nvlink_step(net, false) +
                     net_steps * (net_step(net, g->tier) + net->tail_loss_s);
    double sent = ppl_busbw_factor(op, g->n) * S; /* bytes each rank sends */
    out->time_s = latency + sent / ring_busbw(net, g);
    out->algo = PPL_ALGO_RING;
    double network = g->nodes > 1 ? sent / (double)g->m : 0.0;
    out->nvlink_bytes = sent - network;
    split_network(g, network, out);
}

static void tree(const ppl_net *net, const ppl_group *g, double S, ppl_coll *out)
{
    double levels = ceil(log2((double)g->nodes));
    double latency =
        PPL_NCCL_BASE_LATENCY_S + 2.0 * ((double)(g->m - 1) * nvlink_step(net, true) +
                                         levels * (net_step(net, g->tier) + net->tail_loss_s));
    double busbw = PPL_NCCL_TREE_BW_FACTOR * ring_busbw(net, g);
    out->time_s = latency + 2.0 * S / busbw;
    out->algo = PPL_ALGO_TREE;
    /* each node sends 2S into the network; inside it a chain passes 2S per GPU */
    double network = 2.0 * S / (double)g->m;
    out->nvlink_bytes = 2.0 * S * (double)(g->m - 1) / (double)g->m;
    split_network(g, network, out);
}

/* NCCL's tuner for all-reduce: the faster of ring and (across nodes) tree; a tie
 * keeps the ring. */
static void ring_or_tree(const ppl_net *net, const ppl_group *g, double S, bool multi,
                         ppl_coll *out)
{
    ring(net, PPL_OP_ALLREDUCE, g, S, out);
    if (multi) {
        ppl_coll tr;
        tree(net, g, S, &tr);
        if (tr.time_s < out->time_s)
            *out = tr;
    }
}

/* The group of one rank per NVLink node of g, on one rail: what crosses the
 * network in a hierarchical collective. */
static void one_per_node(const ppl_group *g, ppl_group *across)
{
    *across = *g;
    across->n = g->nodes;
    across->m = 1;
    for (int i = 0; i < PPL_MAX_TIERS; i++) {
        across->members_in_tier[i] = ppl_ceil_div(g->members_in_tier[i], g->m);
        if (across->members_in_tier[i] < 1)
            across->members_in_tier[i] = 1;
    }
}

/* Reduce-scatter inside the node, all-reduce of S/m across nodes on each rail (ring
 * or tree, the faster), all-gather inside the node. */
static void hierarchical(const ppl_net *net, const ppl_group *g, double S, ppl_coll *out)
{
    double m = (double)g->m;
    double intra = (m - 1.0) * nvlink_step(net, false) + (m - 1.0) / m * S / nvl_bw(net, m - 1.0);
    ppl_group across;
    one_per_node(g, &across);
    ppl_coll inter;
    ring_or_tree(net, &across, S / m, true, &inter);
    out->time_s = 2.0 * intra + inter.time_s;
    out->algo = PPL_ALGO_HIERARCHICAL;
    out->nvlink_bytes = 2.0 * (m - 1.0) / m * S;
    out->rail_bytes = inter.rail_bytes;
    out->spine_bytes = inter.spine_bytes;
}

/* All-reduce in the NVSwitch (NCCL's NVLS, one NVLink domain): each GPU writes its
 * buffer up once (multimem reduce) and reads the reduced result back once
 * (multimem store), S each way, so algbw = the NVLS bandwidth and busbw = algbw
 * x 2(n-1)/n.  The bandwidth is NCCL's effective NVLink figure x nvlsEfficiency x
 * (channels - 1)/channels (tuning.cc); latency its NVLS hardware latency.  On 8
 * H100: 20.6/25 x 450 GB/s = 370.8 x 0.85 x 15/16 = 295.5 GB/s, busbw 517 GB/s
 * (nccl-tests #212 measures about 480). */
static void nvls(const ppl_net *net, const ppl_group *g, double S, ppl_coll *out)
{
    (void)g; /* the whole group sits on the one switch */
    out->time_s = PPL_NCCL_NVLS_LATENCY_S + S / net->nvls_bw;
    out->algo = PPL_ALGO_NVLS;
    out->nvlink_bytes = S;
}

/* All-reduce across NVLink domains reduced in the InfiniBand switches (SHARP,
 * NCCL's CollNet): inside the domain a reduce-scatter and an all-gather (through
 * the NVSwitch where it reduces: S up and S down per GPU; else ring steps:
 * 2(m-1)/m S each way), and each GPU's 1/m shard up to the aggregation switch and
 * back once (S/m into the network instead of a ring's 2(N-1)/N x S/m).  NCCL
 * pipelines the phases chunk by chunk, and its tuner takes the slower of the
 * intra- and inter-node bandwidths (tuning.cc): so does this, with the shard at
 * the ring's oversubscribed rail share and NCCL's CollNet network latency. */
static void sharp(const ppl_net *net, const ppl_group *g, double S, ppl_coll *out)
{
    double m = (double)g->m;
    double intra_s = 0.0, intra_lat = 0.0;
    if (g->m > 1) {
        intra_s = 2.0 * (m - 1.0) / m * S / nvl_bw(net, m - 1.0);
        intra_lat = 2.0 * (m - 1.0) * nvlink_step(net, false);
        if (net->nvls_bw > 0 && S / net->nvls_bw < intra_s) {
            intra_s = S / net->nvls_bw;
            intra_lat = PPL_NCCL_NVLS_LATENCY_S;
        }
    }
    ppl_group across;
    one_per_node(g, &across);
    double shard = S / m;
    double inter_s = shard / ring_net_bw(net, &across);
    double latency = intra_lat + PPL_NCCL_COLLNET_LATENCY_S +
                     net->path_latency_s[g->tier < 0 ? 0 : g->tier] + net->tail_loss_s;
    out->time_s = latency + (intra_s > inter_s ? intra_s : inter_s);
    out->algo = PPL_ALGO_SHARP;
    out->nvlink_bytes = g->m > 1 ? 2.0 * (m - 1.0) / m * S : 0.0;
    split_network(&across, shard, out);
}

/* Bytes per GPU that must climb through tier j's uplinks (j >= 1) in an all-to-all:
 * those bound outside its tier-(j-1) group, and, when going direct, those bound to
 * another rail inside it below the first tier that joins rails. */
static double alltoall_load(const ppl_net *net, const ppl_group *g, double S, int j, bool direct,
                            double other_rail)
{
    double n = (double)g->n;
    double beyond = S * (n - (double)g->members_in_tier[j - 1]) / n;
    if (beyond < 0.0)
        beyond = 0.0;
    if (direct && j <= net->cross_rail_tier) {
        double inside = S * ((double)g->members_in_tier[j - 1] - (double)g->m) / n;
        if (inside > 0.0)
            beyond += inside * other_rail;
    }
    return beyond;
}

/* S bytes per GPU spread evenly over the group's ranks; `local` (< 0: S's even
 * share) is what crosses NVLink inside the server instead */
static void alltoall(const ppl_net *net, const ppl_group *g, double S, double local, bool direct,
                     ppl_coll *out)
{
    const ppl_topology *t = net->topo;
    double n = (double)g->n, m = (double)g->m;
    double remote = S * (n - m) / n;
    if (local < 0.0)
        local = S * (m - 1.0) / n;
    memset(out, 0, sizeof *out);
    out->algo = direct ? PPL_ALGO_DIRECT : PPL_ALGO_PXN;
    if (g->nodes <= 1) {
        out->time_s =
            PPL_NCCL_BASE_LATENCY_S + nvlink_step(net, false) + local / nvl_bw(net, m - 1.0);
        out->nvlink_bytes = local;
        return;
    }
    /* one remote peer in `rails_used` shares this GPU's rail */
    double rails_used = m < (double)t->rails.count ? m : (double)t->rails.count;
    double other_rail = 1.0 - 1.0 / rails_used;
    int top = g->tier;
    if (direct && net->cross_rail_tier > top && other_rail > 0.0 &&
        net->cross_rail_tier < t->ntiers)
        top = net->cross_rail_tier;
    double t_net = remote / net->nic_bw;
    double spine = 0.0;
    for (int j = 1; j <= top && j < t->ntiers; j++) {
        double load = alltoall_load(net, g, S, j, direct, other_rail);
        if (j == 1)
            spine = load;
        double crossing = (double)net->gpus_per_switch[j - 1];
        double peers = n - (double)g->members_in_tier[j - 1];
        double flows = (peers < 1.0 ? 1.0 : peers) * PPL_FLOWS_PER_PEER;
        double bw = net->nic_bw / net->os_below[j] * ecmp_factor(net, j - 1, crossing, flows);
        double tj = load / bw;
        if (tj > t_net)
            t_net = tj;
    }
    double forwarded = direct ? 0.0 : remote * other_rail;
    double nvl = local / nvl_bw(net, m - 1.0);
    double body = t_net > nvl ? t_net : nvl;
    /* PXN forwards through the GPU on the destination rail before the network */
    out->time_s = PPL_NCCL_BASE_LATENCY_S + net_step(net, top) + net->tail_loss_s + body +
                  forwarded / nvl_bw(net, m - 1.0);
    out->nvlink_bytes = local + forwarded;
    out->spine_bytes = spine < remote ? spine : remote;
    out->rail_bytes = remote - out->spine_bytes;
}

static void sendrecv(const ppl_net *net, const ppl_group *g, double S, ppl_coll *out)
{
    memset(out, 0, sizeof *out);
    out->algo = PPL_ALGO_P2P;
    if (g->nodes <= 1) {
        out->time_s = nvlink_step(net, false) + S / nvl_bw(net, 1.0); /* one link */
        out->nvlink_bytes = S;
        return;
    }
    out->time_s = net_step(net, g->tier) + net->tail_loss_s + S / net->nic_bw;
    if (g->tier >= 1)
        out->spine_bytes = S;
    else
        out->rail_bytes = S;
}

/* ---- the table ---------------------------------------------------------- */

static bool always(const ppl_net *net, const ppl_group *g)
{
    (void)net, (void)g;
    return true;
}

static bool across_nodes(const ppl_net *net, const ppl_group *g)
{
    (void)net;
    return g->nodes > 1;
}

static bool hierarchy(const ppl_net *net, const ppl_group *g)
{
    (void)net;
    return g->nodes > 1 && g->m >= 2;
}

/* in-switch reduction only where the topology says the switches have it */
static bool nvswitch_reduces(const ppl_net *net, const ppl_group *g)
{
    return g->nodes <= 1 && net->nvls_bw > 0;
}

static bool fabric_reduces(const ppl_net *net, const ppl_group *g)
{
    return g->nodes > 1 && net->topo->transport.sharp;
}

/* straight to a peer on another rail needs a tier that joins rails (never on a
 * rail-only network, Wang et al. 2023), unless the group is one node */
static bool rails_joined(const ppl_net *net, const ppl_group *g)
{
    return g->nodes <= 1 || (!net->topo->rail_only && net->cross_rail_tier < net->topo->ntiers);
}

static void cost_ring(const ppl_net *net, ppl_collective_op op, const ppl_group *g, double S,
                      ppl_coll *out)
{
    ring(net, op, g, S, out);
}

static void cost_tree(const ppl_net *net, ppl_collective_op op, const ppl_group *g, double S,
                      ppl_coll *out)
{
    (void)op;
    tree(net, g, S, out);
}

static void cost_hierarchical(const ppl_net *net, ppl_collective_op op, const ppl_group *g,
                              double S, ppl_coll *out)
{
    (void)op;
    hierarchical(net, g, S, out);
}

static void cost_nvls(const ppl_net *net, ppl_collective_op op, const ppl_group *g, double S,
                      ppl_coll *out)
{
    (void)op;
    nvls(net, g, S, out);
}

static void cost_sharp(const ppl_net *net, ppl_collective_op op, const ppl_group *g, double S,
                       ppl_coll *out)
{
    (void)op;
    sharp(net, g, S, out);
}

static void cost_pxn(const ppl_net *net, ppl_collective_op op, const ppl_group *g, double S,
                     ppl_coll *out)
{
    (void)op;
    alltoall(net, g, S, -1.0, false, out);
}

static void cost_direct(const ppl_net *net, ppl_collective_op op, const ppl_group *g, double S,
                        ppl_coll *out)
{
    (void)op;
    alltoall(net, g, S, -1.0, true, out);
}

static void cost_p2p(const ppl_net *net, ppl_collective_op op, const ppl_group *g, double S,
                     ppl_coll *out)
{
    (void)op;
    sendrecv(net, g, S, out);
}

#define OP(o) (1u << PPL_OP_##o)

/*
 * One row per algorithm, as NCCL's tuning.cc keeps one column per algorithm: the
 * operations it serves, whether AUTO weighs it (NCCL's tuner never picks a
 * hierarchical all-reduce of our making), when it applies to a group, its cost.
 * AUTO is the fastest of the rows that serve the operation and apply, the
 * earlier row on a tie (ring before tree, rail-local PXN before direct).
 */
static const struct algo_row {
    ppl_algo algo;
    unsigned ops;
    bool in_auto;
    bool (*applies)(const ppl_net *net, const ppl_group *g);
    void (*cost)(const ppl_net *net, ppl_collective_op op, const ppl_group *g, double S,
                 ppl_coll *out);
} algos[] = {
    {PPL_ALGO_RING, OP(ALLREDUCE) | OP(ALLGATHER) | OP(REDUCESCATTER), true, always, cost_ring},
    {PPL_ALGO_TREE, OP(ALLREDUCE), true, across_nodes, cost_tree},
    {PPL_ALGO_HIERARCHICAL, OP(ALLREDUCE), false, hierarchy, cost_hierarchical},
    {PPL_ALGO_NVLS, OP(ALLREDUCE), true, nvswitch_reduces, cost_nvls},
    {PPL_ALGO_SHARP, OP(ALLREDUCE), true, fabric_reduces, cost_sharp},
    {PPL_ALGO_PXN, OP(ALLTOALL), true, always, cost_pxn},
    {PPL_ALGO_DIRECT, OP(ALLTOALL), true, rails_joined, cost_direct},
    {PPL_ALGO_P2P, OP(SENDRECV), true, always, cost_p2p},
};

bool ppl_collective(const ppl_net *net, ppl_collective_op op, const ppl_group *g, double bytes,
                    ppl_algo algo, ppl_coll *out)
{
    memset(out, 0, sizeof *out);
    if (g->n <= 1 || bytes <= 0.0) {
        out->algo = algo == PPL_ALGO_AUTO ? PPL_ALGO_RING : algo;
        return true;
    }
    bool found = false;
    for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++) {
        const struct algo_row *r = &algos[i];
        if (!(r->ops & (1u << op)) || (algo == PPL_ALGO_AUTO ? !r->in_auto : r->algo != algo) ||
            !r->applies(net, g))
            continue;
        ppl_coll c;
        r->cost(net, op, g, bytes, &c);
        if (!found || c.time_s < out->time_s) {
            *out = c;
            found = true;
        }
    }
    return found;
}

double ppl_collective_count(const ppl_net *net, ppl_collective_op op, const ppl_group *g,
                            double bytes, double count, ppl_traffic *traffic)
{
    ppl_coll r;
    if (g->n <= 1 || bytes <= 0.0 || count <= 0.0)
        return 0.0;
    ppl_collective(net, op, g, bytes, PPL_ALGO_AUTO, &r);
    if (traffic) {
        traffic->nvlink += count * r.nvlink_bytes;
        traffic->rail += count * r.rail_bytes;
        traffic->spine += count * r.spine_bytes;
    }
    return count * r.time_s;
}

double ppl_dispatch_servers(double servers, double top_k, int64_t node_limit)
{
    if (servers <= 1.0)
        return 1.0;
    /* k uniform picks among N servers touch N (1 - (1 - 1/N)^k) of them on average */
    double d = servers * (1.0 - pow(1.0 - 1.0 / servers, top_k));
    if (node_limit > 0 && d > (double)node_limit)
        d = (double)node_limit;
    return d;
}

void ppl_ep_dispatch(const ppl_net *net, const ppl_group *g, double copy_bytes,
                     const ppl_dispatch *d, ppl_coll *out)
{
    memset(out, 0, sizeof *out);
    if (g->n <= 1 || copy_bytes <= 0.0)
        return;
    const double n = (double)g->n, m = (double)g->m, k = d->top_k;
    if (!d->dedup || g->nodes <= 1) {
        /* every copy its own message: an even all-to-all of k copies */
        ppl_collective(net, PPL_OP_ALLTOALL, g, copy_bytes * k * d->skew, PPL_ALGO_AUTO, out);
        return;
    }
    /* one copy per remote server the token's experts sit on, forwarded over NVLink
     * inside it; every copy crosses NVLink once to reach its expert's GPU */
    double servers = (double)g->nodes;
    double remote = ppl_dispatch_servers(servers, k, d->node_limit) * (servers - 1.0) / servers;
    double S = copy_bytes * remote * d->skew * n / (n - m);
    double local = copy_bytes * k * d->skew * (m - 1.0) / m;
    ppl_coll direct;
    alltoall(net, g, S, local, false, out);
    if (rails_joined(net, g)) {
        alltoall(net, g, S, local, true, &direct);
        if (direct.time_s < out->time_s)
            *out = direct;
    }
}
