/*
 * balance.c - layers per pipeline stage by a small integer program (GLPK).
 *
 * Stage k holding n_k contiguous layers takes tau_k n_k + c_k per microbatch (c_0
 * carries the embedding, c_{p-1} the output layer and loss) and needs
 * mu_k n_k + f_k bytes (earlier stages keep more microbatches in flight, so mu
 * falls with k).  The pipeline runs at the pace of its slowest stage, so:
 *
 *     minimise z  subject to  z >= tau_k n_k + c_k,  sum n_k = L,
 *                             mu_k n_k <= capacity - f_k,  n_k >= 1 integer.
 *
 * The coefficients come from the step-time and memory models themselves (each
 * stage evaluated with one and with two layers), so the split is balanced in the
 * same terms that rank it.  Llama 3 405B's 126 layers on 16 stages is the example:
 * an even split does not exist, and the first and last stages carry extra work.
 *
 * The search builds only what Megatron-LM's first/last-stage flags express: equal
 * middle stages and two free ends (ppl_balance_ends).  That problem needs no
 * integer program: for each middle count m, the ends share R = L - (p-2)m layers
 * and the slower end is fastest where their two lines cross, so a scan over m is
 * exact.  ppl_balance_solve, the integer program over any split, says what a
 * launcher that places every stage's layers (--pipeline-model-parallel-layout)
 * would gain.
 */
#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/balance.h"

#include "base/minmax.h"

/*
 * A starting solution for the branch and bound.  For a bound z on the slowest
 * stage, stage k takes at most n_k(z) = min(ub_k, floor((z - c_k) / tau_k))
 * layers, and z is achievable iff every n_k(z) >= 1 and sum n_k(z) >= L (take
 * layers back from any stage down to one: that never raises a stage's time).
 * Bisection on z finds the smallest such z.  The split proves itself optimal
 * when below its slowest stage's time the stages cannot hold the L layers
 * (split_optimal: an exact certificate, in the objective's own arithmetic); where
 * it does not (rounding at a tie), GLPK starts from it and proves it optimal or
 * improves on it.  The branch and bound alone took a third of a mixed cluster's
 * plan.
 */
static int64_t layers_at(double z, double tau, double c, int64_t ub)
{
    if (tau <= 0)
        return z >= c ? ub : 0;
    double n = floor((z - c) / tau * (1.0 + 1e-12));
    if (n < 0)
        return 0;
    return n >= (double)ub ? ub : (int64_t)n;
}

static int threshold_split(int64_t p, int64_t L, const double *tau, const double *c,
                           const int64_t *ub, int64_t *n)
{
    double lo = 0.0, hi = 0.0;
    for (int64_t k = 0; k < p; k++) {
        double top = tau[k] * (double)ub[k] + c[k];
        if (top > hi)
            hi = top;
    }
    for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        int64_t sum = 0;
        int ok = 1;
        for (int64_t k = 0; k < p && ok; k++) {
            int64_t nk = layers_at(mid, tau[k], c[k], ub[k]);
            ok = nk >= 1;
            sum += nk;
        }
        if (ok && sum >= L)
            hi = mid;
        else
            lo = mid;
    }
    int64_t sum = 0;
    for (int64_t k = 0; k < p; k++) {
        n[k] = layers_at(hi, tau[k], c[k], ub[k]);
        if (n[k] < 1)
            return 0;
        sum += n[k];
    }
    if (sum < L)
        return 0;
    /* give back the surplus from the slowest stages first */
    while (sum > L) {
        int64_t worst = -1;
        for (int64_t k = 0; k < p; k++)
            if (n[k] > 1 && (worst < 0 || tau[k] * (double)n[k] + c[k] >
                                              tau[worst] * (double)n[worst] + c[worst]))
                worst = k;
        if (worst < 0)
            return 0;
        n[worst]--;
        sum--;
    }
    return 1;
}

