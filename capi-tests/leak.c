/* Lifecycle loop for the leak check (run.sh runs it under valgrind --leak-check=full
 * --error-exitcode=1): Init / Allocate / Set / Get / GetCapabilityParameters / GetParameters /
 * a refused CreateFeature / Destroy / Shutdown, three times. Nothing may be definitely or
 * possibly lost. */
#include <stdint.h>

#include "check.h"
#include "openngx.h"

static void quiet(const char *m, NVSDK_NGX_Logging_Level l, NVSDK_NGX_Feature f) {
    (void)m;
    (void)l;
    (void)f;
}

int main(void) {
    VkInstance instance = (VkInstance)(uintptr_t)0x1000;
    VkPhysicalDevice pd = (VkPhysicalDevice)(uintptr_t)0x2000;
    VkDevice device = (VkDevice)(uintptr_t)0x3000;
    VkCommandBuffer cmd = (VkCommandBuffer)(uintptr_t)0x4000;
    int round;
    for (round = 0; round < 3; round++) {
        NVSDK_NGX_FeatureCommonInfo info;
        NVSDK_NGX_Parameter *p = NULL, *caps = NULL, *lib = NULL;
        NVSDK_NGX_Handle *h = NULL;
        unsigned int ui = 0;
        float f = 0.0f;
        memset(&info, 0, sizeof info);
        info.LoggingInfo.LoggingCallback = quiet;
        info.LoggingInfo.MinimumLoggingLevel = NVSDK_NGX_LOGGING_LEVEL_VERBOSE;
        CHECK_CODE(NVSDK_NGX_VULKAN_Init(1, L"/tmp", instance, pd, device, NULL, NULL, &info, NVSDK_NGX_Version_API),
                   NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&p), NVSDK_NGX_Result_Success);
        NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Width", 64);
        NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Height", 64);
        NVSDK_NGX_Parameter_SetF(p, "DLSSNR.Intensity", 0.5f);
        NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Width", 128); /* overwrite */
        CHECK_CODE(NVSDK_NGX_Parameter_GetUI(p, "DLSSNR.Width", &ui), NVSDK_NGX_Result_Success);
        CHECK_TRUE(ui == 128);
        CHECK_CODE(NVSDK_NGX_Parameter_GetF(p, "DLSSNR.Intensity", &f), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_Parameter_GetF(p, "Missing", &f), NVSDK_NGX_Result_Fail);
        CHECK_CODE(NVSDK_NGX_VULKAN_GetCapabilityParameters(&caps), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_GetParameters(&lib), NVSDK_NGX_Result_Success); /* freed by Shutdown */
        /* A refused creation must not leak its partial state (error strings, log messages). */
        CHECK_TRUE(NVSDK_NGX_FAILED(NVSDK_NGX_VULKAN_CreateFeature(cmd, NVSDK_NGX_Feature_Reserved18, p, &h)));
        CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(caps), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(p), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(NULL), NVSDK_NGX_Result_Success);
    }
    return check_finish("leak");
}
