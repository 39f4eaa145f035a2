/* The application side of the C harness's Vulkan programs (replay.c, device.c, core.c,
 * core_rr.c, the NVIDIA SDK clients): instance (with
 * the Khronos validation layer and an error counter when the layer is installed), a device with
 * the features the exact route needs, host-visible buffers, images (colour or depth) with the
 * NVSDK_NGX_Resource_VK an engine would build, barriers and uploads. Each program defines
 * `g_program` (its name, used in messages) before including this header. */
#ifndef OPENNGX_CAPI_VK_APP_H
#define OPENNGX_CAPI_VK_APP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

/* The NGX types (NVSDK_NGX_Resource_VK) come from openngx.h, or from NVIDIA's own headers in
 * the SDK client, which includes them first and defines OPENNGX_CAPI_NGX_TYPES. */
#ifndef OPENNGX_CAPI_NGX_TYPES
#include "openngx.h"
#endif


static VkInstance g_instance;
static VkPhysicalDevice g_pd;
static VkDevice g_device;
static VkQueue g_queue;
static uint32_t g_family;
static VkDebugUtilsMessengerEXT g_messenger;
static int g_validation_errors;

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                    VkDebugUtilsMessageTypeFlagsEXT types,
                                                    const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                    void *user) {
    (void)types;
    (void)user;
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        g_validation_errors++;
        fprintf(stderr, "%s: validation error: %s\n", g_program, data && data->pMessage ? data->pMessage : "?");
    }
    return VK_FALSE;
}

static inline int has_layer(const char *name) {
    VkLayerProperties props[64];
    uint32_t n = 64, i;
    if (vkEnumerateInstanceLayerProperties(&n, props) < 0) return 0;
    for (i = 0; i < n; i++) {
        if (strcmp(props[i].layerName, name) == 0) return 1;
    }
    return 0;
}

/* Whether make_device asked for the layer's synchronization validation. */
static int g_sync_validation;

static inline int layer_has_extension(const char *layer, const char *name) {
    VkExtensionProperties props[64];
    uint32_t n = 64, i;
    if (vkEnumerateInstanceExtensionProperties(layer, &n, props) < 0) return 0;
    for (i = 0; i < n; i++) {
        if (strcmp(props[i].extensionName, name) == 0) return 1;
    }
    return 0;
}

/* The features the exact route needs (docs/ngx.md): Vulkan 1.2, shaderFloat16, shaderInt8,
 * 8- and 16-bit storage buffers. */
static inline int exact_route_ok(VkPhysicalDevice pd) {
    VkPhysicalDeviceVulkan11Features f11;
    VkPhysicalDeviceVulkan12Features f12;
    VkPhysicalDeviceFeatures2 f2;
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    if (props.apiVersion < VK_API_VERSION_1_2) return 0;
    memset(&f11, 0, sizeof f11);
    memset(&f12, 0, sizeof f12);
    memset(&f2, 0, sizeof f2);
    f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f11.pNext = &f12;
    f2.pNext = &f11;
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    return f11.storageBuffer16BitAccess && f12.shaderFloat16 && f12.shaderInt8 && f12.storageBuffer8BitAccess;
}

/* VK_KHR_cooperative_matrix's feature struct (the tensor route, docs/ngx.md "Route choice"),
 * declared here because Debian 12's Vulkan headers predate the extension. */
#define OPENNGX_STYPE_COOPMAT_FEATURES ((VkStructureType)1000506000)
typedef struct {
    VkStructureType sType;
    void *pNext;
    VkBool32 cooperativeMatrix;
    VkBool32 cooperativeMatrixRobustBufferAccess;
} CoopMatrixFeatures;

/* Set by make_device_with(1) when the device was created with the tensor route's features. */
static int g_tensor_features;

static inline int has_device_extension(VkPhysicalDevice pd, const char *name) {
    VkExtensionProperties props[512];
    uint32_t n = 512, i;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, props) < 0) return 0;
    for (i = 0; i < n; i++) {
        if (strcmp(props[i].extensionName, name) == 0) return 1;
    }
    return 0;
}

/* The device with the exact route's features and, with `tensor` and where the device offers
 * them, the tensor route's: VK_KHR_cooperative_matrix with cooperativeMatrix, and
 * vulkanMemoryModel. */
static inline int make_device_with(int tensor);
static inline int make_device(void) { return make_device_with(0); }

