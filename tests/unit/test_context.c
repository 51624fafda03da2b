/*
 * test_context.c - context parallelism's algorithms (src/cost/context.c): the ring's
 * overlap, the all-to-all's bytes and head rule, the hierarchical layout.
 *
 * Figures of dgx-h100-superpod as the network model derives them (net.c):
 * NVLink 18 links x 20.6 GB/s = 370.8 GB/s a GPU (NCCL's per-link figure), one
 * NVLink step 3.4 us (NCCL) + 1 us (the topology's latency) = 4.4 us; a NIC
 * 400 Gb/s x 0.96 goodput = 48 GB/s; a network step 14 us (NCCL) + 3 us to the
 * leaf; NCCL's base latency 8.4 us.
 */
#include "testutil.h"

#include "cost/estimate.h"

#define NVLINK_BPS 370.8e9
#define NVLINK_STEP_S (3.4e-6 + 1e-6)
#define NIC_BPS 48e9
#define LEAF_STEP_S (14e-6 + 3e-6)
#define BASE_S 8.4e-6

/* A one-layer GPT, multi-head attention, hidden h, a heads, s tokens. */
static ppl_model gpt(int64_t h, int64_t a, int64_t s)
{
    ppl_model m;
    memset(&m, 0, sizeof m);
    m.layers = 1;
    m.hidden = h;
    m.heads = a;
    m.kv_heads = a;
    m.ffn_hidden = 4 * h;
    m.vocab = 8;
    m.seq_len = s;
    m.tied_embeddings = true;
    return m;
}

static ppl_config cp_config(const ppl_model *m, int64_t tp, int64_t cp, ppl_cp_comm algo)
{
    ppl_config c = test_config(tp * cp, tp, 1, 1, 1, m);
    c.cp = cp;
    c.dp = 1;
    c.microbatches = 1;
    c.cp_comm = algo;
    return c;
}

/*
 * (a) The ring.  h = 4096, 32 heads, s = 8192, tp 1, cp 4 on the 4 first GPUs of
 * one server: each rank holds s/cp = 2048 tokens, its K/V chunk
 * 2 x 2048 x 4096 x 2 B = 33,554,432 B; one step over NVLink takes
 * 4.4 us + 33554432 / 370.8e9 = 4.4 + 90.4920 = 94.8920 us forward, and with the
 * gradients (twice the bytes) 4.4 + 180.9840 = 185.3840 us backward; 3 steps.
 * Attention of 400 us forward, 800 us backward: 100 and 200 us a step, more than
 * each transfer: nothing shows.  Of 200 and 400 us: 50 and 100 us a step, so
 * 3 x (94.8920 - 50) = 134.676 us forward and 3 x (185.3840 - 100) = 256.152 us
 * backward show, 390.828 us; with full recomputation the forward's twice,
 * 525.504 us.
 */
static void test_ring_overlap(void **state)
{
    (void)state;
    ppl_model m = gpt(4096, 32, 8192);
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_config c = cp_config(&m, 1, 4, PPL_CP_COMM_P2P);
    ppl_layout l;
    ppl_cp_cost cp;
    ppl_layout_init(&ctx, &c, &l);
    ppl_cp_cost_of(&ctx, &c, &l, &cp);
    assert_close(cp.ring_ranks, 4.0, 0);
    assert_close(cp.step_fwd_s, 94.8920e-6, 1e-5);
    assert_close(cp.step_bwd_s, 185.3840e-6, 1e-5);
    assert_close(cp.fwd_s, 3.0 * 94.8920e-6, 1e-5);
    assert_close(cp.open_fwd_s + cp.open_bwd_s, 0.0, 0);
    /* compute per chunk above the transfer: hidden */
    assert_close(ppl_cp_exposed(&cp, 400e-6, 800e-6, 1.0), 0.0, 0);
    /* below it: the difference, each of the 3 steps */
    assert_close(ppl_cp_exposed(&cp, 200e-6, 400e-6, 1.0), 390.828e-6, 1e-5);
    assert_close(ppl_cp_exposed(&cp, 200e-6, 400e-6, 2.0), 525.504e-6, 1e-5);
    /* the step itself: 3 transfers of 10 us under 4 us of compute each */
    assert_close(ppl_cp_ring_exposed(4.0, 10e-6, 4e-6), 18e-6, 1e-12);
    assert_close(ppl_cp_ring_exposed(4.0, 10e-6, 12e-6), 0.0, 0);
}

