/* Ray Reconstruction (feature 13) through the NGX Core the way an unmodified game reaches it:
 * NVIDIA's static library loads openngx's Core as libnvidia-ngx.so.1 and forwards the game's
 * calls, so this program plays the static library (core_abi.h: dlopen by name, every symbol
 * resolved, parameter values through the object's vtable, the preset rewrite before
 * CreateFeature) while doing what a game's NGX_VULKAN_CREATE_DLSSD_EXT1 and
 * NGX_VULKAN_EVALUATE_DLSSD_EXT calls ask of it (the keys those helpers write, with the setter
 * types they use: docs/rr.md "Creation", "Evaluation"). Nothing of libopenngx.so is linked.
 *
 *   core-rr FIXTURE_DIR   (an `openngx reference --feature rr` fixture, run.sh writes one:
 *                          3 frames 64x48 -> 96x72; the model from $OPENNGX_RR_MODEL_DIR)
 *
 * Init_Ext2 -> SuperSamplingDenoising.Available = 1 -> GetFeatureRequirements(13) supported ->
 * CreateFeature1(13) on frame 0 -> EvaluateFeature on every frame with the fixture's colour and
 * guides as caller images (float formats, the depth in D32_SFLOAT read through its depth aspect,
 * as a renderer's depth buffer) and scalars -> each Output read back and compared byte for byte
 * with the fixture's output.bin -> ReleaseFeature -> Shutdown1 with nothing left -> dlclose
 * unmaps the Core. Checks that it fails when it should: on frame 0 an evaluation without the
 * required Depth answers FAIL_MissingInput (and the log names the key), one whose depth claims
 * R8G8_UNORM FAIL_UnsupportedInputFormat, and both leave the feature as they found it (the
 * frame then evaluated is still bit-exact); frame 1's Output differs from frame
 * 0's expected bytes (the comparison sees a wrong frame); the released handle is not found.
 * With the validation layer (synchronization validation too) an error fails the program.
 * Exit status: number of failed checks (capped at 100); 77 = skipped (no Vulkan device). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>

#include "check.h"
#include "openngx.h" /* types only: nothing here links against libopenngx.so */

static const char *g_program = "core-rr";
#include "vk_app.h"
#include "rr_fixture.h"
#include "core_abi.h"

#define SKIP 77

typedef struct {
    Core *core;
    NVSDK_NGX_Parameter *create, *eval;
    NVSDK_NGX_Handle *rr;
} RrLife;

/* What NGX_VULKAN_CREATE_DLSSD_EXT1 writes (node masks 1, DLAA, the fixture's flags, unpacked
 * roughness, linear depth) and the application's preset hint; then the static library's preset
 * rewrite, which keeps a hint the application set. */
static void set_create(NVSDK_NGX_Parameter *p, const RrFixture *fx) {
    vt_set_ui(p, "CreationNodeMask", 1u);
    vt_set_ui(p, "VisibilityNodeMask", 1u);
    vt_set_ui(p, "Width", fx->rw);
    vt_set_ui(p, "Height", fx->rh);
    vt_set_ui(p, "OutWidth", fx->ow);
    vt_set_ui(p, "OutHeight", fx->oh);
    vt_set_i(p, "PerfQualityValue", NVSDK_NGX_PerfQuality_Value_DLAA);
    vt_set_i(p, "DLSS.Feature.Create.Flags", fx->create_flags);
    vt_set_i(p, "DLSS.Enable.Output.Subrects", 0);
    vt_set_i(p, "DLSS.Denoise.Mode", NVSDK_NGX_DLSS_Denoise_Mode_DLUnified);
    vt_set_ui(p, "DLSS.Roughness.Mode", NVSDK_NGX_DLSS_Roughness_Mode_Unpacked);
    vt_set_ui(p, "DLSS.Use.HW.Depth", NVSDK_NGX_DLSS_Depth_Type_Linear);
    vt_set_ui(p, "RayReconstruction.Hint.Render.Preset.DLAA",
              fx->preset_e ? NVSDK_NGX_RayReconstruction_Hint_Render_Preset_E : NVSDK_NGX_RayReconstruction_Hint_Render_Preset_D);
    rewrite_presets(p);
}

/* What NGX_VULKAN_EVALUATE_DLSSD_EXT writes for frame `fr`: NULL for every resource the
 * application left out, the fixture's images under their keys, the scalars. */
