/*
 * test_knobs.c - the knob registry (cost/knobs.h): every knob one row, one flag,
 * one JSON key; a configuration written by the JSON writer and read back by the
 * plan-file reader is the same configuration.
 */
#include "testutil.h"

#include "args.h"
#include "options.h"

/* Names are unique, pins do not overlap, ranges are sane, enums have words. */
static void test_rows(void **state)
{
    (void)state;
    size_t n;
    const ppl_knob *k = ppl_knob_rows(&n);
    assert_true(n >= 26);
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(ppl_knob_find(k[i].name), &k[i]);
        for (size_t j = 0; j < i; j++) {
            assert_string_not_equal(k[i].name, k[j].name);
            assert_int_not_equal(k[i].pin, k[j].pin);
        }
        assert_true(k[i].pin < sizeof(ppl_pins));
        if (k[i].kind == PPL_KNOB_INT)
            assert_true(k[i].min >= 0 && k[i].min <= k[i].max);
        if (k[i].kind == PPL_KNOB_ENUM || k[i].kind == PPL_KNOB_BOOL)
            assert_non_null(k[i].values);
        /* what a plan file must state, the JSON writer always writes */
        if (k[i].plan != PPL_KNOB_UNREAD)
            assert_non_null(k[i].value);
    }
    assert_null(ppl_knob_find("no_such_knob"));
}

/* Every knob is a flag of the command line, named by the knob with '-' for '_',
 * and every K_KNOB option finds its row: the registry drives them. */
static void test_every_knob_a_flag(void **state)
{
    (void)state;
    size_t n;
    const ppl_knob *k = ppl_knob_rows(&n);
    for (size_t i = 0; i < n; i++) {
        char flag[64];
        snprintf(flag, sizeof flag, "--%s", k[i].name);
        for (char *p = flag + 2; *p; p++)
            if (*p == '_')
                *p = '-';
        size_t found = 0;
        for (size_t j = 0; j < ppl_cli_noptions; j++)
            if (strcmp(ppl_cli_options[j].name, flag) == 0) {
                assert_int_equal(ppl_cli_options[j].kind, K_KNOB);
                const opt_def *r = ppl_cli_option_resolved(&ppl_cli_options[j]);
                assert_int_not_equal(r->kind, K_KNOB);
                assert_int_equal(r->offset, offsetof(ppl_args, pins) + k[i].pin);
                found++;
            }
        assert_int_equal(found, 1);
    }
    for (size_t j = 0; j < ppl_cli_noptions; j++)
        if (ppl_cli_options[j].kind == K_KNOB)
            assert_int_not_equal(ppl_cli_option_resolved(&ppl_cli_options[j])->kind, K_KNOB);
}

