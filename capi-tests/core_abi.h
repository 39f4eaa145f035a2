/* The NGX Core's side of the C harness (core.c, core_rr.c): what NVIDIA's static library
 * libnvsdk_ngx.a does to reach openngx's Core. The Core's exported signatures (ngx-abi.md §3.3),
 * loading it by name through the library search path and resolving every symbol (core_open),
 * unloading it and checking that it is really unmapped (core_close), parameter values set and
 * read through the object's vtable (the static library's NVSDK_NGX_Parameter_* accessors are
 * one-instruction vtable calls, §4.2), the preset rewrite before CreateFeature (§3.5), and the
 * log callback and progress trampoline a program hands the Core. Include after check.h and
 * openngx.h (types only: the programs do not link against libopenngx.so), with
 * _POSIX_C_SOURCE 200809L defined first. */
#ifndef OPENNGX_CAPI_CORE_ABI_H
#define OPENNGX_CAPI_CORE_ABI_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <vulkan/vulkan.h>
#include <wchar.h>

#define CORE_NAME "libnvidia-ngx.so.1"

/* ------------------------------------------------------------------------------------------ */
/* The Core's signatures (ngx-abi.md §3.3) */

typedef void (*CppProgress)(float progress, bool *should_cancel); /* `bool &` at the ABI level */
typedef NVSDK_NGX_Result (*Core_Init)(unsigned long long, const wchar_t *, VkInstance, VkPhysicalDevice, VkDevice,
                                      NVSDK_NGX_Version);
typedef NVSDK_NGX_Result (*Core_Init_Ext)(unsigned long long, const wchar_t *, VkInstance, VkPhysicalDevice, VkDevice,
                                          NVSDK_NGX_Version, const NVSDK_NGX_FeatureCommonInfo *);
typedef NVSDK_NGX_Result (*Core_Init_Ext2)(unsigned long long, const wchar_t *, VkInstance, VkPhysicalDevice, VkDevice,
                                           PFN_vkGetInstanceProcAddr, PFN_vkGetDeviceProcAddr, NVSDK_NGX_Version,
                                           const NVSDK_NGX_FeatureCommonInfo *);
typedef NVSDK_NGX_Result (*Core_Init_ProjectID)(const char *, NVSDK_NGX_EngineType, const char *, const wchar_t *,
                                                VkInstance, VkPhysicalDevice, VkDevice, NVSDK_NGX_Version,
                                                const NVSDK_NGX_FeatureCommonInfo *);
typedef NVSDK_NGX_Result (*Core_Init_ProjectID_Ext)(const char *, NVSDK_NGX_EngineType, const char *, const wchar_t *,
                                                    VkInstance, VkPhysicalDevice, VkDevice, PFN_vkGetInstanceProcAddr,
                                                    PFN_vkGetDeviceProcAddr, NVSDK_NGX_Version,
                                                    const NVSDK_NGX_FeatureCommonInfo *);
typedef NVSDK_NGX_Result (*Core_Shutdown)(void);
typedef NVSDK_NGX_Result (*Core_Shutdown1)(VkDevice, unsigned int *);
typedef NVSDK_NGX_Result (*Core_Params)(NVSDK_NGX_Parameter **);
typedef NVSDK_NGX_Result (*Core_Destroy)(NVSDK_NGX_Parameter *);
typedef NVSDK_NGX_Result (*Core_Scratch)(NVSDK_NGX_Feature, const NVSDK_NGX_Parameter *, size_t *);
typedef NVSDK_NGX_Result (*Core_Create)(VkCommandBuffer, NVSDK_NGX_Feature, NVSDK_NGX_Parameter *, NVSDK_NGX_Handle **);
typedef NVSDK_NGX_Result (*Core_Create1)(VkDevice, VkCommandBuffer, NVSDK_NGX_Feature, NVSDK_NGX_Parameter *,
                                         NVSDK_NGX_Handle **);
