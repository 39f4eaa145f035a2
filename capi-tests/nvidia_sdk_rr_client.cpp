/* Ray Reconstruction (feature 13) the way a shipped game drives it: built against NVIDIA's own
 * NGX headers, linked with NVIDIA's static library libnvsdk_ngx.a, creating and evaluating the
 * feature through NVIDIA's DLSSD helpers (NGX_VULKAN_CREATE_DLSSD_EXT1,
 * NGX_VULKAN_EVALUATE_DLSSD_EXT). The static library finds openngx's NGX Core as
 * libnvidia-ngx.so.1 (nvidia-sdk.sh puts it on the search path); nothing of openngx is linked
 * in. NVIDIA's files are not part of this repository.
 *
 *   nvidia-sdk-rr-client FIXTURE_DIR   (an `openngx reference --feature rr` fixture; the model
 *                                       from $OPENNGX_RR_MODEL_DIR)
 *
 * Init -> SuperSamplingDenoising.Available -> GetFeatureRequirements(13) -> create on frame 0
 * -> evaluate every frame of the fixture with its colour and guides (one image per guide, its
 * lanes in a 32-bit float format, the linear depth in D32_SFLOAT through its depth aspect) and
 * scalars -> the Output read back and compared byte for byte with the fixture's output.bin ->
 * Release -> Shutdown1. The fixture, the images and the replay are rr_fixture.h's, shared with
 * core_rr.c (the same sequence through the Core without NVIDIA's library, in CI).
 * Exit status: number of failed checks (capped at 100); 77 = skipped (no Vulkan device). */
#include <stdint.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>

/* The DLSSD helpers use the Vulkan helpers' types (NVSDK_NGX_VK_GBuffer, the image-view check). */
#include "nvsdk_ngx_vk.h"
#include "nvsdk_ngx_helpers_vk.h"
#include "nvsdk_ngx_helpers_dlssd_vk.h"

#include "check.h"

static const char *g_program = "nvidia-sdk-rr";
#define OPENNGX_CAPI_NGX_TYPES /* vk_app.h takes NVSDK_NGX_Resource_VK from NVIDIA's header */
#include "vk_app.h"
#include "rr_fixture.h"

#define SKIP 77

static int g_init_logged;

static void NVSDK_CONV on_log(const char *message, NVSDK_NGX_Logging_Level level, NVSDK_NGX_Feature source) {
    (void)level;
    (void)source;
    if (message && strstr(message, "NVSDK_NGX_VULKAN_Init_Ext2: initialised")) g_init_logged = 1;
}

/* Where a guide of the fixture goes in NVIDIA's evaluation parameters. */
static NVSDK_NGX_Resource_VK **eval_slot(NVSDK_NGX_VK_DLSSD_Eval_Params *e, const char *key) {
    if (strcmp(key, "Depth") == 0) return &e->pInDepth;
    if (strcmp(key, "MotionVectors") == 0) return &e->pInMotionVectors;
    if (strcmp(key, "DLSS.Input.DiffuseAlbedo") == 0) return &e->pInDiffuseAlbedo;
    if (strcmp(key, "DLSS.Input.SpecularAlbedo") == 0) return &e->pInSpecularAlbedo;
    if (strcmp(key, "GBuffer.Normals") == 0) return &e->pInNormals;
    if (strcmp(key, "GBuffer.Roughness") == 0) return &e->pInRoughness;
    if (strcmp(key, "DLSSD.DiffuseHitDistance") == 0) return &e->pInDiffuseHitDistance;
    if (strcmp(key, "DLSSD.SpecularHitDistance") == 0) return &e->pInSpecularHitDistance;
    if (strcmp(key, "DLSSD.DepthOfFieldGuide") == 0) return &e->pInDepthOfFieldGuide;
    return NULL;
}

typedef struct {
    NVSDK_NGX_Parameter *params;
    NVSDK_NGX_Handle *handle;
} Client;

/* Frame `index` through NVIDIA's helpers: the feature created on frame 0, then evaluated. */
static int record_nvidia(VkCommandBuffer cmd, RrFixture *fx, int index, void *user) {
    Client *c = static_cast<Client *>(user);
    const RrFrame *fr = &fx->frames[index];
    NVSDK_NGX_VK_DLSSD_Eval_Params e;
    int g;
    if (index == 0) {
        NVSDK_NGX_DLSSD_Create_Params cp;
        memset(&cp, 0, sizeof cp);
        cp.InDenoiseMode = NVSDK_NGX_DLSS_Denoise_Mode_DLUnified;
        cp.InRoughnessMode = NVSDK_NGX_DLSS_Roughness_Mode_Unpacked;
        cp.InUseHWDepth = NVSDK_NGX_DLSS_Depth_Type_Linear;
        cp.InWidth = fx->rw;
        cp.InHeight = fx->rh;
        cp.InTargetWidth = fx->ow;
        cp.InTargetHeight = fx->oh;
        cp.InPerfQualityValue = NVSDK_NGX_PerfQuality_Value_DLAA;
        cp.InFeatureCreateFlags = fx->create_flags;
        NVSDK_NGX_Parameter_SetUI(c->params, NVSDK_NGX_Parameter_RayReconstruction_Hint_Render_Preset_DLAA,
                                  fx->preset_e ? NVSDK_NGX_RayReconstruction_Hint_Render_Preset_E
                                               : NVSDK_NGX_RayReconstruction_Hint_Render_Preset_D);
        CHECK_CODE(NGX_VULKAN_CREATE_DLSSD_EXT1(g_device, cmd, 1, 1, &c->handle, c->params, &cp), NVSDK_NGX_Result_Success);
    }
    if (!c->handle) return 0;
    memset(&e, 0, sizeof e);
    e.pInColor = &fx->color.img.resource;
    e.pInOutput = &fx->output.resource;
    for (g = 0; g < fx->nguides; g++) *eval_slot(&e, fx->guides[g].key) = &fx->guides[g].img.resource;
    e.InJitterOffsetX = fr->jitter[0];
    e.InJitterOffsetY = fr->jitter[1];
    e.InRenderSubrectDimensions.Width = fx->rw;
    e.InRenderSubrectDimensions.Height = fx->rh;
    e.InReset = fr->reset;
    e.InMVScaleX = fr->mv_scale[0];
    e.InMVScaleY = fr->mv_scale[1];
    e.InPreExposure = fr->pre_exposure;
    e.InExposureScale = fr->exposure_scale;
    CHECK_CODE(NGX_VULKAN_EVALUATE_DLSSD_EXT(cmd, c->handle, c->params, &e), NVSDK_NGX_Result_Success);
    return g_failures == 0;
}

