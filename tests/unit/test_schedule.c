/*
 * test_schedule.c - step time: pipeline bubble, a hand-computed configuration,
 * traffic volumes and the rates derived from a step.
 */
#include "testutil.h"

#include "cost/estimate.h"

/*
 * 1F1B with p equal stages: the pipeline takes (m + p - 1) stage times for m
 * microbatches, a bubble of (p-1)/m of the ideal (Narayanan et al. SC'21 §2.2.1);
 * interleaving v chunks cuts it to (p-1)/(mv).  p = 8, m = 64: 7/64 and 7/256.
 * Communication is overlapped here (no interference), so that stages are equal,
 * but a send still takes its time to arrive (executor.h): in 1F1B's steady state
 * each rank waits for the next one's backward, so every microbatch's cycle may
 * carry a send each way, at most 2 (m + p - 1) sends over the step beyond the
 * formula (and none under GPipe but the 2 (p - 1) of the fill and drain).
 */
static void test_bubble(void **state)
{
    (void)state;
    ppl_model m = test_gpt(32, 4096, 32, 2048);
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ctx.stack.pp_overlap = 1.0;
    ctx.stack.overlap_cost = 0.0;
    ppl_config c = test_config(8, 1, 8, 1, 64, &m);
    ppl_layout l;
    ppl_micro mi;
    ppl_layout_init(&ctx, &c, &l);
    ppl_micro_comm_init(&ctx, &c, &l, &mi);
    const double send = mi.pp_one;
    assert_true(send > 0.0);
    ppl_estimate e;
    ppl_estimate_config(&ctx, &c, &e);
    double r = e.time.bubble / e.time.compute;
    assert_true(r >= 0.99 * 7.0 / 64.0);
    assert_true(e.time.bubble <= 1.01 * 7.0 / 64.0 * e.time.compute + 2.0 * (64 + 7) * send);
    c.vp = 4;
    ppl_estimate_config(&ctx, &c, &e);
    r = e.time.bubble / e.time.compute;
    assert_true(r >= 0.99 * 7.0 / 256.0);
    assert_true(e.time.bubble <= 1.01 * 7.0 / 256.0 * e.time.compute + 2.0 * (64 + 7) * 4 * send);
    /* GPipe has the bubble of 1F1B, plus the sends of one fill and drain */
    c.vp = 1;
    c.schedule = PPL_SCHEDULE_GPIPE;
    ppl_estimate_config(&ctx, &c, &e);
    assert_close(e.time.bubble, 7.0 / 64.0 * e.time.compute + 14.0 * send, 0.01);
}

/*
 * One H100, one layer of h = 4096 (32 heads), s = 2048, b = 1, no recomputation,
 * unfused attention, bf16, under constants set here (GEMMs 0.615 of peak, w_half 58,
 * 57 ms a step), element-wise kernels at H100's measured streaming bandwidth
 * (gpu.c: 3,003 of 3,350 GB/s), so that the derivation holds whatever a fit returns:
 *   GEMMs: 2 x 2048 tokens x 12h^2 = 8.246e11 FLOPs forward;
 *          efficiency 0.615 x 4096/(4096 + 58) = 0.6064 -> 989e12 x 0.6064 = 5.997e14 FLOP/s
 *          -> 1.3750 ms forward, 2.7500 ms backward
 *   attention core: 4 x 2048 x 2048 x 4096 = 6.872e10 FLOPs at the GEMMs' 0.615 x
 *          989e12 -> 0.1130 ms, but its 32 x 2048^2 = 1.342e8 scores are written and read
 *          back, 4 B each (a roofline): 5.369e8 B at 3.003e12 B/s
 *          -> 0.1788 ms forward, 0.3576 ms backward
 *   element-wise: per token 22h (two norms 4h each, two fused bias-dropout-adds
 *          7h each) + 4 x 4h (GeLU) + 9 x 32 x 2048 (softmax and dropout of the
 *          scores) = 90112 + 65536 + 589824 = 745472 bytes; x 2048 tokens =
 *          1.527e9 B at 3.003e12 B/s -> 0.5084 ms forward; backward twice the
 *          first two, but 11 B a score for the softmax's and dropout's
 *          (2 x 155648 + 720896 = 1032192 bytes a token) -> 0.7039 ms
 *   output layer (vocabulary 8): 2 x 2048 x 4096 x 8 = 1.34e8 FLOPs, negligible
 * so compute = 1.3750 + 0.1788 + 0.5084 + 2.7500 + 0.3576 + 0.7039 ms = 5.874 ms,
 * plus the optimizer
 * (201M parameters x 30 bytes / 3.003 TB/s = 2.01 ms) and the per-step
 * overhead 57 ms.
 */
