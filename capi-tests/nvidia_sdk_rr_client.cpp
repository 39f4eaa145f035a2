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
 * lanes in a 32-bit float format, depth as R32_SFLOAT linear depth) and scalars -> the Output
 * read back and compared byte for byte with the fixture's output.bin -> Release -> Shutdown1.
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
#include "fixture.h"

#define SKIP 77
#define MAX_GUIDES 16
#define MAX_FRAMES 16

/* One caller image: the colour (4 lanes of color.f32) or a guide (its lanes of guides.f32). */
typedef struct {
    const char *key;
    int first, lanes, texel; /* lanes read; texel = channels of the image's format */
    Image img;
} Input;

typedef struct {
    float jitter[2], mv_scale[2], pre_exposure, exposure_scale;
    int reset;
    char dir[32];
} RrFrame;

typedef struct {
    uint32_t rw, rh, ow, oh;
    int create_flags, preset_e, nguides, nframes;
    Input guides[MAX_GUIDES];
    RrFrame frames[MAX_FRAMES];
} RrFixture;

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

static int pair(const Json *arr, uint32_t *a, uint32_t *b) {
    double x = j_num(j_at(arr, 0), -1), y = j_num(j_at(arr, 1), -1);
    if (x < 1 || y < 1 || x > 16384 || y > 16384) return 0;
    *a = (uint32_t)x;
    *b = (uint32_t)y;
    return 1;
}

static int rr_fixture_load(RrFixture *fx, const char *dir) {
    size_t len = 0;
    char *text = (char *)read_file(dir, "manifest.json", &len);
    JParser jp;
    Json *root = NULL;
    const Json *guides, *frames;
    NVSDK_NGX_VK_DLSSD_Eval_Params probe;
    int i, ok = 0;
    memset(fx, 0, sizeof *fx);
    if (!text) return 0;
    jp.p = text;
    jp.error = 0;
    root = j_value(&jp, 0);
    if (!root || jp.error || !j_str(j_get(root, "network")) || strcmp(j_str(j_get(root, "network")), "dlss-rr") != 0) {
        fprintf(stderr, "%s: %s/manifest.json is not an RR fixture\n", g_program, dir);
        goto done;
    }
    if (!pair(j_get(root, "render"), &fx->rw, &fx->rh) || !pair(j_get(root, "output"), &fx->ow, &fx->oh)) goto done;
    fx->create_flags = (int)j_num(j_get(root, "create_flags"), 0);
    fx->preset_e = j_str(j_get(root, "preset")) && strcmp(j_str(j_get(root, "preset")), "E") == 0;
    guides = j_get(root, "guides");
    frames = j_get(root, "frames");
    for (i = 0; j_at(guides, i) && i < MAX_GUIDES; i++) {
        const Json *g = j_at(guides, i);
        Input *in = &fx->guides[i];
        in->key = strdup(j_str(j_get(g, "key")) ? j_str(j_get(g, "key")) : "");
        in->first = (int)j_num(j_get(g, "first_lane"), -1);
        in->lanes = (int)j_num(j_get(g, "lanes"), 0);
        if (in->first < 0 || in->lanes < 1 || in->lanes > 4 || in->first + in->lanes > 16) goto done;
        if (!eval_slot(&probe, in->key)) {
            fprintf(stderr, "%s: guide %s has no place in NVSDK_NGX_VK_DLSSD_Eval_Params here\n", g_program, in->key);
            goto done;
        }
        fx->nguides = i + 1;
    }
    for (i = 0; j_at(frames, i) && i < MAX_FRAMES; i++) {
        const Json *f = j_at(frames, i);
        RrFrame *fr = &fx->frames[i];
        fr->jitter[0] = (float)j_num(j_at(j_get(f, "jitter"), 0), 0);
        fr->jitter[1] = (float)j_num(j_at(j_get(f, "jitter"), 1), 0);
        fr->mv_scale[0] = (float)j_num(j_at(j_get(f, "mv_scale"), 0), 1);
        fr->mv_scale[1] = (float)j_num(j_at(j_get(f, "mv_scale"), 1), 1);
        fr->pre_exposure = (float)j_num(j_get(f, "pre_exposure"), 1);
        fr->exposure_scale = (float)j_num(j_get(f, "exposure_scale"), 1);
        fr->reset = j_num(j_get(f, "reset"), 0) != 0;
        snprintf(fr->dir, sizeof fr->dir, "frame-%03d", i);
        fx->nframes = i + 1;
    }
    ok = fx->nguides > 0 && fx->nframes > 0;
done:
    if (root) j_free(root);
    free(text);
    if (!ok) fprintf(stderr, "%s: %s/manifest.json: missing or malformed fields\n", g_program, dir);
    return ok;
}