/* Whether no split has a slowest stage below split n's, z: below z stage k holds
 * at most m_k layers, the most with tau_k m + c_k < z (and at most ub_k); if a
 * stage cannot hold one, or the m_k sum below L, no split is faster than n.  The
 * times are the objective's own arithmetic, so the certificate is exact. */
static bool split_optimal(int64_t p, int64_t L, const double *tau, const double *c,
                          const int64_t *ub, const int64_t *n, double *z_out)
{
    double z = 0.0;
    for (int64_t k = 0; k < p; k++)
        z = ppl_max(z, tau[k] * (double)n[k] + c[k]);
    *z_out = z;
    int64_t sum = 0;
    for (int64_t k = 0; k < p; k++) {
        int64_t m = ub[k];
        if (tau[k] > 0.0) { /* from the line, then exactly by the objective's arithmetic */
            const double guess = floor((z - c[k]) / tau[k]);
            m = guess < 0.0 ? 0 : guess < (double)ub[k] ? (int64_t)guess : ub[k];
            while (m < ub[k] && tau[k] * (double)(m + 1) + c[k] < z)
                m++;
        }
        while (m >= 1 && !(tau[k] * (double)m + c[k] < z))
            m--;
        if (m < 1)
            return true;
        sum += m;
        if (sum >= L)
            return false;
    }
    return true;
}

struct incumbent {
    const double *x; /* x[1..p+1]: layers per stage, then z */
    int given;
};

static void give_incumbent(glp_tree *tree, void *info)
{
    struct incumbent *inc = info;
    if (glp_ios_reason(tree) == GLP_IHEUR && !inc->given && inc->x) {
        inc->given = 1;
        glp_ios_heur_sol(tree, inc->x);
    }
}