static void test_hand_computed(void **state)
{
    (void)state;
    ppl_model m = test_gpt(1, 4096, 32, 2048);
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_constants k = *ppl_constants_committed();
    k.h100_gemm = 0.615;
    k.width_half = 58.0;
    k.step_overhead_s = 0.057;
    ppl_eval_ctx_set_constants(&ctx, &k, PPL_STACK_MODERN);
    ppl_config c = test_config(1, 1, 1, 1, 1, &m);
    ppl_estimate e;
    ppl_estimate_config(&ctx, &c, &e);
    double eff = 0.615 * 4096.0 / (4096.0 + 58.0);
    double gemm = 2.0 * 2048 * 12.0 * 4096.0 * 4096.0 / (989e12 * eff);
    double attn_flops = 4.0 * 2048 * 2048 * 4096.0 / (989e12 * 0.615);
    double attn = 4.0 * 32 * 2048 * 2048 / 3.003e12;
    double elem = 2048.0 * (22.0 * 4096 + 4.0 * 4.0 * 4096 + 9.0 * 32 * 2048) / 3.003e12;
    double elem_b =
        2048.0 * (2.0 * (22.0 * 4096 + 4.0 * 4.0 * 4096) + 11.0 * 32 * 2048) / 3.003e12;
    double output = 2.0 * 2048 * 4096 * 8 / (989e12 * eff) * 3.0;
    assert_close(gemm, 1.3750e-3, 1e-3);
    assert_close(attn_flops, 0.1130e-3, 1e-3);
    assert_close(attn, 0.1788e-3, 1e-3);
    assert_close(elem, 0.5084e-3, 1e-3);
    assert_close(elem_b, 0.7039e-3, 1e-3);
    assert_close(e.time.compute, 3.0 * (gemm + attn) + elem + elem_b + output, 1e-3);
    assert_close(e.time.bubble, 0.0, 0);
    assert_close(e.time.exposed_comm, 0.0, 0);
    assert_close(e.time.overhead, 0.057, 1e-12);
    assert_close(e.step_time_s, e.time.compute + e.time.optimizer + 0.057, 1e-9);
    /* MFU: model FLOPs per step over the time and the bf16 peak */
    assert_close(e.mfu, 2048.0 * ctx.figures.flops_training_per_token / e.step_time_s / 989e12,
                 1e-9);
}

/*
 * Tensor-parallel traffic: per layer and microbatch 4 all-reduces (2 forward, 2
 * backward) of b s h x 2 bytes, each sending 2(t-1)/t of it per GPU over NVLink.
 * 2 layers, t = 8, 4 microbatches of b = 1, s = 2048, h = 4096:
 *   2 x 4 x 4 x 2(7/8) x 2048 x 4096 x 2 B = 939,524,096 B
 */
static void test_tp_traffic(void **state)
{
    (void)state;
    ppl_model m = test_gpt(2, 4096, 32, 2048);
    ppl_topology t = test_topology("dgx-h100-superpod");
    t.nvlink.sharp = false; /* rings, as derived (NVLS sends S each way: 4/7 of it) */
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_LEGACY);
    ppl_config c = test_config(8, 8, 1, 1, 4, &m);
    ppl_estimate e;
    ppl_estimate_config(&ctx, &c, &e);
    assert_close(e.traffic.nvlink, 939524096.0, 1e-9);
    assert_close(e.traffic.rail + e.traffic.spine, 0.0, 0);
    /* legacy stacks hide none of it */
    assert_close(e.time.exposed_comm, e.time.tp_comm, 1e-9);
    /* full recomputation repeats the forward's 2 all-reduces: 6 per layer */
    c.recompute = PPL_RECOMPUTE_FULL;
    ppl_estimate_config(&ctx, &c, &e);
    assert_close(e.traffic.nvlink, 939524096.0 * 1.5, 1e-9);
}

/*
 * Megatron-LM 2022 runs the backward's column-parallel input-gradient all-reduces
 * under the weight-gradient GEMMs (megatron/mpu/layers.py 272-293 at 55ba1f7);
 * its 2021 releases block on them (test_tp_traffic).  2 layers of h = 4096 (32
 * heads, MLP 4h), s = 2048, b = 1, t = 8 on one DGX H100, GEMMs at 0.615 of peak,
 * w_half 58:
 *   QKV and fc1 weights per rank: (3h^2 + 4h^2)/8 = 7 x 4096^2 / 8 = 1.4680e7;
 *   their weight gradients: 2 x 2048 x 1.4680e7 = 6.0130e10 FLOPs at 989e12 x
 *   0.615 x 512/(512 + 58) = 5.4633e14 FLOP/s -> 0.11006 ms a layer;
 *   each layer's 4 all-reduces take A = tp_comm / (2 layers x 4) (the collective
 *   model's), of which the backward's 2 hide under those GEMMs: min(2A, 0.11006 ms),
 *   which still costs overlap_cost of itself.
 * So exposed(2021) - exposed(2022) = 2 x (1 - overlap_cost) x min(2A, 0.11006 ms);
 * under sequence parallelism the reduce-scatters hide, not the all-gathers.
 */
/* The two layers of test_tp_async_backward on one DGX H100 (GEMMs at 0.615 of
 * peak, w_half 58, launches not waited for), costed under two stacks. */
