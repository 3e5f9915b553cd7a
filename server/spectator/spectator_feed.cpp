#include "server/spectator/spectator_feed.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/beast/http/status.hpp>

#include <algorithm>
#include <mutex>

#include "server/config/json_text.hpp"
#include "server/metrics.hpp"
#include "server/spectator/shot_log.hpp"
#include "server/spectator/spectator_frame.hpp"

namespace shiftcast {

namespace net = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

// Contact batches a match published since the last frame, taken from the fan-out executor. Bounded: a
// feed that fell this far behind drops the oldest (the view shows contacts for half a second anyway).
constexpr std::size_t kMaxPendingBatches = 64;

class ContactCollector : public ContactSubscriber {
 public:
  void deliver(std::shared_ptr<const ContactBatch> batch) override {
    std::lock_guard lock(mutex_);
    batches_.push_back(std::move(batch));
    if (batches_.size() > kMaxPendingBatches) batches_.pop_front();
  }
  void match_ended(std::uint32_t) override {}
  void lost_batches() override {}
  std::vector<ContactRecord> take() {
    std::deque<std::shared_ptr<const ContactBatch>> batches;
    {
      std::lock_guard lock(mutex_);
      batches.swap(batches_);
    }
    std::vector<ContactRecord> out;
    for (const auto& b : batches)
      out.insert(out.end(), b->records.begin(), b->records.end());
    return out;
  }

 private:
  std::mutex mutex_;
  std::deque<std::shared_ptr<const ContactBatch>> batches_;
};

std::shared_ptr<const ViewerMessage> message(std::string bytes, bool text) {
  return std::make_shared<const ViewerMessage>(ViewerMessage{std::move(bytes), text});
}

}  // namespace

// One watched match: its viewers, what they were told and the frames held back for the delay.
struct SpectatorFeed::Channel {
  std::shared_ptr<MatchHandle> match;
  std::shared_ptr<ContactCollector> contacts;  // subscribed to the match's feed (null: the feed was full)
  std::uint64_t shot_cursor = 0;
  std::uint64_t last_tick = 0;
  bool any_frame = false;
  std::vector<std::shared_ptr<Viewer>> viewers;
  std::set<EntityId> outlined;             // props whose outlines went out
  std::vector<std::string> outline_jsons;  // every outlines message sent, replayed to a new viewer
  std::deque<std::pair<Clock::time_point, std::shared_ptr<const ViewerMessage>>> delayed;
};

struct SpectatorFeed::State : std::enable_shared_from_this<SpectatorFeed::State> {
  State(net::io_context& io, MatchDirectory& directory_in, SpectatorSettings settings_in, MetricsRegistry* m)
      : strand(net::make_strand(io)), timer(strand), directory(directory_in), settings(settings_in) {
    if (m != nullptr) {
      viewers_gauge = m->gauge_series("shiftcast_spectator_viewers", "Spectator views open");
      frames = m->counter_series("shiftcast_spectator_frames_total",
                                 "Spectator frames built (one per match and update)");
      bytes = m->counter_series("shiftcast_spectator_bytes_total", "Bytes queued to spectator views");
      for (ViewerEnd e : {ViewerEnd::kPeerClosed, ViewerEnd::kSlow, ViewerEnd::kEnded}) {
        cut[std::size_t(e)] = m->counter_series(
            "shiftcast_spectator_cut_total",
            "Spectator views that ended, by reason (slow: over the byte budget)", {{"reason", to_string(e)}});
      }
    }
  }

  net::strand<net::io_context::executor_type> strand;
  net::steady_timer timer;
  MatchDirectory& directory;
  const SpectatorSettings settings;
  std::atomic<int> viewers{0};                // admitted (counted at admission, on the HTTP strand)
  bool stopped = false;                       // strand only
  std::map<std::uint32_t, Channel> channels;  // strand only
  std::shared_ptr<Gauge> viewers_gauge;
  std::shared_ptr<Counter> frames, bytes;
  std::array<std::shared_ptr<Counter>, 3> cut;

