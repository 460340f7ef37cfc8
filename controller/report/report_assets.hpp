// The files report.html is made of, compiled into the controller (cmake/embed_files.cmake) so a
// page can be written anywhere with nothing installed beside the binary: the page's own template,
// style and script under controller/report/html/, and the charting library (uPlot, from the npm
// registry by scripts/install-web-libs.sh).
#pragma once

#include <string_view>

namespace tusk::report_assets {

extern const std::string_view kPageTemplate;
extern const std::string_view kPageStyle;
extern const std::string_view kEvidenceScript;  // the links' and ports' evidence, before kPageScript
extern const std::string_view kPageScript;
extern const std::string_view kUplotScript;
extern const std::string_view kUplotStyle;

}  // namespace tusk::report_assets