int main(int argc, char **argv) {
    static RrFixture fx;
    Client client = {NULL, NULL};
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    NVSDK_NGX_FeatureCommonInfo info;
    NVSDK_NGX_FeatureDiscoveryInfo discovery;
    NVSDK_NGX_FeatureRequirement req;
    NVSDK_NGX_VK_DLSSD_Eval_Params probe;
    NVSDK_NGX_Parameter *caps = NULL;
    int available = 0, g, i, exact = 0;

    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR   (model directory from $OPENNGX_RR_MODEL_DIR)\n", argv[0]);
        return 2;
    }
    if (!rr_fixture_load(&fx, argv[1])) return 2;
    for (g = 0; g < fx.nguides; g++) {
        if (!eval_slot(&probe, fx.guides[g].key)) {
            fprintf(stderr, "%s: guide %s has no place in NVSDK_NGX_VK_DLSSD_Eval_Params here\n", g_program, fx.guides[g].key);
            return 2;
        }
    }
    if (!make_device()) {
        printf("%s: SKIP (no Vulkan device that can run the exact route)\n", g_program);
        return SKIP;
    }
    CHECK_CODE(make_command_buffer(&pool, &cmd), VK_SUCCESS);
    CHECK_TRUE(rr_targets_make(&fx, VK_FORMAT_D32_SFLOAT));
    if (g_failures) return check_finish(g_program);

    memset(&info, 0, sizeof info);
    info.LoggingInfo.LoggingCallback = on_log;
    info.LoggingInfo.MinimumLoggingLevel = NVSDK_NGX_LOGGING_LEVEL_VERBOSE;
    CHECK_CODE(NVSDK_NGX_VULKAN_Init(0x5EED, L"/tmp", g_instance, g_pd, g_device, vkGetInstanceProcAddr, vkGetDeviceProcAddr,
                                     &info, NVSDK_NGX_Version_API),
               NVSDK_NGX_Result_Success);
    CHECK_TRUE(g_init_logged);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetCapabilityParameters(&caps), NVSDK_NGX_Result_Success);
    if (caps)
        CHECK_CODE(NVSDK_NGX_Parameter_GetI(caps, NVSDK_NGX_Parameter_SuperSamplingDenoising_Available, &available),
                   NVSDK_NGX_Result_Success);
    CHECK_TRUE(available == 1);
    memset(&discovery, 0, sizeof discovery);
    discovery.SDKVersion = NVSDK_NGX_Version_API;
    discovery.FeatureID = NVSDK_NGX_Feature_RayReconstruction;
    discovery.Identifier.v.ApplicationId = 0x5EED;
    discovery.ApplicationDataPath = L"/tmp";
    discovery.FeatureInfo = &info;
    memset(&req, 0, sizeof req);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetFeatureRequirements(g_instance, g_pd, &discovery, &req), NVSDK_NGX_Result_Success);
    CHECK_TRUE(req.FeatureSupported == NVSDK_NGX_FeatureSupportResult_Supported);
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&client.params), NVSDK_NGX_Result_Success);
    if (g_failures) return check_finish(g_program);

    for (i = 0; i < fx.nframes && g_failures == 0; i++) exact += rr_replay_frame(argv[1], &fx, i, cmd, record_nvidia, &client);

    if (client.handle) CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(client.handle), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(client.params), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(caps), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(g_device), NVSDK_NGX_Result_Success);

    vkDeviceWaitIdle(g_device);
    rr_targets_free(&fx);
    vkDestroyCommandPool(g_device, pool, NULL);
    destroy_device();
    CHECK_TRUE(exact == fx.nframes);
    CHECK_TRUE(g_validation_errors == 0);
    printf("%s: %d of %d RR frame(s) (%ux%u -> %ux%u, depth D32_SFLOAT) bit-exact through NVIDIA's static library, its "
           "DLSSD helpers and the openngx Core, %d validation error(s)\n",
           g_program, exact, fx.nframes, fx.rw, fx.rh, fx.ow, fx.oh, g_validation_errors);
    return check_finish(g_program);
}
