/*
 * test_comm.c - collectives on the topology against hand derivations and
 * measured NCCL figures.
 */
#include <math.h>
#include <stdint.h>
#include "testutil.h"

#include <jansson.h>

#include "hardware/comm.h"

static double time_of(const ppl_topology *t, ppl_collective_op op, int64_t servers, int64_t per,
                      double bytes, ppl_algo algo)
{
    ppl_net net;
    ppl_group g;
    ppl_coll r;
    ppl_net_init(&net, t);
    ppl_group_servers(&net, servers, per, &g);
    assert_true(ppl_collective(&net, op, &g, bytes, algo, &r));
    return r.time_s;
}

/* nccl-tests' bus bandwidth of the same collective (the group is servers x per GPUs) */
static double busbw(const ppl_topology *t, ppl_collective_op op, int64_t servers, int64_t per,
                    double bytes, ppl_algo algo)
{
    return bytes / time_of(t, op, servers, per, bytes, algo) * ppl_busbw_factor(op, servers * per);
}

/*
 * Ring all-reduce of 1 GiB among 8 servers, one GPU each, all on rail 0 under one
 * leaf (DGX H100 SuperPOD, SU of 32): n = N = 8.
 *   bandwidth: a 400 Gb/s NIC per GPU = 50 GB/s x 0.96 goodput = 48 GB/s
 *   latency: NCCL base 8.4 us + 2(n-1) = 14 network steps of (14 us NCCL + 2 us NIC
 *            + 1 us leaf) = 8.4 + 14 x 17 = 246.4 us
 *   bytes: each rank sends 2(n-1)/n x S = 1.75 GiB -> 1.75 x 2^30 / 48e9 = 39.146 ms
 */
static void test_ring_one_rail(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-h100-superpod");
    double expected = 246.4e-6 + 1.75 * 1073741824.0 / 48e9;
    assert_close(time_of(&t, PPL_OP_ALLREDUCE, 8, 1, 1073741824.0, PPL_ALGO_RING), expected, 1e-12);
    /* all 8 bytes-per-step on the network, all under the leaf */
    ppl_net net;
    ppl_group g;
    ppl_coll r;
    ppl_net_init(&net, &t);
    ppl_group_servers(&net, 8, 1, &g);
    ppl_collective(&net, PPL_OP_ALLREDUCE, &g, 1073741824.0, PPL_ALGO_RING, &r);
    assert_close(r.rail_bytes, 1.75 * 1073741824.0, 1e-12);
    assert_close(r.spine_bytes, 0.0, 0);
    assert_close(r.nvlink_bytes, 0.0, 0);
}

/* Large-message bus bandwidth against published nccl-tests runs (within 5%). */
static void test_measured_nccl(void **state)
{
    (void)state;
    ppl_topology a100 = test_topology("dgx-a100-superpod"),
                 h100 = test_topology("dgx-h100-superpod");
    double S = 8589934592.0;
    /* one 8xA100 server ~230 GB/s (nccl-tests #149) */
    assert_close(busbw(&a100, PPL_OP_ALLREDUCE, 1, 8, S, PPL_ALGO_AUTO), 230e9, 0.05);
    /* multi-node DGX A100, 8 x 200 Gb/s: ~192 GB/s (nccl #812) */
    assert_close(busbw(&a100, PPL_OP_ALLREDUCE, 16, 8, S, PPL_ALGO_RING), 192e9, 0.05);
    /* one 8xH100 server, ring: ~370 GB/s (nccl-tests #212) */
    assert_close(busbw(&h100, PPL_OP_ALLREDUCE, 1, 8, S, PPL_ALGO_RING), 370e9, 0.05);
    /* one 400 Gb/s ConnectX-7 rail: 46-49 GB/s (nccl-tests #290) */
    double rail = busbw(&h100, PPL_OP_ALLREDUCE, 8, 1, S, PPL_ALGO_RING);
    assert_true(rail >= 46e9 && rail <= 49e9);
}

