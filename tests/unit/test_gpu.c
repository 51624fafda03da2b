/*
 * test_gpu.c - the GPU catalogue's datasheet figures (gpu.c), topology generate's
 * AMD meshes, and the block-scaled precisions (mxfp8, nvfp4): which parts take
 * them, their GEMM time and their memory.
 *
 * Every expected figure is derived here from the datasheet's own numbers (rack or
 * node totals divided per GPU, sparse figures halved), not copied from gpu.c.
 */
#include <jansson.h>

#include "testutil.h"

static const ppl_gpu_spec *spec(const char *kind)
{
    const ppl_gpu_spec *s = ppl_gpu_lookup(kind);
    if (!s)
        fail_msg("no GPU kind %s", kind);
    return s;
}

/* NVIDIA HGX B300 table: 8 GPUs; FP16/BF16 36 and FP8 72 PFLOP/s with sparsity,
 * FP4 108 dense; 2.3 TB HBM3e; NVLink 1.8 TB/s bidirectional a GPU; 8 ConnectX-8
 * at 800 Gb/s. */
static void test_b300(void **state)
{
    (void)state;
    const ppl_gpu_spec *s = spec("B300");
    assert_close(s->bf16_flops, 36e15 / 8.0 / 2.0, 1e-12); /* 2.25 PFLOP/s dense */
    assert_close(s->fp8_flops, 72e15 / 8.0 / 2.0, 1e-12);  /* 4.5 */
    assert_close(s->mxfp8_flops, s->fp8_flops, 1e-12);     /* MXFP8 at the FP8 rate */
    assert_close(s->nvfp4_flops, 108e15 / 8.0, 1e-12);     /* 13.5 */
    assert_close(s->memory_bytes, 2.3e12 / 8.0, 2e-3);     /* 287.5 GB, listed as 288 */
    assert_close(s->nvlink_bps, 1.8e12 / 2.0, 1e-12);      /* 900 GB/s per direction */
    assert_int_equal(s->domain_gpus, 8);
    assert_close(s->nic_bps, 800e9 / 8.0, 1e-12); /* 100 GB/s */
    assert_false(s->mesh);
    assert_contains(s->source, "HGX B300");
    assert_contains(s->source, "not confirmed"); /* the HBM bandwidth */
}

/* NVIDIA GB300 NVL72 datasheet: 72 GPUs; FP4 1,080 PFLOP/s dense, FP8 720 and
 * FP16/BF16 360 with sparsity; 20 TB HBM3e at 576 TB/s; 130 TB/s NVLink; 72
 * ConnectX-8 at 800 Gb/s. */
static void test_gb300(void **state)
{
    (void)state;
    const ppl_gpu_spec *s = spec("GB300");
    assert_close(s->bf16_flops, 360e15 / 72.0 / 2.0, 1e-12); /* 2.5 */
    assert_close(s->fp8_flops, 720e15 / 72.0 / 2.0, 1e-12);  /* 5 */
    assert_close(s->nvfp4_flops, 1080e15 / 72.0, 1e-12);     /* 15 */
    assert_close(s->memory_bytes, 20e12 / 72.0, 1e-3);       /* 277.8 GB */
    assert_close(s->hbm_bandwidth_bps, 576e12 / 72.0, 1e-12);
    /* 130 TB/s over 72 GPUs is 1.8 TB/s bidirectional, 900 GB/s a direction */
    assert_close(s->nvlink_bps, 130e12 / 72.0 / 2.0, 1e-2);
    assert_int_equal(s->domain_gpus, 72);
    assert_close(s->nic_bps, 100e9, 1e-12);
    assert_contains(s->source, "GB300 NVL72 datasheet");
}

/* The Blackwell rows' FP4 peaks: DGX B200 144 PFLOP/s FP4 over 8 GPUs and GB200
 * NVL72 1,440 over 72, both with sparsity. */
static void test_blackwell_fp4(void **state)
{
    (void)state;
    assert_close(spec("B200")->nvfp4_flops, 144e15 / 8.0 / 2.0, 1e-12);    /* 9 */
    assert_close(spec("GB200")->nvfp4_flops, 1440e15 / 72.0 / 2.0, 1e-12); /* 10 */
    assert_close(spec("GB200")->mxfp8_flops, spec("GB200")->fp8_flops, 1e-12);
    assert_contains(spec("B200")->source, "DGX B200 datasheet");
    assert_contains(spec("GB200")->source, "GB200 NVL72 datasheet");
    /* Hopper and Ampere scale no blocks */
    assert_true(spec("H100")->mxfp8_flops == 0 && spec("H100")->nvfp4_flops == 0);
    assert_true(spec("A100")->fp8_flops == 0 && spec("A100")->mxfp8_flops == 0);
}

