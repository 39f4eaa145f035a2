/* An application built the way shipped games are: against NVIDIA's own NGX headers and linked
 * with NVIDIA's static library libnvsdk_ngx.a, nothing of openngx in the binary. The static
 * library finds the NGX Core as `libnvidia-ngx.so.1` on the library search path, where
 * nvidia-sdk.sh puts openngx's Core. NVIDIA's files are not part of this repository: the
 * headers and the library come from the SDK directory given to nvidia-sdk.sh at build time.
 *
 *   nvidia-sdk-client FIXTURE_DIR      (model from $OPENNGX_MODEL_DIR)
 *
 * The application's calls, twice: GetFeatureDeviceExtensionRequirements (the first time
 * only), Init (with a log callback), GetCapabilityParameters (DLSSNR.Available),
 * AllocateParameters, CreateFeature1 of feature 18 on frame 0, EvaluateFeature_C (with a C
 * progress callback, which the static library hands to the Core through its trampoline) on
 * every frame of the fixture, each frame compared bit for bit, ReleaseFeature,
 * DestroyParameters, Shutdown1; the second time frame 0 only. Exit status: number of failed
 * checks (capped at 100); 77 = skipped (no Vulkan device). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>

#include "nvsdk_ngx_vk.h"

#include "check.h"

static const char *g_program = "nvidia-sdk";
#define OPENNGX_CAPI_NGX_TYPES /* vk_app.h takes NVSDK_NGX_Resource_VK from NVIDIA's header */
#include "vk_app.h"
#include "fixture.h"

#define SKIP 77
/* Feature 18 (DLSS-NR) has no name in the 310.1 headers. */
#define FEATURE_NR ((NVSDK_NGX_Feature)18)

static int g_log_lines, g_init_logged, g_progress_calls;

static void NVSDK_CONV on_log(const char *message, NVSDK_NGX_Logging_Level level, NVSDK_NGX_Feature source) {
    (void)level;
    (void)source;
    g_log_lines++;
    if (message && strstr(message, "NVSDK_NGX_VULKAN_Init_Ext2: initialised")) g_init_logged = 1;
}

static void NVSDK_CONV on_progress(float progress, bool *should_cancel) {
    (void)progress;
    (void)should_cancel;
    g_progress_calls++;
}

typedef struct {
    NVSDK_NGX_Parameter *create, *eval;
    NVSDK_NGX_Handle *nr;
} App;

static int record_ngx(VkCommandBuffer cmd, int index, const Frame *f, void *user) {
    App *a = (App *)user;
    if (index == 0) {
        CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(g_device, cmd, FEATURE_NR, a->create, &a->nr), NVSDK_NGX_Result_Success);
        if (!a->nr) return 0;
    }
    set_frame_params(a->eval, f, NVSDK_NGX_Parameter_SetUI, NVSDK_NGX_Parameter_SetF);
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, a->nr, a->eval, on_progress), NVSDK_NGX_Result_Success);
    return g_failures == 0;
}