static ppl_status solve(int64_t p, int64_t L, const double *tau, const double *c, const double *mu,
                        const double *cap, int64_t *out, double *objective, bool certify)
{
    if (p < 1 || L < p)
        return PPL_INFEASIBLE;
    /* upper bounds from memory; a stage that cannot hold one layer ends it */
    int64_t *ub = malloc((size_t)p * sizeof *ub);
    int *ia = malloc((size_t)(3 * p + 1) * sizeof *ia),
        *ja = malloc((size_t)(3 * p + 1) * sizeof *ja);
    double *ar = malloc((size_t)(3 * p + 1) * sizeof *ar);
    if (!ub || !ia || !ja || !ar) {
        free(ub);
        free(ia);
        free(ja);
        free(ar);
        return PPL_EINTERNAL;
    }
    ppl_status st = PPL_OK;
    int64_t room = 0;
    double scale = 0.0;
    for (int64_t k = 0; k < p; k++) {
        if (!isfinite(tau[k]) || !isfinite(c[k]) || !isfinite(mu[k]) || !isfinite(cap[k]) ||
            tau[k] < 0) {
            st = PPL_EINTERNAL;
            goto out_free;
        }
        int64_t bound = L - (p - 1);
        if (mu[k] > 0) {
            double fit = floor(cap[k] / mu[k]);
            if (fit < (double)bound)
                bound = fit < 0 ? 0 : (int64_t)fit;
        } else if (cap[k] < 0) {
            bound = 0;
        }
        ub[k] = bound;
        room += bound;
        if (bound < 1) {
            st = PPL_INFEASIBLE;
            goto out_free;
        }
        if (tau[k] > scale)
            scale = tau[k];
    }
    if (room < L) {
        st = PPL_INFEASIBLE;
        goto out_free;
    }
    if (scale <= 0)
        scale = 1.0;

    /* the bisection's split, when it proves itself optimal (split_optimal), is
     * the answer; else GLPK starts from it (or from nothing) */
    const bool have = threshold_split(p, L, tau, c, ub, out);
    double z_split;
    if (certify && have && split_optimal(p, L, tau, c, ub, out, &z_split)) {
        if (objective)
            *objective = z_split;
        goto out_free;
    }
    glp_term_out(GLP_OFF);
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_cols(lp, (int)p + 1);
    for (int64_t k = 0; k < p; k++) {
        int col = (int)k + 1;
        glp_set_col_kind(lp, col, GLP_IV);
        if (ub[k] > 1)
            glp_set_col_bnds(lp, col, GLP_DB, 1.0, (double)ub[k]);
        else
            glp_set_col_bnds(lp, col, GLP_FX, 1.0, 1.0);
    }
    int z = (int)p + 1;
    glp_set_col_bnds(lp, z, GLP_FR, 0.0, 0.0);
    glp_set_obj_coef(lp, z, 1.0);
    glp_add_rows(lp, (int)p + 1);
    int nz = 0;
    for (int64_t k = 0; k < p; k++) {
        int row = (int)k + 1;
        glp_set_row_bnds(lp, row, GLP_LO, c[k] / scale, 0.0);
        ia[++nz] = row, ja[nz] = z, ar[nz] = 1.0;
        ia[++nz] = row, ja[nz] = (int)k + 1, ar[nz] = -tau[k] / scale;
    }
    int sum_row = (int)p + 1;
    glp_set_row_bnds(lp, sum_row, GLP_FX, (double)L, (double)L);
    for (int64_t k = 0; k < p; k++)
        ia[++nz] = sum_row, ja[nz] = (int)k + 1, ar[nz] = 1.0;
    glp_load_matrix(lp, nz, ia, ja, ar);
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    struct incumbent inc = {.x = NULL, .given = 0};
    if (have) {
        inc.x = ar; /* the matrix is loaded: reuse its storage for x[1..p+1] */
        double zmax = 0.0;
        for (int64_t k = 0; k < p; k++) {
            ar[k + 1] = (double)out[k];
            double zk = (tau[k] * (double)out[k] + c[k]) / scale;
            if (zk > zmax)
                zmax = zk;
        }
        ar[p + 1] = zmax;
        parm.cb_func = give_incumbent;
        parm.cb_info = &inc;
    }
    /* no presolver: the starting split is given in the original columns; the
     * relaxation is solved first, as glp_intopt then requires */
    glp_smcp lp_parm;
    glp_init_smcp(&lp_parm);
    lp_parm.msg_lev = GLP_MSG_OFF;
    int lp_rc = glp_simplex(lp, &lp_parm);
    if (lp_rc != 0 || glp_get_status(lp) != GLP_OPT) {
        st = lp_rc == 0 && glp_get_status(lp) == GLP_NOFEAS ? PPL_INFEASIBLE : PPL_EINTERNAL;
        glp_delete_prob(lp);
        goto out_free;
    }
    int rc = glp_intopt(lp, &parm);
    int status = glp_mip_status(lp);
    if (rc == 0 && status == GLP_OPT) {
        int64_t sum = 0;
        for (int64_t k = 0; k < p; k++) {
            out[k] = (int64_t)llround(glp_mip_col_val(lp, (int)k + 1));
            if (out[k] < 1 || out[k] > ub[k])
                st = PPL_EINTERNAL;
            sum += out[k];
        }
        if (sum != L)
            st = PPL_EINTERNAL; /* never hand back a split that loses layers */
        if (objective)
            *objective = glp_mip_obj_val(lp) * scale;
    } else {
        st = (rc == 0 || rc == GLP_ENOPFS || rc == GLP_ENODFS) ? PPL_INFEASIBLE : PPL_EINTERNAL;
    }
    glp_delete_prob(lp);
out_free:
    free(ub);
    free(ia);
    free(ja);
    free(ar);
    return st;
}

ppl_status ppl_balance_solve(int64_t p, int64_t L, const double *tau, const double *c,
                             const double *mu, const double *cap, int64_t *out, double *objective)
{
    return solve(p, L, tau, c, mu, cap, out, objective, true);
}

ppl_status ppl_balance_milp(int64_t p, int64_t L, const double *tau, const double *c,
                            const double *mu, const double *cap, int64_t *out, double *objective)
{
    return solve(p, L, tau, c, mu, cap, out, objective, false);
}

