/* Minimal check macros shared by the C and C++ test programs: every check prints one line on
 * failure, the program's exit status is the number of failed checks (capped at 100). */
#ifndef OPENNGX_CAPI_CHECK_H
#define OPENNGX_CAPI_CHECK_H

#include <stdio.h>
#include <string.h>

static int g_checks = 0;
static int g_failures = 0;

#define CHECK_TRUE(cond)                                                                            \
    do {                                                                                            \
        g_checks++;                                                                                 \
        if (!(cond)) {                                                                              \
            g_failures++;                                                                           \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond);                     \
        }                                                                                           \
    } while (0)

/* Exact result-code check. */
#define CHECK_CODE(expr, expected)                                                                  \
    do {                                                                                            \
        unsigned int got_ = (unsigned int)(expr);                                                   \
        unsigned int want_ = (unsigned int)(expected);                                              \
        g_checks++;                                                                                 \
        if (got_ != want_) {                                                                        \
            g_failures++;                                                                           \
            fprintf(stderr, "%s:%d: FAILED: %s returned 0x%08X, expected %s (0x%08X)\n", __FILE__,  \
                    __LINE__, #expr, got_, #expected, want_);                                       \
        }                                                                                           \
    } while (0)

static int check_finish(const char *name) {
    printf("%s: %d checks, %d failed\n", name, g_checks, g_failures);
    return g_failures > 100 ? 100 : g_failures;
}

#endif
