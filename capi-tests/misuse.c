/* API misuse from C99: every call below must return the exact result code and must not crash.
 * Vulkan handles are fake non-NULL values: the NGX layer never calls Vulkan itself (only a
 * feature backend would, and none is reached with fake handles). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <wchar.h>

#include "check.h"
#include "openngx.h"

#define FAKE_INSTANCE ((VkInstance)(uintptr_t)0x1000)
#define FAKE_PD ((VkPhysicalDevice)(uintptr_t)0x2000)
#define FAKE_DEVICE ((VkDevice)(uintptr_t)0x3000)
#define OTHER_DEVICE ((VkDevice)(uintptr_t)0x3800)
#define FAKE_CMD ((VkCommandBuffer)(uintptr_t)0x4000)
#define NR NVSDK_NGX_Feature_Reserved18

static char g_log[16384];

static void log_sink(const char *message, NVSDK_NGX_Logging_Level level, NVSDK_NGX_Feature source) {
    (void)level;
    (void)source;
    size_t used = strlen(g_log);
    if (used + strlen(message) + 2 < sizeof g_log) {
        strcat(g_log, message);
        strcat(g_log, "\n");
    }
}

/* True when a message containing `needle` was logged since the last call; clears the log. */
static int logged(const char *needle) {
    int found = strstr(g_log, needle) != NULL;
    g_log[0] = 0;
    return found;
}

static NVSDK_NGX_Result init(VkDevice device, NVSDK_NGX_Version version) {
    NVSDK_NGX_FeatureCommonInfo info;
    memset(&info, 0, sizeof info);
    info.LoggingInfo.LoggingCallback = log_sink;
    info.LoggingInfo.MinimumLoggingLevel = NVSDK_NGX_LOGGING_LEVEL_VERBOSE;
    return NVSDK_NGX_VULKAN_Init(0x1234, L"/tmp", FAKE_INSTANCE, FAKE_PD, device, NULL, NULL, &info, version);
}

static NVSDK_NGX_Result create(NVSDK_NGX_Parameter *p, NVSDK_NGX_Handle **h) {
    return NVSDK_NGX_VULKAN_CreateFeature1(FAKE_DEVICE, FAKE_CMD, NR, p, h);
}

