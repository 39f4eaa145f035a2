/* Compile-time checks of include/openngx.h: it parses as C99 and as C++17 with warnings as
 * errors, the struct layouts match the x86-64 NGX ABI, and every entry point has NVIDIA's
 * parameter types (checked by assigning each function to a pointer of the exact SDK type). */
#include "openngx.h"

#ifdef __cplusplus
#include <cstddef>
#define CHECK(cond, name) static_assert(cond, #name)
#else
#include <stddef.h>
#define CHECK(cond, name) typedef char check_##name[(cond) ? 1 : -1]
#endif

CHECK(sizeof(NVSDK_NGX_Result) == 4, result_size);
CHECK(sizeof(NVSDK_NGX_Handle) == 4, handle_size);
CHECK(sizeof(NVSDK_NGX_ImageViewInfo_VK) == 48, image_view_info_size);
CHECK(offsetof(NVSDK_NGX_ImageViewInfo_VK, SubresourceRange) == 16, subresource_offset);
CHECK(offsetof(NVSDK_NGX_ImageViewInfo_VK, Format) == 36, format_offset);
CHECK(offsetof(NVSDK_NGX_ImageViewInfo_VK, Width) == 40, width_offset);
CHECK(offsetof(NVSDK_NGX_ImageViewInfo_VK, Height) == 44, height_offset);
CHECK(sizeof(NVSDK_NGX_BufferInfo_VK) == 16, buffer_info_size);
CHECK(sizeof(NVSDK_NGX_Resource_VK) == 56, resource_size);
CHECK(offsetof(NVSDK_NGX_Resource_VK, Type) == 48, resource_type_offset);
CHECK(offsetof(NVSDK_NGX_Resource_VK, ReadWrite) == 52, resource_rw_offset);
CHECK(sizeof(NVSDK_NGX_PathListInfo) == 16, path_list_size);
CHECK(sizeof(NVSDK_NGX_LoggingInfo) == 16, logging_info_size);
CHECK(offsetof(NVSDK_NGX_LoggingInfo, DisableOtherLoggingSinks) == 12, disable_sinks_offset);
CHECK(sizeof(NVSDK_NGX_FeatureCommonInfo) == 40, common_info_size);
CHECK(offsetof(NVSDK_NGX_FeatureCommonInfo, LoggingInfo) == 24, logging_offset);
CHECK(sizeof(NVSDK_NGX_ProjectIdDescription) == 24, project_desc_size);
CHECK(sizeof(NVSDK_NGX_Application_Identifier) == 32, app_id_size);
CHECK(sizeof(NVSDK_NGX_FeatureDiscoveryInfo) == 56, discovery_size);
CHECK(offsetof(NVSDK_NGX_FeatureDiscoveryInfo, ApplicationDataPath) == 40, discovery_path_offset);
CHECK(sizeof(NVSDK_NGX_FeatureRequirement) == 264, requirement_size);
CHECK(NVSDK_NGX_FAILED(NVSDK_NGX_Result_FAIL_NotImplemented), failed_macro);
CHECK(NVSDK_NGX_SUCCEED(NVSDK_NGX_Result_Success), succeed_macro);
CHECK(NVSDK_NGX_Result_Fail == 0xBAD00000u, fail_value);
CHECK(NVSDK_NGX_Version_API == 0x15, version_api);

/* The SDK's signatures, spelled with the SDK's C types. */
typedef NVSDK_NGX_Result (*init_t)(unsigned long long, const wchar_t *, VkInstance, VkPhysicalDevice, VkDevice,
                                   PFN_vkGetInstanceProcAddr, PFN_vkGetDeviceProcAddr,
                                   const NVSDK_NGX_FeatureCommonInfo *, NVSDK_NGX_Version);
typedef NVSDK_NGX_Result (*init_pid_t)(const char *, NVSDK_NGX_EngineType, const char *, const wchar_t *, VkInstance,
                                       VkPhysicalDevice, VkDevice, PFN_vkGetInstanceProcAddr,
                                       PFN_vkGetDeviceProcAddr, const NVSDK_NGX_FeatureCommonInfo *,
                                       NVSDK_NGX_Version);
