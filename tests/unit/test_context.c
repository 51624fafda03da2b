/*
 * test_context.c - context parallelism's algorithms (src/cost/context.c): the ring's
 * overlap, the all-to-all's bytes and head rule, the hierarchical layout; the
 * search's cache of the exchanges (src/cost/microcache.c).
 *
 * Figures of dgx-h100-superpod as the network model derives them (net.c):
 * NVLink 18 links x 20.6 GB/s = 370.8 GB/s a GPU (NCCL's per-link figure), one
 * NVLink step 3.4 us (NCCL) + 1 us (the topology's latency) = 4.4 us; a NIC
 * 400 Gb/s x 0.96 goodput = 48 GB/s; a network step 14 us (NCCL) + 3 us to the
 * leaf; NCCL's base latency 8.4 us.
 */
#include "testutil.h"

#include "cost/estimate.h"
#include "cost/microcache.h"

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

/* The micro cache's CP exchanges are what ppl_cp_comms_costed gives, to the bit
 * (the costs of every algorithm tried, the ones kept, the algorithm c is left
 * at), first computed and then copied: GPT-3 on dgx-a100-superpod over 648
 * layouts, each walked twice, then over more keys than the table holds.  The pipeline and replica
 * counts vary while tp, cp and the microbatch stay: on this fabric they move the CP groups (the
 * worst copy over the stages, the job's span across its leaves), so a cache keyed on those fields
 * alone would return another layout's costs and fail here. */
static void test_micro_cache_cp(void **state)
{
    (void)state;
    ppl_model m = test_model("gpt3-175b");
    ppl_topology t = test_topology("dgx-a100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    static const int64_t tps[] = {1, 4, 8}, cps[] = {1, 2, 4, 16}, a2as[] = {0, 2},
                         mbss[] = {1, 4, 8}, pps[] = {1, 2, 8}, dps[] = {1, 4, 32};
    ppl_micro_cache *cache = ppl_micro_cache_new();
    assert_non_null(cache);
    size_t checked = 0, moved = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < 3 * 4 * 2 * 3 * 3 * 3; i++) {
            ppl_config c;
            memset(&c, 0, sizeof c);
            c.tp = tps[i % 3];
            c.cp = cps[(i / 3) % 4];
            c.cp_a2a = a2as[(i / 12) % 2];
            c.mbs = mbss[(i / 24) % 3];
            c.pp = pps[(i / 72) % 3];
            c.dp = dps[(i / 216) % 3];
            c.vp = c.ep = 1;
            c.gpus = c.tp * c.cp * c.pp * c.dp;
            c.global_batch = 1024;
            c.split = ppl_stage_split_default(m.layers, c.pp);
            ppl_layout l;
            ppl_layout_init(&ctx, &c, &l);
            const unsigned tried = ppl_cp_comms_tried(&ctx, -1, &c);
            const bool prune = (i / 7) % 2;
            ppl_config want_c = c, got_c = c;
            ppl_cp_cost want[PPL_CP_COMM_COUNT], got[PPL_CP_COMM_COUNT];
            memset(got, 0xa5, sizeof got);
            const unsigned kept = ppl_cp_comms_costed(&ctx, &want_c, &l, tried, prune, want);
            assert_int_equal(ppl_micro_cache_cp(cache, &ctx, &got_c, &l, tried, prune, got), kept);
            assert_int_equal(got_c.cp_comm, want_c.cp_comm);
            for (int x = 0; x < PPL_CP_COMM_COUNT; x++)
                if (tried & (1u << x))
                    assert_memory_equal(&got[x], &want[x], sizeof want[x]);
            /* the same fields on one pipeline stage and replica: other costs
             * where the groups move */
            if (c.cp > 1 && (c.pp > 1 || c.dp > 1)) {
                ppl_config one = c;
                one.pp = one.dp = 1;
                one.gpus = one.tp * one.cp;
                ppl_layout l1;
                ppl_layout_init(&ctx, &one, &l1);
                ppl_cp_cost alone[PPL_CP_COMM_COUNT];
                ppl_cp_comms_costed(&ctx, &one, &l1, tried, prune, alone);
                moved +=
                    memcmp(&alone[PPL_CP_COMM_P2P], &want[PPL_CP_COMM_P2P], sizeof alone[0]) != 0;
            }
            checked++;
        }
    /* more keys than the table's 512 slots (the microbatch size alone moves them):
     * a full table hands positions' own slots over, and still returns each key's */
    for (int pass = 0; pass < 2; pass++)
        for (int64_t mbs = 1; mbs <= 700; mbs++) {
            ppl_config c;
            memset(&c, 0, sizeof c);
            c.tp = 8;
            c.cp = 4;
            c.mbs = mbs;
            c.pp = c.vp = c.ep = 1;
            c.dp = 32;
            c.gpus = c.tp * c.cp * c.dp;
            c.global_batch = 1024;
            c.split = ppl_stage_split_default(m.layers, 1);
            ppl_layout l;
            ppl_layout_init(&ctx, &c, &l);
            const unsigned tried = ppl_cp_comms_tried(&ctx, -1, &c);
            ppl_config want_c = c, got_c = c;
            ppl_cp_cost want[PPL_CP_COMM_COUNT], got[PPL_CP_COMM_COUNT];
            const unsigned kept = ppl_cp_comms_costed(&ctx, &want_c, &l, tried, true, want);
            assert_int_equal(ppl_micro_cache_cp(cache, &ctx, &got_c, &l, tried, true, got), kept);
            for (int x = 0; x < PPL_CP_COMM_COUNT; x++)
                if (tried & (1u << x))
                    assert_memory_equal(&got[x], &want[x], sizeof want[x]);
            checked++;
        }
    ppl_micro_cache_free(cache);
    assert_int_equal(checked, 2 * 648 + 2 * 700);
    assert_true(moved > 0); /* the groups do move the costs */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_overlap),   cmocka_unit_test(test_a2a_bytes),
        cmocka_unit_test(test_a2a_head_rule),  cmocka_unit_test(test_hierarchical_on_nvlink),
        cmocka_unit_test(test_micro_cache_cp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