/*
 * In-switch reduction, where the topology says the switches have it.
 * NVLS on one 8 x H100 server, 8 GiB: NCCL's effective NVLink bandwidth 450 x
 * 20.6/25 = 370.8 GB/s, x nvlsEfficiency 0.85 x 15/16 channels (tuning.cc,
 * nvls.cc) = 295.48 GB/s, each GPU's buffer up once and the result down once:
 * t = 25 us + 8,589,934,592 / 295.48e9 = 29.096 ms, busbw = S/t x 2 x 7/8 =
 * 516.6 GB/s, within 10% of nccl-tests #212's ~480 (the ring: ~370).
 * SHARP across 16 of those servers under one leaf: the NVSwitch phase is still
 * 29.07 ms of transfer; each GPU's 1/8 shard (1.0737 GB) rides its 400 Gb/s
 * rail at 48 GB/s in 22.37 ms; pipelined, the slower counts: 29.07 ms, plus 25 us
 * (NVLS) + 31 us (CollNet) + 3 us (NIC 2 + leaf 1) of latency.
 */
static void test_in_switch_reduction(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-h100-superpod");
    double S = 8589934592.0, nvls_bw = 450e9 * 20.6 / 25.0 * 0.85 * 15.0 / 16.0;
    /* without the topology's say-so, no in-switch reduction (the catalogue DGX
     * H100 gives it: taken away here) */
    t.nvlink.sharp = false;
    ppl_net net;
    ppl_group g;
    ppl_coll r;
    ppl_net_init(&net, &t);
    ppl_group_servers(&net, 1, 8, &g);
    assert_false(ppl_collective(&net, PPL_OP_ALLREDUCE, &g, S, PPL_ALGO_NVLS, &r));
    ppl_collective(&net, PPL_OP_ALLREDUCE, &g, S, PPL_ALGO_AUTO, &r);
    assert_int_equal(r.algo, PPL_ALGO_RING);

    t.nvlink.sharp = true;
    assert_close(time_of(&t, PPL_OP_ALLREDUCE, 1, 8, S, PPL_ALGO_NVLS), 25e-6 + S / nvls_bw, 1e-12);
    assert_close(busbw(&t, PPL_OP_ALLREDUCE, 1, 8, S, PPL_ALGO_AUTO), 516.6e9, 1e-3);
    assert_close(busbw(&t, PPL_OP_ALLREDUCE, 1, 8, S, PPL_ALGO_AUTO), 480e9, 0.10);
    ppl_net_init(&net, &t);
    ppl_group_servers(&net, 16, 8, &g);
    assert_false(ppl_collective(&net, PPL_OP_ALLREDUCE, &g, S, PPL_ALGO_NVLS, &r));
    assert_false(ppl_collective(&net, PPL_OP_ALLREDUCE, &g, S, PPL_ALGO_SHARP, &r));

    t.transport.sharp = true;
    assert_close(time_of(&t, PPL_OP_ALLREDUCE, 16, 8, S, PPL_ALGO_SHARP),
                 (25e-6 + 31e-6 + 3e-6) + S / nvls_bw, 1e-9);
    ppl_net_init(&net, &t);
    ppl_group_servers(&net, 16, 8, &g);
    ppl_collective(&net, PPL_OP_ALLREDUCE, &g, S, PPL_ALGO_SHARP, &r);
    assert_close(r.rail_bytes + r.spine_bytes, S / 8.0, 1e-12);
    ppl_collective(&net, PPL_OP_ALLREDUCE, &g, S, PPL_ALGO_AUTO, &r);
    assert_int_equal(r.algo, PPL_ALGO_SHARP);
    /* an A100's NVSwitch does not reduce */
    ppl_gpu gpu = {0};
    ppl_gpu_set_name(&gpu, "A100-SXM4-80GB");
    assert_close(ppl_gpu_nvls_efficiency(&gpu), 0.0, 0);
    ppl_gpu_set_name(&gpu, "B200");
    assert_close(ppl_gpu_nvls_efficiency(&gpu), 0.74 * 31.0 / 32.0, 1e-12);
    /* a GPU parplan does not know: no NVLink SHARP is assumed */
    ppl_gpu_set_name(&gpu, "Custom-X1");
    assert_close(ppl_gpu_nvls_efficiency(&gpu), 0.0, 0);
}

