/*
 * test_serve.c - an inference engine's layout (cost/serve.c): KV-cache bytes, the
 * experts a decode step touches, the bytes a decode step reads, derived by hand.
 */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "cost/serve.h"

/*
 * KV cache of one token, bf16 (2 B a value), every layer:
 *   Llama 3 70B, GQA: 80 layers x 2 (K, V) x 8 KV heads x 128 x 2 B = 327,680 B
 *   Mixtral 8x7B, GQA: 32 x 2 x 8 x 128 x 2 B = 131,072 B
 *   DeepSeek-V3, MLA: the latent (kv_lora_rank 512) and the rotary key
 *     (qk_rope_head_dim 64) a layer: 61 x (512 + 64) x 2 B = 70,272 B
 *     (DeepSeek-V2 paper, Table 1: (d_c + d_h^R) l elements a token)
 *   GPT-3 175B, MHA: 96 x 2 x 96 heads x 128 x 2 B = 4,718,592 B
 */
static void test_kv_bytes(void **state)
{
    (void)state;
    ppl_model l70 = test_model("llama3-70b"), mix = test_model("mixtral-8x7b"),
              ds = test_model("deepseek-v3"), gpt = test_model("gpt3-175b");
    assert_true(ppl_kv_bytes_per_token(&l70, 2.0) == 327680.0);
    assert_true(ppl_kv_bytes_per_token(&mix, 2.0) == 131072.0);
    assert_true(ppl_kv_bytes_per_token(&ds, 2.0) == 70272.0);
    assert_true(ppl_kv_bytes_per_token(&gpt, 2.0) == 4718592.0);
    assert_true(ppl_kv_bytes_per_token(&l70, 1.0) == 163840.0); /* fp8: 1 B a value */
}

/*
 * Mixtral's top-2 of 8: a token touches 2/8 of the experts; two tokens
 * 1 - (6/8)^2 = 0.4375; 64 tokens 1 - 0.75^64 = 0.99999990 (about all); a dense
 * model reads all of its MLP whatever the batch.
 */
static void test_experts_touched(void **state)
{
    (void)state;
    ppl_model mix = test_model("mixtral-8x7b"), l8 = test_model("llama3-8b");
    assert_close(ppl_experts_touched(&mix, 1.0), 0.25, 1e-15);
    assert_close(ppl_experts_touched(&mix, 2.0), 0.4375, 1e-15);
    assert_close(ppl_experts_touched(&mix, 64.0), 1.0 - pow(0.75, 64.0), 1e-15);
    assert_true(ppl_experts_touched(&l8, 1.0) == 1.0);
}

/*
 * Llama 3 8B, one sequence on one H100, 2,048 prompt and 512 response tokens, bf16.
 * A decode step reads every weight but the input embedding's table (a row a
 * token; untied, so the output layer's own matrix is read):
 *   8,030,261,248 - 128,256 x 4,096 = 7,504,924,672 weights x 2 B = 15,009,849,344 B
 * and the cache at the mean context, 2,048 + 512 / 2 = 2,304 tokens:
 *   2,304 x 131,072 B = 301,989,888 B;  15,311,839,232 B in all,
 * at the streaming share of the HBM bandwidth (3.35 TB/s x eff.hbm); its GEMMs,
 * 2 x 8.03e9 FLOPs, are far shorter: the step is the read.  The replica holds
 * 8,030,261,248 x 2 B of weights and 2,560 x 131,072 B of cache.
 */
static void test_decode_llama3_8b(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-8b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_serve_layout l = {.tp = 1, .batch = 1, .precision = PPL_PRECISION_BF16};
    ppl_serve_workload w = {.input_tokens = 2048, .output_tokens = 512};
    ppl_serve_estimate e;
    ppl_serve_cost(&ctx, &l, &w, &e);
    assert_true(e.decode_read_bytes == 15311839232.0);
    assert_close(e.decode_memory_s, 15311839232.0 / (3.35e12 * ctx.eff.hbm), 1e-12);
    assert_true(e.decode_compute_s < 0.01 * e.decode_memory_s);
    assert_true(e.decode_tp_s == 0.0); /* one GPU */
    assert_close(e.decode_step_s, e.decode_memory_s, 1e-12);
    /* one sequence: its 512 tokens after its prefill */
    assert_close(e.tokens_per_s, 512.0 / (e.prefill_s + 512.0 * e.decode_step_s), 1e-12);
    assert_true(e.weight_bytes == 8030261248.0 * 2.0);
    assert_true(e.kv_bytes == 2560.0 * 131072.0);
    assert_true(e.fits);
    /* the prefill: the 2,048-token forward, at least its 2 x 8.03e9 x 2,048 GEMM
     * FLOPs at the bf16 peak (989 TFLOP/s): 33.3 ms */
    assert_true(e.prefill_s > 2.0 * 8030261248.0 * 2048.0 / 989e12);
}

