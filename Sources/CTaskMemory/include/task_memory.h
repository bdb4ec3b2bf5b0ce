#ifndef DISCFG_TASK_MEMORY_H
#define DISCFG_TASK_MEMORY_H

#include <stddef.h>

/// Takes `bytes` from the current task's allocator and gives them back at once, which
/// leaves the task one slab of at least that size for the frames that follow (the
/// allocator keeps an emptied slab and fills it before it allocates another).
void discfg_task_memory_reserve(size_t bytes);

#endif