static void set_eval(NVSDK_NGX_Parameter *p, RrFixture *fx, const RrFrame *fr) {
    static const char *const absent[] = {"TransparencyMask",  "ExposureTexture",     "DLSS.Input.Bias.Current.Color.Mask",
                                         "GBuffer.Albedo",    "GBuffer.Metallic",    "GBuffer.Specular",
                                         "GBuffer.Subsurface", "GBuffer.Emissive",   "GBuffer.SpecularMvec",
                                         "MotionVectors3D",   "IsParticleMask",      "AnimatedTextureMask",
                                         "DepthHighRes",      "Position.ViewSpace",  "RayTracingHitDistance",
                                         "DLSSD.DepthOfFieldGuide"};
    static const char *const bases[] = {"DLSS.Input.Color.Subrect.Base", "DLSS.Input.Depth.Subrect.Base",
                                        "DLSS.Input.MV.Subrect.Base", "DLSS.Output.Subrect.Base"};
    char key[96];
    size_t i;
    int g;
    for (i = 0; i < sizeof absent / sizeof absent[0]; i++) vt_set_vp(p, absent[i], NULL);
    vt_set_vp(p, "Color", &fx->color.img.resource);
    vt_set_vp(p, "Output", &fx->output.resource);
    for (g = 0; g < fx->nguides; g++) vt_set_vp(p, fx->guides[g].key, &fx->guides[g].img.resource);
    vt_set_f(p, "Jitter.Offset.X", fr->jitter[0]);
    vt_set_f(p, "Jitter.Offset.Y", fr->jitter[1]);
    vt_set_i(p, "Reset", fr->reset);
    vt_set_f(p, "MV.Scale.X", fr->mv_scale[0] == 0.0f ? 1.0f : fr->mv_scale[0]);
    vt_set_f(p, "MV.Scale.Y", fr->mv_scale[1] == 0.0f ? 1.0f : fr->mv_scale[1]);
    vt_set_ui(p, "TonemapperType", 0u);
    vt_set_f(p, "FrameTimeDeltaInMsec", 0.0f);
    for (i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        snprintf(key, sizeof key, "%s.X", bases[i]);
        vt_set_ui(p, key, 0u);
        snprintf(key, sizeof key, "%s.Y", bases[i]);
        vt_set_ui(p, key, 0u);
    }
    vt_set_ui(p, "DLSS.Render.Subrect.Dimensions.Width", fx->rw);
    vt_set_ui(p, "DLSS.Render.Subrect.Dimensions.Height", fx->rh);
    vt_set_f(p, "DLSS.Pre.Exposure", fr->pre_exposure == 0.0f ? 1.0f : fr->pre_exposure);
    vt_set_f(p, "DLSS.Exposure.Scale", fr->exposure_scale == 0.0f ? 1.0f : fr->exposure_scale);
    vt_set_i(p, "DLSS.Indicator.Invert.X.Axis", 0);
    vt_set_i(p, "DLSS.Indicator.Invert.Y.Axis", 0);
}

/* Frame `index`'s Core calls: on frame 0 the creation and a refused evaluation without Depth,
 * then the frame's evaluation. The C helper passes no progress callback, so the static
 * library forwards none. */
static int record_rr(VkCommandBuffer cmd, RrFixture *fx, int index, void *user) {
    RrLife *l = (RrLife *)user;
    if (index == 0 && !l->rr) {
        set_create(l->create, fx);
        CHECK_CODE(l->core->CreateFeature1(g_device, cmd, NVSDK_NGX_Feature_RayReconstruction, l->create, &l->rr),
                   NVSDK_NGX_Result_Success);
        if (!l->rr) return 0;
        set_eval(l->eval, fx, &fx->frames[0]);
        vt_set_vp(l->eval, "Depth", NULL);
        g_log_lines = 0;
        CHECK_CODE(l->core->EvaluateFeature(cmd, l->rr, l->eval, NULL), NVSDK_NGX_Result_FAIL_MissingInput);
        CHECK_TRUE(logged("missing required input", "Depth"));
        /* A depth resource claiming a format the import does not read (R8G8_UNORM: not a depth
         * format of the table) is refused before anything is recorded. */
        {
            RrInput *depth = rr_guide(fx, "Depth");
            NVSDK_NGX_Resource_VK wrong = depth->img.resource;
            wrong.Resource.ImageViewInfo.Format = VK_FORMAT_R8G8_UNORM;
            vt_set_vp(l->eval, "Depth", &wrong);
            CHECK_CODE(l->core->EvaluateFeature(cmd, l->rr, l->eval, NULL), NVSDK_NGX_Result_FAIL_UnsupportedInputFormat);
        }
    }
    set_eval(l->eval, fx, &fx->frames[index]);
    CHECK_CODE(l->core->EvaluateFeature(cmd, l->rr, l->eval, NULL), NVSDK_NGX_Result_Success);
    return g_failures == 0;
}