  std::chrono::nanoseconds period() const { return std::chrono::nanoseconds(1'000'000'000 / settings.rate); }

  void schedule() {
    timer.expires_after(period());
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec || self->stopped) return;
      self->update(Clock::now());
      self->schedule();
    });
  }

  void broadcast(Channel& channel, const std::shared_ptr<const ViewerMessage>& m) {
    for (const auto& v : channel.viewers) {
      v->send(m);
      if (bytes) bytes->add(m->bytes.size());
    }
  }

  void add_viewer(std::uint32_t match_id, std::shared_ptr<MatchHandle> match, HttpUpgrade upgrade) {
    if (stopped) {
      viewers.fetch_sub(1);
      return;
    }
    Channel& channel = channels[match_id];
    if (!channel.match) {
      channel.match = match;
      channel.contacts = std::make_shared<ContactCollector>();
      if (!match->contact_feed().add(channel.contacts)) channel.contacts.reset();
      if (ShotLog* shots = match->shot_log()) {
        shots->watch(+1);
        spdlog::debug("spectator: watching shots of match {}", match_id);
        shots->since(channel.shot_cursor);  // only what comes from now on
      }
    }
    // The connection moves from the HTTP strand to this one, so the viewer and the feed share a strand.
    boost::system::error_code ec;
    const net::ip::tcp::endpoint local = upgrade.socket.local_endpoint(ec);
    if (ec) {
      viewer_ended(match_id, ViewerEnd::kPeerClosed);
      return;
    }
    net::ip::tcp::socket socket(strand, local.protocol(), upgrade.socket.release());
    const MatchHealth h = match->health();
    const std::string hello = fmt::format(
        R"({{"type":"hello","match":{},"level":"{}","tick_rate":{},"updates_per_second":{},"delay_ms":{}}})",
        match_id, json_escaped(h.summary.level), h.summary.tick_rate, settings.rate, settings.delay.count());
    std::weak_ptr<State> weak = shared_from_this();
    auto viewer =
        std::make_shared<Viewer>(std::move(socket), settings.byte_budget, [weak, match_id](ViewerEnd why) {
          if (auto self = weak.lock()) self->viewer_ended(match_id, why);
        });
    viewer->start(std::move(upgrade.request), message(hello, true));
    for (const std::string& outlines : channel.outline_jsons)
      viewer->send(message(outlines, true));
    channel.viewers.push_back(std::move(viewer));
    if (viewers_gauge) viewers_gauge->set(viewers.load());
  }

  // A viewer's on_end: runs inside the viewer (from send() too), so the list is pruned on the next update.
  void viewer_ended(std::uint32_t, ViewerEnd why) {
    viewers.fetch_sub(1);
    if (viewers_gauge) viewers_gauge->set(viewers.load());
    if (cut[std::size_t(why)]) cut[std::size_t(why)]->add();
  }

  void drop_channel(std::map<std::uint32_t, Channel>::iterator it) {
    Channel& channel = it->second;
    if (channel.contacts) channel.match->contact_feed().remove(channel.contacts.get());
    if (ShotLog* shots = channel.match->shot_log()) shots->watch(-1);
    channels.erase(it);
  }

  void update(Clock::time_point now) {
    for (auto it = channels.begin(); it != channels.end();) {
      Channel& channel = it->second;
      std::erase_if(channel.viewers, [](const std::shared_ptr<Viewer>& v) { return !v->open(); });
      if (channel.viewers.empty()) {
        drop_channel(it++);
        continue;
      }
      if (channel.match->ended()) {
        broadcast(channel, message(R"({"type":"ended"})", true));
        for (const auto& v : channel.viewers)
          v->finish();
        drop_channel(it++);
        continue;
      }
      build_frame(channel, now);
      // Frames leave once they are `delay` old: the view is that far behind the match.
      while (!channel.delayed.empty() && channel.delayed.front().first + settings.delay <= now) {
        broadcast(channel, stamped(channel, std::move(channel.delayed.front().second)));
        channel.delayed.pop_front();
      }
      ++it;
    }
  }

  // A delayed frame leaves with the match's newest tick in its header, so a view can say how far behind
  // the match it is; without a delay the frame already says so.
  std::shared_ptr<const ViewerMessage> stamped(const Channel& channel,
                                               std::shared_ptr<const ViewerMessage> frame) {
    if (settings.delay.count() == 0) return frame;
    const std::shared_ptr<const WorldView> latest = channel.match->history().latest();
    if (!latest) return frame;
    ViewerMessage copy = *frame;
    stamp_newest_tick(copy.bytes, latest->tick);
    return std::make_shared<const ViewerMessage>(std::move(copy));
  }

  void build_frame(Channel& channel, Clock::time_point now) {
    const std::shared_ptr<const WorldView> view = channel.match->history().latest();
    if (!view || (channel.any_frame && view->tick == channel.last_tick)) return;
    channel.any_frame = true;
    channel.last_tick = view->tick;

    std::vector<const Entity*> new_props;
    for (const Entity& e : view->entities) {
      if (e.kind == EntityKind::kProp && channel.outlined.insert(e.id).second) new_props.push_back(&e);
    }
    if (!new_props.empty()) {
      std::string outlines = encode_outlines(new_props);
      broadcast(channel, message(outlines, true));
      channel.outline_jsons.push_back(std::move(outlines));
    }

    std::vector<ContactRecord> contacts;
    if (channel.contacts) contacts = channel.contacts->take();
    std::vector<SpectatorShot> shots;
    if (ShotLog* log = channel.match->shot_log()) {
      std::vector<Entity> posed;
      double posed_tick = -1;  // the tick `posed` holds: shots of one volley share it
      for (RecordedQuery& q : log->since(channel.shot_cursor)) {
        SpectatorShot& s = shots.emplace_back();
        s.query = std::move(q);
        if (!s.query.hit || s.query.entity == kNoEntity) continue;
        // The pose the shot was judged against: the history at the tick it used, as the query saw it.
        if (s.query.tick_used != posed_tick) {
          channel.match->history().at(s.query.tick_used).entities(posed);
          posed_tick = s.query.tick_used;
        }
        const auto hit =
            std::find_if(posed.begin(), posed.end(), [&](const Entity& e) { return e.id == s.query.entity; });
        if (hit == posed.end()) continue;
        s.posed = true;
        s.pose = hit->pose;
        s.radius = spectator_radius(*hit);
      }
    }
    channel.delayed.emplace_back(now,
                                 message(encode_spectator_frame(*view, view->tick, contacts, shots), false));
    if (frames) frames->add();
  }
};

