/*
 * output.c - output buffers, atomic writes, JSON documents and aligned tables.
 */
#include "parplan/output.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PPL_VERSION
#define PPL_VERSION "0.0.0"
#endif

const char *ppl_version(void)
{
    return PPL_VERSION;
}

void ppl_buf_init(ppl_buf *buf)
{
    memset(buf, 0, sizeof *buf);
}

void ppl_buf_free(ppl_buf *buf)
{
    free(buf->data);
    memset(buf, 0, sizeof *buf);
}

static bool reserve(ppl_buf *buf, size_t extra)
{
    if (buf->failed)
        return false;
    if (buf->len + extra + 1 <= buf->cap)
        return true;
    size_t cap = buf->cap ? buf->cap : 256;
    while (cap < buf->len + extra + 1) {
        if (cap > SIZE_MAX / 2) {
            buf->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *data = realloc(buf->data, cap);
    if (!data) {
        buf->failed = true;
        return false;
    }
    buf->data = data;
    buf->cap = cap;
    return true;
}

void ppl_buf_append(ppl_buf *buf, const char *text, size_t len)
{
    if (!reserve(buf, len))
        return;
    memcpy(buf->data + buf->len, text, len);
    buf->len += len;
    buf->data[buf->len] = '\0';
}

void ppl_buf_printf(ppl_buf *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) {
        buf->failed = true;
    } else if (reserve(buf, (size_t)n)) {
        vsnprintf(buf->data + buf->len, (size_t)n + 1, fmt, ap);
        buf->len += (size_t)n;
    }
    va_end(ap);
}

/* Writes and flushes; on failure returns the errno that stopped it (EIO if none). */
static int write_all(FILE *f, const ppl_buf *buf)
{
    errno = 0;
    if ((buf->len > 0 && fwrite(buf->data, 1, buf->len, f) != buf->len) || fflush(f) != 0 ||
        ferror(f))
        return errno ? errno : EIO;
    return 0;
}

ppl_status ppl_output_write(const char *path, const ppl_buf *buf, ppl_error *err)
{
    if (buf->failed)
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory while building the output");
    if (!path || strcmp(path, "-") == 0) {
        int e = write_all(stdout, buf);
        if (e == EPIPE) /* the reader left (parplan ... | head): nothing to say to it */
            return ppl_error_set(err, PPL_EINTERNAL, "", "", "%s", "");
        if (e != 0)
            return ppl_error_set(err, PPL_EINTERNAL, "", "", "cannot write to standard output: %s",
                                 strerror(e));
        return PPL_OK;
    }
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp)
        return ppl_error_set(err, PPL_EINTERNAL, path, "", "out of memory");
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return ppl_error_set(err, PPL_EINTERNAL, path, "", "cannot write: %s", strerror(e));
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        return ppl_error_set(err, PPL_EINTERNAL, path, "", "cannot write: %s", strerror(e));
    }
    int e = write_all(f, buf);
    ppl_status st = e ? PPL_EINTERNAL : PPL_OK;
    if (fclose(f) != 0 && st == PPL_OK) {
        st = PPL_EINTERNAL;
        e = errno;
    }
    /* mkstemp creates 0600; give the file the mode a plain create would have */
    mode_t mask = umask(0);
    umask(mask);
    if (st == PPL_OK && chmod(tmp, 0666 & ~mask) != 0) {
        st = PPL_EINTERNAL;
        e = errno;
    }
    if (st == PPL_OK && rename(tmp, path) != 0) {
        st = PPL_EINTERNAL;
        e = errno;
    }
    if (st != PPL_OK) {
        unlink(tmp);
        free(tmp);
        return ppl_error_set(err, PPL_EINTERNAL, path, "", "cannot write: %s", strerror(e));
    }
    free(tmp);
    return PPL_OK;
}

json_t *ppl_json_document(void)
{
    json_t *doc = json_object();
    json_t *tool = json_object();
    if (!doc || !tool) {
        json_decref(doc);
        json_decref(tool);
        return NULL;
    }
    json_object_set_new(doc, "schema_version", json_string("1.0"));
    json_object_set_new(tool, "name", json_string("parplan"));
    json_object_set_new(tool, "version", json_string(ppl_version()));
    json_object_set_new(doc, "tool", tool);
    return doc;
}

void ppl_json_render(const json_t *doc, ppl_buf *buf)
{
    /* 12 significant digits: stable across machines, finer than any model figure */
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    if (!text) {
        buf->failed = true;
        return;
    }
    ppl_buf_append(buf, text, strlen(text));
    ppl_buf_append(buf, "\n", 1);
    free(text);
}

void ppl_table_init(ppl_table *t, size_t ncols, const char *align)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols > PPL_TABLE_MAX_COLS ? PPL_TABLE_MAX_COLS : ncols;
    t->align = align ? align : "";
}

void ppl_table_row(ppl_table *t, const char *const *cells)
{
    if (t->failed)
        return;
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        char **grown = realloc(t->cells, cap * t->ncols * sizeof *grown);
        if (!grown) {
            t->failed = true;
            return;
        }
        t->cells = grown;
        t->cap = cap;
    }
    for (size_t c = 0; c < t->ncols; c++) {
        char *copy = strdup(cells[c] ? cells[c] : "");
        if (!copy) {
            for (size_t k = 0; k < c; k++)
                free(t->cells[t->nrows * t->ncols + k]);
            t->failed = true;
            return;
        }
        t->cells[t->nrows * t->ncols + c] = copy;
    }
    t->nrows++;
}

void ppl_table_render(const ppl_table *t, ppl_buf *buf, const char *indent)
{
    size_t width[PPL_TABLE_MAX_COLS] = {0};
    if (t->failed) {
        buf->failed = true;
        return;
    }
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t w = strlen(t->cells[r * t->ncols + c]);
            if (w > width[c])
                width[c] = w;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        ppl_buf_printf(buf, "%s", indent ? indent : "");
        for (size_t c = 0; c < t->ncols; c++) {
            const char *cell = t->cells[r * t->ncols + c];
            bool right = c < strlen(t->align) && t->align[c] == 'r';
            bool last = c + 1 == t->ncols;
            if (right)
                ppl_buf_printf(buf, "%*s", (int)width[c], cell);
            else if (last)
                ppl_buf_printf(buf, "%s", cell);
            else
                ppl_buf_printf(buf, "%-*s", (int)width[c], cell);
            if (!last)
                ppl_buf_append(buf, "  ", 2);
        }
        /* no trailing blanks: a row whose last cells are empty ends at its text */
        while (!buf->failed && buf->len > 0 && buf->data[buf->len - 1] == ' ')
            buf->data[--buf->len] = '\0';
        ppl_buf_append(buf, "\n", 1);
    }
}

void ppl_table_free(ppl_table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}
