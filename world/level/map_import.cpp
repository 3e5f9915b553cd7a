#include "world/level/map_import.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "collision/bsp_build.hpp"
#include "collision/convex_polytope.hpp"
#include "world/level/quake_lexer_internal.hpp"

namespace shiftcast {
namespace {

// Token text quoted in error messages is cut to this many bytes: a corrupt file may hold megabytes of
// garbage in one "word".
constexpr std::size_t kMaxQuotedToken = 40;

std::string quote(std::string_view text) {
  std::string out = "'";
  out.append(text.substr(0, kMaxQuotedToken));
  if (text.size() > kMaxQuotedToken) out += "...";
  return out + "'";
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::kEnd:
      return "end of file";
    case TokenKind::kString:
      return "string \"" + std::string(t.text.substr(0, kMaxQuotedToken)) + "\"";
    default:
      return quote(t.text);
  }
}

// Strict number syntax: the whole token must be a finite decimal (an optional leading '+' is allowed).
enum class NumberStatus : std::uint8_t { kOk, kNotANumber, kNotFinite, kOutOfRange };

NumberStatus parse_double(std::string_view s, double& out) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-') s.remove_prefix(1);
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  if (ec == std::errc::result_out_of_range) return NumberStatus::kOutOfRange;
  if (ec != std::errc() || ptr != end) return NumberStatus::kNotANumber;
  return std::isfinite(out) ? NumberStatus::kOk : NumberStatus::kNotFinite;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

struct Face {
  std::uint32_t line = 0;
  std::array<Vec3d, 3> points;
  std::uint32_t contents = 0;
  std::uint32_t surface_flags = 0;
};

struct ParsedBrush {
  std::uint32_t line = 0;  // of its opening brace
  std::vector<Face> faces;
};

struct KeyValue {
  std::string key;
  std::string value;
  std::uint32_t line = 0;
};

struct Entity {
  std::uint32_t line = 0;
  std::vector<KeyValue> keys;
  std::vector<ParsedBrush> brushes;

  const KeyValue* find(std::string_view key) const {
    for (const KeyValue& kv : keys) {
      if (kv.key == key) return &kv;
    }
    return nullptr;
  }
};

bool is_static_geometry(std::string_view classname) {
  return classname == "worldspawn" || classname == "func_group" || classname == "func_detail";
}

class MapParser {
 public:
  MapParser(std::string_view text, const std::string& name) : lexer_(text), name_(name) {}

  bool parse(std::vector<Entity>& entities) {
    for (;;) {
      const Token t = next();
      if (t.kind == TokenKind::kEnd) return true;
      if (t.kind == TokenKind::kError) return fail(t.line, std::string(t.text));
      if (t.kind != TokenKind::kOpenBrace) {
        return fail(t.line, "expected '{' to start an entity, got " + describe(t));
      }
      Entity& e = entities.emplace_back();
      e.line = t.line;
      if (!parse_entity(e)) return false;
    }
  }

  LevelResult take_failure() { return std::move(failure_); }
  const MapImportStats& stats() const { return stats_; }

 private:
  Token next() { return lexer_.next(); }

  bool fail(std::uint32_t line, std::string what) {
    failure_ = level_failure(name_, line, true, std::move(what));
    return false;
  }

  bool expect(TokenKind kind, const char* what_expected) {
    const Token t = next();
    if (t.kind == TokenKind::kError) return fail(t.line, std::string(t.text));
    if (t.kind != kind)
      return fail(t.line, std::string("expected ") + what_expected + ", got " + describe(t));
    return true;
  }

  bool parse_entity(Entity& e) {
    for (;;) {
      const Token t = next();
      switch (t.kind) {
        case TokenKind::kEnd:
          return fail(e.line, "entity opened here is never closed (end of file)");
        case TokenKind::kError:
          return fail(t.line, std::string(t.text));
        case TokenKind::kCloseBrace:
          return true;
        case TokenKind::kOpenBrace: {
          ParsedBrush brush;
          brush.line = t.line;
          bool keep = false;
          if (!parse_brush(brush, keep)) return false;
          if (keep) e.brushes.push_back(std::move(brush));
          break;
        }
        case TokenKind::kString:
        case TokenKind::kWord: {
          const Token value = next();
          if (value.kind == TokenKind::kError) return fail(value.line, std::string(value.text));
          if (value.kind != TokenKind::kString && value.kind != TokenKind::kWord) {
            return fail(t.line, "key \"" + std::string(t.text.substr(0, kMaxQuotedToken)) +
                                    "\" has no value (got " + describe(value) + ")");
          }
          e.keys.push_back({std::string(t.text), std::string(value.text), t.line});
          break;
        }
        default:
          return fail(t.line, "expected a key, a brush or '}' in an entity, got " + describe(t));
      }
    }
  }

