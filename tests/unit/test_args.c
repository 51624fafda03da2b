/*
 * test_args.c - command-line parsing: commands, values, errors naming the flag.
 */
#include "testutil.h"

#include "args.h"
#include "hardware/topology.h"

#define PARSE(args, err, ...) parse_argv((args), (err), (char *[]){"parplan", __VA_ARGS__, NULL})

static ppl_status parse_argv(ppl_args *args, ppl_error *err, char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    ppl_error_clear(err);
    return ppl_args_parse(argc, argv, args, err);
}

static void test_plan_flags(void **state)
{
    (void)state;
    ppl_args a;
    ppl_error err;
    assert_int_equal(PARSE(&a, &err, "plan", "--model", "gpt3-175b", "--topology=h100-64k",
                           "--global-batch", "1536", "--tp", "8", "--sequence-parallel",
                           "--flash-attention=no", "--recompute", "selective", "--zero=1",
                           "--precision", "fp8", "--top", "3", "--json", "-o", "out.json"),
                     PPL_OK);
    assert_int_equal(a.command, PPL_CMD_PLAN);
    assert_string_equal(a.model, "gpt3-175b");
    assert_string_equal(a.topology, "h100-64k");
    assert_int_equal(a.pins.global_batch, 1536);
    assert_int_equal(a.pins.tp, 8);
    assert_int_equal(a.pins.pp, PPL_UNSET);
    assert_int_equal(a.pins.sequence_parallel, 1);
    assert_int_equal(a.pins.flash_attention, 0);
    assert_int_equal(a.pins.recompute, PPL_RECOMPUTE_SELECTIVE);
    assert_int_equal(a.pins.zero, 1);
    assert_int_equal(a.pins.precision, PPL_PRECISION_FP8);
    assert_int_equal(a.top, 3);
    assert_true(a.json);
    assert_string_equal(a.output_path, "out.json");
}

static void test_two_word_commands(void **state)
{
    (void)state;
    ppl_args a;
    ppl_error err;
    assert_int_equal(PARSE(&a, &err, "topology", "show", "dgx-h100-superpod", "--json"), PPL_OK);
    assert_int_equal(a.command, PPL_CMD_TOPOLOGY_SHOW);
    assert_string_equal(a.positional, "dgx-h100-superpod");
    assert_int_equal(PARSE(&a, &err, "model", "show", "--", "-odd-name"), PPL_OK);
    assert_string_equal(a.positional, "-odd-name");
    assert_int_equal(PARSE(&a, &err, "help", "topology", "generate"), PPL_OK);
    assert_int_equal(a.command, PPL_CMD_TOPOLOGY_GENERATE);
    assert_true(a.help);
    assert_int_equal(PARSE(&a, &err, "model", "--help"), PPL_OK);
    assert_true(a.help);
}

static void test_collective_sizes(void **state)
{
    (void)state;
    ppl_args a;
    ppl_error err;
    assert_int_equal(PARSE(&a, &err, "collective", "--topology", "x", "--op", "alltoall",
                           "--servers", "64", "--sizes", "1MiB:8GiB", "--algo", "tree"),
                     PPL_OK);
    assert_int_equal(a.op, PPL_OP_ALLTOALL);
    assert_int_equal(a.algo, PPL_ALGO_TREE);
    assert_close(a.size_min_bytes, 1048576.0, 0);
    assert_close(a.size_max_bytes, 8589934592.0, 0);
    assert_int_equal(PARSE(&a, &err, "size", "--model", "m", "--topology", "t", "--tokens", "15.6T",
                           "--days", "67"),
                     PPL_OK);
    assert_close(a.tokens, 15.6e12, 1e-15);
    assert_close(a.days, 67.0, 0);
}

/* Each bad command line: the status and the flag its message names. */
static void expect_usage(ppl_error *err, ppl_status st, const char *key, const char *text)
{
    assert_int_equal(st, PPL_EUSAGE);
    assert_string_equal(err->key, key);
    assert_contains(err->message, text);
}

