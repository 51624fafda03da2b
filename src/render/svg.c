/*
 * svg.c - charts as inline SVG (render/svg.h).
 *
 * Geometry: a plot area inset by fixed margins; x maps linearly or by log2 onto
 * it, y linearly from 0 (or the lowest value, when negative) to the highest nice
 * tick at or above the data.  Colours are CSS classes, so one stylesheet serves a
 * light and a dark page.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render/svg.h"

const char ppl_svg_css[] =
    "svg.chart{font-family:system-ui,sans-serif;font-size:12px}\n"
    "svg.chart text{fill:#1f2328}\n"
    "svg.chart .axis{stroke:#57606a;stroke-width:1}\n"
    "svg.chart .grid{stroke:#d0d7de;stroke-width:1}\n"
    "svg.chart .limit{stroke:#cf222e;stroke-width:1.5;stroke-dasharray:6 4}\n"
    "svg.chart .bg{fill:#ffffff}\n"
    ".c0{fill:#0969da;stroke:#0969da}.c1{fill:#bf8700;stroke:#bf8700}"
    ".c2{fill:#1a7f37;stroke:#1a7f37}.c3{fill:#8250df;stroke:#8250df}"
    ".c4{fill:#cf222e;stroke:#cf222e}.c5{fill:#57606a;stroke:#57606a}"
    ".c6{fill:#1b7c83;stroke:#1b7c83}.c7{fill:#bc4c00;stroke:#bc4c00}\n"
    "svg.chart polyline{fill:none;stroke-width:2}\n"
    "@media (prefers-color-scheme: dark){\n"
    "svg.chart text{fill:#e6edf3}svg.chart .axis{stroke:#8b949e}"
    "svg.chart .grid{stroke:#30363d}svg.chart .bg{fill:#0d1117}"
    "svg.chart .limit{stroke:#ff7b72}\n"
    ".c0{fill:#4493f8;stroke:#4493f8}.c1{fill:#d29922;stroke:#d29922}"
    ".c2{fill:#3fb950;stroke:#3fb950}.c3{fill:#a371f7;stroke:#a371f7}"
    ".c4{fill:#f85149;stroke:#f85149}.c5{fill:#8b949e;stroke:#8b949e}"
    ".c6{fill:#39c5cf;stroke:#39c5cf}.c7{fill:#f0883e;stroke:#f0883e}\n"
    "}\n";

void ppl_svg_escape(ppl_buf *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': ppl_buf_printf(out, "&amp;"); break;
        case '<': ppl_buf_printf(out, "&lt;"); break;
        case '>': ppl_buf_printf(out, "&gt;"); break;
        case '"': ppl_buf_printf(out, "&quot;"); break;
        case '\'': ppl_buf_printf(out, "&#39;"); break;
        default: ppl_buf_append(out, s, 1);
        }
    }
}

/* The nice step (1, 2 or 5 x 10^k) that cuts span into at most n - 1 parts. */
static double nice_step(double span, int n)
{
    double raw = span / (n > 1 ? n - 1 : 1);
    double mag = pow(10.0, floor(log10(raw)));
    const double steps[] = {1, 2, 2.5, 5, 10};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] * mag >= raw * (1 - 1e-9))
            return steps[i] * mag;
    return 10 * mag;
}

int ppl_svg_ticks(double lo, double hi, bool log_2, int n, double *t)
{
    if (!(hi >= lo) || !isfinite(lo) || !isfinite(hi) || n < 2)
        return 0;
    int k = 0;
    if (log_2) {
        if (lo <= 0)
            return 0;
        int e0 = (int)floor(log2(lo) + 1e-9), e1 = (int)ceil(log2(hi) - 1e-9);
        int every = 1;
        while ((e1 - e0) / every + 1 > n)
            every++;
        for (int e = e0; e <= e1 && k < n; e += every)
            t[k++] = ldexp(1.0, e);
        return k;
    }
    if (hi == lo) {
        t[0] = lo;
        return 1;
    }
    double step = nice_step(hi - lo, n);
    double first = floor(lo / step + 1e-9) * step;
    for (double v = first; v <= hi + step * (1 - 1e-9) && k < n + 1; v += step)
        t[k++] = fabs(v) < step * 1e-9 ? 0.0 : v;
    return k;
}

/* A tick's label: powers of two as integers, others in 3 significant figures
 * with k/M/G for large ones. */
static void tick_label(double v, char *buf, size_t size)
{
    double a = fabs(v);
    if (a >= 1e9)
        snprintf(buf, size, "%.3gG", v / 1e9);
    else if (a >= 1e6)
        snprintf(buf, size, "%.3gM", v / 1e6);
    else if (a >= 1e4)
        snprintf(buf, size, "%.3gk", v / 1e3);
    else
        snprintf(buf, size, "%.4g", v);
}

