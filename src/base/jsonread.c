/*
 * jsonread.c - strict, path-aware reading of JSON input files.
 *
 * jansson does the parsing (duplicate keys rejected); this file adds what a user
 * needs to fix a file by hand: the key path of the offending value, what was
 * expected, what was found, and a "did you mean" for misspelt keys.
 */
#include "base/jsonread.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Input files larger than this are refused before parsing: no real model or
 * topology comes near it, and it bounds the memory a hostile file can take. */
#define PPL_JR_MAX_FILE_BYTES (64L * 1024 * 1024)

void ppl_jr_path(char *out, size_t size, const char *parent, const char *key)
{
    if (!parent || !parent[0])
        snprintf(out, size, "%s", key);
    else
        snprintf(out, size, "%s.%s", parent, key);
}

void ppl_jr_index(char *out, size_t size, const char *parent, size_t index)
{
    snprintf(out, size, "%s[%zu]", parent ? parent : "", index);
}

ppl_status ppl_jr_fail(ppl_jr_ctx *ctx, const char *path, const char *fmt, ...)
{
    char msg[PPL_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ppl_error_set(ctx->err, PPL_EINPUT, ctx->file, path, "%s", msg);
}

/* The longest a pipe may keep its reader waiting for the next bytes: a FIFO that no
 * writer opens ends in an error, not a hang. */
#define PPL_JR_PIPE_WAIT_MS 10000

static const char *file_kind(mode_t mode)
{
    return S_ISCHR(mode)    ? "character device"
           : S_ISBLK(mode)  ? "block device"
           : S_ISSOCK(mode) ? "socket"
                            : "special file";
}

/* Reads all of fd (a regular file, or a pipe waited on at most PPL_JR_PIPE_WAIT_MS
 * between reads) into a buffer of at most PPL_JR_MAX_FILE_BYTES; NULL and an error
 * otherwise. */
static char *read_all(ppl_jr_ctx *ctx, int fd, bool pipe, size_t *len)
{
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            ppl_error_set(ctx->err, PPL_EINTERNAL, ctx->file, "", "out of memory");
            return NULL;
        }
        if (pipe) {
            struct pollfd p = {.fd = fd, .events = POLLIN};
            int ready = poll(&p, 1, PPL_JR_PIPE_WAIT_MS);
            if (ready < 0 && errno == EINTR)
                continue;
            if (ready == 0) {
                ppl_error_set(ctx->err, PPL_EINPUT, ctx->file, "",
                              "no data from the pipe for %d s (a FIFO no one writes?)",
                              PPL_JR_PIPE_WAIT_MS / 1000);
                free(buf);
                return NULL;
            }
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got < 0) {
            ppl_error_set(ctx->err, PPL_EINPUT, ctx->file, "", "cannot read: %s", strerror(errno));
            free(buf);
            return NULL;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n > (size_t)PPL_JR_MAX_FILE_BYTES) {
            ppl_error_set(ctx->err, PPL_EINPUT, ctx->file, "",
                          "more than %ld bytes; input files are limited to that",
                          PPL_JR_MAX_FILE_BYTES);
            free(buf);
            return NULL;
        }
        if (n == cap) {
            cap *= 2;
            char *grown = realloc(buf, cap);
            if (!grown)
                free(buf);
            buf = grown;
        }
    }
    *len = n;
    return buf;
}

/* A pipe gives its bytes once: its document is kept, by the pipe's inode, for a
 * second loader of the same argument (plan reads --topology as pools, then as one
 * topology).  A handful: an argument each. */
static struct pipe_read {
    dev_t dev;
    ino_t ino;
    json_t *doc;
} pipes_read[8];
static size_t pipes_kept;

void ppl_jr_release(void)
{
    for (size_t i = 0; i < pipes_kept; i++)
        json_decref(pipes_read[i].doc);
    pipes_kept = 0;
}

