/*
 * test_goodput.c - failures, checkpoint cost, Young/Daly interval and goodput,
 * against figures derived by hand.
 */
#include "testutil.h"

#include <math.h>

#include "studies/goodput.h"

/* 1,024 GPUs as tp 8 x pp 8 x dp 16, ZeRO-1 with Adam. */
static ppl_config tp8_pp8_dp16_zero1(void)
{
    ppl_config c;
    memset(&c, 0, sizeof c);
    c.gpus = 1024;
    c.tp = 8;
    c.pp = 8;
    c.dp = 16;
    c.cp = c.ep = c.vp = 1;
    c.zero = 1;
    c.optimizer = PPL_OPTIMIZER_ADAM;
    return c;
}

/* The default MTBF: Llama 3 Table 5, 419 unexpected interruptions in 54 days on
 * 16,384 GPUs: 54 x 24 = 1,296 h / 419 = 3.0931 h per job failure; x 16,384 =
 * 21,233,664 / 419 = 50,677.0 GPU-hours.  A 16,384-GPU job then fails every
 * 3.0931 h = 11,135.1 s; a 65,536-GPU job every 2,783.8 s. */
static void test_default_mtbf(void **state)
{
    (void)state;
    ppl_goodput_opts o;
    ppl_goodput_opts_init(&o);
    assert_close(o.mtbf_gpu_hours, 50677.0024, 1e-8);
    assert_close(o.mtbf_gpu_hours * 3600.0 / 16384.0, 11135.08, 1e-5);
    assert_close(o.mtbf_gpu_hours * 3600.0 / 65536.0, 2783.77, 1e-5);
    assert_close(o.storage_bps, 2e12, 1e-15);
    assert_close(o.restart_s, 600.0, 1e-15);
}

/* Young: tau = sqrt(2 delta M).  delta 10 s, M 3,600 s: sqrt(72,000) = 268.328 s.
 * delta 0.5 s, M 11,135 s: sqrt(11,135) = 105.52 s.
 * Waste at delta 10, tau 268.328, M 3,600, R 600:
 *   10 / 268.328 = 0.0372678 (at Young's optimum equal to tau / 2 / M =
 *   134.164 / 3,600 = 0.0372678, both sqrt(delta / 2M) = sqrt(1/720)), plus
 *   600 / 3,600 = 0.1666667: 0.2412023, goodput 0.7587977.
 * Away from the optimum, tau 100 s: 10/100 + (50 + 600)/3,600 = 0.1 + 0.180556
 * = 0.280556, worse. */
static void test_young_daly(void **state)
{
    (void)state;
    assert_close(ppl_young_daly_interval_s(10.0, 3600.0), 268.3282, 1e-6);
    assert_close(ppl_young_daly_interval_s(0.5, 11135.0), 105.5225, 1e-6);
    double tau = ppl_young_daly_interval_s(10.0, 3600.0);
    assert_close(ppl_goodput_waste(10.0, tau, 3600.0, 600.0), 0.2412023, 1e-6);
    assert_close(ppl_goodput_waste(10.0, 100.0, 3600.0, 600.0), 0.2805556, 1e-6);
    assert_true(ppl_goodput_waste(10.0, 100.0, 3600.0, 600.0) >
                ppl_goodput_waste(10.0, tau, 3600.0, 600.0));
    assert_close(ppl_time_with_failures_s(86400.0, 0.75), 115200.0, 1e-15);
    assert_true(isinf(ppl_time_with_failures_s(86400.0, 0.0)));
}

/* Checkpoint bytes against the memory model's model states, summed over the
 * GPUs that hold one copy of each shard: llama3-70b on the superpod, tp 8 x pp 4
 * x dp 8 (256 GPUs).  ZeRO-1 keeps bf16 weights on every data-parallel rank
 * (2 B/param over tp x pp) and shards the fp32 master and Adam moments (12 B)
 * over dp: sum over stages of tp x (weights + dp x optimizer) = 14 B x params.
 * ZeRO-3 on tp 8 x pp 1 x dp 32 shards both: tp x dp x (weights + optimizer)
 * = 14 B x params.  Gradients are not saved.  (1e-3: the memory model counts a
 * stage's parameters per GPU from its layers' shapes, the figures from the
 * model's; they agree to rounding.)  Writers: 256 with ZeRO >= 1, each a shard
 * of 14 P / 256; 32 (tp x pp) with ZeRO 0. */
