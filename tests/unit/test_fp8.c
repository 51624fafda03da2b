/*
 * test_fp8.c - fp8 recipes and bf16 first/last layers against hand computations:
 * blockwise scales in the activation bytes, tensor-wise current scaling's amax
 * pass, the layers each stage keeps in bf16 and what they cost, and the rules
 * Megatron-Core applies (transformer_config.py:1528-1556).
 */
#include <dirent.h>

#include "testutil.h"

#include "cost/compute.h"
#include "cost/memory.h"
#include "cost/estimate.h"
#include "cost/stack.h"
#include "cost/stage.h"

/* A 4-layer GPT (h 1024, 16 heads, ffn 4096, s 2048) at tp 1, mbs 1, fp8. */
static ppl_model gpt;
static ppl_config fp8;

static int setup(void **state)
{
    (void)state;
    gpt = test_gpt(4, 1024, 16, 2048);
    fp8 = test_config(8, 1, 1, 1, 8, &gpt);
    fp8.precision = PPL_PRECISION_FP8;
    return 0;
}

/*
 * Blockwise: an fp32 scale per 1x128 tile, 1 + 4/128 = 1.03125 bytes an element.
 * A layer saves its four GEMM inputs for backward (Korthikanti Table 2, memory.c):
 * QKV and fc1 inputs s b h each, the projection input s b h, the fc2 input s b 4h,
 * 2048 x (3 x 1024 + 4096) = 14,680,064 elements, so blockwise keeps
 * 14,680,064 x 4/128 = 458,752 bytes more a layer than delayed or tensor-wise.
 */
static void test_blockwise_bytes(void **state)
{
    (void)state;
    ppl_memory_opts o;
    ppl_memory_opts_init(&o);
    ppl_config c = fp8;
    assert_close(ppl_config_gemm_bytes(&c), 1.0, 0);
    double delayed = ppl_activation_bytes_per_layer(&gpt, &c, &o, false);
    c.fp8_recipe = PPL_FP8_TENSORWISE;
    assert_close(ppl_activation_bytes_per_layer(&gpt, &c, &o, false), delayed, 1e-12);
    c.fp8_recipe = PPL_FP8_BLOCKWISE;
    assert_close(ppl_config_gemm_bytes(&c), 1.03125, 0);
    assert_close(ppl_activation_bytes_per_layer(&gpt, &c, &o, false) - delayed, 458752.0, 1e-9);
}

/*
 * Tensor-wise current scaling reads each fp8 GEMM input once more (2 bytes an
 * element) for its amax.  Forward: QKV, projection, fc1 and fc2 inputs,
 * 2048 x (1024 + 1024 + 1024 + 4096) = 14,680,064 elements, 29,360,128 bytes.
 * Backward: the gradients of QKV (3 x 1024 columns), projection (1024), fc1 (4096)
 * and fc2 (1024) outputs, 2048 x 9216 = 18,874,368 elements, 37,748,736 bytes.
 * Each at the GPU's HBM bandwidth x its measured streaming share (gpu.c).
 */
static void test_tensorwise_amax(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &gpt, &t, PPL_STACK_NEMO_2025);
    ppl_layer_time delayed, current;
    ppl_config c = fp8;
    ppl_layer_time_of(&gpt, &t, &c, &ctx.eff, false, &delayed);
    c.fp8_recipe = PPL_FP8_TENSORWISE;
    ppl_layer_time_of(&gpt, &t, &c, &ctx.eff, false, &current);
    const double bw = t.gpu.hbm_bandwidth_bps * ctx.eff.hbm;
    assert_close(current.forward_s - delayed.forward_s, 29360128.0 / bw, 1e-9);
    assert_close(current.backward_s - delayed.backward_s, 37748736.0 / bw, 1e-9);
    assert_close(current.wgrad_s, delayed.wgrad_s, 1e-12); /* the GEMMs themselves unchanged */
}

/*
 * bf16_layers N: the first N layers on stage 0 and the last N on the last stage;
 * on one stage both ends, at most its layers.  pp 2 of the 4 layers, N = 1:
 * stage 0 runs one layer in bf16, so its forward grows by one layer's bf16
 * forward less its fp8 forward; stage 1 by the same (it holds the last layer).
 */
