#pragma once
// A real router over a throwaway database with one mandate, its admin key and one of each object,
// shared by the fuzz targets. Every answer must be well-formed: JSON (or an empty 204) and never 5xx.
#include <string>

#include "api/http/message.hpp"

namespace fl::fuzz {

struct world {
  std::string admin_key, superadmin_key;
  std::string mandate, folder, device, interface, instance;
};

const world& the_world();
api::http_response handle(const api::http_request& request);
// Traps (a crash libFuzzer reports) when the answer breaks the contract.
void check_answer(const api::http_response& response);

}  // namespace fl::fuzz
