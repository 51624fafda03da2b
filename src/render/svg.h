/*
 * render/svg.h - charts as inline SVG: numeric axes (linear, or log2 for GPU
 * counts and batch sizes, so 992 and 1000 sit together and 1024 and 2048 one step
 * apart), lines with their points, stacked bars with a limit line, and the
 * stylesheet that colours them in light and dark mode.
 *
 * Every drawn value carries its figure in a data-value attribute and a <title>
 * tooltip, so a reader (or a test) can read back what a mark stands for.  Text
 * from input files (model and topology names) is escaped.
 */
#ifndef PARPLAN_SVG_H
#define PARPLAN_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/output.h"

#define PPL_SVG_COLOURS 8    /* classes c0 .. c7 */
#define PPL_SVG_MAX_TICKS 32 /* category ticks drawn at most */

/* The CSS of the chart classes (c0..c7 fills and strokes, axes, text), light by
 * default and dark under prefers-color-scheme: dark. */
extern const char ppl_svg_css[];

/* Appends s with &, <, >, " and ' escaped for XML text and attributes. */
void ppl_svg_escape(ppl_buf *out, const char *s);

/* Up to n "nice" ticks (1, 2, 5 x 10^k steps) from lo to hi, returned in t[];
 * the count.  log_2: the powers of two in [lo, hi] (every other one, or sparser,
 * when there are more than n). */
int ppl_svg_ticks(double lo, double hi, bool log_2, int n, double *t);

typedef struct ppl_svg_series {
    const char *name;
    const double *x, *y; /* n points; a non-finite y is a gap */
    size_t n;
    bool dashed; /* a companion line (the same figure under other assumptions) */
    int colour;  /* its class c0..c7; -1: the series' index */
} ppl_svg_series;

typedef struct ppl_svg_line_chart {
    const char *title;
    const char *x_label, *y_label; /* with their units: "GPUs", "tokens/s" */
    bool x_log2;                   /* x on a log2 axis (all x > 0) */
    /* categories instead of numbers: x = 0 .. n - 1 is labelled x_labels[x] */
    const char *const *x_labels;
    int nx_labels;
    const ppl_svg_series *series;
    int nseries;
    double width, height; /* pixels */
} ppl_svg_line_chart;

/* A line chart: y from 0 up, one line and dots per series, a legend when there
 * are several. */
void ppl_svg_line(ppl_buf *out, const ppl_svg_line_chart *c);

typedef struct ppl_svg_bar_chart {
    const char *title;
    const char *y_label;           /* the unit of the values after scaling: "GiB" */
    const char *const *categories; /* ncat bars, left to right */
    size_t ncat;
    const char *const *parts; /* nparts stacked segments, bottom up */
    int nparts;
    const double *values; /* ncat x nparts, row-major, in the values' unit */
    double scale;         /* values / scale are drawn and labelled */
    double limit;         /* a dashed line (capacity), 0 for none */
    const char *limit_label;
    bool horizontal; /* bars to the right, categories down */
    double width, height;
} ppl_svg_bar_chart;

/* Stacked bars (nparts = 1: plain bars), a legend of the parts, the limit line. */
void ppl_svg_bars(ppl_buf *out, const ppl_svg_bar_chart *c);

#endif