/* AMD: peak = CUs x dense FLOP per CU per clock x clock.  MI300X/MI325X: 304 CUs,
 * 4,096 FP8 FLOP/clock a CU (2,048 BF16), 2.1 GHz; MI355X: 256 CUs, 8,192 FP8
 * (ISSCC 2026), 2.4 GHz; BF16 half, MXFP4 twice.  Infinity Fabric: 7 links,
 * 128 GB/s bidirectional each on CDNA 3, 153.6 on CDNA 4. */
static void test_amd(void **state)
{
    (void)state;
    const ppl_gpu_spec *x = spec("MI300X"), *y = spec("MI325X"), *z = spec("MI355X");
    assert_close(x->fp8_flops, 304.0 * 4096.0 * 2.1e9, 1e-4);  /* 2,614.9 TFLOP/s */
    assert_close(x->bf16_flops, 304.0 * 2048.0 * 2.1e9, 1e-4); /* 1,307.4 */
    assert_close(x->memory_bytes, 192e9, 1e-12);
    assert_close(x->hbm_bandwidth_bps, 5.3e12, 1e-12);
    assert_close(x->nvlink_bps, 7.0 * 128e9 / 2.0, 1e-12); /* 448 GB/s per direction */
    assert_true(x->mesh);
    assert_true(x->mxfp8_flops == 0 && x->nvfp4_flops == 0 && x->mxfp4_flops == 0);
    assert_contains(x->source, "MI300X data sheet");
    assert_close(y->fp8_flops, x->fp8_flops, 1e-12); /* the same CDNA 3 compute */
    assert_close(y->memory_bytes, 256e9, 1e-12);
    assert_close(y->hbm_bandwidth_bps, 6e12, 1e-12);
    assert_true(y->mesh);
    assert_contains(y->source, "MI325X data sheet");
    assert_close(z->fp8_flops, 256.0 * 8192.0 * 2.4e9, 1e-4); /* 5,033.2 */
    assert_close(z->bf16_flops, z->fp8_flops / 2.0, 1e-4);
    assert_close(z->mxfp8_flops, z->fp8_flops, 1e-12);
    assert_close(z->mxfp4_flops, 2.0 * z->fp8_flops, 1e-4);
    assert_true(z->nvfp4_flops == 0); /* MXFP4, not NVFP4 */
    assert_close(z->memory_bytes, 288e9, 1e-12);
    assert_close(z->hbm_bandwidth_bps, 8e12, 1e-12);
    assert_close(z->nvlink_bps, 7.0 * 153.6e9 / 2.0, 1e-12); /* 537.6 */
    assert_contains(z->source, "MI355X data sheet");
    assert_contains(z->source, "not confirmed"); /* the per-link figure */
    assert_contains(z->nic, "Pollara 400");
}

/* A full name wins over a kind it begins with. */
static void test_lookup(void **state)
{
    (void)state;
    assert_string_equal(spec("B200-GB200-NVL72-186GB")->kind, "GB200");
    assert_string_equal(spec("B300-GB300-NVL72")->kind, "GB300");
    assert_string_equal(spec("B300-SXM-288GB")->kind, "B300");
    assert_string_equal(spec("b300")->kind, "B300");
    assert_string_equal(spec("mi355x")->kind, "MI355X");
    assert_null(ppl_gpu_lookup("MI300"));
}

/* Servers enough for one NVLink domain of the kind (18 trays of 4 for NVL72). */
static ppl_topology generated(const char *gpu, int64_t gpus_per_server)
{
    int64_t domain = spec(gpu)->domain_gpus;
    ppl_topogen_opts o;
    ppl_topology t;
    ppl_error err;
    ppl_topogen_opts_init(&o);
    o.gpu = gpu;
    o.servers = domain > gpus_per_server ? domain / gpus_per_server : 2;
    o.gpus_per_server = gpus_per_server;
    o.rails = gpus_per_server;
    o.nic_bandwidth_bps = 50e9;
    o.leaf_servers = o.servers;
    if (ppl_topogen(&o, NULL, &t, &err) != PPL_OK)
        fail_msg("%s: %s", gpu, err.message);
    return t;
}

/* topology generate writes the AMD kinds as meshes: 8 GPUs, 7 links of 64 GB/s
 * a direction (448); 4 GPUs a server, 3 links (192).  NVIDIA kinds stay switched. */
