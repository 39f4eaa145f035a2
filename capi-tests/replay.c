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
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <vulkan/vulkan.h>

#include "check.h"
#include "openngx.h"

static const char *g_program = "replay";
#include "vk_app.h"

#define SKIP 77

/* ------------------------------------------------------------------------------------------ */
/* A small JSON reader: enough for the fixture manifest (objects, arrays, strings without
 * escapes beyond \" and \\, numbers, true/false/null). */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JType;

typedef struct Json {
    JType type;
    double num;
    char *str;           /* J_STR; also the key when the value sits in an object */
    char *key;
    struct Json *child;  /* first element / member */
    struct Json *next;   /* sibling */
} Json;

typedef struct {
    const char *p;
    int error;
} JParser;

static void j_ws(JParser *jp) {
    while (*jp->p && isspace((unsigned char)*jp->p)) jp->p++;
}

static Json *j_new(JType t) {
    Json *j = (Json *)calloc(1, sizeof(Json));
    if (j) j->type = t;
    return j;
}

static char *j_string(JParser *jp) {
    size_t cap = 32, n = 0;
    char *s;
    if (*jp->p != '"') {
        jp->error = 1;
        return NULL;
    }
    jp->p++;
    s = (char *)malloc(cap);
    if (!s) {
        jp->error = 1;
        return NULL;
    }
    while (*jp->p && *jp->p != '"') {
        char c = *jp->p++;
        if (c == '\\') {
            c = *jp->p++;
            if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
            else if (c != '"' && c != '\\' && c != '/') {
                jp->error = 1;
                break;
            }
        }
        if (n + 1 >= cap) {
            char *t = (char *)realloc(s, cap *= 2);
            if (!t) {
                jp->error = 1;
                break;
            }
            s = t;
        }
        s[n++] = c;
    }
    s[n] = 0;
    if (*jp->p != '"') jp->error = 1;
    else jp->p++;
    return s;
}

static Json *j_value(JParser *jp, int depth);

static Json *j_list(JParser *jp, int depth, JType type, char close) {
    Json *j = j_new(type), *last = NULL;
    if (!j) {
        jp->error = 1;
        return NULL;
    }
    jp->p++;
    j_ws(jp);
    if (*jp->p == close) {
        jp->p++;
        return j;
    }
    while (!jp->error) {
        char *key = NULL;
        Json *v;
        j_ws(jp);
        if (type == J_OBJ) {
            key = j_string(jp);
            j_ws(jp);
            if (*jp->p != ':') {
                jp->error = 1;
                free(key);
                break;
            }
            jp->p++;
        }
        v = j_value(jp, depth + 1);
        if (!v) {
            free(key);
            break;
        }
        v->key = key;
        if (last) last->next = v;
        else j->child = v;
        last = v;
        j_ws(jp);
        if (*jp->p == ',') {
            jp->p++;
            continue;
        }
        if (*jp->p == close) {
            jp->p++;
            break;
        }
        jp->error = 1;
    }
    return j;
}

static Json *j_value(JParser *jp, int depth) {
    Json *j;
    j_ws(jp);
    if (depth > 32) {
        jp->error = 1;
        return NULL;
    }
    switch (*jp->p) {
        case '{': return j_list(jp, depth, J_OBJ, '}');
        case '[': return j_list(jp, depth, J_ARR, ']');
        case '"':
            j = j_new(J_STR);
            if (j) j->str = j_string(jp);
            return j;
        case 't':
        case 'f':
            j = j_new(J_BOOL);
            if (!j) return NULL;
            if (strncmp(jp->p, "true", 4) == 0) {
                j->num = 1;
                jp->p += 4;
            } else if (strncmp(jp->p, "false", 5) == 0) {
                jp->p += 5;
            } else {
                jp->error = 1;
            }
            return j;
        case 'n':
            if (strncmp(jp->p, "null", 4) != 0) jp->error = 1;
            else jp->p += 4;
            return j_new(J_NULL);
        default: {
            char *end;
            j = j_new(J_NUM);
            if (!j) return NULL;
            j->num = strtod(jp->p, &end);
            if (end == jp->p) jp->error = 1;
            jp->p = end;
            return j;
        }
    }
}

