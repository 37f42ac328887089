/*
** read_view.c -- whether a view sees a sequence between its two bounds
** (write_prepared; read_view.h): the commit table asked, or the sequences
** the view captured as hidden searched.
*/
#include "base/read_view.h"
#include "base/commit_table.h"

int rv_read_view_sees_between(const struct rv_read_view *v, uint64_t seq)
{
    if (v->table) {
        uint64_t commit = 0;
        switch (rv_commit_table_lookup(v->table, seq, &commit)) {
        case RV_COMMIT_FOUND:
            return commit <= v->seq;
        case RV_COMMIT_ABSENT:
            return 0;
        case RV_COMMIT_EVICTED:
            *v->stale = 1;
            return 0;
        }
        return 0;
    }
    int lo = 0, hi = v->n_hidden;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (v->hidden[mid].hi < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return !(lo < v->n_hidden && v->hidden[lo].lo <= seq);
}
