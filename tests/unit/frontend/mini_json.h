// Just enough JSON to read the facts next to the golden vectors
// (tests/golden/*/*.json): objects, arrays, strings, numbers, booleans, null.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pp::test {

struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  bool is_null() const { return kind == Kind::kNull; }
  const Json& operator[](const std::string& key) const {
    static const Json kNullJson;
    auto it = object.find(key);
    return it == object.end() ? kNullJson : it->second;
  }
  bool has(const std::string& key) const { return object.count(key) > 0; }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : s_(text) {}

  std::optional<Json> parse() {
    Json v;
    if (!value(v)) return std::nullopt;
    ws();
    if (i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool lit(const char* word) {
    const std::string w(word);
    if (s_.compare(i_, w.size(), w) != 0) return false;
    i_ += w.size();
    return true;
  }
  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  bool hex4(unsigned& cp) {
    if (i_ + 4 > s_.size()) return false;
    cp = static_cast<unsigned>(std::stoul(s_.substr(i_, 4), nullptr, 16));
    i_ += 4;
    return true;
  }
  bool str(std::string& out) {
    if (s_[i_] != '"') return false;
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) return false;
      c = s_[i_++];
      switch (c) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          unsigned cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xd800 && cp < 0xdc00 && s_.compare(i_, 2, "\\u") == 0) {
            i_ += 2;
            unsigned lo = 0;
            if (!hex4(lo)) return false;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          }
          utf8(out, cp);
          break;
        }
        default:
          out += c;
      }
    }
    if (i_ >= s_.size()) return false;
    ++i_;
    return true;
  }
  bool value(Json& v) {
    ws();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{') {
      v.kind = Json::Kind::kObject;
      ++i_;
      ws();
      if (s_[i_] == '}') return ++i_, true;
      while (true) {
        ws();
        std::string key;
        if (!str(key)) return false;
        ws();
        if (s_[i_++] != ':') return false;
        if (!value(v.object[key])) return false;
        ws();
        if (s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (s_[i_] == '}') return ++i_, true;
        return false;
      }
    }
    if (c == '[') {
      v.kind = Json::Kind::kArray;
      ++i_;
      ws();
      if (s_[i_] == ']') return ++i_, true;
      while (true) {
        if (!value(v.array.emplace_back())) return false;
        ws();
        if (s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (s_[i_] == ']') return ++i_, true;
        return false;
      }
    }
    if (c == '"') {
      v.kind = Json::Kind::kString;
      return str(v.string);
    }
    if (lit("true")) return v.kind = Json::Kind::kBool, v.boolean = true, true;
    if (lit("false")) return v.kind = Json::Kind::kBool, v.boolean = false, true;
    if (lit("null")) return v.kind = Json::Kind::kNull, true;
    std::size_t used = 0;
    v.kind = Json::Kind::kNumber;
    v.number = std::stod(s_.substr(i_, 32), &used);
    i_ += used;
    return used > 0;
  }

  const std::string& s_;
  std::size_t i_ = 0;
};

}  // namespace pp::test
