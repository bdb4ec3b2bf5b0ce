import CTaskMemory

/// Task memory for a call, taken in one piece.
///
/// An async function's frame lives in its task's memory, which the runtime hands out in
/// slabs of about 1 KiB, allocated as frames grow and freed with the task. A call runs
/// in a task of its own, and its chain of frames (transport, method, pipeline, store)
/// takes 20 KiB and more: some 15 slabs allocated and freed for every call. The runtime
/// keeps an emptied slab for the task's next frames, so a block of ``bytes`` taken and
/// given back first leaves one slab that the call's frames fill instead.
enum TaskStack {
    /// The size of the slab ``reserve()`` leaves.
    static let bytes = 32 * 1024

    /// Leaves the current task an empty slab of ``bytes``; call it first in the task.
    static func reserve() {
        discfg_task_memory_reserve(bytes)
    }
}
