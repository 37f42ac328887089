/*
** mutex.h -- the mutex of lib/, carrying clang's thread-safety attributes,
** so that `clang -Wthread-safety` (a CI stage) holds the locking rules:
** a function marked RV_REQUIRES(m) is only called with M held, one marked
** RV_EXCLUDES(m) only without it, every path of a function releases what
** it takes, and nothing is taken twice.  Under GCC the attributes are
** nothing, and rv_mutex costs what a pthread mutex costs.
**
** What C lets the compiler check, and what it does not: clang's
** guarded_by on a struct field has to name the lock, a sibling field, and
** in C the attribute is parsed before the struct is complete (clang 19's
** -fexperimental-late-parse-attributes parses it, but does not bind the
** name to the object the field is reached through, so every access
** warns).  So which lock guards a field is said in the field's comment,
** and the functions that touch it with the lock held say so with
** RV_REQUIRES, which is checked at every call: the "_locked" suffix names
** what the attribute enforces.
*/
#ifndef RAVEL_MUTEX_H
#define RAVEL_MUTEX_H

#include <pthread.h>
#include <time.h>

#if defined(__clang__)
#define RV_TSA(x) __attribute__((x))
#else
#define RV_TSA(x)
#endif

#define RV_CAPABILITY(name) RV_TSA(capability(name))
#define RV_REQUIRES(...) RV_TSA(requires_capability(__VA_ARGS__))
#define RV_EXCLUDES(...) RV_TSA(locks_excluded(__VA_ARGS__))
#define RV_ACQUIRE(...) RV_TSA(acquire_capability(__VA_ARGS__))
#define RV_RELEASE(...) RV_TSA(release_capability(__VA_ARGS__))
/* For the few functions whose locking the analysis cannot follow (a lock
** taken in one function and released in another, chosen at run time);
** each use says why. */
#define RV_NO_THREAD_SAFETY_ANALYSIS RV_TSA(no_thread_safety_analysis)

typedef struct RV_CAPABILITY("mutex") rv_mutex {
    pthread_mutex_t m;
} rv_mutex;

static inline int rv_mutex_init(rv_mutex *mu)
{
    return pthread_mutex_init(&mu->m, NULL);
}

static inline void rv_mutex_destroy(rv_mutex *mu)
{
    pthread_mutex_destroy(&mu->m);
}

/* The bodies are not analysed: pthread's calls carry no attributes. */
static inline void rv_mutex_lock(rv_mutex *mu) RV_ACQUIRE(*mu);
static inline void rv_mutex_lock(rv_mutex *mu) RV_NO_THREAD_SAFETY_ANALYSIS
{
    pthread_mutex_lock(&mu->m);
}

static inline void rv_mutex_unlock(rv_mutex *mu) RV_RELEASE(*mu);
static inline void rv_mutex_unlock(rv_mutex *mu) RV_NO_THREAD_SAFETY_ANALYSIS
{
    pthread_mutex_unlock(&mu->m);
}

/* pthread_cond_wait on CV with MU, which the caller holds (and holds again
** when it returns). */
static inline void rv_cond_wait(pthread_cond_t *cv, rv_mutex *mu)
    RV_REQUIRES(*mu);
static inline void rv_cond_wait(pthread_cond_t *cv, rv_mutex *mu)
{
    pthread_cond_wait(cv, &mu->m);
}

/* The same with an absolute deadline on the condition variable's clock:
** pthread_cond_timedwait's result. */
static inline int rv_cond_timedwait(pthread_cond_t *cv, rv_mutex *mu,
                                    const struct timespec *until)
    RV_REQUIRES(*mu);
static inline int rv_cond_timedwait(pthread_cond_t *cv, rv_mutex *mu,
                                    const struct timespec *until)
{
    return pthread_cond_timedwait(cv, &mu->m, until);
}

/* Waits on CV for at most MS milliseconds, the deadline read from CLOCK
** (the clock CV was made with): rv_cond_timedwait's result. */
static inline int rv_cond_wait_ms(pthread_cond_t *cv, rv_mutex *mu,
                                  clockid_t clock, long ms)
    RV_REQUIRES(*mu);
static inline int rv_cond_wait_ms(pthread_cond_t *cv, rv_mutex *mu,
                                  clockid_t clock, long ms)
{
    struct timespec until;
    clock_gettime(clock, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    return rv_cond_timedwait(cv, mu, &until);
}

#endif /* RAVEL_MUTEX_H */