json_t *ppl_jr_load_file(ppl_jr_ctx *ctx, const char *path)
{
    /* not blocking: opening a FIFO with no writer would wait for one */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        ppl_error_set(ctx->err, PPL_EINPUT, ctx->file, "", "cannot open: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    size_t len = 0;
    char *text = NULL;
    if (S_ISDIR(st.st_mode))
        ppl_error_set(ctx->err, PPL_EINPUT, ctx->file, "", "is a directory, not a JSON file");
    else if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
        /* a device could read forever: not a file one plans from */
        ppl_error_set(ctx->err, PPL_EINPUT, ctx->file, "", "is a %s, not a regular file or a pipe",
                      file_kind(st.st_mode));
    else if (S_ISREG(st.st_mode) && st.st_size > PPL_JR_MAX_FILE_BYTES)
        ppl_error_set(ctx->err, PPL_EINPUT, ctx->file, "",
                      "file is %lld bytes; input files are limited to %ld", (long long)st.st_size,
                      PPL_JR_MAX_FILE_BYTES);
    else if (S_ISFIFO(st.st_mode)) {
        for (size_t i = 0; i < pipes_kept; i++)
            if (pipes_read[i].dev == st.st_dev && pipes_read[i].ino == st.st_ino) {
                close(fd);
                return json_deep_copy(pipes_read[i].doc);
            }
        text = read_all(ctx, fd, true, &len);
    } else {
        text = read_all(ctx, fd, false, &len);
    }
    close(fd);
    if (!text)
        return NULL;
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (root && S_ISFIFO(st.st_mode) && pipes_kept < sizeof pipes_read / sizeof *pipes_read)
        pipes_read[pipes_kept++] = (struct pipe_read){st.st_dev, st.st_ino, json_incref(root)};
    if (!root) {
        ppl_error_set(ctx->err, PPL_EINPUT, ctx->file, "", "invalid JSON: %s", jerr.text);
        if (jerr.line > 0) {
            ctx->err->line = jerr.line;
            ctx->err->column = jerr.column > 0 ? jerr.column : 1;
        }
    }
    return root;
}

ppl_status ppl_jr_read(const char *path, const ppl_diag *diag, json_t **doc, ppl_error *err)
{
    ppl_jr_ctx ctx = {.file = path, .err = err, .diag = diag};
    *doc = ppl_jr_load_file(&ctx, path);
    return *doc ? PPL_OK : PPL_EINPUT;
}

json_t *ppl_jr_named_copy(const json_t *doc, const char *name)
{
    json_t *copy = json_deep_copy(doc);
    if (copy && json_object_set_new(copy, "name", json_string(name)) != 0) {
        json_decref(copy);
        copy = NULL;
    }
    return copy;
}

void ppl_jr_describe(const json_t *value, char *buf, size_t size)
{
    if (!value) {
        snprintf(buf, size, "nothing");
        return;
    }
    char *text = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(10));
    if (!text) {
        snprintf(buf, size, "a value that cannot be shown");
        return;
    }
    const char *kind = json_is_object(value)  ? "an object "
                       : json_is_array(value) ? "an array "
                                              : "";
    size_t len = strlen(text);
    if (len > 40)
        snprintf(buf, size, "%s%.37s...", kind, text);
    else
        snprintf(buf, size, "%s%s", kind, text);
    free(text);
}

ppl_status ppl_jr_expect_object(ppl_jr_ctx *ctx, const json_t *value, const char *path)
{
    if (json_is_object(value))
        return PPL_OK;
    char found[64];
    ppl_jr_describe(value, found, sizeof found);
    return ppl_jr_fail(ctx, path[0] ? path : "(top level)", "expected an object, found %s", found);
}

/* Edit distance, bounded to short keys; used for "did you mean". */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = diag + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

void ppl_jr_warn_unknown_keys(ppl_jr_ctx *ctx, const json_t *obj, const char *path,
                              const char *const *known)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value)
    {
        (void)value;
        const char *best = NULL;
        size_t best_d = 3; /* suggest only within two edits */
        bool found = false;
        for (const char *const *k = known; *k; k++) {
            if (strcmp(*k, key) == 0) {
                found = true;
                break;
            }
            size_t d = edit_distance(*k, key);
            if (d < best_d) {
                best_d = d;
                best = *k;
            }
        }
        if (found)
            continue;
        char full[PPL_ERROR_KEY_MAX];
        ppl_jr_path(full, sizeof full, path, key);
        if (best)
            ppl_diag_warn(ctx->diag, ctx->file, full, "unknown key, ignored (did you mean '%s'?)",
                          best);
        else
            ppl_diag_warn(ctx->diag, ctx->file, full, "unknown key, ignored");
    }
}

