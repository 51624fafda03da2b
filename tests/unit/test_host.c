/*
 * test_host.c - the host's launches: the operations a layer launches, what CUDA
 * graphs leave of them, and the GPU's wait for them (compute.c
 * ppl_layer_host_ops, stage.c ppl_stage_eval).
 */
#include "testutil.h"

#include "cost/estimate.h"
#include "cost/rules.h"

/*
 * The host's launches (compute.c ppl_layer_host_ops, stage.c ppl_stage_eval).
 * Qwen3-30B-A3B in fp8 with ep 8, tp 1: a MoE layer's forward is the attention's
 * 7 operations and 2 quantisations, the MoE MLP's 19, 2 x 128/8 = 32 expert GEMMs
 * and 2 quantisations: 62; its backward twice that, 124 (delayed scaling: the
 * grouped layers quantise all 16 local experts in one kernel, Transformer Engine
 * 2.9 cast.cpp:117-143).  Under current (tensor-wise) scaling each local expert's
 * input to each of the two grouped layers takes 4 kernels of its own (zero the
 * amax, the amax, the scale, the cast: quantizer.cpp:497-536), 2 x 16 x 4 = 128,
 * and the MLP's 2 quantisations become the 2 padding kernels: forward 62 + 128 =
 * 190; the backward quantises each expert's output gradient once per layer, as
 * many again: 124 + 128 = 252.  mxfp8 (and fp8 blockwise): one kernel an expert
 * and layer (quantizer.cpp:1091-1103, :805-820), 32: 94 and 156.  bf16: no
 * quantisation, 7 + 19 + 32 = 58 and 116.  Llama 3 8B in bf16 at
 * tp 8, a dense layer: attention 7 + 2 collectives, MLP 5 + 2: 16, backward 32 (both
 * with flash attention).  GPT-3 175B (learned positions, trained with dropout) at
 * tp 1: no rotary embedding, so attention 5 with flash attention and 8 unfused (the
 * scores' GEMM, softmax, dropout and the weighted sum's GEMM for the one kernel),
 * plus the MLP's 5: 10 and 13.
 * With 0.5 ms an operation one microbatch of Qwen's 48 layers launches for
 * 48 x 186 x 0.5 ms = 4.464 s, far above its kernels on 8 H100s: the stage waits for
 * the host, time.host is the difference, and the step's parts still add up.  At
 * 1 us an operation the kernels are longer and nothing waits.
 */
static void test_host_launches(void **state)
{
    (void)state;
    ppl_model q = test_model("qwen3-30b-a3b");
    ppl_config c = test_config(8, 1, 1, 1, 8, &q);
    c.ep = 8;
    c.precision = PPL_PRECISION_FP8;
    c.flash_attention = true;
    double f, b;
    ppl_layer_host_ops(&q, &c, true, &f, &b);
    assert_close(f, 62.0, 0);
    assert_close(b, 124.0, 0);
    ppl_config r = c;
    r.fp8_recipe = PPL_FP8_TENSORWISE;
    ppl_layer_host_ops(&q, &r, true, &f, &b);
    assert_close(f, 190.0, 0);
    assert_close(b, 252.0, 0);
    r.fp8_recipe = PPL_FP8_BLOCKWISE;
    ppl_layer_host_ops(&q, &r, true, &f, &b);
    assert_close(f, 94.0, 0);
    assert_close(b, 156.0, 0);
    r = c;
    r.precision = PPL_PRECISION_MXFP8;
    ppl_layer_host_ops(&q, &r, true, &f, &b);
    assert_close(f, 94.0, 0);
    assert_close(b, 156.0, 0);
    r.precision = PPL_PRECISION_BF16;
    ppl_layer_host_ops(&q, &r, true, &f, &b);
    assert_close(f, 58.0, 0);
    assert_close(b, 116.0, 0);
    ppl_model l = test_model("llama3-8b");
    ppl_config d = test_config(8, 8, 1, 1, 8, &l);
    d.flash_attention = true;
    ppl_layer_host_ops(&l, &d, false, &f, &b);
    assert_close(f, 16.0, 0);
    assert_close(b, 32.0, 0);
    ppl_model g = test_model("gpt3-175b");
    ppl_config u = test_config(8, 1, 1, 1, 8, &g);
    u.flash_attention = true;
    ppl_layer_host_ops(&g, &u, false, &f, &b);
    assert_close(f, 10.0, 0);
    u.flash_attention = false;
    ppl_layer_host_ops(&g, &u, false, &f, &b);
    assert_close(f, 13.0, 0);

    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &q, &t, PPL_STACK_MODERN);
    ctx.stack.host_op_s = 0.5e-3;
    ppl_estimate e;
    ppl_estimate_config(&ctx, &c, &e);
    assert_int_equal(c.microbatches, 1);
    const double launches = 48.0 * 186.0 * 0.5e-3;
    assert_true(e.time.host > 0.0);
    /* one stage, one microbatch: its kernels, exposed communication and wait are
     * its launches (the gradient reduction after it, if exposed, on top) */
    assert_true(e.time.compute + e.time.exposed_comm + e.time.host >= launches * (1.0 - 1e-12));
    assert_true(e.time.compute + e.time.exposed_comm + e.time.host <= launches * 1.05);
    assert_true(e.step_time_s >= launches);
    assert_close(e.step_time_s,
                 e.time.compute + e.time.bubble + e.time.exposed_comm + e.time.host +
                     e.time.optimizer + e.time.overhead,
                 1e-9);
    ctx.stack.host_op_s = 1e-6;
    ppl_estimate_config(&ctx, &c, &e);
    assert_close(e.time.host, 0.0, 0);
}

