#include "client-sim/churn_visitors.hpp"

#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <list>
#include <memory>
#include <vector>

#include <spdlog/spdlog.h>

#include "protocol/envelope.hpp"
#include "protocol/rpc_frame.hpp"

namespace shiftcast {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr std::size_t kReadChunk = 16 * 1024;

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

struct ChurnSubscriber;

struct ChurnVisitors::Shared {
  tcp::endpoint rpc;
  std::string api_key;
  int never_read_subscriptions = 1;
  mutable std::mutex mutex;
  ChurnCounters counters;
  // Subscribers still open, so stop() can count them as they stand.
  std::list<std::weak_ptr<ChurnSubscriber>> subscribers;
  bool stopping = false;

  template <typename F>
  void count(F&& f) {
    std::lock_guard lock(mutex);
    f(counters);
  }
};

namespace {

// Appends one finished Envelope, framed, to `out`.
template <typename Build>
void append_request(std::vector<std::uint8_t>& out, wire::Message type, std::uint64_t id, Build build) {
  flatbuffers::FlatBufferBuilder fbb(256);
  const auto body = build(fbb);
  finish_envelope(fbb, type, body, id);
  append_frame(out, {fbb.GetBufferPointer(), fbb.GetSize()});
}

// A connection that asks three questions (list the matches, one match's status, list again) and closes
// once answered, or sends the first half of a frame and closes at once.
class Visit : public std::enable_shared_from_this<Visit> {
 public:
  Visit(asio::io_context& context, std::shared_ptr<ChurnVisitors::Shared> shared, std::uint32_t match_id,
        bool half_frame)
      : shared_(std::move(shared)),
        socket_(context),
        timer_(context),
        match_id_(match_id),
        half_(half_frame) {}

  void start() {
    const std::string& key = shared_->api_key;
    append_request(out_, wire::Message::ListMatches, 1,
                   [&](auto& fbb) { return wire::CreateListMatchesDirect(fbb, key.c_str()).Union(); });
    if (!half_) {
      append_request(out_, wire::Message::MatchStatus, 2, [&](auto& fbb) {
        return wire::CreateMatchStatusDirect(fbb, match_id_, key.c_str()).Union();
      });
      append_request(out_, wire::Message::ListMatches, 3,
                     [&](auto& fbb) { return wire::CreateListMatchesDirect(fbb, key.c_str()).Union(); });
    } else {
      out_.resize(out_.size() / 2);  // the length prefix promises more than ever comes
    }
    timer_.expires_after(seconds(kVisitTimeoutSeconds));
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec) self->end(false);
    });
    socket_.async_connect(shared_->rpc, [self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec) return self->end(false);
      asio::async_write(self->socket_, asio::buffer(self->out_),
                        [self](const boost::system::error_code& wec, std::size_t) {
                          if (wec) return self->end(false);
                          if (self->half_) return self->end(true);  // vanish mid-frame
                          self->read();
                        });
    });
  }

 private:
  void read() {
    socket_.async_read_some(asio::buffer(buffer_), [self = shared_from_this()](
                                                       const boost::system::error_code& ec, std::size_t n) {
      if (self->done_) return;
      if (ec) return self->end(false);
      self->reader_.feed({self->buffer_.data(), n});
      while (auto frame = self->reader_.next()) {
        const EnvelopeView view = verify_envelope(*frame, kMaxRpcFrameBytes);
        ++self->answers_;
        if (view.error == wire::ErrorCode::Ok && view.envelope->message_as_RpcError() == nullptr) ++self->ok_;
      }
      if (self->answers_ >= kQueries) return self->end(self->ok_ == kQueries);
      self->read();
    });
  }

  void end(bool ok) {
    if (done_) return;
    done_ = true;
    boost::system::error_code ignored;
    timer_.cancel();
    socket_.close(ignored);
    shared_->count([&](ChurnCounters& c) {
      if (half_) {
        ++(ok ? c.rpc_abandoned : c.rpc_visit_failures);
        return;
      }
      ++c.rpc_visits;
      c.rpc_visit_queries += ok_;
      if (!ok) ++c.rpc_visit_failures;
    });
  }

  static constexpr int kQueries = 3;
  std::shared_ptr<ChurnVisitors::Shared> shared_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  std::uint32_t match_id_;
  bool half_;
  bool done_ = false;
  int answers_ = 0;
  int ok_ = 0;
  std::vector<std::uint8_t> out_;
  std::array<std::uint8_t, kReadChunk> buffer_{};
  FrameReader reader_;
};

}  // namespace