ppl_status ppl_jr_get(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                      ppl_jr_need need, json_t **out)
{
    char full[PPL_ERROR_KEY_MAX];
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v)) {
        if (need == PPL_JR_REQUIRED) {
            ppl_jr_path(full, sizeof full, path, key);
            return ppl_jr_fail(ctx, full,
                               v ? "is null, but a value is required" : "missing, but required");
        }
        return PPL_OK;
    }
    *out = v;
    return PPL_OK;
}

ppl_status ppl_jr_object(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                         ppl_jr_need need, const char *const *known, json_t **out, char *sub_path,
                         size_t sub_size)
{
    ppl_status st = ppl_jr_get(ctx, obj, path, key, need, out);
    ppl_jr_path(sub_path, sub_size, path, key);
    if (st != PPL_OK || !*out)
        return st;
    if ((st = ppl_jr_expect_object(ctx, *out, sub_path)) != PPL_OK)
        return st;
    ppl_jr_warn_unknown_keys(ctx, *out, sub_path, known);
    return PPL_OK;
}

/* value as %.6g, or to the last digit where that would print the bound it broke
 * ("at least 0.2, found 0.2" for 0.199999999) */
static const char *found_of(char *buf, size_t size, double value, double bound)
{
    char at[32];
    snprintf(buf, size, "%.6g", value);
    snprintf(at, sizeof at, "%.6g", bound);
    if (strcmp(buf, at) == 0)
        snprintf(buf, size, "%.17g", value);
    return buf;
}

static const char *int_expectation(int64_t min, char *buf, size_t size)
{
    if (min == 1)
        return "a positive integer";
    if (min == 0)
        return "a non-negative integer";
    snprintf(buf, size, "an integer of at least %lld", (long long)min);
    return buf;
}

ppl_status ppl_jr_int(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                      ppl_jr_need need, int64_t def, int64_t min, int64_t max, int64_t *out)
{
    char full[PPL_ERROR_KEY_MAX], found[64], what[64];
    json_t *v;
    ppl_status st = ppl_jr_get(ctx, obj, path, key, need, &v);
    if (st != PPL_OK)
        return st;
    if (!v) {
        *out = def;
        return PPL_OK;
    }
    ppl_jr_path(full, sizeof full, path, key);
    const char *expect = int_expectation(min, what, sizeof what);
    int64_t value;
    if (json_is_integer(v)) {
        value = (int64_t)json_integer_value(v);
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        /* 8.0 is accepted as 8; 8.5 or 1e30 are not integers we can hold */
        if (!(d == floor(d))) {
            ppl_jr_describe(v, found, sizeof found);
            return ppl_jr_fail(ctx, full, "expected %s, found %s", expect, found);
        }
        if (d < (double)min)
            return ppl_jr_fail(ctx, full, "expected %s, found %s", expect,
                               found_of(found, sizeof found, d, (double)min));
        if (d > (double)max)
            return ppl_jr_fail(ctx, full, "expected at most %lld, found %s", (long long)max,
                               found_of(found, sizeof found, d, (double)max));
        value = (int64_t)d;
    } else {
        ppl_jr_describe(v, found, sizeof found);
        return ppl_jr_fail(ctx, full, "expected %s, found %s", expect, found);
    }
    if (value < min)
        return ppl_jr_fail(ctx, full, "expected %s, found %lld", expect, (long long)value);
    if (value > max)
        return ppl_jr_fail(ctx, full, "expected at most %lld, found %lld", (long long)max,
                           (long long)value);
    *out = value;
    return PPL_OK;
}

