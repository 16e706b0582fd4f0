defmodule LibWmbus do
  @moduledoc """
  Wireless M-Bus application data, as the original platform's `LibWmbus` library gives it to parsers
  (parser-contract.md). Parser code may call only `LibWmbus.Dib.parse_dib/1`
  (`Fieldline.AllowList`). Written from EN 13757-3 (data record coding) and from the public
  reference parsers' recorded vectors (the shape of each record).
  """
end

defmodule LibWmbus.Dib do
  @moduledoc """
  Data records (DIB + VIB + data, EN 13757-3) into a list of maps, one per record:

      %{data: %{desc: :energy, value: 124_638_000, unit: "Wh"},
        function_field: :current_value, memory_address: 0, sub_device: 0, tariff: 0}

  - `function_field`: `:current_value`, `:max_value`, `:min_value`, `:error_value` (DIF bits 5-4).
  - `memory_address`: the storage number (DIF bit 6, then 4 bits per DIFE), `tariff` (2 bits per
    DIFE), `sub_device` (the DIFE unit bit, 1 bit per DIFE).
  - `data.value`: integers are signed (type B), BCD is decimal (a leading F nibble is negative),
    32-bit reals are floats, variable length data (LVAR) is text, BCD or an integer; scaled to the
    unit by the VIF's decimal exponent (a positive exponent keeps integers, a negative one divides
    into a float). No data (DIF codes 0 and 8) is the value 0 (scaled; `""` for binary VIFs). Dates are `Date` (type G),
    `NaiveDateTime` (types F and I) or `Time` (type J), binary VIFs (error flags, digital in/out)
    an uppercase hex string of the value (most significant byte first).
  - `data.unit`: the VIF's unit, `""` for dimensionless values and dates; a combinable VIFE this
    library does not know appends `" with unknown vife"`, a known one is listed in `data.vife`
    (and "per time/unit" VIFEs extend the unit, e.g. `"m³/h"`).
  - Codes the library cannot read are records whose `desc` starts with `unknown_` (parsers filter
    them): an unknown or reserved VIF is `:unknown_vif` (with `data.vif`, the code), enhanced
    identification (VIF 0x79) is reported the same way as the reference library does; a record
    cut short is `:unknown_truncated_record`, and a reserved DIF or LVAR `:unknown_dif` /
    `:unknown_lvar`, after which decoding stops (the data length is unknown).

  Bounded: every record consumes input, at most 1000 records are decoded (then a final
  `:unknown_too_many_records`), at most 10 DIFEs and 10 VIFEs per record.
  """

  import Bitwise

  @max_records 1000
  @max_extensions 10

  @doc "Decodes a binary of data records into a list of record maps (never raises on any binary)."
  def parse_dib(binary) when is_binary(binary), do: records(binary, [], 0)
  def parse_dib(other), do: raise(ArgumentError, "LibWmbus.Dib.parse_dib/1 expects a binary, got #{inspect(other, limit: 5)}")

  defp records(<<>>, acc, _n), do: Enum.reverse(acc)

  defp records(_rest, acc, n) when n >= @max_records,
    do: Enum.reverse([unknown(:unknown_too_many_records, "") | acc])

  # Idle filler.
  defp records(<<0x2F, rest::binary>>, acc, n), do: records(rest, acc, n)

  # Manufacturer specific data up to the end (0x1F: more records follow in the next telegram).
  defp records(<<dif, rest::binary>>, acc, _n) when dif in [0x0F, 0x1F] do
    record = %{
      data: %{desc: :manufacturer_specific_data, value: Base.encode16(rest), unit: "", more_records_follow: dif == 0x1F},
      function_field: :current_value,
      memory_address: 0,
      sub_device: 0,
      tariff: 0
    }

    Enum.reverse([record | acc])
  end

  # Global readout request: no data follows.
  defp records(<<0x7F, rest::binary>>, acc, n), do: records(rest, acc, n)

  # Other special functions (0x3F..0x6F) are reserved: their length is unknown.
  defp records(<<dif, _::binary>>, acc, _n) when (dif &&& 0x0F) == 0x0F,
    do: Enum.reverse([unknown(:unknown_dif, Base.encode16(<<dif>>)) | acc])

  defp records(binary, acc, n) do
    case record(binary) do
      {:ok, record, rest} -> records(rest, [record | acc], n + 1)
      {:stop, record} -> Enum.reverse([record | acc])
    end
  end

  defp unknown(desc, value),
    do: %{data: %{desc: desc, value: value, unit: ""}, function_field: :current_value, memory_address: 0, sub_device: 0, tariff: 0}

  ## One record

  defp record(<<dif, rest::binary>> = all) do
    header = %{
      function_field: function_field((dif >>> 4) &&& 0x03),
      memory_address: (dif >>> 6) &&& 0x01,
      sub_device: 0,
      tariff: 0
    }

    with {:ok, header, rest} <- difes(dif, rest, header, 0),
         {:ok, vib, rest} <- vib(rest),
         {:ok, raw, rest} <- data_field(dif &&& 0x0F, rest) do
      {:ok, Map.put(header, :data, interpret(vib, raw)), rest}
    else
      {:truncated, _} -> {:stop, truncated(all)}
      {:unknown_lvar, lvar} -> {:stop, Map.put(header, :data, %{desc: :unknown_lvar, value: lvar, unit: ""})}
      {:too_long, what} -> {:stop, Map.put(header, :data, %{desc: what, value: Base.encode16(all), unit: ""})}
    end
  end

  defp truncated(bytes), do: unknown(:unknown_truncated_record, Base.encode16(bytes))

  defp function_field(0), do: :current_value
  defp function_field(1), do: :max_value
  defp function_field(2), do: :min_value
  defp function_field(3), do: :error_value

  # DIFE n (0-based): storage bits 1+4n.., tariff bits 2n.., sub-device bit n.
  defp difes(prev, rest, header, _n) when (prev &&& 0x80) == 0, do: {:ok, header, rest}
  defp difes(_prev, _rest, _header, n) when n >= @max_extensions, do: {:too_long, :unknown_dife_chain}
  defp difes(_prev, <<>>, _header, _n), do: {:truncated, :dife}

  defp difes(_prev, <<dife, rest::binary>>, header, n) do
    header = %{
      header
      | memory_address: header.memory_address ||| (dife &&& 0x0F) <<< (1 + 4 * n),
        tariff: header.tariff ||| ((dife >>> 4) &&& 0x03) <<< (2 * n),
        sub_device: header.sub_device ||| ((dife >>> 6) &&& 0x01) <<< n
    }

    difes(dife, rest, header, n + 1)
  end

  ## The value information block: {table, code, vifes, plain_text}

  defp vib(<<>>), do: {:truncated, :vif}

  defp vib(<<vif, rest::binary>>) when vif in [0xFD, 0xFB] do
    table = if vif == 0xFD, do: :fd, else: :fb

    case rest do
      <<code, rest::binary>> ->
        with {:ok, vifes, rest} <- vifes(code, rest, [], 1), do: {:ok, {table, code &&& 0x7F, vifes, nil}, rest}

      <<>> ->
        {:truncated, :vife}
    end
  end

  # Plain-text VIF: a length byte and the unit's characters (last first) follow the VIF, then the
  # VIFEs when the VIF's extension bit is set.
  defp vib(<<vif, rest::binary>>) when vif in [0x7C, 0xFC] do
    case rest do
      <<len, text::binary-size(len), rest::binary>> ->
        with {:ok, vifes, rest} <- vifes(vif, rest, [], 0), do: {:ok, {:plain_text, reverse_bytes(text), vifes, nil}, rest}

      _ ->
        {:truncated, :plain_text}
    end
  end

  defp vib(<<vif, rest::binary>>) do
    with {:ok, vifes, rest} <- vifes(vif, rest, [], 0), do: {:ok, {:primary, vif &&& 0x7F, vifes, nil}, rest}
  end

  defp vifes(prev, rest, acc, _n) when (prev &&& 0x80) == 0, do: {:ok, Enum.reverse(acc), rest}
  defp vifes(_prev, _rest, _acc, n) when n > @max_extensions, do: {:too_long, :unknown_vife_chain}
  defp vifes(_prev, <<>>, _acc, _n), do: {:truncated, :vife}
  defp vifes(_prev, <<vife, rest::binary>>, acc, n), do: vifes(vife, rest, [vife | acc], n + 1)

  ## The data field: {:int, bytes} | {:bcd, bytes} | {:real, bytes} | {:none} | {:text, s} | {:bcd_neg, bytes}

  defp data_field(code, rest) when code in [0x0, 0x8], do: {:ok, :none, rest}
  defp data_field(0x5, rest), do: take(rest, 4, :real)
  defp data_field(0xD, <<>>), do: {:truncated, :lvar}
  defp data_field(0xD, <<lvar, rest::binary>>), do: lvar(lvar, rest)
  defp data_field(code, rest) when code in 0x1..0x4, do: take(rest, code, :int)
  defp data_field(0x6, rest), do: take(rest, 6, :int)
  defp data_field(0x7, rest), do: take(rest, 8, :int)
  defp data_field(code, rest) when code in 0x9..0xC, do: take(rest, code - 0x8, :bcd)
  defp data_field(0xE, rest), do: take(rest, 6, :bcd)

  defp take(rest, size, kind) do
    case rest do
      <<bytes::binary-size(size), rest::binary>> -> {:ok, {kind, bytes}, rest}
      _ -> {:truncated, :data}
    end
  end

  defp lvar(lvar, rest) when lvar <= 0xBF do
    case rest do
      <<text::binary-size(lvar), rest::binary>> -> {:ok, {:text, reverse_bytes(text)}, rest}
      _ -> {:truncated, :data}
    end
  end

  defp lvar(lvar, rest) when lvar in 0xC0..0xC9, do: take(rest, lvar - 0xC0, :bcd)
  defp lvar(lvar, rest) when lvar in 0xD0..0xD9, do: take(rest, lvar - 0xD0, :bcd_neg)
  defp lvar(lvar, rest) when lvar in 0xE0..0xEF, do: take(rest, lvar - 0xE0, :int)
  defp lvar(lvar, rest) when lvar in 0xF0..0xF4, do: take(rest, 4 * (lvar - 0xEC), :int)
  defp lvar(0xF5, rest), do: take(rest, 48, :int)
  defp lvar(0xF6, rest), do: take(rest, 64, :int)
  defp lvar(lvar, _rest), do: {:unknown_lvar, Base.encode16(<<lvar>>)}

  defp reverse_bytes(bin), do: bin |> :binary.bin_to_list() |> Enum.reverse() |> :erlang.list_to_binary()

  ## Meaning: the VIF's description, unit, exponent and value type, then the combinable VIFEs

  defp interpret({table, code, vifes, _}, raw) do
    {desc, unit, exp, type} = meaning(table, code)

    {unit, exp, tags} =
      if table == :primary and code == 0x7F,
        do: {unit, exp, [:manufacturer_specific]},
        else: combinable(vifes, unit, exp, [])

    data = %{desc: desc, value: value(type, raw, exp), unit: unit}
    data = if tags == [], do: data, else: Map.put(data, :vife, tags)

    cond do
      desc == :unknown_vif -> Map.put(data, :vif, vif_code(table, code))
      true -> data
    end
  end

  defp vif_code(:fd, code), do: 0xFD00 ||| code
  defp vif_code(:fb, code), do: 0xFB00 ||| code
  defp vif_code(_, code) when is_integer(code), do: code
  defp vif_code(_, _), do: nil

  defp time_unit(0), do: "seconds"
  defp time_unit(1), do: "minutes"
  defp time_unit(2), do: "hours"
  defp time_unit(3), do: "days"

  defp time_unit_long(0), do: "hours"
  defp time_unit_long(1), do: "days"
  defp time_unit_long(2), do: "months"
  defp time_unit_long(3), do: "years"

  # {desc, unit, decimal exponent, type}; type :number (scaled), :raw (as read), :date, :datetime,
  # :binary (hex, most significant byte first).
  defp meaning(:plain_text, text), do: {:plain_text, text, 0, :number}

  defp meaning(:primary, c) when c in 0x00..0x07, do: {:energy, "Wh", c - 3, :number}
  defp meaning(:primary, c) when c in 0x08..0x0F, do: {:energy, "J", c - 0x08, :number}
  defp meaning(:primary, c) when c in 0x10..0x17, do: {:volume, "m³", c - 0x10 - 6, :number}
  defp meaning(:primary, c) when c in 0x18..0x1F, do: {:mass, "kg", c - 0x18 - 3, :number}
  defp meaning(:primary, c) when c in 0x20..0x23, do: {:on_time, time_unit(c - 0x20), 0, :number}
  defp meaning(:primary, c) when c in 0x24..0x27, do: {:operation_time, time_unit(c - 0x24), 0, :number}
  defp meaning(:primary, c) when c in 0x28..0x2F, do: {:power, "W", c - 0x28 - 3, :number}
  defp meaning(:primary, c) when c in 0x30..0x37, do: {:power, "J/h", c - 0x30, :number}
  defp meaning(:primary, c) when c in 0x38..0x3F, do: {:flow, "m³/h", c - 0x38 - 6, :number}
  defp meaning(:primary, c) when c in 0x40..0x47, do: {:flow, "m³/min", c - 0x40 - 7, :number}
  defp meaning(:primary, c) when c in 0x48..0x4F, do: {:flow, "m³/s", c - 0x48 - 9, :number}
  defp meaning(:primary, c) when c in 0x50..0x57, do: {:mass_flow, "kg/h", c - 0x50 - 3, :number}
  defp meaning(:primary, c) when c in 0x58..0x5B, do: {:supply_temperature, "°C", c - 0x58 - 3, :number}
  defp meaning(:primary, c) when c in 0x5C..0x5F, do: {:return_temperature, "°C", c - 0x5C - 3, :number}
  defp meaning(:primary, c) when c in 0x60..0x63, do: {:temperature_difference, "K", c - 0x60 - 3, :number}
  defp meaning(:primary, c) when c in 0x64..0x67, do: {:external_temperature, "°C", c - 0x64 - 3, :number}
  defp meaning(:primary, c) when c in 0x68..0x6B, do: {:pressure, "bar", c - 0x68 - 3, :number}
  defp meaning(:primary, 0x6C), do: {:date, "", 0, :date}
  defp meaning(:primary, 0x6D), do: {:datetime, "", 0, :datetime}
  defp meaning(:primary, 0x6E), do: {:units_for_hca, "", 0, :number}
  defp meaning(:primary, c) when c in 0x70..0x73, do: {:averaging_duration, time_unit(c - 0x70), 0, :number}
  defp meaning(:primary, c) when c in 0x74..0x77, do: {:actuality_duration, time_unit(c - 0x74), 0, :number}
  defp meaning(:primary, 0x78), do: {:fabrication_block, "", 0, :raw}
  defp meaning(:primary, 0x7A), do: {:bus_address, "", 0, :raw}
  defp meaning(:primary, 0x7E), do: {:any_vif, "", 0, :raw}
  defp meaning(:primary, 0x7F), do: {:manufacturer_specific, "", 0, :raw}

  # Table 0xFD (main VIFE code extension).
  defp meaning(:fd, c) when c in 0x00..0x03, do: {:credit, "currency units", c - 3, :number}
  defp meaning(:fd, c) when c in 0x04..0x07, do: {:debit, "currency units", c - 0x04 - 3, :number}
  defp meaning(:fd, 0x08), do: {:access_number, "", 0, :raw}
  defp meaning(:fd, 0x09), do: {:medium, "", 0, :raw}
  defp meaning(:fd, 0x0A), do: {:manufacturer, "", 0, :raw}
  defp meaning(:fd, 0x0B), do: {:parameter_set_identification, "", 0, :raw}
  defp meaning(:fd, 0x0C), do: {:model_version, "", 0, :raw}
  defp meaning(:fd, 0x0D), do: {:hardware_version, "", 0, :raw}
  defp meaning(:fd, 0x0E), do: {:firmware_version, "", 0, :raw}
  defp meaning(:fd, 0x0F), do: {:software_version, "", 0, :raw}
  defp meaning(:fd, 0x10), do: {:customer_location, "", 0, :raw}
  defp meaning(:fd, 0x11), do: {:customer, "", 0, :raw}
  defp meaning(:fd, 0x12), do: {:access_code_user, "", 0, :raw}
  defp meaning(:fd, 0x13), do: {:access_code_operator, "", 0, :raw}
  defp meaning(:fd, 0x14), do: {:access_code_system_operator, "", 0, :raw}
  defp meaning(:fd, 0x15), do: {:access_code_developer, "", 0, :raw}
  defp meaning(:fd, 0x16), do: {:password, "", 0, :raw}
  defp meaning(:fd, 0x17), do: {:error_codes, "", 0, :binary}
  defp meaning(:fd, 0x18), do: {:error_mask, "", 0, :binary}
  defp meaning(:fd, 0x1A), do: {:digital_output, "", 0, :binary}
  defp meaning(:fd, 0x1B), do: {:digital_input, "", 0, :binary}
  defp meaning(:fd, 0x1C), do: {:baud_rate, "Baud", 0, :raw}
  defp meaning(:fd, 0x1D), do: {:response_delay_time, "bit times", 0, :raw}
  defp meaning(:fd, 0x1E), do: {:retry, "", 0, :raw}
  defp meaning(:fd, 0x1F), do: {:remote_control, "", 0, :binary}
  defp meaning(:fd, 0x20), do: {:first_storage_number, "", 0, :raw}
  defp meaning(:fd, 0x21), do: {:last_storage_number, "", 0, :raw}
  defp meaning(:fd, 0x22), do: {:storage_block_size, "", 0, :raw}
  defp meaning(:fd, c) when c in 0x24..0x27, do: {:storage_interval, time_unit(c - 0x24), 0, :raw}
  defp meaning(:fd, 0x28), do: {:storage_interval, "months", 0, :raw}
  defp meaning(:fd, 0x29), do: {:storage_interval, "years", 0, :raw}
  defp meaning(:fd, 0x2A), do: {:operator_specific_data, "", 0, :binary}
  defp meaning(:fd, 0x2B), do: {:time_point_second, "seconds", 0, :raw}
  defp meaning(:fd, c) when c in 0x2C..0x2F, do: {:duration_since_last_readout, time_unit(c - 0x2C), 0, :raw}
  defp meaning(:fd, 0x30), do: {:start_of_tariff, "", 0, :datetime}
  defp meaning(:fd, c) when c in 0x31..0x33, do: {:duration_of_tariff, time_unit(c - 0x30), 0, :raw}
  defp meaning(:fd, c) when c in 0x34..0x37, do: {:period_of_tariff, time_unit(c - 0x34), 0, :raw}
  defp meaning(:fd, 0x38), do: {:period_of_tariff, "months", 0, :raw}
  defp meaning(:fd, 0x39), do: {:period_of_tariff, "years", 0, :raw}
  defp meaning(:fd, 0x3A), do: {:dimensionless, "", 0, :number}
  defp meaning(:fd, c) when c in 0x40..0x4F, do: {:voltage, "V", c - 0x40 - 9, :number}
  defp meaning(:fd, c) when c in 0x50..0x5F, do: {:current, "A", c - 0x50 - 12, :number}
  defp meaning(:fd, 0x60), do: {:reset_counter, "", 0, :raw}
  defp meaning(:fd, 0x61), do: {:cumulation_counter, "", 0, :raw}
  defp meaning(:fd, 0x62), do: {:control_signal, "", 0, :binary}
  defp meaning(:fd, 0x63), do: {:day_of_week, "", 0, :raw}
  defp meaning(:fd, 0x64), do: {:week_number, "", 0, :raw}
  defp meaning(:fd, 0x65), do: {:time_point_of_day_change, "", 0, :raw}
  defp meaning(:fd, 0x66), do: {:state_of_parameter_activation, "", 0, :binary}
  defp meaning(:fd, 0x67), do: {:special_supplier_information, "", 0, :binary}
  defp meaning(:fd, c) when c in 0x68..0x6B, do: {:duration_since_last_cumulation, time_unit_long(c - 0x68), 0, :raw}
  defp meaning(:fd, c) when c in 0x6C..0x6F, do: {:operating_time_battery, time_unit_long(c - 0x6C), 0, :raw}
  defp meaning(:fd, 0x70), do: {:battery_change_datetime, "", 0, :datetime}
  defp meaning(:fd, 0x71), do: {:rf_level, "dBm", 0, :number}
  defp meaning(:fd, 0x72), do: {:daylight_saving, "", 0, :binary}
  defp meaning(:fd, 0x73), do: {:listening_window_management, "", 0, :binary}
  defp meaning(:fd, 0x74), do: {:remaining_battery_life_time, "days", 0, :raw}
  defp meaning(:fd, 0x75), do: {:times_meter_stopped, "", 0, :raw}
  defp meaning(:fd, 0x76), do: {:manufacturer_specific_container, "", 0, :binary}

  # Table 0xFB (alternate extended VIF-code table).
  defp meaning(:fb, c) when c in 0x00..0x01, do: {:energy, "MWh", c - 1, :number}
  defp meaning(:fb, c) when c in 0x02..0x03, do: {:reactive_energy, "kVARh", c - 0x02, :number}
  defp meaning(:fb, c) when c in 0x08..0x09, do: {:energy, "GJ", c - 0x08 - 1, :number}
  defp meaning(:fb, c) when c in 0x0C..0x0F, do: {:energy, "MCal", c - 0x0C - 1, :number}
  defp meaning(:fb, c) when c in 0x10..0x11, do: {:volume, "m³", c - 0x10 + 2, :number}
  defp meaning(:fb, c) when c in 0x18..0x19, do: {:mass, "t", c - 0x18 + 2, :number}
  defp meaning(:fb, 0x21), do: {:volume, "feet³", -1, :number}
  defp meaning(:fb, 0x22), do: {:volume, "american gallon", -1, :number}
  defp meaning(:fb, 0x23), do: {:volume, "american gallon", 0, :number}
  defp meaning(:fb, 0x24), do: {:flow, "american gallon/min", -3, :number}
  defp meaning(:fb, 0x25), do: {:flow, "american gallon/min", 0, :number}
  defp meaning(:fb, 0x26), do: {:flow, "american gallon/h", 0, :number}
  defp meaning(:fb, c) when c in 0x28..0x29, do: {:power, "MW", c - 0x28 - 1, :number}
  defp meaning(:fb, c) when c in 0x30..0x31, do: {:power, "GJ/h", c - 0x30 - 1, :number}
  defp meaning(:fb, c) when c in 0x58..0x5B, do: {:supply_temperature, "°F", c - 0x58 - 3, :number}
  defp meaning(:fb, c) when c in 0x5C..0x5F, do: {:return_temperature, "°F", c - 0x5C - 3, :number}
  defp meaning(:fb, c) when c in 0x60..0x63, do: {:temperature_difference, "°F", c - 0x60 - 3, :number}
  defp meaning(:fb, c) when c in 0x64..0x67, do: {:external_temperature, "°F", c - 0x64 - 3, :number}
  defp meaning(:fb, c) when c in 0x70..0x73, do: {:temperature_limit, "°F", c - 0x70 - 3, :number}
  defp meaning(:fb, c) when c in 0x74..0x77, do: {:temperature_limit, "°C", c - 0x74 - 3, :number}
  defp meaning(:fb, c) when c in 0x78..0x7F, do: {:cumulative_max_power, "W", c - 0x78 - 3, :number}

  # Enhanced identification (0x79) and the reserved codes: reported, not interpreted.
  defp meaning(_table, _code), do: {:unknown_vif, "", 0, :raw}

  # Combinable (orthogonal) VIFEs: {unit, exponent, tags}.
  defp combinable([], unit, exp, tags), do: {unit, exp, Enum.reverse(tags)}

  # 0x7F / 0xFF: the remaining VIFEs are manufacturer specific.
  defp combinable([v | _], unit, exp, tags) when (v &&& 0x7F) == 0x7F,
    do: {unit, exp, Enum.reverse([:manufacturer_specific | tags])}

  # 0x7C / 0xFC: extension of the combinable table (next VIFE): not interpreted.
  defp combinable([v | rest], unit, exp, tags) when (v &&& 0x7F) == 0x7C do
    combinable(Enum.drop(rest, 1), unknown_vife(unit), exp, tags)
  end

  defp combinable([v | rest], unit, exp, tags) do
    case vife(v &&& 0x7F) do
      {:per, suffix} -> combinable(rest, unit <> suffix, exp, tags)
      {:exp, d} -> combinable(rest, unit, exp + d, tags)
      {:tag, tag} -> combinable(rest, unit, exp, [tag | tags])
      :unknown -> combinable(rest, unknown_vife(unit), exp, tags)
    end
  end

  defp unknown_vife(unit) do
    if String.ends_with?(unit, " with unknown vife"), do: unit, else: unit <> " with unknown vife"
  end

  # Record errors (slave to master), EN 13757-3 table "codes for record errors".
  @record_errors %{
    0x00 => :no_error,
    0x01 => :too_many_difes,
    0x02 => :storage_number_not_implemented,
    0x03 => :unit_number_not_implemented,
    0x04 => :tariff_number_not_implemented,
    0x05 => :function_not_implemented,
    0x06 => :data_class_not_implemented,
    0x07 => :data_size_not_implemented,
    0x0B => :too_many_vifes,
    0x0C => :illegal_vif_group,
    0x0D => :illegal_vif_exponent,
    0x0E => :vif_dif_mismatch,
    0x0F => :unimplemented_action,
    0x15 => :no_data_available,
    0x16 => :data_overflow,
    0x17 => :data_underflow,
    0x18 => :data_error,
    0x1C => :premature_end_of_record
  }

  @per %{
    0x20 => "/s",
    0x21 => "/min",
    0x22 => "/h",
    0x23 => "/d",
    0x24 => "/week",
    0x25 => "/month",
    0x26 => "/year",
    0x27 => "/revolution",
    0x2C => "/l",
    0x2D => "/m³",
    0x2E => "/kg",
    0x2F => "/K",
    0x30 => "/kWh",
    0x31 => "/GJ",
    0x32 => "/kW",
    0x33 => "/(K*l)",
    0x34 => "/V",
    0x35 => "/A",
    0x36 => "*s",
    0x37 => "*s/V",
    0x38 => "*s/A"
  }

  @tags %{
    0x28 => :increment_per_input_pulse_channel_0,
    0x29 => :increment_per_input_pulse_channel_1,
    0x2A => :increment_per_output_pulse_channel_0,
    0x2B => :increment_per_output_pulse_channel_1,
    0x39 => :start_datetime_of,
    0x3A => :uncorrected_unit,
    0x3B => :accumulation_only_if_positive,
    0x3C => :accumulation_abs_only_if_negative,
    0x40 => :lower_limit_value,
    0x48 => :upper_limit_value,
    0x41 => :number_of_exceeds_of_lower_limit,
    0x49 => :number_of_exceeds_of_upper_limit,
    0x42 => :date_of_begin_of_first_lower_limit_exceed,
    0x43 => :date_of_end_of_first_lower_limit_exceed,
    0x46 => :date_of_begin_of_last_lower_limit_exceed,
    0x47 => :date_of_end_of_last_lower_limit_exceed,
    0x4A => :date_of_begin_of_first_upper_limit_exceed,
    0x4B => :date_of_end_of_first_upper_limit_exceed,
    0x4E => :date_of_begin_of_last_upper_limit_exceed,
    0x4F => :date_of_end_of_last_upper_limit_exceed,
    0x7E => :future_value
  }

  defp vife(v) when v <= 0x1F do
    case Map.fetch(@record_errors, v) do
      {:ok, tag} -> {:tag, tag}
      :error -> :unknown
    end
  end

  defp vife(v) when v in 0x50..0x5F, do: {:tag, :duration_of_limit_exceed}
  defp vife(v) when v in 0x60..0x67, do: {:tag, :duration_of_d}
  defp vife(v) when v in 0x68..0x6F, do: {:tag, :date_of_d}
  defp vife(v) when v in 0x70..0x77, do: {:exp, v - 0x70 - 6}
  defp vife(v) when v in 0x78..0x7B, do: {:tag, :additive_correction_constant}
  defp vife(0x7D), do: {:exp, 3}

  defp vife(v) do
    cond do
      Map.has_key?(@per, v) -> {:per, Map.fetch!(@per, v)}
      Map.has_key?(@tags, v) -> {:tag, Map.fetch!(@tags, v)}
      true -> :unknown
    end
  end

  ## Values

  defp value(:number, :none, exp), do: scale(0, exp)
  defp value(:binary, :none, _exp), do: ""
  defp value(_type, :none, _exp), do: 0
  defp value(:binary, {_kind, bytes}, _exp), do: bytes |> reverse_bytes() |> Base.encode16()
  defp value(_type, {:text, text}, _exp), do: text
  defp value(:date, {:int, <<_::binary-size(2)>> = b}, _exp), do: type_g(b)
  defp value(:date, {:int, <<_::binary-size(4)>> = b}, _exp), do: type_f(b)
  defp value(:datetime, {:int, <<_::binary-size(2)>> = b}, _exp), do: type_g(b)
  defp value(:datetime, {:int, <<_::binary-size(3)>> = b}, _exp), do: type_j(b)
  defp value(:datetime, {:int, <<_::binary-size(4)>> = b}, _exp), do: type_f(b)
  defp value(:datetime, {:int, <<_::binary-size(6)>> = b}, _exp), do: type_i(b)
  defp value(type, raw, _exp) when type in [:date, :datetime, :raw], do: number(raw)
  defp value(:number, raw, exp), do: raw |> number() |> scale(exp)

  defp number({:int, bytes}) do
    size = bit_size(bytes)
    <<n::signed-little-size(size)>> = bytes
    n
  end

  defp number({:real, <<f::float-little-32>>}), do: f
  defp number({:real, _nan_or_infinity}), do: nil
  defp number({:bcd, bytes}), do: bcd(bytes, 1)
  defp number({:bcd_neg, bytes}), do: bcd(bytes, -1)

  # Digits most significant first; a leading F nibble marks a negative number (EN 13757-3 type A).
  defp bcd(<<>>, _sign), do: 0

  defp bcd(bytes, sign) do
    nibbles = for <<hi::4, lo::4 <- reverse_bytes(bytes)>>, n <- [hi, lo], do: n

    {sign, nibbles} =
      case nibbles do
        [0xF | rest] -> {-sign, rest}
        _ -> {sign, nibbles}
      end

    if Enum.all?(nibbles, &(&1 <= 9)),
      do: sign * Enum.reduce(nibbles, 0, fn d, acc -> acc * 10 + d end),
      else: nil
  end

  defp scale(nil, _exp), do: nil
  defp scale(n, 0), do: n
  defp scale(n, exp) when is_integer(n) and exp > 0, do: n * pow10(exp)
  defp scale(n, exp) when exp > 0, do: n * pow10(exp)
  defp scale(n, exp), do: n / pow10(-exp)

  defp pow10(e), do: Integer.pow(10, e)

  # Type G: date (16 bits).
  defp type_g(<<b0, b1>>) do
    day = b0 &&& 0x1F
    month = b1 &&& 0x0F
    year = ((b0 &&& 0xE0) >>> 5) ||| ((b1 &&& 0xF0) >>> 1)

    case Date.new(century(year), month, day) do
      {:ok, date} -> date
      _ -> nil
    end
  end

  # Type F: date and time to the minute (32 bits).
  defp type_f(<<b0, b1, b2, b3>>) do
    minute = b0 &&& 0x3F
    hour = b1 &&& 0x1F
    day = b2 &&& 0x1F
    month = b3 &&& 0x0F
    year = ((b2 &&& 0xE0) >>> 5) ||| ((b3 &&& 0xF0) >>> 1)
    naive(century(year), month, day, hour, minute, 0)
  end

  # Type I: date and time to the second (48 bits).
  defp type_i(<<b0, b1, b2, b3, b4, _b5>>) do
    second = b0 &&& 0x3F
    minute = b1 &&& 0x3F
    hour = b2 &&& 0x1F
    day = b3 &&& 0x1F
    month = b4 &&& 0x0F
    year = ((b3 &&& 0xE0) >>> 5) ||| ((b4 &&& 0xF0) >>> 1)
    naive(century(year), month, day, hour, minute, second)
  end

  # Type J: time of day (24 bits).
  defp type_j(<<b0, b1, b2>>) do
    case Time.new(b2 &&& 0x1F, b1 &&& 0x3F, b0 &&& 0x3F) do
      {:ok, time} -> time
      _ -> nil
    end
  end

  defp century(year) when year <= 80, do: 2000 + year
  defp century(year), do: 1900 + year

  defp naive(year, month, day, hour, minute, second) do
    case NaiveDateTime.new(year, month, day, hour, minute, second) do
      {:ok, ndt} -> ndt
      _ -> nil
    end
  end
end