// A SubscribeContacts connection that stays `lifetime` seconds. A reading one reads every push; a never-
// reading one reads nothing until its end, then drains for kSubscriberDrainSeconds to learn whether the
// server cut it off.
struct ChurnSubscriber : std::enable_shared_from_this<ChurnSubscriber> {
  enum class End { kLeft, kCutSlow, kCutTimeout, kCutOther, kMatchEnded, kNeverCut, kRefused, kRunEnd };

  ChurnSubscriber(asio::io_context& context, std::shared_ptr<ChurnVisitors::Shared> shared,
                  std::uint32_t match_id, double lifetime, bool never_read)
      : shared_(std::move(shared)),
        socket_(context),
        timer_(context),
        match_id_(match_id),
        lifetime_(lifetime),
        never_read_(never_read) {}

  void start() {
    boost::system::error_code ec;
    socket_.open(tcp::v4(), ec);
    if (!ec && never_read_)
      socket_.set_option(tcp::socket::receive_buffer_size(kNeverReadReceiveBufferBytes), ec);
    if (ec) return end(End::kRefused);
    const int subscriptions = never_read_ ? shared_->never_read_subscriptions : 1;
    for (int i = 1; i <= subscriptions; ++i) {
      append_request(out_, wire::Message::SubscribeContacts, std::uint64_t(i), [&](auto& fbb) {
        return wire::CreateSubscribeContactsDirect(fbb, match_id_, nullptr, 0, 0, shared_->api_key.c_str())
            .Union();
      });
    }
    timer_.expires_after(seconds(lifetime_));
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& e) {
      if (!e) self->on_lifetime();
    });
    socket_.async_connect(shared_->rpc, [self = shared_from_this()](const boost::system::error_code& e) {
      if (e) return self->end(End::kRefused);
      asio::async_write(self->socket_, asio::buffer(self->out_),
                        [self](const boost::system::error_code& we, std::size_t) {
                          if (we) return self->end(End::kRefused);
                          if (!self->never_read_) self->read();
                        });
    });
  }

  // The run ends before its lifetime did.
  void stop() { end(End::kRunEnd); }

 private:
  void on_lifetime() {
    if (done_) return;
    if (!never_read_) return end(End::kLeft);
    draining_ = true;
    timer_.expires_after(seconds(kSubscriberDrainSeconds));
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& e) {
      if (!e) self->end(End::kNeverCut);  // still open after the drain: the server never cut it
    });
    read();
  }

  void read() {
    socket_.async_read_some(asio::buffer(buffer_),
                            [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                              if (self->done_) return;
                              if (ec) return self->end(self->cut_reason());
                              self->reader_.feed({self->buffer_.data(), n});
                              while (!self->done_) {
                                const auto frame = self->reader_.next();
                                if (!frame) break;
                                self->on_frame(*frame);
                              }
                              if (self->done_) return;
                              if (self->reader_.error() != wire::ErrorCode::Ok)
                                return self->end(End::kCutOther);
                              self->read();
                            });
  }

  void on_frame(std::span<const std::uint8_t> frame) {
    const EnvelopeView view = verify_envelope(frame, kMaxRpcFrameBytes);
    if (view.error != wire::ErrorCode::Ok) return;
    if (view.envelope->message_as_SubscribeContactsReply() != nullptr) {
      subscribed_ = true;
    } else if (const wire::ContactPush* push = view.envelope->message_as_ContactPush()) {
      if (never_read_) return;  // what a never-reader drains at its end is not checked
      ++pushes_;
      // Numbered per subscription from 1 without gaps: a gap is an event the server promised and lost.
      if (push->events() != nullptr) {
        for (const wire::ContactEvent* e : *push->events()) {
          if (e->sequence() != last_sequence_ + 1) ++gaps_;
          last_sequence_ = e->sequence();
        }
      }
    } else if (const wire::RpcError* error = view.envelope->message_as_RpcError()) {
      last_error_ = error->code();
      // The subscription is over (cut, or its match ended), though the connection may stay open.
      end(cut_reason());
    }
  }

  End cut_reason() const {
    if (!subscribed_) return End::kRefused;
    if (last_error_ == wire::ErrorCode::SlowConsumer) return End::kCutSlow;
    if (last_error_ == wire::ErrorCode::Timeout) return End::kCutTimeout;
    if (last_error_ == wire::ErrorCode::MatchEnded) return End::kMatchEnded;
    return End::kCutOther;
  }

  void end(End how) {
    if (done_) return;
    done_ = true;
    boost::system::error_code ignored;
    timer_.cancel();
    socket_.close(ignored);
    // A never-reading subscriber cut before it ever saw its reply (the reply was in the backlog the
    // server dropped) still subscribed: the server only cuts subscriptions.
    if (how == End::kRefused && never_read_ && draining_) how = End::kCutOther;
    shared_->count([&](ChurnCounters& c) {
      ++c.subscribers;
      ++(never_read_ ? c.subscribers_never_reading : c.subscribers_reading);
      c.subscriber_pushes += pushes_;
      c.subscriber_event_gaps += gaps_;
      switch (how) {
        case End::kLeft:
          ++c.subscribers_left;
          break;
        case End::kCutSlow:
          ++c.subscribers_cut_slow;
          break;
        case End::kCutTimeout:
          ++c.subscribers_cut_timeout;
          break;
        case End::kCutOther:
          ++c.subscribers_cut_other;
          break;
        case End::kNeverCut:
          ++c.subscribers_never_cut;
          break;
        case End::kRefused:
          ++c.subscribers_refused;
          break;
        case End::kMatchEnded:
          ++c.subscribers_match_ended;
          break;
        case End::kRunEnd:
          ++c.subscribers_at_run_end;
          break;
      }
    });
  }

  std::shared_ptr<ChurnVisitors::Shared> shared_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  std::uint32_t match_id_;
  double lifetime_;
  bool never_read_;
  bool done_ = false;
  bool draining_ = false;
  bool subscribed_ = false;
  wire::ErrorCode last_error_ = wire::ErrorCode::Ok;
  std::uint64_t pushes_ = 0;
  std::uint64_t last_sequence_ = 0;
  std::uint64_t gaps_ = 0;
  std::vector<std::uint8_t> out_;
  std::array<std::uint8_t, kReadChunk> buffer_{};
  FrameReader reader_;
};

