// C++17: the library's parameter maps used through their virtual methods (the 17-slot vtable of
// the header's NVSDK_NGX_Parameter class), and an application-made NVSDK_NGX_Parameter subclass
// passed to the library, which must read and write it only through its own vtable.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <type_traits>
#include <variant>

#include "openngx.h"

#include "check.h"

namespace {

const VkInstance kInstance = reinterpret_cast<VkInstance>(std::uintptr_t{0x1000});
const VkPhysicalDevice kPd = reinterpret_cast<VkPhysicalDevice>(std::uintptr_t{0x2000});
const VkDevice kDevice = reinterpret_cast<VkDevice>(std::uintptr_t{0x3000});
const VkCommandBuffer kCmd = reinterpret_cast<VkCommandBuffer>(std::uintptr_t{0x4000});

// An application's own parameter map, as engines that wrap NGX sometimes write.
class AppParams final : public NVSDK_NGX_Parameter {
  public:
    using Value = std::variant<unsigned long long, float, double, unsigned int, int, void *>;
    std::map<std::string, Value> values;
    int calls = 0;

    void Set(const char *n, unsigned long long v) override { put(n, v); }
    void Set(const char *n, float v) override { put(n, v); }
    void Set(const char *n, double v) override { put(n, v); }
    void Set(const char *n, unsigned int v) override { put(n, v); }
    void Set(const char *n, int v) override { put(n, v); }
    void Set(const char *n, ID3D11Resource *v) override { put(n, static_cast<void *>(v)); }
    void Set(const char *n, ID3D12Resource *v) override { put(n, static_cast<void *>(v)); }
    void Set(const char *n, void *v) override { put(n, v); }
    NVSDK_NGX_Result Get(const char *n, unsigned long long *o) const override { return num(n, o); }
    NVSDK_NGX_Result Get(const char *n, float *o) const override { return num(n, o); }
    NVSDK_NGX_Result Get(const char *n, double *o) const override { return num(n, o); }
    NVSDK_NGX_Result Get(const char *n, unsigned int *o) const override { return num(n, o); }
    NVSDK_NGX_Result Get(const char *n, int *o) const override { return num(n, o); }
    NVSDK_NGX_Result Get(const char *, ID3D11Resource **) const override { return NVSDK_NGX_Result_Fail; }
    NVSDK_NGX_Result Get(const char *, ID3D12Resource **) const override { return NVSDK_NGX_Result_Fail; }
    NVSDK_NGX_Result Get(const char *n, void **o) const override {
        auto it = values.find(n);
        if (it == values.end() || !std::holds_alternative<void *>(it->second)) return NVSDK_NGX_Result_Fail;
        *o = std::get<void *>(it->second);
        return NVSDK_NGX_Result_Success;
    }
    void Reset() override { values.clear(); }

  private:
    template <class T> void put(const char *n, T v) {
        calls++;
        values[n] = v;
    }
    template <class T> NVSDK_NGX_Result num(const char *n, T *o) const {
        const_cast<AppParams *>(this)->calls++;
        auto it = values.find(n);
        if (it == values.end() || std::holds_alternative<void *>(it->second)) return NVSDK_NGX_Result_Fail;
        std::visit(
            [o](auto x) {
                if constexpr (!std::is_pointer_v<decltype(x)>) *o = static_cast<T>(x);
            },
            it->second);
        return NVSDK_NGX_Result_Success;
    }
};

}  // namespace

