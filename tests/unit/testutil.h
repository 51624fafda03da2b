/*
 * testutil.h - helpers shared by the unit tests (cmocka).
 *
 * cmocka 1.1 has no floating-point assertion: assert_close() checks a relative
 * tolerance and prints both values when it fails.
 */
#ifndef PARPLAN_TESTUTIL_H
#define PARPLAN_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define assert_close(actual, expected, rel_tol)                                                    \
    do {                                                                                           \
        double a_ = (double)(actual), e_ = (double)(expected);                                     \
        double scale_ = fabs(e_) > 0 ? fabs(e_) : 1.0;                                             \
        if (!(fabs(a_ - e_) <= (rel_tol)*scale_))                                                  \
            fail_msg("%s = %.17g, expected %.17g (relative tolerance %g)", #actual, a_, e_,        \
                     (double)(rel_tol));                                                           \
    } while (0)

#define assert_contains(haystack, needle)                                                          \
    do {                                                                                           \
        const char *h_ = (haystack), *n_ = (needle);                                               \
        if (!h_ || !strstr(h_, n_))                                                                \
            fail_msg("'%s' does not contain '%s'", h_ ? h_ : "(null)", n_);                        \
    } while (0)

#endif