typedef struct frame {
    double left, top, width, height; /* the plot area */
    double x0, x1, y0, y1;
    bool xlog;
} frame;

static double fx(const frame *f, double x)
{
    double a = f->xlog ? log2(x) : x, lo = f->xlog ? log2(f->x0) : f->x0,
           hi = f->xlog ? log2(f->x1) : f->x1;
    return f->left + (hi > lo ? (a - lo) / (hi - lo) : 0.5) * f->width;
}

static double fy(const frame *f, double y)
{
    return f->top + f->height - (f->y1 > f->y0 ? (y - f->y0) / (f->y1 - f->y0) : 0.0) * f->height;
}

static void open_svg(ppl_buf *out, double w, double h, const char *title)
{
    ppl_buf_printf(out,
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"%.0f\" "
                   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"",
                   w, h, w, h);
    ppl_svg_escape(out, title);
    ppl_buf_printf(out, "\">\n<rect class=\"bg\" width=\"100%%\" height=\"100%%\"/>\n"
                        "<text x=\"12\" y=\"20\" font-weight=\"bold\">");
    ppl_svg_escape(out, title);
    ppl_buf_printf(out, "</text>\n");
}

/* The y axis: grid lines at nice ticks, rounded up so the data fits. */
static void y_axis(ppl_buf *out, frame *f, double lo, double hi, const char *label)
{
    double t[16];
    int n = ppl_svg_ticks(lo < 0 ? lo : 0.0, hi > 0 ? hi : 1.0, false, 6, t);
    f->y0 = n > 0 ? t[0] : 0.0;
    f->y1 = n > 0 ? t[n - 1] : 1.0;
    if (f->y1 < hi)
        f->y1 = hi;
    for (int i = 0; i < n; i++) {
        double y = fy(f, t[i]);
        char l[32];
        tick_label(t[i], l, sizeof l);
        ppl_buf_printf(out,
                       "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                       f->left, f->left + f->width, y, y, f->left - 6, y + 4, l);
    }
    ppl_buf_printf(out,
                   "<text transform=\"translate(14 %.1f) rotate(-90)\" "
                   "text-anchor=\"middle\">",
                   f->top + f->height / 2);
    ppl_svg_escape(out, label);
    ppl_buf_printf(out,
                   "</text>\n<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                   "y2=\"%.1f\"/>\n",
                   f->left, f->left + f->width, f->top + f->height, f->top + f->height);
}

/* A legend entry per name: a swatch of colours[i] (i when NULL), a dashed stroke
 * where dashed[i]. */
static void legend(ppl_buf *out, double x, double y, const char *const *names, const int *colours,
                   const bool *dashed, int n)
{
    for (int i = 0; i < n; i++) {
        int k = (colours ? colours[i] : i) % PPL_SVG_COLOURS;
        if (dashed && dashed[i])
            ppl_buf_printf(out,
                           "<line class=\"c%d\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                           "stroke-width=\"2\" stroke-dasharray=\"3 2\"/>",
                           k, x, x + 10, y + 16.0 * i + 5, y + 16.0 * i + 5);
        else
            ppl_buf_printf(out,
                           "<rect class=\"c%d\" x=\"%.1f\" y=\"%.1f\" width=\"10\" "
                           "height=\"10\"/>",
                           k, x, y + 16.0 * i);
        ppl_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 14, y + 16.0 * i + 9);
        ppl_svg_escape(out, names[i]);
        ppl_buf_printf(out, "</text>\n");
    }
}

