/* Feature 18 on a real Vulkan device (lavapipe in CI): the program creates its own instance,
 * device, queue, command buffer and images, initialises NGX with them and creates/evaluates the
 * feature the way an engine does.
 *
 * Today no DLSS-NR backend is built in: the capability map says DLSSNR.Available = 0 and
 * CreateFeature must fail with FAIL_NotImplemented. Once a backend is registered the same
 * program takes the other branch: create -> evaluate (recorded into the command buffer,
 * submitted, waited on) -> release -> release again / evaluate after release (FeatureNotFound).
 * Exit code 77 = skipped (no Vulkan device). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#include "check.h"
#include "openngx.h"

#define W 128
#define H 96
#define SKIP 77

typedef struct Image {
    VkImage image;
    VkDeviceMemory memory;
    VkImageView view;
    NVSDK_NGX_Resource_VK resource;
} Image;

static VkInstance g_instance;
static VkPhysicalDevice g_pd;
static VkDevice g_device;
static VkQueue g_queue;
static uint32_t g_family;

static int find_memory(uint32_t bits, VkMemoryPropertyFlags want) {
    VkPhysicalDeviceMemoryProperties mp;
    uint32_t i;
    vkGetPhysicalDeviceMemoryProperties(g_pd, &mp);
    for (i = 0; i < mp.memoryTypeCount; i++) {
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return (int)i;
    }
    return -1;
}

static int make_image(Image *img, VkFormat format, VkImageUsageFlags usage) {
    VkImageCreateInfo ici;
    VkMemoryRequirements req;
    VkMemoryAllocateInfo mai;
    VkImageViewCreateInfo vci;
    VkImageSubresourceRange range = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    int type;
    memset(img, 0, sizeof *img);
    memset(&ici, 0, sizeof ici);
    ici.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
    ici.imageType = VK_IMAGE_TYPE_2D;
    ici.format = format;
    ici.extent.width = W;
    ici.extent.height = H;
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
    memset(&img->resource, 0, sizeof img->resource);
    img->resource.Resource.ImageViewInfo.ImageView = img->view;
    img->resource.Resource.ImageViewInfo.Image = img->image;
    img->resource.Resource.ImageViewInfo.SubresourceRange = range;
    img->resource.Resource.ImageViewInfo.Format = format;
    img->resource.Resource.ImageViewInfo.Width = W;
    img->resource.Resource.ImageViewInfo.Height = H;
    img->resource.Type = NVSDK_NGX_RESOURCE_VK_TYPE_VK_IMAGEVIEW;
    img->resource.ReadWrite = (usage & VK_IMAGE_USAGE_STORAGE_BIT) != 0;
    return 1;
}

static void free_image(Image *img) {
    if (img->view) vkDestroyImageView(g_device, img->view, NULL);
    if (img->image) vkDestroyImage(g_device, img->image, NULL);
    if (img->memory) vkFreeMemory(g_device, img->memory, NULL);
}

static int make_device(void) {
    VkApplicationInfo app;
    VkInstanceCreateInfo ici;
    VkDeviceCreateInfo dci;
    VkDeviceQueueCreateInfo qci;
    VkQueueFamilyProperties families[16];
    uint32_t n = 1, nf = 16, i;
    float prio = 1.0f;
    memset(&app, 0, sizeof app);
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "openngx capi device test";
    app.apiVersion = VK_API_VERSION_1_2;
    memset(&ici, 0, sizeof ici);
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pApplicationInfo = &app;
    if (vkCreateInstance(&ici, NULL, &g_instance) != VK_SUCCESS) return 0;
    if (vkEnumeratePhysicalDevices(g_instance, &n, &g_pd) < 0 || n == 0) return 0;
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
    memset(&dci, 0, sizeof dci);
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    if (vkCreateDevice(g_pd, &dci, NULL, &g_device) != VK_SUCCESS) return 0;
    vkGetDeviceQueue(g_device, g_family, 0, &g_queue);
    return 1;
}

int main(void) {
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkCommandPoolCreateInfo pci;
    VkCommandBufferAllocateInfo cai;
    VkCommandBufferBeginInfo bi;
    Image color, output, motion;
    NVSDK_NGX_Parameter *caps = NULL, *create = NULL, *eval = NULL;
    NVSDK_NGX_Handle *h = NULL;
    char model_dir[] = "/tmp/openngx-device-XXXXXX";
    char manifest[64];
    FILE *mf;
    int available = -1;

    if (!make_device()) {
        printf("device: SKIP (no Vulkan device)\n");
        return SKIP;
    }
    memset(&pci, 0, sizeof pci);
    pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pci.queueFamilyIndex = g_family;
    CHECK_CODE(vkCreateCommandPool(g_device, &pci, NULL, &pool), VK_SUCCESS);
    memset(&cai, 0, sizeof cai);
    cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cai.commandPool = pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    CHECK_CODE(vkAllocateCommandBuffers(g_device, &cai, &cmd), VK_SUCCESS);
    CHECK_TRUE(make_image(&color, VK_FORMAT_R16G16B16A16_SFLOAT, VK_IMAGE_USAGE_SAMPLED_BIT));
    CHECK_TRUE(make_image(&output, VK_FORMAT_R16G16B16A16_SFLOAT, VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT));
    CHECK_TRUE(make_image(&motion, VK_FORMAT_R16G16_SFLOAT, VK_IMAGE_USAGE_SAMPLED_BIT));

    /* A model directory the default validator accepts (a backend's validator checks more). */
    CHECK_TRUE(mkdtemp(model_dir) != NULL);
    snprintf(manifest, sizeof manifest, "%s/manifest.json", model_dir);
    mf = fopen(manifest, "w");
    if (mf) {
        fputs("{}", mf);
        fclose(mf);
    }
    if (getenv("OPENNGX_MODEL_DIR") == NULL) setenv("OPENNGX_MODEL_DIR", model_dir, 1);

    CHECK_CODE(NVSDK_NGX_VULKAN_Init(0x42, L"/tmp", g_instance, g_pd, g_device, vkGetInstanceProcAddr, vkGetDeviceProcAddr,
                                     NULL, NVSDK_NGX_Version_API),
               NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_GetCapabilityParameters(&caps), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_Parameter_GetI(caps, "DLSSNR.Available", &available), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&create), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&eval), NVSDK_NGX_Result_Success);
    NVSDK_NGX_Parameter_SetUI(create, "DLSSNR.Width", W);
    NVSDK_NGX_Parameter_SetUI(create, "DLSSNR.Height", H);
    NVSDK_NGX_Parameter_SetUI(create, "CreationNodeMask", 1);
    NVSDK_NGX_Parameter_SetUI(create, "VisibilityNodeMask", 1);
    NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.Color", &color.resource);
    NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.Output", &output.resource);
    NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.MVec", &motion.resource);
    NVSDK_NGX_Parameter_SetF(eval, "DLSSNR.MVecScaleX", 1.0f);
    NVSDK_NGX_Parameter_SetF(eval, "DLSSNR.MVecScaleY", 1.0f);
    NVSDK_NGX_Parameter_SetUI(eval, "DLSSNR.Reset", 1);

    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    CHECK_CODE(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
    if (available == 0) {
        CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(g_device, cmd, NVSDK_NGX_Feature_Reserved18, create, &h),
                   NVSDK_NGX_Result_FAIL_NotImplemented);
        CHECK_TRUE(h == NULL);
        CHECK_CODE(vkEndCommandBuffer(cmd), VK_SUCCESS);
    } else {
        VkSubmitInfo si;
        NVSDK_NGX_Resource_VK not_storage = output.resource;
        not_storage.ReadWrite = false;
        CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature1(g_device, cmd, NVSDK_NGX_Feature_Reserved18, create, &h),
                   NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, h, eval, NULL), NVSDK_NGX_Result_Success);
        NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.Output", &not_storage);
        CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, h, eval, NULL), NVSDK_NGX_Result_FAIL_RWFlagMissing);
        CHECK_CODE(vkEndCommandBuffer(cmd), VK_SUCCESS);
        memset(&si, 0, sizeof si);
        si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cmd;
        CHECK_CODE(vkQueueSubmit(g_queue, 1, &si, VK_NULL_HANDLE), VK_SUCCESS);
        CHECK_CODE(vkQueueWaitIdle(g_queue), VK_SUCCESS);
        CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(h), NVSDK_NGX_Result_Success);
        CHECK_CODE(NVSDK_NGX_VULKAN_ReleaseFeature(h), NVSDK_NGX_Result_FAIL_FeatureNotFound);
        NVSDK_NGX_Parameter_SetVoidPointer(eval, "DLSSNR.Output", &output.resource);
        CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature_C(cmd, h, eval, NULL), NVSDK_NGX_Result_FAIL_FeatureNotFound);
    }
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(caps), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(create), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(eval), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(g_device), NVSDK_NGX_Result_Success);
    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(g_device), NVSDK_NGX_Result_FAIL_NotInitialized);

    vkDeviceWaitIdle(g_device);
    free_image(&color);
    free_image(&output);
    free_image(&motion);
    vkDestroyCommandPool(g_device, pool, NULL);
    vkDestroyDevice(g_device, NULL);
    vkDestroyInstance(g_instance, NULL);
    unlink(manifest);
    rmdir(model_dir);
    printf("device: DLSSNR.Available = %d\n", available);
    return check_finish("device");
}