typedef NVSDK_NGX_Result (*Core_Evaluate)(VkCommandBuffer, const NVSDK_NGX_Handle *, const NVSDK_NGX_Parameter *,
                                          CppProgress);
typedef NVSDK_NGX_Result (*Core_Release)(NVSDK_NGX_Handle *);
typedef NVSDK_NGX_Result (*Core_Requirements)(VkInstance, VkPhysicalDevice, const NVSDK_NGX_FeatureDiscoveryInfo *,
                                              NVSDK_NGX_FeatureRequirement *);
typedef NVSDK_NGX_Result (*Core_InstanceExt)(const NVSDK_NGX_FeatureDiscoveryInfo *, uint32_t *, VkExtensionProperties **);
typedef NVSDK_NGX_Result (*Core_DeviceExt)(VkInstance, VkPhysicalDevice, const NVSDK_NGX_FeatureDiscoveryInfo *,
                                           uint32_t *, VkExtensionProperties **);
typedef NVSDK_NGX_Result (*Core_Update)(const NVSDK_NGX_Application_Identifier *, NVSDK_NGX_Feature);

typedef struct {
    void *lib;
    Core_Init Init;
    Core_Init_Ext Init_Ext;
    Core_Init_Ext2 Init_Ext2;
    Core_Init_ProjectID Init_ProjectID;
    Core_Init_ProjectID_Ext Init_ProjectID_Ext;
    Core_Shutdown Shutdown;
    Core_Shutdown1 Shutdown1;
    Core_Params GetParameters, AllocateParameters, GetCapabilityParameters;
    Core_Destroy DestroyParameters;
    Core_Scratch GetScratchBufferSize;
    Core_Create CreateFeature;
    Core_Create1 CreateFeature1;
    Core_Evaluate EvaluateFeature;
    Core_Release ReleaseFeature;
    Core_Requirements GetFeatureRequirements;
    Core_InstanceExt GetFeatureInstanceExtensionRequirements;
    Core_DeviceExt GetFeatureDeviceExtensionRequirements;
    Core_Update UpdateFeature;
} Core;

/* dlsym into a function pointer without the object-to-function cast ISO C forbids. */
static inline int resolve(void *lib, const char *name, void *fn_ptr, size_t size) {
    void *sym = dlsym(lib, name);
    if (!sym) {
        fprintf(stderr, "%s: %s is not exported by the Core\n", g_program, name);
        return 0;
    }
    memcpy(fn_ptr, &sym, size);
    return 1;
}

#define RESOLVE(c, field, name) CHECK_TRUE(resolve((c)->lib, name, &(c)->field, sizeof (c)->field))

