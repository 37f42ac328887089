/*
** db_dir.h -- the database directory (db_dir.c): creating it and IDENTITY
** crash-safely, and taking the LOCK.
*/
#ifndef RAVEL_DB_DIR_H
#define RAVEL_DB_DIR_H

#include "ravel_int.h"

/* Prepares the directory (db_dir.c): creates it and IDENTITY when asked
** and allowed, or checks they are there; takes the LOCK. */
RAVEL_PRIVATE int rv_db_prepare_dir(ravel_db *db);

#endif /* RAVEL_DB_DIR_H */