static void test_checkpoint_bytes(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_topology t = test_topology("dgx-h100-superpod");
    ppl_model_figures f;
    ppl_model_derive(&m, &f);
    ppl_memory_opts mo;
    ppl_memory_opts_init(&mo);
    double bytes = ppl_checkpoint_bytes(f.params_total, &mo, PPL_OPTIMIZER_ADAM);
    assert_close(bytes, 14.0 * f.params_total, 1e-15);

    ppl_config z1 = test_config(256, 8, 4, 1, 256, &m);
    z1.zero = 1;
    double sum = 0;
    for (int64_t s = 0; s < z1.pp; s++) {
        ppl_memory mem;
        ppl_memory_stage(&m, &t, &z1, &mo, s, &mem);
        sum += (double)z1.tp * (mem.weights + (double)z1.dp * mem.optimizer);
    }
    assert_int_equal(z1.dp, 8);
    assert_close(bytes, sum, 1e-3);
    assert_int_equal(ppl_checkpoint_writers(&z1), 256);

    ppl_config z3 = test_config(256, 8, 1, 1, 256, &m);
    z3.zero = 3;
    ppl_memory mem;
    ppl_memory_stage(&m, &t, &z3, &mo, 0, &mem);
    assert_int_equal(z3.dp, 32);
    assert_close(bytes, (double)(z3.tp * z3.dp) * (mem.weights + mem.optimizer), 1e-3);
    assert_int_equal(ppl_checkpoint_writers(&z3), 256);

    z1.zero = 0;
    assert_int_equal(ppl_checkpoint_writers(&z1), 32);
}

/* Costs: 14 B x P for llama3-70b (P ~ 70.6e9: ~988 GB).  Synchronous ZeRO-0 on
 * tp 8 x pp 4 (32 writers x 25 GB/s = 800 GB/s < 2 TB/s): 14P / 8e11 s, ~1.24 s,
 * all of it a stall.  ZeRO-1 on 256 GPUs: 256 x 25 GB/s = 6.4 TB/s, storage's
 * 2 TB/s binds: 14P / 2e12 ~ 0.49 s.  Async (nemo-2025): the stall is the shard
 * copy to host, 14P / 256 / 25e9 ~ 0.154 s.  Reload = the write time. */
static void test_checkpoint_cost(void **state)
{
    (void)state;
    ppl_model m = test_model("llama3-70b");
    ppl_model_figures f;
    ppl_model_derive(&m, &f);
    ppl_memory_opts mo;
    ppl_memory_opts_init(&mo);
    ppl_goodput_opts o;
    ppl_goodput_opts_init(&o);
    double bytes = 14.0 * f.params_total;
    ppl_config c = test_config(256, 8, 4, 1, 256, &m);
    ppl_checkpoint k;
    ppl_checkpoint_cost(&o, f.params_total, &mo, &c, PPL_STACK_MEGATRON_LM_2022, &k);
    assert_false(k.async);
    assert_close(k.write_s, bytes / 8e11, 1e-12);
    assert_close(k.stall_s, k.write_s, 1e-15);
    assert_close(k.reload_s, k.write_s, 1e-15);
    c.zero = 1;
    ppl_checkpoint_cost(&o, f.params_total, &mo, &c, PPL_STACK_NEMO_2025, &k);
    assert_true(k.async);
    assert_close(k.write_s, bytes / 2e12, 1e-12);
    assert_close(k.shard_bytes, bytes / 256.0, 1e-12);
    assert_close(k.stall_s, bytes / 256.0 / 25e9, 1e-12);
    assert_true(ppl_stack_async_save(PPL_STACK_MEGATRON_CORE));
    assert_false(ppl_stack_async_save(PPL_STACK_NEMO_2024));
}