/*
 * CUDA graphs (compute.c ppl_layer_host_ops): a captured region is one launch
 * forward and one backward.  Qwen3-30B-A3B in fp8 (delayed), ep 8, tp 1, as above:
 * attention 7 + 2 quantisations = 9, the MoE MLP 19 + 32 + 2 = 53 (62 and 124).
 *  - attn: 1 + 53 = 54 forward, 1 + 2 x 53 = 107 backward;
 *  - moe_router (the norm, the router's 6 and the token counts' 4: 11): 9 + 53 -
 *    10 = 52 forward, 18 + 106 - 21 = 103 backward;
 *  - attn+moe_router: 1 + 43 = 44, 1 + 85 = 86;
 *  - tensor-wise scaling's 128 expert quantisations stay outside the graphs:
 *    moe_router 52 + 128 = 180 and 103 + 128 = 231.
 * Llama 3 8B in bf16 at tp 8 (16 and 32, above): attn 1 + 7 = 8 and 1 + 14 = 15;
 * a whole layer 1 and 1; the whole step nothing a layer.  Megatron-Core's rules
 * (transformer_config.py:1716-1800 at core_v0.16.0): the MoE scopes need experts,
 * whole MoE layers drop-padding (refused), full recomputation the whole-step
 * graph.  At 0.5 ms an operation the Qwen3 microbatch's launches fall from
 * 48 x 186 x 0.5 ms to 48 x (52 + 103) x 0.5 ms = 3.72 s under moe_router.
 */
static void test_cuda_graphs(void **state)
{
    (void)state;
    ppl_model q = test_model("qwen3-30b-a3b");
    ppl_config c = test_config(8, 1, 1, 1, 8, &q);
    c.ep = 8;
    c.precision = PPL_PRECISION_FP8;
    c.flash_attention = true;
    const struct {
        ppl_cuda_graphs g;
        double f, b;
    } moe[] = {{PPL_CUDA_GRAPHS_NONE, 62, 124},
               {PPL_CUDA_GRAPHS_ATTN, 54, 107},
               {PPL_CUDA_GRAPHS_MOE_ROUTER, 52, 103},
               {PPL_CUDA_GRAPHS_ATTN_MOE_ROUTER, 44, 86}};
    double f, b;
    for (size_t i = 0; i < sizeof moe / sizeof moe[0]; i++) {
        c.cuda_graphs = moe[i].g;
        ppl_layer_host_ops(&q, &c, true, &f, &b);
        assert_close(f, moe[i].f, 0);
        assert_close(b, moe[i].b, 0);
    }
    ppl_config r = c;
    r.fp8_recipe = PPL_FP8_TENSORWISE;
    r.cuda_graphs = PPL_CUDA_GRAPHS_MOE_ROUTER;
    ppl_layer_host_ops(&q, &r, true, &f, &b);
    assert_close(f, 180.0, 0);
    assert_close(b, 231.0, 0);

    ppl_model l = test_model("llama3-8b");
    ppl_config d = test_config(8, 8, 1, 1, 8, &l);
    d.flash_attention = true;
    d.cuda_graphs = PPL_CUDA_GRAPHS_ATTN;
    ppl_layer_host_ops(&l, &d, false, &f, &b);
    assert_close(f, 8.0, 0);
    assert_close(b, 15.0, 0);
    d.cuda_graphs = PPL_CUDA_GRAPHS_LAYER;
    ppl_layer_host_ops(&l, &d, false, &f, &b);
    assert_close(f + b, 2.0, 0);
    d.cuda_graphs = PPL_CUDA_GRAPHS_ITERATION;
    ppl_layer_host_ops(&l, &d, false, &f, &b);
    assert_close(f + b, 0.0, 0);

    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_error err;
    d.cuda_graphs = PPL_CUDA_GRAPHS_MOE_ROUTER; /* a dense model has no router */
    assert_int_equal(ppl_config_check(&d, &l, &t, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "cuda_graphs");
    d.cuda_graphs = PPL_CUDA_GRAPHS_ATTN;
    d.recompute = PPL_RECOMPUTE_FULL;
    assert_int_equal(ppl_config_check(&d, &l, &t, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "cuda_graphs");
    d.cuda_graphs = PPL_CUDA_GRAPHS_ITERATION;
    assert_int_equal(ppl_config_check(&d, &l, &t, &err), PPL_OK);
    c.cuda_graphs = PPL_CUDA_GRAPHS_LAYER; /* a whole MoE layer needs drop-padding */
    assert_int_equal(ppl_config_check(&c, &q, &t, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "cuda_graphs");

    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &q, &t, PPL_STACK_MODERN);
    ctx.stack.host_op_s = 0.5e-3;
    c.cuda_graphs = PPL_CUDA_GRAPHS_MOE_ROUTER;
    ppl_estimate e;
    ppl_estimate_config(&ctx, &c, &e);
    const double launches = 48.0 * (52.0 + 103.0) * 0.5e-3;
    assert_true(e.time.compute + e.time.exposed_comm + e.time.host >= launches * (1.0 - 1e-12));
    assert_true(e.time.compute + e.time.exposed_comm + e.time.host <= launches * 1.05);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_launches),
        cmocka_unit_test(test_cuda_graphs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