/* What the static library does at Init: load the Core from the search path, resolve its names. */
static inline int core_open(Core *c) {
    /* Names the public library has and the Core must not (§3.3: no EvaluateFeature_C, no
     * RequiredExtensions; the accessors and GetNGXResultAsString live in the static library). */
    static const char *const not_core[] = {"NVSDK_NGX_VULKAN_EvaluateFeature_C", "NVSDK_NGX_VULKAN_RequiredExtensions",
                                           "NVSDK_NGX_VULKAN_Init_with_ProjectID", "GetNGXResultAsString",
                                           "NVSDK_NGX_Parameter_SetUI", "NVSDK_NGX_Parameter_GetVoidPointer"};
    size_t i;
    memset(c, 0, sizeof *c);
    c->lib = dlopen(CORE_NAME, RTLD_NOW);
    g_checks++;
    if (!c->lib) {
        g_failures++; /* a Core that cannot be loaded is a failure, not an empty run */
        fprintf(stderr, "%s: dlopen(%s): %s\n", g_program, CORE_NAME, dlerror());
        return 0;
    }
    RESOLVE(c, Init, "NVSDK_NGX_VULKAN_Init");
    RESOLVE(c, Init_Ext, "NVSDK_NGX_VULKAN_Init_Ext");
    RESOLVE(c, Init_Ext2, "NVSDK_NGX_VULKAN_Init_Ext2");
    RESOLVE(c, Init_ProjectID, "NVSDK_NGX_VULKAN_Init_ProjectID");
    RESOLVE(c, Init_ProjectID_Ext, "NVSDK_NGX_VULKAN_Init_ProjectID_Ext");
    RESOLVE(c, Shutdown, "NVSDK_NGX_VULKAN_Shutdown");
    RESOLVE(c, Shutdown1, "NVSDK_NGX_VULKAN_Shutdown1");
    RESOLVE(c, GetParameters, "NVSDK_NGX_VULKAN_GetParameters");
    RESOLVE(c, AllocateParameters, "NVSDK_NGX_VULKAN_AllocateParameters");
    RESOLVE(c, GetCapabilityParameters, "NVSDK_NGX_VULKAN_GetCapabilityParameters");
    RESOLVE(c, DestroyParameters, "NVSDK_NGX_VULKAN_DestroyParameters");
    RESOLVE(c, GetScratchBufferSize, "NVSDK_NGX_VULKAN_GetScratchBufferSize");
    RESOLVE(c, CreateFeature, "NVSDK_NGX_VULKAN_CreateFeature");
    RESOLVE(c, CreateFeature1, "NVSDK_NGX_VULKAN_CreateFeature1");
    RESOLVE(c, EvaluateFeature, "NVSDK_NGX_VULKAN_EvaluateFeature");
    RESOLVE(c, ReleaseFeature, "NVSDK_NGX_VULKAN_ReleaseFeature");
    RESOLVE(c, GetFeatureRequirements, "NVSDK_NGX_VULKAN_GetFeatureRequirements");
    RESOLVE(c, GetFeatureInstanceExtensionRequirements, "NVSDK_NGX_VULKAN_GetFeatureInstanceExtensionRequirements");
    RESOLVE(c, GetFeatureDeviceExtensionRequirements, "NVSDK_NGX_VULKAN_GetFeatureDeviceExtensionRequirements");
    RESOLVE(c, UpdateFeature, "NVSDK_NGX_UpdateFeature");
    for (i = 0; i < sizeof not_core / sizeof not_core[0]; i++) {
        g_checks++;
        if (dlsym(c->lib, not_core[i])) {
            g_failures++;
            fprintf(stderr, "%s: %s is exported by the Core (it belongs to the static library)\n", g_program, not_core[i]);
        }
    }
    return g_failures == 0;
}

/* dlclose, then ask the loader whether the Core is still mapped: it must be gone (a live thread
 * or a registered TLS destructor of the Core would keep it, or crash once it is unmapped). */
static inline void core_close(Core *c) {
    void *again;
    CHECK_CODE(dlclose(c->lib), 0);
    again = dlopen(CORE_NAME, RTLD_NOW | RTLD_NOLOAD);
    g_checks++;
    if (again) {
        g_failures++;
        fprintf(stderr, "%s: %s is still mapped after the last dlclose (something of it was left behind)\n", g_program, CORE_NAME);
        dlclose(again);
    }
    memset(c, 0, sizeof *c);
}

/* ------------------------------------------------------------------------------------------ */
/* Parameter values through the object's vtable (Itanium slot order, ngx-abi.md §4.2), as the
 * static library's NVSDK_NGX_Parameter_* accessors do. */

enum { SLOT_SET_F = 1, SLOT_SET_UI = 3, SLOT_SET_I = 4, SLOT_SET_VP = 7, SLOT_GET_UI = 11, SLOT_GET_I = 12 };

static inline void *slot(NVSDK_NGX_Parameter *p, int index) {
    void **vtable;
    memcpy(&vtable, (void *)p, sizeof vtable);
    return vtable[index];
}

static inline void vt_set_ui(NVSDK_NGX_Parameter *p, const char *name, unsigned int v) {
    void (*f)(NVSDK_NGX_Parameter *, const char *, unsigned int);
    void *s = slot(p, SLOT_SET_UI);
    memcpy(&f, &s, sizeof f);
    f(p, name, v);
}

