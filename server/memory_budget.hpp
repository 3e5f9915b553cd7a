// MemoryBudget: one server-wide bound on the bytes the RPC listener holds for its peers (unfinished
// request frames and reply backlogs over all connections), lock-free. Each connection keeps a
// MemoryBudget::Account of what it holds and moves it to its new size after every change; the budget says
// whether the new size fits.
//
//   MemoryBudget budget(64 << 20);                       // one per listener (RpcShared)
//   MemoryBudget::Account mine(budget);                  // one per connection, released when destroyed
//   if (!mine.fits(bytes_wanted)) cut_or_pause();        // would the budget hold this?
//   mine.set(bytes_held);                                // what the connection holds now (always done)
//
// set() records what is really held, even beyond the limit (a reply already built cannot be unbuilt);
// callers ask fits() first and refuse what would not fit, so the total passes the limit by at most one
// small error frame per connection. peak() is the largest total seen, for /metrics and the tests.
#pragma once

#include <atomic>
#include <cstddef>

namespace shiftcast {

class MemoryBudget {
 public:
  explicit MemoryBudget(std::size_t limit_bytes) : limit_(limit_bytes) {}
  std::size_t limit() const { return limit_; }
  std::size_t used() const { return used_.load(std::memory_order_relaxed); }
  std::size_t peak() const { return peak_.load(std::memory_order_relaxed); }

  class Account {
   public:
    explicit Account(MemoryBudget& budget) : budget_(budget) {}
    ~Account() { set(0); }
    Account(const Account&) = delete;
    Account& operator=(const Account&) = delete;
    // Would holding `bytes` in total (instead of held()) keep the budget within its limit?
    bool fits(std::size_t bytes) const;
    void set(std::size_t bytes);
    std::size_t held() const { return held_; }

   private:
    MemoryBudget& budget_;
    std::size_t held_ = 0;
  };

 private:
  const std::size_t limit_;
  std::atomic<std::size_t> used_{0};
  std::atomic<std::size_t> peak_{0};
};

}  // namespace shiftcast
