/* malloc_trim(3) for the daemon (src/util/malloc-trim.ts): glibc returns freed memory to the OS
 * only from the top of its heap, so the buffers of a burst (streamed logs, a pull) that die among
 * a few survivors leave megabytes of free pages resident for good (measured: 25-70 MiB after 256
 * MiB of logs). malloc_trim also releases the free pages inside the heap (madvise DONTNEED).
 * Built by scripts/build-native.mjs into build/native/malloc-trim.node; optional at run time. */
#include <malloc.h>
#include <node_api.h>

static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
  napi_get_boolean(env, malloc_trim(0) == 1, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, trim, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "trim", fn) != napi_ok) return NULL;
  return exports;
}
