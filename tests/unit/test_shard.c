/*
 * test_shard.c - hierarchical sharding and optimizer offload against hand-derived
 * figures (shard.c, offload.c, and their terms in memory.c and schedule.c).
 */
#include "testutil.h"

#include "cost/offload.h"
#include "cost/estimate.h"
#include "cost/shard.h"

/* Llama 3 70B on 32 GPUs of a DGX H100 SuperPOD: tp 1, pp 1, dp 32, one sequence
 * a GPU, ZeRO-3, full recomputation, flash attention; `group` data-parallel ranks
 * per sharding group (0: every rank), `offload` of the optimizer on the host. */
static ppl_config llama70b_dp32(const ppl_model *m, const ppl_topology *t, int64_t group,
                                double offload)
{
    ppl_pins p;
    ppl_pins_init(&p);
    p.gpus = 32;
    p.tp = p.pp = p.mbs = 1;
    p.global_batch = 32;
    p.zero = 3;
    p.recompute = PPL_RECOMPUTE_FULL;
    p.flash_attention = 1;
    p.shard_group = group;
    p.offload_optimizer = offload;
    ppl_config c;
    ppl_error err;
    if (ppl_config_from_pins(&p, m, t, &c, &err) != PPL_OK)
        fail_msg("%s: %s", err.key, err.message);
    return c;
}

/*
 * Memory of the HSDP plan.  Llama 3 70B holds P = 70.55e9 parameters: 80 layers of
 * attention 2h^2 + 2h x 8 x 128 = 151.0e6 (h = 8192, 8 key/value heads of 128) and
 * SwiGLU MLP 3 x 8192 x 28672 = 704.6e6, 68.45e9 in all, plus an untied embedding
 * and output layer of 128256 x 8192 = 1.05e9 each; with tp = pp = 1 every GPU holds
 * all of them before sharding.  ZeRO-3 over all 32 ranks: weights 2P/32,
 * gradients 2P/32 (nemo-2025 keeps bf16 gradients), Adam 12P/32.  In groups of 8
 * (one DGX server: 8 ranks of tp 1 on one NVLink domain) the same states divide by
 * 8 instead: 2P/8 = 17.6 GB of weights, 17.6 GB of gradients, 105.8 GB of
 * optimizer state; the 4 groups hold replicas.
 */
static void test_hsdp_memory(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_config full = llama70b_dp32(&m, &t, PPL_UNSET, 0.0);
    ppl_config hsdp = llama70b_dp32(&m, &t, 8, 0.0);
    assert_int_equal(ppl_config_shard_group(&hsdp), 8);
    assert_int_equal(ppl_config_shard_replicas(&hsdp), 4);
    assert_int_equal(ppl_config_shard_replicas(&full), 1);
    ppl_memory a, b;
    ppl_memory_worst(&m, &t, &full, &ctx.memory, &a);
    ppl_memory_worst(&m, &t, &hsdp, &ctx.memory, &b);
    const double P = a.params;
    assert_close(P, 70.55e9, 0.001);
    assert_close(a.weights, 2.0 * P / 32.0, 1e-12);
    assert_close(a.gradients, 2.0 * P / 32.0, 1e-12);
    assert_close(a.optimizer, 12.0 * P / 32.0, 1e-12);
    assert_close(b.weights, 2.0 * P / 8.0, 1e-12);
    assert_close(b.gradients, 2.0 * P / 8.0, 1e-12);
    assert_close(b.optimizer, 12.0 * P / 8.0, 1e-12);
    assert_close(b.optimizer, 105.8e9, 0.001);
    /* 16P/8 - 16P/32 = 1.5P more model state a GPU: 105.8 GB; it no longer fits */
    assert_close(b.total - a.total, 1.5 * P, 1e-9);
    assert_true(a.fits);
    assert_false(b.fits);
}

