// Owning wrapper for a libuv handle. libuv may still touch a handle after
// uv_close() until its close callback runs, so the memory is freed there and
// never earlier; the owner can go away at once.
#pragma once

#include <uv.h>

namespace sup {

template <class T>
class UvHandle {
 public:
  UvHandle() = default;
  UvHandle(const UvHandle&) = delete;
  UvHandle& operator=(const UvHandle&) = delete;
  ~UvHandle() { close(); }

  // Allocates the handle; the caller then runs uv_*_init on get().
  T* create() {
    close();
    handle_ = new T();
    return handle_;
  }
  T* get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  // Frees a handle whose uv_*_init failed: libuv never saw it, and
  // uv_close on it would corrupt the loop's handle queue.
  void discard() noexcept {
    delete handle_;
    handle_ = nullptr;
  }
  // In a forked child, where the loop that owns the handle has no thread:
  // drops it unclosed (its few bytes are lost with that loop).
  void forget() noexcept { handle_ = nullptr; }
  // Must run on the loop thread, like every libuv call.
  void close() noexcept {
    if (handle_ == nullptr) return;
    uv_close(reinterpret_cast<uv_handle_t*>(handle_), [](uv_handle_t* h) {
      delete reinterpret_cast<T*>(h);
    });
    handle_ = nullptr;
  }

 private:
  T* handle_ = nullptr;
};

}  // namespace sup
