/*
** roff.c -- writing manual pages in roff (roff.h): text escaped, tagged
** paragraphs, summaries made sentences.  Shared by the generators of
** ravel.1 (manpage.c), ravel-sst.1 (sst_main.c) and ravel-bench.1
** (bench/bench_manpage.c).
*/
#include <string.h>

#include "roff.h"

/* TEXT as roff body text: backslashes and hyphens escaped, a line that
** would start with a control character ('.' or '\'') protected with \&. */
void shell_roff_text(FILE *f, const char *text)
{
    int line_start = 1;
    for (const char *p = text; *p; p++) {
        if (line_start && (*p == '.' || *p == '\''))
            fputs("\\&", f);
        line_start = *p == '\n';
        if (*p == '\\')
            fputs("\\e", f);
        else if (*p == '-')
            fputs("\\-", f);
        else
            fputc(*p, f);
    }
}

/* A paragraph tag in bold, its arguments in italics:
** .TP
** \fBput\fR \fIK V\fR */
void shell_roff_tag(FILE *f, const char *name, const char *args)
{
    fputs(".TP\n\\fB", f);
    shell_roff_text(f, name);
    fputs("\\fR", f);
    if (args && args[0]) {
        fputs(" \\fI", f);
        shell_roff_text(f, args);
        fputs("\\fR", f);
    }
    fputc('\n', f);
}

void shell_roff_sentence(FILE *f, const char *text)
{
    /* A summary is a lower-case phrase: the page makes it a sentence. */
    size_t len = strlen(text);
    if (len && text[0] >= 'a' && text[0] <= 'z') {
        fputc(text[0] - 'a' + 'A', f);
        text++;
        len--;
    }
    shell_roff_text(f, text);
    if (len && text[len - 1] != '.')
        fputc('.', f);
    fputc('\n', f);
}


void shell_roff_option(FILE *f, const char *prefix, const char *name,
                       const char *def, const char *doc)
{
    fprintf(f, ".TP\n\\fB%s", prefix);
    shell_roff_text(f, name);
    fputs("\\fR=\\fI", f);
    shell_roff_text(f, def);
    fputs("\\fR\n", f);
    shell_roff_sentence(f, doc);
}
