/*
 * units.c - parsing and printing quantities with units.
 *
 * Parsing is table-driven: each unit kind has a list of accepted suffixes and the
 * factor that takes a value to the base unit.  Numbers are scanned by hand before
 * strtod sees them so that "nan", "inf", "0x10" and "1e" are refused; parplan never
 * calls setlocale, so strtod reads '.' as the decimal point.
 */
#include "base/units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct unit_suffix {
    const char *text;
    double factor; /* multiply by this to reach the base unit */
} unit_suffix;

static const unit_suffix count_suffixes[] = {{"", 1.0},   {"K", 1e3},  {"k", 1e3},
                                             {"M", 1e6},  {"G", 1e9},  {"B", 1e9},
                                             {"T", 1e12}, {"P", 1e15}, {NULL, 0}};

static const unit_suffix byte_suffixes[] = {{"", 1.0},
                                            {"B", 1.0},
                                            {"byte", 1.0},
                                            {"bytes", 1.0},
                                            {"KB", 1e3},
                                            {"kB", 1e3},
                                            {"MB", 1e6},
                                            {"GB", 1e9},
                                            {"TB", 1e12},
                                            {"PB", 1e15},
                                            {"KiB", 1024.0},
                                            {"MiB", 1048576.0},
                                            {"GiB", 1073741824.0},
                                            {"TiB", 1099511627776.0},
                                            {"PiB", 1125899906842624.0},
                                            {NULL, 0}};

static const unit_suffix bandwidth_suffixes[] = {{"", 1.0},
                                                 {"B/s", 1.0},
                                                 {"KB/s", 1e3},
                                                 {"kB/s", 1e3},
                                                 {"MB/s", 1e6},
                                                 {"GB/s", 1e9},
                                                 {"TB/s", 1e12},
                                                 {"KiB/s", 1024.0},
                                                 {"MiB/s", 1048576.0},
                                                 {"GiB/s", 1073741824.0},
                                                 {"TiB/s", 1099511627776.0},
                                                 /* bits per second: one byte is eight bits */
                                                 {"b/s", 1.0 / 8},
                                                 {"bps", 1.0 / 8},
                                                 {"Kb/s", 1e3 / 8},
                                                 {"kb/s", 1e3 / 8},
                                                 {"Kbps", 1e3 / 8},
                                                 {"kbps", 1e3 / 8},
                                                 {"Mb/s", 1e6 / 8},
                                                 {"Mbps", 1e6 / 8},
                                                 {"Mbit/s", 1e6 / 8},
                                                 {"Gb/s", 1e9 / 8},
                                                 {"Gbps", 1e9 / 8},
                                                 {"Gbit/s", 1e9 / 8},
                                                 {"Tb/s", 1e12 / 8},
                                                 {"Tbps", 1e12 / 8},
                                                 {"Tbit/s", 1e12 / 8},
                                                 {NULL, 0}};

static const unit_suffix time_suffixes[] = {{"", 1.0},      {"s", 1.0},        {"sec", 1.0},
                                            {"ms", 1e-3},   {"us", 1e-6},      {"\xc2\xb5s", 1e-6},
                                            {"ns", 1e-9},   {"min", 60.0},     {"h", 3600.0},
                                            {"d", 86400.0}, {"days", 86400.0}, {NULL, 0}};

static const unit_suffix flops_suffixes[] = {
    {"", 1.0},        {"FLOP/s", 1.0},   {"FLOPS", 1.0},   {"GFLOP/s", 1e9},
    {"GFLOPS", 1e9},  {"TFLOP/s", 1e12}, {"TFLOPS", 1e12}, {"PFLOP/s", 1e15},
    {"PFLOPS", 1e15}, {"EFLOP/s", 1e18}, {"EFLOPS", 1e18}, {NULL, 0}};

static const unit_suffix *suffixes_for(ppl_unit unit)
{
    switch (unit) {
    case PPL_UNIT_BYTES: return byte_suffixes;
    case PPL_UNIT_BANDWIDTH: return bandwidth_suffixes;
    case PPL_UNIT_TIME: return time_suffixes;
    case PPL_UNIT_FLOPS: return flops_suffixes;
    case PPL_UNIT_COUNT: break;
    }
    return count_suffixes;
}

