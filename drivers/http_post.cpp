#include "drivers/http_post.hpp"

#include <curl/curl.h>

#include <memory>
#include <mutex>

namespace fl::drivers {

namespace {

constexpr std::size_t max_answer = 4096;

std::size_t keep_answer(char* data, std::size_t size, std::size_t count, void* out) {
  auto* body = static_cast<std::string*>(out);
  const std::size_t n = size * count;
  if (body->size() < max_answer) body->append(data, std::min(n, max_answer - body->size()));
  return n;  // read the rest and drop it, so the connection ends cleanly
}

}  // namespace

http_post_result http_post(const std::string& url, const std::vector<std::pair<std::string, std::string>>& headers,
                           const std::string& body, std::chrono::milliseconds timeout) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  http_post_result out;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return {0, {}, "the HTTP client could not be created"};
  curl_slist* list = nullptr;
  for (const auto& [name, value] : headers) {
    std::string line = name;
    line.append(": ").append(value);
    list = curl_slist_append(list, line.c_str());
  }
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(list, curl_slist_free_all);
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "http,https");  // never file:, gopher:, ...
  curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl.get(), CURLOPT_POST, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, header_list.get());
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, keep_answer);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &out.body);
  const CURLcode rc = curl_easy_perform(curl.get());
  if (rc != CURLE_OK) {
    out.error = curl_easy_strerror(rc);
    return out;
  }
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  out.status = static_cast<int>(status);
  return out;
}

}  // namespace fl::drivers