/*
 * Tensor parallelism splits the KV heads while there are heads to split: Llama 3
 * 70B's 8 KV heads over tp 8 hold 1/8 of the cache each (over tp 16 it would stay
 * 1/8, each KV head on two ranks), over tp 4 1/4.  A batch of 64
 * at tp 8: 64 x 2,560 x 327,680 / 8 B of cache a GPU.  Two all-reduces a layer
 * (160) of 64 x 8,192 x 2 B each.
 */
static void test_tp_split(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_serve_workload w = {.input_tokens = 2048, .output_tokens = 512};
    ppl_serve_layout l8 = {.tp = 8, .batch = 64, .precision = PPL_PRECISION_BF16};
    ppl_serve_estimate e8;
    ppl_serve_cost(&ctx, &l8, &w, &e8);
    assert_true(e8.kv_bytes == 64.0 * 2560.0 * 327680.0 / 8.0);
    assert_true(e8.weight_bytes == ctx.figures.params_total * 2.0 / 8.0);
    assert_true(e8.decode_tp_s > 0.0);
    ppl_group g;
    ppl_coll r;
    ppl_group_servers(&ctx.net, 1, 8, &g);
    assert_true(
        ppl_collective(&ctx.net, PPL_OP_ALLREDUCE, &g, 64.0 * 8192.0 * 2.0, PPL_ALGO_AUTO, &r));
    assert_close(e8.decode_tp_s, 160.0 * r.time_s, 1e-12);
    assert_close(e8.decode_step_s, fmax(e8.decode_memory_s, e8.decode_compute_s) + e8.decode_tp_s,
                 1e-12);
    /* at tp 4 each rank holds 2 of the 8 KV heads: twice tp 8's cache */
    ppl_serve_layout l4 = {.tp = 4, .batch = 64, .precision = PPL_PRECISION_BF16};
    ppl_serve_estimate e4;
    ppl_serve_cost(&ctx, &l4, &w, &e4);
    assert_true(e4.kv_bytes == 2.0 * e8.kv_bytes);
}

/*
 * Pipeline stages (serve.c): Llama 3 70B at tp 8 x pp 2, a batch of 64, bf16,
 * 2,048 + 512 tokens.  A layer holds 855,654,400 weights (q and o 8,192 x 8,192,
 * k and v 8,192 x 1,024, the MLP 3 x 8,192 x 28,672, two norms of 8,192); the
 * output layer 128,256 x 8,192 + its norm 8,192 = 1,050,681,344, the larger
 * end.  The heaviest stage holds 40 layers and it:
 *   (40 x 855,654,400 + 1,050,681,344) x 2 B / 8 = 8,819,214,336 B a GPU,
 * and half the layers' cache: 64 x 2,560 x 327,680 B / 8 / 2 = 3,355,443,200 B.
 * A stage steps for a group of 64 / 2 = 32 sequences over 40 layers; the group's
 * token takes two such steps and one send of 32 x 8,192 x 2 B between the
 * servers.  Memory-bound, the two steps read what tp 8 without stages reads for
 * 32 sequences, compute what it computes and all-reduce 2 x 80 times as it does:
 * a token of the group takes tp 8's decode step at a batch of 32, plus the send
 * (pipelining adds capacity, not speed).  The prompt crosses one send of
 * 2,048 x 8,192 x 2 B.
 */
static void test_pipeline_stages(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    assert_true(ctx.figures.params_dense_layer == 855654400.0);
    assert_true(ctx.figures.params_output == 1050681344.0);
    ppl_serve_workload w = {.input_tokens = 2048, .output_tokens = 512};
    ppl_serve_layout lp = {.tp = 8, .batch = 64, .precision = PPL_PRECISION_BF16, .pp = 2};
    ppl_serve_layout l32 = {.tp = 8, .batch = 32, .precision = PPL_PRECISION_BF16};
    ppl_serve_estimate ep, e32;
    ppl_serve_cost(&ctx, &lp, &w, &ep);
    ppl_serve_cost(&ctx, &l32, &w, &e32);
    assert_true(ep.weight_bytes == 8819214336.0);
    assert_true(ep.kv_bytes == 3355443200.0);
    assert_true(ep.fits);
    ppl_group g;
    ppl_coll r;
    ppl_group_servers(&ctx.net, 2, 1, &g);
    assert_true(
        ppl_collective(&ctx.net, PPL_OP_SENDRECV, &g, 32.0 * 8192.0 * 2.0, PPL_ALGO_AUTO, &r));
    assert_close(ep.decode_hop_s, r.time_s, 1e-12);
    assert_true(ep.decode_memory_s > ep.decode_compute_s &&
                e32.decode_memory_s > e32.decode_compute_s);
    assert_close(ep.decode_step_s, e32.decode_step_s + ep.decode_hop_s, 1e-12);
    assert_true(
        ppl_collective(&ctx.net, PPL_OP_SENDRECV, &g, 2048.0 * 8192.0 * 2.0, PPL_ALGO_AUTO, &r));
    assert_close(ep.prefill_s, e32.prefill_s + r.time_s, 1e-12);
    /* one stage's share of a prompt's prefill between the decode steps */
    assert_close(ep.prefill_share_s, e32.prefill_share_s / 2.0, 1e-12);
}

