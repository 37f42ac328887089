/*
** ingest.h -- ravel_ingest (ingest.c): table files written by
** ravel_sst_writer added to a live database, atomically.  Its only
** interface is the public function; this header names the file for
** docs/design.md's map and holds what the steps share.
*/
#ifndef RAVEL_INGEST_H
#define RAVEL_INGEST_H

#include "ravel_int.h"

#endif /* RAVEL_INGEST_H */