typedef struct two_stacks {
    ppl_model m;
    ppl_topology t;
    ppl_constants k;
    ppl_eval_ctx a, b;
} two_stacks;

static void two_stacks_init(two_stacks *x, ppl_stack a, ppl_stack b)
{
    x->m = test_gpt(2, 4096, 32, 2048);
    x->t = test_topology("dgx-h100-superpod");
    x->k = *ppl_constants_committed();
    x->k.h100_gemm = 0.615;
    x->k.width_half = 58.0;
    x->k.host_op_s = 1e-6; /* two small layers: not waiting for their launches */
    ppl_eval_ctx_init(&x->a, &x->m, &x->t, a);
    ppl_eval_ctx_set_constants(&x->a, &x->k, a);
    ppl_eval_ctx_init(&x->b, &x->m, &x->t, b);
    ppl_eval_ctx_set_constants(&x->b, &x->k, b);
}

static void test_tp_async_backward(void **state)
{
    (void)state;
    two_stacks s2, *x = &s2;
    two_stacks_init(x, PPL_STACK_MEGATRON_LM_2021, PPL_STACK_MEGATRON_LM_2022);
    const ppl_constants k = x->k;
    ppl_config c = test_config(8, 8, 1, 1, 1, &x->m);
    ppl_estimate e1, e2;
    ppl_estimate_config(&x->a, &c, &e1);
    ppl_estimate_config(&x->b, &c, &e2);
    double wgrad = 2.0 * 2048 * 7.0 * 4096.0 * 4096.0 / 8.0 / (989e12 * 0.615 * 512.0 / 570.0);
    assert_close(wgrad, 0.11006e-3, 1e-3);
    double a = e1.time.tp_comm / 8.0;
    assert_close(e2.time.tp_comm, e1.time.tp_comm, 1e-12);
    assert_close(e1.time.exposed_comm - e2.time.exposed_comm,
                 2.0 * (1.0 - k.overlap_cost) * fmin(2.0 * a, wgrad), 1e-6);
    assert_true(e2.step_time_s < e1.step_time_s);
    /* sequence parallelism: what hides is no more than the reduce-scatters, half
     * of each layer's TP traffic in the backward */
    c.sequence_parallel = true;
    ppl_estimate_config(&x->a, &c, &e1);
    ppl_estimate_config(&x->b, &c, &e2);
    double hidden = (e1.time.exposed_comm - e2.time.exposed_comm) / (1.0 - k.overlap_cost);
    assert_true(hidden > 0.0);
    assert_true(hidden <= 2.0 * 2.0 * (e1.time.tp_comm / 8.0) / 2.0 * 1.01);
}

/*
 * Transformer Engine's userbuffers overlap (stage.c tp_exposed_overlapped; TE's
 * initialize_ub defaults).  The layers of test_tp_async_backward (h = 4096, 32
 * heads, MLP 4h, s = 2048, b = 1, t = 8, GEMMs at 5.4633e14 FLOP/s), under
 * sequence parallelism; each forward GEMM 2 x 2048 x weights/8 FLOPs:
 *   QKV 3h^2: 2.5770e10 -> 47.169 us;  projection h^2: 15.723 us;
 *   fc1 4h^2 and fc2 4h^2: 62.892 us each;
 * the all-gather A and the reduce-scatter R of the 16 MiB activation over the 8
 * GPUs cost alike (a ring moves 7/8 of it either way): tp_comm of the stack that
 * blocks on them (Megatron-LM 2021) is 2 layers x 4 x (A + R), A = R = tp_comm/16.
 * Per layer, r = 7/8, the pipeline's 4 splits:
 *   forward: max(0, A - r QKV) + max(0, A - r fc1) + R/4 + 3/4 max(0, R - proj)
 *            + R/4 + 3/4 max(0, R - fc2);
 *   backward: max(0, A - r proj) + max(0, A - r fc2) + max(0, R - QKV)
 *            + max(0, R - fc1);
 * the rest hides and costs overlap_cost of itself.  Without sequence parallelism
 * Megatron refuses --tp-comm-overlap (arguments.py:199-200 at core_r0.8.0): all
 * of it shows.  In fp8 the GEMMs are shorter and hide less.
 */
static double pos0(double x)
{
    return x > 0.0 ? x : 0.0;
}

