/*
 * output.c - output buffers, atomic writes, JSON documents and aligned tables.
 */
#include "base/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
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

/* Writes the whole buffer to fd from its current offset; 0 or the errno. */
static int write_fd(int fd, const ppl_buf *buf)
{
    size_t done = 0;
    while (done < buf->len) {
        ssize_t n = write(fd, buf->data + done, buf->len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : EIO;
        done += (size_t)n;
    }
    return 0;
}

static ppl_status write_failed(ppl_error *err, const char *path, int e)
{
    return ppl_error_set(err, PPL_EINTERNAL, path, "", "cannot write: %s", strerror(e));
}

/* Follows symbolic links from path to the file they name (which need not exist
 * yet: a dangling link names the file to create).  ELOOP after 40 links, as the
 * kernel (path_resolution(7)). */
static int resolve_links(const char *path, char *out, size_t size)
{
    char cur[PATH_MAX], target[PATH_MAX];
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
        return ENAMETOOLONG;
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            break;
        if (hops == 40)
            return ELOOP;
        ssize_t n = readlink(cur, target, sizeof target - 1);
        if (n < 0)
            return errno;
        target[n] = '\0';
        if (target[0] == '/') {
            memcpy(cur, target, (size_t)n + 1);
        } else { /* relative to the link's own directory */
            char *slash = strrchr(cur, '/');
            size_t dir = slash ? (size_t)(slash - cur) + 1 : 0;
            if (dir + (size_t)n >= sizeof cur)
                return ENAMETOOLONG;
            memcpy(cur + dir, target, (size_t)n + 1);
        }
    }
    if (snprintf(out, size, "%s", cur) >= (int)size)
        return ENAMETOOLONG;
    return 0;
}

/* Rewrites a regular file in place (it keeps its inode, so its hard links, mode
 * and owner): the new length is reserved first, so a full disk or a file-size
 * limit fails before a byte of the old content changes. */
static int write_in_place(const char *path, const ppl_buf *buf)
{
    /* read-write: glibc emulates fallocate where the filesystem lacks it by reading
     * each block (NFSv3, ext3, FUSE), which a write-only descriptor cannot */
    int fd = open(path, O_RDWR);
    if (fd < 0 && errno == EACCES)
        fd = open(path, O_WRONLY);
    if (fd < 0)
        return errno;
    int e = buf->len > 0 ? posix_fallocate(fd, 0, (off_t)buf->len) : 0;
    if (e == EOPNOTSUPP || e == EINVAL || e == EBADF)
        e = 0; /* cannot reserve here: write all the same, as a shell would */
    if (e == 0)
        e = write_fd(fd, buf);
    if (e == 0 && ftruncate(fd, (off_t)buf->len) != 0)
        e = errno;
    if (close(fd) != 0 && e == 0)
        e = errno;
    return e;
}

/* Writes a new file beside path and renames it over path: readers see the old
 * content or the new, never a part.  An existing file's mode and owner carry
 * over (the owner where the process may set it); a new one gets the mode a plain
 * create would.  Returns 0 or the errno; *no_temp when the directory refused the
 * temporary file (nothing was written). */
static int write_by_rename(const char *path, const struct stat *old, const ppl_buf *buf,
                           bool *no_temp)
{
    char tmp[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int dir = slash ? (int)(slash - path) + 1 : 0;
    *no_temp = false;
    if (snprintf(tmp, sizeof tmp, "%.*s.parplan.tmp.XXXXXX", dir, path) >= (int)sizeof tmp)
        return ENAMETOOLONG;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        *no_temp = true;
        return errno;
    }
    int e = write_fd(fd, buf);
    if (e == 0 && old) {
        if (fchown(fd, old->st_uid, old->st_gid) != 0 && errno != EPERM)
            e = errno;
        if (e == 0 && fchmod(fd, old->st_mode & 07777) != 0)
            e = errno;
    } else if (e == 0) {
        mode_t mask = umask(0);
        umask(mask);
        if (fchmod(fd, 0666 & ~mask) != 0)
            e = errno;
    }
    if (close(fd) != 0 && e == 0)
        e = errno;
    if (e == 0 && rename(tmp, path) != 0)
        e = errno;
    if (e != 0)
        unlink(tmp);
    return e;
}

ppl_status ppl_output_check(const char *path, ppl_error *err)
{
    struct stat st;
    if (!path || strcmp(path, "-") == 0 || stat(path, &st) != 0)
        return PPL_OK;
    if (S_ISDIR(st.st_mode))
        return ppl_error_set(err, PPL_EUSAGE, "", "", "%s is a directory: name a file to write",
                             path);
    return PPL_OK;
}

