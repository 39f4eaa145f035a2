/* Feature 18 on a real Vulkan device (lavapipe in CI), the misuse an engine can commit, each with
 * its exact result code and a log line that names the problem:
 *   - model directories that are missing, have a truncated stage file, or fail SHA-256;
 *   - evaluate without the colour input, with a colour image smaller than the feature, with a
 *     colour format
 *     the feature cannot read, with an output that is not read-write (a larger image is fine:
 *     NGX reads the subrectangle);
 *   - a disabled evaluation (proxy passed through, no network: cheap on lavapipe) that succeeds
 *     and is submitted;
 *   - release, release twice, evaluate after release, shutdown twice.
 * run.sh passes the model directories: OPENNGX_CAPI_MODEL (valid), OPENNGX_CAPI_MODEL_TRUNCATED
 * and OPENNGX_CAPI_MODEL_BADSHA (copies with one stage file cut short / one byte changed) and
 * OPENNGX_CAPI_BROKEN_FILE (that stage file's name). Exit code 77 = skipped (no Vulkan device). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>

#include "check.h"
#include "openngx.h"

static const char *g_program = "device";
#include "vk_app.h"

#define W 64
#define H 64
#define SKIP 77

static char g_log[16384];

static void on_log(const char *message, NVSDK_NGX_Logging_Level level, NVSDK_NGX_Feature feature) {
    size_t used = strlen(g_log);
    (void)level;
    (void)feature;
    if (message && used + strlen(message) + 2 < sizeof g_log) {
        strcat(g_log, message);
        strcat(g_log, "\n");
    }
}

/* Whether the log since the last call mentions `needle`; clears the log. */
static int logged(const char *needle) {
    int found = strstr(g_log, needle) != NULL;
    if (!found) fprintf(stderr, "device: the log does not mention \"%s\":\n%s", needle, g_log);
    g_log[0] = '\0';
    return found;
}

static const char *need_env(const char *name) {
    const char *v = getenv(name);
    if (!v || !*v) {
        fprintf(stderr, "device: %s is not set (capi-tests/run.sh sets it)\n", name);
        exit(2);
    }
    return v;
}

static NVSDK_NGX_Result create_with(const char *model_dir, VkCommandBuffer cmd, NVSDK_NGX_Parameter *p,
                                    NVSDK_NGX_Handle **h) {
    setenv("OPENNGX_MODEL_DIR", model_dir, 1);
    g_log[0] = '\0';
    return NVSDK_NGX_VULKAN_CreateFeature1(g_device, cmd, NVSDK_NGX_Feature_Reserved18, p, h);
}

