/* Captured-frame replay: drives feature 18 through the public C ABI (include/openngx.h) on a
 * Vulkan device this program creates itself (lavapipe in CI), over every frame of a fixture
 * directory written by `openngx reference`, and compares the RGBA16F output bit for bit with
 * the fixture's expected halves, frame by frame (the feature's own temporal history included).
 *
 *   replay FIXTURE_DIR          (the model directory comes from $OPENNGX_MODEL_DIR)
 *
 * Per frame: the proxy (RGBA f32) is uploaded into an RGBA32F image and the motion (RG f32) into
 * an RG32F image, both left in SHADER_READ_ONLY_OPTIMAL; the output is an RGBA16F storage image
 * in GENERAL (the layouts docs/ngx.md states). Frame 0 records CreateFeature1 and the first
 * EvaluateFeature into one command buffer; every frame is submitted and waited for, then the
 * output is read back. After the last frame: ReleaseFeature, a second release and an evaluate on
 * the dead handle (both FAIL_FeatureNotFound), Shutdown1.
 *
 * With VK_LAYER_KHRONOS_validation installed the program enables it and counts every validation
 * error as a failure. Exit status: number of failed checks (capped at 100); 77 = skipped (no
 * Vulkan device able to run the exact route). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>

#include "check.h"
#include "openngx.h"

static const char *g_program = "replay";
#include "vk_app.h"
#include "fixture.h"

#define SKIP 77

typedef struct {
    NVSDK_NGX_Parameter *create, *eval;
    NVSDK_NGX_Handle *nr;
    int tensor;
} Replay;

/* Frame 0 records CreateFeature1 before the first evaluation, into the same command buffer. */
static int record_ngx(VkCommandBuffer cmd, int index, const Frame *f, void *user) {
    Replay *r = (Replay *)user;
    if (index == 0) {
        unsigned int active = 0;
        CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(g_device, cmd, NVSDK_NGX_Feature_Reserved18, r->create, &r->nr),
                   NVSDK_NGX_Result_Success);
        NVSDK_NGX_Parameter_GetUI(r->create, "OpenNGX.ActiveRoute", &active);
        printf("replay: route %s\n", active == 2 ? "tensor (h25)" : "exact (f13)");
        CHECK_TRUE(active == (r->tensor ? 2u : 1u));
    }
    set_frame_params(r->eval, f, NVSDK_NGX_Parameter_SetUI, NVSDK_NGX_Parameter_SetF);
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, r->nr, r->eval, NULL), NVSDK_NGX_Result_Success);
    return g_failures == 0;
}

int main(int argc, char **argv) {
    const char *dir;
    Fixture fx;
    int i, ok_frames = 0;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    ReplayTargets t;
    Replay r;

    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR   (model directory from $OPENNGX_MODEL_DIR)\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    if (!fixture_load(&fx, dir)) return 2;
    printf("replay: %s: %ux%u, %d frame(s)\n", dir, fx.w, fx.h, fx.nframes);
    memset(&r, 0, sizeof r);
    /* A fixture made in h25 is the tensor route's reference: the device gets the tensor route's
     * features, the creation asks for the route and states them (docs/ngx.md "Route choice"). */
    r.tensor = fx.tensor;
    if (!make_device_with(r.tensor)) {
        printf("replay: SKIP (no Vulkan device that can run the exact route)\n");
        return SKIP;
    }
    if (r.tensor && !g_tensor_features) {
        printf("replay: SKIP (the fixture is in h25, the tensor route's profile, and this device has no cooperative matrices)\n");
        return SKIP;
    }
    CHECK_CODE(make_command_buffer(&pool, &cmd), VK_SUCCESS);
    CHECK_TRUE(replay_targets_make(&t, fx.w, fx.h));
    if (g_failures) return check_finish("replay");

    CHECK_CODE(NVSDK_NGX_VULKAN_Init(0x5EED, L"/tmp", g_instance, g_pd, g_device, vkGetInstanceProcAddr, vkGetDeviceProcAddr,
                                     NULL, NVSDK_NGX_Version_API),
               NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&r.create), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&r.eval), NVSDK_NGX_Result_Success);
    NVSDK_NGX_Parameter_SetUI(r.create, "DLSSNR.Width", fx.w);
    NVSDK_NGX_Parameter_SetUI(r.create, "DLSSNR.Height", fx.h);
    NVSDK_NGX_Parameter_SetUI(r.create, "OpenNGX.Route", r.tensor ? 2u : 1u);
    NVSDK_NGX_Parameter_SetUI(r.create, "OpenNGX.TensorFeaturesEnabled", r.tensor ? 1u : 0u);
    NVSDK_NGX_Parameter_SetVoidPointer(r.eval, "DLSSNR.Color", &t.color.resource);
    NVSDK_NGX_Parameter_SetVoidPointer(r.eval, "DLSSNR.Output", &t.output.resource);
    NVSDK_NGX_Parameter_SetVoidPointer(r.eval, "DLSSNR.MVec", &t.motion.resource);

    for (i = 0; i < fx.nframes && g_failures == 0; i++) ok_frames += replay_frame(dir, &fx, i, cmd, &t, record_ngx, &r);

    /* Misuse on a real handle: a second release and an evaluate after release. */
    if (r.nr) {
        VkCommandBufferBeginInfo bi;
        memset(&bi, 0, sizeof bi);
        bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
        CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(r.nr), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(r.nr), NVSDK_NGX_Result_FAIL_FeatureNotFound);
        CHECK_CODE(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
        CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, r.nr, r.eval, NULL), NVSDK_NGX_Result_FAIL_FeatureNotFound);
        CHECK_CODE(vkEndCommandBuffer(cmd), VK_SUCCESS);
    }
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(r.create), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(r.eval), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(g_device), NVSDK_NGX_Result_Success);

    vkDeviceWaitIdle(g_device);
    replay_targets_free(&t);
    vkDestroyCommandPool(g_device, pool, NULL);
    destroy_device();
    CHECK_TRUE(g_validation_errors == 0);
    printf("replay: %d of %d frame(s) bit-exact, %d validation error(s)\n", ok_frames, fx.nframes, g_validation_errors);
    fixture_free(&fx);
    return check_finish("replay");
}
