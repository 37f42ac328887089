/*
** roff.h -- writing manual pages in roff (roff.c), for the programs that
** print their own page from their help tables: ravel -manpage,
** ravel-sst --manpage, ravel-bench --manpage.
*/
#ifndef RAVEL_ROFF_H
#define RAVEL_ROFF_H

#include <stdio.h>

/* TEXT as roff body text: backslashes and hyphens escaped, a line that
** would start with a control character protected. */
void shell_roff_text(FILE *f, const char *text);
/* A .TP paragraph tag: NAME in bold, ARGS (may be NULL) in italics. */
void shell_roff_tag(FILE *f, const char *name, const char *args);
/* TEXT, a lower-case phrase, as a sentence: capitalised, with a period. */
void shell_roff_sentence(FILE *f, const char *text);

/* An option's entry: ".TP", PREFIX (roff, such as "\\-\\-" or "") and
** NAME in bold, "=" DEFAULT in italics, then DOC as a sentence. */
void shell_roff_option(FILE *f, const char *prefix, const char *name,
                       const char *def, const char *doc);

#endif /* RAVEL_ROFF_H */