int main(void) {
    NVSDK_NGX_Parameter *p = NULL;
    NVSDK_NGX_Parameter *caps = NULL;
    NVSDK_NGX_Parameter *lib = NULL;
    NVSDK_NGX_Handle fake_handle = {7};
    NVSDK_NGX_Handle *h = NULL;
    size_t scratch = 99;
    unsigned int ui = 0xDEADBEEFu;
    int i = 0;
    float f = 0.0f;
    double d = 0.0;
    unsigned long long ull = 0;
    void *vp = NULL;
    char model_dir[] = "/tmp/openngx-capi-XXXXXX";
    char manifest[64];
    FILE *mf;

    /* ---- before Init ---- */
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&p), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetCapabilityParameters(&p), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetParameters(&p), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature(FAKE_CMD, NR, p, &h), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(FAKE_CMD, &fake_handle, p, NULL), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(&fake_handle), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetScratchBufferSize(NR, NULL, &scratch), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown(), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(NULL), NVSDK_NGX_Result_FAIL_NotInitialized);

    /* ---- Init argument checks ---- */
    CHECK_CODE(NVSDK_NGX_VULKAN_Init(1, L"/tmp", NULL, FAKE_PD, FAKE_DEVICE, NULL, NULL, NULL, NVSDK_NGX_Version_API),
               NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_Init(1, L"/tmp", FAKE_INSTANCE, NULL, FAKE_DEVICE, NULL, NULL, NULL, NVSDK_NGX_Version_API),
               NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_Init(1, L"/tmp", FAKE_INSTANCE, FAKE_PD, NULL, NULL, NULL, NULL, NVSDK_NGX_Version_API),
               NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(init(FAKE_DEVICE, 0x12), NVSDK_NGX_Result_FAIL_OutOfDate);
    CHECK_CODE(NVSDK_NGX_VULKAN_Init_with_ProjectID(NULL, NVSDK_NGX_ENGINE_TYPE_CUSTOM, "1.0", L"/tmp", FAKE_INSTANCE, FAKE_PD,
                                                     FAKE_DEVICE, NULL, NULL, NULL, NVSDK_NGX_Version_API),
               NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown(), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_CODE(init(FAKE_DEVICE, NVSDK_NGX_Version_API), NVSDK_NGX_Result_Success);
    CHECK_TRUE(logged("initialised"));

    /* ---- NULL pointers everywhere ---- */
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetCapabilityParameters(NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetParameters(NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetScratchBufferSize(NR, NULL, NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&p), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(FAKE_DEVICE, FAKE_CMD, NR, p, NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(FAKE_DEVICE, FAKE_CMD, NR, NULL, &h), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(FAKE_DEVICE, NULL, NR, p, &h), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(NULL, FAKE_CMD, NR, p, &h), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature(FAKE_CMD, NR, NULL, &h), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(FAKE_CMD, NULL, p, NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(FAKE_CMD, &fake_handle, NULL, NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(NULL, &fake_handle, p, NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature(FAKE_CMD, NULL, p, NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetFeatureRequirements(FAKE_INSTANCE, FAKE_PD, NULL, NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetFeatureInstanceExtensionRequirements(NULL, NULL, NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetFeatureDeviceExtensionRequirements(FAKE_INSTANCE, FAKE_PD, NULL, NULL, NULL),
               NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_RequiredExtensions(NULL, NULL, NULL, NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_UpdateFeature(NULL, NR), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_Parameter_GetUI(NULL, "DLSSNR.Width", &ui), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_Parameter_GetUI(p, NULL, &ui), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_Parameter_GetUI(p, "DLSSNR.Width", NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_Parameter_GetVoidPointer(NULL, "x", &vp), NVSDK_NGX_Result_FAIL_InvalidParameter);
    NVSDK_NGX_Parameter_SetUI(NULL, "x", 1); /* ignored, no crash */
    NVSDK_NGX_Parameter_SetUI(p, NULL, 1);   /* ignored, no crash */
    NVSDK_NGX_Parameter_SetF(NULL, NULL, 1.0f);
    CHECK_CODE(GetNGXResultAsString(NVSDK_NGX_Result_FAIL_NotImplemented) != NULL, 1);
    CHECK_TRUE(wcscmp(GetNGXResultAsString(NVSDK_NGX_Result_FAIL_NotImplemented), L"NVSDK_NGX_Result_FAIL_NotImplemented") == 0);
    CHECK_TRUE(wcscmp(GetNGXResultAsString(0xBAD000FFu), L"NVSDK_NGX_Result_Unknown") == 0);

    /* ---- parameter maps: missing keys, conversions, ownership ---- */
    CHECK_CODE(NVSDK_NGX_Parameter_GetUI(p, "Missing", &ui), NVSDK_NGX_Result_Fail);
    CHECK_TRUE(ui == 0xDEADBEEFu); /* untouched */
    CHECK_CODE(NVSDK_NGX_Parameter_GetVoidPointer(p, "Missing", &vp), NVSDK_NGX_Result_Fail);
    CHECK_TRUE(vp == NULL);
    NVSDK_NGX_Parameter_SetI(p, "N", -2);
    CHECK_CODE(NVSDK_NGX_Parameter_GetF(p, "N", &f), NVSDK_NGX_Result_Success);
    CHECK_TRUE(f == -2.0f);
    CHECK_CODE(NVSDK_NGX_Parameter_GetD(p, "N", &d), NVSDK_NGX_Result_Success);
    CHECK_TRUE(d == -2.0);
    NVSDK_NGX_Parameter_SetD(p, "N", 3.75); /* re-Set with another type replaces the value */
    CHECK_CODE(NVSDK_NGX_Parameter_GetI(p, "N", &i), NVSDK_NGX_Result_Success);
    CHECK_TRUE(i == 3);
    NVSDK_NGX_Parameter_SetULL(p, "Big", 1ull << 40);
    CHECK_CODE(NVSDK_NGX_Parameter_GetULL(p, "Big", &ull), NVSDK_NGX_Result_Success);
    CHECK_TRUE(ull == (1ull << 40));
    NVSDK_NGX_Parameter_SetVoidPointer(p, "Ptr", &scratch);
    CHECK_CODE(NVSDK_NGX_Parameter_GetVoidPointer(p, "Ptr", &vp), NVSDK_NGX_Result_Success);
    CHECK_TRUE(vp == (void *)&scratch);
    ui = 5;
    CHECK_CODE(NVSDK_NGX_Parameter_GetUI(p, "Ptr", &ui), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_TRUE(ui == 5);
    CHECK_CODE(NVSDK_NGX_Parameter_GetVoidPointer(p, "N", &vp), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetParameters(&lib), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetParameters(&caps), NVSDK_NGX_Result_Success);
    CHECK_TRUE(lib == caps); /* one library-owned map */
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(lib), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_TRUE(logged("owned by the library"));
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters((NVSDK_NGX_Parameter *)&fake_handle), NVSDK_NGX_Result_FAIL_InvalidParameter);

    /* ---- capabilities and their callbacks ---- */
    CHECK_CODE(NVSDK_NGX_VULKAN_GetCapabilityParameters(&caps), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_Parameter_GetI(caps, "DLSSNR.Available", &i), NVSDK_NGX_Result_Success);
    CHECK_TRUE(i == 1); /* the exact DLSS-NR backend is built in */
    CHECK_CODE(NVSDK_NGX_Parameter_GetI(caps, "SuperSampling.Available", &i), NVSDK_NGX_Result_Success);
    CHECK_TRUE(i == 0);
    vp = NULL;
    CHECK_CODE(NVSDK_NGX_Parameter_GetVoidPointer(caps, "DLSSNRGetStatsCallback", &vp), NVSDK_NGX_Result_Success);
    CHECK_TRUE(vp != NULL);
    if (vp) {
        PFN_NVSDK_NGX_DLSS_GetStatsCallback stats;
        memcpy(&stats, &vp, sizeof stats);
        CHECK_CODE(stats(caps), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_Parameter_GetULL(caps, "SizeInBytes", &ull), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_Parameter_GetUI(caps, "#\x44", &ui), NVSDK_NGX_Result_Success);
        CHECK_TRUE(ui == NVSDK_NGX_OPT_LEVEL_RELEASE);
        CHECK_CODE(stats(NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    }
    vp = NULL;
    CHECK_CODE(NVSDK_NGX_Parameter_GetVoidPointer(caps, "DLSSNRComputeScalingRatioCallback", &vp), NVSDK_NGX_Result_Success);
    CHECK_TRUE(vp != NULL);
    if (vp) {
        PFN_NVSDK_NGX_DLSSNR_ComputeScalingRatioCallback ratio;
        memcpy(&ratio, &vp, sizeof ratio);
        NVSDK_NGX_Parameter_SetI(caps, "PerfQualityValue", NVSDK_NGX_PerfQuality_Value_UltraPerformance);
        CHECK_CODE(ratio(caps), NVSDK_NGX_Result_FAIL_InvalidParameter);
        NVSDK_NGX_Parameter_SetI(caps, "PerfQualityValue", NVSDK_NGX_PerfQuality_Value_MaxQuality);
        CHECK_CODE(ratio(caps), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_Parameter_GetF(caps, "DLSSNR.ScalingRatio", &f), NVSDK_NGX_Result_Success);
        CHECK_TRUE(f == 1.0f);
    }
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(caps), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(caps), NVSDK_NGX_Result_FAIL_InvalidParameter); /* destroy twice */

    /* ---- unsupported feature ids ---- */
    {
        NVSDK_NGX_FeatureDiscoveryInfo info;
        NVSDK_NGX_FeatureRequirement req;
        NVSDK_NGX_Application_Identifier app;
        uint32_t n = 9;
        VkExtensionProperties *props = NULL;
        unsigned int ni = 9, nd = 9;
        const char **inst = NULL, **dev = NULL;
        memset(&info, 0, sizeof info);
        memset(&app, 0, sizeof app);
        info.SDKVersion = NVSDK_NGX_Version_API;
        info.FeatureID = NVSDK_NGX_Feature_SuperSampling;
        CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(FAKE_DEVICE, FAKE_CMD, NVSDK_NGX_Feature_SuperSampling, p, &h),
                   NVSDK_NGX_Result_FAIL_FeatureNotSupported);
        CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature(FAKE_CMD, NVSDK_NGX_Feature_DeepDVC, p, &h),
                   NVSDK_NGX_Result_FAIL_FeatureNotSupported);
        CHECK_CODE(NVSDK_NGX_VULKAN_GetScratchBufferSize(NVSDK_NGX_Feature_SuperSampling, p, &scratch),
                   NVSDK_NGX_Result_FAIL_FeatureNotSupported);
        CHECK_CODE(NVSDK_NGX_UpdateFeature(&app, NVSDK_NGX_Feature_FrameGeneration), NVSDK_NGX_Result_FAIL_FeatureNotSupported);
        CHECK_CODE(NVSDK_NGX_VULKAN_GetFeatureRequirements(FAKE_INSTANCE, FAKE_PD, &info, &req),
                   NVSDK_NGX_Result_FAIL_FeatureNotSupported);
        CHECK_TRUE(req.FeatureSupported == NVSDK_NGX_FeatureSupportResult_NotImplemented);
        CHECK_CODE(NVSDK_NGX_VULKAN_GetFeatureInstanceExtensionRequirements(&info, &n, &props),
                   NVSDK_NGX_Result_FAIL_FeatureNotSupported);
        info.FeatureID = NR;
        CHECK_CODE(NVSDK_NGX_VULKAN_GetFeatureRequirements(FAKE_INSTANCE, FAKE_PD, &info, &req), NVSDK_NGX_Result_Success);
        /* The device query reads the physical device's extensions (the tensor route's are listed
         * where offered), so it takes real handles or NULL ones (nothing to check, nothing
         * listed); the Rust test feature_nr checks it on a real device. */
        CHECK_CODE(NVSDK_NGX_VULKAN_GetFeatureDeviceExtensionRequirements(VK_NULL_HANDLE, VK_NULL_HANDLE, &info, &n, &props),
                   NVSDK_NGX_Result_Success);
        CHECK_TRUE(n == 0 && props != NULL);
        CHECK_CODE(NVSDK_NGX_VULKAN_RequiredExtensions(&ni, &inst, &nd, &dev), NVSDK_NGX_Result_Success);
        CHECK_TRUE(ni == 0 && nd == 0 && inst != NULL && dev != NULL);
        CHECK_CODE(NVSDK_NGX_UpdateFeature(&app, NR), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_GetScratchBufferSize(NR, p, &scratch), NVSDK_NGX_Result_Success);
        CHECK_TRUE(scratch == 0);
        /* Feature 13 (DLSS-RR) has its backend, RR's GPU route (capi-tests/rr.cpp drives its
         * parameters, tests/rr_replay.rs its frames): discovery answers "supported" without
         * touching the (fake) device, the scratch size is 0. */
        info.FeatureID = NVSDK_NGX_Feature_RayReconstruction;
        req.FeatureSupported = 0;
        CHECK_CODE(NVSDK_NGX_VULKAN_GetFeatureRequirements(FAKE_INSTANCE, FAKE_PD, &info, &req), NVSDK_NGX_Result_Success);
        CHECK_TRUE(req.FeatureSupported == NVSDK_NGX_FeatureSupportResult_Supported);
        scratch = 9;
        CHECK_CODE(NVSDK_NGX_VULKAN_GetScratchBufferSize(NVSDK_NGX_Feature_RayReconstruction, p, &scratch), NVSDK_NGX_Result_Success);
        CHECK_TRUE(scratch == 0);
    }

    /* ---- feature 18 creation: parameter validation, model lookup and check ---- */
    CHECK_CODE(create(p, &h), NVSDK_NGX_Result_FAIL_InvalidParameter); /* DLSSNR.Width missing */
    CHECK_TRUE(logged("DLSSNR.Width"));
    NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Width", 128);
    NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Height", 32);
    CHECK_CODE(create(p, &h), NVSDK_NGX_Result_FAIL_InvalidParameter); /* below 64 */
    CHECK_TRUE(logged("DLSSNR.Height"));
    NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Height", 128);
    NVSDK_NGX_Parameter_SetF(p, "DLSSNR.ScalingRatio", 2.0f);
    CHECK_CODE(create(p, &h), NVSDK_NGX_Result_FAIL_UnsupportedParameter);
    NVSDK_NGX_Parameter_SetF(p, "DLSSNR.ScalingRatio", 1.0f);
    setenv("OPENNGX_MODEL_DIR", "/nonexistent/openngx-model", 1);
    CHECK_CODE(create(p, &h), NVSDK_NGX_Result_FAIL_UnableToInitializeFeature);
    CHECK_TRUE(logged("/nonexistent/openngx-model"));
    CHECK_TRUE(mkdtemp(model_dir) != NULL);
    setenv("OPENNGX_MODEL_DIR", model_dir, 1);
    CHECK_CODE(create(p, &h), NVSDK_NGX_Result_FAIL_UnableToInitializeFeature); /* no manifest.json */
    CHECK_TRUE(logged("manifest.json"));
    snprintf(manifest, sizeof manifest, "%s/manifest.json", model_dir);
    mf = fopen(manifest, "w");
    CHECK_TRUE(mf != NULL);
    if (mf) {
        fputs("{}", mf);
        fclose(mf);
    }
    h = NULL;
    /* A manifest without stages: the model check refuses it before any device work. */
    CHECK_CODE(create(p, &h), NVSDK_NGX_Result_FAIL_UnableToInitializeFeature);
    CHECK_TRUE(logged("manifest.json"));
    CHECK_TRUE(h == NULL);
    CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(OTHER_DEVICE, FAKE_CMD, NR, p, &h), NVSDK_NGX_Result_FAIL_NotInitialized);

    /* ---- handles that were never created ---- */
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(FAKE_CMD, &fake_handle, p, NULL), NVSDK_NGX_Result_FAIL_FeatureNotFound);
    CHECK_TRUE(logged("not a live feature"));
    CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(&fake_handle), NVSDK_NGX_Result_FAIL_FeatureNotFound);
    CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(&fake_handle), NVSDK_NGX_Result_FAIL_FeatureNotFound);

    /* ---- several devices: the single-device CreateFeature becomes ambiguous ---- */
    CHECK_CODE(init(OTHER_DEVICE, NVSDK_NGX_Version_API), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature(FAKE_CMD, NR, p, &h), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(OTHER_DEVICE), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(OTHER_DEVICE), NVSDK_NGX_Result_FAIL_NotInitialized);

    /* ---- shutdown twice; app-owned maps survive Shutdown until destroyed ---- */
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(NULL), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(NULL), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown(), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_CODE(NVSDK_NGX_Parameter_GetUI(p, "DLSSNR.Width", &ui), NVSDK_NGX_Result_Success);
    CHECK_TRUE(ui == 128);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(p), NVSDK_NGX_Result_Success);

    unlink(manifest);
    rmdir(model_dir);
    return check_finish("misuse");
}
