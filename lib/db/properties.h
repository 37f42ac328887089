/*
** properties.h -- the names ravel_property knows (properties.c), for the
** tools built on the library's internals: the shell lists them in its help
** and manual page and completes them at its prompt.
*/
#ifndef RAVEL_PROPERTIES_H
#define RAVEL_PROPERTIES_H

#include "ravel_int.h"

/* One property: its name, what it is in a phrase, RocksDB's name for the
** same thing (or NULL), a deprecated older spelling still accepted (or
** NULL), and for ravel.num-files-at-levelN its level N (else -1). */
struct rv_property_info {
    const char *name;
    const char *doc;
    const char *rocksdb;
    const char *deprecated;
    int level;
};

/* Fills INFO with the Ith property (in ravel.h's order) and returns 1, or
** returns 0 past the last. */
RAVEL_PRIVATE int rv_property_info(size_t i, struct rv_property_info *info);

#endif /* RAVEL_PROPERTIES_H */