static void test_bf16_layers(void **state)
{
    (void)state;
    ppl_config c = fp8;
    c.bf16_layers = 2;
    assert_int_equal(ppl_stage_bf16_layers(&c, 0, 4), 4); /* pp 1: both ends, 2 + 2 */
    c.bf16_layers = 3;
    assert_int_equal(ppl_stage_bf16_layers(&c, 0, 4), 4); /* at most the stage's layers */

    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &gpt, &t, PPL_STACK_NEMO_2025);
    ctx.stack.host_op_s = 0.0; /* the kernels alone: a layer this small waits on the host */
    c = test_config(8, 1, 2, 1, 8, &gpt);
    c.precision = PPL_PRECISION_FP8;
    c.fp8_recipe = PPL_FP8_TENSORWISE;
    c.bf16_layers = 1;
    assert_int_equal(ppl_stage_bf16_layers(&c, 0, 2), 1);
    assert_int_equal(ppl_stage_bf16_layers(&c, 1, 2), 1);
    ppl_estimate with, without;
    ppl_estimate_config(&ctx, &c, &with);
    ppl_config none = c;
    none.bf16_layers = 0;
    ppl_estimate_config(&ctx, &none, &without);
    ppl_layer_time lo, hi;
    ppl_layer_time_of(&gpt, &t, &none, &ctx.eff, false, &lo);
    ppl_config c16 = none;
    c16.precision = PPL_PRECISION_BF16;
    ppl_layer_time_of(&gpt, &t, &c16, &ctx.eff, false, &hi);
    assert_true(hi.forward_s > lo.forward_s);
    assert_int_equal(with.n_stage_passes, 2);
    for (int k = 0; k < 2; k++) {
        assert_close(with.stage_passes[k].passes.f_s - without.stage_passes[k].passes.f_s,
                     hi.forward_s - lo.forward_s, 1e-9);
        assert_close(with.stage_passes[k].passes.w_s - without.stage_passes[k].passes.w_s,
                     hi.wgrad_s - lo.wgrad_s, 1e-9);
    }
    assert_true(with.step_time_s > without.step_time_s);
    /* their activations are kept at 2 bytes: the stage holds more */
    assert_true(with.memory.activations > without.memory.activations);
}

/*
 * fp8 weights kept in fp8 alone (--fp8-param-gather, the 2025+ recipes): the GPT's
 * GEMM weights are 12 h^2 a layer (QKV 3h^2, projection h^2, fc1 and fc2 4h^2
 * each; biases and norms stay 16-bit), 12 x 1024^2 x 4 layers = 50,331,648, so
 * the stage holds 2 x 50,331,648 = 100,663,296 bytes fewer than with the 16-bit
 * copy (the fp8 data and its transpose stay: they are the weight now).  A gather
 * of 100 parameters, 60 of them fp8, moves (2 x 40 + 1 x 60) / 100 = 1.4 bytes
 * each, (80 + 1.03125 x 60) / 100 = 1.41875 under mxfp8 (a scale per 32).
 * Megatron's conditions: ZeRO 1 or more (arguments.py:1095-1097), not blockwise
 * or nvfp4 (Megatron-Bridge's recipes), with the optimizer offloaded only the
 * delayed recipe (arguments.py:1889-1892); the 2024 profiles keep the copy.
 */
static void test_low_params(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_config c = test_config(8, 1, 1, 1, 8, &gpt);
    c.precision = PPL_PRECISION_FP8;
    c.zero = 1;
    ppl_eval_ctx low, keep;
    ppl_eval_ctx_init(&low, &gpt, &t, PPL_STACK_NEMO_2025);
    ppl_eval_ctx_init(&keep, &gpt, &t, PPL_STACK_MEGATRON_CORE);
    ppl_estimate a, b;
    ppl_estimate_config(&low, &c, &a);
    ppl_estimate_config(&keep, &c, &b);
    assert_close(b.memory.weights - a.memory.weights, 100663296.0, 1e-12);
    assert_close(a.memory.params_low, 50331648.0, 1e-12);
    assert_true(b.memory.params_low == 0.0);
    assert_true(a.time.dp_comm < b.time.dp_comm); /* the gather in fp8 */

    assert_close(ppl_gather_bytes(&low, &c, 100.0, 60.0), 1.4, 1e-12);
    assert_close(ppl_gather_bytes(&low, &c, 100.0, 0.0), 2.0, 1e-12);
    ppl_config mx = c;
    mx.precision = PPL_PRECISION_MXFP8;
    assert_close(ppl_gather_bytes(&low, &mx, 100.0, 60.0), 1.41875, 1e-12);

    assert_true(ppl_low_params_allowed(&c) && ppl_low_params_allowed(&mx));
    ppl_config x = c;
    x.zero = 0;
    assert_false(ppl_low_params_allowed(&x));
    x = c;
    x.fp8_recipe = PPL_FP8_BLOCKWISE;
    assert_false(ppl_low_params_allowed(&x));
    x = c;
    x.offload_optimizer = 1.0; /* delayed: allowed */
    assert_true(ppl_low_params_allowed(&x));
    x.fp8_recipe = PPL_FP8_TENSORWISE;
    assert_false(ppl_low_params_allowed(&x));
    x = mx;
    x.offload_optimizer = 0.5;
    assert_false(ppl_low_params_allowed(&x));
    x = c;
    x.precision = PPL_PRECISION_NVFP4;
    assert_false(ppl_low_params_allowed(&x));
    assert_true(ppl_stack_low_params(PPL_STACK_NEMO_2025));
    assert_false(ppl_stack_low_params(PPL_STACK_NEMO_2024));
}

/* Megatron-Core's rules: bf16 layers not under delayed scaling, at most
 * num_layers // pp at each end; parplan's: inside the first and last chunk; a
 * recipe only under fp8. */