bool ppl_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* The descriptor an -o path names outright: /dev/stdout, /dev/stderr, /dev/fd/N,
 * /proc/self/fd/N (what a shell's >(...) passes); -1 for any other path.  Such a
 * path is written through its descriptor, as the shell opened it (appending or
 * not), never reopened or replaced. */
static int named_descriptor(const char *path)
{
    if (strcmp(path, "/dev/stdout") == 0)
        return STDOUT_FILENO;
    if (strcmp(path, "/dev/stderr") == 0)
        return STDERR_FILENO;
    const char *n = strncmp(path, "/dev/fd/", 8) == 0          ? path + 8
                    : strncmp(path, "/proc/self/fd/", 14) == 0 ? path + 14
                                                               : NULL;
    if (!n || *n < '0' || *n > '9')
        return -1;
    char *end;
    long fd = strtol(n, &end, 10);
    return *end == '\0' && fd >= 0 && fd <= 1 << 20 ? (int)fd : -1;
}

ppl_status ppl_output_write(const char *path, const ppl_buf *buf, ppl_error *err)
{
    if (buf->failed)
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory while building the output");
    int named = path ? named_descriptor(path) : STDOUT_FILENO;
    if (!path || strcmp(path, "-") == 0 || named == STDOUT_FILENO) {
        int e = fflush(stdout) == 0 ? write_fd(STDOUT_FILENO, buf) : errno;
        if (e == EPIPE) /* the reader left (parplan ... | head): nothing to say to it */
            return ppl_error_set(err, PPL_EINTERNAL, "", "", "%s", "");
        if (e != 0)
            return ppl_error_set(err, PPL_EINTERNAL, "", "", "cannot write to standard output: %s",
                                 strerror(e));
        return PPL_OK;
    }
    if (named >= 0) {
        int e = write_fd(named, buf);
        return e ? write_failed(err, path, e) : PPL_OK;
    }
    ppl_status st = ppl_output_check(path, err);
    if (st != PPL_OK)
        return st;
    struct stat old;
    int e;
    if (stat(path, &old) == 0 && !S_ISREG(old.st_mode)) {
        /* a FIFO, a terminal, /dev/null: written through, never replaced */
        int fd = open(path, O_WRONLY);
        if (fd < 0)
            return write_failed(err, path, errno);
        e = write_fd(fd, buf);
        if (close(fd) != 0 && e == 0)
            e = errno;
        return e ? write_failed(err, path, e) : PPL_OK;
    }
    /* a regular file (or none yet): where it lives, after symbolic links, is
     * where its replacement is made */
    char real[PATH_MAX];
    if ((e = resolve_links(path, real, sizeof real)) != 0)
        return write_failed(err, path, e);
    bool no_temp;
    if (stat(real, &old) != 0) {
        e = write_by_rename(real, NULL, buf, &no_temp);
        return e ? write_failed(err, path, e) : PPL_OK;
    }
    if (old.st_nlink > 1) { /* a rename would part the file from its other names */
        e = write_in_place(real, buf);
    } else {
        e = write_by_rename(real, &old, buf, &no_temp);
        /* a writable file in a directory that takes no new file, or no rename
         * over it (another user's file in a sticky directory such as /tmp) */
        if (e != 0 && (no_temp || e == EPERM || e == EACCES) && access(real, W_OK) == 0)
            e = write_in_place(real, buf);
    }
    return e ? write_failed(err, path, e) : PPL_OK;
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
    json_object_set_new(doc, "schema_version", json_string("1.1"));
    json_object_set_new(tool, "name", json_string("parplan"));
    json_object_set_new(tool, "version", json_string(ppl_version()));
    json_object_set_new(doc, "tool", tool);
    return doc;
}

json_t *ppl_json_real(double value)
{
    /* jansson refuses NaN and infinities (json_real returns NULL, and the key
     * set with it silently vanishes): such a figure is a bug upstream, shown as
     * null rather than dropped */
    return isfinite(value) ? json_real(value) : json_null();
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

void ppl_table_row_fixed(ppl_table *t, const char *cells, size_t width)
{
    const char *row[PPL_TABLE_MAX_COLS];
    for (size_t c = 0; c < t->ncols; c++) /* ncols <= PPL_TABLE_MAX_COLS (ppl_table_init) */
        row[c] = cells + c * width;
    ppl_table_row(t, row);
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