/*
 * An 8 x MI300X server: each GPU has 7 Infinity Fabric links of 64 GB/s per
 * direction (448 GB/s in all), about 48 usable (75%, AMD ROCm blog 2025-03-02).
 * Ring all-reduce of 8 GiB over all 8: RCCL's rings use every link, 7 x 48 =
 * 336 GB/s: 8.4 us + 14 steps x (3.4 + 1) us + 1.75 x 8,589,934,592 / 336e9 =
 * 44.800 ms; busbw 336 GB/s.  Four of the eight (a TP group of 4) reach only the
 * 3 links between them: 144 GB/s; a send to one peer rides one link: 48 GB/s.
 * A switch would give each of these the whole 336.
 */
static void test_mesh(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_gpu_set_name(&t.gpu, "MI300X");
    t.nvlink.bandwidth_bps = 448e9;
    t.nvlink.mesh = true;
    double S = 8589934592.0;
    double expected = 8.4e-6 + 14.0 * 4.4e-6 + 1.75 * S / 336e9;
    assert_close(time_of(&t, PPL_OP_ALLREDUCE, 1, 8, S, PPL_ALGO_RING), expected, 1e-9);
    assert_close(busbw(&t, PPL_OP_ALLREDUCE, 1, 4, S, PPL_ALGO_RING), 144e9, 1e-3);
    ppl_net net;
    ppl_group g;
    ppl_coll r;
    ppl_net_init(&net, &t);
    ppl_group_servers(&net, 1, 2, &g);
    ppl_collective(&net, PPL_OP_SENDRECV, &g, S, PPL_ALGO_AUTO, &r);
    assert_close(r.time_s, 4.4e-6 + S / 48e9, 1e-9);
    /* through a switch of the same 448 GB/s the pair gets all of it */
    t.nvlink.mesh = false;
    ppl_net_init(&net, &t);
    ppl_collective(&net, PPL_OP_SENDRECV, &g, S, PPL_ALGO_AUTO, &r);
    assert_close(r.time_s, 4.4e-6 + S / 336e9, 1e-9);
}

/* At 64 servers the tree's 2 log2(64) = 12 network steps beat the ring's 126 on
 * small messages; on large ones the ring's 2(n-1)/n beats the tree's 2/0.9. */
static void test_tree_vs_ring(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-a100-superpod");
    double small = 65536.0;
    assert_true(time_of(&t, PPL_OP_ALLREDUCE, 64, 8, small, PPL_ALGO_TREE) <
                time_of(&t, PPL_OP_ALLREDUCE, 64, 8, small, PPL_ALGO_RING));
    double large = 8589934592.0;
    assert_true(time_of(&t, PPL_OP_ALLREDUCE, 4, 8, large, PPL_ALGO_RING) <
                time_of(&t, PPL_OP_ALLREDUCE, 4, 8, large, PPL_ALGO_TREE));
    ppl_net net;
    ppl_group g;
    ppl_coll r;
    ppl_net_init(&net, &t);
    ppl_group_servers(&net, 64, 8, &g);
    ppl_collective(&net, PPL_OP_ALLREDUCE, &g, small, PPL_ALGO_AUTO, &r);
    assert_int_equal(r.algo, PPL_ALGO_TREE);
}

/*
 * Go-back-N under per-packet loss p keeps (1-p)/(1 + (W-1)p).  400 Gb/s x 10 us /
 * 4 KiB = 122.07 packets in flight, W = 123.07: at p = 1e-3, 0.999/1.122 = 0.890
 * (the reference sheet's "0.91" is W = 100: 0.999/1.099 = 0.909); at p = 1e-2,
 * 0.99/2.22 = 0.446.  Selective retransmission keeps 1 - p.
 */
