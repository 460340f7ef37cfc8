// The /metrics page is rendered once per interval, shared by every scrape of that interval, and
// cut to its byte budget at a whole line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "controller/metrics/metrics_page.hpp"

namespace tusk {
namespace {

using namespace std::chrono_literals;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(MetricsPage, ScrapesWithinOneIntervalShareOneRenderingAndTheNextIntervalRendersAgain) {
  std::atomic<int> calls{0};
  MetricsPage page([&] { return "tusk_x " + std::to_string(++calls) + "\n"; }, 1s, 1 << 20);
  const auto t0 = MetricsPage::Clock::time_point{} + 100s;
  const auto first = page.get(t0);
  EXPECT_EQ(page.get(t0 + 999ms), first) << "the same text, not a copy";
  EXPECT_EQ(calls, 1);
  EXPECT_THAT(*first, StartsWith("tusk_x 1\n"));
  EXPECT_THAT(*first, EndsWith("tusk_metrics_pages_rendered_total 1\n"));
  const auto second = page.get(t0 + 1s);
  EXPECT_NE(second, first);
  EXPECT_EQ(calls, 2);
  EXPECT_THAT(*second, HasSubstr("tusk_metrics_pages_rendered_total 2\n"));
  EXPECT_EQ(page.renders(), 2u);
}

TEST(MetricsPage, ManyScrapersAtOnceWaitForOneRenderingAndGetTheSameText) {
  std::atomic<int> calls{0};
  MetricsPage page(
      [&] {
        ++calls;
        std::this_thread::sleep_for(50ms);  // a slow render: the others arrive while it runs
        return std::string("tusk_y 1\n");
      },
      1h, 1 << 20);
  std::vector<std::shared_ptr<const std::string>> got(16);
  std::vector<std::thread> scrapers;
  for (std::size_t i = 0; i < got.size(); ++i) scrapers.emplace_back([&, i] { got[i] = page.get(); });
  for (auto& scraper : scrapers) scraper.join();
  EXPECT_EQ(calls, 1);
  for (const auto& text : got) EXPECT_EQ(text.get(), got[0].get());
}

TEST(MetricsPage, APageOverItsBudgetIsCutAtAWholeLineAndSaysSo) {
  std::string big;
  for (int i = 0; i < 1000; ++i) big += "tusk_stream_bytes_total{stream=\"s" + std::to_string(i) + "\"} 12345\n";
  MetricsPage page([&] { return big; }, 1s, 4096);
  const auto text = page.get();
  EXPECT_LE(text->size(), 4096u);
  EXPECT_THAT(*text, HasSubstr("# tusk: this page was cut at "));
  EXPECT_THAT(*text, EndsWith("tusk_metrics_pages_rendered_total 1\n"));
  // Every line whole: each series line ends as rendered.
  std::size_t start = 0;
  while (start < text->size()) {
    const auto end = text->find('\n', start);
    ASSERT_NE(end, std::string::npos) << "a cut line";
    const std::string line = text->substr(start, end - start);
    if (line.starts_with("tusk_stream_bytes_total")) {
      EXPECT_THAT(line, EndsWith("} 12345"));
    }
    start = end + 1;
  }
}

}  // namespace
}  // namespace tusk
