// GET a path of a server on 127.0.0.1 (the controller's /metrics), as a scraper does.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace tusk::testing {

// GET `target` of http://127.0.0.1:port; its body when answered 200 OK, nothing when it cannot
// connect or does not answer in 5 s. `padding` goes in 16 headers of its own (Beast holds one
// field to 64 KiB).
inline std::optional<std::string> http_get(int port, const std::string& target, const std::string& padding = "") {
  namespace asio = boost::asio;
  namespace beast = boost::beast;
  namespace http = beast::http;
  asio::io_context io;
  beast::tcp_stream stream(io);
  beast::flat_buffer buffer;
  http::request<http::empty_body> request{http::verb::get, target, 11};
  request.set(http::field::host, "127.0.0.1");
  for (int i = 0; !padding.empty() && i < 16; ++i) request.set("X-Padding-" + std::to_string(i), padding);
  http::response<http::string_body> response;
  bool answered = false;
  stream.expires_after(std::chrono::seconds(5));
  const asio::ip::tcp::endpoint server(asio::ip::make_address("127.0.0.1"), static_cast<std::uint16_t>(port));
  stream.async_connect(server, [&](beast::error_code ec) {
    if (ec) return;
    http::async_write(stream, request, [&](beast::error_code write_ec, std::size_t) {
      if (write_ec) return;
      http::async_read(stream, buffer, response, [&](beast::error_code read_ec, std::size_t) { answered = !read_ec; });
    });
  });
  io.run();
  if (!answered || response.result() != http::status::ok) return std::nullopt;
  return response.body();
}

}  // namespace tusk::testing
