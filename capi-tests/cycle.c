/* The full lifecycle on a real device, three times, for the leak check (run.sh runs it under
 * LeakSanitizer): Init -> AllocateParameters -> CreateFeature1 (loads the model, uploads the
 * weights, builds the workspace) -> EvaluateFeature_C (a disabled frame: recorded, submitted and
 * waited on without the network, which would take lavapipe minutes) -> ReleaseFeature ->
 * DestroyParameters -> Shutdown1. Then a creation whose command buffer is never submitted
 * (freed by ReleaseFeature), and a creation failed by the library's test hook
 * (OPENNGX_TEST_FAIL_CREATION=1: FAIL_OutOfGPUMemory, a null handle, nothing left). The model
 * directory comes from OPENNGX_CAPI_MODEL.
 * Exit code 77 = skipped (no Vulkan device). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>

#include "check.h"
#include "openngx.h"

static const char *g_program = "cycle";
#include "vk_app.h"

#define W 64
#define H 64
#define SKIP 77

int main(void) {
    const char *model = getenv("OPENNGX_CAPI_MODEL");
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkCommandBufferBeginInfo bi;
    VkSubmitInfo si;
    Image color, output;
    int round;

    if (!model || !*model) {
        fprintf(stderr, "cycle: OPENNGX_CAPI_MODEL is not set (capi-tests/run.sh sets it)\n");
        return 2;
    }
    setenv("OPENNGX_MODEL_DIR", model, 1);
    if (!make_device()) {
        printf("cycle: SKIP (no Vulkan device that runs the exact route)\n");
        return SKIP;
    }
    CHECK_CODE(make_command_buffer(&pool, &cmd), VK_SUCCESS);
    CHECK_TRUE(make_image(&color, VK_FORMAT_R16G16B16A16_SFLOAT, W, H, VK_IMAGE_USAGE_SAMPLED_BIT));
    CHECK_TRUE(make_image(&output, VK_FORMAT_R16G16B16A16_SFLOAT, W, H,
                          VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT));
    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    memset(&si, 0, sizeof si);
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;

    for (round = 0; round < 3; round++) {
        NVSDK_NGX_Parameter *p = NULL;
        NVSDK_NGX_Handle *h = NULL;
        CHECK_CODE(NVSDK_NGX_VULKAN_Init(0x42, L"/tmp", g_instance, g_pd, g_device, vkGetInstanceProcAddr,
                                         vkGetDeviceProcAddr, NULL, NVSDK_NGX_Version_API),
                   NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&p), NVSDK_NGX_Result_Success);
        NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Width", W);
        NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Height", H);
        NVSDK_NGX_Parameter_SetVoidPointer(p, "DLSSNR.Color", &color.resource);
        NVSDK_NGX_Parameter_SetVoidPointer(p, "DLSSNR.Output", &output.resource);
        NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Enabled", 0);
        CHECK_CODE(vkResetCommandBuffer(cmd, 0), VK_SUCCESS);
        CHECK_CODE(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
        barrier(cmd, color.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, 0,
                VK_ACCESS_SHADER_READ_BIT, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
        barrier(cmd, output.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL, 0, VK_ACCESS_SHADER_WRITE_BIT,
                VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
        CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(g_device, cmd, NVSDK_NGX_Feature_Reserved18, p, &h),
                   NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, h, p, NULL), NVSDK_NGX_Result_Success);
        CHECK_CODE(vkEndCommandBuffer(cmd), VK_SUCCESS);
        CHECK_CODE(vkQueueSubmit(g_queue, 1, &si, VK_NULL_HANDLE), VK_SUCCESS);
        CHECK_CODE(vkQueueWaitIdle(g_queue), VK_SUCCESS);
        CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(h), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(p), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(g_device), NVSDK_NGX_Result_Success);
    }

    /* A creation recorded into a command buffer that is never submitted, then released: the
     * application may not submit that work any more, so the release frees everything. */
    {
        NVSDK_NGX_Parameter *p = NULL;
        NVSDK_NGX_Handle *h = NULL;
        CHECK_CODE(NVSDK_NGX_VULKAN_Init(0x42, L"/tmp", g_instance, g_pd, g_device, vkGetInstanceProcAddr,
                                         vkGetDeviceProcAddr, NULL, NVSDK_NGX_Version_API),
                   NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&p), NVSDK_NGX_Result_Success);
        NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Width", W);
        NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Height", H);
        CHECK_CODE(vkResetCommandBuffer(cmd, 0), VK_SUCCESS);
        CHECK_CODE(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
        CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(g_device, cmd, NVSDK_NGX_Feature_Reserved18, p, &h),
                   NVSDK_NGX_Result_Success);
        CHECK_CODE(vkEndCommandBuffer(cmd), VK_SUCCESS);
        CHECK_CODE(vkResetCommandBuffer(cmd, 0), VK_SUCCESS);
        CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(h), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(p), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(g_device), NVSDK_NGX_Result_Success);
    }
    /* A creation that fails once everything was built (the library's test hook): the code, a
     * null handle, and nothing left behind; the application submits the command buffer anyway. */
    {
        NVSDK_NGX_Parameter *p = NULL;
        NVSDK_NGX_Handle *h = NULL;
        CHECK_CODE(NVSDK_NGX_VULKAN_Init(0x42, L"/tmp", g_instance, g_pd, g_device, vkGetInstanceProcAddr,
                                         vkGetDeviceProcAddr, NULL, NVSDK_NGX_Version_API),
                   NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&p), NVSDK_NGX_Result_Success);
        NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Width", W);
        NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Height", H);
        CHECK_CODE(vkResetCommandBuffer(cmd, 0), VK_SUCCESS);
        CHECK_CODE(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
        setenv("OPENNGX_TEST_FAIL_CREATION", "1", 1);
        CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(g_device, cmd, NVSDK_NGX_Feature_Reserved18, p, &h),
                   NVSDK_NGX_Result_FAIL_OutOfGPUMemory);
        unsetenv("OPENNGX_TEST_FAIL_CREATION");
        CHECK_TRUE(h == NULL);
        CHECK_CODE(vkEndCommandBuffer(cmd), VK_SUCCESS);
        CHECK_CODE(vkQueueSubmit(g_queue, 1, &si, VK_NULL_HANDLE), VK_SUCCESS);
        CHECK_CODE(vkQueueWaitIdle(g_queue), VK_SUCCESS);
        CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(p), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(g_device), NVSDK_NGX_Result_Success);
    }

    vkDeviceWaitIdle(g_device);
    free_image(&color);
    free_image(&output);
    vkDestroyCommandPool(g_device, pool, NULL);
    destroy_device();
    CHECK_TRUE(g_validation_errors == 0);
    return check_finish("cycle");
}
