/*
 * test_units.c - quantities with units: parsing to base units and printing.
 * Base units: bytes, bytes/s, seconds, FLOP/s; a bit is an eighth of a byte.
 */
#include "testutil.h"

#include "base/units.h"

static double parse_ok(const char *text, ppl_unit unit)
{
    char why[160];
    double v = -1;
    ppl_status st = ppl_parse_quantity(text, unit, &v, why, sizeof why);
    if (st != PPL_OK)
        fail_msg("'%s' should parse: %s", text, why);
    return v;
}

static void parse_bad(const char *text, ppl_unit unit)
{
    char why[160] = "";
    double v = 12345;
    ppl_status st = ppl_parse_quantity(text, unit, &v, why, sizeof why);
    if (st == PPL_OK)
        fail_msg("'%s' should be rejected, parsed as %g", text, v);
    assert_int_equal(st, PPL_EUSAGE);
    assert_true(why[0] != '\0');
    assert_true(v == 12345); /* untouched on failure */
}

static void test_bandwidth(void **state)
{
    (void)state;
    /* 400 Gb/s = 400e9 bits/s = 400e9 / 8 bytes/s = 50e9 B/s */
    assert_close(parse_ok("400 Gb/s", PPL_UNIT_BANDWIDTH), 50e9, 1e-15);
    assert_close(parse_ok("400Gbps", PPL_UNIT_BANDWIDTH), 50e9, 1e-15);
    assert_close(parse_ok("200 Gbit/s", PPL_UNIT_BANDWIDTH), 25e9, 1e-15);
    /* 450 GB/s is bytes already */
    assert_close(parse_ok("450 GB/s", PPL_UNIT_BANDWIDTH), 450e9, 1e-15);
    assert_close(parse_ok("3.35 TB/s", PPL_UNIT_BANDWIDTH), 3.35e12, 1e-15);
    /* 1 GiB/s = 2^30 B/s */
    assert_close(parse_ok("1 GiB/s", PPL_UNIT_BANDWIDTH), 1073741824.0, 1e-15);
    /* a bare number is in the base unit */
    assert_close(parse_ok("1e9", PPL_UNIT_BANDWIDTH), 1e9, 1e-15);
    assert_close(parse_ok(" 1.6 Tb/s ", PPL_UNIT_BANDWIDTH), 200e9, 1e-15);
}

static void test_bytes_time_flops_count(void **state)
{
    (void)state;
    /* 80 GiB = 80 * 2^30 = 85,899,345,920 bytes; 80 GB = 80e9 */
    assert_close(parse_ok("80 GiB", PPL_UNIT_BYTES), 85899345920.0, 1e-15);
    assert_close(parse_ok("80 GB", PPL_UNIT_BYTES), 80e9, 1e-15);
    assert_close(parse_ok("1MiB", PPL_UNIT_BYTES), 1048576.0, 1e-15);
    assert_close(parse_ok("2 us", PPL_UNIT_TIME), 2e-6, 1e-15);
    assert_close(parse_ok("10 ms", PPL_UNIT_TIME), 1e-2, 1e-15);
    assert_close(parse_ok("1.5 h", PPL_UNIT_TIME), 5400.0, 1e-15);
    assert_close(parse_ok("989 TFLOP/s", PPL_UNIT_FLOPS), 989e12, 1e-15);
    assert_close(parse_ok("2.5 PFLOPS", PPL_UNIT_FLOPS), 2.5e15, 1e-15);
    /* 15.6T tokens = 1.56e13 */
    assert_close(parse_ok("15.6T", PPL_UNIT_COUNT), 1.56e13, 1e-15);
    assert_close(parse_ok("450e9", PPL_UNIT_COUNT), 450e9, 1e-15);
    assert_close(parse_ok("+7", PPL_UNIT_COUNT), 7.0, 1e-15);
}