static void test_loss(void **state)
{
    (void)state;
    assert_close(ppl_goodput_go_back_n(1e-3, 123.07), 0.890, 0.001);
    assert_close(ppl_goodput_go_back_n(1e-3, 100.0), 0.909, 0.001);
    assert_close(ppl_goodput_go_back_n(1e-2, 123.07), 0.446, 0.002);
    ppl_topology t = test_topology("meta-24k-roce");
    t.transport.loss_rate = 1e-3;
    ppl_net net;
    ppl_net_init(&net, &t);
    assert_close(net.packets_in_flight, 50e9 * 10e-6 / 4096.0 + 1.0, 1e-12);
    assert_close(net.transport_goodput, 0.890, 0.001);
    t.transport.retransmit = PPL_RETRANSMIT_SELECTIVE;
    ppl_net_init(&net, &t);
    assert_close(net.transport_goodput, 0.999, 1e-12);
    /* lossless: nothing lost, no timeouts */
    t.transport.loss_rate = 0;
    ppl_net_init(&net, &t);
    assert_close(net.transport_goodput, 1.0, 0);
    assert_close(net.tail_loss_s, 0.0, 0);
}

/* Expected maximum load of k flows on k links (balls into bins, exact). */
static void test_ecmp(void **state)
{
    (void)state;
    assert_close(ppl_ecmp_expected_max(8, 8), 2.60, 0.01);
    assert_close(ppl_ecmp_expected_max(16, 16), 3.08, 0.01);
    assert_close(ppl_ecmp_expected_max(32, 32), 3.53, 0.01);
    assert_close(ppl_ecmp_expected_max(64, 64), 3.96, 0.01);
    /* one flow: no collision; two flows on 32 links collide with probability 1/32 */
    assert_close(ppl_ecmp_expected_max(1, 32), 1.0, 1e-12);
    assert_close(ppl_ecmp_expected_max(2, 32), 1.0 + 1.0 / 32.0, 1e-9);
    /* k balls in 2 bins, the fuller holding max(i, k - i) of C(k, i) / 2^k ways:
     * 3 balls: (3 x 2 + 2 x 6) / 8 = 9/4; 4: (4 x 2 + 3 x 8 + 2 x 6) / 16 = 11/4 (the
     * series raised by Miller's recurrence, 4n >= k: net.c); 9: 2 (9 + 8 x 9 + 7 x
     * 36 + 6 x 84 + 5 x 126) / 512 = 1467/256 (raised by squaring, 4n < k) */
    assert_close(ppl_ecmp_expected_max(3, 2), 9.0 / 4.0, 1e-13);
    assert_close(ppl_ecmp_expected_max(4, 2), 11.0 / 4.0, 1e-13);
    assert_close(ppl_ecmp_expected_max(9, 2), 1467.0 / 256.0, 1e-13);
    /* either side of the switch between the two (4n = k), and 64 flows: the same
     * sum over every assignment of labelled balls to bins, counted exactly in
     * integers (bin by bin, the ways to hold r balls with none over j) */
    assert_close(ppl_ecmp_expected_max(16, 4), 6.1390144824981689, 1e-12);
    assert_close(ppl_ecmp_expected_max(17, 4), 6.4508811484556645, 1e-12);
    assert_close(ppl_ecmp_expected_max(64, 16), 7.8803832072225797, 1e-11);
    assert_close(ppl_ecmp_expected_max(64, 15), 8.1876755128010483, 1e-11);
}

/* A 1:4 spine (leaf uplinks at 4:1) slows all-to-all across leaf groups, but not a
 * ring on one rail: only its boundary edge climbs, 1/32 of a leaf's traffic. */