static ppl_status check_range(ppl_jr_ctx *ctx, const char *full, double value, ppl_jr_range r)
{
    bool low = r.min_open ? !(value > r.min) : !(value >= r.min);
    bool high = r.max_open ? !(value < r.max) : !(value <= r.max);
    char found[32];
    if (low && r.min_open && r.min == 0.0)
        return ppl_jr_fail(ctx, full, "expected a positive value, found %s",
                           found_of(found, sizeof found, value, r.min));
    if (low)
        return ppl_jr_fail(ctx, full, "expected a value %s %.6g, found %s",
                           r.min_open ? "above" : "of at least", r.min,
                           found_of(found, sizeof found, value, r.min));
    if (high)
        return ppl_jr_fail(ctx, full, "expected a value %s %.6g, found %s",
                           r.max_open ? "below" : "of at most", r.max,
                           found_of(found, sizeof found, value, r.max));
    return PPL_OK;
}

ppl_status ppl_jr_real(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                       ppl_jr_need need, double def, ppl_jr_range range, double *out)
{
    char full[PPL_ERROR_KEY_MAX], found[64];
    json_t *v;
    ppl_status st = ppl_jr_get(ctx, obj, path, key, need, &v);
    if (st != PPL_OK)
        return st;
    if (!v) {
        *out = def;
        return PPL_OK;
    }
    ppl_jr_path(full, sizeof full, path, key);
    if (!json_is_number(v)) {
        ppl_jr_describe(v, found, sizeof found);
        return ppl_jr_fail(ctx, full, "expected a number, found %s", found);
    }
    double value = json_number_value(v);
    if (!isfinite(value))
        return ppl_jr_fail(ctx, full, "expected a finite number");
    st = check_range(ctx, full, value, range);
    if (st == PPL_OK)
        *out = value;
    return st;
}

ppl_status ppl_jr_quantity_value(ppl_jr_ctx *ctx, const json_t *v, const char *path, ppl_unit unit,
                                 ppl_jr_range range, double *out)
{
    char found[64], why[160];
    double value;
    if (json_is_number(v)) {
        value = json_number_value(v);
        if (!isfinite(value))
            return ppl_jr_fail(ctx, path, "expected a finite number");
    } else if (json_is_string(v)) {
        if (ppl_parse_quantity(json_string_value(v), unit, &value, why, sizeof why) != PPL_OK) {
            ppl_jr_describe(v, found, sizeof found);
            return ppl_jr_fail(ctx, path, "%s, found %s", why, found);
        }
    } else {
        ppl_jr_describe(v, found, sizeof found);
        return ppl_jr_fail(ctx, path, "expected %s such as %s, found %s", ppl_unit_noun(unit),
                           ppl_unit_example(unit), found);
    }
    bool low = range.min_open ? !(value > range.min) : !(value >= range.min);
    bool high = range.max_open ? !(value < range.max) : !(value <= range.max);
    if (low || high) {
        /* bounds in the quantity's unit; a plain number below the range is most
         * likely a figure written without its unit ("nic_bandwidth": 400) */
        char bound[32], hint[96] = "";
        ppl_format_quantity(unit, low ? range.min : range.max, bound, sizeof bound);
        if (low && json_is_number(v) && unit != PPL_UNIT_COUNT)
            snprintf(hint, sizeof hint, " (a plain number is in %s; give a unit, as in %s)",
                     ppl_unit_base(unit), ppl_unit_example(unit));
        return ppl_jr_fail(ctx, path, "expected %s %s, found %.6g %s%s",
                           low ? (range.min_open ? "above" : "at least")
                               : (range.max_open ? "below" : "at most"),
                           bound, value, ppl_unit_base(unit), hint);
    }
    *out = value;
    return PPL_OK;
}

ppl_status ppl_jr_quantity(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                           ppl_unit unit, ppl_jr_need need, double def, ppl_jr_range range,
                           double *out)
{
    char full[PPL_ERROR_KEY_MAX];
    json_t *v;
    ppl_status st = ppl_jr_get(ctx, obj, path, key, need, &v);
    if (st != PPL_OK)
        return st;
    if (!v) {
        *out = def;
        return PPL_OK;
    }
    ppl_jr_path(full, sizeof full, path, key);
    return ppl_jr_quantity_value(ctx, v, full, unit, range, out);
}