/* ppl_knob_parse: a value of each kind, and refusals naming the knob. */
static void test_parse(void **state)
{
    (void)state;
    ppl_pins p;
    ppl_error err;
    ppl_pins_init(&p);
    assert_int_equal(ppl_knob_parse(ppl_knob_find("tp"), "8", &p, &err), PPL_OK);
    assert_int_equal(p.tp, 8);
    assert_int_equal(ppl_knob_parse(ppl_knob_find("zero"), "3", &p, &err), PPL_OK);
    assert_int_equal(p.zero, 3);
    assert_int_equal(ppl_knob_parse(ppl_knob_find("zero"), "4", &p, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "zero");
    assert_int_equal(ppl_knob_parse(ppl_knob_find("recompute"), "selective", &p, &err), PPL_OK);
    assert_int_equal(p.recompute, PPL_RECOMPUTE_SELECTIVE);
    assert_int_equal(ppl_knob_parse(ppl_knob_find("schedule"), "zb-v", &p, &err), PPL_OK);
    assert_int_equal(p.schedule, PPL_SCHEDULE_ZB_V);
    assert_int_equal(ppl_knob_parse(ppl_knob_find("schedule"), "zb-x", &p, &err), PPL_EUSAGE);
    assert_int_equal(ppl_knob_parse(ppl_knob_find("sequence_parallel"), "yes", &p, &err), PPL_OK);
    assert_int_equal(p.sequence_parallel, 1);
    assert_int_equal(ppl_knob_parse(ppl_knob_find("flash_attention"), "off", &p, &err), PPL_OK);
    assert_int_equal(p.flash_attention, 0);
    assert_int_equal(ppl_knob_parse(ppl_knob_find("tp_overlap"), "no", &p, &err), PPL_OK);
    assert_int_equal(p.tp_overlap, 0);
    assert_int_equal(ppl_knob_parse(ppl_knob_find("offload_optimizer"), "0.5", &p, &err), PPL_OK);
    assert_close(p.offload_optimizer, 0.5, 0);
    assert_int_equal(ppl_knob_parse(ppl_knob_find("offload_optimizer"), "2", &p, &err), PPL_EUSAGE);
    assert_int_equal(ppl_knob_parse(ppl_knob_find("tp"), "4x", &p, &err), PPL_EUSAGE);
    assert_string_equal(err.key, "tp");
}

/* A configuration through the JSON writer and the plan-file reader comes back
 * knob for knob (the diff's text of each is the same), for a dense model with
 * uneven stages, full recomputation of some layers, HSDP and offload, and for a
 * MoE model with context parallelism, fp8 and bf16 layers. */
static void round_trip(const char *model, const char *topo, const ppl_pins *pins)
{
    ppl_model m = test_model(model);
    ppl_topology t = test_topology(topo);
    ppl_config c, back;
    ppl_pins read;
    ppl_error err;
    assert_int_equal(ppl_config_from_pins(pins, &m, &t, &c, &err), PPL_OK);
    json_t *j = ppl_config_json(&c, &m);
    assert_int_equal(ppl_pins_from_config_json(j, "plan.json", "config", NULL, &read, &err),
                     PPL_OK);
    json_decref(j);
    assert_int_equal(ppl_config_from_pins(&read, &m, &t, &back, &err), PPL_OK);
    size_t n;
    const ppl_knob *k = ppl_knob_rows(&n);
    for (size_t i = 0; i < n; i++) {
        char a[64], b[64];
        ppl_knob_text(&k[i], &c, &m, a, sizeof a);
        ppl_knob_text(&k[i], &back, &m, b, sizeof b);
        assert_string_equal(a, b);
    }
    assert_int_equal(back.split.first, c.split.first);
    assert_int_equal(back.split.last, c.split.last);
}

static void test_round_trip(void **state)
{
    (void)state;
    ppl_pins p;
    ppl_pins_init(&p);
    p.tp = 8;
    p.pp = 16;
    p.dp = 8;
    p.vp = 1;
    p.mbs = 1;
    p.global_batch = 512;
    p.gpus = 1024;
    p.zero = 1;
    p.shard_group = 4;
    p.offload_optimizer = 0.5;
    p.recompute = PPL_RECOMPUTE_FULL;
    p.recompute_layers = 4;
    p.sequence_parallel = 1;
    p.flash_attention = 1;
    p.first_stage_layers = 7;
    p.last_stage_layers = 7;
    round_trip("llama3-405b", "dgx-h100-superpod", &p);

    ppl_pins_init(&p);
    p.gpus = 64;
    p.tp = 2;
    p.pp = 1;
    p.cp = 2;
    p.dp = 16;
    p.ep = 8;
    p.etp = 1;
    p.mbs = 1;
    p.global_batch = 256;
    p.sequence_parallel = 1;
    p.flash_attention = 1;
    p.cp_comm = PPL_CP_COMM_A2A;
    p.ep_overlap = 1;
    p.tp_overlap = 0;
    p.precision = PPL_PRECISION_FP8;
    p.fp8_recipe = PPL_FP8_BLOCKWISE;
    p.bf16_layers = 1;
    round_trip("mixtral-8x7b", "dgx-h100-superpod", &p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_every_knob_a_flag),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