static void j_free(Json *j) {
    while (j) {
        Json *n = j->next;
        j_free(j->child);
        free(j->str);
        free(j->key);
        free(j);
        j = n;
    }
}

static const Json *j_get(const Json *obj, const char *key) {
    const Json *c;
    if (!obj || obj->type != J_OBJ) return NULL;
    for (c = obj->child; c; c = c->next) {
        if (c->key && strcmp(c->key, key) == 0) return c;
    }
    return NULL;
}

static const Json *j_at(const Json *arr, int i) {
    const Json *c;
    if (!arr || arr->type != J_ARR) return NULL;
    for (c = arr->child; c && i > 0; c = c->next) i--;
    return c;
}

static double j_num(const Json *j, double fallback) {
    return (j && (j->type == J_NUM || j->type == J_BOOL)) ? j->num : fallback;
}

static const char *j_str(const Json *j) {
    return (j && j->type == J_STR) ? j->str : NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Files */

static void *read_file(const char *dir, const char *name, size_t *len) {
    char path[4096];
    FILE *f;
    long n;
    void *buf;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        ((char *)buf)[n] = 0;
        *len = (size_t)n;
    }
    return buf;
}

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

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void set_frame_params(NVSDK_NGX_Parameter *p, const Frame *f) {
    NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Enabled", (unsigned int)f->enabled);
    NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.Reset", (unsigned int)f->reset);
    NVSDK_NGX_Parameter_SetUI(p, "DLSSNR.UseAutoMask", (unsigned int)f->auto_mask);
    NVSDK_NGX_Parameter_SetF(p, "DLSSNR.Intensity", f->intensity);
    NVSDK_NGX_Parameter_SetF(p, "DLSSNR.MVecScaleX", f->mvec_scale[0]);
    NVSDK_NGX_Parameter_SetF(p, "DLSSNR.MVecScaleY", f->mvec_scale[1]);
    NVSDK_NGX_Parameter_SetF(p, "DLSSNR.LocalToneStrength", f->local_tone);
    NVSDK_NGX_Parameter_SetF(p, "DLSSNR.LocalStructureStrength", f->local_structure);
    NVSDK_NGX_Parameter_SetF(p, "DLSSNR.SkinStructureStrength", f->skin_structure);
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
    if (!exact) printf("replay: frame %d: expected output holds values that are not halves\n", index);
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

int main(int argc, char **argv) {
    const char *dir;
    char *manifest_text;
    size_t len;
    JParser jp;
    Json *manifest;
    const Json *dims, *proxy, *seq, *out;
    Frame frames[64];
    int nframes = 0, i, ok_frames = 0, tensor = 0;
    uint32_t w, h;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    Image color, motion, output;
    Buffer upload, readback;
    NVSDK_NGX_Parameter *create = NULL, *eval = NULL;
    NVSDK_NGX_Handle *h_nr = NULL;

    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR   (model directory from $OPENNGX_MODEL_DIR)\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    manifest_text = (char *)read_file(dir, "manifest.json", &len);
    if (!manifest_text) return 2;
    jp.p = manifest_text;
    jp.error = 0;
    manifest = j_value(&jp, 0);
    if (!manifest || jp.error || manifest->type != J_OBJ) {
        fprintf(stderr, "replay: %s/manifest.json: not valid JSON\n", dir);
        return 2;
    }
    dims = j_get(manifest, "sourceDimensions");
    proxy = j_get(manifest, "proxy");
    out = j_get(manifest, "nativeOutput");
    w = (uint32_t)j_num(j_at(dims, 0), 0);
    h = (uint32_t)j_num(j_at(dims, 1), 0);
    if (w == 0 || h == 0 || !j_str(j_get(proxy, "file")) || !j_str(j_get(proxy, "motion")) || !j_str(j_get(out, "file")) ||
        strcmp(j_str(j_get(out, "dtype")) ? j_str(j_get(out, "dtype")) : "", "f32") != 0) {
        fprintf(stderr, "replay: %s: needs sourceDimensions, proxy {file, motion} and an f32 nativeOutput\n", dir);
        return 2;
    }
    /* Frame 0: the fixture's main frame with default controls and the proxy's conditioning. */
    memset(frames, 0, sizeof frames);
    frames[0].proxy = j_str(j_get(proxy, "file"));
    frames[0].motion = j_str(j_get(proxy, "motion"));
    frames[0].output = j_str(j_get(out, "file"));
    frames[0].enabled = 1;
    frames[0].auto_mask = j_num(j_get(proxy, "autoMask"), 1) != 0;
    frames[0].intensity = 1.0f;
    frames[0].mvec_scale[0] = frames[0].mvec_scale[1] = 1.0f;
    read_conditioning(&frames[0], j_get(proxy, "conditioning"));
    nframes = 1;
    seq = j_get(j_get(manifest, "sequence"), "frames");
    for (i = 0; seq && j_at(seq, i) && nframes < 64; i++) {
        const Json *s = j_at(seq, i), *p = j_get(s, "parameters");
        Frame *f = &frames[nframes++];
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
            fprintf(stderr, "replay: %s: sequence frame %d lacks proxy/motion/output\n", dir, i + 1);
            return 2;
        }
    }
    printf("replay: %s: %ux%u, %d frame(s)\n", dir, w, h, nframes);

    /* A fixture made in h25 is the tensor route's reference: the device gets the tensor route's
     * features, the creation asks for the route and states them (docs/ngx.md "Route choice"). */
    tensor = j_str(j_get(manifest, "profile")) && strcmp(j_str(j_get(manifest, "profile")), "h25") == 0;
    if (!make_device_with(tensor)) {
        printf("replay: SKIP (no Vulkan device that can run the exact route)\n");
        return SKIP;
    }
    if (tensor && !g_tensor_features) {
        printf("replay: SKIP (the fixture is in h25, the tensor route's profile, and this device has no cooperative matrices)\n");
        return SKIP;
    }
    CHECK_CODE(make_command_buffer(&pool, &cmd), VK_SUCCESS);
    CHECK_TRUE(make_image(&color, VK_FORMAT_R32G32B32A32_SFLOAT, w, h, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT));
    CHECK_TRUE(make_image(&motion, VK_FORMAT_R32G32_SFLOAT, w, h, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT));
    CHECK_TRUE(make_image(&output, VK_FORMAT_R16G16B16A16_SFLOAT, w, h, VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT));
    CHECK_TRUE(make_buffer(&upload, (VkDeviceSize)w * h * 24, VK_BUFFER_USAGE_TRANSFER_SRC_BIT));
    CHECK_TRUE(make_buffer(&readback, (VkDeviceSize)w * h * 8, VK_BUFFER_USAGE_TRANSFER_DST_BIT));
    if (g_failures) return check_finish("replay");

    CHECK_CODE(NVSDK_NGX_VULKAN_Init(0x5EED, L"/tmp", g_instance, g_pd, g_device, vkGetInstanceProcAddr, vkGetDeviceProcAddr,
                                     NULL, NVSDK_NGX_Version_API),
               NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&create), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&eval), NVSDK_NGX_Result_Success);
    NVSDK_NGX_Parameter_SetUI(create, "DLSSNR.Width", w);
    NVSDK_NGX_Parameter_SetUI(create, "DLSSNR.Height", h);
    NVSDK_NGX_Parameter_SetUI(create, "OpenNGX.Route", tensor ? 2u : 1u);
    NVSDK_NGX_Parameter_SetUI(create, "OpenNGX.TensorFeaturesEnabled", tensor ? 1u : 0u);
    NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.Color", &color.resource);
    NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.Output", &output.resource);
    NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.MVec", &motion.resource);

    for (i = 0; i < nframes && g_failures == 0; i++) {
        const Frame *f = &frames[i];
        size_t plen = 0, mlen = 0, olen = 0;
        void *pdata = read_file(dir, f->proxy, &plen);
        void *mdata = read_file(dir, f->motion, &mlen);
        float *odata = (float *)read_file(dir, f->output, &olen);
        VkCommandBufferBeginInfo bi;
        VkSubmitInfo si;
        VkBufferImageCopy region;
        double t0;
        if (!pdata || !mdata || !odata || plen != (size_t)w * h * 16 || mlen != (size_t)w * h * 8 ||
            olen != (size_t)w * h * 16) {
            fprintf(stderr, "replay: frame %d: missing or mis-sized files (%s %zu, %s %zu, %s %zu)\n", i, f->proxy, plen,
                    f->motion, mlen, f->output, olen);
            g_failures++;
            free(pdata);
            free(mdata);
            free(odata);
            break;
        }
        memcpy(upload.mapped, pdata, plen);
        memcpy((char *)upload.mapped + plen, mdata, mlen);
        t0 = now_s();
        memset(&bi, 0, sizeof bi);
        bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
        bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        CHECK_CODE(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
        upload_image(cmd, &upload, 0, &color, w, h);
        /* The motion sits after the proxy in the staging buffer. */
        upload_image(cmd, &upload, plen, &motion, w, h);
        if (i == 0) {
            /* The output lives in GENERAL from now on (the feature's storage writes need it). */
            barrier(cmd, output.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL, 0,
                    VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
            CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(g_device, cmd, NVSDK_NGX_Feature_Reserved18, create, &h_nr),
                       NVSDK_NGX_Result_Success);
            {
                unsigned int active = 0;
                NVSDK_NGX_Parameter_GetUI(create, "OpenNGX.ActiveRoute", &active);
                printf("replay: route %s\n", active == 2 ? "tensor (h25)" : "exact (f13)");
                CHECK_TRUE(active == (tensor ? 2u : 1u));
            }
        }
        set_frame_params(eval, f);
        CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, h_nr, eval, NULL), NVSDK_NGX_Result_Success);
        barrier(cmd, output.image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL, VK_ACCESS_SHADER_WRITE_BIT,
                VK_ACCESS_TRANSFER_READ_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
        memset(&region, 0, sizeof region);
        region.imageSubresource.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
        region.imageSubresource.layerCount = 1;
        region.imageExtent.width = w;
        region.imageExtent.height = h;
        region.imageExtent.depth = 1;
        vkCmdCopyImageToBuffer(cmd, output.image, VK_IMAGE_LAYOUT_GENERAL, readback.buffer, 1, &region);
        {
            VkMemoryBarrier mb;
            memset(&mb, 0, sizeof mb);
            mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
            mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
            mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
            vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
        }
        CHECK_CODE(vkEndCommandBuffer(cmd), VK_SUCCESS);
        memset(&si, 0, sizeof si);
        si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cmd;
        CHECK_CODE(vkQueueSubmit(g_queue, 1, &si, VK_NULL_HANDLE), VK_SUCCESS);
        CHECK_CODE(vkQueueWaitIdle(g_queue), VK_SUCCESS);
        if (g_failures == 0) {
            int ok = compare(i, (const uint16_t *)readback.mapped, odata, w, h, now_s() - t0);
            ok_frames += ok;
            CHECK_TRUE(ok);
        }
        CHECK_CODE(vkResetCommandBuffer(cmd, 0), VK_SUCCESS);
        free(pdata);
        free(mdata);
        free(odata);
    }

    /* Misuse on a real handle: a second release and an evaluate after release. */
    if (h_nr) {
        VkCommandBufferBeginInfo bi;
        memset(&bi, 0, sizeof bi);
        bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
        CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(h_nr), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(h_nr), NVSDK_NGX_Result_FAIL_FeatureNotFound);
        CHECK_CODE(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
        CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, h_nr, eval, NULL), NVSDK_NGX_Result_FAIL_FeatureNotFound);
        CHECK_CODE(vkEndCommandBuffer(cmd), VK_SUCCESS);
    }
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(create), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(eval), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(g_device), NVSDK_NGX_Result_Success);

    vkDeviceWaitIdle(g_device);
    free_image(&color);
    free_image(&motion);
    free_image(&output);
    free_buffer(&upload);
    free_buffer(&readback);
    vkDestroyCommandPool(g_device, pool, NULL);
    destroy_device();
    j_free(manifest);
    free(manifest_text);
    CHECK_TRUE(g_validation_errors == 0);
    printf("replay: %d of %d frame(s) bit-exact, %d validation error(s)\n", ok_frames, nframes, g_validation_errors);
    return check_finish("replay");
}