typedef NVSDK_NGX_Result (*required_ext_t)(unsigned int *, const char ***, unsigned int *, const char ***);
typedef NVSDK_NGX_Result (*shutdown_t)(void);
typedef NVSDK_NGX_Result (*shutdown1_t)(VkDevice);
typedef NVSDK_NGX_Result (*params_out_t)(NVSDK_NGX_Parameter **);
typedef NVSDK_NGX_Result (*destroy_t)(NVSDK_NGX_Parameter *);
typedef NVSDK_NGX_Result (*scratch_t)(NVSDK_NGX_Feature, const NVSDK_NGX_Parameter *, size_t *);
typedef NVSDK_NGX_Result (*create_t)(VkCommandBuffer, NVSDK_NGX_Feature, NVSDK_NGX_Parameter *, NVSDK_NGX_Handle **);
typedef NVSDK_NGX_Result (*create1_t)(VkDevice, VkCommandBuffer, NVSDK_NGX_Feature, NVSDK_NGX_Parameter *,
                                      NVSDK_NGX_Handle **);
typedef NVSDK_NGX_Result (*eval_t)(VkCommandBuffer, const NVSDK_NGX_Handle *, const NVSDK_NGX_Parameter *,
                                   PFN_NVSDK_NGX_ProgressCallback);
typedef NVSDK_NGX_Result (*eval_c_t)(VkCommandBuffer, const NVSDK_NGX_Handle *, const NVSDK_NGX_Parameter *,
                                     PFN_NVSDK_NGX_ProgressCallback_C);
typedef NVSDK_NGX_Result (*release_t)(NVSDK_NGX_Handle *);
typedef NVSDK_NGX_Result (*requirements_t)(const VkInstance, const VkPhysicalDevice,
                                           const NVSDK_NGX_FeatureDiscoveryInfo *, NVSDK_NGX_FeatureRequirement *);
typedef NVSDK_NGX_Result (*inst_ext_t)(const NVSDK_NGX_FeatureDiscoveryInfo *, uint32_t *, VkExtensionProperties **);
typedef NVSDK_NGX_Result (*dev_ext_t)(VkInstance, VkPhysicalDevice, const NVSDK_NGX_FeatureDiscoveryInfo *,
                                      uint32_t *, VkExtensionProperties **);
typedef NVSDK_NGX_Result (*update_t)(const NVSDK_NGX_Application_Identifier *, const NVSDK_NGX_Feature);
typedef const wchar_t *(*result_string_t)(NVSDK_NGX_Result);
typedef void (*set_ull_t)(NVSDK_NGX_Parameter *, const char *, unsigned long long);
typedef void (*set_f_t)(NVSDK_NGX_Parameter *, const char *, float);
typedef void (*set_d_t)(NVSDK_NGX_Parameter *, const char *, double);
typedef void (*set_ui_t)(NVSDK_NGX_Parameter *, const char *, unsigned int);
typedef void (*set_i_t)(NVSDK_NGX_Parameter *, const char *, int);
typedef void (*set_d3d11_t)(NVSDK_NGX_Parameter *, const char *, ID3D11Resource *);
typedef void (*set_d3d12_t)(NVSDK_NGX_Parameter *, const char *, ID3D12Resource *);
typedef void (*set_vp_t)(NVSDK_NGX_Parameter *, const char *, void *);
typedef NVSDK_NGX_Result (*get_ull_t)(NVSDK_NGX_Parameter *, const char *, unsigned long long *);
typedef NVSDK_NGX_Result (*get_f_t)(NVSDK_NGX_Parameter *, const char *, float *);
typedef NVSDK_NGX_Result (*get_d_t)(NVSDK_NGX_Parameter *, const char *, double *);
typedef NVSDK_NGX_Result (*get_ui_t)(NVSDK_NGX_Parameter *, const char *, unsigned int *);
typedef NVSDK_NGX_Result (*get_i_t)(NVSDK_NGX_Parameter *, const char *, int *);
typedef NVSDK_NGX_Result (*get_d3d11_t)(NVSDK_NGX_Parameter *, const char *, ID3D11Resource **);
typedef NVSDK_NGX_Result (*get_d3d12_t)(NVSDK_NGX_Parameter *, const char *, ID3D12Resource **);
typedef NVSDK_NGX_Result (*get_vp_t)(NVSDK_NGX_Parameter *, const char *, void **);

