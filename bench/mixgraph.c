/*
** mixgraph.c -- db_bench's MixGraph workload model, drawn as db_bench
** draws it (tools/db_bench_tool.cc: MixGraph, QueryDecider,
** GenerateTwoTermExpKeys, ParetoCdfInversion, PowerCdfInversion).
**
** Each operation starts from one uniform number R in [0, num):
**   - u = R / num;
**   - the operation: R modulo the QueryDecider's range (1000, each op's
**     share rounded up), so the same R picks both the key and the op, as
**     in db_bench;
**   - the key: R itself when key_dist_a or key_dist_b is 0 (uniform);
**     else, with the key-range parameters set, a key range by its
**     two-term-exponential hotness a*exp(b*x) + c*exp(d*x) and a key in it
**     from the power distribution; else the power distribution over all
**     keys: seed = ceil((u / a)^(1 / b)), key = mt19937_64(seed)() % num,
**     so hot keys are scattered over the key space (db_bench takes
**     that remainder signed, which puts half its keys outside [0, num);
**     here it is unsigned, the keys db_bench means);
**   - a put's value size: the generalized Pareto inverse at u with
**     value_theta/k/sigma (below 10: 10; above mix_max_value_size: taken
**     modulo it);
**   - a seek's scan length: the generalized Pareto inverse at u with
**     iter_theta/k/sigma, modulo mix_max_scan_len.
** Owns the model and its generator; does not touch a database.
*/
#include "mixgraph.h"

#include <math.h>
#include <stdlib.h>

/* -------------------------------------------------------- mt19937_64 */

void mg_mt64_seed(struct mg_mt64 *g, uint64_t seed)
{
    g->mt[0] = seed;
    for (int i = 1; i < 312; i++)
        g->mt[i] = 6364136223846793005ull *
                       (g->mt[i - 1] ^ (g->mt[i - 1] >> 62)) + (uint64_t)i;
    g->i = 312;
}

static void mg_mt64_twist(struct mg_mt64 *g)
{
    const uint64_t upper = 0xffffffff80000000ull, lower = 0x7fffffffull;
    for (int i = 0; i < 312; i++) {
        uint64_t x = (g->mt[i] & upper) | (g->mt[(i + 1) % 312] & lower);
        uint64_t xa = x >> 1;
        if (x & 1)
            xa ^= 0xb5026f5aa96619e9ull;
        g->mt[i] = g->mt[(i + 156) % 312] ^ xa;
    }
    g->i = 0;
}

uint64_t mg_mt64_next(struct mg_mt64 *g)
{
    if (g->i >= 312)
        mg_mt64_twist(g);
    uint64_t x = g->mt[g->i++];
    x ^= (x >> 29) & 0x5555555555555555ull;
    x ^= (x << 17) & 0x71d67fffeda60000ull;
    x ^= (x << 37) & 0xfff7eee000000000ull;
    x ^= x >> 43;
    return x;
}

/* ------------------------------------------------- the distributions */

/* ceil(R) as an int64_t.  Where R is infinite or out of range (u = 0
** makes the Pareto inverse infinite) db_bench's cast is undefined; on
** x86-64 it gives INT64_MIN, which is what it gives here. */
static int64_t mg_ceil_int64(double r)
{
    r = ceil(r);
    if (!(r >= -9.2e18 && r <= 9.2e18))
        return INT64_MIN;
    return (int64_t)r;
}

/* The generalized Pareto distribution's inverse CDF, rounded up. */
static int64_t mg_pareto_inverse(double u, double theta, double k,
                                 double sigma)
{
    double r = k == 0.0 ? theta - sigma * log(u)
                        : theta + sigma * (pow(u, -k) - 1) / k;
    return mg_ceil_int64(r);
}

/* The power distribution's (y = a*x^b) inverse, rounded up. */
static int64_t mg_power_inverse(double u, double a, double b)
{
    return mg_ceil_int64(pow(u / a, 1 / b));
}