static void test_oversubscribed_spine(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_topology o = t;
    o.tiers[0].oversubscription = 4.0;
    double S = 1073741824.0;
    assert_true(time_of(&o, PPL_OP_ALLTOALL, 64, 8, S, PPL_ALGO_AUTO) >
                1.5 * time_of(&t, PPL_OP_ALLTOALL, 64, 8, S, PPL_ALGO_AUTO));
    assert_close(time_of(&o, PPL_OP_ALLREDUCE, 64, 1, S, PPL_ALGO_RING),
                 time_of(&t, PPL_OP_ALLREDUCE, 64, 1, S, PPL_ALGO_RING), 1e-12);

    /* the network model and the switch counts split ports alike, fractional ratios
     * too: radix 64 at 1.5:1 is floor(64 x 1.5 / 2.5) = 38 down, 26 up (38:26 <= 1.5) */
    o.tiers[0].oversubscription = 1.5;
    ppl_net net;
    ppl_net_init(&net, &o);
    int64_t down, up;
    ppl_switch_ports(64, 1.5, false, &down, &up);
    assert_int_equal(down, 38);
    assert_int_equal(up, 26);
    assert_int_equal(net.uplinks_per_switch[0], 26);
}

/* Rail-only (Wang et al. 2023): the hierarchical all-reduce never leaves its rail,
 * so it is unchanged; all-to-all must forward over NVLink and is never faster. */
static void test_rail_only(void **state)
{
    (void)state;
    ppl_topology t = test_topology("h100-64k"), r = test_topology("h100-64k-rail-only");
    for (int64_t servers = 2; servers <= 1024; servers *= 4)
        for (double S = 65536.0; S <= 4294967296.0; S *= 16.0) {
            assert_close(time_of(&r, PPL_OP_ALLREDUCE, servers, 8, S, PPL_ALGO_HIERARCHICAL),
                         time_of(&t, PPL_OP_ALLREDUCE, servers, 8, S, PPL_ALGO_HIERARCHICAL),
                         1e-12);
            assert_true(time_of(&r, PPL_OP_ALLTOALL, servers, 8, S, PPL_ALGO_AUTO) >=
                        time_of(&t, PPL_OP_ALLTOALL, servers, 8, S, PPL_ALGO_AUTO));
        }
    /* inside one SU the forwarding costs about a tenth (the paper: 8.2-11.2%) */
    double ratio = time_of(&r, PPL_OP_ALLTOALL, 4, 8, 1073741824.0, PPL_ALGO_AUTO) /
                   time_of(&t, PPL_OP_ALLTOALL, 4, 8, 1073741824.0, PPL_ALGO_AUTO);
    assert_true(ratio > 1.05 && ratio < 1.15);
    ppl_net net;
    ppl_net_init(&net, &r);
    ppl_group g;
    ppl_coll c;
    ppl_group_servers(&net, 4, 8, &g);
    assert_false(ppl_collective(&net, PPL_OP_ALLTOALL, &g, 1e6, PPL_ALGO_DIRECT, &c));
}

/* Megatron's rank order: a TP group of 8 fills one server; a DP group of stride 8
 * over 1024 GPUs takes one GPU (one rail) of each of 128 servers, 32 per leaf group,
 * and climbs to the spine; on NVL72 a TP group of 16 stays inside NVLink. */
static void test_placement(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_net net;
    ppl_group g;
    ppl_net_init(&net, &t);
    ppl_group_place(&net, 8, 1, 0, &g);
    assert_int_equal(g.tier, -1);
    assert_int_equal(g.m, 8);
    ppl_group_place(&net, 128, 8, 3, &g);
    assert_int_equal(g.m, 1);
    assert_int_equal(g.nodes, 128);
    assert_int_equal(g.tier, 1);
    assert_int_equal(g.members_in_tier[0], 32);
    /* pipeline neighbours 256 GPUs apart: stage 0 and 1 in different SUs */
    ppl_group_place(&net, 2, 256, 0, &g);
    assert_int_equal(g.tier, 1);
    ppl_topology nvl = test_topology("gb200-nvl72");
    ppl_net_init(&net, &nvl);
    ppl_group_place(&net, 16, 1, 0, &g);
    assert_int_equal(g.tier, -1);
    assert_int_equal(g.m, 16);
}

