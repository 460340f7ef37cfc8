#include "agent/config_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string_view>

namespace tusk {
namespace {

struct Setting {
  std::string section;  // empty: top level
  std::string key;
  CLI::Option* option;
  bool path = false;  // a file, read from the configuration file's folder when relative
};

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Where each option lives in the file, in the order the app lists its options.
std::vector<Setting> settings_of(const CLI::App& app, const ConfigFileLayout& layout) {
  std::vector<Setting> settings;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_lnames().empty()) continue;  // positionals and short-only flags
    const std::string flag = "--" + option->get_lnames().front();
    if (contains(layout.not_in_file, flag) || flag == "--help") continue;
    Setting setting{"", option->get_lnames().front(), const_cast<CLI::Option*>(option), contains(layout.paths, flag)};
    if (contains(layout.sections, option->get_group())) {
      setting.section = lower(option->get_group());
      if (setting.key.rfind(setting.section + "-", 0) == 0) setting.key.erase(0, setting.section.size() + 1);
    }
    std::replace(setting.key.begin(), setting.key.end(), '-', '_');
    settings.push_back(std::move(setting));
  }
  return settings;
}

// CLI11's messages start with the flag ("--outbox: Value 5 not in range ..."); in the file the
// key's path names the setting instead.
std::string without_flag(std::string message) {
  if (message.rfind("--", 0) == 0) {
    if (const auto colon = message.find(": "); colon != std::string::npos) message.erase(0, colon + 2);
  }
  return message;
}

// What an option's value must be, in words, from CLI11's type name ("UINT", "TEXT:FILE").
std::string kind_of(const CLI::Option& option) {
  const std::string type = option.get_type_name().substr(0, option.get_type_name().find(':'));
  if (type == "UINT") return "a whole number, 0 or more";
  if (type == "INT") return "a whole number";
  if (type == "FLOAT") return "a number";
  return type.empty() ? std::string("a value") : type;
}

class ConfigApplier {
 public:
  ConfigApplier(YamlErrors& errors, std::vector<Setting> settings, std::filesystem::path folder)
      : reader_(errors), settings_(std::move(settings)), folder_(std::move(folder)) {}

  void apply_section(const YamlValue& value, const std::string& section) {
    const auto entries = reader_.mapping(value, section.empty() ? "a mapping of settings" : "a mapping");
    if (!entries) return;
    for (const auto& entry : *entries) {
      if (const Setting* setting = find(section, entry.key)) {
        apply(*setting, entry.value);
      } else if (section.empty() && is_section(entry.key)) {
        apply_section(entry.value, entry.key);
      } else {
        reader_.unknown_key(entry, valid_keys(section));
      }
    }
  }

 private:
  const Setting* find(const std::string& section, const std::string& key) const {
    for (const auto& setting : settings_) {
      if (setting.section == section && setting.key == key) return &setting;
    }
    return nullptr;
  }

  bool is_section(const std::string& name) const {
    return std::any_of(settings_.begin(), settings_.end(), [&](const Setting& s) { return s.section == name; });
  }

  std::vector<std::string_view> valid_keys(const std::string& section) const {
    std::vector<std::string_view> keys;
    for (const auto& setting : settings_) {
      const std::string_view name = setting.section == section ? std::string_view(setting.key)
                                    : section.empty()          ? std::string_view(setting.section)
                                                               : std::string_view();
      if (!name.empty() && std::find(keys.begin(), keys.end(), name) == keys.end()) keys.push_back(name);
    }
    return keys;
  }

  void apply(const Setting& setting, const YamlValue& value) {
    std::vector<std::string> texts;
    if (setting.option->get_expected_max() == 0) {  // a flag: on or off
      const auto on = reader_.boolean(value);
      if (!on) return;
      texts.push_back(*on ? "true" : "false");
    } else if (setting.option->get_expected_max() > 1 && value.node.IsSequence()) {
      bool all_good = true;
      for (std::size_t i = 0; i < value.node.size(); ++i) {
        const std::string* text = reader_.scalar(reader_.element(value, value.node[i], i), "a single value");
        if (text) texts.push_back(*text);
        all_good = all_good && text;
      }
      if (!all_good) return;
    } else {
      const std::string* text = reader_.scalar(
          value, setting.option->get_expected_max() > 1 ? "a value or a list of values" : "a single value");
      if (!text) return;
      texts.push_back(*text);
    }
    if (setting.option->count() > 0) return;  // the command line wins
    if (setting.path) {
      for (auto& text : texts) {
        if (!text.empty() && std::filesystem::path(text).is_relative()) text = (folder_ / text).lexically_normal();
      }
    }
    try {
      setting.option->add_result(texts);
      setting.option->run_callback();
    } catch (const CLI::ConversionError&) {
      reader_.fail(value, fmt::format("expected {}, got '{}'", kind_of(*setting.option), fmt::join(texts, ", ")));
    } catch (const CLI::Error& e) {
      reader_.fail(value, without_flag(e.what()));
    }
  }

  YamlReader reader_;
  std::vector<Setting> settings_;
  std::filesystem::path folder_;  // the configuration file's
};

}  // namespace

std::vector<YamlError> apply_config_file(CLI::App& app, const std::string& file, const ConfigFileLayout& layout) {
  YamlErrors errors(file);
  const auto text = read_input_file(errors, "the agent configuration");
  if (!text) return errors.take_sorted();
  const auto document = parse_yaml(*text, errors);
  if (!document) return errors.take_sorted();
  if (document->IsNull()) return {};  // nothing but comments: every option keeps its default
  ConfigApplier applier(errors, settings_of(app, layout), std::filesystem::absolute(file).parent_path());
  YamlReader reader(errors);
  applier.apply_section(reader.root(*document), "");
  return errors.take_sorted();
}

std::vector<std::string> config_file_keys(const CLI::App& app, const ConfigFileLayout& layout) {
  std::vector<std::string> keys;
  for (const auto& setting : settings_of(app, layout)) {
    keys.push_back(setting.section.empty() ? setting.key : setting.section + "." + setting.key);
  }
  return keys;
}

}  // namespace tusk