static int core_mapped(void) {
    void *h = dlopen("libnvidia-ngx.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != NULL;
}

/* One life of the application's NGX use: Init ... Shutdown1, replaying `frames` frames. With
 * `query_first` the device extension query comes before Init, the order the static library was
 * measured in. Returns the frames that were bit-exact. */
static int life(const char *dir, const Fixture *fx, VkCommandBuffer cmd, ReplayTargets *t, int query_first, int frames) {
    App a;
    NVSDK_NGX_FeatureCommonInfo info;
    NVSDK_NGX_FeatureDiscoveryInfo discovery;
    NVSDK_NGX_Parameter *caps = NULL;
    VkExtensionProperties *exts = NULL;
    uint32_t next = 0;
    int available = 0, i, ok_frames = 0;
    memset(&a, 0, sizeof a);
    memset(&info, 0, sizeof info);
    info.LoggingInfo.LoggingCallback = on_log;
    info.LoggingInfo.MinimumLoggingLevel = NVSDK_NGX_LOGGING_LEVEL_VERBOSE;
    memset(&discovery, 0, sizeof discovery);
    discovery.SDKVersion = NVSDK_NGX_Version_API;
    discovery.FeatureID = FEATURE_NR;
    discovery.Identifier.v.ApplicationId = 0x5EED;
    discovery.ApplicationDataPath = L"/tmp";
    discovery.FeatureInfo = &info;
    g_init_logged = 0;

    if (query_first) {
        CHECK_CODE(NVSDK_NGX_VULKAN_GetFeatureDeviceExtensionRequirements(g_instance, g_pd, &discovery, &next, &exts),
                   NVSDK_NGX_Result_Success);
        printf("nvidia-sdk: device extensions for feature 18: %u\n", next);
    }
    CHECK_CODE(NVSDK_NGX_VULKAN_Init(0x5EED, L"/tmp", g_instance, g_pd, g_device, vkGetInstanceProcAddr, vkGetDeviceProcAddr,
                                     &info, NVSDK_NGX_Version_API),
               NVSDK_NGX_Result_Success);
    /* The Core logged its Init through the application's callback: the static library chose
     * Init_Ext2 and the feature info arrived after the version. */
    CHECK_TRUE(g_init_logged);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetCapabilityParameters(&caps), NVSDK_NGX_Result_Success);
    if (caps) CHECK_CODE(NVSDK_NGX_Parameter_GetI(caps, "DLSSNR.Available", &available), NVSDK_NGX_Result_Success);
    CHECK_TRUE(available == 1);
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&a.create), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&a.eval), NVSDK_NGX_Result_Success);
    if (g_failures) return 0;
    NVSDK_NGX_Parameter_SetUI(a.create, "DLSSNR.Width", fx->w);
    NVSDK_NGX_Parameter_SetUI(a.create, "DLSSNR.Height", fx->h);
    NVSDK_NGX_Parameter_SetVoidPointer(a.eval, "DLSSNR.Color", &t->color.resource);
    NVSDK_NGX_Parameter_SetVoidPointer(a.eval, "DLSSNR.Output", &t->output.resource);
    NVSDK_NGX_Parameter_SetVoidPointer(a.eval, "DLSSNR.MVec", &t->motion.resource);

    for (i = 0; i < frames && g_failures == 0; i++) ok_frames += replay_frame(dir, fx, i, cmd, t, record_ngx, &a);
    CHECK_TRUE(g_progress_calls == 0);

    if (a.nr) CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(a.nr), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(a.create), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(a.eval), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(caps), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(g_device), NVSDK_NGX_Result_Success);
    return ok_frames;
}

int main(int argc, char **argv) {
    Fixture fx;
    ReplayTargets t;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    int first, second;

    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR   (model directory from $OPENNGX_MODEL_DIR)\n", argv[0]);
        return 2;
    }
    if (!fixture_load(&fx, argv[1])) return 2;
    if (fx.tensor) {
        printf("nvidia-sdk: SKIP (the fixture is in h25; this client runs the exact route)\n");
        return SKIP;
    }
    if (!make_device()) {
        printf("nvidia-sdk: SKIP (no Vulkan device that can run the exact route)\n");
        return SKIP;
    }
    CHECK_CODE(make_command_buffer(&pool, &cmd), VK_SUCCESS);
    CHECK_TRUE(replay_targets_make(&t, fx.w, fx.h));
    if (g_failures) return check_finish("nvidia-sdk");

    /* First life, in the order the static library was measured in: the device extension query
     * (which makes the static library load the Core before Init), Init, ... every frame. After
     * Shutdown1 reports nothing left, the 310.1 static library clears its Core function pointers
     * and closes the libvulkan.so.1 it opened, but keeps the Core mapped (it never dlcloses the
     * handle it loaded the Core with); so that is reported here, not checked (core.c checks
     * that the Core can be unloaded). */
    first = life(argv[1], &fx, cmd, &t, 1, fx.nframes);
    printf("nvidia-sdk: first life (query, then Init): %d of %d frame(s) bit-exact; after Shutdown1 the Core is %s\n",
           first, fx.nframes, core_mapped() ? "still mapped (the static library keeps it)" : "unloaded");
    /* Second life: Init again. The static library starts over with the Core, whose state the
     * last Shutdown1 emptied; frame 0 of a new feature must again be the fixture's frame 0. */
    second = life(argv[1], &fx, cmd, &t, 0, 1);
    printf("nvidia-sdk: second life (Init again): %d of 1 frame(s) bit-exact\n", second);
    CHECK_TRUE(first == fx.nframes && second == 1);

    vkDeviceWaitIdle(g_device);
    replay_targets_free(&t);
    vkDestroyCommandPool(g_device, pool, NULL);
    destroy_device();
    CHECK_TRUE(g_validation_errors == 0);
    printf("nvidia-sdk: %d of %d frame(s) bit-exact through NVIDIA's static library and the openngx Core, "
           "%d log line(s), %d validation error(s)\n",
           first + second, fx.nframes + 1, g_log_lines, g_validation_errors);
    fixture_free(&fx);
    return check_finish("nvidia-sdk");
}