/* A job on NVLink domains of several servers takes the same whole-server share of
 * each (comm.h ppl_net_job_domain).  gb200-nvl72: 72-GPU domains of 4-GPU servers,
 * 18 servers a leaf.  256 GPUs: the largest multiple of 4 up to 72 dividing 256 is
 * 64, so 64 of each of 4 racks; an expert group of 32 ranks from rank 64 (ranks
 * 64-95) is then the first half of rack 1, inside NVLink, where filling racks in
 * order would put ranks 64-71 in rack 0 and 72-95 in rack 1, across the spine.
 * 8 or 72 GPUs fit one rack, 1152 = 16 x 72 fill racks; 100 GPUs, which only
 * shares below half a rack divide (20), fill them in order; a DGX's domain is its
 * server. */
static void test_job_domains(void **state)
{
    (void)state;
    ppl_topology nvl = test_topology("gb200-nvl72");
    ppl_net net;
    ppl_group g;
    ppl_net_init(&net, &nvl);
    assert_int_equal(ppl_net_job_domain(&net, 256), 64);
    assert_int_equal(ppl_net_job_domain(&net, 8), 72);
    assert_int_equal(ppl_net_job_domain(&net, 72), 72);
    assert_int_equal(ppl_net_job_domain(&net, 1152), 72);
    assert_int_equal(ppl_net_job_domain(&net, 100), 72);
    ppl_group_place_job(&net, 64, 32, 1, 64, &g);
    assert_int_equal(g.tier, -1);
    assert_int_equal(g.m, 32);
    ppl_group_place(&net, 32, 1, 64, &g);
    assert_int_equal(g.tier, 1); /* a leaf is a rack: the spine joins the two */
    assert_int_equal(g.m, 8);
    /* a data-parallel group of 4 ranks 64 apart: one GPU of each rack, which the
     * spine joins (8 racks under it), each rack its own leaf */
    ppl_group_place_job(&net, 64, 4, 64, 0, &g);
    assert_int_equal(g.m, 1);
    assert_int_equal(g.tier, 1);
    assert_int_equal(g.members_in_tier[0], 1);
    assert_int_equal(g.members_in_tier[1], 4);
    ppl_topology dgx = test_topology("dgx-h100-superpod");
    ppl_net_init(&net, &dgx);
    assert_int_equal(ppl_net_job_domain(&net, 1024), 8);
}

/* ppl_group_place_worst places only the copies that differ (a copy's figures read
 * its first rank modulo the blocks it meets, comm.c distinct_copies): the same
 * group as placing every copy and keeping the worst, on every catalogue topology,
 * whole and partial NVLink domains (GB200's 72), pipelines of 1 to 96 stages. */