void ppl_svg_line(ppl_buf *out, const ppl_svg_line_chart *c)
{
    const bool legend_shown = c->nseries > 1;
    frame f = {.left = 70, .top = 36, .xlog = c->x_log2};
    f.width = c->width - f.left - (legend_shown ? 330 : 24);
    f.height = c->height - f.top - 52;
    double xlo = INFINITY, xhi = -INFINITY, ylo = 0, yhi = -INFINITY;
    for (int s = 0; s < c->nseries; s++)
        for (size_t i = 0; i < c->series[s].n; i++) {
            double x = c->series[s].x[i], y = c->series[s].y[i];
            if (!isfinite(x) || (f.xlog && x <= 0))
                continue;
            xlo = fmin(xlo, x);
            xhi = fmax(xhi, x);
            if (isfinite(y)) {
                ylo = fmin(ylo, y);
                yhi = fmax(yhi, y);
            }
        }
    if (!isfinite(xlo)) {
        xlo = f.xlog ? 1 : 0;
        xhi = xlo + 1;
    }
    if (!isfinite(yhi))
        yhi = 1;
    open_svg(out, c->width, c->height, c->title);
    double t[PPL_SVG_MAX_TICKS];
    int n = c->x_labels ? 0 : ppl_svg_ticks(xlo, xhi, f.xlog, 9, t);
    if (c->x_labels) { /* one tick per category */
        f.xlog = false;
        for (int i = 0; i < c->nx_labels && n < PPL_SVG_MAX_TICKS; i++)
            t[n++] = i;
        xlo = 0;
        xhi = c->nx_labels > 1 ? c->nx_labels - 1 : 1;
    }
    /* the axis spans the data and the ticks around it */
    f.x0 = f.xlog ? fmin(xlo, n ? t[0] : xlo) : xlo;
    f.x1 = f.xlog ? fmax(xhi, n ? t[n - 1] : xhi) : xhi;
    if (f.x1 == f.x0) {
        f.x0 = f.xlog ? f.x0 / 2 : f.x0 - 1;
        f.x1 = f.xlog ? f.x1 * 2 : f.x1 + 1;
        n = ppl_svg_ticks(f.x0, f.x1, f.xlog, 9, t);
    }
    y_axis(out, &f, ylo, yhi, c->y_label);
    for (int i = 0; i < n; i++) {
        if (t[i] < f.x0 * (1 - 1e-9) || t[i] > f.x1 * (1 + 1e-9))
            continue;
        char l[64];
        if (c->x_labels)
            snprintf(l, sizeof l, "%s", c->x_labels[i]);
        else
            tick_label(t[i], l, sizeof l);
        double x = fx(&f, t[i]);
        ppl_buf_printf(out,
                       "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                       x, x, f.top + f.height, f.top + f.height + 5, x, f.top + f.height + 18);
        ppl_svg_escape(out, l);
        ppl_buf_printf(out, "</text>\n");
    }
    ppl_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", f.left + f.width / 2,
                   c->height - 10);
    ppl_svg_escape(out, c->x_label);
    ppl_buf_printf(out, "%s</text>\n", f.xlog ? " (log2 axis)" : "");
    const char *names[2 * PPL_SVG_COLOURS];
    int colours[2 * PPL_SVG_COLOURS], nnames = 0;
    bool dashed[2 * PPL_SVG_COLOURS];
    for (int s = 0; s < c->nseries; s++) {
        const ppl_svg_series *se = &c->series[s];
        const int k = (se->colour >= 0 ? se->colour : s) % PPL_SVG_COLOURS;
        ppl_buf_printf(out, "<g data-series=\"");
        ppl_svg_escape(out, se->name);
        ppl_buf_printf(out, "\">\n<polyline class=\"c%d\"%s points=\"", k,
                       se->dashed ? " stroke-dasharray=\"5 4\"" : "");
        for (size_t i = 0; i < se->n; i++) /* a gap ends the line; later dots stand alone */
            if (isfinite(se->y[i]) && (!f.xlog || se->x[i] > 0))
                ppl_buf_printf(out, "%.1f,%.1f ", fx(&f, se->x[i]), fy(&f, se->y[i]));
            else
                break;
        ppl_buf_printf(out, "\"/>\n");
        for (size_t i = 0; i < se->n; i++) {
            if (!isfinite(se->y[i]) || (f.xlog && se->x[i] <= 0))
                continue;
            ppl_buf_printf(out,
                           "<circle class=\"c%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
                           "data-x=\"%.17g\" data-value=\"%.17g\"><title>%.6g, %.4g</title>"
                           "</circle>\n",
                           k, fx(&f, se->x[i]), fy(&f, se->y[i]), se->x[i], se->y[i], se->x[i],
                           se->y[i]);
        }
        ppl_buf_printf(out, "</g>\n");
        if (nnames < 2 * PPL_SVG_COLOURS) {
            colours[nnames] = k;
            dashed[nnames] = se->dashed;
            names[nnames++] = se->name;
        }
    }
    if (legend_shown)
        legend(out, f.left + f.width + 16, f.top, names, colours, dashed, nnames);
    ppl_buf_printf(out, "</svg>\n");
}

