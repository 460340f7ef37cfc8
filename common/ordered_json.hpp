// A JSON type that keeps an object's keys in the order they were read, as nlohmann::ordered_json
// does, and finds a key in constant time where ordered_json scans every key: its parser inserts
// each key by a lookup, so reading one object of n keys cost n²/2 comparisons (a report.json whose
// one object had 100,000 keys took 14 s). Files and command output that a peer may have shaped are
// parsed into OrderedJson; code that only writes its own documents may keep ordered_json, and one
// converts to the other in one pass (nlohmann's converting constructor).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tusk {

// nlohmann::ordered_map's interface (all that basic_json uses of an ObjectType) over the same
// vector of pairs, plus an index of each key's position once the object outgrows a short scan.
// Derived from the vector as ordered_map is: basic_json compares objects through the vector's
// operators and, with JSON_DIAGNOSTICS, tells a vector-backed map by its capacity().
template <class Key, class T, class IgnoredLess = std::less<Key>,
          class Allocator = std::allocator<std::pair<const Key, T>>>
class IndexedOrderedMap : public std::vector<std::pair<const Key, T>, Allocator> {
 public:
  using key_type = Key;
  using mapped_type = T;
  using Container = std::vector<std::pair<const Key, T>, Allocator>;
  using iterator = typename Container::iterator;
  using const_iterator = typename Container::const_iterator;
  using size_type = typename Container::size_type;
  using value_type = typename Container::value_type;
  using key_compare = std::equal_to<>;

 private:
  // Up to this many keys an object is scanned, as ordered_map does: nearly every object of a
  // report or of lldpcli's output is this small, and an index would cost more than it saves.
  static constexpr size_type kScannedUpTo = 16;

  // The overloads for keys of another type (const char*, std::string_view), as ordered_map has.
  template <class KeyType>
  using OtherKey = std::enable_if_t<!std::is_same_v<std::remove_cv_t<std::remove_reference_t<KeyType>>, key_type> &&
                                        !std::is_convertible_v<KeyType, iterator> &&
                                        !std::is_convertible_v<KeyType, const_iterator> &&
                                        std::is_constructible_v<key_type, KeyType>,
                                    int>;

 public:
  IndexedOrderedMap() noexcept(noexcept(Container())) : Container{} {}
  explicit IndexedOrderedMap(const Allocator& alloc) noexcept(noexcept(Container(alloc))) : Container{alloc} {}
  // A key given twice keeps its first value, as std::map's range constructor does.
  template <class It>
  IndexedOrderedMap(It first, It last, const Allocator& alloc = Allocator()) : Container{alloc} {
    insert(first, last);
  }
  IndexedOrderedMap(std::initializer_list<value_type> init, const Allocator& alloc = Allocator())
      : IndexedOrderedMap(init.begin(), init.end(), alloc) {}

  std::pair<iterator, bool> emplace(const key_type& key, T&& value) {
    if (const auto found = find(key); found != this->end()) return {found, false};
    Container::emplace_back(key, std::forward<T>(value));
    index_last();
    return {std::prev(this->end()), true};
  }
  template <class KeyType, OtherKey<KeyType> = 0>
  std::pair<iterator, bool> emplace(KeyType&& key, T&& value) {
    return emplace(key_type(std::forward<KeyType>(key)), std::forward<T>(value));
  }

  T& operator[](const key_type& key) { return emplace(key, T{}).first->second; }
  template <class KeyType, OtherKey<KeyType> = 0>
  T& operator[](KeyType&& key) {
    return emplace(key_type(std::forward<KeyType>(key)), T{}).first->second;
  }
  const T& operator[](const key_type& key) const { return at(key); }
  template <class KeyType, OtherKey<KeyType> = 0>
  const T& operator[](KeyType&& key) const {
    return at(key_type(std::forward<KeyType>(key)));
  }

  T& at(const key_type& key) { return this->begin()[found_position(key)].second; }
  const T& at(const key_type& key) const { return this->begin()[found_position(key)].second; }
  template <class KeyType, OtherKey<KeyType> = 0>
  T& at(KeyType&& key) {
    return at(key_type(std::forward<KeyType>(key)));
  }
  template <class KeyType, OtherKey<KeyType> = 0>
  const T& at(KeyType&& key) const {
    return at(key_type(std::forward<KeyType>(key)));
  }