/* GenerateTwoTermExpKeys::InitiateExpDistribution: each key range's share
** of the accesses, from the coldest up, as integer widths on [0, max);
** then shuffled by an mt19937_64 seeded with max, so the hot ranges are
** not all at one end; the starts recomputed after the shuffle. */
static int mg_keyranges_init(struct mg_model *m)
{
    const struct mg_params *p = &m->p;
    int64_t n = p->keyrange_num <= 0 ? 1 : p->keyrange_num;
    int64_t *access = calloc((size_t)n, sizeof *access);
    m->keyrange_start = calloc((size_t)n, sizeof *m->keyrange_start);
    if (!access || !m->keyrange_start) {
        free(access);
        return -1;
    }
    m->n_keyranges = n;
    m->keyrange_size = p->num / n > 0 ? p->num / n : 1;
    int64_t amplify = 0, total = 0;
    for (int64_t x = n, i = 0; x >= 1; x--, i++) {
        double share = p->keyrange_a * exp(p->keyrange_b * (double)x) +
                       p->keyrange_c * exp(p->keyrange_d * (double)x);
        if (share < 1e-16)
            share = 0;
        if (amplify == 0 && share > 0)
            amplify = (int64_t)floor(1 / share) + 1;
        access[i] = share > 0 ? (int64_t)floor((double)amplify * share) : 0;
        total += access[i];
    }
    m->keyrange_rand_max = total > 0 ? total : 1;
    struct mg_mt64 g;
    mg_mt64_seed(&g, (uint64_t)total);
    for (int64_t i = 0; i < n; i++) {
        int64_t pos = (int64_t)(mg_mt64_next(&g) % (uint64_t)n);
        int64_t tmp = access[i];
        access[i] = access[pos];
        access[pos] = tmp;
    }
    for (int64_t i = 0, at = 0; i < n; i++) {
        m->keyrange_start[i] = at;
        at += access[i];
    }
    free(access);
    return 0;
}

/* GenerateTwoTermExpKeys::DistGetKeyID: the key range R falls in by its
** share, then a key in it by the power distribution. */
static uint64_t mg_keyrange_key(const struct mg_model *m, uint64_t r)
{
    int64_t pick = (int64_t)(r % (uint64_t)m->keyrange_rand_max);
    int64_t lo = 0, hi = m->n_keyranges;
    while (lo + 1 < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (pick < m->keyrange_start[mid])
            hi = mid;
        else
            lo = mid;
    }
    double u = (double)(r % (uint64_t)m->keyrange_size) /
               (double)m->keyrange_size;
    struct mg_mt64 g;
    mg_mt64_seed(&g, (uint64_t)mg_power_inverse(u, m->p.key_dist_a,
                                                m->p.key_dist_b));
    uint64_t offset = mg_mt64_next(&g) % (uint64_t)m->keyrange_size;
    return (uint64_t)(m->keyrange_size * lo) + offset;
}

int mg_model_init(struct mg_model *m, const struct mg_params *p)
{
    m->p = *p;
    m->keyrange_start = NULL;
    double ratio[3] = {p->get_ratio, p->put_ratio, p->seek_ratio};
    double sum = ratio[0] + ratio[1] + ratio[2];
    m->query_range = 0;
    for (int i = 0; i < 3; i++) {
        m->query_range += (int)ceil(1000 * (ratio[i] / sum));
        m->query_bound[i] = m->query_range;
        m->share[i] = ratio[i] / sum;
    }
    m->uniform_keys = p->key_dist_a == 0 || p->key_dist_b == 0;
    m->use_keyranges = p->keyrange_a != 0 || p->keyrange_b != 0 ||
                       p->keyrange_c != 0 || p->keyrange_d != 0;
    if (m->use_keyranges && mg_keyranges_init(m) != 0)
        return -1;
    return 0;
}

void mg_model_free(struct mg_model *m)
{
    free(m->keyrange_start);
    m->keyrange_start = NULL;
}

void mg_model_draw(const struct mg_model *m, uint64_t rand, struct mg_draw *d)
{
    const struct mg_params *p = &m->p;
    uint64_t r = rand % (uint64_t)p->num;
    double u = (double)r / (double)p->num;
    if (m->uniform_keys) {
        d->key = r;
    } else if (m->use_keyranges) {
        d->key = mg_keyrange_key(m, r);
    } else {
        struct mg_mt64 g;
        mg_mt64_seed(&g, (uint64_t)mg_power_inverse(u, p->key_dist_a,
                                                    p->key_dist_b));
        /* db_bench takes the signed remainder, so half its keys are
        ** negative and land outside [0, num); the unsigned one is meant */
        d->key = mg_mt64_next(&g) % (uint64_t)p->num;
    }
    int pos = (int)(r % (uint64_t)m->query_range);
    d->op = MG_GET;
    for (int i = 0; i < 3; i++) {
        if (pos < m->query_bound[i]) {
            d->op = (enum mg_op)i;
            break;
        }
    }
    d->value_size = 0;
    d->scan_len = 0;
    if (d->op == MG_PUT) {
        d->value_size = mg_pareto_inverse(u, p->value_theta, p->value_k,
                                          p->value_sigma);
        if (d->value_size < 10)
            d->value_size = 10;
        else if (d->value_size > p->max_value_size)
            d->value_size %= p->max_value_size;
    } else if (d->op == MG_SEEK) {
        /* db_bench's remainder, negative for INT64_MIN: no scan then */
        d->scan_len = mg_pareto_inverse(u, p->iter_theta, p->iter_k,
                                        p->iter_sigma) % p->max_scan_len;
    }
}
