#include "task_memory.h"

// The Swift runtime's task allocator, through which every async frame is allocated
// (swift/Runtime/Concurrency.h); both use the Swift calling convention.
extern void *swift_task_alloc(size_t size) __attribute__((swiftcall));
extern void swift_task_dealloc(void *pointer) __attribute__((swiftcall));

void discfg_task_memory_reserve(size_t bytes) {
    swift_task_dealloc(swift_task_alloc(bytes));
}
