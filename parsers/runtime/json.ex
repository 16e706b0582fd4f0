defmodule Fieldline.Json do
  @moduledoc """
  A small, strict JSON decoder (RFC 8259) for `json_decode/1` and `:parse_json` test vectors:
  objects become maps with string keys, numbers without fraction or exponent become integers.
  Depth is bounded so hostile input cannot exhaust the stack.
  """

  @max_depth 512

  def decode(text) when is_binary(text) do
    case run(text) do
      {:ok, value} -> {:ok, value}
      {:error, reason, _char, _offset} -> {:error, reason}
    end
  end

  def decode(_), do: {:error, "json_decode expects a string"}

  @doc """
  `json_decode/1` of `Platform.Parsing.Behaviour`: errors in the shape of the original platform's
  JSON library, `{:error, {:invalid, <the character where decoding failed, "" at the end>, <its byte
  offset>}}` (`"{invalid"` → `{:error, {:invalid, "i", 1}}`).
  """
  def platform_decode(text) when is_binary(text) do
    case run(text) do
      {:ok, value} -> {:ok, value}
      {:error, _reason, char, offset} -> {:error, {:invalid, char, offset}}
    end
  end

  def platform_decode(_), do: {:error, {:invalid, "", 0}}

  defp run(text) do
    try do
      {value, rest} = value(skip_ws(text), 0)

      case skip_ws(rest) do
        "" -> {:ok, value}
        other -> fail("unexpected data after JSON value", other)
      end
    catch
      {:json_error, reason, rest} ->
        char =
          case rest do
            <<c::utf8, _::binary>> -> <<c::utf8>>
            <<c, _::binary>> -> <<c>>
            _ -> ""
          end

        {:error, reason, char, byte_size(text) - byte_size(rest)}
    end
  end

  defp fail(reason, rest), do: throw({:json_error, reason, rest})

  defp skip_ws(<<c, rest::binary>>) when c in [?\s, ?\t, ?\n, ?\r], do: skip_ws(rest)
  defp skip_ws(text), do: text

  defp value(text, depth) when depth > @max_depth, do: fail("JSON nested too deeply", text)
  defp value("{" <> rest, depth), do: object(skip_ws(rest), %{}, depth + 1)
  defp value("[" <> rest, depth), do: array(skip_ws(rest), [], depth + 1)
  defp value("\"" <> rest, _), do: string(rest, [])
  defp value("true" <> rest, _), do: {true, rest}
  defp value("false" <> rest, _), do: {false, rest}
  defp value("null" <> rest, _), do: {nil, rest}
  defp value(<<c, _::binary>> = text, _) when c == ?- or c in ?0..?9, do: number(text)
  defp value("", _), do: fail("unexpected end of JSON", "")
  defp value(text, _), do: fail("unexpected character in JSON", text)

  defp object("}" <> rest, acc, _), do: {acc, rest}

  defp object("\"" <> rest, acc, depth) do
    {key, rest} = string(rest, [])

    case skip_ws(rest) do
      ":" <> rest ->
        {v, rest} = value(skip_ws(rest), depth)
        acc = Map.put(acc, key, v)

        case skip_ws(rest) do
          "," <> rest -> object_member(skip_ws(rest), acc, depth)
          "}" <> rest -> {acc, rest}
          other -> fail("expected , or } in object", other)
        end

      other ->
        fail("expected : after object key", other)
    end
  end

  defp object(text, _, _), do: fail("expected string key in object", text)

  # After a comma a member must follow: `{"a": 1,}` is not JSON.
  defp object_member("\"" <> _ = text, acc, depth), do: object(text, acc, depth)
  defp object_member(text, _, _), do: fail("expected string key after , in object", text)

  defp array("]" <> rest, acc, _), do: {Enum.reverse(acc), rest}

  defp array(text, acc, depth) do
    {v, rest} = value(text, depth)

    case skip_ws(rest) do
      "," <> rest -> array_element(skip_ws(rest), [v | acc], depth)
      "]" <> rest -> {Enum.reverse([v | acc]), rest}
      other -> fail("expected , or ] in array", other)
    end
  end

  # After a comma a value must follow: `[1,]` is not JSON.
  defp array_element("]" <> _ = text, _, _), do: fail("expected a value after , in array", text)
  defp array_element(text, acc, depth), do: array(text, acc, depth)

  defp string("\"" <> rest, acc) do
    s = IO.iodata_to_binary(Enum.reverse(acc))
    if String.valid?(s), do: {s, rest}, else: fail("invalid UTF-8 in string", rest)
  end

  defp string("\\" <> <<e, rest::binary>>, acc) do
    case e do
      ?" -> string(rest, ["\"" | acc])
      ?\\ -> string(rest, ["\\" | acc])
      ?/ -> string(rest, ["/" | acc])
      ?b -> string(rest, ["\b" | acc])
      ?f -> string(rest, ["\f" | acc])
      ?n -> string(rest, ["\n" | acc])
      ?r -> string(rest, ["\r" | acc])
      ?t -> string(rest, ["\t" | acc])
      ?u -> unicode(rest, acc)
      _ -> fail("invalid escape in string", <<e, rest::binary>>)
    end
  end

  defp string(<<c, _::binary>> = text, _) when c < 0x20, do: fail("control character in string", text)
  defp string(<<c, rest::binary>>, acc), do: string(rest, [c | acc])
  defp string("", _), do: fail("unterminated string", "")

  defp unicode(<<h::binary-size(4), rest::binary>>, acc) do
    cp = hex4(h, rest)

    cond do
      cp in 0xD800..0xDBFF ->
        case rest do
          <<"\\u", l::binary-size(4), rest2::binary>> ->
            low = hex4(l, rest2)
            if low in 0xDC00..0xDFFF, do: string(rest2, [<<(0x10000 + (cp - 0xD800) * 0x400 + (low - 0xDC00))::utf8>> | acc]), else: fail("invalid surrogate pair", rest2)

          _ ->
            fail("lone surrogate in string", rest)
        end

      cp in 0xDC00..0xDFFF ->
        fail("lone surrogate in string", rest)

      true ->
        string(rest, [<<cp::utf8>> | acc])
    end
  end

  defp unicode(text, _), do: fail("truncated \\u escape", text)

  defp hex4(h, rest) do
    case Integer.parse(h, 16) do
      {n, ""} when n >= 0 -> n
      _ -> fail("invalid \\u escape", rest)
    end
  end

  defp number(text) do
    {int_part, rest} = take_int(text)
    {frac, rest} = take_frac(rest)
    {exp, rest} = take_exp(rest)

    if frac == "" and exp == "" do
      {String.to_integer(int_part), rest}
    else
      mantissa = int_part <> if(frac == "", do: ".0", else: frac)
      {String.to_float(mantissa <> exp), rest}
    end
  end

  defp take_int("-" <> rest) do
    {digits, rest} = take_int(rest)
    {"-" <> digits, rest}
  end

  defp take_int("0" <> rest), do: {"0", rest}

  defp take_int(<<c, _::binary>> = text) when c in ?1..?9, do: digits(text, "")
  defp take_int(text), do: fail("invalid number", text)

  defp take_frac("." <> rest) do
    case digits(rest, "") do
      {"", rest} -> fail("invalid number fraction", rest)
      {d, rest} -> {"." <> d, rest}
    end
  end

  defp take_frac(text), do: {"", text}

  defp take_exp(<<e, rest::binary>>) when e in [?e, ?E] do
    {sign, rest} =
      case rest do
        "+" <> r -> {"+", r}
        "-" <> r -> {"-", r}
        r -> {"", r}
      end

    case digits(rest, "") do
      {"", rest} -> fail("invalid number exponent", rest)
      {d, rest} -> {"e" <> sign <> d, rest}
    end
  end

  defp take_exp(text), do: {"", text}

  defp digits(<<c, rest::binary>>, acc) when c in ?0..?9, do: digits(rest, acc <> <<c>>)
  defp digits(rest, acc), do: {acc, rest}
end