  iterator find(const key_type& key) { return this->begin() + position(key); }
  const_iterator find(const key_type& key) const { return this->begin() + position(key); }
  template <class KeyType, OtherKey<KeyType> = 0>
  iterator find(KeyType&& key) {
    return find(key_type(std::forward<KeyType>(key)));
  }
  template <class KeyType, OtherKey<KeyType> = 0>
  const_iterator find(KeyType&& key) const {
    return find(key_type(std::forward<KeyType>(key)));
  }

  size_type count(const key_type& key) const { return position(key) == this->size() ? 0 : 1; }
  template <class KeyType, OtherKey<KeyType> = 0>
  size_type count(KeyType&& key) const {
    return count(key_type(std::forward<KeyType>(key)));
  }

  size_type erase(const key_type& key) {
    const auto found = find(key);
    if (found == this->end()) return 0;
    erase(found);
    return 1;
  }
  template <class KeyType, OtherKey<KeyType> = 0>
  size_type erase(KeyType&& key) {
    return erase(key_type(std::forward<KeyType>(key)));
  }
  iterator erase(iterator pos) { return erase(pos, std::next(pos)); }
  // Linear, as in ordered_map: the pairs after the erased ones move up (their keys are const, so
  // each is rebuilt in place) and the index is made again. Nothing that reads input erases.
  iterator erase(iterator first, iterator last) {
    const auto offset = std::distance(this->begin(), first);
    const auto erased = std::distance(first, last);
    if (erased == 0) return first;
    for (auto it = first; std::next(it, erased) != this->end(); ++it) {
      it->~value_type();
      new (&*it) value_type{std::move(*std::next(it, erased))};
    }
    Container::resize(this->size() - static_cast<size_type>(erased));
    reindex();
    return this->begin() + offset;
  }

  void clear() noexcept {
    Container::clear();
    index_.clear();
  }

  std::pair<iterator, bool> insert(value_type&& value) { return emplace(value.first, std::move(value.second)); }
  std::pair<iterator, bool> insert(const value_type& value) {
    if (const auto found = find(value.first); found != this->end()) return {found, false};
    Container::push_back(value);
    index_last();
    return {std::prev(this->end()), true};
  }
  template <class InputIt, class = std::enable_if_t<std::is_convertible_v<
                               typename std::iterator_traits<InputIt>::iterator_category, std::input_iterator_tag>>>
  void insert(InputIt first, InputIt last) {
    for (; first != last; ++first) insert(value_type(*first));
  }

 private:
  // Where `key` is, or size() where it is not.
  size_type position(const key_type& key) const {
    if (index_.empty()) {
      for (size_type i = 0; i < this->size(); ++i) {
        if (this->begin()[i].first == key) return i;
      }
      return this->size();
    }
    const auto found = index_.find(key);
    return found == index_.end() ? this->size() : found->second;
  }

  size_type found_position(const key_type& key) const {
    const size_type found = position(key);
    if (found == this->size()) throw std::out_of_range("key not found");
    return found;
  }

  // After a pair was appended: index it, or index them all once the object outgrows a scan.
  void index_last() {
    if (!index_.empty()) {
      index_.emplace(this->back().first, this->size() - 1);
    } else if (this->size() > kScannedUpTo) {
      reindex();
    }
  }

  void reindex() {
    index_.clear();
    if (this->size() <= kScannedUpTo) return;
    index_.reserve(this->size());
    for (size_type i = 0; i < this->size(); ++i) index_.emplace(this->begin()[i].first, i);
  }

  // The vector's own ways to add or drop pairs would leave the index behind: not offered.
  using Container::assign;
  using Container::emplace_back;
  using Container::pop_back;
  using Container::push_back;
  using Container::resize;
  using Container::swap;

  std::unordered_map<Key, size_type> index_;
};

using OrderedJson = nlohmann::basic_json<IndexedOrderedMap>;

}  // namespace tusk
