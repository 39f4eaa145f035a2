/* The NGX Core ABI (ngx-abi.md §3.3), driven the way NVIDIA's static library libnvsdk_ngx.a
 * drives it: `dlopen("libnvidia-ngx.so.1", RTLD_NOW)` through the library search path
 * (LD_LIBRARY_PATH points at the Core built by ./x), every Core symbol resolved with dlsym and
 * called with the Core's own signatures, parameter values set and read through the object's
 * vtable (the static library's NVSDK_NGX_Parameter_* are one-instruction vtable calls), the
 * preset hints rewritten to bit-31-tagged defaults before CreateFeature (§3.5), a C++-form
 * progress callback standing in for the static library's trampoline, and the Core unloaded
 * (`dlclose`) only when Shutdown1 reports nothing left, then loaded again.
 *
 *   core FIXTURE_DIR      (model from $OPENNGX_MODEL_DIR; the fixture run.sh makes for replay;
 *                          OPENNGX_CORE_FRAMES frames in the first life, default 1)
 *
 * Checks: the exact symbol set (and that no public-only name is there), codes before and after
 * Init, the call order the real static library was measured to make (device extension query,
 * Init_Ext2 with version 0x15 then the feature info, GetCapabilityParameters,
 * AllocateParameters), the replayed frames bit-exact, Shutdown1's count while devices, a feature
 * and parameter maps are alive, that dlclose really unmaps the Core (RTLD_NOLOAD finds it gone:
 * no thread or TLS destructor of it is left behind), and a second life after a fresh dlopen
 * (state rebuilt from nothing, one more bit-exact frame, the other Init forms, Shutdown).
 * The Core's signatures, its loading and the vtable accessors are core_abi.h's (shared with
 * core_rr.c, feature 13 through the Core).
 * Exit status: number of failed checks (capped at 100); 77 = skipped (no Vulkan device). */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>
#include <wchar.h>

#include "check.h"
#include "openngx.h" /* types only: nothing here links against libopenngx.so */

static const char *g_program = "core";
#include "vk_app.h"
#include "fixture.h"
#include "core_abi.h" /* the Core's signatures, loading, vtable accessors */

#define SKIP 77

/* ------------------------------------------------------------------------------------------ */
/* One life of the Core: frames recorded through the Core's calls */

typedef struct {
    Core *core;
    NVSDK_NGX_Parameter *create, *eval;
    NVSDK_NGX_Handle *nr;
    int use_create1; /* CreateFeature1 (device given) or CreateFeature */
} Life;

static int record_core(VkCommandBuffer cmd, int index, const Frame *f, void *user) {
    Life *l = (Life *)user;
    if (index == 0 && !l->nr) {
        NVSDK_NGX_Handle *other = NULL;
        /* Other features answer as through the public library. */
        CHECK_CODE(l->core->CreateFeature1(g_device, cmd, 1, l->create, &other), NVSDK_NGX_Result_FAIL_FeatureNotSupported);
        CHECK_TRUE(other == NULL);
        rewrite_presets(l->create);
        if (l->use_create1) {
            CHECK_CODE(l->core->CreateFeature1(g_device, cmd, NVSDK_NGX_Feature_Reserved18, l->create, &l->nr),
                       NVSDK_NGX_Result_Success);
        } else {
            CHECK_CODE(l->core->CreateFeature(cmd, NVSDK_NGX_Feature_Reserved18, l->create, &l->nr), NVSDK_NGX_Result_Success);
        }
        if (!l->nr) return 0;
    }
    set_frame_params(l->eval, f, vt_set_ui, vt_set_f);
    CHECK_CODE(l->core->EvaluateFeature(cmd, l->nr, l->eval, trampoline), NVSDK_NGX_Result_Success);
    return g_failures == 0;
}

static void set_images(NVSDK_NGX_Parameter *eval, ReplayTargets *t) {
    vt_set_vp(eval, "DLSSNR.Color", &t->color.resource);
    vt_set_vp(eval, "DLSSNR.Output", &t->output.resource);
    vt_set_vp(eval, "DLSSNR.MVec", &t->motion.resource);
}

/* Fake handles for extra "devices": the Core only stores them at Init. */
#define FAKE(type, n) ((type)(uintptr_t)(0x7000u + (n)))