int main(void) {
    const char *model = need_env("OPENNGX_CAPI_MODEL");
    const char *truncated = need_env("OPENNGX_CAPI_MODEL_TRUNCATED");
    const char *badsha = need_env("OPENNGX_CAPI_MODEL_BADSHA");
    const char *broken_file = need_env("OPENNGX_CAPI_BROKEN_FILE");
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkCommandBufferBeginInfo bi;
    VkSubmitInfo si;
    Image color, small, r8, motion, output;
    NVSDK_NGX_Resource_VK not_rw;
    NVSDK_NGX_FeatureCommonInfo info;
    NVSDK_NGX_Parameter *caps = NULL, *create = NULL, *eval = NULL;
    NVSDK_NGX_Handle *h = NULL;
    int available = -1;

    if (!make_device()) {
        printf("device: SKIP (no Vulkan device that runs the exact route)\n");
        return SKIP;
    }
    CHECK_CODE(make_command_buffer(&pool, &cmd), VK_SUCCESS);
    CHECK_TRUE(make_image(&color, VK_FORMAT_R16G16B16A16_SFLOAT, W, H, VK_IMAGE_USAGE_SAMPLED_BIT));
    CHECK_TRUE(make_image(&small, VK_FORMAT_R16G16B16A16_SFLOAT, W - 32, H, VK_IMAGE_USAGE_SAMPLED_BIT));
    CHECK_TRUE(make_image(&r8, VK_FORMAT_R8_UNORM, W, H, VK_IMAGE_USAGE_SAMPLED_BIT));
    CHECK_TRUE(make_image(&motion, VK_FORMAT_R16G16_SFLOAT, W, H, VK_IMAGE_USAGE_SAMPLED_BIT));
    CHECK_TRUE(make_image(&output, VK_FORMAT_R16G16B16A16_SFLOAT, W, H,
                          VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT));
    not_rw = output.resource;
    not_rw.ReadWrite = false;

    memset(&info, 0, sizeof info);
    info.LoggingInfo.LoggingCallback = on_log;
    info.LoggingInfo.MinimumLoggingLevel = NVSDK_NGX_LOGGING_LEVEL_ON;
    CHECK_CODE(NVSDK_NGX_VULKAN_Init(0x42, L"/tmp", g_instance, g_pd, g_device, vkGetInstanceProcAddr,
                                     vkGetDeviceProcAddr, &info, NVSDK_NGX_Version_API),
               NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetCapabilityParameters(&caps), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_Parameter_GetI(caps, "DLSSNR.Available", &available), NVSDK_NGX_Result_Success);
    CHECK_TRUE(available == 1);
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&create), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&eval), NVSDK_NGX_Result_Success);
    NVSDK_NGX_Parameter_SetUI(create, "DLSSNR.Width", W);
    NVSDK_NGX_Parameter_SetUI(create, "DLSSNR.Height", H);

    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    CHECK_CODE(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);

    /* ---- model directories that cannot be used: refused at creation, the log says why ---- */
    CHECK_CODE(create_with("/nonexistent/openngx-model", cmd, create, &h),
               NVSDK_NGX_Result_FAIL_UnableToInitializeFeature);
    CHECK_TRUE(logged("/nonexistent/openngx-model"));
    CHECK_TRUE(h == NULL);
    CHECK_CODE(create_with(truncated, cmd, create, &h), NVSDK_NGX_Result_FAIL_UnableToInitializeFeature);
    CHECK_TRUE(strstr(g_log, "bytes") != NULL);
    CHECK_TRUE(logged(broken_file));
    CHECK_TRUE(h == NULL);
    CHECK_CODE(create_with(badsha, cmd, create, &h), NVSDK_NGX_Result_FAIL_UnableToInitializeFeature);
    CHECK_TRUE(strstr(g_log, "SHA-256") != NULL);
    CHECK_TRUE(logged(broken_file));
    CHECK_TRUE(h == NULL);

    /* ---- the real model ---- */
    CHECK_CODE(create_with(model, cmd, create, &h), NVSDK_NGX_Result_Success);
    CHECK_TRUE(h != NULL);

    /* ---- evaluate misuse: nothing is recorded, the code and the log name the problem ---- */
    NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.Output", &output.resource);
    NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.MVec", &motion.resource);
    NVSDK_NGX_Parameter_SetUI(eval, "DLSSNR.Enabled", 0);
    g_log[0] = '\0';
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, h, eval, NULL), NVSDK_NGX_Result_FAIL_MissingInput);
    CHECK_TRUE(logged("DLSSNR.Color"));
    NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.Color", &small.resource);
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, h, eval, NULL), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_TRUE(logged("DLSSNR.Color"));
    NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.Color", &r8.resource);
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, h, eval, NULL),
               NVSDK_NGX_Result_FAIL_UnsupportedInputFormat);
    CHECK_TRUE(logged("DLSSNR.Color"));
    NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.Color", &color.resource);
    NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.Output", &not_rw);
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, h, eval, NULL), NVSDK_NGX_Result_FAIL_RWFlagMissing);
    CHECK_TRUE(logged("DLSSNR.Output"));

    /* ---- a disabled evaluation goes through: recorded, submitted, waited on ---- */
    NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.Output", &output.resource);
    barrier(cmd, color.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, 0,
            VK_ACCESS_SHADER_READ_BIT, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    barrier(cmd, motion.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, 0,
            VK_ACCESS_SHADER_READ_BIT, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    barrier(cmd, output.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL, 0, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, h, eval, NULL), NVSDK_NGX_Result_Success);
    CHECK_CODE(vkEndCommandBuffer(cmd), VK_SUCCESS);
    memset(&si, 0, sizeof si);
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    CHECK_CODE(vkQueueSubmit(g_queue, 1, &si, VK_NULL_HANDLE), VK_SUCCESS);
    CHECK_CODE(vkQueueWaitIdle(g_queue), VK_SUCCESS);

    /* ---- release, twice; evaluate a dead handle ---- */
    CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(h), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(h), NVSDK_NGX_Result_FAIL_FeatureNotFound);
    CHECK_CODE(vkResetCommandBuffer(cmd, 0), VK_SUCCESS);
    CHECK_CODE(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, h, eval, NULL), NVSDK_NGX_Result_FAIL_FeatureNotFound);
    CHECK_CODE(vkEndCommandBuffer(cmd), VK_SUCCESS);

    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(caps), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(create), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(eval), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(g_device), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(g_device), NVSDK_NGX_Result_FAIL_NotInitialized);

    vkDeviceWaitIdle(g_device);
    free_image(&color);
    free_image(&small);
    free_image(&r8);
    free_image(&motion);
    free_image(&output);
    vkDestroyCommandPool(g_device, pool, NULL);
    destroy_device();
    CHECK_TRUE(g_validation_errors == 0);
    return check_finish("device");
}
