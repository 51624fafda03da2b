/*
 * test_output.c - output buffers, aligned tables, JSON header, atomic writes.
 */
#include "testutil.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

#include "render/explain.h"
#include "base/output.h"

static void test_buffer_grows(void **state)
{
    (void)state;
    ppl_buf b;
    ppl_buf_init(&b);
    for (int i = 0; i < 10000; i++)
        ppl_buf_printf(&b, "%04d", i % 10000);
    assert_int_equal(b.len, 40000);
    assert_false(b.failed);
    assert_memory_equal(b.data + 39996, "9999", 4);
    ppl_buf_free(&b);
}

static void test_table(void **state)
{
    (void)state;
    ppl_table t;
    ppl_buf b;
    ppl_buf_init(&b);
    ppl_table_init(&t, 3, "lrl");
    ppl_table_row(&t, (const char *[]){"name", "n", "note"});
    ppl_table_row(&t, (const char *[]){"a", "1000", ""});
    ppl_table_row(&t, (const char *[]){"longer", "7", "x"});
    ppl_table_render(&t, &b, "");
    /* columns padded to the widest cell, two spaces apart; no trailing blanks */
    assert_string_equal(b.data, "name       n  note\n"
                                "a       1000\n"
                                "longer     7  x\n");
    ppl_table_free(&t);
    ppl_buf_free(&b);
}

static void test_json_header(void **state)
{
    (void)state;
    json_t *doc = ppl_json_document();
    json_object_set_new(doc, "x", json_real(0.1));
    ppl_buf b;
    ppl_buf_init(&b);
    ppl_json_render(doc, &b);
    json_decref(doc);
    /* SPEC: every document opens with schema_version "1.1" and the tool */
    assert_contains(b.data, "\"schema_version\": \"1.1\"");
    assert_contains(b.data, "\"name\": \"parplan\"");
    assert_contains(b.data, "\"x\": 0.1\n");
    assert_true(strstr(b.data, "schema_version") < strstr(b.data, "tool"));
    ppl_buf_free(&b);
}

static int entries_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void test_atomic_write(void **state)
{
    (void)state;
    char dir[] = "/tmp/parplan-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], bad[256];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    snprintf(bad, sizeof bad, "%s/missing/out.txt", dir);
    ppl_buf b;
    ppl_buf_init(&b);
    ppl_buf_printf(&b, "hello\n");
    ppl_error err;
    assert_int_equal(ppl_output_write(path, &b, &err), PPL_OK);
    FILE *f = fopen(path, "r");
    char line[32] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "hello\n");
    assert_int_equal(entries_in(dir), 1); /* no temporary left behind */
    /* a directory that does not exist: exit 4, the message names the file */
    assert_int_equal(ppl_output_write(bad, &b, &err), PPL_EINTERNAL);
    assert_string_equal(err.file, bad);
    assert_contains(err.message, "cannot write");
    assert_int_equal(entries_in(dir), 1);
    /* an incomplete buffer (allocation failed) is never written */
    b.failed = true;
    assert_int_equal(ppl_output_write(path, &b, &err), PPL_EINTERNAL);
    ppl_buf_free(&b);
    unlink(path);
    rmdir(dir);
}

/* Why #1 wins: GPT-3 175B on 1,024 A100, tp 8 pp 16 against tp 8 pp 8 (dp 8 and
 * 16).  The knobs that differ are exactly pp, dp and the stage split (12 layers
 * a stage against 6); the step is compute + bubble + exposed communication +
 * optimizer + overhead (schedule.h), so the parts' differences add up to the
 * step's, and the memory difference is the worst stages' totals'. */
static void test_plan_diff(void **state)
{
    (void)state;
    ppl_model m = test_model("gpt3-175b");
    ppl_topology t = test_topology("dgx-a100-superpod");
    ppl_eval_ctx ctx;
    ppl_eval_ctx_init(&ctx, &m, &t, PPL_STACK_MODERN);
    ppl_config a = test_config(1024, 8, 16, 1, 1536, &m), b = test_config(1024, 8, 8, 1, 1536, &m);
    ppl_estimate ea, eb;
    ppl_estimate_config(&ctx, &a, &ea);
    ppl_estimate_config(&ctx, &b, &eb);
    ppl_plan_diff d;
    ppl_plan_diff_of(&ea, &eb, &d);
    assert_int_equal(d.nknobs, 3);
    assert_string_equal(d.knobs[0].name, "pp");
    assert_string_equal(d.knobs[0].from, "16");
    assert_string_equal(d.knobs[0].to, "8");
    assert_string_equal(d.knobs[1].name, "dp");
    assert_string_equal(d.knobs[1].from, "8");
    assert_string_equal(d.knobs[1].to, "16");
    assert_string_equal(d.knobs[2].name, "stage_layers");
    assert_string_equal(d.knobs[2].from, "6x16");
    assert_string_equal(d.knobs[2].to, "12x8");
    double sum = 0;
    for (int i = 0; i < PPL_DIFF_PARTS; i++)
        sum += d.part_delta_s[i];
    assert_close(sum, eb.step_time_s - ea.step_time_s, 1e-9);
    assert_close(d.step_delta_s, eb.step_time_s - ea.step_time_s, 1e-12);
    assert_close(d.memory_delta_bytes, eb.memory.total - ea.memory.total, 1e-12);
    char text[512];
    ppl_plan_diff_text(&d, text, sizeof text);
    assert_contains(text, "pp 16->8, dp 8->16, stage_layers 6x16->12x8; ");
    assert_contains(text, "; memory ");
    /* a plan against itself: nothing changed */
    ppl_plan_diff_of(&ea, &ea, &d);
    assert_int_equal(d.nknobs, 0);
    assert_string_equal(ppl_plan_diff_text(&d, text, sizeof text),
                        "the same knobs; +0 ns a step; memory +0 B");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buffer_grows), cmocka_unit_test(test_table),
        cmocka_unit_test(test_json_header),  cmocka_unit_test(test_atomic_write),
        cmocka_unit_test(test_plan_diff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
