// Text from peers and files made safe for JSON, logs, terminals and XML.
#include "common/printable.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/json_text.hpp"

namespace tusk {
namespace {

TEST(Printable, FindsTheFirstIllFormedUtf8Byte) {
  EXPECT_EQ(first_invalid_utf8("plain"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x98"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("caf\xe9"), 3u);            // Latin-1
  EXPECT_EQ(first_invalid_utf8("a\xc0\xaf"), 1u);          // overlong '/'
  EXPECT_EQ(first_invalid_utf8("a\xed\xa0\x80"), 1u);      // a surrogate
  EXPECT_EQ(first_invalid_utf8("a\xf4\x90\x80\x80"), 1u);  // past U+10FFFF
  EXPECT_EQ(first_invalid_utf8("ab\xe2\x82"), 2u);         // cut short
  EXPECT_EQ(first_invalid_utf8(std::string_view("a\0b", 3)), std::string_view::npos);
}

TEST(Printable, ReplacesEachBadByteAndKeepsTheRest) {
  EXPECT_EQ(valid_utf8("caf\xe9!"), "caf\xef\xbf\xbd!");
  EXPECT_EQ(valid_utf8("\xff\xfe"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(valid_utf8("caf\xc3\xa9"), "caf\xc3\xa9");
}

TEST(Printable, ALogLineCannotEndItselfOrDriveTheTerminal) {
  EXPECT_EQ(printable("ok\ntest 0 't0': pass"), "ok\\ntest 0 't0': pass");
  EXPECT_EQ(printable("\x1b[2J\r\t\x7f"), "\\x1b[2J\\r\\t\\x7f");
  EXPECT_EQ(printable("a\\n"), "a\\\\n");  // a backslash cannot fake an escape
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\u009b31m");  // C1 CSI
  EXPECT_EQ(printable("caf\xe9"), "caf\\xe9");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");
  EXPECT_EQ(first_invalid_utf8(printable("\xff\xfe\x80")), std::string_view::npos);
}

TEST(Printable, XmlTextHasNoCharacterXmlForbids) {
  EXPECT_EQ(xml_text("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
  EXPECT_EQ(xml_text("id\x01\x1f\tok\n"), "id\\x01\\x1f\tok\n");
  EXPECT_EQ(xml_text("caf\xe9"), "caf\xef\xbf\xbd");
}

// Issue 63, before: U+FFFE and U+FFFF passed into junit.xml, which made it ill-formed.
TEST(Printable, XmlTextWritesTheTwoNoncharactersOut) {
  EXPECT_EQ(xml_text("a\xEF\xBF\xBE"
                     "b\xEF\xBF\xBF"
                     "c\xEF\xBF\xBD"),
            "a\\ufffeb\\uffffc\xEF\xBF\xBD");
}

// Issue 63, before: a fault text was cut on a byte, inside a multi-byte character, and a strict
// JSON writer then threw (SIGABRT in act --kubernetes).
TEST(Printable, ACutNeverEndsInsideACharacter) {
  const std::string accents = "\xC3\xA9\xC3\xA9\xC3\xA9";  // three 2-byte characters
  EXPECT_EQ(cut_utf8(accents, 3), "\xC3\xA9");
  EXPECT_EQ(cut_utf8(accents, 4), "\xC3\xA9\xC3\xA9");
  EXPECT_EQ(cut_utf8(accents, 100), accents);
  const std::string euro = "ab\xE2\x82\xAC";  // a 3-byte character after 2 bytes
  for (std::size_t max = 0; max <= euro.size(); ++max) {
    EXPECT_EQ(first_invalid_utf8(cut_utf8(euro, max)), std::string_view::npos) << max;
  }
}

TEST(Printable, JsonTextNeverThrowsOnBytesThatAreNotUtf8) {
  const nlohmann::ordered_json document{{"comment", "caf\xe9"}, {"dir", "\xff"}};
  EXPECT_THROW((void)document.dump(), nlohmann::json::type_error);
  const std::string text = json_text(document, -1);
  EXPECT_EQ(nlohmann::json::parse(text)["comment"], "caf\xef\xbf\xbd");
}

}  // namespace
}  // namespace tusk