/*
 * DeepSeek-V3 in bf16 does not fit on one 8-GPU H100 server: 671,026,404,352
 * weights (the MTP module's 11.6e9 not loaded) x 2 B / 8 = 168 GB a GPU against
 * 0.9 x 80 GiB; the MLA latent is held whole on every
 * rank (70,272 B a token, not split by tp).
 */
static void test_deepseek_fit(void **state)
{
    (void)state;
    ppl_model m = test_model("deepseek-v3");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_serve_layout l = {.tp = 8, .batch = 4, .precision = PPL_PRECISION_BF16};
    ppl_serve_workload w = {.input_tokens = 1000, .output_tokens = 1000};
    ppl_serve_estimate e;
    ppl_serve_cost(&ctx, &l, &w, &e);
    assert_false(e.fits);
    assert_true(e.kv_bytes == 4.0 * 2000.0 * 70272.0);
    assert_true(e.weight_bytes == 671026404352.0 * 2.0 / 8.0);
    assert_close(e.capacity_bytes, 0.9 * 80.0 * 1073741824.0, 1e-12);
}

/*
 * Expert parallelism: DeepSeek-V3 in fp8 over 32 H100 (4 servers), attention at
 * tp 1 in 32 groups of 64 sequences, 2,000-token prompts and 1,000-token
 * responses.  The routed experts, 58 MoE layers x 256 x 3 x 7,168 x 2,048 =
 * 653,908,770,816 weights, spread 8 a GPU; the other 17,117,633,536 on every
 * GPU (the MTP module not loaded):
 *   17,117,633,536 + 653,908,770,816 / 32 = 37,552,282,624 B a GPU,
 * and each group's cache on its GPU, the latent whole (61 x 576 x 1 B a token):
 *   64 x 3,000 x 35,136 = 6,746,112,000 B.
 * Where tp 8 alone holds 671e9 / 8 B = 84 GB a GPU, above 0.9 x 80 GiB.
 * A decode step reads, per GPU, the weights but the embedding's table
 * (17,117,633,536 - 129,280 x 7,168 = 16,190,954,496), its 8 experts in every
 * MoE layer (the replica's 2,048 tokens leave none of the 256 untouched: 1 -
 * (1 - 8/256)^2048 = 1 - 5e-29) and its group's cache at the mean context of
 * 2,500 tokens, 5,621,760,000 B: 42,247,363,584 B.  Its attention, MLA
 * absorbed (DeepSeek-V2 Sec. 2.1.3), costs 2 x 2,500 x 128 heads x (576 + 512)
 * x 61 = 42,475,520,000 FLOPs a token beside 2 x 37e9 of weights.
 * Each MoE layer dispatches each GPU's 64 tokens (7,168 B each, fp8) and combines
 * them back (bf16), each of a token's 8 copies a message of its own (DeepEP's
 * low-latency kernels), 3/4 of them to the other 3 servers: 64 x 8 x 0.75 x
 * 7,168 x (1 + 2) B = 8,257,536 B at the NIC's 50 GB/s, 165 us a layer at least,
 * 58 layers: 9.58 ms or more.
 * The replica decodes 32 x 64 sequences: tokens/s = 2,048 / TPOT.
 */
