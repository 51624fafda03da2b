/*
 * error.c - the error record and its one-line rendering.
 *
 * Messages follow git's habit: lowercase, no trailing period, the problem first.
 */
#include "parplan/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ppl_error_clear(ppl_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
}

static void copy_str(char *dst, size_t size, const char *src)
{
    if (!src)
        src = "";
    snprintf(dst, size, "%s", src);
}

ppl_status ppl_error_set(ppl_error *err, ppl_status status, const char *file, const char *key,
                         const char *fmt, ...)
{
    if (!err)
        return status;
    err->status = status;
    copy_str(err->file, sizeof err->file, file);
    copy_str(err->key, sizeof err->key, key);
    err->line = 0;
    err->column = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}

void ppl_error_format(const ppl_error *err, char *buf, size_t size)
{
    if (!buf || size == 0)
        return;
    const char *msg = err->message[0] ? err->message : "unknown error";
    if (err->file[0] && err->line > 0)
        snprintf(buf, size, "%s:%d:%d: %s", err->file, err->line, err->column, msg);
    else if (err->file[0] && err->key[0])
        snprintf(buf, size, "%s: %s: %s", err->file, err->key, msg);
    else if (err->file[0])
        snprintf(buf, size, "%s: %s", err->file, msg);
    else if (err->key[0])
        snprintf(buf, size, "%s: %s", err->key, msg);
    else
        snprintf(buf, size, "%s", msg);
}

void ppl_diag_warn(const ppl_diag *diag, const char *file, const char *key, const char *fmt, ...)
{
    if (!diag || !diag->warn)
        return;
    char msg[PPL_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag->warn(diag->ctx, file ? file : "", key ? key : "", msg);
}
