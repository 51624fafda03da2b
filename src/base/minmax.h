/*
 * base/minmax.h - the larger, the smaller and the positive part of two doubles,
 * inline.
 *
 * C's fmax and fmin are calls on x86-64 (gcc inlines them only when told NaN and
 * signed zeros cannot occur, which the input checks rely on); the search calls
 * them millions of times a plan.  These return what fmax and fmin return for
 * every pair, NaN included (a NaN argument yields the other one), and compile to
 * a compare and a select.
 */
#ifndef PARPLAN_MINMAX_H
#define PARPLAN_MINMAX_H

static inline double ppl_max(double a, double b)
{
    return (b > a || a != a) ? b : a;
}

static inline double ppl_min(double a, double b)
{
    return (b < a || a != a) ? b : a;
}

/* max(x, 0): the part of x above zero (0 for NaN) */
static inline double ppl_pos(double x)
{
    return x > 0.0 ? x : 0.0;
}

#endif