  // `keep` is false for blocks skipped whole (patches, brushDef3).
  bool parse_brush(ParsedBrush& brush, bool& keep) {
    keep = false;
    const Token& first = lexer_.peek();
    if (first.kind == TokenKind::kWord) {
      if (first.text == "patchDef2" || first.text == "patchDef3" || first.text == "brushDef3") {
        const bool patch = first.text != "brushDef3";
        next();
        if (!skip_block(brush.line)) return false;
        if (!expect_brush_end(brush.line)) return false;
        ++(patch ? stats_.skipped_patches : stats_.skipped_brushdef3);
        return true;
      }
      if (first.text == "brushDef") {
        next();
        if (!expect(TokenKind::kOpenBrace, "'{' after brushDef")) return false;
        if (!parse_faces(brush, /*primitives=*/true)) return false;
        if (!expect_brush_end(brush.line)) return false;
        keep = true;
        return true;
      }
    }
    keep = true;
    return parse_faces(brush, /*primitives=*/false);
  }

  bool expect_brush_end(std::uint32_t brush_line) {
    const Token t = next();
    if (t.kind == TokenKind::kCloseBrace) return true;
    if (t.kind == TokenKind::kEnd) return fail(brush_line, "brush opened here is never closed (end of file)");
    if (t.kind == TokenKind::kError) return fail(t.line, std::string(t.text));
    return fail(t.line, "expected '}' to close the brush, got " + describe(t));
  }

  // Skips `{ ... }` with nested braces; a patch's contents are numbers, parentheses and a texture name.
  bool skip_block(std::uint32_t brush_line) {
    if (!expect(TokenKind::kOpenBrace, "'{' to open the block")) return false;
    int depth = 1;
    while (depth > 0) {
      const Token t = next();
      if (t.kind == TokenKind::kEnd)
        return fail(brush_line, "block opened here is never closed (end of file)");
      if (t.kind == TokenKind::kError) return fail(t.line, std::string(t.text));
      if (t.kind == TokenKind::kOpenBrace) ++depth;
      if (t.kind == TokenKind::kCloseBrace) --depth;
    }
    return true;
  }

  // Faces until the closing '}' (which is consumed).
  bool parse_faces(ParsedBrush& brush, bool primitives) {
    for (;;) {
      const Token t = next();
      if (t.kind == TokenKind::kCloseBrace) return true;
      if (t.kind == TokenKind::kEnd)
        return fail(brush.line, "brush opened here is never closed (end of file)");
      if (t.kind == TokenKind::kError) return fail(t.line, std::string(t.text));
      if (t.kind != TokenKind::kOpenParen) {
        return fail(t.line, "expected '(' to start a face or '}' to end the brush, got " + describe(t));
      }
      Face& face = brush.faces.emplace_back();
      face.line = t.line;
      if (!parse_face(face, primitives)) return false;
    }
  }

  bool parse_number(double& out) {
    const Token t = next();
    if (t.kind == TokenKind::kError) return fail(t.line, std::string(t.text));
    if (t.kind != TokenKind::kWord) return fail(t.line, "expected a number, got " + describe(t));
    switch (parse_double(t.text, out)) {
      case NumberStatus::kOk:
        return true;
      case NumberStatus::kNotANumber:
        return fail(t.line, "bad number " + quote(t.text));
      case NumberStatus::kNotFinite:
        return fail(t.line, "number " + quote(t.text) + " is not finite");
      case NumberStatus::kOutOfRange:
        return fail(t.line, "number " + quote(t.text) + " is out of range");
    }
    return false;
  }

  bool parse_numbers(double* out, int count) {
    for (int i = 0; i < count; ++i) {
      if (!parse_number(out[i])) return false;
    }
    return true;
  }

  // `( x y z )` after its '(' was consumed (only for the first point of a face) or not.
  bool parse_point(Vec3d& p, bool open_consumed) {
    if (!open_consumed && !expect(TokenKind::kOpenParen, "'(' to start a face point")) return false;
    const std::uint32_t line = lexer_.peek().line;
    double v[3];
    if (!parse_numbers(v, 3)) return false;
    for (double c : v) {
      if (std::fabs(c) > kWorldExtent) {
        std::ostringstream what;
        what << "coordinate " << c << " is outside the world (+-" << kWorldExtent << ")";
        return fail(line, what.str());
      }
    }
    p = {v[0], v[1], v[2]};
    return expect(TokenKind::kCloseParen, "')' to end a face point");
  }

