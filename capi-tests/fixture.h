/* The captured-frame fixtures of `openngx reference` for the C harness (replay.c, core.c) and
 * the NVIDIA SDK client (nvidia_sdk_client.cpp): the manifest (read with json.h), the frame
 * list with its per-frame controls, the f32-stored halves and the bit-for-bit comparison, and
 * one frame's replay on the device of vk_app.h (upload, the caller's NGX calls, readback,
 * compare). Include after check.h, vk_app.h and the NGX header the program uses; it only names
 * NVSDK_NGX_Parameter, and takes the parameter setters as function pointers so that each
 * program sets values its own way (public accessors, the static library's, or the vtable). */
#ifndef OPENNGX_CAPI_FIXTURE_H
#define OPENNGX_CAPI_FIXTURE_H

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"

/* An f32 that holds an f16 value exactly -> its f16 bits (the fixture stores halves as f32). */
static uint16_t exact_half(float v, int *exact) {
    uint32_t b, sign, exp, man;
    memcpy(&b, &v, 4);
    sign = (b >> 16) & 0x8000u;
    exp = (b >> 23) & 0xFFu;
    man = b & 0x7FFFFFu;
    if (exp == 0xFF) return (uint16_t)(sign | 0x7C00u | (man ? 0x200u | (man >> 13) : 0));
    if (exp == 0 && man == 0) return (uint16_t)sign;
    if (exp >= 113 && exp <= 142) { /* normal f16 */
        if (man & 0x1FFFu) *exact = 0;
        return (uint16_t)(sign | ((exp - 112) << 10) | (man >> 13));
    }
    if (exp >= 103 && exp < 113) { /* subnormal f16: value = m * 2^-24 */
        uint32_t full = man | 0x800000u;
        uint32_t shift = 126 - exp; /* 14..23 */
        if (full & ((1u << shift) - 1)) *exact = 0;
        return (uint16_t)(sign | (full >> shift));
    }
    *exact = 0;
    return (uint16_t)sign;
}

/* ------------------------------------------------------------------------------------------ */
/* The replay */

typedef struct {
    const char *proxy, *motion, *output;
    int enabled, reset, auto_mask;
    float intensity, mvec_scale[2], local_tone, local_structure, skin_structure;
} Frame;

static void read_conditioning(Frame *f, const Json *c) {
    f->local_tone = (float)j_num(j_get(c, "localTone"), 1.0);
    f->local_structure = (float)j_num(j_get(c, "localStructure"), 1.0);
    f->skin_structure = (float)j_num(j_get(c, "skinStructure"), -1.0);
}