static inline int make_device_with(int tensor) {
    VkApplicationInfo app;
    VkInstanceCreateInfo ici;
    VkDeviceCreateInfo dci;
    VkDeviceQueueCreateInfo qci;
    VkQueueFamilyProperties families[16];
    VkPhysicalDevice pds[16];
    VkPhysicalDeviceVulkan11Features f11;
    VkPhysicalDeviceVulkan12Features f12;
    const char *layer = "VK_LAYER_KHRONOS_validation";
    const char *exts[2] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
    VkValidationFeaturesEXT features;
    VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    int validation = has_layer(layer) && getenv("OPENNGX_CAPI_NO_VALIDATION") == NULL &&
                     getenv("OPENNGX_REPLAY_NO_VALIDATION") == NULL;
    uint32_t n = 16, nf = 16, i;
    float prio = 1.0f;
    memset(&app, 0, sizeof app);
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = g_program;
    app.apiVersion = VK_API_VERSION_1_2;
    memset(&ici, 0, sizeof ici);
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pApplicationInfo = &app;
    if (validation) {
        ici.enabledLayerCount = 1;
        ici.ppEnabledLayerNames = &layer;
        ici.enabledExtensionCount = 1;
        ici.ppEnabledExtensionNames = exts;
        /* Synchronization validation (the library records into the application's command
         * buffers: a missing barrier is a hazard), unless OPENNGX_CAPI_NO_SYNC is set. Between
         * submissions too where VK_LAYER_ENABLES asks (run.sh sets it). */
        if (getenv("OPENNGX_CAPI_NO_SYNC") == NULL && layer_has_extension(layer, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
            memset(&features, 0, sizeof features);
            features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
            features.enabledValidationFeatureCount = 1;
            features.pEnabledValidationFeatures = &sync;
            ici.pNext = &features;
            ici.enabledExtensionCount = 2;
            g_sync_validation = 1;
        }
    }
    if (vkCreateInstance(&ici, NULL, &g_instance) != VK_SUCCESS) return 0;
    if (validation) {
        VkDebugUtilsMessengerCreateInfoEXT mci;
        PFN_vkCreateDebugUtilsMessengerEXT create =
            (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(g_instance, "vkCreateDebugUtilsMessengerEXT");
        memset(&mci, 0, sizeof mci);
        mci.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
        mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
        mci.pfnUserCallback = on_validation;
        if (create) create(g_instance, &mci, NULL, &g_messenger);
        printf("%s: validation layer enabled%s\n", g_program,
               g_sync_validation ? " (synchronization validation on)" : "");
    }
    if (vkEnumeratePhysicalDevices(g_instance, &n, pds) < 0) return 0;
    for (i = 0; i < n; i++) {
        if (exact_route_ok(pds[i])) break;
    }
    if (i == n) return 0;
    g_pd = pds[i];
    vkGetPhysicalDeviceQueueFamilyProperties(g_pd, &nf, families);
    for (i = 0; i < nf; i++) {
        if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) break;
    }
    if (i == nf) return 0;
    g_family = i;
    memset(&qci, 0, sizeof qci);
    qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qci.queueFamilyIndex = g_family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    memset(&f11, 0, sizeof f11);
    memset(&f12, 0, sizeof f12);
    f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    f11.storageBuffer16BitAccess = VK_TRUE;
    f12.shaderFloat16 = VK_TRUE;
    f12.shaderInt8 = VK_TRUE;
    f12.storageBuffer8BitAccess = VK_TRUE;
    f11.pNext = &f12;
    memset(&dci, 0, sizeof dci);
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.pNext = &f11;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    g_tensor_features = 0;
    if (tensor && has_device_extension(g_pd, "VK_KHR_cooperative_matrix")) {
        CoopMatrixFeatures want;
        VkPhysicalDeviceVulkan12Features have12;
        VkPhysicalDeviceFeatures2 f2;
        memset(&want, 0, sizeof want);
        memset(&have12, 0, sizeof have12);
        memset(&f2, 0, sizeof f2);
        want.sType = OPENNGX_STYPE_COOPMAT_FEATURES;
        have12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
        want.pNext = &have12;
        f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
        f2.pNext = &want;
        vkGetPhysicalDeviceFeatures2(g_pd, &f2);
        if (want.cooperativeMatrix && have12.vulkanMemoryModel) {
            static CoopMatrixFeatures enable;
            static const char *ext = "VK_KHR_cooperative_matrix";
            memset(&enable, 0, sizeof enable);
            enable.sType = OPENNGX_STYPE_COOPMAT_FEATURES;
            enable.cooperativeMatrix = VK_TRUE;
            f12.vulkanMemoryModel = VK_TRUE;
            f12.pNext = &enable;
            dci.enabledExtensionCount = 1;
            dci.ppEnabledExtensionNames = &ext;
            g_tensor_features = 1;
        }
    }
    if (vkCreateDevice(g_pd, &dci, NULL, &g_device) != VK_SUCCESS) return 0;
    vkGetDeviceQueue(g_device, g_family, 0, &g_queue);
    return 1;
}

static inline int find_memory(uint32_t bits, VkMemoryPropertyFlags want) {
    VkPhysicalDeviceMemoryProperties mp;
    uint32_t i;
    vkGetPhysicalDeviceMemoryProperties(g_pd, &mp);
    for (i = 0; i < mp.memoryTypeCount; i++) {
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return (int)i;
    }
    return -1;
}

typedef struct {
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *mapped;
    VkDeviceSize size;
} Buffer;

static inline int make_buffer(Buffer *b, VkDeviceSize size, VkBufferUsageFlags usage) {
    VkBufferCreateInfo bci;
    VkMemoryRequirements req;
    VkMemoryAllocateInfo mai;
    int type;
    memset(b, 0, sizeof *b);
    memset(&bci, 0, sizeof bci);
    bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bci.size = size;
    bci.usage = usage;
    if (vkCreateBuffer(g_device, &bci, NULL, &b->buffer) != VK_SUCCESS) return 0;
    vkGetBufferMemoryRequirements(g_device, b->buffer, &req);
    type = find_memory(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    if (type < 0) return 0;
    memset(&mai, 0, sizeof mai);
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = (uint32_t)type;
    if (vkAllocateMemory(g_device, &mai, NULL, &b->memory) != VK_SUCCESS) return 0;
    if (vkBindBufferMemory(g_device, b->buffer, b->memory, 0) != VK_SUCCESS) return 0;
    if (vkMapMemory(g_device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped) != VK_SUCCESS) return 0;
    b->size = size;
    return 1;
}

static inline void free_buffer(Buffer *b) {
    if (b->buffer) vkDestroyBuffer(g_device, b->buffer, NULL);
    if (b->memory) vkFreeMemory(g_device, b->memory, NULL);
}

typedef struct {
    VkImage image;
    VkDeviceMemory memory;
    VkImageView view;
    VkImageAspectFlags aspect; /* of the view, the resource and the copies */
    NVSDK_NGX_Resource_VK resource;
} Image;

/* The aspect an engine views a format through: a depth buffer's depth (D32_SFLOAT, D16_UNORM;
 * the combined depth/stencil formats too, viewed through their depth, though their barriers
 * would need both aspects without separateDepthStencilLayouts: no program here uses one), else
 * colour. */
static inline VkImageAspectFlags format_aspect(VkFormat format) {
    switch (format) {
        case VK_FORMAT_D16_UNORM:
        case VK_FORMAT_X8_D24_UNORM_PACK32:
        case VK_FORMAT_D32_SFLOAT:
        case VK_FORMAT_D16_UNORM_S8_UINT:
        case VK_FORMAT_D24_UNORM_S8_UINT:
        case VK_FORMAT_D32_SFLOAT_S8_UINT: return VK_IMAGE_ASPECT_DEPTH_BIT;
        default: return VK_IMAGE_ASPECT_COLOR_BIT;
    }
}

static inline int make_image(Image *img, VkFormat format, uint32_t w, uint32_t h, VkImageUsageFlags usage) {
    VkImageCreateInfo ici;
    VkMemoryRequirements req;
    VkMemoryAllocateInfo mai;
    VkImageViewCreateInfo vci;
    VkImageSubresourceRange range = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    int type;
    memset(img, 0, sizeof *img);
    range.aspectMask = img->aspect = format_aspect(format);
    memset(&ici, 0, sizeof ici);
    ici.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
    ici.imageType = VK_IMAGE_TYPE_2D;
    ici.format = format;
    ici.extent.width = w;
    ici.extent.height = h;
    ici.extent.depth = 1;
    ici.mipLevels = 1;
    ici.arrayLayers = 1;
    ici.samples = VK_SAMPLE_COUNT_1_BIT;
    ici.tiling = VK_IMAGE_TILING_OPTIMAL;
    ici.usage = usage;
    ici.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    if (vkCreateImage(g_device, &ici, NULL, &img->image) != VK_SUCCESS) return 0;
    vkGetImageMemoryRequirements(g_device, img->image, &req);
    type = find_memory(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type < 0) return 0;
    memset(&mai, 0, sizeof mai);
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = (uint32_t)type;
    if (vkAllocateMemory(g_device, &mai, NULL, &img->memory) != VK_SUCCESS) return 0;
    if (vkBindImageMemory(g_device, img->image, img->memory, 0) != VK_SUCCESS) return 0;
    memset(&vci, 0, sizeof vci);
    vci.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO;
    vci.image = img->image;
    vci.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vci.format = format;
    vci.subresourceRange = range;
    if (vkCreateImageView(g_device, &vci, NULL, &img->view) != VK_SUCCESS) return 0;
    /* What NVSDK_NGX_Create_ImageView_Resource_VK builds. */
    img->resource.Resource.ImageViewInfo.ImageView = img->view;
    img->resource.Resource.ImageViewInfo.Image = img->image;
    img->resource.Resource.ImageViewInfo.SubresourceRange = range;
    img->resource.Resource.ImageViewInfo.Format = format;
    img->resource.Resource.ImageViewInfo.Width = w;
    img->resource.Resource.ImageViewInfo.Height = h;
    img->resource.Type = NVSDK_NGX_RESOURCE_VK_TYPE_VK_IMAGEVIEW;
    img->resource.ReadWrite = (usage & VK_IMAGE_USAGE_STORAGE_BIT) != 0;
    return 1;
}

static inline void free_image(Image *img) {
    if (img->view) vkDestroyImageView(g_device, img->view, NULL);
    if (img->image) vkDestroyImage(g_device, img->image, NULL);
    if (img->memory) vkFreeMemory(g_device, img->memory, NULL);
}

/* A layout transition and/or dependency on one aspect of a single-mip, single-layer image. */
static inline void barrier_aspect(VkCommandBuffer cmd, VkImage image, VkImageAspectFlags aspect, VkImageLayout from,
                                  VkImageLayout to, VkAccessFlags src_access, VkAccessFlags dst_access,
                                  VkPipelineStageFlags src_stage, VkPipelineStageFlags dst_stage) {
    VkImageMemoryBarrier b;
    memset(&b, 0, sizeof b);
    b.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
    b.srcAccessMask = src_access;
    b.dstAccessMask = dst_access;
    b.oldLayout = from;
    b.newLayout = to;
    b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.image = image;
    b.subresourceRange.aspectMask = aspect;
    b.subresourceRange.levelCount = 1;
    b.subresourceRange.layerCount = 1;
    vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 0, NULL, 0, NULL, 1, &b);
}

/* barrier_aspect on a colour image. */
static inline void barrier(VkCommandBuffer cmd, VkImage image, VkImageLayout from, VkImageLayout to, VkAccessFlags src_access,
                    VkAccessFlags dst_access, VkPipelineStageFlags src_stage, VkPipelineStageFlags dst_stage) {
    barrier_aspect(cmd, image, VK_IMAGE_ASPECT_COLOR_BIT, from, to, src_access, dst_access, src_stage, dst_stage);
}

/* Copy `buffer` from `offset` (tightly packed) into `img` (its aspect: a depth image's depth
 * words), leaving it in SHADER_READ_ONLY_OPTIMAL. */
static inline void upload_image(VkCommandBuffer cmd, const Buffer *buffer, VkDeviceSize offset, const Image *img, uint32_t w,
                         uint32_t h) {
    VkBufferImageCopy region;
    memset(&region, 0, sizeof region);
    region.bufferOffset = offset;
    region.imageSubresource.aspectMask = img->aspect;
    region.imageSubresource.layerCount = 1;
    region.imageExtent.width = w;
    region.imageExtent.height = h;
    region.imageExtent.depth = 1;
    /* The previous frame's reads of the image finish before it is overwritten. */
    barrier_aspect(cmd, img->image, img->aspect, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0,
            VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
    vkCmdCopyBufferToImage(cmd, buffer->buffer, img->image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    barrier_aspect(cmd, img->image, img->aspect, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
            VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
}


/* A command pool on the compute queue's family (resettable buffers) and one primary command
 * buffer from it. */
static inline VkResult make_command_buffer(VkCommandPool *pool, VkCommandBuffer *cmd) {
    VkCommandPoolCreateInfo pci;
    VkCommandBufferAllocateInfo cai;
    VkResult r;
    memset(&pci, 0, sizeof pci);
    pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = g_family;
    r = vkCreateCommandPool(g_device, &pci, NULL, pool);
    if (r != VK_SUCCESS) return r;
    memset(&cai, 0, sizeof cai);
    cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cai.commandPool = *pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    return vkAllocateCommandBuffers(g_device, &cai, cmd);
}

/* Tear down what make_device created (the device must be idle and its objects freed). */
static inline void destroy_device(void) {
    if (g_device) vkDestroyDevice(g_device, NULL);
    if (g_messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy =
            (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(g_instance, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy) destroy(g_instance, g_messenger, NULL);
    }
    if (g_instance) vkDestroyInstance(g_instance, NULL);
    g_device = VK_NULL_HANDLE;
    g_messenger = VK_NULL_HANDLE;
    g_instance = VK_NULL_HANDLE;
}

#endif