ppl_status ppl_balance_stages(const ppl_eval_ctx *ctx, const ppl_config *c, int64_t *layers)
{
    const int64_t p = c->pp;
    if (p < 2 || c->vp > 1)
        return PPL_INFEASIBLE;
    double *coef = malloc((size_t)(4 * p) * sizeof *coef);
    if (!coef)
        return PPL_EINTERNAL;
    double *tau = coef, *cst = coef + p, *mu = coef + 2 * p, *cap = coef + 3 * p;
    ppl_layout l;
    ppl_micro mi;
    ppl_layout_init(ctx, c, &l);
    ppl_micro_comm_init(ctx, c, &l, &mi);
    ppl_micro_compute_init(ctx, c, &mi);
    /* each stage with one and with two layers: time and memory are linear in them
     * (MoE models: the stage's share of MoE layers kept as it is) */
    for (int64_t k = 0; k < p; k++) {
        int64_t n, moe;
        ppl_stage_layer_counts(ctx->model, c, k, &n, &moe);
        int64_t moe1 = moe > 0 ? 1 : 0, moe2 = moe > 1 ? 2 : moe1;
        ppl_memory m1, m2;
        double t1 = ppl_stage_time_cached(ctx, c, &l, &mi, k, 1, moe1, &m1, NULL);
        double t2 = ppl_stage_time_cached(ctx, c, &l, &mi, k, 2, moe2, &m2, NULL);
        tau[k] = t2 - t1;
        cst[k] = t1 - tau[k];
        mu[k] = m2.total - m1.total;
        cap[k] = m1.capacity - (m1.total - mu[k]);
    }
    ppl_status st = ppl_balance_solve(p, ctx->model->layers, tau, cst, mu, cap, layers, NULL);
    free(coef);
    return st;
}

/* Per microbatch time tau n + c and memory mu n + f <= cap of a stage of n layers,
 * from the models themselves (the stage evaluated with one and with two layers). */
typedef struct stage_line {
    double tau, c;
    int64_t ub; /* the most layers that fit in memory */
} stage_line;

/* The line through a stage's times with one layer and with two, up to `limit`
 * layers (none where either is not finite: no stage to balance) */
static stage_line line_through(double t1, double t2, int64_t limit)
{
    stage_line r = {t2 - t1, 2.0 * t1 - t2, limit};
    if (!isfinite(r.tau) || !isfinite(r.c))
        r.ub = 0;
    return r;
}

static stage_line line_of(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                          const ppl_micro *mi, int64_t stage, int64_t limit, ppl_balance_memo *memo,
                          int slot)
{
    int64_t n, moe;
    ppl_stage_layer_counts(ctx->model, c, stage, &n, &moe);
    int64_t moe1 = moe > 0 ? 1 : 0, moe2 = moe > 1 ? 2 : moe1;
    ppl_memory m1, m2;
    double t1, t2;
    if (memo && c->zero < 3 && memo->known[slot]) { /* the times kept, the memory anew */
        const double cap = ctx->topo->gpu.memory_bytes;
        ppl_memory_at(c, &ctx->memory, &mi->mem, cap, stage, 1, moe1, &m1);
        ppl_memory_at(c, &ctx->memory, &mi->mem, cap, stage, 2, moe2, &m2);
        t1 = memo->t1_s[slot];
        t2 = memo->t2_s[slot];
    } else {
        ppl_stage_dp_cache *dp = memo ? memo->dp : NULL;
        t1 = ppl_stage_time_cached(ctx, c, l, mi, stage, 1, moe1, &m1, dp);
        t2 = ppl_stage_time_cached(ctx, c, l, mi, stage, 2, moe2, &m2, dp);
        if (memo && c->zero < 3) {
            memo->known[slot] = true;
            memo->t1_s[slot] = t1;
            memo->t2_s[slot] = t2;
        }
    }
    stage_line r = line_through(t1, t2, limit);
    double mu = m2.total - m1.total, room = m1.capacity - (m1.total - mu);
    if (room < mu)
        r.ub = 0;
    else if (mu > 0 && room / mu < (double)limit)
        r.ub = (int64_t)floor(room / mu);
    return r;
}

