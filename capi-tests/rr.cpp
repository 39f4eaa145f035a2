// C++17: feature 13 (Ray Reconstruction, DLSS-D) driven the way an application using NVIDIA's
// helper functions drives it (spec ngx-abi.md §7.2 optimal settings and stats, §7.5 create,
// §7.6 evaluate): the same parameter names, each written with the same setter type through the
// parameter object's virtual methods. The helpers here are this test's own code.
//
// Feature 13 has a backend (RR's exact GPU route): the capability map says available without
// touching the device (the handles here are fake), discovery says supported, creation checks
// every parameter (refusals by name) and, with no model directory to be found, refuses before
// the backend touches the device (FAIL_UnableToInitializeFeature); an evaluation of an unknown
// handle has no feature to reach. Creation and evaluation on a real device, compared byte for
// byte with the CPU reference's fixture, are tests/rr_replay.rs (through these C entry points).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "openngx.h"

#include "check.h"

namespace {

const VkInstance kInstance = reinterpret_cast<VkInstance>(std::uintptr_t{0x1000});
const VkPhysicalDevice kPd = reinterpret_cast<VkPhysicalDevice>(std::uintptr_t{0x2000});
const VkDevice kDevice = reinterpret_cast<VkDevice>(std::uintptr_t{0x3000});
const VkCommandBuffer kCmd = reinterpret_cast<VkCommandBuffer>(std::uintptr_t{0x4000});

// The header's NVSDK_NGX_DLSS_Feature_Flags bits and RR enums (ngx-abi.md §6 values).
constexpr int kIsHdr = NVSDK_NGX_DLSS_Feature_Flags_IsHDR;
constexpr int kMvLowRes = NVSDK_NGX_DLSS_Feature_Flags_MVLowRes;
constexpr int kMvJittered = NVSDK_NGX_DLSS_Feature_Flags_MVJittered;
constexpr int kDenoiseDlUnified = NVSDK_NGX_DLSS_Denoise_Mode_DLUnified;
static_assert(kIsHdr == 1 && kMvLowRes == 2 && kMvJittered == 4 && kDenoiseDlUnified == 1, "ngx-abi.md §6");
static_assert(NVSDK_NGX_RayReconstruction_Hint_Render_Preset_D == 4 && NVSDK_NGX_RayReconstruction_Hint_Render_Preset_E == 5,
              "rr-network.md §10");

// What an application fills before creating the feature (the fields of the SDK's DLSSD create
// struct, in our own type).
struct RrCreate {
    unsigned roughness_mode = NVSDK_NGX_DLSS_Roughness_Mode_Unpacked;
    unsigned hw_depth = NVSDK_NGX_DLSS_Depth_Type_Linear;
    unsigned width = 0, height = 0, target_width = 0, target_height = 0;
    int quality = NVSDK_NGX_PerfQuality_Value_DLAA;
    int flags = 0;
    bool output_subrects = false;
};

NVSDK_NGX_Result create_rr(NVSDK_NGX_Parameter *p, const RrCreate &c, NVSDK_NGX_Handle **out) {
    p->Set("CreationNodeMask", 1u);
    p->Set("VisibilityNodeMask", 1u);
    p->Set("Width", c.width);
    p->Set("Height", c.height);
    p->Set("OutWidth", c.target_width);
    p->Set("OutHeight", c.target_height);
    p->Set("PerfQualityValue", c.quality);
    p->Set("DLSS.Feature.Create.Flags", c.flags);
    p->Set("DLSS.Enable.Output.Subrects", c.output_subrects ? 1 : 0);
    p->Set("DLSS.Denoise.Mode", kDenoiseDlUnified);  // the helper's constant, whatever was asked
    p->Set("DLSS.Roughness.Mode", c.roughness_mode);
    p->Set("DLSS.Use.HW.Depth", c.hw_depth);
    return NVSDK_NGX_VULKAN_CreateFeature1(kDevice, kCmd, NVSDK_NGX_Feature_RayReconstruction, p, out);
}

// The resources and scalars of one evaluation (our own type).
struct RrFrame {
    NVSDK_NGX_Resource_VK *color = nullptr, *output = nullptr, *depth = nullptr, *motion = nullptr;
    NVSDK_NGX_Resource_VK *diffuse_albedo = nullptr, *specular_albedo = nullptr;
    NVSDK_NGX_Resource_VK *normals = nullptr, *roughness = nullptr;
    NVSDK_NGX_Resource_VK *diffuse_hit = nullptr, *specular_hit = nullptr;
    float jitter_x = 0, jitter_y = 0, mv_scale_x = 1, mv_scale_y = 1, pre_exposure = 1;
    int reset = 0;
    float *world_to_view = nullptr, *view_to_clip = nullptr;
};

NVSDK_NGX_Result evaluate_rr(NVSDK_NGX_Handle *h, NVSDK_NGX_Parameter *p, const RrFrame &f) {
    auto vp = [](NVSDK_NGX_Resource_VK *r) { return static_cast<void *>(r); };
    p->Set("Color", vp(f.color));
    p->Set("Output", vp(f.output));
    p->Set("Depth", vp(f.depth));
    p->Set("MotionVectors", vp(f.motion));
    p->Set("Jitter.Offset.X", f.jitter_x);
    p->Set("Jitter.Offset.Y", f.jitter_y);
    p->Set("Reset", f.reset);
    p->Set("MV.Scale.X", f.mv_scale_x == 0.0f ? 1.0f : f.mv_scale_x);
    p->Set("MV.Scale.Y", f.mv_scale_y == 0.0f ? 1.0f : f.mv_scale_y);
    for (const char *k : {"TransparencyMask", "ExposureTexture", "DLSS.Input.Bias.Current.Color.Mask",
                          "GBuffer.SpecularMvec", "GBuffer.Emissive", "MotionVectors3D", "IsParticleMask",
                          "AnimatedTextureMask", "DepthHighRes", "Position.ViewSpace", "RayTracingHitDistance"})
        p->Set(k, static_cast<void *>(nullptr));
    p->Set("TonemapperType", 0u);
    p->Set("FrameTimeDeltaInMsec", 16.6f);
    for (const char *k : {"DLSS.Input.Color.Subrect.Base", "DLSS.Input.Depth.Subrect.Base", "DLSS.Input.MV.Subrect.Base",
                          "DLSS.Output.Subrect.Base", "DLSS.Input.DiffuseAlbedo.Subrect.Base",
                          "DLSS.Input.SpecularAlbedo.Subrect.Base", "DLSS.Input.Normals.Subrect.Base",
                          "DLSS.Input.Roughness.Subrect.Base"}) {
        p->Set((std::string(k) + ".X").c_str(), 0u);
        p->Set((std::string(k) + ".Y").c_str(), 0u);
    }
    p->Set("DLSS.Render.Subrect.Dimensions.Width", 0u);
    p->Set("DLSS.Render.Subrect.Dimensions.Height", 0u);
    p->Set("DLSS.Pre.Exposure", f.pre_exposure == 0.0f ? 1.0f : f.pre_exposure);
    p->Set("DLSS.Exposure.Scale", 1.0f);
    p->Set("DLSS.Indicator.Invert.X.Axis", 0);
    p->Set("DLSS.Indicator.Invert.Y.Axis", 0);
    p->Set("DLSS.Input.DiffuseAlbedo", vp(f.diffuse_albedo));
    p->Set("DLSS.Input.SpecularAlbedo", vp(f.specular_albedo));
    p->Set("GBuffer.Normals", vp(f.normals));
    p->Set("GBuffer.Roughness", vp(f.roughness));
    p->Set("DLSSD.DiffuseHitDistance", vp(f.diffuse_hit));
    p->Set("DLSSD.SpecularHitDistance", vp(f.specular_hit));
    p->Set("WorldToViewMatrix", static_cast<void *>(f.world_to_view));
    p->Set("ViewToClipMatrix", static_cast<void *>(f.view_to_clip));
    return NVSDK_NGX_VULKAN_EvaluateFeature_C(kCmd, h, p, nullptr);
}

// The optimal-settings query as the helper runs it: the callback from the capability map, the
// display size and quality in, the render size and its dynamic bounds out (pre-filled outputs
// stay when the callback does not write them).
struct Optimal {
    NVSDK_NGX_Result result;
    unsigned width, height, max_w, max_h, min_w, min_h;
    float sharpness;
};

Optimal optimal_settings(NVSDK_NGX_Parameter *caps, unsigned w, unsigned h, int quality) {
    Optimal o{NVSDK_NGX_Result_Fail, 0, 0, 0, 0, 0, 0, -1.0f};
    void *cb = nullptr;
    if (NVSDK_NGX_FAILED(caps->Get("DLSSDOptimalSettingsCallback", &cb)) || cb == nullptr) {
        o.result = NVSDK_NGX_Result_FAIL_OutOfDate;
        return o;
    }
    PFN_NVSDK_NGX_DLSS_GetOptimalSettingsCallback fn = nullptr;
    std::memcpy(&fn, &cb, sizeof fn);
    caps->Set("Width", w);
    caps->Set("Height", h);
    caps->Set("PerfQualityValue", quality);
    caps->Set("RTXValue", 0);
    o.result = fn(caps);
    if (NVSDK_NGX_FAILED(o.result)) return o;
    caps->Get("OutWidth", &o.width);
    caps->Get("OutHeight", &o.height);
    o.max_w = o.min_w = o.width;
    o.max_h = o.min_h = o.height;
    caps->Get("DLSS.Get.Dynamic.Max.Render.Width", &o.max_w);
    caps->Get("DLSS.Get.Dynamic.Max.Render.Height", &o.max_h);
    caps->Get("DLSS.Get.Dynamic.Min.Render.Width", &o.min_w);
    caps->Get("DLSS.Get.Dynamic.Min.Render.Height", &o.min_h);
    caps->Get("Sharpness", &o.sharpness);
    return o;
}

NVSDK_NGX_Resource_VK image(std::uintptr_t id, VkFormat format, unsigned w, unsigned h, bool rw) {
    NVSDK_NGX_Resource_VK r;
    std::memset(&r, 0, sizeof r);
    r.Resource.ImageViewInfo.ImageView = reinterpret_cast<VkImageView>(id + 1);
    r.Resource.ImageViewInfo.Image = reinterpret_cast<VkImage>(id);
    r.Resource.ImageViewInfo.SubresourceRange.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
    r.Resource.ImageViewInfo.SubresourceRange.levelCount = 1;
    r.Resource.ImageViewInfo.SubresourceRange.layerCount = 1;
    r.Resource.ImageViewInfo.Format = format;
    r.Resource.ImageViewInfo.Width = w;
    r.Resource.ImageViewInfo.Height = h;
    r.Type = NVSDK_NGX_RESOURCE_VK_TYPE_VK_IMAGEVIEW;
    r.ReadWrite = rw;
    return r;
}

}  // namespace