static void test_place_worst_every_copy(void **state)
{
    (void)state;
    static const char *const topos[] = {"dgx-h100-superpod",  "h100-64k",      "gb200-nvl72",
                                        "deepseek-h800-2048", "meta-24k-roce", "gh200-nvl256",
                                        "h100-64k-rail-only"};
    uint64_t x = 12345;
    size_t checked = 0;
    for (size_t i = 0; i < sizeof topos / sizeof topos[0]; i++) {
        ppl_topology t = test_topology(topos[i]);
        ppl_net net;
        ppl_net_init(&net, &t);
        const int64_t total = t.servers * t.gpus_per_server;
        for (int k = 0; k < 3000; k++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            const int64_t pp = 1 + (int64_t)((x >> 33) % 96), tp = (int64_t)1 << ((x >> 20) % 4);
            const int64_t stage = total / pp / tp * tp; /* GPUs a stage, tp dividing it */
            if (stage < tp)
                continue;
            const int64_t dom = ppl_net_job_domain(&net, stage * pp);
            /* a tensor-parallel group, a data-parallel one across it, and the pipeline's */
            const int64_t groups[3][3] = {{tp, 1, 0}, {stage / tp, tp, 0}, {2, stage, 0}};
            for (int j = 0; j < 3; j++) {
                const int64_t n = groups[j][0], stride = groups[j][1];
                const int64_t copies = j == 2 ? pp - 1 : pp;
                if (n < 1 || copies < 1 || (j == 2 && pp < 2))
                    continue;
                ppl_group fast, slow, g;
                ppl_group_place_worst(&net, dom, n, stride, 0, copies, stage, &fast);
                ppl_group_place_job(&net, dom, n, stride, 0, &slow);
                for (int64_t c = 1; n > 1 && c < copies; c++) {
                    ppl_group_place_job(&net, dom, n, stride, c * stage, &g);
                    if (g.tier > slow.tier)
                        slow.tier = g.tier;
                    if (g.m < slow.m) {
                        slow.m = g.m;
                        slow.nodes = g.nodes;
                    }
                    for (int l = 0; l < t.ntiers; l++)
                        if (g.members_in_tier[l] < slow.members_in_tier[l])
                            slow.members_in_tier[l] = g.members_in_tier[l];
                }
                assert_int_equal(fast.tier, slow.tier);
                assert_int_equal(fast.m, slow.m);
                assert_int_equal(fast.nodes, slow.nodes);
                for (int l = 0; l < t.ntiers; l++)
                    assert_int_equal(fast.members_in_tier[l], slow.members_in_tier[l]);
                checked++;
            }
        }
    }
    assert_true(checked > 10000);
}

/* nccl-tests' figures: an all-gather of 8 GB over 8 ranks in 0.1 s has algbw
 * 8e9 / 0.1 = 80 GB/s and busbw 80 x 7/8 = 70 GB/s; an all-reduce's busbw factor
 * is 2(n-1)/n, 140 GB/s for the same time. */
static void test_coll_bandwidths(void **state)
{
    (void)state;
    ppl_coll r = {.time_s = 0.1};
    double alg, bus;
    ppl_coll_bandwidths(PPL_OP_ALLGATHER, 8, 8e9, &r, &alg, &bus);
    assert_true(fabs(alg - 80e9) < 1.0 && fabs(bus - 70e9) < 1.0);
    ppl_coll_bandwidths(PPL_OP_ALLREDUCE, 8, 8e9, &r, &alg, &bus);
    assert_true(fabs(bus - 140e9) < 1.0);
}

/* An expert-parallel all-to-all's bytes per GPU, by placement.  Each rank holds
 * S bytes, S/n for each of the n ranks (itself included).
 *   EP 8 inside one DGX: 7/8 S leaves over NVLink, nothing over the network.
 *   EP 16 over two DGX (8 + 8): 7/16 S to the 7 local peers over NVLink, 8/16 S
 *   to the 8 remote ones through the network.  Direct, each GPU sends the remote
 *   half through its own NIC; PXN first moves the 7/8 of it bound for other rails
 *   over NVLink to the GPU on the destination rail: NVLink carries 7/16 S +
 *   7/8 x 8/16 S = 14/16 S.  Either way the network carries S/2 a GPU. */
static void test_alltoall_bytes(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_net net;
    ppl_net_init(&net, &t);
    const double S = 64.0 * 1048576.0;
    ppl_group g;
    ppl_coll c;
    ppl_group_servers(&net, 1, 8, &g);
    assert_true(ppl_collective(&net, PPL_OP_ALLTOALL, &g, S, PPL_ALGO_AUTO, &c));
    assert_close(c.nvlink_bytes, S * 7.0 / 8.0, 1e-12);
    assert_true(c.rail_bytes + c.spine_bytes == 0.0);
    ppl_group_servers(&net, 2, 8, &g);
    assert_true(ppl_collective(&net, PPL_OP_ALLTOALL, &g, S, PPL_ALGO_DIRECT, &c));
    assert_close(c.nvlink_bytes, S * 7.0 / 16.0, 1e-12);
    assert_close(c.rail_bytes + c.spine_bytes, S / 2.0, 1e-12);
    assert_true(ppl_collective(&net, PPL_OP_ALLTOALL, &g, S, PPL_ALGO_PXN, &c));
    assert_close(c.nvlink_bytes, S * 14.0 / 16.0, 1e-12);
    assert_close(c.rail_bytes + c.spine_bytes, S / 2.0, 1e-12);
}