static double at(const stage_line *s, int64_t n)
{
    return s->tau * (double)n + s->c;
}

/* The best first-stage count for first + last = R: the slower of the two ends is
 * fastest where their lines cross; the integers either side, within bounds. */
static int64_t best_first(const stage_line *f, const stage_line *l, int64_t R, double *worst)
{
    int64_t lo = R - l->ub > 1 ? R - l->ub : 1, hi = f->ub < R - 1 ? f->ub : R - 1;
    *worst = INFINITY;
    if (lo > hi)
        return 0;
    double x = f->tau + l->tau > 0 ? (l->tau * (double)R + l->c - f->c) / (f->tau + l->tau) : lo;
    x = isfinite(x) ? ppl_min(ppl_max(x, (double)lo), (double)hi) : (double)lo; /* cast in range */
    /* x in [lo, hi], lo >= 1: the cast is its floor, and the floor and ceiling in
     * range; a count met before gives what it gave (ties keep the smaller) */
    const int64_t below = (int64_t)x, above = below + ((double)below < x);
    int64_t cand[4] = {lo, hi, below, above}, best = 0;
    for (int i = 0; i < 4; i++) {
        const int64_t a = cand[i];
        if ((i > 0 && a == cand[0]) || (i > 1 && a == cand[1]) || (i > 2 && a == cand[2]))
            continue;
        double w = ppl_max(at(f, a), at(l, R - a));
        if (w < *worst || (w == *worst && a < best)) {
            *worst = w;
            best = a;
        }
    }
    return best;
}

/* The ends' least slowest stage when each of the p - 2 middle stages holds m of
 * the L layers */
static double ends_at(const stage_line *f, const stage_line *l, int64_t p, int64_t L, int64_t m)
{
    double ends;
    (void)best_first(f, l, L - (p - 2) * m, &ends);
    return ends;
}

/* Where no line falls, the ends' least slowest stage E(m) does not rise with m
 * (infinite while they cannot hold the rest) and the middle's M(m) does not fall:
 * the first m in [1, hi) where M(m) >= E(m), or hi */
static int64_t crossing(const stage_line *f, const stage_line *mid, const stage_line *l, int64_t p,
                        int64_t L, int64_t hi)
{
    int64_t lo = 1;
    while (lo < hi) {
        const int64_t m = lo + (hi - lo) / 2;
        if (at(mid, m) >= ends_at(f, l, p, L, m))
            hi = m;
        else
            lo = m + 1;
    }
    return lo;
}

static ppl_status ends_split(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                             const ppl_micro *mi, ppl_balance_memo *memo, bool bisect,
                             ppl_stage_split *out)
{
    const int64_t p = c->pp, L = ctx->model->layers;
    if (p < 2 || c->vp > 1 || L < p)
        return PPL_INFEASIBLE;
    stage_line f = line_of(ctx, c, l, mi, 0, L, memo, 0),
               last = line_of(ctx, c, l, mi, p - 1, L, memo, 2);
    double best = INFINITY;
    if (p == 2) {
        int64_t first = best_first(&f, &last, L, &best);
        if (first == 0)
            return PPL_INFEASIBLE;
        *out = (ppl_stage_split){first, L - first, 0};
        return PPL_OK;
    }
    /* stage 1 holds the most microbatches in flight of the middle stages: its
     * memory bounds theirs */
    stage_line mid = line_of(ctx, c, l, mi, 1, L, memo, 1);
    const int64_t top = (L - 2) / (p - 2) < mid.ub ? (L - 2) / (p - 2) : mid.ub;
    int64_t from = 1, to = top; /* the middle stages' layers to scan */
    if (bisect && top > 16 && f.tau >= 0.0 && last.tau >= 0.0 && mid.tau >= 0.0) {
        /* lines that do not fall (crossing): the least of max(E, M) is M at the
         * first m where M >= E, or E just before it, and the scan keeps the fewest
         * middle layers of equal time: from the first m where M >= E back over the
         * m whose E is E's there */
        const int64_t lo = crossing(&f, &mid, &last, p, L, top + 1);
        const double before = lo > 1 ? ends_at(&f, &last, p, L, lo - 1) : INFINITY;
        from = lo > 1 ? lo - 1 : 1;
        to = lo <= top ? lo : top;
        while (from > 1 && isfinite(before) && ends_at(&f, &last, p, L, from - 1) == before)
            from--;
    }
    for (int64_t m = from; m <= to; m++) {
        double ends;
        int64_t R = L - (p - 2) * m, first = best_first(&f, &last, R, &ends);
        double worst = ppl_max(ends, at(&mid, m));
        if (first > 0 && worst < best) {
            best = worst;
            *out = (ppl_stage_split){first, R - first, m};
        }
    }
    return isfinite(best) ? PPL_OK : PPL_INFEASIBLE;
}