int main() {
    // No model is found: a valid creation stops before the backend uses the (fake) device.
    setenv("OPENNGX_RR_MODEL_DIR", "/nonexistent-rr-model", 1);
    // Discovery works before Init.
    NVSDK_NGX_FeatureDiscoveryInfo info;
    std::memset(&info, 0, sizeof info);
    info.SDKVersion = NVSDK_NGX_Version_API;
    info.FeatureID = NVSDK_NGX_Feature_RayReconstruction;
    NVSDK_NGX_FeatureRequirement req;
    std::memset(&req, 0, sizeof req);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetFeatureRequirements(kInstance, kPd, &info, &req), NVSDK_NGX_Result_Success);
    CHECK_TRUE(req.FeatureSupported == NVSDK_NGX_FeatureSupportResult_Supported);
    uint32_t n_ext = 9;
    VkExtensionProperties *exts = nullptr;
    CHECK_CODE(NVSDK_NGX_VULKAN_GetFeatureInstanceExtensionRequirements(&info, &n_ext, &exts), NVSDK_NGX_Result_Success);
    CHECK_TRUE(n_ext == 0 && exts != nullptr);
    NVSDK_NGX_Application_Identifier app;
    std::memset(&app, 0, sizeof app);
    CHECK_CODE(NVSDK_NGX_UpdateFeature(&app, NVSDK_NGX_Feature_RayReconstruction), NVSDK_NGX_Result_Success);

    CHECK_CODE(NVSDK_NGX_VULKAN_Init(7, L"/tmp", kInstance, kPd, kDevice, nullptr, nullptr, nullptr, NVSDK_NGX_Version_API),
               NVSDK_NGX_Result_Success);

    // ---- capabilities (fake handles: the fill must not touch the device) ----
    NVSDK_NGX_Parameter *caps = nullptr;
    CHECK_CODE(NVSDK_NGX_VULKAN_GetCapabilityParameters(&caps), NVSDK_NGX_Result_Success);
    int available = -1, needs_driver = -1, init_result = 0;
    CHECK_CODE(caps->Get("SuperSamplingDenoising.Available", &available), NVSDK_NGX_Result_Success);
    CHECK_TRUE(available == 1);
    CHECK_CODE(caps->Get("SuperSamplingDenoising.NeedsUpdatedDriver", &needs_driver), NVSDK_NGX_Result_Success);
    CHECK_TRUE(needs_driver == 0);
    CHECK_CODE(caps->Get("SuperSamplingDenoising.FeatureInitResult", &init_result), NVSDK_NGX_Result_Success);
    CHECK_TRUE(static_cast<unsigned>(init_result) == NVSDK_NGX_Result_Success);

    // ---- optimal settings for 3840x2160 in every mode (ngx-abi.md §8.1) ----
    const struct {
        int quality;
        unsigned w, h;
    } modes[] = {{NVSDK_NGX_PerfQuality_Value_MaxPerf, 1920, 1080},
                 {NVSDK_NGX_PerfQuality_Value_Balanced, 2227, 1253},
                 {NVSDK_NGX_PerfQuality_Value_MaxQuality, 2560, 1440},
                 {NVSDK_NGX_PerfQuality_Value_UltraPerformance, 1280, 720},
                 {NVSDK_NGX_PerfQuality_Value_UltraQuality, 0, 0},
                 {NVSDK_NGX_PerfQuality_Value_DLAA, 3840, 2160}};
    for (const auto &m : modes) {
        Optimal o = optimal_settings(caps, 3840, 2160, m.quality);
        CHECK_CODE(o.result, NVSDK_NGX_Result_Success);
        CHECK_TRUE(o.width == m.w && o.height == m.h);
        // Dynamic resolution (docs/rr.md): max the optimal size, min half of it rounded up.
        CHECK_TRUE(o.max_w == m.w && o.max_h == m.h);
        CHECK_TRUE(o.min_w == (m.w + 1) / 2 && o.min_h == (m.h + 1) / 2);
        CHECK_TRUE(o.sharpness == 0.0f);
    }
    CHECK_CODE(optimal_settings(caps, 3840, 2160, 9).result, NVSDK_NGX_Result_FAIL_InvalidParameter);

    // ---- stats (NGX_DLSSD_GET_STATS): SizeInBytes as ULL, the EParameter opt level ----
    void *stats_cb = nullptr;
    CHECK_CODE(caps->Get("DLSSDGetStatsCallback", &stats_cb), NVSDK_NGX_Result_Success);
    CHECK_TRUE(stats_cb != nullptr);
    if (stats_cb != nullptr) {
        PFN_NVSDK_NGX_DLSS_GetStatsCallback stats = nullptr;
        std::memcpy(&stats, &stats_cb, sizeof stats);
        CHECK_CODE(stats(caps), NVSDK_NGX_Result_Success);
        unsigned long long bytes = 99;
        unsigned opt = 0;
        CHECK_CODE(caps->Get("SizeInBytes", &bytes), NVSDK_NGX_Result_Success);
        CHECK_CODE(caps->Get("#\x44", &opt), NVSDK_NGX_Result_Success);
        CHECK_TRUE(bytes == 0 && opt == 40);
    }
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(caps), NVSDK_NGX_Result_Success);
    size_t scratch = 7;
    CHECK_CODE(NVSDK_NGX_VULKAN_GetScratchBufferSize(NVSDK_NGX_Feature_RayReconstruction, nullptr, &scratch),
               NVSDK_NGX_Result_Success);
    CHECK_TRUE(scratch == 0);

    // ---- create: refusals by parameter, then no model for a valid request ----
    NVSDK_NGX_Parameter *p = nullptr;
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&p), NVSDK_NGX_Result_Success);
    NVSDK_NGX_Handle *h = nullptr;
    RrCreate c;
    c.width = 1280;
    c.height = 720;
    c.target_width = 3840;
    c.target_height = 2160;
    c.quality = NVSDK_NGX_PerfQuality_Value_UltraPerformance;
    c.flags = kIsHdr | kMvLowRes | kMvJittered;
    CHECK_CODE(create_rr(p, c, &h), NVSDK_NGX_Result_FAIL_UnsupportedParameter);  // jittered MVs
    c.flags = kIsHdr | kMvLowRes;
    c.hw_depth = 2;
    CHECK_CODE(create_rr(p, c, &h), NVSDK_NGX_Result_FAIL_InvalidParameter);
    c.hw_depth = NVSDK_NGX_DLSS_Depth_Type_HW;
    p->Set("RayReconstruction.Hint.Render.Preset.UltraPerformance", 2u);  // preset B: not implemented
    CHECK_CODE(create_rr(p, c, &h), NVSDK_NGX_Result_FAIL_UnsupportedParameter);
    p->Set("RayReconstruction.Hint.Render.Preset.UltraPerformance",
           static_cast<unsigned>(NVSDK_NGX_RayReconstruction_Hint_Render_Preset_D));
    CHECK_CODE(create_rr(p, c, &h), NVSDK_NGX_Result_FAIL_UnableToInitializeFeature);
    CHECK_TRUE(h == nullptr);
    c.target_width = 1000;  // smaller than the render width
    CHECK_CODE(create_rr(p, c, &h), NVSDK_NGX_Result_FAIL_InvalidParameter);

    // ---- evaluate: the helper's keys compile and are written; no feature exists to reach ----
    std::vector<NVSDK_NGX_Resource_VK> images;
    const VkFormat f16 = VK_FORMAT_R16G16B16A16_SFLOAT;
    for (std::uintptr_t i = 0; i < 8; i++) images.push_back(image(0x100 * (i + 1), f16, 1280, 720, false));
    NVSDK_NGX_Resource_VK out = image(0x1000, f16, 3840, 2160, true);
    RrFrame f;
    f.color = &images[0];
    f.output = &out;
    f.depth = &images[1];
    f.motion = &images[2];
    f.diffuse_albedo = &images[3];
    f.specular_albedo = &images[4];
    f.normals = &images[5];
    f.roughness = &images[6];
    f.jitter_x = 0.25f;
    NVSDK_NGX_Handle fake{12345};
    CHECK_CODE(evaluate_rr(&fake, p, f), NVSDK_NGX_Result_FAIL_FeatureNotFound);
    float jitter = 0;
    CHECK_CODE(p->Get("Jitter.Offset.X", &jitter), NVSDK_NGX_Result_Success);
    CHECK_TRUE(jitter == 0.25f);

    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(p), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(kDevice), NVSDK_NGX_Result_Success);
    return check_finish("rr");
}