static VkFormat float_format(int texel) {
    return texel == 1 ? VK_FORMAT_R32_SFLOAT : texel == 2 ? VK_FORMAT_R32G32_SFLOAT : VK_FORMAT_R32G32B32A32_SFLOAT;
}

/* Frame `index`: every input's texels packed into the staging buffer and uploaded, the output
 * moved to GENERAL on the first frame, the feature created (first frame) and evaluated through
 * NVIDIA's helpers, the Output read back; returns 1 when it equals output.bin byte for byte. */
static int rr_frame(const char *dir, RrFixture *fx, Input *color, Image *output, Buffer *staging, Buffer *readback,
                    VkCommandBuffer cmd, int index, NVSDK_NGX_Parameter *params, NVSDK_NGX_Handle **handle) {
    const RrFrame *fr = &fx->frames[index];
    char path[64];
    size_t clen = 0, glen = 0, olen = 0;
    size_t px = (size_t)fx->rw * fx->rh, opx = (size_t)fx->ow * fx->oh;
    float *cdata, *gdata;
    unsigned char *want;
    VkDeviceSize offset = 0;
    VkCommandBufferBeginInfo bi;
    VkSubmitInfo si;
    VkBufferImageCopy region;
    VkMemoryBarrier mb;
    NVSDK_NGX_VK_DLSSD_Eval_Params e;
    size_t i, differ = 0;
    int g, ok = 0;
    snprintf(path, sizeof path, "%s/color.f32", fr->dir);
    cdata = (float *)read_file(dir, path, &clen);
    snprintf(path, sizeof path, "%s/guides.f32", fr->dir);
    gdata = (float *)read_file(dir, path, &glen);
    snprintf(path, sizeof path, "%s/output.bin", fr->dir);
    want = (unsigned char *)read_file(dir, path, &olen);
    if (!cdata || !gdata || !want || clen != px * 16 || glen != px * 64 || olen != opx * 8) {
        fprintf(stderr, "%s: frame %d: missing or mis-sized files\n", g_program, index);
        g_failures++;
        goto done;
    }
    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    CHECK_CODE(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
    for (g = -1; g < fx->nguides; g++) {
        Input *in = g < 0 ? color : &fx->guides[g];
        const float *src = g < 0 ? cdata : gdata;
        int stride = g < 0 ? 4 : 16, ch;
        float *dst = (float *)((char *)staging->mapped + offset);
        for (i = 0; i < px; i++) {
            for (ch = 0; ch < in->texel; ch++) dst[i * in->texel + ch] = ch < in->lanes ? src[i * stride + in->first + ch] : 0.0f;
        }
        upload_image(cmd, staging, offset, &in->img, fx->rw, fx->rh);
        offset += px * in->texel * 4;
    }
    if (index == 0) {
        NVSDK_NGX_DLSSD_Create_Params c;
        barrier(cmd, output->image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL, 0, VK_ACCESS_SHADER_WRITE_BIT,
                VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
        memset(&c, 0, sizeof c);
        c.InDenoiseMode = NVSDK_NGX_DLSS_Denoise_Mode_DLUnified;
        c.InRoughnessMode = NVSDK_NGX_DLSS_Roughness_Mode_Unpacked;
        c.InUseHWDepth = NVSDK_NGX_DLSS_Depth_Type_Linear;
        c.InWidth = fx->rw;
        c.InHeight = fx->rh;
        c.InTargetWidth = fx->ow;
        c.InTargetHeight = fx->oh;
        c.InPerfQualityValue = NVSDK_NGX_PerfQuality_Value_DLAA;
        c.InFeatureCreateFlags = fx->create_flags;
        NVSDK_NGX_Parameter_SetUI(params, NVSDK_NGX_Parameter_RayReconstruction_Hint_Render_Preset_DLAA,
                                  fx->preset_e ? NVSDK_NGX_RayReconstruction_Hint_Render_Preset_E
                                               : NVSDK_NGX_RayReconstruction_Hint_Render_Preset_D);
        CHECK_CODE(NGX_VULKAN_CREATE_DLSSD_EXT1(g_device, cmd, 1, 1, handle, params, &c), NVSDK_NGX_Result_Success);
    }
    memset(&e, 0, sizeof e);
    e.pInColor = &color->img.resource;
    e.pInOutput = &output->resource;
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
    if (*handle) CHECK_CODE(NGX_VULKAN_EVALUATE_DLSSD_EXT(cmd, *handle, params, &e), NVSDK_NGX_Result_Success);
    if (g_failures) {
        vkEndCommandBuffer(cmd);
        vkResetCommandBuffer(cmd, 0);
        goto done;
    }
    barrier(cmd, output->image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL, VK_ACCESS_SHADER_WRITE_BIT,
            VK_ACCESS_TRANSFER_READ_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
    memset(&region, 0, sizeof region);
    region.imageSubresource.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
    region.imageSubresource.layerCount = 1;
    region.imageExtent.width = fx->ow;
    region.imageExtent.height = fx->oh;
    region.imageExtent.depth = 1;
    vkCmdCopyImageToBuffer(cmd, output->image, VK_IMAGE_LAYOUT_GENERAL, readback->buffer, 1, &region);
    /* The next frame's copy into the output's history waits for this read. */
    barrier(cmd, output->image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL, VK_ACCESS_TRANSFER_READ_BIT,
            VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    memset(&mb, 0, sizeof mb);
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    CHECK_CODE(vkEndCommandBuffer(cmd), VK_SUCCESS);
    memset(&si, 0, sizeof si);
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    CHECK_CODE(vkQueueSubmit(g_queue, 1, &si, VK_NULL_HANDLE), VK_SUCCESS);
    CHECK_CODE(vkQueueWaitIdle(g_queue), VK_SUCCESS);
    CHECK_CODE(vkResetCommandBuffer(cmd, 0), VK_SUCCESS);
    for (i = 0; i < opx * 8; i += 2) differ += memcmp((unsigned char *)readback->mapped + i, want + i, 2) != 0;
    ok = differ == 0;
    printf("frame %d: %s, %ux%u RGBA16F %s (%zu of %zu halves differ)\n", index, ok ? "OK" : "MISMATCH", fx->ow, fx->oh,
           ok ? "bit-exact" : "differs", differ, opx * 4);
    CHECK_TRUE(ok);
done:
    free(cdata);
    free(gdata);
    free(want);
    return ok;
}

int main(int argc, char **argv) {
    RrFixture fx;
    Input color;
    Image output;
    Buffer staging, readback;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    NVSDK_NGX_FeatureCommonInfo info;
    NVSDK_NGX_FeatureDiscoveryInfo discovery;
    NVSDK_NGX_FeatureRequirement req;
    NVSDK_NGX_Parameter *caps = NULL, *params = NULL;
    NVSDK_NGX_Handle *handle = NULL;
    VkDeviceSize staging_bytes = 0;
    int available = 0, g, i, exact = 0;

    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR   (model directory from $OPENNGX_RR_MODEL_DIR)\n", argv[0]);
        return 2;
    }
    if (!rr_fixture_load(&fx, argv[1])) return 2;
    if (!make_device()) {
        printf("%s: SKIP (no Vulkan device that can run the exact route)\n", g_program);
        return SKIP;
    }
    CHECK_CODE(make_command_buffer(&pool, &cmd), VK_SUCCESS);
    memset(&color, 0, sizeof color);
    color.key = "Color";
    color.lanes = color.texel = 4;
    CHECK_TRUE(make_image(&color.img, VK_FORMAT_R32G32B32A32_SFLOAT, fx.rw, fx.rh,
                          VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT));
    staging_bytes += (VkDeviceSize)fx.rw * fx.rh * 16;
    for (g = 0; g < fx.nguides; g++) {
        Input *in = &fx.guides[g];
        in->texel = in->lanes == 3 ? 4 : in->lanes;
        CHECK_TRUE(make_image(&in->img, float_format(in->texel), fx.rw, fx.rh,
                              VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT));
        staging_bytes += (VkDeviceSize)fx.rw * fx.rh * in->texel * 4;
    }
    CHECK_TRUE(make_image(&output, VK_FORMAT_R16G16B16A16_SFLOAT, fx.ow, fx.oh,
                          VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT));
    CHECK_TRUE(make_buffer(&staging, staging_bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT));
    CHECK_TRUE(make_buffer(&readback, (VkDeviceSize)fx.ow * fx.oh * 8, VK_BUFFER_USAGE_TRANSFER_DST_BIT));
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
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&params), NVSDK_NGX_Result_Success);
    if (g_failures) return check_finish(g_program);

    for (i = 0; i < fx.nframes && g_failures == 0; i++)
        exact += rr_frame(argv[1], &fx, &color, &output, &staging, &readback, cmd, i, params, &handle);

    if (handle) CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(handle), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(params), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(caps), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(g_device), NVSDK_NGX_Result_Success);

    vkDeviceWaitIdle(g_device);
    free_image(&color.img);
    for (g = 0; g < fx.nguides; g++) {
        free_image(&fx.guides[g].img);
        free((void *)fx.guides[g].key);
    }
    free_image(&output);
    free_buffer(&staging);
    free_buffer(&readback);
    vkDestroyCommandPool(g_device, pool, NULL);
    destroy_device();
    CHECK_TRUE(exact == fx.nframes);
    CHECK_TRUE(g_validation_errors == 0);
    printf("%s: %d of %d RR frame(s) (%ux%u -> %ux%u) bit-exact through NVIDIA's static library, its DLSSD helpers and "
           "the openngx Core, %d validation error(s)\n",
           g_program, exact, fx.nframes, fx.rw, fx.rh, fx.ow, fx.oh, g_validation_errors);
    return check_finish(g_program);
}