SpectatorFeed::SpectatorFeed(net::io_context& io, MatchDirectory& directory, SpectatorSettings settings,
                             MetricsRegistry* metrics)
    : state_(std::make_shared<State>(io, directory, settings, metrics)) {}

SpectatorFeed::~SpectatorFeed() {
  stop();
}

void SpectatorFeed::start() {
  net::post(state_->strand, [state = state_] { state->schedule(); });
}

void SpectatorFeed::stop() {
  net::post(state_->strand, [state = state_] {
    if (state->stopped) return;
    state->stopped = true;
    state->timer.cancel();
    for (auto it = state->channels.begin(); it != state->channels.end();) {
      for (const auto& v : it->second.viewers)
        v->finish();
      state->drop_channel(it++);
    }
  });
}

int SpectatorFeed::viewers() const {
  return state_->viewers.load(std::memory_order_relaxed);
}

std::optional<HttpPage> SpectatorFeed::upgrade(std::uint32_t match_id,
                                               const std::function<HttpUpgrade()>& take) {
  std::shared_ptr<MatchHandle> match = state_->directory.find(match_id);
  if (!match || match->ended()) {
    return HttpPage{unsigned(boost::beast::http::status::not_found), "no such match\n",
                    "text/plain; charset=utf-8", HttpClose::kNotFound};
  }
  if (state_->viewers.fetch_add(1) >= state_->settings.max_viewers) {
    state_->viewers.fetch_sub(1);
    return HttpPage{unsigned(boost::beast::http::status::service_unavailable), "too many viewers\n",
                    "text/plain; charset=utf-8", HttpClose::kTooManyViewers};
  }
  auto upgrade = std::make_shared<HttpUpgrade>(take());
  net::post(state_->strand, [state = state_, match_id, match = std::move(match), upgrade] {
    state->add_viewer(match_id, match, std::move(*upgrade));
  });
  return std::nullopt;
}

}  // namespace shiftcast