static void test_rules(void **state)
{
    (void)state;
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_config c = test_config(8, 1, 2, 1, 8, &gpt);
    ppl_error err;
    c.precision = PPL_PRECISION_FP8;
    c.bf16_layers = 1;
    assert_int_equal(ppl_config_check(&c, &gpt, &t, &err), PPL_EUSAGE); /* delayed */
    assert_string_equal(err.key, "bf16_layers");
    c.fp8_recipe = PPL_FP8_BLOCKWISE;
    assert_int_equal(ppl_config_check(&c, &gpt, &t, &err), PPL_OK);
    c.bf16_layers = 3; /* 4 // 2 = 2 at most */
    assert_int_equal(ppl_config_check(&c, &gpt, &t, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "bf16_layers");
    c.bf16_layers = 0;
    c.precision = PPL_PRECISION_BF16;
    assert_int_equal(ppl_config_check(&c, &gpt, &t, &err), PPL_EUSAGE); /* recipe without fp8 */
    assert_string_equal(err.key, "fp8_recipe");
}

/* Sequence-parallel all-gathers carry the GEMMs' format (Transformer Engine
 * quantizes before it gathers): 1 byte of 2 under fp8, (1 + 4/128) / 2 under
 * blockwise fp8, (1/2 + 1/16) / 2 under nvfp4; all-reduces without sequence
 * parallelism, and bf16, stay 16-bit. */
static void test_tp_gather(void **state)
{
    (void)state;
    ppl_config c = fp8;
    c.sequence_parallel = 1;
    assert_close(ppl_tp_gather_bytes(&c, 1000.0), 500.0, 1e-12);
    c.fp8_recipe = PPL_FP8_BLOCKWISE;
    assert_close(ppl_tp_gather_bytes(&c, 1000.0), 515.625, 1e-12);
    c.precision = PPL_PRECISION_NVFP4;
    assert_close(ppl_tp_gather_bytes(&c, 1000.0), 281.25, 1e-12);
    c.sequence_parallel = false;
    assert_close(ppl_tp_gather_bytes(&c, 1000.0), 1000.0, 1e-12);
    c.sequence_parallel = 1;
    c.precision = PPL_PRECISION_BF16;
    assert_close(ppl_tp_gather_bytes(&c, 1000.0), 1000.0, 1e-12);
}

/*
 * MFU never passes 100%: every catalogue model on every GPU kind of the table, at
 * every precision the GPU has a peak for, on 64 GPUs (tp 8, pp 2, dp 4, 8
 * microbatches): MFU is the model's FLOPs over the step times the peak of the
 * precision the GEMMs run at, and the step cannot beat that peak (estimate.h
 * floor_s).  MFU against bf16 is the same figure scaled by the ratio of the peaks.
 */
static void test_mfu_at_most_one(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/models", PPL_TEST_SOURCE_ROOT);
    DIR *dir = opendir(path);
    assert_non_null(dir);
    ppl_topology t = test_topology("dgx-h100-superpod");
    size_t nspecs = 0, checked = 0;
    const ppl_gpu_spec *specs = ppl_gpu_specs(&nspecs);
    struct dirent *d;
    while ((d = readdir(dir)) != NULL) {
        size_t n = strlen(d->d_name);
        if (n < 6 || strcmp(d->d_name + n - 5, ".json") != 0)
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(n - 5), d->d_name);
        ppl_model m = test_model(name);
        for (size_t g = 0; g < nspecs; g++) {
            ppl_gpu_from_spec(&specs[g], &t.gpu);
            for (int p = PPL_PRECISION_BF16; p <= PPL_PRECISION_NVFP4; p++) {
                if (t.gpu.flops[p] <= 0.0)
                    continue;
                ppl_eval_ctx ctx;
                ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
                ppl_config c = test_config(64, 8, 2, 1, 32, &m);
                c.precision = p;
                c.sequence_parallel = 1;
                c.flash_attention = 1;
                ppl_estimate e;
                ppl_estimate_config(&ctx, &c, &e);
                ppl_error err;
                if (ppl_estimate_check(&e, &err) != PPL_OK)
                    fail_msg("%s on %s at %s: %s", name, specs[g].kind, ppl_precision_name(p),
                             err.message);
                assert_true(e.mfu > 0.0 && e.mfu <= 1.0);
                assert_close(e.mfu_bf16 / e.mfu,
                             t.gpu.flops[e.mfu_precision] / t.gpu.flops[PPL_PRECISION_BF16], 1e-9);
                checked++;
            }
        }
    }
    closedir(dir);
    assert_true(checked > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blockwise_bytes), cmocka_unit_test(test_tensorwise_amax),
        cmocka_unit_test(test_bf16_layers),     cmocka_unit_test(test_rules),
        cmocka_unit_test(test_tp_gather),       cmocka_unit_test(test_mfu_at_most_one),
        cmocka_unit_test(test_low_params),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