static void test_tp_overlap_userbuffers(void **state)
{
    (void)state;
    two_stacks s2, *x = &s2;
    two_stacks_init(x, PPL_STACK_MEGATRON_LM_2021, PPL_STACK_MEGATRON_CORE);
    const ppl_constants k = x->k;
    ppl_eval_ctx *blocking = &x->a, *ub = &x->b;
    ppl_config c = test_config(8, 8, 1, 1, 1, &x->m);
    c.sequence_parallel = true;
    ppl_estimate e1, e2;
    ppl_estimate_config(blocking, &c, &e1);
    ppl_estimate_config(ub, &c, &e2);
    const double rate = 989e12 * 0.615 * 512.0 / 570.0;
    const double qkv = 2.0 * 2048 * 3.0 * 4096.0 * 4096.0 / 8.0 / rate, proj = qkv / 3.0,
                 fc = 4.0 * proj;
    assert_close(qkv, 47.169e-6, 1e-4);
    assert_close(fc, 62.892e-6, 1e-4);
    assert_close(e1.time.exposed_comm, e1.time.tp_comm, 1e-12);
    assert_close(e2.time.tp_comm, e1.time.tp_comm, 1e-12);
    const double a = e1.time.tp_comm / 16.0, r = a, q = 7.0 / 8.0;
    const double fwd = pos0(a - q * qkv) + pos0(a - q * fc) + r / 4.0 +
                       0.75 * pos0(r - proj) + r / 4.0 + 0.75 * pos0(r - fc);
    const double bwd = pos0(a - q * proj) + pos0(a - q * fc) + pos0(r - qkv) + pos0(r - fc);
    const double shown = 2.0 * (fwd + bwd);
    assert_true(shown > 0.0 && shown < e1.time.tp_comm);
    assert_close(e2.time.exposed_comm, shown + k.overlap_cost * (e1.time.tp_comm - shown), 1e-9);
    /* without sequence parallelism: no overlap */
    c.sequence_parallel = false;
    ppl_estimate_config(ub, &c, &e2);
    assert_close(e2.time.exposed_comm, e2.time.tp_comm, 1e-12);
    /* fp8: shorter GEMMs (and fp8 all-gathers) hide a smaller share */
    c.sequence_parallel = true;
    ppl_estimate_config(ub, &c, &e2);
    ppl_config c8 = c;
    c8.precision = PPL_PRECISION_FP8;
    ppl_estimate e8;
    ppl_estimate_config(ub, &c8, &e8);
    assert_true(e8.time.exposed_comm / e8.time.tp_comm > e2.time.exposed_comm / e2.time.tp_comm);
}

/*
 * Megatron-LM 2021 adds each microbatch's gradients into the main gradients in a
 * kernel per tensor (distributed.py's main_grad.add_, tag v2.5); 2022's weight-
 * gradient GEMMs accumulate in place (gradient-accumulation fusion, bf16).  One
 * H100, one GPT layer of h = 4096 (MLP 4h, biases, LayerNorm), s = 2048, tp 1,
 * bf16 (fp32 main gradients), 2 microbatches:
 *   parameters: 12h^2 + 13h = 201,326,592 + 53,248 = 201,379,840 in the layer,
 *   and the embedding (vocabulary 8 x h, learned positions 2048 x h, tied with
 *   the output on one stage) 32,768 + 8,388,608 = 8,421,376: 209,801,216;
 *   each microbatch reads the bf16 gradient (2 B) and the fp32 main gradient
 *   (4 B) and writes the sum (4 B): 10 B x 209,801,216 = 2.0980e9 B at H100's
 *   streaming 3.003e12 B/s = 0.69864 ms;
 * so the 2021 step is 2 x 0.69864 = 1.3973 ms longer.  In fp16 (fp16 main
 * gradients: 6 B a parameter) 2022 accumulates apart too, and the two agree.
 */
static void test_grad_accumulation(void **state)
{
    (void)state;
    ppl_model m = test_gpt(1, 4096, 32, 2048);
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx old, new;
    ppl_eval_ctx_init(&old, &m, &t, PPL_STACK_MEGATRON_LM_2021);
    ppl_eval_ctx_init(&new, &m, &t, PPL_STACK_MEGATRON_LM_2022);
    ppl_config c = test_config(1, 1, 1, 1, 2, &m);
    ppl_estimate e1, e2;
    ppl_estimate_config(&old, &c, &e1);
    ppl_estimate_config(&new, &c, &e2);
    double p = 12.0 * 4096.0 * 4096.0 + 13.0 * 4096.0 + 8.0 * 4096.0 + 2048.0 * 4096.0;
    assert_close(p, 209801216.0, 1e-12);
    assert_close(10.0 * p / 3.003e12, 0.69864e-3, 1e-4);
    assert_close(e1.time.compute - e2.time.compute, 2.0 * 10.0 * p / 3.003e12, 1e-6);
    c.precision = PPL_PRECISION_FP16;
    ppl_estimate_config(&old, &c, &e1);
    ppl_estimate_config(&new, &c, &e2);
    assert_close(e1.time.compute, e2.time.compute, 1e-12);
}

/*
 * Scatter-gather (Narayanan §4.1): with t = 8 each tensor-parallel rank sends 1/8
 * of the b s h activation to the next stage over its own rail: 2048 x 4096 x 2 / 8
 * = 2 MiB per send, forward and backward, for every microbatch.  Two stages on two
 * servers, 4 microbatches: 8 sends of 2 MiB = 16 MiB on the network per GPU.
 */
static void test_scatter_gather(void **state)
{
    (void)state;
    ppl_model m = test_gpt(2, 4096, 32, 2048);
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_LEGACY);
    ppl_config c = test_config(16, 8, 2, 1, 4, &m);
    ppl_estimate e;
    ppl_estimate_config(&ctx, &c, &e);
    assert_close(e.traffic.rail + e.traffic.spine, 8.0 * 2097152.0, 1e-9);
}