/*
 * Traffic of the same plan, per GPU per step (one microbatch).  Ring collectives
 * over n ranks send (n-1)/n of the buffer per GPU (all-gather, reduce-scatter) and
 * 2(n-1)/n (all-reduce).  Inside the group of 8, over NVLink: the weights gathered
 * forward and backward, 2 x 2P bytes, and the bf16 gradients reduce-scattered, 2P:
 * 7/8 x 6P = 370.4 GB.  Across the 4 replicas, one GPU a server on the same rail
 * (so under one leaf): each GPU's gradient shard, 2P/8 bytes, all-reduced:
 * 2 x 3/4 x 2P/8 = 0.375P = 26.5 GB into the network, nothing above the leaf.
 * Sharded over all 32 ranks instead, the per-layer rings cross the 4 servers: of
 * the 31/32 x 6P = 5.81P each GPU sends, the 4 of 32 ring edges that leave a server
 * carry 1/8 into the network: 0.727P (51.3 GB), 1.94x the HSDP plan's.
 */
static void test_hsdp_traffic(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_config hsdp = llama70b_dp32(&m, &t, 8, 0.0), full = llama70b_dp32(&m, &t, PPL_UNSET, 0.0);
    ppl_estimate e, f;
    ppl_estimate_config(&ctx, &hsdp, &e);
    ppl_estimate_config(&ctx, &full, &f);
    const double P = e.memory.params;
    assert_close(e.traffic.nvlink, 7.0 / 8.0 * 6.0 * P, 1e-9);
    assert_close(e.traffic.rail, 0.375 * P, 1e-9);
    assert_close(e.traffic.spine, 0.0, 1e-12);
    assert_close(f.traffic.rail, 31.0 / 32.0 * 6.0 * P * 4.0 / 32.0, 1e-9);
    assert_close(f.traffic.nvlink, 31.0 / 32.0 * 6.0 * P * 28.0 / 32.0, 1e-9);
    /* the groups: 8 ranks one GPU apart inside a server's NVLink, 4 replicas a
     * server apart, each on its own server */
    ppl_layout l;
    ppl_layout_init(&ctx, &hsdp, &l);
    assert_int_equal(l.g_shard.n, 8);
    assert_int_equal(l.g_shard.tier, -1);
    assert_int_equal(l.g_replicas.n, 4);
    assert_int_equal(l.g_replicas.nodes, 4);
    /* without a group, the sharding group is the data-parallel group */
    ppl_layout_init(&ctx, &full, &l);
    assert_int_equal(l.g_shard.n, 32);
    assert_int_equal(l.g_replicas.n, 1);
}

/*
 * The host links (offload.c): PCIe 5.0 x16 on a DGX H100, 64 GB/s each way, and
 * 8 GPUs sharing 2 sockets x 8 channels of DDR5-4800 (2 x 307.2 GB/s): 76.8 GB/s a
 * GPU; NVLink-C2C on GH200, 450 GB/s each way, a Grace's 500 GB/s per GPU.  For 1e9
 * offloaded parameters with fp32 gradients: down 4e9 B, up 2e9 B; the CPU step
 * moves 30e9 B at half the memory bandwidth.
 *   PCIe 5.0: down 62.5 ms, up 31.25 ms, CPU 30e9 / 38.4e9 = 781.25 ms;
 *             pipelined max = 781.25 ms, in turn 875 ms
 *   C2C:      down 8.889 ms, up 4.444 ms, CPU 30e9 / 250e9 = 120 ms
 */
