/*
 * base/pages.h - memory for a search's large tables, on huge pages where the
 * system grants them.
 *
 * A search's caches are megabytes whose slots fill as keys are met.  On a virtual
 * machine the first write to each 4 KiB page costs a fault of about 10 us of CPU
 * (the guest's trap, the host's backing; 13 us a page on the machines the
 * benchmark runs on), so that DeepSeek-V3's plan on meta-24k-roce spent some
 * 10 ms of its 130 in 1,350 faults.  A transparent huge page is one fault for
 * 2 MiB, about 0.1 ms to clear it.  A table from ppl_pages_alloc sits in a
 * 2 MiB-aligned mapping advised MADV_HUGEPAGE (Linux's madvise(2), granted where
 * /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or "always"); where
 * the system says no, or elsewhere than Linux, its pages are the ordinary ones.
 *
 * A table given back is kept for the thread's next one of the same length (its
 * size rounded up to 2 MiB; a few a thread, unmapped with the thread), so that a
 * sweep of many searches clears its pages once: like malloc's, the memory
 * returned holds whatever it held, and the caller clears what it reads.
 */
#ifndef PARPLAN_PAGES_H
#define PARPLAN_PAGES_H

#include <stdbool.h>
#include <stddef.h>

/* Room for `bytes` (not cleared), or NULL when it cannot be had. */
void *ppl_pages_alloc(size_t bytes);
/* Gives back what ppl_pages_alloc(bytes) returned (NULL: nothing). */
void ppl_pages_free(void *p, size_t bytes);
/* This thread's own table of `bytes` for `owner` (any address that names it: the
 * caller's static), allocated at the thread's first call, *fresh then true (the
 * caller clears what it reads), and unmapped with the thread; NULL when it cannot
 * be had (a few owners a thread). */
void *ppl_pages_local(const void *owner, size_t bytes, bool *fresh);

#endif