int main() {
    CHECK_CODE(NVSDK_NGX_VULKAN_Init(7, L"/tmp", kInstance, kPd, kDevice, nullptr, nullptr, nullptr, NVSDK_NGX_Version_API),
               NVSDK_NGX_Result_Success);

    // ---- the library's map through virtual calls ----
    NVSDK_NGX_Parameter *p = nullptr;
    CHECK_CODE(NVSDK_NGX_VULKAN_AllocateParameters(&p), NVSDK_NGX_Result_Success);
    p->Set("DLSSNR.Width", 640u);
    p->Set("Scale", 0.5f);
    p->Set("Big", 1ull << 33);
    p->Set("Signed", -7);
    p->Set("Double", 2.25);
    int marker = 0;
    p->Set("Ptr", static_cast<void *>(&marker));
    unsigned int ui = 0;
    float f = 0;
    double d = 0;
    int i = 0;
    unsigned long long ull = 0;
    void *vp = nullptr;
    CHECK_CODE(p->Get("DLSSNR.Width", &ui), NVSDK_NGX_Result_Success);
    CHECK_TRUE(ui == 640u);
    CHECK_CODE(p->Get("DLSSNR.Width", &f), NVSDK_NGX_Result_Success);  // numeric conversion
    CHECK_TRUE(f == 640.0f);
    CHECK_CODE(p->Get("Scale", &d), NVSDK_NGX_Result_Success);
    CHECK_TRUE(d == 0.5);
    CHECK_CODE(p->Get("Big", &ull), NVSDK_NGX_Result_Success);
    CHECK_TRUE(ull == (1ull << 33));
    CHECK_CODE(p->Get("Signed", &i), NVSDK_NGX_Result_Success);
    CHECK_TRUE(i == -7);
    CHECK_CODE(p->Get("Double", &f), NVSDK_NGX_Result_Success);
    CHECK_TRUE(f == 2.25f);
    CHECK_CODE(p->Get("Ptr", &vp), NVSDK_NGX_Result_Success);
    CHECK_TRUE(vp == &marker);
    ui = 99;
    CHECK_CODE(p->Get("Missing", &ui), NVSDK_NGX_Result_Fail);
    CHECK_TRUE(ui == 99);  // untouched
    CHECK_CODE(p->Get("Ptr", &ui), NVSDK_NGX_Result_FAIL_InvalidParameter);
    // A value stored through the vtable is visible to the C accessor and vice versa.
    NVSDK_NGX_Parameter_SetUI(p, "FromC", 11u);
    CHECK_CODE(p->Get("FromC", &i), NVSDK_NGX_Result_Success);
    CHECK_TRUE(i == 11);
    CHECK_CODE(NVSDK_NGX_Parameter_GetF(p, "Scale", &f), NVSDK_NGX_Result_Success);
    CHECK_TRUE(f == 0.5f);
    p->Reset();
    CHECK_CODE(p->Get("DLSSNR.Width", &ui), NVSDK_NGX_Result_Fail);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(p), NVSDK_NGX_Result_Success);

    // Reset() of a capability map restores its defaults.
    NVSDK_NGX_Parameter *caps = nullptr;
    CHECK_CODE(NVSDK_NGX_VULKAN_GetCapabilityParameters(&caps), NVSDK_NGX_Result_Success);
    caps->Set("DLSSNR.Available", 5);
    caps->Reset();
    CHECK_CODE(caps->Get("DLSSNR.Available", &i), NVSDK_NGX_Result_Success);
    CHECK_TRUE(i == 1); // the default: the DLSS-NR backend is built in
    void *cb = nullptr;
    CHECK_CODE(caps->Get("DLSSNRGetStatsCallback", &cb), NVSDK_NGX_Result_Success);
    CHECK_TRUE(cb != nullptr);

    // ---- an application-made object passed to the library ----
    AppParams app;
    if (cb) {
        auto stats = reinterpret_cast<PFN_NVSDK_NGX_DLSS_GetStatsCallback>(cb);
        CHECK_CODE(stats(&app), NVSDK_NGX_Result_Success);  // writes through app's virtual Set
        CHECK_TRUE(app.values.count("SizeInBytes") == 1 && std::holds_alternative<unsigned long long>(app.values["SizeInBytes"]));
        CHECK_TRUE(app.values.count("#\x44") == 1 && std::get<unsigned int>(app.values["#\x44"]) == NVSDK_NGX_OPT_LEVEL_RELEASE);
    }
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(caps), NVSDK_NGX_Result_Success);

    // C accessors dispatch to the application's vtable.
    app.Set("K", 3u);
    CHECK_CODE(NVSDK_NGX_Parameter_GetUI(&app, "K", &ui), NVSDK_NGX_Result_Success);
    CHECK_TRUE(ui == 3u);
    NVSDK_NGX_Parameter_SetF(&app, "F", 1.5f);
    CHECK_TRUE(std::get<float>(app.values["F"]) == 1.5f);
    CHECK_CODE(NVSDK_NGX_VULKAN_DestroyParameters(&app), NVSDK_NGX_Result_FAIL_InvalidParameter);  // not ours

    // CreateFeature reads the application's object through its vtable: validation runs on it.
    NVSDK_NGX_Handle *h = nullptr;
    int before = app.calls;
    CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature(kCmd, NVSDK_NGX_Feature_Reserved18, &app, &h), NVSDK_NGX_Result_FAIL_InvalidParameter);
    CHECK_TRUE(app.calls > before);
    app.Set("DLSSNR.Width", 256u);
    app.Set("DLSSNR.Height", 256);  // int setter: the library's unsigned read converts
    setenv("OPENNGX_MODEL_DIR", "/nonexistent/openngx-model", 1);
    CHECK_CODE(NVSDK_NGX_VULKAN_CreateFeature(kCmd, NVSDK_NGX_Feature_Reserved18, &app, &h),
               NVSDK_NGX_Result_FAIL_UnableToInitializeFeature);  // validation passed, model lookup failed
    CHECK_TRUE(h == nullptr);

    // The C++ EvaluateFeature overload takes the bool& callback type.
    PFN_NVSDK_NGX_ProgressCallback progress = [](float, bool &cancel) { cancel = false; };
    NVSDK_NGX_Handle stale{1};
    CHECK_CODE(NVSDK_NGX_VULKAN_EvaluateFeature(kCmd, &stale, &app, progress), NVSDK_NGX_Result_FAIL_FeatureNotFound);

    CHECK_CODE(NVSDK_NGX_VULKAN_Shutdown1(kDevice), NVSDK_NGX_Result_Success);
    return check_finish("params (C++)");
}