ppl_status ppl_balance_ends(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                            const ppl_micro *mi, ppl_balance_memo *memo, ppl_stage_split *out)
{
    return ends_split(ctx, c, l, mi, memo, true, out);
}

ppl_status ppl_balance_ends_scanned(const ppl_eval_ctx *ctx, const ppl_config *c,
                                    const ppl_layout *l, const ppl_micro *mi, ppl_stage_split *out)
{
    return ends_split(ctx, c, l, mi, NULL, false, out);
}

/* The slowest of the ends and the middle stages with m layers in each middle one */
static double slowest_at(const stage_line *line, int64_t p, int64_t L, int64_t m)
{
    return ppl_max(ends_at(&line[0], &line[2], p, L, m), at(&line[1], m));
}

/* Convexity: with every layer of one kind, a stage's total (stage.c
 * ppl_stage_eval) is its layers' compute, linear in n, plus the output layer's or
 * nothing, plus exposed and hidden terms each n times a layer's, and the host's
 * wait, max(launches, compute + exposed) less the latter: convex in n, where no
 * expert exchange hides under another microbatch's compute (ep_hidden,
 * min(share x ep, share x compute), is concave), each rank runs one copy of its
 * stage (not DualPipe) and the recomputation is the lines' own (not a count the
 * search picks after balancing). */
double ppl_balance_least_s(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi,
                           const ppl_balance_memo *memo, bool recompute_fixed)
{
    const ppl_model *model = ctx->model;
    const int64_t p = c->pp, L = model->layers, moe_all = ppl_moe_layers_in(model, 0, L);
    if (!recompute_fixed || mi->ep_hidden_share > 0.0 || (moe_all != 0 && moe_all != L) ||
        ppl_schedule_of(c->schedule)->param_copies != 1.0)
        return 0.0;
    if (!memo || c->zero >= 3 || p < 2 || c->vp > 1 || L < p || !memo->known[0] ||
        !memo->known[2] || (p > 2 && !memo->known[1]))
        return 0.0;
    stage_line line[3];
    for (int i = 0; i < 3; i++) {
        line[i] = line_through(memo->t1_s[i], memo->t2_s[i], L);
        if ((i != 1 || p > 2) && line[i].ub == 0)
            return 0.0;
    }
    double best = INFINITY;
    if (p == 2) {
        (void)best_first(&line[0], &line[2], L, &best);
    } else if (line[0].tau < 0.0 || line[1].tau < 0.0 || line[2].tau < 0.0) {
        for (int64_t m = 1; (p - 2) * m <= L - 2; m++)
            best = ppl_min(best, slowest_at(line, p, L, m));
    } else {
        /* lines that do not fall (crossing): the least of max(E, M) is at the
         * first m where M >= E, or the one before; (L - 2) / (p - 2) is the most
         * a middle stage holds */
        const int64_t lo = crossing(&line[0], &line[1], &line[2], p, L, (L - 2) / (p - 2));
        best = slowest_at(line, p, L, lo);
        if (lo > 1)
            best = ppl_min(best, slowest_at(line, p, L, lo - 1));
    }
    return isfinite(best) && best > 0.0 ? best * (1.0 - 1e-12) : 0.0;
}
