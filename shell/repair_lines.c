/*
** repair_lines.c -- printing ravel_repair's report (repair_lines.h), for
** ravel-repair (repair_main.c) and the shell's .repair (cmd_repair.c).
*/
#include "repair_lines.h"

#include <string.h>

const char *shell_repair_kind(int kind)
{
    switch (kind) {
    case RAVEL_REPAIR_KEPT:
        return "kept";
    case RAVEL_REPAIR_LOST:
        return "lost";
    case RAVEL_REPAIR_WARN:
        return "warn";
    default:
        return "note";
    }
}

void shell_repair_print(void *ctx, int kind, const char *line)
{
    struct shell_repair_out *o = ctx;
    int loss = kind == RAVEL_REPAIR_LOST || kind == RAVEL_REPAIR_WARN;
    o->losses += loss;
    if (o->quiet && !loss && strncmp(line, "summary:", 8) != 0)
        return;
    fprintf(o->f, "%s: %s\n", shell_repair_kind(kind), line);
}