  // `[ x y z offset ]` of a Valve 220 texture axis.
  bool parse_axis() {
    if (!expect(TokenKind::kOpenBracket, "'[' to start a texture axis")) return false;
    double v[4];
    if (!parse_numbers(v, 4)) return false;
    return expect(TokenKind::kCloseBracket, "']' to end a texture axis");
  }

  // `( a b c )` of a brush-primitives texture matrix row.
  bool parse_matrix_row() {
    if (!expect(TokenKind::kOpenParen, "'(' to start a texture matrix row")) return false;
    double v[3];
    if (!parse_numbers(v, 3)) return false;
    return expect(TokenKind::kCloseParen, "')' to end a texture matrix row");
  }

  bool parse_flag(std::int64_t& out) {
    const Token t = next();
    if (t.kind == TokenKind::kError) return fail(t.line, std::string(t.text));
    if (t.kind != TokenKind::kWord) return fail(t.line, "expected an integer flag, got " + describe(t));
    const char* end = t.text.data() + t.text.size();
    const auto [ptr, ec] = std::from_chars(t.text.data(), end, out);
    if (ec != std::errc() || ptr != end) return fail(t.line, "bad integer flag " + quote(t.text));
    // Flags are 32-bit masks; editors write them signed or unsigned.
    if (out < std::numeric_limits<std::int32_t>::min() || out > std::numeric_limits<std::uint32_t>::max()) {
      return fail(t.line, "flag " + quote(t.text) + " does not fit in 32 bits");
    }
    return true;
  }

  bool parse_face(Face& face, bool primitives) {
    if (!parse_point(face.points[0], true) || !parse_point(face.points[1], false) ||
        !parse_point(face.points[2], false)) {
      return false;
    }
    if (primitives) {
      if (!expect(TokenKind::kOpenParen, "'(' to start the texture matrix")) return false;
      if (!parse_matrix_row() || !parse_matrix_row()) return false;
      if (!expect(TokenKind::kCloseParen, "')' to end the texture matrix")) return false;
    }
    const Token texture = next();
    if (texture.kind == TokenKind::kError) return fail(texture.line, std::string(texture.text));
    if (texture.kind != TokenKind::kWord && texture.kind != TokenKind::kString) {
      return fail(texture.line, "expected a texture name, got " + describe(texture));
    }
    if (!primitives) {
      double v[5];
      if (lexer_.peek().kind == TokenKind::kOpenBracket) {
        if (!parse_axis() || !parse_axis() || !parse_numbers(v, 3)) return false;  // rot, xscale, yscale
      } else if (!parse_numbers(v, 5)) {  // xoff, yoff, rot, xscale, yscale
        return false;
      }
    }
    // Optional `contents surface value`: anything but the next face or the brush's end must be them.
    std::int64_t flags[3] = {0, 0, 0};
    const TokenKind after = lexer_.peek().kind;
    if (after != TokenKind::kOpenParen && after != TokenKind::kCloseBrace && after != TokenKind::kEnd) {
      for (std::int64_t& f : flags) {
        if (!parse_flag(f)) return false;
      }
    }
    face.contents = flags[0] != 0 ? static_cast<std::uint32_t>(flags[0]) : contents_for_texture(texture.text);
    face.surface_flags = static_cast<std::uint32_t>(flags[1]);
    return true;
  }