int main(int argc, char **argv) {
    const char *dir;
    Fixture fx;
    Core core;
    Life life;
    ReplayTargets t;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    NVSDK_NGX_FeatureCommonInfo info;
    NVSDK_NGX_FeatureDiscoveryInfo discovery;
    NVSDK_NGX_FeatureRequirement req;
    NVSDK_NGX_Application_Identifier app;
    NVSDK_NGX_Parameter *caps = NULL, *lib_params = NULL, *p = NULL;
    VkExtensionProperties *exts = NULL;
    uint32_t next = 0;
    unsigned int left = 0;
    size_t scratch = 1;
    int available = 0, i, ok_frames = 0, frames;

    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR   (model directory from $OPENNGX_MODEL_DIR)\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    if (!fixture_load(&fx, dir)) return 2;
    /* The temporal sequence is replay.c's subject; one frame per life proves the Core's path
     * (every frame costs about a minute on lavapipe). */
    frames = getenv("OPENNGX_CORE_FRAMES") ? atoi(getenv("OPENNGX_CORE_FRAMES")) : 1;
    if (frames < 1 || frames > fx.nframes) frames = fx.nframes;
    if (fx.tensor) {
        printf("core: SKIP (the fixture is in h25; the Core is checked on the exact route)\n");
        return SKIP;
    }
    memset(&info, 0, sizeof info);
    info.LoggingInfo.LoggingCallback = on_log;
    info.LoggingInfo.MinimumLoggingLevel = NVSDK_NGX_LOGGING_LEVEL_VERBOSE;
    memset(&discovery, 0, sizeof discovery);
    discovery.SDKVersion = NVSDK_NGX_Version_API;
    discovery.FeatureID = NVSDK_NGX_Feature_Reserved18;
    discovery.ApplicationDataPath = L"/tmp";
    discovery.FeatureInfo = &info;
    memset(&app, 0, sizeof app);
    app.v.ApplicationId = 0x5EED;

    /* --- First life: everything before Init ------------------------------------------------ */
    if (!core_open(&core)) return check_finish("core");
    CHECK_CODE(core.GetParameters(&p), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_CODE(core.AllocateParameters(&p), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_CODE(core.Shutdown1(VK_NULL_HANDLE, &left), NVSDK_NGX_Result_FAIL_NotInitialized);
    CHECK_TRUE(left == 0);
    memset(&req, 0xAB, sizeof req);
    CHECK_CODE(core.GetFeatureRequirements(VK_NULL_HANDLE, VK_NULL_HANDLE, &discovery, &req), NVSDK_NGX_Result_Success);
    CHECK_TRUE(req.FeatureSupported == 0);
    discovery.FeatureID = 1;
    CHECK_CODE(core.GetFeatureRequirements(VK_NULL_HANDLE, VK_NULL_HANDLE, &discovery, &req),
               NVSDK_NGX_Result_FAIL_FeatureNotSupported);
    discovery.FeatureID = NVSDK_NGX_Feature_Reserved18;
    CHECK_CODE(core.GetFeatureInstanceExtensionRequirements(&discovery, &next, &exts), NVSDK_NGX_Result_Success);
    CHECK_TRUE(next == 0 && exts != NULL);

    if (!make_device()) {
        printf("core: SKIP (no Vulkan device that can run the exact route)\n");
        return SKIP;
    }
    CHECK_CODE(make_command_buffer(&pool, &cmd), VK_SUCCESS);
    CHECK_TRUE(replay_targets_make(&t, fx.w, fx.h));
    if (g_failures) return check_finish("core");

    /* The order NVIDIA's 310.1 static library was measured to call the Core in for an
     * application's GetFeatureDeviceExtensionRequirements, Init, GetCapabilityParameters and
     * AllocateParameters. */
    next = 99;
    CHECK_CODE(core.GetFeatureDeviceExtensionRequirements(g_instance, g_pd, &discovery, &next, &exts),
               NVSDK_NGX_Result_Success);
    CHECK_TRUE(next <= 1 && exts != NULL); /* at most VK_KHR_cooperative_matrix */
    CHECK_CODE(core.Init_Ext2(0x5EED, L"/tmp", g_instance, g_pd, g_device, vkGetInstanceProcAddr, vkGetDeviceProcAddr,
                              NVSDK_NGX_Version_API, &info),
               NVSDK_NGX_Result_Success);
    CHECK_TRUE(logged("NVSDK_NGX_VULKAN_Init_Ext2: initialised", "SDK version 0x15"));
    CHECK_CODE(core.GetCapabilityParameters(&caps), NVSDK_NGX_Result_Success);
    CHECK_CODE(vt_get_i(caps, "DLSSNR.Available", &available), NVSDK_NGX_Result_Success);
    CHECK_TRUE(available == 1);
    CHECK_CODE(core.AllocateParameters(&life.create), NVSDK_NGX_Result_Success);
    CHECK_CODE(core.AllocateParameters(&life.eval), NVSDK_NGX_Result_Success);
    CHECK_CODE(core.GetScratchBufferSize(NVSDK_NGX_Feature_Reserved18, life.create, &scratch), NVSDK_NGX_Result_Success);
    CHECK_TRUE(scratch == 0);
    CHECK_CODE(core.UpdateFeature(&app, NVSDK_NGX_Feature_Reserved18), NVSDK_NGX_Result_Success);
    CHECK_CODE(core.UpdateFeature(&app, 1), NVSDK_NGX_Result_FAIL_FeatureNotSupported);
    CHECK_CODE(core.GetParameters(&lib_params), NVSDK_NGX_Result_Success);
    CHECK_CODE(core.DestroyParameters(lib_params), NVSDK_NGX_Result_FAIL_InvalidParameter);

    /* --- The frames ------------------------------------------------------------------------ */
    life.core = &core;
    life.nr = NULL;
    life.use_create1 = 1;
    vt_set_ui(life.create, "DLSSNR.Width", fx.w);
    vt_set_ui(life.create, "DLSSNR.Height", fx.h);
    vt_set_ui(life.create, "OpenNGX.Route", 1u);
    set_images(life.eval, &t);
    for (i = 0; i < frames && g_failures == 0; i++) ok_frames += replay_frame(dir, &fx, i, cmd, &t, record_core, &life);
    CHECK_TRUE(g_progress_calls == 0);

    /* --- Shutdown1's count ----------------------------------------------------------------- */
    /* Three more devices by the other Init forms (fake handles: Init only stores them). */
    CHECK_CODE(core.Init(1, NULL, FAKE(VkInstance, 1), FAKE(VkPhysicalDevice, 1), FAKE(VkDevice, 1), NVSDK_NGX_Version_API),
               NVSDK_NGX_Result_Success);
    CHECK_CODE(core.Init_Ext(1, NULL, FAKE(VkInstance, 2), FAKE(VkPhysicalDevice, 2), FAKE(VkDevice, 2), 0x14, &info),
               NVSDK_NGX_Result_Success);
    CHECK_CODE(core.Init_ProjectID_Ext("a0f57b54-1daf-4934-90ae-c4035c19df04", 0, "1.0", L"/tmp", FAKE(VkInstance, 3),
                                       FAKE(VkPhysicalDevice, 3), FAKE(VkDevice, 3), NULL, NULL, NVSDK_NGX_Version_API, &info),
               NVSDK_NGX_Result_Success);
    CHECK_TRUE(logged("NVSDK_NGX_VULKAN_Init_ProjectID_Ext: initialised", NULL));
    CHECK_CODE(core.Init_ProjectID("", 0, "1.0", NULL, FAKE(VkInstance, 4), FAKE(VkPhysicalDevice, 4), FAKE(VkDevice, 4),
                                   NVSDK_NGX_Version_API, NULL),
               NVSDK_NGX_Result_FAIL_InvalidParameter);
    /* Live now: 4 devices, 1 feature, 3 application maps (caps, create, eval). */
    left = 0;
    CHECK_CODE(core.Shutdown1(FAKE(VkDevice, 1), &left), NVSDK_NGX_Result_Success);
    CHECK_TRUE(left == 3 + 1 + 3);
    CHECK_CODE(core.Shutdown1(FAKE(VkDevice, 2), &left), NVSDK_NGX_Result_Success);
    CHECK_CODE(core.Shutdown1(FAKE(VkDevice, 3), &left), NVSDK_NGX_Result_Success);
    CHECK_TRUE(left == 1 + 1 + 3);
    if (life.nr) {
        VkCommandBufferBeginInfo bi;
        memset(&bi, 0, sizeof bi);
        bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
        CHECK_CODE(core.ReleaseFeature(life.nr), NVSDK_NGX_Result_Success);
        CHECK_CODE(core.ReleaseFeature(life.nr), NVSDK_NGX_Result_FAIL_FeatureNotFound);
        CHECK_CODE(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
        CHECK_CODE(core.EvaluateFeature(cmd, life.nr, life.eval, trampoline), NVSDK_NGX_Result_FAIL_FeatureNotFound);
        CHECK_CODE(vkEndCommandBuffer(cmd), VK_SUCCESS);
        CHECK_CODE(vkResetCommandBuffer(cmd, 0), VK_SUCCESS);
    }
    CHECK_CODE(core.DestroyParameters(caps), NVSDK_NGX_Result_Success);
    CHECK_CODE(core.DestroyParameters(life.create), NVSDK_NGX_Result_Success);
    CHECK_CODE(core.DestroyParameters(life.eval), NVSDK_NGX_Result_Success);
    left = 99;
    CHECK_CODE(core.Shutdown1(g_device, &left), NVSDK_NGX_Result_Success);
    CHECK_TRUE(left == 0);
    /* Success with 0: the static library unloads the Core here. */
    if (left == 0) core_close(&core);
    printf("core: first life: %d of %d frame(s) bit-exact\n", ok_frames, frames);

    /* --- Second life: a fresh dlopen starts from nothing ------------------------------------ */
    if (g_failures == 0 && core_open(&core)) {
        int ok0;
        CHECK_CODE(core.GetParameters(&p), NVSDK_NGX_Result_FAIL_NotInitialized);
        CHECK_CODE(core.Init(0x5EED, L"/tmp", g_instance, g_pd, g_device, NVSDK_NGX_Version_API), NVSDK_NGX_Result_Success);
        CHECK_CODE(core.AllocateParameters(&life.create), NVSDK_NGX_Result_Success);
        CHECK_CODE(core.AllocateParameters(&life.eval), NVSDK_NGX_Result_Success);
        life.nr = NULL;
        life.use_create1 = 0; /* the single-device form this time */
        vt_set_ui(life.create, "DLSSNR.Width", fx.w);
        vt_set_ui(life.create, "DLSSNR.Height", fx.h);
        vt_set_ui(life.create, "OpenNGX.Route", 1u);
        set_images(life.eval, &t);
        ok0 = replay_frame(dir, &fx, 0, cmd, &t, record_core, &life);
        printf("core: second life: frame 0 %s\n", ok0 ? "bit-exact" : "differs");
        if (life.nr) CHECK_CODE(core.ReleaseFeature(life.nr), NVSDK_NGX_Result_Success);
        CHECK_CODE(core.DestroyParameters(life.create), NVSDK_NGX_Result_Success);
        /* A map the application still holds keeps the Core loaded (its vtable is Core code). */
        left = 0;
        CHECK_CODE(core.Shutdown(), NVSDK_NGX_Result_Success);
        CHECK_CODE(core.Shutdown1(VK_NULL_HANDLE, &left), NVSDK_NGX_Result_FAIL_NotInitialized);
        CHECK_TRUE(left == 1);
        /* Maps outlive Shutdown: still usable, and destroyed through the loaded Core. */
        vt_set_ui(life.eval, "DLSSNR.Reset", 1u);
        CHECK_CODE(core.DestroyParameters(life.eval), NVSDK_NGX_Result_Success);
        CHECK_CODE(core.Shutdown1(VK_NULL_HANDLE, &left), NVSDK_NGX_Result_FAIL_NotInitialized);
        CHECK_TRUE(left == 0);
        core_close(&core);
    }

    vkDeviceWaitIdle(g_device);
    replay_targets_free(&t);
    vkDestroyCommandPool(g_device, pool, NULL);
    destroy_device();
    CHECK_TRUE(g_validation_errors == 0);
    printf("core: %d validation error(s)\n", g_validation_errors);
    fixture_free(&fx);
    return check_finish("core");
}
