// SPDX-License-Identifier: MIT
#pragma once

/// Strong unit types for the roofline: a quantity in SI base units that only allows the operations
/// that make sense (`Flops / FlopsPerSecond -> Seconds`, `Bytes / BytesPerSecond -> Seconds`).
/// Raw doubles that leave these types carry their unit in the name (`ttft_s`, `kv_bytes`).

namespace flopcast {

template <typename Tag>
struct Quantity {
  double value = 0.0;
  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : value(v) {}
  constexpr Quantity operator+(Quantity o) const { return Quantity(value + o.value); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value - o.value); }
  constexpr Quantity& operator+=(Quantity o) {
    value += o.value;
    return *this;
  }
  constexpr Quantity operator*(double k) const { return Quantity(value * k); }
  constexpr Quantity operator/(double k) const { return Quantity(value / k); }
  constexpr bool operator<(Quantity o) const { return value < o.value; }
  constexpr bool operator>(Quantity o) const { return value > o.value; }
  constexpr bool operator<=(Quantity o) const { return value <= o.value; }
};

struct SecondsTag {};
struct BytesTag {};
struct FlopsTag {};
struct BytesPerSecondTag {};
struct FlopsPerSecondTag {};

using Seconds = Quantity<SecondsTag>;
using Bytes = Quantity<BytesTag>;
using Flops = Quantity<FlopsTag>;
using BytesPerSecond = Quantity<BytesPerSecondTag>;
using FlopsPerSecond = Quantity<FlopsPerSecondTag>;

constexpr Seconds operator/(Flops f, FlopsPerSecond r) { return Seconds(f.value / r.value); }
constexpr Seconds operator/(Bytes b, BytesPerSecond r) { return Seconds(b.value / r.value); }
/// Arithmetic intensity in FLOP per byte.
constexpr double operator/(Flops f, Bytes b) { return f.value / b.value; }

constexpr double kGB = 1e9;  ///< decimal gigabyte, the unit of every *_GB key
constexpr double kMB = 1e6;
constexpr double kMiB = 1048576.0;  ///< binary, only where a framework states a size in MiB
constexpr double kTera = 1e12;
constexpr double kMicro = 1e-6;
constexpr double kMilli = 1e-3;

}  // namespace flopcast
