/* Ray Reconstruction (feature 13) fixtures for the C harness (core_rr.c through openngx's NGX
 * Core, nvidia_sdk_rr_client.cpp through NVIDIA's static library): an `openngx reference
 * --feature rr` directory (tools/src/rr_fixture.rs: manifest.json, frame-NNN/color.f32,
 * guides.f32 and output.bin) read into sizes, creation flags, preset, the guide table (each NGX
 * key with its lanes of guides.f32) and the per-frame scalars; the caller's images (the colour,
 * one image per guide, the output) on the device of vk_app.h; and one frame's replay: every
 * input's texels packed and uploaded, the program's NGX calls, the Output read back and
 * compared byte for byte with output.bin. The NGX calls are the program's own (a record
 * callback), so one replay serves both routes. Include after check.h, vk_app.h and the NGX
 * header the program uses; each program defines `g_program` first. */
#ifndef OPENNGX_CAPI_RR_FIXTURE_H
#define OPENNGX_CAPI_RR_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define RR_MAX_GUIDES 16
#define RR_MAX_FRAMES 16

/* One caller image: the colour (4 lanes of color.f32) or a guide (its lanes of guides.f32). */
typedef struct {
    char key[64]; /* the NGX key the image is passed under */
    int first, lanes, texel; /* lanes read; texel = channels of the image's format */
    VkFormat format;
    Image img;
} RrInput;

/* One frame's NGX scalars and its directory. */
typedef struct {
    float jitter[2], mv_scale[2], pre_exposure, exposure_scale;
    int reset;
    char dir[32];
} RrFrame;

typedef struct {
    uint32_t rw, rh, ow, oh; /* render and output sizes (Width/Height, OutWidth/OutHeight) */
    int create_flags, preset_e, nguides, nframes;
    RrInput color, guides[RR_MAX_GUIDES];
    RrFrame frames[RR_MAX_FRAMES];
    Image output;
    Buffer staging, readback; /* readback holds the last replayed frame's Output */
} RrFixture;

static inline int rr_pair(const Json *arr, uint32_t *a, uint32_t *b) {
    double x = j_num(j_at(arr, 0), -1), y = j_num(j_at(arr, 1), -1);
    if (x < 1 || y < 1 || x > 16384 || y > 16384) return 0;
    *a = (uint32_t)x;
    *b = (uint32_t)y;
    return 1;
}

/* Reads DIR/manifest.json. Prints the reason and returns 0 when it is not a well-formed RR
 * fixture. */