const char *ppl_unit_noun(ppl_unit unit)
{
    switch (unit) {
    case PPL_UNIT_BYTES: return "a size";
    case PPL_UNIT_BANDWIDTH: return "a bandwidth";
    case PPL_UNIT_TIME: return "a time";
    case PPL_UNIT_FLOPS: return "a FLOP rate";
    case PPL_UNIT_COUNT: break;
    }
    return "a number";
}

const char *ppl_unit_example(ppl_unit unit)
{
    switch (unit) {
    case PPL_UNIT_BYTES: return "\"80 GiB\"";
    case PPL_UNIT_BANDWIDTH: return "\"400 Gb/s\" or \"450 GB/s\"";
    case PPL_UNIT_TIME: return "\"2 us\"";
    case PPL_UNIT_FLOPS: return "\"989 TFLOP/s\"";
    case PPL_UNIT_COUNT: break;
    }
    return "\"15.6T\"";
}

const char *ppl_unit_base(ppl_unit unit)
{
    switch (unit) {
    case PPL_UNIT_BYTES: return "bytes";
    case PPL_UNIT_BANDWIDTH: return "B/s";
    case PPL_UNIT_TIME: return "s";
    case PPL_UNIT_FLOPS: return "FLOP/s";
    case PPL_UNIT_COUNT: break;
    }
    return "";
}

/* Length of a decimal number at s ([+]digits[.digits][e[+-]digits]), 0 if none. */
static size_t scan_number(const char *s)
{
    size_t i = 0, digits = 0;
    if (s[i] == '+')
        i++;
    while (isdigit((unsigned char)s[i])) {
        i++;
        digits++;
    }
    if (s[i] == '.') {
        i++;
        while (isdigit((unsigned char)s[i])) {
            i++;
            digits++;
        }
    }
    if (digits == 0)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-')
            j++;
        size_t exp_digits = 0;
        while (isdigit((unsigned char)s[j])) {
            j++;
            exp_digits++;
        }
        if (exp_digits > 0)
            i = j;
    }
    return i;
}

double ppl_decimal(const char *text, const char **end)
{
    char tmp[64];
    const char *p = text + (*text == '-');
    size_t n = scan_number(p);
    *end = text;
    if (n == 0 || n >= sizeof tmp)
        return 0.0;
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    *end = p + n;
    const double x = strtod(tmp, NULL);
    return *text == '-' ? -x : x;
}

ppl_status ppl_parse_quantity(const char *text, ppl_unit unit, double *out, char *why,
                              size_t why_size)
{
    if (!text) {
        snprintf(why, why_size, "expected %s", ppl_unit_noun(unit));
        return PPL_EUSAGE;
    }
    const char *p = text;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '-') {
        snprintf(why, why_size, "expected a non-negative value");
        return PPL_EUSAGE;
    }
    const char *end;
    double value = ppl_decimal(p, &end);
    if (end == p) {
        snprintf(why, why_size, "expected %s such as %s", ppl_unit_noun(unit),
                 ppl_unit_example(unit));
        return PPL_EUSAGE;
    }
    p = end;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t ulen = strlen(p);
    while (ulen > 0 && (p[ulen - 1] == ' ' || p[ulen - 1] == '\t'))
        ulen--;
    for (const unit_suffix *u = suffixes_for(unit); u->text; u++) {
        if (strlen(u->text) == ulen && strncmp(u->text, p, ulen) == 0) {
            value *= u->factor;
            if (!isfinite(value)) {
                snprintf(why, why_size, "value is out of range");
                return PPL_EUSAGE;
            }
            *out = value;
            return PPL_OK;
        }
    }
    snprintf(why, why_size, "unknown unit for %s (expected e.g. %s)", ppl_unit_noun(unit),
             ppl_unit_example(unit));
    return PPL_EUSAGE;
}

/* Prints value with three significant digits (at least) and the given unit. */
static void format_scaled(double value, const char *unit, char *buf, size_t size)
{
    double a = fabs(value);
    int decimals = a >= 100.0 ? 0 : a >= 10.0 ? 1 : 2;
    if (a == 0.0)
        decimals = 0;
    snprintf(buf, size, "%.*f %s", decimals, value, unit);
}