/* The whole chain on a hand-made job: 1e11 parameters (14e11 B), 1,024 GPUs
 * tp 8 x pp 8 x dp 16, ZeRO 0, synchronous (megatron-lm-2021): 64 writers x
 * 25 GB/s = 1.6 TB/s < 2 TB/s, delta = 1.4e12 / 1.6e12 = 0.875 s.  MTBF
 * 10,240 GPU-hours / 1,024 = 10 h = 36,000 s.  tau = sqrt(2 x 0.875 x 36,000) =
 * sqrt(63,000) = 250.998 s.  R = 600 + 0.875 = 600.875 s.  Waste = 0.875 /
 * 250.998 + (125.499 + 600.875) / 36,000 = 0.0034861 + 0.0201771 = 0.0236632;
 * goodput 0.9763368.  With a one-hour MTBF over the job (1,024 GPU-hours) and a
 * 4,000 s restart the loss passes 1: goodput 0. */
static void test_goodput_of(void **state)
{
    (void)state;
    ppl_memory_opts mo;
    ppl_memory_opts_init(&mo);
    ppl_goodput_opts o;
    ppl_goodput_opts_init(&o);
    o.mtbf_gpu_hours = 10240.0;
    ppl_config c = tp8_pp8_dp16_zero1();
    c.zero = 0;
    ppl_goodput g;
    ppl_goodput_of(&o, 1e11, &mo, &c, PPL_STACK_MEGATRON_LM_2021, &g);
    assert_close(g.checkpoint.stall_s, 0.875, 1e-12);
    assert_close(g.job_mtbf_s, 36000.0, 1e-12);
    assert_close(g.interval_s, 250.998, 1e-5);
    assert_close(g.recovery_s, 600.875, 1e-12);
    assert_close(g.waste, 0.0236632, 1e-5);
    assert_close(g.goodput, 0.9763368, 1e-6);

    o.mtbf_gpu_hours = 1024.0;
    o.restart_s = 4000.0;
    ppl_goodput_of(&o, 1e11, &mo, &c, PPL_STACK_MEGATRON_LM_2021, &g);
    assert_true(g.waste >= 1.0);
    assert_true(g.goodput == 0.0);
}

/* An asynchronous save must finish writing before the next: 1e12 parameters
 * (14e12 B) on 1,024 GPUs, tp 8 x pp 8 x dp 16, ZeRO 1, nemo-2025.  Writers
 * 1,024 x 25 GB/s = 25.6 TB/s > 2 TB/s: write 14e12 / 2e12 = 7 s.  Stall: the
 * shard 14e12 / 1,024 = 1.3672e10 B / 25e9 = 0.546875 s.  MTBF 10.24 GPU-hours /
 * 1,024 = 36 s: Young's sqrt(2 x 0.546875 x 36) = 6.275 s is shorter than the
 * write, so the interval is 7 s.  No restart: R = the 7 s reload.  Waste =
 * 0.546875 / 7 + (3.5 + 7) / 36 = 0.078125 + 0.291667 = 0.369792, goodput
 * 0.630208. */
static void test_async_interval(void **state)
{
    (void)state;
    ppl_memory_opts mo;
    ppl_memory_opts_init(&mo);
    ppl_goodput_opts o;
    ppl_goodput_opts_init(&o);
    o.mtbf_gpu_hours = 10.24;
    o.restart_s = 0.0;
    ppl_config c = tp8_pp8_dp16_zero1();
    ppl_goodput g;
    ppl_goodput_of(&o, 1e12, &mo, &c, PPL_STACK_NEMO_2025, &g);
    assert_true(g.checkpoint.async);
    assert_close(g.checkpoint.write_s, 7.0, 1e-12);
    assert_close(g.checkpoint.stall_s, 0.546875, 1e-12);
    assert_close(g.job_mtbf_s, 36.0, 1e-12);
    assert_close(ppl_young_daly_interval_s(g.checkpoint.stall_s, g.job_mtbf_s), 6.274950, 1e-6);
    assert_close(g.interval_s, 7.0, 1e-12);
    assert_close(g.waste, 0.369792, 1e-5);
    assert_close(g.goodput, 0.630208, 1e-5);
}