ppl_status ppl_jr_bool(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                       ppl_jr_need need, bool def, bool *out)
{
    char full[PPL_ERROR_KEY_MAX], found[64];
    json_t *v;
    ppl_status st = ppl_jr_get(ctx, obj, path, key, need, &v);
    if (st != PPL_OK)
        return st;
    if (!v) {
        *out = def;
        return PPL_OK;
    }
    if (!json_is_boolean(v)) {
        ppl_jr_path(full, sizeof full, path, key);
        ppl_jr_describe(v, found, sizeof found);
        return ppl_jr_fail(ctx, full, "expected true or false, found %s", found);
    }
    *out = json_is_true(v);
    return PPL_OK;
}

ppl_status ppl_jr_string(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                         ppl_jr_need need, const char *def, char *buf, size_t size)
{
    char full[PPL_ERROR_KEY_MAX], found[64];
    json_t *v;
    ppl_status st = ppl_jr_get(ctx, obj, path, key, need, &v);
    if (st != PPL_OK)
        return st;
    if (!v) {
        snprintf(buf, size, "%s", def ? def : "");
        return PPL_OK;
    }
    ppl_jr_path(full, sizeof full, path, key);
    if (!json_is_string(v)) {
        ppl_jr_describe(v, found, sizeof found);
        return ppl_jr_fail(ctx, full, "expected a string, found %s", found);
    }
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    if (len >= size)
        return ppl_jr_fail(ctx, full, "expected a string of at most %zu bytes, found %zu", size - 1,
                           len);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20)
            return ppl_jr_fail(ctx, full, "expected printable text, found a control character");
    memcpy(buf, s, len + 1);
    return PPL_OK;
}

ppl_status ppl_jr_enum(ppl_jr_ctx *ctx, const json_t *obj, const char *path, const char *key,
                       ppl_jr_need need, const char *const *names, int def, int *out)
{
    char full[PPL_ERROR_KEY_MAX], found[64], list[200];
    json_t *v;
    ppl_status st = ppl_jr_get(ctx, obj, path, key, need, &v);
    if (st != PPL_OK)
        return st;
    if (!v) {
        *out = def;
        return PPL_OK;
    }
    if (json_is_string(v)) {
        for (int i = 0; names[i]; i++) {
            if (strcmp(names[i], json_string_value(v)) == 0) {
                *out = i;
                return PPL_OK;
            }
        }
    }
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; names[i] && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s\"%s\"",
                                 i == 0 ? "" : (names[i + 1] ? ", " : " or "), names[i]);
    ppl_jr_path(full, sizeof full, path, key);
    ppl_jr_describe(v, found, sizeof found);
    return ppl_jr_fail(ctx, full, "expected %s, found %s", list, found);
}

/* schema_version: 1, 1.x, "1" or "1.x"; absent means 1. */
ppl_status ppl_jr_schema_version(ppl_jr_ctx *ctx, const json_t *obj, const char *path)
{
    char full[PPL_ERROR_KEY_MAX], found[64];
    json_t *v = json_object_get(obj, "schema_version");
    if (!v)
        return PPL_OK;
    ppl_jr_path(full, sizeof full, path, "schema_version");
    double major = -1;
    if (json_is_number(v)) {
        major = floor(json_number_value(v));
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (s[0] >= '0' && s[0] <= '9') {
            major = 0;
            while (*s >= '0' && *s <= '9' && major < 1e6)
                major = major * 10 + (*s++ - '0');
            if (*s != '\0' && !(*s == '.' && s[1] >= '0' && s[1] <= '9'))
                major = -1;
        }
    }
    if (major == 1)
        return PPL_OK;
    ppl_jr_describe(v, found, sizeof found);
    if (major > 1)
        return ppl_jr_fail(ctx, full, "unsupported major version %s (this parplan reads version 1)",
                           found);
    return ppl_jr_fail(ctx, full, "expected 1, found %s", found);
}

/* Default name: the file's stem ("models/gpt3-175b.json" -> "gpt3-175b"). */
void ppl_jr_name_copy(char *out, size_t size, const char *text, size_t n)
{
    if (size == 0)
        return;
    if (n >= size) {
        n = size - 1;
        /* back to a character's start: a UTF-8 continuation byte is 10xxxxxx */
        while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
            n--;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i];
    out[n] = '\0';
}

void ppl_jr_file_stem(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".json") == 0)
        len -= 5;
    ppl_jr_name_copy(out, size, base, len);
}