typedef struct scale {
    double factor;
    const char *unit;
} scale;

static void format_with(double value, const scale *scales, size_t n, char *buf, size_t size)
{
    if (!isfinite(value)) {
        snprintf(buf, size, "%s", "n/a");
        return;
    }
    /* pick the largest scale not above the value; the first entry is the fallback */
    size_t pick = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(value) >= scales[i].factor * 0.9995)
            pick = i;
    format_scaled(value / scales[pick].factor, scales[pick].unit, buf, size);
}

void ppl_format_bytes(double bytes, char *buf, size_t size)
{
    static const scale s[] = {{1.0, "B"},
                              {1024.0, "KiB"},
                              {1048576.0, "MiB"},
                              {1073741824.0, "GiB"},
                              {1099511627776.0, "TiB"},
                              {1125899906842624.0, "PiB"}};
    format_with(bytes, s, sizeof s / sizeof s[0], buf, size);
}

void ppl_format_quantity(ppl_unit unit, double value, char *buf, size_t size)
{
    switch (unit) {
    case PPL_UNIT_BYTES: ppl_format_bytes(value, buf, size); return;
    case PPL_UNIT_BANDWIDTH: ppl_format_bandwidth(value, buf, size); return;
    case PPL_UNIT_TIME: ppl_format_time(value, buf, size); return;
    case PPL_UNIT_FLOPS: ppl_format_flops(value, buf, size); return;
    case PPL_UNIT_COUNT: break;
    }
    snprintf(buf, size, "%.6g", value);
}

void ppl_format_bandwidth(double bytes_per_s, char *buf, size_t size)
{
    static const scale s[] = {{1.0, "B/s"},  {1e3, "KB/s"},  {1e6, "MB/s"},
                              {1e9, "GB/s"}, {1e12, "TB/s"}, {1e15, "PB/s"}};
    format_with(bytes_per_s, s, sizeof s / sizeof s[0], buf, size);
}

void ppl_format_time(double seconds, char *buf, size_t size)
{
    if (isfinite(seconds) && seconds >= 86400.0 * 2) {
        format_scaled(seconds / 86400.0, "days", buf, size);
        return;
    }
    if (isfinite(seconds) && seconds >= 3600.0 * 2) {
        format_scaled(seconds / 3600.0, "h", buf, size);
        return;
    }
    static const scale s[] = {{1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1.0, "s"}};
    format_with(seconds, s, sizeof s / sizeof s[0], buf, size);
}

void ppl_format_flops(double flops_per_s, char *buf, size_t size)
{
    static const scale s[] = {
        {1.0, "FLOP/s"}, {1e9, "GFLOP/s"}, {1e12, "TFLOP/s"}, {1e15, "PFLOP/s"}, {1e18, "EFLOP/s"}};
    format_with(flops_per_s, s, sizeof s / sizeof s[0], buf, size);
}

void ppl_format_params(double params, char *buf, size_t size)
{
    /* parameter counts are quoted in billions with two decimals: 174.62 B, 1008.04 B */
    if (!isfinite(params))
        snprintf(buf, size, "n/a");
    else if (params >= 1e9)
        snprintf(buf, size, "%.2f B", params / 1e9);
    else if (params >= 1e6)
        snprintf(buf, size, "%.2f M", params / 1e6);
    else
        snprintf(buf, size, "%.0f", params);
}

void ppl_format_bitrate(double bytes_per_s, char *buf, size_t size)
{
    static const scale s[] = {
        {1.0, "b/s"}, {1e3, "Kb/s"}, {1e6, "Mb/s"}, {1e9, "Gb/s"}, {1e12, "Tb/s"}};
    format_with(bytes_per_s * 8.0, s, sizeof s / sizeof s[0], buf, size);
}

void ppl_format_count(double count, char *buf, size_t size)
{
    static const scale s[] = {{1.0, ""},   {1e3, "K"},  {1e6, "M"}, {1e9, "B"},
                              {1e12, "T"}, {1e15, "P"}, {1e18, "E"}};
    format_with(count, s, sizeof s / sizeof s[0], buf, size);
    size_t len = strlen(buf);
    if (len > 0 && buf[len - 1] == ' ')
        buf[len - 1] = '\0';
}

double ppl_clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