/* Compare the read-back halves with the expected f32-stored halves; prints the verdict. */
static int compare(int index, const uint16_t *got, const float *want, uint32_t w, uint32_t h, double seconds) {
    size_t n = (size_t)w * h * 4, i, bad = 0, first = n;
    int exact = 1;
    for (i = 0; i < n; i++) {
        uint16_t e = exact_half(want[i], &exact);
        if (got[i] != e) {
            if (first == n) first = i;
            bad++;
        }
    }
    if (!exact) printf("%s: frame %d: expected output holds values that are not halves\n", g_program, index);
    if (bad == 0 && exact) {
        printf("frame %d: OK, %ux%u RGBA16F bit-exact (%.1f s)\n", index, w, h, seconds);
        return 1;
    }
    if (first < n) {
        int e2 = 1;
        size_t px = first / 4;
        printf("frame %d: MISMATCH, %zu of %zu halves differ; first at (%zu, %zu) channel %zu: got 0x%04X, want 0x%04X\n",
               index, bad, n, px % w, px / w, first % 4, got[first], exact_half(want[first], &e2));
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The fixture as a whole */

#define FIXTURE_MAX_FRAMES 64

typedef struct {
    char *text;
    Json *manifest;
    Frame frames[FIXTURE_MAX_FRAMES];
    int nframes;
    uint32_t w, h;
    int tensor; /* made in h25, the tensor route's profile */
} Fixture;

/* Reads FIXTURE_DIR/manifest.json: frame 0 (the main frame with default controls and the
 * proxy's conditioning) and the sequence frames. Prints the reason and returns 0 on failure. */
static int fixture_load(Fixture *fx, const char *dir) {
    size_t len;
    JParser jp;
    const Json *dims, *proxy, *seq, *out;
    int i;
    memset(fx, 0, sizeof *fx);
    fx->text = (char *)read_file(dir, "manifest.json", &len);
    if (!fx->text) return 0;
    jp.p = fx->text;
    jp.error = 0;
    fx->manifest = j_value(&jp, 0);
    if (!fx->manifest || jp.error || fx->manifest->type != J_OBJ) {
        fprintf(stderr, "%s: %s/manifest.json: not valid JSON\n", g_program, dir);
        return 0;
    }
    dims = j_get(fx->manifest, "sourceDimensions");
    proxy = j_get(fx->manifest, "proxy");
    out = j_get(fx->manifest, "nativeOutput");
    fx->w = (uint32_t)j_num(j_at(dims, 0), 0);
    fx->h = (uint32_t)j_num(j_at(dims, 1), 0);
    if (fx->w == 0 || fx->h == 0 || !j_str(j_get(proxy, "file")) || !j_str(j_get(proxy, "motion")) ||
        !j_str(j_get(out, "file")) || strcmp(j_str(j_get(out, "dtype")) ? j_str(j_get(out, "dtype")) : "", "f32") != 0) {
        fprintf(stderr, "%s: %s: needs sourceDimensions, proxy {file, motion} and an f32 nativeOutput\n", g_program, dir);
        return 0;
    }
    fx->frames[0].proxy = j_str(j_get(proxy, "file"));
    fx->frames[0].motion = j_str(j_get(proxy, "motion"));
    fx->frames[0].output = j_str(j_get(out, "file"));
    fx->frames[0].enabled = 1;
    fx->frames[0].auto_mask = j_num(j_get(proxy, "autoMask"), 1) != 0;
    fx->frames[0].intensity = 1.0f;
    fx->frames[0].mvec_scale[0] = fx->frames[0].mvec_scale[1] = 1.0f;
    read_conditioning(&fx->frames[0], j_get(proxy, "conditioning"));
    fx->nframes = 1;
    seq = j_get(j_get(fx->manifest, "sequence"), "frames");
    for (i = 0; seq && j_at(seq, i) && fx->nframes < FIXTURE_MAX_FRAMES; i++) {
        const Json *s = j_at(seq, i), *p = j_get(s, "parameters");
        Frame *f = &fx->frames[fx->nframes++];
        f->proxy = j_str(j_get(s, "proxy"));
        f->motion = j_str(j_get(s, "motion"));
        f->output = j_str(j_get(s, "output"));
        f->enabled = j_num(j_get(p, "enabled"), 1) != 0;
        f->reset = j_num(j_get(p, "reset"), 0) != 0;
        f->auto_mask = j_num(j_get(p, "autoMask"), 1) != 0;
        f->intensity = (float)j_num(j_get(p, "intensity"), 1.0);
        f->mvec_scale[0] = (float)j_num(j_at(j_get(p, "mvecScale"), 0), 1.0);
        f->mvec_scale[1] = (float)j_num(j_at(j_get(p, "mvecScale"), 1), 1.0);
        read_conditioning(f, j_get(p, "conditioning"));
        if (!f->proxy || !f->motion || !f->output) {
            fprintf(stderr, "%s: %s: sequence frame %d lacks proxy/motion/output\n", g_program, dir, i + 1);
            return 0;
        }
    }
    fx->tensor = j_str(j_get(fx->manifest, "profile")) && strcmp(j_str(j_get(fx->manifest, "profile")), "h25") == 0;
    return 1;
}

static void fixture_free(Fixture *fx) {
    j_free(fx->manifest);
    free(fx->text);
    memset(fx, 0, sizeof *fx);
}

typedef void (*SetUIFn)(NVSDK_NGX_Parameter *, const char *, unsigned int);
typedef void (*SetFFn)(NVSDK_NGX_Parameter *, const char *, float);

/* The frame's DLSSNR.* controls, through the program's own setters. */
static void set_frame_params(NVSDK_NGX_Parameter *p, const Frame *f, SetUIFn set_ui, SetFFn set_f) {
    set_ui(p, "DLSSNR.Enabled", (unsigned int)f->enabled);
    set_ui(p, "DLSSNR.Reset", (unsigned int)f->reset);
    set_ui(p, "DLSSNR.UseAutoMask", (unsigned int)f->auto_mask);
    set_f(p, "DLSSNR.Intensity", f->intensity);
    set_f(p, "DLSSNR.MVecScaleX", f->mvec_scale[0]);
    set_f(p, "DLSSNR.MVecScaleY", f->mvec_scale[1]);
    set_f(p, "DLSSNR.LocalToneStrength", f->local_tone);
    set_f(p, "DLSSNR.LocalStructureStrength", f->local_structure);
    set_f(p, "DLSSNR.SkinStructureStrength", f->skin_structure);
}

/* The images and buffers of a replay. */
typedef struct {
    Image color, motion, output;
    Buffer upload, readback;
} ReplayTargets;

static int replay_targets_make(ReplayTargets *t, uint32_t w, uint32_t h) {
    memset(t, 0, sizeof *t);
    return make_image(&t->color, VK_FORMAT_R32G32B32A32_SFLOAT, w, h, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT) &&
           make_image(&t->motion, VK_FORMAT_R32G32_SFLOAT, w, h, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT) &&
           make_image(&t->output, VK_FORMAT_R16G16B16A16_SFLOAT, w, h, VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT) &&
           make_buffer(&t->upload, (VkDeviceSize)w * h * 24, VK_BUFFER_USAGE_TRANSFER_SRC_BIT) &&
           make_buffer(&t->readback, (VkDeviceSize)w * h * 8, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
}

static void replay_targets_free(ReplayTargets *t) {
    free_image(&t->color);
    free_image(&t->motion);
    free_image(&t->output);
    free_buffer(&t->upload);
    free_buffer(&t->readback);
}

/* What a program records between the uploads and the readback of frame `index` (create on
 * frame 0, set the frame's controls, evaluate); returns 0 when a call failed. */
typedef int (*RecordNgx)(VkCommandBuffer cmd, int index, const Frame *f, void *user);

/* One frame: upload proxy and motion (left in SHADER_READ_ONLY_OPTIMAL), on frame 0 move the
 * output to GENERAL, let `record` make its NGX calls, read the output back, submit, wait and
 * compare bit for bit. Returns 1 when the frame is bit-exact. */
static int replay_frame(const char *dir, const Fixture *fx, int index, VkCommandBuffer cmd, ReplayTargets *t,
                        RecordNgx record, void *user) {
    const Frame *f = &fx->frames[index];
    uint32_t w = fx->w, h = fx->h;
    size_t plen = 0, mlen = 0, olen = 0;
    void *pdata = read_file(dir, f->proxy, &plen);
    void *mdata = read_file(dir, f->motion, &mlen);
    float *odata = (float *)read_file(dir, f->output, &olen);
    VkCommandBufferBeginInfo bi;
    VkSubmitInfo si;
    VkBufferImageCopy region;
    VkMemoryBarrier mb;
    double t0;
    int ok = 0;
    if (!pdata || !mdata || !odata || plen != (size_t)w * h * 16 || mlen != (size_t)w * h * 8 || olen != (size_t)w * h * 16) {
        fprintf(stderr, "%s: frame %d: missing or mis-sized files (%s %zu, %s %zu, %s %zu)\n", g_program, index, f->proxy,
                plen, f->motion, mlen, f->output, olen);
        g_failures++;
        goto done;
    }
    memcpy(t->upload.mapped, pdata, plen);
    memcpy((char *)t->upload.mapped + plen, mdata, mlen);
    t0 = now_s();
    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    CHECK_CODE(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
    upload_image(cmd, &t->upload, 0, &t->color, w, h);
    /* The motion sits after the proxy in the staging buffer. */
    upload_image(cmd, &t->upload, plen, &t->motion, w, h);
    if (index == 0) {
        /* The output lives in GENERAL from now on (the feature's storage writes need it). */
        barrier(cmd, t->output.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL, 0, VK_ACCESS_SHADER_WRITE_BIT,
                VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    }
    if (!record(cmd, index, f, user)) {
        vkEndCommandBuffer(cmd);
        vkResetCommandBuffer(cmd, 0);
        goto done;
    }
    barrier(cmd, t->output.image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL, VK_ACCESS_SHADER_WRITE_BIT,
            VK_ACCESS_TRANSFER_READ_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
    memset(&region, 0, sizeof region);
    region.imageSubresource.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
    region.imageSubresource.layerCount = 1;
    region.imageExtent.width = w;
    region.imageExtent.height = h;
    region.imageExtent.depth = 1;
    vkCmdCopyImageToBuffer(cmd, t->output.image, VK_IMAGE_LAYOUT_GENERAL, t->readback.buffer, 1, &region);
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
    if (g_failures == 0) {
        ok = compare(index, (const uint16_t *)t->readback.mapped, odata, w, h, now_s() - t0);
        CHECK_TRUE(ok);
    }
    CHECK_CODE(vkResetCommandBuffer(cmd, 0), VK_SUCCESS);
done:
    free(pdata);
    free(mdata);
    free(odata);
    return ok;
}

#endif