static void test_offload_time(void **state)
{
    (void)state;
    ppl_topology h = test_topology("dgx-h100-superpod"), g = test_topology("gh200-nvl256");
    ppl_host_figures pcie, c2c;
    ppl_gpu_host(&h.gpu, &pcie);
    ppl_gpu_host(&g.gpu, &c2c);
    assert_close(pcie.link_bps, 64e9, 1e-12);
    assert_close(pcie.memory_bps, 76.8e9, 1e-12);
    assert_close(c2c.link_bps, 450e9, 1e-12);
    assert_close(c2c.memory_bps, 500e9, 1e-12);
    ppl_offload_time a, b;
    ppl_offload_time_of(1e9, 4.0, 2.0, &pcie, true, &a);
    assert_close(a.down_s, 0.0625, 1e-12);
    assert_close(a.up_s, 0.03125, 1e-12);
    assert_close(a.cpu_s, 0.78125, 1e-12);
    assert_close(a.total_s, 0.78125, 1e-12);
    ppl_offload_time_of(1e9, 4.0, 2.0, &pcie, false, &a);
    assert_close(a.total_s, 0.875, 1e-12);
    ppl_offload_time_of(1e9, 4.0, 2.0, &c2c, true, &b);
    assert_close(b.down_s, 4e9 / 450e9, 1e-12);
    assert_close(b.up_s, 2e9 / 450e9, 1e-12);
    assert_close(b.cpu_s, 0.12, 1e-12);
    /* the A100's PCIe 4.0 and the GB200's shared C2C; a topology's own figure wins */
    ppl_gpu gpu;
    memset(&gpu, 0, sizeof gpu);
    ppl_gpu_set_name(&gpu, "A100-SXM4-80GB");
    ppl_gpu_host(&gpu, &pcie);
    assert_close(pcie.link_bps, 32e9, 1e-12);
    ppl_gpu_set_name(&gpu, "B200-GB200-NVL72-186GB");
    ppl_gpu_host(&gpu, &pcie);
    assert_close(pcie.link_bps, 225e9, 1e-12);
    gpu.host_link_bps = 100e9;
    ppl_gpu_host(&gpu, &pcie);
    assert_close(pcie.link_bps, 100e9, 1e-12);
}

/*
 * The HSDP plan with the optimizer offloaded, on a DGX H100 and on GH200.  Each GPU
 * holds the group's shard, P/8 = 8.82e9 parameters, and steps it on the host:
 * bf16 gradients down and bf16 parameters up, 2P/8 = 17.6 GB each way, and 30 B a
 * parameter through host memory.
 *   DGX H100 (PCIe 5.0): 17.6 GB / 64 GB/s = 0.276 s each way; CPU 8.82e9 x 30 /
 *     38.4e9 = 6.89 s: the step's optimizer time, the copies pipelined under it
 *   GH200 (C2C): 17.6 GB / 450 GB/s = 39 ms each way; CPU 8.82e9 x 30 / 250e9 =
 *     1.06 s
 * On the GPU: no optimizer state; 12P/8 and the gradient copy, 2P/8, on the host
 * (123.5 GB, under the 256 GB a DGX H100 GPU's share of 2 TB and Grace's 480 GB).
 */
static void test_offload_plan(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_topology h = test_topology("dgx-h100-superpod"), g = test_topology("gh200-nvl256");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &h, PPL_STACK_NEMO_2025);
    ppl_config c = llama70b_dp32(&m, &h, 8, 1.0);
    ppl_estimate e;
    ppl_estimate_config(&ctx, &c, &e);
    const double P = e.memory.params, shard = P / 8.0;
    assert_close(e.memory.optimizer, 0.0, 1e-12);
    assert_close(e.memory.host, 14.0 * shard, 1e-12);
    assert_true(e.memory.fits);
    assert_close(e.time.optimizer, shard * 30.0 / (76.8e9 * 0.5), 1e-12);
    assert_close(e.time.optimizer, 6.89, 0.002);
    ppl_host_figures link;
    ppl_offload_time t;
    ppl_gpu_host(&h.gpu, &link);
    ppl_offload_time_of(shard, 2.0, 2.0, &link, true, &t);
    assert_close(t.down_s, 2.0 * shard / 64e9, 1e-12);
    assert_close(t.down_s, 0.276, 0.002);

    ppl_eval_ctx gctx;
    ppl_eval_ctx_init(&gctx, &m, &g, PPL_STACK_NEMO_2025);
    ppl_config gc = llama70b_dp32(&m, &g, 8, 1.0);
    ppl_estimate ge;
    ppl_estimate_config(&gctx, &gc, &ge);
    assert_close(ge.time.optimizer, shard * 30.0 / 250e9, 1e-12);
    ppl_gpu_host(&g.gpu, &link);
    ppl_offload_time_of(shard, 2.0, 2.0, &link, true, &t);
    assert_close(t.up_s, 0.0392, 0.002);
    /* half offloaded: the GPU steps its half (HBM) while the CPU steps the rest */
    c.offload_optimizer = 0.5;
    ppl_estimate_config(&ctx, &c, &e);
    assert_close(e.memory.optimizer, 6.0 * shard, 1e-12);
    assert_close(e.time.optimizer, 0.5 * shard * 30.0 / (76.8e9 * 0.5), 1e-12);
}