/* Spares are whole servers: 100 GPUs on 8-GPU servers is 13 servers, 104 GPUs;
 * 1% of 16,384 is 163.84, rounded up to 164 and to 21 servers, 168 GPUs.
 * A spare is free while fewer servers than spares are in repair, Poisson(mu):
 * P(N < 1) at mu 1 is e^-1 = 0.367879; P(N < 3) at mu 2 is e^-2 (1 + 2 + 2) =
 * 5 e^-2 = 0.676676; P(N < 1,000) at mu 1,000 is 0.495795 (the sum of the
 * first 1,000 terms, each e^-mu mu^k / k! taken in logs: e^-1000 alone
 * underflows).
 * Recovery: 1,024 GPUs with a job MTBF of 18.72 h (19,169.28 GPU-hours): 0.78 x
 * 1/18.72 h hardware failures an hour x 48 h of repair = mu 2.0 servers in
 * repair.  20 spare GPUs are 3 servers: a server failure finds one at 0.676676,
 * and restarts in 120 s instead of 600: 600 - 0.78 x 0.676676 x 480 = 346.652 s
 * before the reload. */
static void test_spares(void **state)
{
    (void)state;
    ppl_goodput_opts o;
    ppl_goodput_opts_init(&o);
    assert_close(o.spare_restart_s, 120.0, 1e-15);
    assert_close(o.repair_s, 172800.0, 1e-15);
    assert_int_equal(ppl_spare_gpus(&o, 16384), 0);
    o.spare_gpus = 100;
    assert_int_equal(ppl_spare_gpus(&o, 16384), 104);
    o.spare_gpus = 0;
    o.spare_fraction = 0.01;
    assert_int_equal(ppl_spare_gpus(&o, 16384), 168);
    assert_close(ppl_spare_free_probability(0, 2.0), 0.0, 1e-15);
    assert_close(ppl_spare_free_probability(1, 1.0), 0.367879, 1e-5);
    assert_close(ppl_spare_free_probability(3, 2.0), 0.676676, 1e-5);
    assert_close(ppl_spare_free_probability(1000, 1000.0), 0.495795, 1e-5);
    assert_close(ppl_spare_free_probability(5000, 1000.0), 1.0, 1e-12);
    assert_close(ppl_spare_free_probability(1, 0.0), 1.0, 1e-15);

    ppl_memory_opts mo;
    ppl_memory_opts_init(&mo);
    ppl_goodput_opts_init(&o);
    o.mtbf_gpu_hours = 19169.28;
    o.spare_gpus = 20;
    ppl_config c = tp8_pp8_dp16_zero1();
    ppl_goodput with, without;
    ppl_goodput_of(&o, 1e12, &mo, &c, PPL_STACK_NEMO_2025, &with);
    assert_int_equal(with.spare_gpus, 24);
    assert_close(with.servers_in_repair, 2.0, 1e-12);
    assert_close(with.spare_free, 0.676676, 1e-5);
    assert_close(with.recovery_s - with.checkpoint.reload_s, 346.652, 1e-5);
    o.spare_gpus = 0;
    ppl_goodput_of(&o, 1e12, &mo, &c, PPL_STACK_NEMO_2025, &without);
    assert_int_equal(without.spare_gpus, 0);
    assert_close(without.spare_free, 0.0, 1e-15);
    assert_close(without.recovery_s - without.checkpoint.reload_s, 600.0, 1e-12);
    assert_true(with.goodput > without.goodput);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_mtbf),     cmocka_unit_test(test_young_daly),
        cmocka_unit_test(test_checkpoint_bytes), cmocka_unit_test(test_checkpoint_cost),
        cmocka_unit_test(test_goodput_of),       cmocka_unit_test(test_async_interval),
        cmocka_unit_test(test_spares),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