static inline void vt_set_f(NVSDK_NGX_Parameter *p, const char *name, float v) {
    void (*f)(NVSDK_NGX_Parameter *, const char *, float);
    void *s = slot(p, SLOT_SET_F);
    memcpy(&f, &s, sizeof f);
    f(p, name, v);
}

static inline void vt_set_i(NVSDK_NGX_Parameter *p, const char *name, int v) {
    void (*f)(NVSDK_NGX_Parameter *, const char *, int);
    void *s = slot(p, SLOT_SET_I);
    memcpy(&f, &s, sizeof f);
    f(p, name, v);
}

static inline void vt_set_vp(NVSDK_NGX_Parameter *p, const char *name, void *v) {
    void (*f)(NVSDK_NGX_Parameter *, const char *, void *);
    void *s = slot(p, SLOT_SET_VP);
    memcpy(&f, &s, sizeof f);
    f(p, name, v);
}

static inline NVSDK_NGX_Result vt_get_ui(NVSDK_NGX_Parameter *p, const char *name, unsigned int *v) {
    NVSDK_NGX_Result (*f)(NVSDK_NGX_Parameter *, const char *, unsigned int *);
    void *s = slot(p, SLOT_GET_UI);
    memcpy(&f, &s, sizeof f);
    return f(p, name, v);
}

static inline NVSDK_NGX_Result vt_get_i(NVSDK_NGX_Parameter *p, const char *name, int *v) {
    NVSDK_NGX_Result (*f)(NVSDK_NGX_Parameter *, const char *, int *);
    void *s = slot(p, SLOT_GET_I);
    memcpy(&f, &s, sizeof f);
    return f(p, name, v);
}

/* §3.5: before forwarding CreateFeature the 310.1 static library reads the twelve preset keys and
 * writes 0x80000000 | N where the application set none. Feature 18's own hint gets the same tag
 * here, as a newer static library might write it. */
static inline void rewrite_presets(NVSDK_NGX_Parameter *p) {
    static const char *const modes[] = {"DLAA", "Quality", "Balanced", "Performance", "UltraPerformance", "UltraQuality"};
    static const unsigned int dlss[] = {0x80000006u, 0x80000005u, 0x80000005u, 0x80000005u, 0x80000006u, 0x80000006u};
    char key[96];
    size_t i;
    for (i = 0; i < 6; i++) {
        unsigned int v = 0;
        snprintf(key, sizeof key, "DLSS.Hint.Render.Preset.%s", modes[i]);
        if (vt_get_ui(p, key, &v) != NVSDK_NGX_Result_Success || v == 0) vt_set_ui(p, key, dlss[i]);
        snprintf(key, sizeof key, "RayReconstruction.Hint.Render.Preset.%s", modes[i]);
        v = 0;
        if (vt_get_ui(p, key, &v) != NVSDK_NGX_Result_Success || v == 0) vt_set_ui(p, key, 0x80000002u);
    }
    vt_set_ui(p, "DLSSNR.Hint.Render.Preset", 0x80000001u);
}

/* ------------------------------------------------------------------------------------------ */
/* Log lines and the progress trampoline */

static char g_log[64][512];
static int g_log_lines;
static int g_progress_calls;

static inline void on_log(const char *message, NVSDK_NGX_Logging_Level level, NVSDK_NGX_Feature source) {
    (void)level;
    (void)source;
    if (g_log_lines < 64) snprintf(g_log[g_log_lines++], sizeof g_log[0], "%s", message ? message : "");
}

static inline int logged(const char *a, const char *b) {
    int i;
    for (i = 0; i < g_log_lines; i++) {
        if (strstr(g_log[i], a) && (!b || strstr(g_log[i], b))) return 1;
    }
    return 0;
}

/* Stands in for the static library's trampoline, which would call the application's C callback
 * from a thread-local; the Core only records, so it is never called. */
static inline void trampoline(float progress, bool *should_cancel) {
    (void)progress;
    (void)should_cancel;
    g_progress_calls++;
}

#endif