static void test_errors(void **state)
{
    (void)state;
    ppl_args a;
    ppl_error err;
    expect_usage(&err,
                 PARSE(&a, &err, "plan", "--model", "m", "--topology", "t", "--tp", "x",
                       "--global-batch", "8"),
                 "--tp", "expected a positive integer, found 'x'");
    expect_usage(&err, PARSE(&a, &err, "plan", "--model", "m", "--topology", "t", "--tp", "0"),
                 "--tp", "expected a positive integer, found 0");
    expect_usage(&err, PARSE(&a, &err, "plan", "--tp", "99999999999999999999999"), "--tp",
                 "too large");
    expect_usage(&err, PARSE(&a, &err, "plan", "--model"), "--model", "missing value");
    expect_usage(&err, PARSE(&a, &err, "plan", "--model", "m", "--topology", "t"), "--global-batch",
                 "required");
    expect_usage(&err, PARSE(&a, &err, "plan", "--zero", "4"), "--zero",
                 "expected an integer from 0 to 3, found 4");
    expect_usage(&err, PARSE(&a, &err, "plan", "--recompute", "some"), "--recompute",
                 "expected none, selective or full");
    expect_usage(&err, PARSE(&a, &err, "plan", "--sequence-parallel=maybe"), "--sequence-parallel",
                 "expected yes or no");
    expect_usage(&err, PARSE(&a, &err, "plan", "--json=1"), "--json", "takes no value");
    expect_usage(&err, PARSE(&a, &err, "models", "--tp", "8"), "--tp",
                 "does not apply to 'models'");
    expect_usage(&err, PARSE(&a, &err, "plan", "--tpp", "8"), "", "unknown option '--tpp'");
    expect_usage(&err, PARSE(&a, &err, "plann"), "", "unknown command 'plann'");
    expect_usage(&err, PARSE(&a, &err, "topology", "list"), "", "needs a subcommand");
    expect_usage(&err, PARSE(&a, &err, "models", "extra"), "", "unexpected argument 'extra'");
    expect_usage(&err, PARSE(&a, &err, "model", "show"), "", "needs a model name");
    expect_usage(
        &err,
        PARSE(&a, &err, "collective", "--topology", "t", "--servers", "2", "--sizes", "8GiB:1MiB"),
        "--sizes", "ends below where it starts");
    expect_usage(&err, PARSE(&a, &err, "size", "--tokens", "-5"), "--tokens", "non-negative");
    expect_usage(&err, PARSE(&a, &err, "whatif", "--sweep", "gpus"), "--sweep", "KEY=V1,V2");
    expect_usage(&err, PARSE(&a, &err, "whatif", "--sweep", "gpus=1,2", "--sweep", "gpus=4"),
                 "--sweep", "key 'gpus' swept twice");
    expect_usage(&err, PARSE(&a, &err, "--tp", "8"), "", "expected a command");
}

static void test_help_and_version(void **state)
{
    (void)state;
    ppl_args a;
    ppl_error err;
    /* --help skips the required-flag check */
    assert_int_equal(PARSE(&a, &err, "estimate", "--help"), PPL_OK);
    assert_true(a.help);
    assert_int_equal(PARSE(&a, &err, "--version"), PPL_OK);
    assert_true(a.version);
    assert_int_equal(parse_argv(&a, &err, (char *[]){"parplan", NULL}), PPL_OK);
    assert_int_equal(a.command, PPL_CMD_NONE);
}

typedef struct count_ctx {
    int options;
    int has_help;
} count_ctx;

static void count_option(void *ctx, const ppl_option_info *o)
{
    count_ctx *c = ctx;
    c->options++;
    if (strcmp(o->name, "--help") == 0)
        c->has_help = 1;
    assert_non_null(o->help);
}

static void test_every_command_has_help(void **state)
{
    (void)state;
    for (int k = PPL_CMD_PLAN; k < PPL_CMD_COUNT; k++) {
        count_ctx c = {0};
        ppl_command_options((ppl_command)k, count_option, &c);
        assert_true(c.has_help);
        assert_true(strlen(ppl_command_name((ppl_command)k)) > 0);
        assert_true(strlen(ppl_command_summary((ppl_command)k)) > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_flags),       cmocka_unit_test(test_two_word_commands),
        cmocka_unit_test(test_collective_sizes), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_help_and_version), cmocka_unit_test(test_every_command_has_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
