#include "core/json_out.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace fl {

std::string double_text(double d) {
  std::string out;
  append_json_double(out, d);
  return out;
}

TEST(json_out, writes_floats_in_plain_shortest_decimal) {
  EXPECT_EQ(double_text(23.5), "23.5");
  EXPECT_EQ(double_text(-10.0), "-10.0");
  EXPECT_EQ(double_text(0.1), "0.1");
  EXPECT_EQ(double_text(1.0), "1.0");
  EXPECT_EQ(double_text(0.0), "0.0");
  EXPECT_EQ(double_text(123456789.125), "123456789.125");
  EXPECT_EQ(double_text(0.000001), "0.000001");
}

TEST(json_out, uses_exponent_only_for_extreme_magnitudes) {
  EXPECT_EQ(double_text(1e21), "1e+21");
  EXPECT_EQ(double_text(1e-7), "1e-07");
  EXPECT_EQ(double_text(1e20), "100000000000000000000.0");
}

TEST(json_out, writes_non_finite_as_null) {
  EXPECT_EQ(double_text(std::nan("")), "null");
}

TEST(json_out, keeps_integers_integers) {
  EXPECT_EQ(to_json(boost::json::parse(R"({"a":1,"b":1.0,"c":-3,"d":18446744073709551615})")),
            R"({"a":1,"b":1.0,"c":-3,"d":18446744073709551615})");
}

TEST(json_out, escapes_strings) {
  EXPECT_EQ(to_json(boost::json::value("a\"b\\c\n\x01")), R"("a\"b\\c\n\u0001")");
  EXPECT_EQ(to_json(boost::json::value("grüße")), "\"grüße\"");
}

TEST(json_out, replaces_invalid_utf8_so_output_is_always_json) {
  EXPECT_EQ(to_json(boost::json::value(boost::json::string("a\xff"
                                                           "b"))),
            "\"a\xEF\xBF\xBD"
            "b\"");
  EXPECT_EQ(to_json(boost::json::value(boost::json::string("\xc3"))), "\"\xEF\xBF\xBD\"");                  // truncated
  EXPECT_EQ(to_json(boost::json::value(boost::json::string("\xc0\xaf"))), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");  // overlong
  EXPECT_EQ(to_json(boost::json::value(boost::json::string("\xed\xa0\x80"))),
            "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // surrogate
  EXPECT_EQ(to_json(boost::json::value("€𝄞")), "\"€𝄞\"");
  boost::system::error_code ec;
  boost::json::parse(to_json(boost::json::value(boost::json::string("\xf5\x80 \xe2\x82"))), ec);
  EXPECT_FALSE(ec);
}

TEST(json_out, output_parses_back_to_the_same_value) {
  const auto value = boost::json::parse(R"({"x":[1,2.5,"s",null,true,{"y":-0.25}],"z":{}})");
  EXPECT_EQ(boost::json::parse(to_json(value)), value);
}

// The object and array overloads (no copy into a value) write what the value writer writes.
TEST(json_out, an_object_or_array_writes_as_the_value_holding_it) {
  const auto value = boost::json::parse(R"({"t":2.5e-7,"s":"a\"b","n":[1,{"z":23.5}],"e":{}})");
  const auto& object = value.get_object();
  EXPECT_EQ(to_json(object), to_json(value));
  EXPECT_EQ(to_json(object), R"({"t":2.5e-07,"s":"a\"b","n":[1,{"z":23.5}],"e":{}})");
  const auto& array = object.at("n").get_array();
  EXPECT_EQ(to_json(array), R"([1,{"z":23.5}])");
  std::string appended = "x";
  append_json(appended, array);
  append_json(appended, object.at("e").get_object());
  EXPECT_EQ(appended, R"(x[1,{"z":23.5}]{})");
}

}  // namespace fl