ChurnVisitors::ChurnVisitors(const tcp::endpoint& rpc, std::string api_key, int never_read_subscriptions)
    : work_(asio::make_work_guard(context_)), shared_(std::make_shared<Shared>()) {
  shared_->never_read_subscriptions = never_read_subscriptions;
  shared_->rpc = rpc;
  shared_->api_key = std::move(api_key);
  thread_ = std::thread([this] { context_.run(); });
}

ChurnVisitors::~ChurnVisitors() {
  stop();
}

void ChurnVisitors::visit(std::uint32_t match_id, bool half_frame) {
  asio::post(context_, [this, match_id, half_frame] {
    if (shared_->stopping) return;
    std::make_shared<Visit>(context_, shared_, match_id, half_frame)->start();
  });
}

void ChurnVisitors::subscribe(std::uint32_t match_id, double lifetime_seconds, bool never_read) {
  asio::post(context_, [this, match_id, lifetime_seconds, never_read] {
    if (shared_->stopping) return;
    auto s = std::make_shared<ChurnSubscriber>(context_, shared_, match_id, lifetime_seconds, never_read);
    shared_->subscribers.remove_if([](const std::weak_ptr<ChurnSubscriber>& w) { return w.expired(); });
    shared_->subscribers.push_back(s);
    s->start();
  });
}

void ChurnVisitors::stop() {
  if (!thread_.joinable()) return;
  asio::post(context_, [this] {
    shared_->stopping = true;
    for (const std::weak_ptr<ChurnSubscriber>& w : shared_->subscribers)
      if (auto s = w.lock()) s->stop();
    shared_->subscribers.clear();
  });
  // Visits still running finish within kVisitTimeoutSeconds; then nothing is left and run() returns.
  work_.reset();
  thread_.join();
}

ChurnCounters ChurnVisitors::counters() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->counters;
}

}  // namespace shiftcast