static void test_expert_parallel(void **state)
{
    (void)state;
    ppl_model m = test_model("deepseek-v3");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_serve_layout l = {.tp = 1, .ep = 32, .batch = 64, .precision = PPL_PRECISION_FP8};
    ppl_serve_workload w = {.input_tokens = 2000, .output_tokens = 1000};
    assert_int_equal(ppl_serve_replica_gpus(&l), 32);
    assert_int_equal(ppl_serve_replica_batch(&l), 2048);
    ppl_serve_estimate e;
    ppl_serve_cost(&ctx, &l, &w, &e);
    assert_true(e.weight_bytes == 37552282624.0);
    assert_true(e.kv_bytes == 6746112000.0);
    assert_true(e.fits);
    assert_true(e.decode_read_bytes == 42247363584.0);
    assert_close(e.decode_memory_s, 42247363584.0 / (3.35e12 * ctx.eff.hbm), 1e-12);
    /* at least the GEMMs and the attention at their fp8 and bf16 peaks */
    assert_true(e.decode_compute_s > 64.0 * (2.0 * 37e9 / 1979e12 + 42475520000.0 / 989e12));
    assert_true(e.decode_ep_s >= 58.0 * 8257536.0 / 50e9);
    assert_close(e.decode_step_s,
                 fmax(e.decode_memory_s, e.decode_compute_s) + e.decode_tp_s + e.decode_ep_s,
                 1e-12);
    assert_true(e.decode_tp_s == 0.0); /* tp 1 */
    assert_close(e.tokens_per_s, 2048.0 / e.tpot_s, 1e-12);
    /* tp 8 alone holds too much */
    ppl_serve_layout tp8 = {.tp = 8, .batch = 1, .precision = PPL_PRECISION_FP8};
    ppl_serve_cost(&ctx, &tp8, &w, &e);
    assert_false(e.fits);
}

/*
 * The decode's all-to-alls against DeepEP's measured low-latency kernels
 * (deepseek-ai/DeepEP README, "Low-latency kernels with pure RDMA": H800 and
 * 400 Gb/s ConnectX-7, 128 tokens a rank, hidden 7,168, top-8, FP8 dispatch and
 * BF16 combine): at EP 64 a dispatch takes 173 us and a combine 314 us, so
 * DeepSeek-V3's 58 MoE layers take 58 x 487 us = 28.2 ms a step.  Each copy is a
 * message of its own: a rank sends 128 x 8 x 7,168 B (fp8) and gets 2 B a value
 * back, 7.3 + 14.7 MB at the NIC's 50 GB/s, 441 us a layer before latency, and
 * 7/8 of the copies leave the server.  The costing must land within 25% of the
 * measured figure; a token sent once a server (the normal kernels') would not.
 */
static void test_expert_all_to_alls(void **state)
{
    (void)state;
    ppl_model m = test_model("deepseek-v3");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_serve_layout l = {.tp = 1, .ep = 64, .batch = 128, .precision = PPL_PRECISION_FP8};
    ppl_serve_workload w = {.input_tokens = 2000, .output_tokens = 100};
    ppl_serve_estimate e;
    ppl_serve_cost(&ctx, &l, &w, &e);
    const double measured = 58.0 * (173e-6 + 314e-6);
    assert_true(fabs(e.decode_ep_s / measured - 1.0) < 0.25);
    /* and no faster than the bytes at the NIC, 7/8 of them off the server */
    assert_true(e.decode_ep_s >= 58.0 * 0.875 * 128.0 * 8.0 * 7168.0 * 3.0 / 50e9);
}

/*
 * Prefill in chunks: 128-token prompts of Qwen3-235B-A22B at tp 8, fp8, batch
 * 4,096.  An engine prefills 8,192 / 128 = 64 of them together.  Alone, a
 * prompt's 1,024 token-expert pairs (128 tokens x top-8) leave each of the 128
 * experts about 8 tokens, so the forward reads every expert's weights for little
 * work; 64 together read them once for 64 times the work.  A prompt's share of
 * the chunk is then far below its prefill alone (under a quarter of it here:
 * 1.4 ms against 6.0 ms),
 * and never below its GEMM FLOPs at the fp8 peak: 2 x 22.2e9 active weights x
 * 128 tokens / (8 x 1,979 TFLOP/s) = 0.36 ms.
 */