/* Implicit conversions: a missing or mistyped declaration fails to compile. */
init_t const check_NVSDK_NGX_VULKAN_Init = NVSDK_NGX_VULKAN_Init;
init_pid_t const check_NVSDK_NGX_VULKAN_Init_with_ProjectID = NVSDK_NGX_VULKAN_Init_with_ProjectID;
required_ext_t const check_NVSDK_NGX_VULKAN_RequiredExtensions = NVSDK_NGX_VULKAN_RequiredExtensions;
shutdown_t const check_NVSDK_NGX_VULKAN_Shutdown = NVSDK_NGX_VULKAN_Shutdown;
shutdown1_t const check_NVSDK_NGX_VULKAN_Shutdown1 = NVSDK_NGX_VULKAN_Shutdown1;
params_out_t const check_NVSDK_NGX_VULKAN_GetParameters = NVSDK_NGX_VULKAN_GetParameters;
params_out_t const check_NVSDK_NGX_VULKAN_AllocateParameters = NVSDK_NGX_VULKAN_AllocateParameters;
params_out_t const check_NVSDK_NGX_VULKAN_GetCapabilityParameters = NVSDK_NGX_VULKAN_GetCapabilityParameters;
destroy_t const check_NVSDK_NGX_VULKAN_DestroyParameters = NVSDK_NGX_VULKAN_DestroyParameters;
scratch_t const check_NVSDK_NGX_VULKAN_GetScratchBufferSize = NVSDK_NGX_VULKAN_GetScratchBufferSize;
create_t const check_NVSDK_NGX_VULKAN_CreateFeature = NVSDK_NGX_VULKAN_CreateFeature;
create1_t const check_NVSDK_NGX_VULKAN_CreateFeature1 = NVSDK_NGX_VULKAN_CreateFeature1;
eval_t const check_NVSDK_NGX_VULKAN_EvaluateFeature = NVSDK_NGX_VULKAN_EvaluateFeature;
eval_c_t const check_NVSDK_NGX_VULKAN_EvaluateFeature_C = NVSDK_NGX_VULKAN_EvaluateFeature_C;
release_t const check_NVSDK_NGX_VULKAN_ReleaseFeature = NVSDK_NGX_VULKAN_ReleaseFeature;
requirements_t const check_NVSDK_NGX_VULKAN_GetFeatureRequirements = NVSDK_NGX_VULKAN_GetFeatureRequirements;
inst_ext_t const check_NVSDK_NGX_VULKAN_GetFeatureInstanceExtensionRequirements = NVSDK_NGX_VULKAN_GetFeatureInstanceExtensionRequirements;
dev_ext_t const check_NVSDK_NGX_VULKAN_GetFeatureDeviceExtensionRequirements = NVSDK_NGX_VULKAN_GetFeatureDeviceExtensionRequirements;
update_t const check_NVSDK_NGX_UpdateFeature = NVSDK_NGX_UpdateFeature;
result_string_t const check_GetNGXResultAsString = GetNGXResultAsString;
set_ull_t const check_NVSDK_NGX_Parameter_SetULL = NVSDK_NGX_Parameter_SetULL;
set_f_t const check_NVSDK_NGX_Parameter_SetF = NVSDK_NGX_Parameter_SetF;
set_d_t const check_NVSDK_NGX_Parameter_SetD = NVSDK_NGX_Parameter_SetD;
set_ui_t const check_NVSDK_NGX_Parameter_SetUI = NVSDK_NGX_Parameter_SetUI;
set_i_t const check_NVSDK_NGX_Parameter_SetI = NVSDK_NGX_Parameter_SetI;
set_d3d11_t const check_NVSDK_NGX_Parameter_SetD3d11Resource = NVSDK_NGX_Parameter_SetD3d11Resource;
set_d3d12_t const check_NVSDK_NGX_Parameter_SetD3d12Resource = NVSDK_NGX_Parameter_SetD3d12Resource;
set_vp_t const check_NVSDK_NGX_Parameter_SetVoidPointer = NVSDK_NGX_Parameter_SetVoidPointer;
get_ull_t const check_NVSDK_NGX_Parameter_GetULL = NVSDK_NGX_Parameter_GetULL;
get_f_t const check_NVSDK_NGX_Parameter_GetF = NVSDK_NGX_Parameter_GetF;
get_d_t const check_NVSDK_NGX_Parameter_GetD = NVSDK_NGX_Parameter_GetD;
get_ui_t const check_NVSDK_NGX_Parameter_GetUI = NVSDK_NGX_Parameter_GetUI;
get_i_t const check_NVSDK_NGX_Parameter_GetI = NVSDK_NGX_Parameter_GetI;
get_d3d11_t const check_NVSDK_NGX_Parameter_GetD3d11Resource = NVSDK_NGX_Parameter_GetD3d11Resource;
get_d3d12_t const check_NVSDK_NGX_Parameter_GetD3d12Resource = NVSDK_NGX_Parameter_GetD3d12Resource;
get_vp_t const check_NVSDK_NGX_Parameter_GetVoidPointer = NVSDK_NGX_Parameter_GetVoidPointer;