/*
 * An MoE dispatch over 64 GPUs on 8 servers (EP 64), 8 experts a token, C bytes a
 * copy.  Megatron's alltoall dispatcher sends every copy: 8 C, of which the 56
 * ranks on other servers get 56/64, 7 C over the network.  Deduplicated per
 * server (DeepEP), a token reaches 8 (1 - (7/8)^8) = 5.2511 servers on average,
 * 7/8 of them remote: 4.5947 C; limited to 4 servers (DeepSeek-V3), 4 x 7/8 =
 * 3.5 C.  Inside each server every copy crosses NVLink once: 8 C x 7/8 = 7 C
 * (direct algorithm, nothing forwarded across rails).  A routing skew of 1.5
 * scales the busiest rank's bytes by 1.5.
 */
static void test_ep_dispatch_bytes(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_net net;
    ppl_net_init(&net, &t);
    const double C = 1048576.0;
    ppl_group g;
    ppl_coll c;
    ppl_group_servers(&net, 8, 8, &g);
    ppl_dispatch plain = {8.0, 0, false, 1.0};
    ppl_ep_dispatch(&net, &g, C, &plain, &c);
    assert_close(c.rail_bytes + c.spine_bytes, 7.0 * C, 1e-12);
    assert_close(ppl_dispatch_servers(8.0, 8.0, 0), 8.0 * (1.0 - pow(7.0 / 8.0, 8.0)), 1e-12);
    assert_close(ppl_dispatch_servers(8.0, 8.0, 4), 4.0, 1e-12);
    assert_close(ppl_dispatch_servers(1.0, 8.0, 4), 1.0, 1e-12);
    ppl_dispatch dedup = {8.0, 0, true, 1.0};
    ppl_ep_dispatch(&net, &g, C, &dedup, &c);
    assert_close(c.rail_bytes + c.spine_bytes, 5.25113 * 7.0 / 8.0 * C, 1e-5);
    ppl_dispatch limited = {8.0, 4, true, 1.0};
    ppl_ep_dispatch(&net, &g, C, &limited, &c);
    assert_close(c.rail_bytes + c.spine_bytes, 3.5 * C, 1e-12);
    double t_limited = c.time_s;
    ppl_dispatch skewed = {8.0, 4, true, 1.5};
    ppl_ep_dispatch(&net, &g, C, &skewed, &c);
    assert_close(c.rail_bytes + c.spine_bytes, 1.5 * 3.5 * C, 1e-12);
    assert_true(c.time_s > t_limited);
    /* the NVLink part: 7 C directly, or more when PXN forwards across rails */
    assert_true(c.nvlink_bytes >= 1.5 * 7.0 * C * (1.0 - 1e-12));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_one_rail),
        cmocka_unit_test(test_measured_nccl),
        cmocka_unit_test(test_tree_vs_ring),
        cmocka_unit_test(test_loss),
        cmocka_unit_test(test_alltoall_bytes),
        cmocka_unit_test(test_ecmp),
        cmocka_unit_test(test_ep_dispatch_bytes),
        cmocka_unit_test(test_coll_bandwidths),
        cmocka_unit_test(test_oversubscribed_spine),
        cmocka_unit_test(test_rail_only),
        cmocka_unit_test(test_placement),
        cmocka_unit_test(test_job_domains),
        cmocka_unit_test(test_place_worst_every_copy),
        cmocka_unit_test(test_in_switch_reduction),
        cmocka_unit_test(test_mesh),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
