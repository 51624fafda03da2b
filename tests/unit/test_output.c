/*
 * test_output.c - output buffers, aligned tables, JSON header, atomic writes.
 */
#include "testutil.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

#include "parplan/output.h"

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
    /* SPEC: every document opens with schema_version "1.0" and the tool */
    assert_contains(b.data, "\"schema_version\": \"1.0\"");
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buffer_grows),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_json_header),
        cmocka_unit_test(test_atomic_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