static void test_prefill_chunk(void **state)
{
    (void)state;
    ppl_model m = test_model("qwen3-235b-a22b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_serve_layout l = {.tp = 8, .batch = 4096, .precision = PPL_PRECISION_FP8};
    ppl_serve_workload w = {.input_tokens = 128, .output_tokens = 128};
    ppl_serve_estimate e;
    ppl_serve_cost(&ctx, &l, &w, &e);
    assert_true(e.prefill_prompts == 64);
    assert_true(e.prefill_share_s < e.prefill_s / 4.0);
    assert_true(e.prefill_share_s > 2.0 * ctx.figures.params_active * 128.0 / (8.0 * 1979e12));
    /* a batch smaller than the chunk's prompts prefills the batch */
    l.batch = 16;
    ppl_serve_cost(&ctx, &l, &w, &e);
    assert_true(e.prefill_prompts == 16);
    /* a prompt longer than the chunk goes alone */
    w.input_tokens = 20000;
    ppl_serve_cost(&ctx, &l, &w, &e);
    assert_true(e.prefill_prompts == 1 && e.prefill_share_s == e.prefill_s);
}

/*
 * Prefill/decode disaggregation: Llama 3 70B on 16 H100, 2,048-token prompts and
 * 512-token responses, prefill replicas of tp 2 and decode replicas of tp 8 at a
 * batch of 128.  A prefill replica takes rp = 1 / prefill share prompts a second,
 * a decode replica rd = 128 / (512 x decode step) requests; P prefill and D decode
 * replicas (2P + 8D <= 16) serve min(P rp, D rd) requests a second, and the split
 * chosen is the best of every whole one.  Each decode GPU receives its shard of a
 * prompt's cache: 2,048 tokens x 327,680 B / 8 (the 8 KV heads over tp 8) =
 * 83,886,080 B, at no more than its NIC's 50 GB/s: at least 1.68 ms.  The decode
 * replicas prefill nothing: TPOT is the decode step.
 */
static void test_disaggregated(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_serve_layout d = {.tp = 8, .batch = 128, .precision = PPL_PRECISION_BF16};
    ppl_serve_workload w = {.input_tokens = 2048, .output_tokens = 512};
    ppl_serve_disagg r;
    const ppl_serve_layout p = ppl_serve_prefill_layout(2, 0, PPL_PRECISION_BF16, &w);
    ppl_serve_estimate pe, de;
    ppl_serve_cost(&ctx, &p, &w, &pe);
    ppl_serve_cost(&ctx, &d, &w, &de);
    assert_true(ppl_serve_disagg_cost(&ctx, &p, &pe, &d, &de, &w, 16, &r));
    const double rp = 1.0 / r.prefill.prefill_share_s;
    const double rd = 128.0 / (512.0 * r.decode.decode_step_s);
    double best = 0.0;
    for (int64_t P = 1; 2 * P < 16; P++)
        for (int64_t D = 1; 2 * P + 8 * D <= 16; D++)
            best = fmax(best, fmin((double)P * rp, (double)D * rd));
    assert_close(r.tokens_per_s, 512.0 * best, 1e-12);
    assert_close(r.tokens_per_s,
                 512.0 * fmin((double)r.prefill_replicas * rp, (double)r.decode_replicas * rd),
                 1e-12);
    assert_true(2 * r.prefill_replicas + 8 * r.decode_replicas <= 16);
    assert_true(r.tpot_s == r.decode.decode_step_s);
    assert_true(r.kv_transfer_s >= 83886080.0 / 50e9);
    assert_close(r.ttft_s, r.prefill.prefill_s + r.kv_transfer_s, 1e-15);
    /* a replica of each kind needs at least 10 GPUs here */
    assert_false(ppl_serve_disagg_cost(&ctx, &p, &pe, &d, &de, &w, 9, &r));
}

/*
 * Tensor parallelism across servers (an engine of tp 16 on 8-GPU servers, as vLLM
 * runs it): the two all-reduces a layer (160 for Llama 3 70B) run over two whole
 * servers, on the network: 64 x 8,192 x 2 B each at a batch of 64.
 */
static void test_tp_across_servers(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_NEMO_2025);
    ppl_serve_workload w = {.input_tokens = 2048, .output_tokens = 512};
    ppl_serve_layout l = {.tp = 16, .batch = 64, .precision = PPL_PRECISION_BF16};
    ppl_serve_estimate e;
    ppl_serve_cost(&ctx, &l, &w, &e);
    ppl_group g;
    ppl_coll r;
    ppl_group_servers(&ctx.net, 2, 8, &g);
    assert_true(
        ppl_collective(&ctx.net, PPL_OP_ALLREDUCE, &g, 64.0 * 8192.0 * 2.0, PPL_ALGO_AUTO, &r));
    assert_close(e.decode_tp_s, 160.0 * r.time_s, 1e-12);
    assert_true(e.weight_bytes == ctx.figures.params_total * 2.0 / 16.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kv_bytes),           cmocka_unit_test(test_experts_touched),
        cmocka_unit_test(test_decode_llama3_8b),   cmocka_unit_test(test_tp_split),
        cmocka_unit_test(test_deepseek_fit),       cmocka_unit_test(test_prefill_chunk),
        cmocka_unit_test(test_disaggregated),      cmocka_unit_test(test_tp_across_servers),
        cmocka_unit_test(test_pipeline_stages),    cmocka_unit_test(test_expert_parallel),
        cmocka_unit_test(test_expert_all_to_alls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