static void test_rejects(void **state)
{
    (void)state;
    parse_bad("", PPL_UNIT_BYTES);
    parse_bad("   ", PPL_UNIT_BYTES);
    parse_bad("GiB", PPL_UNIT_BYTES);
    parse_bad("nan", PPL_UNIT_BYTES);
    parse_bad("inf GB/s", PPL_UNIT_BANDWIDTH);
    parse_bad("-1 GiB", PPL_UNIT_BYTES);
    parse_bad("0x10", PPL_UNIT_COUNT);
    parse_bad("1e", PPL_UNIT_COUNT);
    parse_bad("1..2", PPL_UNIT_COUNT);
    parse_bad("80 parsecs", PPL_UNIT_BYTES);
    parse_bad("400 Gb/s", PPL_UNIT_BYTES);   /* a bandwidth where a size is wanted */
    parse_bad("80 GiB", PPL_UNIT_BANDWIDTH); /* and the other way round */
    parse_bad("1e400", PPL_UNIT_COUNT);      /* overflows a double */
    parse_bad("1e308 PiB", PPL_UNIT_BYTES);  /* finite number, infinite product */
    parse_bad(NULL, PPL_UNIT_COUNT);
}

/* ppl_decimal: the number strtod would read, less what strtod alone takes
 * (hexadecimal, nan, inf); each case's value and where it stops, by hand. */
static void test_decimal(void **state)
{
    (void)state;
    const char *end;
    const char *t = "-2.5e3%";
    assert_true(ppl_decimal(t, &end) == -2500.0);
    assert_ptr_equal(end, t + 6); /* stops at the '%' */
    t = "0x10";
    assert_true(ppl_decimal(t, &end) == 0.0);
    assert_ptr_equal(end, t + 1); /* "0", then 'x' is not part of it */
    t = "1e";
    assert_true(ppl_decimal(t, &end) == 1.0);
    assert_ptr_equal(end, t + 1); /* an exponent without digits is not one */
    t = "+.5";
    assert_true(ppl_decimal(t, &end) == 0.5);
    assert_ptr_equal(end, t + 3);
    const char *none[] = {"nan", "inf", "-inf", "", "-", ".", "e5", "x1"};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++) {
        assert_true(ppl_decimal(none[i], &end) == 0.0);
        assert_ptr_equal(end, none[i]);
    }
    char longest[80];
    memset(longest, '1', 70);
    longest[70] = '\0'; /* 70 digits: more than the 63 a number may take */
    (void)ppl_decimal(longest, &end);
    assert_ptr_equal(end, longest);
}

static void test_format(void **state)
{
    (void)state;
    char buf[64];
    ppl_format_bytes(85899345920.0, buf, sizeof buf);
    assert_string_equal(buf, "80.0 GiB");
    ppl_format_bytes(512.0, buf, sizeof buf);
    assert_string_equal(buf, "512 B");
    ppl_format_bandwidth(50e9, buf, sizeof buf);
    assert_string_equal(buf, "50.0 GB/s");
    ppl_format_bitrate(50e9, buf, sizeof buf);
    assert_string_equal(buf, "400 Gb/s");
    ppl_format_time(2e-6, buf, sizeof buf);
    assert_string_equal(buf, "2.00 us");
    ppl_format_time(0.85, buf, sizeof buf);
    assert_string_equal(buf, "850 ms");
    ppl_format_time(86400.0 * 84, buf, sizeof buf);
    assert_string_equal(buf, "84.0 days");
    ppl_format_flops(989e12, buf, sizeof buf);
    assert_string_equal(buf, "989 TFLOP/s");
    ppl_format_params(174615822336.0, buf, sizeof buf);
    assert_string_equal(buf, "174.62 B");
    ppl_format_params(7467778048.0, buf, sizeof buf);
    assert_string_equal(buf, "7.47 B");
    ppl_format_count(8192.0, buf, sizeof buf);
    assert_string_equal(buf, "8.19 K");
    ppl_format_count(0.0 / 0.0, buf, sizeof buf);
    assert_string_equal(buf, "n/a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bandwidth), cmocka_unit_test(test_bytes_time_flops_count),
        cmocka_unit_test(test_rejects),   cmocka_unit_test(test_decimal),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