  QuakeLexer lexer_;
  const std::string& name_;
  LevelResult failure_;
  MapImportStats stats_;
};

// Brush geometry: planes from the face points, then a volume check on the planes as stored (float).
bool build_brush(const ParsedBrush& parsed, const std::string& name, Brush& out, LevelResult& failure) {
  constexpr std::size_t kMinFaces = 4;
  if (parsed.faces.size() < kMinFaces) {
    failure = level_failure(
        name, parsed.line, true,
        "brush has " + std::to_string(parsed.faces.size()) + " faces; a closed brush needs at least 4");
    return false;
  }
  out.planes.clear();
  std::vector<Planed> stored;
  for (const Face& face : parsed.faces) {
    const std::optional<Planed> plane = plane_from_points(face.points[0], face.points[1], face.points[2]);
    if (!plane) {
      failure = level_failure(name, face.line, true, "face points are collinear: they define no plane");
      return false;
    }
    out.planes.push_back(to_float(*plane));
    stored.push_back(to_double(out.planes.back()));
  }
  const ConvexPolytope poly = polytope_from_planes(stored, kWorldExtent, kPlaneEpsilon);
  if (poly.empty()) {
    failure =
        level_failure(name, parsed.line, true, "brush encloses no volume (its planes exclude each other)");
    return false;
  }
  for (const PolytopeFace& f : poly.faces) {
    if (f.source == kWorldFace) {
      failure = level_failure(name, parsed.line, true, "brush is not closed by its planes");
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<Planed> plane_from_points(Vec3d p0, Vec3d p1, Vec3d p2) {
  if (!is_finite(p0) || !is_finite(p1) || !is_finite(p2)) return std::nullopt;
  Vec3d n = cross(p0 - p1, p2 - p1);
  const double len2 = length_squared(n);
  if (!(len2 > kCollinearEpsilon) || !std::isfinite(len2)) return std::nullopt;
  n = n * (1.0 / std::sqrt(len2));
  for (int axis = 0; axis < 3; ++axis) {
    if (std::fabs(n[(axis + 1) % 3]) < kAxialSnapEpsilon &&
        std::fabs(n[(axis + 2) % 3]) < kAxialSnapEpsilon) {
      const double sign = n[axis] > 0 ? 1.0 : -1.0;
      n = {};
      n[axis] = sign;
      break;
    }
  }
  return Planed{n, dot(n, p0)};
}

std::uint32_t contents_for_texture(std::string_view texture) {
  const std::size_t slash = texture.find_last_of('/');
  const std::string base = to_lower(slash == std::string_view::npos ? texture : texture.substr(slash + 1));
  if (base == "clip" || base == "playerclip") return kContentsPlayerClip;
  if (base == "monsterclip") return kContentsMonsterClip;
  if (base.starts_with("trigger")) return kContentsTrigger;
  static constexpr std::array<std::string_view, 12> kNoContents = {
      "hint",   "hintskip", "skip",   "areaportal", "clusterportal", "antiportal",
      "origin", "botclip",  "nodrop", "donotenter", "lightgrid",     "nodrawnonsolid"};
  if (std::find(kNoContents.begin(), kNoContents.end(), base) != kNoContents.end()) return 0;
  if (contains(base, "lava")) return kContentsLava;
  if (contains(base, "slime")) return kContentsSlime;
  // Quake's liquids are the textures whose name starts with '*'; lava and slime are caught above.
  if (base.starts_with('*') || contains(base, "water")) return kContentsWater;
  if (contains(base, "fog")) return kContentsFog;
  return kContentsSolid;
}

LevelResult import_map(std::string_view text, const std::string& name, MapImportStats* stats) {
  MapParser parser(text, name);
  std::vector<Entity> entities;
  if (!parser.parse(entities)) return parser.take_failure();
  MapImportStats local = parser.stats();
  local.entities = static_cast<std::int32_t>(entities.size());

  LevelResult result;
  Level& level = result.level;
  level.name = name;
  level.source_hash = fnv1a64(text.data(), text.size());
  level.source_brushes = local.skipped_brushdef3;

  for (const Entity& e : entities) {
    const KeyValue* classname_kv = e.find("classname");
    const std::string_view classname = classname_kv ? std::string_view(classname_kv->value) : "";
    const bool geometry = is_static_geometry(classname);
    for (const ParsedBrush& parsed : e.brushes) {
      ++level.source_brushes;
      Brush brush;
      LevelResult failure;
      if (!build_brush(parsed, name, brush, failure)) return failure;
      if (!geometry) {
        ++local.skipped_entity_brushes;
        continue;
      }
      std::uint32_t contents = 0;
      std::uint32_t surface_flags = 0;
      for (const Face& face : parsed.faces) {
        contents |= face.contents;
        surface_flags |= face.surface_flags;
      }
      if ((contents & kContentsPlayerSolid) == 0) {
        ++level.skipped_nonsolid;
        continue;
      }
      level.brushes.push_back(std::move(brush));
      level.brush_contents.push_back(contents);
      level.brush_surface_flags.push_back(surface_flags);
    }
    if (!is_player_spawn(classname)) continue;
    const KeyValue* origin = e.find("origin");
    const KeyValue* angle = e.find("angle");
    const KeyValue* angles = e.find("angles");
    SpawnPoint spawn;
    const SpawnKeyError error =
        spawn_from_keys({classname, origin ? &origin->value : nullptr, angle ? &angle->value : nullptr,
                         angles ? &angles->value : nullptr},
                        spawn);
    if (!error.key.empty()) {
      const KeyValue* at = e.find(error.key);
      return level_failure(name, at != nullptr ? at->line : e.line, true, error.what);
    }
    level.spawns.push_back(std::move(spawn));
  }

  compute_level_bounds(level);
  if (stats) *stats = local;
  return result;
}

LevelResult import_map_file(const std::string& path, MapImportStats* stats) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return level_failure(path, 0, false, "cannot open the file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return level_failure(path, 0, false, "read error");
  return import_map(text, path, stats);
}

}  // namespace shiftcast
