// The External Term Format codec that carries requests and answers across the worker pipes.
#include "sandbox/etf.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace fl::sandbox::etf {

TEST(etf, round_trips_every_kind_we_send) {
  const term t =
      make_tuple({make_atom("parse"), make_binary(std::string("k\0ey", 4)), term(std::int64_t{-5}),
                  term(std::int64_t{300}), term(std::int64_t{1} << 40), term(-(std::int64_t{1} << 62)), term(2.5),
                  term(list{make_atom("nil"), term(list{})}), term(map{{make_binary("a"), term(std::int64_t{1})}})});
  auto back = decode(encode(t));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, t);
}

TEST(etf, decodes_what_erlang_writes) {
  // term_to_binary({ok, [1, 2], <<"x">>, #{<<"k">> => 1.5}, "ab", 123456789012345678901234567890})
  const unsigned char bytes[] = {131, 104, 6,   119, 2,  'o', 'k', 107, 0,   2,   1,  2,   109, 0,   0,
                                 0,   1,   'x', 116, 0,  0,   0,   1,   109, 0,   0,  0,   1,   'k', 70,
                                 63,  248, 0,   0,   0,  0,   0,   0,   107, 0,   2,  'a', 'b', 110, 13,
                                 0,   210, 10,  63,  78, 238, 224, 115, 195, 246, 15, 233, 142, 1};
  auto t = decode(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
  ASSERT_TRUE(t);
  const auto& items = t->as_tuple()->items;
  ASSERT_EQ(items.size(), 6u);
  EXPECT_TRUE(items[0].is_atom("ok"));
  EXPECT_EQ(items[1], term(list{term(std::int64_t{1}), term(std::int64_t{2})}));
  EXPECT_EQ(*items[2].as_binary(), "x");
  EXPECT_EQ(std::get<double>(items[3].find("k")->value), 1.5);
  EXPECT_EQ(items[4], term(list{term(std::int64_t{'a'}), term(std::int64_t{'b'})}));
  EXPECT_NEAR(std::get<double>(items[5].value), 1.2345678901234568e29, 1e15);  // too big for int64
}

TEST(etf, rejects_malformed_input_with_a_reason) {
  std::string why;
  EXPECT_FALSE(decode("", &why));
  EXPECT_FALSE(decode(std::string("\x83", 1), &why));
  EXPECT_FALSE(decode(std::string("\x84\x61\x01", 3), &why));                // wrong version
  EXPECT_FALSE(decode(std::string("\x83\x6d\x00\x00\x00\x09xy", 8), &why));  // truncated binary
  EXPECT_EQ(why, "truncated term");
  EXPECT_FALSE(decode(std::string("\x83\x6c\xff\xff\xff\xff\x6a", 7), &why));               // count beyond the data
  EXPECT_FALSE(decode(std::string("\x83\x67\x00", 3), &why));                               // a pid: not accepted
  EXPECT_FALSE(decode(std::string("\x83\x61\x01\x61", 4), &why));                           // trailing bytes
  EXPECT_FALSE(decode(std::string("\x83\x6c\x00\x00\x00\x01\x61\x01\x61\x02", 10), &why));  // improper list
  EXPECT_EQ(why, "improper lists are not accepted");
}

TEST(etf, nesting_is_bounded) {
  std::string deep = "\x83";
  for (int i = 0; i < 1000; ++i) deep += std::string("\x6c\x00\x00\x00\x01", 5);
  deep += "j";
  for (int i = 0; i < 1000; ++i) deep += "j";
  std::string why;
  EXPECT_FALSE(decode(deep, &why));
  EXPECT_EQ(why, "term nested too deeply");
}

TEST(etf, json_round_trip) {
  const auto v = boost::json::parse(R"({"a":[1,2.5,"s",null,true,false,{"b":{}}],"n":-9007199254740993})");
  EXPECT_EQ(to_json(from_json(v)), v);
}

}  // namespace fl::sandbox::etf