static void test_generate_mesh(void **state)
{
    (void)state;
    ppl_topology t = generated("MI300X", 8);
    assert_true(t.nvlink.mesh);
    assert_int_equal(t.nvlink.domain_gpus, 8);
    assert_close(t.nvlink.bandwidth_bps, 7.0 * 64e9, 1e-12);
    t = generated("MI300X", 4);
    assert_int_equal(t.nvlink.domain_gpus, 4);
    assert_close(t.nvlink.bandwidth_bps, 3.0 * 64e9, 1e-12);
    t = generated("MI355X", 8);
    assert_close(t.nvlink.bandwidth_bps, 7.0 * 76.8e9, 1e-12);
    assert_close(t.gpu.flops[PPL_PRECISION_MXFP4], 2.0 * 256.0 * 8192.0 * 2.4e9, 1e-4);
    t = generated("B300", 8);
    assert_false(t.nvlink.mesh);
    assert_close(t.gpu.flops[PPL_PRECISION_NVFP4], 13.5e15, 1e-12);
    assert_close(t.gpu.flops[PPL_PRECISION_MXFP8], 4.5e15, 1e-12);
}

/* --precision on a part without the format: a usage error naming precision. */
static void test_precision_refused(void **state)
{
    (void)state;
    ppl_error err;
    ppl_topology h100 = generated("H100", 8), mi355 = generated("MI355X", 8);
    ppl_topology b300 = generated("B300", 8);
    assert_int_equal(ppl_precision_check(PPL_PRECISION_NVFP4, &h100, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "precision");
    assert_string_equal(err.message,
                        "nvfp4 is not supported by H100-SXM5-80GB (no nvfp4 peak in the topology)");
    assert_int_equal(ppl_precision_check(PPL_PRECISION_MXFP8, &h100, &err), PPL_EUSAGE);
    assert_int_equal(ppl_precision_check(PPL_PRECISION_FP8, &h100, &err), PPL_OK);
    /* MI355X has MXFP4, not NVFP4: refused, saying so */
    assert_int_equal(ppl_precision_check(PPL_PRECISION_NVFP4, &mi355, &err), PPL_EUSAGE);
    assert_contains(err.message, "it has MXFP4, not NVFP4");
    assert_int_equal(ppl_precision_check(PPL_PRECISION_MXFP8, &mi355, &err), PPL_OK);
    assert_int_equal(ppl_precision_check(PPL_PRECISION_NVFP4, &b300, &err), PPL_OK);
    assert_int_equal(ppl_precision_check(PPL_PRECISION_MXFP8, &b300, &err), PPL_OK);
}

/* Bytes per element with block scales: MXFP8 1 + 1/32 (an 8-bit scale per 32
 * elements, OCP MX v1.0), NVFP4 1/2 + 1/16 (an FP8 scale per 16). */
static void test_gemm_bytes(void **state)
{
    (void)state;
    assert_close(ppl_precision_gemm_bytes(PPL_PRECISION_FP8), 1.0, 0);
    assert_close(ppl_precision_gemm_bytes(PPL_PRECISION_MXFP8), 33.0 / 32.0, 0);
    assert_close(ppl_precision_gemm_bytes(PPL_PRECISION_NVFP4), 9.0 / 16.0, 0);
    assert_close(ppl_precision_gemm_bytes(PPL_PRECISION_BF16), 2.0, 0);
    assert_true(ppl_precision_low(PPL_PRECISION_NVFP4) && !ppl_precision_low(PPL_PRECISION_FP16));
}

/* The low-precision weight cache is two copies of each GEMM weight at the
 * precision's bytes: over bf16, mxfp8 adds 33/32 of what fp8 adds, nvfp4 9/16. */
static void test_weight_cache(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-8b");
    ppl_topology t = generated("GB300", 4);
    ppl_memory_opts o;
    ppl_memory_opts_init(&o);
    ppl_config c = test_config(8, 2, 1, 1, 8, &m);
    double w[5];
    const ppl_precision p[5] = {PPL_PRECISION_BF16, PPL_PRECISION_FP8, PPL_PRECISION_MXFP8,
                                PPL_PRECISION_NVFP4, PPL_PRECISION_FP16};
    for (int i = 0; i < 5; i++) {
        ppl_memory mem;
        c.precision = p[i];
        ppl_memory_stage(&m, &t, &c, &o, 0, &mem);
        w[i] = mem.weights;
    }
    assert_true(w[1] > w[0]);
    assert_close(w[2] - w[0], (w[1] - w[0]) * 33.0 / 32.0, 1e-9);
    assert_close(w[3] - w[0], (w[1] - w[0]) * 9.0 / 16.0, 1e-9);
}

/* GEMM time at the precision's own peak: on GB300 (2.5 / 5 / 15 PFLOP/s for
 * bf16 / fp8 / nvfp4) with every GEMM efficiency 0.5 and no width penalty, the
 * attention and element-wise parts are equal, so forward(bf16) - forward(fp8) =
 * F/(2.5e15 x 0.5) - F/(5e15 x 0.5) = F/2.5e15 and forward(fp8) - forward(nvfp4)
 * = F/2.5e15 - F/7.5e15 = F/3.75e15, F the layer's GEMM FLOPs; mxfp8 = fp8. */
static void test_gemm_time(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-8b");
    ppl_topology t = generated("GB300", 4);
    ppl_config c = test_config(8, 2, 1, 1, 8, &m);
    c.flash_attention = true;
    ppl_gpu_efficiency e = {
        .gemm = 0.5, .gemm_fp8 = 0.5, .width_half = 0.0, .attention = 0.5, .bmm = 0.5, .hbm = 0.8};
    ppl_layer_work w;
    ppl_layer_work_of(&m, &c, false, &w);
    double fwd[4];
    const ppl_precision p[4] = {PPL_PRECISION_BF16, PPL_PRECISION_FP8, PPL_PRECISION_MXFP8,
                                PPL_PRECISION_NVFP4};
    for (int i = 0; i < 4; i++) {
        ppl_layer_time lt;
        c.precision = p[i];
        ppl_layer_time_of(&m, &t, &c, &e, false, &lt);
        fwd[i] = lt.forward_s;
    }
    assert_close(fwd[0] - fwd[1], w.gemm_flops / 2.5e15, 1e-9);
    assert_close(fwd[1] - fwd[3], w.gemm_flops / 3.75e15, 1e-9);
    assert_close(fwd[2], fwd[1], 1e-12);
}

/* The stack's attention kernels set a layer's attention time: Megatron-Core's and
 * NeMo's profiles run Transformer Engine's fused attention, Megatron-LM 2023 and
 * llm-foundry FlashAttention-2 (stack.c).  On H100 at 4,096 tokens and heads 128
 * wide (llama3-8b at its 8,192 tokens over cp 2), the fused forward takes 294/591
 * of FlashAttention-2's and the backward 294/474 of it (test_fused_attention). */
static void test_stack_attention(void **state)
{
    (void)state;
    assert_int_equal(ppl_stack_attention_kernel(PPL_STACK_NEMO_2025), PPL_ATTN_FUSED);
    assert_int_equal(ppl_stack_attention_kernel(PPL_STACK_MEGATRON_CORE), PPL_ATTN_FUSED);
    assert_int_equal(ppl_stack_attention_kernel(PPL_STACK_MEGATRON_LM_2023), PPL_ATTN_FA2);
    assert_int_equal(ppl_stack_attention_kernel(PPL_STACK_FSDP), PPL_ATTN_FA2);
    ppl_model m = test_model("llama3-8b");
    ppl_topology t = generated("H100", 4);
    ppl_config c = test_config(8, 1, 1, 1, 4, &m);
    c.cp = 2;
    c.flash_attention = true;
    ppl_gpu_efficiency e = {
        .gemm = 0.5, .gemm_fp8 = 0.5, .width_half = 0.0, .attention = 0.3, .bmm = 0.5, .hbm = 0.8};
    ppl_layer_time fa2, fused;
    e.attention_kernel = PPL_ATTN_FA2;
    ppl_layer_time_of(&m, &t, &c, &e, false, &fa2);
    e.attention_kernel = PPL_ATTN_FUSED;
    ppl_layer_time_of(&m, &t, &c, &e, false, &fused);
    assert_close(fused.attention_s, fa2.attention_s * 294.0 / 591.0, 1e-9);
    assert_close(fused.attention_backward_s, fa2.attention_backward_s * 294.0 / 474.0, 1e-9);
    assert_close(fa2.attention_backward_s, 2.5 * fa2.attention_s, 1e-9);
}

/* Blackwell Ultra's GEMMs run at b300_sustained times Blackwell's fractions (the
 * same datasheet peaks as GB200, compute.c); every other figure is Blackwell's:
 * with b200_gemm 0.5, b200_gemm_fp8 0.4 and b300_sustained 1.2, GB300's are 0.6
 * and 0.48, B300's the same, GB200's 0.5 and 0.4; at 2.0 the fraction stops at 1. */
static void test_ultra_gemms(void **state)
{
    (void)state;
    ppl_constants k = *ppl_constants_committed();
    k.b200_gemm = 0.5;
    k.b200_gemm_fp8 = 0.4;
    k.b300_sustained = 1.2;
    ppl_gpu_efficiency gb300, b300, gb200;
    ppl_topology t = generated("GB300", 4);
    ppl_gpu_efficiency_for(&t, &k, &gb300);
    t = generated("B300", 4);
    ppl_gpu_efficiency_for(&t, &k, &b300);
    t = generated("GB200", 4);
    ppl_gpu_efficiency_for(&t, &k, &gb200);
    assert_close(gb300.gemm, 0.6, 1e-12);
    assert_close(gb300.gemm_fp8, 0.48, 1e-12);
    assert_close(b300.gemm, 0.6, 1e-12);
    assert_close(gb200.gemm, 0.5, 1e-12);
    assert_close(gb200.gemm_fp8, 0.4, 1e-12);
    assert_close(gb300.attention, gb200.attention, 1e-12);
    assert_close(gb300.hbm, 7.14 / 8.0, 1e-12); /* its own streaming share (gpu.c) */
    k.b300_sustained = 2.0;
    t = generated("GB300", 4);
    ppl_gpu_efficiency_for(&t, &k, &gb300);
    assert_close(gb300.gemm, 1.0, 1e-12);
}

/* Unfused attention is a roofline.  A GPT layer of h 4096, 32 heads (d 128), one
 * sequence of 2048 tokens, tp 1: QK^T and the weighted sum do
 * 2 x 2048 x 2048 x (4096 + 4096) = 68.7 GFLOP, and their scores, 32 x 2048^2 =
 * 134.2M, are written once and read back once, 2 B each: 537 MB.  On H100
 * (989 TFLOP/s bf16, 3.35 TB/s) at bmm 1.0 and hbm 0.8 the FLOPs take 69.5 us and
 * the bytes 200 us: the bytes set the time.  On A100 (312 TFLOP/s, 2.04 TB/s) at
 * bmm 0.5 the FLOPs take 440 us and the bytes 329 us: the FLOPs do.  Flash
 * attention keeps the scores on chip and is not bounded by them: half the FLOPs
 * (causal) at the attention efficiency, which at 2,048 tokens is 265/294 of its
 * value at 4,096 (test_attention_curve).
 * The softmax and dropout between the GEMMs (element-wise, per score): forward
 * 4 B and 5 B, backward 6 B (read the gradient and the probabilities, write one)
 * and 5 B (read the gradient and the mask, write one), not twice the forward's:
 * backward - 2 x forward = (11 - 2 x 9) B x 134.2M scores at HBM, all else being
 * twice the forward's (bf16, no recomputation). */
static void test_unfused_roofline(void **state)
{
    (void)state;
    ppl_model m = test_gpt(1, 4096, 32, 2048);
    ppl_config c = test_config(8, 1, 1, 1, 8, &m);
    const double flops = 2.0 * 2048.0 * 2048.0 * 8192.0, bytes = 4.0 * 32.0 * 2048.0 * 2048.0;
    ppl_layer_time lt;
    ppl_gpu_efficiency e = {
        .gemm = 0.5, .gemm_fp8 = 0.5, .width_half = 0.0, .attention = 0.5, .bmm = 1.0, .hbm = 0.8};
    ppl_topology h = generated("H100", 8);
    ppl_layer_time_of(&m, &h, &c, &e, false, &lt);
    assert_close(lt.attention_s, bytes / (h.gpu.hbm_bandwidth_bps * 0.8), 1e-12);
    const double scores = 32.0 * 2048.0 * 2048.0;
    assert_close(lt.backward_s - 2.0 * lt.forward_s,
                 (11.0 - 18.0) * scores / (h.gpu.hbm_bandwidth_bps * 0.8), 1e-9);
    assert_true(lt.attention_s > 2.5 * flops / h.gpu.flops[PPL_PRECISION_BF16]);
    c.flash_attention = true;
    ppl_layer_time_of(&m, &h, &c, &e, false, &lt);
    assert_close(lt.attention_s,
                 0.5 * flops / (h.gpu.flops[PPL_PRECISION_BF16] * 0.5 * 265.0 / 294.0), 1e-12);
    c.flash_attention = false;
    e.bmm = 0.5;
    ppl_topology a = generated("A100", 8);
    ppl_layer_time_of(&m, &a, &c, &e, false, &lt);
    assert_close(lt.attention_s, flops / (a.gpu.flops[PPL_PRECISION_BF16] * 0.5), 1e-12);
    assert_true(lt.attention_s > bytes / (a.gpu.hbm_bandwidth_bps * 0.8));
}

/* The output layer and its loss, one microbatch of one 2,048-token sequence on
 * H100 (989 TFLOP/s bf16, 3.35 TB/s) at gemm 0.5 and hbm 0.8, tp 2: vocabulary
 * 50,000, so each rank holds 25,000 logits a token, 51.2M in all.  Megatron's
 * cross entropy (cross_entropy.py at core_r0.8.0) passes over them in fp32:
 * forward the cast (2 + 4 B), the max (4), less the max (4 + 4), exp (4 + 4),
 * the sum (4), the division (4 + 4) = 38 B, backward the product with the
 * output gradient (4 + 4) and the cast back (4 + 2) = 14 B; fused (Transformer
 * Engine's Triton kernels) two reads of the 16-bit logits and a write of the
 * gradient forward (6 B), the gradient scaled in place backward (4 B).  The
 * logits' GEMM, 2 x 2048 x h x 25,000 FLOPs, is the same either way: the
 * difference of the two is the bytes' alone. */
static void test_loss_bytes(void **state)
{
    (void)state;
    ppl_model m = test_gpt(1, 4096, 32, 2048);
    m.vocab = 50000;
    ppl_config c = test_config(8, 2, 1, 1, 8, &m);
    ppl_gpu_efficiency e = {
        .gemm = 0.5, .gemm_fp8 = 0.5, .width_half = 0.0, .attention = 0.5, .bmm = 0.5, .hbm = 0.8};
    ppl_topology h = generated("H100", 8);
    ppl_layer_time unfused, fused;
    ppl_output_time_of(&m, &h, &c, &e, false, &unfused);
    ppl_output_time_of(&m, &h, &c, &e, true, &fused);
    const double logits = 2048.0 * 25000.0, bw = h.gpu.hbm_bandwidth_bps * 0.8;
    const double gemm = 2.0 * 2048.0 * 4096.0 * 25000.0 / (h.gpu.flops[PPL_PRECISION_BF16] * 0.5);
    assert_close(unfused.forward_s, gemm + 38.0 * logits / bw, 1e-12);
    assert_close(unfused.backward_s, 2.0 * gemm + 14.0 * logits / bw, 1e-12);
    assert_close(fused.forward_s, gemm + 6.0 * logits / bw, 1e-12);
    assert_close(fused.backward_s, 2.0 * gemm + 4.0 * logits / bw, 1e-12);
    /* the stacks: Megatron-Bridge and llm-foundry fuse it, Megatron-LM does not */
    ppl_stack_opts o;
    const ppl_constants *k = ppl_constants_committed();
    ppl_stack_opts_init(&o, PPL_STACK_NEMO_2025, k);
    assert_true(o.fused_loss);
    ppl_stack_opts_init(&o, PPL_STACK_FSDP, k);
    assert_true(o.fused_loss);
    ppl_stack_opts_init(&o, PPL_STACK_MEGATRON_CORE, k);
    assert_false(o.fused_loss);
    ppl_stack_opts_init(&o, PPL_STACK_MEGATRON_LM_2021, k);
    assert_false(o.fused_loss);
}

/* What estimate says of efficiencies no run measured. */
static void test_efficiency_note(void **state)
{
    (void)state;
    char note[1024];
    ppl_topology t = generated("B300", 8);
    assert_true(ppl_gpu_assumed(&t.gpu, PPL_PRECISION_BF16, note, sizeof note));
    /* the B300's row cites no host: the DGX H100's is assumed, and said */
    assert_string_equal(note, "B300-SXM-288GB: no measured run; GEMM efficiencies assumed the "
                              "measured Blackwell kinds' (B200, GB200, GB300), attention cuDNN's "
                              "measured share of peak (FlashAttention-2's: H100's); HBM "
                              "streaming share assumed "
                              "GB300's measured 89%; scale-up "
                              "efficiency: NCCL's Blackwell (SM100) figure, 40.1 of 50 GB/s a "
                              "link (topo.h); host link and memory assumed a DGX H100's (PCIe "
                              "5.0 x16; DGX H100: 2x Xeon Platinum 8480C, 8 channels DDR5-4800 "
                              "each (614.4 GB/s), 2 TB, for 8 GPUs)");
    assert_true(ppl_gpu_assumed(&t.gpu, PPL_PRECISION_NVFP4, note, sizeof note));
    assert_contains(note, "nvfp4 GEMMs assumed at the Blackwell kinds' measured fp8 efficiency");
    /* GB200 was measured in fp8 and mxfp8 (tests/data/runs.json): its 16-bit
     * kernels are still H100's, and said; mxfp8 is no assumption there */
    t = generated("GB200", 4);
    assert_true(ppl_gpu_assumed(&t.gpu, PPL_PRECISION_MXFP8, note, sizeof note));
    assert_contains(note, "GEMM efficiencies measured (16-bit, fp8, mxfp8); attention cuDNN");
    /* its HBM3e is B200's part: B200's streaming figure, said */
    assert_contains(note, "HBM streaming share assumed B200's measured 83%");
    assert_null(strstr(note, "mxfp8 GEMMs assumed"));
    t = generated("MI355X", 8);
    assert_true(ppl_gpu_assumed(&t.gpu, PPL_PRECISION_MXFP8, note, sizeof note));
    assert_contains(note, "MI355X-OAM-288GB: no measured run");
    assert_contains(note, "assumed the same on MI355X");
    /* a GPU parplan does not know: every per-GPU figure it falls back on is said */
    ppl_gpu custom = {0};
    ppl_gpu_set_name(&custom, "Custom-X1");
    assert_null(custom.spec);
    assert_true(ppl_gpu_assumed(&custom, PPL_PRECISION_BF16, note, sizeof note));
    assert_contains(note, "Custom-X1: no measured run");
    assert_contains(note, "a generic share of the link rate");
    assert_contains(note, "host link and memory assumed a DGX H100's");
    /* a host link the topology states is not an assumption */
    custom.host_link_bps = 64e9;
    assert_true(ppl_gpu_assumed(&custom, PPL_PRECISION_BF16, note, sizeof note));
    assert_false(strstr(note, "host link and memory assumed"));
    /* H100 was measured: nothing to say */
    t = generated("H100", 8);
    assert_false(ppl_gpu_assumed(&t.gpu, PPL_PRECISION_FP8, note, sizeof note));
    assert_string_equal(note, "");
}

/* Every row is whole: a kind and full name, a datasheet with its source, peaks
 * that only grow with narrower formats, a scale-up figure for every kind (the host
 * may be missing: said, not guessed), and no two rows that one name selects. */
/*
 * Flash attention's share of peak, relative to Hopper's at 4,096 tokens and heads
 * 128 wide, from FlashAttention-2's published forward + backward benchmark
 * (causal; TFLOP/s at 512 to 16K tokens: H100 d128 163, 221, 265, 294, 308, 328;
 * d64 141, 192, 232, 257, 273, 284; A100 d128 99, 133, 155, 173, 182, 189, of
 * 989 and 312 TFLOP/s):
 *   H100, 4K, 128:  1
 *   H100, 2K, 128:  265/294 = 0.9014
 *   H100, 6K, 128:  log2(6144) = 12.585, 0.585 of the way from 4K to 8K:
 *                   (294 + 0.585 x 14)/294 = 1.0279
 *   H100, 4K, 96:   half way between d64 and d128: (257 + 294)/2/294 = 0.9371
 *   H100, 32K, 128: held at 16K's 328/294 = 1.1156; 256 tokens at 512's 163/294
 *   A100, 4K, 128:  (173/312)/(294/989) = 1.8653
 *   B200: H100's curve (assumed)
 */
static void test_attention_curve(void **state)
{
    (void)state;
    assert_close(ppl_kernels_attention_ratio(PPL_KERNELS_HOPPER, 4096, 128, NULL), 1.0, 1e-12);
    assert_close(ppl_kernels_attention_ratio(PPL_KERNELS_HOPPER, 2048, 128, NULL), 0.9014, 1e-3);
    assert_close(ppl_kernels_attention_ratio(PPL_KERNELS_HOPPER, 6144, 128, NULL), 1.0279, 1e-3);
    assert_close(ppl_kernels_attention_ratio(PPL_KERNELS_HOPPER, 4096, 96, NULL), 0.9371, 1e-3);
    assert_close(ppl_kernels_attention_ratio(PPL_KERNELS_HOPPER, 32768, 128, NULL), 1.1156, 1e-3);
    assert_close(ppl_kernels_attention_ratio(PPL_KERNELS_HOPPER, 256, 128, NULL), 163.0 / 294.0,
                 1e-9);
    assert_close(ppl_kernels_attention_ratio(PPL_KERNELS_AMPERE, 4096, 128, NULL), 1.8653, 1e-3);
    assert_close(ppl_kernels_attention_ratio(PPL_KERNELS_BLACKWELL, 8192, 64, NULL),
                 ppl_kernels_attention_ratio(PPL_KERNELS_HOPPER, 8192, 64, NULL), 1e-12);
    const char *source = NULL;
    (void)ppl_kernels_attention_ratio(PPL_KERNELS_AMPERE, 4096, 128, &source);
    assert_non_null(source);
}

/*
 * Transformer Engine's fused attention from cudnn-frontend's benchmark
 * (gpu.c: TFLOP/s at 2K..32K tokens, forward and backward, heads 128 wide), as
 * ratios to FlashAttention-2 on H100 at 4,096 tokens and 128 (294 of 989):
 *   H100 (H200's figures), 4K:  forward 591/294 = 2.0102, backward 474/294 = 1.6122
 *   GB300, 8K:  forward (1856/2500)/(294/989) = 2.4974, backward 1435 -> 1.9309
 *   GB200, 6K:  log2(6144) - 11 = 1.585, 0.585 of the way from 4K to 8K:
 *               1408 + 0.585 x (1574 - 1408) = 1505.1 -> 2.0252
 *   H100, 1K:   2K's 484/294 times FlashAttention-2's 1K over 2K, 221/265: 1.3730
 *   H100, 4K, heads 64 wide: 591/294 times FlashAttention-2's 257/294: 1.7572
 *   A100 (no fused figures: Transformer Engine runs FlashAttention-2 on Ampere) and
 *   the FlashAttention-2 kernel anywhere: FlashAttention-2's ratio, both passes.
 */
static void test_fused_attention(void **state)
{
    (void)state;
    ppl_gpu h100, gb300, gb200, a100;
    ppl_gpu_from_spec(ppl_gpu_lookup("H100"), &h100);
    ppl_gpu_from_spec(ppl_gpu_lookup("GB300"), &gb300);
    ppl_gpu_from_spec(ppl_gpu_lookup("GB200"), &gb200);
    ppl_gpu_from_spec(ppl_gpu_lookup("A100"), &a100);
    double f, b;
    assert_int_equal(ppl_gpu_attention_ratios(&h100, PPL_ATTN_FUSED, 4096, 128, &f, &b),
                     PPL_ATTN_FUSED);
    assert_close(f, 2.0102, 1e-3);
    assert_close(b, 1.6122, 1e-3);
    ppl_gpu_attention_ratios(&gb300, PPL_ATTN_FUSED, 8192, 128, &f, &b);
    assert_close(f, 2.4974, 1e-3);
    assert_close(b, 1.9309, 1e-3);
    ppl_gpu_attention_ratios(&gb200, PPL_ATTN_FUSED, 6144, 128, &f, &b);
    assert_close(f, 2.0252, 1e-3);
    ppl_gpu_attention_ratios(&h100, PPL_ATTN_FUSED, 1024, 128, &f, &b);
    assert_close(f, 1.3730, 1e-3);
    ppl_gpu_attention_ratios(&h100, PPL_ATTN_FUSED, 4096, 64, &f, &b);
    assert_close(f, 1.7572, 1e-3);
    assert_int_equal(ppl_gpu_attention_ratios(&a100, PPL_ATTN_FUSED, 4096, 128, &f, &b),
                     PPL_ATTN_FA2);
    assert_close(f, ppl_kernels_attention_ratio(PPL_KERNELS_AMPERE, 4096, 128, NULL), 1e-12);
    assert_close(b, f, 1e-12);
    assert_int_equal(ppl_gpu_attention_ratios(&h100, PPL_ATTN_FA2, 4096, 128, &f, &b),
                     PPL_ATTN_FA2);
    assert_close(f, 1.0, 1e-12);
    assert_close(b, 1.0, 1e-12);
}

static void test_rows(void **state)
{
    (void)state;
    size_t n;
    const ppl_gpu_spec *rows = ppl_gpu_specs(&n);
    assert_true(n >= 12);
    for (size_t i = 0; i < n; i++) {
        const ppl_gpu_spec *r = &rows[i];
        assert_non_null(r->kind);
        assert_non_null(r->full_name);
        assert_true(strlen(r->source) > 40);
        assert_true(r->memory_bytes > 16e9 && r->bf16_flops > 1e14 && r->hbm_bandwidth_bps > 1e12);
        assert_true(r->fp8_flops == 0.0 || r->fp8_flops >= r->bf16_flops);
        assert_true(r->nvlink_bps > 0 && r->domain_gpus >= 8 && r->nic_bps > 0);
        assert_non_null(r->scaleup);
        assert_true(r->scaleup->efficiency > 0.5 && r->scaleup->efficiency <= 1.0);
        /* each row is what its own kind and full name select */
        assert_ptr_equal(ppl_gpu_lookup(r->kind), r);
        assert_ptr_equal(ppl_gpu_lookup(r->full_name), r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_attention_curve),
        cmocka_unit_test(test_fused_attention),
        cmocka_unit_test(test_stack_attention),
        cmocka_unit_test(test_ultra_gemms),
        cmocka_unit_test(test_b300),
        cmocka_unit_test(test_gb300),
        cmocka_unit_test(test_blackwell_fp4),
        cmocka_unit_test(test_amd),
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_generate_mesh),
        cmocka_unit_test(test_precision_refused),
        cmocka_unit_test(test_gemm_bytes),
        cmocka_unit_test(test_weight_cache),
        cmocka_unit_test(test_gemm_time),
        cmocka_unit_test(test_unfused_roofline),
        cmocka_unit_test(test_loss_bytes),
        cmocka_unit_test(test_efficiency_note),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
