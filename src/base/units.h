/*
 * base/units.h - quantities with units, parsed from input and printed for people.
 *
 * Base units, everywhere inside parplan: bytes, bytes/s (per direction), seconds,
 * FLOP/s and plain counts.  Input may carry a unit ("80 GiB", "400 Gb/s", "2 us",
 * "989 TFLOP/s", "15.6T" tokens); bits are converted to bytes (divide by 8), decimal
 * prefixes are powers of 1000 and binary ones (KiB, MiB, ...) powers of 1024.
 */
#ifndef PARPLAN_UNITS_H
#define PARPLAN_UNITS_H

#include <stddef.h>

#include "parplan/error.h"

typedef enum ppl_unit {
    PPL_UNIT_COUNT,     /* dimensionless; K, M, G or B (1e9), T, P suffixes */
    PPL_UNIT_BYTES,     /* B, KB..PB, KiB..PiB */
    PPL_UNIT_BANDWIDTH, /* bytes/s: B/s, GB/s, GiB/s, or bits: b/s, Gb/s, Gbps */
    PPL_UNIT_TIME,      /* s, ms, us, ns, min, h, d */
    PPL_UNIT_FLOPS      /* FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s (also ...FLOPS) */
} ppl_unit;

/* What the unit measures, for messages: "a byte size", "a bandwidth", ... */
const char *ppl_unit_noun(ppl_unit unit);
/* The base unit's symbol, for messages: "bytes", "B/s", "s", "FLOP/s", "". */
const char *ppl_unit_base(ppl_unit unit);
/* An example string in that unit, for messages: "\"80 GiB\"". */
const char *ppl_unit_example(ppl_unit unit);

/*
 * Parses "<number>[ ]<unit>" or a bare number (taken in the base unit).  Rejects
 * NaN, infinities, negatives, hexadecimal and trailing junk.  On failure returns
 * PPL_EUSAGE and writes a reason (without the offending text) into why.
 */
ppl_status ppl_parse_quantity(const char *text, ppl_unit unit, double *out, char *why,
                              size_t why_size);

/* The decimal number at the start of text ([+-]digits[.digits][e[+-]digits]),
 * with *end just past it; *end == text where none starts there.  What strtod
 * would also take, hexadecimal, "nan" and "inf", is not a number here ("0x10"
 * reads as 0, ending at 'x'); a number of more than 63 characters is none. */
double ppl_decimal(const char *text, const char **end);

/* People-facing renderings with three significant digits and a unit. */
void ppl_format_bytes(double bytes, char *buf, size_t size);           /* "80.0 GiB" */
void ppl_format_bandwidth(double bytes_per_s, char *buf, size_t size); /* "450 GB/s" */
void ppl_format_time(double seconds, char *buf, size_t size);          /* "1.25 s", "850 ms" */
void ppl_format_flops(double flops_per_s, char *buf, size_t size);     /* "989 TFLOP/s" */
void ppl_format_count(double count, char *buf, size_t size);           /* "175 B", "8.19 K" */
void ppl_format_params(double params, char *buf, size_t size);         /* "174.62 B" */
void ppl_format_quantity(ppl_unit unit, double value, char *buf,
                         size_t size);                               /* any of the above */
void ppl_format_bitrate(double bytes_per_s, char *buf, size_t size); /* "400 Gb/s" */

/* Seconds on the monotonic clock (CLOCK_MONOTONIC), for elapsed times. */
double ppl_clock_s(void);

#endif