/*
 * (b) All-to-all bytes.  Llama 3 70B (h 8192, 64 heads of 128, 8 key/value
 * heads), s = 8192, tp 2, cp 4, b = 1: T = 8192/4 = 2048 tokens a rank; a TP rank
 * holds q = 64 x 128 / 2 = 4096 query columns and kv = 8/2 x 128 = 512 key/value
 * columns.  Forward Q, K, V and the output: 2048 x (2 x 4096 + 2 x 512) x 2 B =
 * 37,748,736 B; backward the output, its gradient, dQ, dK, dV: 2048 x
 * (3 x 4096 + 2 x 512) x 2 B = 54,525,952 B.  The 8 GPUs are one server: each
 * all-to-all of S bytes sends 3/4 of it over NVLink after 8.4 + 4.4 us, so
 * forward 2 x (12.8 us + 0.75 x 16,777,216 / 370.8e9) + 2 x (12.8 us + 0.75 x
 * 2,097,152 / 370.8e9) = 2 x 46.7345 + 2 x 17.0418 = 127.553 us, none hidden.
 */
static void test_a2a_bytes(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_error err;
    assert_int_equal(ppl_model_set_seq_len(&m, 8192, &err), PPL_OK);
    ppl_config c = cp_config(&m, 2, 4, PPL_CP_COMM_A2A);
    double fwd, bwd;
    ppl_cp_a2a_bytes(&m, &c, &fwd, &bwd);
    assert_close(fwd, 37748736.0, 1e-12);
    assert_close(bwd, 54525952.0, 1e-12);
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_layout l;
    ppl_cp_cost cp;
    ppl_layout_init(&ctx, &c, &l);
    ppl_cp_cost_of(&ctx, &c, &l, &cp);
    double q = BASE_S + NVLINK_STEP_S + 0.75 * 16777216.0 / NVLINK_BPS;
    double kv = BASE_S + NVLINK_STEP_S + 0.75 * 2097152.0 / NVLINK_BPS;
    assert_close(cp.open_fwd_s, 2.0 * q + 2.0 * kv, 1e-9);
    assert_close(cp.open_fwd_s, 127.553e-6, 1e-5);
    assert_close(cp.open_bwd_s, 3.0 * q + 2.0 * kv, 1e-9);
    assert_close(cp.ring_ranks, 0.0, 0);
    /* nothing of it hides under attention */
    assert_close(ppl_cp_exposed(&cp, 1.0, 1.0, 1.0), cp.fwd_s + cp.bwd_s, 1e-12);
    /* a ring and an all-gather move no all-to-all bytes */
    c.cp_comm = PPL_CP_COMM_P2P;
    ppl_cp_a2a_bytes(&m, &c, &fwd, &bwd);
    assert_close(fwd + bwd, 0.0, 0);
}

/*
 * (c) Transformer Engine splits each TP rank's heads over the all-to-all group.
 * Llama 3 70B on 64 GPUs: tp 8 leaves each rank 64/8 = 8 query heads and
 * 8/8 = 1 key/value head, which cp 2 cannot split: a usage error naming
 * cp_comm.  tp 2 leaves 32 and 4, which cp 4 splits; cp 8 does not (4 key/value
 * heads), but a ring over the same 8 does.
 */
