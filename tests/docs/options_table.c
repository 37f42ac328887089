/*
** options_table.c -- prints the library's options table as JSON, for
** test_options_table.py: one object per option, in the table's order, with
** what rv_option_info gives (name, kind, default, min, max, choices,
** conflicts, doc, why).  A test program, never installed.
*/
#include <stdio.h>
#include <string.h>

#include "base/options.h"

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

/* The words of LIST, split at SEP, as a JSON array. */
static void json_list(const char *list, const char *sep)
{
    putchar('[');
    size_t n = strlen(sep);
    for (int first = 1; *list; first = 0) {
        const char *end = strstr(list, sep);
        size_t len = end ? (size_t)(end - list) : strlen(list);
        char word[256];
        snprintf(word, sizeof word, "%.*s", (int)len, list);
        printf("%s", first ? "" : ", ");
        json_string(word);
        list += len + (end ? n : 0);
    }
    putchar(']');
}

int main(void)
{
    struct rv_option_info info;
    printf("[\n");
    for (size_t i = 0; rv_option_info(i, &info); i++) {
        printf("%s  {\"name\": ", i ? ",\n" : "");
        json_string(info.name);
        printf(", \"kind\": ");
        json_string(info.kind);
        printf(", \"default\": ");
        json_string(info.def);
        printf(", \"min\": ");
        json_string(info.min);
        printf(", \"max\": ");
        json_string(info.max);
        printf(", \"choices\": ");
        json_list(info.choices, " | ");
        printf(", \"conflicts\": ");
        json_list(info.conflicts, " ");
        printf(", \"doc\": ");
        json_string(info.doc);
        printf(", \"why\": ");
        json_string(info.why);
        putchar('}');
    }
    printf("\n]\n");
    return 0;
}