/* The groups the search tries: every rank first, then the ranks filling a server
 * (8 GPUs / (tp x cp)) or an NVLink domain larger than a server (GH200's 256). */
static void test_shard_choices(void **state)
{
    (void)state;
    ppl_topology h = test_topology("dgx-h100-superpod"), g = test_topology("gh200-nvl256");
    ppl_config c;
    memset(&c, 0, sizeof c);
    c.tp = 1;
    c.cp = 1;
    c.dp = 32;
    int64_t v[PPL_SHARD_CHOICES];
    assert_int_equal(ppl_shard_group_choices(&h, &c, v), 2);
    assert_int_equal(v[0], 32);
    assert_int_equal(v[1], 8);
    c.tp = 2;
    assert_int_equal(ppl_shard_group_choices(&h, &c, v), 2);
    assert_int_equal(v[1], 4);
    c.tp = 8; /* a server is one rank's worth: no group of 2 or more */
    assert_int_equal(ppl_shard_group_choices(&h, &c, v), 1);
    c.tp = 1;
    c.dp = 512;
    assert_int_equal(ppl_shard_group_choices(&g, &c, v), 3);
    assert_int_equal(v[1], 8);
    assert_int_equal(v[2], 256);
    /* a pinned group alone; 0 is every rank; a stack without groups tries dp */
    assert_int_equal(ppl_shard_searched(&g, PPL_STACK_NEMO_2025, 16, &c, v), 1);
    assert_int_equal(v[0], 16);
    assert_int_equal(ppl_shard_searched(&g, PPL_STACK_NEMO_2025, 0, &c, v), 1);
    assert_int_equal(v[0], 512);
    assert_int_equal(ppl_shard_searched(&g, PPL_STACK_MEGATRON_LM_2021, PPL_UNSET, &c, v), 1);
}

/* The rules, each a usage error naming its knob (the command line says the flag). */
static void test_shard_rules(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_config c = llama70b_dp32(&m, &t, PPL_UNSET, 0.0);
    ppl_error err;
    c.shard_group = 3;
    assert_int_equal(ppl_config_check(&c, &m, &t, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "shard_group");
    assert_contains(err.message, "3 does not divide dp 32");
    c.shard_group = 8;
    c.zero = 0;
    assert_int_equal(ppl_config_check(&c, &m, &t, &err), PPL_EUSAGE);
    assert_contains(err.message, "needs ZeRO 1, 2 or 3");
    c.zero = 1;
    assert_int_equal(ppl_config_check(&c, &m, &t, &err), PPL_OK);
    c.offload_optimizer = 1.0;
    c.optimizer = PPL_OPTIMIZER_SGD;
    assert_int_equal(ppl_config_check(&c, &m, &t, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "offload_optimizer");
    c.optimizer = PPL_OPTIMIZER_ADAM;
    c.zero = 0;
    c.shard_group = 0;
    assert_int_equal(ppl_config_check(&c, &m, &t, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "offload_optimizer");
    /* Mixtral on 16 GPUs, tp 2, ep 8: edp = 2*1*8/(2*8) = 1 expert replica, which
     * 4 groups of 2 cannot split (parallel_state.py:1447-1450) */
    ppl_model x = test_model("mixtral-8x7b");
    ppl_pins p;
    ppl_pins_init(&p);
    p.gpus = 16;
    p.tp = 2;
    p.ep = 8;
    p.mbs = 1;
    p.global_batch = 16;
    p.zero = 1;
    p.sequence_parallel = 1;
    p.shard_group = 2;
    assert_int_equal(ppl_config_from_pins(&p, &x, &t, &c, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "shard_group");
    assert_contains(err.message, "experts' 1 data-parallel ranks");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hsdp_memory),   cmocka_unit_test(test_hsdp_traffic),
        cmocka_unit_test(test_offload_time),  cmocka_unit_test(test_offload_plan),
        cmocka_unit_test(test_shard_choices), cmocka_unit_test(test_shard_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
