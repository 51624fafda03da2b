/*
 * pages.c - memory for a search's large tables (see base/pages.h).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS and madvise beside POSIX */
#include "base/pages.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <threads.h>

#ifdef __linux__
#include <sys/mman.h>
#endif

/* a transparent huge page where base pages are 4 KiB (x86-64, arm64): Linux's
 * Documentation/admin-guide/mm/transhuge.rst */
#define HUGE_BYTES ((size_t)2 << 20)
/* mappings a thread keeps for its next tables (a search holds five or so), each
 * of at most KEPT_BYTES: a pipeline run's arrays can be gigabytes, given back */
#define KEPT 8
#define KEPT_BYTES ((size_t)64 << 20)

/* The mapping's length for `bytes`: whole huge pages; 0 for none or too many */
static size_t length_of(size_t bytes)
{
    if (bytes == 0 || bytes > SIZE_MAX / 2)
        return 0;
    return (bytes + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES;
}

static void *map(size_t len)
{
#ifdef __linux__
    /* one huge page more than asked, so that an aligned span of len lies inside;
     * the ends are given back */
    const size_t span = len + HUGE_BYTES;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *p = raw + (HUGE_BYTES - (uintptr_t)raw % HUGE_BYTES) % HUGE_BYTES;
    const size_t head = (size_t)(p - raw), tail = span - head - len;
    if (head > 0)
        (void)munmap(raw, head);
    if (tail > 0)
        (void)munmap(p + len, tail);
#ifdef MADV_HUGEPAGE
    (void)madvise(p, len, MADV_HUGEPAGE); /* advice: refused, the pages are ordinary */
#endif
    return p;
#else
    return malloc(len);
#endif
}

static void unmap(void *p, size_t len)
{
#ifdef __linux__
    (void)munmap(p, len);
#else
    (void)len;
    free(p);
#endif
}

/* tables a thread holds for its life (ppl_pages_local): the executor's memo */
#define LOCALS 4

/* A thread's kept mappings, each of its length, and its own tables. */
typedef struct shelf {
    void *p[KEPT];
    size_t len[KEPT];
    int n;
    struct {
        const void *owner;
        void *p;
        size_t len;
    } local[LOCALS];
    int nlocal;
} shelf;

static once_flag shelf_once = ONCE_FLAG_INIT;
static tss_t shelf_key;
static bool shelf_key_made;

static void shelf_free(void *v)
{
    shelf *s = v;
    for (int i = 0; i < s->n; i++)
        unmap(s->p[i], s->len[i]);
    for (int i = 0; i < s->nlocal; i++)
        unmap(s->local[i].p, s->local[i].len);
    free(s);
}

static void shelf_key_make(void)
{
    shelf_key_made = tss_create(&shelf_key, shelf_free) == thrd_success;
}

/* This thread's shelf, NULL when it cannot be had (nothing is then kept). */
static shelf *shelf_get(void)
{
    call_once(&shelf_once, shelf_key_make);
    if (!shelf_key_made)
        return NULL;
    shelf *s = tss_get(shelf_key);
    if (!s) {
        s = calloc(1, sizeof *s);
        if (s && tss_set(shelf_key, s) != thrd_success) {
            free(s);
            s = NULL;
        }
    }
    return s;
}

void *ppl_pages_alloc(size_t bytes)
{
    const size_t len = length_of(bytes);
    if (len == 0)
        return NULL;
    shelf *s = shelf_get();
    for (int i = 0; s && i < s->n; i++)
        if (s->len[i] == len) { /* a kept one of this length, the last in its place */
            void *p = s->p[i];
            s->n--;
            s->p[i] = s->p[s->n];
            s->len[i] = s->len[s->n];
            return p;
        }
    return map(len);
}

void ppl_pages_free(void *p, size_t bytes)
{
    if (!p)
        return;
    const size_t len = length_of(bytes);
    shelf *s = shelf_get();
    if (s && s->n < KEPT && len <= KEPT_BYTES) {
        s->p[s->n] = p;
        s->len[s->n] = len;
        s->n++;
        return;
    }
    unmap(p, len);
}

void *ppl_pages_local(const void *owner, size_t bytes, bool *fresh)
{
    *fresh = false;
    shelf *s = shelf_get();
    if (!s)
        return NULL;
    for (int i = 0; i < s->nlocal; i++)
        if (s->local[i].owner == owner)
            return s->local[i].p;
    const size_t len = length_of(bytes);
    if (s->nlocal == LOCALS || len == 0)
        return NULL;
    void *p = map(len);
    if (p) {
        s->local[s->nlocal].owner = owner;
        s->local[s->nlocal].p = p;
        s->local[s->nlocal].len = len;
        s->nlocal++;
        *fresh = true;
    }
    return p;
}