/* Block recomputation costs in proportion: recomputing k of a stage's L layers adds
 * k/L of full recomputation's extra backward time (and of its two extra TP
 * all-reduces per layer). */
static void test_block_recompute_time(void **state)
{
    (void)state;
    ppl_model m = test_gpt(8, 4096, 32, 2048);
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_LEGACY);
    ppl_config c = test_config(8, 8, 1, 1, 4, &m);
    ppl_estimate none, all, quarter;
    ppl_estimate_config(&ctx, &c, &none);
    c.recompute = PPL_RECOMPUTE_FULL;
    ppl_estimate_config(&ctx, &c, &all);
    c.recompute_layers = 2;
    ppl_estimate_config(&ctx, &c, &quarter);
    assert_true(all.step_time_s > none.step_time_s);
    assert_close(quarter.step_time_s - none.step_time_s,
                 0.25 * (all.step_time_s - none.step_time_s), 1e-9);
    assert_close(quarter.traffic.nvlink, none.traffic.nvlink * (4.0 + 2.0 * 0.25) / 4.0, 1e-9);
}

/*
 * Nothing non-finite is shown or ranked: an estimate whose figures are all
 * finite and non-negative passes ppl_estimate_check; a NaN, an infinity or a
 * negative time in any one of them is PPL_EINTERNAL naming that figure.
 */
static void test_estimate_check(void **state)
{
    (void)state;
    ppl_model m = test_gpt(32, 4096, 32, 2048);
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_config c = test_config(1024, 8, 8, 1, 1024, &m);
    ppl_estimate e, bad;
    ppl_error err;
    ppl_estimate_config(&ctx, &c, &e);
    assert_int_equal(ppl_estimate_check(&e, &err), PPL_OK);
    bad = e;
    bad.step_time_s = NAN;
    assert_int_equal(ppl_estimate_check(&bad, &err), PPL_EINTERNAL);
    assert_non_null(strstr(err.message, "step_time_s"));
    bad = e;
    bad.time.dp_comm = INFINITY;
    assert_int_equal(ppl_estimate_check(&bad, &err), PPL_EINTERNAL);
    assert_non_null(strstr(err.message, "time.dp_comm"));
    bad = e;
    bad.traffic.spine = -1.0;
    assert_int_equal(ppl_estimate_check(&bad, &err), PPL_EINTERNAL);
    assert_non_null(strstr(err.message, "traffic.spine"));
}

/* DeepSpeed 2021's ZeRO-3 (deepspeed-zero3-2021) reaches a share b of the ring's
 * bus bandwidth (zero3_2021_bus).  Each collective costs latency + bytes / (b x
 * busbw) (NCCL's model, comm.c), so the data-parallel time is L + B / b with L the
 * latencies and B the bandwidth term at b = 1; then
 *   dp(0.5) - dp(1) = B and dp(0.25) - dp(1) = 3B:
 * the share scales the bytes, never the latencies.  16 A100 (2 servers), fp16,
 * one microbatch: per layer 2 gathers of 12h^2 x 2 B and one reduce-scatter of
 * 12h^2 x 2 B (fp16 gradients). */
static void test_zero3_2021_bus(void **state)
{
    (void)state;
    ppl_model m = test_gpt(2, 4096, 32, 2048);
    ppl_topology t = test_topology("dgx-a100-superpod");
    ppl_config c = test_config(16, 1, 1, 1, 16, &m);
    c.zero = 3;
    c.precision = PPL_PRECISION_FP16;
    double dp[3];
    const double bus[3] = {1.0, 0.5, 0.25};
    for (int i = 0; i < 3; i++) {
        ppl_eval_ctx ctx;
        ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_DEEPSPEED_ZERO3_2021);
        ppl_constants k = *ppl_constants_committed();
        k.zero3_2021_bus = bus[i];
        ppl_eval_ctx_set_constants(&ctx, &k, PPL_STACK_DEEPSPEED_ZERO3_2021);
        ppl_estimate e;
        ppl_estimate_config(&ctx, &c, &e);
        dp[i] = e.time.dp_comm;
    }
    double B = dp[1] - dp[0];
    assert_true(B > 0.0);
    assert_close(dp[2] - dp[0], 3.0 * B, 1e-9);
    /* other stacks are untouched by the constant */
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_FSDP);
    ppl_constants k = *ppl_constants_committed();
    ppl_estimate e1, e2;
    ppl_estimate_config(&ctx, &c, &e1);
    k.zero3_2021_bus = 0.25;
    ppl_eval_ctx_set_constants(&ctx, &k, PPL_STACK_FSDP);
    ppl_estimate_config(&ctx, &c, &e2);
    assert_close(e1.time.dp_comm, e2.time.dp_comm, 1e-12);
}

