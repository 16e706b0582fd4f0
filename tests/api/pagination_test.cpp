// List paging as wire-contract.md settles it.
#include "support/api_fixture.hpp"

namespace fl::testing {

class pagination : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    key_ = make_key(make_mandate("M"), "admin");
    for (int i = 0; i < 25; ++i) ids_.push_back(make_folder(key_, "F" + std::to_string(100 + i)));
  }
  std::vector<std::string> page_ids(const reply& r) const {
    std::vector<std::string> out;
    for (const auto& f : r.data().as_array()) out.emplace_back(f.at("id").as_string());
    return out;
  }
  std::string key_;
  std::vector<std::string> ids_;
};

TEST_F(pagination, default_limit_is_10_and_pages_cover_everything_once) {
  std::vector<std::string> seen;
  std::string next;
  int pages = 0;
  do {
    auto r = call("GET", "/api/v1/tags" + (next.empty() ? "" : "?retrieve_after=" + next), key_);
    ASSERT_EQ(r.status, 200);
    auto page = page_ids(r);
    EXPECT_LE(page.size(), 10u);
    seen.insert(seen.end(), page.begin(), page.end());
    next = r.has_next() ? std::string(r.envelope().at("retrieve_after_id").as_string()) : "";
    if (!next.empty()) {
      EXPECT_EQ(next, page.back());
    }
    ++pages;
  } while (!next.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  std::set<std::string> unique(seen.begin(), seen.end());
  EXPECT_EQ(seen.size(), 25u);
  EXPECT_EQ(unique.size(), 25u);
}

TEST_F(pagination, default_order_is_newest_first_and_direction_flips_it) {
  auto desc = page_ids(call("GET", "/api/v1/tags?limit=100", key_));
  ASSERT_EQ(desc.size(), 25u);
  auto asc = page_ids(call("GET", "/api/v1/tags?limit=100&sort_direction=asc", key_));
  std::reverse(asc.begin(), asc.end());
  EXPECT_EQ(desc, asc);
  EXPECT_EQ(page_ids(call("GET", "/api/v1/tags?limit=100&sort_direction=ascending", key_)).front(), ids_.front());
}

TEST_F(pagination, sorts_by_name_with_ties_broken_by_id) {
  auto byname = call("GET", "/api/v1/tags?limit=3&sort=name&sort_direction=asc", key_);
  ASSERT_EQ(byname.status, 200);
  EXPECT_EQ(byname.data().as_array()[0].at("name"), "F100");
  EXPECT_EQ(byname.data().as_array()[2].at("name"), "F102");
  EXPECT_EQ(call("GET", "/api/v1/tags?sort=color", key_).status, 400);
}

TEST_F(pagination, limit_rules) {
  EXPECT_EQ(page_ids(call("GET", "/api/v1/tags?limit=500", key_)).size(), 25u);  // capped, not an error
  auto capped = call("GET", "/api/v1/tags?limit=3", key_);
  EXPECT_EQ(page_ids(capped).size(), 3u);
  EXPECT_TRUE(capped.has_next());
  for (const char* bad : {"0", "-1", "abc", "1.5", ""}) {
    EXPECT_EQ(call("GET", std::string("/api/v1/tags?limit=") + bad, key_).status, 400) << bad;
  }
}

TEST_F(pagination, last_page_has_no_retrieve_after_id) {
  auto all = call("GET", "/api/v1/tags?limit=25", key_);
  EXPECT_FALSE(all.has_next());
  const auto last = page_ids(all).back();
  auto after_last = call("GET", "/api/v1/tags?retrieve_after=" + last, key_);
  EXPECT_EQ(after_last.status, 200);
  EXPECT_EQ(after_last.data().as_array().size(), 0u);
  EXPECT_FALSE(after_last.has_next());
}

TEST_F(pagination, unknown_retrieve_after_is_400) {
  EXPECT_EQ(call("GET", "/api/v1/tags?retrieve_after=" + uuid::random().str(), key_).status, 400);
  EXPECT_EQ(call("GET", "/api/v1/tags?retrieve_after=not-an-id", key_).status, 400);
}

TEST_F(pagination, before_and_after_filter_on_inserted_at) {
  auto mid = call("GET", "/api/v1/tags/" + ids_[12], key_).data().at("inserted_at");
  const std::string t(mid.as_string());
  auto before = call("GET", "/api/v1/tags?limit=100&before=" + t, key_);
  EXPECT_EQ(page_ids(before).size(), 12u);
  auto after = call("GET", "/api/v1/tags?limit=100&after=" + t, key_);
  EXPECT_EQ(page_ids(after).size(), 12u);
  EXPECT_EQ(page_ids(call("GET", "/api/v1/tags?limit=100&after=2000-01-01", key_)).size(), 25u);
  EXPECT_EQ(page_ids(call("GET", "/api/v1/tags?limit=100&before=946684800", key_)).size(), 0u);
  EXPECT_EQ(call("GET", "/api/v1/tags?before=yesterday", key_).status, 400);
}

TEST_F(pagination, empty_lists_are_200_with_an_empty_body) {
  auto other = make_key(make_mandate("Empty"), "admin");
  auto r = call("GET", "/api/v1/devices", other);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.text, R"({"status":200,"ok":true,"body":[]})");
}

}  // namespace fl::testing