void ppl_svg_bars(ppl_buf *out, const ppl_svg_bar_chart *c)
{
    const double scale = c->scale > 0 ? c->scale : 1.0;
    const bool h = c->horizontal;
    frame f = {.left = h ? 110 : 70, .top = 36};
    f.width = c->width - f.left - 170;
    f.height = c->height - f.top - (h ? 44 : 52);
    double hi = c->limit / scale;
    for (size_t i = 0; i < c->ncat; i++) {
        double sum = 0;
        for (int p = 0; p < c->nparts; p++)
            sum += c->values[i * (size_t)c->nparts + (size_t)p] / scale;
        hi = fmax(hi, sum);
    }
    open_svg(out, c->width, c->height, c->title);
    double t[16];
    int n = ppl_svg_ticks(0.0, hi > 0 ? hi : 1.0, false, 6, t);
    double top = n > 0 ? fmax(t[n - 1], hi) : 1.0;
    if (top <= 0)
        top = 1.0;
    /* value v along the bars' axis, from the axis origin */
    const double len = h ? f.width : f.height;
#define AT(v) ((v) / top * len)
    for (int i = 0; i < n; i++) {
        char l[32];
        tick_label(t[i], l, sizeof l);
        if (h)
            ppl_buf_printf(out,
                           "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                           "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                           f.left + AT(t[i]), f.left + AT(t[i]), f.top, f.top + f.height,
                           f.left + AT(t[i]), f.top + f.height + 16, l);
        else
            ppl_buf_printf(out,
                           "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                           "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                           f.left, f.left + f.width, f.top + f.height - AT(t[i]),
                           f.top + f.height - AT(t[i]), f.left - 6, f.top + f.height - AT(t[i]) + 4,
                           l);
    }
    if (h) {
        ppl_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                       f.left + f.width / 2, c->height - 6);
    } else {
        ppl_buf_printf(out,
                       "<text transform=\"translate(14 %.1f) rotate(-90)\" "
                       "text-anchor=\"middle\">",
                       f.top + f.height / 2);
    }
    ppl_svg_escape(out, c->y_label);
    ppl_buf_printf(out, "</text>\n");
    const double slot = (h ? f.height : f.width) / (double)(c->ncat ? c->ncat : 1);
    const double thick = fmin(slot * 0.7, 60.0);
    for (size_t i = 0; i < c->ncat; i++) {
        double at = (h ? f.top : f.left) + slot * ((double)i + 0.5);
        double acc = 0;
        ppl_buf_printf(out, "<g data-category=\"");
        ppl_svg_escape(out, c->categories[i]);
        ppl_buf_printf(out, "\">\n");
        for (int p = 0; p < c->nparts; p++) {
            double v = c->values[i * (size_t)c->nparts + (size_t)p];
            double a = AT(acc / scale), b = AT(v / scale);
            acc += v;
            if (!(v > 0))
                continue;
            ppl_buf_printf(out, "<rect class=\"c%d\" data-part=\"", p % PPL_SVG_COLOURS);
            ppl_svg_escape(out, c->parts[p]);
            if (h)
                ppl_buf_printf(out,
                               "\" data-value=\"%.17g\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                               "height=\"%.2f\">",
                               v, f.left + a, at - thick / 2, b, thick);
            else
                ppl_buf_printf(out,
                               "\" data-value=\"%.17g\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                               "height=\"%.2f\">",
                               v, at - thick / 2, f.top + f.height - a - b, thick, b);
            ppl_buf_printf(out, "<title>");
            ppl_svg_escape(out, c->parts[p]);
            ppl_buf_printf(out, ": %.4g %s</title></rect>\n", v / scale, c->y_label);
        }
        ppl_buf_printf(out, "</g>\n");
        /* at most about 32 labels along the axis: every k-th category */
        const size_t every = c->ncat > 32 ? (c->ncat + 31) / 32 : 1;
        if (i % every != 0)
            continue;
        if (h) {
            ppl_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", f.left - 6,
                           at + 4);
        } else {
            ppl_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", at,
                           f.top + f.height + 16);
        }
        ppl_svg_escape(out, c->categories[i]);
        ppl_buf_printf(out, "</text>\n");
    }
    if (c->limit > 0) {
        double l = AT(c->limit / scale);
        if (h)
            ppl_buf_printf(out,
                           "<line class=\"limit\" data-value=\"%.17g\" x1=\"%.1f\" x2=\"%.1f\" "
                           "y1=\"%.1f\" y2=\"%.1f\"/>\n",
                           c->limit, f.left + l, f.left + l, f.top, f.top + f.height);
        else
            ppl_buf_printf(out,
                           "<line class=\"limit\" data-value=\"%.17g\" x1=\"%.1f\" x2=\"%.1f\" "
                           "y1=\"%.1f\" y2=\"%.1f\"/>\n",
                           c->limit, f.left, f.left + f.width, f.top + f.height - l,
                           f.top + f.height - l);
        ppl_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"c4\" stroke=\"none\">",
                       h ? f.left + l + 4 : f.left + f.width + 8,
                       h ? f.top - 4 : f.top + f.height - l + 4);
        ppl_svg_escape(out, c->limit_label ? c->limit_label : "limit");
        ppl_buf_printf(out, "</text>\n");
    }
    if (c->nparts > 1)
        legend(out, f.left + f.width + 24, f.top + (c->limit > 0 && !h ? 20 : 0), c->parts, NULL,
               NULL, c->nparts < PPL_SVG_COLOURS ? c->nparts : PPL_SVG_COLOURS);
    ppl_buf_printf(out, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
                   f.left, h ? f.left : f.left + f.width, h ? f.top : f.top + f.height,
                   f.top + f.height);
#undef AT
    ppl_buf_printf(out, "</svg>\n");
}