static inline int rr_fixture_load(RrFixture *fx, const char *dir) {
    size_t len = 0;
    char *text = (char *)read_file(dir, "manifest.json", &len);
    JParser jp;
    Json *root = NULL;
    const Json *guides, *frames;
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
    if (!rr_pair(j_get(root, "render"), &fx->rw, &fx->rh) || !rr_pair(j_get(root, "output"), &fx->ow, &fx->oh)) goto done;
    fx->create_flags = (int)j_num(j_get(root, "create_flags"), 0);
    fx->preset_e = j_str(j_get(root, "preset")) && strcmp(j_str(j_get(root, "preset")), "E") == 0;
    guides = j_get(root, "guides");
    frames = j_get(root, "frames");
    for (i = 0; j_at(guides, i) && i < RR_MAX_GUIDES; i++) {
        const Json *g = j_at(guides, i);
        RrInput *in = &fx->guides[i];
        const char *key = j_str(j_get(g, "key"));
        if (!key || strlen(key) >= sizeof in->key) goto done;
        snprintf(in->key, sizeof in->key, "%s", key);
        in->first = (int)j_num(j_get(g, "first_lane"), -1);
        in->lanes = (int)j_num(j_get(g, "lanes"), 0);
        if (in->first < 0 || in->lanes < 1 || in->lanes > 4 || in->first + in->lanes > 16) goto done;
        fx->nguides = i + 1;
    }
    for (i = 0; j_at(frames, i) && i < RR_MAX_FRAMES; i++) {
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

/* The guide passed under `key`, or NULL. */
static inline RrInput *rr_guide(RrFixture *fx, const char *key) {
    int g;
    for (g = 0; g < fx->nguides; g++) {
        if (strcmp(fx->guides[g].key, key) == 0) return &fx->guides[g];
    }
    return NULL;
}

/* The caller's images: the colour RGBA32F, each guide in the 32-bit float format of its lane
 * count (three lanes in four channels, the fourth zero) except the depth, which is in
 * `depth_format` (R32_SFLOAT, or D32_SFLOAT as a renderer's depth buffer, read through its
 * depth aspect: both hold the fixture's f32 exactly), the output RGBA16F with storage usage,
 * and the staging and readback buffers. */
static inline int rr_targets_make(RrFixture *fx, VkFormat depth_format) {
    static const VkFormat floats[] = {VK_FORMAT_R32_SFLOAT, VK_FORMAT_R32_SFLOAT, VK_FORMAT_R32G32_SFLOAT,
                                      VK_FORMAT_R32G32B32A32_SFLOAT, VK_FORMAT_R32G32B32A32_SFLOAT};
    const VkImageUsageFlags sampled = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    VkDeviceSize px = (VkDeviceSize)fx->rw * fx->rh, staging = px * 16;
    int g;
    snprintf(fx->color.key, sizeof fx->color.key, "Color");
    fx->color.lanes = fx->color.texel = 4;
    fx->color.format = VK_FORMAT_R32G32B32A32_SFLOAT;
    if (!make_image(&fx->color.img, fx->color.format, fx->rw, fx->rh, sampled)) return 0;
    for (g = 0; g < fx->nguides; g++) {
        RrInput *in = &fx->guides[g];
        int depth = strcmp(in->key, "Depth") == 0 && in->lanes == 1;
        in->format = depth ? depth_format : floats[in->lanes];
        in->texel = in->lanes == 3 ? 4 : in->lanes;
        if (!make_image(&in->img, in->format, fx->rw, fx->rh, sampled)) return 0;
        staging += px * (VkDeviceSize)in->texel * 4;
    }
    return make_image(&fx->output, VK_FORMAT_R16G16B16A16_SFLOAT, fx->ow, fx->oh,
                      VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT) &&
           make_buffer(&fx->staging, staging, VK_BUFFER_USAGE_TRANSFER_SRC_BIT) &&
           make_buffer(&fx->readback, (VkDeviceSize)fx->ow * fx->oh * 8, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
}

static inline void rr_targets_free(RrFixture *fx) {
    int g;
    free_image(&fx->color.img);
    for (g = 0; g < fx->nguides; g++) free_image(&fx->guides[g].img);
    free_image(&fx->output);
    free_buffer(&fx->staging);
    free_buffer(&fx->readback);
}

/* The halves of `got` (the read-back Output) that differ from `want` (an output.bin). */
static inline size_t rr_differing_halves(const void *got, const void *want, size_t halves) {
    size_t i, differ = 0;
    for (i = 0; i < halves; i++) differ += memcmp((const unsigned char *)got + 2 * i, (const unsigned char *)want + 2 * i, 2) != 0;
    return differ;
}

/* Frame `index`'s output.bin (opx * 8 bytes), or NULL (said why). */
static inline unsigned char *rr_expected(const char *dir, const RrFixture *fx, int index) {
    char path[64];
    size_t len = 0;
    unsigned char *want;
    snprintf(path, sizeof path, "%s/output.bin", fx->frames[index].dir);
    want = (unsigned char *)read_file(dir, path, &len);
    if (want && len != (size_t)fx->ow * fx->oh * 8) {
        fprintf(stderr, "%s: %s/%s has %zu bytes, not %u x %u x 8\n", g_program, dir, path, len, fx->ow, fx->oh);
        free(want);
        return NULL;
    }
    return want;
}

/* What a program records between the uploads and the readback of frame `index` (create on
 * frame 0, evaluate); returns 0 when a call failed. */
typedef int (*RrRecord)(VkCommandBuffer cmd, RrFixture *fx, int index, void *user);

/* Frame `index`: every input's texels packed into the staging buffer and uploaded (left in
 * SHADER_READ_ONLY_OPTIMAL), the output moved to GENERAL on the first frame, `record`'s NGX
 * calls, the Output read back (into fx->readback); returns 1 when it equals output.bin byte
 * for byte. */
static inline int rr_replay_frame(const char *dir, RrFixture *fx, int index, VkCommandBuffer cmd, RrRecord record, void *user) {
    const RrFrame *fr = &fx->frames[index];
    char path[64];
    size_t clen = 0, glen = 0;
    size_t px = (size_t)fx->rw * fx->rh, opx = (size_t)fx->ow * fx->oh, i, differ;
    float *cdata, *gdata;
    unsigned char *want;
    VkDeviceSize offset = 0;
    VkCommandBufferBeginInfo bi;
    VkSubmitInfo si;
    VkBufferImageCopy region;
    VkMemoryBarrier mb;
    double t0 = now_s();
    int g, ok = 0;
    snprintf(path, sizeof path, "%s/color.f32", fr->dir);
    cdata = (float *)read_file(dir, path, &clen);
    snprintf(path, sizeof path, "%s/guides.f32", fr->dir);
    gdata = (float *)read_file(dir, path, &glen);
    want = rr_expected(dir, fx, index);
    if (!cdata || !gdata || !want || clen != px * 16 || glen != px * 64) {
        fprintf(stderr, "%s: frame %d: missing or mis-sized files\n", g_program, index);
        g_failures++;
        goto done;
    }
    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    CHECK_CODE(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
    for (g = -1; g < fx->nguides; g++) {
        RrInput *in = g < 0 ? &fx->color : &fx->guides[g];
        const float *src = g < 0 ? cdata : gdata;
        int stride = g < 0 ? 4 : 16, ch;
        float *dst = (float *)((char *)fx->staging.mapped + offset);
        for (i = 0; i < px; i++) {
            for (ch = 0; ch < in->texel; ch++) dst[i * in->texel + ch] = ch < in->lanes ? src[i * stride + in->first + ch] : 0.0f;
        }
        upload_image(cmd, &fx->staging, offset, &in->img, fx->rw, fx->rh);
        offset += px * in->texel * 4;
    }
    if (index == 0) {
        barrier(cmd, fx->output.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL, 0, VK_ACCESS_SHADER_WRITE_BIT,
                VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    }
    if (!record(cmd, fx, index, user) || g_failures) {
        vkEndCommandBuffer(cmd);
        vkResetCommandBuffer(cmd, 0);
        goto done;
    }
    barrier(cmd, fx->output.image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL, VK_ACCESS_SHADER_WRITE_BIT,
            VK_ACCESS_TRANSFER_READ_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
    memset(&region, 0, sizeof region);
    region.imageSubresource.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
    region.imageSubresource.layerCount = 1;
    region.imageExtent.width = fx->ow;
    region.imageExtent.height = fx->oh;
    region.imageExtent.depth = 1;
    vkCmdCopyImageToBuffer(cmd, fx->output.image, VK_IMAGE_LAYOUT_GENERAL, fx->readback.buffer, 1, &region);
    /* The next frame's copy into the output's history waits for this read. */
    barrier(cmd, fx->output.image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL, VK_ACCESS_TRANSFER_READ_BIT,
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
    differ = rr_differing_halves(fx->readback.mapped, want, opx * 4);
    ok = differ == 0;
    printf("frame %d: %s, %ux%u RGBA16F %s (%zu of %zu halves differ; %.1f s)\n", index, ok ? "OK" : "MISMATCH", fx->ow,
           fx->oh, ok ? "bit-exact" : "differs", differ, opx * 4, now_s() - t0);
    CHECK_TRUE(ok);
done:
    free(cdata);
    free(gdata);
    free(want);
    return ok;
}

#endif
