#pragma once
// Who is calling: the key's role, mandate, rate policy and (members) compiled group rules.
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "api/rate_limiter.hpp"
#include "core/ids.hpp"
#include "pipeline/access_rules.hpp"

namespace fl::api {

enum class role { superadmin, admin, read_only, member, billing };

[[nodiscard]] std::string_view role_name(role r);
[[nodiscard]] std::optional<role> parse_role(std::string_view name);

struct principal {
  uuid key_id;
  std::optional<uuid> mandate;  // nullopt: a key for all mandates
  role access = role::read_only;
  std::optional<rate_policy> rate;  // nullopt: the server-wide default
  // Set when the caller presented a token instead of the key: its `exp` (seconds since the epoch).
  // A token minted with a token expires no later than this.
  std::optional<std::int64_t> token_expires_at;
  // A member key's groups' rules, compiled (null for every other role).
  std::shared_ptr<const pipeline::access_rules> rules;
};

}  // namespace fl::api