/* DeepSpeed's stage 3 gathers each tensor of at least 1e5 elements
 * (stage3_param_persistence_threshold); its 2021 releases reduce-scatter every
 * tensor's gradient by itself (partition_parameters.py at v0.4.0, lines
 * 902-966).  GPT-3 175B, tp 1 (h 12288, ffn 49152, biases, LayerNorm): the four
 * weight matrices (453M, 151M, 604M, 604M) are gathered; their four biases
 * (12,288, 49,152, 12,288 and 36,864 elements) and the two LayerNorms' weights
 * and biases (12,288 each) stay whole: 4 gathers and 4 + 4 + 4 = 12
 * reduce-scatters a layer.  A GPT of 1.3B (h 2048): its four matrices
 * (4.2M-16.8M) are gathered, 12 reductions again.  Llama's gated MLP without
 * biases, RMSNorm: five matrices gathered, 5 + 2 norms = 7 reductions. */
static void test_zero3_per_tensor(void **state)
{
    (void)state;
    double g, r;
    ppl_model m = test_gpt(96, 12288, 96, 2048);
    ppl_zero3_per_tensor(&m, 1, &g, &r);
    assert_close(g, 4.0, 0.0);
    assert_close(r, 12.0, 0.0);
    m = test_gpt(24, 2048, 16, 2048);
    ppl_zero3_per_tensor(&m, 1, &g, &r);
    assert_close(g, 4.0, 0.0);
    assert_close(r, 12.0, 0.0);
    m.gated_mlp = true;
    m.bias = false;
    m.norm = PPL_NORM_RMSNORM;
    ppl_zero3_per_tensor(&m, 1, &g, &r);
    assert_close(g, 5.0, 0.0);
    assert_close(r, 7.0, 0.0);
}

/* DeepSpeed's stage 3 releases a layer's weights after its forward and fetches
 * them again for a recomputed forward (parameter_offload.py's pre-forward hook
 * runs in the recomputation), then for the backward; FSDP keeps what it gathered
 * for the recomputation.  So with full recomputation DeepSpeed 2021 gathers each
 * layer three times a microbatch against twice without, none of it hidden: its
 * data-parallel time grows by one gather a layer, the same for each layer of one
 * shape: linear in the layers, grow(3) - grow(2) = grow(2) - grow(1) > 0 (the
 * embedding's share of the gathered bytes is in every term); FSDP's does not
 * grow.  16 A100 (2 servers), tp 1, fp16, one microbatch. */
static void test_zero3_regather(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-a100-superpod");
    const ppl_stack stacks[2] = {PPL_STACK_DEEPSPEED_ZERO3_2021, PPL_STACK_FSDP};
    double grow[2][3]; /* [stack][layers - 1]: dp(full) - dp(none) */
    for (int k = 0; k < 2; k++)
        for (int layers = 1; layers <= 3; layers++) {
            ppl_model m = test_gpt(layers, 4096, 32, 2048);
            ppl_config c = test_config(16, 1, 1, 1, 16, &m);
            c.zero = 3;
            c.precision = PPL_PRECISION_FP16;
            ppl_eval_ctx ctx;
            ppl_eval_ctx_init(&ctx, &m, &t, stacks[k]);
            ppl_estimate none, full;
            ppl_estimate_config(&ctx, &c, &none);
            c.recompute = PPL_RECOMPUTE_FULL;
            ppl_estimate_config(&ctx, &c, &full);
            grow[k][layers - 1] = full.time.dp_comm - none.time.dp_comm;
        }
    assert_true(grow[0][1] - grow[0][0] > 0.0);
    assert_close(grow[0][2] - grow[0][1], grow[0][1] - grow[0][0], 1e-9);
    for (int layers = 1; layers <= 3; layers++)
        assert_close(grow[1][layers - 1], 0.0, 1e-12);
}

/* ZeRO-3 moves expert weights too.  Mixtral 8x7B (46.7B parameters, 45.1B of them
 * in the experts: 32 layers x 8 experts x 3 x 4096 x 14336) on 16 H100, tp 1,
 * ZeRO-3, one microbatch: every parameter is gathered twice (forward, backward)
 * and reduce-scattered once, each moving (n-1)/n of its 16-bit bytes through
 * every rank.  With ep 1 the experts are sharded over all 16 ranks, so the
 * data-parallel time is at least 3 x 45.1e9 x 2 B x 15/16 / 450 GB/s (NVLink's
 * bandwidth bounds any ring's) = 0.56 s.  With ep 16 each rank holds its own
 * expert whole (an expert-data-parallel group of one): only the dense 1.6B
 * parameters move, under a tenth of that. */
