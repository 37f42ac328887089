/*
** sst_writer.h -- what the table files of ravel_sst_writer (ravel.h;
** sst_writer.c) are, for their reader, ravel_ingest (db/ingest.c).
**
** An external table is a table file (table_format.h) whose footer and
** block checksums use file number RV_SST_EXTERNAL_NUMBER, which no
** database file ever has (a database numbers its files from 1), and
** whose entries are puts and deletes with sequence 0, in strictly
** increasing user-key order (one entry per key).  Such a file is never
** part of a database as it is: ravel_ingest rewrites it.
*/
#ifndef RAVEL_SST_WRITER_H
#define RAVEL_SST_WRITER_H

#include "ravel_int.h"

#define RV_SST_EXTERNAL_NUMBER 0 /* on disk: DO NOT CHANGE */

#endif /* RAVEL_SST_WRITER_H */