static void test_a2a_head_rule(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_pins p;
    ppl_config c;
    ppl_error err;
    ppl_pins_init(&p);
    p.gpus = 64;
    p.tp = 8;
    p.cp = 2;
    p.mbs = 1;
    p.global_batch = 64;
    p.cp_comm = PPL_CP_COMM_A2A;
    assert_int_equal(ppl_config_from_pins(&p, &m, &t, &c, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "cp_comm");
    assert_contains(err.message, "1 key/value heads");
    p.tp = 2;
    p.cp = 4;
    assert_int_equal(ppl_config_from_pins(&p, &m, &t, &c, &err), PPL_OK);
    assert_int_equal(c.cp_comm, PPL_CP_COMM_A2A);
    p.cp = 8;
    assert_int_equal(ppl_config_from_pins(&p, &m, &t, &c, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "cp_comm");
    p.cp_comm = PPL_CP_COMM_P2P;
    assert_int_equal(ppl_config_from_pins(&p, &m, &t, &c, &err), PPL_OK);
    /* unpinned, cp > 1 runs Megatron's default, the ring */
    p.cp_comm = PPL_UNSET;
    assert_int_equal(ppl_config_from_pins(&p, &m, &t, &c, &err), PPL_OK);
    assert_int_equal(c.cp_comm, PPL_CP_COMM_P2P);
}

/*
 * (d) Hierarchical.  Llama 3 70B, tp 2, cp 8 on 16 GPUs of 8-GPU servers: the
 * all-to-all group is the largest divisor of 8 whose ranks (2 apart) fit a
 * server and split 4 key/value heads: 4 (2 x 4 = 8 GPUs); the ring joins the 2
 * servers.  The all-to-all stays on NVLink; the ring's one step per layer, K/V
 * of s/cp = 1024 tokens x 512 columns, 2 x 1024 x 512 x 2 B = 2,097,152 B,
 * crosses the NIC: 17 us + 2097152 / 48e9 = 17 + 43.6907 = 60.6907 us, and the
 * network carries that chunk forward and twice it backward, 6,291,456 B a layer,
 * nothing of the all-to-all.  With tp 8 no group of 2 CP ranks fits a server:
 * a2a+p2p is refused.  Heads alone do not decide: 32 heads at tp 2 leave 16 a
 * rank, which 8 CP ranks split, but 2 x 8 = 16 GPUs span two servers, so the
 * group is 4.
 */
static void test_hierarchical_on_nvlink(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_error err;
    assert_int_equal(ppl_model_set_seq_len(&m, 8192, &err), PPL_OK);
    ppl_pins p;
    ppl_config c;
    ppl_pins_init(&p);
    p.gpus = 16;
    p.tp = 2;
    p.cp = 8;
    p.mbs = 1;
    p.global_batch = 1;
    p.cp_comm = PPL_CP_COMM_A2A_P2P;
    assert_int_equal(ppl_config_from_pins(&p, &m, &t, &c, &err), PPL_OK);
    assert_int_equal(c.cp_a2a, 4);
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_layout l;
    ppl_layout_init(&ctx, &c, &l);
    assert_int_equal(l.g_cp_a2a.n, 4);
    assert_int_equal(l.g_cp_a2a.tier, -1); /* one NVLink domain */
    assert_int_equal(l.g_cp_ring.n, 2);
    assert_int_equal(l.g_cp_ring.nodes, 2);
    ppl_cp_cost cp;
    ppl_cp_cost_of(&ctx, &c, &l, &cp);
    assert_close(cp.ring_ranks, 2.0, 0);
    assert_close(cp.step_fwd_s, 60.6907e-6, 1e-5);
    ppl_traffic tr = {0, 0, 0};
    ppl_cp_traffic(&ctx, &c, &l, 1.0, &tr);
    assert_close(tr.rail, 6291456.0, 1e-12);
    assert_close(tr.spine, 0.0, 0);
    assert_true(tr.nvlink > 0.0);
    p.tp = 8;
    p.gpus = 64;
    assert_int_equal(ppl_config_from_pins(&p, &m, &t, &c, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "cp_comm");
    ppl_model mha = gpt(4096, 32, 8192);
    assert_true(ppl_cp_heads_split(&mha, 2, 8));
    assert_int_equal(ppl_cp_a2a_size(&mha, &t, 2, 8), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_overlap),
        cmocka_unit_test(test_a2a_bytes),
        cmocka_unit_test(test_a2a_head_rule),
        cmocka_unit_test(test_hierarchical_on_nvlink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
