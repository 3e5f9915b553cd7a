// QuakeLexer: the tokens of Quake's text formats (.map files and the entity lump of .bsp files), by the
// rules of the game's COM_Parse, so both importers read entity text the same way.
//
//   QuakeLexer lexer(text);
//   for (Token t = lexer.next(); t.kind != TokenKind::kEnd; t = lexer.next()) { ... t.line, t.offset ... }
//
// Tokens are separated by whitespace; `//` starts a comment only where a token could start; braces,
// parentheses and brackets are tokens of their own; a quoted string ends at the next quote and may not
// span lines (a stray quote would otherwise swallow the rest of the file and report the error far from
// its cause): that is a kError token whose text is the message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace shiftcast {

enum class TokenKind : std::uint8_t {
  kEnd,
  kError,  // text holds the message
  kOpenBrace,
  kCloseBrace,
  kOpenParen,
  kCloseParen,
  kOpenBracket,
  kCloseBracket,
  kString,  // quoted; text excludes the quotes
  kWord,    // anything else up to whitespace
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;
  std::uint32_t line = 1;
  std::size_t offset = 0;  // of the token's first byte in the text
};

bool is_quake_space(char c);

// Quake's COM_Parse rules: tokens are separated by whitespace, `//` starts a comment only where a token
// could start, quoted strings end at the next quote and may not span lines (a stray quote would otherwise
// swallow the rest of the file and report the error far from its cause).
class QuakeLexer {
 public:
  explicit QuakeLexer(std::string_view text) : text_(text) {}

  Token next() {
    if (has_peeked_) {
      has_peeked_ = false;
      return peeked_;
    }
    return scan();
  }
  const Token& peek() {
    if (!has_peeked_) {
      peeked_ = scan();
      has_peeked_ = true;
    }
    return peeked_;
  }

 private:
  Token scan() {
    for (;;) {
      while (pos_ < text_.size() && is_quake_space(text_[pos_])) {
        if (text_[pos_] == '\n') ++line_;
        ++pos_;
      }
      if (pos_ + 1 < text_.size() && text_[pos_] == '/' && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n')
          ++pos_;
        continue;
      }
      break;
    }
    Token t;
    t.line = line_;
    t.offset = pos_;
    if (pos_ >= text_.size()) return t;
    const char c = text_[pos_];
    const auto single = [&](TokenKind kind) {
      t.kind = kind;
      t.text = text_.substr(pos_, 1);
      ++pos_;
      return t;
    };
    switch (c) {
      case '{':
        return single(TokenKind::kOpenBrace);
      case '}':
        return single(TokenKind::kCloseBrace);
      case '(':
        return single(TokenKind::kOpenParen);
      case ')':
        return single(TokenKind::kCloseParen);
      case '[':
        return single(TokenKind::kOpenBracket);
      case ']':
        return single(TokenKind::kCloseBracket);
      default:
        break;
    }
    if (c == '"') {
      const std::size_t start = ++pos_;
      while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n')
        ++pos_;
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        t.kind = TokenKind::kError;
        t.text = "unterminated string (no closing quote on this line)";
        return t;
      }
      t.kind = TokenKind::kString;
      t.text = text_.substr(start, pos_ - start);
      ++pos_;
      return t;
    }
    const std::size_t start = pos_;
    while (pos_ < text_.size() && !is_quake_space(text_[pos_]))
      ++pos_;
    t.kind = TokenKind::kWord;
    t.text = text_.substr(start, pos_ - start);
    return t;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::uint32_t line_ = 1;
  Token peeked_;
  bool has_peeked_ = false;
};

}  // namespace shiftcast