int main(int argc, char **argv) {
    static RrFixture fx;
    Core core;
    RrLife life;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    NVSDK_NGX_FeatureCommonInfo info;
    NVSDK_NGX_FeatureDiscoveryInfo discovery;
    NVSDK_NGX_FeatureRequirement req;
    NVSDK_NGX_Parameter *caps = NULL;
    unsigned int left = 99;
    int available = 0, i, exact = 0;
    double t0 = now_s();

    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR   (model directory from $OPENNGX_RR_MODEL_DIR)\n", argv[0]);
        return 2;
    }
    if (!rr_fixture_load(&fx, argv[1])) return 2;
    if (fx.nframes < 2 || !rr_guide(&fx, "Depth")) {
        fprintf(stderr, "%s: %s: needs at least 2 frames and a Depth guide\n", g_program, argv[1]);
        return 2;
    }
    if (!core_open(&core)) return check_finish(g_program);
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
    CHECK_CODE(core.Init_Ext2(0x5EED, L"/tmp", g_instance, g_pd, g_device, vkGetInstanceProcAddr, vkGetDeviceProcAddr,
                              NVSDK_NGX_Version_API, &info),
               NVSDK_NGX_Result_Success);
    CHECK_CODE(core.GetCapabilityParameters(&caps), NVSDK_NGX_Result_Success);
    if (caps) CHECK_CODE(vt_get_i(caps, "SuperSamplingDenoising.Available", &available), NVSDK_NGX_Result_Success);
    CHECK_TRUE(available == 1);
    memset(&discovery, 0, sizeof discovery);
    discovery.SDKVersion = NVSDK_NGX_Version_API;
    discovery.FeatureID = NVSDK_NGX_Feature_RayReconstruction;
    discovery.Identifier.v.ApplicationId = 0x5EED;
    discovery.ApplicationDataPath = L"/tmp";
    discovery.FeatureInfo = &info;
    memset(&req, 0xAB, sizeof req);
    CHECK_CODE(core.GetFeatureRequirements(g_instance, g_pd, &discovery, &req), NVSDK_NGX_Result_Success);
    CHECK_TRUE(req.FeatureSupported == NVSDK_NGX_FeatureSupportResult_Supported);
    memset(&life, 0, sizeof life);
    life.core = &core;
    CHECK_CODE(core.AllocateParameters(&life.create), NVSDK_NGX_Result_Success);
    CHECK_CODE(core.AllocateParameters(&life.eval), NVSDK_NGX_Result_Success);
    if (g_failures) return check_finish(g_program);

    for (i = 0; i < fx.nframes && g_failures == 0; i++) {
        exact += rr_replay_frame(argv[1], &fx, i, cmd, record_rr, &life);
        if (i == 1 && g_failures == 0) {
            /* The comparison catches a wrong frame: frame 1's Output is not frame 0's. */
            unsigned char *frame0 = rr_expected(argv[1], &fx, 0);
            size_t differ = frame0 ? rr_differing_halves(fx.readback.mapped, frame0, (size_t)fx.ow * fx.oh * 4) : 0;
            printf("frame 1 against frame 0's expected Output: %zu halves differ (must be > 0)\n", differ);
            CHECK_TRUE(differ > 0);
            free(frame0);
        }
    }

    if (life.rr) {
        CHECK_CODE(core.ReleaseFeature(life.rr), NVSDK_NGX_Result_Success);
        CHECK_CODE(core.ReleaseFeature(life.rr), NVSDK_NGX_Result_FAIL_FeatureNotFound);
    }
    CHECK_CODE(core.DestroyParameters(life.create), NVSDK_NGX_Result_Success);
    CHECK_CODE(core.DestroyParameters(life.eval), NVSDK_NGX_Result_Success);
    if (caps) CHECK_CODE(core.DestroyParameters(caps), NVSDK_NGX_Result_Success);
    CHECK_CODE(core.Shutdown1(g_device, &left), NVSDK_NGX_Result_Success);
    CHECK_TRUE(left == 0);
    /* Success with 0 left: the static library unloads the Core here. */
    if (left == 0) core_close(&core);

    vkDeviceWaitIdle(g_device);
    rr_targets_free(&fx);
    vkDestroyCommandPool(g_device, pool, NULL);
    destroy_device();
    CHECK_TRUE(exact == fx.nframes);
    CHECK_TRUE(g_validation_errors == 0);
    printf("%s: %d of %d RR frame(s) (%ux%u -> %ux%u, depth D32_SFLOAT) bit-exact through the NGX Core, "
           "%d validation error(s), %.1f s\n",
           g_program, exact, fx.nframes, fx.rw, fx.rh, fx.ow, fx.oh, g_validation_errors, now_s() - t0);
    return check_finish(g_program);
}
