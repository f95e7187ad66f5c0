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

/* mallinfo2(3) for the trimmer's debug line: bytes in use and free in the arenas (all threads'),
 * and in blocks mmapped on their own. */
static napi_value stats(napi_env env, napi_callback_info info) {
  (void)info;
  struct mallinfo2 m = mallinfo2();
  napi_value result, v;
  napi_create_object(env, &result);
  napi_create_double(env, (double)m.uordblks, &v);
  napi_set_named_property(env, result, "inUse", v);
  napi_create_double(env, (double)m.fordblks, &v);
  napi_set_named_property(env, result, "free", v);
  napi_create_double(env, (double)m.hblkhd, &v);
  napi_set_named_property(env, result, "mmapped", v);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, trim, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "trim", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "stats", NAPI_AUTO_LENGTH, stats, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "stats", fn) != napi_ok) return NULL;
  return exports;
}
