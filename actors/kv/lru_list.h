// An intrusive doubly linked list of block ids with O(1) push, remove and pop: the order in which
// cached, unreferenced blocks are evicted (front = least recently used).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace zinfer::kv {

class LruList {
 public:
  explicit LruList(int32_t capacity)
      : prev_(capacity, -1), next_(capacity, -1), member_(capacity, false) {}

  int32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool contains(int32_t id) const { return member_[id]; }
  int32_t front() const { return head_; }

  // Appends as the most recently used.
  void push_back(int32_t id) {
    if (member_[id]) throw std::logic_error("LruList: block " + std::to_string(id) + " listed twice");
    member_[id] = true;
    prev_[id] = tail_;
    next_[id] = -1;
    if (tail_ >= 0) next_[tail_] = id; else head_ = id;
    tail_ = id;
    ++size_;
  }

  void remove(int32_t id) {
    if (!member_[id]) throw std::logic_error("LruList: block " + std::to_string(id) + " not listed");
    if (prev_[id] >= 0) next_[prev_[id]] = next_[id]; else head_ = next_[id];
    if (next_[id] >= 0) prev_[next_[id]] = prev_[id]; else tail_ = prev_[id];
    member_[id] = false;
    --size_;
  }

  int32_t pop_front() {
    int32_t id = head_;
    if (id < 0) throw std::logic_error("LruList: pop from an empty list");
    remove(id);
    return id;
  }

  // The ids from least to most recently used (for tests and statistics).
  std::vector<int32_t> in_order() const {
    std::vector<int32_t> out;
    for (int32_t id = head_; id >= 0; id = next_[id]) out.push_back(id);
    return out;
  }

 private:
  std::vector<int32_t> prev_, next_;
  std::vector<bool> member_;
  int32_t head_ = -1, tail_ = -1, size_ = 0;
};

}  // namespace zinfer::kv
