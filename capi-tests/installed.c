/* A program built against an installed openngx with nothing but `pkg-config --cflags --libs
 * openngx` (capi-tests/install.sh builds and runs it). It proves that the header is found as
 * <openngx.h>, that the library is linked by its soname and loaded from the prefix, and that the
 * installed library answers: result strings, the NotInitialized rule, a parameter map, and the
 * model search of an unmodified game (which reaches the installed data directory through the
 * library's own path). Vulkan handles are fake: nothing here reaches a Vulkan call.
 *
 * Usage: installed EXPECTED_LIBRARY_FILE APP_DATA_DIR [NEEDLE...]
 * Each NEEDLE must appear, in order, in what CreateFeature1 logs when it refuses for want of a
 * usable model directory. Exit status: the number of failed checks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <openngx.h>

#define FAKE_INSTANCE ((VkInstance)(uintptr_t)0x1000)
#define FAKE_PD ((VkPhysicalDevice)(uintptr_t)0x2000)
#define FAKE_DEVICE ((VkDevice)(uintptr_t)0x3000)
#define FAKE_CMD ((VkCommandBuffer)(uintptr_t)0x4000)

static int g_failed = 0;
static char g_log[16384];

#define EXPECT(cond)                                                              \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "installed.c:%d: FAILED: %s\n", __LINE__, #cond);     \
            g_failed++;                                                           \
        }                                                                         \
    } while (0)

static void log_sink(const char *message, NVSDK_NGX_Logging_Level level, NVSDK_NGX_Feature source) {
    (void)level;
    (void)source;
    size_t used = strlen(g_log);
    if (used + strlen(message) + 2 < sizeof g_log) {
        strcat(g_log, message);
        strcat(g_log, "\n");
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s EXPECTED_LIBRARY_FILE APP_DATA_DIR [NEEDLE...]\n", argv[0]);
        return 2;
    }

    /* The library this program runs is the installed file (through libopenngx.so.0). */
    Dl_info info;
    char got[PATH_MAX], want[PATH_MAX];
    EXPECT(dladdr((void *)&GetNGXResultAsString, &info) != 0 && info.dli_fname != NULL);
    EXPECT(realpath(info.dli_fname, got) != NULL && realpath(argv[1], want) != NULL);
    EXPECT(strcmp(got, want) == 0);
    printf("installed: library %s\n", got);

    /* Calls that need no Init. */
    EXPECT(wcscmp(GetNGXResultAsString(NVSDK_NGX_Result_FAIL_FeatureNotSupported),
                  L"NVSDK_NGX_Result_FAIL_FeatureNotSupported") == 0);
    EXPECT(wcscmp(GetNGXResultAsString(0xBAD000FFu), L"NVSDK_NGX_Result_Unknown") == 0);
    NVSDK_NGX_Parameter *p = NULL;
    EXPECT(NVSDK_NGX_VULKAN_AllocateParameters(&p) == NVSDK_NGX_Result_FAIL_NotInitialized);
    EXPECT(p == NULL);
    EXPECT(NVSDK_NGX_VULKAN_Shutdown1(NULL) == NVSDK_NGX_Result_FAIL_NotInitialized);

    /* Init on fake handles (the NGX layer calls no Vulkan), a parameter map, then a creation that
     * stops at the model search. */
    wchar_t app_data[PATH_MAX];
    EXPECT(mbstowcs(app_data, argv[2], PATH_MAX) != (size_t)-1);
    app_data[PATH_MAX - 1] = 0;
    NVSDK_NGX_FeatureCommonInfo common;
    memset(&common, 0, sizeof common);
    common.LoggingInfo.LoggingCallback = log_sink;
    common.LoggingInfo.MinimumLoggingLevel = NVSDK_NGX_LOGGING_LEVEL_VERBOSE;
    EXPECT(NVSDK_NGX_VULKAN_Init(0x1234, app_data, FAKE_INSTANCE, FAKE_PD, FAKE_DEVICE, NULL, NULL, &common,
                                 NVSDK_NGX_Version_API) == NVSDK_NGX_Result_Success);
    EXPECT(NVSDK_NGX_VULKAN_AllocateParameters(&p) == NVSDK_NGX_Result_Success && p != NULL);
    unsigned int w = 0;
    NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Width", 256);
    NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Height", 256);
    EXPECT(NVSDK_NGX_Parameter_GetUI(p, "DLSSNR.Width", &w) == NVSDK_NGX_Result_Success && w == 256);
    g_log[0] = 0;
    NVSDK_NGX_Handle *h = NULL;
    EXPECT(NVSDK_NGX_VULKAN_CreateFeature1(FAKE_DEVICE, FAKE_CMD, NVSDK_NGX_Feature_Reserved18, p, &h) ==
           NVSDK_NGX_Result_FAIL_UnableToInitializeFeature);
    EXPECT(h == NULL);
    const char *at = g_log;
    for (int i = 3; i < argc; i++) {
        const char *found = strstr(at, argv[i]);
        if (found == NULL) {
            fprintf(stderr, "installed: `%s` not logged (in order) by CreateFeature1:\n%s", argv[i], g_log);
            g_failed++;
            break;
        }
        at = found + strlen(argv[i]);
    }
    EXPECT(NVSDK_NGX_VULKAN_DestroyParameters(p) == NVSDK_NGX_Result_Success);
    EXPECT(NVSDK_NGX_VULKAN_Shutdown1(NULL) == NVSDK_NGX_Result_Success);
    printf("installed: %d failed\n", g_failed);
    return g_failed > 100 ? 100 : g_failed;
}
