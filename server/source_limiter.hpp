// SourceLimiter: bounds the pre-authentication work one source address can make a UDP endpoint do. Every
// verified datagram that is not a packet of a connected client (connection requests, challenge responses,
// packets naming no connected client, unexpected messages) costs one unit from its source IP's token
// bucket before any crypto or hand-off to a match worker; an empty bucket refuses it (RateLimited). One
// limiter per worker's endpoint, used on that worker's thread only, so no lock. Time is an argument.
//
//   SourceLimiter limiter({.rate = 16, .burst = 32, .max_sources = 65536});
//   if (!limiter.admit(from.address(), now_seconds)) return refuse(RateLimited);
//
// The table of buckets is bounded: when it is full, buckets that have refilled (sources idle long enough
// to owe nothing) are forgotten, which loses nothing; if none has, new sources share one overflow bucket
// until a later purge finds room, so a flood from many addresses is bounded too and never grows memory.
//
// Loopback sources are not limited unless `limit_loopback`: they are this machine (the load tester opens
// hundreds of connections from 127.0.0.1 at once), and Linux drops datagrams from the network that claim
// a loopback source, so no remote peer can hide behind the exemption.
#pragma once

#include <array>
#include <boost/asio/ip/address.hpp>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "server/token_bucket.hpp"

namespace shiftcast {

struct SourceLimits {
  double rate = 16;                    // units per second per source address
  double burst = 32;                   // bucket size: a fresh source may send this many at once
  std::size_t max_sources = 1u << 16;  // buckets kept per endpoint
  bool limit_loopback = false;         // limit 127.0.0.0/8 and ::1 too (the hostile-client tests do)
};

class SourceLimiter {
 public:
  explicit SourceLimiter(const SourceLimits& limits);
  // Takes one unit from `source`'s bucket; false when it is empty.
  bool admit(const boost::asio::ip::address& source, double now_seconds);
  std::size_t tracked() const { return buckets_.size(); }

 private:
  using Key = std::array<std::uint8_t, 16>;  // IPv6 bytes, IPv4 as v4-mapped
  struct KeyHash {
    std::size_t operator()(const Key& key) const;
  };
  void purge(double now_seconds);

  SourceLimits limits_;
  std::unordered_map<Key, TokenBucket, KeyHash> buckets_;
  TokenBucket overflow_;   // shared by new sources while the table is full
  double next_purge_ = 0;  // a full table is scanned at most once per refill period
};

}  // namespace shiftcast
