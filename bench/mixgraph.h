/*
** mixgraph.h -- db_bench's MixGraph workload model (the Facebook social
** graph workload of Cao et al., FAST '20), without the engine: which key
** each operation touches, whether it is a get, a put or a seek, how long
** a put's value is and how far a seek's scan goes.  ravel-bench.c runs the
** operations the model draws.
*/
#ifndef RAVEL_BENCH_MIXGRAPH_H
#define RAVEL_BENCH_MIXGRAPH_H

#include <stdint.h>

/* std::mt19937_64, which RocksDB's Random64 is: mixgraph seeds one per
** operation from a key's rank, so the keys are db_bench's only with the
** same generator. */
struct mg_mt64 {
    uint64_t mt[312];
    int i;
};

void mg_mt64_seed(struct mg_mt64 *g, uint64_t seed);
uint64_t mg_mt64_next(struct mg_mt64 *g);

/* The model's parameters, db_bench's flags of the same names. */
struct mg_params {
    int64_t num;              /* keys: [0, num) */
    double get_ratio, put_ratio, seek_ratio;
    int64_t max_scan_len, max_value_size;
    double key_dist_a, key_dist_b;             /* key hotness a*x^b */
    double keyrange_a, keyrange_b, keyrange_c, keyrange_d;
    int64_t keyrange_num;
    double value_theta, value_k, value_sigma;  /* generalized Pareto */
    double iter_theta, iter_k, iter_sigma;
};

enum mg_op { MG_GET = 0, MG_PUT = 1, MG_SEEK = 2 };

/* The model, built once from the parameters and shared read-only by the
** threads. */
struct mg_model {
    struct mg_params p;
    int query_bound[3];       /* QueryDecider: op i if pos < bound[i] */
    int query_range;
    double share[3];          /* each op's share of the whole */
    int use_keyranges;        /* two-term exponential key-range hotness */
    int uniform_keys;         /* key_dist_a or _b is 0 */
    int64_t keyrange_size, keyrange_rand_max, n_keyranges;
    int64_t *keyrange_start;  /* after the shuffle */
};

/* One operation the model draws from RAND, a uniform 64-bit number (db_bench's
** GetRandomKey(): the thread's generator, taken modulo num). */
struct mg_draw {
    enum mg_op op;
    uint64_t key;
    int64_t value_size;  /* MG_PUT */
    int64_t scan_len;    /* MG_SEEK */
};

/* 0, or -1 if out of memory. */
int mg_model_init(struct mg_model *m, const struct mg_params *p);
void mg_model_free(struct mg_model *m);
void mg_model_draw(const struct mg_model *m, uint64_t rand, struct mg_draw *d);

#endif /* RAVEL_BENCH_MIXGRAPH_H */
