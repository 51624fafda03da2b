/*
 * test_pages.c - memory for large tables (base/pages.h): sizes, alignment, the
 * mappings a thread keeps for its next tables.
 */
#include "testutil.h"

#include <stdint.h>
#include <string.h>
#include <threads.h>

#include "base/pages.h"

#define MIB ((size_t)1 << 20)

static void test_sizes(void **state)
{
    (void)state;
    assert_null(ppl_pages_alloc(0));
    assert_null(ppl_pages_alloc(SIZE_MAX));
    assert_null(ppl_pages_alloc(SIZE_MAX / 2 + 1));
    ppl_pages_free(NULL, 0); /* nothing */
    /* 3 MiB: every byte writable, the first and last read back */
    unsigned char *p = ppl_pages_alloc(3 * MIB);
    assert_non_null(p);
    memset(p, 0xa5, 3 * MIB);
    assert_int_equal(p[0], 0xa5);
    assert_int_equal(p[3 * MIB - 1], 0xa5);
#ifdef __linux__
    /* on a huge page's boundary (2 MiB), so that the system can back it with one */
    assert_int_equal((uintptr_t)p % (2 * MIB), 0);
#endif
    ppl_pages_free(p, 3 * MIB);
}

/* A table given back comes back for the next of its length (7 MiB and 8 MiB are
 * both 8 MiB mapped), not for another length (9 MiB: 10 MiB mapped). */
static void test_kept(void **state)
{
    (void)state;
    void *a = ppl_pages_alloc(7 * MIB);
    assert_non_null(a);
    ppl_pages_free(a, 7 * MIB);
    void *b = ppl_pages_alloc(8 * MIB);
    assert_ptr_equal(a, b);
    ppl_pages_free(b, 8 * MIB);
    void *c = ppl_pages_alloc(9 * MIB); /* a new mapping, the kept one beside it */
    assert_non_null(c);
    assert_ptr_not_equal(c, b);
    void *d = ppl_pages_alloc(8 * MIB); /* the kept one, still */
    assert_ptr_equal(d, b);
    memset(c, 1, 9 * MIB);
    memset(d, 2, 8 * MIB); /* apart: writing one leaves the other */
    assert_int_equal(((unsigned char *)c)[9 * MIB - 1], 1);
    ppl_pages_free(c, 9 * MIB);
    ppl_pages_free(d, 8 * MIB);
}

/* A thread's own tables: one per owner, made at the first call (fresh), the same
 * after; another thread has its own. */
static const char owner_a, owner_b;

static int other_thread(void *arg)
{
    bool fresh;
    void *mine = ppl_pages_local(&owner_a, MIB, &fresh);
    *(void **)arg = fresh && mine ? mine : NULL;
    return 0;
}

static void test_local(void **state)
{
    (void)state;
    bool fresh;
    unsigned char *a = ppl_pages_local(&owner_a, MIB, &fresh);
    assert_non_null(a);
    assert_true(fresh);
    a[MIB - 1] = 7;
    assert_ptr_equal(ppl_pages_local(&owner_a, MIB, &fresh), a);
    assert_false(fresh);
    assert_int_equal(a[MIB - 1], 7);
    void *b = ppl_pages_local(&owner_b, MIB, &fresh);
    assert_non_null(b);
    assert_true(fresh);
    assert_ptr_not_equal(a, b);
    void *theirs = NULL;
    thrd_t t;
    assert_int_equal(thrd_create(&t, other_thread, &theirs), thrd_success);
    assert_int_equal(thrd_join(t, NULL), thrd_success);
    assert_non_null(theirs); /* fresh there, and unmapped with that thread */
    assert_ptr_not_equal(theirs, a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_kept),
        cmocka_unit_test(test_local),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
