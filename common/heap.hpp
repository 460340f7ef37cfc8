// Hands the heap's free pages back to the system. A large passing structure (the report a
// checkpoint builds every minute) is freed at once, but glibc keeps freed pages that lie among live
// ones, since it trims only the top of a heap: without this the process would hold every
// checkpoint's peak for the rest of a run that lasts hours.
#pragma once

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tusk {

inline void return_free_heap_pages() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace tusk
