#include "server/memory_budget.hpp"

namespace shiftcast {

bool MemoryBudget::Account::fits(std::size_t bytes) const {
  if (bytes <= held_) return true;
  return budget_.used() + (bytes - held_) <= budget_.limit();
}

void MemoryBudget::Account::set(std::size_t bytes) {
  if (bytes == held_) return;
  if (bytes > held_) {
    const std::size_t total =
        budget_.used_.fetch_add(bytes - held_, std::memory_order_relaxed) + (bytes - held_);
    std::size_t peak = budget_.peak_.load(std::memory_order_relaxed);
    while (total > peak && !budget_.peak_.compare_exchange_weak(peak, total, std::memory_order_relaxed)) {
    }
  } else {
    budget_.used_.fetch_sub(held_ - bytes, std::memory_order_relaxed);
  }
  held_ = bytes;
}

}  // namespace shiftcast