static void test_zero3_moves_experts(void **state)
{
    (void)state;
    ppl_model m = test_model("mixtral-8x7b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    double experts = 32.0 * 8.0 * 3.0 * 4096.0 * 14336.0;
    assert_true(fabs(experts - 45.1e9) < 0.05e9);
    ppl_config c = test_config(16, 1, 1, 1, 16, &m);
    c.zero = 3;
    c.flash_attention = true;
    ppl_estimate e;
    ppl_estimate_config(&ctx, &c, &e);
    double bound = 3.0 * experts * 2.0 * 15.0 / 16.0 / 450e9;
    assert_true(e.time.dp_comm >= bound);
    c.ep = 16;
    ppl_estimate_config(&ctx, &c, &e);
    assert_true(e.time.dp_comm < 0.1 * bound);
}

/* Where the token dispatch all-to-all runs: Megatron-Core orders a stage's
 * expert ranks etp innermost, then ep (parallel_state.py:886-895, order
 * tp-ep-dp-pp), so EP ranks lie etp GPUs apart.  Mixtral on 64 GPUs of
 * dgx-h100-superpod (8-GPU NVLink domains), tp 8, dp 8, ep 8:
 *   etp 1: EP ranks 0, 1, ..., 7, one NVLink domain (tier -1, one node), and no
 *          etp group to gather over;
 *   etp 8: EP ranks 0, 8, ..., 56, one GPU on each of 8 servers: the all-to-all
 *          leaves NVLink (8 nodes, a switch tier >= 0): 450 GB/s of NVLink against
 *          a 400 Gb/s NIC (about 48 GB/s) a GPU, so well over twice the time. */
static void test_dispatch_group(void **state)
{
    (void)state;
    ppl_model m = test_model("mixtral-8x7b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_config c = test_config(64, 8, 1, 1, 64, &m);
    c.ep = 8;
    c.etp = 1;
    c.sequence_parallel = c.flash_attention = true;
    ppl_error err;
    assert_int_equal(ppl_config_check(&c, &m, &t, &err), PPL_OK);
    ppl_layout inside, across;
    ppl_layout_init(&ctx, &c, &inside);
    assert_int_equal(inside.g_ep.n, 8);
    assert_int_equal(inside.g_ep.nodes, 1);
    assert_int_equal(inside.g_ep.tier, -1);
    assert_int_equal(inside.g_etp.n, 1);
    assert_int_equal(inside.g_edp.n, 8); /* 64 / (1 x 8) */
    ppl_micro near, far;
    ppl_micro_comm_init(&ctx, &c, &inside, &near);
    assert_true(near.etp_one == 0.0);
    c.etp = 8;
    assert_int_equal(ppl_config_check(&c, &m, &t, &err), PPL_OK);
    ppl_layout_init(&ctx, &c, &across);
    assert_int_equal(across.g_ep.n, 8);
    assert_int_equal(across.g_ep.nodes, 8);
    assert_true(across.g_ep.tier >= 0);
    assert_int_equal(across.g_etp.nodes, 1); /* the etp group is the TP group */
    assert_int_equal(across.g_edp.n, 1);     /* 64 / (8 x 8) */
    ppl_micro_comm_init(&ctx, &c, &across, &far);
    assert_true(far.ep_one > 2.0 * near.ep_one);
    assert_true(far.etp_one > 0.0);
}

/* Context parallelism's ring hides behind attention (Megatron-Core's p2p ring
 * attention: each step's K/V transfer overlaps the attention of the chunk at
 * hand).  Llama 3 8B on 2 H100 of one server, cp 2, nothing else parallel, at
 * 131,072 tokens: a layer's attention on each rank is 4 x s^2 x h / cp^2 =
 * 4 x 131072^2 x 4096 / 4 = 7.0e13 FLOPs forward (growing as s^2), about 0.14 s
 * at half of 989 TFLOP/s, while its K/V (s/cp x 2 x 1024 columns x 2 B = 268 MB,
 * growing as s) crosses NVLink at 450 GB/s in 0.6 ms.  With the overlap's
 * own cost set to zero and the gradient reduction (over the cp ranks) hidden
 * under the backward but for its last bucket (Megatron-Core's overlapped reduce
 * exposes that one, ~0.2 ms here), the ring's 70 ms are hidden: the exposed
 * communication is under 1% of time.cp_comm.  A ring costed without the overlap
 * would expose all of it. */
static void test_cp_ring_hidden(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_model m = test_model("llama3-8b");
    ppl_error err;
    assert_int_equal(ppl_model_set_seq_len(&m, 131072, &err), PPL_OK);
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_constants k = *ppl_constants_committed();
    k.overlap_cost = 0.0;
    ppl_eval_ctx_set_constants(&ctx, &k, PPL_STACK_MODERN);
    ppl_config c = test_config(2, 1, 1, 1, 1, &m);
    c.cp = 2;
    c.dp = 1;
    c.microbatches = 1;
    c.flash_attention = true;
    ppl_estimate e;
    ppl_estimate_config(&ctx, &c, &e);
    assert_true(e.time.cp_comm > 0.05);
    assert_true(e.time.exposed_comm < 0.01 * e.time.cp_comm);
}

/*
 * Megatron-Core's 1F1B all-to-all overlap, as nemo-2025 runs it when asked
 * (--ep-overlap).  Mixtral on 64
 * GPUs, tp 1, pp 1, dp 64, ep 8, 8 microbatches of 1: every microbatch but the
 * first pairs its forward with the previous one's backward, so 7/8 of the
 * expert all-to-all may hide (ep_hidden_share).  Full recomputation turns the
 * overlap off (transformer_config.py "disable full recomputation when enabling
 * overlap_moe_expert_parallel_comm"), and so does pp 2 without a virtual
 * pipeline; megatron-lm-2023 has neither the overlap nor DeepEP.  Exposed
 * expert time with the overlap is at most what is left: the whole, minus
 * 7/8 of it when compute covers it.
 */
static void test_ep_overlap(void **state)
{
    (void)state;
    ppl_model m = test_model("mixtral-8x7b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_config c = test_config(64, 1, 1, 1, 512, &m);
    c.ep = 8;
    c.etp = 1;
    c.flash_attention = true;
    assert_int_equal(c.microbatches, 8);
    /* opt-in, as in Megatron-Core */
    assert_false(ppl_ep_mode_of(&m, &c, PPL_STACK_NEMO_2025).overlap);
    c.ep_overlap = true;
    ppl_ep_mode mode = ppl_ep_mode_of(&m, &c, PPL_STACK_NEMO_2025);
    assert_true(mode.overlap && !mode.dedup); /* Mixtral has no node limit */
    ppl_layout l;
    ppl_micro mi;
    ppl_layout_init(&ctx, &c, &l);
    ppl_micro_comm_init(&ctx, &c, &l, &mi);
    assert_true(mi.ep_one > 0.0);
    assert_close(mi.ep_hidden_share, 7.0 / 8.0, 1e-12);
    ppl_estimate on, off;
    ppl_estimate_config(&ctx, &c, &on);
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MEGATRON_LM_2023);
    ppl_estimate_config(&ctx, &c, &off);
    assert_true(on.time.exposed_comm < off.time.exposed_comm);
    ppl_config full = c;
    full.recompute = PPL_RECOMPUTE_FULL;
    assert_false(ppl_ep_mode_of(&m, &full, PPL_STACK_NEMO_2025).overlap);
    ppl_config piped = test_config(64, 1, 2, 1, 512, &m);
    piped.ep = 8;
    piped.ep_overlap = true;
    assert_false(ppl_ep_mode_of(&m, &piped, PPL_STACK_NEMO_2025).overlap);
    piped.vp = 2;
    assert_true(ppl_ep_mode_of(&m, &piped, PPL_STACK_NEMO_2025).overlap);
    assert_false(ppl_ep_mode_of(&m, &c, PPL_STACK_MEGATRON_LM_2023).overlap);
    /* DeepSeek-V3 routes to at most 4 servers: DeepEP's per-server dispatch */
    ppl_model ds = test_model("deepseek-v3");
    assert_true(ppl_ep_mode_of(&ds, &c, PPL_STACK_NEMO_2025).dedup);
}

/* The busiest expert sets the pace: 1.04 by default (loss-free balancing,
 * Wang et al. 2024 Table 2); a capacity factor of 1.0 drops what is beyond the
 * fair share, so the busiest does exactly the mean. */
static void test_routing_skew(void **state)
{
    (void)state;
    ppl_model m = test_model("mixtral-8x7b");
    assert_close(ppl_moe_load_factor(&m), 1.04, 1e-12);
    ppl_config c = test_config(8, 1, 1, 1, 8, &m);
    ppl_layer_work w;
    ppl_layer_work_of(&m, &c, true, &w);
    /* the excess: 0.04 x 2 FLOPs x T tokens x 2 experts x 3 x 4096 x 14336 weights */
    double T = 32768.0;
    assert_close(w.skew_gemm_flops, 0.04 * 2.0 * T * 2.0 * 3.0 * 4096.0 * 14336.0, 1e-9);
    m.moe.capacity_factor = 1.0;
    assert_close(ppl_moe_load_factor(&m), 1.0, 1e-12);
    ppl_layer_work_of(&m, &c, true, &w);
    assert_true(w.skew_gemm_flops == 0.0);
    m.moe.capacity_factor = 0.0;
    m.moe.routing_skew = 1.5;
    assert_close(ppl_moe_load_factor(&m), 1.5, 1e-12);
    m.has_moe = false;
    assert_close(ppl_moe_load_factor(&m), 1.0, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bubble),
        cmocka_unit_test(test_hand_computed),
        cmocka_unit_test(test_tp_traffic),
        cmocka_unit_test(test_tp_async_backward),
        cmocka_unit_test(test_tp_overlap_userbuffers),
        cmocka_unit_test(test_grad_accumulation),
        cmocka_unit_test(test_scatter_gather),
        cmocka_unit_test(test_block_recompute_time),
        cmocka_unit_test(test_estimate_check),
        cmocka_unit_test(test_zero3_2021_bus),
        cmocka_unit_test(test_zero3_per_tensor),
        cmocka_unit_test(test_zero3_regather),
        cmocka_unit_test(test_zero3_moves_experts),
        cmocka_unit_test(test_cp_ring_hidden),
        cmocka_unit_test(test_dispatch_group),
        cmocka_unit_test(test_ep_overlap),
        cmocka_unit_test(test_routing_skew),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
